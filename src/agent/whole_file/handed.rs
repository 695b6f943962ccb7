//! The files a whole-file turn hands the model, and what every step
//! knows of them: their names, kinds and the parts shown.

use crate::agent::code_text::*;
use crate::codemap::{FileMap, Language, Source, computed, parse};
use crate::workspace::WorkspacePath;
use crate::workspace::mentions::names_conventionally;
use serde_json::Value;

/// The languages a code fence names (```` ```python ````), as a small
/// model also writes them on the line below the fence.
pub(super) const FENCE_LANGUAGES: [&str; 30] = [
    "python",
    "py",
    "javascript",
    "js",
    "typescript",
    "ts",
    "jsx",
    "tsx",
    "go",
    "rust",
    "bash",
    "sh",
    "shell",
    "ini",
    "toml",
    "yaml",
    "yml",
    "json",
    "sql",
    "c",
    "cpp",
    "java",
    "ruby",
    "php",
    "html",
    "css",
    "markdown",
    "kotlin",
    "swift",
    "lua",
];

/// Files handed over with one prompt.
pub(super) const MAX_FILES: usize = 24;

/// Files handed over for sharing the prompt's words, when it names none.
pub(super) const MAX_RELEVANT: usize = 4;

/// Fresh, sampled tries at a change request every greedy reply left
/// undone: each gave the 0.5B a change it never made greedily on some tasks,
/// and a different task each.
pub(super) const RESAMPLES: u32 = 3;

/// How many times a line written back as it reads is asked for again,
/// sampled.
pub(super) const LINE_RESAMPLES: u32 = 3;

pub(super) fn handed_paths(handed: &[HandedFile]) -> Vec<&str> {
    handed.iter().map(|file| file.path.display()).collect()
}

/// The handed file `label` names: by its path or, bare, by its name.
pub(super) fn handed_under<'a>(label: &str, handed: &'a [HandedFile]) -> Option<&'a HandedFile> {
    handed.iter().find(|f| f.path.rel == label || (!label.contains('/') && file_name(&f.path.rel) == label))
}

/// The last part of a path (`shop/cart.py`: `cart.py`).
pub(super) fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Whether `prompt` speaks of the file at `path`: it names it, or uses a
/// word of its name ("the test" of test_pricing.py, "a view" of views.py),
/// a letter apart at most.
pub(super) fn speaks_of_file(prompt: &str, path: &str) -> bool {
    let name = file_name(path);
    let stem = name.split('.').next().unwrap_or_default().to_lowercase();
    let parts: Vec<&str> = stem.split(['_', '-']).filter(|part| part.len() > 3).collect();
    prompt.contains(name)
        || words(prompt)
            .map(str::to_lowercase)
            .any(|word| word.len() > 3 && parts.iter().any(|part| one_edit_apart(&word, part)))
}

/// Whether `prompt` names `file` (`cart.py`, `shop/cart.py`, or "the
/// README" at the root).
pub(super) fn names_file(prompt: &str, file: &HandedFile) -> bool {
    let name = file_name(&file.path.rel);
    prompt.contains(name) || (!file.path.rel.contains('/') && names_conventionally(prompt, name))
}

/// Whether `a` becomes `b` by at most one letter changed, left out or added.
pub(super) fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let head = short.iter().zip(long.iter()).take_while(|(x, y)| x == y).count();
    let skip = if short.len() == long.len() { 1 } else { 0 };
    short.len() == head || short[head + skip..] == long[head + 1..]
}

/// The Edit that replaces `old` with `new` in the file at `path`.
pub(super) fn edit(path: impl serde::Serialize, old: &str, new: &str) -> Change {
    ("Edit", serde_json::json!({ "file_path": path, "old_string": old, "new_string": new }))
}

/// Whether the file at `path` is prose, going by its extension.
pub(super) fn is_prose(path: &str) -> bool {
    has_extension_in(path, &["md", "markdown", "txt", "rst", "adoc"])
}

/// Whether the file at `path` holds settings, going by its extension.
pub(super) fn is_settings(path: &str) -> bool {
    has_extension_in(path, &["ini", "toml", "yaml", "yml", "json", "cfg", "conf", "env", "properties"])
}

pub(super) fn has_extension_in(path: &str, extensions: &[&str]) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| extensions.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The files to hand the model with one prompt.
pub(in crate::agent) struct Selection {
    pub(super) files: Vec<HandedFile>,
    /// The existing files the prompt names.
    pub(super) named: Vec<WorkspacePath>,
    /// The project's rules file, by name, and its text: read once a turn,
    /// it goes in the system prompt, not among the files.
    pub(super) rules: Option<(String, String)>,
    /// Every file of the workspace fits in one message.
    pub(super) whole_workspace_fits: bool,
}

/// An Edit or Write call that a reply's files make, as (tool, input).
pub(super) type Change = (&'static str, Value);

/// A file shown to the model, as it was then: whole, or the part of a
/// file too long to show that declares what the prompt asks about.
#[derive(Clone)]
pub(super) struct HandedFile {
    pub(super) path: WorkspacePath,
    pub(super) text: String,
    pub(super) part: Option<Part>,
}

impl HandedFile {
    pub(super) fn whole(path: WorkspacePath, text: String) -> HandedFile {
        HandedFile { path, text, part: None }
    }

    /// The file as the model reads it: its path, then its text in a code
    /// block; a part is said to be one, so that the model answers with
    /// that part changed.
    pub(super) fn shown(&self) -> String {
        let text = self.text.trim_end_matches('\n');
        match self.part {
            None => format!("{}\n```\n{text}\n```\n\n", self.path.display()),
            Some(Part { first, total, .. }) => format!(
                "{} (lines {first} to {} of {total}; the rest is left out)\n```\n{text}\n```\n\n",
                self.path.display(),
                first + text.lines().count() - 1,
            ),
        }
    }
}

/// What a script printed, run on the project as it is, as a question's
/// answer is shown it (the pipeline's and the whole-file way's alike).
pub(in crate::agent) fn ran_on_project(script: &str, printed: &str) -> String {
    format!("This script:\n```\n{script}\n```\nprints, run on the project as it is:\n```\n{printed}\n```\n")
}

/// The values the handed files' constants compute, worked out from the
/// code (see [`crate::codemap::computed`]), to follow the files shown with
/// a question: asked how many readings a buffer holds, the 1.5B quoted
/// `CAPACITY = READINGS_PER_DAY * …` right and then took 86400 // 45 for
/// 182.2. Empty where no constant is computed.
pub(super) fn computed_values(handed: &[HandedFile]) -> String {
    let parsed: Vec<(String, &str, FileMap)> = handed
        .iter()
        .filter(|f| f.part.is_none())
        .filter_map(|f| {
            let path = f.path.display().to_string();
            let language = Language::of_path(&path)?;
            Some((path, f.text.as_str(), parse(language, &f.text)))
        })
        .collect();
    let sources: Vec<Source> = parsed.iter().map(|(path, text, file)| Source { path, text, file }).collect();
    let lines: Vec<String> =
        computed(&sources).into_iter().map(|c| format!("- `{}` in {} is {}", c.name, c.path, c.value)).collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("The values these files' constants compute, worked out from the code:\n{}\n\n", lines.join("\n"))
}

/// Whether the handed file at `path` holds tests that the request names
/// none of (neither the file nor a test in it), where code
/// beside the tests was handed over too: a test the user did not speak of
/// states what the code must do, and rewriting it fixes nothing (a small
/// model handed a library and its tests rewrote the tests to what the bug
/// prints).
pub(super) fn unnamed_tests(prompt: &str, handed: &[HandedFile], path: &str) -> bool {
    use crate::codemap::rank::is_aside;
    let Some(file) = handed.iter().find(|f| f.path.display() == path) else { return false };
    let Some(language) = crate::codemap::Language::of_path(path) else { return false };
    if !is_aside(path) || is_prose(path) || names_file(prompt, file) {
        return false;
    }
    let code_handed =
        handed.iter().any(|f| !is_prose(&f.path.rel) && !is_settings(&f.path.rel) && !is_aside(&f.path.rel));
    let words: Vec<&str> = prompt.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
    let named_test = crate::codemap::parse(language, &file.text)
        .definitions
        .iter()
        .any(|d| d.name.len() > 3 && words.contains(&d.name.as_str()));
    code_handed && !named_test
}
