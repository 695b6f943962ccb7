//! `tack run` and `tack sessions` as a user runs them: the real binary, real
//! processes, real files, no terminal.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A temp workspace (a copy of the demo fixture) and a clean config home.
struct Cli {
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

impl Cli {
    fn new() -> Cli {
        let workspace = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(repo("fixtures/demo")).unwrap() {
            let entry = entry.unwrap();
            // Files only: the fixture's .tack/ settings are for the real model.
            if entry.file_type().unwrap().is_file() {
                std::fs::copy(entry.path(), workspace.path().join(entry.file_name())).unwrap();
            }
        }
        Cli { workspace, home: tempfile::tempdir().unwrap() }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.workspace.path().join(rel)
    }

    /// The one session file the run saved (the folder also holds its .gitignore).
    fn only_session(&self) -> PathBuf {
        let sessions: Vec<PathBuf> = std::fs::read_dir(self.path(".tack/sessions"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        sessions.into_iter().next().unwrap()
    }

    fn script(&self, entries: Value) -> PathBuf {
        let path = self.home.path().join(format!("script-{}.json", fastrand::u32(..)));
        std::fs::write(&path, entries.to_string()).unwrap();
        path
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tack"));
        command
            .args(args)
            .current_dir(self.workspace.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env_remove("TACK_LOG")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `tack run --backend scripted --script <script> ARGS...`
    fn run_script(&self, script: &Path, args: &[&str]) -> Output {
        let mut all = vec!["run", "--backend", "scripted", "--script", script.to_str().unwrap()];
        all.extend_from_slice(args);
        self.run(&all)
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn events(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON event line: {line}: {e}")))
        .collect()
}

fn call(tool: &str, input: Value) -> String {
    serde_json::json!({ "tool": tool, "input": input }).to_string()
}

#[test]
fn the_demo_script_runs_end_to_end_with_json_events() {
    let cli = Cli::new();
    let output = cli.run_script(
        &repo("fixtures/scripts/demo.json"),
        &["--permission-mode", "auto_all", "--json-events", "The greeting test fails. Fix it."],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&output);
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    let calls: Vec<&str> =
        events.iter().filter(|e| e["kind"] == "tool_call").map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(calls, ["ListDir", "Read", "Grep", "Edit"]);
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "turn_finished");
    assert_eq!(last["stopReason"], "end_turn");
    assert!(last["text"].as_str().unwrap().starts_with("Fixed the typo"));
    assert!(last["usage"]["promptTokens"].as_u64().unwrap() > 0);
    let result = events.iter().find(|e| e["kind"] == "tool_result" && e["name"] == "Edit").unwrap();
    assert_eq!(result["isError"], false);
    assert!(result["toolCallId"].is_string() && result["summary"].is_string());
    assert!(std::fs::read_to_string(cli.path("greet.py")).unwrap().contains("\"Hello, \""));
}

#[test]
fn by_default_the_answer_goes_to_stdout_and_the_activity_to_stderr() {
    let cli = Cli::new();
    let output = cli.run_script(&repo("fixtures/scripts/demo.json"), &["--permission-mode", "auto_all", "fix it"]);
    assert!(output.status.success());
    assert_eq!(
        stdout(&output),
        "Fixed the typo in `greet.py`: the greeting now reads \"Hello, \", which is what `test_greet.py` expects.\n"
    );
    let err = stderr(&output);
    assert!(err.contains("● Read(greet.py)\n") && err.contains("  ⎿ edited greet.py\n"), "{err}");
    assert!(err.contains("I'll look at the project first."), "{err}");
}

#[test]
fn stream_events_puts_json_on_stderr_and_keeps_the_answer_on_stdout() {
    let cli = Cli::new();
    let script = cli.script(serde_json::json!(["All good."]));
    let output = cli.run_script(&script, &["--stream-events", "hi"]);
    assert_eq!(stdout(&output), "All good.\n");
    let last = stderr(&output).lines().rfind(|l| l.starts_with('{')).unwrap().to_string();
    assert!(last.contains("\"kind\":\"turn_finished\""), "{last}");
}

#[test]
fn without_a_terminal_a_call_that_needs_approval_is_denied_with_a_hint() {
    let cli = Cli::new();
    let edit = call("Edit", serde_json::json!({"file_path": "greet.py", "old_string": "Helo", "new_string": "Hello"}));
    let script = cli.script(serde_json::json!([edit, "I could not edit."]));
    let output = cli.run_script(&script, &["--json-events", "fix"]);
    assert!(output.status.success());
    let err = stderr(&output);
    assert!(err.contains("Edit needs approval and there is no terminal to ask"), "{err}");
    assert!(err.contains("--permission-mode auto_all"), "{err}");
    let events = events(&output);
    let decision = events.iter().find(|e| e["kind"] == "permission_decision").unwrap();
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["source"], "no_terminal");
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["isError"], true);
    assert!(result["output"].as_str().unwrap().contains("no terminal"));
    assert!(std::fs::read_to_string(cli.path("greet.py")).unwrap().contains("Helo"));
}

#[test]
fn config_rules_allow_what_would_otherwise_be_asked() {
    let cli = Cli::new();
    std::fs::create_dir_all(cli.path(".tack")).unwrap();
    std::fs::write(
        cli.path(".tack/config.toml"),
        "[[permissions.rules]]\naction = \"allow\"\ntool = \"Edit\"\npath = \"*.py\"\n",
    )
    .unwrap();
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let edit = call("Edit", serde_json::json!({"file_path": "greet.py", "old_string": "Helo", "new_string": "Hello"}));
    let script = cli.script(serde_json::json!([read, edit, "done"]));
    let output = cli.run_script(&script, &["fix"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(std::fs::read_to_string(cli.path("greet.py")).unwrap().contains("\"Hello, \""));
}

#[test]
fn bad_flags_and_bad_config_get_one_clear_line() {
    let cli = Cli::new();
    let output = cli.run(&["run", "--bogus", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("--bogus"));

    let output = cli.run(&["run", "--permission-mode", "yolo", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("yolo"));

    std::fs::create_dir_all(cli.path(".tack")).unwrap();
    std::fs::write(cli.path(".tack/config.toml"), "max_iteration = 3\n").unwrap();
    let output = cli.run(&["run", "--backend", "scripted", "--script", "nope.json", "x"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(".tack/config.toml") && err.contains("maxIteration"), "{err}");
    assert!(!err.contains("backtrace") && !err.contains("panicked"), "{err}");
    std::fs::remove_file(cli.path(".tack/config.toml")).unwrap();

    let output = cli.run(&["run", "--backend", "scripted", "--script", "nope.json", "x"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("cannot read script") && stderr(&output).contains("nope.json"),
        "{}",
        stderr(&output)
    );

    let output = cli.run(&["run", "--backend", "scripted", "x"]);
    assert!(stderr(&output).contains("the scripted backend needs a script"), "{}", stderr(&output));

    let output = cli.run(&["run", "--workspace", "/definitely/not/here", "--backend", "scripted", "x"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("/definitely/not/here"), "{}", stderr(&output));
}

#[test]
fn the_openai_backend_says_which_address_it_needs_and_which_it_cannot_reach() {
    let cli = Cli::new();
    let output = cli.run(&["run", "--backend", "openai", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("--base-url"), "{err}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let url = format!("http://{closed}/v1");
    let output = cli.run(&["run", "--backend", "openai", "--base-url", &url, "hi"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains(&url) && err.contains("cannot connect"), "{err}");
}

#[test]
fn exit_status_follows_the_stop_reason() {
    let cli = Cli::new();
    let script = cli.script(serde_json::json!([]));
    let output = cli.run_script(&script, &["hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("script exhausted after 0 completions"), "{}", stderr(&output));

    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let script = cli.script(serde_json::json!([read, read]));
    let output = cli.run_script(&script, &["--max-iterations", "2", "--json-events", "loop"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(events(&output).last().unwrap()["stopReason"], "max_iterations");
}

fn session_file(cli: &Cli, id: &str) -> PathBuf {
    cli.path(&format!(".tack/sessions/{id}.jsonl"))
}

fn session_id(output: &Output) -> String {
    let err = stderr(output);
    let line = err.lines().find(|l| l.starts_with("tack: session ")).unwrap_or_else(|| panic!("{err}"));
    line["tack: session ".len()..].split(' ').next().unwrap().to_string()
}

#[test]
fn sessions_are_listed_resumed_and_survive_a_torn_line() {
    let cli = Cli::new();
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let script = cli.script(serde_json::json!([read, "It greets."]));
    let first = cli.run_script(&script, &["what does greet.py do?"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let id = session_id(&first);
    let lines = std::fs::read_to_string(session_file(&cli, &id)).unwrap();
    assert_eq!(lines.lines().count(), 6, "header + prompt + call + result + answer + stop:\n{lines}");

    let listed = cli.run(&["sessions"]);
    let listing = stdout(&listed);
    assert!(listing.contains(&id) && listing.contains("what does greet.py do?"), "{listing}");
    let json: Value = serde_json::from_str(&stdout(&cli.run(&["sessions", "--json"]))).unwrap();
    assert_eq!(json[0]["sessionId"], id.as_str());
    assert_eq!(json[0]["messageCount"], 4);

    // A crash mid-write leaves half a line.
    let mut file = std::fs::OpenOptions::new().append(true).open(session_file(&cli, &id)).unwrap();
    file.write_all(br#"{"at":"2026-11-22T00:00:00Z","message":{"role":"assis"#).unwrap();
    drop(file);

    let script = cli.script(serde_json::json!(["You asked what greet.py does."]));
    let resumed = cli.run_script(&script, &["--resume", &id, "--json-events", "and what did I ask?"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(stderr(&resumed).contains("torn last line"), "{}", stderr(&resumed));
    // With the events on stdout, the session to go on with is on stderr.
    assert_eq!(session_id(&resumed), id);
    let events = events(&resumed);
    let usage = events.iter().find(|e| e["kind"] == "usage").unwrap();
    // The model saw the earlier turn: its prompt is far bigger than the new question.
    let fresh = cli.run_script(&cli.script(serde_json::json!(["x"])), &["--json-events", "and what did I ask?"]);
    let fresh_usage = crate::events(&fresh).into_iter().find(|e| e["kind"] == "usage").unwrap();
    assert!(usage["usage"]["promptTokens"].as_u64() > fresh_usage["usage"]["promptTokens"].as_u64());

    let text = std::fs::read_to_string(session_file(&cli, &id)).unwrap();
    assert_eq!(text.lines().count(), 9, "two turns of messages, each with its stop line: {text}");
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("broken line {line}: {e}"));
    }

    let output =
        cli.run(&["run", "--backend", "scripted", "--script", script.to_str().unwrap(), "--resume", "no-such", "x"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no session `no-such`"), "{}", stderr(&output));
}

#[test]
fn the_agent_s_searches_do_not_find_its_own_sessions() {
    let cli = Cli::new();
    let marker = "zebra-quartz-17";
    let first = cli.run_script(&cli.script(serde_json::json!(["Noted."])), &[&format!("remember {marker}")]);
    assert!(first.status.success(), "{}", stderr(&first));
    // The session holds the marker; the project does not.
    let grep = call("Grep", serde_json::json!({"pattern": marker, "glob": "**"}));
    let glob = call("Glob", serde_json::json!({"pattern": "**/*.jsonl"}));
    let script = cli.script(serde_json::json!([grep, glob, "Not found."]));
    let output = cli.run_script(&script, &["--json-events", "find the marker"]);
    let results: Vec<String> = events(&output)
        .iter()
        .filter(|e| e["kind"] == "tool_result")
        .map(|e| e["output"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].starts_with("no matches"), "{results:?}");
    assert!(!results[1].contains("sessions"), "{results:?}");
}

#[cfg(unix)]
#[test]
fn an_interrupt_cancels_the_turn_and_exits_130() {
    cancelled_by("-INT", 130);
}

/// A CI job's timeout or a `kill` ends a turn as Ctrl-C does: cancelled,
/// its session whole.
#[cfg(unix)]
#[test]
fn a_termination_cancels_the_turn_and_exits_143() {
    cancelled_by("-TERM", 143);
}

#[cfg(unix)]
fn cancelled_by(signal: &str, code: i32) {
    let cli = Cli::new();
    let slow = serde_json::json!([{ "text": "thinking out loud ".repeat(200), "chunkDelayMs": 20 }]);
    let script = cli.script(slow);
    let mut child = cli
        .command(&["run", "--backend", "scripted", "--script", script.to_str().unwrap(), "--json-events", "talk"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait until the model is streaming, then press Ctrl-C.
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let is_text = line.contains("\"kind\":\"text\"");
        seen.push(line);
        if is_text {
            break;
        }
    }
    let status = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    seen.extend(lines.map(Result::unwrap));
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(code));
    let last: Value = serde_json::from_str(seen.last().unwrap()).unwrap();
    assert_eq!(last["kind"], "turn_finished");
    assert_eq!(last["stopReason"], "cancelled");
    let sessions = cli.only_session();
    let text = std::fs::read_to_string(sessions).unwrap();
    assert_eq!(text.lines().count(), 4, "header, prompt, partial answer, stop:\n{text}");
    assert!(text.lines().last().unwrap().contains(r#""stop":"cancelled""#), "{text}");
    assert!(text.ends_with('\n'));
}

/// Runs `tack` under a pseudo-terminal (util-linux `script`), typing `keys`.
#[cfg(target_os = "linux")]
fn run_in_terminal(cli: &Cli, args: &[&str], keys: &str) -> (Option<i32>, String) {
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_tack"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &quoted.join(" "), "/dev/null"])
        .current_dir(cli.workspace.path())
        .env("HOME", cli.home.path())
        .env("XDG_CONFIG_HOME", cli.home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs tack under a terminal");
    child.stdin.take().unwrap().write_all(keys.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stdout).replace('\r', ""))
}

#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_approvals_are_asked_and_always_is_remembered() {
    let cli = Cli::new();
    let first = call("Edit", serde_json::json!({"file_path": "greet.py", "old_string": "Helo", "new_string": "Hello"}));
    let second =
        call("Edit", serde_json::json!({"file_path": "greet.py", "old_string": "world", "new_string": "tack"}));
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let script = cli.script(serde_json::json!([read, first, second, "Both edits made."]));
    let (status, screen) =
        run_in_terminal(&cli, &["run", "--backend", "scripted", "--script", script.to_str().unwrap(), "fix"], "a\n");
    assert_eq!(status, Some(0), "{screen}");
    assert_eq!(screen.matches("? Allow Edit(greet.py)? Edit changes the workspace.").count(), 1, "{screen}");
    let text = std::fs::read_to_string(cli.path("greet.py")).unwrap();
    assert!(text.contains("\"Hello, \"") && text.contains("greet(\"tack\")"), "{text}");

    let cli = Cli::new();
    let script = cli.script(serde_json::json!([first, "Not allowed, then."]));
    let (status, screen) =
        run_in_terminal(&cli, &["run", "--backend", "scripted", "--script", script.to_str().unwrap(), "fix"], "n\n");
    assert_eq!(status, Some(0), "{screen}");
    assert!(screen.contains("✗ permission denied: the user denied this call"), "{screen}");
    assert!(std::fs::read_to_string(cli.path("greet.py")).unwrap().contains("Helo"));
}

#[cfg(target_os = "linux")]
#[test]
fn ask_user_asks_on_the_terminal_and_without_one_says_so() {
    let cli = Cli::new();
    let ask = call("AskUser", serde_json::json!({"question": "Which greeting?", "choices": ["Hello", "Hi"]}));
    let free = call("AskUser", serde_json::json!({"question": "Your name?"}));
    let script = cli.script(serde_json::json!([ask, free, "Thanks."]));
    let args = ["run", "--backend", "scripted", "--script", script.to_str().unwrap(), "--stream-events", "greet"];
    let (status, screen) = run_in_terminal(&cli, &args, "2\nAda Lovelace\n");
    assert_eq!(status, Some(0), "{screen}");
    assert!(screen.contains("? Which greeting?\n  1) Hello\n  2) Hi\n"), "{screen}");
    assert!(screen.contains("\"output\":\"The user answered: Hi\""), "{screen}");
    assert!(screen.contains("\"output\":\"The user answered: Ada Lovelace\""), "{screen}");

    let output = cli.run_script(&script, &["--json-events", "greet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result = events(&output).into_iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["isError"], true);
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .starts_with("the user could not be asked: tack run has no terminal to ask on."),
        "{result}"
    );
}

#[test]
fn a_tiny_context_window_compacts_the_prompt_but_the_session_keeps_everything() {
    let cli = Cli::new();
    let reads: Vec<String> = (0..6)
        .map(|i| call("Read", serde_json::json!({"file_path": if i % 2 == 0 { "greet.py" } else { "test_greet.py" }, "offset": 1 + i / 2})))
        .collect();
    let mut script: Vec<Value> = reads.iter().map(|r| Value::String(r.clone())).collect();
    script.push(Value::String("Done reading.".into()));
    let script = cli.script(Value::Array(script));
    let output = cli
        .run_script(&script, &["--permission-mode", "auto_all", "--context-window", "2200", "--json-events", "read"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&output);
    assert!(events.iter().any(|e| e["kind"] == "compaction"), "no compaction");
    assert_eq!(events.last().unwrap()["stopReason"], "end_turn");
    let sessions = cli.only_session();
    let text = std::fs::read_to_string(sessions).unwrap();
    assert_eq!(text.lines().count(), 1 + 1 + 6 * 2 + 1 + 1, "header, prompt, 6 calls and results, answer, stop");
    assert!(!text.contains("[compacted"), "the session file holds the full outputs");
}

#[test]
fn usage_and_cost_add_up_per_turn_and_per_session_and_transient_errors_are_retried() {
    let cli = Cli::new();
    std::fs::create_dir_all(cli.path(".tack")).unwrap();
    std::fs::write(
        cli.path(".tack/config.toml"),
        "retry_delay_ms = 1\n[model.pricing]\ninput_per_million = 2.0\noutput_per_million = 10.0\n",
    )
    .unwrap();
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let script =
        cli.script(serde_json::json!([{"error": "transient", "message": "429 too many requests"}, read, "It greets."]));
    let output = cli.run_script(&script, &["--json-events", "what does greet do?"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&output);
    let retry = events.iter().find(|e| e["kind"] == "retry").unwrap();
    assert_eq!(retry["attempt"], 1);
    assert!(retry["error"].as_str().unwrap().contains("429 too many requests"));
    let generations: Vec<&Value> = events.iter().filter(|e| e["kind"] == "usage").map(|e| &e["usage"]).collect();
    assert_eq!(generations.len(), 2);
    let sum = |key: &str| generations.iter().map(|u| u[key].as_u64().unwrap()).sum::<u64>();
    let total = &events.last().unwrap()["usage"];
    assert_eq!(total["promptTokens"].as_u64().unwrap(), sum("promptTokens"));
    assert_eq!(total["completionTokens"].as_u64().unwrap(), sum("completionTokens"));
    let expected_cost = (sum("promptTokens") as f64 * 2.0 + sum("completionTokens") as f64 * 10.0) / 1e6;
    assert!((total["costUsd"].as_f64().unwrap() - expected_cost).abs() < 1e-12, "{total}");

    let listed: Value = serde_json::from_str(&stdout(&cli.run(&["sessions", "--json"]))).unwrap();
    assert_eq!(listed[0]["usage"]["promptTokens"], total["promptTokens"]);
    assert!((listed[0]["usage"]["costUsd"].as_f64().unwrap() - expected_cost).abs() < 1e-12);
    let table = stdout(&cli.run(&["sessions"]));
    assert!(table.contains("TOKENS") && table.contains("$0.0"), "{table}");
}

#[test]
fn bash_runs_in_the_workspace_without_the_user_s_secrets() {
    let cli = Cli::new();
    let command =
        call("Bash", serde_json::json!({"command": "pwd; echo \"token=[$GITHUB_TOKEN] home=[${HOME:+set}]\""}));
    let script = cli.script(serde_json::json!([command, "done"]));
    let output = cli
        .command(&[
            "run",
            "--backend",
            "scripted",
            "--script",
            script.to_str().unwrap(),
            "--permission-mode",
            "auto_all",
            "--json-events",
            "x",
        ])
        .env("GITHUB_TOKEN", "ghp_secret")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result = events(&output).into_iter().find(|e| e["kind"] == "tool_result").unwrap();
    let text = result["output"].as_str().unwrap();
    let root = cli.workspace.path().canonicalize().unwrap();
    assert_eq!(text, format!("{}\ntoken=[] home=[set]\nexit code 0", root.display()));
}

#[test]
fn skills_from_the_project_the_claude_folder_and_the_user_are_loaded_on_demand() {
    let cli = Cli::new();
    let skill = |dir: PathBuf, name: &str, body: &str| {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), format!("---\nname: {name}\ndescription: {name} steps\n---\n{body}\n"))
            .unwrap();
    };
    skill(cli.path(".tack/skills/release"), "release", "Tag, then push the tag.");
    skill(cli.path(".claude/skills/review"), "review", "Read the diff first.");
    std::fs::write(cli.path(".claude/skills/review/checklist.md"), "- tests pass\n").unwrap();
    skill(cli.home.path().join("tack/skills/style"), "style", "Four spaces.");
    // The project's skill of a name wins over the user's.
    skill(cli.home.path().join("tack/skills/release-user"), "release", "the user's release");
    let calls = [
        call("Skill", serde_json::json!({"name": "release"})),
        call("Skill", serde_json::json!({"name": "review", "file": "checklist.md"})),
        call("Skill", serde_json::json!({"name": "style"})),
        call("Skill", serde_json::json!({"name": "review", "file": "../../../greet.py"})),
        call("Skill", serde_json::json!({"name": "deploy"})),
    ];
    let script = cli.script(serde_json::json!([calls.join("\n"), "done"]));
    let output = cli.run_script(&script, &["--json-events", "prepare the release"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Vec<(bool, String)> = events(&output)
        .iter()
        .filter(|e| e["kind"] == "tool_result")
        .map(|e| (e["isError"].as_bool().unwrap(), e["output"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(results[0], (false, "Skill release: release steps\n\nTag, then push the tag.\n".to_string()));
    assert_eq!(results[1], (false, "- tests pass\n".to_string()));
    assert!(results[2].1.starts_with("Skill style: style steps\n\nFour spaces."), "{:?}", results[2]);
    assert_eq!(results[3], (true, "../../../greet.py is not a path inside the skill's folder".to_string()));
    assert_eq!(results[4], (true, "there is no skill `deploy`; the skills are: release, review, style".to_string()));
}

#[test]
fn every_round_of_the_real_project_pipeline_is_in_the_session() {
    let cli = Cli::new();
    let port = "def parse_port(text):\n    port = int(text)\n    if port < 0:\n        raise ValueError(text)\n    return port\n";
    let filler: String = (0..300).map(|i| format!("def helper_{i}(x):\n    return x * {i}\n\n\n")).collect();
    let utils = format!("{filler}{port}\n\n{filler}");
    std::fs::write(cli.path("utils.py"), &utils).unwrap();
    std::fs::create_dir_all(cli.path(".tack")).unwrap();
    std::fs::write(cli.path(".tack/config.toml"), "[tools]\nprofile = \"whole_files\"\n\n[pipeline]\ncheck = false\n")
        .unwrap();
    let fixed = port.replace("port < 0", "port < 1");
    let broken = "```python\ndef parse_port(text):\n    port = int(text\n```\n";
    // The intent both ways round, two versions.
    let script = cli.script(serde_json::json!(["change", "change", broken, format!("```python\n{fixed}```\n")]));
    let output =
        cli.run_script(&script, &["--permission-mode", "auto_all", "--json-events", "parse_port accepts 0. Fix it."]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(cli.path("utils.py")).unwrap(), utils.replace(port, &fixed));
    let calls: Vec<Value> = events(&output).into_iter().filter(|e| e["kind"] == "tool_call").collect();
    let names: Vec<&str> = calls.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Read", "Edit"]);

    // The session holds each round: the choice read, the refused candidate
    // and why, the verified one with its Edit and result.
    let id = session_id(&output);
    let session = std::fs::read_to_string(session_file(&cli, &id)).unwrap();
    let messages: Vec<Value> =
        session.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()?.get("message").cloned()).collect();
    let text = |m: &Value| m.to_string();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user", "assistant", "user"], "{session}");
    assert!(text(&messages[1]).contains("\"Read\""), "{session}");
    assert!(text(&messages[3]).contains("int(text"), "{session}");
    assert!(text(&messages[4]).contains("The change was refused: with it the file no longer parses"), "{session}");
    assert!(text(&messages[5]).contains("\"Edit\"") && text(&messages[5]).contains("port < 1"), "{session}");

    // Resumed, the conversation is those rounds.
    let json: Value = serde_json::from_str(&stdout(&cli.run(&["sessions", "--json"]))).unwrap();
    assert_eq!(json[0]["messageCount"], 7);
}

#[test]
fn tack_map_prints_the_definitions_a_request_is_about() {
    let cli = Cli::new();
    std::fs::write(
        cli.path("prices.py"),
        "def discount(total):\n    \"\"\"The discount on an order.\"\"\"\n    return 0\n",
    )
    .unwrap();
    let output = cli.run(&["map", "--rank", "`discount()` gives nothing off large orders", "--limit", "3"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let ranked = stdout(&output);
    let first = ranked.lines().next().unwrap_or_default();
    assert!(first.contains("prices.py:1-3  function discount  (named)"), "{ranked}");
    assert!(ranked.lines().count() <= 3, "{ranked}");
    let err = stderr(&output);
    assert!(err.contains(" files, ") && err.contains("definitions") && err.contains("built in"), "{err}");
}
