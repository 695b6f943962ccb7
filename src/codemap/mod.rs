//! The code map: every definition of the workspace (functions, methods,
//! classes, types, constants) with its byte range, signature and docstring,
//! and the names each one uses, read with tree-sitter for Python,
//! JavaScript, TypeScript, Rust, Go and Bash.
//!
//! The map is incremental: [`CodeMap::refresh`] parses again only the files
//! whose size or modification time changed on disk, or whose text changed
//! in an open editor buffer, each alone. Pure data over text: it runs no
//! program and writes nothing.

mod names;
mod parse;
pub mod rank;
mod values;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

pub use names::{redeclared, unbound_names};
pub use parse::{DefKind, Definition, FileMap, Language, parse, tree};
pub use values::{Computed, Source, computed};

use crate::workspace::Workspace;

/// Files larger than this are not parsed: generated or minified code, no
/// place for a definition-sized change.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Files the walk reads at most: a monorepo's tail is left out rather than
/// making every turn slow.
pub const MAX_FILES: usize = 50_000;

/// What a file looked like when it was parsed: a changed stamp means parse again.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stamp {
    Disk {
        len: u64,
        modified: Option<SystemTime>,
    },
    /// An open editor buffer, by a hash of its text.
    Buffer(u64),
}

#[derive(Debug, Default)]
pub struct CodeMap {
    files: BTreeMap<String, (Stamp, Arc<FileMap>)>,
}

/// What one [`CodeMap::refresh`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Refreshed {
    /// Files of a language the map reads.
    pub files: usize,
    /// Of those, the ones parsed (new or changed).
    pub parsed: usize,
    /// Files that were in the map and are gone.
    pub removed: usize,
}

/// A definition found in the map, with the file that holds it.
#[derive(Debug, Clone, Copy)]
pub struct Found<'m> {
    pub path: &'m str,
    pub file: &'m FileMap,
    pub definition: &'m Definition,
}

impl CodeMap {
    pub fn new() -> CodeMap {
        CodeMap::default()
    }

    /// Brings the map up to date with the workspace's files (gitignore
    /// honoured), open editor buffers standing in for their files.
    pub fn refresh(&mut self, workspace: &Workspace) -> Refreshed {
        let root = workspace.root();
        let mut seen = std::collections::BTreeSet::new();
        let mut refreshed = Refreshed::default();
        let walk = ignore::WalkBuilder::new(root).require_git(false).sort_by_file_name(|a, b| a.cmp(b)).build();
        for entry in walk.filter_map(Result::ok).take(MAX_FILES) {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Some(rel) = relative(root, entry.path()) else { continue };
            let Some(language) = Language::of_path(&rel) else { continue };
            refreshed.files += 1;
            seen.insert(rel.clone());
            let buffer = workspace.overlay().read(entry.path());
            let stamp = match &buffer {
                Some(text) => Stamp::Buffer(crate::text::fnv1a(text.as_bytes())),
                None => {
                    let Ok(metadata) = entry.metadata() else { continue };
                    if metadata.len() > MAX_FILE_BYTES {
                        continue;
                    }
                    Stamp::Disk { len: metadata.len(), modified: metadata.modified().ok() }
                }
            };
            if self.files.get(&rel).is_some_and(|(known, _)| *known == stamp) {
                continue;
            }
            let text = match buffer {
                Some(text) => text,
                None => match std::fs::read(entry.path()).map(String::from_utf8) {
                    Ok(Ok(text)) => text,
                    _ => continue,
                },
            };
            refreshed.parsed += 1;
            self.files.insert(rel, (stamp, Arc::new(parse(language, &text))));
        }
        let before = self.files.len();
        self.files.retain(|rel, _| seen.contains(rel));
        refreshed.removed = before - self.files.len();
        refreshed
    }

    /// The map of one file, as last parsed.
    pub fn file(&self, rel: &str) -> Option<&FileMap> {
        self.files.get(rel).map(|(_, map)| map.as_ref())
    }

    pub fn files(&self) -> impl Iterator<Item = (&str, &FileMap)> {
        self.files.iter().map(|(rel, (_, map))| (rel.as_str(), map.as_ref()))
    }

    pub fn definitions(&self) -> impl Iterator<Item = Found<'_>> {
        self.files()
            .flat_map(|(path, file)| file.definitions.iter().map(move |definition| Found { path, file, definition }))
    }
}

fn relative(root: &Path, path: &Path) -> Option<String> {
    Some(path.strip_prefix(root).ok()?.to_string_lossy().replace('\\', "/"))
}

#[cfg(test)]
mod tests;
