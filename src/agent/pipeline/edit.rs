//! Edits at the size of a definition: what the model is shown of one (its
//! file's imports, then its lines), the code block its reply holds, and the
//! file with the definition's byte range replaced by that block, every other
//! byte left as it was.

pub(super) use crate::agent::code_text::code_blocks;
use crate::agent::code_text::same_code;
use crate::codemap::{DefKind, Definition, FileMap, Language, parse, tree};

/// The definition as the model reads it: its path and place, the imports
/// of its file that bring a name it uses, then its text, in one code block.
pub fn shown(path: &str, text: &str, file: &FileMap, definition: &Definition) -> String {
    let total = text.lines().count();
    let (first, last) = definition.lines;
    let brings_used = |import: &str| {
        import
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| !word.is_empty() && definition.uses.iter().any(|used| used == word))
    };
    // Of an import over several lines, its first and last lines and those
    // that bring a name the definition uses.
    let imports: Vec<String> = file
        .imports
        .iter()
        .filter(|range| range.end <= definition.range.start)
        .map(|range| text[range.clone()].trim_end())
        .filter(|import| brings_used(import))
        .map(|import| {
            let lines: Vec<&str> = import.lines().collect();
            let last = lines.len().saturating_sub(1);
            let kept = lines.iter().enumerate().filter(|(i, line)| *i == 0 || *i == last || brings_used(line));
            kept.map(|(_, line)| *line).collect::<Vec<_>>().join("\n")
        })
        .collect();
    let mut out = format!("{path} (lines {first} to {last} of {total})\n```{}\n", file.language.name());
    if !imports.is_empty() {
        out.push_str(&imports.join("\n"));
        out.push_str("\n...\n\n");
    }
    // The file's short constants it reads (a table of units, a pattern):
    // a change of what it does is often a change of them.
    for constant in used_constants(file, definition) {
        out.push_str(text[constant.range.clone()].trim_end_matches('\n'));
        out.push_str("\n\n");
    }
    out.push_str(text[definition.range.clone()].trim_end_matches('\n'));
    out.push_str("\n```\n");
    out
}

/// The top-level constants of `definition`'s file that it uses, short
/// ones, a few: shown beside it, and written anew with it where the
/// change needs (see [`with_companions`]).
fn used_constants<'f>(file: &'f FileMap, definition: &'f Definition) -> impl Iterator<Item = &'f Definition> + 'f {
    const MAX_CONSTANTS: usize = 4;
    const MAX_LINES: usize = 12;
    file.definitions
        .iter()
        .filter(move |d| {
            d.kind == DefKind::Constant
                && d.container.is_none()
                && !d.local
                && d.range != definition.range
                && d.lines.1 + 1 - d.lines.0 <= MAX_LINES
                && definition.uses.contains(&d.name)
        })
        .take(MAX_CONSTANTS)
}

/// The definition's first line that is not blank, trimmed: what a reply's
/// version of it starts with.
fn head(old: &str) -> Option<&str> {
    old.lines().map(str::trim).find(|line| !line.is_empty())
}

fn holds(block: &str, head: &str) -> bool {
    block.lines().any(|line| line.trim() == head)
}

/// Whether one of the reply's blocks holds the definition's head line.
pub fn holds_head(reply: &str, old: &str) -> bool {
    head(old).is_some_and(|head| code_blocks(reply).iter().any(|block| holds(block, head)))
}

/// How far `line` is indented, in bytes.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The code of the reply's block that holds the definition (the first
/// block that has its head line, else the first block), from that line on:
/// a reply often repeats the imports it was shown, or quotes the request
/// in a block of its own. Where the block holds the definition inside more
/// (its class around it, or in JavaScript an assignment to its class's
/// prototype), that definition alone (see [`own_definition`]). `None` when
/// the reply has no block.
pub fn definition_code(language: Language, reply: &str, definition: &Definition, old: &str) -> Option<String> {
    let blocks = code_blocks(reply);
    let head = head(old)?;
    let code = blocks.iter().find(|block| holds(block, head)).or(blocks.first())?;
    let code = &unqualified_head(language, code, definition);
    if let Some(own) = own_definition(language, code, definition, old) {
        return Some(own);
    }
    let lines: Vec<&str> = code.lines().collect();
    match lines.iter().position(|line| line.trim() == head) {
        Some(at) if at > 0 => Some(lines[at..].join("\n")),
        _ => Some(code.clone()),
    }
}

/// `code` with a method's head written under its qualified name
/// (`def Parser.parse(self):`, `Command.option(flags) {`), which no
/// language parses, written under its own name: the name the model was
/// shown it by.
fn unqualified_head(language: Language, code: &str, definition: &Definition) -> String {
    let qualified = format!("{}(", definition.qualified(language));
    let own = format!("{}(", definition.name);
    if definition.container.is_none() || !code.contains(&qualified) {
        return code.to_string();
    }
    let openers = ["def ", "async def ", "fn ", "pub fn ", "func ", "async ", "static ", ""];
    code.lines()
        .map(|line| {
            let body = line.trim_start();
            let is_head =
                openers.iter().any(|opener| body.strip_prefix(opener).is_some_and(|r| r.starts_with(&qualified)))
                    && matches!(body.trim_end().chars().last(), Some(':' | '{'));
            match is_head {
                true => line.replacen(&qualified, &own, 1),
                false => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The version of `definition` a block writes where the block holds more
/// than it: a small model asked for one method often writes its class
/// around it, with the class's other methods, or (in JavaScript) writes it
/// as `Command.prototype.opts = function () {…}` where the file writes
/// `opts() {…}` in its class. Taken from the head line through the end of
/// its body, as the file writes methods, dedented to its head; the lines
/// around it are not the definition's. `None` where the block does not
/// nest or reshape it.
fn own_definition(language: Language, code: &str, definition: &Definition, old: &str) -> Option<String> {
    let map = parse(language, code);
    let same = |d: &&Definition| d.name == definition.name && d.kind == definition.kind;
    let found = map.definitions.iter().find(same)?;
    if let Some(method) = prototype_as_method(language, code, found, old) {
        return Some(dedented(&method));
    }
    let nested = map.definitions.iter().any(|outer| {
        outer.range != found.range && outer.range.start <= found.range.start && found.range.end <= outer.range.end
    });
    // What the block writes after it is not its own either: a small model
    // asked for `markdown` wrote it, then the class it thought at fault,
    // and the class would land in `markdown`'s file.
    let followed = map.definitions.iter().any(|other| !other.local && other.range.start >= found.range.end);
    (nested || followed).then(|| dedented(&code[found.range.clone()]))
}

/// `Class.prototype.name = function (params) {body}` (or an arrow
/// function) written as the method `name(params) {body}`, where the file
/// writes the definition as a method: the line that names it is no
/// assignment.
fn prototype_as_method(language: Language, code: &str, found: &Definition, old: &str) -> Option<String> {
    if !matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx) {
        return None;
    }
    let call = format!("{}(", found.name);
    let head = old.lines().find(|line| line.contains(&call))?;
    if head.contains("function") || head.contains('=') {
        return None;
    }
    let tree = tree(language, code)?;
    let node = tree.root_node().descendant_for_byte_range(found.range.start, found.range.end)?;
    let mut stack = vec![node];
    let mut assignment = None;
    while let Some(node) = stack.pop() {
        if node.kind() == "assignment_expression" {
            assignment = Some(node);
            break;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor).filter(|c| c.start_byte() < found.range.end));
    }
    let assignment = assignment?;
    let function = assignment.child_by_field_name("right")?;
    let text = |n: tree_sitter::Node| &code[n.byte_range()];
    let parameters = match (function.child_by_field_name("parameters"), function.child_by_field_name("parameter")) {
        (Some(list), _) => text(list).to_string(),
        (None, Some(one)) => format!("({})", text(one)),
        (None, None) => return None,
    };
    let body = function.child_by_field_name("body")?;
    let body = match body.kind() {
        "statement_block" => text(body).to_string(),
        _ => format!("{{\n  return {};\n}}", text(body)),
    };
    let modifier = if text(function).starts_with("async") { "async " } else { "" };
    let star = if function.kind().starts_with("generator") { "*" } else { "" };
    let statement_line = code[..assignment.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let comments = &code[found.range.start.min(statement_line)..statement_line];
    let indent = &code[statement_line..assignment.start_byte()];
    Some(format!("{comments}{indent}{modifier}{star}{}{parameters} {body}", found.name))
}

/// `code` with the indentation of its first line that is not blank taken
/// off every line that has it.
pub(super) fn dedented(code: &str) -> String {
    let first = code.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    let pad = &first[..indent_of(first)];
    code.lines().map(|line| line.strip_prefix(pad).unwrap_or(line)).collect::<Vec<_>>().join("\n")
}

/// The definition `old` with the lines a reply quotes (its first block)
/// replaced by the lines it gives for them (its second block), indented as
/// they are in the definition: the narrower ask of a model that rewrote
/// the whole definition without changing it. `None` unless the quoted
/// lines are found in the definition, once, and the new ones differ.
fn line_changed(old: &str, reply: &str) -> Option<String> {
    let blocks = code_blocks(reply);
    let [quoted, fixed, ..] = blocks.as_slice() else { return None };
    let quoted: Vec<&str> = quoted.lines().filter(|l| !l.trim().is_empty()).collect();
    let fixed: Vec<&str> = fixed.lines().filter(|l| !l.trim().is_empty()).collect();
    if quoted.is_empty() || fixed.is_empty() || same_code(&quoted.join("\n"), &fixed.join("\n")) {
        return None;
    }
    let lines: Vec<&str> = old.lines().collect();
    let at: Vec<usize> = (0..lines.len().saturating_sub(quoted.len() - 1))
        .filter(|&i| quoted.iter().enumerate().all(|(j, q)| lines[i + j].trim() == q.trim()))
        .collect();
    let [at] = at.as_slice() else { return None };
    let base = &lines[*at][..indent_of(lines[*at])];
    let fixed_base = indent_of(fixed[0]);
    let placed = fixed.iter().map(|line| {
        let extra = indent_of(line).saturating_sub(fixed_base);
        format!("{base}{}{}", " ".repeat(extra), line.trim_start())
    });
    let mut out: Vec<String> = lines[..*at].iter().map(|l| l.to_string()).collect();
    out.extend(placed);
    out.extend(lines[at + quoted.len()..].iter().map(|l| l.to_string()));
    Some(out.join("\n"))
}

/// The definition `old` with the one line a reply writes "as it must
/// read" put in place of the line of `old` it is nearest to, when exactly
/// one line is nearest and a few words apart: the answer of a small model
/// asked for the line to change, which writes the new line alone. A reply
/// that quotes the line and then its fix (two blocks) is read as such.
pub fn line_fixed(old: &str, reply: &str) -> Option<String> {
    if let Some(changed) = line_changed(old, reply) {
        return Some(changed);
    }
    let written = code_written(reply);
    let lines: Vec<&str> = old.lines().collect();
    let mut found: Option<(usize, &str)> = None;
    for new in written.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        if lines.iter().any(|line| line.trim() == new) {
            continue;
        }
        let near: Vec<(usize, usize)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, line)| words_apart(line.trim(), new).map(|apart| (apart, i)))
            .collect();
        let Some(best) = near.iter().map(|(apart, _)| *apart).min() else { continue };
        let at: Vec<usize> = near.iter().filter(|(apart, _)| *apart == best).map(|(_, i)| *i).collect();
        match (at.as_slice(), found) {
            ([i], None) => found = Some((*i, new)),
            // Two new lines, or one near two old ones: which is meant is a guess.
            _ => return None,
        }
    }
    let (at, new) = found?;
    let indent = &lines[at][..indent_of(lines[at])];
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[at] = format!("{indent}{new}");
    Some(out.join("\n"))
}

/// The definition `old` with its line `at` (from 0) as a reply asked for
/// that one line writes it: the reply's line nearest the old one, or its
/// only line; `None` where it wrote none, or wrote the line unchanged.
pub fn line_rewritten(old: &str, at: usize, reply: &str) -> Option<String> {
    let lines: Vec<&str> = old.lines().collect();
    let line = *lines.get(at)?;
    // Code is what a block or backticks hold; a prose line counts only
    // where it is the old line with a few words changed.
    let block = code_blocks(reply).into_iter().next();
    let code: Vec<&str> = match &block {
        Some(block) => block.lines().collect(),
        None => reply.split('`').skip(1).step_by(2).collect(),
    };
    let code: Vec<&str> = code.into_iter().map(str::trim).filter(|l| !l.is_empty()).collect();
    let written: Vec<&str> = match code.is_empty() {
        true => reply.lines().map(str::trim).collect(),
        false => code.clone(),
    };
    let nearest = written
        .iter()
        .filter_map(|new| words_apart(line.trim(), new).map(|apart| (apart, *new)))
        .min_by_key(|(apart, _)| *apart)
        .map(|(_, new)| new);
    let new: &str = match (nearest, code.as_slice()) {
        (Some(new), _) => new,
        (None, [new]) => new,
        _ => return None,
    };
    if new == line.trim() {
        return None;
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[at] = format!("{}{new}", &line[..indent_of(line)]);
    let end = if old.ends_with('\n') { "\n" } else { "" };
    Some(out.join("\n") + end)
}

/// The code a reply writes: its first block's lines, else what it marks
/// with backticks.
fn code_written(reply: &str) -> Vec<String> {
    match code_blocks(reply).first() {
        Some(block) => block.lines().map(str::to_string).collect(),
        None => reply.split('`').skip(1).step_by(2).map(str::to_string).collect(),
    }
}

/// The line of `old` (its index, from 0) that a reply asked for the line
/// to change quotes as it is: a small model asked which line must change
/// and how often names the line and writes it unchanged. `None` where it
/// quotes none, or more than one, or the head, which names no fix.
pub fn line_quoted(old: &str, reply: &str) -> Option<usize> {
    let mut written = code_written(reply);
    // A reply of the line alone, unmarked.
    if written.is_empty() {
        written = reply.lines().map(str::to_string).collect();
    }
    let lines: Vec<&str> = old.lines().collect();
    let mut quoted = written.iter().map(|l| l.trim()).filter(|l| l.len() > 2).filter_map(|new| {
        let at: Vec<usize> = (1..lines.len()).filter(|i| lines[*i].trim() == new).collect();
        match at.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    });
    let first = quoted.next()?;
    quoted.all(|at| at == first).then_some(first)
}

/// The first line (from 0) where `new` differs from `old`, blanks at the
/// ends of lines aside; `None` where it does not.
pub fn first_changed_line(old: &str, new: &str) -> Option<usize> {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    (0..old.len().max(new.len())).find(|i| old.get(*i).map(|l| l.trim_end()) != new.get(*i).map(|l| l.trim_end()))
}

/// A string the version compares a value with (`== '+.7f'`, `=== "1pb"`)
/// that the check's own example writes as input and the old code never
/// wrote: the example's case special-cased, which passes that example and
/// fixes nothing else. Only strings of three characters or more count.
pub fn special_cased(language: Language, old: &str, new: &str, check: &str) -> Option<String> {
    const SHORTEST: usize = 3;
    let inputs: Vec<String> = check
        .lines()
        .filter(|line| super::expect::prints_a_line(language, line))
        .flat_map(quoted_strings)
        .filter(|s| s.chars().count() >= SHORTEST)
        .collect();
    let old_lines: std::collections::HashSet<&str> = old.lines().map(str::trim).collect();
    new.lines()
        .map(str::trim)
        .filter(|line| !old_lines.contains(line))
        .filter(|line| line.contains("==") || line.contains("!="))
        .flat_map(quoted_strings)
        .find(|literal| {
            literal.chars().count() >= SHORTEST
                && !old.contains(literal.as_str())
                && inputs.iter().any(|input| input.contains(literal.as_str()))
        })
}

/// The contents of the quoted strings of a line, `'` or `"`, escapes kept.
fn quoted_strings(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\'' && c != '"' {
            continue;
        }
        let mut text = String::new();
        let mut escaped = false;
        for d in chars.by_ref() {
            match (escaped, d) {
                (false, '\\') => escaped = true,
                (false, d) if d == c => break,
                _ => escaped = false,
            }
            text.push(d);
        }
        found.push(text);
    }
    found
}

/// A version's start, written for the model to go on from: the code block
/// opened, the lines of `old` before line `at`, and a comment opened where
/// that line starts. Asked to write the whole version, a small model copies
/// what it is shown line for line, the line that must change too; a comment
/// of its own at that line says what changes there, and what follows does it.
pub fn opened_at(language: Language, old: &str, at: usize) -> String {
    let lines: Vec<&str> = old.lines().collect();
    let line = lines.get(at).copied().unwrap_or_default();
    let comment = match language {
        Language::Python | Language::Bash => "# ",
        _ => "// ",
    };
    let before: String = lines[..at.min(lines.len())].iter().map(|l| format!("{l}\n")).collect();
    format!("```{}\n{before}{}{comment}", language.name(), &line[..indent_of(line)])
}

/// Where the model, going on from [`opened_at`]'s opening of `old` at
/// line `at`, is back on `old`'s own lines: two lines in a row, past its
/// comment, that are `old`'s lines `j` and `j + 1` for a `j` from `at` on
/// (not two brackets alone). The byte in `continued` where the first of
/// them starts, and `j`. From there on it would only copy what it was shown.
pub fn rejoined(old: &str, at: usize, continued: &str) -> Option<(usize, usize)> {
    // Indented as they were: the same line one block deeper (the old line
    // written again in a new `else`) is new code, not the old going on.
    let old_lines: Vec<&str> = old.lines().map(str::trim_end).collect();
    // Only whole lines count: the last may still be being written.
    let mut written: Vec<(usize, &str)> = Vec::new();
    let mut start = continued.find('\n')? + 1;
    while let Some(end) = continued[start..].find('\n') {
        written.push((start, continued[start..start + end].trim_end()));
        start += end + 1;
    }
    let says = |line: &str| line.chars().any(char::is_alphanumeric);
    for pair in written.windows(2) {
        let ((offset, first), (_, second)) = (pair[0], pair[1]);
        if first.trim_start().starts_with("```") || !(says(first) || says(second)) {
            continue;
        }
        let j = (at..old_lines.len().saturating_sub(1)).find(|j| old_lines[*j] == first && old_lines[j + 1] == second);
        if let Some(j) = j {
            return Some((offset, j));
        }
    }
    None
}

/// The reply a version opened by [`opened_at`] at line `at` of `old`
/// makes: the opening, then what the model went on with, less the comment
/// line tack opened (the model's note of what it changes, no part of the
/// change). Where it rejoined `old`'s lines, `old`'s lines from there; where
/// it closed the block short of `old`'s last line, what it wrote stands for
/// line `at` and `old` goes on after it. A backend that starts the reply
/// afresh returns a whole reply: it stands.
pub fn from_opening(opening: &str, old: &str, at: usize, continued: &str) -> String {
    if continued.trim_start().starts_with("```") {
        return continued.to_string();
    }
    let kept = opening.rfind('\n').map_or(opening, |end| &opening[..=end]);
    let old_lines: Vec<&str> = old.lines().collect();
    let rest_of_old = |from: usize| old_lines.get(from..).unwrap_or_default().join("\n");
    if let Some((cut, j)) = rejoined(old, at, continued) {
        let after_comment = continued.find('\n').map_or(continued.len(), |end| end + 1);
        let written = &continued[after_comment.min(cut)..cut];
        return format!("{kept}{written}{}\n```\n", rest_of_old(j));
    }
    let rest = continued.split_once('\n').map_or("", |(_, rest)| rest);
    if let Some(close) = rest.find("```") {
        let written = &rest[..close];
        let last = |text: &str| text.lines().map(str::trim).rfind(|l| !l.is_empty()).map(str::to_string);
        if last(written) != last(old) {
            return format!("{kept}{written}{}\n```\n", rest_of_old(at + 1));
        }
    }
    format!("{kept}{rest}")
}

/// How many words `a` and `b` differ by, when they are the same line with a
/// few words changed (at most a third of the longer, and at least one
/// word in common); `None` when they are different lines.
fn words_apart(a: &str, b: &str) -> Option<usize> {
    let words = |s: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut current = String::new();
        for c in s.chars() {
            if c.is_alphanumeric() || c == '_' {
                current.push(c);
            } else {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                if !c.is_whitespace() {
                    out.push(c.to_string());
                }
            }
        }
        if !current.is_empty() {
            out.push(current);
        }
        out
    };
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    // The longest common subsequence of the two lines' words.
    let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in 0..a.len() {
        for j in 0..b.len() {
            table[i + 1][j + 1] = if a[i] == b[j] { table[i][j] + 1 } else { table[i][j + 1].max(table[i + 1][j]) };
        }
    }
    let common = table[a.len()][b.len()];
    let apart = a.len().max(b.len()) - common;
    (common > 0 && apart * 3 <= a.len().max(b.len())).then_some(apart)
}

/// `text` with `definition` replaced by `new`, which is indented as the
/// definition is when the model wrote it flush left; and `new` as placed.
pub fn replaced(text: &str, definition: &Definition, new: &str) -> (String, String) {
    let old = &text[definition.range.clone()];
    let indent = |s: &str| s.lines().find(|l| !l.trim().is_empty()).map_or(0, indent_of);
    let (had, has) = (indent(old), indent(new));
    let new = if has < had {
        let pad = &old.lines().find(|l| !l.trim().is_empty()).unwrap_or_default()[..had - has];
        new.lines()
            .map(|line| if line.trim().is_empty() { line.to_string() } else { format!("{pad}{line}") })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        new.to_string()
    };
    let new = new.trim_end_matches('\n').to_string();
    (format!("{}{new}{}", &text[..definition.range.start], &text[definition.range.end..]), new)
}

/// The file `text` with `placed` (the new version of `primary`) and what
/// else the reply's version brings that a change needing new code is made
/// of: the file's other definitions it writes anew (a table and the
/// function that reads it, two functions that must agree), and the helpers
/// it defines that the change calls and nothing in the project defines
/// (`defined_elsewhere` tells those that are), put before the definition
/// the change is in. `None` where it brings nothing beside `placed`.
///
/// A definition written as a stand-in (its body only `...`, or a comment
/// saying the rest is as it was) is not a new version: a small model
/// writes the code it was not asked about so.
pub fn with_companions(
    language: Language,
    text: &str,
    file: &FileMap,
    primary: &Definition,
    placed: &str,
    reply: &str,
    defined_elsewhere: impl Fn(&str) -> bool,
) -> Option<String> {
    let overlaps = |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| a.start < b.end && b.start < a.end;
    let mut changes: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut helpers: Vec<String> = Vec::new();
    let uses_name = |code: &str, name: &str| {
        code.match_indices(name).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + name.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            !word(before) && !word(after)
        })
    };
    // A version that leaves the definition asked of as it was changes
    // nothing the request pointed to: only the data it reads (a table, a
    // constant) may carry its change. The 1.5B, asked of a Rust function,
    // rewrote the struct beside it and left the function alone.
    let primary_unchanged = same_code(&text[primary.range.clone()], placed);
    for block in code_blocks(reply) {
        let map = parse(language, &block);
        for written in map.definitions.iter().filter(|d| !d.local) {
            let same_place = |d: &&Definition| {
                !d.local && d.name == written.name && d.container == written.container && d.kind == written.kind
            };
            if written.name == primary.name && written.container == primary.container {
                continue;
            }
            let code = dedented(&block[written.range.clone()]);
            if is_stand_in(&code) {
                continue;
            }
            match file.definitions.iter().find(same_place) {
                // Another definition of the file, written anew: not one that
                // holds the primary or sits in it, nor one taken already.
                Some(old) => {
                    if (primary_unchanged && old.kind != DefKind::Constant)
                        || overlaps(&old.range, &primary.range)
                        || changes.iter().any(|(range, _)| overlaps(range, &old.range))
                        || same_code(&text[old.range.clone()], &code)
                    {
                        continue;
                    }
                    let (_, code) = replaced(text, old, &code);
                    changes.push((old.range.clone(), code));
                }
                // A helper: new at the file's top level, called by the change.
                None if written.container.is_none()
                    && !file.definitions.iter().any(|d| d.name == written.name)
                    && !defined_elsewhere(&written.name)
                    && matches!(
                        written.kind,
                        DefKind::Function | DefKind::Constant | DefKind::Class | DefKind::Type
                    )
                    && (uses_name(placed, &written.name)
                        || changes.iter().any(|(_, code)| uses_name(code, &written.name)))
                    && !helpers.iter().any(|h| same_code(h, &code)) =>
                {
                    helpers.push(code);
                }
                None => {}
            }
        }
    }
    if changes.is_empty() && helpers.is_empty() {
        return None;
    }
    changes.push((primary.range.clone(), placed.to_string()));
    if !helpers.is_empty() {
        // Before the top-level definition the change is in.
        let outer = file
            .definitions
            .iter()
            .filter(|d| d.container.is_none() && !d.local)
            .find(|d| d.range.start <= primary.range.start && primary.range.end <= d.range.end)
            .map_or(primary.range.start, |d| d.range.start);
        let gap = if language == Language::Python { "\n\n\n" } else { "\n\n" };
        let inserted: String = helpers.iter().map(|h| format!("{}{gap}", h.trim_end())).collect();
        changes.push((outer..outer, inserted));
    }
    changes.sort_by_key(|(range, _)| std::cmp::Reverse((range.start, range.end)));
    let mut after = text.to_string();
    for (range, code) in changes {
        after.replace_range(range, &code);
    }
    Some(after)
}

/// Whether a definition a reply writes stands in for code it leaves out:
/// a body of `...` alone, or a comment that the rest is as it was.
fn is_stand_in(code: &str) -> bool {
    let body: Vec<&str> = code.lines().skip(1).map(str::trim).filter(|l| !l.is_empty() && *l != "}").collect();
    (!body.is_empty() && body.iter().all(|line| matches!(*line, "..." | "pass" | "// ..." | "# ..." | "/* ... */")))
        || body.iter().any(|line| {
            let comment = line.starts_with("//") || line.starts_with('#') || line.starts_with("/*");
            comment && line.contains("...")
        })
}

/// The edit that turns `before` into `after`, as whole lines: the span
/// from the first line that differs to the last, and what stands there
/// after, grown until the old span is found once in `before` only.
pub fn spanning_edit(before: &str, after: &str) -> (String, String) {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let mut start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let mut tail = old.iter().rev().zip(new.iter().rev()).take_while(|(a, b)| a == b).count();
    tail = tail.min(old.len() - start).min(new.len() - start);
    let mut end_old = old.len() - tail;
    let mut end_new = new.len() - tail;
    loop {
        let span = old[start..end_old].concat();
        if !span.is_empty() && before.matches(&span).count() == 1 || (start == 0 && end_old == old.len()) {
            return (span, new[start..end_new].concat());
        }
        start = start.saturating_sub(1);
        if end_old < old.len() {
            end_old += 1;
            end_new += 1;
        }
    }
}

/// The names a reply lists, at most `max`: its items (split at commas,
/// semicolons and lines) that are one name each (`MAX_LENGTH`,
/// `Range.test`, `parse()`), bullets, numbers and quotes aside; of an item
/// in prose, the words it writes as code (between backticks, or shaped as
/// code: `CommanderError`), not its English.
pub fn listed_names(reply: &str, max: usize) -> Vec<String> {
    let is_name = |word: &str| word.split('.').all(crate::text::is_identifier);
    let mut names: Vec<String> = Vec::new();
    for item in reply.split([',', ';', '\n']) {
        let item = item
            .trim()
            .trim_start_matches(|c: char| c == '-' || c == '*' || c.is_ascii_digit() || c == '.' || c == ')');
        let bare = item.trim().trim_matches(|c: char| matches!(c, '`' | '\'' | '"')).trim_end_matches("()");
        if is_name(bare) {
            names.push(bare.to_string());
            continue;
        }
        for (i, span) in item.split('`').enumerate() {
            for word in span.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
                let word = word.trim_matches('.');
                let as_code = i % 2 == 1 || crate::codemap::rank::looks_like_code(word);
                if !word.is_empty() && as_code && is_name(word) {
                    names.push(word.to_string());
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names.truncate(max);
    names
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_version_that_compares_with_the_example_s_own_input_special_cases_it() {
        let check = "import parse\nprint(parse.parse('Pi = {:+.7f}', 'Pi = 3.1415926').fixed)\n";
        let old = "def extract(format):\n    if type not in ALLOWED:\n        raise ValueError(type)\n";
        let cased = "def extract(format):\n    if type == '+.7f':\n        type = 'f'\n    if type not in ALLOWED:\n        raise ValueError(type)\n";
        assert_eq!(special_cased(Language::Python, old, cased, check).as_deref(), Some("+.7f"));
        // A sign read off the spec is the fix: no string of the example is compared.
        let fixed = "def extract(format):\n    if format.startswith(('+', '-', ' ')):\n        format = format[1:]\n    if type not in ALLOWED:\n        raise ValueError(type)\n";
        assert_eq!(special_cased(Language::Python, old, fixed, check), None);
        // A unit added to a table is no comparison.
        let check = "const bytes = require('bytes');\nconsole.log(bytes.parse('1pb'));\n";
        assert_eq!(
            special_cased(
                Language::JavaScript,
                "var map = {\n  tb: 4\n};",
                "var map = {\n  tb: 4,\n  pb: 5\n};",
                check
            ),
            None
        );
    }

    #[test]
    fn a_line_quoted_as_it_is_is_where_a_version_is_opened() {
        let old = "function format(value, sep) {\n  var str = String(value);\n  str = str.replace(re, sep);\n  return str;\n}";
        let reply = "The line that must change is:\n```javascript\nstr = str.replace(re, sep);\n```";
        assert_eq!(line_quoted(old, reply), Some(2));
        // The head names no fix; a line written anew is no quote.
        assert_eq!(line_quoted(old, "```\nfunction format(value, sep) {\n```"), None);
        assert_eq!(line_quoted(old, "`str = str.split('.')`"), None);
        let opening = opened_at(Language::JavaScript, old, 2);
        assert_eq!(opening, "```javascript\nfunction format(value, sep) {\n  var str = String(value);\n  // ");
        let version = "```javascript\nfunction format(value, sep) {\n  var str = String(value);\n  str = split(str, sep);\n  return str;\n}\n```\n";
        // Written to the end, rejoining the old lines: the rest is the old's.
        let continued = "only the integer part is grouped\n  str = split(str, sep);\n  return str;\n}\n```";
        assert_eq!(rejoined(old, 2, continued), Some((continued.find("  return").unwrap(), 3)));
        assert_eq!(from_opening(&opening, old, 2, continued), version);
        // Cut where it rejoined, as the stream is.
        let cut = "only the integer part is grouped\n  str = split(str, sep);\n  return str;\n}\n";
        assert_eq!(from_opening(&opening, old, 2, cut), version);
        // The new lines alone, the block closed: they stand for the line.
        assert_eq!(from_opening(&opening, old, 2, "grouped\n  str = split(str, sep);\n```"), version);
        // Brackets alone are no rejoining; the opened line written as it
        // was is (the version then changes nothing).
        assert_eq!(rejoined(old, 2, "x\n  }\n}\n"), None);
        // The old line again one block deeper, in a branch of its own, is new code.
        assert_eq!(rejoined(old, 2, "x\n  if (a) {\n    str = str.replace(re, sep);\n  }\n"), None);
        assert_eq!(rejoined(old, 2, "x\n  str = str.replace(re, sep);\n  return str;\n"), Some((2, 2)));
        // A server that ignored the opening answers whole.
        assert_eq!(from_opening(&opening, old, 2, "```js\nx\n```"), "```js\nx\n```");
    }
    use super::*;
    use crate::codemap::{Language, parse};

    /// bytes.js's shape: a function whose behaviour lives in a table and a pattern.
    const UNITS: &str = "var map = {\n  kb: 1 << 10,\n  mb: 1 << 20,\n};\n\n\
var parseRegExp = /^(\\d+) *(kb|mb)$/i;\n\n\
function parse(val) {\n  var results = parseRegExp.exec(val);\n  return results ? results[1] * map[results[2]] : null;\n}\n\n\
function format(n) {\n  return n + 'B';\n}\n";

    fn companions(reply: &str, elsewhere: &[&str]) -> Option<String> {
        let file = parse(Language::JavaScript, UNITS);
        let primary = file.definitions.iter().find(|d| d.name == "parse").unwrap();
        let code = definition_code(Language::JavaScript, reply, primary, &UNITS[primary.range.clone()]).unwrap();
        let (_, placed) = replaced(UNITS, primary, &code);
        with_companions(Language::JavaScript, UNITS, &file, primary, &placed, reply, |n| elsewhere.contains(&n))
    }

    #[test]
    fn a_function_is_shown_with_the_short_constants_it_reads() {
        let file = parse(Language::JavaScript, UNITS);
        let parse_fn = file.definitions.iter().find(|d| d.name == "parse").unwrap();
        let told = shown("index.js", UNITS, &file, parse_fn);
        assert!(told.contains("var map = {") && told.contains("var parseRegExp ="), "{told}");
        let format_fn = file.definitions.iter().find(|d| d.name == "format").unwrap();
        assert!(!shown("index.js", UNITS, &file, format_fn).contains("var map"), "it reads none");
    }

    #[test]
    fn a_version_that_needs_new_code_brings_its_table_its_pattern_and_its_helper() {
        // The reply writes the table and the pattern anew, the function with
        // a call to a helper it defines, and `format` as it was.
        let reply = "```js\nvar map = {\n  kb: 1 << 10,\n  mb: 1 << 20,\n  gb: 1 << 30,\n};\n\n\
var parseRegExp = /^(\\d+) *(kb|mb|gb)$/i;\n\n\
function unitOf(text) {\n  return text.toLowerCase();\n}\n\n\
function parse(val) {\n  var results = parseRegExp.exec(val);\n  return results ? results[1] * map[unitOf(results[2])] : null;\n}\n\n\
function format(n) {\n  return n + 'B';\n}\n\n\
function test() {\n  return parse('1gb');\n}\n```";
        let after = companions(reply, &[]).expect("the version brings more than itself");
        assert!(after.contains("  gb: 1 << 30,\n") && after.contains("(kb|mb|gb)$/i"), "{after}");
        assert!(after.contains("map[unitOf(results[2])]"), "{after}");
        // The helper it calls stands before the function, once; what it
        // does not call (a test of the model's own) is not taken.
        let helper = after.find("function unitOf").expect("the helper is added");
        assert!(helper < after.find("function parse").unwrap() && after.matches("function unitOf").count() == 1);
        assert!(!after.contains("function test"), "{after}");
        assert!(after.ends_with("function format(n) {\n  return n + 'B';\n}\n"), "{after}");
        // One Edit covers the lines from the first change to the last.
        let (old, new) = spanning_edit(UNITS, &after);
        assert!(old.starts_with("};\n") && !old.contains("function format"), "{old}");
        assert_eq!(UNITS.replacen(&old, &new, 1), after);
        // A helper the project defines elsewhere is the project's: not copied in.
        let elsewhere = companions(reply, &["unitOf"]).unwrap();
        assert!(!elsewhere.contains("function unitOf"), "{elsewhere}");
        // A stand-in for code left out is no new version of it.
        let stand_in = "```js\nvar map = {\n  // ... as before\n};\n\n\
function parse(val) {\n  return null;\n}\n```";
        assert_eq!(companions(stand_in, &[]), None);
        // A neighbour rewritten beside the function left as it was is no
        // change of what was asked; its table rewritten is.
        let neighbour_only = "```js\nfunction parse(val) {\n  var results = parseRegExp.exec(val);\n  \
return results ? results[1] * map[results[2]] : null;\n}\n\nfunction format(n) {\n  return n + 'b';\n}\n```";
        assert_eq!(companions(neighbour_only, &[]), None);
        let table_only =
            neighbour_only.replace("function format(n) {\n  return n + 'b';\n}", "var map = {\n  kb: 1000,\n};");
        assert!(companions(&table_only, &[]).is_some_and(|after| after.contains("kb: 1000")));
    }

    #[test]
    fn a_list_of_names_is_read_and_the_english_around_them_is_not() {
        assert_eq!(
            listed_names("MAX_LENGTH, maxLength, `Range.test`, parse()", 8),
            ["MAX_LENGTH", "maxLength", "Range.test", "parse"]
        );
        assert_eq!(
            listed_names("1. replaceCaret\n2. replace_carets\n- tilde", 8),
            ["replaceCaret", "replace_carets", "tilde"]
        );
        assert_eq!(listed_names("The error's code would be CommanderError or `code`.", 8), ["CommanderError", "code"]);
        assert_eq!(listed_names("a, b, c", 2), ["a", "b"]);
    }

    #[test]
    fn the_line_an_error_is_raised_on_is_rewritten_as_the_reply_writes_it() {
        let old = "def unique(id):\n    if m:\n        id = '%s_%d' % (m.group(1), m.group(2)+1)\n    return id\n";
        let reply = "```python\nid = '%s_%d' % (m.group(1), int(m.group(2))+1)\n```";
        let fixed = line_rewritten(old, 2, reply).unwrap();
        assert_eq!(fixed, old.replace("m.group(2)+1", "int(m.group(2))+1"));
        // The line quoted back as it is, or nothing, changes nothing.
        assert_eq!(line_rewritten(old, 2, "```\nid = '%s_%d' % (m.group(1), m.group(2)+1)\n```"), None);
        assert_eq!(line_rewritten(old, 2, "I cannot tell."), None);
        assert_eq!(line_rewritten(old, 9, reply), None);
    }

    const FILE: &str = "import math\n\n\nclass Circle:\n    def area(self):\n        return math.pi * self.r\n\n    def grow(self, k):\n        self.r *= k\n# end\n";

    #[test]
    fn replacing_a_method_leaves_every_other_byte_as_it_was() {
        let map = parse(Language::Python, FILE);
        let area = map.definitions.iter().find(|d| d.name == "area").unwrap();
        // Written flush left, as a small model often does.
        let (new, placed) = replaced(FILE, area, "def area(self):\n    return math.pi * self.r ** 2");
        assert_eq!(placed, "    def area(self):\n        return math.pi * self.r ** 2");
        assert_eq!(new, FILE.replace("self.r\n\n", "self.r ** 2\n\n"));
        let after = parse(Language::Python, &new);
        assert!(after.error_lines.is_empty());
        assert_eq!(after.definitions.len(), map.definitions.len());
    }

    #[test]
    fn the_definition_is_shown_with_the_imports_it_uses_and_its_place() {
        let map = parse(Language::Python, FILE);
        let area = map.definitions.iter().find(|d| d.name == "area").unwrap();
        assert_eq!(
            shown("geo/circle.py", FILE, &map, area),
            "geo/circle.py (lines 5 to 6 of 10)\n```python\nimport math\n...\n\n    def area(self):\n        return math.pi * self.r\n```\n"
        );
        // An import the definition does not use is not shown.
        let grow = map.definitions.iter().find(|d| d.name == "grow").unwrap();
        assert!(!shown("geo/circle.py", FILE, &map, grow).contains("import math"));
    }

    #[test]
    fn a_quoted_line_and_its_fix_change_that_line_alone() {
        let old = "    def grow(self, k):\n        self.r *= k\n        return self";
        let reply = "The bug:\n```python\nself.r *= k\n```\nIt should be:\n```python\nself.r *= k * k\n```";
        assert_eq!(
            line_changed(old, reply),
            Some("    def grow(self, k):\n        self.r *= k * k\n        return self".into())
        );
        // A line that is not there, or is there twice, or is not changed, is no fix.
        assert_eq!(line_changed(old, "```\nx = 1\n```\n```\nx = 2\n```"), None);
        assert_eq!(line_changed("a = 1\na = 1", "```\na = 1\n```\n```\na = 2\n```"), None);
        assert_eq!(line_changed(old, "```\nreturn self\n```\n```\nreturn self\n```"), None);
    }

    #[test]
    fn a_line_written_as_it_must_read_replaces_the_line_it_is_nearest_to() {
        let old = "def parse_port(text):\n    port = int(text)\n    if port < 0:\n        raise ValueError(text)\n    return port";
        let fixed = old.replace("port < 0", "port < 1");
        assert_eq!(line_fixed(old, "```python\nif port < 1:\n```"), Some(fixed.clone()));
        assert_eq!(line_fixed(old, "It must read `if port < 1:`."), Some(fixed));
        // The definition copied back, or a line like none of it, is no fix.
        assert_eq!(line_fixed(old, &format!("```python\n{old}\n```")), None);
        assert_eq!(line_fixed(old, "```python\nimport sys\n```"), None);
    }

    #[test]
    fn the_code_of_a_reply_is_the_block_that_holds_the_definition_from_its_head_on() {
        assert_eq!(
            code_blocks("Here:\n```python\nimport math\n...\n\ndef f():\n    pass\n```\nDone."),
            ["def f():\n    pass"]
        );
        assert!(code_blocks("No change is needed.").is_empty());
        assert_eq!(code_blocks("```js\nconst a = 1\n"), ["const a = 1"]);
        let file = "class Shape:\n    def area(self):\n        return 1\n\n    def side(self):\n        return 0\n";
        let (map, at) = method_of(Language::Python, file, "area");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let code = |reply: &str| definition_code(Language::Python, reply, definition, old);
        let reply = "```python\nimport math\nfrom x import y\n\ndef area(self):\n    return 2\n```";
        assert_eq!(code(reply), Some("def area(self):\n    return 2".into()));
        // A block that quotes the request comes before the one with the definition.
        let reply = "```\n>>> area()\n1\n```\nFixed:\n```python\ndef area(self):\n    return 2\n```";
        assert_eq!(code(reply), Some("def area(self):\n    return 2".into()));
    }

    /// The map of `file` and the place in it of the definition `name`.
    fn method_of(language: Language, file: &str, name: &str) -> (FileMap, usize) {
        let map = parse(language, file);
        let at = map.definitions.iter().position(|d| d.name == name).unwrap();
        (map, at)
    }

    #[test]
    fn a_method_written_inside_its_class_is_that_method_alone() {
        let file = "class Shape:\n    def area(self):\n        return 1\n\n    def side(self):\n        return 0\n";
        let (map, at) = method_of(Language::Python, file, "area");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let reply = "```python\nclass Shape:\n    def area(self):\n        return 2\n\n    def side(self):\n        \
return 0\n\nprint(Shape().area())\n```";
        let code = definition_code(Language::Python, reply, definition, old).unwrap();
        assert_eq!(code, "def area(self):\n    return 2");
        let (after, _) = replaced(file, definition, &code);
        assert_eq!(after, file.replace("return 1", "return 2"));

        let file =
            "class Command {\n  opts() {\n    return this._values;\n  }\n\n  name() {\n    return 'x';\n  }\n}\n";
        let (map, at) = method_of(Language::JavaScript, file, "opts");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let reply = "```javascript\nclass Command {\n  opts() {\n    return { ...this._values };\n  }\n\n  name() {\n    \
return 'x';\n  }\n}\n```";
        let code = definition_code(Language::JavaScript, reply, definition, old).unwrap();
        assert_eq!(code, "opts() {\n  return { ...this._values };\n}");
        let (after, _) = replaced(file, definition, &code);
        assert_eq!(after, file.replace("return this._values;", "return { ...this._values };"));
    }

    #[test]
    fn definitions_a_reply_writes_after_the_one_asked_are_not_its_own() {
        let file = "def markdown(text):\n    return convert(text)\n";
        let (map, at) = method_of(Language::Python, file, "markdown");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let reply = "```python\ndef markdown(text):\n    return convert(text)\n\nclass CodeBlock(Processor):\n    \
def run(self, block):\n        return block + '\\n'\n```";
        let code = definition_code(Language::Python, reply, definition, old).unwrap();
        assert_eq!(code, "def markdown(text):\n    return convert(text)");
        let (after, _) = replaced(file, definition, &code);
        assert_eq!(after, file, "nothing of the class lands in the file");
    }

    #[test]
    fn a_method_head_written_under_its_qualified_name_is_written_under_its_own() {
        let file = "class Shape:\n    def area(self):\n        return 1\n";
        let (map, at) = method_of(Language::Python, file, "area");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let reply = "```python\ndef Shape.area(self):\n    return Shape.area(self) + 1\n```";
        let code = definition_code(Language::Python, reply, definition, old).unwrap();
        assert_eq!(code, "def area(self):\n    return Shape.area(self) + 1");

        let file = "class Command {\n  option(flags) {\n    return this;\n  }\n}\n";
        let (map, at) = method_of(Language::JavaScript, file, "option");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let reply = "```js\nCommand.option(flags) {\n  this.flags = flags;\n  return this;\n}\n```";
        let code = definition_code(Language::JavaScript, reply, definition, old).unwrap();
        assert_eq!(code, "option(flags) {\n  this.flags = flags;\n  return this;\n}");
    }

    #[test]
    fn a_method_written_as_a_prototype_assignment_is_written_as_the_file_writes_methods() {
        let file = "class Command {\n  /**\n   * The values.\n   */\n  opts() {\n    return this._values;\n  }\n}\n";
        let (map, at) = method_of(Language::JavaScript, file, "opts");
        let (definition, old) = (&map.definitions[at], &file[map.definitions[at].range.clone()]);
        let reply = "Here:\n```javascript\n/**\n * The values.\n */\nCommand.prototype.opts = function() {\n  return \
{ ...this._values };\n};\n```";
        let code = definition_code(Language::JavaScript, reply, definition, old).unwrap();
        assert_eq!(code, "/**\n * The values.\n */\nopts() {\n  return { ...this._values };\n}");
        let (after, placed) = replaced(file, definition, &code);
        assert_eq!(after, file.replace("return this._values;", "return { ...this._values };"));
        assert!(super::super::verify::check(Language::JavaScript, file, &map, definition, &placed, &after).is_ok());
        // An arrow function with an expression body becomes a method that returns it.
        let reply = "```js\nCommand.prototype.opts = async (key) => this._values[key];\n```";
        let code = definition_code(Language::JavaScript, reply, definition, old).unwrap();
        assert_eq!(code, "async opts(key) {\n  return this._values[key];\n}");
    }
}
