//! Hunks and which of them landed (`src/workspace/edits.rs`,
//! `src/lsp/edits.rs`). From two texts: the diff's hunks must rebuild both
//! sides, `diff -u` output must patch the old text into the new one, and after
//! any subset of the per-hunk edits is applied (as an editor applies the
//! ones the user confirmed), the verdict must name a subset that turns the
//! old text into exactly the text the editor holds.
//!
//! Input: a script. Texts are lines from a small alphabet (so that lines
//! repeat and a diff has choices to make); the new text is the old one under
//! the script's line edits; the last bytes pick the subset.

#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use similar::ChangeTag;
use tack::lsp::fuzzing::{ProposedHunk, hunks, judge_write, landed_hunks};
use tack::workspace::WorkspacePath;
use tack::workspace::edits::{CONTEXT_LINES, EditOutcome, FileChange, line_hunks};

const LINES: [&str; 12] = ["a\n", "b\n", "a\n", "}\n", "\n", "  x\n", "é🎉\n", "c\r\n", "d\re\n", "a", "b", "{\n"];

fuzz_target!(|data: &[u8]| {
    let mut script = Script(data);
    let mut old: Vec<&str> = (0..script.byte() % 24).map(|_| script.line()).collect();
    end_lines(&mut old);
    let mut new = old.clone();
    for _ in 0..script.byte() % 8 {
        let at = usize::from(script.byte()) % (new.len() + 1);
        match script.byte() % 3 {
            0 => new.insert(at, script.line()),
            1 if at < new.len() => drop(new.remove(at)),
            _ if at < new.len() => new[at] = script.line(),
            _ => {}
        }
    }
    end_lines(&mut new);
    let (before, after) = (old.concat(), new.concat());

    for context in [0, CONTEXT_LINES] {
        check_line_hunks(&before, &after, context);
    }
    check_unified_diff(&before, &after);

    let proposed = hunks(&before, &after);
    let all: Vec<usize> = (0..proposed.len()).collect();
    assert_eq!(apply(&before, &proposed, &all), after, "every hunk together");
    let chosen: Vec<usize> = all.iter().copied().filter(|i| script.bit(*i)).collect();
    let current = apply(&before, &proposed, &chosen);

    let landed = landed_hunks(&before, &proposed, &current)
        .unwrap_or_else(|| panic!("hunks {chosen:?} of {proposed:?} landed, but no subset is found"));
    assert_eq!(apply(&before, &proposed, &landed), current, "landed {landed:?}, applied {chosen:?} of {proposed:?}");

    let verdict = judge_write(&before, &after, &current);
    let expected_kind = if current == after {
        EditOutcome::Applied
    } else if current == before {
        EditOutcome::Rejected { reason: String::new() }
    } else {
        EditOutcome::Partial { applied_hunks: landed.clone(), total_hunks: proposed.len() }
    };
    match (&verdict, &expected_kind) {
        (EditOutcome::Rejected { .. }, EditOutcome::Rejected { .. }) => {}
        _ => assert_eq!(verdict, expected_kind, "applied {chosen:?} of {proposed:?}"),
    }
});

/// Every line but the last ends with a line end, as in a real text.
fn end_lines(lines: &mut Vec<&str>) {
    let last = lines.len().saturating_sub(1);
    for line in &mut lines[..last] {
        if !line.ends_with('\n') {
            *line = "z\n";
        }
    }
}

/// The text an editor holds after applying the chosen hunks' edits.
fn apply(before: &str, proposed: &[ProposedHunk], chosen: &[usize]) -> String {
    let lines: Vec<&str> = before.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut next = 0;
    for &index in chosen {
        let hunk = &proposed[index];
        assert!(hunk.old_lines.start >= next && hunk.old_lines.end <= lines.len(), "hunks out of order: {proposed:?}");
        out.extend(lines[next..hunk.old_lines.start].iter().copied());
        out.push_str(&hunk.new_text);
        next = hunk.old_lines.end;
    }
    out.extend(lines[next..].iter().copied());
    out
}

/// Each hunk's lines are the old text's lines in its old range (equal and
/// deleted) and the new text's in its new range (equal and inserted).
fn check_line_hunks(before: &str, after: &str, context: usize) {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let hunks = line_hunks(before, after, context);
    assert_eq!(hunks.is_empty(), before == after, "{before:?} -> {after:?}");
    let mut last_end = 0;
    for hunk in &hunks {
        assert!(hunk.old_range.start >= last_end, "overlapping hunks: {hunks:?}");
        last_end = hunk.old_range.end;
        let side = |keep: ChangeTag| -> Vec<&str> {
            hunk.lines.iter().filter(|(tag, _)| *tag == ChangeTag::Equal || *tag == keep).map(|(_, l)| *l).collect()
        };
        let leading = hunk.lines.iter().take_while(|(tag, _)| *tag == ChangeTag::Equal).count();
        let trailing = hunk.lines.iter().rev().take_while(|(tag, _)| *tag == ChangeTag::Equal).count();
        assert!(leading < hunk.lines.len(), "a hunk without a change: {hunk:?}");
        assert!(leading <= context && trailing <= context, "more context than {context}: {hunk:?}");
        assert_eq!(side(ChangeTag::Delete), old[hunk.old_range.clone()], "old side of {hunk:?}");
        assert_eq!(side(ChangeTag::Insert), new[hunk.new_range.clone()], "new side of {hunk:?}");
    }
}

/// `diff -u` of the change is a patch that turns the old text into the new
/// one. (It need not be `similar`'s diff of the whole texts: among repeated
/// lines another alignment is as short, and the cut-down window the diff
/// runs on may find that one.)
fn check_unified_diff(before: &str, after: &str) {
    let path = WorkspacePath { abs: PathBuf::from("/w/f"), rel: "f".into(), real_rel: "f".into() };
    let change = FileChange::Write { path, before: Some(before.into()), after: after.into() };
    let diff = change.unified_diff();
    assert_eq!(patch(before, &diff), after, "{diff}");
}

/// Applies a unified diff as `patch` does, checking every line it names.
fn patch(before: &str, diff: &str) -> String {
    if diff.is_empty() {
        return before.to_string();
    }
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let mut lines = diff.split_inclusive('\n').peekable();
    assert_eq!((lines.next(), lines.next()), (Some("--- a/f\n"), Some("+++ b/f\n")));
    let (mut out, mut next) = (String::new(), 0);
    while let Some(header) = lines.next() {
        let ranges = header.strip_prefix("@@ -").and_then(|h| h.strip_suffix(" @@\n")).expect("a hunk header");
        let (old_range, new_range) = ranges.split_once(" +").expect("two ranges");
        let ((start, old_len), (_, new_len)) = (range(old_range), range(new_range));
        assert!(start >= next, "hunks out of order");
        out.extend(old[next..start].iter().copied());
        next = start;
        let (mut old_seen, mut new_seen) = (0, 0);
        while let Some(line) = lines.next_if(|line| !line.starts_with("@@")) {
            let (tag, text) = line.split_at(1);
            let mut text = text.to_string();
            if lines.next_if_eq(&"\\ No newline at end of file\n").is_some() {
                assert_eq!(text.pop(), Some('\n'));
            }
            if tag != "+" {
                assert_eq!(old.get(next).copied(), Some(text.as_str()), "line {next} of the old text");
                next += 1;
                old_seen += 1;
            }
            if tag != "-" {
                out.push_str(&text);
                new_seen += 1;
            }
            assert!([" ", "-", "+"].contains(&tag), "{line:?}");
        }
        assert_eq!((old_seen, new_seen), (old_len, new_len), "{header}");
    }
    out.extend(old[next..].iter().copied());
    out
}

/// A hunk header range, `START[,LEN]`, as (0-based first line, length).
fn range(text: &str) -> (usize, usize) {
    match text.split_once(',') {
        Some((start, len)) => {
            let (start, len): (usize, usize) = (start.parse().unwrap(), len.parse().unwrap());
            (if len == 0 { start } else { start - 1 }, len)
        }
        None => (text.parse::<usize>().unwrap() - 1, 1),
    }
}

struct Script<'a>(&'a [u8]);

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }

    fn line(&mut self) -> &'static str {
        LINES[usize::from(self.byte()) % LINES.len()]
    }

    /// Bit `i` of the bytes left: whether hunk `i` was confirmed.
    fn bit(&self, i: usize) -> bool {
        self.0.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)
    }
}
