//! Reading code as text, in any language: the names a line declares or
//! a text uses, imports, comments, and whether two texts are the same
//! code. Shared by the whole-file way, the inlining of wrappers, the kept
//! parts and the pipeline's verifier.

/// The names that lines of `text` that are not indented declare
/// (`def greet`, `class Rectangle`, `function capitalize`, `fn main`).
pub(super) fn declared_names(text: &str) -> std::collections::HashSet<&str> {
    text.lines().filter(|line| !line.starts_with(char::is_whitespace)).filter_map(declared_name).collect()
}

/// The names `text` declares at its top level: those of `declared_names`
/// and the constants and variables it assigns (`RECIPES = {`, `const
/// LIMIT = 3;`).
pub(super) fn top_level_names(text: &str) -> std::collections::HashSet<&str> {
    let assigned = text.lines().filter(|line| !line.starts_with(char::is_whitespace)).filter_map(|line| {
        let (target, _) = line.split_once('=')?;
        let mut target =
            words(target).filter(|word| !["const", "let", "var", "export", "pub", "static", "mut"].contains(word));
        let name = target.next()?;
        let plain = target.next().is_none() && !line[line.find('=')?..].starts_with("==");
        plain.then_some(name)
    });
    let mut names = declared_names(text);
    names.extend(assigned);
    names
}

/// How many more of each bracket, `(`, `[` and `{`, `text` opens than it
/// closes.
pub(super) fn bracket_balance(text: &str) -> [i64; 3] {
    let mut balance = [0; 3];
    for c in text.chars() {
        match c {
            '(' => balance[0] += 1,
            ')' => balance[0] -= 1,
            '[' => balance[1] += 1,
            ']' => balance[1] -= 1,
            '{' => balance[2] += 1,
            '}' => balance[2] -= 1,
            _ => {}
        }
    }
    balance
}

/// Whether a line of code in `text`, not a comment nor a docstring, uses
/// `name`: "use read_events instead of read_csv_events" in a docstring is
/// no use of read_csv_events.
pub(super) fn code_uses(text: &str, name: &str) -> bool {
    let mut in_docstring = false;
    text.lines().any(|line| {
        let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
        let docstring = in_docstring || quotes > 0;
        if quotes % 2 == 1 {
            in_docstring = !in_docstring;
        }
        !docstring && !is_comment(line) && uses_word(line, name)
    })
}

/// The name `line` declares, if it declares one: a declaring keyword led
/// only by modifiers (`pub fn main`, `export default function f`), so that
/// prose ("the type checker") declares nothing.
pub(super) fn declared_name(line: &str) -> Option<&str> {
    const KEYWORDS: [&str; 9] = ["def", "class", "function", "fn", "func", "struct", "enum", "interface", "type"];
    const MODIFIERS: [&str; 10] =
        ["pub", "crate", "export", "default", "async", "static", "public", "private", "abstract", "unsafe"];
    let mut tokens = words(line);
    let keyword = tokens.find(|word| !MODIFIERS.contains(word))?;
    KEYWORDS.contains(&keyword).then(|| tokens.next()).flatten()
}

/// Whether `line` imports something, in the common languages.
pub(super) fn is_import(line: &str) -> bool {
    let line = line.trim();
    let starts = |word: &str| line.strip_prefix(word).is_some_and(|rest| rest.starts_with(' '));
    starts("import")
        || (starts("from") && line.contains(" import "))
        || (starts("use") && line.ends_with(';'))
        || line.starts_with("#include")
        || (["const", "let", "var"].iter().any(|word| starts(word)) && line.contains("require("))
}

/// The names an import line brings in, with the module's own words
/// (`from x import y as z` gives x, y, z): the file must use one of them.
pub(super) fn import_names(line: &str) -> impl Iterator<Item = &str> {
    const KEYWORDS: [&str; 11] =
        ["import", "from", "as", "use", "const", "let", "var", "require", "include", "crate", "self"];
    words(line).filter(|word| !KEYWORDS.contains(word))
}

/// The line of `text` that declares `name` at the top level.
pub(super) fn declaration<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    text.lines().find(|line| !line.starts_with(char::is_whitespace) && declared_name(line) == Some(name))
}

pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of `text`, as code names them (`in_stock`, `parseDate`).
pub(super) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word(c)).filter(|word| !word.is_empty())
}

pub(super) use crate::text::is_identifier;

/// Whether `text` holds `name` as a whole word.
pub(super) fn uses_word(text: &str, name: &str) -> bool {
    words(text).any(|word| word == name)
}

/// What a command run by the Bash tool printed and the exit code it
/// ended with, from the tool's output; `None` when it ran to no exit (it
/// was refused, timed out or killed).
pub(super) fn exited(output: &str) -> Option<(&str, &str)> {
    let (printed, status) = output.rsplit_once('\n').unwrap_or(("", output));
    Some((printed, status.strip_prefix("exit code ")?))
}

/// Whether `line` is a comment in the common languages.
pub(super) fn is_comment(line: &str) -> bool {
    const OPENERS: [&str; 6] = ["#", "//", "--", "/*", "*", "<!--"];
    let line = line.trim_start();
    OPENERS.iter().any(|opener| line.starts_with(opener))
}

/// The lines of `text` that are not blank, without trailing whitespace.
pub(super) fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim_end).filter(|line| !line.is_empty())
}

/// Whether `a` and `b` hold the same code, blank lines and trailing
/// whitespace aside: a copy, not a change.
pub(super) fn same_code(a: &str, b: &str) -> bool {
    code_lines(a).eq(code_lines(b))
}

/// The fenced blocks of a reply, each without blank lines at its start
/// and without the imports shown before a `...` line; an unclosed last
/// block is taken as far as it goes.
pub(super) fn code_blocks(reply: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in reply.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut current, fence) {
            (None, true) => current = Some(Vec::new()),
            (None, false) => {}
            (Some(_), true) => blocks.extend(current.take().map(tidy_block)),
            (Some(code), false) => code.push(line),
        }
    }
    blocks.extend(current.map(tidy_block));
    blocks.retain(|block| !block.trim().is_empty());
    blocks
}

fn tidy_block(mut code: Vec<&str>) -> String {
    if let Some(at) = code.iter().position(|line| line.trim() == "...") {
        code.drain(..=at);
    }
    while code.first().is_some_and(|line| line.trim().is_empty()) {
        code.remove(0);
    }
    code.join("\n")
}

/// Where the part of a file shown is: its first line (from 1), the number
/// of lines of the whole file, and the name it declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Part {
    pub(super) first: usize,
    pub(super) total: usize,
    pub(super) name: String,
}

/// The lines of `text` that declare the first of `names` it declares (a
/// function, a class, a method) down to the end of that declaration, at
/// most `MAX_PART_LINES`, with the decorators and comments right above it.
pub(super) fn declaring_part(text: &str, names: &[&str]) -> Option<(String, Part)> {
    const MAX_PART_LINES: usize = 120;
    let lines: Vec<&str> = text.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    let (at, name) = lines
        .iter()
        .enumerate()
        .find_map(|(at, line)| declared_name(line.trim_start()).filter(|name| names.contains(name)).map(|n| (at, n)))?;
    let depth = indent(lines[at]);
    let mut start = at;
    while start > 0 && indent(lines[start - 1]) == depth && lines[start - 1].trim_start().starts_with(['@', '#', '/']) {
        start -= 1;
    }
    let mut end = at + 1;
    while end < lines.len() && end - start < MAX_PART_LINES {
        let line = lines[end];
        if !line.trim().is_empty() && indent(line) <= depth {
            // The closing brace of a block in braces is the block's.
            if line.trim_start().starts_with(['}', ')', ']']) {
                end += 1;
            }
            break;
        }
        end += 1;
    }
    while end > at + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let part = Part { first: start + 1, total: lines.len(), name: name.to_string() };
    Some((lines[start..end].join("\n") + "\n", part))
}

/// `text` with `import` added after its last import, or else at the top,
/// below a leading shebang, comments and docstring.
pub(super) fn with_import(text: &str, import: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let top_level_import = |line: &&str| !line.starts_with(char::is_whitespace) && is_import(line);
    let (at, spaced) = match lines.iter().rposition(top_level_import) {
        // A parenthesized import runs on to its closing line.
        Some(last) if lines[last].contains('(') && !lines[last].contains(')') => {
            (lines[last..].iter().position(|line| line.contains(')')).map_or(last, |end| last + end) + 1, false)
        }
        Some(last) => (last + 1, false),
        None => {
            let mut at = 0;
            let mut in_docstring: Option<&str> = None;
            while let Some(line) = lines.get(at) {
                let trimmed = line.trim();
                if let Some(quote) = in_docstring {
                    in_docstring = (!trimmed.contains(quote)).then_some(quote);
                } else if let Some(quote) = ["\"\"\"", "'''"].into_iter().find(|q| trimmed.starts_with(q)) {
                    let closed = trimmed.len() > quote.len() && trimmed[quote.len()..].contains(quote);
                    in_docstring = (!closed).then_some(quote);
                } else if !(trimmed.is_empty() || is_comment(trimmed)) {
                    break;
                }
                at += 1;
            }
            (at, true)
        }
    };
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(import);
    if spaced && lines.get(at).is_some_and(|line| !line.trim().is_empty()) {
        out.push("");
    }
    out.extend(&lines[at..]);
    let mut joined = out.join("\n");
    if text.ends_with('\n') || text.is_empty() {
        joined.push('\n');
    }
    joined
}
