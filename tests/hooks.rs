//! Command hooks as users configure them: real `sh` scripts that read the
//! event on stdin, block, rewrite, add context, fail, hang and get killed.

mod common;

use std::time::Duration;

use common::Scenario;
use tack::model::scripted::ScriptEntry;
use tack::protocol::{Event, HookOutcome, PermissionMode, StopReason};
use tokio_util::sync::CancellationToken;

fn call(tool: &str, input: serde_json::Value) -> String {
    serde_json::json!({ "tool": tool, "input": input }).to_string()
}

/// (event, outcome, message) of each hook that ran.
fn hook_runs(events: &[tack::protocol::SequencedEvent]) -> Vec<(String, HookOutcome, String)> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Hook { event, outcome, message, .. } => Some((event.clone(), *outcome, message.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_pre_tool_hook_that_exits_2_blocks_the_call_with_its_reason() {
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .command_hooks(
            r#"
            [[hooks.PreToolUse]]
            matcher = "Edit|Write"
            command = 'cat > "$TACK_PROJECT_DIR/seen.json"; echo "a.txt is frozen" >&2; exit 2'
            "#,
        )
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "a.txt"})),
                &call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"})),
                "I may not change it.",
            ],
            "change a.txt",
        )
        .await;
    assert_eq!(run.read("a.txt"), "one\n", "the blocked edit changed nothing");
    assert_eq!(run.result_output(1), "blocked by a hook: a.txt is frozen");
    assert_eq!(hook_runs(&run.events), [("PreToolUse".into(), HookOutcome::Blocked, "a.txt is frozen".into())]);
    let seen: serde_json::Value = serde_json::from_str(&run.read("seen.json")).unwrap();
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "Edit");
    assert_eq!(seen["tool_input"]["new_string"], "two");
    assert_eq!(seen["permission_mode"], "auto_all");
    assert_eq!(seen["cwd"], run.dir.path().canonicalize().unwrap().display().to_string());
    // A refusal by a hook is respected, not pushed against.
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.backend.used(), 3);
}

#[tokio::test]
async fn a_pre_tool_hook_rewrites_the_input_and_the_next_hook_sees_the_rewrite() {
    let rewrite =
        r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "echo rewritten"}}}"#;
    let run = Scenario::new()
        .command_hooks(&format!(
            r#"
            [[hooks.PreToolUse]]
            matcher = "Bash"
            command = '''echo '{rewrite}' '''
            [[hooks.PreToolUse]]
            matcher = "Bash"
            command = 'cat > "$TACK_PROJECT_DIR/second.json"'
            "#
        ))
        .run(&[&call("Bash", serde_json::json!({"command": "echo original"})), "done"], "run it")
        .await;
    assert!(run.result_output(0).starts_with("rewritten\n"), "{}", run.result_output(0));
    let second: serde_json::Value = serde_json::from_str(&run.read("second.json")).unwrap();
    assert_eq!(second["tool_input"]["command"], "echo rewritten");
}

#[tokio::test]
async fn a_hook_allow_skips_the_question_and_ask_forces_one() {
    let allow = r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#;
    let run = Scenario::new()
        .mode(PermissionMode::Ask)
        .command_hooks(&format!("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = '''echo '{allow}' '''\n"))
        .run(&[&call("Bash", serde_json::json!({"command": "echo hi"})), "done"], "greet")
        .await;
    assert!(run.asked.is_empty(), "the hook allowed it");
    assert!(run.render().contains("permission_decision call_1 Allow (hook)"), "{}", run.render());

    let ask = r#"{"hookSpecificOutput": {"permissionDecision": "ask"}}"#;
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .answers(&[tack::protocol::ApprovalDecision::Allow])
        .command_hooks(&format!("[[hooks.PreToolUse]]\ncommand = '''echo '{ask}' '''\n"))
        .run(&[&call("Read", serde_json::json!({"file_path": "a.txt"})), "done"], "read")
        .await;
    assert_eq!(run.asked.len(), 1, "auto_all would not have asked");
    assert_eq!(run.asked[0].reason, "a PreToolUse hook asks for approval");
}

#[tokio::test]
async fn failing_and_hanging_hooks_are_reported_and_never_block_or_outlive_their_timeout() {
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .command_hooks(
            r#"
            [[hooks.PreToolUse]]
            command = "echo broken >&2; exit 1"
            [[hooks.PreToolUse]]
            command = 'sleep 60 & echo $! > "$TACK_PROJECT_DIR/child.pid"; wait'
            timeout_ms = 300
            [[hooks.PostToolUse]]
            matcher = "Read"
            command = "echo 'keep the file short' >&2; exit 2"
            "#,
        )
        .run(&[&call("Read", serde_json::json!({"file_path": "a.txt"})), "done"], "read")
        .await;
    let runs = hook_runs(&run.events);
    assert_eq!(runs[0], ("PreToolUse".into(), HookOutcome::Error, "exited with 1: broken".into()));
    assert_eq!(runs[1], ("PreToolUse".into(), HookOutcome::TimedOut, "timed out after 300 ms; it was killed".into()));
    assert_eq!(runs[2].1, HookOutcome::Blocked);
    let output = run.result_output(0);
    assert!(output.starts_with("     1\tone\n"), "the call ran: {output}");
    assert!(output.ends_with("[from a PostToolUse hook] keep the file short"), "{output}");
    let pid = run.read("child.pid").trim().to_string();
    assert!(wait_until_gone(&pid).await, "the hook's background child {pid} outlived the timeout");
}

/// Whether process `pid` is gone (or a zombie) within a few seconds.
async fn wait_until_gone(pid: &str) -> bool {
    for _ in 0..50 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) => return true,
            Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    false
}

#[tokio::test]
async fn prompt_hooks_add_context_or_block_the_prompt() {
    let run = Scenario::new()
        .command_hooks(
            r#"
            [[hooks.SessionStart]]
            command = "echo 'The build is red on main.'"
            [[hooks.UserPromptSubmit]]
            command = 'grep -q "deploy" && { echo "no deploys from the agent" >&2; exit 2; }; echo "Ticket: TACK-12"'
            "#,
        )
        .run(&["ok"], "fix the flaky test")
        .await;
    let task = run.backend.last_request().unwrap().messages[0].text();
    assert!(task.contains("[context from a SessionStart hook]\nThe build is red on main."), "{task}");
    assert!(task.contains("[context from a UserPromptSubmit hook]\nTicket: TACK-12"), "{task}");

    let run = Scenario::new()
        .command_hooks(
            r#"
            [[hooks.UserPromptSubmit]]
            command = 'grep -q "deploy" && { echo "no deploys from the agent" >&2; exit 2; }; true'
            "#,
        )
        .run(&["ok"], "deploy to production")
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::Error);
    assert_eq!(run.backend.used(), 0, "a blocked prompt never reaches the model");
    assert_eq!(run.history_len, 0, "nor the history");
    assert!(
        run.render().contains("error the prompt was blocked by a hook: no deploys from the agent"),
        "{}",
        run.render()
    );
}

#[tokio::test]
async fn a_stop_hook_sends_the_model_back_once_it_knows_it_already_did() {
    let run = Scenario::new()
        .command_hooks(
            r#"
            [[hooks.Stop]]
            command = 'grep -q "\"stop_hook_active\":true" && exit 0; echo "run the tests before you stop" >&2; exit 2'
            "#,
        )
        .run(&["Done.", "Tests pass. Done."], "fix it")
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Tests pass. Done.");
    let request = run.backend.last_request().unwrap();
    let sent_back = request.messages.last().unwrap().text();
    assert_eq!(sent_back, "[tack] The task is not done: run the tests before you stop");
}

#[tokio::test]
async fn a_turn_ended_on_changes_already_made_asks_the_stop_hook_too() {
    let write = call("Write", serde_json::json!({"file_path": "a.txt", "content": "one\n"}));
    let run = Scenario::new()
        .command_hooks(
            r#"
            [[hooks.Stop]]
            command = 'grep -q "\"stop_hook_active\":true" && exit 0; echo "write the notes too" >&2; exit 2'
            "#,
        )
        .run(
            &[
                &write,
                &write,
                &write,
                &call("Write", serde_json::json!({"file_path": "notes.txt", "content": "a\n"})),
                "Done.",
            ],
            "write a.txt and the notes",
        )
        .await;
    assert_eq!(run.read("notes.txt"), "a\n", "the hook sent the model back to work");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Done.");
    let stops: Vec<_> = hook_runs(&run.events).into_iter().filter(|(event, ..)| event == "Stop").collect();
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0].1, HookOutcome::Blocked);
}

#[tokio::test]
async fn a_stop_hook_hands_a_whole_file_model_its_files_again_with_the_reason() {
    // A project whose check runs after every answer, as its tests would.
    let check = r#"
        [[hooks.Stop]]
        command = 'grep -q "Hello, " greet.py || { echo "expected.txt: greet(\"Ann\") returned \"Hi Ann\", not \"Hello, Ann\"" >&2; exit 2; }'
        "#;
    let wrong = "greet.py\n```python\ndef greet(name):\n    return \"Hi \" + name\n```\n";
    let right = "greet.py\n```python\ndef greet(name):\n    return \"Hello, \" + name\n```\n";
    let run = Scenario::new()
        .file("greet.py", "def greet(name):\n    return \"Helo \" + name\n")
        .file("expected.txt", "Hello, Ann\n")
        .tool_settings(tack::config::ToolSettings {
            profile: tack::config::ToolProfile::WholeFiles,
            ..Default::default()
        })
        .command_hooks(check)
        .run(&["change", "change", wrong, right], "Fix the greeting in greet.py.")
        .await;
    assert_eq!(run.read("greet.py"), "def greet(name):\n    return \"Hello, \" + name\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    let stops: Vec<_> = hook_runs(&run.events).into_iter().filter(|(event, ..)| event == "Stop").collect();
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0].1, HookOutcome::Blocked);
    // The file the check names is handed over too, after the first round.
    let attached: Vec<Vec<String>> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::FilesAttached { paths } => Some(paths.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(attached, [vec!["greet.py"], vec!["greet.py", "expected.txt"]]);
    // Asked again with the file as the first change left it, the file the
    // check names, the prompt, and what the check said.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.starts_with("greet.py\n```\ndef greet(name):\n    return \"Hi \" + name\n```"), "{sent}");
    assert!(sent.contains("expected.txt\n```\nHello, Ann\n```"), "{sent}");
    let reason = "The change is not done: expected.txt: greet(\"Ann\") returned \"Hi Ann\", not \"Hello, Ann\"";
    assert!(sent.contains("Fix the greeting in greet.py.") && sent.contains(reason), "{sent}");
}

#[tokio::test]
async fn a_stop_hook_sends_the_pipeline_round_again_with_the_definition_as_it_now_reads() {
    let filler: String = (0..120).map(|i| format!("def helper_{i}(x):\n    return x * {i}\n\n\n")).collect();
    let port = "def parse_port(text):\n    port = int(text)\n    if port < 0:\n        raise ValueError(text)\n    return port\n";
    let utils = format!("{filler}{port}\n\n{filler}");
    let halfway = port.replace("port < 0", "port <= 0 and False");
    let fixed = port.replace("port < 0", "port < 1");
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(tack::config::ToolSettings {
            profile: tack::config::ToolProfile::WholeFiles,
            ..Default::default()
        })
        .pipeline(tack::config::PipelineSettings { check: false, ..Default::default() })
        .command_hooks(
            r#"
            [[hooks.Stop]]
            command = 'grep -q "port < 1" utils.py || { echo "parse_port(\"0\") returned 0" >&2; exit 2; }'
            "#,
        )
        .run(
            &["change", "change", &format!("```python\n{halfway}```\n"), &format!("```python\n{fixed}```\n")],
            "parse_port in utils.py accepts 0. Fix it.",
        )
        .await;
    assert_eq!(run.read("utils.py"), utils.replace(port, &fixed));
    // The second round shows the definition as the first left it, with the
    // hook's reason in the request.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    let part = format!("utils.py (lines 481 to 485 of 967)\n```python\n{halfway}```");
    assert!(sent.contains(&part), "{sent}");
    assert!(sent.contains("a check still fails: parse_port(\"0\") returned 0"), "{sent}");
}

#[tokio::test]
async fn cancelling_the_turn_kills_a_running_hook_and_its_children() {
    let scenario = Scenario::new().command_hooks(
        r#"
        [[hooks.PreToolUse]]
        command = 'sleep 60 & echo $! > "$TACK_PROJECT_DIR/child.pid"; wait'
        "#,
    );
    let root = scenario.root().to_path_buf();
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        while !root.join("child.pid").exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        canceller.cancel();
    });
    let script = vec![ScriptEntry::Text(call("Bash", serde_json::json!({"command": "echo never"})))];
    let run = tokio::time::timeout(Duration::from_secs(30), scenario.run_entries(script, "run", cancel))
        .await
        .expect("the cancelled turn ended");
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(hook_runs(&run.events)[0].1, HookOutcome::Cancelled);
    let pid = run.read("child.pid").trim().to_string();
    assert!(wait_until_gone(&pid).await, "the hook's child {pid} outlived the cancel");
    assert!(!run.render().contains("never\n"), "the blocked call did not run");
}
