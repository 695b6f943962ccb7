//! The ask for the one line to change, as it must read, and the Edit that
//! line makes where the nearest line of the files is.

use super::{asking::*, handed::*, judge::*, reply::*, selection::*};
use crate::agent::code_check::{Finding, findings, findings_command};
use crate::agent::code_text::*;
use crate::agent::turn::Generation;
use crate::agent::{Conversation, TurnOutcome};
use crate::workspace::WorkspacePath;
use tokio_util::sync::CancellationToken;

/// The Edit that adds an import line of `reply` to the one file of
/// `current` that uses what it imports but does not import it (`import
/// math` to a file calling `math.sqrt`): asked which line must change, a
/// model answers with the line that is missing.
pub(super) fn added_import(current: &[(&HandedFile, String)], reply_lines: &[String]) -> Option<Change> {
    let import = reply_lines.iter().map(|line| line.trim()).find(|line| is_import(line))?;
    let mut needing = current.iter().filter(|(_, text)| {
        let lacks = !text.lines().any(|line| line.trim() == import);
        lacks && import_names(import).any(|name| uses_word(text, name))
    });
    let (file, text) = needing.next()?;
    if needing.next().is_some() {
        return None;
    }
    Some(edit(file.path.display(), text, &with_import(text, import)))
}

/// How many of `line`'s words `fixed` changes, when it keeps the line:
/// changes at least one and at most a third of them, and at most doubles
/// its length (`== 1` to `== 0`; not `import os` to `import math`). A line
/// written again without its closing `:` or `;` is the line restated, not
/// changed: taken as a fix, it would break the code.
pub(super) fn words_changed(line: &str, fixed: &str) -> Option<usize> {
    /// How much of a short line's letters a fix of it keeps.
    const NEAR_LETTERS: f32 = 0.9;
    let closing = |line: &str| line.trim().trim_end_matches([':', ';', '{', ',']).trim_end().to_string();
    if closing(line) == closing(fixed) {
        return None;
    }
    // A declaration made other code (`def top_words(text, n=5):` written
    // `return top_words(text, n=5):`) takes the function away: no fix.
    if declared_name(line).is_some() && declared_name(fixed).is_none() {
        return None;
    }
    // Part of the line quoted from its middle (`grep -m1 '^# ' $f` of
    // `title=$(grep -m1 '^# ' $f)`) shows where the change goes, not what
    // it is; the line's start kept (`return a + b` of `return a + b + 1`) is a fix.
    let (line_code, fixed_code) = (line.trim(), fixed.trim());
    if line_code.contains(fixed_code) && !line_code.starts_with(fixed_code) {
        return None;
    }
    // The same words in another order (`distance_km(a["lat"], a["lon"])`
    // for `distance_km(a["lon"], a["lat"])`): operands swapped, the line fixed.
    let mut sorted_words: [Vec<&str>; 2] = [words(line_code).collect(), words(fixed_code).collect()];
    sorted_words.iter_mut().for_each(|words| words.sort_unstable());
    let mut letters: [Vec<char>; 2] =
        [line_code, fixed_code].map(|code| code.chars().filter(|c| !c.is_whitespace()).collect());
    // Spaced otherwise, the line is restated.
    if letters[0] == letters[1] {
        return None;
    }
    letters.iter_mut().for_each(|letters| letters.sort_unstable());
    if sorted_words[0] == sorted_words[1] && letters[0] == letters[1] && sorted_words[0].len() >= 2 {
        return Some(2);
    }
    // What a message says, alone changed (`errors.push('Password too
    // short.')` made to say what the prompt asks): the line is the same
    // code, fixed.
    // A docstring's words are no code: its skeleton is quotes alone.
    let (line_skeleton, line_texts) = string_literals(line_code);
    let (fixed_skeleton, fixed_texts) = string_literals(fixed_code);
    let is_code = line_skeleton.chars().any(char::is_alphanumeric) && !is_comment(line_code);
    if is_code && line_skeleton == fixed_skeleton && line_texts != fixed_texts {
        return Some(1);
    }
    // Without what closes the line, which sticks to its last word: `ids.length;`
    // to `ids.length + 1;` keeps that word.
    let (line, fixed) = (closing(line), closing(fixed));
    let old: Vec<&str> = line.split_whitespace().collect();
    let new: Vec<&str> = fixed.split_whitespace().collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    let changed = ops.iter().filter(|op| !matches!(op, similar::DiffOp::Equal { .. }));
    let (old_changed, new_changed) =
        changed.fold((0, 0), |(o, n), op| (o + op.old_range().len(), n + op.new_range().len()));
    let keeps_line = old_changed * 3 <= old.len() && new.len() <= old.len() * 2;
    if old_changed + new_changed > 0 && keeps_line {
        return Some(old_changed.max(new_changed));
    }
    // A line of few words, one of them touched (`return
    // !user.prefs.emailNotifications;` without its `!`): a word of two is
    // half the line, yet the letters are the line's.
    let letters_kept = similar::TextDiff::from_chars(line.as_str(), fixed.as_str()).ratio();
    (old.len() <= 3 && letters_kept >= NEAR_LETTERS).then_some(old_changed.max(new_changed))
}

/// Whether the reply's line `i` stands where line `n` of `file` does: a
/// line of code next to it, above or below, is the file's line there.
pub(super) fn shown_around(reply: &[&str], i: usize, file: &[&str], n: usize) -> bool {
    let same = |shown: Option<&&str>, there: Option<&&str>| match (shown, there) {
        (Some(shown), Some(there)) => shown.trim() == there.trim() && shown.chars().any(char::is_alphanumeric),
        _ => false,
    };
    let (reply_above, file_above) = (i.checked_sub(1), n.checked_sub(1));
    same(reply_above.and_then(|i| reply.get(i)), file_above.and_then(|n| file.get(n)))
        || same(reply.get(i + 1), file.get(n + 1))
}

/// `code` with its string literals emptied, and what they say: the code
/// of a line apart from its messages. A quote left open takes the rest of
/// the line.
pub(super) fn string_literals(code: &str) -> (String, Vec<&str>) {
    let (mut skeleton, mut texts) = (String::new(), Vec::new());
    let mut chars = code.char_indices();
    while let Some((at, c)) = chars.next() {
        skeleton.push(c);
        if !['"', '\'', '`'].contains(&c) {
            continue;
        }
        let start = at + c.len_utf8();
        let mut end = code.len();
        while let Some((inner, next)) = chars.next() {
            if next == '\\' {
                chars.next();
            } else if next == c {
                skeleton.push(c);
                end = inner;
                break;
            }
        }
        texts.push(&code[start..end]);
    }
    (skeleton, texts)
}

/// `fixed` in place of `old`: at its indentation and, when the model left
/// it off (`if len(text) <= limit - 3` for `if len(text) <= limit:`),
/// with the punctuation that closes it, without which the code is broken.
pub(super) fn as_line_of(old: &str, fixed: &str) -> String {
    let indent = &old[..old.len() - old.trim_start().len()];
    let fixed = fixed.trim();
    let closing = old.trim_end().chars().last().filter(|c| [':', ';', '{'].contains(c));
    match closing {
        Some(close) if !fixed.ends_with(close) => format!("{indent}{fixed}{close}"),
        _ => format!("{indent}{fixed}"),
    }
}

/// The one name an import line imports in place of another (`from config
/// import read_config` for `… import load_config`): that old name and the
/// new one. An alias (`import read_config as load_config`) renames nothing.
pub(super) fn renamed_import<'a>(old: &'a str, new: &'a str) -> Option<(&'a str, &'a str)> {
    if !is_import(old.trim()) || !is_import(new.trim()) {
        return None;
    }
    let (before, after): (Vec<&str>, Vec<&str>) = (import_names(old).collect(), import_names(new).collect());
    let gone: Vec<&str> = before.iter().copied().filter(|name| !after.contains(name)).collect();
    let came: Vec<&str> = after.iter().copied().filter(|name| !before.contains(name)).collect();
    match (gone.as_slice(), came.as_slice()) {
        ([from], [to]) => Some((from, to)),
        _ => None,
    }
}

impl Conversation {
    /// Asks which line of the `copied` files (shown first, then `others`)
    /// must change, for that line as it must read, and again for a line
    /// number's line: the reply's text and the Edit its line makes.
    pub(super) async fn line_asked(
        &mut self,
        asking: &Asking<'_>,
        (copied, others): (&[&HandedFile], &[&HandedFile]),
        only_named: Option<&WorkspacePath>,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        const MAX_FINDINGS: usize = 3;
        let names: Vec<String> = copied.iter().map(|f| f.path.display().to_string()).collect();
        // What a linter finds (shellcheck's unquoted `$f`) is where a small
        // model that saw nothing to change can look.
        let mut linted: Vec<(String, Vec<Finding>)> = Vec::new();
        for file in copied {
            let found = self.linted(file, generation, cancel).await?;
            linted.push((file.path.display().to_string(), found));
        }
        let found: Vec<String> = copied
            .iter()
            .zip(&linted)
            .flat_map(|(f, (path, found))| {
                let lines: Vec<&str> = f.text.lines().collect();
                found.iter().filter_map(move |Finding { line, message }| {
                    let code = lines.get(line.checked_sub(1)?)?.trim();
                    Some(format!("- line {line} of {path}, `{code}`: {message}\n"))
                })
            })
            .take(MAX_FINDINGS)
            .collect();
        let found = if found.is_empty() { " ".to_string() } else { format!("\nA linter finds:\n{}", found.concat()) };
        let ask = match names.as_slice() {
            [one] => format!("Which line of {one} must change?{found}Reply with that line only, as it must read."),
            _ => format!("Which line must change?{found}Reply with that line only, as it must read."),
        };
        let shown: String = copied.iter().chain(others).map(|f| f.shown()).collect();
        let notice = format!("[the reply copied {} back unchanged — asking for the line to change…]", names.join(", "));
        let mut text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
        // Asked for a line of signup.js, the 0.5B wrote validate.js's
        // message as it must read: a line of another file shown is fixed
        // where it is.
        let other_code: Vec<&HandedFile> = others.iter().copied().filter(|f| !is_prose(&f.path.rel)).collect();
        let line_fixed = self.line_fix(copied, &text).or_else(|| self.line_fix(&other_code, &text));
        let mut changes: Vec<Change> = line_fixed.into_iter().collect();
        let mut focus = copied.first().copied();
        // "trip.py": of several files, a small model answers with the one
        // where the change goes, its name often misspelt. Asked for that
        // file's line, it can write it.
        let named = copied.iter().find(|f| names_only(&text, f)).filter(|_| changes.is_empty() && copied.len() > 1);
        if let Some(file) = named {
            let path = file.path.display();
            let ask = format!("Which line of {path} must change? Reply with that line only, as it must read.");
            let notice = format!("[the reply named {path} — asking for its line to change…]");
            let shown = shown_first(file, copied.iter().chain(others).copied());
            text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
            changes = self.line_fix(&[*file], &text).into_iter().collect();
            focus = Some(*file);
        }
        // "line 3", or the line itself as it reads (`return
        // !user.prefs.emailNotifications;`): a small model answers where
        // the line is. Shown that line, it writes it as it must read.
        // The line quoted may be of any file shown (prefs.js's, with
        // digest.js copied back first), if of one only.
        let quoted = || {
            let code = quoted_code(&text)?;
            let mut quoting = copied.iter().chain(others).filter_map(|f| Some((*f, line_reading(&f.text, &code)?)));
            let found = quoting.next()?;
            quoting.next().is_none().then_some(found)
        };
        let numbered = line_number(&text).and_then(|n| Some((focus?, n))).or_else(quoted).and_then(|(file, n)| {
            let line = file.text.lines().nth(n.checked_sub(1)?).filter(|line| !line.trim().is_empty())?;
            Some((file, n, line))
        });
        if let Some((file, n, line)) = numbered.filter(|_| changes.is_empty()) {
            let path = file.path.display();
            let found = match linted.iter().find(|(linted, _)| linted == path) {
                Some((_, found)) => found.clone(),
                None => self.linted(file, generation, cancel).await?,
            };
            let said: String = found
                .into_iter()
                .filter(|finding| finding.line == n)
                .map(|finding| format!("{}\n", finding.message))
                .collect();
            let ask = format!(
                "Line {n} of {path} reads:\n```\n{}\n```\n{said}Reply with that line only, as it must read.",
                line.trim()
            );
            let notice = format!("[the reply named line {n} of {path} — asking for it as it must read…]");
            text = self.ask_again(asking, &file.shown(), &ask, &notice, generation, cancel).await?;
            changes = self.line_fix(&[file], &text).into_iter().collect();
            // Greedy decoding writes the line back as it reads, again and
            // again; sampled, a small model often writes it changed. One
            // line is a short reply: a few samples cost little.
            let copied_line =
                |text: &str| reply_code(text, &shown_files(text)).iter().any(|shown| shown.trim() == line.trim());
            // A sample that fixes nothing (`return true;`) is let go: the
            // asks below go on from the line copied.
            let copied = copied_line(&text);
            let mut sampled = 0;
            while changes.is_empty() && sampled < LINE_RESAMPLES && copied {
                sampled += 1;
                let notice = format!(
                    "[line {n} of {path} is not fixed yet — asking again, sampled ({sampled} of {LINE_RESAMPLES})…]"
                );
                let again =
                    self.ask_sampled(sampled, asking, &file.shown(), (&ask, &notice), generation, cancel).await?;
                changes = self.line_fix(&[file], &again).into_iter().collect();
                if !changes.is_empty() {
                    text = again;
                }
            }
        }
        // "`leg_lengths`": a small model answers with the function the
        // change goes in. Asked for that function as it must read, it can
        // write it.
        let function = bare_name(&text).and_then(|name| {
            let mut declaring = copied.iter().filter(|f| declaration(&f.text, name).is_some());
            let file = declaring.next()?;
            declaring.next().is_none().then(|| (*file, name.to_string()))
        });
        if let Some((file, name)) = function.clone().filter(|_| changes.is_empty()) {
            let path = file.path.display();
            // "As it must read" alone, the 1.5B wrote what leg_lengths returns.
            let ask = format!("Reply with the whole new code of {name} in {path}, changed as asked, in a code block.");
            let notice = format!("[the reply named {name} — asking for it as it must read…]");
            let shown = shown_first(file, copied.iter().chain(others).copied());
            text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
            changes = self.changes_shown(&text, asking.prompt, asking.handed, Some(&file.path));
        }
        // Asked for a line, a small model writes the function with the line
        // it lacked (`return result`), or the function the prompt asks for:
        // a change as any reply's blocks make one.
        if changes.is_empty() {
            changes = self.changes_shown(&text, asking.prompt, asking.handed, only_named);
        }
        // "is_comfortable(24) returns False": the function the prompt
        // names, shown alone, away from the rest of its file, is where a
        // small model that saw no change in the whole file can see it.
        let asked = asked_function(asking.prompt, &text, copied).filter(|part| {
            let asked_already =
                function.as_ref().is_some_and(|(_, name)| Some(name) == part.part.as_ref().map(|p| &p.name));
            changes.is_empty() && !asked_already
        });
        if let Some(part) = asked {
            let (path, name) = (part.path.display(), part.part.as_ref().map(|p| p.name.clone()).unwrap_or_default());
            let ask = format!("Reply with the whole new code of {name}, changed as asked, in a code block.");
            let notice = format!("[no change yet — asking for {name} of {path} alone, as it must read…]");
            text = self.ask_again(asking, &part.shown(), &ask, &notice, generation, cancel).await?;
            changes = self.changes_shown(&text, asking.prompt, asking.handed, Some(&part.path));
        }
        Ok((text, changes))
    }

    /// The Edit that makes the one line of `files` that `reply` shows fixed:
    /// a line of the reply in none of them that differs from exactly one of
    /// their lines by a few words (`return "Hello, " + name` for
    /// `return "Helo, " + name`).
    pub(super) fn line_fix(&self, files: &[&HandedFile], reply: &str) -> Option<Change> {
        let current: Vec<(&HandedFile, String)> =
            files.iter().filter_map(|f| Some((*f, self.workspace.read_text(&f.path).ok()?))).collect();
        // "The line that must change is: (block) It should read: (block)":
        // the lines of every block, those of the file as it is dropped below.
        let reply_lines = reply_code(reply, &shown_files(reply));
        let known: std::collections::HashSet<&str> =
            current.iter().flat_map(|(_, text)| text.lines().map(str::trim)).collect();
        let files_lines: Vec<Vec<&str>> = current.iter().map(|(_, text)| code_lines(text).collect()).collect();
        let shown_lines: Vec<&str> = reply_lines.iter().map(String::as_str).collect();
        let mut fixes =
            shown_lines.iter().enumerate().filter(|(_, line)| !known.contains(line.trim())).filter_map(|(i, fixed)| {
                let near: Vec<(usize, usize, usize)> = files_lines
                    .iter()
                    .enumerate()
                    .flat_map(|(at, lines)| lines.iter().enumerate().map(move |(n, line)| (at, n, *line)))
                    .filter_map(|(at, n, line)| words_changed(line, fixed).map(|changed| (changed, at, n)))
                    .collect();
                let best = near.iter().map(|(changed, _, _)| *changed).min()?;
                let mut tied: Vec<(usize, usize)> =
                    near.iter().filter(|(changed, _, _)| *changed == best).map(|(_, at, n)| (*at, *n)).collect();
                // Two lines as near (two `errors.push(…)` of validate.js):
                // the one the reply shows between the lines around it is
                // meant; else which one is a guess.
                if tied.len() > 1 {
                    tied.retain(|(at, n)| shown_around(&shown_lines, i, &files_lines[*at], *n));
                }
                match tied.as_slice() {
                    [(at, n)] => Some((*at, files_lines[*at][*n], *fixed)),
                    _ => None,
                }
            });
        let Some((at, old, fixed)) = fixes.next() else {
            return added_import(&current, &reply_lines);
        };
        let (file, text) = &current[at];
        if fixes.next().is_some() || text.matches(old).count() != 1 {
            return None;
        }
        let new_line = as_line_of(old, fixed);
        // An import renamed (`from config import read_config` for
        // `load_config`): the file's uses follow, as an editor's rename does.
        let (old_string, new_string) = match renamed_import(old, &new_line) {
            Some((from, to)) if !uses_word(text, to) => {
                let renamed: Vec<String> = text
                    .lines()
                    .map(|line| if line == old { new_line.clone() } else { replace_word(line, from, to) })
                    .collect();
                let ending = if text.ends_with('\n') { "\n" } else { "" };
                (text.clone(), format!("{}{ending}", renamed.join("\n")))
            }
            _ => (old.to_string(), new_line),
        };
        // `rows = paginate(ARTICLES, page, per_page)`, in a file with no
        // per_page: a line the file cannot run with fixes nothing.
        if self.breaks_file(&file.path, text, &text.replacen(&old_string, &new_string, 1)) {
            return None;
        }
        Some(edit(file.path.display(), &old_string, &new_string))
    }

    /// What the language's linter finds in `file`, shown whole (a part's
    /// lines are not the file's), run as the harness's own Bash call the
    /// user sees, after the reply in `generation`; none where no linter
    /// runs here or the turn may run no command.
    async fn linted(
        &mut self,
        file: &HandedFile,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<Vec<Finding>, TurnOutcome> {
        let path = file.path.display();
        let command = findings_command(path, &file.text).filter(|_| file.part.is_none() && self.may_run_commands());
        let Some(command) = command else { return Ok(Vec::new()) };
        // The reply goes into the conversation with the call; its usage
        // stays with the turn's, counted once.
        let mut reply = std::mem::take(generation);
        generation.usage = std::mem::take(&mut reply.usage);
        let printed = self.run_own_bash(reply, &command, None, cancel).await.map_err(adding(generation.usage))?;
        Ok(findings(path, printed.as_deref().unwrap_or_default()))
    }
}
