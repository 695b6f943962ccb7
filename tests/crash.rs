//! Crash safety: `tack run` killed with SIGKILL at random points of a turn
//! that streams text, writes and edits files and runs commands with
//! background children. After every kill: each session file loads, holds
//! the messages of an uninterrupted run in order (calls cut off are marked
//! interrupted), and resumes; no workspace file is half-written; no process
//! the turn started is left running.
//!
//! `TACK_CRASH_POINTS` sets how many kill points are tried (default 12);
//! the figures are printed at the end (`cargo test --test crash -- --nocapture`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod lsp_client;

use serde_json::{Value, json};
use tack::agent::session::{INTERRUPTED, SessionStore};
use tack::protocol::{Block, Message};

fn table(edited: bool) -> String {
    let mut text = String::new();
    for row in 0..400 {
        let label = if edited && row == 1 { "ROW" } else { "row" };
        text.push_str(&format!("{label} {row:04}: the quick brown fox jumps over the lazy dog\n"));
    }
    text
}

const NOTES: &str = "notes written whole or not at all\n";

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

/// The turn every run replays; `marker` names the background processes.
fn script(marker: &str) -> Value {
    let background = |step: &str| format!("bash -c 'sleep 60; : {marker}' & sleep 0.3; echo {step}");
    json!([
        format!("Writing the table.\n{}", call("Write", json!({"file_path": "table.txt", "content": table(false)}))),
        format!("Running the first command.\n{}", call("Bash", json!({"command": background("first")}))),
        {"text": format!("Fixing row one, slowly.\n{}", call("Edit", json!({
            "file_path": "table.txt", "old_string": "row 0001:", "new_string": "ROW 0001:"
        }))), "chunkDelayMs": 1},
        format!("Notes next.\n{}", call("Write", json!({"file_path": "notes.txt", "content": NOTES}))),
        format!("One more command.\n{}", call("Bash", json!({"command": background("second")}))),
        {"text": "Done: the table is written and row one fixed.", "chunkDelayMs": 2},
    ])
}

fn tack(workspace: &Path, config_home: &Path, script: &Path, extra: &[&str], prompt: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tack"));
    command
        .args(["run", "--backend", "scripted", "--script"])
        .arg(script)
        .args(["--permission-mode", "auto_all", "--json-events"])
        .args(extra)
        .arg(prompt)
        .current_dir(workspace)
        .env("XDG_CONFIG_HOME", config_home)
        .env_remove("TACK_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn start(workspace: &Path, config_home: &Path, marker: &str) -> Child {
    let script_path = config_home.join("script.json");
    std::fs::write(&script_path, script(marker).to_string()).unwrap();
    tack(workspace, config_home, &script_path, &[], "Write the table, fix row one, take notes.").spawn().unwrap()
}

fn pgrep(marker: &str) -> bool {
    Command::new("pgrep").args(["-f", marker]).output().is_ok_and(|o| o.status.success())
}

/// Messages as JSON with the run's marker taken out, for comparing runs.
fn plain(messages: &[Message], marker: &str) -> Vec<String> {
    messages.iter().map(|m| serde_json::to_string(m).unwrap().replace(marker, "MARKER")).collect()
}

fn interrupted(message: &Message) -> bool {
    message.blocks.iter().any(|b| matches!(b, Block::ToolResult { output, .. } if output == INTERRUPTED))
}

#[derive(Default, Debug)]
struct Tally {
    /// Kill points that landed while a command ran.
    during_commands: usize,
    sessions: usize,
    unreadable: usize,
    out_of_order: usize,
    shown_unsaved: usize,
    half_written: usize,
    temp_files_left: usize,
    orphans: usize,
    resume_failures: usize,
}

#[test]
fn a_turn_killed_at_random_points_leaves_loadable_sessions_whole_files_and_no_processes() {
    let points: usize = std::env::var("TACK_CRASH_POINTS").ok().and_then(|n| n.parse().ok()).unwrap_or(12);
    let config_home = tempfile::tempdir().unwrap();

    // The uninterrupted run: its duration bounds the kill points, its
    // session is what every killed one must be a prefix of.
    let reference = tempfile::tempdir().unwrap();
    let started = Instant::now();
    // Markers of one length: results summarise commands cut to a length.
    let marker_of = |run: &str| format!("tack-crash-{:07}-{run}", std::process::id());
    let reference_marker = marker_of("refr");
    let output = start(reference.path(), config_home.path(), &reference_marker).wait_with_output().unwrap();
    let duration = started.elapsed();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(reference.path().join("table.txt")).unwrap(), table(true));
    let store = SessionStore::for_workspace(reference.path());
    let sessions = store.list().unwrap();
    assert_eq!(sessions.len(), 1);
    let expected = plain(&store.load(&sessions[0].session_id).unwrap().messages, &reference_marker);
    assert!(expected.len() >= 12, "the reference run holds the whole turn: {}", expected.len());

    let resume_script = config_home.path().join("resume.json");
    std::fs::write(&resume_script, json!(["Picked up where it stopped."]).to_string()).unwrap();
    let mut tally = Tally::default();
    for point in 0..points {
        let workspace = tempfile::tempdir().unwrap();
        let marker = marker_of(&format!("{point:04}"));
        let mut child = start(workspace.path(), config_home.path(), &marker);
        let delay = duration.mul_f64(fastrand::f64() * 1.2);
        std::thread::sleep(delay);
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        let events: Vec<Value> =
            String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();

        // Files: each either absent or whole, in one of the states the turn passes through.
        let table_text = std::fs::read_to_string(workspace.path().join("table.txt")).ok();
        if table_text.is_some() && table_text != Some(table(false)) && table_text != Some(table(true)) {
            tally.half_written += 1;
        }
        let notes = std::fs::read_to_string(workspace.path().join("notes.txt")).ok();
        if notes.is_some() && notes.as_deref() != Some(NOTES) {
            tally.half_written += 1;
        }
        for entry in std::fs::read_dir(workspace.path()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".tack-") {
                tally.temp_files_left += 1;
            } else {
                assert!(["table.txt", "notes.txt", ".tack"].contains(&name.as_str()), "unexpected file {name}");
            }
        }

        // Sessions: loadable, a prefix of the reference, resumable.
        let store = SessionStore::for_workspace(workspace.path());
        for summary in store.list().unwrap_or_default() {
            tally.sessions += 1;
            let Ok(loaded) = store.load(&summary.session_id) else {
                tally.unreadable += 1;
                continue;
            };
            // The first message holds the workspace's path, which differs run to run.
            let kept = loaded.messages.iter().position(interrupted).unwrap_or(loaded.messages.len());
            if kept > 1 && plain(&loaded.messages[1..kept], &marker) != expected[1..kept.min(expected.len())] {
                tally.out_of_order += 1;
            }
            let saved_results: Vec<&str> = loaded
                .messages
                .iter()
                .flat_map(|m| m.blocks.iter())
                .filter_map(|b| match b {
                    Block::ToolResult { tool_use_id, output, .. } if output != INTERRUPTED => {
                        Some(tool_use_id.as_str())
                    }
                    _ => None,
                })
                .collect();
            tally.shown_unsaved += events
                .iter()
                .filter(|e| {
                    e["kind"] == "tool_result" && !saved_results.contains(&e["toolCallId"].as_str().unwrap_or(""))
                })
                .count();
            let resumed =
                tack(workspace.path(), config_home.path(), &resume_script, &["--resume", &summary.session_id], "go on")
                    .output()
                    .unwrap();
            let finished = String::from_utf8_lossy(&resumed.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|e| e["kind"] == "turn_finished" && e["stopReason"] == "end_turn");
            let reloaded = store.load(&summary.session_id).map(|s| s.messages.len()).unwrap_or(0);
            if !resumed.status.success() || !finished || reloaded < loaded.messages.len() + 2 {
                tally.resume_failures += 1;
                eprintln!(
                    "resume failed at point {point}: {} messages before, {reloaded} after; {}\n{}",
                    loaded.messages.len(),
                    String::from_utf8_lossy(&resumed.stdout).lines().last().unwrap_or(""),
                    String::from_utf8_lossy(&resumed.stderr)
                );
            }
        }

        // Processes: the reaper ends what the killed run had started.
        let bash_started = events.iter().filter(|e| e["kind"] == "tool_call" && e["name"] == "Bash").count();
        let bash_ended = events.iter().filter(|e| e["kind"] == "tool_result" && e["name"] == "Bash").count();

        if bash_started > bash_ended {
            tally.during_commands += 1;
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while pgrep(&marker) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if pgrep(&marker) {
            tally.orphans += 1;
            let _ = Command::new("pkill").args(["-KILL", "-f", &marker]).status();
        }
    }
    println!("crash points: {points}, {tally:?} (uninterrupted run: {} ms)", duration.as_millis());
    assert_eq!(tally.unreadable, 0, "{tally:?}");
    assert_eq!(tally.out_of_order, 0, "{tally:?}");
    assert_eq!(tally.half_written, 0, "{tally:?}");
    assert_eq!(tally.orphans, 0, "{tally:?}");
    assert_eq!(tally.resume_failures, 0, "{tally:?}");
}

#[test]
fn a_language_server_killed_mid_command_leaves_no_process_and_a_session_that_resumes() {
    let workspace = tempfile::tempdir().unwrap();
    let marker = format!("tack-crash-lsp-{:07}", std::process::id());
    let script = workspace.path().join("script.json");
    let command = format!("bash -c 'sleep 60; : {marker}' & sleep 60");
    std::fs::write(&script, json!([call("Bash", json!({"command": command})), "done"]).to_string()).unwrap();
    let options = json!({"model": {"backend": "scripted", "script": script}, "permissionMode": "auto_all"});
    let mut client = lsp_client::LspClient::start(workspace.path(), options);
    let conversation = client.new_conversation(None);
    client.turn(&conversation, "Run the command.");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pgrep(&marker) {
        assert!(Instant::now() < deadline, "the command never started\n{}", client.report());
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill").args(["-KILL", &client.pid().to_string()]).status().unwrap();
    assert!(killed.success());
    client.wait_exit();
    let deadline = Instant::now() + Duration::from_secs(3);
    while pgrep(&marker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let orphaned = pgrep(&marker);
    let _ = Command::new("pkill").args(["-KILL", "-f", &marker]).status();
    assert!(!orphaned, "the command outlived the killed server");

    let store = SessionStore::for_workspace(workspace.path());
    let sessions = store.list().unwrap();
    assert_eq!(sessions.len(), 1);
    let loaded = store.load(&sessions[0].session_id).unwrap();
    let last = loaded.messages.last().unwrap();
    assert!(interrupted(last), "the Bash call reads back as interrupted: {last:?}");
}
