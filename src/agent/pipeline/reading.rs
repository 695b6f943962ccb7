//! Readings of what the check's runs print: the functions a run called,
//! the frames of a traceback, the project's tests' failures, why a run
//! shows nothing, which candidates passed. Pure: they read text.

use std::sync::OnceLock;

use regex::Regex;

use crate::text::is_identifier;

use super::expect::loose;

/// How a test run reports its failures: unittest's `failures=2, errors=1`,
/// pytest's and cargo's `2 failed, 1 error`, mocha's `2 failing`, node's
/// TAP `# fail 2`. The tries command's `score` reads them
/// with this same pattern.
pub(super) const COUNTS_PATTERN: &str = r"(failures|errors)=[0-9]+|[0-9]+ (failed|errors?|failing)|# fail [0-9]+";

/// The `file:line` of each function a [`Check::calls_command`] printed.
pub fn calls(output: &str) -> Vec<(String, usize)> {
    output
        .lines()
        .filter_map(|line| {
            let (file, at) = line.trim().rsplit_once(':')?;
            Some((file.to_string(), at.parse().ok()?))
        })
        .collect()
}

/// A line a spectrum run scores: its score, file and line.
pub type Scored = (f32, String, usize);

/// What a spectrum run printed (see `Check::spectrum_command`): how many
/// tests failed and passed, and the lines it scores, best first. `None`
/// where it did not run to its end.
pub fn spectrum(output: &str) -> Option<(usize, usize, Vec<Scored>)> {
    let mut lines = output.lines().skip_while(|line| !line.starts_with("tests: "));
    let (failing, passing) = lines.next()?.strip_prefix("tests: ")?.split_once(' ')?;
    let (failing, passing) = (failing.trim().parse().ok()?, passing.trim().parse().ok()?);
    let scored = lines
        .filter_map(|line| {
            let (score, place) = line.split_once(' ')?;
            let (file, at) = place.trim().rsplit_once(':')?;
            Some((score.parse().ok()?, file.to_string(), at.parse().ok()?))
        })
        .collect();
    Some((failing, passing, scored))
}

/// How many of the project's tests fail, read from their run's output:
/// none when it exited normally, else the counts of failures and errors
/// summed; `None` when the report cannot be read, or says no test ran
/// (pytest stops before any where a file cannot be collected: its count
/// is of files, and guards nothing).
pub fn failures(output: &str, ok: bool) -> Option<usize> {
    if ok {
        return Some(0);
    }
    if output.contains("during collection") && output.contains("Interrupted") {
        return None;
    }
    static COUNTS: OnceLock<Regex> = OnceLock::new();
    let counts = COUNTS.get_or_init(|| Regex::new(COUNTS_PATTERN).expect("a valid pattern"));
    let sum: usize = counts
        .find_iter(output)
        .filter_map(|found| {
            found.as_str().chars().filter(char::is_ascii_digit).collect::<String>().parse::<usize>().ok()
        })
        .sum::<usize>();
    (sum > 0).then_some(sum)
}

/// The frames of the tracebacks in `output`, innermost first: each file
/// and line, as Python (`File "/p/toc.py", line 50, in unique`, outermost
/// first) and Node (`at unique (/p/toc.js:50:7)`, innermost first) print them.
pub fn frames(output: &str) -> Vec<(String, usize)> {
    static PYTHON: OnceLock<Regex> = OnceLock::new();
    static NODE: OnceLock<Regex> = OnceLock::new();
    let python = PYTHON.get_or_init(|| Regex::new(r#"^\s*File "([^"]+)", line (\d+)"#).expect("a valid pattern"));
    let node =
        NODE.get_or_init(|| Regex::new(r"^\s*at (?:.*\()?([^()\s]+?):(\d+):\d+\)?\s*$").expect("a valid pattern"));
    let read = |pattern: &Regex| -> Vec<(String, usize)> {
        output
            .lines()
            .filter_map(|line| {
                let found = pattern.captures(line)?;
                Some((found[1].trim_start_matches("file://").to_string(), found[2].parse().ok()?))
            })
            .collect()
    };
    let mut frames = read(python);
    frames.reverse();
    frames.extend(read(node));
    frames
}

/// A Python traceback from its innermost frame on: the line that failed
/// and how, without the frames of the script that called it.
pub fn innermost(output: &str) -> &str {
    let mut at = None;
    let mut offset = 0;
    for line in output.split_inclusive('\n') {
        if line.trim_start().starts_with("File \"") {
            at = Some(offset);
        }
        offset += line.len();
    }
    at.map_or(output, |at| &output[at..])
}

/// What cargo's test run says of its failing tests: each one's report
/// (`---- NAME stdout ----` and the panic under it), or where none ran
/// (the build failed), the compiler's errors; the run's tail otherwise.
pub fn rust_test_failures(output: &str) -> String {
    let mut told: Vec<&str> = Vec::new();
    let mut in_report = false;
    for line in output.lines() {
        if line.starts_with("---- ") && line.ends_with(" stdout ----") {
            in_report = true;
        } else if line == "failures:" || line.starts_with("test result:") {
            in_report = false;
        }
        if in_report || line.starts_with("error") && !line.starts_with("error: test failed") {
            told.push(line);
        }
    }
    match told.is_empty() {
        true => crate::agent::tests_run::last_lines(output, 20),
        false => told.join("\n").trim_end().to_string(),
    }
}

/// What a test run's report says of its failing tests, where it is cargo's
/// (see [`rust_test_failures`]) or TAP's (node's runner: each `not ok`
/// line and the error, expected and actual values under it).
pub fn test_failures(output: &str) -> Option<String> {
    if output.lines().any(|line| line.starts_with("---- ") && line.ends_with(" stdout ----")) {
        return Some(rust_test_failures(output));
    }
    let told: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|line| {
            line.starts_with("not ok ") && !line.contains("# SKIP")
                || ["error:", "expected:", "actual:"].iter().any(|lead| line.starts_with(lead))
        })
        .collect();
    (!told.is_empty()).then(|| told.join("\n"))
}

/// What a Python test run's report says of its failing tests: the lines
/// naming them (unittest's `FAIL:` and `ERROR:`, pytest's and tack's own
/// runner's `FAILED`) and the first error raised, as it names itself
/// (`AttributeError: '_Link' object has no attribute 'value'`).
pub fn python_test_failures(output: &str) -> Option<String> {
    /// Failing tests named at most.
    const NAMED: usize = 3;
    let named: Vec<&str> = output
        .lines()
        .map(str::trim)
        // unittest's closing `FAILED (failures=1)` names none.
        .filter(|line| {
            ["FAIL: ", "ERROR: ", "FAILED "].iter().any(|lead| line.starts_with(lead)) && !line.starts_with("FAILED (")
        })
        .take(NAMED)
        .collect();
    if named.is_empty() {
        return None;
    }
    let raised = output.lines().map(|line| line.trim().trim_start_matches("E ").trim()).find(|line| {
        line.split_once(": ").is_some_and(|(kind, _)| {
            is_identifier(kind.rsplit('.').next().unwrap_or(kind))
                && (kind.ends_with("Error") || kind.ends_with("Exception"))
        })
    });
    let mut told = named.join("\n");
    if let Some(raised) = raised.filter(|r| !named.iter().any(|n| n.contains(r))) {
        told.push('\n');
        told.push_str(raised);
    }
    Some(told)
}

/// The name a script's error says the project does not offer
/// (`commander.requiredOption is not a function`, `module 'pkg' has no
/// attribute 'f'`, `cannot import name 'f'`), as [`shows_nothing`] quotes it.
pub fn missing_name(error: &str) -> Option<&str> {
    let name = if let Some(at) = error.find(" is not a function").or_else(|| error.find(" is not a constructor")) {
        let called = error[..at].rsplit([' ', '`', '(']).next()?;
        called.rsplit('.').next()?
    } else {
        ["has no attribute '", "cannot import name '"].iter().find_map(|lead| {
            let start = error.find(lead)? + lead.len();
            error[start..].split('\'').next()
        })?
    };
    let name = name.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'));
    (!name.is_empty()).then_some(name)
}

/// An error other than a failed assert raised in the check's own code
/// (the innermost frame is the script, read from stdin), not the project's.
fn raised_by_itself(output: &str) -> Option<String> {
    let lines: Vec<&str> = output.lines().collect();
    // Python's innermost frame is the last `File` line; Node's the first `at` line.
    let innermost = lines
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with("File \""))
        .or_else(|| lines.iter().find(|l| l.trim_start().starts_with("at ")))?;
    let in_check = innermost.contains("<stdin>") || innermost.contains("[stdin]");
    let error = error_line(output)?;
    (in_check && !error.contains("AssertionError") && !error.contains("ERR_ASSERTION"))
        .then(|| format!("it fails in its own code, not the project's (`{error}`)"))
}

/// The line of a failed run that names its error: the last that says
/// `Error` or `Exception`, as Python and Node print them.
pub fn error_line(output: &str) -> Option<&str> {
    output.lines().rev().find(|l| l.contains("Error") || l.contains("Exception")).map(str::trim)
}

/// A printed line that shows an object by its address (Python's
/// `<generator object f at 0x7f…>`), not its values: no run prints it
/// the same, so no candidate could match it.
pub fn unreadable(output: &str) -> Option<&str> {
    output.lines().map(str::trim).find(|line| line.contains(" at 0x"))
}

/// The empty value every line `printed` ends in (`dryRun: undefined`,
/// `{}`, `None`), where each does: the example's values never reached the
/// code, as when a check declares a program's options and parses no
/// command line. `None` where any line shows more, or nothing is printed.
pub fn only_empty(printed: &str) -> Option<&'static str> {
    const EMPTY: &[&str] = &["undefined", "null", "None", "nil", "NaN", "{}", "[]", "()", "''", "\"\"", "set()"];
    let mut found = None;
    for line in printed.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let empty = EMPTY.iter().find(|empty| {
            line.strip_suffix(**empty).is_some_and(|before| {
                !empty.starts_with(char::is_alphabetic) || !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        })?;
        found.get_or_insert(*empty);
    }
    found
}

/// Why a run that printed `printed` shows no value of the code: it
/// printed nothing, or only an empty value the request does not speak of.
pub fn empty_why(printed: &str, request: &str) -> Option<String> {
    if normalized(printed).is_empty() {
        return Some("it prints nothing".to_string());
    }
    let empty = only_empty(printed).filter(|empty| !request.contains(empty))?;
    Some(format!("it prints only `{empty}`: the example's values never reach the code the request is about"))
}

/// The lines of `expected` that `printed` does not print, as often as
/// they are expected beyond it, compared as [`loose`] reads them: what a
/// model that wrote a whole output claims must change. A line it wrote as
/// it is printed now claims nothing: a small model copies what it is shown
/// (`{ a: true, c: true }` kept for an example the request says is wrong).
pub fn changed_lines(printed: &str, expected: &str) -> String {
    let mut now: Vec<String> = printed.lines().map(loose).collect();
    let changed: Vec<&str> = expected
        .lines()
        .filter(|line| match now.iter().position(|p| *p == loose(line)) {
            Some(at) => {
                now.swap_remove(at);
                false
            }
            None => true,
        })
        .collect();
    changed.join("\n")
}

/// Whether `expected` is what `printed` prints with only its blank lines
/// changed, each line read as [`loose`] reads it: a change of layout (a
/// blank line kept or dropped), which the lines' text alone cannot tell.
pub fn layout_changed(printed: &str, expected: &str) -> bool {
    let lines = |text: &str| -> Vec<String> { normalized(text).lines().map(loose).collect() };
    let (printed, expected) = (lines(printed), lines(expected));
    let filled = |lines: &[String]| -> Vec<String> { lines.iter().filter(|l| !l.is_empty()).cloned().collect() };
    printed != expected && filled(&printed) == filled(&expected)
}

/// The line of a failed run's output that the request quotes whole, where
/// the run shows no traceback: the program stopped on its own report of an
/// error (`(Did you mean ---color?)`), the very output the request says is
/// wrong, not on a crash. Lines too short to tell anything are passed over.
pub fn quoted_report<'o>(output: &'o str, request: &str) -> Option<&'o str> {
    const MIN_CHARS: usize = 8;
    if !frames(output).is_empty() {
        return None;
    }
    let quoted: Vec<String> = request.lines().map(|line| loose(line.trim().trim_matches('`'))).collect();
    output.lines().map(str::trim).find(|line| {
        let line = loose(line);
        line.chars().count() >= MIN_CHARS && quoted.contains(&line)
    })
}

/// The kind of error the request quotes with its message (`TypeError:
/// can only concatenate str (not "int") to str`): an error the user saw
/// raised, which a check of the report must raise too. A kind named alone
/// (`should raise ValueError`) may be what the user wants instead.
pub fn reported_error(request: &str) -> Option<&str> {
    request.match_indices(": ").find_map(|(at, _)| {
        let before = &request[..at];
        let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).map_or(0, |i| i + 1);
        let kind = before[start..].rsplit('.').next()?;
        let message = request[at + 2..].chars().next().is_some_and(|c| c.is_alphanumeric() || "'\"`".contains(c));
        let named = ["Error", "Exception"]
            .iter()
            .any(|end| kind.len() > end.len() && kind.ends_with(end) && kind.starts_with(char::is_uppercase));
        (named && message).then_some(kind)
    })
}

/// The error the request quotes, kind and message (`TypeError: argument
/// str must be a string`), to the end of its line or its quotes, its
/// closing stop dropped: see [`reported_error`].
pub fn reported_error_line(request: &str) -> Option<String> {
    let kind = reported_error(request)?;
    let at = request.find(&format!("{kind}: "))?;
    let rest = &request[at..];
    let end = rest.find(['\n', '`']).unwrap_or(rest.len());
    let line = rest[..end].trim_end().trim_end_matches(['.', ',', ';', '"', '\'']).trim_end();
    Some(line.to_string())
}

/// Output as checks compare it: each line's trailing blanks and the
/// blank lines at its ends dropped.
pub fn normalized(output: &str) -> String {
    let lines: Vec<&str> = output.lines().map(str::trim_end).collect();
    lines.join("\n").trim_matches('\n').to_string()
}

/// The candidate (from 1) a tries command's output says passed.
pub fn passed(output: &str) -> Option<usize> {
    all_passed(output).first().copied()
}

/// The number of the first candidate the tries left untried, where their
/// seconds ran out (see [`super::check::TRIES_STOPPED`]).
pub fn tries_stopped(output: &str) -> Option<usize> {
    output.lines().find_map(|line| line.strip_prefix(super::check::TRIES_STOPPED)?.trim().parse().ok())
}

/// Each candidate the tries command found passing, by its number, in order.
pub fn all_passed(output: &str) -> Vec<usize> {
    output.lines().filter_map(|line| line.trim().strip_prefix("passes: ")?.trim().parse().ok()).collect()
}

/// What a [`super::check::Check::differ_command`] printed with each
/// candidate in place: (its number, its output), in the order run; the
/// Bash call's closing `exit code` line is none of theirs.
pub fn outputs_by_try(output: &str) -> Vec<(usize, String)> {
    let output = match output.trim_end().rsplit_once('\n') {
        Some((printed, last)) if last.starts_with("exit code ") => printed,
        _ => output,
    };
    let mut outputs: Vec<(usize, String)> = Vec::new();
    for line in output.lines() {
        match line.strip_prefix("=== ").and_then(|n| n.trim().parse().ok()) {
            Some(n) => outputs.push((n, String::new())),
            None => {
                if let Some((_, printed)) = outputs.last_mut() {
                    printed.push_str(line.trim_end());
                    printed.push('\n');
                }
            }
        }
    }
    outputs
}

/// Why a run of the check on the code as it is shows nothing, if it does
/// not: it passed, or it failed on its own mistake (it is not valid code,
/// cannot load what it imports, or uses a name it never defined) rather
/// than on the project's behaviour.
pub fn shows_nothing(output: &str, failed: bool) -> Option<String> {
    if !failed {
        return Some("it passes on the code as it is, so it does not show the problem".into());
    }
    let own = [
        ("SyntaxError", "it is not valid code"),
        ("IndentationError", "it is not valid code"),
        ("ModuleNotFoundError", "it imports a module that is not there"),
        ("ImportError", "it imports a name that is not there"),
        ("Cannot find module", "it requires a module that is not there"),
        ("NameError", "it uses a name it does not define"),
        ("ReferenceError", "it uses a name it does not define"),
        ("timed out after", "it did not finish in time"),
        ("is not a function", "it calls what the project does not offer"),
        ("is not a constructor", "it constructs what the project does not offer"),
        ("has no attribute", "it uses what the project does not offer"),
    ];
    let Some((found, why)) = own.iter().find(|(error, _)| output.contains(error)) else {
        return raised_by_itself(output);
    };
    let line = output.lines().find(|l| l.contains(found)).unwrap_or(found).trim();
    Some(format!("{why} (`{line}`)"))
}

/// Whether a failed run's `output` stops on the error the request quotes
/// with its message ([`reported_error_line`]), as quoted: that run reproduces the report, even
/// where such an error is more often a script's mistake (`has no
/// attribute`, `is not a function`). A script that does not parse
/// reproduces nothing.
pub fn stops_on_reported(output: &str, request: &str) -> bool {
    let (Some(quoted), Some(error)) = (reported_error_line(request), error_line(output)) else { return false };
    let squashed = |text: &str| -> String { text.chars().filter(|c| !c.is_whitespace()).collect() };
    squashed(error).contains(&squashed(&quoted)) && !output.contains("SyntaxError")
}

/// Whether `request` reports a failure of any kind: an error, an
/// exception, a crash, a panic, a run that fails. A request that does not
/// asks for another result or a new feature.
pub fn reports_failure(request: &str) -> bool {
    const FAILING: [&str; 8] = ["error", "exception", "raise", "throw", "crash", "panic", "traceback", "fail"];
    // `TypeError`, `KeyError`: a kind ends as the word does.
    lowercase_words(request).any(|word| {
        word.ends_with("error") || word.ends_with("exception") || FAILING.iter().any(|stem| word.starts_with(stem))
    })
}

/// Whether `request` speaks of the error `error` (a failed run's
/// [`error_line`]): it names the error's kind (`TypeError`; not the bare
/// `Error` every kind is), or writes two words in a row of its message
/// that are the project's, not the `script`'s own (the flags it declared).
pub fn speaks_of(request: &str, error: &str, script: &str) -> bool {
    let (kind, message) = error.split_once(": ").unwrap_or((error, ""));
    let kind = kind.rsplit(['.', ' ']).next().unwrap_or(kind);
    let generic = matches!(kind, "Error" | "Exception");
    if !generic && request.split(|c: char| !c.is_alphanumeric()).any(|w| w == kind) {
        return true;
    }
    let (request, own): (Vec<String>, Vec<String>) =
        (lowercase_words(request).collect(), lowercase_words(script).collect());
    let message: Vec<String> = lowercase_words(message).filter(|w| !own.contains(w)).collect();
    message.windows(2).any(|pair| request.windows(2).any(|said| said == pair))
}

/// The words of `text` (runs of letters and digits), lowercased: how a
/// request, a script and a message are compared word for word.
pub fn lowercase_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// The values an error's message quotes, in single or double quotes
/// that stand apart from words (`invalid literal for int() with base 10:
/// 'abc'` quotes `abc`; the apostrophe of `can't` opens nothing).
pub fn quoted_values(error: &str) -> Vec<&str> {
    let bytes = error.as_bytes();
    // A quote stands apart where no letter or digit touches it outside.
    let apart = |at: Option<usize>| at.and_then(|i| bytes.get(i)).is_none_or(|b| !b.is_ascii_alphanumeric());
    let mut values = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let quote = bytes[at];
        if matches!(quote, b'\'' | b'"') && apart(at.checked_sub(1)) {
            let close = (at + 1..bytes.len()).find(|&i| bytes[i] == quote && apart(Some(i + 1)));
            if let Some(close) = close {
                values.push(&error[at + 1..close]);
                at = close + 1;
                continue;
            }
        }
        at += 1;
    }
    values
}

/// The words of an error's message that are the project's, not the
/// script's own: how much the project explains it (`cannot add option due
/// to conflicting flag`), where an error raised with the input alone
/// (`ValueError: 0`) explains nothing.
pub fn explained(error: &str, script: &str) -> usize {
    let own: Vec<String> = lowercase_words(script).collect();
    let (_, message) = error.split_once(": ").unwrap_or(("", error));
    message
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() > 1 && !own.contains(&w.to_lowercase()))
        .count()
}

/// The name a failed run says is not defined, as Python
/// (`NameError: name 'text' is not defined`) and Node
/// (`ReferenceError: text is not defined`) print it.
pub fn undefined_name(output: &str) -> Option<&str> {
    let line = output.lines().find(|l| l.contains("NameError: ") || l.contains("ReferenceError: "))?;
    let (_, said) = line.split_once("Error: ")?;
    let name = said.strip_prefix("name '").map_or(said, |rest| rest.split('\'').next().unwrap_or(rest));
    let name = name.split(' ').next()?;
    crate::text::is_identifier(name).then_some(name)
}

/// The command-line arguments a reply writes on its one line, split as a
/// shell splits them (quotes kept together, no expansion): what follows
/// the program's name, where the reply writes that too (`node check.js`,
/// `$ python3 -`, or the name the `script` gives its program as a string,
/// `my-cli` of `createCommand('my-cli')`); none where it writes the
/// program's command line with nothing after it. `None` where it writes
/// no command line.
pub fn command_arguments(reply: &str, script: &str) -> Option<Vec<String>> {
    let line = reply.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with("```"))?;
    let line = line.trim_matches('`').trim_start_matches("$ ").trim();
    let mut words = Vec::new();
    let (mut word, mut quote, mut started) = (String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => (quote, started) = (Some(c), true),
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => (word.push(c), started = true).1,
        }
    }
    if started {
        words.push(word);
    }
    // The interpreter and its script, where the reply names them.
    let program = words.first().is_some_and(|w| ["node", "python", "python3", "bash"].contains(&w.as_str()));
    if program {
        let file =
            words.iter().position(|w| w == "-" || [".js", ".py", ".sh", ".mjs", ".cjs"].iter().any(|e| w.ends_with(e)));
        words.drain(..file.map_or(1, |i| i + 1));
    }
    let named = |word: &str| ['\'', '"', '`'].iter().any(|q| script.contains(&format!("{q}{word}{q}")));
    if words.len() > 1 && words.first().is_some_and(|w| !w.starts_with('-') && named(w)) {
        words.remove(0);
    }
    // A sentence is no command line: a small model asked for the
    // arguments may explain its script instead.
    const SENTENCE_WORDS: usize = 6;
    if words.len() >= SENTENCE_WORDS && line.ends_with('.') {
        return None;
    }
    match words.as_slice() {
        // A command line that runs the program with nothing after it: the
        // example passes none (an option the user leaves out).
        [] if program => Some(words),
        [] => None,
        [only] if only.eq_ignore_ascii_case("none") => None,
        _ => Some(words),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_test_run_s_failures_are_told_by_name_and_error() {
        let unittest = "F.\n======================================================================\nFAIL: test_smaller (test_calc.AtLeast.test_smaller)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"tests/test_calc.py\", line 8, in test_smaller\n    self.assertFalse(at_least(1, 3))\nAssertionError: True is not false\n\nRan 2 tests in 0.000s\n\nFAILED (failures=1)\n";
        assert_eq!(
            python_test_failures(unittest).unwrap(),
            "FAIL: test_smaller (test_calc.AtLeast.test_smaller)\nAssertionError: True is not false"
        );
        let pytest = "F.                                                                       [100%]\n    def test_value():\n>       assert link.value == 1\nE       AttributeError: '_Link' object has no attribute 'value'\n=========================== short test summary info ============================\nFAILED tests/test_ttl.py::test_value - AttributeError: '_Link' object has no attribute 'value'\n1 failed, 1 passed in 0.01s\n";
        assert_eq!(
            python_test_failures(pytest).unwrap(),
            "FAILED tests/test_ttl.py::test_value - AttributeError: '_Link' object has no attribute 'value'"
        );
        assert_eq!(python_test_failures("..\nRan 2 tests\n\nOK\n"), None);
        // Where no test ran, nothing is counted: a guard of no tests is none.
        let collection =
            "ERROR tests/test_time.py\n!!!!!!! Interrupted: 2 errors during collection !!!!!!!\n2 errors in 0.12s";
        assert_eq!(failures(collection, false), None);
        assert_eq!(failures("FAILED tests/test_time.py::test_x\n1 failed, 3 passed", false), Some(1));
    }

    #[test]
    fn a_request_that_asks_for_another_result_reports_no_failure() {
        assert!(!reports_failure("I'd like `expire()` to return what it removed; right now it returns None."));
        assert!(!reports_failure("Could `serialize` support the `Partitioned` attribute?"));
        assert!(reports_failure("`f(1)` raises `KeyError: 1`"));
        assert!(reports_failure("It throws on an empty list."));
        assert!(reports_failure("This test fails: test_quote"));
        assert!(reports_failure("the parser panics on `x`"));
        assert!(reports_failure("gives a TypeError"));
    }

    #[test]
    fn an_error_the_request_quotes_with_its_message_is_one_the_user_saw() {
        let request = "`markdown(text)` raises `TypeError: can only concatenate str (not \"int\") to str`.";
        assert_eq!(reported_error(request), Some("TypeError"));
        assert_eq!(reported_error("It fails: json.decoder.JSONDecodeError: Expecting value"), Some("JSONDecodeError"));
        assert_eq!(reported_error("parse_port('-1') returns -1; it should raise ValueError."), None);
        assert_eq!(reported_error("It prints error: unknown option '--colr'"), None);
        assert_eq!(reported_error("Note: Error: is a prefix"), None);
        // The error line as quoted, to its quote's end or the line's, its stop dropped.
        assert_eq!(
            reported_error_line(request).as_deref(),
            Some("TypeError: can only concatenate str (not \"int\") to str")
        );
        let wanted = "parse(5) must throw TypeError: argument str must be a string.\nIt returns NaN.";
        assert_eq!(reported_error_line(wanted).as_deref(), Some("TypeError: argument str must be a string"));
    }

    #[test]
    fn a_run_that_stops_on_the_error_the_request_quotes_reproduces_it() {
        let request = "`Table(rows).render()` crashes with AttributeError: 'Row' object has no attribute 'cells'";
        let same = "Traceback:\n  File \"table.py\", line 40, in render\nAttributeError: 'Row' object has no attribute 'cells'";
        assert!(shows_nothing(same, true).is_some(), "a missing attribute is most often the script's mistake");
        assert!(stops_on_reported(same, request), "but this is the one the request quotes");
        let other = "Traceback:\n  File \"<stdin>\", line 2\nAttributeError: module 'table' has no attribute 'Tabel'";
        assert!(!stops_on_reported(other, request));
        let unparsed = "  File \"<stdin>\", line 1\nSyntaxError: invalid syntax\nAttributeError: 'Row' object has no attribute 'cells'";
        assert!(!stops_on_reported(unparsed, request));
    }

    #[test]
    fn the_uses_run_with_each_change_read_as_one_output_a_change() {
        let output = "=== 12\npatch\nmajor\n=== 40\npatch\n(exits 1: TypeError: x)\nexit code 0";
        assert_eq!(
            outputs_by_try(output),
            [(12, "patch\nmajor\n".to_string()), (40, "patch\n(exits 1: TypeError: x)\n".to_string())]
        );
    }

    #[test]
    fn a_reply_s_command_line_is_split_as_a_shell_splits_it() {
        let words = |reply: &str| command_arguments(reply, "program.name('my-cli')").map(|w| w.join("|"));
        assert_eq!(words("--dry-run --max-old-space 3"), Some("--dry-run|--max-old-space|3".into()));
        assert_eq!(words("```\n-abc 'a b' \"c\"\n```"), Some("-abc|a b|c".into()));
        assert_eq!(words("`--colr`"), Some("--colr".into()));
        assert_eq!(words("$ node check.js -s / --first a/b/c"), Some("-s|/|--first|a/b/c".into()));
        assert_eq!(words("python3 - --loud ''"), Some("--loud|".into()));
        assert_eq!(words("The updated file ensures that the weight of the box counts."), None);
        assert_eq!(
            words("-m 'The updated file ensures that the weight counts.'"),
            Some("-m|The updated file ensures that the weight counts.".into())
        );
        // The program's name as the script gives it is no argument; an operand is.
        assert_eq!(words("my-cli -abc"), Some("-abc".into()));
        assert_eq!(words("split a/b/c"), Some("split|a/b/c".into()));
        assert_eq!(words("none"), None);
        // The program run with nothing after it: an empty command line.
        assert_eq!(words("node script.js"), Some(String::new()));
        assert_eq!(words("\n\n"), None);
    }

    #[test]
    fn the_name_a_script_calls_and_the_project_lacks_is_read_from_its_error() {
        let why = "it calls what the project does not offer (`TypeError: commander.requiredOption is not a function`)";
        assert_eq!(missing_name(why), Some("requiredOption"));
        assert_eq!(missing_name("TypeError: (intermediate value).option is not a function"), Some("option"));
        assert_eq!(missing_name("TypeError: semver.Ranger is not a constructor"), Some("Ranger"));
        assert_eq!(missing_name("AttributeError: module 'more_itertools' has no attribute 'chunk'"), Some("chunk"));
        assert_eq!(missing_name("ImportError: cannot import name 'Markdown2' from 'markdown'"), Some("Markdown2"));
        assert_eq!(missing_name("it prints nothing"), None);
    }

    #[test]
    fn a_run_that_prints_only_empty_values_is_told_from_one_that_shows_a_value() {
        assert_eq!(only_empty("dryRun: undefined\nmaxOldSpace: undefined\n"), Some("undefined"));
        assert_eq!(only_empty("{}\n\nresult: None"), Some("{}"));
        assert_eq!(only_empty("dryRun: undefined\nmaxOldSpace: '1'\n"), None);
        assert_eq!(only_empty("isNone\n"), None);
        assert_eq!(only_empty(""), None);
    }

    #[test]
    fn a_check_that_passes_or_fails_by_its_own_mistake_shows_nothing() {
        assert!(shows_nothing("ok\nexit code 0", false).is_some());
        let own = "Traceback (most recent call last):\n  File \"<stdin>\", line 1\nNameError: name 'x' is not defined";
        assert!(shows_nothing(own, true).unwrap().contains("NameError"));
        let real = "Traceback:\n  File \"pkg/core.py\", line 9\nAssertionError: expected [2, 3]\nexit code 1";
        assert_eq!(shows_nothing(real, true), None);
        let asserted = "Traceback:\n  File \"<stdin>\", line 2, in <module>\nAssertionError\nexit code 1";
        assert_eq!(shows_nothing(asserted, true), None);
        let misused = "Traceback:\n  File \"<stdin>\", line 2, in <module>\nTypeError: 'int' object is not iterable";
        assert!(shows_nothing(misused, true).unwrap().contains("its own code"));
        let crashed =
            "Traceback:\n  File \"<stdin>\", line 2\n  File \"/w/pkg/toc.py\", line 9\nTypeError: can only concatenate";
        assert_eq!(shows_nothing(crashed, true), None);
        let node = "[stdin]:3\nTypeError: program.option is not a function\n    at [stdin]:3:9\n    at runScript";
        assert!(shows_nothing(node, true).is_some());
        assert_eq!(
            unreadable("[1, 2]\n<generator object windowed at 0x7f0e47bce770>\n"),
            Some("<generator object windowed at 0x7f0e47bce770>")
        );
        assert_eq!(unreadable("[(1, 2, 3)]\n"), None);
    }

    #[test]
    fn tracebacks_are_read_innermost_frame_first() {
        let python = "Traceback (most recent call last):\n  File \"<stdin>\", line 3, in <module>\n  \
File \"/w/markdown/core.py\", line 359, in convert\n    root = self.parser.parseDocument(self.lines).getroot()\n  \
File \"/w/markdown/extensions/toc.py\", line 50, in unique\n    id = '%s_%d' % (m.group(1), m.group(2)+1)\n\
TypeError: can only concatenate str (not \"int\") to str\nexit code 1";
        assert_eq!(
            frames(python),
            [
                ("/w/markdown/extensions/toc.py".to_string(), 50),
                ("/w/markdown/core.py".to_string(), 359),
                ("<stdin>".to_string(), 3)
            ]
        );
        let node = "/w/lib/command.js:1198\n    throw err;\n\nTypeError: x is not a function\n    \
at Command._parseOptionsImplied (/w/lib/command.js:1198:21)\n    at /w/lib/command.js:40:3\n    \
at Object.<anonymous> ([stdin]:4:9)\n    at node:internal/main/eval_stdin:32:5\n\nNode.js v20.20.2";
        let read = frames(node);
        assert_eq!(read[..2], [("/w/lib/command.js".to_string(), 1198), ("/w/lib/command.js".to_string(), 40)]);
        assert!(frames("all good\nexit code 0").is_empty());
    }

    #[test]
    fn of_a_whole_expected_output_only_the_lines_not_printed_now_are_required() {
        let now = "opts: { a: true, b: true, c: true }\nopts: { a: true, c: true }\nopts: { a: true }";
        let expected = "opts: { a: true, b: true, c: true }\nopts: { a:true, c:true }\nopts: { a: true, b: true }";
        assert_eq!(changed_lines(now, expected), "opts: { a: true, b: true }");
        // A line expected twice and printed once is required once more.
        assert_eq!(changed_lines("[6]\n[4]", "[6]\n[6]"), "[6]");
        assert_eq!(changed_lines("1\n2", "2\n1"), "");
        // A report the request quotes, not a crash, is what must change.
        let request = "Run with `--colr` it prints:\n\nerror: unknown option '--colr'\n(Did you mean ---color?)\n";
        let report = "error: unknown option '--colr'\n(Did you mean ---color?)\n";
        assert_eq!(quoted_report(report, request), Some("error: unknown option '--colr'"));
        let crash = format!("{report}    at suggest (/p/lib/suggest.js:12:3)\n");
        assert_eq!(quoted_report(&crash, request), None);
        assert_eq!(quoted_report("error: unknown option '--size'\n", request), None);
        // A script's misuse the request never speaks of, and errors it does.
        let script = "program.option('--max-old-space <n>').option('--max-old-space')";
        let error =
            "Error: Cannot add option '--max-old-space' to command 'x' due to conflicting flag '--max-old-space'";
        assert!(!speaks_of("`program.opts()` gives `{ maxOoldSspace: '1024' }` for --max-old-space", error, script));
        assert!(explained(error, script) >= 3);
        assert!(speaks_of("it throws a conflicting flag error", error, script));
        assert!(speaks_of("`f(1)` raises TypeError.", "TypeError: can only concatenate str", "print(f(1))"));
        assert!(!speaks_of("`f(1)` raises an Error.", "Error: bad", "print(f(1))"));
        assert_eq!(explained("ValueError: 0", "print(parse_port('0'))"), 0);
        let python = "Traceback (most recent call last):\n  File \"<stdin>\", line 3\nNameError: name 'text' is not \
defined. Did you mean: 'next'?";
        assert_eq!(undefined_name(python), Some("text"));
        assert_eq!(undefined_name("[stdin]:2\nReferenceError: argv is not defined\n    at [stdin]:2:1"), Some("argv"));
        assert_eq!(undefined_name("TypeError: x is not a function"), None);
        // A blank line that must be kept is a change of layout alone.
        assert!(layout_changed("<pre>a\n  pass\nb\n", "<pre>a\n  pass\n\nb"));
        assert!(layout_changed("a\n\nb", "a\nb"));
        assert!(!layout_changed("a\nb\n\n", "a\nb"));
        assert!(!layout_changed("a\nb", "a\n\nc"));
    }

    #[test]
    fn the_values_an_error_quotes_are_read_apart_from_apostrophes() {
        assert_eq!(quoted_values("ValueError: invalid literal for int() with base 10: 'abc'"), ["abc"]);
        assert_eq!(quoted_values("error: can't find \"x y\" or 'z'"), ["x y", "z"]);
        assert!(quoted_values("TypeError: it isn't so").is_empty());
    }

    #[test]
    fn a_traceback_is_cut_to_its_innermost_frame() {
        let output = "Traceback (most recent call last):\n  File \"<stdin>\", line 4, in <module>\n  File \
\"/w/tests/test_shop.py\", line 17, in test_slug\n    assert slugify(\"A\") == \"a\"\nAssertionError\nexit code 1";
        assert_eq!(
            innermost(output),
            "  File \"/w/tests/test_shop.py\", line 17, in test_slug\n    assert slugify(\"A\") == \"a\"\nAssertionError\nexit code 1"
        );
        assert_eq!(innermost("no frames"), "no frames");
    }
}
