//! What guards a check's candidates beside the check itself: the
//! project's tests, or a probe of the code's other uses, whose output a
//! candidate must leave as it is; and the runs that tell candidates that
//! all pass apart, by what each prints with the same uses of the code.

use std::io;
use std::path::PathBuf;

use super::super::expect::{loose, printing_statements, tells_little};
use super::super::reading::{changed_lines, normalized, outputs_by_try};
use super::{Check, DOUBTFUL, double_quoted, tidy, written};

/// Starts the line a run prints how it exited by, where it failed.
const EXITS: &str = "(exits";

/// The shell command that prints the line of the error stream in `file`
/// that names the error (the last that says `Error` or `Exception`, as
/// [`super::super::reading::error_line`] reads one), else its last line:
/// unittest ends an assertion's report with `Diff is 1528 characters
/// long`, which tells the model nothing, below the `AssertionError` line.
/// Cut to a few hundred characters: that line may quote whole documents.
/// A compiler's first error (`error[E0004]: non-exhaustive patterns`)
/// comes before all: what follows it, down to `could not compile`, is its
/// consequence.
fn last_error(file: &str) -> String {
    format!(
        "{{ grep -m1 -E '^error\\[E[0-9]+\\]: ' '{file}' || grep -E 'Error|Exception' '{file}' || cat '{file}'; }} \
| tail -n 1 | cut -c1-300"
    )
}
/// The sections of [`Check::explain_command`]'s output, numbered as
/// [`outputs_by_try`] reads them: the check's run, then the probe's.
const CHECK_RUN: usize = 1;
const PROBE_RUN: usize = 2;

impl Check {
    pub(super) fn probe_file(&self) -> PathBuf {
        self.dir.path().join(format!("probe.{}", self.runner.extension))
    }

    /// The script of the last [`Check::probe_command`], as it ran.
    pub fn probe_script(&self) -> String {
        std::fs::read_to_string(self.probe_file()).unwrap_or_default()
    }

    /// The command that runs the project's tests in the scratch copy as it
    /// is, for [`Check::guard_with`].
    pub fn tests_command(&self, tests: &str) -> Option<String> {
        Some(format!("cd '{}' && {tests}", self.scratch.as_ref()?.display()))
    }

    /// The command that writes `script`, a probe of other uses of the code,
    /// and runs it in the scratch copy as it is.
    pub fn probe_command(&self, script: &str) -> Option<String> {
        let scratch = self.scratch.as_ref()?.display().to_string();
        let modules = self.dir.path().join("scratch-modules").display().to_string();
        let script = tidy(self.runner.language, script);
        let out = self.dir.path().join("probe.now");
        let run = self.written_and_run(&self.probe_file(), &script, &modules, &format!("'{scratch}'"), &out);
        Some(format!("cd '{scratch}' && {run}"))
    }

    /// What the probe printed in the scratch copy as it is.
    pub fn probe_printed(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("probe.now")).unwrap_or_default()
    }

    /// The check's print statements whose printed line must change, each
    /// with what it prints now (`console.log(diff('1.2.3', '1.3.0-beta.0'))`,
    /// `minor`): the request's own cases. None where it must exit normally
    /// or its statements cannot be paired with what it printed.
    pub fn request_cases(&self) -> Vec<(String, String)> {
        let Some(expected) = &self.expected else { return Vec::new() };
        let now = normalized(&self.now_output());
        let Some(statements) = printing_statements(self.runner.language, &self.script, &now) else {
            return Vec::new();
        };
        // Compared as the tries compare them: `[1,2]` printed is `[1, 2]` wanted.
        let mut wanted: Vec<String> = expected.lines().map(loose).collect();
        statements
            .into_iter()
            .zip(now.lines())
            .filter(|(_, line)| {
                let line = loose(line);
                match wanted.iter().position(|w| *w == line) {
                    Some(at) => {
                        wanted.remove(at);
                        false
                    }
                    None => true,
                }
            })
            .map(|(statement, line)| (statement, line.trim().to_string()))
            .collect()
    }

    pub(super) fn differ_file(&self) -> PathBuf {
        self.dir.path().join(format!("differ.{}", self.runner.extension))
    }

    /// The script of the last [`Check::differ_command`], as it ran.
    pub fn differ_script(&self) -> String {
        std::fs::read_to_string(self.differ_file()).unwrap_or_default()
    }

    /// The command that writes `script`, uses of the code where candidates
    /// may differ, and runs it in the scratch copy with each staged
    /// candidate numbered in `tries` (from 1) in place: each run's output
    /// under a line `=== N`, then how it exited where it failed. Read by
    /// [`super::super::reading::outputs_by_try`].
    pub fn differ_command(&self, script: &str, tries: &[usize]) -> Option<String> {
        self.runs_with_each(script, tries, false)
    }

    /// [`Check::differ_command`], with a first run under `=== 0` on the
    /// code as it is: what the uses printed before any change.
    pub fn differ_command_from_now(&self, script: &str, tries: &[usize]) -> Option<String> {
        self.runs_with_each(script, tries, true)
    }

    fn runs_with_each(&self, script: &str, tries: &[usize], now_first: bool) -> Option<String> {
        let scratch = self.scratch.as_ref()?.display().to_string();
        let dir = self.dir.path().display();
        let modules = format!("{dir}/scratch-modules");
        let script = tidy(self.runner.language, script);
        let run = self.run_line(&modules, &format!("'{scratch}'"), &self.differ_file());
        let run = double_quoted(&run);
        let numbers: Vec<String> = tries.iter().map(|n| format!("{n:04}")).collect();
        let now = match now_first {
            true => format!("echo '=== 0'; $limit bash -c \"{run}\" 2>/dev/null\n"),
            false => String::new(),
        };
        Some(format!(
            "{}cd '{scratch}' && limit=$(command -v timeout >/dev/null && echo 'timeout {}')\n{now}\
for n in {}; do\n  \
try='{dir}/tries/'$n; f=$(cat \"$try/path\"); rm -f \"$f\" && cp \"$try/text\" \"$f\"\n  \
echo \"=== $((10#$n))\"; $limit bash -c \"{run}\" 2>'{dir}/differ.err'; status=$?\n  \
if [ $status -ne 0 ]; then echo \"{EXITS} $status: $({}))\"; fi\n  \
rm -f \"$f\" && cp '{dir}/before/'\"$f\" \"$f\"\n\
done",
            written(&self.differ_file(), &script),
            self.try_seconds(),
            numbers.join(" "),
            last_error(&format!("{dir}/differ.err"))
        ))
    }

    /// The command that runs the check, then the probe where one guards,
    /// with the one staged candidate in place (see [`Check::stage`]), each
    /// under its number as [`Check::differ_command`] prints its runs: what
    /// [`Check::refusal`] reads, to tell the model why its version fails.
    pub fn explain_command(&self) -> Option<String> {
        let scratch = self.scratch.as_ref()?.display().to_string();
        let dir = self.dir.path().display();
        let modules = format!("{dir}/scratch-modules");
        let root = format!("'{scratch}'");
        let check = double_quoted(&self.run_line(&modules, &root, &self.file()));
        // As the tries guard: with the project's tests where they run, else the probe.
        let probe = match self.probe && self.tests.is_none() {
            true => format!(
                "echo '=== {PROBE_RUN}'; $limit bash -c \"{}\" 2>/dev/null\n",
                double_quoted(&self.run_line(&modules, &root, &self.probe_file()))
            ),
            false => String::new(),
        };
        Some(format!(
            "cd '{scratch}' && limit=$(command -v timeout >/dev/null && echo 'timeout {}')\n\
try='{dir}/tries/0001'; f=$(cat \"$try/path\"); rm -f \"$f\" && cp \"$try/text\" \"$f\"\n\
echo '=== {CHECK_RUN}'; $limit bash -c \"{check}\" 2>'{dir}/explain.err'; status=$?\n\
if [ $status -ne 0 ]; then echo \"{EXITS} $status: $({}))\"; fi\n\
{probe}rm -f \"$f\" && cp '{dir}/before/'\"$f\" \"$f\"",
            self.try_seconds(),
            last_error(&format!("{dir}/explain.err"))
        ))
    }

    /// Why the candidate fails, read from the output of
    /// [`Check::explain_command`]: the check's error, what it prints where
    /// it must print otherwise, or the probe's uses it changes, each with
    /// what it printed before. `None` where the output tells none of these.
    pub fn refusal(&self, output: &str) -> Option<String> {
        /// Lines of a printed output told at most.
        const TOLD_LINES: usize = 6;
        /// Probe uses told at most.
        const TOLD_USES: usize = 2;
        let runs = outputs_by_try(output);
        let run = |n: usize| runs.iter().find(|(at, _)| *at == n).map(|(_, printed)| printed.as_str());
        let lines: Vec<&str> = run(CHECK_RUN)?.lines().filter(|l| !l.is_empty()).collect();
        let (printed, exits): (Vec<&str>, Vec<&str>) = lines.into_iter().partition(|l| !l.starts_with(EXITS));
        let shown = |lines: &[&str]| -> String {
            let mut told: Vec<&str> = lines.iter().take(TOLD_LINES).copied().collect();
            if lines.len() > TOLD_LINES {
                told.push("...");
            }
            told.join("\n")
        };
        if let Some(exit) = exits.first() {
            // Tests that run and fail say how in their report.
            if self.own_tests.is_some()
                && let Some(report) = super::super::reading::test_failures(&printed.join("\n"))
            {
                let lines: Vec<&str> = report.lines().filter(|l| !l.trim().is_empty()).collect();
                return Some(format!("with it the tests still fail:\n```\n{}\n```", shown(&lines)));
            }
            let error = exit.split_once(": ").map_or("", |(_, e)| e).trim_end_matches(')').trim();
            return Some(match error.is_empty() {
                true => "with it the check exits with an error".to_string(),
                false => format!("with it the check fails with `{error}`"),
            });
        }
        if let Some(expected) = &self.expected {
            if !changed_lines(&printed.join("\n"), expected).trim().is_empty() {
                return Some(format!(
                    "with it the check prints:\n```\n{}\n```\nwhere it must print:\n```\n{}\n```",
                    shown(&printed),
                    expected.trim_end()
                ));
            }
        }
        if let Some(result) = &self.result {
            if !loose(&printed.join("")).contains(&loose(result)) {
                return Some(format!(
                    "with it the check runs, but prints:\n```\n{}\n```\nwhere it must give `{result}`",
                    shown(&printed)
                ));
            }
        }
        let Some(probe) = run(PROBE_RUN) else {
            return self
                .tests
                .is_some()
                .then(|| "the check passes with it, but more of the project's tests fail".into());
        };
        let probe = normalized(probe);
        let before = std::fs::read_to_string(self.dir.path().join("probe.expected")).ok()?;
        let statements = printing_statements(self.runner.language, &self.probe_script(), &before);
        let now: Vec<&str> = probe.lines().collect();
        let changed: Vec<String> = before
            .lines()
            .enumerate()
            .filter(|(at, was)| now.get(*at).map(|line| line.trim_end()) != Some(was.trim_end()))
            .take(TOLD_USES)
            .map(|(at, was)| {
                let use_ = statements.as_ref().and_then(|s| s.get(at)).map_or_else(
                    || format!("line {} of the uses", at + 1),
                    |statement| format!("`{}`", statement.trim()),
                );
                match now.get(at) {
                    Some(line) => format!("{use_} prints `{}`, where it printed `{was}` before", line.trim_end()),
                    None => format!("{use_} prints nothing, where it printed `{was}` before"),
                }
            })
            .collect();
        (!changed.is_empty()).then(|| {
            format!(
                "the check passes with it, but it changes what other uses of the code print, which must stay as \
they are: {}",
                changed.join("; ")
            )
        })
    }

    /// The one value every line of `printed` (two at least) reads, where
    /// the check must print it once fixed and it tells little (`false`):
    /// uses that all print it pass a change that makes every use print it,
    /// as broken code easily does (a range that lets no version in). A
    /// value of its own (`1.3.0`) no likely change prints everywhere.
    pub fn fixed_alike(&self, printed: &str) -> Option<String> {
        let printed = normalized(printed);
        let lines: Vec<&str> = printed.lines().map(str::trim).collect();
        let [first, rest @ ..] = lines.as_slice() else { return None };
        let expected = self.expected.as_deref()?;
        let alike = !rest.is_empty()
            && rest.iter().all(|line| line == first)
            && tells_little(first)
            && expected.lines().any(|line| line.trim() == *first);
        alike.then(|| first.to_string())
    }

    /// From now on a candidate must leave what the probe printed as it is;
    /// false when it printed nothing, and guards nothing. Where none does,
    /// one that changes only the `doubtful` lines (counted from 0, see
    /// [`super::super::expect::doubtful_prints`]), and not all of them,
    /// passes.
    pub fn guard_with_probe(&mut self, doubtful: &[usize]) -> io::Result<bool> {
        let raw = self.probe_printed();
        let printed = normalized(&raw);
        if printed.is_empty() {
            return Ok(false);
        }
        self.lenient = !doubtful.is_empty() && printed.lines().count() == raw.lines().count();
        if self.lenient {
            let lenient: Vec<String> = printed
                .lines()
                .enumerate()
                .map(|(at, line)| match doubtful.contains(&at) {
                    true => format!("{DOUBTFUL}{line}"),
                    false => line.to_string(),
                })
                .collect();
            std::fs::write(self.dir.path().join("probe.lenient"), lenient.join("\n") + "\n")?;
        }
        std::fs::write(self.dir.path().join("probe.expected"), printed)?;
        self.probe = true;
        Ok(true)
    }

    /// From now on a candidate passes only where it leaves every line the
    /// probe printed as it is: where a change passes so already, one that
    /// changes what may be the request's case again is no better than it.
    pub fn strictly(&mut self) {
        self.lenient = false;
    }

    /// From now on a candidate that passes the check must also fail no more
    /// of the project's tests (`tests`) than `before` fail now, less those
    /// the check itself runs, where it is the project's failing tests.
    pub fn guard_with(&mut self, tests: &str, before: usize) {
        let made_to_pass = self.own_tests.as_ref().filter(|(own, _, _)| own == tests).map_or(0, |(_, count, _)| *count);
        self.tests = Some((tests.to_string(), before.saturating_sub(made_to_pass)));
    }

    /// The check is the project's failing tests, `count` of them, in the
    /// `files` that `command` runs: the tests a candidate is guarded by.
    pub fn made_of_tests(&mut self, command: String, count: usize, files: Vec<String>) {
        self.own_tests = Some((command, count, files));
    }

    /// The command that runs the files of the tests the check is made of.
    pub fn own_tests(&self) -> Option<&str> {
        self.own_tests.as_ref().map(|(command, _, _)| command.as_str())
    }
}
