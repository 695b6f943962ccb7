//! Whether a reply's change is one the request meant: a copy, a change to
//! comments or prose alone, a file cut short, declarations dropped or
//! imports nothing uses are not, unless the request speaks of them.

use super::{handed::*, reply::*};
use crate::agent::Conversation;
use crate::agent::code_check::fault_brought;
use crate::agent::code_text::*;
use crate::workspace::WorkspacePath;

/// The declarations that the `changed` files rename, as (old name, new
/// name): a file that stops declaring one name and starts declaring one
/// other on the same line otherwise unchanged (`def calc_total(prices):`
/// to `def compute_total(prices):`).
pub(super) fn renames(changed: &[HandedFile], handed: &[HandedFile]) -> Vec<(String, String)> {
    changed
        .iter()
        .filter_map(|new| {
            let old = handed.iter().find(|f| f.path == new.path)?;
            let (before, after) = (declared_names(&old.text), declared_names(&new.text));
            let (&[gone], &[came]) = (
                before.difference(&after).collect::<Vec<_>>().as_slice(),
                after.difference(&before).collect::<Vec<_>>().as_slice(),
            ) else {
                return None;
            };
            renamed_to(&old.text, &new.text, gone, came).then(|| (gone.to_string(), came.to_string()))
        })
        .collect()
}

/// Whether `after` holds `before`'s declaration of `gone` with `came` in
/// its place, the line otherwise the same (`def calc_total(prices):` to
/// `def compute_total(prices):`).
pub(super) fn renamed_to(before: &str, after: &str, gone: &str, came: &str) -> bool {
    let Some(line) = declaration(before, gone) else { return false };
    let renamed = replace_word(line, gone, came);
    after.lines().any(|line| line == renamed)
}

/// `text` with every whole-word `old` made `new`.
pub(super) fn replace_word(text: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_word = false;
    while let Some(at) = rest.find(old) {
        let before_ok = !(if at == 0 { after_word } else { rest[..at].chars().next_back().is_some_and(is_word) });
        let after_ok = !rest[at + old.len()..].chars().next().is_some_and(is_word);
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { new } else { old });
        after_word = old.chars().next_back().is_some_and(is_word);
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `reply` is nothing but copies of handed files: code blocks that
/// change nothing, and not a word beside them ("It listens on:" before a
/// copy of config.py makes the copy an answer).
pub(super) fn copies_only(reply: &str, handed: &[HandedFile]) -> bool {
    let prose = lines_outside_code(reply).any(|line| path_in(line).is_none());
    !prose && copies(reply, handed, "").is_some()
}

/// Whether `after` is `before` with import lines added, blank lines aside,
/// none of whose names the code of `after` uses.
pub(super) fn adds_only_unused_imports(before: &str, after: &str) -> bool {
    pub(super) fn non_blank(text: &str) -> impl Iterator<Item = &str> {
        text.lines().map(str::trim_end).filter(|line| !line.trim().is_empty())
    }
    let Some(added) = lines_added(non_blank(before), non_blank(after)) else { return false };
    let code: String = after.lines().filter(|line| !is_import(line)).map(|line| format!("{line}\n")).collect();
    !added.is_empty()
        && added.iter().all(|line| is_import(line) && !import_names(line).any(|name| code_uses(&code, name)))
}

/// The lines of `after` that are not `before`'s, when `after` is `before`
/// with lines added and none taken away or changed.
pub(super) fn lines_added<T: PartialEq>(
    before: impl Iterator<Item = T>,
    after: impl Iterator<Item = T>,
) -> Option<Vec<T>> {
    let mut kept = before.peekable();
    let mut added = Vec::new();
    for line in after {
        if kept.peek().is_some_and(|next| *next == line) {
            kept.next();
        } else {
            added.push(line);
        }
    }
    kept.peek().is_none().then_some(added)
}

/// The names `before` declares at its top level that `after` neither
/// declares nor renames, where `prompt` asks to remove nothing and names
/// none of them: the 0.5B's text.js with wordCount (and the exports below
/// it) made a test of truncate. A fix keeps what the file offered.
pub(super) fn dropped_declarations(prompt: &str, before: &str, after: &str) -> Option<Vec<String>> {
    let (had, has) = (declared_names(before), declared_names(after));
    let came: Vec<&&str> = has.difference(&had).collect();
    let renamed = |gone: &str| came.iter().any(|new| renamed_to(before, after, gone, new));
    let mut dropped: Vec<String> = had
        .difference(&has)
        .filter(|gone| !uses_word(prompt, gone) && !renamed(gone))
        .map(|gone| gone.to_string())
        .collect();
    dropped.sort_unstable();
    (!dropped.is_empty()).then_some(dropped)
}

/// `prompt` without the names of the `handed` files: a file the request
/// names ("Create mathutil.py") is no word of a change to another file
/// that mentions it.
pub(super) fn without_file_names(prompt: &str, handed: &[HandedFile]) -> String {
    let names_a_file = |token: &str| {
        let token = token.trim_matches(|c: char| !is_word(c) && c != '.' && c != '/').trim_end_matches('.');
        handed.iter().any(|f| token == f.path.display() || token == file_name(&f.path.rel))
    };
    prompt.split_whitespace().filter(|token| !names_a_file(token)).collect::<Vec<_>>().join(" ")
}

/// Whether `prompt` speaks of what changes from `before` to `after`: it
/// uses a word (of three letters or more) that one of them has and the
/// other lacks, as "Remove the debug print" speaks of the `print` that goes.
pub(super) fn speaks_of_change(prompt: &str, before: &str, after: &str) -> bool {
    let lower = |text: &str| -> std::collections::HashSet<String> {
        words(text).filter(|word| word.len() > 2).map(str::to_lowercase).collect()
    };
    let (had, has, asked) = (lower(before), lower(after), lower(prompt));
    // A word and its forms: "count" speaks of "counting".
    let alike = |a: &str, b: &str| a == b || (a.len().min(b.len()) > 4 && (a.starts_with(b) || b.starts_with(a)));
    had.symmetric_difference(&has).any(|word| asked.iter().any(|asked| alike(word, asked)))
}

/// Whether `after` is `before` without its last lines of code, two or more
/// of them, and otherwise the same: a reply that ended before the file did.
pub(super) fn stops_short(before: &str, after: &str) -> bool {
    let before: Vec<&str> = code_lines(before).collect();
    let after: Vec<&str> = code_lines(after).collect();
    !after.is_empty() && after.len() + 2 <= before.len() && before.starts_with(&after)
}

/// Whether `before` and `after`, versions of the file at `path`, hold the
/// same code once comments, docstrings and whitespace are set aside: the
/// 0.5B, asked for a fix it cannot see, rewrites a module docstring or
/// turns `//!` into `///`, and that is no fix.
pub(super) fn comments_only_differ(path: &str, before: &str, after: &str) -> bool {
    match (code_without_comments(path, before), code_without_comments(path, after)) {
        (Some(before_code), Some(after_code)) => before != after && before_code == after_code,
        _ => false,
    }
}

/// The code of `text` without its comments and, in Python, its
/// docstrings, each line's whitespace collapsed; `None` where the language
/// (by the extension of `path`) is not known.
pub(super) fn code_without_comments(path: &str, text: &str) -> Option<Vec<String>> {
    let markers: &[&str] =
        if has_extension_in(path, &["py", "pyi", "sh", "bash", "rb", "pl", "r", "yaml", "yml", "toml"]) {
            &["#"]
        } else if has_extension_in(
            path,
            &[
                "js", "mjs", "cjs", "jsx", "ts", "tsx", "rs", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt",
                "swift", "cs", "scala", "php", "dart",
            ],
        ) {
            &["//", "/*", "*"]
        } else if has_extension_in(path, &["sql", "lua", "hs"]) {
            &["--"]
        } else {
            return None;
        };
    let python = has_extension_in(path, &["py", "pyi"]);
    let mut code = Vec::new();
    // The quotes of the docstring being read.
    let mut docstring: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(quotes) = docstring {
            if trimmed.contains(quotes) {
                docstring = None;
            }
            continue;
        }
        if trimmed.is_empty() || markers.iter().any(|marker| trimmed.starts_with(marker)) {
            continue;
        }
        // A string alone where a docstring goes: first in the module or
        // right under a `def` or `class` line.
        let opens_body = code.last().is_none_or(|last: &String| last.ends_with(':'));
        let quotes =
            ["\"\"\"", "'''"].into_iter().find(|q| trimmed.trim_start_matches(['r', 'b', 'u', 'R']).starts_with(q));
        if let Some(quotes) = quotes.filter(|_| python && opens_body) {
            if trimmed.matches(quotes).count() < 2 {
                docstring = Some(quotes);
            }
            continue;
        }
        code.push(trimmed.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    Some(code)
}

/// The handed files `reply` copies back, when that is all it shows: a
/// change to comments only, or a copy that stops short, counts as a copy
/// unless the request speaks of what it changes.
pub(super) fn copied_back<'a>(reply: &str, prompt: &str, handed: &'a [HandedFile]) -> Option<Vec<&'a HandedFile>> {
    copies(reply, handed, prompt)
}

/// The handed files `reply` copies back unchanged, blank lines aside (and
/// comments, with `comments_aside`; a copy that stops before the file's
/// end, with `tail_aside`), when its blocks show nothing else.
pub(super) fn copies<'a>(reply: &str, handed: &'a [HandedFile], prompt: &str) -> Option<Vec<&'a HandedFile>> {
    let shown = blocks_for(reply, handed);
    let prompt = without_file_names(prompt, handed);
    let is_copy = |f: &HandedFile, block: &ShownFile| {
        let aside = || !speaks_of_change(&prompt, &f.text, &block.text);
        same_code(&f.text, &block.text)
            || headless(&f.text, &block.text)
            || (comments_only_differ(&f.path.rel, &f.text, &block.text) && aside())
            || (stops_short(&f.text, &block.text) && aside())
    };
    if shown.is_empty() || !shown.iter().all(|block| handed.iter().any(|f| is_copy(f, block))) {
        return None;
    }
    Some(handed.iter().filter(|f| shown.iter().any(|block| is_copy(f, block))).collect())
}

/// Whether `block` is `file` without its head (the module docstring, or
/// that and its imports) and otherwise unchanged: a copy as a small model
/// writes one, which the same asks follow as any copy.
pub(super) fn headless(file: &str, block: &str) -> bool {
    let file_code: Vec<&str> = code_lines(file).collect();
    let block_code: Vec<&str> = code_lines(block).collect();
    let most = block_code.len() * 3 >= file_code.len() * 2;
    most && block_code.len() < file_code.len() && file_code.ends_with(&block_code)
}

impl Conversation {
    /// Whether the change of the file at `path` from `before` to `after` is
    /// none the model meant, of a kind `prompt` does not ask for (the
    /// `handed` files say what else there was to change): it changes prose
    /// the prompt neither names nor speaks of, where there was code; it
    /// touches only comments; it only adds imports nothing uses (the 0.5B,
    /// sampled, added `from collections import defaultdict` above the line
    /// it was to fix); or it only drops the file's last lines, where the
    /// reply stopped short of the end (the 0.5B's playlist.js without its
    /// `require.main` block, its stats.rs without the last function). Each
    /// is a copy: no change to make, and the user is told.
    pub(super) fn unmeant_change(
        &self,
        (prompt, handed): (&str, &[HandedFile]),
        path: &WorkspacePath,
        before: &str,
        after: &str,
    ) -> bool {
        let file = path.display();
        // A note written anew (notes/todo.md given a heading) for a report
        // of what a script does with notes: prose that the prompt neither
        // names nor speaks of as prose is no place for a fix, where there
        // is code to fix.
        let code_handed = handed.iter().any(|f| !is_prose(&f.path.rel));
        let named = handed.iter().any(|f| f.path.rel == path.rel && names_file(prompt, f));
        let spoken_of = speaks_of_change(&without_file_names(prompt, handed), before, after);
        let notice = if is_prose(&path.rel) && code_handed && !named && !spoken_of {
            format!("[the reply changes {file}, which the request does not ask to change — not changed]")
        } else if !spoken_of && comments_only_differ(&path.rel, before, after) {
            format!("[the reply changes only comments of {file} — not changed]")
        } else if !spoken_of && adds_only_unused_imports(before, after) {
            format!("[the reply only adds imports that nothing in {file} uses — not changed]")
        } else if !spoken_of && stops_short(before, after) {
            format!("[the reply's {file} stops before the file's end — not changed]")
        } else if let Some(dropped) = dropped_declarations(prompt, before, after) {
            format!(
                "[the reply's {file} no longer has {}, which the request does not ask to remove — not changed]",
                dropped.join(", ")
            )
        } else {
            return false;
        };
        self.notify(&notice);
        true
    }

    /// Whether the file at `path`, changed from `before` to `after`, is
    /// broken by the change: it no longer declares a name it still uses
    /// (the 0.5B's recipes.py without the RECIPES table its functions
    /// read), its brackets, balanced before, no longer are, or it gained a
    /// syntax error or (in Python) a name nothing binds. Such a change is
    /// none to make, and the user is told.
    pub(super) fn breaks_file(&self, path: &WorkspacePath, before: &str, after: &str) -> bool {
        // In prose and settings a name is a word, not code that reads it.
        if is_prose(&path.rel) || is_settings(&path.rel) {
            return false;
        }
        let kept = top_level_names(after);
        let mut lost: Vec<&str> =
            top_level_names(before).into_iter().filter(|name| !kept.contains(name) && code_uses(after, name)).collect();
        lost.sort_unstable();
        let why = if !lost.is_empty() {
            format!("leaves out {}, which it still uses", lost.join(", "))
        } else if bracket_balance(before) == [0; 3] && bracket_balance(after) != [0; 3] {
            "leaves a bracket unclosed".to_string()
        } else if let Some(fault) = fault_brought(&path.rel, before, after) {
            // Last: it starts the language's checker, where those above read text.
            fault
        } else {
            return false;
        };
        self.notify(&format!("[the reply's {} {why} — not changed]", path.display()));
        true
    }
}
