//! The project's tests among the files handed over, run by the harness
//! around a change in the whole-file way, as an engineer runs them: before
//! it, so the model reads what fails ("assert discount(100) == 0.1"), and
//! after it, so a change they still fail is sent back instead of ending the
//! turn. Each run is the harness's own Bash call, approved as any.
//! The test command a project configures (`[checks] test`) runs the same
//! way after any turn that changed files, whichever way the turn went.

use tokio_util::sync::CancellationToken;

use super::code_text::exited;
use super::turn::Generation;
use super::{Conversation, TurnOutcome};
use crate::protocol::{Block, PermissionMode};

/// The lines of a failing run the model is shown: a traceback ends with
/// what failed, and a small model's window is short.
const SHOWN_LINES: usize = 30;

/// Runs plain test functions, unittest cases among them, where pytest is
/// not installed: pytest's style needs nothing but `assert`, and a project
/// checked that way still gets checked. A unittest case runs whatever its
/// name (`AutospecTest`), as unittest and pytest run it; one imported from
/// another module is that module's to run. Each failing test counts; where
/// none ran, it exits as pytest does then (5): a guard of no tests is none.
/// A test file that needs a package not installed here (`import pytest`
/// where pytest is missing) is skipped, not failed: it says nothing of the
/// code, and counted it made a guard of no tests look like one.
const PLAIN_RUNNER: &str = r#"import importlib, importlib.util, inspect, sys, traceback, unittest
failed = ran = 0
for path in sys.argv[1:]:
    try:
        module = importlib.import_module(path[:-3].replace("/", "."))
    except ModuleNotFoundError as error:
        top = (error.name or "").split(".")[0]
        if top and importlib.util.find_spec(top) is None:
            print(f"SKIPPED {path}: it needs {top}, which is not installed")
            continue
        failed += 1
        traceback.print_exc(file=sys.stdout)
        continue
    except Exception:
        failed += 1
        traceback.print_exc(file=sys.stdout)
        continue
    for name, test in list(vars(module).items()):
        if name.startswith("test") and inspect.isfunction(test) and not inspect.signature(test).parameters:
            ran += 1
            try:
                test()
            except Exception:
                failed += 1
                print(f"FAILED {path}::{name}")
                traceback.print_exc(file=sys.stdout)
        elif isinstance(test, type) and issubclass(test, unittest.TestCase) and test.__module__ == module.__name__:
            cases = unittest.defaultTestLoader.loadTestsFromTestCase(test)
            result = unittest.TextTestRunner(stream=sys.stdout, verbosity=0).run(cases)
            for case, _ in result.failures + result.errors:
                print(f"FAILED {path}::{name}::{case._testMethodName}")
            ran += result.testsRun
            failed += len(result.failures) + len(result.errors)
if not failed and not ran:
    print("no tests ran")
    sys.exit(5)
print(f"{failed} failed" if failed else "passed")
sys.exit(1 if failed else 0)"#;

/// Runs of the configured tests a turn makes at most: a model that cannot
/// make them pass is sent back twice, then the turn ends with their report.
pub(super) const MAX_CONFIGURED_TEST_RUNS: u32 = 3;

/// Tests that ran and failed.
pub(super) struct TestFailure {
    /// What the model is told: which files' tests fail, and the end of
    /// what they printed.
    pub(super) report: String,
    /// The files that hold a failing test.
    pub(super) files: Vec<String>,
    /// The failing tests, as pytest names them (`test_pricing.py::test_from_100`,
    /// `test_slug.py::TestSlug::test_empty`).
    pub(super) tests: Vec<String>,
}

impl Conversation {
    /// What the Python tests among `paths` print when they fail; `None`
    /// when they pass, none exists, or the run was refused. `Err` when the
    /// turn was cancelled meanwhile.
    pub(super) async fn failing_tests(
        &mut self,
        paths: &[&str],
        cancel: &CancellationToken,
    ) -> Result<Option<TestFailure>, TurnOutcome> {
        let tests: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|path| is_python_test(path) && is_plain_path(path))
            .filter(|path| self.workspace.resolve(path).is_ok_and(|path| path.abs.is_file()))
            .collect();
        if tests.is_empty() {
            return Ok(None);
        }
        let command = python_tests_command(&tests);
        let output = self.run_own_bash(Generation::default(), &command, None, cancel).await?;
        Ok(output.filter(|output| tests_failed(output)).map(|output| TestFailure {
            report: format!("the tests in {} fail:\n```\n{}\n```", tests.join(", "), last_lines(&output, SHOWN_LINES)),
            files: failing_files(&tests, &failing_test_ids(&output)),
            tests: failing_test_ids(&output),
        }))
    }

    /// Why the turn may not end yet: a blocking Stop hook's reason, else,
    /// when a change was made since they last ran, the configured tests'
    /// failure, or where none is configured, the language checker's errors
    /// in the changed files (see `build_check`). `Err` when the turn was cancelled meanwhile.
    pub(super) async fn why_not_done(
        &mut self,
        stop_hook_active: bool,
        last_text: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, TurnOutcome> {
        if let Some(reason) = self.stop_hook_blocks(stop_hook_active, last_text, cancel).await {
            return Ok(Some(reason));
        }
        // A configured test command builds the code itself.
        match self.configured_test() {
            Some(_) => self.configured_tests_failing(cancel).await,
            None => self.build_failing(cancel).await,
        }
    }

    /// What the configured test command printed when it fails after a
    /// change; `None` when none is configured, nothing changed since it
    /// last ran, its runs are spent, or it passes or was refused.
    pub(super) async fn configured_tests_failing(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, TurnOutcome> {
        let Some(command) = self.configured_test() else {
            return Ok(None);
        };
        if !self.untested_change || self.test_runs_left == 0 || self.policy.mode == PermissionMode::Plan {
            return Ok(None);
        }
        if !self.tools.harness_can_call("Bash") {
            self.untested_change = false;
            self.notify("[`[checks] test` is configured, but the Bash tool is off: the tests were not run]");
            return Ok(None);
        }
        self.untested_change = false;
        self.test_runs_left -= 1;
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text { text: "The project's tests (`[checks] test`), after the change:".into() });
        let output = self.run_own_bash(generation, &command, None, cancel).await?;
        // The last run's report stays in the history, for the user to see;
        // it sends the model back no more.
        let sends_back = self.test_runs_left > 0;
        let Some(output) = output.filter(|_| sends_back) else { return Ok(None) };
        let report =
            |what: &str| format!("the tests (`{command}`) {what}:\n```\n{}\n```", last_lines(&output, SHOWN_LINES));
        Ok(match exited(&output) {
            Some((_, "0")) => None,
            Some(_) => Some(report("fail")),
            // A run that hangs after a change is a failure the change made;
            // one refused says nothing of it.
            None if output.lines().last().is_some_and(|status| status.starts_with("timed out")) => {
                Some(report("did not finish"))
            }
            None => None,
        })
    }

    /// The project's test command, as `[checks] test` configures it.
    pub(super) fn configured_test(&self) -> Option<String> {
        self.settings.checks.test.clone().filter(|command| !command.trim().is_empty())
    }
}

/// `test_pricing.py`, `tests/test_shop.py`, `pricing_test.py`: where
/// pytest looks for tests.
fn is_python_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// A path the shell takes as one word, and Python as a module path.
fn is_plain_path(path: &str) -> bool {
    !path.is_empty() && path.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

/// The command that runs `tests`: pytest where Python can import it, the
/// plain runner otherwise. The choice is part of the command, so the step
/// the user sees is all that runs.
pub(super) fn python_tests_command(tests: &[&str]) -> String {
    let tests = tests.join(" ");
    format!(
        "{SRC_ON_PATH}if python3 -c 'import pytest' 2>/dev/null; then python3 -m pytest -q -p no:cacheprovider {tests}; \
         else {}; fi",
        plain_tests_command(&tests)
    )
}

/// Puts a `src/` layout's packages where the tests import them from, as
/// the project's installed package would be.
const SRC_ON_PATH: &str =
    "if ls src/*/__init__.py >/dev/null 2>&1; then export PYTHONPATH=\"src${PYTHONPATH:+:$PYTHONPATH}\"; fi; ";

/// Whether the Python project at `root` keeps its packages under `src/`
/// (`src/pkg/__init__.py`): its code imports from there, not the root.
pub(crate) fn is_src_layout(root: &std::path::Path) -> bool {
    std::fs::read_dir(root.join("src"))
        .map(|entries| entries.flatten().any(|entry| entry.path().join("__init__.py").is_file()))
        .unwrap_or(false)
}

fn plain_tests_command(tests: &str) -> String {
    format!("python3 -c '{PLAIN_RUNNER}' {tests}")
}

/// Whether the Bash tool's output is that of tests that ran and failed:
/// a refused or timed-out run says nothing of the change, and pytest's
/// exit code 5 means it found no test.
fn tests_failed(output: &str) -> bool {
    exited(output).is_some_and(|(_, code)| code != "0" && code != "5")
}

/// The files of `tests` a run's output reports a test of failing
/// (`FAILED test_pricing.py::test_from_100`, as pytest and the plain
/// runner both say), or all of them when it names none (one would not
/// import).
fn failing_files(tests: &[&str], failing: &[String]) -> Vec<String> {
    let named: Vec<String> =
        tests.iter().filter(|test| test_files(failing).contains(test)).map(|test| test.to_string()).collect();
    if named.is_empty() { tests.iter().map(|test| test.to_string()).collect() } else { named }
}

/// The tests a run's output reports failing, as pytest and the plain
/// runner name them on their `FAILED` lines, once each.
fn failing_test_ids(output: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for line in output.lines() {
        let Some(named) = line.strip_prefix("FAILED ") else { continue };
        // pytest adds the error after " - ".
        let id = named.split(" - ").next().unwrap_or(named).trim();
        if id.contains("::") && !ids.iter().any(|known| known == id) {
            ids.push(id.to_string());
        }
    }
    ids
}

/// The words of a request that may name a test or its file: split at
/// blanks, quotes, backticks, commas and parentheses, the sentence's
/// stop after them dropped.
fn request_words(request: &str) -> impl Iterator<Item = &str> {
    request
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | ',' | '(' | ')' | '\'' | '"'))
        .map(|word| word.trim_end_matches(['.', ':', ';']))
}

/// The Python tests the request names, as pytest names them: written so
/// (`tests/test_slug.py::TestSlug::test_empty`) or as unittest does
/// (`tests.test_slug.TestSlug.test_empty`), each of a test file that
/// `exists` (a path relative to the workspace). A report that says which
/// tests fail names the surest check there is.
pub(super) fn named_python_tests(request: &str, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    for word in request_words(request) {
        let id = match word.split_once("::") {
            Some((file, _)) if is_python_test(file) && exists(file) => Some(word.to_string()),
            Some(_) => None,
            // The longest dotted head that is a test file is the module;
            // one or two names follow it (a function, or a case's method).
            // A path (`tests/test_x.py`) is no dotted name; unittest runs
            // the `test…` methods of a case.
            None if word.contains('/') || !word.rsplit('.').next().is_some_and(|last| last.starts_with("test")) => None,
            None => {
                let parts: Vec<&str> = word.split('.').collect();
                (1..parts.len()).rev().find_map(|at| {
                    let file = format!("{}.py", parts[..at].join("/"));
                    let names = &parts[at..];
                    (names.len() <= 2 && is_python_test(&file) && exists(&file))
                        .then(|| format!("{file}::{}", names.join("::")))
                })
            }
        };
        if let Some(id) = id.filter(|id| !named.contains(id)) {
            named.push(id);
        }
    }
    named
}

/// The Rust tests the request names, each as `FILE::NAME`: the file that
/// holds it and the name libtest filters by (`src/duration.rs::duration::
/// test::nice_error`, `tests/version.rs::less_than`). Read from cargo's own
/// report pasted in the request (`---- NAME stdout ----`, `test NAME ...
/// FAILED`), and from the names it writes (`tests/version.rs::less_than`,
/// `bytes::test_quote`) that `tests_in` (a function's name: the files
/// where a `#[test]` function of that name stands) finds.
pub(super) fn named_rust_tests(request: &str, tests_in: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    let mut names: Vec<(Option<&str>, &str)> = Vec::new();
    for line in request.lines().map(str::trim) {
        let reported = line
            .strip_prefix("---- ")
            .and_then(|rest| rest.strip_suffix(" stdout ----"))
            .or_else(|| line.strip_prefix("test ").and_then(|rest| rest.strip_suffix(" ... FAILED")));
        if let Some(name) = reported {
            names.push((None, name));
        }
    }
    for word in request_words(request) {
        match word.split_once(".rs::") {
            Some((file, name)) => names.push((Some(&word[..file.len() + 3]), name)),
            None => names.push((None, word)),
        }
    }
    for (file, name) in names {
        let parts: Vec<&str> = name.split("::").collect();
        if !parts.iter().all(|part| crate::text::is_identifier(part)) {
            continue;
        }
        let Some((last, modules)) = parts.split_last() else { continue };
        let homes = tests_in(last);
        // The file whose module path the name starts with, the deepest:
        // `bytes::test_quote` is src/bytes.rs's, `test_quote` the crate root's.
        let home = homes
            .iter()
            .filter(|home| file.is_none_or(|file| file == home.as_str()))
            .filter_map(|home| {
                let path = module_path(home)?;
                modules.starts_with(&path).then_some((path.len(), home))
            })
            .max_by_key(|(depth, _)| *depth)
            .map(|(_, home)| home);
        if let Some(id) = home.map(|home| format!("{home}::{name}")).filter(|id| !named.contains(id)) {
            named.push(id);
        }
    }
    named
}

/// The module path of the Rust file at `path` within its crate: none for
/// a crate's root (`src/lib.rs`, `src/main.rs`, a test target
/// `tests/x.rs`), `[a, b]` for `src/a/b.rs` or `src/a/b/mod.rs`.
fn module_path(path: &str) -> Option<Vec<&str>> {
    let inner = path.strip_suffix(".rs")?;
    if let Some(target) = inner.strip_prefix("tests/") {
        return (!target.contains('/')).then(Vec::new);
    }
    let inner = inner.strip_prefix("src/")?;
    let mut parts: Vec<&str> = inner.split('/').collect();
    if matches!(parts.as_slice(), ["lib" | "main"]) {
        return Some(Vec::new());
    }
    if parts.last() == Some(&"mod") {
        parts.pop();
    }
    Some(parts)
}

/// The command that runs the Rust tests named as [`named_rust_tests`]
/// names them, alone: each target once (`--lib`, `--test x`), filtered by
/// the tests' names. Never fetches: a check runs on what is at hand.
pub(super) fn rust_tests_command(tests: &[String]) -> Option<String> {
    let mut targets: Vec<(String, Vec<&str>)> = Vec::new();
    for test in tests {
        let (file, name) = test.split_once(".rs::")?;
        let target = match file.strip_prefix("tests/") {
            Some(stem) => format!("--test {stem}"),
            None if file.starts_with("src/") => "--lib".to_string(),
            None => return None,
        };
        match targets.iter_mut().find(|(known, _)| *known == target) {
            Some((_, names)) => names.push(name),
            None => targets.push((target, vec![name])),
        }
    }
    let runs: Vec<String> = targets
        .iter()
        .map(|(target, names)| format!("RUST_BACKTRACE=0 cargo test --offline --quiet {target} -- {}", names.join(" ")))
        .collect();
    (!runs.is_empty()).then(|| runs.join(" && "))
}

/// The JavaScript tests the request names, each as `FILE::TITLE`: a test
/// file the request names whose text (as `read` gives it) holds the
/// title quoted. Titles are read from a runner's report pasted in the
/// request (node's `✖ TITLE (1.9ms)`) and from a name written as jest and
/// the test runners' summaries write one (`test/a.js › suite › TITLE`),
/// the longest head of it that a named file holds.
pub(super) fn named_js_tests(request: &str, read: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut files: Vec<(String, String)> = Vec::new();
    for word in request_words(request) {
        // A stack frame's `test/a.js:16:12`.
        let path = word.split(':').next().unwrap_or(word);
        let js = [".js", ".mjs", ".cjs"].iter().any(|ext| path.ends_with(ext));
        if !js || !path.contains("test") || !is_plain_path(path) || files.iter().any(|(known, _)| known == path) {
            continue;
        }
        if let Some(text) = read(path) {
            files.push((path.to_string(), text));
        }
    }
    // A test's title, not a suite's: the runner reports a failing suite
    // (`✖ suite (21ms)`) as it does a test.
    let quoted = |text: &str, title: &str| {
        ['\'', '"', '`'].iter().any(|q| {
            text.match_indices(&format!("{q}{title}{q}")).any(|(at, _)| {
                let before = text[..at].trim_end();
                ["it(", "test("].iter().any(|call| before.ends_with(call))
            })
        })
    };
    let mut titles: Vec<String> = Vec::new();
    for line in request.lines().map(str::trim) {
        if let Some(reported) = line.strip_prefix("✖ ") {
            // Its time, in parentheses, ends it.
            let title = match reported.rfind(" (") {
                Some(at) if reported.ends_with("ms)") => &reported[..at],
                _ => reported,
            };
            titles.push(title.trim().to_string());
        }
        if let Some((_, last)) = line.rsplit_once(" › ") {
            let words: Vec<&str> = last.split(' ').collect();
            let held = (1..=words.len()).rev().map(|n| words[..n].join(" ")).find(|head| {
                let head = head.trim_end_matches(['.', ',', ':']);
                files.iter().any(|(_, text)| quoted(text, head))
            });
            if let Some(title) = held {
                titles.push(title.trim_end_matches(['.', ',', ':']).to_string());
            }
        }
    }
    let mut named: Vec<String> = Vec::new();
    for (path, text) in &files {
        for title in titles.iter().filter(|title| !title.is_empty() && quoted(text, title)) {
            let id = format!("{path}::{title}");
            if !named.contains(&id) {
                named.push(id);
            }
        }
    }
    named
}

/// The command that runs the JavaScript tests named as [`named_js_tests`]
/// names them: `alone`, or with the other tests of their files. Node's own
/// runner for a file that uses it (its report as TAP, whose `# fail N`
/// counts the failures), mocha where the project has it. `None` for
/// another runner.
pub(super) fn js_tests_command(
    tests: &[String],
    alone: bool,
    uses_node_test: impl Fn(&str) -> bool,
    has_mocha: bool,
) -> Option<String> {
    let word = crate::tools::mcp::shell_word;
    // One run for each runner, of all its files: each run reports its
    // count, and none is left out where another fails.
    let files = test_files(tests);
    let (node, mocha): (Vec<&str>, Vec<&str>) = files.iter().partition(|file| uses_node_test(file));
    if !mocha.is_empty() && !has_mocha {
        return None;
    }
    let titles = |files: &[&str]| -> Vec<String> {
        let mut titles: Vec<String> = Vec::new();
        for (file, title) in tests.iter().filter(|_| alone).filter_map(|test| test.split_once("::")) {
            let title = regex::escape(title);
            if files.contains(&file) && !titles.contains(&title) {
                titles.push(title);
            }
        }
        titles
    };
    let paths = |files: &[&str]| files.iter().map(|file| word(file)).collect::<Vec<_>>().join(" ");
    let mut runs: Vec<String> = Vec::new();
    if !node.is_empty() {
        let patterns =
            titles(&node).iter().map(|title| format!(" --test-name-pattern={}", word(title))).collect::<String>();
        runs.push(format!("node --test --test-reporter=tap{patterns} {}", paths(&node)));
    }
    if !mocha.is_empty() {
        let grep = match titles(&mocha) {
            titles if titles.is_empty() => String::new(),
            titles => format!(" --grep {}", word(&titles.join("|"))),
        };
        runs.push(format!("./node_modules/.bin/mocha{grep} {}", paths(&mocha)));
    }
    // Both run, whichever fails; the status is a failure where either fails.
    match runs.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [first, second, ..] => Some(format!("{{ {first}; s=$?; {second} && [ $s -eq 0 ]; }}")),
    }
}

/// The files of tests named as pytest names them (`tests/test_shop.py`
/// of `tests/test_shop.py::test_free`), once each, in order.
pub(super) fn test_files(tests: &[String]) -> Vec<&str> {
    let mut files: Vec<&str> = Vec::new();
    for file in tests.iter().filter_map(|test| test.split("::").next()) {
        if !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

pub(super) fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tests_a_request_names_are_read_as_pytest_names_them() {
        let exists = |path: &str| matches!(path, "tests/test_cachedmethod.py" | "test_parse.py");
        let request = "These tests fail: test_parse.TestBugs.test_unused_centered_alignment_bug and \
`tests/test_cachedmethod.py::AutospecTest::test_autospec_no_warnings` (run `python3 -m unittest test_parse`).";
        assert_eq!(
            named_python_tests(request, exists),
            [
                "test_parse.py::TestBugs::test_unused_centered_alignment_bug",
                "tests/test_cachedmethod.py::AutospecTest::test_autospec_no_warnings"
            ]
        );
        let dotted = "This test fails: tests.test_cachedmethod.AutospecTest.test_autospec_no_warnings.";
        assert_eq!(
            named_python_tests(dotted, exists),
            ["tests/test_cachedmethod.py::AutospecTest::test_autospec_no_warnings"]
        );
        // A module alone, a file that is no test or is not there, names no test.
        assert!(
            named_python_tests("run test_parse or parse.Parser.parse or tests.test_other.T.test_t", exists).is_empty()
        );
        // A test file's path, as a traceback writes it, names no test in it.
        assert!(named_python_tests("File \"tests/test_cachedmethod.py\", line 685", exists).is_empty());
    }

    #[test]
    fn the_rust_tests_a_request_names_are_found_in_their_files() {
        let tests_in = |name: &str| -> Vec<String> {
            match name {
                "test_quote" => vec!["src/lib.rs".into(), "src/bytes.rs".into()],
                "test_nice_error_message" => vec!["src/duration.rs".into()],
                "test_less_than" => vec!["tests/test_version_req.rs".into()],
                _ => Vec::new(),
            }
        };
        let report = "These tests fail: `test_quote`, `bytes::test_quote` (`cargo test --lib`).\n\
---- duration::test::test_nice_error_message stdout ----\nthread panicked at src/duration.rs:393:9\n\
and tests/test_version_req.rs::test_less_than; `humantime::parse_duration` is no test.";
        let named = named_rust_tests(report, tests_in);
        assert_eq!(
            named,
            [
                "src/duration.rs::duration::test::test_nice_error_message",
                "src/lib.rs::test_quote",
                "src/bytes.rs::bytes::test_quote",
                "tests/test_version_req.rs::test_less_than"
            ]
        );
        assert_eq!(
            rust_tests_command(&named).unwrap(),
            "RUST_BACKTRACE=0 cargo test --offline --quiet --lib -- duration::test::test_nice_error_message test_quote \
bytes::test_quote && RUST_BACKTRACE=0 cargo test --offline --quiet --test test_version_req -- test_less_than"
        );
        // A test no file holds, or in a test target other than the one written, names none.
        assert!(named_rust_tests("`bytes::test_other`, tests/quote.rs::test_quote", tests_in).is_empty());
    }

    #[test]
    fn the_javascript_tests_a_request_names_are_found_in_the_files_it_names() {
        let read = |path: &str| match path {
            "test/parse.js" => {
                Some("describe('parse', () => {\n  it('Should return null if input is invalid', f);\n".into())
            }
            "test/bytes.js" => Some("it(\"Should return null if input is invalid\", g);\nit('other', h);\n".into()),
            "test/format.js" => Some("it('Should return null if input is invalid', k);\n".into()),
            _ => None,
        };
        let request = "This test fails: test/parse.js › parse › Should return null if input is invalid (and the same \
test in test/bytes.js, test/suite.js).\n```\n  ✖ other (1.3ms)\n    at TestContext (test/bytes.js:20:12)\n```";
        let named = named_js_tests(request, read);
        assert_eq!(
            named,
            [
                "test/parse.js::Should return null if input is invalid",
                "test/bytes.js::Should return null if input is invalid",
                "test/bytes.js::other"
            ]
        );
        assert_eq!(
            js_tests_command(&named, true, |file| file == "test/parse.js", true).unwrap(),
            "{ node --test --test-reporter=tap --test-name-pattern='Should return null if input is invalid' \
test/parse.js; s=$?; ./node_modules/.bin/mocha --grep 'Should return null if input is invalid|other' test/bytes.js \
&& [ $s -eq 0 ]; }"
        );
        assert_eq!(js_tests_command(&named, true, |_| false, false), None, "no runner tack knows");
        assert_eq!(
            js_tests_command(&named, false, |_| true, false).unwrap(),
            "node --test --test-reporter=tap test/parse.js test/bytes.js",
            "their files whole guard them"
        );
    }

    #[test]
    fn the_files_pytest_collects_are_tests() {
        assert!(is_python_test("test_pricing.py"));
        assert!(is_python_test("tests/test_shop.py"));
        assert!(is_python_test("pricing_test.py"));
        assert!(!is_python_test("pricing.py"));
        assert!(!is_python_test("testing.py"));
        assert!(!is_python_test("test_pricing.js"));
        assert!(!is_plain_path("my tests/test_a.py"), "a space splits the shell's word");
        assert!(!is_plain_path("test_'a.py"));
    }

    #[test]
    fn only_tests_that_ran_and_failed_count_as_failing() {
        assert!(tests_failed("FAILED test_pricing.py::test_discount\n1 failed\nexit code 1"));
        assert!(!tests_failed("passed\nexit code 0"));
        assert!(!tests_failed("no tests ran\nexit code 5"), "pytest found no test");
        assert!(!tests_failed("permission denied: the user denied this call"));
        assert!(!tests_failed("timed out after 120000 ms; the command and its children were killed"));
    }

    #[test]
    fn the_files_of_failing_tests_are_those_named_failing() {
        let output = "FAILED tests/test_shop.py::test_free_shipping - AssertionError\n1 failed\nexit code 1";
        let failing = failing_test_ids(output);
        assert_eq!(failing_files(&["tests/test_shop.py", "tests/test_text.py"], &failing), ["tests/test_shop.py"]);
        let broken = "Traceback (most recent call last):\nImportError: cannot import name 'x'\nexit code 1";
        assert_eq!(failing_files(&["test_a.py", "test_b.py"], &failing_test_ids(broken)), ["test_a.py", "test_b.py"]);
        let twice =
            "FAILED t.py::test_a - AssertionError\nFAILED t.py::TestB::test_c\nFAILED t.py::test_a\nexit code 1";
        assert_eq!(failing_test_ids(twice), ["t.py::test_a", "t.py::TestB::test_c"]);
        assert!(failing_test_ids(broken).is_empty());
    }

    #[test]
    fn a_long_failure_keeps_its_end() {
        let output: String = (1..=50).map(|n| format!("line {n}\n")).collect();
        let kept = last_lines(&output, 3);
        assert_eq!(kept, "line 48\nline 49\nline 50");
    }

    /// The plain runner, run by a real python3: a failing assert fails the
    /// run and names the test; a module of passing tests passes.
    #[test]
    fn the_plain_runner_runs_assert_functions_and_unittest_cases() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pricing.py"), "def discount(total):\n    return 0.1 if total > 100 else 0\n")
            .unwrap();
        std::fs::write(
            dir.path().join("test_pricing.py"),
            "from pricing import discount\n\ndef test_from_100():\n    assert discount(100) == 0.1\n\n\
             def test_above():\n    assert discount(200) == 0.1\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("test_cases.py"),
            "import unittest\nfrom pricing import discount\n\nclass TestDiscount(unittest.TestCase):\n    \
             def test_none_below(self):\n        self.assertEqual(discount(5), 0)\n\n    \
             def test_from_100(self):\n        self.assertEqual(discount(100), 0.1)\n\n\n\
             class DiscountEdgeTest(unittest.TestCase):\n    def test_zero(self):\n        \
             self.assertEqual(discount(0), 1)\n",
        )
        .unwrap();
        let run = |tests: &[&str]| {
            let command = plain_tests_command(&tests.join(" "));
            std::process::Command::new("bash").arg("-c").arg(command).current_dir(dir.path()).output().unwrap()
        };
        let failing = run(&["test_pricing.py"]);
        let printed = String::from_utf8_lossy(&failing.stdout);
        assert!(!failing.status.success(), "{printed}");
        assert!(printed.contains("FAILED test_pricing.py::test_from_100"), "{printed}");
        assert!(!printed.contains("test_above"), "a passing test is not reported: {printed}");
        let case = run(&["test_cases.py"]);
        let printed = String::from_utf8_lossy(&case.stdout);
        assert!(!case.status.success(), "{printed}");
        // A case runs whatever its name; `unittest.TestCase` imported is no case of the module's.
        assert_eq!(
            failing_test_ids(&printed),
            ["test_cases.py::TestDiscount::test_from_100", "test_cases.py::DiscountEdgeTest::test_zero"],
            "{printed}"
        );
        std::fs::write(
            dir.path().join("test_above.py"),
            "from pricing import discount\n\ndef test_above():\n    assert discount(200) == 0.1\n",
        )
        .unwrap();
        let passing = run(&["test_above.py"]);
        assert!(passing.status.success(), "{}", String::from_utf8_lossy(&passing.stdout));
        // A module with no tests passes nothing: it says so, as pytest does.
        assert_eq!(run(&["pricing.py"]).status.code(), Some(5));
        // One that needs a package not installed here runs nothing either:
        // it fails no test of the code's.
        std::fs::write(
            dir.path().join("test_needs.py"),
            "import not_installed_here

def test_x():
    assert False
",
        )
        .unwrap();
        let needs = run(&["test_needs.py"]);
        let printed = String::from_utf8_lossy(&needs.stdout);
        assert_eq!(needs.status.code(), Some(5), "{printed}");
        assert!(
            printed.contains("SKIPPED test_needs.py: it needs not_installed_here, which is not installed"),
            "{printed}"
        );
        // A project module that is missing is the code's failure.
        std::fs::write(
            dir.path().join("test_gone.py"),
            "from pricing.gone import x

def test_x():
    assert x
",
        )
        .unwrap();
        assert_eq!(run(&["test_gone.py"]).status.code(), Some(1));
    }
}
