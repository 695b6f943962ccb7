//! `tack lsp` as an editor drives it: the real binary on stdio, a real LSP
//! client (tests/lsp_client), the scripted model, a temp workspace per test.

mod lsp_client;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use lsp_client::{EditPolicy, LspClient, is_main, range, uri_to_path};
use serde_json::{Value, json};

/// A temp workspace and, beside it, a folder for scripts.
struct Ws {
    dir: tempfile::TempDir,
    aux: tempfile::TempDir,
}

impl Ws {
    fn new() -> Ws {
        Ws { dir: tempfile::tempdir().unwrap(), aux: tempfile::tempdir().unwrap() }
    }

    fn file(&self, rel: &str, contents: &str) -> &Ws {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }

    fn script(&self, script: Value) -> PathBuf {
        let path = self.aux.path().join(format!("script-{}.json", fastrand::u32(..)));
        std::fs::write(&path, script.to_string()).unwrap();
        path
    }

    /// `tack lsp` with the scripted model replaying `script` and `mode` as the
    /// default permission mode.
    fn start(&self, script: Value, mode: &str) -> LspClient {
        let script = self.script(script);
        LspClient::start(
            self.dir.path(),
            json!({"model": {"backend": "scripted", "script": script}, "permissionMode": mode}),
        )
    }
}

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["kind"].as_str().unwrap_or("?")).collect()
}

fn tool_results(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| e["kind"] == "tool_result").cloned().collect()
}

fn output(result: &Value) -> &str {
    result["output"].as_str().unwrap_or_else(|| panic!("no output in {result}"))
}

/// `seq` runs 1, 2, 3, ... over the conversation's events, in arrival order.
fn assert_gapless(client: &LspClient, events: &[Value]) {
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>(), "seq must be gapless from 1\n{}", client.report());
}

// ------------------------------------------------------------- the client itself

#[test]
fn the_client_counts_utf16_positions_and_applies_edits_last_first() {
    let text = "a🎉b\nsecond\n";
    // The emoji is two UTF-16 code units and four bytes.
    assert_eq!(lsp_client::offset_at(text, 0, 1), 1);
    assert_eq!(lsp_client::offset_at(text, 0, 3), 5);
    assert_eq!(lsp_client::offset_at(text, 0, 99), 6, "past the line's end: the line's end");
    assert_eq!(lsp_client::offset_at(text, 1, 2), 9);
    assert_eq!(lsp_client::offset_at(text, 7, 0), text.len(), "past the last line: the end");
    assert_eq!(lsp_client::position_at(text, 5), json!({"line": 0, "character": 3}));
    assert_eq!(lsp_client::range_of(text, "sec"), range(1, 0, 1, 3));
    let first = json!({"range": range(0, 3, 0, 4), "newText": "B"});
    let second = json!({"range": range(1, 0, 1, 6), "newText": "2nd\nline"});
    let (out, changes) = lsp_client::apply_text_edits(text, &[&first, &second]).unwrap();
    assert_eq!(out, "a🎉B\n2nd\nline\n");
    assert_eq!(changes[0]["range"], range(1, 0, 1, 6), "the later edit goes first");
    let overlapping = json!({"range": range(0, 0, 0, 4), "newText": ""});
    assert!(lsp_client::apply_text_edits(text, &[&first, &overlapping]).is_err());
    let path = std::path::Path::new("/tmp/a b/ü.rs");
    assert_eq!(lsp_client::file_uri(path), "file:///tmp/a%20b/%C3%BC.rs");
    assert_eq!(uri_to_path(&lsp_client::file_uri(path)).unwrap(), path);
}

// ------------------------------------------------------------- documents and edits

#[test]
fn tools_read_the_unsaved_buffer_and_a_partial_hunk_application_is_reported_to_the_model() {
    let ws = Ws::new();
    let disk = "one\ntwo 🎉 three\nfour\nfive\nsix\nseven\neight\nnine\n";
    ws.file("notes.txt", disk);
    let read = format!("Let me read it.\n{}", call("Read", json!({"file_path": "notes.txt"})));
    let edit = call(
        "MultiEdit",
        json!({"file_path": "notes.txt", "edits": [
            {"old_string": "one\n", "new_string": "ONE\n"},
            {"old_string": "nine\n", "new_string": "NINE\n"}
        ]}),
    );
    let client = ws.start(json!([read, edit, "Done."]), "auto_read");
    client.set_edit_policy(EditPolicy::only(&[0]));

    // Unsaved typing, after an emoji: positions are UTF-16 code units.
    client.open("notes.txt", disk);
    client.change("notes.txt", range(1, 6, 1, 12), " unsaved");
    let unsaved = "one\ntwo 🎉 unsaved\nfour\nfive\nsix\nseven\neight\nnine\n";
    assert_eq!(client.text("notes.txt"), unsaved);
    assert_eq!(client.version("notes.txt"), 2);

    let conversation = client.new_conversation(None);
    client.turn(&conversation, "uppercase the first and last lines of notes.txt");
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());
    assert_eq!(finished["text"], "Done.");

    let events = client.events(&conversation);
    assert_gapless(&client, &events);
    let results = tool_results(&events);
    assert_eq!(results.len(), 2, "{}", client.report());
    assert_eq!(results[0]["name"], "Read");
    assert!(output(&results[0]).contains("two 🎉 unsaved"), "Read must see the buffer: {}", results[0]);
    assert!(!output(&results[0]).contains("three"), "Read must not see the disk: {}", results[0]);

    // One applyEdit: one TextDocumentEdit, one annotated edit per hunk, each needing confirmation.
    let edits = client.apply_edits();
    assert_eq!(edits.len(), 1, "{}", client.report());
    let edit = &edits[0]["edit"];
    let changes = edit["documentChanges"].as_array().unwrap_or_else(|| panic!("no documentChanges: {edit}"));
    assert_eq!(changes.len(), 1, "{edit}");
    let document = &changes[0];
    assert_eq!(uri_to_path(document["textDocument"]["uri"].as_str().unwrap()).unwrap(), client.path("notes.txt"));
    assert_eq!(document["textDocument"]["version"], 2, "the version the change was computed from");
    let hunks = document["edits"].as_array().unwrap();
    assert_eq!(hunks.len(), 2, "{edit}");
    assert_eq!(hunks[0]["newText"], "ONE\n");
    assert_eq!(hunks[1]["newText"], "NINE\n");
    for hunk in hunks {
        let id = hunk["annotationId"].as_str().unwrap_or_else(|| panic!("hunk without annotationId: {hunk}"));
        assert_eq!(edit["changeAnnotations"][id]["needsConfirmation"], true, "{edit}");
    }

    // Only the first hunk landed, in the editor's buffer; the disk is untouched.
    assert_eq!(client.text("notes.txt"), "ONE\ntwo 🎉 unsaved\nfour\nfive\nsix\nseven\neight\nnine\n");
    assert_eq!(client.version("notes.txt"), 3);
    assert_eq!(ws.read("notes.txt"), disk);
    assert_eq!(results[1]["name"], "MultiEdit");
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    assert!(
        output(&results[1]).contains(
            "the user applied only some hunks of the change to notes.txt: hunks 1 of 2 landed, the others did not"
        ),
        "{}",
        results[1]
    );
}

#[test]
fn a_rejected_edit_is_an_error_result_and_a_new_file_comes_as_create_then_edit() {
    let ws = Ws::new();
    ws.file("a.txt", "alpha\n");
    let read = call("Read", json!({"file_path": "a.txt"}));
    let edit = call("Edit", json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}));
    let write = call("Write", json!({"file_path": "sub/new.txt", "content": "fresh\n"}));
    let client = ws.start(json!([read, edit, write, "Tried."]), "auto_read");
    client.queue_edit_policies(&[EditPolicy::Reject("the user said no".into()), EditPolicy::ApplyAll]);
    let conversation = client.new_conversation(None);
    client.turn(&conversation, "edit a.txt");
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());

    let results = tool_results(&client.events(&conversation));
    assert_eq!(results[0]["name"], "Read");
    let results = &results[1..];
    assert_eq!(results[0]["name"], "Edit");
    assert_eq!(results[0]["isError"], true, "{}", results[0]);
    assert!(output(&results[0]).contains("rejected"), "{}", results[0]);
    assert_eq!(ws.read("a.txt"), "alpha\n");

    let edits = client.apply_edits();
    assert_eq!(edits.len(), 2, "{}", client.report());
    let changes = edits[1]["edit"]["documentChanges"].as_array().unwrap();
    assert_eq!(changes[0]["kind"], "create", "{}", edits[1]);
    assert!(changes[1]["edits"].is_array(), "{}", edits[1]);
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    // Not open in the client: the client wrote it on disk.
    assert_eq!(ws.read("sub/new.txt"), "fresh\n");
}

// ------------------------------------------------------------------- approvals

#[test]
fn bash_is_asked_in_auto_read_denied_then_always_allowed_and_remembered() {
    let ws = Ws::new();
    let hi = call("Bash", json!({"command": "echo hi"}));
    let again = call("Bash", json!({"command": "echo again"}));
    let client = ws.start(json!([hi, hi, again, "All done."]), "auto_read");
    client.approve_with(&["deny", "allowAlways"]);
    let conversation = client.new_conversation(None);
    let turn = client.turn(&conversation, "say hi");
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());
    assert_eq!(finished["text"], "All done.");

    let approvals = client.approvals();
    assert_eq!(approvals.len(), 2, "echo again must not be asked: {approvals:#?}");
    for approval in &approvals {
        assert_eq!(approval["conversationId"], conversation.as_str());
        assert_eq!(approval["turnId"], turn.as_str());
        assert_eq!(approval["agentPath"], json!([]));
        assert_eq!(approval["toolCall"]["name"], "Bash");
        assert_eq!(approval["toolCall"]["input"]["command"], "echo hi");
        assert!(approval["toolCall"]["id"].is_string() && approval["reason"].is_string(), "{approval}");
    }

    let events = client.events(&conversation);
    assert_gapless(&client, &events);
    let results = tool_results(&events);
    assert_eq!(results.len(), 3, "{}", client.report());
    assert_eq!(results[0]["isError"], true);
    assert!(output(&results[0]).contains("permission denied"), "{}", results[0]);
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    assert!(output(&results[1]).contains("hi"), "{}", results[1]);
    assert_eq!(results[2]["isError"], false, "{}", results[2]);
    assert!(output(&results[2]).contains("again"), "{}", results[2]);
    let decisions: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["kind"] == "permission_decision")
        .map(|e| (e["decision"].as_str().unwrap(), e["source"].as_str().unwrap()))
        .collect();
    assert_eq!(decisions, [("deny", "user"), ("allowAlways", "user"), ("allow", "remembered")]);
}

#[test]
fn ask_user_questions_go_to_the_editor_and_the_answer_is_the_result() {
    let ws = Ws::new();
    let pick = call("AskUser", json!({"question": "Which greeting?", "choices": ["Hello", "Hi"]}));
    let free = call("AskUser", json!({"question": "Anything else?"}));
    let client = ws.start(json!([pick, free, "Noted."]), "auto_read");
    client.answer_with(&[Some("Hi"), None]);
    let conversation = client.new_conversation(None);
    let turn = client.turn(&conversation, "greet");
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());

    let asked: Vec<Value> = client
        .server_requests()
        .into_iter()
        .filter(|r| r["method"] == "tack/askUser")
        .map(|r| r["params"].clone())
        .collect();
    assert_eq!(asked.len(), 2, "{}", client.report());
    assert_eq!(asked[0]["question"], "Which greeting?");
    assert_eq!(asked[0]["choices"], json!(["Hello", "Hi"]));
    assert_eq!(
        (asked[0]["conversationId"].as_str(), asked[0]["turnId"].as_str()),
        (Some(conversation.as_str()), Some(turn.as_str()))
    );
    assert_eq!(asked[1]["choices"], json!([]));
    let results = tool_results(&client.events(&conversation));
    assert_eq!(output(&results[0]), "The user answered: Hi");
    assert_eq!(results[1]["isError"], true);
    assert!(
        output(&results[1]).starts_with("the user could not be asked: the user dismissed the question."),
        "{}",
        results[1]
    );
}

// --------------------------------------------------------------------- cancel

#[test]
fn cancel_stops_a_streaming_turn_and_the_conversation_takes_the_next_one() {
    let ws = Ws::new();
    let slow = json!({"text": "word ".repeat(400), "chunkDelayMs": 50});
    let client = ws.start(json!([slow, "Second answer."]), "auto_read");
    let conversation = client.new_conversation(None);
    let first = client.turn(&conversation, "talk for a long time");
    client.wait_event(&conversation, |e| e["kind"] == "text");

    // One turn at a time.
    let refused = client.request("tack/turn", json!({"conversationId": conversation, "prompt": "again"}));
    assert!(refused.is_err(), "a second turn while one runs must be refused: {refused:?}");

    let asked = Instant::now();
    client.cancel(&conversation);
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "cancelled", "{}", client.report());
    assert_eq!(finished["turnId"], first.as_str());
    assert!(asked.elapsed() < Duration::from_secs(5), "cancel took {:?}", asked.elapsed());

    let second = client.turn(&conversation, "now answer briefly");
    assert_ne!(second, first);
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());
    assert_eq!(finished["text"], "Second answer.");
    assert_eq!(finished["turnId"], second.as_str());
    let events = client.events(&conversation);
    assert_gapless(&client, &events);
    assert_eq!(kinds(&events).iter().filter(|k| **k == "turn_started").count(), 2);
}

#[test]
fn two_conversations_run_at_once_and_cancelling_one_leaves_the_other() {
    let ws = Ws::new();
    // Either conversation may take either generation: they are the same.
    let paced = json!({"text": "tick ".repeat(100), "chunkDelayMs": 20});
    let client = ws.start(json!([paced, paced]), "auto_read");
    let a = client.new_conversation(None);
    let b = client.new_conversation(None);
    assert_ne!(a, b);
    client.turn(&a, "count");
    client.turn(&b, "count too");
    client.wait_event(&a, |e| e["kind"] == "text");
    client.wait_event(&b, |e| e["kind"] == "text");
    client.cancel(&a);

    let finished_a = client.wait_turn_finished(&a);
    let finished_b = client.wait_turn_finished(&b);
    assert_eq!(finished_a["stopReason"], "cancelled", "{}", client.report());
    assert_eq!(finished_b["stopReason"], "end_turn", "{}", client.report());
    assert_eq!(finished_b["text"].as_str().unwrap().trim(), "tick ".repeat(100).trim());

    // Both streamed before either finished: they ran at the same time.
    let all = client.all_events();
    let first_text = |id: &str| all.iter().position(|e| e["conversationId"] == id && e["kind"] == "text").unwrap();
    let first_end = all.iter().position(|e| e["kind"] == "turn_finished").unwrap();
    assert!(first_text(&a) < first_end && first_text(&b) < first_end, "{}", client.report());
    assert_gapless(&client, &client.events(&a));
    assert_gapless(&client, &client.events(&b));
}

// -------------------------------------------------------------------- sessions

#[test]
fn a_session_is_listed_resumed_and_continued_with_its_history() {
    let ws = Ws::new();
    let client = ws.start(json!(["Noted: the word is pineapple.", "You told me pineapple."]), "auto_read");
    let first = client.new_conversation(None);
    client.turn(&first, "Remember the word pineapple.");
    let finished = client.wait_turn_finished(&first);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());

    let sessions = client.request_ok("tack/sessions", json!({}));
    let listed = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"].as_str().is_some_and(|t| t.contains("Remember the word pineapple")))
        .unwrap_or_else(|| panic!("the session is not listed: {sessions}"))
        .clone();
    let session_id = listed["sessionId"].as_str().unwrap().to_string();
    let count = listed["messageCount"].as_u64().unwrap();
    assert!(count >= 2, "{listed}");
    assert!(listed["updatedAt"].is_string(), "{listed}");

    let resumed = client.request_ok("tack/resume", json!({ "sessionId": session_id }));
    let second = resumed["conversationId"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    let messages = resumed["messages"].as_array().unwrap();
    assert_eq!(messages.len() as u64, count, "{resumed}");
    assert_eq!(messages[0]["role"], "user");
    assert!(messages[0].to_string().contains("Remember the word pineapple."), "{resumed}");
    assert_eq!(messages[1]["role"], "assistant");

    client.turn(&second, "What was the word?");
    let finished_again = client.wait_turn_finished(&second);
    assert_eq!(finished_again["stopReason"], "end_turn", "{}", client.report());
    assert_eq!(finished_again["text"], "You told me pineapple.");
    // The model was shown the earlier turn: a bigger prompt than the first turn's.
    let prompt_tokens = |f: &Value| f["usage"]["promptTokens"].as_u64().unwrap();
    assert!(prompt_tokens(&finished_again) > prompt_tokens(&finished), "{finished} vs {finished_again}");
    // And the new messages went to the same session file.
    let sessions = client.request_ok("tack/sessions", json!({}));
    let after = sessions.as_array().unwrap().iter().find(|s| s["sessionId"] == session_id.as_str()).unwrap();
    assert_eq!(after["messageCount"].as_u64().unwrap(), count + 2, "{sessions}");
    let unknown = client.request("tack/resume", json!({"sessionId": "no-such-session"}));
    assert_eq!(unknown.unwrap_err()["code"], -32602);
}

// ---------------------------------------------------------------- code actions

#[test]
fn code_actions_are_offered_and_run_as_a_sub_agent() {
    let ws = Ws::new();
    let greet = "def greet(name):\n    return \"Hello, \" + name + \"!\"\n\nprint(greet(\"world\"))\n";
    ws.file("greet.py", greet);
    let client = ws
        .start(json!({"code_action_1": ["This function greets."], "code_action_2": ["Nothing to fix."]}), "auto_read");
    client.open("greet.py", greet);
    let conversation = client.new_conversation(None);

    let actions = client.request_ok(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": client.uri("greet.py")}, "range": range(0, 0, 2, 0),
            "context": {"diagnostics": []}}),
    );
    let actions = actions.as_array().unwrap_or_else(|| panic!("not a list: {actions}"));
    let titles: Vec<&str> = actions.iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Ask tack…", "Fix with tack", "Explain with tack", "Write tests with tack"]);
    for action in actions {
        assert_eq!(action["command"]["command"], "tack.codeAction", "{action}");
        assert!(action["command"]["arguments"][0].is_object(), "{action}");
    }

    let explain = &actions[2]["command"];
    let mut argument = explain["arguments"][0].clone();
    argument["conversationId"] = json!(conversation);
    let started =
        client.request_ok("workspace/executeCommand", json!({"command": explain["command"], "arguments": [argument]}));
    assert_eq!(started["conversationId"], conversation.as_str(), "{started}");
    let turn = started["turnId"].as_str().unwrap_or_else(|| panic!("no turnId: {started}")).to_string();
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["turnId"], turn.as_str());
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());
    assert_eq!(finished["text"], "This function greets.");

    let events = client.events(&conversation);
    assert_gapless(&client, &events);
    let at = |matches: &dyn Fn(&Value) -> bool| {
        events.iter().position(matches).unwrap_or_else(|| panic!("missing event\n{}", client.report()))
    };
    let started_at = at(&|e| is_main(e) && e["kind"] == "subagent_started" && e["agentId"] == "code_action_1");
    let sub_at = at(&|e| e["agentPath"] == json!(["code_action_1"]) && e["kind"] == "text");
    let finished_at = at(&|e| is_main(e) && e["kind"] == "subagent_finished" && e["agentId"] == "code_action_1");
    let end_at = at(&|e| is_main(e) && e["kind"] == "turn_finished");
    assert!(started_at < sub_at && sub_at < finished_at && finished_at < end_at, "{}", client.report());
    assert_eq!(events[finished_at]["stopReason"], "end_turn");
    let text: String = events
        .iter()
        .filter(|e| e["agentPath"] == json!(["code_action_1"]) && e["kind"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "This function greets.");

    // Without a conversationId, the action starts a conversation of its own.
    let fix = &actions[1]["command"];
    let started = client
        .request_ok("workspace/executeCommand", json!({"command": fix["command"], "arguments": fix["arguments"]}));
    let other = started["conversationId"].as_str().unwrap().to_string();
    assert_ne!(other, conversation);
    let finished = client.wait_turn_finished(&other);
    assert_eq!(finished["text"], "Nothing to fix.", "{}", client.report());
    assert!(client.events(&other).iter().any(|e| e["agentPath"] == json!(["code_action_2"])));
}

// ------------------------------------------------------------------ robustness

#[test]
fn a_request_before_initialize_is_refused() {
    let ws = Ws::new();
    let client = LspClient::spawn(ws.dir.path());
    let error = client.request("tack/sessions", json!({})).unwrap_err();
    assert_eq!(error["code"], -32002, "ServerNotInitialized: {error}");
}

#[test]
fn unknown_methods_and_malformed_messages_get_errors_and_the_server_goes_on() {
    let ws = Ws::new();
    let mut client = ws.start(json!([]), "auto_read");
    let error = client.request("tack/bogus", json!({})).unwrap_err();
    assert_eq!(error["code"], -32601, "MethodNotFound: {error}");
    let error = client.request("tack/turn", json!({"conversationId": "conversation_99", "prompt": "hi"})).unwrap_err();
    assert_eq!(error["code"], -32602, "InvalidParams for an unknown conversation: {error}");

    // The transport would stop reading after a body it cannot decode; the
    // server drops such a message and says so instead.
    client.send_body(b"{this is not json");
    let report = client.wait_for("a log message about the malformed message", |inbox| {
        inbox.log_messages.iter().find(|m| m["message"].as_str().is_some_and(|t| t.contains("malformed"))).cloned()
    });
    assert_eq!(report["type"], 1, "an error: {report}");
    assert!(report["message"].as_str().unwrap().contains("not JSON"), "{report}");
    assert!(client.is_running(), "a malformed message ended the server\n{}", client.report());
    let sessions = client.request_ok("tack/sessions", json!({}));
    assert!(sessions.is_array(), "{sessions}");
}

/// Pids of processes whose command line holds `pattern`.
fn pgrep(pattern: &str) -> Vec<String> {
    let output = Command::new("pgrep").args(["-f", pattern]).output().expect("pgrep runs");
    String::from_utf8_lossy(&output.stdout).split_whitespace().map(str::to_string).collect()
}

/// Kills what a failed test left running.
struct KillOnDrop(String);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in pgrep(&self.0) {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    }
}

#[cfg(unix)]
#[test]
fn when_the_client_goes_away_turns_are_cancelled_processes_killed_and_the_server_exits_0() {
    let ws = Ws::new();
    // Unique to this run, so that no other process matches.
    let command = format!("sleep 301.7{}", std::process::id());
    let _cleanup = KillOnDrop(command.clone());
    let mut client = ws.start(json!([call("Bash", json!({ "command": command })), "Slept."]), "auto_read");
    let conversation = client.new_conversation(Some("auto_all"));
    client.turn(&conversation, "sleep a while");
    client.wait_event(&conversation, |e| e["kind"] == "tool_call" && e["name"] == "Bash");
    let deadline = Instant::now() + Duration::from_secs(10);
    while pgrep(&command).is_empty() {
        assert!(Instant::now() < deadline, "`{command}` never started\n{}", client.report());
        std::thread::sleep(Duration::from_millis(50));
    }

    client.close_stdin();
    let status = client.wait_exit();
    assert_eq!(status.code(), Some(0), "{}", client.report());
    let deadline = Instant::now() + Duration::from_secs(2);
    while !pgrep(&command).is_empty() {
        assert!(Instant::now() < deadline, "`{command}` outlived the server: {:?}", pgrep(&command));
        std::thread::sleep(Duration::from_millis(50));
    }
    // The turn was cancelled before the server went: its session says so.
    let sessions: Vec<PathBuf> = std::fs::read_dir(ws.dir.path().join(".tack/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let session = std::fs::read_to_string(&sessions[0]).unwrap();
    assert!(session.ends_with('\n'), "{session}");
    for line in session.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("broken session line {line}: {e}"));
    }
    assert!(session.contains("sleep a while") && session.contains("cancelled"), "{session}");
    // A turn_finished may or may not have made it out before stdout closed; if it did, it says cancelled.
    let finished = client.events(&conversation).into_iter().find(|e| e["kind"] == "turn_finished" && is_main(e));
    if let Some(finished) = finished {
        assert_eq!(finished["stopReason"], "cancelled", "{finished}");
    }
}

#[test]
fn shutdown_then_exit_ends_the_server_with_status_0() {
    let ws = Ws::new();
    let mut client = ws.start(json!(["Hello."]), "auto_read");
    let conversation = client.new_conversation(None);
    client.turn(&conversation, "hi");
    assert_eq!(client.wait_turn_finished(&conversation)["stopReason"], "end_turn", "{}", client.report());
    let status = client.shutdown_and_exit();
    assert_eq!(status.code(), Some(0), "{}", client.report());
    let sessions = std::fs::read_dir(ws.dir.path().join(".tack/sessions")).unwrap();
    let saved = sessions.filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|ext| ext == "jsonl"));
    assert_eq!(saved.count(), 1, "the session is on disk");
}

#[test]
fn attachments_put_files_selections_and_diagnostics_before_the_prompt() {
    let ws = Ws::new();
    ws.file("greet.py", "def greet(name):\n    return 'Hello, ' + nme\n");
    ws.file("test_greet.py", "from greet import greet\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada'\n");
    let client = ws.start(json!(["Looking.", "Still looking."]), "ask");
    let conversation = client.new_conversation(None);
    let diagnostic = json!({
        "range": {"start": {"line": 1, "character": 22}, "end": {"line": 1, "character": 25}},
        "severity": 1, "source": "pyright", "message": "\"nme\" is not defined",
    });
    let started = client.request_ok(
        "tack/turn",
        json!({"conversationId": conversation, "prompt": "make the test pass", "attachments": [
            {"uri": client.uri("greet.py")},
            {"uri": client.uri("test_greet.py"), "range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}}},
            {"uri": client.uri("greet.py"), "diagnostics": [diagnostic]},
        ]}),
    );
    let turn = started["turnId"].as_str().unwrap().to_string();
    client.wait_turn_finished_of(&conversation, &turn);
    let events = client.events(&conversation);
    let prompt = events.iter().find(|e| e["kind"] == "turn_started").unwrap()["prompt"].as_str().unwrap().to_string();
    assert!(prompt.starts_with("The user attached @greet.py."), "{prompt}");
    assert!(
        prompt.contains("lines 3-4 of test_greet.py:\n```\ndef test_greet():\n    assert greet('Ada')"),
        "{prompt}"
    );
    assert!(prompt.contains("- line 2: error [pyright]: \"nme\" is not defined"), "{prompt}");
    assert!(prompt.ends_with("make the test pass"), "{prompt}");
    // A selection's file is named too, so a short one comes whole as well.
    let attached = events.iter().find(|e| e["kind"] == "files_attached").expect("the whole file is attached");
    assert_eq!(attached["paths"], json!(["greet.py", "test_greet.py"]));

    let outside = tempfile::tempdir().unwrap();
    let refused = client.request(
        "tack/turn",
        json!({"conversationId": conversation, "prompt": "look", "attachments": [
            {"uri": lsp_client::file_uri(&outside.path().join("secret.txt"))},
        ]}),
    );
    let error = refused.expect_err("an attachment outside the workspace refuses the turn");
    assert!(error["message"].as_str().unwrap().contains("outside the workspace"), "{error}");
}

#[test]
fn a_whole_file_reply_is_made_from_the_unsaved_buffer_and_reaches_the_editor_as_an_edit() {
    let ws = Ws::new();
    let disk = "def add(a, b):\n    return a + b\n";
    ws.file("calc.py", disk);
    // The model is handed the buffer, with the user's unsaved comment, and
    // shows it back with its fix.
    let reply = "calc.py\n```python\ndef add(a, b):\n    # unsaved\n    return a - b\n```\n";
    // First the model's word, in both orders, that the request asks for a change.
    let script = ws.script(json!(["change", "change", reply]));
    let client = LspClient::start(
        ws.dir.path(),
        json!({"model": {"backend": "scripted", "script": script}, "permissionMode": "auto_read",
               "tools": {"profile": "whole_files"}}),
    );
    client.open("calc.py", disk);
    client.change("calc.py", range(0, 14, 0, 14), "\n    # unsaved");
    let conversation = client.new_conversation(None);
    client.turn(&conversation, "add in calc.py should subtract.");
    let finished = client.wait_turn_finished(&conversation);
    assert_eq!(finished["stopReason"], "end_turn", "{}", client.report());

    let events = client.events(&conversation);
    assert_gapless(&client, &events);
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{}", client.report());
    assert_eq!((results[0]["name"].as_str(), results[0]["isError"].as_bool()), (Some("Edit"), Some(false)));
    assert_eq!(client.apply_edits().len(), 1, "{}", client.report());
    assert_eq!(client.text("calc.py"), "def add(a, b):\n    # unsaved\n    return a - b\n");
    assert_eq!(ws.read("calc.py"), disk, "the disk waits for the user to save");
}
