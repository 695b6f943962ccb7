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

use super::loading::PYTHON_VALUE;
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
                    let text: String = span.iter().collect();
                    // An arithmetic expression (`1.5 * Math.pow(1024, 5)`)
                    // is one value, whatever it calls: its numbers are not.
                    if arithmetic(&text) {
                        push(&text);
                        i = end + 1;
                        continue;
                    }
                    if !span.windows(2).any(|w| word_char(w[0]) && w[1] == '(') {
                        push(&text);
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
pub(super) fn opposite(word: &str) -> Option<&'static str> {
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
pub(super) fn as_printed(value: &str, line: &str) -> String {
    let quoted =
        |s: &str| s.len() >= 2 && (s.starts_with('\'') && s.ends_with('\'') || s.starts_with('"') && s.ends_with('"'));
    if quoted(value) && !quoted(line) { value[1..value.len() - 1].to_string() } else { value.to_string() }
}

/// Whether a value the request writes is an expression to evaluate
/// rather than a literal to print (`1.5 * Math.pow(1024, 5)`, `2 ** 20`,
/// `1 << 30`): outside its strings it multiplies, shifts or calls. Sums
/// and differences stay text: dates and versions are written with them.
pub fn computed(value: &str) -> bool {
    let outside = outside_strings(value);
    let calls = outside.char_indices().any(|(i, c)| {
        c == '(' && outside[..i].chars().next_back().is_some_and(|before| before.is_alphanumeric() || before == '_')
    });
    one_expression(&outside) && (multiplies(&outside) || calls)
}

/// Whether `value` multiplies or shifts outside its strings.
fn arithmetic(value: &str) -> bool {
    let outside = outside_strings(value);
    one_expression(&outside) && multiplies(&outside)
}

/// Whether code (its strings left out) is one expression, no statement.
fn one_expression(outside: &str) -> bool {
    !outside.contains(['=', ';', '\n'])
}

fn multiplies(outside: &str) -> bool {
    outside.contains('*') || outside.contains("<<")
}

/// `value` less its string literals.
fn outside_strings(value: &str) -> String {
    let mut outside = String::new();
    let mut quote: Option<char> = None;
    for c in value.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => quote = Some(c),
            None => outside.push(c),
        }
    }
    outside
}

/// A line as the check compares it: no blanks, one kind of quote.
/// `[1,[2],3]` written by the user is `[1, [2], 3]` printed.
pub fn loose(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).map(|c| if c == '"' { '\'' } else { c }).collect()
}

/// What kind of value a text is, by its first character: a number, a
/// list, a tuple, a map, a string, a word.
pub(super) fn shape(text: &str) -> Option<char> {
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
    // The values a word may be made: one word each, not the quoted output's.
    let candidates: Vec<String> =
        values.iter().map(value_of).filter(|v| !quoted.contains(v) && v.chars().all(word_char)).collect();
    let mut options = vec![line.to_string()];
    // A word the request writes itself stays.
    for word in words(line).iter().filter(|w| w.chars().count() >= MIN_CHARS && !written(w)) {
        // The values nearest the word, as a spelling checker offers them.
        let near: Vec<(usize, &str)> = candidates
            .iter()
            .map(String::as_str)
            .filter(|value| value != word)
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

/// Whether the printed `line` is one `script` holds whole (compared as
/// [`loose`] reads them, four characters at least): input it echoes.
pub fn echoed_input(line: &str, script: &str) -> bool {
    const MIN_CHARS: usize = 4;
    let line = loose(line);
    line.chars().count() >= MIN_CHARS && script.lines().any(|held| loose(held) == line)
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
pub fn prints_a_line(language: Language, line: &str) -> bool {
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
    // The line that puts a required module's names in scope, as the
    // request's examples are run (see `loading`), loads; it shows nothing.
    let loads = |line: &str| line.trim_start().starts_with(super::loading::JS_NAMES_IN_SCOPE);
    let runs_an_example = |line: &&str| {
        prints_a_line(language, line) || is_bare_call(&key(line)) && !line.starts_with([' ', '\t']) && !loads(line)
    };
    let shared: Vec<String> = check.lines().filter(runs_an_example).map(key).collect();
    probe.lines().filter(|line| !(runs_an_example(line) && shared.contains(&key(line)))).collect::<Vec<_>>().join("\n")
}

/// The probe's script without its print statements that are the
/// request's own case again: of the shape of a check statement whose
/// printed line must change (numbers aside: `diff('1.2.3', '1.4.0-beta.0')`
/// beside the check's `diff('1.2.3', '1.3.0-beta.0')`), printing the same
/// wrong value now (`minor`). A small model asked for other uses repeats
/// the example with other numbers, and a guard that keeps the bug there
/// refuses the fix. A value of two kinds (`true`, `0`, `None`) is printed
/// alike by chance, and tells no case: see [`doubtful_prints`]. `cases` are
/// the check's statements with what they print now that must change;
/// `None` where no line goes (or the script's statements cannot be paired
/// with what it printed).
pub fn without_request_cases(
    language: Language,
    probe: &str,
    printed: &str,
    cases: &[(String, String)],
) -> Option<String> {
    let dropped: Vec<usize> =
        case_prints(language, probe, printed, cases, false)?.into_iter().map(|(line, _)| line).collect();
    let lines: Vec<&str> = probe.lines().collect();
    (!dropped.is_empty()).then(|| {
        lines.iter().enumerate().filter(|(i, _)| !dropped.contains(i)).map(|(_, l)| *l).collect::<Vec<_>>().join("\n")
    })
}

/// The lines the probe printed (counted from 0) that may be the request's
/// case again, where its wrong value tells little: of the shape of a
/// check statement that must change, printing the same `true` now. Such a
/// use (`Version("1.2.0") == Version("1.4.0")`) may be the bug again, or
/// a use that works (`Version("1.2.0") == Version("1.2.0")`): a candidate
/// that changes only these lines is taken where none leaves them as they are.
pub fn doubtful_prints(language: Language, probe: &str, printed: &str, cases: &[(String, String)]) -> Vec<usize> {
    case_prints(language, probe, printed, cases, true).unwrap_or_default().into_iter().map(|(_, at)| at).collect()
}

/// The probe's print statements of the shape of a case of `cases` that
/// print its value now, each as its line in `probe` and the line it
/// printed: among the cases whose value tells little where `little`, the
/// others else. `None` where there are no such cases, or the statements
/// cannot be paired with what they printed.
fn case_prints(
    language: Language,
    probe: &str,
    printed: &str,
    cases: &[(String, String)],
    little: bool,
) -> Option<Vec<(usize, usize)>> {
    let shape = |line: &str| {
        // Printed through the examples' helper or not, one statement; the
        // closing parentheses go with the helper's.
        let key = unqualified(without_trailing_comment(language, line).trim().trim_end_matches(';'))
            .replace(&format!("{PYTHON_VALUE}("), "")
            .replace(')', "");
        // Each run of digits reads `0`.
        let mut masked = String::with_capacity(key.len());
        let mut in_number = false;
        for c in key.chars() {
            match c.is_ascii_digit() {
                true if in_number => {}
                true => masked.push('0'),
                false => masked.push(c),
            }
            in_number = c.is_ascii_digit();
        }
        masked
    };
    let cases: Vec<(String, &str)> = cases
        .iter()
        .filter(|(_, now)| tells_little(now) == little)
        .map(|(statement, now)| (shape(statement), now.trim()))
        .collect();
    let printing: Vec<usize> =
        probe.lines().enumerate().filter(|(_, line)| prints_a_line(language, line)).map(|(i, _)| i).collect();
    if cases.is_empty() || printing.len() != printed.lines().count() {
        return None;
    }
    let lines: Vec<&str> = probe.lines().collect();
    let found = printing
        .into_iter()
        .zip(printed.lines())
        .enumerate()
        .filter(|(_, (i, value))| {
            cases.iter().any(|(shape_of, now)| *now == value.trim() && *shape_of == shape(lines[*i]))
        })
        .map(|(at, (i, _))| (i, at))
        .collect();
    Some(found)
}

/// Whether a printed value is of the kind many uses print alike by chance,
/// or any broken code prints: a truth value, a zero or a one, nothing.
pub fn tells_little(value: &str) -> bool {
    let value = value.trim().trim_matches(|c| c == '\'' || c == '"');
    matches!(
        value.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "0" | "1" | "none" | "null" | "undefined" | "nil" | "[]" | "{}"
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_line_the_script_holds_whole_is_its_input_echoed() {
        let script = "import markdown\nprint(markdown.markdown('''\n    def a():\n        pass\n'''))\n";
        assert!(!echoed_input("<pre><code>def a():", script));
        assert!(echoed_input("    pass", script) && echoed_input("def a():", script));
        // A value the script passes in a call is no line of it.
        assert!(!echoed_input("1.2.3", "print(semver.clean('1.2.3'))"));
    }

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
        // The line that puts a required file's names in scope loads them
        // for the probe as for the check: it stays.
        let loaded = "const text_js = require('./text.js');\nObject.assign(globalThis, text_js);\n";
        let check = format!("{loaded}console.log(truncate('abcdefghij', 5));\n");
        let probe = format!("{loaded}console.log(truncate('abcdefghij', 5));\nconsole.log(truncate('ab', 5));\n");
        assert_eq!(
            without_shared_prints(Language::JavaScript, &probe, &check),
            format!("{loaded}console.log(truncate('ab', 5));")
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
    fn the_probe_leaves_out_the_request_s_case_with_other_numbers() {
        let probe = "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '1.4.0-beta.0'));\n\
console.log(semver.diff('1.2.3', '1.3.0'));\nconsole.log(semver.diff('1.2.3', '1.5.0-beta.0')); // 'minor'\n\
console.log(semver.diff('1.2.3', '1.4.0-rc.1'));";
        let cases = [("console.log(diff('1.2.3', '1.3.0-beta.0'));".to_string(), "minor".to_string())];
        // The same shape printing the same wrong value goes; another
        // shape (no prerelease), or another value, stays.
        assert_eq!(
            without_request_cases(Language::JavaScript, probe, "minor\nminor\nminor\npreminor\n", &cases).as_deref(),
            Some(
                "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '1.3.0'));\n\
console.log(semver.diff('1.2.3', '1.4.0-rc.1'));"
            )
        );
        // A value of two kinds is printed alike by chance.
        let cases = [("print(is_adult(18))".to_string(), "False".to_string())];
        assert_eq!(without_request_cases(Language::Python, "print(is_adult(5))", "False\n", &cases), None);
        // More lines printed than print statements: nothing is paired.
        let cases = [("print(double(3))".to_string(), "5".to_string())];
        assert_eq!(without_request_cases(Language::Python, "print(double(30))", "5\n6\n", &cases), None);
        assert_eq!(
            without_request_cases(Language::Python, "x = 1\nprint(double(30))\nprint(double(2))", "5\n4\n", &cases)
                .as_deref(),
            Some("x = 1\nprint(double(2))")
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
    fn a_value_that_multiplies_or_calls_is_an_expression_to_evaluate() {
        assert!(computed("1.5 * Math.pow(1024, 5)"));
        assert!(computed("2 ** 20"));
        assert!(computed("1 << 30"));
        for literal in ["'1PB'", "[1, [2], 3]", "(1, 1)", "2024-01-01", "1.2.3", "'a*b'", "x = f(1)", "-1.5e3"] {
            assert!(!computed(literal), "{literal}");
        }
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
