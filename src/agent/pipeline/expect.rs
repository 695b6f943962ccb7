//! What a printing check must print, held to the values the request writes.
//!
//! A report of a wrong result quotes it and, most often, the right one:
//! "returns '1.2.0' instead of '1.3.0'", "gives `[(1, 2, 3), (3, 4, 5)]`
//! but should give …". Asked to write the expected output freely, a small
//! model copies what the code prints now or invents a third value; asked
//! which of the request's own values a printed line must read, it is held
//! to what the user wrote. A line is asked about when the request quotes
//! it (the user spoke of it) or when it is a boolean, whose one
//! alternative needs no quoting.

use crate::codemap::Language;

/// Values longer than this are prose, not a value.
const MAX_VALUE_CHARS: usize = 200;
/// Options offered for one line at most, the line as it is included.
const MAX_OPTIONS: usize = 6;

/// The values `request` writes: quoted strings, bracketed literals, the
/// spans between backticks, numbers and versions, literal words (`true`,
/// `None`), and the lines of its indented or fenced blocks (an output
/// shown as the program prints it). In the order written, without twins.
pub fn request_values(request: &str) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    let mut push = |value: &str| {
        let value = value.trim();
        if !value.is_empty() && value.chars().count() <= MAX_VALUE_CHARS && !values.iter().any(|v| v == value) {
            values.push(value.to_string());
        }
    };
    let mut in_fence = false;
    for line in request.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let indented = line.starts_with("    ") || line.starts_with('\t');
        if in_fence || indented {
            let code = line.trim();
            // A doctest's or a shell's input is code; what follows it is output.
            if !code.starts_with(">>>") && !code.starts_with("...") && !code.starts_with('$') {
                push(code);
            }
        }
    }
    let chars: Vec<char> = request.chars().collect();
    let word_char = |c: char| c.is_alphanumeric() || c == '_';
    // The closing backtick of the span being read: a span's values (the
    // quoted arguments of a call) are read too.
    let mut code_end: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        if code_end.is_some_and(|end| i > end) {
            code_end = None;
        }
        let c = chars[i];
        let after_word = i > 0 && word_char(chars[i - 1]);
        match c {
            '`' if code_end == Some(i) => code_end = None,
            '`' => {
                if let Some(end) = (i + 1..chars.len()).find(|&j| chars[j] == '`') {
                    // A call (`inc('1.2.0', 'minor')`) is code, not a value;
                    // its quoted arguments are read as the span is.
                    let span = &chars[i + 1..end];
                    if !span.windows(2).any(|w| word_char(w[0]) && w[1] == '(') {
                        push(&span.iter().collect::<String>());
                    }
                    code_end = Some(end);
                }
            }
            // An apostrophe (`error's`) sits after a letter; a quote does not.
            '\'' | '"' if !after_word => {
                let end = (i + 1..chars.len())
                    .take_while(|&j| chars[j] != '\n')
                    .find(|&j| chars[j] == c && !chars.get(j + 1).is_some_and(|n| word_char(*n)));
                if let Some(end) = end {
                    push(&chars[i + 1..end].iter().collect::<String>());
                    i = end;
                }
            }
            // A call's parentheses (`f(x)`) hold arguments, not a value.
            '[' | '(' | '{' if !after_word => {
                if let Some(end) = closing(&chars, i) {
                    push(&chars[i..=end].iter().collect::<String>());
                    i = end;
                }
            }
            _ if (c.is_ascii_digit() || c == '-') && !after_word => {
                let end = (i..chars.len())
                    .take_while(|&j| chars[j].is_alphanumeric() || matches!(chars[j], '.' | '-' | '+' | '_'))
                    .last()
                    .unwrap_or(i);
                let token: String = chars[i..=end].iter().collect();
                let token = token.trim_end_matches(['.', '-']);
                if token.chars().any(|c| c.is_ascii_digit())
                    && token.chars().next().is_some_and(|c| c != '-' || token.len() > 1)
                {
                    push(token);
                }
                i = end;
            }
            _ if c.is_alphabetic() && !after_word => {
                let end = (i..chars.len()).take_while(|&j| word_char(chars[j])).last().unwrap_or(i);
                let word: String = chars[i..=end].iter().collect();
                if opposite(&word).is_some() || matches!(word.as_str(), "None" | "null" | "undefined" | "nil" | "NaN") {
                    push(&word);
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    values
}

/// Where the bracket opened at `open` closes, on the same line.
fn closing(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (j, &c) in chars.iter().enumerate().skip(open) {
        if c == '\n' || j - open > MAX_VALUE_CHARS {
            return None;
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' if j > 0 && !chars[j - 1].is_alphanumeric() => quote = Some(c),
                '[' | '(' | '{' => depth += 1,
                ']' | ')' | '}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            },
        }
    }
    None
}

/// The other boolean, in the same spelling.
fn opposite(word: &str) -> Option<&'static str> {
    match word {
        "true" => Some("false"),
        "false" => Some("true"),
        "True" => Some("False"),
        "False" => Some("True"),
        _ => None,
    }
}

/// A value as a printed line would show it: a quoted string's quotes go
/// (programs print strings bare), unless the line itself is quoted.
fn as_printed(value: &str, line: &str) -> String {
    let quoted =
        |s: &str| s.len() >= 2 && (s.starts_with('\'') && s.ends_with('\'') || s.starts_with('"') && s.ends_with('"'));
    if quoted(value) && !quoted(line) { value[1..value.len() - 1].to_string() } else { value.to_string() }
}

/// A line as the check compares it: no blanks, one kind of quote.
/// `[1,[2],3]` written by the user is `[1, [2], 3]` printed.
pub fn loose(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).map(|c| if c == '"' { '\'' } else { c }).collect()
}

/// What kind of value a text is, by its first character: a number, a
/// list, a tuple, a map, a string, a word.
fn shape(text: &str) -> Option<char> {
    let first = text.trim().chars().next()?;
    Some(match first {
        '0'..='9' | '-' | '+' => '0',
        c if c.is_alphabetic() || c == '_' => 'a',
        c => c,
    })
}

/// The lines `line` may read once the request is done where the request
/// quotes it whole in its prose and writes elsewhere a value one or two
/// characters off one of its words: the line first, then with that word
/// made the value (`(Did you mean ---color?)` beside `--color`). A report
/// quotes the wrong output as the program printed it and names the right
/// value apart. `None` where the request does neither.
pub fn near_miss_options(line: &str, printed: &str, request: &str, values: &[String]) -> Option<Vec<String>> {
    /// Characters a value may differ by from the word it stands for.
    const MAX_EDITS: usize = 2;
    const MIN_CHARS: usize = 4;
    let line = line.trim();
    if line.chars().count() < MIN_CHARS || !request.lines().any(|quoted| loose(quoted) == loose(line)) {
        return None;
    }
    let word_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    let words = |text: &str| -> Vec<String> { text.split(|c: char| !word_char(c)).map(str::to_string).collect() };
    // The words of the output the request quotes are what the program
    // printed (`--colr`, what the user typed): no value for another word.
    let quoted: Vec<String> = request
        .lines()
        .filter(|quoted| printed.lines().any(|p| loose(p) == loose(quoted) && !p.trim().is_empty()))
        .flat_map(words)
        .collect();
    let value_of = |v: &String| v.trim_matches(['`', '\'', '"']).to_string();
    let written = |word: &str| values.iter().any(|v| value_of(v) == word);
    let mut options = vec![line.to_string()];
    // A word the request writes itself stays.
    for word in line.split(|c: char| !word_char(c)).filter(|w| w.chars().count() >= MIN_CHARS && !written(w)) {
        // The values nearest the word, as a spelling checker offers them.
        let candidates: Vec<String> = values.iter().map(value_of).filter(|v| !quoted.contains(v)).collect();
        let near: Vec<(usize, &str)> = candidates
            .iter()
            .map(String::as_str)
            .filter(|value| *value != word && value.chars().all(word_char))
            .map(|value| (edits(word, value), value))
            .filter(|(edits, _)| *edits <= MAX_EDITS)
            .collect();
        let nearest = near.iter().map(|(edits, _)| *edits).min().unwrap_or_default();
        for (_, value) in near.into_iter().filter(|(edits, _)| *edits == nearest) {
            let option = line.replacen(word, value, 1);
            if !options.contains(&option) && options.len() < MAX_OPTIONS {
                options.push(option);
            }
        }
    }
    (options.len() > 1).then_some(options)
}

/// The characters to insert, drop or change to make `a` into `b`.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(x != *y));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The lines `line` may read once the request is done, itself first:
/// the request's other values of its shape, and for a boolean the other
/// one. `None` when the request does not speak of the line: it neither
/// quotes it nor is it a boolean.
pub fn line_options(line: &str, values: &[String]) -> Option<Vec<String>> {
    let line = line.trim();
    let boolean = opposite(line);
    // A one-character line (`1`, `0`) matches a value of the request by
    // chance as often as not: it is no sign the request speaks of it.
    let quoted = line.chars().count() > 1 && values.iter().any(|v| loose(&as_printed(v, line)) == loose(line));
    if !quoted && boolean.is_none() {
        return None;
    }
    let mut options = vec![line.to_string()];
    let mut add = |option: String| {
        if !options.iter().any(|o| loose(o) == loose(&option)) && options.len() < MAX_OPTIONS {
            options.push(option);
        }
    };
    if let Some(other) = boolean {
        add(other.to_string());
    }
    for value in values {
        let value = as_printed(value, line);
        if shape(&value) == shape(line) {
            add(value);
        }
    }
    (options.len() > 1).then_some(options)
}

/// Whether `line` is a top-level statement that prints, as a script of
/// `language` prints a line.
fn prints_a_line(language: Language, line: &str) -> bool {
    let calls: &[&str] = match language {
        Language::Python => &["print("],
        Language::JavaScript | Language::TypeScript => &["console.log("],
        Language::Bash => &["echo ", "printf "],
        _ => &[],
    };
    calls.iter().any(|call| line.starts_with(call))
}

/// The statement of `script` that printed each line of `output`, where
/// the script is a row of top-level print statements, one line each, as
/// many as the lines printed; `None` where it is not (a loop, a helper,
/// a value printed over several lines).
pub fn printing_statements(language: Language, script: &str, output: &str) -> Option<Vec<String>> {
    let statements: Vec<String> = script
        .lines()
        .filter(|line| prints_a_line(language, line))
        .map(|line| without_trailing_comment(language, line).to_string())
        .collect();
    let printed = output.lines().count();
    (!statements.is_empty() && statements.len() == printed).then_some(statements)
}

/// A statement without the comment after its last closing parenthesis
/// (a parenthesis inside the comment leaves it as it is): a small model
/// comments each print with what it believes it prints (`print(f(x))  #
/// 3`), which it then reads back as the code's own answer.
pub fn without_trailing_comment(language: Language, line: &str) -> &str {
    let marker = match language {
        Language::Python | Language::Bash => "#",
        Language::JavaScript | Language::TypeScript => "//",
        _ => return line,
    };
    let Some(close) = line.rfind(')') else { return line };
    let rest = &line[close + 1..];
    let comment = rest.trim_start().trim_start_matches(';').trim_start();
    if comment.starts_with(marker) {
        return line[..close + 1 + (rest.len() - rest.trim_start().len())].trim_end().trim_end_matches(';');
    }
    line
}

/// The probe's script without the print statements and the top-level
/// calls the check also has (comments and a closing `;` aside): the probe
/// guards the code's other uses, and a small model copies the request's
/// own example into it (`console.log(f(x))`, or `runExample(['-abc'])` of
/// a helper that prints), which the fix must change.
pub fn without_shared_prints(language: Language, probe: &str, check: &str) -> String {
    // Without qualifiers: the check's `diff(…)`, with the package's names
    // in scope, is the probe's `semver.diff(…)`.
    let key = |line: &str| unqualified(without_trailing_comment(language, line).trim().trim_end_matches(';'));
    let runs_an_example =
        |line: &&str| prints_a_line(language, line) || is_bare_call(&key(line)) && !line.starts_with([' ', '\t']);
    let shared: Vec<String> = check.lines().filter(runs_an_example).map(key).collect();
    probe.lines().filter(|line| !(runs_an_example(line) && shared.contains(&key(line)))).collect::<Vec<_>>().join("\n")
}

/// `code` with each `name.` before a name dropped (`console.log(semver.diff(x))`
/// reads `log(diff(x))`): a key under which two spellings of one call meet.
fn unqualified(code: &str) -> String {
    let mut key = String::with_capacity(code.len());
    let mut name = String::new();
    for c in code.chars() {
        match c {
            c if c.is_alphanumeric() || c == '_' || c == '$' => name.push(c),
            '.' if name.starts_with(|c: char| !c.is_ascii_digit()) => name.clear(),
            c => {
                key.push_str(&std::mem::take(&mut name));
                key.push(c);
            }
        }
    }
    key + &name
}

/// A statement that only calls (`run(['-ab'])`, `check.run()`): no
/// assignment, declaration or import, which a script's later lines need.
fn is_bare_call(statement: &str) -> bool {
    let Some(open) = statement.find('(') else { return false };
    let head = &statement[..open];
    statement.ends_with(')')
        && !head.is_empty()
        && head.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
        && !matches!(head, "if" | "for" | "while" | "switch" | "return" | "print" | "assert")
}

/// `script` with the trailing comments of its print statements dropped.
pub fn uncommented(language: Language, script: &str) -> String {
    script
        .lines()
        .map(|line| match prints_a_line(language, line) {
            true => without_trailing_comment(language, line),
            false => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The code the request writes, each span with its byte range: between
/// single backticks, after a doctest's `>>> `, or, in a request that marks
/// none, a call written in its prose (see [`prose_calls`]). Fenced blocks
/// are output or files, not code to run.
fn code_spans(request: &str) -> Vec<(usize, usize, &str)> {
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
                calls.push((i, close));
                i = close;
            }
            None => i = end.max(i + 1),
        }
    }
    calls
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
    let window = &request[spans[at].1..spans.get(at + 1).map_or(request.len(), |next| next.0)];
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
    examples
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
    fn a_quoted_line_s_word_a_character_off_a_value_the_request_writes_may_become_it() {
        let request = "Run with `--colr` it prints:\n\nerror: unknown option '--colr'\n(Did you mean ---color?)\n\n\
It should suggest `--color`.";
        let values = request_values(request);
        let printed = "error: unknown option '--colr'\n(Did you mean ---color?)\n";
        let options = near_miss_options("(Did you mean ---color?)", printed, request, &values);
        assert_eq!(options.unwrap(), ["(Did you mean ---color?)", "(Did you mean --color?)"]);
        // `--colr` is what the user typed, as the request writes it: it stays.
        assert_eq!(near_miss_options("error: unknown option '--colr'", printed, request, &values), None);
        let unquoted = "It should suggest `--color`.";
        assert_eq!(near_miss_options("(Did you mean ---color?)", printed, unquoted, &values), None);
        // Where the right value is not written, the typed one is no option.
        let request = "Run with `--colr` it prints:\n\nerror: unknown option '--colr'\n(Did you mean ---color?)\n";
        let values = request_values(request);
        assert_eq!(near_miss_options("(Did you mean ---color?)", printed, request, &values), None);
        assert_eq!(edits("---color", "--color"), 1);
        assert_eq!(edits("kitten", "sitting"), 3);
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
        // A parenthesis left open is no call.
        assert!(request_examples(Language::JavaScript, "semver.diff('1.2.3' is odd", known).is_empty());
        // Where the request marks its code, its prose holds none.
        let marked = "`prog -abc` gives opts() = { a: true } and windowed([1], 1) too";
        assert!(request_examples(Language::JavaScript, marked, known).is_empty());
        assert_eq!(stated(marked, "console.log(program.opts())", "{ a: true, c: true }", true), None);
    }

    #[test]
    fn the_probe_leaves_out_the_examples_of_the_check() {
        let check =
            "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '2.0.0-rc.1')); // 'premajor'\n";
        let probe = "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '2.0.0-rc.1'))\n\
console.log(semver.diff('1.2.3', '1.2.4')) // 'patch'";
        assert_eq!(
            without_shared_prints(Language::JavaScript, probe, check),
            "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '1.2.4')) // 'patch'"
        );
        // The check's example with the package's names in scope is the probe's qualified call.
        let scoped = "Object.assign(globalThis, require('semver'));\nconsole.log(diff('1.2.3', '2.0.0-rc.1'));\n";
        assert_eq!(
            without_shared_prints(Language::JavaScript, probe, scoped),
            "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '1.2.4')) // 'patch'"
        );
        // A helper that prints, called with the check's example, is left
        // out too; its definition and the other calls stay.
        let helper = "const { Command } = require('commander');\nfunction run(args) {\n  const p = new Command();\n  \
p.parse(args);\n  console.log(p.opts());\n}\n";
        let check = format!("{helper}run(['node', 's', '-abc']);\n");
        let probe = format!("{helper}run(['node', 's', '-abc']);\nrun(['node', 's', '-a', '-c']);\n");
        assert_eq!(
            without_shared_prints(Language::JavaScript, &probe, &check),
            format!("{helper}run(['node', 's', '-a', '-c']);")
        );
    }

    #[test]
    fn each_printed_line_is_paired_with_the_statement_that_printed_it() {
        let script = "const s = require('semver');\nconsole.log(s.satisfies('0.3.0', '^0.2.3')); // true\n\
console.log(s.inc('1.2.0', 'minor'))\n";
        let paired = printing_statements(Language::JavaScript, script, "true\n1.2.0\n");
        assert_eq!(
            paired,
            Some(vec![
                "console.log(s.satisfies('0.3.0', '^0.2.3'))".to_string(),
                "console.log(s.inc('1.2.0', 'minor'))".to_string()
            ])
        );
        // A loop prints more lines than it has statements: no pairs.
        assert_eq!(printing_statements(Language::Python, "for x in [1, 2]:\n    print(x)\n", "1\n2\n"), None);
        assert_eq!(
            uncommented(Language::Python, "print(f('#'))  # 3\nprint(g(2)) # says 'x'\nx = 1  # one"),
            "print(f('#'))\nprint(g(2))\nx = 1  # one"
        );
    }

    #[test]
    fn the_values_of_a_report_are_its_quoted_bracketed_and_numeric_words() {
        let values = request_values(
            "In this library, `semver.inc('1.2.0', 'minor')` returns '1.2.0' instead of '1.3.0': the version's \
unchanged. It's true that diff(a, b) gives [1, [2], 3] and {a: 1}.",
        );
        // The call between backticks is code; its quoted arguments are values.
        assert_eq!(values, ["1.2.0", "minor", "1.3.0", "true", "[1, [2], 3]", "{a: 1}"].map(String::from));
    }

    #[test]
    fn the_output_lines_of_a_doctest_are_values_its_inputs_are_not() {
        let values = request_values(
            ">>> list(collapse([[1, [2]], [3]], levels=1))\n[[1, [2]], [3]]\n\nI expected: [1, [2], 3].",
        );
        assert!(values.contains(&"[[1, [2]], [3]]".to_string()), "{values:?}");
        assert!(values.contains(&"[1, [2], 3]".to_string()), "{values:?}");
        assert!(!values.iter().any(|v| v.contains("collapse")), "{values:?}");
    }

    #[test]
    fn a_quoted_line_may_become_another_value_of_its_shape() {
        let values = request_values("inc('1.2.0', 'minor') returns '1.2.0' instead of '1.3.0'.");
        assert_eq!(line_options("1.2.0", &values), Some(vec!["1.2.0".to_string(), "1.3.0".to_string()]));
        // Not spoken of: no options, whatever the shape.
        assert_eq!(line_options("2.0.0", &values), None);
        // One character says too little: "ports start at 1" and a check
        // that prints 1 for another input.
        let values = request_values("parse_port accepts 0, but ports start at 1.");
        assert_eq!(line_options("1", &values), None);
    }

    #[test]
    fn a_boolean_line_may_become_the_other_boolean() {
        assert_eq!(line_options("true", &[]), Some(vec!["true".to_string(), "false".to_string()]));
        assert_eq!(line_options("False", &[]), Some(vec!["False".to_string(), "True".to_string()]));
    }

    #[test]
    fn blanks_and_quote_kinds_do_not_tell_values_apart() {
        let values = request_values("It returns `[1,2]` but should return `[2,1]`.");
        assert_eq!(line_options("[1, 2]", &values), Some(vec!["[1, 2]".to_string(), "[2,1]".to_string()]));
        assert_eq!(loose("{\"a\": 1}"), loose("{'a':1}"));
    }
}
