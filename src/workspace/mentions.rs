//! The files a text names: "fix stats.py", "see `lib/numbers.py:12`",
//! "@src/main.rs". A user who names a file means that file, and a model that
//! names one has it in mind; both are worth showing it to.

use super::{Workspace, WorkspacePath};
use crate::workspace::snapshot::same_name_elsewhere;

/// Words looked at per text: each may cost a walk of the tree.
const MAX_CANDIDATES: usize = 16;

/// Existing files of the workspace that `text` names, in the order named,
/// at most `limit`. A bare file name that is not at the root counts when
/// exactly one file in the workspace has it.
pub fn named_files(workspace: &Workspace, text: &str, limit: usize) -> Vec<WorkspacePath> {
    let mut found: Vec<WorkspacePath> = Vec::new();
    for word in candidates(text).take(MAX_CANDIDATES) {
        if found.len() >= limit {
            break;
        }
        let Some(path) = resolve(workspace, word) else { continue };
        if !found.iter().any(|known| known.abs == path.abs) {
            found.push(path);
        }
    }
    for path in conventionally_named(workspace, text) {
        if found.len() < limit && !found.iter().any(|known| known.abs == path.abs) {
            found.push(path);
        }
    }
    found
}

/// Files at the root of the workspace that `text` names as people do,
/// without an extension (see [`names_conventionally`]), one file per word.
fn conventionally_named(workspace: &Workspace, text: &str) -> Vec<WorkspacePath> {
    let words: Vec<&str> = conventional_words(text).collect();
    if words.is_empty() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(workspace.root()) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut found = Vec::new();
    for word in words {
        let mut meant = names.iter().filter(|name| word_names(word, name));
        // README.md beside README.txt: which one is meant is a guess.
        let (Some(name), None) = (meant.next(), meant.next()) else { continue };
        if let Ok(path) = workspace.resolve(name) {
            if !found.iter().any(|known: &WorkspacePath| known.abs == path.abs) {
                found.push(path);
            }
        }
    }
    found
}

/// Whether `text` names the file called `name` as people do, without an
/// extension: "the README" for README.md, "CHANGELOG", "the Makefile". A
/// word in capitals names a file of that stem; a capitalised one only a
/// file of exactly that name, so that "Scale the worker" names no
/// Scale.swift.
pub fn names_conventionally(text: &str, name: &str) -> bool {
    conventional_words(text).any(|word| word_names(word, name))
}

fn conventional_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| word.len() >= 4 && word.starts_with(|c: char| c.is_ascii_uppercase()))
}

fn word_names(word: &str, name: &str) -> bool {
    let capitals = word.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    name == word || (capitals && name.split('.').next() == Some(word))
}

/// Files `text` names that do not exist anywhere in the workspace, in the
/// order named, at most `limit`: "create mathutil.py".
pub fn new_files(workspace: &Workspace, text: &str, limit: usize) -> Vec<WorkspacePath> {
    let mut found: Vec<WorkspacePath> = Vec::new();
    for word in candidates(text).take(MAX_CANDIDATES) {
        let name = word.rsplit('/').next().unwrap_or(word);
        if found.len() >= limit
            || !has_file_extension(name)
            || resolve(workspace, word).is_some()
            || names_a_kind(text, word)
        {
            continue;
        }
        let Ok(path) = workspace.resolve(word) else { continue };
        if !path.abs.exists() && same_name_elsewhere(workspace.root(), name).is_empty() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// Whether `name` ends in the extension of a kind of file people make:
/// `require.main` or `self.items` is code, not a file to create.
fn has_file_extension(name: &str) -> bool {
    const EXTENSIONS: [&str; 49] = [
        "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "rs", "go", "sh", "bash", "zsh", "rb", "java", "kt",
        "swift", "c", "h", "cc", "cpp", "hpp", "cs", "php", "lua", "sql", "html", "css", "scss", "vue", "md", "rst",
        "txt", "adoc", "json", "toml", "yaml", "yml", "ini", "cfg", "conf", "env", "xml", "csv", "tsv", "lock",
        "proto", "graphql", "log",
    ];
    let dotfile = name.starts_with('.') && name.len() > 1;
    dotfile || name.rsplit_once('.').is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Whether `text` says `word` of a kind of file ("ignore .env files"),
/// not of one file to make.
fn names_a_kind(text: &str, word: &str) -> bool {
    ["files", "folders", "directories"].iter().any(|kind| text.contains(&format!("{word} {kind}")))
}

fn resolve(workspace: &Workspace, word: &str) -> Option<WorkspacePath> {
    if let Ok(path) = workspace.resolve(word) {
        if path.abs.is_file() {
            return Some(path);
        }
    }
    if word.contains('/') {
        return None;
    }
    match same_name_elsewhere(workspace.root(), word).as_slice() {
        [only] => workspace.resolve(only).ok().filter(|path| path.abs.is_file()),
        _ => None,
    }
}

/// Words of `text` that look like file paths, cleaned of the quotes,
/// punctuation and `:line` suffixes around them.
fn candidates(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | '[' | ']' | '<' | '>' | ','))
        .filter(|word| !word.contains("://"))
        .map(|word| {
            let word = word.trim_start_matches('@').trim_start_matches("./");
            let word = word.trim_end_matches(['.', ':', ';', '!', '?']);
            // `stats.py:12` and `stats.py:12:5` name the file.
            let mut word = word;
            while let Some((head, tail)) = word.rsplit_once(':') {
                if tail.is_empty() || !tail.chars().all(|c| c.is_ascii_digit()) {
                    break;
                }
                word = head;
            }
            word
        })
        .filter(|word| looks_like_a_file(word))
}

/// A file name of a leading dot and a lowercase word (`.gitignore`, `.env`,
/// `.eslintrc.json`), as tools name their settings.
pub fn is_dotfile(name: &str) -> bool {
    name.strip_prefix('.').is_some_and(|rest| {
        rest.starts_with(|c: char| c.is_ascii_lowercase())
            && rest.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            && !rest.ends_with('.')
    })
}

/// A name with an extension (`stats.py`, `Makefile` aside) or a path with a
/// folder in it (`src/main.rs`, `docs/guide`).
fn looks_like_a_file(word: &str) -> bool {
    if word.is_empty() || word.len() > 400 || word.starts_with('-') {
        return false;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    has_extension(name) || is_dotfile(name) || (word.contains('/') && !name.is_empty())
}

/// Whether a file name ends in an extension (`stats.py`, `app.test.ts`).
/// Numbers (`0.2`, `1.5b`), versions (`2.x`) and abbreviations (`e.g.`,
/// `i.e.`) do not.
pub fn has_extension(name: &str) -> bool {
    const ABBREVIATIONS: [&str; 2] = ["e.g", "i.e"];
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        let numeric = stem.chars().all(|c| c.is_ascii_digit() || c == '.');
        !stem.is_empty()
            && (1..=8).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && !(numeric && (ext.starts_with(|c: char| c.is_ascii_digit()) || ext.eq_ignore_ascii_case("x")))
            && !ABBREVIATIONS.contains(&name.to_ascii_lowercase().as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(files: &[&str]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x\n").unwrap();
        }
        let workspace = Workspace::open(dir.path()).unwrap();
        (dir, workspace)
    }

    fn named(workspace: &Workspace, text: &str) -> Vec<String> {
        named_files(workspace, text, 4).into_iter().map(|p| p.rel).collect()
    }

    #[test]
    fn paths_and_names_in_prose_are_found() {
        let (_dir, ws) = workspace(&["stats.py", "lib/numbers.py", "lib/text.py", "a/util.py", "b/util.py"]);
        assert_eq!(named(&ws, "Calling stddev in stats.py fails. Fix it."), ["stats.py"]);
        assert_eq!(named(&ws, "see `lib/text.py:12:3`, and (@lib/numbers.py)"), ["lib/text.py", "lib/numbers.py"]);
        assert_eq!(named(&ws, "the bug is in numbers.py"), ["lib/numbers.py"], "one file has that name");
        assert!(named(&ws, "util.py is wrong").is_empty(), "two files have that name");
        assert!(named(&ws, "missing.py and https://example.com/a.py and e.g. and v1.2").is_empty());
        assert_eq!(named(&ws, "stats.py, stats.py and ./stats.py"), ["stats.py"], "each file once");
        assert!(named(&ws, "../outside.py /etc/passwd").is_empty());
        assert!(named(&ws, "lib/").is_empty(), "a folder is not a file");
    }

    #[test]
    fn conventional_files_are_named_without_their_extension() {
        let (_dir, ws) =
            workspace(&["README.md", "Makefile", "NOTES.txt", "NOTES.md", "Scale.swift", "src/LICENSE", "cleanup.py"]);
        assert_eq!(named(&ws, "cleanup.py gained a flag the README doesn't mention."), ["cleanup.py", "README.md"]);
        assert_eq!(named(&ws, "Add a test target to the Makefile"), ["Makefile"]);
        assert!(named(&ws, "Scale the worker, readme and makefile").is_empty(), "capitalised or lower-case words");
        assert!(named(&ws, "Update the NOTES").is_empty(), "two files have that stem");
        assert!(named(&ws, "Add the LICENSE").is_empty(), "only files at the root");
    }

    #[test]
    fn a_dotfile_the_prompt_asks_for_is_a_new_file() {
        let (_dir, ws) = workspace(&["app.py", ".env"]);
        let new = |text| new_files(&ws, text, 4).into_iter().map(|p| p.rel).collect::<Vec<_>>();
        assert_eq!(new("Create a .gitignore that ignores .cache files."), [".gitignore"]);
        assert_eq!(named(&ws, "Read the .env file."), [".env"]);
        assert!(new("It costs .5 of that... or .NET.").is_empty());
        // Numbers and abbreviations are no files to make.
        assert!(new("Move the 0.2 (a rate, e.g. VAT) of v1.5 into a constant; 1.5b is the model.").is_empty());
        assert!(new("Plugins that need 1.5+ are refused on our 2.x runtime, and 1.4.X too.").is_empty());
        assert_eq!(new("Write the log to 2024.log"), ["2024.log"]);
        // Nor is a dotted name of code.
        assert!(new("Drop the require.main block, and keep self.items as it is.").is_empty());
    }
}
