//! Reading a reply: its code blocks and the path each belongs to, the
//! line or name it points at, its answer.

use super::handed::*;
use crate::agent::code_text::*;
use crate::workspace::mentions::{has_extension, is_dotfile};

/// The code a line of prose quotes (`Line 7 should be \`x = 1\``: the
/// longest span between backticks), or the line itself when it quotes none.
/// The words around the code are no part of the line.
pub(super) fn inline_code(line: &str) -> &str {
    let spans = line.split('`').skip(1).step_by(2);
    let closed = line.matches('`').count() >= 2;
    match spans.filter(|_| closed).max_by_key(|span| span.len()) {
        Some(span) if !span.trim().is_empty() => span,
        _ => line.trim_matches('`'),
    }
}

/// The lines of `reply` outside its code blocks that are not blank.
pub(super) fn lines_outside_code(reply: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    reply.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            return false;
        }
        !in_code && !line.trim().is_empty()
    })
}

/// `first` shown, then the other `files`: the file an ask is about leads.
pub(super) fn shown_first<'a>(first: &'a HandedFile, files: impl Iterator<Item = &'a HandedFile>) -> String {
    let rest = files.filter(|f| f.path != first.path);
    std::iter::once(first).chain(rest).map(HandedFile::shown).collect()
}

/// The one name that is all of `reply` ("`leg_lengths`", "leg_lengths()").
pub(super) fn bare_name(reply: &str) -> Option<&str> {
    let name = reply.trim().trim_matches(['`', '*']).trim_end_matches('.').trim_end_matches("()");
    let is_name = name.len() > 1 && is_identifier(name);
    is_name.then_some(name)
}

/// Whether all of `reply` is the name of `file` ("trips.py", "`trip.py`"),
/// or that name with one letter wrong, missing or added.
pub(super) fn names_only(reply: &str, file: &HandedFile) -> bool {
    let reply = reply.trim().trim_matches(['`', '*', '"', '\'']).trim_end_matches('.').to_lowercase();
    let path = file.path.display().to_lowercase();
    let name = file_name(&path);
    !reply.contains(char::is_whitespace) && (one_edit_apart(&reply, &path) || one_edit_apart(&reply, name))
}

/// The lines of code of `reply`, whose code blocks are `blocks`: those of
/// every block, else its lines with their inline code taken out.
pub(super) fn reply_code(reply: &str, blocks: &[ShownFile]) -> Vec<String> {
    if blocks.is_empty() {
        code_lines(reply).map(|line| inline_code(line).to_string()).collect()
    } else {
        blocks.iter().flat_map(|block| code_lines(&block.text)).map(str::to_string).collect()
    }
}

/// The one line of code that is all of `reply`, in one block at most.
pub(super) fn quoted_code(reply: &str) -> Option<String> {
    let blocks = shown_files(reply);
    if blocks.len() > 1 {
        return None;
    }
    let [quoted] = reply_code(reply, &blocks).try_into().ok()?;
    let quoted = quoted.trim();
    (!quoted.is_empty()).then(|| quoted.to_string())
}

/// The number of the one line of `file` that reads `quoted`.
pub(super) fn line_reading(file: &str, quoted: &str) -> Option<usize> {
    let mut found = file.lines().enumerate().filter(|(_, line)| line.trim() == quoted);
    let (at, _) = found.next()?;
    found.next().is_none().then_some(at + 1)
}

/// The line number that is all of `reply` ("line 3", "13.", "`7`"), or
/// the one line a short sentence without code names ("It is line 12 that
/// needs to change.", the 0.5B on the right line of linecount.sh).
pub(super) fn line_number(reply: &str) -> Option<usize> {
    /// Longer, a reply explains more than it points.
    const POINTING: usize = 120;
    static LINE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let line = LINE.get_or_init(|| regex::Regex::new(r"(?i)\bline\s+(\d+)\b").expect("a valid pattern"));
    let reply = reply.trim().trim_matches('`').trim().trim_end_matches('.');
    let digits = reply.strip_prefix("line").or_else(|| reply.strip_prefix("Line")).unwrap_or(reply);
    let named = || {
        let mut numbers = line.captures_iter(reply).map(|found| found[1].parse::<usize>().ok());
        let number = numbers.next()??;
        let pointing = reply.len() <= POINTING && !reply.contains('`') && !reply.contains('\n');
        (pointing && numbers.next().is_none()).then_some(number)
    };
    digits.trim().parse().ok().or_else(named).filter(|n| *n > 0)
}

/// The answer a worked-out reply ends with, on its line that starts with "Answer:".
pub(super) fn answer_line(reply: &str) -> Option<String> {
    let line = reply
        .lines()
        .rev()
        .map(|line| line.trim().trim_start_matches(['*', '#', ' ']))
        .find(|line| line.get(..7).is_some_and(|head| head.eq_ignore_ascii_case("answer:")))?;
    let answer = line[7..].trim().trim_start_matches(['*', ' ']).trim();
    (!answer.is_empty()).then(|| answer.to_string())
}

/// Whether `reply` is code blocks and nothing else: no answer in words.
pub(super) fn only_code(reply: &str) -> bool {
    let any_code = reply.lines().any(|line| line.trim_start().starts_with("```"));
    any_code && lines_outside_code(reply).next().is_none()
}

/// A code block of a reply, with the path written on the line before it or
/// as its own first line (`# calc.py`), when there is one.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ShownFile {
    pub(super) path: Option<String>,
    pub(super) text: String,
}

pub(super) fn shown_files(reply: &str) -> Vec<ShownFile> {
    let mut out = Vec::new();
    let mut label: Option<String> = None;
    let mut block: Option<Vec<&str>> = None;
    let mut lines_of = reply.lines();
    loop {
        let line = lines_of.next();
        let fence = line.is_some_and(|line| line.trim_start().starts_with("```"));
        match (block.take(), line) {
            (None, None) => break,
            (None, Some(_)) if fence => block = Some(Vec::new()),
            (None, Some(line)) if !line.trim().is_empty() => label = path_in(line).or_else(|| introduced_path(line)),
            (None, Some(_)) => {}
            (Some(mut lines), Some(line)) if !fence => {
                lines.push(line);
                block = Some(lines);
            }
            // A block closed, or cut off with the reply: it still shows the file up to there.
            (Some(lines), line) => {
                let code: Vec<&str> = lines.iter().copied().filter(|l| !l.trim().is_empty()).collect();
                // A block that holds only a path heads the next one.
                if let [only] = code.as_slice() {
                    if let Some(path) = path_in(only) {
                        label = Some(path);
                        continue;
                    }
                }
                let (path, lines) = match lines.first().and_then(|first| comment_path(first)) {
                    Some(named) => (Some(named), &lines[1..]),
                    None => (label.take(), &lines[..]),
                };
                // "```" then "python" on a line of its own: the fence's
                // language, put on the wrong line, is not the file's.
                let lines = match lines.split_first() {
                    Some((first, rest)) if FENCE_LANGUAGES.contains(first) && !rest.is_empty() => rest,
                    _ => lines,
                };
                let text = lines.join("\n");
                // "# No changes needed" under a code file's path is a remark,
                // not the file's content.
                let remark = path.as_deref().is_some_and(|p| !is_prose(p)) && code_lines(&text).all(is_comment);
                if !text.trim().is_empty() && !remark {
                    out.push(ShownFile { path, text: format!("{}\n", text.trim_matches('\n')) });
                }
                if line.is_none() {
                    break;
                }
            }
        }
    }
    out
}

/// The blocks of `reply`, a block whose own first line is bare
/// `shapes.py` under that path: taken so only when it is a file handed
/// over, for code can read so too.
pub(super) fn blocks_for(reply: &str, handed: &[HandedFile]) -> Vec<ShownFile> {
    let mut blocks = shown_files(&realign_fences(reply, handed));
    for shown in blocks.iter_mut().filter(|shown| shown.path.is_none()) {
        let first = shown.text.lines().next().unwrap_or_default();
        if let Some(label) = path_in(first).filter(|label| handed_under(label, handed).is_some()) {
            shown.text = shown.text[first.len()..].trim_start_matches('\n').to_string();
            shown.path = Some(label);
        }
    }
    blocks.into_iter().flat_map(|shown| split_at_paths(shown, handed)).collect()
}

/// `shown` cut where, after a blank line, a comment names another handed
/// file (`# tests/test_shop.py`): a model that writes several files in one
/// block heads each as it heads the first.
pub(super) fn split_at_paths(shown: ShownFile, handed: &[HandedFile]) -> Vec<ShownFile> {
    let heads_file = |line: &str| comment_path(line).filter(|path| handed_under(path, handed).is_some());
    let mut out = vec![ShownFile { path: shown.path, text: String::new() }];
    let mut previous_blank = false;
    for line in shown.text.lines() {
        match heads_file(line).filter(|_| previous_blank && out.last().is_some_and(|last| last.path.is_some())) {
            Some(path) => out.push(ShownFile { path: Some(path), text: String::new() }),
            None => {
                let last = out.last_mut().expect("out starts with one file");
                last.text.push_str(line);
                last.text.push('\n');
            }
        }
        previous_blank = line.trim().is_empty();
    }
    out.retain(|shown| !shown.text.trim().is_empty());
    for shown in &mut out {
        shown.text = format!("{}\n", shown.text.trim_matches('\n'));
    }
    out
}

/// `reply` with its fences paired again where a model fenced a handed
/// file's path instead of its code ("```\nstats.js\n```\n<code>\n```"),
/// which leaves the code outside and pairs every later fence wrongly: the
/// lines after such a path block, up to the next fence, are the file's
/// block when they share a line with it (prose after a path does not).
pub(super) fn realign_fences(reply: &str, handed: &[HandedFile]) -> String {
    let lines: Vec<&str> = reply.lines().collect();
    let is_fence = |line: &str| line.trim_start().starts_with("```");
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut in_block = false;
    let mut at = 0;
    while let Some(&line) = lines.get(at) {
        at += 1;
        if !is_fence(line) {
            out.push(line);
            continue;
        }
        if in_block {
            in_block = false;
            out.push(line);
            continue;
        }
        let path_block = match (lines.get(at), lines.get(at + 1)) {
            (Some(&path), Some(&close)) if is_fence(close) => {
                path_in(path).and_then(|label| handed_under(&label, handed)).map(|file| (path, file))
            }
            _ => None,
        };
        if let Some((path, file)) = path_block {
            let rest = &lines[at + 2..];
            let code = &rest[..rest.iter().position(|line| is_fence(line)).unwrap_or(rest.len())];
            let known: std::collections::HashSet<&str> =
                file.text.lines().map(str::trim).filter(|line| line.len() > 3).collect();
            if code.iter().any(|line| known.contains(line.trim())) {
                out.extend([path, "```"]);
                out.extend(code);
                out.push("```");
                // Past the path block, the code and the fence that closes it.
                at += 2 + code.len() + 1;
                continue;
            }
        }
        in_block = true;
        out.push(line);
    }
    out.join("\n")
}

/// The path a line outside code names, when that is all it says
/// (`calc.py`, `**src/lib.rs**`, `File: app.py:`).
pub(super) fn path_in(line: &str) -> Option<String> {
    let line = line.trim();
    let words = line.strip_prefix("File:").unwrap_or(line).trim_matches(|c: char| "*`#: ".contains(c));
    looks_like_path(words).then(|| words.to_string())
}

/// The one path a sentence that introduces a block quotes ("Here's the
/// updated `test_slug.py` with the tests:"), as the 1.5B coder labels a
/// block when it explains its change before it.
pub(super) fn introduced_path(line: &str) -> Option<String> {
    if !line.trim_end().ends_with(':') {
        return None;
    }
    let mut quoted = line.split('`').skip(1).step_by(2).filter(|span| looks_like_path(span));
    match (quoted.next(), quoted.next()) {
        (Some(path), None) => Some(path.to_string()),
        _ => None,
    }
}

/// The path a first line of code names in a comment (`# calc.py`, `// src/main.rs`).
pub(super) fn comment_path(line: &str) -> Option<String> {
    let trimmed = line.trim();
    if !trimmed.starts_with(['#', '/', '-', ';']) {
        return None;
    }
    let words = trimmed.trim_start_matches(['#', '/', '-', ';', ' ']).trim_end_matches([':', ' ']);
    looks_like_path(words).then(|| words.to_string())
}

/// A path that heads code: a file name with an extension or a dotfile,
/// nothing but path characters.
pub(super) fn looks_like_path(words: &str) -> bool {
    let name = words.rsplit('/').next().unwrap_or(words);
    words.chars().all(|c| c.is_alphanumeric() || "._-/".contains(c)) && (has_extension(name) || is_dotfile(name))
}
