//! A reply that shows a changed file instead of changing it. Small chat-tuned
//! models answer "Here's the corrected code:" with a code block and stop, as
//! they would in a chat; the file stays as it was. Seen against the files the
//! conversation knows, such a block says exactly which Edit the model meant,
//! and the model is offered that call.

use similar::{Algorithm, DiffOp};

use super::Conversation;
use crate::protocol::{Block, Role};
use crate::workspace::WorkspacePath;
use crate::workspace::mentions::named_files;

/// Files a reply or the task may name, looked at for a changed version.
const MAX_NAMED: usize = 4;
/// Files larger than this are not compared with code blocks.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// An Edit the model showed but did not make.
pub struct ShownEdit {
    pub path: WorkspacePath,
    pub rewrite: Rewrite,
    /// The file as it is, when the model had not read it as it is.
    pub unread_text: Option<String>,
}

impl Conversation {
    /// The Edit that `reply`'s code blocks show, against the files this
    /// conversation has read or that the reply or the task names.
    pub(super) fn shown_edit(&self, reply: &str) -> Option<ShownEdit> {
        let blocks = code_blocks(reply);
        if blocks.is_empty() {
            return None;
        }
        // The user's words, not a nudge of tack's nor a message of results.
        let task = self.history.iter().rev().find_map(|m| match m.blocks.first() {
            Some(Block::Text { text }) if m.role == Role::User && !text.starts_with("[tack") => Some(text.clone()),
            _ => None,
        });
        let mut files: Vec<WorkspacePath> = named_files(&self.workspace, reply, MAX_NAMED);
        files.extend(task.iter().flat_map(|task| named_files(&self.workspace, task, MAX_NAMED)));
        for abs in self.state.read_paths() {
            if let Ok(path) = self.workspace.resolve(&abs.to_string_lossy()) {
                files.push(path);
            }
        }
        let mut best: Option<ShownEdit> = None;
        let mut seen = std::collections::HashSet::new();
        for path in files {
            if !seen.insert(path.abs.clone()) || !self.may_show(&path) {
                continue;
            }
            // Big files are not what a reply's code block rewrites.
            if std::fs::metadata(&path.abs).is_ok_and(|m| m.len() > MAX_FILE_BYTES) {
                continue;
            }
            let Ok(text) = self.workspace.read_text(&path) else { continue };
            let name = path.rel.rsplit('/').next().unwrap_or(&path.rel);
            for block in &blocks {
                let Some(rewrite) = rewrite_of(&text, without_file_comment(block, name)) else { continue };
                if best.as_ref().is_some_and(|b| b.rewrite.shared_lines >= rewrite.shared_lines) {
                    continue;
                }
                let unread_text = (!self.state.has_read(&path, &text)).then(|| text.clone());
                best = Some(ShownEdit { path: path.clone(), rewrite, unread_text });
            }
        }
        best
    }
}

/// The body of each fenced code block in `text`.
pub fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut current, fence) {
            (None, true) => current = Some(Vec::new()),
            (Some(lines), true) => {
                blocks.push(lines.join("\n"));
                current = None;
            }
            (Some(lines), false) => lines.push(line),
            (None, false) => {}
        }
    }
    // A reply cut off inside its block still shows the change up to there.
    if let Some(lines) = current.filter(|lines| !lines.is_empty()) {
        blocks.push(lines.join("\n"));
    }
    blocks
}

/// `block` without a first line that only names the file (`# cart.py`,
/// `// src/main.rs`), as models head a block with: it is not file content.
fn without_file_comment<'a>(block: &'a str, file_name: &str) -> &'a str {
    let (first, rest) = block.split_once('\n').unwrap_or((block, ""));
    let words = first.trim().trim_start_matches(['#', '/', '-', '*', ';', ' ']).trim_end_matches(['*', '/', ' ', ':']);
    let names_the_file = words.ends_with(file_name) && !words.contains(' ');
    if names_the_file && first.trim_start().starts_with(['#', '/', '-', ';']) { rest } else { block }
}

/// A line that stands for code left out (`...`, `// rest of the file`).
fn is_placeholder(line: &str) -> bool {
    let words = line.trim().trim_start_matches(['#', '/', '-', '*', ';', '<', '!', ' ']).to_lowercase();
    let commented = line.trim_start().starts_with(['#', '/', '-', '*', ';', '<']);
    words == "..."
        || words == "…"
        || words.starts_with("...")
        || words.starts_with('…')
        || (commented
            && ["existing", "unchanged", "rest of", "remaining", "same as before"].iter().any(|w| words.contains(w)))
}

/// A changed region of `file` as `block` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub old_string: String,
    pub new_string: String,
    /// Unchanged non-blank lines the block shares with the file: how surely
    /// the block is a version of this file.
    pub shared_lines: usize,
}

/// The one Edit that makes `file` read as `block` shows it, when `block` is a
/// changed version of the whole file or of a part of it. Lines of the file
/// before and after what the block shows are taken as left out, not deleted.
/// `None` when the block is not a version of the file or changes nothing.
pub fn rewrite_of(file: &str, block: &str) -> Option<Rewrite> {
    let old: Vec<&str> = file.lines().collect();
    let new: Vec<&str> = block.lines().collect();
    let old_keys: Vec<&str> = old.iter().map(|l| l.trim_end()).collect();
    let new_keys: Vec<&str> = new.iter().map(|l| l.trim_end()).collect();
    let ops = closing_lines_near(similar::capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys), &old_keys);

    let shared_lines = ops
        .iter()
        .filter_map(|op| match op {
            DiffOp::Equal { old_index, len, .. } => {
                Some(old_keys[*old_index..old_index + len].iter().filter(|l| !l.trim().is_empty()).count())
            }
            _ => None,
        })
        .sum::<usize>();
    let block_lines = new_keys.iter().filter(|l| !l.trim().is_empty()).count();
    // Mostly the file's own lines, or it is other code that happens to share a few.
    if shared_lines == 0 || shared_lines * 2 < block_lines {
        return None;
    }

    // The changed span, from the first change to the last. Before the first
    // unchanged line and after the last one, the block's lines replace as many
    // of the file's as they number: the rest of the file is not shown, not
    // deleted.
    let first_equal = ops.iter().position(|op| matches!(op, DiffOp::Equal { .. }))?;
    let last_equal = ops.iter().rposition(|op| matches!(op, DiffOp::Equal { .. }))?;
    let span = |ops: &[DiffOp]| {
        let old_len: usize = ops.iter().map(|op| op.old_range().len()).sum();
        let new_len: usize = ops.iter().map(|op| op.new_range().len()).sum();
        (old_len, new_len)
    };
    let (lead_old, lead_new) = span(&ops[..first_equal]);
    let (trail_old, trail_new) = span(&ops[last_equal + 1..]);
    let (anchor_old, anchor_new) = (ops[first_equal].old_range().start, ops[first_equal].new_range().start);
    let (after_old, after_new) = (ops[last_equal].old_range().end, ops[last_equal].new_range().end);
    // A blank line of the file ends what the block shows: a line the block
    // adds after the part shown (`return result` closing a function) goes in
    // before it, not in place of the blank line that parts two functions.
    let unblank = |lines: &mut dyn Iterator<Item = &&str>, most: usize| {
        lines.take(most).take_while(|line| !line.trim().is_empty()).count()
    };
    let lead_replaced = unblank(&mut old[..anchor_old].iter().rev(), lead_old.min(lead_new));
    let trail_replaced = unblank(&mut old[after_old..].iter(), trail_old.min(trail_new));
    let mut spans = Vec::new();
    if lead_new > 0 {
        spans.push((anchor_old - lead_replaced..anchor_old, 0..anchor_new));
    }
    for op in &ops[first_equal..=last_equal] {
        if !matches!(op, DiffOp::Equal { .. }) {
            spans.push((op.old_range(), op.new_range()));
        }
    }
    if trail_new > 0 {
        spans.push((after_old..after_old + trail_replaced, after_new..new.len()));
    }
    let (first, last) = (spans.first()?, spans.last()?);
    let mut old_range = first.0.start..last.0.end;
    let mut new_range = first.1.start..last.1.end;

    // An edit needs old text to find: a pure insertion takes a line beside it.
    if old_range.is_empty() {
        if old_range.end < old.len() && new_range.end < new.len() {
            old_range.end += 1;
            new_range.end += 1;
        } else if old_range.start > 0 && new_range.start > 0 {
            old_range.start -= 1;
            new_range.start -= 1;
        } else {
            return None;
        }
    }
    let text = |lines: &[&str], range: &std::ops::Range<usize>| lines[range.clone()].join("\n");
    // Widened with the lines around it until it is found once in the file.
    while file.matches(&text(&old, &old_range)).count() > 1 {
        if old_range.end < old.len() && new_range.end < new.len() && old_keys[old_range.end] == new_keys[new_range.end]
        {
            old_range.end += 1;
            new_range.end += 1;
        } else if old_range.start > 0
            && new_range.start > 0
            && old_keys[old_range.start - 1] == new_keys[new_range.start - 1]
        {
            old_range.start -= 1;
            new_range.start -= 1;
        } else {
            return None;
        }
    }
    // "# ... existing code ..." stands for lines the model left out: taken
    // literally, the edit would replace real code with the comment.
    if new[new_range.clone()].iter().any(|line| is_placeholder(line)) {
        return None;
    }
    let (mut old_string, new_string) = (text(&old, &old_range), text(&new, &new_range));
    // Lines deleted go with the line break that ends the last of them, or
    // a blank line is left where they were.
    if new_range.is_empty() && old_range.end < old.len() {
        old_string.push('\n');
    }
    if old_string == new_string || !file.contains(&old_string) {
        return None;
    }
    Some(Rewrite { old_string, new_string, shared_lines })
}

/// The diff `ops` with the block's last lines, when they only close
/// brackets (`}`, `});`), matched to the file's first such lines after the
/// code before them rather than to later ones. Matched to the file's end or
/// to the next function's close, they would delete every line between:
/// playlist.js's totalDuration, shown alone, took the rest of the file with
/// it, and semver.js's isAtLeast, with its return line changed, took bump.
fn closing_lines_near(mut ops: Vec<DiffOp>, old_keys: &[&str]) -> Vec<DiffOp> {
    let is_closing = |line: &&str| {
        let line = line.trim();
        line == "end" || (!line.is_empty() && line.chars().all(|c| "}])>;,".contains(c)))
    };
    // What follows the closing lines in the file only, not in the block.
    let trailing = ops.iter().rev().take_while(|op| matches!(op, DiffOp::Delete { .. })).count();
    let kept = ops.len() - trailing;
    if kept < 2 {
        return ops;
    }
    let DiffOp::Equal { old_index: last, len, .. } = ops[kept - 1] else { return ops };
    let closing = &old_keys[last..last + len];
    if !closing.iter().all(is_closing) {
        return ops;
    }
    let (old_index, old_len, new_index, new_len) = match ops[kept - 2] {
        DiffOp::Delete { old_index, old_len, new_index } => (old_index, old_len, new_index, 0),
        DiffOp::Replace { old_index, old_len, new_index, new_len } => (old_index, old_len, new_index, new_len),
        _ => return ops,
    };
    let Some(at) =
        (old_index..(old_index + old_len + 1).saturating_sub(len)).find(|&at| old_keys[at..at + len] == *closing)
    else {
        return ops;
    };
    let before = match (at - old_index, new_len) {
        (0, 0) => None,
        (0, new_len) => Some(DiffOp::Insert { old_index, new_index, new_len }),
        (old_len, 0) => Some(DiffOp::Delete { old_index, old_len, new_index }),
        (old_len, new_len) => Some(DiffOp::Replace { old_index, old_len, new_index, new_len }),
    };
    ops.truncate(kept - 2);
    ops.extend(before);
    ops.push(DiffOp::Equal { old_index: at, new_index: new_index + new_len, len });
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "def mean(xs):\n    return sum(xs) / len(xs)\n\ndef stddev(xs):\n    m = mean(xs)\n    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))\n";

    #[test]
    fn a_first_line_that_names_the_file_is_not_content() {
        assert_eq!(without_file_comment("# cart.py\ndef f():", "cart.py"), "def f():");
        assert_eq!(without_file_comment("// src/main.rs\nfn main() {}", "main.rs"), "fn main() {}");
        assert_eq!(without_file_comment("# compute cart.py totals\nx", "cart.py"), "# compute cart.py totals\nx");
        assert_eq!(without_file_comment("import os\nx", "cart.py"), "import os\nx");
    }

    #[test]
    fn blocks_are_found_closed_or_cut_off() {
        let reply = "Here:\n```python\na = 1\n```\nand\n```\nb = 2\nc = 3";
        assert_eq!(code_blocks(reply), ["a = 1", "b = 2\nc = 3"]);
        assert!(code_blocks("no code here").is_empty());
    }

    #[test]
    fn a_whole_file_with_a_line_added_at_the_top() {
        let block = format!("import math\n\n{}", STATS.trim_end());
        let rewrite = rewrite_of(STATS, &block).unwrap();
        assert_eq!(rewrite.old_string, "def mean(xs):");
        assert_eq!(rewrite.new_string, "import math\n\ndef mean(xs):");
    }

    #[test]
    fn a_function_shown_alone_closes_where_it_ends_not_where_the_file_does() {
        let file = "async function total(ids) {\n  let sum = 0;\n  for (const id of ids) {\n    \
                    sum += get(id);\n  }\n  return sum;\n}\n\nfunction format(s) {\n  return `${s}s`;\n}\n\n\
                    if (require.main === module) {\n  total([1]).then(console.log);\n}\n";
        let block = "async function total(ids) {\n  let sum = 0;\n  for (const id of ids) {\n    \
                     sum += await get(id);\n  }\n  return sum;\n}";
        let rewrite = rewrite_of(file, block).unwrap();
        let applied = file.replacen(&rewrite.old_string, &rewrite.new_string, 1);
        assert_eq!(applied, file.replace("sum += get(id)", "sum += await get(id)"));
    }

    #[test]
    fn a_function_shown_alone_with_a_line_changed_keeps_the_function_after_it() {
        let file = "function parse(v) {\n  return v.split('.');\n}\n\n/** At least `min`. */\n\
                    function isAtLeast(v, min) {\n  const a = parse(v);\n  return a[0] >= min;\n}\n\n\
                    function bump(v) {\n  const p = parse(v);\n  return p[0] + 1;\n}\n\n\
                    module.exports = { parse, isAtLeast, bump };\n";
        let block = "/** At least `min`. */\nfunction isAtLeast(v, min) {\n  const a = parse(v);\n  \
                     return a[0] > min || a[1] >= 0;\n}";
        let rewrite = rewrite_of(file, block).unwrap();
        let applied = file.replacen(&rewrite.old_string, &rewrite.new_string, 1);
        assert_eq!(applied, file.replace("return a[0] >= min;", "return a[0] > min || a[1] >= 0;"));
    }

    #[test]
    fn a_changed_function_shown_alone() {
        let file =
            "def a():\n    return 1\n\ndef last_n(items, n):\n    return items[-n - 1:]\n\ndef b():\n    return 2\n";
        let block = "def last_n(items, n):\n    return items[-n:]";
        let rewrite = rewrite_of(file, block).unwrap();
        assert_eq!(rewrite.old_string, "    return items[-n - 1:]");
        assert_eq!(rewrite.new_string, "    return items[-n:]");
        let applied = file.replacen(&rewrite.old_string, &rewrite.new_string, 1);
        assert!(applied.contains("def a():") && applied.contains("def b():"), "the lines not shown are kept");
    }

    #[test]
    fn a_line_added_at_the_end_of_a_function_keeps_the_blank_lines_after_it() {
        let file = "def tags(raw):\n    result = raw.split()\n\n\ndef other():\n    return 2\n";
        let block = "def tags(raw):\n    result = raw.split()\n    return result\n";
        let rewrite = rewrite_of(file, block).unwrap();
        let applied = file.replacen(&rewrite.old_string, &rewrite.new_string, 1);
        assert_eq!(
            applied,
            "def tags(raw):\n    result = raw.split()\n    return result\n\n\ndef other():\n    return 2\n"
        );
        // Before the part shown, likewise.
        let file = "X = 1\n\n\ndef f():\n    return X\n";
        let block = "@cache\ndef f():\n    return X\n";
        let rewrite = rewrite_of(file, block).unwrap();
        let applied = file.replacen(&rewrite.old_string, &rewrite.new_string, 1);
        assert_eq!(applied, "X = 1\n\n\n@cache\ndef f():\n    return X\n");
    }

    #[test]
    fn a_function_left_out_between_two_others_is_deleted_with_its_lines_breaks() {
        let file = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n";
        let block = "def a():\n    return 1\n\n\ndef c():\n    return 3\n";
        let rewrite = rewrite_of(file, block).unwrap();
        assert_eq!(file.replacen(&rewrite.old_string, &rewrite.new_string, 1), block);
    }

    #[test]
    fn a_line_that_repeats_is_widened_until_unique() {
        let file = "def a():\n    return 1\n\ndef b():\n    return 1\n";
        let block = "def b():\n    return 2";
        let rewrite = rewrite_of(file, block).unwrap();
        assert_eq!(rewrite.old_string, "def b():\n    return 1");
        assert_eq!(rewrite.new_string, "def b():\n    return 2");
    }

    #[test]
    fn other_code_and_unchanged_excerpts_are_not_edits() {
        assert_eq!(rewrite_of(STATS, "import math"), None, "nothing in common");
        assert_eq!(rewrite_of(STATS, "def stddev(xs):\n    m = mean(xs)"), None, "an excerpt as it is");
        assert_eq!(rewrite_of(STATS, "print(mean([1, 2]))\nprint(stddev([1, 2]))\nx = 3\ndef mean(xs):"), None);
        let shortened = "import math\n\ndef mean(xs):\n    # ... existing code ...\n\ndef stddev(xs):";
        assert_eq!(rewrite_of(STATS, shortened), None, "a placeholder is not code to write");
    }
}
