//! Open documents as ropes, kept in step with the editor through incremental
//! sync. Positions on the wire are UTF-16 code units, as LSP specifies; the
//! conversion is exact for text outside the Basic Multilingual Plane (emoji).
//! Lines end at `\n`, `\r\n` and `\r`, as LSP specifies: ropey also ends them
//! at U+000B, U+000C, U+0085, U+2028 and U+2029, which editors do not, so a
//! document holding one of those is counted by hand.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

use crate::workspace::BufferOverlay;

pub struct Document {
    pub rope: Rope,
    pub version: i32,
    pub uri: Uri,
    /// The text may hold a line end of ropey's that LSP does not count (see
    /// [`odd_breaks`]): set by any text that brings one, cleared only when
    /// the whole text is replaced, so that ropey's line index is used
    /// whenever it is right.
    odd_breaks: bool,
}

/// Every open document, keyed by its canonical path so that the workspace's
/// resolved paths find them.
#[derive(Default)]
pub struct Documents {
    open: RwLock<HashMap<PathBuf, Document>>,
    /// The canonical path of each open document's URI: resolving a URI
    /// walks the disk (`canonicalize`), too slow for every keystroke.
    paths: RwLock<HashMap<String, PathBuf>>,
    /// Woken at every open, change and close, for those waiting on the editor.
    changed: tokio::sync::Notify,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SyncError {
    #[error("{0} is not a file URI")]
    NotAFile(String),
    #[error("{0} is not open")]
    NotOpen(String),
    #[error("position {line}:{character} is outside {uri}")]
    OutOfRange { uri: String, line: u32, character: u32 },
}

/// The canonical path of a document URI; documents that do not exist on disk
/// yet are keyed under their canonical parent directory.
pub fn path_of(uri: &Uri) -> Result<PathBuf, SyncError> {
    let path = uri.to_file_path().ok_or_else(|| SyncError::NotAFile(uri.as_str().to_string()))?.into_owned();
    Ok(canonical(&path))
}

pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => path.to_path_buf(),
    }
}

impl Documents {
    pub fn open(&self, uri: Uri, text: &str, version: i32) -> Result<(), SyncError> {
        let path = path_of(&uri)?;
        self.paths.write().unwrap_or_else(|e| e.into_inner()).insert(uri.as_str().to_string(), path.clone());
        let document = Document { rope: Rope::from_str(text), version, uri, odd_breaks: odd_breaks(text) };
        self.write().insert(path, document);
        self.changed.notify_waiters();
        Ok(())
    }

    pub fn close(&self, uri: &Uri) -> Result<(), SyncError> {
        let path = self.path_of_open(uri)?;
        self.paths.write().unwrap_or_else(|e| e.into_inner()).remove(uri.as_str());
        self.write().remove(&path);
        self.changed.notify_waiters();
        Ok(())
    }

    /// Applies changes in order. Runs synchronously in the notification
    /// handler, before any await, so edits keep the order they were sent in.
    /// A bad change leaves the document as the changes before it made it.
    pub fn change(
        &self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Result<(), SyncError> {
        let path = self.path_of_open(uri)?;
        let mut open = self.write();
        let document = open.get_mut(&path).ok_or_else(|| SyncError::NotOpen(uri.as_str().to_string()))?;
        for change in changes {
            match change.range {
                None => {
                    document.rope = Rope::from_str(&change.text);
                    document.odd_breaks = odd_breaks(&change.text);
                }
                Some(range) => {
                    let (start, end) = char_range(&document.rope, document.odd_breaks, range)
                        .ok_or_else(|| out_of_range(uri, range.start.max(range.end)))?;
                    document.rope.remove(start..end);
                    document.rope.insert(start, &change.text);
                    document.odd_breaks |= odd_breaks(&change.text);
                }
            }
        }
        document.version = version;
        drop(open);
        self.changed.notify_waiters();
        Ok(())
    }

    /// The document's text and version, when open.
    pub fn snapshot(&self, path: &Path) -> Option<(String, i32, Uri)> {
        let open = self.read_lock();
        open.get(path).map(|d| (d.rope.to_string(), d.version, d.uri.clone()))
    }

    /// Resolves at the next open, change or close of any document.
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// The text of `range` in an open document.
    pub fn text_in(&self, uri: &Uri, range: Range) -> Result<String, SyncError> {
        let path = self.path_of_open(uri)?;
        let open = self.read_lock();
        let document = open.get(&path).ok_or_else(|| SyncError::NotOpen(uri.as_str().to_string()))?;
        let (start, end) =
            char_range(&document.rope, document.odd_breaks, range).ok_or_else(|| out_of_range(uri, range.end))?;
        Ok(document.rope.slice(start..end).to_string())
    }

    /// The canonical path of `uri`, known without the disk when it is open.
    fn path_of_open(&self, uri: &Uri) -> Result<PathBuf, SyncError> {
        if let Some(path) = self.paths.read().unwrap_or_else(|e| e.into_inner()).get(uri.as_str()) {
            return Ok(path.clone());
        }
        path_of(uri)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<PathBuf, Document>> {
        self.open.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read_lock(&self) -> std::sync::RwLockReadGuard<'_, HashMap<PathBuf, Document>> {
        self.open.read().unwrap_or_else(|e| e.into_inner())
    }
}

fn out_of_range(uri: &Uri, at: Position) -> SyncError {
    SyncError::OutOfRange { uri: uri.as_str().to_string(), line: at.line, character: at.character }
}

/// Char indices of an LSP range, start before end.
fn char_range(rope: &Rope, odd_breaks: bool, range: Range) -> Option<(usize, usize)> {
    let start = char_index(rope, odd_breaks, range.start)?;
    let end = char_index(rope, odd_breaks, range.end)?;
    Some((start.min(end), start.max(end)))
}

/// Whether `text` holds a char that ropey ends a line at and LSP does not.
fn odd_breaks(text: &str) -> bool {
    text.contains(['\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}'])
}

/// The char index of a UTF-16 position. A position past the end of a line
/// means the end of that line, as the specification says; a line past the
/// end of the document is an error, except the line just after the last.
/// `odd_breaks`: the rope may hold a line end ropey counts and LSP does not.
pub fn char_index(rope: &Rope, odd_breaks: bool, position: Position) -> Option<usize> {
    let line = position.line as usize;
    let bounds = if odd_breaks { lsp_line(rope, line) } else { ropey_line(rope, line) };
    let (start, content_end) = match bounds {
        Ok(bounds) => bounds,
        Err(lines) => return (line == lines && position.character == 0).then(|| rope.len_chars()),
    };
    // UTF-16 offsets counted within the line: converting through the whole
    // rope's UTF-16 index costs three tree walks and chunk scans per change.
    let content = rope.slice(start..content_end);
    let character = (position.character as usize).min(content.len_utf16_cu());
    Some(start + content.utf16_cu_to_char(character))
}

/// The first char of line `line` and the end of its content (before its line
/// end), by ropey's line index; `Err` with the number of lines past the last.
fn ropey_line(rope: &Rope, line: usize) -> Result<(usize, usize), usize> {
    if line >= rope.len_lines() {
        return Err(rope.len_lines());
    }
    let start = rope.line_to_char(line);
    let end = if line + 1 < rope.len_lines() { rope.line_to_char(line + 1) } else { rope.len_chars() };
    let mut content = end;
    while content > start && matches!(rope.char(content - 1), '\n' | '\r') {
        content -= 1;
    }
    Ok((start, content))
}

/// [`ropey_line`] with only `\n`, `\r\n` and `\r` ending lines: a walk
/// through the text, for the rare document where ropey's lines are not LSP's.
fn lsp_line(rope: &Rope, line: usize) -> Result<(usize, usize), usize> {
    let (mut current, mut start) = (0, 0);
    let mut chars = rope.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\n' && c != '\r' {
            continue;
        }
        if current == line {
            return Ok((start, at));
        }
        if c == '\r' && chars.next_if(|&(_, next)| next == '\n').is_some() {
            start = at + 2;
        } else {
            start = at + 1;
        }
        current += 1;
    }
    if current == line { Ok((start, rope.len_chars())) } else { Err(current + 1) }
}

/// The UTF-16 position of a byte offset into `text`. Lines end as LSP says:
/// at `\n`, `\r\n` or a lone `\r`.
pub fn position_at(text: &str, byte: usize) -> Position {
    let before = &text[..byte.min(text.len())];
    let (mut line, mut line_start) = (0, 0);
    for (at, b) in before.bytes().enumerate() {
        if b == b'\n' || (b == b'\r' && text.as_bytes().get(at + 1) != Some(&b'\n')) {
            line += 1;
            line_start = at + 1;
        }
    }
    let character: usize = before[line_start..].chars().map(char::len_utf16).sum();
    Position { line: line as u32, character: character as u32 }
}

impl BufferOverlay for Documents {
    fn read(&self, abs: &Path) -> Option<String> {
        self.read_lock().get(abs).map(|d| d.rope.to_string())
    }

    fn len(&self, abs: &Path) -> Option<u64> {
        self.read_lock().get(abs).map(|d| d.rope.len_bytes() as u64)
    }

    fn open_paths(&self) -> Vec<PathBuf> {
        self.read_lock().keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(start: (u32, u32), end: (u32, u32), text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range {
                start: Position { line: start.0, character: start.1 },
                end: Position { line: end.0, character: end.1 },
            }),
            range_length: None,
            text: text.to_string(),
        }
    }

    fn documents_with(text: &str) -> (tempfile::TempDir, Documents, Uri, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.txt");
        let uri = Uri::from_file_path(&path).unwrap();
        let documents = Documents::default();
        documents.open(uri.clone(), text, 1).unwrap();
        (dir, documents, uri, canonical(&path))
    }

    #[test]
    fn utf16_positions_are_exact_with_emoji_and_cjk() {
        // "🎉" is two UTF-16 units and one char; "世界" one unit each.
        let (_dir, documents, uri, path) = documents_with("a🎉b\n世界x\n");
        documents.change(&uri, 2, vec![change((0, 3), (0, 4), "B")]).unwrap();
        assert_eq!(documents.read(&path).unwrap(), "a🎉B\n世界x\n");
        documents.change(&uri, 3, vec![change((1, 2), (1, 2), "🌍")]).unwrap();
        assert_eq!(documents.read(&path).unwrap(), "a🎉B\n世界🌍x\n");
        documents.change(&uri, 4, vec![change((1, 0), (1, 4), "")]).unwrap();
        assert_eq!(documents.read(&path).unwrap(), "a🎉B\nx\n");
        assert_eq!(documents.snapshot(&path).unwrap().1, 4);
    }

    #[test]
    fn changes_apply_in_order_and_past_line_ends_clamp() {
        let (_dir, documents, uri, path) = documents_with("one\ntwo\n");
        documents
            .change(
                &uri,
                2,
                vec![change((0, 0), (0, 3), "1"), change((0, 1), (0, 1), "!"), change((1, 99), (1, 99), "?")],
            )
            .unwrap();
        assert_eq!(documents.read(&path).unwrap(), "1!\ntwo?\n");
        documents.change(&uri, 3, vec![change((2, 0), (2, 0), "three\n")]).unwrap();
        assert_eq!(documents.read(&path).unwrap(), "1!\ntwo?\nthree\n");
    }

    #[test]
    fn a_change_outside_the_document_is_an_error_not_a_panic() {
        let (_dir, documents, uri, path) = documents_with("x\n");
        let error = documents.change(&uri, 2, vec![change((9, 0), (9, 1), "y")]).unwrap_err();
        assert!(matches!(error, SyncError::OutOfRange { line: 9, .. }));
        assert_eq!(documents.read(&path).unwrap(), "x\n");
    }

    #[test]
    fn positions_of_byte_offsets_count_utf16_units() {
        let text = "a🎉b\n世界x";
        assert_eq!(position_at(text, text.find('b').unwrap()), Position { line: 0, character: 3 });
        assert_eq!(position_at(text, text.find('x').unwrap()), Position { line: 1, character: 2 });
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/documents.rs`), as were the next
    /// two: LSP ends a line at a lone "\r" too.
    #[test]
    fn a_lone_carriage_return_ends_a_line() {
        let text = "a\rb\r\nc";
        assert_eq!(position_at(text, text.find('b').unwrap()), Position { line: 1, character: 0 });
        assert_eq!(position_at(text, text.find('c').unwrap()), Position { line: 2, character: 0 });
    }

    #[test]
    fn unicode_line_separators_do_not_end_lines() {
        // U+2028 and U+0085 are one UTF-16 unit each, inside line 0.
        let (_dir, documents, uri, path) = documents_with("a\u{2028}b\u{85}c\nd");
        documents.change(&uri, 2, vec![change((1, 0), (1, 1), "D"), change((0, 2), (0, 3), "B")]).unwrap();
        assert_eq!(documents.read(&path).unwrap(), "a\u{2028}B\u{85}c\nD");
        let line = Range { start: Position { line: 0, character: 0 }, end: Position { line: 0, character: 99 } };
        assert_eq!(documents.text_in(&uri, line).unwrap(), "a\u{2028}B\u{85}c");
    }

    #[test]
    fn a_line_separator_typed_into_a_document_does_not_end_a_line() {
        let (_dir, documents, uri, path) = documents_with("x\ny");
        documents.change(&uri, 2, vec![change((0, 1), (0, 1), "\u{2029}")]).unwrap();
        documents.change(&uri, 3, vec![change((1, 0), (1, 1), "Y")]).unwrap();
        assert_eq!(documents.read(&path).unwrap(), "x\u{2029}\nY");
    }
}
