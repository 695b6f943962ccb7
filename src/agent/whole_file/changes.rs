//! The changes a reply shows, made into Edit and Write calls, and the
//! files a change leaves using what it renamed or removed.

use super::{handed::*, reply::*};
use crate::agent::Conversation;
use crate::agent::code_text::*;
use crate::agent::inline::{inline_calls, wrapper};
use crate::agent::kept::sparing;
use crate::agent::rewrite::{Rewrite, rewrite_of};
use crate::codemap::{Language, parse, unbound_names};
use crate::workspace::WorkspacePath;
use serde_json::Value;

/// `text`, a new Python file at `path`, with an import for the names it
/// reads that nothing in it binds, where each is defined at the top of
/// one other handed file (`from slug import slugify` for a test file that
/// calls `slugify`), as an editor's quick fix adds a missing import: asked
/// for tests of a module, the 0.5B wrote them without importing it. As it
/// is where a name has no one such home, or none is missing.
pub(super) fn with_homes_imported(path: &str, text: &str, handed: &[HandedFile]) -> String {
    if Language::of_path(path) != Some(Language::Python) {
        return text.to_string();
    }
    let Some(unbound) = unbound_names(Language::Python, text) else { return text.to_string() };
    let mut imports: Vec<(String, Vec<&str>)> = Vec::new();
    for name in &unbound {
        let homes: Vec<&HandedFile> = handed
            .iter()
            .filter(|f| {
                f.part.is_none() && f.path.rel != path && Language::of_path(&f.path.rel) == Some(Language::Python)
            })
            .filter(|f| {
                parse(Language::Python, &f.text)
                    .definitions
                    .iter()
                    .any(|d| d.name == *name && d.container.is_none() && !d.local)
            })
            .collect();
        let [home] = homes.as_slice() else { return text.to_string() };
        let Some(module) = python_module(&home.path.rel) else { return text.to_string() };
        match imports.iter_mut().find(|(m, _)| *m == module) {
            Some((_, names)) => names.push(name),
            None => imports.push((module, vec![name])),
        }
    }
    imports.iter().fold(text.to_string(), |text, (module, names)| {
        with_import(&text, &format!("from {module} import {}", names.join(", ")))
    })
}

/// The module a Python file at `path` (from the root) is imported as:
/// `shop/cart.py` is `shop.cart`, a package's `__init__.py` the package.
fn python_module(path: &str) -> Option<String> {
    let stem = path.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let parts: Vec<&str> = stem.split('/').collect();
    parts.iter().all(|part| crate::text::is_identifier(part)).then(|| parts.join("."))
}

/// How alike `block` is to `file` (0 to 1, by characters) when it is a
/// whole new version of it that shares too few lines for `rewrite_of`: it
/// declares every name the file declares, holds about as much code, and
/// reads mostly the same. `None` when it is not one: new code beside the
/// file's ("def subtract" for a file of "def add") declares other names.
pub(super) fn whole_version_likeness(file: &str, block: &str) -> Option<f32> {
    const MIN_LIKENESS: f32 = 0.6;
    version_likeness(file, block).filter(|likeness| *likeness >= MIN_LIKENESS)
}

/// How alike `block` is to `file` (0 to 1, by characters) when it may be
/// the file's whole new version, however unlike: it changes something,
/// shows more than the file's tail, and declares every name the file does.
pub(super) fn version_likeness(file: &str, block: &str) -> Option<f32> {
    let file_lines = code_lines(file).count();
    // A copy is no version: it changes nothing.
    if file_lines == 0 || code_lines(block).count() * 3 < file_lines * 2 || same_code(file, block) {
        return None;
    }
    // The file with its head left out (docstring and imports), and nothing
    // else changed, is a part shown, not a version: as one, it would
    // delete the imports the code it keeps still uses. A version without
    // the file's last lines (a trailing print taken out) is one.
    let file_code: Vec<&str> = code_lines(file).collect();
    let block_code: Vec<&str> = code_lines(block).collect();
    if file_code.windows(block_code.len()).skip(1).any(|part| part == block_code.as_slice()) {
        return None;
    }
    let in_block = declared_names(block);
    if !declared_names(file).is_subset(&in_block) {
        return None;
    }
    Some(similar::TextDiff::from_chars(file, block).ratio())
}

/// Whether `block`, shown under `file`'s path, is its whole new content
/// though it reads little like it (a two-line function wrapped in `try`):
/// it declares every name the file declares, keeps every import and is no
/// shorter, so nothing of the file is left out.
pub(super) fn rewrites_whole(file: &str, block: &str) -> bool {
    const MIN_LIKENESS: f32 = 0.4;
    let block_lines: std::collections::HashSet<&str> = block.lines().map(str::trim).collect();
    let keeps_imports = file.lines().filter(|line| is_import(line)).all(|line| block_lines.contains(line.trim()));
    // Shorter, it may be a part: the lines it lacks would be deleted.
    code_lines(block).count() >= code_lines(file).count()
        && keeps_imports
        && version_likeness(file, block).is_some_and(|likeness| likeness >= MIN_LIKENESS)
}

/// The handed file that `change` (an Edit or Write of `changes_shown`)
/// makes, as it will read.
pub(super) fn changed_file(change: &Change, handed: &[HandedFile]) -> Option<HandedFile> {
    let (name, input) = change;
    let path = input["file_path"].as_str()?;
    let file = handed.iter().find(|f| f.path.display() == path)?;
    let text = match *name {
        "Write" => input["content"].as_str()?.to_string(),
        _ => {
            let old = input["old_string"].as_str()?;
            file.text.contains(old).then(|| file.text.replacen(old, input["new_string"].as_str().unwrap_or(old), 1))?
        }
    };
    Some(HandedFile { path: file.path.clone(), text, part: file.part.clone() })
}

/// `file` as the change leaves it: its version among `changed`, or itself.
pub(super) fn as_changed<'a>(file: &'a HandedFile, changed: &'a [HandedFile]) -> &'a HandedFile {
    changed.iter().find(|c| c.path == file.path).unwrap_or(file)
}

/// The names that the `changed` files (as `changed_file` makes them) stop
/// declaring and that no handed file declares instead, with the handed
/// files that still use them, as the change leaves them (three at most):
/// the files the change breaks.
pub(super) fn dangling<'a>(
    changed: &[HandedFile],
    handed: &'a [HandedFile],
) -> Option<(Vec<String>, Vec<&'a HandedFile>)> {
    const MAX_USERS: usize = 3;
    let is_changed = |f: &HandedFile| changed.iter().any(|c| c.path == f.path);
    let still_declared: std::collections::HashSet<&str> = changed
        .iter()
        .map(|f| f.text.as_str())
        .chain(handed.iter().filter(|f| !is_changed(f)).map(|f| f.text.as_str()))
        .flat_map(declared_names)
        .collect();
    let stale: Vec<&str> = changed
        .iter()
        .filter_map(|c| handed.iter().find(|f| f.path == c.path))
        .flat_map(|f| declared_names(&f.text))
        .filter(|name| !still_declared.contains(name))
        .collect();
    // A file the change itself changed uses what it will hold: report.py
    // with its import of read_csv_events dropped and the call left.
    let users: Vec<&HandedFile> =
        handed.iter().filter(|f| stale.iter().any(|name| uses_word(&as_changed(f, changed).text, name))).collect();
    let stale: Vec<String> = stale
        .iter()
        .filter(|name| users.iter().any(|f| uses_word(&as_changed(f, changed).text, name)))
        .map(|name| name.to_string())
        .collect();
    (!users.is_empty() && users.len() <= MAX_USERS).then_some((stale, users))
}

/// The declaration lines that the `changed` files reshape (`def
/// format_price(amount):` given a parameter), said as "money.py now has
/// `…`", with the unchanged handed files that the prompt names and that
/// use what they declare (three at most): the files the prompt asks to
/// change with them.
pub(super) fn reshaped<'a>(
    changed: &[HandedFile],
    handed: &'a [HandedFile],
    prompt: &str,
) -> Option<(Vec<String>, Vec<&'a HandedFile>)> {
    const MAX_USERS: usize = 3;
    let mut lines: Vec<(String, String)> = Vec::new();
    for new in changed {
        let Some(old) = handed.iter().find(|f| f.path == new.path) else { continue };
        for name in declared_names(&old.text) {
            let (Some(before), Some(after)) = (declaration(&old.text, name), declaration(&new.text, name)) else {
                continue;
            };
            if before.trim_end() != after.trim_end() {
                lines.push((name.to_string(), format!("{} now has `{}`", new.path.display(), after.trim())));
            }
        }
    }
    let users: Vec<&HandedFile> = handed
        .iter()
        .filter(|f| !f.text.is_empty() && !changed.iter().any(|c| c.path == f.path) && names_file(prompt, f))
        .filter(|f| lines.iter().any(|(name, _)| uses_word(&f.text, name)))
        .collect();
    let lines = lines.into_iter().filter(|(name, _)| users.iter().any(|f| uses_word(&f.text, name)));
    let lines: Vec<String> = lines.map(|(_, line)| line).collect();
    (!users.is_empty() && users.len() <= MAX_USERS).then_some((lines, users))
}

/// `changes` with what they change in the parts of handed files named
/// `kept` undone (a change left with nothing to change dropped), and the
/// files where some was, each with the names of those parts.
pub(super) fn spare_kept<'a>(
    changes: Vec<Change>,
    handed: &'a [HandedFile],
    kept: &[String],
) -> (Vec<Change>, Vec<(&'a HandedFile, Vec<String>)>) {
    let mut spared = Vec::new();
    if kept.is_empty() {
        return (changes, spared);
    }
    let changes = changes
        .into_iter()
        .filter_map(|change| {
            let file = handed.iter().find(|f| change.1["file_path"] == f.path.display());
            // A new file has no part to keep.
            let Some((file, changed)) =
                file.filter(|f| !f.text.is_empty()).and_then(|f| Some((f, changed_file(&change, handed)?)))
            else {
                return Some(change);
            };
            let (text, parts) = sparing(&file.path.rel, &file.text, &changed.text, kept);
            if parts.is_empty() {
                return Some(change);
            }
            spared.push((file, parts));
            let path = file.path.display();
            (text != file.text).then(|| edit(path, &file.text, &text))
        })
        .collect();
    (changes, spared)
}

/// The files `changes` create that were not handed over (none the prompt
/// names) and that nothing uses by name, when they also change a file that
/// `exists`: written around the change, not part of it.
pub(super) fn unasked_new_files(
    prompt: &str,
    changes: &[Change],
    handed: &[HandedFile],
    exists: impl Fn(&str) -> bool,
) -> Vec<String> {
    let path_of = |(_, input): &Change| input["file_path"].as_str().map(str::to_string);
    let (existing, created): (Vec<&Change>, Vec<&Change>) =
        changes.iter().partition(|change| path_of(change).is_some_and(|path| exists(&path)));
    if existing.is_empty() {
        return Vec::new();
    }
    // Used by the change to existing files, or by those files: another new
    // file's use (views.py importing models.py) counts for nothing.
    let texts: Vec<&str> = existing
        .iter()
        .filter_map(|(_, input)| input["new_string"].as_str().or(input["content"].as_str()))
        .chain(handed.iter().map(|f| f.text.as_str()))
        .collect();
    created
        .into_iter()
        .filter_map(path_of)
        .filter(|path| !handed.iter().any(|f| f.path.display() == *path) && !speaks_of_file(prompt, path))
        .filter(|path| {
            let stem = file_name(path).split('.').next().unwrap_or_default();
            !texts.iter().any(|text| uses_word(text, stem))
        })
        .collect()
}

/// Whether a line of `block` that is not indented declares a name
/// (`def subtract(`) that the prompt uses and `file` does not have yet: code
/// the prompt asks for, not an example calling what exists.
pub(super) fn introduces_asked_name(prompt: &str, file: &str, block: &str) -> bool {
    let asked: std::collections::HashSet<&str> = words(prompt).collect();
    block.lines().filter(|line| !line.starts_with(char::is_whitespace)).any(|line| {
        line.match_indices('(').any(|(at, _)| {
            let before = &line[..at];
            let start = before.rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
            let name = &before[start..];
            name.len() > 1 && asked.contains(name) && !file.contains(&format!("{name}("))
        })
    })
}

/// Whether `block` shares no line of code with `file`: an addition to it,
/// not a version of it.
pub(super) fn is_new_code(file: &str, block: &str) -> bool {
    block.lines().filter(|line| !line.trim().is_empty()).count() > 1 && !shares_code(file, block)
}

/// Whether every line of code in `block`, two or more, is a line of a
/// handed file: code copied, nothing new. Comments aside, which a model
/// adds to label what it copies.
pub(super) fn only_handed_lines(handed: &[HandedFile], block: &str) -> bool {
    let known: std::collections::HashSet<&str> = handed.iter().flat_map(|f| f.text.lines().map(str::trim)).collect();
    let is_comment = |line: &str| ["#", "//", "/*", "*", "--"].iter().any(|marker| line.starts_with(marker));
    let code: Vec<&str> = block.lines().map(str::trim).filter(|line| !line.is_empty() && !is_comment(line)).collect();
    code.len() >= 2 && code.iter().all(|line| known.contains(line))
}

/// Whether `block` holds a line of code of `file`.
pub(super) fn shares_code(file: &str, block: &str) -> bool {
    let lines: std::collections::HashSet<&str> = file.lines().map(str::trim).filter(|line| line.len() > 3).collect();
    block.lines().any(|line| lines.contains(line.trim()))
}

impl Conversation {
    /// Tells the user what of a change was left out as `spare_kept` left it.
    pub(super) fn tell_spared(&self, spared: &[(&HandedFile, Vec<String>)]) {
        if spared.is_empty() {
            return;
        }
        let what: Vec<String> =
            spared.iter().map(|(file, parts)| format!("{} in {}", parts.join(", "), file.path.display())).collect();
        self.notify(&format!(
            "[the reply also changed {}, which the request says stays as it is — that part left out]",
            what.join("; ")
        ));
    }

    /// The Edit and Write calls that make the files as `reply` shows them.
    /// A block that is not a version of any file, new code alone, is added
    /// at the end of the file its path names, or of the one file the prompt
    /// names when it declares what the prompt asks for.
    pub(super) fn changes_shown(
        &self,
        reply: &str,
        prompt: &str,
        handed: &[HandedFile],
        only_named: Option<&WorkspacePath>,
    ) -> Vec<Change> {
        let mut calls: Vec<Change> = Vec::new();
        let mut done: Vec<String> = Vec::new();
        for shown in blocks_for(reply, handed) {
            // The handed file the block is a version of.
            let version_of = || {
                handed
                    .iter()
                    .filter_map(|f| rewrite_of(&f.text, &shown.text).map(|r| (r.shared_lines, f.path.clone())))
                    .max_by_key(|(shared, _)| *shared)
                    .map(|(_, path)| path)
                    .or_else(|| {
                        let best = handed
                            .iter()
                            .filter_map(|f| whole_version_likeness(&f.text, &shown.text).map(|r| (r, &f.path)))
                            .max_by(|a, b| a.0.total_cmp(&b.0));
                        best.map(|(_, path)| path.clone())
                    })
            };
            let target = match shown.path.as_deref() {
                // A path the model made up (`factorial.py` for the function
                // of mathx.py) over a version of a handed file is that file;
                // over copies of handed code (`# pace.py` over running.py's
                // function, again and again), nothing the prompt asks to
                // create; over other code, a file the model creates.
                Some(label) => match self.labelled(label, handed) {
                    Some(path) if !path.abs.exists() && handed_under(label, handed).is_none() => {
                        version_of().or_else(|| {
                            let copies =
                                only_handed_lines(handed, &shown.text) && !prompt.contains(file_name(&path.rel));
                            (!copies).then_some(path)
                        })
                    }
                    known => known,
                },
                // A block without a path is the handed file it is a version of,
                // the one file the prompt asks to make, or new code the prompt
                // asks for in the one file it names.
                None => version_of().or_else(|| {
                    let named = only_named?;
                    if !named.abs.exists() {
                        let copies = handed.iter().any(|f| shares_code(&f.text, &shown.text));
                        return (!copies).then(|| named.clone());
                    }
                    let text = self.workspace.read_text(named).unwrap_or_default();
                    let new = introduces_asked_name(prompt, &text, &shown.text)
                        && handed.iter().all(|f| is_new_code(&f.text, &shown.text));
                    new.then(|| named.clone())
                }),
            };
            let Some(path) = target else { continue };
            // A small model repeats its answer: the first version counts.
            if done.contains(&path.rel) {
                continue;
            }
            done.push(path.rel.clone());
            let file_path = Value::from(path.display());
            if !path.abs.exists() {
                let content = with_homes_imported(&path.rel, &shown.text, handed);
                // A new file is held to what a changed one is: one cut off
                // mid-string by a reply that ran on is no file to write.
                if self.breaks_file(&path, "", &content) {
                    continue;
                }
                calls.push(("Write", serde_json::json!({ "file_path": file_path, "content": content })));
                continue;
            }
            let Ok(text) = self.workspace.read_text(&path) else { continue };
            if let Some(Rewrite { old_string, new_string, .. }) = rewrite_of(&text, &shown.text) {
                // A copy that differs only in blank lines changes nothing the
                // model meant: it is an echo, not an edit.
                if same_code(&old_string, &new_string) {
                    continue;
                }
                let after = text.replacen(&old_string, &new_string, 1);
                if self.unmeant_change((prompt, handed), &path, &text, &after) || self.breaks_file(&path, &text, &after)
                {
                    continue;
                }
                calls.push(edit(&file_path, &old_string, &new_string));
            } else if whole_version_likeness(&text, &shown.text).is_some()
                || (shown.path.is_some() && rewrites_whole(&text, &shown.text))
            {
                // Every line touched ("def greet(name):" given a parameter,
                // the call below it changed to use it): the block is the file.
                if self.unmeant_change((prompt, handed), &path, &text, &shown.text)
                    || self.breaks_file(&path, &text, &shown.text)
                {
                    continue;
                }
                calls.push(edit(&file_path, &text, &shown.text));
            } else if is_new_code(&text, &shown.text) && !handed.iter().any(|f| same_code(&f.text, &shown.text)) {
                // Another handed file's copy under this one's path is no
                // addition to it: the model labelled the wrong file.
                let content = format!("{}\n\n\n{}", text.trim_end(), shown.text);
                calls.push(("Write", serde_json::json!({ "file_path": file_path, "content": content })));
            }
        }
        calls
    }

    /// Each of `users` as the change leaves it, with its calls of the
    /// `stale` names inlined: each stale name a wrapper (see
    /// `inline::wrapper`) in the file the change took it from, of a
    /// function that file still declares. `None`
    /// where one is not, a call cannot be inlined, or the result still
    /// uses a stale name or breaks its file.
    pub(super) fn inlined<'h>(
        &self,
        stale: &[String],
        changed: &[HandedFile],
        handed: &[HandedFile],
        users: &[&'h HandedFile],
    ) -> Option<Vec<(&'h HandedFile, String)>> {
        let wrappers: Vec<_> = stale
            .iter()
            .map(|name| {
                changed.iter().find_map(|new| {
                    let old = handed.iter().find(|f| f.path == new.path)?;
                    let wrapper = wrapper(&old.text, name)?;
                    // What it wraps is still there to call: a replacement.
                    wrapper.calls_any(&top_level_names(&new.text)).then_some((wrapper, new))
                })
            })
            .collect::<Option<_>>()?;
        let mut inlined = Vec::new();
        for user in users {
            let before = &as_changed(user, changed).text;
            let mut text = before.clone();
            for (wrapper, declarer) in &wrappers {
                // In the wrapper's own file its module's names need no import.
                let declared =
                    if declarer.path == user.path { Default::default() } else { top_level_names(&declarer.text) };
                text = inline_calls(&text, wrapper, &declared)?;
            }
            if stale.iter().any(|name| code_uses(&text, name)) || self.breaks_file(&user.path, before, &text) {
                return None;
            }
            inlined.push((*user, text));
        }
        Some(inlined)
    }

    /// The file a reply's path means: a file handed over under that path or,
    /// for a bare name, under that name in its folder; else the path itself
    /// (a new file). A small model drops the folder of `lib/numbers.py`.
    pub(super) fn labelled(&self, label: &str, handed: &[HandedFile]) -> Option<WorkspacePath> {
        match handed_under(label, handed) {
            Some(file) => Some(file.path.clone()),
            None => self.workspace.resolve(label).ok(),
        }
    }
}
