//! The request's examples: the code it writes (between backticks, after
//! a doctest's `>>> `, or calls in the prose of a request that marks
//! none), those of it that run as written on the project, and what the
//! request says each gives and should give.

use super::expect::{as_printed, loose, opposite, request_values, shape};
use crate::codemap::Language;

/// The code the request writes, each span with its byte range: between
/// single backticks, after a doctest's `>>> `, or, in a request that marks
/// none, a call written in its prose (see [`prose_calls`]). Fenced blocks
/// are output or files, not code to run.
pub fn code_spans(request: &str) -> Vec<(usize, usize, &str)> {
    let mut spans = Vec::new();
    let mut at = 0;
    for line in request.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(code) = trimmed.strip_prefix(">>> ") {
            let start = at + line.len() - trimmed.len() + 4;
            spans.push((start, start + code.trim_end().len(), code.trim_end()));
        }
        at += line.len();
    }
    let mut from = 0;
    while let Some(open) = request[from..].find('`').map(|i| from + i) {
        if request[open..].starts_with("```") {
            let Some(close) = request[open + 3..].find("```") else { break };
            from = open + 3 + close + 3;
            continue;
        }
        let Some(close) = request[open + 1..].find('`').map(|i| open + 1 + i) else { break };
        spans.push((open + 1, close, &request[open + 1..close]));
        from = close + 1;
    }
    // A request that marks its code marks all of it: a parenthesis in its
    // prose is prose (`gives opts() = { a: true }` beside `prog -ab`).
    if spans.is_empty() {
        let fences: Vec<(usize, usize)> = fenced(request);
        let in_fence = |at: usize| fences.iter().any(|(start, end)| (*start..*end).contains(&at));
        spans.extend(
            prose_calls(request)
                .into_iter()
                .filter(|(start, _)| !in_fence(*start))
                .map(|(start, end)| (start, end, &request[start..end])),
        );
    }
    spans.sort_by_key(|span| span.0);
    spans
}

/// Whether the request writes `text` in its own words, outside the
/// output it quotes (its fenced blocks and indented lines): an error in a
/// pasted test report is what a run printed, not what the user asks for.
pub fn in_prose(request: &str, text: &str) -> bool {
    let fences = fenced(request);
    request.match_indices(text).any(|(at, _)| !fences.iter().any(|(start, end)| (*start..*end).contains(&at)))
}

/// The byte ranges of the request's fenced blocks and indented lines:
/// files and output, where a call is no example.
fn fenced(request: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let (mut at, mut open) = (0, None);
    for line in request.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            match open.take() {
                Some(start) => ranges.push((start, at + line.len())),
                None => open = Some(at),
            }
        } else if open.is_none() && (line.starts_with("    ") || line.starts_with('\t')) && !trimmed.starts_with(">>> ")
        {
            ranges.push((at, at + line.len()));
        }
        at += line.len();
    }
    if let Some(start) = open {
        ranges.push((start, request.len()));
    }
    ranges
}

/// The calls a request writes in its prose, without backticks
/// (`semver.diff('1.2.3', '2.0.0-rc.1') should be …`): a dotted name
/// right before a parenthesis, through the parenthesis that closes it
/// (quotes and nesting respected), and the calls chained after it. Byte
/// ranges; which of them run is for [`runnable`] to tell.
fn prose_calls(request: &str) -> Vec<(usize, usize)> {
    let bytes = request.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    // The end of the parenthesis opened at `open`, quotes respected.
    let closing = |open: usize| -> Option<usize> {
        let (mut depth, mut quote) = (0usize, None);
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match (quote, b) {
                (Some(q), b) if b == q && bytes[i - 1] != b'\\' => quote = None,
                (Some(_), _) => {}
                (None, b'\'' | b'"') => quote = Some(b),
                (None, b'(' | b'[' | b'{') => depth += 1,
                (None, b')' | b']' | b'}') => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return (b == b')').then_some(i + 1);
                    }
                }
                (None, b'\n') if i + 1 < bytes.len() && bytes[i + 1] == b'\n' => return None,
                _ => {}
            }
        }
        None
    };
    let mut calls = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts =
            word(bytes[i]) && !bytes[i].is_ascii_digit() && (i == 0 || !word(bytes[i - 1]) && bytes[i - 1] != b'.');
        if !starts {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len()
            && (word(bytes[end]) || bytes[end] == b'.' && end + 1 < bytes.len() && word(bytes[end + 1]))
        {
            end += 1;
        }
        let mut call_end = None;
        let mut at = end;
        // The call, then each `.name(…)` chained to it.
        while at < bytes.len() && bytes[at] == b'(' {
            let Some(close) = closing(at) else { break };
            call_end = Some(close);
            let mut next = close;
            if next < bytes.len() && bytes[next] == b'.' {
                next += 1;
                while next < bytes.len() && word(bytes[next]) {
                    next += 1;
                }
            }
            if next == close || next >= bytes.len() || bytes[next] != b'(' {
                break;
            }
            at = next;
        }
        match call_end {
            Some(close) => {
                let close = compared(request, close).unwrap_or(close);
                calls.push((i, close));
                i = close;
            }
            None => i = end.max(i + 1),
        }
    }
    calls
}

/// Where a call that ends at `close` is compared with another value
/// (`Version("1.2.0") == Version("1.3.0") is True`), the end of the
/// comparison: what the request reports is what the comparison gives, not
/// what either side is. The other side is a call or a literal.
fn compared(request: &str, close: usize) -> Option<usize> {
    const OPERATORS: [&str; 8] = ["===", "!==", "==", "!=", "<=", ">=", "<", ">"];
    let rest = &request[close..];
    let after_space = rest.trim_start_matches(' ');
    let operator = OPERATORS.iter().find(|op| after_space.starts_with(**op))?;
    let operand_text = after_space[operator.len()..].trim_start_matches(' ');
    // An operator needs a space on each side in prose (`a < b`), so that
    // `f(x)>` in a sentence's punctuation is no comparison.
    if operand_text.len() == after_space.len() - operator.len() || after_space.len() == rest.len() {
        return None;
    }
    let operand = close + rest.len() - operand_text.len();
    let end = match operand_text.as_bytes().first()? {
        quote @ (b'\'' | b'"') => operand + 1 + operand_text[1..].find(*quote as char)? + 1,
        b if b.is_ascii_digit() || *b == b'-' && operand_text[1..].starts_with(|c: char| c.is_ascii_digit()) => {
            let digits = operand_text[1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'));
            let mut end = operand + 1 + digits.unwrap_or(operand_text.len() - 1);
            // A sentence's full stop is no decimal point.
            while request[..end].ends_with('.') {
                end -= 1;
            }
            end
        }
        _ => {
            let (start, end) = prose_calls(operand_text).into_iter().next()?;
            if start != 0 {
                return None;
            }
            operand + end
        }
    };
    Some(end)
}

/// Whether `code` calls: a name right before an opening parenthesis.
fn calls(code: &str) -> bool {
    code.match_indices('(').any(|(at, _)| code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// What the request itself says of a line a check prints (see
/// [`stated`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stated {
    /// It must read this instead.
    Becomes(String),
    /// The request quotes it as it prints now, and no other value for it.
    Quoted,
}

/// What the request writes after the example `spans[at]`, up to the next:
/// from its closing backtick to the next one's opening (a stray backtick
/// would pair with the window's own).
fn after_example<'r>(request: &'r str, spans: &[(usize, usize, &str)], at: usize) -> &'r str {
    let start = spans[at].1 + usize::from(request[spans[at].1..].starts_with('`'));
    let end = spans.get(at + 1).map_or(request.len(), |next| next.0 - usize::from(request[..next.0].ends_with('`')));
    &request[start..end.max(start)]
}

/// What the request says of the line `statement` prints, read after the
/// example the statement runs and before the next. Where it writes the
/// line as it prints now and exactly one other value of its shape, as a
/// report writes what an example gives and what it should give, the line
/// must become that value. A boolean has one other value, but a request
/// may quote one as the right result beside a wrong one: only the `sole`
/// line of a check, the one example of a report, is the symptom by
/// itself. Where it quotes the line alone, [`Stated::Quoted`]; `None`
/// where it does not speak of it.
pub fn stated(request: &str, statement: &str, line: &str, sole: bool) -> Option<Stated> {
    let line = line.trim();
    if line.chars().count() < 2 {
        return None;
    }
    let squeezed = |code: &str| code.split_whitespace().collect::<String>();
    let statement = squeezed(statement);
    let spans: Vec<(usize, usize, &str)> = code_spans(request).into_iter().filter(|(_, _, code)| calls(code)).collect();
    let at = spans.iter().position(|(_, _, code)| statement.contains(&squeezed(code)))?;
    let window = after_example(request, &spans, at);
    if let Some(other) = opposite(line) {
        let quoted = window.split(|c: char| !c.is_alphanumeric()).any(|word| word.eq_ignore_ascii_case(line));
        return quoted.then(|| if sole { Stated::Becomes(other.to_string()) } else { Stated::Quoted });
    }
    let mut now = false;
    let mut others: Vec<String> = Vec::new();
    for value in request_values(window).iter().map(|v| as_printed(v, line)).filter(|v| shape(v) == shape(line)) {
        match loose(&value) == loose(line) {
            true => now = true,
            false if !others.iter().any(|o| loose(o) == loose(&value)) => others.push(value),
            false => {}
        }
    }
    match (now, others.as_slice()) {
        (true, [other]) => Some(Stated::Becomes(other.clone())),
        (true, []) => Some(Stated::Quoted),
        _ => None,
    }
}

/// What the request says the example `script` runs should give, where
/// that example stops on `error` now: the values it writes after the
/// example (up to the next), less the example's own inputs, the error's
/// words, prose and values that tell little. A report of a crash often
/// says what the call should give once it runs ("raises `ValueError: …`;
/// … giving `(1.5, 2.25)`"); a run that merely stops raising may give
/// anything. `crash_line`: the script's line the run stopped on, where
/// known, to tell which example it is. The example, and the values in the
/// order written; `None` where the script runs no example of the request.
pub fn results_after_crash<'r>(
    language: Language,
    request: &'r str,
    script: &str,
    crash_line: Option<&str>,
    error: &str,
) -> Option<(&'r str, Vec<String>)> {
    /// Options offered at most: each is a word of a model's pick.
    const MAX_RESULTS: usize = 5;
    let squeezed = |code: &str| code.split_whitespace().collect::<String>();
    let spans: Vec<(usize, usize, &str)> = code_spans(request).into_iter().filter(|(_, _, code)| calls(code)).collect();
    let run: Vec<usize> = (0..spans.len()).filter(|&i| squeezed(script).contains(&squeezed(spans[i].2))).collect();
    let crashed = crash_line.and_then(|line| run.iter().find(|&&i| squeezed(line).contains(&squeezed(spans[i].2))));
    let &at = crashed.or(run.first())?;
    let window = after_example(request, &spans, at);
    let (inputs, error) = (loose(spans[at].2), loose(error));
    // Three words in a row are a sentence, not a value.
    let prose = |value: &str| {
        value
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(3)
            .any(|w| w.iter().all(|word| word.chars().all(char::is_alphabetic)))
    };
    let mut results: Vec<String> = Vec::new();
    // What is no value, whose parts (`{0}` of `{0} {1}`) are none either.
    let mut set_aside: Vec<String> = Vec::new();
    let mut values = request_values(window);
    values.reverse();
    while let Some(value) = values.pop() {
        // A remark in parentheses is prose that may hold values of its own.
        if prose(&value) {
            if value.starts_with('(') && value.ends_with(')') {
                values.extend(request_values(&value[1..value.len() - 1]).into_iter().rev());
            }
            continue;
        }
        // A comparison says what its left side gives (`.fixed == (3.14,)`).
        if let Some((_, right)) = value.split_once("==") {
            values.push(right.trim_start_matches('=').trim().to_string());
            continue;
        }
        // A result reads as a program prints one: a number, a string, a
        // bracketed literal. A name (`LFUCache`), code (`c[1]`) or an aside
        // in parentheses (`(space)`) is the report's words.
        let literal = value.starts_with(|c: char| c.is_ascii_digit() || "-+'\"[({".contains(c));
        let aside = value.starts_with('(') && value[1..value.len() - 1].chars().all(char::is_alphabetic);
        // One value of the language, as a program prints one: not a
        // pattern or other input written beside it (`{0} {1}`, `{:f} {:f}`).
        let one_value =
            crate::codemap::tree(language, &format!("({value})\n")).is_some_and(|t| !t.root_node().has_error());
        if !one_value {
            set_aside.push(loose(&value));
        }
        if !literal || aside || !one_value || set_aside.iter().any(|other| other.contains(&loose(&value))) {
            continue;
        }
        let value = as_printed(&value, "");
        let key = loose(&value);
        // An error the request quotes is what happens, not what the example
        // should give once it runs (`raises KeyError: 3; I expected (1, 1)`).
        let raised = super::reading::reported_error(&value).is_some();
        let told = key.chars().count() < 2 || inputs.contains(&key) || error.contains(&key) || raised;
        // A part of a value taken (`{0}` of `{0} {1}`) is no result apart.
        if told || super::expect::tells_little(&value) || results.iter().any(|r| loose(r).contains(&key)) {
            continue;
        }
        results.push(value);
    }
    results.truncate(MAX_RESULTS);
    Some((spans[at].2, results))
}

/// Functions of the runtime a request's example may wrap a project's call
/// in (`list(windowed(…))`, `JSON.stringify(parse(…))`).
fn builtin(language: Language, name: &str) -> bool {
    match language {
        Language::Python => matches!(
            name,
            "list" | "tuple" | "set" | "dict" | "sorted" | "len" | "str" | "repr" | "int" | "range" | "sum" | "next"
        ),
        Language::JavaScript => matches!(name, "JSON" | "String" | "Number" | "Array" | "Object" | "Math"),
        _ => false,
    }
}

/// The calls `request` writes as code that a script can run as written
/// (`semver.inc('1.2.0', 'minor')`, a doctest's `>>> list(windowed(…))`,
/// `even, odd = partition(…)`): each one expression of `language` that
/// calls, or assigns a call's result to names, and starts every chain of
/// calls at a name the project has (`known`: its package or a definition)
/// or the runtime's own, at least one the project's. In the order written,
/// without twins. An example that needs the statements before it
/// (`program.opts()`) names what is not known.
pub fn request_examples(language: Language, request: &str, known: impl Fn(&str) -> bool) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    for (_, _, span) in code_spans(request) {
        let code = span.trim().trim_end_matches(';').trim();
        if code.is_empty() || code.contains('\n') || examples.iter().any(|e| e.code == code) {
            continue;
        }
        examples.extend(runnable(language, code, &known));
    }
    // A call written with nothing between its parentheses where another
    // example calls it with arguments names the function (`findall()`
    // ignores the flag that `findall("x", s, flag=True)` passes).
    let called_with_arguments = |name: &str| {
        examples.iter().any(|e| e.code.contains(&format!("{name}(")) && !e.code.contains(&format!("{name}()")))
    };
    let mentions: Vec<String> = examples
        .iter()
        .filter_map(|e| e.code.strip_suffix("()").filter(|name| !name.contains('(') && called_with_arguments(name)))
        .map(|name| format!("{name}()"))
        .collect();
    examples.retain(|e| !mentions.contains(&e.code));
    examples
}

/// The command-line options the request writes as code (`--dry-run`,
/// `prog -abc`, `.requiredOption('-c, --config <path>')`): the words of its
/// code spans that are a dash or two and a name, in order, without twins.
pub fn command_line_options(request: &str) -> Vec<&str> {
    let mut options: Vec<&str> = Vec::new();
    for (_, _, span) in code_spans(request) {
        let words = span.split(|c: char| c.is_whitespace() || "'\"`,()[]{}=".contains(c));
        for word in words {
            let name = word.trim_start_matches('-');
            let dashes = word.len() - name.len();
            let named = name.starts_with(|c: char| c.is_ascii_alphabetic())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            if (1..=2).contains(&dashes) && named && !options.contains(&word) {
                options.push(word);
            }
        }
    }
    options
}

/// A call the request writes that a script can run as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    pub code: String,
    /// The names it assigns, each printed with its name after it runs;
    /// none where it is an expression, printed itself.
    pub assigns: Vec<String>,
}

/// `code` as an example, where it is one call expression, or one that
/// assigns a call's result to names, whose chains all start at a name
/// the project or the runtime has (see [`request_examples`]).
fn runnable(language: Language, code: &str, known: &impl Fn(&str) -> bool) -> Option<Example> {
    let tree = crate::codemap::tree(language, code)?;
    let root = tree.root_node();
    let mut cursor = root.walk();
    let statements: Vec<tree_sitter::Node> = root.named_children(&mut cursor).collect();
    let ([statement], false) = (statements.as_slice(), root.has_error()) else { return None };
    // What the statement computes, and what it assigns that to.
    let (expression, assigned) = match statement.kind() {
        "expression_statement" => {
            let expression = statement.named_child(0)?;
            match expression.kind() {
                "assignment" | "assignment_expression" => {
                    (expression.child_by_field_name("right")?, expression.child_by_field_name("left"))
                }
                kind if kind.contains("assignment") => return None,
                _ => (expression, None),
            }
        }
        "lexical_declaration" | "variable_declaration" => {
            let mut cursor = statement.walk();
            let declarators: Vec<tree_sitter::Node> = statement.named_children(&mut cursor).collect();
            let [declarator] = declarators.as_slice() else { return None };
            (declarator.child_by_field_name("value")?, declarator.child_by_field_name("name"))
        }
        _ => return None,
    };
    let mut assigns = Vec::new();
    let mut stack: Vec<tree_sitter::Node> = assigned.into_iter().collect();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                assigns.insert(0, code[node.byte_range()].to_string())
            }
            "pattern_list" | "tuple_pattern" | "list_pattern" | "array_pattern" | "object_pattern" => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
            // An item or an attribute set is no name to print.
            _ => return None,
        }
    }
    // The name each call or member chain starts at.
    let mut starts: Vec<String> = Vec::new();
    let mut calls = false;
    let mut stack = vec![expression];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "call" | "call_expression" | "new_expression") {
            calls = true;
            let mut callee = node.child_by_field_name("function").or_else(|| node.child_by_field_name("constructor"));
            while let Some(inner) = callee {
                match inner.kind() {
                    "identifier" => {
                        starts.push(code[inner.byte_range()].to_string());
                        break;
                    }
                    "attribute" | "member_expression" => {
                        callee = inner.child_by_field_name("object");
                    }
                    "call" | "call_expression" => callee = inner.child_by_field_name("function"),
                    _ => break,
                }
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    let runs = calls
        && starts.iter().all(|name| known(name) || builtin(language, name))
        && starts.iter().any(|name| known(name));
    runs.then(|| Example { code: code.to_string(), assigns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_options_a_request_writes_are_read_from_its_code() {
        let request = "With `program.option('--dry-run')` and `--dry-run` on the command line, `prog -abc` gives \
`{ a: true }`; `.requiredOption('-c, --config <path>')` too. `x - 1` and `f(-2)` are no options.";
        assert_eq!(command_line_options(request), ["--dry-run", "-abc", "-c", "--config"]);
        assert!(command_line_options("`semver.inc('1.2.0', 'minor')` returns '1.2.0'").is_empty());
    }

    #[test]
    fn what_an_example_gives_and_should_give_is_read_from_the_request() {
        let request = "`semver.inc('1.2.0', 'minor')` returns '1.2.0' instead of '1.3.0'. \
`semver.inc('1.2.3', 'minor')` gives '1.3.0' as it should.";
        let statement = "console.log(semver.inc('1.2.0', 'minor'));";
        assert_eq!(stated(request, statement, "1.2.0", false), Some(Stated::Becomes("1.3.0".into())));
        // The second example's line is quoted alone: what it gives, no other.
        assert_eq!(stated(request, "console.log(semver.inc('1.2.3','minor'))", "1.3.0", false), Some(Stated::Quoted));
        assert_eq!(stated(request, "console.log(other())", "1.2.0", false), None);
        let doctest = ">>> from more_itertools import collapse\n>>> list(collapse([[1, [2]], [3]], levels=1))\n\
[[1, [2]], [3]]\n\nI expected one level of nesting to be removed: [1, [2], 3].";
        let statement = "print(_value(list(collapse([[1, [2]], [3]], levels=1))))";
        assert_eq!(stated(doctest, statement, "[[1, [2]], [3]]", false), Some(Stated::Becomes("[1, [2], 3]".into())));
        // A boolean's quoted result may be the right one beside a wrong one;
        // a report's one example is the wrong one.
        let request = "`satisfies('0.3.0', '^0.2.3')` is true, so my range lets in 0.3.0.";
        let statement = "print(satisfies('0.3.0', '^0.2.3'))";
        assert_eq!(stated(request, statement, "true", false), Some(Stated::Quoted));
        assert_eq!(stated(request, statement, "true", true), Some(Stated::Becomes("false".into())));
        assert_eq!(stated("`ok(1)` fails", "print(ok(1))", "true", true), None, "the request quotes no result");
    }

    #[test]
    fn what_a_crashing_example_should_give_is_read_after_it() {
        let request = "Numbered fields with a type don't work: `parse.parse('{0:f} {1:f}', '1.5 2.25')` raises \
`ValueError: format spec ':f' not recognised`. Plain `{0} {1}` works, so I'd expect it to behave the same \
(the pattern should be the same as for `{:f} {:f}`, giving `(1.5, 2.25)`).";
        let script = "import parse\nprint(parse.parse('{0:f} {1:f}', '1.5 2.25'))";
        let error = "ValueError: format spec ':f' not recognised";
        let (example, results) = results_after_crash(Language::Python, request, script, None, error).unwrap();
        assert_eq!(example, "parse.parse('{0:f} {1:f}', '1.5 2.25')");
        // The patterns written beside the example are its inputs' kind, no value it gives.
        assert_eq!(results, ["(1.5, 2.25)"]);
        // The example's inputs, the error's words and the prose are no result.
        for told in
            ["1.5 2.25", ":f", "1.5", "(the pattern should be the same as for `{:f} {:f}`, giving `(1.5, 2.25)`)"]
        {
            assert!(!results.contains(&told.to_string()), "{told} in {results:?}");
        }
        // Each example's window is its own: the crash line tells which.
        let two = "`f(1)` raises `KeyError: 1`, I expected `[1]`. And `g(2)` raises `KeyError: 2`, expected `[2, 2]`.";
        let script = "print(f(1))\nprint(g(2))";
        let results =
            |two, script, line, error| results_after_crash(Language::Python, two, script, line, error).unwrap().1;
        assert_eq!(results(two, script, Some("print(g(2))"), "KeyError: 2"), ["[2, 2]"]);
        assert_eq!(results(two, script, None, "KeyError: 1"), ["[1]"]);
        // Another error the request quotes is no result either.
        let quoted = "`c.popitem()` raises `KeyError: 3`; I expected `(1, 1)`. With `LFUCache`, `c[1]` (space) too.";
        assert_eq!(results(quoted, "print(c.popitem())", None, "ValueError: too large"), ["(1, 1)"]);
        // What a comparison says the example's result holds.
        let compared = "`parse('{:+.7f}', '3.1415926')` raises `ValueError: +`; it should parse like `{:.7f}` and \
give `.fixed == (3.1415926,)`.";
        let script = "print(parse('{:+.7f}', '3.1415926'))";
        assert_eq!(results(compared, script, None, "ValueError: +"), ["(3.1415926,)"]);
        assert!(
            results_after_crash(Language::Python, two, "print(h(3))", None, "KeyError: 3").is_none(),
            "no example of the request runs"
        );
    }

    #[test]
    fn an_error_in_the_output_a_request_pastes_is_not_in_its_prose() {
        let request = "These tests fail:\n\n```\nTraceback (most recent call last):\nTypeError: 'NoneType' object is \
not subscriptable\n```\n\n`parse('{:^2S}', 'foo')` returns None.";
        assert!(!in_prose(request, "TypeError"));
        assert!(in_prose(request, "returns None"));
        assert!(in_prose("It must throw `TypeError: argument must be a string`.", "TypeError"));
    }

    #[test]
    fn the_request_s_own_calls_are_read_where_they_run_as_written() {
        let known = |name: &str| matches!(name, "semver" | "diff" | "windowed" | "collapse");
        let request = "`semver.diff('1.2.3', '2.0.0-rc.1')` should be 'premajor', but it returns 'major'. Same with \
`diff('1.2.3', '1.3.0-beta.0')`; `semver.diff('1.2.3', '2.0.0-rc.1')` again. With `program.opts()` and \
`semver` and `len([1])` nothing runs.";
        let codes = |examples: Vec<Example>| examples.into_iter().map(|e| e.code).collect::<Vec<_>>();
        assert_eq!(
            codes(request_examples(Language::JavaScript, request, known)),
            ["semver.diff('1.2.3', '2.0.0-rc.1')", "diff('1.2.3', '1.3.0-beta.0')"]
        );
        let doctest = ">>> from more_itertools import collapse\n>>> list(collapse([[1, [2]], [3]], levels=1))\n\
[[1, [2]], [3]]\n\n```\n`windowed(x, 2)` in a fence is output\n```\nand `list(windowed([1, 2, 3], 2))`.";
        assert_eq!(
            codes(request_examples(Language::Python, doctest, known)),
            ["list(collapse([[1, [2]], [3]], levels=1))", "list(windowed([1, 2, 3], 2))"]
        );
        // What an example assigns is printed by name; an item set is not.
        let assigning = "`even, odd = collapse(f, x)` and `rows[0] = collapse(x)`";
        let found = request_examples(Language::Python, assigning, known);
        assert_eq!(
            found,
            [Example { code: "even, odd = collapse(f, x)".into(), assigns: vec!["even".into(), "odd".into()] }]
        );
    }

    #[test]
    fn calls_written_in_the_request_s_prose_are_its_examples_too() {
        let known = |name: &str| matches!(name, "semver" | "diff" | "windowed");
        let request = "semver.diff('1.2.3', '2.0.0-rc.1') should be 'premajor' (the newer one is a prerelease), but \
it returns 'major'. Same with diff('1.2.3', '1.3.0-beta.0'), which gives 'minor' and not 'preminor'. Also \
windowed([1, (2)], 3).\n\n    windowed(x)  # indented: a file's line\n```\ndiff(1, 2)\n```\nnot (a) call";
        let codes: Vec<String> =
            request_examples(Language::JavaScript, request, known).into_iter().map(|e| e.code).collect();
        assert_eq!(
            codes,
            ["semver.diff('1.2.3', '2.0.0-rc.1')", "diff('1.2.3', '1.3.0-beta.0')", "windowed([1, (2)], 3)"]
        );
        // What the prose says each gives, read as for a span.
        let first = stated(request, "console.log(semver.diff('1.2.3', '2.0.0-rc.1'))", "major", false);
        assert_eq!(first, Some(Stated::Becomes("premajor".into())));
        let second = stated(request, "console.log(diff('1.2.3', '1.3.0-beta.0'))", "minor", false);
        assert_eq!(second, Some(Stated::Becomes("preminor".into())));
        // A comparison of calls is one example: the request reports what it gives.
        let known = |name: &str| name == "Version";
        let request = "Version(\"1.2.0\") == Version(\"1.3.0\") is True, so no update. Version(\"2.0\") < 3. \
Version(\"1\") > it.";
        let codes: Vec<String> =
            request_examples(Language::Python, request, known).into_iter().map(|e| e.code).collect();
        assert_eq!(codes, ["Version(\"1.2.0\") == Version(\"1.3.0\")", "Version(\"2.0\") < 3", "Version(\"1\")"]);
        let statement = "print(Version(\"1.2.0\") == Version(\"1.3.0\"))";
        assert_eq!(stated(request, statement, "True", true), Some(Stated::Becomes("False".into())));
        // A parenthesis left open is no call.
        assert!(request_examples(Language::JavaScript, "semver.diff('1.2.3' is odd", known).is_empty());
        // Where the request marks its code, its prose holds none.
        let marked = "`prog -abc` gives opts() = { a: true } and windowed([1], 1) too";
        assert!(request_examples(Language::JavaScript, marked, known).is_empty());
        assert_eq!(stated(marked, "console.log(program.opts())", "{ a: true, c: true }", true), None);
        // A call without arguments beside one with them names the function.
        let known = |name: &str| name == "parse";
        let mention = "`parse.findall()` ignores the flag: `parse.findall(\"x({})x\", \"X(hi)X\", case_sensitive=True)` \
finds one; `parse.compile()` has none.";
        let codes: Vec<String> =
            request_examples(Language::Python, mention, known).into_iter().map(|e| e.code).collect();
        assert_eq!(codes, ["parse.findall(\"x({})x\", \"X(hi)X\", case_sensitive=True)", "parse.compile()"]);
    }
}
