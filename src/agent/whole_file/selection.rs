//! Which files a turn hands over, and which file or function an ask
//! again is about.

use super::{handed::*, judge::*};
use crate::agent::Conversation;
use crate::agent::attach::{MAX_BYTES, MAX_LINES};

/// Lines a code file may have for the whole-file way to take a turn that
/// may change it: it asks the model for the file whole.
const MAX_REWRITTEN_LINES: usize = 150;
use crate::agent::code_text::*;
use crate::agent::prompt::load_rules;
use crate::config::ToolProfile;
use crate::protocol::Event;
use crate::workspace::WorkspacePath;
use crate::workspace::mentions::named_files;
use crate::workspace::snapshot;

/// When `reply` shows only unchanged copies of handed files, and `prompt`
/// asks for a change rather than an answer: the copied files to show
/// again, and the few others handed over, one of which the change must be
/// in. A copied test tells what the code must do (greet.py's test, the
/// greeting expected); but picked from many files, the one asked for is
/// shown alone: shown the test too, a small model wrote the test's imports
/// into shop/text.py.
pub(super) fn overlooked<'a>(
    reply: &str,
    prompt: &str,
    handed: &'a [HandedFile],
    checks: &[String],
) -> Option<(Vec<&'a HandedFile>, Vec<&'a HandedFile>)> {
    const MAX_OTHERS: usize = 3;
    let mut echoed = copied_back(reply, prompt, handed)?;
    let asked: std::collections::HashSet<&str> = words(prompt).collect();
    let declares_asked = |f: &HandedFile| declared_names(&f.text).iter().any(|name| asked.contains(name));
    // The file the prompt names, or that declares what it asks about,
    // copied back, was the right one to look at: the model saw where the
    // change goes but not what it is.
    if echoed.iter().all(|f| names_file(prompt, f) || declares_asked(f)) {
        // "cleanup.py gained --dry-run but the README doesn't mention it":
        // code the prompt names, copied back, is what the change tells of;
        // the prose it names, not copied, is where the change goes.
        let named_prose: Vec<&HandedFile> = handed
            .iter()
            .filter(|f| is_prose(&f.path.rel) && names_file(prompt, f))
            .filter(|f| !echoed.iter().any(|e| e.path.rel == f.path.rel))
            .collect();
        let echoed_code = echoed.iter().all(|f| !is_prose(&f.path.rel));
        return (echoed_code && !named_prose.is_empty()).then_some((echoed, named_prose));
    }
    // Prose that mentions what the prompt asks about (a README) is no place
    // for the change unless the prompt names it, nor a test that fails
    // until the change is made.
    let may_hold_change =
        |f: &HandedFile| (!is_prose(&f.path.rel) && !checks.contains(&f.path.rel)) || names_file(prompt, f);
    let mut others: Vec<&HandedFile> =
        handed.iter().filter(|f| !echoed.iter().any(|e| e.path.rel == f.path.rel) && may_hold_change(f)).collect();
    // Of many others (a test copied back, the package it tests handed
    // too): those that declare what the prompt names (slugify, in
    // shop/text.py), else the one most to do with the prompt, if one is.
    if others.len() > MAX_OTHERS {
        let declaring: Vec<&HandedFile> = others.iter().copied().filter(|f| declares_asked(f)).collect();
        others = if declaring.is_empty() { most_relevant(prompt, &others).into_iter().collect() } else { declaring };
        echoed.clear();
    }
    (!others.is_empty() && others.len() <= MAX_OTHERS).then_some((echoed, others))
}

/// The one of `files` that has most to do with `prompt` by `relevance`,
/// when one has more than every other.
pub(super) fn most_relevant<'a>(prompt: &str, files: &[&'a HandedFile]) -> Option<&'a HandedFile> {
    let scores = relevance(prompt, files.iter().map(|f| f.text.as_str()));
    let mut ranked: Vec<(f32, &HandedFile)> = scores.into_iter().zip(files.iter().copied()).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    match ranked.as_slice() {
        [(best, file), (next, _), ..] if best > next => Some(file),
        [(best, file)] if *best > 0.0 => Some(file),
        _ => None,
    }
}

/// How much each of `texts` has to do with `prompt`: the sum, over the
/// words of the prompt it contains, of how rare each is among `texts`
/// (inverse document frequency, as a search engine weighs terms). A word
/// counts without a plural `s`, so "titles" finds "title".
pub(super) fn relevance<'a>(prompt: &str, texts: impl Iterator<Item = &'a str>) -> Vec<f32> {
    const COMMON: [&str; 32] = [
        "that", "this", "with", "from", "must", "should", "have", "does", "when", "then", "than", "they", "them",
        "their", "what", "which", "there", "where", "into", "only", "also", "some", "more", "most", "make", "keep",
        "file", "code", "function", "work", "like", "every",
    ];
    let mut terms: Vec<String> = prompt
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|word| word.len() > 3 && !COMMON.contains(&word.as_str()))
        .map(|word| match word.strip_suffix('s') {
            Some(stem) if stem.len() > 3 => stem.to_string(),
            _ => word,
        })
        .collect();
    terms.sort();
    terms.dedup();
    // Which terms each text holds, found once.
    let holds: Vec<Vec<bool>> = texts
        .map(|text| {
            let text = text.to_lowercase();
            terms.iter().map(|term| text.contains(term.as_str())).collect()
        })
        .collect();
    let count = holds.len() as f32;
    let weights: Vec<f32> = (0..terms.len())
        .map(|at| {
            let holding = holds.iter().filter(|held| held[at]).count() as f32;
            if holding == 0.0 { 0.0 } else { ((count + 1.0) / holding).ln() }
        })
        .collect();
    holds.iter().map(|held| held.iter().zip(&weights).filter(|(held, _)| **held).map(|(_, w)| w).sum()).collect()
}

/// The one handed file the prompt names, else the one the reply names,
/// else the one file handed over, else the code file that has most to do
/// with the prompt: where the change asked for goes. A test among the
/// `checks`, failing until the change is made, is none of these unless
/// the prompt names it: a reply that repeats "the tests in
/// tests/test_shop.py fail" names what the change must pass.
pub(super) fn file_to_ask_for<'a>(
    prompt: &str,
    reply: &str,
    handed: &'a [HandedFile],
    checks: &[String],
) -> Option<&'a HandedFile> {
    let may_hold_change = |f: &&HandedFile| !checks.contains(&f.path.rel);
    let named_in = |text: &str| handed.iter().filter(|f| names_file(text, f)).collect::<Vec<_>>();
    let named_in_reply: Vec<&HandedFile> = named_in(reply).into_iter().filter(may_hold_change).collect();
    match (named_in(prompt).as_slice(), named_in_reply.as_slice(), handed) {
        ([one], _, _) | ([], [one], _) => Some(*one),
        ([], [], [one]) => Some(one),
        ([], [], _) => {
            let code: Vec<&HandedFile> =
                handed.iter().filter(|f| !is_prose(&f.path.rel)).filter(may_hold_change).collect();
            most_relevant(prompt, &code)
        }
        _ => None,
    }
}

/// The one function (or method, or type) of the `copied` files that
/// `prompt` names, else the one whose declaration `reply` repeats (asked
/// for the line to change, a small model quotes the function unchanged),
/// as the part of its file that declares it; `None` when there is none
/// or several, or when that part is most of its file (shown alone, it
/// would show nothing new).
pub(super) fn asked_function(prompt: &str, reply: &str, copied: &[&HandedFile]) -> Option<HandedFile> {
    let asked: std::collections::HashSet<&str> = words(prompt).filter(|word| word.len() > 2).collect();
    let quoted: std::collections::HashSet<&str> =
        reply.lines().filter_map(|line| declared_name(line.trim_start())).collect();
    let (file, name) = one_declared(copied, &asked).or_else(|| one_declared(copied, &quoted))?;
    if file.part.is_some() {
        return None;
    }
    let (text, part) = declaring_part(&file.text, &[name])?;
    let focused = text.lines().count() * 3 < file.text.lines().count() * 2;
    focused.then(|| HandedFile { path: file.path.clone(), text, part: Some(part) })
}

/// The one of `names` that the `files` declare, and the file that does;
/// `None` when they declare none of them, or several.
pub(super) fn one_declared<'a>(
    files: &[&'a HandedFile],
    names: &std::collections::HashSet<&str>,
) -> Option<(&'a HandedFile, &'a str)> {
    let mut declared = files.iter().flat_map(|file| {
        let mut found: Vec<&str> = file
            .text
            .lines()
            .filter_map(|line| declared_name(line.trim_start()))
            .filter(|n| names.contains(n))
            .collect();
        found.dedup();
        found.into_iter().map(move |name| (*file, name))
    });
    let first = declared.next()?;
    declared.next().is_none().then_some(first)
}

impl Conversation {
    /// Whether this turn goes the whole-file way, and with which files:
    /// always for the `whole_files` profile; for `adaptive`, when the files
    /// `prompt` points to (or every file, or those that share its words)
    /// fit in one message.
    pub(in crate::agent) fn choose_way(&mut self, prompt: &str) {
        let profile = self.tools.profile();
        if !matches!(profile, ToolProfile::WholeFiles | ToolProfile::Adaptive) {
            self.whole_file_selection = None;
            self.pipeline_turn = false;
            return;
        }
        let named = named_files(&self.workspace, prompt, MAX_FILES);
        let rules = load_rules(self.workspace.root());
        let mut selection = self.select_files(prompt, named, rules.as_ref().map(|(name, _)| name.as_str()));
        selection.rules = rules;
        // A project larger than one message goes through the pipeline:
        // localized, then changed a definition at a time.
        self.pipeline_turn = !selection.whole_workspace_fits;
        tracing::debug!(pipeline = self.pipeline_turn, "chose the way of this turn");
        self.whole_file_selection = Some(selection);
    }

    /// The `chosen` files and the `new` ones the prompt asks for, shown
    /// empty, as handed to the model. Each counts as read for the edit
    /// guards.
    pub(super) fn hand_over_files(&mut self, chosen: Vec<HandedFile>, new: &[WorkspacePath]) -> Vec<HandedFile> {
        let mut handed = chosen;
        for file in &handed {
            // A part counts as reading the file, as a Read of some lines does.
            match file.part {
                None => self.state.note_read(&file.path, &file.text),
                Some(_) => {
                    if let Ok(text) = self.workspace.read_text(&file.path) {
                        self.state.note_read(&file.path, &text);
                    }
                }
            }
        }
        if !handed.is_empty() {
            let paths = handed.iter().map(|f| f.path.display().to_string()).collect();
            self.events.emit(Event::FilesAttached { paths });
        }
        handed.extend(new.iter().map(|path| HandedFile::whole(path.clone(), String::new())));
        handed
    }

    /// The file at `path` as handed over, unless it may not be shown or is
    /// too long for the whole-file way.
    pub(super) fn showable(&self, path: WorkspacePath) -> Option<HandedFile> {
        let fits = std::fs::metadata(&path.abs).is_ok_and(|m| m.len() <= MAX_BYTES as u64);
        if !fits || !self.may_show(&path) {
            return None;
        }
        let text = self.workspace.read_text(&path).ok()?;
        let readable = !text.trim().is_empty() && !text.contains('\0') && text.lines().count() <= MAX_LINES;
        readable.then_some(HandedFile::whole(path, text))
    }

    /// The files of the workspace that `prompt` points to (it names them, or
    /// they hold a code name it uses), or when it points to none every file,
    /// or when those do not fit the few that share its rarest words, as
    /// many as fit in one message, in path order. `skip` is a file not to show.
    pub(super) fn select_files(&self, prompt: &str, named: Vec<WorkspacePath>, skip: Option<&str>) -> Selection {
        let words: Vec<&str> = words(prompt).filter(|word| word.len() > 2).collect();
        /// Files larger than this are not read for a part to show.
        const MAX_PART_SOURCE_BYTES: u64 = 1024 * 1024;
        let mut readable: Vec<(bool, String, WorkspacePath, String)> = Vec::new();
        // Text files too long to show whole: a part of one may be shown.
        let mut long: Vec<(bool, String, WorkspacePath, String)> = Vec::new();
        // Files too long to show at all: the project holds more than one
        // message can, unless the prompt points elsewhere.
        let mut too_long = false;
        for rel in snapshot::files(self.workspace.root()) {
            if skip == Some(rel.as_str()) {
                continue;
            }
            let Ok(path) = self.workspace.resolve(&rel) else { continue };
            if !self.may_show(&path) {
                continue;
            }
            let is_named = named.iter().any(|n| n.rel == path.rel);
            if std::fs::metadata(&path.abs).is_ok_and(|m| m.len() > MAX_PART_SOURCE_BYTES) {
                too_long = true;
                continue;
            }
            let Ok(text) = self.workspace.read_text(&path) else { continue };
            if text.trim().is_empty() || text.contains('\0') {
                continue;
            }
            if text.len() > MAX_BYTES || text.lines().count() > MAX_LINES {
                long.push((is_named, rel, path, text));
                continue;
            }
            readable.push((is_named, rel, path, text));
        }
        // Code names the prompt uses: `in_stock`, `parseDate`, and plain
        // words the project declares (`slugify` of `def slugify`).
        let declared: std::collections::HashSet<&str> =
            readable.iter().chain(&long).flat_map(|(_, _, _, text)| text.lines().filter_map(declared_name)).collect();
        let code_names: Vec<&str> = words
            .into_iter()
            .filter(|word| {
                word.contains('_') || word.chars().skip(1).any(char::is_uppercase) || declared.contains(word)
            })
            .collect();
        // Of a file too long to show, the part that declares a code name
        // the prompt uses ("parse_port in utils.py accepts 0"): where the
        // change goes, and all of the file a small model needs.
        let has_long = !long.is_empty();
        let mut parts: Vec<(bool, String, WorkspacePath, String, Part)> = Vec::new();
        for (is_named, rel, path, text) in long {
            match declaring_part(&text, &code_names) {
                Some((part, at)) => parts.push((is_named, rel, path, part, at)),
                None => {
                    too_long = true;
                }
            }
        }
        // The project's modules that the named files, and those using a
        // code name the prompt uses, import (calc.py for test_calc.py's
        // `from calc import mean`; line.py for the `def total` of
        // invoice.py, which sums `line.amount()`; settings.py, which holds
        // the default, for server.py's `setting("port")` when the prompt
        // asks about PORT): where what they use is.
        let uses_code_name = |text: &str| code_names.iter().any(|name| text.contains(name));
        let imported: std::collections::HashSet<String> = readable
            .iter()
            .filter(|(is_named, _, _, text)| *is_named || uses_code_name(text))
            .flat_map(|(_, _, _, text)| text.lines().filter(|line| is_import(line)).flat_map(import_names))
            .map(str::to_string)
            .collect();
        let stem = |rel: &str| file_name(rel).split('.').next().unwrap_or_default().to_string();
        let mut candidates: Vec<(u8, String, WorkspacePath, String, Option<Part>)> = readable
            .into_iter()
            .map(|(is_named, rel, path, text)| {
                let rank = if is_named {
                    0
                } else if code_names.iter().any(|name| text.contains(name)) || imported.contains(&stem(&rel)) {
                    1
                } else {
                    2
                };
                (rank, rel, path, text, None)
            })
            .chain(
                parts
                    .into_iter()
                    .map(|(is_named, rel, path, text, at)| (u8::from(!is_named), rel, path, text, Some(at))),
            )
            .collect();
        candidates.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        // Files the prompt points to are all a small model should see: the
        // rest only draw its reply away from them.
        let pointed = candidates.first().is_some_and(|c| c.0 < 2);
        let all_fit = !too_long
            && candidates.len() <= MAX_FILES
            && candidates.iter().map(|c| c.3.len()).sum::<usize>() <= MAX_BYTES;
        if pointed {
            candidates.retain(|c| c.0 < 2);
        } else if !all_fit {
            // A project larger than one message, the prompt naming nothing
            // in it: the files that share its rarest words, best first.
            // Failing that, the files in path order, as many as fit.
            let scores = relevance(prompt, candidates.iter().map(|c| c.3.as_str()));
            let best = scores.iter().copied().fold(0.0, f32::max);
            if best > 0.0 {
                let mut scored: Vec<_> =
                    candidates.into_iter().zip(scores).filter(|(_, score)| *score * 2.0 >= best).collect();
                scored.sort_by(|a, b| b.1.total_cmp(&a.1));
                candidates = scored.into_iter().take(MAX_RELEVANT).map(|(c, _)| c).collect();
            }
        }
        let mut files = Vec::new();
        let mut bytes = 0;
        for (_, _, path, text, part) in candidates {
            if files.len() == MAX_FILES || bytes + text.len() > MAX_BYTES {
                continue;
            }
            bytes += text.len();
            files.push(HandedFile { path, text, part });
        }
        // In the project's order, as a listing reads.
        files.sort_by(|a, b| a.path.rel.cmp(&b.path.rel));
        // A code file the whole-file way would have the model write whole
        // must be short enough to write in a turn: a small model takes
        // minutes over a 200-line file and drifts from it (shlex's lib.rs
        // spent the turn's 300 s). Past that, the pipeline changes a
        // definition at a time.
        let rewritable = files.iter().all(|file| {
            crate::codemap::Language::of_path(&file.path.rel).is_none()
                || file.text.lines().count() <= MAX_REWRITTEN_LINES
        });
        Selection { files, named, rules: None, whole_workspace_fits: all_fit && !has_long && rewritable }
    }
}
