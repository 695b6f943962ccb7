//! The check: a short script the model writes from the request, that shows
//! the problem (Agentless's reproduction test). It runs the request's
//! example and prints the result; tack runs it on the code as it is. Where
//! it fails there on the project's own error, it passes once it exits
//! normally; where it prints, the model says what it must print once the
//! request is done, and it passes when it prints that. A script that fails
//! on a mistake of its own checks nothing and is dropped. The check then
//! runs against candidate changes in a scratch copy of the workspace, never
//! in the workspace itself, and a change is offered only when it passes.
//! Every run is a Bash call the user sees, under the permission mode; the
//! script, the scratch copy and the candidates are files of a temporary
//! folder the commands name.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use super::loading::{Loading, Runner};
use super::reading::{COUNTS_PATTERN, normalized};
use super::watchers::{NODE_ARGV, NODE_CALLS, PYTHON_ARGV, PYTHON_CALLS, PYTHON_SPECTRUM};
use crate::codemap::Language;
use crate::workspace::mirror::Mirror;

mod guards;

/// Where a check came from, which is what a user weighs a change by: their
/// own example or the project's tests are their words; a script the model
/// wrote is only the model's reading of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The calls the request itself writes, run as written.
    RequestExample,
    /// The request's example, with a name it uses but never defines
    /// written by the model.
    RequestExampleCompleted { name: String },
    /// The project's failing tests (see [`Check::made_of_tests`]).
    ProjectTests,
    /// The doctests of a definition, the project's own examples of it.
    Doctests { of: String },
    /// A script the model wrote from the request.
    ModelScript,
    /// Nothing of the request: no check of it could be made, and the
    /// project's tests guard alone (see `tests_guard`).
    NoCheck,
}

/// A check that showed the problem on the code as it is.
pub struct Check {
    runner: Runner,
    loading: Loading,
    pub script: String,
    /// Where the check came from, for what a change is said to rest on.
    origin: Origin,
    /// What the model is shown as the check, where not its script: the
    /// failing tests' own code, where tack's script only calls them.
    shown: Option<String>,
    /// The command-line arguments it runs with: the example's command line,
    /// where the script parses it as the program the user ran does.
    arguments: Vec<String>,
    /// What it must print to pass (normalized); `None`: it must exit normally.
    expected: Option<String>,
    /// The expected lines must be printed in their order, one after
    /// another, blank ones included: where what must change is the layout.
    in_order: bool,
    /// What it writes to its error stream counts as printed: where the
    /// program's own error report is what must change.
    errors_printed: bool,
    /// The error (`TypeError: must be a string`, blanks dropped) it must
    /// raise to pass: where the request quotes an error the code as it is
    /// runs without, raising it is what the request asks.
    expected_error: Option<String>,
    /// How it failed on the code as it is, where it must exit normally.
    failure: String,
    /// What its output must hold (as [`super::expect::loose`] reads it)
    /// once it exits normally: the result the request says its crashing
    /// example should give. A run that merely stops raising may give
    /// anything (`None` where `1.5` was asked for).
    result: Option<String>,
    /// The project's tests and how many fail before any change: a
    /// candidate that passes the check must not fail more of them.
    tests: Option<(String, usize)>,
    /// Where the check is the project's failing tests: the command that
    /// runs their files, which guards the candidates, and how many tests
    /// the check itself must make pass.
    own_tests: Option<(String, usize, Vec<String>)>,
    /// A probe guards: a script of other uses of the code, whose output a
    /// candidate must leave as it is.
    probe: bool,
    /// Some of the probe's lines may be the request's case again: a
    /// candidate that changes only them passes where none passes strictly.
    lenient: bool,
    /// Each run builds the project first (a crate's tests): it is given the
    /// time of a test run, not of a script's.
    builds: bool,
    /// The script, the scratch copy and the candidates: gone with the check.
    dir: tempfile::TempDir,
    /// The scratch copy, once made.
    scratch: Option<PathBuf>,
}

/// Seconds one run of the check may take against one candidate.
const TRY_SECONDS: u32 = 20;
/// Seconds one run of the project's tests may take against one candidate.
const TESTS_SECONDS: u32 = 300;
/// Candidates that pass the check that the guard runs for at most.
const MAX_GUARDED: usize = 25;
/// Candidates that pass the check that are looked for at most, and
/// candidates tried at most after the first that passes.
const MAX_PASSING: usize = 3;
const TRIED_AFTER_PASSING: usize = 40;
/// What the tries print where their seconds ran out, with the number of
/// the first candidate left untried.
pub const TRIES_STOPPED: &str = "out of time at";
/// Failures counted for tests whose report cannot be read.
const UNREAD: usize = 999_999;
/// Starts a line of the probe's lenient output that may change: the
/// request's case again, maybe (see [`Check::guard_with_probe`]).
const DOUBTFUL: &str = "<maybe the case of the request> ";
/// Starts the line [`Check::version_command`] prints for a version that
/// passes the check and changes what the probe printed.
pub const CHANGES_OTHER_USES: &str = "changes what other uses print:";
/// Ends the script in the command that writes it.
const END: &str = "TACK_CHECK_END";
/// Starts the line the tries print for a candidate that passes the check
/// and fails more of the project's tests.
pub const GUARD_REFUSED: &str = "the project's tests refuse:";
/// The file the project's tests' last run under the guard printed to.
const GUARD_OUT: &str = "guard.out";

impl Check {
    pub fn new(runner: Runner, loading: Loading, script: &str) -> io::Result<Check> {
        let dir = tempfile::Builder::new().prefix("tack-check-").tempdir()?;
        Ok(Check {
            runner,
            loading,
            script: tidy(runner.language, script),
            origin: Origin::ModelScript,
            shown: None,
            arguments: Vec::new(),
            expected: None,
            in_order: false,
            errors_printed: false,
            expected_error: None,
            result: None,
            failure: String::new(),
            tests: None,
            own_tests: None,
            probe: false,
            lenient: false,
            builds: false,
            dir,
            scratch: None,
        })
    }

    /// A check of nothing of the request, for the project's tests to guard
    /// alone (see [`Check::guards_alone`]): its script, run by `runner`,
    /// only exits normally.
    pub fn guarding_alone(runner: Runner, loading: Loading) -> io::Result<Check> {
        let mut check = Check::new(runner, loading, "true")?;
        check.origin = Origin::NoCheck;
        std::fs::write(check.file(), &check.script)?;
        Ok(check)
    }

    pub fn language(&self) -> Language {
        self.runner.language
    }

    /// Each run builds the project before it runs (see [`Check::try_seconds`]).
    pub fn builds_first(&mut self) {
        self.builds = true;
    }

    /// Seconds one run of the check may take against one candidate: a
    /// crate's build of one changed file and its tests take seconds, and a
    /// variant that never ends a loop must not take the turn's time (one
    /// allowed the test run's 300 s took all that was left).
    fn try_seconds(&self) -> u32 {
        /// A build and a run of the check's tests.
        const BUILD_AND_TRY_SECONDS: u32 = 90;
        if self.builds { BUILD_AND_TRY_SECONDS } else { TRY_SECONDS }
    }

    /// The check came from `origin` (a model's script, unless told).
    pub fn came_from(&mut self, origin: Origin) {
        self.origin = origin;
    }

    /// What a change that passes the check rests on, said so that a user
    /// tells at a glance their own example or their project's tests from
    /// a script the model wrote: the check, then what guarded the rest.
    /// `uses_changed`: the change passed though a probe of other uses
    /// printed otherwise with it (see [`Check::version_command`]).
    pub fn evidence(&self, uses_changed: bool) -> String {
        if self.origin == Origin::NoCheck {
            let guard = match &self.tests {
                Some((_, 0)) => "the project's tests all pass with it".to_string(),
                Some((_, before)) => {
                    format!("no more of the project's tests fail with it than the {before} that failed before")
                }
                None => "nothing was run with it".to_string(),
            };
            return format!(
                "Not checked: no check of the request could be run; {guard}. Review it before relying on it."
            );
        }
        let check = match (&self.origin, &self.own_tests) {
            (_, Some((_, count, _))) => match count {
                1 => "the project's failing test passes with it".to_string(),
                n => format!("the project's {n} failing tests pass with it"),
            },
            (Origin::RequestExample, _) if let Some(error) = &self.expected_error => {
                format!("the request's own example raises `{error}` with it, as the request asks")
            }
            (Origin::RequestExample, _) if let Some(result) = &self.result => {
                format!("the request's own example runs and gives `{result}` with it, as the request says it should")
            }
            // A run that merely stops raising may give anything: said so.
            (Origin::RequestExample, _) if self.expected.is_none() && self.failure().is_some() => {
                "the request's own example runs without the error it stopped on with it (what it gives is not \
checked)"
                    .into()
            }
            (Origin::RequestExample, _) => "the request's own example does what the request asks with it".into(),
            (Origin::RequestExampleCompleted { name }, _) => format!(
                "the request's own example (with `{name}`, which it does not define, written by the model) does \
what the request asks with it"
            ),
            (Origin::Doctests { of }, _) => format!("the doctests of `{of}` pass with it"),
            (Origin::ProjectTests | Origin::ModelScript | Origin::NoCheck, _) => {
                "a check the model wrote from the request passes with it (the request gave no example that runs)".into()
            }
        };
        let guard = match (&self.tests, self.probe) {
            (Some((_, 0)), _) => "the project's tests all pass with it too".to_string(),
            (Some((_, before)), _) => {
                format!("no more of the project's tests fail with it than the {before} that failed before")
            }
            (None, true) if uses_changed => "the project's tests did not run here, and a script of other uses \
of the code prints otherwise with it: see that the other uses it changes are meant to change"
                .into(),
            (None, true) => "the project's tests did not run here; a script of other uses of the code prints with \
it what it printed before"
                .into(),
            (None, false) => "nothing else was run: the project's tests did not run here".into(),
        };
        let weak = matches!(self.origin, Origin::ModelScript) && self.own_tests.is_none() || self.tests.is_none();
        let review = if weak { " Review it before relying on it." } else { "" };
        format!("Evidence: {check}; {guard}.{review}")
    }

    /// Whether nothing of the request is checked: the project's tests
    /// guard alone ([`Origin::NoCheck`]).
    pub fn guards_alone(&self) -> bool {
        self.origin == Origin::NoCheck
    }

    /// Why the project's tests refused a candidate: the tests'
    /// count, and what their last run said of those that failed, for the
    /// next version to mend.
    pub fn guard_refusal(&self) -> String {
        /// Lines of the tests' report told at most.
        const TOLD_LINES: usize = 8;
        let count = self.guard_count();
        let output = std::fs::read_to_string(self.dir.path().join(GUARD_OUT)).unwrap_or_default();
        match super::reading::test_failures(&output).or_else(|| super::reading::python_test_failures(&output)) {
            Some(report) => {
                let lines: Vec<&str> = report.lines().filter(|l| !l.trim().is_empty()).take(TOLD_LINES).collect();
                format!("{count}:\n```\n{}\n```", lines.join("\n"))
            }
            None => count,
        }
    }

    fn guard_count(&self) -> String {
        let checked = match self.origin {
            Origin::NoCheck => "",
            _ => "the check passes, but ",
        };
        match &self.tests {
            Some((_, 0)) => format!("{checked}with it some of the project's tests fail, which all passed before"),
            Some((_, before)) => {
                format!("{checked}with it more of the project's tests fail than the {before} that failed before")
            }
            None => "the project's tests could not run with it".into(),
        }
    }

    /// Shows the model `code` as the check, in place of its script.
    pub fn show_as(&mut self, code: String) {
        self.shown = Some(code);
    }

    /// The check as the model reads it: its script, or the code it runs.
    pub fn shown(&self) -> &str {
        self.shown.as_deref().unwrap_or(&self.script).trim_end()
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join(format!("check.{}", self.runner.extension))
    }

    /// How one run reads the check, with the project at `root` (a shell word).
    /// The check's own runs (`file` the check or a wrapper that runs it)
    /// pass its command-line arguments; a probe's pass none.
    fn run_line(&self, modules: &str, root: &str, file: &Path) -> String {
        self.run_line_as(self.runner.program, modules, root, file)
    }

    /// [`Check::run_line`] with the interpreter's command line `program`.
    fn run_line_as(&self, program: &str, modules: &str, root: &str, file: &Path) -> String {
        let arguments = match file == self.probe_file() || file == self.differ_file() {
            true => &[][..],
            false => &self.arguments[..],
        };
        let mut line = String::new();
        if let Some(package) = &self.loading.package {
            let link = format!("{modules}/{package}");
            line.push_str(&format!(
                "mkdir -p \"$(dirname '{link}')\" && ln -sfn {root} '{link}' && NODE_PATH='{modules}' "
            ));
        }
        if let Some(path) = &self.loading.python_path {
            line.push_str(&format!("PYTHONPATH={path} "));
        }
        line.push_str(program);
        for argument in arguments {
            line.push(' ');
            line.push_str(&crate::tools::mcp::shell_word(argument));
        }
        line.push_str(&format!(" < '{}'", file.display()));
        line
    }

    /// The command that writes `script` to `file` and runs it with the
    /// project at `root` (a shell word), its output kept in `out` too.
    fn written_and_run(&self, file: &Path, script: &str, modules: &str, root: &str, out: &Path) -> String {
        format!("{}{}", written(file, script), kept_in(&self.run_line(modules, root, file), out))
    }

    /// The command that writes the check and runs it on the workspace as
    /// it is; what it prints is kept for [`Check::now_output`].
    /// It also notes whether the check reads its command line (see
    /// [`Check::read_arguments`]).
    pub fn now_command(&self) -> String {
        let dir = self.dir.path();
        let modules = dir.join("modules").display().to_string();
        let out = dir.join("now.out");
        let mark = self.arguments_mark().display().to_string();
        let (watcher, watcher_script, run) = match self.runner.language {
            Language::Python => {
                let watcher = dir.join("argv.py");
                let script = PYTHON_ARGV.replace("CHECK", &self.file().display().to_string()).replace("MARK", &mark);
                let run = self.run_line(&modules, "\"$PWD\"", &watcher);
                (watcher, script, run)
            }
            Language::JavaScript => {
                let watcher = dir.join("argv.js");
                let program = format!("node -r '{}' -", watcher.display());
                let run = self.run_line_as(&program, &modules, "\"$PWD\"", &self.file());
                (watcher, NODE_ARGV.replace("MARK", &mark), run)
            }
            _ => return self.written_and_run(&self.file(), &self.script, &modules, "\"$PWD\"", &out),
        };
        format!("{}{}{}", written(&self.file(), &self.script), written(&watcher, &watcher_script), kept_in(&run, &out))
    }

    fn arguments_mark(&self) -> PathBuf {
        self.dir.path().join("argv.read")
    }

    /// Why the check cannot run its example, where its run on the code as
    /// it is ([`Check::now_command`]) read its command-line arguments,
    /// itself or through the project (a parser that reads them when given
    /// none): it runs with none. With the line of the script that read
    /// them, where the run told it: a small model told only to pass its
    /// arguments dropped the parse altogether.
    pub fn arguments_why(&self) -> Option<String> {
        if !self.arguments.is_empty() {
            return None;
        }
        if !self.arguments_mark().exists() {
            return None;
        }
        let reads = match self.arguments_line() {
            Some(line) => format!("its line `{line}` reads the command-line arguments"),
            None => "it reads its command-line arguments".to_string(),
        };
        Some(format!("{reads}, and it runs with none: {}", self.runner.arguments_hint()))
    }

    /// The script's line that read the command line, where a run read it.
    pub fn arguments_line(&self) -> Option<&str> {
        let mark = std::fs::read_to_string(self.arguments_mark()).ok()?;
        let n = mark.trim().parse::<usize>().ok()?;
        self.script.lines().nth(n.checked_sub(1)?).map(str::trim).filter(|line| !line.is_empty())
    }

    /// From now on the check runs with the command-line `arguments`: the
    /// example's command line, for a script that parses its own as the
    /// user's program does.
    pub fn run_with(&mut self, arguments: Vec<String>) {
        self.arguments = arguments;
        let _ = std::fs::remove_file(self.arguments_mark());
    }

    /// The command that runs the check once more on the workspace as it
    /// is, following which functions of the project it calls, and prints
    /// each as `file:line` (where it starts): the code the check's example
    /// really runs, wherever the request's words point. `None` for a
    /// language with no way to follow calls.
    pub fn calls_command(&self) -> Option<String> {
        let dir = self.dir.path();
        let modules = dir.join("modules").display().to_string();
        let out = dir.join("calls.out");
        let (wrapper, run, read) = match self.runner.language {
            Language::Python => {
                let wrapper = dir.join("calls.py");
                let script = PYTHON_CALLS
                    .replace("CHECK", &self.file().display().to_string())
                    .replace("UNRUN", &self.unrun_file().display().to_string())
                    .replace("OUT", &out.display().to_string());
                (
                    Some((wrapper.clone(), script)),
                    self.run_line(&modules, "\"$PWD\"", &wrapper),
                    format!("cat '{}'", out.display()),
                )
            }
            Language::JavaScript => {
                let coverage = dir.join("coverage");
                let reader = dir.join("calls.js");
                let run = format!(
                    "rm -rf '{0}'; export NODE_V8_COVERAGE='{0}'; {1}",
                    coverage.display(),
                    self.run_line(&modules, "\"$PWD\"", &self.file())
                );
                let read = format!(
                    "unset NODE_V8_COVERAGE; node '{}' '{}' '{}'",
                    reader.display(),
                    coverage.display(),
                    self.unrun_file().display()
                );
                (Some((reader, NODE_CALLS.to_string())), run, read)
            }
            _ => return None,
        };
        let written: String = [(self.file(), self.script.clone())]
            .into_iter()
            .chain(wrapper)
            .map(|(file, script)| written(&file, &script))
            .collect();
        Some(format!("{written}{run} >/dev/null 2>&1; {read}"))
    }

    /// The command that runs each test of the files of the tests the check
    /// is made of alone, and prints the lines of the project the failing
    /// ones run most and the passing ones least (see `PYTHON_SPECTRUM`).
    /// `None` but for Python tests.
    pub fn spectrum_command(&self) -> Option<String> {
        /// Lines printed at most, best first.
        const LIMIT: usize = 40;
        let (_, _, files) = self.own_tests.as_ref()?;
        if self.runner.language != Language::Python {
            return None;
        }
        let modules: Vec<String> =
            files.iter().map(|file| file.strip_suffix(".py").map(|m| m.replace('/', "."))).collect::<Option<_>>()?;
        if modules.is_empty() || !modules.iter().all(|m| m.split('.').all(crate::text::is_identifier)) {
            return None;
        }
        let dir = self.dir.path();
        let wrapper = dir.join("spectrum.py");
        let script = PYTHON_SPECTRUM.replace("MODULES", &format!("{modules:?}")).replace("LIMIT", &LIMIT.to_string());
        let run = self.run_line(&dir.join("modules").display().to_string(), "\"$PWD\"", &wrapper);
        Some(format!("{}{run}", written(&wrapper, &script)))
    }

    /// The check as the model is shown it beside the code to change: the
    /// script, what it prints now and what it must do, as a failing
    /// test's report reads.
    pub fn described(&self) -> String {
        const SHOWN_CHARS: usize = 1_200;
        let cut = |text: &str| -> String {
            let text = text.trim_end();
            let skip = text.chars().count().saturating_sub(SHOWN_CHARS);
            text.chars().skip(skip).collect()
        };
        let outcome = match &self.expected {
            _ if let Some(error) = &self.expected_error => format!(
                "runs on the code as it is without raising `{error}`, printing:\n```\n{}\n```\nIt must raise \
that error.",
                cut(&self.now_output())
            ),
            Some(expected) => format!(
                "prints, on the code as it is:\n```\n{}\n```\nIt must print instead:\n```\n{}\n```",
                cut(&self.now_output()),
                expected
            ),
            None => format!(
                "fails on the code as it is:\n```\n{}\n```\nIt must run without that error{}.",
                cut(&self.failure),
                self.result.as_ref().map_or(String::new(), |result| format!(" and print `{result}`"))
            ),
        };
        let arguments = match self.arguments.is_empty() {
            true => String::new(),
            false => format!(", run with the command-line arguments `{}`", self.arguments_shown()),
        };
        format!("This check of the request{arguments}:\n```\n{}\n```\n{outcome}", self.shown())
    }

    /// The command-line arguments the check runs with, as a shell reads them.
    pub fn arguments_shown(&self) -> String {
        self.arguments.iter().map(|a| crate::tools::mcp::shell_word(a)).collect::<Vec<_>>().join(" ")
    }

    /// Keeps how the check failed on the code as it is (`output`), for
    /// [`Check::described`]; it passes, as before, once it exits normally.
    pub fn fails_with(&mut self, output: &str) {
        self.failure = output.to_string();
    }

    /// From now on the check, which fails on the code as it is, passes
    /// only when it runs and its output holds `result` (blanks and the
    /// kind of quote aside): the request says what its example should give.
    pub fn hold_to_result(&mut self, result: &str) {
        self.result = Some(result.to_string());
    }

    /// How the check failed on the code as it is, where it fails.
    pub fn failure(&self) -> Option<&str> {
        Some(self.failure.as_str()).filter(|failure| !failure.is_empty())
    }

    /// What the check printed on the code as it is: its output, then
    /// what it wrote to its error stream where that counts.
    pub fn now_output(&self) -> String {
        let output = std::fs::read_to_string(self.dir.path().join("now.out")).unwrap_or_default();
        match self.errors_printed {
            true => output + &self.now_errors(),
            false => output,
        }
    }

    /// What the check wrote to its error stream on the code as it is.
    pub fn now_errors(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("now.out.err")).unwrap_or_default()
    }

    /// From now on what the check writes to its error stream counts as
    /// printed, after its output: where the run ends on the program's own
    /// report of an error (`unknown option '--colr'`), which the request
    /// quotes, what it reports is what must change, not that it failed.
    pub fn count_errors_as_printed(&mut self) {
        self.errors_printed = true;
    }

    fn unrun_file(&self) -> PathBuf {
        self.dir.path().join("unrun.out")
    }

    /// The lines of the project's files (relative paths) that hold code
    /// the check's run, in its [`Check::calls_command`], never reached:
    /// no change there can change what the check shows. Lines it cannot
    /// tell of (a file not loaded, a function never called in Python) are
    /// not among them.
    pub fn unrun(&self) -> BTreeMap<String, BTreeSet<usize>> {
        let text = std::fs::read_to_string(self.unrun_file()).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let (file, lines) = line.rsplit_once(':')?;
                Some((file.to_string(), lines.split(',').filter_map(|n| n.parse().ok()).collect()))
            })
            .collect()
    }

    /// From now on the check passes only when it prints each line of `output`.
    pub fn expect(&mut self, output: &str) -> io::Result<()> {
        let expected = normalized(output);
        std::fs::write(self.dir.path().join("expected"), &expected)?;
        self.expected = Some(expected);
        self.in_order = false;
        Ok(())
    }

    /// From now on the check passes only when its run raises `error` (the
    /// error's kind and message, `TypeError: must be a string`), on its
    /// error stream or printed: a request that quotes an error the code as
    /// it is never raises asks for that error.
    pub fn expect_error(&mut self, error: &str) {
        self.expected_error = Some(error.to_string());
    }

    /// From now on the check passes only when it prints the lines of
    /// `output` one after another, blank lines included: the lines' text
    /// alone cannot tell a layout that must change (a blank line kept).
    pub fn expect_in_order(&mut self, output: &str) -> io::Result<()> {
        self.expect(output)?;
        self.in_order = true;
        Ok(())
    }

    /// Copies the workspace at `root` to the scratch folder, once (see
    /// [`Mirror`]): the files its ignore rules keep, and a link to a
    /// `node_modules` they leave out.
    pub fn prepare_scratch(&mut self, root: &Path) -> io::Result<()> {
        if self.scratch.is_some() {
            return Ok(());
        }
        let scratch = self.dir.path().join("scratch");
        Mirror::at(scratch.clone())?.sync(root, &crate::workspace::NoBuffers)?;
        self.scratch = Some(scratch);
        Ok(())
    }

    /// Writes each candidate (a file's path and its whole new text) for
    /// [`Check::tries_command`], replacing those of an earlier round; the
    /// files as they are now go beside them, to put back after each try.
    pub fn stage(&self, tries: &[(&str, String)], now: &[(&str, &str)]) -> io::Result<()> {
        let tries_dir = self.dir.path().join("tries");
        let before_dir = self.dir.path().join("before");
        for dir in [&tries_dir, &before_dir] {
            if dir.exists() {
                std::fs::remove_dir_all(dir)?;
            }
        }
        for (path, text) in now {
            let to = before_dir.join(path);
            std::fs::create_dir_all(to.parent().unwrap_or(&before_dir))?;
            std::fs::write(to, text)?;
        }
        for (n, (path, text)) in tries.iter().enumerate() {
            let dir = tries_dir.join(format!("{:04}", n + 1));
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("path"), path)?;
            std::fs::write(dir.join("text"), text)?;
        }
        Ok(())
    }

    /// The command that runs the check against each staged candidate in
    /// the scratch copy, in order, and prints each that passes: a few
    /// more are tried after the first, since a weak check may pass a
    /// wrong change first. No candidate starts after `seconds`: the
    /// search stops there with what it found, and says so (see
    /// [`TRIES_STOPPED`]).
    pub fn tries_command(&self, seconds: u64) -> Option<String> {
        self.tries_command_with(seconds, true)
    }

    /// [`Check::tries_command`] for the model's own versions: where the
    /// probe guards, it does not refuse a version that passes the check,
    /// but says so ([`CHANGES_OTHER_USES`]). What the code printed before
    /// is no witness of what it should print: a version written to do what
    /// the request asks may rightly change another use that did the same
    /// wrong thing. A small variant has no intent behind it, and stays held.
    pub fn version_command(&self, seconds: u64) -> Option<String> {
        self.tries_command_with(seconds, false)
    }

    fn tries_command_with(&self, seconds: u64, probe_refuses: bool) -> Option<String> {
        let scratch = self.scratch.as_ref()?.display().to_string();
        let dir = self.dir.path().display();
        let modules = format!("{dir}/scratch-modules");
        let run = self.run_line(&modules, &format!("'{scratch}'"), &self.file());
        let run = format!("$limit bash -c \"{}\"", double_quoted(&run));
        // Printing checks pass when every expected line is among the lines
        // printed, as often as expected, each compared without blanks and
        // with one kind of quote (as `loose` reads them); in order, when
        // they are printed one after another as expected.
        let loose = "gsub(/[[:space:]]/, \"\"); gsub(/\"/, \"\\047\")";
        // The error stream after the output, as `now_output` reads them.
        let printed = match self.errors_printed {
            true => format!("{{ {run} 2>'{dir}/try.err'; cat '{dir}/try.err'; }}"),
            false => format!("{run} 2>/dev/null"),
        };
        let passes = match (&self.expected, self.in_order) {
            // What it raised, blanks dropped, must hold the error as quoted.
            _ if let Some(error) = &self.expected_error => format!(
                "{{ {run} 2>&1; true; }} | tr -d '[:space:]' | grep -qF {}",
                crate::tools::mcp::shell_word(&error.chars().filter(|c| !c.is_whitespace()).collect::<String>())
            ),
            (Some(_), false) => format!(
                "{printed} | awk '{{ {loose} }} \
NR == FNR {{ want[$0]++; n++; next }} want[$0] > 0 {{ want[$0]--; n-- }} END {{ exit n > 0 }}' '{dir}/expected' -"
            ),
            (Some(_), true) => format!(
                "{printed} | awk '{{ {loose} }} NR == FNR {{ want[++m] = $0; next }} {{ got[++n] = $0 }} \
END {{ for (i = 1; i + m - 1 <= n; i++) {{ for (j = 1; j <= m && got[i + j - 1] == want[j]; j++); \
if (j > m) exit 0 }} exit 1 }}' '{dir}/expected' -"
            ),
            // Its output, as one line without blanks and with one kind of
            // quote, must hold the result; `grep` reads it all, so that the
            // run's own status is what `pipefail` sees.
            (None, _) if let Some(result) = &self.result => format!(
                "{run} 2>/dev/null | awk '{{ {loose}; printf \"%s\", $0 }}' | grep -F {} >/dev/null",
                crate::tools::mcp::shell_word(&super::expect::loose(result))
            ),
            (None, _) => format!("{run} >/dev/null 2>&1"),
        };
        let probe_run = double_quoted(&self.run_line(&modules, &format!("'{scratch}'"), &self.probe_file()));
        let probe = self.probe.then(|| {
            format!(
                "[ \"$($limit bash -c \"{probe_run}\" 2>/dev/null | sed 's/[[:space:]]*$//')\" = \"$(cat '{dir}/probe.expected')\" ]"
            )
        });
        // Where the probe's doubtful lines alone change, the candidate is
        // kept aside, and passes only where none passes strictly; one that
        // changes them all (every use now prints what the check must, as
        // broken code easily does) does not.
        let start = DOUBTFUL.len() + 1;
        let noted = match (&probe, probe_refuses, &self.tests) {
            (Some(probe), false, None) => {
                format!("if ! {probe}; then echo \"{CHANGES_OTHER_USES} $(basename \"$try\")\"; fi; ")
            }
            _ => String::new(),
        };
        let lenient = match self.probe && self.lenient && self.tests.is_none() && probe_refuses {
            true => format!(
                "elif $limit bash -c \"{probe_run}\" 2>/dev/null | sed 's/[[:space:]]*$//' | awk 'NR == FNR {{ want[FNR] = \
$0; m = FNR; next }} {{ n = FNR; w = want[FNR]; d = index(w, \"{DOUBTFUL}\") == 1; if (d) w = substr(w, {start}); \
if (w == $0) kept += d; else if (!d) bad = 1 }} END {{ exit bad || n != m || !kept }}' \
'{dir}/probe.lenient' -; then lenient=\"$lenient $(basename \"$try\")\"; "
            ),
            false => String::new(),
        };
        // The tests' failures, counted as `failures` reads them.
        let (score, guard) = match &self.tests {
            Some((tests, before)) => (
                format!(
                    "score() {{ out=$($tlimit bash -c \"{}\" 2>&1); ok=$?; printf '%s\\n' \"$out\" > '{dir}/{GUARD_OUT}'; \
[ $ok -eq 0 ] && {{ echo 0; return; }}; \
n=$(printf '%s\\n' \"$out\" | grep -Eo '{COUNTS_PATTERN}' | tr -dc '0-9\\n' | awk '{{s+=$1}} END {{print s+0}}'); \
if [ \"$n\" -gt 0 ]; then echo \"$n\"; else echo {UNREAD}; fi; }}\n",
                    double_quoted(tests)
                ),
                Some(format!("[ \"$(score)\" -le {before} ]")),
            ),
            None => (String::new(), probe.filter(|_| probe_refuses)),
        };
        // Where the check passes and the tests refuse, said so: the
        // refusal is then the tests', not the check's.
        let refused = match &self.tests {
            Some(_) => format!("else echo \"{GUARD_REFUSED} $(basename \"$try\")\"; "),
            None => String::new(),
        };
        // A check so weak that many candidates pass it would have the guard
        // run for each: past a few, the check is given up.
        let closing = if guard.is_some() { "; fi" } else { "" };
        let passes = match guard {
            Some(guard) => format!(
                "{passes}; then guarded=$((guarded + 1))\n  \
if [ $guarded -gt {MAX_GUARDED} ]; then echo 'too many candidates pass the check: it tells nothing'; exit 1; fi\n  \
if {guard}"
            ),
            None => passes,
        };
        Some(format!(
            "set -o pipefail; cd '{scratch}' && limit=$(command -v timeout >/dev/null && echo 'timeout {}')\n\
tlimit=$(command -v timeout >/dev/null && echo 'timeout {TESTS_SECONDS}'); guarded=0; lenient=\n{score}\
found=0; left={TRIED_AFTER_PASSING}; end=$((SECONDS + {seconds}))\n\
for try in '{dir}'/tries/*/; do\n  \
if [ $found -gt 0 ]; then left=$((left - 1)); if [ $left -lt 0 ]; then break; fi; fi\n  \
if [ $SECONDS -ge $end ]; then echo \"{TRIES_STOPPED} $(basename \"$try\")\"; break; fi\n  \
f=$(cat \"$try/path\"); rm -f \"$f\" && cp \"$try/text\" \"$f\"\n  \
if {passes}; then echo \"passes: $(basename \"$try\")\"; found=$((found + 1)); {noted}{lenient}{refused}fi{closing}\n  \
rm -f \"$f\" && cp '{dir}/before/'\"$f\" \"$f\"\n  \
if [ $found -ge {MAX_PASSING} ]; then break; fi\n\
done\nif [ $found -gt 0 ]; then exit 0; fi\n\
if [ -n \"$lenient\" ]; then for t in $(printf '%s\\n' $lenient | head -n {MAX_PASSING}); do echo \"passes: $t\"; done; \
exit 0; fi\n\
echo 'no candidate passes the check'; exit 1",
            self.try_seconds()
        ))
    }
}

/// `line` as it stands between double quotes in a shell command.
fn double_quoted(line: &str) -> String {
    line.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`")
}

/// The shell lines that write `script` to `file`.
fn written(file: &Path, script: &str) -> String {
    format!("cat > '{}' <<'{END}'\n{}\n{END}\n", file.display(), script.trim_end())
}

/// `run`, its output kept in `out` and its error stream beside it (`.err`
/// added), both printed, its exit status kept.
fn kept_in(run: &str, out: &Path) -> String {
    let out = out.display();
    format!("{run} > '{out}' 2> '{out}.err'; status=$?; cat '{out}'; cat '{out}.err' >&2; exit $status")
}

/// The script as it runs: a JavaScript check that asserts without
/// requiring `assert` gets the require it forgot.
fn tidy(language: Language, script: &str) -> String {
    let script = &echoed(language, &super::expect::uncommented(language, script));
    let requires_assert = ["require('assert')", "require(\"assert\")", "require('node:assert')", "from 'assert'"]
        .iter()
        .any(|r| script.contains(r));
    if language == Language::JavaScript && script.contains("assert") && !requires_assert {
        return format!("const assert = require('assert');\n{script}");
    }
    script.to_string()
}

/// `script` with its last statement printed, where that is an expression
/// and nothing else in it prints: a small model ends its script on the
/// call it means to show (`markdown.markdown(text)`), as at a prompt that
/// echoes it, and its run would show nothing.
fn echoed(language: Language, script: &str) -> String {
    let print = match language {
        Language::Python => "print",
        Language::JavaScript => "console.log",
        _ => return script.to_string(),
    };
    // An assertion shows itself, by failing.
    if script.contains(&format!("{print}(")) || script.contains("assert") {
        return script.to_string();
    }
    let Some(tree) = crate::codemap::tree(language, script) else { return script.to_string() };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let last = root.named_children(&mut cursor).filter(|n| !n.kind().contains("comment")).last();
    let Some(statement) = last.filter(|n| n.kind() == "expression_statement" && !root.has_error()) else {
        return script.to_string();
    };
    let Some(expression) = statement.named_child(0) else { return script.to_string() };
    let shown = ["call", "call_expression", "attribute", "member_expression", "subscript", "subscript_expression"];
    if !shown.contains(&expression.kind()) {
        return script.to_string();
    }
    let code = &script[expression.byte_range()];
    format!("{}{print}({code}){}", &script[..statement.start_byte()], &script[statement.end_byte()..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::pipeline::loading::{loading, runner};
    use crate::agent::pipeline::reading::{calls, failures, passed, shows_nothing, spectrum, tries_stopped};
    use crate::codemap::CodeMap;

    #[test]
    fn a_package_that_exports_one_function_is_called_as_its_own_files_call_it() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join("test")).unwrap();
        std::fs::write(root.join("package.json"), r#"{ "name": "argparse-lite", "main": "index.js" }"#).unwrap();
        std::fs::write(root.join("index.js"), "module.exports = function (args) {\n  return { _: args };\n};\n")
            .unwrap();
        std::fs::write(root.join("test/short.js"), "var parse = require('../');\nparse(['-b']);\n").unwrap();
        let mut map = CodeMap::new();
        map.refresh(&crate::workspace::Workspace::open(root).unwrap());
        let loads = loading(root, &map, Language::JavaScript, "index.js");
        assert_eq!(
            loads.hint,
            "`const parse = require('argparse-lite');` loads the project: it exports one function, which its own \
files call `parse`."
        );
        let examples = super::super::examples::request_examples(Language::JavaScript, "`parse(['-b'])`", |_| true);
        let script = loads.examples_script(Language::JavaScript, &examples).unwrap();
        let check = Check::new(runner(Language::JavaScript).unwrap(), loads, &script).unwrap();
        let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
        assert_eq!(String::from_utf8_lossy(&out.unwrap().stdout), "{ _: [ '-b' ] }\n");
    }

    #[test]
    fn the_request_s_examples_run_with_the_project_s_names_in_scope() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        // A function named as its package (`markdown.markdown`) does not hide the package.
        let code = "def pairs(xs):\n    return iter(zip(xs, xs[1:]))\n\n\ndef halves(xs):\n    return iter(xs[:1]), xs[1:]\n\n\n\
def pkg():\n    return 'the function'\n";
        std::fs::write(root.join("pkg/__init__.py"), code).unwrap();
        std::fs::write(root.join("package.json"), r#"{ "name": "@scope/lib", "main": "index.js" }"#).unwrap();
        std::fs::write(root.join("index.js"), "exports.double = (x) => x * 2;\n").unwrap();
        let run = |language: Language, path: &str, examples: &[&str]| {
            let loads = loading(root, &CodeMap::new(), language, path);
            let request: Vec<String> = examples.iter().map(|e| format!(">>> {e}")).collect();
            let examples = super::super::examples::request_examples(language, &request.join("\n"), |_| true);
            let script = loads.examples_script(language, &examples).unwrap();
            let check = Check::new(runner(language).unwrap(), loads, &script).unwrap();
            let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
            String::from_utf8_lossy(&out.unwrap().stdout).to_string()
        };
        // An iterator's items are printed, as a request shows them.
        let python = ["pairs([1, 2, 3])", "pkg.pairs([])", "first, rest = halves([1, 2, 3])"];
        assert_eq!(
            run(Language::Python, "pkg/__init__.py", &python),
            "[(1, 2), (2, 3)]\n[]\nfirst = [1]\nrest = [2, 3]\n"
        );
        let js = ["lib.double(2)", "double(3)", "const d = double(5)"];
        assert_eq!(run(Language::JavaScript, "index.js", &js), "4\n6\nd = 10\n");
    }

    #[test]
    fn the_project_s_tests_failures_are_counted_as_the_shell_counts_them() {
        assert_eq!(failures("Ran 3 tests\nOK\nexit code 0", true), Some(0));
        assert_eq!(failures("Ran 817 tests\nFAILED (failures=2, errors=1, skipped=1)\nexit code 1", false), Some(3));
        assert_eq!(failures("ImportError: no module\nexit code 1", false), None);
        let pytest = "FAILED tests/test_a.py::test_b - assert 1 == 2\n== 2 failed, 5 passed, 1 error in 0.12s ==";
        assert_eq!(failures(&format!("{pytest}\nexit code 1"), false), Some(3));
        let score = format!(
            "printf '%s\\n' '{pytest}' | grep -Eo '{COUNTS_PATTERN}' | tr -dc '0-9\\n' | awk '{{s+=$1}} END {{print s}}'"
        );
        let summed = std::process::Command::new("bash").arg("-c").arg(&score).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&summed.stdout).trim(), "3", "the shell reads the counts as Rust does");
    }

    #[test]
    fn a_js_check_gets_the_assert_it_forgot() {
        assert!(tidy(Language::JavaScript, "assert(f() === 1)").starts_with("const assert = require('assert');"));
        let already = "const assert = require('assert')\nassert(f())";
        assert_eq!(tidy(Language::JavaScript, already), already);
        assert_eq!(tidy(Language::Python, "assert f() == 1"), "assert f() == 1");
    }

    #[test]
    fn the_doctests_of_a_definition_fail_where_its_code_does_not_do_what_they_show() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
        let code = |body: &str| {
            format!(
                "class Pair:\n    def swap(self, a, b):\n        \"\"\"Swaps.\n\n        >>> Pair().swap(1, 2)\n        \
(2, 1)\n        \"\"\"\n        return {body}\n"
            )
        };
        let run = |body: &str| {
            std::fs::write(root.join("pkg/pairs.py"), code(body)).unwrap();
            let loading = loading(root, &CodeMap::new(), Language::Python, "pkg/pairs.py");
            let script = loading.doctest_script("Pair.swap").unwrap();
            let check = Check::new(runner(Language::Python).unwrap(), loading, &script).unwrap();
            let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
            let out = out.unwrap();
            (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string())
        };
        let (passed, printed) = run("a, b");
        assert!(!passed && printed.contains("Failed example:") && printed.contains("(1, 2)"), "{printed}");
        assert_eq!(run("b, a"), (true, String::new()));
        assert_eq!(loading(root, &CodeMap::new(), Language::JavaScript, "index.js").doctest_script("f"), None);
    }

    #[test]
    fn a_script_that_prints_nothing_shows_the_call_it_ends_on() {
        let ends = "import markdown\n\ntext = 'Hi'\nmarkdown.markdown(text)\n";
        assert_eq!(tidy(Language::Python, ends), "import markdown\n\ntext = 'Hi'\nprint(markdown.markdown(text))");
        assert_eq!(
            tidy(Language::JavaScript, "const s = require('semver');\ns.valid('1.2.3');"),
            "const s = require('semver');\nconsole.log(s.valid('1.2.3'))"
        );
        // A script that prints, or ends on an assignment or a name, is left as it is.
        for kept in ["x = f()\nprint(x)\nf()", "x = f()", "f()\nx", "def f():\n    g()"] {
            assert_eq!(tidy(Language::Python, kept), kept);
        }
    }

    /// The check runs for real: on the project as it is, then against two
    /// candidates in a scratch copy, where only the second passes, and the
    /// workspace's own file is never touched.
    #[test]
    fn the_calls_command_names_the_project_s_functions_the_check_runs_and_no_others() {
        let bash = |root: &Path, command: &str| {
            let out = std::process::Command::new("bash").arg("-c").arg(command).current_dir(root).output().unwrap();
            String::from_utf8_lossy(&out.stdout).to_string()
        };
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
        let code = "def outer(x):\n    if x > 5:\n        return 0\n    return inner(x) + 1\n\n\ndef inner(x):\n    \
return x\n\n\ndef unused():\n    pass\n";
        std::fs::write(root.join("pkg/core.py"), code).unwrap();
        let loads = loading(root, &CodeMap::new(), Language::Python, "pkg/core.py");
        // A check that fails still reports what it ran.
        let script = "import json\nfrom pkg.core import outer\nprint(json.dumps(outer(1)))\nassert outer(1) == 3\n";
        let check = Check::new(runner(Language::Python).unwrap(), loads, script).unwrap();
        let called = calls(&bash(root, &check.calls_command().unwrap()));
        assert_eq!(called, vec![("pkg/core.py".to_string(), 1), ("pkg/core.py".to_string(), 7)]);
        // The branch the run never took; of a function never called, nothing is claimed.
        assert_eq!(check.unrun().get("pkg/core.py").map(|lines| lines.iter().copied().collect()), Some(vec![3]));

        std::fs::write(root.join("package.json"), r#"{ "name": "lib", "main": "index.js" }"#).unwrap();
        let code = "function outer(x) {\n  if (x > 5) {\n    return 0\n  }\n  return inner(x) + 1\n}\n\n\
function inner(x) {\n  return x\n}\n\nfunction unused() {}\n\nmodule.exports = { outer, unused }\n";
        std::fs::write(root.join("index.js"), code).unwrap();
        let loads = loading(root, &CodeMap::new(), Language::JavaScript, "index.js");
        let check = Check::new(
            runner(Language::JavaScript).unwrap(),
            loads,
            "const { outer } = require('lib')\nconsole.log(outer(1))\n",
        )
        .unwrap();
        let called = calls(&bash(root, &check.calls_command().unwrap()));
        assert_eq!(called, vec![("index.js".to_string(), 1), ("index.js".to_string(), 8)]);
        let unrun = check.unrun().remove("index.js").unwrap_or_default();
        assert!(unrun.contains(&3) && unrun.contains(&12), "{unrun:?}");
        assert!(!unrun.contains(&2) && !unrun.contains(&5) && !unrun.contains(&9), "{unrun:?}");
    }

    #[test]
    fn a_check_that_reads_its_empty_command_line_is_told_and_runs_once_given_the_example_s_arguments() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join("cli")).unwrap();
        std::fs::write(root.join("cli/__init__.py"), "").unwrap();
        // The project's parser reads the command line when given no list.
        let code = "import argparse\n\n\ndef main(argv=None):\n    parser = argparse.ArgumentParser()\n    \
parser.add_argument('--loud', action='store_true')\n    return parser.parse_args(argv).loud\n";
        std::fs::write(root.join("cli/app.py"), code).unwrap();
        let ran_with = |language: Language, path: &str, script: &str, arguments: &[&str]| {
            let mut check =
                Check::new(runner(language).unwrap(), loading(root, &CodeMap::new(), language, path), script).unwrap();
            if !arguments.is_empty() {
                check.run_with(arguments.iter().map(|a| a.to_string()).collect());
            }
            let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
            let printed = String::from_utf8_lossy(&out.unwrap().stdout).trim().to_string();
            let why = check.arguments_why();
            (printed, why.map(|why| why.split(", and it runs").next().unwrap_or_default().to_string()))
        };
        let ran = |language: Language, path: &str, script: &str| ran_with(language, path, script, &[]);
        let reads = "from cli.app import main\nprint(main())\n";
        let read_by = |line: &str| Some(format!("its line `{line}` reads the command-line arguments"));
        assert_eq!(ran(Language::Python, "cli/app.py", reads), ("False".to_string(), read_by("print(main())")));
        // argparse reads the program's name for its own: that is no argument.
        let passes = "from cli.app import main\nprint(main(['--loud']))\n";
        assert_eq!(ran(Language::Python, "cli/app.py", passes), ("True".to_string(), None));
        // Given the example's command line, the script that reads it runs the example.
        assert_eq!(ran_with(Language::Python, "cli/app.py", reads, &["--loud"]), ("True".to_string(), None));

        std::fs::write(root.join("package.json"), r#"{ "name": "cli", "main": "index.js" }"#).unwrap();
        let code = "exports.parse = (argv = process.argv) => argv.slice(2).includes('--loud')\n";
        std::fs::write(root.join("index.js"), code).unwrap();
        let reads = "const cli = require('cli')\nconsole.log(cli.parse())\n";
        assert_eq!(
            ran(Language::JavaScript, "index.js", reads),
            ("false".to_string(), read_by("console.log(cli.parse())"))
        );
        let passes = "console.log(require('cli').parse(['node', 'script', '--loud']))\n";
        assert_eq!(ran(Language::JavaScript, "index.js", passes), ("true".to_string(), None));
        assert_eq!(ran_with(Language::JavaScript, "index.js", reads, &["--loud", "it's"]), ("true".to_string(), None));
    }

    #[test]
    fn the_lines_only_the_failing_tests_run_score_best() {
        let root = tempfile::tempdir().unwrap();
        for dir in ["pkg", "tests"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
            std::fs::write(root.path().join(dir).join("__init__.py"), "").unwrap();
        }
        // Negative numbers take the wrong branch: only the failing test runs its line.
        let code = "def magnitude(x):\n    if x < 0:\n        return x\n    return x\n";
        std::fs::write(root.path().join("pkg/core.py"), code).unwrap();
        // A unittest case and pytest's plain functions alike.
        let tests = "import unittest\nfrom pkg.core import magnitude\n\nclass TestMagnitude(unittest.TestCase):\n    \
def test_positive(self):\n        self.assertEqual(magnitude(3), 3)\n\ndef test_zero():\n    assert magnitude(0) == 0\n\n\
def test_negative():\n    assert magnitude(-2) == 2\n";
        std::fs::write(root.path().join("tests/test_core.py"), tests).unwrap();
        let runner = runner(Language::Python).unwrap();
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut check = Check::new(runner, loads, "print(1)\n").unwrap();
        assert!(check.spectrum_command().is_none(), "a check of no tests has no spectrum");
        check.made_of_tests("true".into(), 1, vec!["tests/test_core.py".into()]);
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(check.spectrum_command().unwrap())
            .current_dir(root.path())
            .output()
            .unwrap();
        let output = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        let (failing, passing, scored) = spectrum(&output).unwrap();
        assert_eq!((failing, passing), (1, 2), "{output}");
        assert_eq!(scored[0], (1.0, "pkg/core.py".to_string(), 3), "{output}");
        // The lines every test runs score less; the tests' own lines not at all.
        assert!(scored[1..].iter().all(|(score, file, _)| *score < 1.0 && file == "pkg/core.py"), "{output}");
    }

    #[test]
    fn a_check_that_expects_an_error_passes_only_the_change_that_raises_it() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pkg")).unwrap();
        std::fs::write(root.path().join("pkg/__init__.py"), "").unwrap();
        let now = "def parse(text):\n    return str(text).split(',')\n";
        std::fs::write(root.path().join("pkg/core.py"), now).unwrap();
        let request = "parse(5) should not split a number: it must fail with TypeError: text must be a str.";
        let error = crate::agent::pipeline::reading::reported_error_line(request).unwrap();
        assert_eq!(error, "TypeError: text must be a str");
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut check =
            Check::new(runner(Language::Python).unwrap(), loads, "from pkg.core import parse\nparse(5)\n").unwrap();
        let out =
            std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root.path()).output();
        assert!(out.unwrap().status.success(), "the code as it is runs without the error");
        check.expect_error(&error);
        check.came_from(Origin::RequestExample);
        assert!(check.described().contains("It must raise that error."), "{}", check.described());
        check.prepare_scratch(root.path()).unwrap();
        let raising = |kind: &str, message: &str| {
            format!(
                "def parse(text):\n    if not isinstance(text, str):\n        raise {kind}('{message}')\n    return text.split(',')\n"
            )
        };
        let tries = [
            ("pkg/core.py", raising("ValueError", "text must be a str")),
            ("pkg/core.py", raising("TypeError", "expected a string")),
            ("pkg/core.py", raising("TypeError", "text must be a str")),
        ];
        check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
        let out = std::process::Command::new("bash").arg("-c").arg(check.tries_command(600).unwrap()).output().unwrap();
        let output = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(crate::agent::pipeline::reading::all_passed(&output), [3], "{output}");
        assert!(check.evidence(false).contains("raises `TypeError: text must be a str`"), "{}", check.evidence(false));
    }

    #[test]
    fn a_crashing_check_held_to_the_request_s_result_passes_only_the_change_that_gives_it() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pkg")).unwrap();
        std::fs::write(root.path().join("pkg/__init__.py"), "").unwrap();
        let now = "def pair(text):\n    a, b = text.split(',')\n    if ':' in text:\n        raise ValueError('no')\n    return (float(a), float(b))\n";
        std::fs::write(root.path().join("pkg/core.py"), now).unwrap();
        let runner = runner(Language::Python).unwrap();
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut check = Check::new(runner, loads, "from pkg.core import pair\nprint(pair('1.5,:2.25'))\n").unwrap();
        let bash = |command: &str| {
            let out =
                std::process::Command::new("bash").arg("-c").arg(command).current_dir(root.path()).output().unwrap();
            String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
        };
        let output = bash(&check.now_command());
        check.fails_with(&output);
        check.hold_to_result("(1.5, 2.25)");
        assert!(check.described().contains("It must run without that error and print `(1.5, 2.25)`"));
        // Returning early stops the crash and gives nothing; only the
        // change that reads the numbers gives the result.
        let tries = [
            ("pkg/core.py", now.replace("raise ValueError('no')", "return None")),
            ("pkg/core.py", now.replace("raise ValueError('no')", "b = b.strip(':')")),
        ];
        check.prepare_scratch(root.path()).unwrap();
        check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
        let output = bash(&check.tries_command(600).unwrap());
        assert_eq!(crate::agent::pipeline::reading::all_passed(&output), [2], "{output}");
        check.came_from(Origin::RequestExample);
        assert!(check.evidence(false).contains("runs and gives `(1.5, 2.25)` with it"), "{}", check.evidence(false));
        // What the refused one printed is told, with what it must give.
        check.stage(&tries[..1], &[("pkg/core.py", now)]).unwrap();
        let output = bash(&check.explain_command().unwrap());
        let why = check.refusal(&output).unwrap();
        assert!(why.contains("None") && why.contains("where it must give `(1.5, 2.25)`"), "{why}");
    }

    #[test]
    fn the_tries_command_finds_the_candidate_that_passes_and_leaves_the_workspace_alone() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pkg")).unwrap();
        std::fs::write(root.path().join("pkg/__init__.py"), "").unwrap();
        let now = "def double(x):\n    return x + 1\n";
        std::fs::write(root.path().join("pkg/core.py"), now).unwrap();
        let runner = runner(Language::Python).unwrap();
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut check = Check::new(runner, loads, "from pkg.core import double\nassert double(3) == 6\n").unwrap();
        let bash = |command: &str| {
            let out =
                std::process::Command::new("bash").arg("-c").arg(command).current_dir(root.path()).output().unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
            )
        };
        // Stages `tries` of pkg/core.py (now `now`) in a fresh scratch copy and runs them.
        let run_tries = |check: &mut Check, tries: &[(&str, String)]| {
            check.prepare_scratch(root.path()).unwrap();
            check.stage(tries, &[("pkg/core.py", now)]).unwrap();
            bash(&check.tries_command(600).unwrap())
        };
        let (ok, output) = bash(&check.now_command());
        assert!(!ok && output.contains("AssertionError"), "{output}");
        assert_eq!(shows_nothing(&output, !ok), None);
        check.prepare_scratch(root.path()).unwrap();
        let tries = [("pkg/core.py", now.replace("x + 1", "x - 1")), ("pkg/core.py", now.replace("x + 1", "x * 2"))];
        check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
        let (ok, output) = bash(&check.tries_command(600).unwrap());
        assert!(ok, "{output}");
        assert_eq!(passed(&output), Some(2));
        assert_eq!(std::fs::read_to_string(root.path().join("pkg/core.py")).unwrap(), now);
        // With no seconds left, no candidate starts, and the tries say where they stopped.
        let (ok, output) = bash(&check.tries_command(0).unwrap());
        assert!(!ok && passed(&output).is_none(), "{output}");
        assert_eq!(tries_stopped(&output), Some(1), "{output}");
        assert_eq!(std::fs::read_to_string(root.path().join("pkg/core.py")).unwrap(), now);

        // A printing check passes when it prints what is expected.
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut check = Check::new(runner, loads, "from pkg.core import double\nprint(double(3))  \n").unwrap();
        let (ok, output) = bash(&check.now_command());
        assert!(ok, "{output}");
        assert_eq!(normalized(&check.now_output()), "4");
        check.expect("6\n\n").unwrap();
        let tries = [("pkg/core.py", now.replace("x + 1", "x + 2")), ("pkg/core.py", now.replace("x + 1", "x * 2"))];
        let (_, output) = run_tries(&mut check, &tries);
        assert_eq!(passed(&output), Some(2), "{output}");

        // Each expected line must be printed as often as it is expected,
        // blanks aside: `x + 3` prints [6] once, not twice.
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let script = "from pkg.core import double\nprint([double(3)])\nprint([double(1)])\n";
        let mut check = Check::new(runner, loads, script).unwrap();
        let (ok, output) = bash(&check.now_command());
        assert!(ok && normalized(&check.now_output()) == "[4]\n[2]", "{output}");
        check.expect("[ 6 ]\n[6]").unwrap();
        let tries = [("pkg/core.py", now.replace("x + 1", "x + 3")), ("pkg/core.py", now.replace("x + 1", "6"))];
        let (_, output) = run_tries(&mut check, &tries);
        assert_eq!(passed(&output), Some(2), "{output}");

        // A layout that must change is expected in order: a blank line
        // between the two lines, not a blank line anywhere.
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let script = "from pkg.core import double\nprint('a', double(0), sep='')\nprint('b')\n";
        let mut check = Check::new(runner, loads, script).unwrap();
        let (ok, output) = bash(&check.now_command());
        assert!(ok && normalized(&check.now_output()) == "a1\nb", "{output}");
        check.expect_in_order("a1\n\nb").unwrap();
        let tries =
            [("pkg/core.py", now.replace("x + 1", "'1\\nb\\n'")), ("pkg/core.py", now.replace("x + 1", "'1\\n'"))];
        let (_, output) = run_tries(&mut check, &tries);
        assert_eq!(passed(&output), Some(2), "{output}");

        // A program's own report of an error, on its error stream as it
        // exits, counts as printed where it is what must change.
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let script = "import sys\nfrom pkg.core import double\nsys.exit(f'did you mean {double(3)}?')\n";
        let mut check = Check::new(runner, loads, script).unwrap();
        let (ok, output) = bash(&check.now_command());
        assert!(!ok && output.contains("did you mean 4?"), "{output}");
        assert_eq!(check.now_output(), "");
        check.count_errors_as_printed();
        assert_eq!(check.now_output(), "did you mean 4?\n");
        check.expect("did you mean 6?").unwrap();
        let tries = [("pkg/core.py", now.replace("x + 1", "x + 2")), ("pkg/core.py", now.replace("x + 1", "x * 2"))];
        let (_, output) = run_tries(&mut check, &tries);
        assert_eq!(passed(&output), Some(2), "{output}");

        // A probe of other uses guards: `x * 2` prints 6 for double(3), as
        // `x + x` does, but only `x + x` leaves double(-1) as it printed.
        std::fs::write(root.path().join("pkg/core.py"), "def double(x):\n    return 2 * x if x < 0 else x + 1\n")
            .unwrap();
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut check = Check::new(runner, loads, "from pkg.core import double\nprint(double(3))\n").unwrap();
        let (ok, output) = bash(&check.now_command());
        assert!(ok && check.now_output() == "4\n", "{output}");
        check.expect("6").unwrap();
        // The request's case, and uses that all print what it must print once fixed.
        assert_eq!(check.request_cases(), [("print(double(3))".to_string(), "4".to_string())]);
        // A line printed as it must read but for its blanks is no case, as the tries read it.
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut spaced =
            Check::new(runner, loads, "from pkg.core import double\nprint([1, 2])\nprint(double(3))\n").unwrap();
        let (ok, output) = bash(&spaced.now_command());
        assert!(ok && spaced.now_output() == "[1, 2]\n4\n", "{output}");
        spaced.expect("[1,2]\n6").unwrap();
        assert_eq!(spaced.request_cases(), [("print(double(3))".to_string(), "4".to_string())]);
        // A value of its own is no likely change's everywhere; a truth value is.
        assert_eq!(check.fixed_alike("6\n6\n"), None);
        check.expect("True").unwrap();
        assert_eq!(check.fixed_alike("True\nTrue\n").as_deref(), Some("True"));
        assert_eq!(check.fixed_alike("True\nFalse\n"), None);
        assert_eq!(check.fixed_alike("False\nFalse\n"), None);
        assert_eq!(check.fixed_alike("True\n"), None);
        check.expect("6").unwrap();
        check.prepare_scratch(root.path()).unwrap();
        let (ok, output) = bash(&check.probe_command("from pkg.core import double\nprint(double(-1))").unwrap());
        assert!(ok, "{output}");
        assert!(check.guard_with_probe(&[]).unwrap());
        let now = "def double(x):\n    return 2 * x if x < 0 else x + 1\n";
        let tries = [
            ("pkg/core.py", "def double(x):\n    return x * 2 if x > 0 else x\n".to_string()),
            ("pkg/core.py", "def double(x):\n    return x + x\n".to_string()),
        ];
        check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
        let (_, output) = bash(&check.tries_command(600).unwrap());
        assert_eq!(passed(&output), Some(2), "{output}");
        // The model's own version is not refused for what the probe printed
        // before: `double(-1)` printing -2 may be the request's bug too. It
        // passes, said to change another use, and the evidence says so.
        check.stage(&tries[..1], &[("pkg/core.py", now)]).unwrap();
        let (_, output) = bash(&check.version_command(600).unwrap());
        assert_eq!(passed(&output), Some(1), "{output}");
        assert!(output.contains(CHANGES_OTHER_USES), "{output}");
        assert!(check.evidence(true).contains("prints otherwise with it"), "{}", check.evidence(true));
        assert!(check.evidence(true).starts_with("Evidence: a check the model wrote"), "{}", check.evidence(true));
        assert!(check.evidence(true).ends_with("Review it before relying on it."));
        check.stage(&tries[1..], &[("pkg/core.py", now)]).unwrap();
        let (_, output) = bash(&check.version_command(600).unwrap());
        assert_eq!(passed(&output), Some(1), "{output}");
        assert!(!output.contains(CHANGES_OTHER_USES), "{output}");
        check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
        // The request's own example, guarded by the project's passing tests, is no model's say-so.
        check.came_from(Origin::RequestExample);
        check.guard_with("true", 0);
        assert_eq!(
            check.evidence(false),
            "Evidence: the request's own example does what the request asks with it; the project's tests all pass \
with it too."
        );

        // A use of the request's shape that prints its truth value now may
        // be its case again or a use that works: a change that alters only
        // such uses passes where none leaves them as they are.
        std::fs::write(root.path().join("pkg/core.py"), "def same(a, b):\n    return a[0] == b[0]\n").unwrap();
        let loads = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/core.py");
        let mut same = Check::new(runner, loads, "from pkg.core import same\nprint(same('a1', 'a2'))\n").unwrap();
        let (ok, output) = bash(&same.now_command());
        assert!(ok && same.now_output() == "True\n", "{output}");
        same.expect("False").unwrap();
        same.prepare_scratch(root.path()).unwrap();
        let probe =
            "from pkg.core import same\nprint(same('a1', 'a1'))\nprint(same('a1', 'a3'))\nprint(same('b1', 'a1'))";
        let (ok, output) = bash(&same.probe_command(probe).unwrap());
        assert!(ok && same.probe_printed() == "True\nTrue\nFalse\n", "{output}");
        let cases = same.request_cases();
        let doubtful = super::super::expect::doubtful_prints(Language::Python, probe, &same.probe_printed(), &cases);
        assert_eq!(doubtful, [0, 1]);
        assert!(same.guard_with_probe(&doubtful).unwrap());
        let now = "def same(a, b):\n    return a[0] == b[0]\n";
        let tries = [
            ("pkg/core.py", "def same(a, b):\n    return a[0] != b[0]\n".to_string()),
            ("pkg/core.py", "def same(a, b):\n    return a == b\n".to_string()),
            // Every use now prints what the check must: broken, not fixed.
            ("pkg/core.py", "def same(a, b):\n    return False\n".to_string()),
            ("pkg/core.py", "def same(a, b):\n    return b == a\n".to_string()),
            ("pkg/core.py", "def same(a, b):\n    return a[:] == b\n".to_string()),
            ("pkg/core.py", "def same(a, b):\n    return a == b[:]\n".to_string()),
        ];
        same.stage(&tries, &[("pkg/core.py", now)]).unwrap();
        let (_, output) = bash(&same.tries_command(600).unwrap());
        // As many as pass strictly at most.
        assert_eq!(super::super::reading::all_passed(&output), [2, 4, 5], "{output}");
        // Held strictly, none does: each changes what the probe printed.
        same.strictly();
        let (_, output) = bash(&same.tries_command(600).unwrap());
        assert!(super::super::reading::all_passed(&output).is_empty(), "{output}");

        // Why one version fails, as the model is told it: the use it
        // changes, what the check prints instead, or the error.
        let told = |version: &str| {
            same.stage(&[("pkg/core.py", version.to_string())], &[("pkg/core.py", now)]).unwrap();
            let (_, output) = bash(&same.explain_command().unwrap());
            same.refusal(&output).unwrap_or_default()
        };
        let why = told("def same(a, b):\n    return False\n");
        assert!(why.contains("`print(same('a1', 'a1'))` prints `False`, where it printed `True` before"), "{why}");
        let why = told(now);
        assert!(why.contains("prints:\n```\nTrue\n```\nwhere it must print:\n```\nFalse\n```"), "{why}");
        let why = told("def same(a, b):\n    return a[0] == c\n");
        assert!(why.contains("fails with `NameError: name 'c' is not defined`"), "{why}");
        // The line that names the error, where the report goes on below it
        // (unittest's `Diff is 1528 characters long`).
        let why = told("def same(a, b):\n    raise ValueError('not alike\\nDiff is 3 characters long')\n");
        assert!(why.contains("fails with `ValueError: not alike`"), "{why}");
        assert_eq!(
            std::fs::read_to_string(root.path().join("pkg/core.py")).unwrap(),
            now,
            "the workspace is untouched"
        );
        std::fs::write(root.path().join("pkg/core.py"), "def double(x):\n    return 2 * x if x < 0 else x + 1\n")
            .unwrap();

        // Uses run with each staged change in place, each one's output apart.
        let (_, output) =
            bash(&check.differ_command("from pkg.core import double\nprint(double(-3))", &[1, 2]).unwrap());
        let outputs = super::super::reading::outputs_by_try(&output);
        assert_eq!(outputs, [(1, "-3\n".to_string()), (2, "-6\n".to_string())], "{output}");
    }
}
