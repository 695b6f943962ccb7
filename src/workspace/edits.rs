//! Proposed file changes. Tools compute them; the front end decides how they
//! land (the headless runner writes them, the LSP server asks the editor).

use std::ops::Range;

use similar::{Algorithm, ChangeTag, DiffTag};

use super::WorkspacePath;

/// One file change a tool wants to make. Contents are whole files: the front
/// end splits them into hunks when it needs to.
#[derive(Debug, Clone, PartialEq)]
pub enum FileChange {
    /// Create or overwrite. `before` is `None` for a new file.
    Write {
        path: WorkspacePath,
        before: Option<String>,
        after: String,
    },
    Delete {
        path: WorkspacePath,
        before: String,
    },
    Move {
        from: WorkspacePath,
        to: WorkspacePath,
    },
}

impl FileChange {
    pub fn path(&self) -> &WorkspacePath {
        match self {
            FileChange::Write { path, .. } | FileChange::Delete { path, .. } => path,
            FileChange::Move { from, .. } => from,
        }
    }

    /// What the change does, as a unified diff (moves as a rename header).
    pub fn unified_diff(&self) -> String {
        match self {
            FileChange::Write { path, before, after } => {
                let old_name = if before.is_some() { format!("a/{}", path.rel) } else { "/dev/null".into() };
                format_unified(&old_name, &format!("b/{}", path.rel), before.as_deref().unwrap_or(""), after)
            }
            FileChange::Delete { path, before } => format_unified(&format!("a/{}", path.rel), "/dev/null", before, ""),
            FileChange::Move { from, to } => format!("rename from {}\nrename to {}\n", from.rel, to.rel),
        }
    }
}

/// Lines of context kept around each change, as `diff -u` does.
pub const CONTEXT_LINES: usize = 3;

/// One hunk of a line diff. Ranges are 0-based line indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    pub old_range: Range<usize>,
    pub new_range: Range<usize>,
    /// Each line with its tag, line endings included.
    pub lines: Vec<(ChangeTag, &'a str)>,
}

/// The hunks that turn `before` into `after`.
///
/// The common head and tail are found by comparing bytes and cut off before
/// diffing (keeping `context` lines on each side), so a one-line edit in a
/// large file costs a memcmp, not a line diff of the whole file.
pub fn line_hunks<'a>(before: &'a str, after: &'a str, context: usize) -> Vec<Hunk<'a>> {
    let head = common_prefix_len(before.as_bytes(), after.as_bytes());
    let mut start = line_start(before, head);
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = line_start(before, start - 1);
    }
    let tail = common_suffix_len(&before.as_bytes()[start..], &after.as_bytes()[start..]);
    // The tails are equal, so the next line end is the same distance away in both.
    let mut old_end = before.len() - tail;
    let mut new_end = after.len() - tail;
    // The window ends on a line boundary only if it does in both texts: the
    // common tail may start with a line end that ends a line of its own in one
    // text and a longer line in the other.
    let at_line_boundary = |text: &str, end: usize| end == 0 || end == text.len() || text.as_bytes()[end - 1] == b'\n';
    let lines_forward =
        if at_line_boundary(before, old_end) && at_line_boundary(after, new_end) { context } else { context + 1 };
    for _ in 0..lines_forward {
        if old_end == before.len() {
            break;
        }
        let step = before[old_end..].find('\n').map_or(before.len() - old_end, |i| i + 1);
        old_end += step;
        new_end += step;
    }
    let first_line = before.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count();
    let old: Vec<&str> = before[start..old_end].split_inclusive('\n').collect();
    let new: Vec<&str> = after[start..new_end].split_inclusive('\n').collect();
    let ops = similar::capture_diff_slices(Algorithm::Myers, &old, &new);
    similar::group_diff_ops(ops, context)
        .into_iter()
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            let old_range = first_line + first.old_range().start..first_line + last.old_range().end;
            let new_range = first_line + first.new_range().start..first_line + last.new_range().end;
            let mut lines = Vec::new();
            for op in &group {
                let (tag, old_ops, new_ops) = op.as_tag_tuple();
                let old_lines = old[old_ops].iter();
                let new_lines = new[new_ops].iter();
                match tag {
                    DiffTag::Equal => lines.extend(old_lines.map(|l| (ChangeTag::Equal, *l))),
                    DiffTag::Delete => lines.extend(old_lines.map(|l| (ChangeTag::Delete, *l))),
                    DiffTag::Insert => lines.extend(new_lines.map(|l| (ChangeTag::Insert, *l))),
                    DiffTag::Replace => {
                        lines.extend(old_lines.map(|l| (ChangeTag::Delete, *l)));
                        lines.extend(new_lines.map(|l| (ChangeTag::Insert, *l)));
                    }
                }
            }
            Some(Hunk { old_range, new_range, lines })
        })
        .collect()
}

/// Byte offset of the start of the line holding byte `at`.
fn line_start(text: &str, at: usize) -> usize {
    text.as_bytes()[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// Compares in blocks so the common case runs as memcmp.
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let limit = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= limit && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..limit].iter().zip(&b[at..limit]).take_while(|(x, y)| x == y).count()
}

fn common_suffix_len(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let limit = a.len().min(b.len());
    let mut len = 0;
    while len + BLOCK <= limit && a[a.len() - len - BLOCK..a.len() - len] == b[b.len() - len - BLOCK..b.len() - len] {
        len += BLOCK;
    }
    len + a[..a.len() - len].iter().rev().zip(b[..b.len() - len].iter().rev()).take_while(|(x, y)| x == y).count()
}

/// `diff -u` output for two texts.
fn format_unified(old_name: &str, new_name: &str, before: &str, after: &str) -> String {
    let hunks = line_hunks(before, after, CONTEXT_LINES);
    if hunks.is_empty() {
        return String::new();
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for hunk in hunks {
        out.push_str(&format!("@@ -{} +{} @@\n", header_range(&hunk.old_range), header_range(&hunk.new_range)));
        for (tag, line) in hunk.lines {
            out.push(match tag {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            });
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// A hunk header range as `diff -u` writes it: 1-based start, length omitted when 1.
fn header_range(range: &Range<usize>) -> String {
    match range.len() {
        0 => format!("{},0", range.start),
        1 => format!("{}", range.start + 1),
        len => format!("{},{len}", range.start + 1),
    }
}

/// How a proposed change ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOutcome {
    Applied,
    /// Only some hunks landed: the model is told exactly which.
    Partial {
        applied_hunks: Vec<usize>,
        total_hunks: usize,
    },
    Rejected {
        reason: String,
    },
}

/// Writes a change straight to disk: what a front end without an editor does
/// once the change is approved. A failure is a rejection the model is told of.
pub fn apply_to_disk(workspace: &super::Workspace, change: &FileChange) -> EditOutcome {
    let written = match change {
        FileChange::Write { path, after, .. } => workspace.write_atomic(path, after.as_bytes()),
        FileChange::Delete { path, .. } => workspace.remove_file(path),
        FileChange::Move { from, to } => workspace.rename(from, to),
    };
    match written {
        Ok(()) => EditOutcome::Applied,
        Err(error) => EditOutcome::Rejected { reason: error.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: the same diff computed by `similar` over the whole texts.
    fn reference(before: &str, after: &str) -> String {
        similar::TextDiff::from_lines(before, after)
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .header("a", "b")
            .to_string()
    }

    #[test]
    fn trimmed_diffs_match_a_whole_file_diff() {
        let base: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let cases = [
            (base.clone(), base.replace("line 20\n", "line twenty\n")),
            (base.clone(), base.replace("line 1\n", "")),
            (base.clone(), format!("{base}line 41\n")),
            (base.clone(), base.replace("line 5\n", "five\n").replace("line 35\n", "")),
            (base.clone(), base.trim_end().to_string()),
            (String::new(), "new\nfile\n".to_string()),
            ("gone\n".to_string(), String::new()),
            ("a\nb\n".to_string(), "a\nb\n".to_string()),
            ("a\nb\n".to_string(), "a\nb\nc\n".to_string()),
            ("a\n".to_string(), "b\na\n".to_string()),
            ("ab\n".to_string(), "ab\nab\n".to_string()),
            ("a\nb".to_string(), "a\nb\nc".to_string()),
            ("x\ny\n".to_string(), "x\nz".to_string()),
            (base.repeat(3), base.repeat(3).replacen("line 33\n", "changed\n", 2)),
        ];
        for (before, after) in cases {
            assert_eq!(
                format_unified("a", "b", &before, &after),
                reference(&before, &after),
                "{before:?} -> {after:?}"
            );
        }
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/hunks.rs`): the common tail starts
    /// with a "\n" that is a blank line in the old text and ends "y\n" in the
    /// new one, and the hunks ended inside that line.
    #[test]
    fn hunks_end_on_a_line_end_in_both_texts() {
        let delete = |line| (ChangeTag::Delete, line);
        assert_eq!(
            line_hunks("x\ny\n\n", "z\ny\n", 0),
            [
                Hunk { old_range: 0..1, new_range: 0..1, lines: vec![delete("x\n"), (ChangeTag::Insert, "z\n")] },
                Hunk { old_range: 2..3, new_range: 2..2, lines: vec![delete("\n")] },
            ]
        );
    }
}
