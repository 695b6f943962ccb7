//! Open documents under incremental sync (`src/lsp/documents.rs`), checked
//! against a plain `String` that takes the same changes the way the LSP
//! specification describes them: lines end at `\n`, `\r\n` or `\r`, and
//! characters count UTF-16 code units. The rope must hold the same text after
//! every change, refuse the same changes, read back the same ranges, and
//! agree with `position_at` about where a byte offset is.
//!
//! Input: a script. The first byte run is the document's first text; each
//! step after it is a batch of changes, a range read or a full replacement.
//! Text is spelled in an alphabet of pieces chosen to make line ends and
//! UTF-16 lengths interesting (CRLF, lone CR, astral chars, Unicode line
//! separators).

#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use tack::lsp::fuzzing::{Documents, position_at};
use tack::workspace::BufferOverlay;
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

/// The pieces a text byte stands for.
const ALPHABET: [&str; 16] = [
    "a", "b", " ", "\n", "\r", "\r\n", "é", "世", "🎉", "𝄞x", "\u{2028}", "\u{85}", "\u{b}", "\u{c}", "\t", "{}",
];

/// Where the document claims to live: a path that does not exist resolves to
/// itself, with no file system state to set up.
const PATH: &str = "/tack-fuzz-nonexistent/doc.txt";

fuzz_target!(|data: &[u8]| {
    let mut script = Script(data);
    let uri = Uri::from_file_path(PATH).unwrap();
    let path = PathBuf::from(PATH);
    let documents = Documents::default();
    let mut model = script.text();
    documents.open(uri.clone(), &model, 1).unwrap();
    let mut version = 1;
    while !script.0.is_empty() {
        version += 1;
        match script.byte() % 8 {
            0 => {
                let text = script.text();
                let change = TextDocumentContentChangeEvent { range: None, range_length: None, text: text.clone() };
                documents.change(&uri, version, vec![change]).unwrap();
                model = text;
            }
            1 => {
                let range = script.range(&model);
                let read = documents.text_in(&uri, range);
                match model_range(&model, range) {
                    Some((start, end)) => assert_eq!(read.unwrap(), &model[start..end], "text_in {range:?} of {model:?}"),
                    None => assert!(read.is_err(), "text_in {range:?} of {model:?} should be out of range"),
                }
            }
            _ => {
                let count = 1 + script.byte() % 4;
                let changes: Vec<_> = (0..count)
                    .map(|_| {
                        let range = script.range(&model);
                        TextDocumentContentChangeEvent { range: Some(range), range_length: None, text: script.text() }
                    })
                    .collect();
                let before = model.clone();
                let mut failed = false;
                for change in &changes {
                    let Some((start, end)) = model_range(&model, change.range.unwrap()) else {
                        failed = true;
                        break;
                    };
                    model.replace_range(start..end, &change.text);
                }
                let result = documents.change(&uri, version, changes.clone());
                assert_eq!(result.is_err(), failed, "{changes:?} on {before:?}: {result:?}");
            }
        }
        assert_eq!(documents.read(&path).as_deref(), Some(model.as_str()), "after step {version}");
        check_positions(&documents, &uri, &model);
    }
});

/// `position_at` names the same place the model does, and reading from the
/// start to that position gives the text before it.
fn check_positions(documents: &Documents, uri: &Uri, model: &str) {
    for (byte, _) in model.char_indices().chain([(model.len(), ' ')]) {
        // Inside a CRLF there is no position: the pair is one line end.
        if model[..byte].ends_with('\r') && model[byte..].starts_with('\n') {
            continue;
        }
        let position = position_at(model, byte);
        assert_eq!(position, model_position(model, byte), "position_at({model:?}, {byte})");
        let range = Range { start: Position { line: 0, character: 0 }, end: position };
        assert_eq!(documents.text_in(uri, range).unwrap(), &model[..byte], "{model:?} up to {position:?}");
    }
}

/// The lines of `text` as the specification splits them: (start, content end) in bytes.
fn lines(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                lines.push((start, at));
                start = at + 1;
            }
            b'\r' => {
                lines.push((start, at));
                if bytes.get(at + 1) == Some(&b'\n') {
                    at += 1;
                }
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    lines.push((start, text.len()));
    lines
}

/// The byte offset of a position: a character past the line's end is its
/// end; the line just past the last exists at character 0 (the text's end);
/// a character inside a surrogate pair is that char.
fn model_offset(text: &str, position: Position) -> Option<usize> {
    let lines = lines(text);
    let line = position.line as usize;
    if line >= lines.len() {
        return (line == lines.len() && position.character == 0).then_some(text.len());
    }
    let (start, end) = lines[line];
    let mut units = 0;
    for (i, c) in text[start..end].char_indices() {
        units += c.len_utf16();
        if units > position.character as usize {
            return Some(start + i);
        }
    }
    Some(end)
}

fn model_range(text: &str, range: Range) -> Option<(usize, usize)> {
    let start = model_offset(text, range.start)?;
    let end = model_offset(text, range.end)?;
    Some((start.min(end), start.max(end)))
}

fn model_position(text: &str, byte: usize) -> Position {
    let line = lines(text).iter().rposition(|&(start, _)| start <= byte).unwrap_or(0);
    let start = lines(text)[line].0;
    let character: usize = text[start..byte].chars().map(char::len_utf16).sum();
    Position { line: line as u32, character: character as u32 }
}

struct Script<'a>(&'a [u8]);

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }

    /// A text of up to 15 pieces of the alphabet.
    fn text(&mut self) -> String {
        let len = self.byte() % 16;
        (0..len).map(|_| ALPHABET[usize::from(self.byte() % 16)]).collect()
    }

    /// A range, mostly inside the text (lines and characters near the real
    /// ones), sometimes anywhere.
    fn range(&mut self, text: &str) -> Range {
        let lines = lines(text).len() as u32;
        let position = |script: &mut Self| {
            let (line, character) = (script.byte(), script.byte());
            if line & 0x80 != 0 {
                return Position { line: u32::from(line & 0x7f), character: u32::from(character) };
            }
            Position { line: u32::from(line) % (lines + 1), character: u32::from(character % 8) }
        };
        Range { start: position(self), end: position(self) }
    }
}
