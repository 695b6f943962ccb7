//! Scenario tests of the tools that run programs beside Bash: REPL with real
//! python3 and node interpreters, and the git tools on real repositories.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Scenario;
use serde_json::{Value, json};
use tack::model::scripted::ScriptEntry;
use tack::protocol::{ApprovalDecision, PermissionMode, StopReason};
use tokio_util::sync::CancellationToken;

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

fn python(code: &str) -> String {
    call("REPL", json!({"language": "python", "code": code}))
}

/// Several calls in one model reply: they run one after the other in one turn.
fn calls(calls: &[String]) -> String {
    calls.join("\n")
}

/// Whether a process whose command line contains `marker` is alive.
fn running(marker: &str) -> bool {
    std::process::Command::new("pgrep").args(["-f", marker]).output().map(|o| o.status.success()).unwrap_or(false)
}

/// Fails the test, saying why, where a program it runs for real is missing
/// (`scripts/system-deps` installs them): a skipped test would pass.
fn require(program: &str) {
    let found = std::process::Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(found, "{program} is not installed: scripts/system-deps installs it");
}

// ---------------------------------------------------------------- REPL

#[tokio::test]
async fn python_state_survives_between_calls_and_final_expressions_print() {
    // Far more code than a pipe buffer holds: the request must not stall.
    let long = format!("s = '{}'\nlen(s)", "a".repeat(200_000));
    let script =
        calls(&[python("x = 21\nimport math"), python("print(x * 2)"), python("math.floor(x / 2)"), python(&long)]);
    let run = Scenario::new().run(&[&script, "done"], "py").await;
    let results = run.results();
    assert_eq!(results[3], ("REPL".into(), false, "200000\n".into()));
    assert_eq!(results[0], ("REPL".into(), false, "(no output)".into()));
    assert_eq!(results[1], ("REPL".into(), false, "42\n".into()));
    assert_eq!(results[2], ("REPL".into(), false, "10\n".into()));
}

#[tokio::test]
async fn an_exception_is_an_error_result_and_the_state_survives() {
    let run = Scenario::new()
        .run(
            &[
                &calls(&[
                    python("y = 5"),
                    python("print('before')\nimport sys\nprint('warned', file=sys.stderr)\nundefined_name + 1"),
                    python("def f(:"),
                    python("print(y)"),
                ]),
                "done",
            ],
            "py",
        )
        .await;
    let results = run.results();
    let (_, is_error, output) = &results[1];
    assert!(*is_error, "{output}");
    assert!(output.starts_with("before\n[stderr]\nwarned\nTraceback (most recent call last):\n"), "{output}");
    assert!(output.contains("undefined_name + 1"), "the traceback shows the source line: {output}");
    assert!(output.ends_with("NameError: name 'undefined_name' is not defined\n"), "{output}");
    assert!(!output.contains("_tack_repl"), "the driver's frames are hidden: {output}");
    assert!(results[2].1 && results[2].2.contains("SyntaxError"), "{:?}", results[2]);
    assert_eq!(results[3], ("REPL".into(), false, "5\n".into()));
    let summaries: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            tack::protocol::Event::ToolResult { summary, .. } => Some(summary.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(summaries[0], "python: ok");
    assert_eq!(summaries[1], "python: NameError: name 'undefined_name' is not defined");
}

#[tokio::test]
async fn restart_starts_a_fresh_interpreter() {
    let restart = call("REPL", json!({"language": "python", "code": "", "restart": true}));
    let run = Scenario::new().run(&[&calls(&[python("z = 1"), restart, python("print(z)")]), "done"], "py").await;
    let results = run.results();
    assert_eq!(results[1], ("REPL".into(), false, "started a fresh python interpreter".into()));
    assert!(results[2].1 && results[2].2.contains("NameError: name 'z' is not defined"), "{:?}", results[2]);
}

#[tokio::test]
async fn a_huge_output_comes_back_capped_and_quickly() {
    let started = Instant::now();
    let run = Scenario::new()
        .run(
            &[
                &calls(&[
                    python("for i in range(200000):\n    print(i)"),
                    python("print('\\n'.join(str(i) for i in range(200000)))\nimport sys\n_ = sys.stderr.write('e' * 100000)"),
                    python("print('still here')"),
                ]),
                "done",
            ],
            "py",
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    let results = run.results();
    for (_, is_error, output) in &results[..2] {
        assert!(!is_error);
        assert!(output.starts_with("0\n1\n2\n") && output.contains("bytes of output elided"), "{output:.200}");
        assert!(output.len() < 62_000, "{}", output.len());
    }
    assert!(results[0].2.ends_with("199998\n199999\n"));
    assert!(results[1].2.contains("199999\n[stderr]\neeee") && results[1].2.ends_with("eeee"));
    assert!(results[1].2.len() < 62_000);
    assert_eq!(results[2].2, "still here\n");
}

#[tokio::test]
async fn a_timeout_kills_the_interpreter_and_its_children() {
    let slow =
        "import subprocess, time\nsubprocess.Popen(['sleep', '301.5'])\nprint('started', flush=True)\ntime.sleep(60)";
    let timed = call("REPL", json!({"language": "python", "code": slow, "timeout_ms": 1500}));
    let run = Scenario::new().run(&[&calls(&[python("a = 1"), timed, python("print(a)")]), "done"], "py").await;
    let results = run.results();
    let (_, is_error, output) = &results[1];
    assert!(*is_error, "{output}");
    assert_eq!(output, "started\ntimed out after 1500 ms; the interpreter was restarted, its state is gone");
    assert!(!running("sleep 301.5"), "a child of the timed-out interpreter survived");
    assert!(results[2].1 && results[2].2.contains("NameError: name 'a' is not defined"), "{:?}", results[2]);
}

#[tokio::test]
async fn cancelling_a_turn_kills_the_running_interpreter() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        trigger.cancel();
    });
    let slow = python("import subprocess, time\nsubprocess.Popen(['sleep', '302.5'])\ntime.sleep(60)");
    let script = vec![ScriptEntry::Text(slow), ScriptEntry::Text("x".into())];
    let run = Scenario::new().run_entries(script, "py", cancel).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    let (_, is_error, output) = &run.results()[0];
    assert!(*is_error && output.ends_with("cancelled by the user; the interpreter was stopped, its state is gone"));
    assert!(!running("sleep 302.5"), "the cancelled interpreter's child survived");
}

#[tokio::test]
async fn an_interpreter_that_exits_is_reported_and_replaced() {
    let run = Scenario::new()
        .run(
            &[&calls(&[python("b = 2\nprint('bye')\nexit(3)"), python("print('b' in globals(), 1 + 1)")]), "done"],
            "py",
        )
        .await;
    let results = run.results();
    assert_eq!(
        results[0],
        (
            "REPL".into(),
            true,
            "bye\nthe python interpreter exited with code 3; its state is gone and the next call starts a fresh one"
                .into()
        )
    );
    assert_eq!(results[1], ("REPL".into(), false, "False 2\n".into()));
}

#[tokio::test]
async fn credentials_do_not_reach_the_interpreters() {
    // SAFETY: the variable is only ever set, never removed, and std's own
    // environment access (process spawning included) is synchronised.
    unsafe { std::env::set_var("GITHUB_TOKEN", "ghp_exec_tools_test") };
    require("node");
    let script = vec![
        python("import os\nprint(os.environ.get('GITHUB_TOKEN'), 'TACK_REPL_MARKER' in os.environ)"),
        call(
            "REPL",
            json!({"language": "node", "code": "[process.env.GITHUB_TOKEN, 'TACK_REPL_MARKER' in process.env]"}),
        ),
    ];
    let run = Scenario::new().run(&[&calls(&script), "done"], "env").await;
    let results = run.results();
    assert_eq!(results[0].2, "None False\n");
    assert_eq!(results[1].2, "[ undefined, false ]\n");
}

#[tokio::test]
async fn node_keeps_state_and_reports_exceptions() {
    require("node");
    let node = |code: &str| call("REPL", json!({"language": "node", "code": code}));
    let run = Scenario::new()
        .run(
            &[
                &calls(&[
                    node("let x = 20\nconsole.log('set')"),
                    node("x + 1"),
                    node("throw new Error('boom')"),
                    node("Promise.resolve(x * 2)"),
                    node("console.error('careful'); undefined"),
                ]),
                "done",
            ],
            "js",
        )
        .await;
    let results = run.results();
    assert_eq!(results[0], ("REPL".into(), false, "set\n".into()));
    assert_eq!(results[1], ("REPL".into(), false, "21\n".into()));
    assert!(results[2].1 && results[2].2.contains("Error: boom\n    at <repl:3>:1:7"), "{:?}", results[2]);
    assert!(!results[2].2.contains("node:vm"), "{:?}", results[2]);
    assert_eq!(results[3], ("REPL".into(), false, "40\n".into()));
    assert_eq!(results[4], ("REPL".into(), false, "[stderr]\ncareful\n".into()));
}

#[tokio::test]
async fn repl_is_refused_in_plan_mode_and_asks_by_default() {
    let write = python("open('made.txt', 'w').write('x')");
    let run = Scenario::new().mode(PermissionMode::Plan).run(&[&write, "ok"], "plan").await;
    assert!(!run.exists("made.txt"));
    assert!(!run.backend.last_request().unwrap().tools.iter().any(|t| t.name == "REPL"));
    assert!(run.result_output(0).contains("not available in plan mode"), "{}", run.result_output(0));

    let run = Scenario::new()
        .mode(PermissionMode::AutoRead)
        .answers(&[ApprovalDecision::Allow])
        .run(&[&write, "ok"], "make")
        .await;
    assert_eq!(run.asked.len(), 1);
    assert!(run.asked[0].reason.starts_with("REPL runs a command; it runs in the workspace-write sandbox"));
    assert_eq!(run.read("made.txt"), "x");
}

// ---------------------------------------------------------------- git

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=Test Author", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

/// A workspace holding a repository with two commits and an unstaged change.
fn repository() -> Scenario {
    let scenario = Scenario::new().file("a.txt", "one\ntwo\n").file("b.txt", "bee\n");
    let root = scenario.root();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "first commit"]);
    std::fs::write(root.join("a.txt"), "one\nthree\n").unwrap();
    git(root, &["commit", "-q", "-am", "second commit"]);
    std::fs::write(root.join("a.txt"), "one\nfour\n").unwrap();
    scenario
}

#[tokio::test]
async fn git_tools_show_status_diff_log_and_commits() {
    require("git");
    let scenario = repository();
    std::fs::write(scenario.root().join("b.txt"), "bee\nstaged\n").unwrap();
    git(scenario.root(), &["add", "b.txt"]);
    let script = calls(&[
        call("GitStatus", json!({})),
        call("GitDiff", json!({})),
        call("GitDiff", json!({"staged": true})),
        call("GitDiff", json!({"commit": "HEAD~1", "path": "a.txt"})),
        call("GitLog", json!({})),
        call("GitLog", json!({"max_count": 1, "path": "a.txt"})),
        call("GitShow", json!({"revision": "HEAD~1"})),
    ]);
    let run = scenario.run(&[&script, "done"], "git").await;
    let results = run.results();
    assert!(results.iter().all(|(_, is_error, _)| !is_error), "{results:#?}");
    assert_eq!(results[0].2, "## main\n M a.txt\nM  b.txt\n");
    let diff = &results[1].2;
    assert!(diff.contains("diff --git a/a.txt b/a.txt") && diff.contains("-three\n+four\n"), "{diff}");
    assert!(!diff.contains("b.txt"), "staged changes are not in the working-tree diff: {diff}");
    assert!(results[2].2.contains("+staged") && !results[2].2.contains("a.txt"), "{}", results[2].2);
    assert!(results[3].2.contains("-two\n+four\n") && !results[3].2.contains("b.txt"), "{}", results[3].2);
    let log: Vec<&str> = results[4].2.lines().collect();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].ends_with(" (Test Author) second commit") && log[1].ends_with(" (Test Author) first commit"));
    assert_eq!(results[5].2.lines().count(), 1);
    let show = &results[6].2;
    assert!(show.starts_with("commit ") && show.contains("    first commit\n"), "{show}");
    assert!(show.contains("a.txt | 2 ++") && show.contains("+one\n+two\n"), "{show}");
}

#[tokio::test]
async fn git_tools_refuse_options_and_paths_outside_the_workspace() {
    require("git");
    let script = calls(&[
        call("GitDiff", json!({"commit": "--output=pwned.txt"})),
        call("GitShow", json!({"revision": "-p"})),
        call("GitShow", json!({"revision": "HEAD:a.txt"})),
        call("GitLog", json!({"path": "../outside"})),
        call("GitDiff", json!({"path": "/etc/passwd"})),
        call("GitShow", json!({"revision": "no-such-revision"})),
    ]);
    let run = repository().run(&[&script, "done"], "git").await;
    let results = run.results();
    assert!(results.iter().all(|(_, is_error, _)| *is_error), "{results:#?}");
    assert!(results[0].2.contains("starts with `-`"), "{}", results[0].2);
    assert!(results[1].2.contains("starts with `-`"), "{}", results[1].2);
    assert!(results[2].2.contains("give the revision alone"), "{}", results[2].2);
    assert!(results[3].2.contains("not inside the workspace root"), "{}", results[3].2);
    assert!(results[4].2.contains("not inside the workspace root"), "{}", results[4].2);
    assert!(results[5].2.contains("git show failed") && results[5].2.contains("no-such-revision"), "{}", results[5].2);
    assert!(!run.exists("pwned.txt"));
}

#[tokio::test]
async fn git_tools_outside_a_repository_say_so() {
    require("git");
    let run = Scenario::new()
        .file("a.txt", "x")
        .run(&[&calls(&[call("GitStatus", json!({})), call("GitLog", json!({}))]), "done"], "git")
        .await;
    let results = run.results();
    assert_eq!(results.len(), 2, "{results:?}");
    for (_, is_error, output) in results {
        assert!(is_error && output.contains("is not a git repository"), "{output}");
    }
}

// ---------------------------------------------------------------- sandbox

fn bash(command: &str) -> String {
    call("Bash", json!({ "command": command }))
}

/// A folder outside the workspace and outside the temporary directories
/// (which the sandbox lets commands write to): in the build's own folder,
/// or in the home folder when the build itself lies under /tmp.
fn outside() -> tempfile::TempDir {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let temporary = [std::env::temp_dir(), PathBuf::from("/tmp"), PathBuf::from("/var/tmp"), PathBuf::from("/dev/shm")];
    let base = match temporary.iter().any(|temp| target.starts_with(temp)) {
        true => PathBuf::from(std::env::var_os("HOME").expect("HOME is set")),
        false => target,
    };
    tempfile::Builder::new().prefix(".tack-test-").tempdir_in(base).unwrap()
}

fn sandboxed(mode: &str, configure: impl FnOnce(&mut serde_json::Map<String, Value>)) -> tack::config::ToolSettings {
    let mut settings = serde_json::Map::new();
    settings.insert("sandbox".into(), json!(mode));
    configure(&mut settings);
    serde_json::from_value(Value::Object(settings)).unwrap()
}

#[tokio::test]
async fn sandboxed_commands_write_only_in_the_workspace_and_temp_unless_the_sandbox_is_off() {
    let outside = outside();
    let target = outside.path().join("escaped.txt");
    let command = format!(
        "echo in > inside.txt; echo tmp > \"$(mktemp)\" && echo temp-ok; echo out > '{}' && echo outside-ok",
        target.display()
    );
    let run = Scenario::new()
        .tool_settings(sandboxed("workspace-write", |_| {}))
        .run(&[&bash(&command), "done"], "write")
        .await;
    let (_, _, output) = &run.results()[0];
    assert!(output.contains("temp-ok") && output.contains("Permission denied"), "{output}");
    assert!(!output.contains("outside-ok"), "{output}");
    assert!(!target.exists(), "the sandbox let the command write outside the workspace");
    assert_eq!(std::fs::read_to_string(run.dir.path().join("inside.txt")).unwrap(), "in\n");

    let run = Scenario::new().tool_settings(sandboxed("off", |_| {})).run(&[&bash(&command), "done"], "write").await;
    let (_, _, output) = &run.results()[0];
    assert!(output.contains("outside-ok"), "{output}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "out\n");

    let writable = outside.path().join("allowed");
    std::fs::create_dir(&writable).unwrap();
    let extra = format!("echo yes > '{}/f' && echo extra-ok", writable.display());
    let run = Scenario::new()
        .tool_settings(sandboxed("workspace-write", |s| {
            s.insert("sandboxWritable".into(), json!([writable]));
        }))
        .run(&[&bash(&extra), "done"], "write")
        .await;
    assert!(run.results()[0].2.contains("extra-ok"), "{:?}", run.results()[0]);
}

#[tokio::test]
async fn the_read_only_sandbox_keeps_even_the_workspace_unchanged_and_python_reads_on() {
    let run = Scenario::new()
        .file("data.txt", "kept\n")
        .tool_settings(sandboxed("read-only", |_| {}))
        .run(
            &[
                &[
                    bash("cat data.txt; echo changed > data.txt"),
                    python("print(open('data.txt').read().strip())\nopen('new.txt', 'w')"),
                ]
                .join("\n"),
                "done",
            ],
            "look",
        )
        .await;
    let results = run.results();
    assert!(results[0].2.starts_with("kept\n") && results[0].2.contains("Permission denied"), "{:?}", results[0]);
    assert!(results[1].1 && results[1].2.starts_with("kept\n"), "{:?}", results[1]);
    assert!(results[1].2.contains("PermissionError"), "{:?}", results[1]);
    assert_eq!(std::fs::read_to_string(run.dir.path().join("data.txt")).unwrap(), "kept\n");
    assert!(!run.dir.path().join("new.txt").exists());
}

#[tokio::test]
async fn hidden_paths_and_the_network_are_closed_to_sandboxed_commands() {
    let outside = outside();
    let secrets = outside.path().join("secrets-of-the-user");
    std::fs::create_dir(&secrets).unwrap();
    std::fs::write(secrets.join("token"), "hunter2\n").unwrap();
    std::fs::write(outside.path().join("notes.txt"), "public\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        "cat '{0}/notes.txt'; cat '{1}/token'; ls '{1}'; (exec 3<>/dev/tcp/127.0.0.1/{port}) && echo connected",
        outside.path().display(),
        secrets.display()
    );
    let closed = sandboxed("workspace-write", |s| {
        s.insert("sandboxHidden".into(), json!([secrets]));
        s.insert("sandboxNetwork".into(), json!(false));
    });
    let run = Scenario::new().tool_settings(closed).run(&[&bash(&command), "done"], "peek").await;
    let output = &run.results()[0].2;
    assert!(output.starts_with("public\n"), "everything else stays readable: {output}");
    assert!(!output.contains("hunter2") && !output.contains("token\n"), "{output}");
    assert!(!output.contains("connected"), "{output}");

    let open = sandboxed("workspace-write", |_| {});
    let run = Scenario::new().tool_settings(open).run(&[&bash(&command), "done"], "peek").await;
    let output = &run.results()[0].2;
    assert!(output.contains("hunter2") && output.contains("connected"), "{output}");
}

#[tokio::test]
async fn the_approval_question_says_which_sandbox_a_command_runs_in() {
    let run = Scenario::new()
        .mode(PermissionMode::Ask)
        .answers(&[ApprovalDecision::Deny])
        .run(&[&bash("echo hi"), "done"], "hi")
        .await;
    assert_eq!(run.asked.len(), 1);
    let reason = &run.asked[0].reason;
    assert!(reason.contains("workspace-write sandbox"), "{reason}");
}
