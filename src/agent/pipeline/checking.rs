//! The check's steps in a turn of the pipeline (see [`super::check`]):
//! the request's examples or the model's script make the check (what it
//! must print is read or asked in [`super::expecting`]), the model writes
//! the probe; tack runs each as a Bash call, and candidates against them
//! in the scratch copy.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::expecting::Expected;
use super::{Candidate, Stop, Target, check, edit, examples, loading, reading, test_uses};
use crate::agent::Conversation;
use crate::agent::tests_run;
use crate::agent::turn::Generation;
use crate::protocol::{Block, Message, Usage};

/// Why a script that never loads the project is set aside.
pub(super) const NOT_LOADED: &str = "it never loads the project, so it shows nothing of the project's code";

/// Why a script is set aside whose output, the model says, is already
/// what it must be: it runs a case that works, not the one reported.
const AS_NOW: &str = "on the code as it is, it prints what it must print once the request is done, so it does not \
run the case the request reports";
/// Tokens the example's command-line arguments may take: one line.
const ARGUMENTS_TOKENS: u32 = 60;

/// Milliseconds a crate's tests may take on the code as it is: the first
/// build in the copy compiles the crate and its tests from the start.
const FIRST_BUILD_MS: u64 = 300_000;

/// Why a version is refused where the check's run tells no more.
const STILL_FAILS: &str = "with it the check still fails";

/// The crate that holds the file at `path` (relative to `root`): its
/// folder (the nearest with a Cargo.toml, `""` for the root) and the name
/// its code is used by (the library's, `-` read as `_`).
fn crate_of(root: &std::path::Path, path: &str) -> Option<(String, String)> {
    let mut folder = std::path::Path::new(path).parent();
    while let Some(at) = folder {
        if let Ok(text) = std::fs::read_to_string(root.join(at).join("Cargo.toml")) {
            let manifest: toml::Table = text.parse().ok()?;
            let name = |section: &str| manifest.get(section)?.get("name")?.as_str().map(str::to_string);
            let name = name("lib").or_else(|| name("package"))?;
            return Some((at.to_string_lossy().into_owned(), name.replace('-', "_")));
        }
        folder = at.parent();
    }
    None
}

/// The call that defines the JavaScript test titled `title` in `text`
/// (`it('title', function () {` down to the `})` at its indent), as the
/// test runners' files write one.
fn js_test_block<'t>(text: &'t str, title: &str) -> Option<&'t str> {
    /// Lines shown at most: a test longer than this is cut.
    const MAX_LINES: usize = 40;
    let at = ['\'', '"', '`'].iter().find_map(|q| text.find(&format!("{q}{title}{q}")))?;
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let indent = text[start..].len() - text[start..].trim_start().len();
    let mut end = start;
    for (n, line) in text[start..].split_inclusive('\n').take(MAX_LINES).enumerate() {
        end += line.len();
        let closes = n > 0 && line.len() - line.trim_start().len() == indent && line.trim_start().starts_with("})");
        if closes {
            break;
        }
    }
    Some(text[start..end].trim_end())
}

impl Conversation {
    /// The check (see [`check`]): a script that runs the request's
    /// example, run on the code as it is: with `of_examples`, the request's
    /// own calls as written, where it writes some that run; else the
    /// model's script. Where it fails on the project's own error, it must
    /// exit normally to pass; where it prints, the model says what it must
    /// print instead. The model's is asked for again, told why, when it
    /// fails on its own mistake, never loads the project or prints nothing.
    /// `None` where there is no check: switched off, no Bash, a language
    /// without a runner, or no usable script within the asks.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn write_check(
        &mut self,
        system: &str,
        base: &[Message],
        target: &Target,
        named: bool,
        of_examples: bool,
        candidates: &[Candidate],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<check::Check>, Stop> {
        const ASKS: usize = 3;
        let language = target.file.language;
        let Some(runner) = self.check_runner(language) else { return Ok(None) };
        let loading = loading::loading(self.workspace.root(), &self.code_map, language, &target.path);
        let request = super::prompt_of(base);
        let definition = target.definition();
        // The request's own examples, run as written, come before any
        // script the model writes: what the user ran is the surest
        // reproduction, and it costs no model call.
        let examples = match of_examples {
            true => self.request_examples(language, &loading, &request),
            false => Vec::new(),
        };
        let mut from_request = loading.examples_script(language, &examples);
        let tests_use = self.tests_use(target);
        let mut asked = 0;
        let mut refused = String::new();
        // The request's example and the name it uses but never defines
        // (`text` of `markdown.markdown(text)`), to be asked for alone.
        let mut undefined: Option<(String, String)> = None;
        // The example and its name once the value was asked: a value that
        // does not reproduce what the request reports is asked for again once.
        let mut defining: Option<(String, String)> = None;
        let mut valued_again = false;
        let reported = reading::reported_error(&request);
        for _ in 0..ASKS + usize::from(from_request.is_some()) {
            let by_request = from_request.take();
            // Whether this round's check is the example given its value.
            let mut valued = false;
            let (generation, reply) = match (&by_request, undefined.take()) {
                (_, Some((example, name))) if self.budget.allows_call() => {
                    asked += 1;
                    valued = true;
                    let again = if valued_again { refused.clone() } else { String::new() };
                    defining = Some((example.clone(), name.clone()));
                    let ask = format!(
                        "The request's example:\n```\n{}\n```\nuses `{name}`, which it never defines. Write the \
{} lines that define `{name}` as the request describes it, in one code block, and nothing else.{again}",
                        example.trim_end(),
                        runner.language_name()
                    );
                    self.notify(&format!("[asking for the `{name}` the request's example uses…]"));
                    let (generation, reply) = self.ask_short(system, base, &ask, usage, cancel).await?;
                    let defined = edit::code_blocks(&reply).into_iter().next().unwrap_or_default();
                    (generation, format!("```\n{}\n{example}```", defined.trim_end()))
                }
                (Some(script), _) => {
                    self.notify("[running the request's own examples, as written…]");
                    let mut generation = Generation::default();
                    generation.blocks.push(Block::Text {
                        text: "The request's own examples, run as written on the code as it is.".into(),
                    });
                    (generation, format!("```\n{script}```"))
                }
                (None, _) if of_examples || !self.budget.allows_call() => break,
                (None, _) => {
                    asked += 1;
                    let about = named.then_some(target);
                    let shown = (about, tests_use.as_str());
                    self.ask_check(system, base, language, shown, &loading, &refused, asked - 1, usage, cancel).await?
                }
            };
            let made = edit::code_blocks(&reply)
                .into_iter()
                .next()
                .map(|script| check::Check::new(runner, loading.clone(), &script));
            let mut check = match made {
                Some(Ok(mut check)) => {
                    check.came_from(match (&by_request, &defining) {
                        (Some(_), _) => check::Origin::RequestExample,
                        (None, Some((_, name))) if valued => {
                            check::Origin::RequestExampleCompleted { name: name.clone() }
                        }
                        _ => check::Origin::ModelScript,
                    });
                    check
                }
                Some(Err(error)) => {
                    self.notify(&format!("[no check: cannot make its folder: {error}]"));
                    return Ok(None);
                }
                None => {
                    self.record_reply(generation);
                    refused = "\nYour last reply held no script in a code block.".into();
                    continue;
                }
            };
            let not_loaded = match named {
                true => format!("{NOT_LOADED}: it must call the project's own `{}`", definition.name),
                false => format!("{NOT_LOADED}: it must run the project's own code, as the request's example does"),
            };
            if let Some(why) = self.cannot_show(language, &loading, &check.script, &not_loaded) {
                refused = self.set_aside_unrun(generation, "check", &why, candidates);
                continue;
            }
            let (ran, output) = self.run_now(system, base, generation, &mut check, usage, cancel).await?;
            if output.starts_with("permission denied") {
                return Ok(None);
            }
            let printed = check.now_output();
            let why = match reading::shows_nothing(&output, !ran) {
                // An example that passes arguments cannot run on an empty
                // command line, whatever the run shows.
                _ if let Some(why) = check.arguments_why() => why,
                // The request quotes an error it raised: a run without it
                // shows something else.
                // (An error only in the output the request pastes, a failing
                // test's, may be the test's own, where the example it also
                // writes returns the wrong value.)
                _ if let Some(kind) = reported.filter(|kind| {
                    ran && !output.contains(kind) && (by_request.is_none() || examples::in_prose(&request, kind))
                }) =>
                {
                    // The request's own example, or a script that looks for
                    // that error, runs without it: raising it is what is asked.
                    match reading::reported_error_line(&request) {
                        Some(error) if by_request.is_some() || check.script.contains(kind) => {
                            self.notify(&format!(
                                "[the code as it is runs without the error the request quotes (`{error}`): a change \
must raise it]"
                            ));
                            check.expect_error(&error);
                            return Ok(Some(check));
                        }
                        _ => {
                            format!("it runs without the `{kind}` the request reports, so it does not show the problem")
                        }
                    }
                }
                // The request quotes the very error the run stops on: it is
                // the reproduction, not the script's mistake, even where such
                // an error often is one (`has no attribute`, `is not a function`).
                Some(_) if !ran && reading::stops_on_reported(&output, &request) => {
                    self.notify(
                        "[the check stops on the error the request reports: it passes once it runs without it]",
                    );
                    check.fails_with(&output);
                    self.hold_to_stated_result(system, base, &mut check, &request, &output, usage, cancel).await?;
                    return Ok(Some(check));
                }
                None if let Some(line) =
                    reading::quoted_report(&format!("{printed}{}", check.now_errors()), &request) =>
                {
                    self.notify(&format!(
                        "[the check ends on the program's report of an error, as the request quotes it (`{line}`): \
what it reports must change]"
                    ));
                    check.count_errors_as_printed();
                    let printed = check.now_output();
                    let expected = self.expect_output(system, base, check, &printed, usage, cancel).await?;
                    match self.expected(expected, &by_request) {
                        Ok(made) => return Ok(made),
                        Err(why) => why,
                    }
                }
                None if let Some(why) = self.misused(&output, &request, &check.script) => why,
                None => {
                    self.notify("[the check fails on the code as it is: it passes once it runs without that error]");
                    check.fails_with(&output);
                    self.hold_to_stated_result(system, base, &mut check, &request, &output, usage, cancel).await?;
                    return Ok(Some(check));
                }
                Some(why) if !ran => why,
                Some(_) => match runner.shows_no_values(&printed, &request) {
                    Some(why) => format!("{why}{}", self.command_line_hint(runner, &request, &check.script)),
                    None => {
                        let expected = self.expect_output(system, base, check, &printed, usage, cancel).await?;
                        match self.expected(expected, &by_request) {
                            Ok(made) => return Ok(made),
                            Err(why) => why,
                        }
                    }
                },
            };
            self.notify(&format!("[the check is set aside: {why}]"));
            self.record(Message::user_text(format!("[tack] The check was set aside: {why}.")));
            // The model is told of its own scripts only; the request's own
            // example that lacks a value is given it.
            match (by_request, reading::undefined_name(&output)) {
                (Some(example), Some(name)) => undefined = Some((example, name.to_string())),
                (Some(_), None) => {}
                (None, _) => {
                    refused = self.told_why(&why, candidates);
                    // A value given the example that shows nothing is asked
                    // for again, once, told why.
                    if valued && !valued_again {
                        valued_again = true;
                        undefined = defining.clone();
                    }
                }
            }
        }
        Ok(None)
    }

    /// Holds a crashing `check` to what the request says its example
    /// should give once it runs, where the request writes values after
    /// it (see [`examples::results_after_crash`]): the one it writes, or the
    /// one the model picks among them, asked both ways round. A run that
    /// merely stops raising took one-token changes that make the call
    /// return nothing for fixes. Left as it is where the picks differ.
    #[allow(clippy::too_many_arguments)]
    async fn hold_to_stated_result(
        &mut self,
        system: &str,
        base: &[Message],
        check: &mut check::Check,
        request: &str,
        output: &str,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(), Stop> {
        let Some(error) = reading::error_line(output) else { return Ok(()) };
        let crash_line = reading::frames(output)
            .into_iter()
            .find(|(file, _)| file == "<stdin>" || file == "[stdin]")
            .and_then(|(_, line)| check.script.lines().nth(line.checked_sub(1)?));
        let Some((example, results)) =
            examples::results_after_crash(check.language(), request, &check.script, crash_line, error)
        else {
            return Ok(());
        };
        if results.is_empty() || !self.budget.allows_call() {
            return Ok(());
        }
        let choices: Vec<&str> = results.iter().map(String::as_str).collect();
        // Asked of the example itself, as a printed line is asked of its
        // statement: told the script, the 1.5B said the request gives none.
        let ask = |choices: &[&str]| {
            let listed: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
            format!(
                "On the code as it is, `{example}` stops with `{error}`. Once the request is done, what does the \
request say `{example}` gives? Reply with one of: {}.",
                listed.join(", ")
            )
        };
        // The one value the request writes after its example needs no ask.
        // Offered a way out ("the request does not say"), the 1.5B took it
        // both ways round on every report that did say; without one, a
        // pick that follows the order leaves the check as it was.
        let picked = match choices.as_slice() {
            [only] => Some(only.to_string()),
            _ => self.choice_both_ways(system, base, ask, &choices, true, usage, cancel).await?,
        };
        match picked {
            Some(result) => {
                self.notify(&format!("[once it runs, the check must give `{result}`, as the request says]"));
                check.hold_to_result(&result);
            }
            None => self.notify("[which result the request gives its example, the pick follows the order: left free]"),
        }
        Ok(())
    }

    /// The check `expected` made, if any; or why the model's script is set
    /// aside where the model says it prints what it must already: it runs
    /// a case that works. The request's own example (`by_request`) runs
    /// the case the request reports whatever the model says of it: there
    /// it makes no check.
    fn expected(&self, expected: Expected, by_request: &Option<String>) -> Result<Option<check::Check>, String> {
        match expected {
            Expected::Made(check) => Ok(Some(*check)),
            Expected::Unmade => Ok(None),
            Expected::AsNow if by_request.is_some() => {
                self.notify("[no check: the expected output is what it prints now]");
                Ok(None)
            }
            Expected::AsNow => Err(AS_NOW.to_string()),
        }
    }

    /// The calls the request writes that run as written on the project
    /// (see [`examples::request_examples`]): each starts at a definition
    /// of the project, or at the package `loading` imports.
    pub(super) fn request_examples(
        &self,
        language: crate::codemap::Language,
        loading: &loading::Loading,
        request: &str,
    ) -> Vec<examples::Example> {
        let known = |name: &str| {
            loading.top() == Some(name)
                || loading.called_as(name)
                || self.code_map.definitions().any(|f| {
                    !f.definition.local && f.definition.name == name && !crate::codemap::rank::is_aside(f.path)
                })
        };
        examples::request_examples(language, request, known)
    }

    /// The check the project's own documentation makes, where the request
    /// made none: the doctests of the Python definition `target`, run on the
    /// code as it is (a Bash call). Where an example its docstring gives
    /// prints something else than the docstring says, a change must make
    /// them all pass (`partition`'s docstring shows the even items first).
    /// `None` where it has no doctest or they pass now.
    pub(super) async fn doctest_check(
        &mut self,
        target: &Target,
        cancel: &CancellationToken,
    ) -> Result<Option<check::Check>, Stop> {
        let language = target.file.language;
        let documented = target.definition().doc.is_some() && target.old().contains(">>> ");
        let Some(runner) = self.check_runner(language).filter(|_| documented) else { return Ok(None) };
        let loading = loading::loading(self.workspace.root(), &self.code_map, language, &target.path);
        let qualified = target.qualified();
        let Some(Ok(mut check)) = loading.doctest_script(&qualified).map(|s| check::Check::new(runner, loading, &s))
        else {
            return Ok(None);
        };
        check.came_from(check::Origin::Doctests { of: qualified.clone() });
        self.notify(&format!("[running the doctests of `{qualified}`, the project's own examples of it…]"));
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text { text: format!("The doctests of `{qualified}`, on the code as it is.") });
        let input = json!({ "command": check.now_command(), "timeout_ms": 60_000 });
        let (ran, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        if ran || !output.contains("Failed example:") {
            self.notify("[they pass on the code as it is: no check]");
            return Ok(None);
        }
        self.notify("[they fail on the code as it is: a change must make them pass]");
        check.fails_with(&output);
        Ok(Some(check))
    }

    /// The check the project's own failing `tests` make, where the request
    /// wrote no example that makes one: they run alone on the code as it
    /// is (a Bash call), and a change must make them pass, as an engineer
    /// handed a red test suite takes it. `None` where `target` is no
    /// Python code, a test cannot be called alone, or they pass alone.
    pub(super) async fn tests_check(
        &mut self,
        target: &Target,
        tests: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<check::Check>, Stop> {
        use crate::codemap::Language;
        let language = target.file.language;
        if tests.is_empty() {
            return Ok(None);
        }
        // A crate's tests are a command of cargo's, which the check runs as
        // a shell script; each run builds first.
        let (runner, script) = match language {
            Language::Python => (self.check_runner(language), loading::tests_script(tests)),
            Language::Rust => (self.check_runner(Language::Bash), tests_run::rust_tests_command(tests)),
            Language::JavaScript => (
                self.check_runner(Language::Bash),
                tests_run::js_tests_command(tests, true, |f| self.uses_node_test(f), self.has_mocha()),
            ),
            _ => (None, None),
        };
        let (Some(runner), Some(script)) = (runner, script) else { return Ok(None) };
        let loading = loading::loading(self.workspace.root(), &self.code_map, language, &target.path);
        let Ok(mut check) = check::Check::new(runner, loading, &script) else { return Ok(None) };
        if language == Language::Rust {
            check.builds_first();
        }
        check.came_from(check::Origin::ProjectTests);
        self.notify(&format!("[running the project's failing tests alone ({})…]", tests.join(", ")));
        let mut generation = Generation::default();
        generation
            .blocks
            .push(Block::Text { text: "The project's failing tests, alone, on the code as it is.".into() });
        let timeout_ms = if language == Language::Rust { FIRST_BUILD_MS } else { 60_000 };
        let input = json!({ "command": check.now_command(), "timeout_ms": timeout_ms });
        let (ran, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        if ran || output.starts_with("permission denied") {
            self.notify("[alone, they do not fail: no check]");
            return Ok(None);
        }
        // Tests that never ran (the crate does not build as it is) show
        // nothing of the request's failure.
        let ran = match language {
            Language::Rust => output.contains("panicked at"),
            Language::JavaScript => output.contains("not ok ") || output.contains(" failing"),
            _ => true,
        };
        if !ran {
            self.notify("[they do not run on the code as it is: no check]");
            return Ok(None);
        }
        self.notify("[they fail on the code as it is: a change must make them pass]");
        let files = tests_run::test_files(tests);
        let owned = files.iter().map(|file| file.to_string()).collect();
        if let Some(code) = self.tests_code(tests) {
            check.show_as(code);
        }
        if language == Language::JavaScript {
            check.fails_with(&tests_run::last_lines(&output, 30));
            let guard = tests_run::js_tests_command(tests, false, |f| self.uses_node_test(f), self.has_mocha());
            let Some(guard) = guard else { return Ok(None) };
            check.made_of_tests(guard, tests.len(), owned);
            return Ok(Some(check));
        }
        if language == Language::Rust {
            check.fails_with(&reading::rust_test_failures(&output));
            // The crate's tests guard the candidates, the named ones among
            // them: a change that makes these pass must leave the rest passing.
            let Some(guard) = loading::project_tests(self.workspace.root(), language) else { return Ok(None) };
            check.made_of_tests(guard, tests.len(), owned);
            return Ok(Some(check));
        }
        // The frames above the test's are tack's script, which the model is not shown.
        check.fails_with(reading::innermost(&output));
        // The other tests of their files guard the candidates: a change
        // that makes these pass must leave those passing.
        check.made_of_tests(tests_run::python_tests_command(&files), tests.len(), owned);
        Ok(Some(check))
    }

    /// Where a request about a crate makes no other check: a test the model
    /// writes of the request's examples, as an integration test of the
    /// crate, written by the check's own script in the copy it runs in
    /// (never in the project) and run with cargo. It shows the problem
    /// where it panics on the code as it is; one the compiler refuses is
    /// asked again with its first error, one that passes already shows
    /// nothing and is asked again too.
    pub(super) async fn rust_check(
        &mut self,
        system: &str,
        base: &[Message],
        target: &Target,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<check::Check>, Stop> {
        const ASKS: usize = 2;
        /// The test target the check writes: a name no project uses.
        const TEST: &str = "tack_check";
        let Some(runner) = self.check_runner(crate::codemap::Language::Bash) else { return Ok(None) };
        let Some((folder, krate)) = crate_of(self.workspace.root(), &target.path) else { return Ok(None) };
        let loading = loading::loading(self.workspace.root(), &self.code_map, target.file.language, &target.path);
        let enter = match folder.is_empty() {
            true => String::new(),
            false => format!("cd {} && ", crate::tools::mcp::shell_word(&folder)),
        };
        let mut refused = String::new();
        for asked in 0..ASKS {
            if !self.budget.allows_call() {
                break;
            }
            let ask = format!(
                "Before anything changes, write a Rust integration test of the crate `{krate}`: one `#[test]` function that calls the crate as `{krate}::…`, as its users do, on the examples the request gives, and asserts with `assert_eq!` what the request says each should give. Reply with the test only, in one code block.{refused}"
            );
            self.notify("[writing a test of what the request expects…]");
            let (generation, reply) = self.ask_script(system, base, &ask, asked, usage, cancel).await?;
            let Some(test) = edit::code_blocks(&reply).into_iter().next().filter(|test| test.contains("#[test]"))
            else {
                self.record_reply(generation);
                refused = "\nYour last reply held no `#[test]` function in a code block.".into();
                continue;
            };
            // A crate of the 2015 edition (no `edition` in its manifest)
            // is found by its tests only through `extern crate`; later
            // editions accept the line too.
            // A `use {krate};` of its own would then name the crate twice.
            let test = match test.contains(&format!("extern crate {krate}")) {
                true => test,
                false => {
                    let kept: Vec<&str> = test.lines().filter(|line| line.trim() != format!("use {krate};")).collect();
                    format!("extern crate {krate};\n\n{}", kept.join("\n"))
                }
            };
            let script = format!(
                "{enter}mkdir -p tests && cat > tests/{TEST}.rs <<'TACK_TEST_END'\n{}\nTACK_TEST_END\n\
RUST_BACKTRACE=0 cargo test --offline --quiet --test {TEST}",
                test.trim_end()
            );
            let Ok(mut check) = check::Check::new(runner, loading.clone(), &script) else { return Ok(None) };
            check.builds_first();
            let input = json!({ "command": check.now_command(), "timeout_ms": FIRST_BUILD_MS });
            let (ran, output) = self.harness_call(generation, "Bash", input, cancel).await?;
            if output.starts_with("permission denied") {
                return Ok(None);
            }
            if ran {
                self.notify("[the test is set aside: it passes on the code as it is, so it shows nothing]");
                refused = "\nYour last test passes on the code as it is: it must assert what the request says the \
code should give, which it does not give yet."
                    .into();
                continue;
            }
            if !output.contains("panicked at") {
                let error = output.lines().find(|line| line.starts_with("error")).unwrap_or("it does not build");
                self.notify(&format!("[the test is set aside: it does not compile (`{error}`)]"));
                refused = format!("\nYour last test does not compile: `{error}`.");
                continue;
            }
            self.notify("[the test fails on the code as it is: a change must make it pass]");
            check.fails_with(&reading::rust_test_failures(&output));
            check.show_as(test);
            return Ok(Some(check));
        }
        Ok(None)
    }

    /// The tests of the project in `language` the request names as
    /// failing, as the check runs them (see `tests_run`).
    pub(super) fn named_failing_tests(&self, request: &str, language: crate::codemap::Language) -> Vec<String> {
        use crate::codemap::Language;
        match language {
            Language::Python => tests_run::named_python_tests(request, |path| {
                self.workspace.resolve(path).is_ok_and(|p| p.abs.is_file())
            }),
            Language::Rust => tests_run::named_rust_tests(request, |name| self.rust_tests_named(name)),
            Language::JavaScript => tests_run::named_js_tests(request, |path| self.workspace_text(path)),
            _ => Vec::new(),
        }
    }

    /// Whether the request names some of the project's tests as failing.
    pub(super) fn names_failing_tests(&self, request: &str) -> bool {
        use crate::codemap::Language;
        [Language::Python, Language::Rust, Language::JavaScript]
            .into_iter()
            .any(|language| !self.named_failing_tests(request, language).is_empty())
    }

    /// Whether the JavaScript test file at `file` runs under node's own
    /// runner: read as the check's copy holds it, the editor's unsaved
    /// text included.
    fn uses_node_test(&self, file: &str) -> bool {
        self.workspace_text(file).is_some_and(|text| text.contains("'node:test'") || text.contains("\"node:test\""))
    }

    /// The text of the workspace's file at `path` (relative), the editor's
    /// unsaved text where it has some.
    pub(super) fn workspace_text(&self, path: &str) -> Option<String> {
        self.workspace.resolve(path).ok().and_then(|path| self.workspace.read_text(&path).ok())
    }

    fn has_mocha(&self) -> bool {
        self.workspace.root().join("node_modules/.bin/mocha").is_file()
    }

    /// The Rust files where a `#[test]` function named `name` stands.
    pub(super) fn rust_tests_named(&self, name: &str) -> Vec<String> {
        let mut homes = Vec::new();
        for (path, map) in self.code_map.files().filter(|(_, map)| map.language == crate::codemap::Language::Rust) {
            let defined = map.definitions.iter().filter(|d| d.name == name).collect::<Vec<_>>();
            if defined.is_empty() {
                continue;
            }
            let Some(text) = self.workspace_text(path) else { continue };
            // Its range starts at its attributes.
            let is_test = |range: &std::ops::Range<usize>| {
                text.get(range.clone()).is_some_and(|code| {
                    code.lines().take_while(|line| line.trim_start().starts_with("#[")).any(|l| l.contains("test"))
                })
            };
            if defined.iter().any(|d| is_test(&d.range)) {
                homes.push(path.to_string());
            }
        }
        homes
    }

    /// The code of the Python `tests` (as pytest names them), each file's
    /// imports first: what the model reads as their check, where tack's
    /// script that calls them would tell it nothing of what they assert.
    /// The first few only: a small model's window is short, and the
    /// traceback it is shown is the first one's.
    fn tests_code(&self, tests: &[String]) -> Option<String> {
        const SHOWN_TESTS: usize = 3;
        let (tests, more) = tests.split_at(tests.len().min(SHOWN_TESTS));
        let mut code = String::new();
        for path in tests_run::test_files(tests) {
            let (_, map) = self.code_map.files().find(|(known, _)| *known == path)?;
            let text = self.workspace_text(path)?;
            let imports: Vec<&str> =
                map.imports.iter().filter_map(|range| text.get(range.clone())).map(str::trim_end).collect();
            let comment = match map.language {
                crate::codemap::Language::Python | crate::codemap::Language::Bash => "#",
                _ => "//",
            };
            code.push_str(&format!("{comment} {path}\n{}\n", imports.join("\n")));
            for test in tests.iter().filter(|test| test.split("::").next() == Some(path)) {
                if map.language == crate::codemap::Language::JavaScript {
                    let (_, title) = test.split_once("::")?;
                    code.push_str(&format!("\n{}\n", js_test_block(&text, title)?));
                    continue;
                }
                let parts = test.split("::").collect::<Vec<_>>();
                let definition = match parts.as_slice() {
                    // A Rust test's name is its module path: the function is its last part.
                    [_, .., function] if map.language == crate::codemap::Language::Rust => {
                        map.definitions.iter().find(|d| d.name == *function)?
                    }
                    [_, function] => map.definitions.iter().find(|d| d.name == *function && d.container.is_none())?,
                    [_, case, method] => {
                        map.definitions.iter().find(|d| d.name == *method && d.container.as_deref() == Some(*case))?
                    }
                    _ => return None,
                };
                code.push_str(&format!("\n{}\n", text.get(definition.range.clone())?.trim_end()));
            }
        }
        if !more.is_empty() {
            code.push_str(&format!("\n(and {} more failing tests)\n", more.len()));
        }
        Some(code)
    }

    /// Runs `check` on the code as it is, a Bash call for the model's
    /// `generation`: whether it ran and its output. Where the run read its
    /// empty command line, the script parses one as the user's program
    /// does, and only the example's command line is missing: the model is
    /// asked which arguments the request's example passes, and the check
    /// runs again with them (a small model asked to rewrite its script to
    /// pass them often breaks what was right in it).
    pub(super) async fn run_now(
        &mut self,
        system: &str,
        base: &[Message],
        generation: Generation,
        check: &mut check::Check,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(bool, String), Stop> {
        let input = json!({ "command": check.now_command(), "timeout_ms": 60_000 });
        let (ran, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        if output.starts_with("permission denied") || check.arguments_why().is_none() || !self.budget.allows_call() {
            return Ok((ran, output));
        }
        let reads = check.arguments_line().map(|line| format!(" (its line `{line}`)")).unwrap_or_default();
        let ask = format!(
            "This script:\n```\n{}\n```\nreads its command-line arguments{reads}, and it ran with none. Write \
the command-line arguments of the request's example that shows the problem, which the script is to run with: one \
line, as they follow the program's name on a shell command line. Reply with that line only.",
            check.script.trim_end()
        );
        self.notify("[the check reads its command line: asking for the example's arguments…]");
        let (generation, reply) = self.ask_bounded(system, base, &ask, ARGUMENTS_TOKENS, usage, cancel).await?;
        let Some(arguments) = reading::command_arguments(&reply, &check.script) else {
            self.record_reply(generation);
            return Ok((ran, output));
        };
        let passes_none = arguments.is_empty();
        check.run_with(arguments);
        // The example runs the program with nothing after it: the run with
        // the empty command line was the example's own.
        if passes_none {
            self.record_reply(generation);
            self.notify("[the example passes no command-line arguments: the run stands]");
            return Ok((ran, output));
        }
        self.notify(&format!("[running it again with the arguments `{}`…]", check.arguments_shown()));
        let input = json!({ "command": check.now_command(), "timeout_ms": 60_000 });
        self.harness_call(generation, "Bash", input, cancel).await
    }

    /// The model's check of the request about `target`, its `asked`-th
    /// (sampled after the first), told why the last was `refused`.
    #[allow(clippy::too_many_arguments)]
    async fn ask_check(
        &mut self,
        system: &str,
        base: &[Message],
        language: crate::codemap::Language,
        (about, tests_use): (Option<&Target>, &str),
        loading: &loading::Loading,
        refused: &str,
        asked: usize,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(Generation, String), Stop> {
        // The definition the request names, where it names one: a guess at
        // the code behind a symptom it only describes would have the
        // script run that guess, not the example the user ran.
        let about = about
            .map(|target| {
                let definition = target.definition();
                let doc = definition.doc.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
                format!(" The request is about `{}` in {}{doc}.", definition.signature, target.path)
            })
            .unwrap_or_default();
        let language_name = loading::runner(language).map_or("", |runner| runner.language_name());
        let ask = format!(
            "Before anything changes, write a short {language_name} script that runs the example the request gives \
and prints its result, then the result of any example the request says works as it should. It runs with no \
command-line arguments: write any the example passes into the script itself. {}{about}{tests_use} Reply with the \
script only, in one code block.{refused}",
            loading.hint,
        );
        self.notify("[writing a check of what the request expects…]");
        self.ask_script(system, base, &ask, asked, usage, cancel).await
    }

    /// How the project's own tests call the target, for the model that
    /// writes a check (see [`test_uses`]); empty where no test does, or
    /// where `[pipeline] test_uses` is off.
    fn tests_use(&self, target: &Target) -> String {
        if !self.settings.pipeline.test_uses {
            return String::new();
        }
        let definition = target.definition();
        let language = target.file.language;
        let mut names = vec![definition.name.clone()];
        // A module exported whole is called by the names its users load it as.
        if definition.is_whole_export(language) {
            names.extend(crate::codemap::rank::bound_names(&self.code_map, &target.path));
        }
        let container = definition.container.as_deref().map(|c| c.rsplit(['.', ':']).next().unwrap_or(c));
        let read = |path: &str| self.workspace_text(path);
        let Some((path, shown)) = test_uses::excerpt(&self.code_map, read, language, &names, container) else {
            return String::new();
        };
        format!("\nHow the project's own tests call it ({path}):\n```\n{shown}\n```\n")
    }

    /// Sets aside the model's `what` ("check", "script") without running
    /// it, for `why`: its reply is recorded and the notice shown. What the
    /// next ask tells the model.
    pub(super) fn set_aside_unrun(
        &mut self,
        generation: Generation,
        what: &str,
        why: &str,
        candidates: &[Candidate],
    ) -> String {
        self.record_reply(generation);
        self.notify(&format!("[the {what} is set aside: {why}]"));
        self.told_why(why, candidates)
    }

    /// What the next ask tells the model of the script set aside for
    /// `why`, with where the project defines a name it lacked.
    pub(super) fn told_why(&self, why: &str, candidates: &[Candidate]) -> String {
        format!("\nYour last script was set aside: {why}.{}", self.offered_where(why, candidates))
    }

    /// Where the project defines the name that `why` (a script set aside)
    /// says it does not offer, told to the model with the reason: a small
    /// model calls the API it remembers (`commander.option()` of an old
    /// release, for the method of `Command` it now is), and where a name
    /// lives is what it needs to call it. Where the project defines no such
    /// name (`invoice.add_line`), the heads of the `candidates`, what the
    /// request is about: read only then, as shown before any script is
    /// written they lead a small model to wrap each listed function in a
    /// helper of its own, and the check then runs those, not the request's
    /// example. Empty where `why` names none.
    fn offered_where(&self, why: &str, candidates: &[Candidate]) -> String {
        /// Definitions of the name told at most.
        const TOLD: usize = 3;
        let Some(name) = reading::missing_name(why) else { return String::new() };
        let homes: Vec<String> = self
            .homes(name)
            .map(|(path, d)| match &d.container {
                Some(container) => format!("a method of `{container}` in {path}"),
                None => format!("defined at the top of {path}"),
            })
            .take(TOLD)
            .collect();
        match homes.is_empty() {
            true => format!(" The project defines no `{name}`. {}", self.outline(candidates).trim_end()),
            false => format!(" `{name}` is {}.", homes.join("; ")),
        }
    }

    /// Why a check or a question's `script` cannot show the project's code,
    /// before it runs: it never loads the project (told as `not_loaded`),
    /// or it defines its own copy of the project's code (see
    /// [`Conversation::redefines`]).
    pub(super) fn cannot_show(
        &self,
        language: crate::codemap::Language,
        loading: &loading::Loading,
        script: &str,
        not_loaded: &str,
    ) -> Option<String> {
        match loading.loaded_by(script) {
            false => Some(not_loaded.to_string()),
            true => self.redefines(language, script),
        }
    }

    /// Why `script` cannot show the project's code, where it defines at its
    /// top level a function or class the project defines at the top of one
    /// of its files: a small model writes its own `createCommand` beside
    /// the project's, or a copy of the function the request is about, and
    /// its run then shows its own code. `None` where it defines none.
    fn redefines(&self, language: crate::codemap::Language, script: &str) -> Option<String> {
        use crate::codemap::DefKind;
        // A constant may name the project's function (`diff = semver.diff`).
        let code = |kind: DefKind| matches!(kind, DefKind::Function | DefKind::Class | DefKind::Type);
        let own = crate::codemap::parse(language, script);
        let mut defined = own.definitions.iter().filter(|d| !d.local && d.container.is_none() && code(d.kind));
        let (name, path) = defined.find_map(|d| {
            self.homes(&d.name).find(|(_, p)| p.container.is_none()).map(|(path, _)| (&d.name, path.to_string()))
        })?;
        Some(format!("it defines `{name}` itself, which the project defines in {path}: it must call the project's own"))
    }

    /// Why a check's crash is its own misuse of the project, not the
    /// problem: the project raised the error on purpose (the innermost of
    /// its lines the run passes through is a `raise` or `throw`), explains
    /// it in words of its own, and the request speaks of no such error. A
    /// small model declares a flag twice and takes commander's refusal for
    /// the bug. Or the project refused an input of the script's own that
    /// the request never names. `None` where the crash may be what the
    /// request reports.
    fn misused(&self, output: &str, request: &str, script: &str) -> Option<String> {
        /// Words of its own a message explains a misuse in at least.
        const EXPLAINED_WORDS: usize = 3;
        let error = reading::error_line(output)?;
        let (target, line) =
            reading::frames(output).into_iter().find_map(|(file, line)| Some((self.running(&file, line)?, line)))?;
        let raising = target.text.lines().nth(line.checked_sub(1)?)?.trim_start();
        let on_purpose = raising.starts_with("raise ") || raising.starts_with("throw ");
        if reading::speaks_of(request, error, script) {
            return None;
        }
        if on_purpose && reading::explained(error, script) >= EXPLAINED_WORDS {
            return Some(format!(
                "it stops on an error the project raises on purpose where it is misused (`{error}`), and the \
request speaks of no such error: the script must use the project as the request's example does"
            ));
        }
        // The project refused an input the script made up (`parse_port('abc')`
        // for a report that it accepts 0): a crash the request never spoke of.
        let invented = reading::quoted_values(error).into_iter().find(|value| {
            value.chars().any(char::is_alphanumeric) && script.contains(value) && !request.contains(value)
        });
        if let Some(invented) = invented {
            return Some(format!(
                "it stops on an error the project gives for the script's own input `{invented}` (`{error}`), and \
the request speaks of no such input or error: the script must run what the request reports"
            ));
        }
        // A request that reports no failure at all (a wrong result, a
        // missing feature) is not shown by a crash, unless the crash names
        // what the request asks for (`has no attribute 'natural_list'`, an
        // unexpected keyword `allow_sparse`): a small model passes `None`
        // for a callable and takes the crash for the bug.
        let named = reading::missing_name(error)
            .into_iter()
            .chain(reading::quoted_values(error))
            .any(|name| name.chars().any(char::is_alphanumeric) && request.contains(name));
        (!named && !reading::reports_failure(request)).then(|| {
            format!(
                "it stops on an error (`{error}`), where the request reports no error at all: the script must \
run the project as the request describes and print what it gives"
            )
        })
    }

    /// The project's own definitions named `name` (not local helpers, not
    /// in tests or declarations), with their files.
    pub(super) fn homes<'m>(
        &'m self,
        name: &'m str,
    ) -> impl Iterator<Item = (&'m str, &'m crate::codemap::Definition)> + 'm {
        self.own_definitions().filter(move |(_, d)| d.name == name)
    }

    /// The project's own definitions (not local helpers, not in tests or
    /// declarations), with their files.
    pub(super) fn own_definitions(&self) -> impl Iterator<Item = (&str, &crate::codemap::Definition)> {
        self.code_map
            .files()
            .filter(|(path, _)| !crate::codemap::rank::is_aside(path))
            .flat_map(|(path, map)| map.definitions.iter().filter(|d| !d.local).map(move |d| (path, d)))
    }

    /// The runner for a check or script of `language`, where they may run:
    /// checks switched on and Bash open to the harness.
    pub(super) fn check_runner(&self, language: crate::codemap::Language) -> Option<loading::Runner> {
        loading::runner(language).filter(|_| self.settings.pipeline.check && self.tools.harness_can_call("Bash"))
    }

    /// Runs `check` against the file at `path` as `after` (now `now`) in
    /// the scratch copy, as a Bash call of `generation`: `Ok(Err(why))` when
    /// it still fails.
    pub(super) async fn check_passes(
        &mut self,
        check: &mut check::Check,
        generation: Generation,
        path: &str,
        after: String,
        now: &str,
        cancel: &CancellationToken,
    ) -> Result<Result<bool, String>, Stop> {
        let staged = check.stage(&[(path, after)], &[(path, now)]);
        let command = match (staged, check.version_command(self.budget.command_timeout_ms(u64::MAX) / 1000)) {
            (Ok(()), Some(command)) => command,
            (Err(error), _) => return Ok(Err(format!("the check could not run: {error}"))),
            (_, None) => return Ok(Err("the check could not run".into())),
        };
        let (_, output) = self.harness_call(generation, "Bash", json!({ "command": command }), cancel).await?;
        if reading::passed(&output).is_some() {
            return Ok(Ok(output.contains(check::CHANGES_OTHER_USES)));
        }
        if check.guards_alone() || output.contains(check::GUARD_REFUSED) {
            return Ok(Err(check.guard_refusal()));
        }
        // What the check and the probe print with it, for the next version
        // to mend: "the check still fails" alone told the 1.5B nothing of the
        // use its version broke.
        let Some(command) = check.explain_command() else { return Ok(Err(STILL_FAILS.into())) };
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: "What the check prints with this version, and the uses of the code it must leave as they are:".into(),
        });
        let (_, output) = self.harness_call(generation, "Bash", json!({ "command": command }), cancel).await?;
        Ok(Err(check.refusal(&output).unwrap_or_else(|| STILL_FAILS.into())))
    }

    /// Makes the check's scratch copy and runs the project's tests there as
    /// they are (a Bash call): a candidate must then fail no more of them
    /// than fail now. Where they cannot run, the probe guards instead.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn prepare_scratch(
        &mut self,
        system: &str,
        base: &[Message],
        target: &Target,
        check: &mut check::Check,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<std::io::Result<()>, Stop> {
        let language = target.file.language;
        if let Err(error) = check.prepare_scratch(self.workspace.root()) {
            return Ok(Err(error));
        }
        let own = check.own_tests().map(str::to_string);
        let Some(tests) =
            self.configured_test().or(own).or_else(|| loading::project_tests(self.workspace.root(), language))
        else {
            self.probe(system, base, target, check, usage, cancel).await?;
            return Ok(Ok(()));
        };
        let why = "The project's tests, in the scratch copy before any change: a candidate must not fail more of them.";
        if self.tests_before(check, &tests, why, None, cancel).await? == Some(false) {
            self.probe(system, base, target, check, usage, cancel).await?;
        }
        Ok(Ok(()))
    }

    /// Runs the project's `tests` in the check's scratch copy before any
    /// change (a Bash call, told `why`, within `timeout_ms` where given),
    /// and has them guard its candidates where their report is read:
    /// `Some(true)` then, `Some(false)` where they do not run here, `None`
    /// where the check has no scratch copy.
    async fn tests_before(
        &mut self,
        check: &mut check::Check,
        tests: &str,
        why: &str,
        timeout_ms: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<Option<bool>, Stop> {
        let Some(command) = check.tests_command(tests) else { return Ok(None) };
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text { text: why.into() });
        let mut input = json!({ "command": command });
        if let Some(timeout_ms) = timeout_ms {
            input["timeout_ms"] = json!(timeout_ms);
        }
        let (ok, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        match reading::failures(&output, ok) {
            Some(before) => {
                self.notify(&format!("[the project's tests: {before} failing before any change]"));
                check.guard_with(tests, before);
                Ok(Some(true))
            }
            None => {
                self.notify("[the project's tests do not run here]");
                Ok(Some(false))
            }
        }
    }

    /// Where no check of the request could be made: the project's tests
    /// alone, run in a scratch copy before any change (a Bash call), so
    /// that a version that fails more of them is refused rather than
    /// offered unchecked. `None` where the project has no tests that run.
    pub(super) async fn tests_guard(
        &mut self,
        target: &Target,
        cancel: &CancellationToken,
    ) -> Result<Option<check::Check>, Stop> {
        let language = target.file.language;
        let Some(runner) = self.check_runner(crate::codemap::Language::Bash) else { return Ok(None) };
        let Some(tests) = self.configured_test().or_else(|| loading::project_tests(self.workspace.root(), language))
        else {
            return Ok(None);
        };
        let loading = loading::loading(self.workspace.root(), &self.code_map, language, &target.path);
        let Ok(mut guard) = check::Check::guarding_alone(runner, loading) else { return Ok(None) };
        if guard.prepare_scratch(self.workspace.root()).is_err() {
            return Ok(None);
        }
        let why = "No check of the request could be made: the project's tests, in a scratch copy before any change, \
which a version must not fail more of.";
        let guarded = self.tests_before(&mut guard, &tests, why, Some(FIRST_BUILD_MS), cancel).await?;
        Ok((guarded == Some(true)).then_some(guard))
    }

    /// Runs the check once more, following which of the project's
    /// functions it calls: those the request's words point to, best first
    /// (see `executed`). Empty where calls cannot be followed.
    pub(super) async fn follow_calls(
        &mut self,
        check: &check::Check,
        request: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<Target>, Stop> {
        let Some(command) = check.calls_command() else { return Ok(Vec::new()) };
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: "Which of the project's functions the check runs, on the code as it is.".into(),
        });
        let input = json!({ "command": command, "timeout_ms": 60_000 });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let executed = self.executed(&output, request);
        if !executed.is_empty() {
            let names: Vec<String> =
                executed.iter().take(6).map(|t| format!("`{}` in {}", t.qualified(), t.path)).collect();
            self.notify(&format!("[the check runs, among others, {}]", names.join(", ")));
        }
        Ok(executed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_javascript_test_is_shown_from_its_title_to_its_close() {
        let text = "describe('parse', () => {\n  it('is null if invalid', function () {\n    assert(x);\n  });\n\n  \
it('other', g);\n});\n";
        assert_eq!(
            js_test_block(text, "is null if invalid"),
            Some("  it('is null if invalid', function () {\n    assert(x);\n  });")
        );
        assert_eq!(js_test_block(text, "missing"), None);
    }
}
