//! File changes as LSP workspace edits: one annotated text edit per hunk, each
//! needing confirmation, so the user can take some hunks and not others; and
//! the reading of what the editor made of them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range as Lines;

use similar::ChangeTag;
use tower_lsp_server::ls_types::{
    AnnotatedTextEdit, ChangeAnnotation, CreateFile, CreateFileOptions, DeleteFile, DocumentChangeOperation,
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, Position, Range, RenameFile, ResourceOp,
    TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

use super::documents::position_at;
use crate::workspace::edits::{EditOutcome, FileChange, line_hunks};

/// A hunk as proposed: the lines of the old text it replaces and the text it puts there.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedHunk {
    pub old_lines: Lines<usize>,
    pub new_text: String,
}

/// The hunks that turn `before` into `after`, without context lines, so that
/// each can land on its own.
pub fn hunks(before: &str, after: &str) -> Vec<ProposedHunk> {
    line_hunks(before, after, 0)
        .into_iter()
        .map(|hunk| ProposedHunk {
            old_lines: hunk.old_range.clone(),
            new_text: hunk.lines.iter().filter(|(tag, _)| *tag == ChangeTag::Insert).map(|(_, line)| *line).collect(),
        })
        .collect()
}

/// The byte offset where line `line` starts; the text's end past the last line.
fn line_offset(text: &str, line: usize) -> usize {
    if line == 0 {
        return 0;
    }
    text.match_indices('\n').nth(line - 1).map_or(text.len(), |(at, _)| at + 1)
}

/// LSP positions of line starts, lines split after each `\n` as the hunks
/// split them. Without a lone `\r` (which LSP counts as a line end) line n
/// starts at (n, 0), known without scanning the text for every hunk.
struct LineStarts<'a> {
    text: &'a str,
    newlines: usize,
    lone_cr: bool,
}

impl<'a> LineStarts<'a> {
    fn of(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let lone_cr = text.match_indices('\r').any(|(at, _)| bytes.get(at + 1) != Some(&b'\n'));
        LineStarts { text, newlines: bytes.iter().filter(|&&b| b == b'\n').count(), lone_cr }
    }

    /// Where line `line` starts; the text's end past the last line.
    fn position(&self, line: usize) -> Position {
        match self.lone_cr || line > self.newlines {
            true => position_at(self.text, line_offset(self.text, line)),
            false => Position { line: line as u32, character: 0 },
        }
    }
}

fn annotation_id(index: usize) -> String {
    format!("tack-hunk-{}", index + 1)
}

/// The workspace edit for a change. `version` is that of the open document
/// the change was computed against (`None`: the file on disk).
pub fn workspace_edit(change: &FileChange, uri: &Uri, version: Option<i32>, to: Option<&Uri>) -> WorkspaceEdit {
    let mut annotations = HashMap::new();
    let mut operations = Vec::new();
    let annotate = |annotations: &mut HashMap<String, ChangeAnnotation>, id: String, label: String, description| {
        annotations
            .insert(id, ChangeAnnotation { label, needs_confirmation: Some(true), description: Some(description) });
    };
    match change {
        FileChange::Write { path, before, after } => {
            let before_text = before.as_deref().unwrap_or("");
            if before.is_none() {
                let id = "tack-create".to_string();
                annotate(
                    &mut annotations,
                    id.clone(),
                    format!("Create {}", path.rel),
                    format!("tack creates {}", path.rel),
                );
                operations.push(DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: uri.clone(),
                    options: Some(CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(true) }),
                    annotation_id: Some(id),
                })));
            }
            let proposed = hunks(before_text, after);
            let total = proposed.len();
            let lines = LineStarts::of(before_text);
            let edits = proposed
                .iter()
                .enumerate()
                .map(|(index, hunk)| {
                    let (start, end) = (lines.position(hunk.old_lines.start), lines.position(hunk.old_lines.end));
                    let id = annotation_id(index);
                    let lines = if hunk.old_lines.is_empty() {
                        format!("insert after line {}", hunk.old_lines.start)
                    } else {
                        format!("lines {}-{}", hunk.old_lines.start + 1, hunk.old_lines.end)
                    };
                    annotate(
                        &mut annotations,
                        id.clone(),
                        format!("Hunk {} of {total} in {}", index + 1, path.rel),
                        format!("{} ({lines})", path.rel),
                    );
                    OneOf::Right(AnnotatedTextEdit {
                        text_edit: TextEdit { range: Range { start, end }, new_text: hunk.new_text.clone() },
                        annotation_id: id,
                    })
                })
                .collect();
            operations.push(DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version },
                edits,
            }));
        }
        FileChange::Delete { path, .. } => {
            let id = "tack-delete".to_string();
            annotate(
                &mut annotations,
                id.clone(),
                format!("Delete {}", path.rel),
                format!("tack deletes {}", path.rel),
            );
            operations.push(DocumentChangeOperation::Op(ResourceOp::Delete(DeleteFile {
                uri: uri.clone(),
                options: None,
                annotation_id: Some(id),
            })));
        }
        FileChange::Move { from, to: target } => {
            let id = "tack-rename".to_string();
            let label = format!("Move {} to {}", from.rel, target.rel);
            annotate(&mut annotations, id.clone(), label.clone(), label);
            operations.push(DocumentChangeOperation::Op(ResourceOp::Rename(RenameFile {
                old_uri: uri.clone(),
                new_uri: to.cloned().unwrap_or_else(|| uri.clone()),
                options: None,
                annotation_id: Some(id),
            })));
        }
    }
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(operations)),
        change_annotations: Some(annotations),
    }
}

/// Which of the proposed hunks the text now holds: a subset that, applied to
/// the old text, gives exactly the current one. `None` when no subset does
/// (the user edited the preview, or typed meanwhile). Found by matching, not
/// by diffing the old text against the current one: among repeated lines
/// that diff may align a landed hunk elsewhere and match none.
pub fn landed_hunks(before: &str, proposed: &[ProposedHunk], current: &str) -> Option<Vec<usize>> {
    let mut line_starts: Vec<usize> =
        std::iter::once(0).chain(before.match_indices('\n').map(|(at, _)| at + 1)).collect();
    if line_starts.last() != Some(&before.len()) {
        line_starts.push(before.len());
    }
    // Each hunk either landed (its new text stands in its place) or not (its
    // old lines do); between hunks stands the old text. Hunk by hunk,
    // `reached` holds the offsets into `current` that the text up to there
    // can end at, and `parents[i]` how each offset after hunk i was reached.
    let mut reached = BTreeSet::from([0]);
    let mut parents: Vec<BTreeMap<usize, (usize, bool)>> = Vec::with_capacity(proposed.len());
    let mut old_end = 0;
    for hunk in proposed {
        let start = *line_starts.get(hunk.old_lines.start)?;
        let end = *line_starts.get(hunk.old_lines.end)?;
        if start < old_end || end < start {
            return None;
        }
        let (gap, old) = (&before[old_end..start], &before[start..end]);
        let mut next = BTreeMap::new();
        for &from in &reached {
            let Some(rest) = current[from..].strip_prefix(gap) else { continue };
            let at = from + gap.len();
            for (landed, text) in [(true, hunk.new_text.as_str()), (false, old)] {
                if rest.starts_with(text) {
                    next.entry(at + text.len()).or_insert((from, landed));
                }
            }
        }
        reached = next.keys().copied().collect();
        parents.push(next);
        old_end = end;
    }
    let mut at = reached.into_iter().find(|&at| current[at..] == before[old_end..])?;
    let mut landed = Vec::new();
    for (index, level) in parents.iter().enumerate().rev() {
        let (from, was_landed) = level[&at];
        if was_landed {
            landed.push(index);
        }
        at = from;
    }
    landed.reverse();
    Some(landed)
}

/// How a text change ended, from the text the editor now holds.
pub fn judge_write(before: &str, after: &str, current: &str) -> EditOutcome {
    if current == after {
        return EditOutcome::Applied;
    }
    if current == before {
        return EditOutcome::Rejected { reason: "the user applied none of its hunks".into() };
    }
    let proposed = hunks(before, after);
    match landed_hunks(before, &proposed, current) {
        Some(landed) if !landed.is_empty() => {
            EditOutcome::Partial { applied_hunks: landed, total_hunks: proposed.len() }
        }
        _ => EditOutcome::Partial { applied_hunks: Vec::new(), total_hunks: proposed.len() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "one\ntwo\nthree\nfour\nfive\nsix\n";
    const AFTER: &str = "ONE\ntwo\nthree\nfour\nfive\nSIX\nseven\n";

    #[test]
    fn hunks_are_separate_and_land_one_by_one() {
        let proposed = hunks(BEFORE, AFTER);
        assert_eq!(proposed.len(), 2);
        assert_eq!(proposed[0], ProposedHunk { old_lines: 0..1, new_text: "ONE\n".into() });
        assert_eq!(judge_write(BEFORE, AFTER, AFTER), EditOutcome::Applied);
        assert_eq!(
            judge_write(BEFORE, AFTER, "one\ntwo\nthree\nfour\nfive\nSIX\nseven\n"),
            EditOutcome::Partial { applied_hunks: vec![1], total_hunks: 2 }
        );
        assert_eq!(
            judge_write(BEFORE, AFTER, "ONE\ntwo\nthree\nfour\nfive\nsix\n"),
            EditOutcome::Partial { applied_hunks: vec![0], total_hunks: 2 }
        );
        assert!(matches!(judge_write(BEFORE, AFTER, BEFORE), EditOutcome::Rejected { .. }));
        assert_eq!(
            judge_write(BEFORE, AFTER, "something else\n"),
            EditOutcome::Partial { applied_hunks: vec![], total_hunks: 2 }
        );
    }

    #[test]
    fn edits_cover_whole_lines_in_utf16_positions() {
        let before = "a🎉\nb\nc\n";
        let after = "a🎉\nB\nc\n";
        let dir = tempfile::tempdir().unwrap();
        let workspace = crate::workspace::Workspace::open(dir.path()).unwrap();
        let path = workspace.resolve("x.txt").unwrap();
        let uri = Uri::from_file_path(&path.abs).unwrap();
        let change = FileChange::Write { path, before: Some(before.into()), after: after.into() };
        let edit = workspace_edit(&change, &uri, Some(3), None);
        let Some(DocumentChanges::Operations(operations)) = edit.document_changes else { panic!() };
        let DocumentChangeOperation::Edit(document) = &operations[0] else { panic!() };
        assert_eq!(document.text_document.version, Some(3));
        let OneOf::Right(annotated) = &document.edits[0] else { panic!() };
        assert_eq!(annotated.text_edit.range.start, tower_lsp_server::ls_types::Position { line: 1, character: 0 });
        assert_eq!(annotated.text_edit.range.end, tower_lsp_server::ls_types::Position { line: 2, character: 0 });
        assert_eq!(annotated.text_edit.new_text, "B\n");
        let annotations = edit.change_annotations.unwrap();
        assert_eq!(annotations[&annotated.annotation_id].needs_confirmation, Some(true));
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/hunks.rs`): a diff of the old text
    /// against this one puts the inserted "a" after the last line, not where
    /// the hunk put it, so no hunk seemed to have landed.
    #[test]
    fn a_hunk_that_landed_among_repeated_lines_is_found() {
        let (before, after) = ("c\r\nd\re\n{\nd\re\nz\na\n", "a\nc\r\na\nd\re\nz\na\na\n");
        let proposed = hunks(before, after);
        assert_eq!(proposed.len(), 3);
        assert_eq!(proposed[2], ProposedHunk { old_lines: 5..5, new_text: "a\n".into() });
        let current = "c\r\nd\re\n{\nd\re\nz\na\na\n";
        assert_eq!(landed_hunks(before, &proposed, current), Some(vec![2]));
        assert_eq!(
            judge_write(before, after, current),
            EditOutcome::Partial { applied_hunks: vec![2], total_hunks: 3 }
        );
        assert_eq!(landed_hunks(before, &proposed, "c\r\nz\n"), None);
    }
}
