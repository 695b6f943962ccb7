//! The calls of a function a change removes, made what the function
//! returned, as an editor's "inline function" makes them: a deprecated
//! wrapper (`read_csv_events(path)`, whose body warns and returns
//! `read_events(path, fmt="csv")`) removed, its callers switched over to
//! what it wrapped. Asked to do that, the 0.5B copied the caller back.

use std::collections::HashSet;

use super::code_text::{declared_name, declaring_part, is_identifier, is_import, is_word, uses_word};

/// A function whose body, past its docstring, comments and deprecation
/// warnings, is one `return`: what a call of it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Wrapper {
    pub name: String,
    params: Vec<String>,
    returns: String,
}

impl Wrapper {
    /// Whether what it returns calls one of `names`.
    pub(super) fn calls_any(&self, names: &HashSet<&str>) -> bool {
        let code = &self.returns;
        word_spans(code)
            .into_iter()
            .any(|(start, end)| names.contains(&code[start..end]) && code[end..].trim_start().starts_with('('))
    }
}

/// The function `name` that `text` declares, when it is a wrapper whose
/// parameters are plain names (no defaults, no rest parameters).
pub(super) fn wrapper(text: &str, name: &str) -> Option<Wrapper> {
    let (part, _) = declaring_part(text, &[name])?;
    let mut lines = part.lines().skip_while(|line| declared_name(line.trim_start()) != Some(name));
    let head = lines.next()?;
    let open = head.find('(')?;
    let close = open + closing_paren(&head[open..])?;
    let mut params = Vec::new();
    for param in split_arguments(&head[open + 1..close]) {
        // A type (`path: str`) says nothing of what is passed.
        let param = param.split(':').next().unwrap_or_default().trim();
        if !is_identifier(param) {
            return None;
        }
        params.push(param.to_string());
    }
    let body: Vec<&str> = lines
        .map(str::trim)
        .filter(|line| !line.is_empty() && *line != "}" && !line.starts_with("//") && !line.starts_with('#'))
        .collect();
    let statements = statements(without_docstring(&body)?)?;
    let (last, before) = statements.split_last()?;
    // Only warnings go with the wrapper: any other statement is work a
    // call does that its return alone would not.
    let warns = |statement: &String| {
        let callee = statement.split('(').next().unwrap_or_default();
        statement.contains('(') && callee.to_lowercase().contains("warn")
    };
    if !before.iter().all(warns) {
        return None;
    }
    let returns = last.strip_prefix("return ")?.trim().trim_end_matches(';').trim();
    (!returns.is_empty()).then(|| Wrapper { name: name.to_string(), params, returns: returns.to_string() })
}

/// `text` with every call of `wrapper` made what it returns for the
/// arguments passed, and its imports of the wrapper made imports of the
/// names it returned that `declared` (the names of its module) holds
/// and `text` lacked. A call through the module (`events.read_csv_events(p)`)
/// reaches those names the same way. `None` where a call's arguments do
/// not fit the parameters (a keyword argument, too few), an import of it
/// is renamed, or a name it needs cannot be imported where it was.
pub(super) fn inline_calls(text: &str, wrapper: &Wrapper, declared: &HashSet<&str>) -> Option<String> {
    let needed: Vec<&str> = words_outside_strings(&wrapper.returns)
        .into_iter()
        .filter(|word| declared.contains(word) && !uses_word(text, word))
        .collect();
    let mut imported = false;
    let mut lines = Vec::new();
    for line in text.split_inclusive('\n') {
        if is_import(line) && uses_word(line, &wrapper.name) {
            imported = true;
            lines.extend(import_switched(line, &wrapper.name, &needed)?);
        } else {
            lines.push(calls_inlined(line, wrapper, declared)?);
        }
    }
    // Names the wrapper's module declares, unimported: only a call through
    // the module can reach them.
    let qualified_only = !imported && !needed.is_empty();
    if qualified_only && lines.concat().contains(&format!("{}(", wrapper.name)) {
        return None;
    }
    Some(lines.concat())
}

/// One line's calls of `wrapper`, inlined.
fn calls_inlined(line: &str, wrapper: &Wrapper, declared: &HashSet<&str>) -> Option<String> {
    let name = wrapper.name.as_str();
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = find_word(rest, name) {
        let after = &rest[at + name.len()..];
        let declares = rest[..at].trim_end().ends_with("def") || rest[..at].trim_end().ends_with("function");
        if !after.starts_with('(') || declares {
            out.push_str(&rest[..at + name.len()]);
            rest = after;
            continue;
        }
        let close = closing_paren(after)?;
        let arguments = split_arguments(&after[1..close]);
        let keyword = arguments.iter().any(|argument| {
            let head = argument.split('=').next().unwrap_or_default().trim();
            argument.contains('=') && !argument.contains("==") && is_identifier(head)
        });
        if keyword || arguments.len() != wrapper.params.len() {
            return None;
        }
        // `events.read_csv_events(p)`: the names of the wrapper's module
        // are reached through `events.` too.
        let before = &rest[..at];
        let qualifier = before.strip_suffix('.').map(|head| {
            let start = head.rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
            &head[start..]
        });
        let kept = match qualifier {
            Some(qualifier) if !qualifier.is_empty() => &before[..before.len() - qualifier.len() - 1],
            _ => before,
        };
        out.push_str(kept);
        out.push_str(&substituted(wrapper, &arguments, qualifier.filter(|q| !q.is_empty()), declared));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// What `wrapper` returns, its parameters made `arguments` (in brackets
/// where one is more than a name or a literal) and the names of its module
/// led by `qualifier`.
fn substituted(wrapper: &Wrapper, arguments: &[String], qualifier: Option<&str>, declared: &HashSet<&str>) -> String {
    let code = wrapper.returns.as_str();
    let mut out = String::new();
    let mut done = 0;
    for (start, end) in word_spans(code) {
        let word = &code[start..end];
        // `.path` is an attribute, not the parameter.
        let attribute = code[..start].ends_with('.');
        out.push_str(&code[done..start]);
        done = end;
        match wrapper.params.iter().position(|param| param == word).filter(|_| !attribute) {
            Some(i) if is_atom(&arguments[i]) => out.push_str(&arguments[i]),
            Some(i) => out.push_str(&format!("({})", arguments[i])),
            None => {
                if let Some(qualifier) = qualifier.filter(|_| !attribute && declared.contains(word)) {
                    out.push_str(qualifier);
                    out.push('.');
                }
                out.push_str(word);
            }
        }
    }
    out.push_str(&code[done..]);
    out
}

/// An import line without `name`, with `needed` added to its names, or
/// no line where it imported `name` alone and nothing is needed.
fn import_switched(line: &str, name: &str, needed: &[&str]) -> Option<Vec<String>> {
    // `from events import a, b` and `const { a, b } = require('./events')`.
    let (start, end) = match (line.find('{'), line.find('}')) {
        (Some(open), Some(close)) if open < close => (open + 1, close),
        _ => {
            let start = line.find(" import ")? + " import ".len();
            let end = line.trim_end().len();
            (start, end)
        }
    };
    let list = &line[start..end];
    let parenthesized = list.trim_start().starts_with('(');
    let inner = list.trim().trim_start_matches('(').trim_end_matches(')');
    let mut names: Vec<&str> = inner.split(',').map(str::trim).filter(|item| !item.is_empty()).collect();
    if names.iter().any(|item| item.split_whitespace().next() == Some(name) && item.split_whitespace().count() > 1) {
        return None;
    }
    let before = names.len();
    names.retain(|item| *item != name);
    if names.len() == before {
        return None;
    }
    for needed in needed {
        if !names.contains(needed) {
            names.push(needed);
        }
    }
    if names.is_empty() {
        return Some(Vec::new());
    }
    let joined = names.join(", ");
    let list = match (parenthesized, line[start..end].starts_with(' ')) {
        (true, _) => format!("({joined})"),
        (false, true) => format!(" {joined} "),
        (false, false) => joined,
    };
    Some(vec![format!("{}{list}{}", &line[..start], &line[end..])])
}

/// The body's lines past a leading docstring; `None` for one never closed.
fn without_docstring<'a>(body: &'a [&'a str]) -> Option<&'a [&'a str]> {
    let Some(first) = body.first() else { return Some(body) };
    for quotes in ["\"\"\"", "'''"] {
        if let Some(rest) = first.strip_prefix(quotes) {
            if rest.contains(quotes) {
                return Some(&body[1..]);
            }
            let closing = body[1..].iter().position(|line| line.contains(quotes))?;
            return Some(&body[closing + 2..]);
        }
    }
    Some(body)
}

/// Lines joined into statements where brackets span them.
fn statements(lines: &[&str]) -> Option<Vec<String>> {
    let mut statements = Vec::new();
    let mut current = String::new();
    for line in lines {
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
        // Brackets in a string ("use read_events(path)") open nothing.
        if outside_strings(&current)
            .last()
            .is_none_or(|(_, c, depth)| depth == 0 || (depth == 1 && matches!(c, ')' | ']' | '}')))
        {
            statements.push(std::mem::take(&mut current));
        }
    }
    current.is_empty().then_some(statements)
}

/// The characters of `code` outside its string literals, each with its
/// place and how deep in brackets it stands (a bracket counts as inside
/// the pair it opens or closes).
fn outside_strings(code: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let mut quote: Option<char> = None;
    let mut depth = 0;
    code.char_indices().filter_map(move |(at, c)| {
        if let Some(open) = quote {
            if c == open {
                quote = None;
            }
            return None;
        }
        match c {
            '"' | '\'' | '`' => {
                quote = Some(c);
                None
            }
            '(' | '[' | '{' => {
                depth += 1;
                Some((at, c, depth))
            }
            ')' | ']' | '}' => {
                depth -= 1;
                Some((at, c, depth + 1))
            }
            _ => Some((at, c, depth)),
        }
    })
}

/// Where the bracket that opens `text` closes.
fn closing_paren(text: &str) -> Option<usize> {
    outside_strings(text).find(|(_, c, depth)| matches!(c, ')' | ']' | '}') && *depth == 1).map(|(at, _, _)| at)
}

/// The arguments of a call, split at its own commas (not those within
/// brackets or strings).
fn split_arguments(list: &str) -> Vec<String> {
    let commas = outside_strings(list).filter(|(_, c, depth)| *c == ',' && *depth == 0).map(|(at, _, _)| at);
    let mut arguments = Vec::new();
    let mut from = 0;
    for comma in commas.chain(std::iter::once(list.len())) {
        let argument = list[from..comma].trim();
        if !argument.is_empty() {
            arguments.push(argument.to_string());
        }
        from = comma + 1;
    }
    arguments
}

/// Where the words of `code` outside its string literals start and end.
fn word_spans(code: &str) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (at, c, _) in outside_strings(code).filter(|(_, c, _)| is_word(*c)) {
        match spans.last_mut() {
            Some((_, end)) if *end == at => *end = at + c.len_utf8(),
            _ => spans.push((at, at + c.len_utf8())),
        }
    }
    spans
}

/// The words of `code` outside its string literals.
fn words_outside_strings(code: &str) -> Vec<&str> {
    word_spans(code).into_iter().map(|(start, end)| &code[start..end]).collect()
}

/// Where `name` stands as a whole word in `text`.
fn find_word(text: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(name) {
        let at = from + found;
        let before = text[..at].chars().next_back().is_some_and(is_word);
        let after = text[at + name.len()..].chars().next().is_some_and(is_word);
        if !before && !after {
            return Some(at);
        }
        from = at + name.len();
    }
    None
}

/// Whether `argument` stands alone in an expression: a name, a literal, a
/// call or an index, nothing with an operator between parts.
fn is_atom(argument: &str) -> bool {
    outside_strings(argument).all(|(_, c, depth)| depth > 0 || is_word(c) || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENTS: &str = r#""""Reading events."""

import csv
import warnings


def read_events(path, fmt="csv"):
    """Read event records from `path`."""
    with open(path) as fh:
        return list(csv.DictReader(fh))


def read_csv_events(path):
    """Deprecated since 1.4: use read_events(path, fmt="csv")."""
    warnings.warn(
        "read_csv_events() is deprecated; use read_events(path, fmt='csv')",
        DeprecationWarning,
        stacklevel=2,
    )
    return read_events(path, fmt="csv")
"#;

    const REPORT: &str = "import sys\n\nfrom events import attendance, read_csv_events\n\n\ndef load(path):\n    if path.endswith(\".json\"):\n        return []\n    return read_csv_events(path)\n";

    #[test]
    fn a_removed_wrappers_calls_become_what_it_returned() {
        let wrapper = wrapper(EVENTS, "read_csv_events").expect("a wrapper");
        let declared: HashSet<&str> = ["read_events", "attendance"].into();
        assert!(wrapper.calls_any(&declared));
        assert!(!wrapper.calls_any(&["attendance"].into()));
        let inlined = inline_calls(REPORT, &wrapper, &declared).expect("inlined");
        assert!(inlined.contains("from events import attendance, read_events\n"), "{inlined}");
        assert!(inlined.contains("    return read_events(path, fmt=\"csv\")\n"), "{inlined}");
        assert!(!uses_word(&inlined, "read_csv_events"));
        // An argument that is more than a name keeps its own brackets.
        let sum = "from events import read_csv_events\nrows = read_csv_events(base + name)\n";
        let inlined = inline_calls(sum, &wrapper, &declared).expect("inlined");
        assert_eq!(inlined, "from events import read_events\nrows = read_events((base + name), fmt=\"csv\")\n");
        // Through the module, the replacement is reached through it too.
        let qualified = "import events\nrows = events.read_csv_events(p)\n";
        let inlined = inline_calls(qualified, &wrapper, &declared).expect("inlined");
        assert_eq!(inlined, "import events\nrows = events.read_events(p, fmt=\"csv\")\n");
    }

    #[test]
    fn a_function_that_does_more_than_return_or_a_call_that_does_not_fit_is_left_alone() {
        let working = EVENTS.replace("    warnings.warn(", "    log_use(path)\n    warnings.warn(");
        assert_eq!(wrapper(&working, "read_csv_events"), None, "a call that does work");
        let defaulted = EVENTS.replace("def read_csv_events(path):", "def read_csv_events(path, strict=False):");
        assert_eq!(wrapper(&defaulted, "read_csv_events"), None);
        let wrapper = wrapper(EVENTS, "read_csv_events").expect("a wrapper");
        let declared: HashSet<&str> = ["read_events"].into();
        let keyword = REPORT.replace("read_csv_events(path)", "read_csv_events(path=path)");
        assert_eq!(inline_calls(&keyword, &wrapper, &declared), None);
        let aliased = REPORT.replace("read_csv_events\n", "read_csv_events as read\n");
        assert_eq!(inline_calls(&aliased, &wrapper, &declared), None);
    }

    #[test]
    fn a_javascript_wrapper_is_inlined_into_its_requires_callers() {
        let semver = "function satisfies(v, range) {\n  return true;\n}\n\n/** @deprecated */\nfunction atLeast(v, min) {\n  console.warn('atLeast is deprecated');\n  return satisfies(v, '>=' + min);\n}\n";
        let wrapper = wrapper(semver, "atLeast").expect("a wrapper");
        let declared: HashSet<&str> = ["satisfies"].into();
        let loader = "const { atLeast } = require('./semver');\nif (!atLeast(runtime, plugin.needs)) refuse();\n";
        let inlined = inline_calls(loader, &wrapper, &declared).expect("inlined");
        assert_eq!(
            inlined,
            "const { satisfies } = require('./semver');\nif (!satisfies(runtime, '>=' + plugin.needs)) refuse();\n"
        );
    }
}
