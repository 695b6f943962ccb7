//! Scenario tests: whole turns with the scripted model on temp workspaces.
//!
//! The model's raw text goes through the real incremental parser, the real
//! tools run on real files, and the whole event stream is compared as a
//! snapshot where that reads best.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::{Edits, Run, Scenario};
use insta::assert_snapshot;
use schemars::JsonSchema;
use serde::Deserialize;
use tack::agent::{HookCall, ToolHook};
use tack::model::scripted::{FaultKind, ScriptEntry, ScriptedBackend};
use tack::permissions::{Rule, RuleAction};
use tack::protocol::{ApprovalDecision, Event, PermissionMode, StopReason, Usage};
use tack::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};
use tack::workspace::buffers::MemoryBuffers;
use tokio_util::sync::CancellationToken;

fn call(tool: &str, input: serde_json::Value) -> String {
    serde_json::json!({ "tool": tool, "input": input }).to_string()
}

// ---------------------------------------------------------------- tools

#[tokio::test]
async fn read_then_edit_then_answer() {
    let run = Scenario::new()
        .file("src/greet.py", "def greet(name):\n    return 'Helo, ' + name\n")
        .run(
            &[
                &format!("Let me look.\n{}\n", call("Read", serde_json::json!({"file_path": "src/greet.py"}))),
                &call(
                    "Edit",
                    serde_json::json!({"file_path": "src/greet.py", "old_string": "Helo", "new_string": "Hello"}),
                ),
                "Fixed the typo in the greeting.",
            ],
            "fix the greeting",
        )
        .await;
    assert_eq!(run.read("src/greet.py"), "def greet(name):\n    return 'Hello, ' + name\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn read_pages_numbers_lines_and_refuses_binary_files() {
    let long: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let run = Scenario::new()
        .file("long.txt", &long)
        .file("blob.bin", "abc\0def")
        .file("empty.txt", "")
        .file("notes/a.md", "a\n")
        .run(
            &[
                &[
                    call("Read", serde_json::json!({"file_path": "long.txt", "offset": 28})),
                    // A folder: what it holds.
                    call("Read", serde_json::json!({"file_path": "notes"})),
                    call("Read", serde_json::json!({"file_path": "long.txt", "offset": 2, "limit": 2})),
                    call("Read", serde_json::json!({"file_path": "blob.bin"})),
                    call("Read", serde_json::json!({"file_path": "empty.txt"})),
                    call("Read", serde_json::json!({"file_path": "missing.txt"})),
                    // Past the end of a file that fits one page: all of it.
                    call("Read", serde_json::json!({"file_path": "long.txt", "offset": 99})),
                    call("Read", serde_json::json!({"file_path": "long.txt", "offset": 99, "limit": 5})),
                ]
                .join("\n"),
                "done",
            ],
            "read",
        )
        .await;
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn grep_shows_the_lines_when_they_are_few_or_the_path_is_a_file_else_the_files() {
    let many: String = (0..30).map(|i| format!("port = {i}\n")).collect();
    let run = Scenario::new()
        .file("a.conf", &many)
        .file("b.conf", "port = 1\n")
        .run(
            &[
                &[
                    call("Grep", serde_json::json!({"pattern": "port"})),
                    call("Grep", serde_json::json!({"pattern": "port", "path": "a.conf"})),
                    call("Grep", serde_json::json!({"pattern": "port", "path": "b.conf"})),
                    call(
                        "Grep",
                        serde_json::json!({"pattern": "port", "output_mode": "files_with_matches", "path": "b.conf"}),
                    ),
                ]
                .join("\n"),
                "done",
            ],
            "where is the port?",
        )
        .await;
    assert_eq!(run.result_output(0), "a.conf\nb.conf\n", "31 lines: the files");
    assert!(run.result_output(1).starts_with("a.conf:1:port = 0\n"), "a file: its lines");
    assert_eq!(run.result_output(2), "b.conf:1:port = 1\n", "few lines: the lines");
    assert_eq!(run.result_output(3), "b.conf\n", "an explicit mode wins");
}

#[tokio::test]
async fn a_search_narrowed_to_the_wrong_file_shows_the_matches_elsewhere() {
    let many: String = (0..4).map(|i| format!("note {i}\n")).collect();
    let run = Scenario::new()
        .file("server.py", "from config import HOST, PORT\n\nprint(HOST, PORT)\n")
        .file("config.py", "HOST = \"localhost\"\nPORT = 8427\n")
        .file("notes.md", &many)
        .file("server.md", "note\n")
        .run(
            &[
                &[
                    call("Grep", serde_json::json!({"pattern": "PORT =", "path": "server.py"})),
                    call("Grep", serde_json::json!({"pattern": "PORT =", "glob": "*.txt"})),
                    call("Grep", serde_json::json!({"pattern": "TIMEOUT", "path": "server.py"})),
                    call("Grep", serde_json::json!({"pattern": "TIMEOUT"})),
                    call("Grep", serde_json::json!({"pattern": "PORT", "path": "server.py"})),
                    call("Grep", serde_json::json!({"pattern": "note", "path": "server.md"})),
                ]
                .join("\n"),
                "8427",
            ],
            "which port?",
        )
        .await;
    assert_eq!(
        run.result_output(0),
        "no matches for `PORT =` under server.py; elsewhere in the workspace:\nconfig.py:2:PORT = 8427"
    );
    assert!(
        run.result_output(1).ends_with("elsewhere in the workspace:\nconfig.py:2:PORT = 8427"),
        "a glob narrows too"
    );
    assert_eq!(run.result_output(2), "no matches for `TIMEOUT` under server.py", "nowhere else either");
    assert_eq!(run.result_output(3), "no matches for `TIMEOUT` in the workspace");
    assert_eq!(
        run.result_output(4),
        "server.py:1:from config import HOST, PORT\nserver.py:3:print(HOST, PORT)\nAlso outside server.py:\nconfig.py:2:PORT = 8427\n",
        "a few matches outside the path are shown beside its own"
    );
    assert_eq!(run.result_output(5), "server.md:1:note\n", "more than a few are a search of their own");
}

#[tokio::test]
async fn grep_matches_within_a_line_and_shows_lines_that_are_not_utf8() {
    let scenario = Scenario::new().file("lib.rs", "fn\nnew_with_a() {}\nfn  new_with_b() {}\n");
    std::fs::write(scenario.root().join("latin1.txt"), b"caf\xe9 new_with_c\n").unwrap();
    let run = scenario
        .run(
            &[
                &[
                    call("Grep", serde_json::json!({"pattern": r"fn\s+new_with_\w+"})),
                    call("Grep", serde_json::json!({"pattern": "new_with_c"})),
                    call("Grep", serde_json::json!({"pattern": r"fn\nnew"})),
                    call("Grep", serde_json::json!({"pattern": "new_with", "output_mode": "files_with_matches"})),
                    call("Grep", serde_json::json!({"pattern": "new_with", "output_mode": "count"})),
                ]
                .join("\n"),
                "done",
            ],
            "find the constructors",
        )
        .await;
    assert_eq!(run.result_output(0), "lib.rs:3:fn  new_with_b() {}\n", "`\\s` does not reach into the next line");
    assert_eq!(run.result_output(1), "latin1.txt:1:caf\u{fffd} new_with_c\n");
    let (_, is_error, refused) = &run.results()[2];
    assert!(*is_error && refused.contains("within one line"), "{refused}");
    assert_eq!(run.result_output(3), "latin1.txt\nlib.rs\n");
    assert_eq!(run.result_output(4), "latin1.txt:1\nlib.rs:2\n");
}

#[tokio::test]
async fn write_creates_and_overwrites_files() {
    let run = Scenario::new()
        .file("old.txt", "old\n")
        .run(
            &[
                &[
                    call("Read", serde_json::json!({"file_path": "old.txt"})),
                    call("Write", serde_json::json!({"file_path": "new/dir/file.txt", "content": "fresh\n"})),
                    call("Write", serde_json::json!({"file_path": "old.txt", "content": "replaced\n"})),
                    call("Write", serde_json::json!({"file_path": "old.txt", "content": "replaced\n"})),
                ]
                .join("\n"),
                "done",
            ],
            "write",
        )
        .await;
    assert_eq!(run.read("new/dir/file.txt"), "fresh\n");
    assert_eq!(run.read("old.txt"), "replaced\n");
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn edit_requires_a_unique_exact_match_unless_replace_all() {
    let run = Scenario::new()
        .file("a.txt", "x = 1\nx = 1\ny = 2\n")
        .run(
            &[
                &[
                    call("Read", serde_json::json!({"file_path": "a.txt"})),
                    call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "z = 3", "new_string": "z = 4"})),
                    call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"})),
                    call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "y = 2", "new_string": "y = 2"})),
                    call(
                        "Edit",
                        serde_json::json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
                    ),
                ]
                .join("\n"),
                "done",
            ],
            "edit",
        )
        .await;
    assert_eq!(run.read("a.txt"), "x = 9\nx = 9\ny = 2\n");
    let errors: Vec<bool> = run.results().iter().map(|r| r.1).collect();
    assert_eq!(errors, [false, true, true, true, false]);
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn multi_edit_is_all_or_nothing() {
    let original = "alpha\nbeta\ngamma\n";
    let run = Scenario::new()
        .file("a.txt", original)
        .run(
            &[
                &format!(
                    "{}\n{}",
                    call("Read", serde_json::json!({"file_path": "a.txt"})),
                    call(
                        "MultiEdit",
                        serde_json::json!({"file_path": "a.txt", "edits": [
                            {"old_string": "alpha", "new_string": "ALPHA"},
                            {"old_string": "missing", "new_string": "x"}
                        ]}),
                    )
                ),
                &call(
                    "MultiEdit",
                    serde_json::json!({"file_path": "a.txt", "edits": [
                        {"old_string": "alpha", "new_string": "ALPHA"},
                        {"old_string": "ALPHA\nbeta", "new_string": "ALPHA\nBETA"}
                    ]}),
                ),
                "done",
            ],
            "edit",
        )
        .await;
    assert_eq!(run.read("a.txt"), "ALPHA\nBETA\ngamma\n");
    assert!(run.result_output(1).contains("edit 2 of 2 failed, so none was applied"), "{}", run.result_output(1));
    assert!(!run.results()[2].1);
}

#[tokio::test]
async fn glob_grep_and_list_dir_respect_gitignore() {
    let run = Scenario::new()
        .file(".gitignore", "target/\n*.log\n")
        .file("src/main.rs", "fn main() {\n    println!(\"Hello\");\n}\n")
        .file("src/lib/mod.rs", "pub fn hello() {}\n// TODO: more\n")
        .file("README.md", "# Hello world\nTODO: docs\n")
        .file("target/debug/out.rs", "fn hello() {}\n")
        .file("run.log", "hello\n")
        .file(".env", "HELLO=secret\n")
        .run(
            &[
                &[
                    call("Glob", serde_json::json!({"pattern": "**/*.rs"})),
                    call("Glob", serde_json::json!({"pattern": "*.rs", "path": "src"})),
                    // A file where the folder goes: the file is shown.
                    call("Glob", serde_json::json!({"pattern": "src/**/mod.rs", "path": "README.md"})),
                    // A folder that is not there: the whole workspace.
                    call("Glob", serde_json::json!({"pattern": "**/main.rs", "path": "src/**/*.rs"})),
                    // Smart case: no capital letter, any case.
                    call("Grep", serde_json::json!({"pattern": "hello"})),
                    call("Grep", serde_json::json!({"pattern": "TODO", "output_mode": "content"})),
                    call("Grep", serde_json::json!({"pattern": "l", "output_mode": "count", "glob": "*.rs"})),
                    call("Grep", serde_json::json!({"pattern": "nothing here"})),
                    call("Grep", serde_json::json!({"pattern": "hello", "path": "main.rs"})),
                    call("Grep", serde_json::json!({"pattern": "(unclosed"})),
                    call("ListDir", serde_json::json!({})),
                    call("ListDir", serde_json::json!({"path": "src"})),
                    call("Grep", serde_json::json!({"pattern": "hello", "case_insensitive": false})),
                    call("Grep", serde_json::json!({"pattern": "HELLO", "case_insensitive": true})),
                    // A bare file name: wherever the file is.
                    call("Glob", serde_json::json!({"pattern": "mod.rs"})),
                ]
                .join("\n"),
                "done",
            ],
            "search",
        )
        .await;
    let searched = run.result_output(2);
    assert!(!searched.contains("target/") && !searched.contains("run.log"), "{searched}");
    assert!(!searched.contains(".env"), "a search must not read secrets: {searched}");
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn move_and_delete_files() {
    let run = Scenario::new()
        .file("a.txt", "a\n")
        .file("b.txt", "b\n")
        .file("c.txt", "c\n")
        .run(
            &[
                &[
                    call("Move", serde_json::json!({"source": "a.txt", "destination": "moved/a.txt"})),
                    call("Move", serde_json::json!({"source": "b.txt", "destination": "c.txt"})),
                    call("DeleteFile", serde_json::json!({"file_path": "b.txt"})),
                    call("DeleteFile", serde_json::json!({"file_path": "moved"})),
                ]
                .join("\n"),
                // The last change failed: the model is asked once to go on.
                "done",
                "done",
            ],
            "tidy",
        )
        .await;
    assert!(!run.exists("a.txt") && run.exists("moved/a.txt"));
    assert!(!run.exists("b.txt"));
    assert_eq!(run.read("c.txt"), "c\n");
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn reads_see_open_buffers_before_the_disk() {
    let scenario = Scenario::new().file("a.rs", "on disk\n");
    let buffers = Arc::new(MemoryBuffers::default());
    buffers.set(scenario.root().canonicalize().unwrap().join("a.rs"), "unsaved edit\n");
    let run = scenario
        .overlay(buffers)
        .run(
            &[
                &[
                    call("Read", serde_json::json!({"file_path": "a.rs"})),
                    call("Grep", serde_json::json!({"pattern": "unsaved", "output_mode": "content"})),
                ]
                .join("\n"),
                "done",
            ],
            "read",
        )
        .await;
    assert!(run.result_output(0).contains("unsaved edit"), "{}", run.result_output(0));
    assert_eq!(run.result_output(1), "a.rs:1:unsaved edit\n");
}

#[tokio::test]
async fn rejected_edits_leave_the_file_and_tell_the_model() {
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .edits(Edits::Reject)
        .run(&[&format!("{}\n{}", call("Read", serde_json::json!({"file_path": "a.txt"})), edit_call()), "ok"], "edit")
        .await;
    assert_eq!(run.read("a.txt"), "one\n");
    assert_eq!(run.kinds().iter().filter(|k| **k == "edit_rejected").count(), 1);
    assert!(run.result_output(1).contains("rejected: the user rejected the diff"));
}

#[tokio::test]
async fn edits_of_files_not_read_or_changed_since_are_refused_and_leave_them_alone() {
    let read = call("Read", serde_json::json!({"file_path": "a.txt"}));
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .file("b.txt", "bee\n")
        .run(
            &[
                // Never read: refused, with the file shown.
                &edit_call(),
                &call("Write", serde_json::json!({"file_path": "b.txt", "content": "wasp\n"})),
                // Read, then changed behind the model's back: refused again.
                &read,
                &bash("echo more >> a.txt", None),
                &edit_call(),
                // Having been shown the file, the model can edit it.
                &edit_call(),
                &call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "more", "new_string": "less"})),
                "done",
            ],
            "edit",
        )
        .await;
    let results = run.results();
    assert!(results[0].1, "{results:?}");
    assert_eq!(
        run.result_output(0),
        "nothing was changed: you had not read a.txt. Here it is now; it now counts as read, and your old_string \
         matches it: make the same call again now:\n     1\tone\n"
    );
    assert!(results[1].1 && results[1].2.contains("you had not read b.txt. Here it is now"), "{results:?}");
    assert!(results[4].1, "{results:?}");
    assert!(
        run.result_output(4)
            .starts_with("nothing was changed: a.txt has changed since you last read it. Here it is now"),
        "{results:?}"
    );
    assert!(run.result_output(4).ends_with("     1\tone\n     2\tmore\n"), "{results:?}");
    assert!(!results[5].1 && !results[6].1, "{results:?}");
    assert_eq!(run.read("a.txt"), "two\nless\n");
    assert_eq!(run.read("b.txt"), "bee\n");
}

#[tokio::test]
async fn a_new_file_named_like_one_elsewhere_is_pointed_out_once() {
    let write = call("Write", serde_json::json!({"file_path": "src/stats.py", "content": "x = 1\n"}));
    let run = Scenario::new().file("lib/stats.py", "x = 0\n").run(&[&write, &write, "done"], "create").await;
    let results = run.results();
    assert!(results[0].1, "{results:?}");
    assert!(results[0].2.contains("src/stats.py does not exist, but lib/stats.py does"), "{results:?}");
    assert!(!results[1].1, "repeating the Write creates the file: {results:?}");
    assert_eq!(run.read("src/stats.py"), "x = 1\n");
}

#[tokio::test]
async fn a_lookup_repeated_while_nothing_changed_is_not_run_again() {
    let grep = call("Grep", serde_json::json!({"pattern": "one"}));
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run(&[&grep, &grep, &bash("echo one > b.txt", None), &grep, "done"], "find")
        .await;
    let results = run.results();
    assert!(!results[0].1);
    assert!(results[1].1 && results[1].2.contains("you already called Grep with exactly this input"), "{results:?}");
    // A command may have changed what the search finds: it runs again.
    assert!(!results[3].1 && results[3].2.contains("b.txt"), "{results:?}");
}

#[tokio::test]
async fn the_first_message_carries_the_rules_and_a_snapshot_of_the_workspace() {
    let run = Scenario::new()
        .file("AGENTS.md", "Use tabs.\n")
        .file("src/lib.rs", "")
        .file(".gitignore", "target/\n")
        .file("target/junk", "")
        .run(&["Hello."], "hi")
        .await;
    let request = run.backend.last_request().unwrap();
    assert!(!request.system.contains("Use tabs."), "the system prompt depends on the mode and tools only");
    let first = request.messages[0].text();
    assert_eq!(
        first,
        "<context>\n# Project rules (from AGENTS.md)\nUse tabs.\n\n# Workspace\n\
         Files and folders in the workspace (paths are relative to its root):\nAGENTS.md\nsrc/\n  lib.rs\n</context>\n\nhi"
    );
    let missing = Scenario::new()
        .file("greet.py", "")
        .run(&[&call("Read", serde_json::json!({"file_path": "README.md"})), "ok"], "read")
        .await;
    assert_eq!(missing.result_output(0), "README.md does not exist; the root holds greet.py");
}

// ---------------------------------------------------------------- parser forms

#[tokio::test]
async fn every_call_form_is_recognised_and_raw_calls_never_stream_as_text() {
    let completion = [
        "Single line:",
        r#"{"tool": "Read", "input": {"file_path": "a.txt"}}"#,
        "Pretty:",
        "{",
        r#"  "tool": "Read","#,
        r#"  "input": {"file_path": "a.txt", "limit": 1}"#,
        "}",
        "Fenced:",
        "```json",
        r#"{"tool": "Glob", "input": {"pattern": "*.txt"}}"#,
        "```",
        r#"XML: <tool_use><name>ListDir</name><input>{}</input></tool_use>"#,
        r#"Native: <tool_call>{"name": "Grep", "arguments": "{\"pattern\": \"hi\"}"}</tool_call>"#,
        "End.",
    ]
    .join("\n");
    let run = Scenario::new().file("a.txt", "hi\n").run(&[&completion, "done"], "look").await;
    let names: Vec<String> = run.results().into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["Read", "Read", "Glob", "ListDir", "Grep"]);
    assert!(run.results().iter().all(|r| !r.1), "{:?}", run.results());
    let streamed: String = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(!streamed.contains("\"tool\"") && !streamed.contains("<tool_") && !streamed.contains("```"), "{streamed}");
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn a_malformed_call_becomes_an_error_result_and_the_loop_recovers() {
    let run = Scenario::new()
        .file("a.txt", "content\n")
        .run(
            &[
                r#"{"tool": "Read", "input": {"file_path": "a.txt",}}"#,
                &call("Raed", serde_json::json!({"file_path": "a.txt"})),
                &call("Read", serde_json::json!({"path": "a.txt"})),
                &call("Read", serde_json::json!({"file_path": "a.txt"})),
                "It says content.",
            ],
            "read a.txt",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "It says content.");
    let errors: Vec<bool> = run.results().iter().map(|r| r.1).collect();
    assert_eq!(errors, [true, true, true, false]);
    assert_snapshot!(run.render());
}

// ---------------------------------------------------------------- permissions

fn edit_call() -> String {
    call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}))
}

#[tokio::test]
async fn plan_mode_hides_write_tools_and_refuses_them_at_run_time() {
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .mode(PermissionMode::Plan)
        .run(
            &[
                &format!("{}\n{}", call("Read", serde_json::json!({"file_path": "a.txt"})), edit_call()),
                "plan: change one to two",
            ],
            "plan it",
        )
        .await;
    assert_eq!(run.read("a.txt"), "one\n");
    let request = run.backend.last_request().unwrap();
    let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(offered[..4], ["Read", "Glob", "Grep", "ListDir"]);
    for hidden in ["Write", "Edit", "MultiEdit", "Move", "DeleteFile", "Bash", "REPL"] {
        assert!(!offered.contains(&hidden), "{hidden} offered in plan mode: {offered:?}");
    }
    assert!(request.system.contains("Mode: plan"));
    assert!(!request.system.contains("## Edit"));
    assert!(run.asked.is_empty());
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn auto_read_asks_for_edits_and_remembers_always() {
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .mode(PermissionMode::AutoRead)
        .answers(&[ApprovalDecision::Deny, ApprovalDecision::AllowAlways])
        .run(
            &[
                &format!("{}\n{}", call("Read", serde_json::json!({"file_path": "a.txt"})), edit_call()),
                &edit_call(),
                &call("Write", serde_json::json!({"file_path": "b.txt", "content": "b"})),
                &call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "two", "new_string": "three"})),
                "done",
            ],
            "edit",
        )
        .await;
    // Read: no question. Edit: denied, then always-allowed. Write: a different
    // tool, asked and unanswered (the turn is cancelled while it waits).
    let asked: Vec<&str> = run.asked.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(asked, ["Edit", "Edit", "Write"]);
    assert_eq!(run.read("a.txt"), "two\n");
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn ask_mode_asks_every_time_despite_allow_rules() {
    let allow_edit = Rule { action: RuleAction::Allow, tool: Some("Edit".into()), path: None, command: None };
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .mode(PermissionMode::Ask)
        .rules(vec![allow_edit])
        .answers(&[ApprovalDecision::AllowAlways, ApprovalDecision::Allow])
        .run(
            &[
                &format!("{}\n{}", call("Read", serde_json::json!({"file_path": "a.txt"})), edit_call()),
                &call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "two", "new_string": "three"})),
                &call("Read", serde_json::json!({"file_path": "a.txt"})),
                "done",
            ],
            "edit",
        )
        .await;
    assert_eq!(run.asked.len(), 2);
    assert_eq!(run.read("a.txt"), "three\n");
}

#[tokio::test]
async fn auto_all_never_asks_but_deny_rules_still_refuse() {
    let deny_lock = Rule { action: RuleAction::Deny, tool: None, path: Some("**/*.lock".into()), command: None };
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .file("Cargo.lock", "lock\n")
        .mode(PermissionMode::AutoAll)
        .rules(vec![deny_lock])
        .run(
            &[
                &format!(
                    "{}\n{}\n{}",
                    call("Read", serde_json::json!({"file_path": "a.txt"})),
                    edit_call(),
                    call("Write", serde_json::json!({"file_path": "Cargo.lock", "content": "x"}))
                ),
                "done",
            ],
            "edit",
        )
        .await;
    assert!(run.asked.is_empty());
    assert_eq!(run.read("a.txt"), "two\n");
    assert_eq!(run.read("Cargo.lock"), "lock\n");
    assert!(run.result_output(2).contains("denied by rule [deny path=**/*.lock]"), "{}", run.result_output(2));
}

#[cfg(unix)]
#[tokio::test]
async fn the_workspace_boundary_holds_for_every_escape() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside secret\n").unwrap();
    let scenario = Scenario::new().file("ok.txt", "fine\n").file(".env", "TOKEN=1\n").file(".ssh/id_rsa", "KEY\n");
    let root = scenario.root().to_path_buf();
    symlink(outside.path().join("secret.txt"), root.join("link.txt")).unwrap();
    symlink(outside.path(), root.join("linkdir")).unwrap();
    symlink(root.join("link.txt"), root.join("chain.txt")).unwrap();
    symlink(root.join(".env"), root.join("innocent.txt")).unwrap();
    let absolute = outside.path().join("secret.txt").display().to_string();
    let calls = [
        call("Read", serde_json::json!({"file_path": "../secret.txt"})),
        call("Read", serde_json::json!({"file_path": absolute})),
        call("Read", serde_json::json!({"file_path": "link.txt"})),
        call("Read", serde_json::json!({"file_path": "linkdir/secret.txt"})),
        call("Write", serde_json::json!({"file_path": "linkdir/new.txt", "content": "x"})),
        call("Read", serde_json::json!({"file_path": "chain.txt"})),
        call("Read", serde_json::json!({"file_path": ".env"})),
        call("Read", serde_json::json!({"file_path": ".ssh/id_rsa"})),
        call("Read", serde_json::json!({"file_path": "innocent.txt"})),
        call("Read", serde_json::json!({"file_path": "ok.txt"})),
    ];
    let run = scenario.run(&[&calls.join("\n"), "done"], "try to escape").await;
    let results = run.results();
    assert_eq!(results.len(), 10);
    for (index, (_, is_error, output)) in results.iter().enumerate().take(9) {
        assert!(is_error, "call {index} should be refused: {output}");
        assert!(!output.contains("outside secret") && !output.contains("TOKEN") && !output.contains("KEY"), "{output}");
    }
    assert!(!outside.path().join("new.txt").exists());
    assert!(results[9].2.contains("fine"));
    let refusals: String =
        results.iter().take(9).map(|r| format!("{}\n", r.2.replace(&absolute, "<outside>/secret.txt"))).collect();
    let refusals = refusals.replace(&outside.path().canonicalize().unwrap().display().to_string(), "<outside>");
    assert_snapshot!(refusals);
}

// ---------------------------------------------------------------- the loop

#[tokio::test]
async fn max_iterations_stops_a_model_that_keeps_calling_tools() {
    let read = call("Read", serde_json::json!({"file_path": "a.txt"}));
    let run = Scenario::new()
        .file("a.txt", "x\n")
        .max_iterations(3)
        .run(&[&read, &read, &read, &read, "never reached"], "loop")
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::MaxIterations);
    assert_eq!(run.backend.used(), 3);
    assert_eq!(run.results().len(), 3);
}

/// A read-only tool that takes a while and records how many run at once.
struct SlowProbe {
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

#[derive(Deserialize, JsonSchema)]
struct ProbeInput {
    label: String,
    delay_ms: u64,
}

#[async_trait]
impl TypedTool for SlowProbe {
    type Input = ProbeInput;
    const NAME: &'static str = "Probe";
    const DESCRIPTION: &'static str = "test probe";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;
    fn paths(_: &ProbeInput) -> Vec<String> {
        Vec::new()
    }
    async fn call(&self, input: ProbeInput, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(input.delay_ms)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::ok(input.label.clone(), input.label))
    }
}

#[tokio::test]
async fn parallel_reads_run_together_and_results_keep_call_order() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let probe = Arc::new(SlowProbe { running: running.clone(), peak: peak.clone() });
    let tools: Vec<Arc<dyn Tool>> = vec![probe];
    let calls = [("first", 120), ("second", 10), ("third", 60)]
        .map(|(label, delay)| call("Probe", serde_json::json!({"label": label, "delay_ms": delay})))
        .join("\n");
    let run = Scenario::new().tools(tools).run(&[&calls, "done"], "probe").await;
    let labels: Vec<String> = run.results().into_iter().map(|r| r.2).collect();
    assert_eq!(labels, ["first", "second", "third"]);
    assert_eq!(peak.load(Ordering::SeqCst), 3, "the three read-only calls should overlap");
}

#[tokio::test]
async fn writes_split_batches_and_run_alone() {
    // Read, Write, Read: the second Read must see what the Write wrote.
    let calls = [
        call("Read", serde_json::json!({"file_path": "a.txt"})),
        call("Write", serde_json::json!({"file_path": "a.txt", "content": "after\n"})),
        call("Read", serde_json::json!({"file_path": "a.txt"})),
    ]
    .join("\n");
    let run = Scenario::new().file("a.txt", "before\n").run(&[&calls, "done"], "rw").await;
    assert!(run.result_output(0).contains("before"));
    assert!(run.result_output(2).contains("after"));
}

#[tokio::test]
async fn transient_errors_are_retried_and_fatal_ones_end_the_turn() {
    let script = vec![
        ScriptEntry::Fault { error: FaultKind::Transient, message: Some("overloaded".into()) },
        ScriptEntry::Fault { error: FaultKind::Transient, message: None },
        ScriptEntry::Text("Recovered.".into()),
    ];
    let run = Scenario::new().run_entries(script, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_snapshot!("transient_retry", run.render());

    let script = vec![ScriptEntry::Fault { error: FaultKind::Fatal, message: Some("model file vanished".into()) }];
    let run = Scenario::new().run_entries(script, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Error);
    assert_snapshot!("fatal_error", run.render());

    let run = Scenario::new().run(&[], "hi").await;
    assert_eq!(run.outcome.stop_reason, StopReason::Error);
    assert!(run.render().contains("script exhausted after 0 completions"));
}

#[tokio::test]
async fn too_many_transient_errors_give_up() {
    let script = (0..4).map(|_| ScriptEntry::Fault { error: FaultKind::Transient, message: None }).collect();
    let run = Scenario::new().run_entries(script, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Error);
    assert_eq!(run.kinds().iter().filter(|k| **k == "retry").count(), 3);
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_a_consistent_history() {
    let cancel = CancellationToken::new();
    let script = vec![ScriptEntry::Paced { text: "a long answer that streams slowly ".repeat(20), chunk_delay_ms: 5 }];
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(60)).await;
        trigger.cancel();
    });
    let run = Scenario::new().run_entries(script, "talk", cancel).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    assert!(!run.outcome.text.is_empty());
    assert_eq!(run.history_len, 2, "the prompt and the partial answer are kept");
    assert_eq!(run.kinds().last(), Some(&"turn_finished"));
}

/// A tool that panics, to prove the loop survives it.
struct Boom;

#[derive(Deserialize, JsonSchema)]
struct BoomInput {}

#[async_trait]
impl TypedTool for Boom {
    type Input = BoomInput;
    const NAME: &'static str = "Boom";
    const DESCRIPTION: &'static str = "panics";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;
    fn paths(_: &BoomInput) -> Vec<String> {
        Vec::new()
    }
    async fn call(&self, _: BoomInput, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        panic!("index out of bounds")
    }
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result() {
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Boom)];
    let run = Scenario::new().tools(tools).run(&[&call("Boom", serde_json::json!({})), "survived"], "boom").await;
    assert_eq!(run.outcome.text, "survived");
    assert!(run.results()[0].1);
    assert!(run.result_output(0).contains("index out of bounds"));
}

/// Records the pipeline order and blocks DeleteFile.
struct Audit {
    log: Arc<Mutex<Vec<String>>>,
}

impl ToolHook for Audit {
    fn before(&self, call: &HookCall<'_>) -> Result<(), String> {
        self.log.lock().unwrap().push(format!("before {}", call.name));
        if call.name == "DeleteFile" { Err("deletions are audited".into()) } else { Ok(()) }
    }
    fn after(&self, call: &HookCall<'_>, output: &mut ToolOutput) {
        self.log.lock().unwrap().push(format!("after {}", call.name));
        output.output.push_str("[audited]");
    }
}

#[tokio::test]
async fn hooks_run_after_permission_and_around_the_tool() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let run = Scenario::new()
        .file("a.txt", "a\n")
        .mode(PermissionMode::Plan)
        .hook(Arc::new(Audit { log: log.clone() }))
        .run(
            &[
                &[
                    call("Read", serde_json::json!({"file_path": "a.txt"})),
                    call("DeleteFile", serde_json::json!({"file_path": "a.txt"})),
                ]
                .join("\n"),
                "done",
            ],
            "audit",
        )
        .await;
    // Plan mode refuses DeleteFile before any hook sees it.
    assert_eq!(*log.lock().unwrap(), ["before Read", "after Read"]);
    assert!(run.result_output(0).ends_with("[audited]"));

    let log = Arc::new(Mutex::new(Vec::new()));
    let run = Scenario::new()
        .file("a.txt", "a\n")
        .hook(Arc::new(Audit { log: log.clone() }))
        .run(&[&call("DeleteFile", serde_json::json!({"file_path": "a.txt"})), "done"], "audit")
        .await;
    assert!(run.exists("a.txt"));
    assert_eq!(run.result_output(0), "blocked by a hook: deletions are audited");
}

#[tokio::test]
async fn the_history_pairs_every_call_with_its_result() {
    let run = Scenario::new()
        .file("a.txt", "a\n")
        .run(
            &[
                &format!(
                    "{}\nbad: <tool_call>{{\"name\": </tool_call>",
                    call("Read", serde_json::json!({"file_path": "a.txt"}))
                ),
                "done",
            ],
            "pairs",
        )
        .await;
    assert_eq!(run.history_len, 4);
    let events_calls: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolCall { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    let events_results: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolResult { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(events_calls, events_results);
    assert_eq!(events_calls.len(), 2);
}

#[tokio::test]
async fn huge_files_are_refused_without_being_loaded() {
    let scenario = Scenario::new();
    // Sparse: 65 MiB on paper, nothing on disk.
    let file = std::fs::File::create(scenario.root().join("huge.log")).unwrap();
    file.set_len(65 * 1024 * 1024).unwrap();
    let run = scenario.run(&[&call("Read", serde_json::json!({"file_path": "huge.log"})), "ok"], "read").await;
    assert_eq!(run.result_output(0), "huge.log is 65 MiB, too large to read; use Grep to find the part you need");
}

// ---------------------------------------------------------------- guards

#[tokio::test]
async fn a_repeated_failing_call_gets_an_intervention_and_the_turn_goes_on() {
    let read = call("Read", serde_json::json!({"file_path": "a.txt"}));
    let bad = call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "nope", "new_string": "x"}));
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run(&[&read, &bad, &bad, "I cannot find that text.", "I cannot find that text."], "edit")
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.kinds().iter().filter(|k| **k == "loop_detected").count(), 1);
    let request = run.backend.last_request().unwrap();
    // The answer right after the failed change was met with one push to go on.
    let last = request.messages.last().unwrap();
    assert!(last.text().starts_with("[tack] Your last change failed"), "{}", last.text());
    let advice = request.messages[request.messages.len() - 3].text();
    assert!(advice.starts_with("[tack] Loop detected: the same call failed twice: Edit"), "{advice}");
    assert!(advice.contains("take a different step"), "{advice}");
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn loops_that_go_on_escalate_and_end_the_turn() {
    let read = call("Read", serde_json::json!({"file_path": "a.txt"}));
    let script: Vec<&str> = std::iter::repeat_n(read.as_str(), 12).collect();
    let run = Scenario::new().file("a.txt", "one\n").run(&script, "read").await;
    assert_eq!(run.outcome.stop_reason, StopReason::LoopDetected);
    // Three calls to the first detection. The repeats after the first are
    // not run (their result is already in the history) and come back as
    // errors, so each next detection takes two: the same failing call twice.
    assert_eq!(run.backend.used(), 7);
    let descriptions: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::LoopDetected { description } => Some(description.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(descriptions.len(), 3);
    assert!(descriptions[0].contains("3 times in a row"));
}

#[tokio::test]
async fn a_cycle_is_detected_but_varied_work_is_not() {
    let (a, b) =
        (call("Read", serde_json::json!({"file_path": "a.txt"})), call("Grep", serde_json::json!({"pattern": "one"})));
    let run = Scenario::new().file("a.txt", "one\n").run(&[&a, &b, &a, &b, "stopping"], "look").await;
    assert_eq!(run.kinds().iter().filter(|k| **k == "loop_detected").count(), 1);
    assert!(run.render().contains("the same 2 calls keep repeating in a cycle"));

    let script: Vec<String> =
        (0..6).map(|i| call("Read", serde_json::json!({"file_path": format!("{i}.txt")}))).collect();
    let mut scenario = Scenario::new();
    for i in 0..6 {
        scenario = scenario.file(&format!("{i}.txt"), "x\n");
    }
    let mut texts: Vec<&str> = script.iter().map(String::as_str).collect();
    texts.push("read them all");
    let run = scenario.run(&texts, "read all").await;
    assert!(!run.kinds().contains(&"loop_detected"));
}

#[tokio::test]
async fn empty_and_thought_only_replies_are_nudged() {
    let run = Scenario::new().run(&["", "<think>I should greet.</think>", "Hello!"], "hi").await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Hello!");
    assert_snapshot!(run.render());
    // The thought is kept in the history but not fed back to the model.
    let request = run.backend.last_request().unwrap();
    let thought_kept =
        request.messages.iter().any(|m| m.blocks.iter().any(|b| matches!(b, tack::protocol::Block::Thought { .. })));
    assert!(thought_kept);
    let prompt = tack::model::transcript(&request.system, &request.messages);
    assert!(!prompt.contains("I should greet."), "{prompt}");
    assert!(prompt.contains("Your last reply held only internal thoughts"));

    // Bare tags copied from a chat template are no answer either.
    let run = Scenario::new().run(&["<tools>\n\n", "It is in src/date.py."], "where?").await;
    assert_eq!(run.outcome.text, "It is in src/date.py.");
    // Before a call they are dropped from the history: shown back to the
    // model, they are copied into every later reply.
    let list = format!("<tools>\n{}", call("ListDir", serde_json::json!({})));
    let run = Scenario::new().file("src/date.py", "").run(&[&list, "It is in src/date.py."], "where?").await;
    assert_eq!(run.outcome.text, "It is in src/date.py.");
    let request = run.backend.last_request().unwrap();
    let prompt = tack::model::transcript(&request.system, &request.messages);
    assert!(prompt.contains("ListDir") && !prompt.contains("<tools>"), "{prompt}");

    let run = Scenario::new().run(&["", " \n", ""], "hi").await;
    assert_eq!(run.outcome.stop_reason, StopReason::Error);
    assert!(run.render().contains("the model gave no answer and called no tool, 3 times in a row"));
}

// ---------------------------------------------------------------- recovery

#[tokio::test]
async fn files_the_prompt_names_are_attached_and_count_as_read() {
    let edit = call(
        "Edit",
        serde_json::json!({"file_path": "lib/stats.py", "old_string": "import os", "new_string": "import math"}),
    );
    let run = Scenario::new()
        .file("lib/stats.py", "import os\n")
        .file("notes.txt", "keep\n")
        .run(&[&edit, "Fixed."], "The import in stats.py is wrong; see `lib/stats.py:1`. Fix it.")
        .await;
    assert_eq!(run.read("lib/stats.py"), "import math\n", "an attached file may be edited without a Read");
    let attached: Vec<&Event> = run.events.iter().map(|e| &e.event).filter(|e| e.kind() == "files_attached").collect();
    assert_eq!(attached, [&Event::FilesAttached { paths: vec!["lib/stats.py".into()] }]);
    let task = run.backend.last_request().unwrap().messages[0].text();
    assert!(task.contains("<file path=\"lib/stats.py\">\n     1\timport os\n</file>"), "{task}");
    assert!(!task.contains("keep"), "files the prompt does not name stay out: {task}");
}

#[tokio::test]
async fn a_reply_that_shows_a_changed_file_is_offered_that_edit_as_a_call() {
    let file = "def greet(name):\n    return \"Helo, \" + name\n\n\ndef part(name):\n    return name\n";
    let shown = "Here is the corrected code:\n```python\ndef greet(name):\n    return \"Hello, \" + name\n```";
    let offered = serde_json::json!({
        "file_path": "greet.py",
        "old_string": "    return \"Helo, \" + name",
        "new_string": "    return \"Hello, \" + name",
    });
    let offered_text = r#"{"tool": "Edit", "input": {"file_path": "greet.py", "old_string": "    return \"Helo, \" + name", "new_string": "    return \"Hello, \" + name"}}"#;
    let run = Scenario::new()
        .file("greet.py", file)
        .max_iterations(3)
        .run(
            &[&call("Read", serde_json::json!({"file_path": "greet.py"})), shown, &call("Edit", offered.clone())],
            "The greeting is misspelled.",
        )
        .await;
    assert_eq!(run.read("greet.py"), file.replace("Helo", "Hello"));
    let request = run.backend.last_request().unwrap();
    assert!(request.require_tool_call, "the reply after the offer is held to a call");
    let offer = request.messages.last().unwrap().text();
    assert!(offer.starts_with("[tack] Your reply shows a changed greet.py"), "{offer}");
    assert!(offer.contains(offered_text), "the offer holds the exact call, keys in calling order: {offer}");
    assert!(run.render().contains("[the model showed a change to greet.py without making it"), "{}", run.render());
    let result = run.result_output(1);
    assert!(
        result.starts_with(
            "edited greet.py; the changed lines now read:\n     1\tdef greet(name):\n     2\treturn"
                .replace("\treturn", "\t    return \"Hello, \" + name")
                .as_str()
        ),
        "{result}"
    );
}

#[tokio::test]
async fn renaming_an_identifier_lists_where_the_old_name_is_still_used() {
    let rename = call(
        "Edit",
        serde_json::json!({"file_path": "cart.py", "old_string": "calc_total", "new_string": "compute_total"}),
    );
    let body = call(
        "Edit",
        serde_json::json!({"file_path": "cart.py", "old_string": "sum(prices)", "new_string": "sum(prices) + 0"}),
    );
    let run = Scenario::new()
        .file("cart.py", "def calc_total(prices):\n    return sum(prices)\n")
        .file("main.py", "from cart import calc_total\n\nprint(calc_total([1, 2]))\n")
        .file("notes.py", "print('calc_totals')\n")
        .file(".env", "calc_total=secret\n")
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "cart.py"})),
                &rename,
                &body,
                &call("Edit", serde_json::json!({"file_path": "main.py", "old_string": "calc_total", "new_string": "compute_total"})),
                &call(
                    "Edit",
                    serde_json::json!({"file_path": "main.py", "old_string": "calc_total", "new_string": "compute_total", "replace_all": true}),
                ),
                "Done.",
            ],
            "rename",
        )
        .await;
    let renamed = run.result_output(1);
    assert!(
        renamed.ends_with(
            "`calc_total` is still used in 1 file:\nmain.py:1:from cart import calc_total\nmain.py:3:print(calc_total([1, 2]))\n\
             To rename it there too:\n\
             Edit {\"file_path\": \"main.py\", \"old_string\": \"calc_total\", \"new_string\": \"compute_total\", \"replace_all\": true}\n"
        ),
        "{renamed}"
    );
    assert!(!run.result_output(2).contains("still used"), "not a rename: {}", run.result_output(2));
    // main.py counts as read (every line with the name was listed), and
    // the name is in it twice: said, with the call that renames every one.
    let refused = run.result_output(3);
    assert!(refused.starts_with("old_string occurs 2 times in main.py"), "{refused}");
    assert!(
        refused.contains(r#"Edit {"file_path": "main.py", "old_string": "calc_total", "new_string": "compute_total", "replace_all": true}"#),
        "{refused}"
    );
    assert_eq!(run.read("main.py"), "from cart import compute_total\n\nprint(compute_total([1, 2]))\n");
    assert!(!run.result_output(4).contains("still used"), "{}", run.result_output(4));
}

#[tokio::test]
async fn a_model_that_stops_with_a_rename_unfinished_is_offered_the_calls_that_finish_it() {
    let rename = call(
        "Edit",
        serde_json::json!({"file_path": "cart.py", "old_string": "calc_total", "new_string": "compute_total"}),
    );
    let finish = call(
        "Edit",
        serde_json::json!({"file_path": "main.py", "old_string": "calc_total", "new_string": "compute_total", "replace_all": true}),
    );
    let run = Scenario::new()
        .file("cart.py", "def calc_total(prices):\n    return sum(prices)\n")
        .file("main.py", "from cart import calc_total\n\nprint(calc_total([1, 2]))\n")
        .run(
            &[&call("Read", serde_json::json!({"file_path": "cart.py"})), &rename, "Renamed.", &finish, "Done."],
            "Rename calc_total to compute_total everywhere.",
        )
        .await;
    assert_eq!(run.read("main.py"), "from cart import compute_total\n\nprint(compute_total([1, 2]))\n");
    assert_eq!(run.outcome.text, "Done.");
    let nudge = run.told("[tack] The result of your last change named calls");
    let offered = r#"{"tool": "Edit", "input": {"file_path": "main.py", "new_string": "compute_total", "old_string": "calc_total", "replace_all": true}}"#;
    assert!(nudge.ends_with(&format!("They are:\n{offered}")), "{nudge}");
}

#[tokio::test]
async fn a_model_that_stops_after_an_error_naming_calls_is_offered_those_calls() {
    let file = "DEFAULT_LANGUAGE = \"fr\"\n\n\ndef hello(language=DEFAULT_LANGUAGE):\n    return {\"en\": \"Hello\", \"fr\": \"Bonjour\"}[language]\n";
    let ambiguous = call("Edit", serde_json::json!({"file_path": "app.py", "old_string": "fr", "new_string": "en"}));
    let made = call(
        "Edit",
        serde_json::json!({"file_path": "app.py", "old_string": "DEFAULT_LANGUAGE = \"fr\"", "new_string": "DEFAULT_LANGUAGE = \"en\""}),
    );
    let run = Scenario::new()
        .file("app.py", file)
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "app.py"})),
                &ambiguous,
                "Here is the corrected call.",
                &made,
                "Done.",
            ],
            "Make the default English.",
        )
        .await;
    assert_eq!(run.read("app.py"), file.replacen("\"fr\"", "\"en\"", 1));
    let nudge = run.told("[tack] Your last change failed");
    let offered = r#"{"tool": "Edit", "input": {"file_path": "app.py", "new_string": "DEFAULT_LANGUAGE = \"en\"", "old_string": "DEFAULT_LANGUAGE = \"fr\""}}"#;
    assert!(nudge.contains(&format!("The error named calls that would work:\n{offered}")), "{nudge}");
}

#[tokio::test]
async fn a_reply_that_echoes_tack_s_nudge_is_not_taken_for_the_answer() {
    for echo in ["[tack] Your last reply was empty. Continue with the task now.", "[Read the file the task names]"] {
        let run = Scenario::new().run(&["", echo, "It is 4."], "What is 2 + 2?").await;
        assert_eq!(run.outcome.text, "It is 4.");
        let request = run.backend.last_request().unwrap();
        let replies: Vec<String> =
            request.messages.iter().filter(|m| m.role == tack::protocol::Role::Assistant).map(|m| m.text()).collect();
        assert!(replies.iter().all(|reply| !reply.contains(echo)), "the echo is not kept as the model's: {replies:?}");
    }
    // Words of the task's own that happen to be in a nudge are an answer.
    let run = Scenario::new().run(&["", "list"], "Which tool lists files?").await;
    assert_eq!(run.outcome.text, "list");
}

#[tokio::test]
async fn a_small_models_first_reply_to_a_prompt_that_carries_its_files_cannot_look_them_up() {
    // The Qwen2.5-Coder 0.5B, shown geometry.py in the prompt, Grepped and
    // Read it again and again until the iteration limit instead of fixing it.
    let small = || ScriptedBackend::from_texts(["It says one."]).with_parameters(500_000_000);
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run_backend(small(), "What does a.txt say?", CancellationToken::new())
        .await;
    let held_back = run.backend.last_request().unwrap().held_back;
    assert!(held_back.contains(&"Read".to_string()) && held_back.contains(&"Grep".to_string()), "{held_back:?}");
    assert!(!held_back.contains(&"Edit".to_string()), "{held_back:?}");
    assert_eq!(run.outcome.text, "It says one.");

    // Only the first reply, and only when the prompt carries files.
    let edit = call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}));
    let backend = ScriptedBackend::from_texts([edit.as_str(), "Changed."]).with_parameters(500_000_000);
    let run =
        Scenario::new().file("a.txt", "one\n").run_backend(backend, "Change a.txt.", CancellationToken::new()).await;
    assert_eq!(run.read("a.txt"), "two\n");
    assert!(run.backend.last_request().unwrap().held_back.is_empty());
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run_backend(small(), "What do the files say?", CancellationToken::new())
        .await;
    assert!(run.backend.last_request().unwrap().held_back.is_empty());
    // A larger model looks up what it likes.
    let run = Scenario::new().file("a.txt", "one\n").run(&["It says one."], "What does a.txt say?").await;
    assert!(run.backend.last_request().unwrap().held_back.is_empty());
}

#[tokio::test]
async fn a_tool_refused_for_a_repeated_lookup_is_held_back() {
    let read = call("Read", serde_json::json!({"file_path": "a.txt"}));
    let run = Scenario::new().file("a.txt", "one\n").run(&[&read, &read, "It says one."], "What does a.txt say?").await;
    assert!(run.result_output(1).starts_with("you already called Read"), "{}", run.result_output(1));
    let request = run.backend.last_request().unwrap();
    assert_eq!(request.held_back, ["Read"]);
    assert!(request.tools.iter().any(|tool| tool.name == "Read"), "the prompt keeps every tool");
    assert_eq!(request.callable_tools().len(), request.tools.len() - 1);
    assert_eq!(run.outcome.text, "It says one.");

    // Refused twice, it stays out until something is changed.
    let grep = call("Grep", serde_json::json!({"pattern": "one"}));
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run(&[&read, &read, &read, &grep, "It says one."], "What does a.txt say?")
        .await;
    assert_eq!(run.backend.last_request().unwrap().held_back, ["Read"]);
    let edit = call("Edit", serde_json::json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}));
    let run =
        Scenario::new().file("a.txt", "one\n").run(&[&read, &read, &read, &edit, "Changed."], "Change a.txt.").await;
    assert_eq!(run.read("a.txt"), "two\n");
    assert!(run.backend.last_request().unwrap().held_back.is_empty());
}

#[tokio::test]
async fn a_call_written_out_as_text_is_offered_back_as_a_call() {
    let file = "DEFAULT_LANGUAGE = \"fr\"\n\n\ndef hello(language=DEFAULT_LANGUAGE):\n    return {\"en\": \"Hello\", \"fr\": \"Bonjour\"}[language]\n";
    let ambiguous = call("Edit", serde_json::json!({"file_path": "app.py", "old_string": "fr", "new_string": "en"}));
    // What a small model does with the calls the error suggests: copies
    // them out as text, which runs nothing.
    let echoed = "To change one line only, make the call with its whole line:\n\
        Edit {\"file_path\": \"app.py\", \"old_string\": \"DEFAULT_LANGUAGE = \\\"fr\\\"\", \"new_string\": \"DEFAULT_LANGUAGE = \\\"en\\\"\"}";
    let made = call(
        "Edit",
        serde_json::json!({"file_path": "app.py", "old_string": "DEFAULT_LANGUAGE = \"fr\"", "new_string": "DEFAULT_LANGUAGE = \"en\""}),
    );
    let run = Scenario::new()
        .file("app.py", file)
        .run(
            &[&call("Read", serde_json::json!({"file_path": "app.py"})), &ambiguous, echoed, &made, "Done."],
            "Make the default English.",
        )
        .await;
    assert!(run.result_output(1).contains("To change one line only"), "{}", run.result_output(1));
    assert_eq!(run.read("app.py"), file.replacen("\"fr\"", "\"en\"", 1));
    assert!(run.render().contains("[the model wrote a tool call as text — offering it the call…]"), "{}", run.render());
    let offer = run.told("[tack] Your reply wrote a tool call as text");
    assert!(
        offer.contains(r#"{"tool": "Edit", "input": {"#) && offer.contains("DEFAULT_LANGUAGE = \\\"en\\\""),
        "{offer}"
    );
}

#[tokio::test]
async fn excerpts_and_unrelated_code_in_an_answer_are_left_alone() {
    let run = Scenario::new()
        .file("util.py", "def parse_date(text):\n    return text\n")
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "util.py"})),
                "It is defined in util.py:\n```python\ndef parse_date(text):\n    return text\n```\nUse it like this:\n```python\nprint(parse_date(\"x\"))\n```",
            ],
            "Where is parse_date?",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.backend.used(), 2, "an answer that changes nothing ends the turn");
}

#[tokio::test]
async fn a_reply_that_names_the_tool_it_would_use_before_any_change_is_asked_for_the_call() {
    let fix = call(
        "Edit",
        serde_json::json!({"file_path": "greet.py", "old_string": "\"Helo, \"", "new_string": "\"Hello, \""}),
    );
    let run = Scenario::new()
        .file("greet.py", "def greet(name):\n    return \"Helo, \" + name\n")
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "greet.py"})),
                "### Step 3: Edit greet.py\n\nWe can use the `Edit` function to fix the greeting.",
                &fix,
                "Fixed the greeting with the `Edit` tool.",
            ],
            "Fix the typo in the greeting.",
        )
        .await;
    assert_eq!(run.read("greet.py"), "def greet(name):\n    return \"Hello, \" + name\n");
    // After the change, naming a tool is part of the answer.
    assert_eq!(run.outcome.text, "Fixed the greeting with the `Edit` tool.");
    assert_eq!(run.backend.used(), 4);
}

#[tokio::test]
async fn a_plan_whose_next_step_is_a_tool_is_asked_for_the_call() {
    let run = Scenario::new()
        .file("lib/numbers.py", "def is_even(n):\n    return n % 2 == 1\n")
        .run(
            &[
                &call("Glob", serde_json::json!({"pattern": "**/numbers.py"})),
                "### Step 2: Read the file\n\n```python\nwith open('lib/numbers.py') as f:\n    f.read()\n```",
                &call("Read", serde_json::json!({"file_path": "lib/numbers.py"})),
                "is_even returns n % 2 == 1.",
            ],
            "The is_even function gives wrong results. Find it and fix it.",
        )
        .await;
    assert_eq!(run.backend.used(), 4, "the plan was not the answer");
    assert!(run.told("[tack] Your reply ended before the tool call").contains("Make that call now"));
    assert_eq!(run.outcome.text, "is_even returns n % 2 == 1.");
}

#[tokio::test]
async fn a_reply_that_announces_a_call_and_stops_is_asked_for_the_call() {
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run(
            &[
                "First I will read the file with this call:",
                &call("Read", serde_json::json!({"file_path": "a.txt"})),
                "It says one.",
            ],
            "What does a.txt say?",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "It says one.");
    let request = run.backend.last_request().unwrap();
    let ask = request.messages[request.messages.len() - 3].text();
    assert!(ask.starts_with("[tack] Your reply ended before the tool call it announced"), "{ask}");

    // Once a turn: announced again, after the call it was asked for, the
    // reply is the answer.
    let run = Scenario::new()
        .file("a.txt", "one\n")
        .run(
            &[
                "First I will read the file with this call:",
                &call("Read", serde_json::json!({"file_path": "a.txt"})),
                "It says one. To check, here is the call:",
            ],
            "What does a.txt say?",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "It says one. To check, here is the call:");
    assert_eq!(run.backend.used(), 3);
}

#[tokio::test]
async fn skills_are_listed_before_the_task_and_loaded_by_the_skill_tool() {
    let run = Scenario::new()
        .file(
            ".tack/skills/release/SKILL.md",
            "---\nname: release\ndescription: How to cut a release.\n---\nBump, tag, push.\n",
        )
        .discover_skills()
        .run(&[&call("Skill", serde_json::json!({"name": "release"})), "Bumped."], "cut a release")
        .await;
    let request = run.backend.last_request().unwrap();
    let task = request.messages[0].text();
    assert!(task.contains("# Skills\n") && task.contains("- release: How to cut a release.\n"), "{task}");
    assert!(request.tools.iter().any(|tool| tool.name == "Skill"));
    assert_eq!(run.result_output(0), "Skill release: How to cut a release.\n\nBump, tag, push.\n");

    let without = Scenario::new().run(&["hi"], "hello").await;
    let request = without.backend.last_request().unwrap();
    assert!(!request.messages[0].text().contains("# Skills"));
    assert!(!request.tools.iter().any(|tool| tool.name == "Skill"), "no skills, no Skill tool");
}

#[tokio::test]
async fn remembered_facts_go_through_review_and_reach_the_next_conversation() {
    let remember = call("Remember", serde_json::json!({"fact": "Run the tests with  make check."}));
    let rejected = Scenario::new().edits(Edits::Reject).run(&[&remember, "ok"], "remember how to test").await;
    assert!(!rejected.exists(".tack/MEMORY.md"), "a rejected memory is not written");
    assert_eq!(rejected.kinds().iter().filter(|k| **k == "edit_proposed").count(), 1);

    let run = Scenario::new().run(&[&remember, "Noted."], "remember how to test").await;
    let memory = run.read(".tack/MEMORY.md");
    let today = &humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10];
    assert_eq!(memory, format!("# Project memory\n\n- {today}: Run the tests with make check.\n"));

    let later = Scenario::new().file(".tack/MEMORY.md", &memory).run(&["hi"], "what now?").await;
    let first = later.backend.last_request().unwrap().messages[0].text();
    assert!(
        first.contains(&format!("# Project memory (from .tack/MEMORY.md; the Remember tool adds to it)\n- {today}: Run the tests with make check.\n")),
        "{first}"
    );
}

#[tokio::test]
async fn rules_of_subfolders_join_the_first_result_there_nearest_first() {
    let run = Scenario::new()
        .file("AGENTS.md", "root rules\n")
        .file("lib/AGENTS.md", "lib rules\n")
        .file("lib/sub/CLAUDE.md", "sub rules\n")
        .file("lib/sub/a.py", "a\n")
        .file("lib/b.py", "b\n")
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "lib/sub/a.py"})),
                &call("Read", serde_json::json!({"file_path": "lib/b.py"})),
                "done",
            ],
            "read them",
        )
        .await;
    assert_eq!(
        run.result_output(0),
        "     1\ta\n\n\n[rules from lib/sub/CLAUDE.md, for the files under lib/sub/]\nsub rules\n\n\n\
         [rules from lib/AGENTS.md, for the files under lib/]\nlib rules\n"
    );
    assert_eq!(run.result_output(1), "     1\tb\n", "rules are shown once a conversation");
}

// ---------------------------------------------------------------- context

#[tokio::test]
async fn a_long_session_is_compacted_and_goes_on_with_calls_paired() {
    let mut scenario = Scenario::new().context_window(5_600);
    let mut script = Vec::new();
    for i in 0..8 {
        let body: String = (0..40).map(|line| format!("file {i} line {line} {}\n", "lorem ipsum ".repeat(2))).collect();
        scenario = scenario.file(&format!("part{i}.txt"), &body);
        script.push(call("Read", serde_json::json!({"file_path": format!("part{i}.txt")})));
    }
    script.push("Read all eight parts.".to_string());
    let texts: Vec<&str> = script.iter().map(String::as_str).collect();
    let run = scenario.run(&texts, "read every part").await;

    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Read all eight parts.");
    assert_eq!(run.history_len, 18, "the history keeps everything");
    let compactions: Vec<(u64, u64)> = run
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::Compaction { tokens_before, tokens_after } => Some((tokens_before, tokens_after)),
            _ => None,
        })
        .collect();
    assert!(!compactions.is_empty());
    assert!(compactions.iter().all(|(before, after)| after < before));
    for event in &run.events {
        if let Event::ContextUsage { used_tokens, context_window } = event.event {
            assert!(used_tokens <= context_window * 8 / 10, "{used_tokens} of {context_window}");
        }
    }
    // The last prompt: the task and the newest results whole, older results summarized, every call answered.
    let request = run.backend.last_request().unwrap();
    let prompt = tack::model::transcript("", &request.messages);
    assert!(prompt.contains("read every part"));
    assert!(prompt.contains("[compacted: full output left out; summary: read part0.txt (40 lines)]"), "{prompt}");
    assert!(prompt.contains("file 7 line 39"));
    let mut open_calls = Vec::new();
    for message in &request.messages {
        for block in &message.blocks {
            match block {
                tack::protocol::Block::ToolUse { id, .. } => open_calls.push(id.clone()),
                tack::protocol::Block::ToolResult { tool_use_id, .. } => {
                    assert_eq!(open_calls.pop().as_ref(), Some(tool_use_id), "a result without its call");
                }
                _ => {}
            }
        }
    }
    assert!(open_calls.is_empty());
}

// ---------------------------------------------------------------- Bash

fn bash(command: &str, timeout_ms: Option<u64>) -> String {
    match timeout_ms {
        Some(ms) => call("Bash", serde_json::json!({"command": command, "timeout_ms": ms})),
        None => call("Bash", serde_json::json!({"command": command})),
    }
}

/// Whether a process whose command line contains `marker` is alive.
fn running(marker: &str) -> bool {
    std::process::Command::new("pgrep").args(["-f", marker]).output().map(|o| o.status.success()).unwrap_or(false)
}

#[tokio::test]
async fn bash_reports_output_stderr_and_exit_codes() {
    let run = Scenario::new()
        .file("a.txt", "one\ntwo\n")
        .run(
            &[
                &[bash("wc -l < a.txt && echo oops >&2", None), bash("exit 3", None), bash("seq 1 200000", None)]
                    .join("\n"),
                "done",
            ],
            "shell",
        )
        .await;
    let results = run.results();
    assert_eq!(results[0], ("Bash".into(), false, "2\n[stderr]\noops\nexit code 0".into()));
    assert_eq!(results[1], ("Bash".into(), true, "exit code 3".into()));
    let long = &results[2].2;
    assert!(
        long.starts_with("1\n2\n3\n")
            && long.contains("bytes of output elided")
            && long.ends_with("200000\nexit code 0")
    );
    assert!(long.len() < 31_000);
}

#[tokio::test]
async fn bash_kills_the_whole_process_group_on_timeout_and_on_exit() {
    let run = Scenario::new()
        .run(
            &[
                &bash("sleep 30.1234 & sleep 30.1234; echo never", Some(300)),
                &bash("sleep 30.5678 & echo started", None),
                "done",
            ],
            "shell",
        )
        .await;
    let results = run.results();
    assert!(results[0].1 && results[0].2.contains("timed out after 300 ms"), "{:?}", results[0]);
    assert!(!results[0].2.contains("never"));
    assert_eq!(results[1], ("Bash".into(), false, "started\nexit code 0".into()));
    assert!(!running("sleep 30.1234"), "a timed-out command's children survived");
    assert!(!running("sleep 30.5678"), "a background child outlived its command");
}

#[tokio::test]
async fn cancelling_a_turn_kills_the_running_command() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let script = vec![ScriptEntry::Text(bash("sleep 30.9012 & sleep 30.9012", None)), ScriptEntry::Text("x".into())];
    let run = Scenario::new().run_entries(script, "shell", cancel).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    let (_, is_error, output) = &run.results()[0];
    assert!(
        *is_error && output.ends_with("cancelled by the user; the command and its children were killed"),
        "{output}"
    );
    assert!(!running("sleep 30.9012"), "the cancelled command's processes survived");
}

#[tokio::test]
async fn bash_is_gated_by_mode_and_command_rules() {
    let run = Scenario::new().mode(PermissionMode::Plan).run(&[&bash("touch made.txt", None), "ok"], "plan").await;
    assert!(!run.exists("made.txt"));
    assert!(!run.backend.last_request().unwrap().tools.iter().any(|t| t.name == "Bash"));

    let deny_rm = Rule { action: RuleAction::Deny, tool: None, path: None, command: Some("rm *".into()) };
    let run = Scenario::new()
        .file("keep.txt", "x")
        .rules(vec![deny_rm])
        .run(&[&bash("echo ok && rm -f keep.txt", None), "ok"], "clean")
        .await;
    assert!(run.exists("keep.txt"));
    assert!(run.result_output(0).contains("denied by rule [deny command=rm *]"), "{}", run.result_output(0));

    let run = Scenario::new()
        .mode(PermissionMode::AutoRead)
        .answers(&[ApprovalDecision::Allow])
        .run(&[&bash("touch made.txt", None), "ok"], "make")
        .await;
    assert_eq!(run.asked.len(), 1);
    assert!(run.asked[0].reason.starts_with("Bash runs a command; it runs in the workspace-write sandbox"));
    assert!(run.exists("made.txt"));
}

#[tokio::test]
async fn a_change_made_again_after_it_was_made_ends_the_turn_with_the_change_in_place() {
    // What the Qwen2.5-Coder 0.5B did: the edit, the same edit twice more
    // (each answered "the change is made already"), and then, with nothing
    // left to do, the edit that undoes it.
    let edit = call(
        "Edit",
        serde_json::json!({"file_path": "app.py", "old_string": "LANG = 'fr'", "new_string": "LANG = 'en'"}),
    );
    let undo = call(
        "Edit",
        serde_json::json!({"file_path": "app.py", "old_string": "LANG = 'en'", "new_string": "LANG = 'fr'"}),
    );
    let read = call("Read", serde_json::json!({"file_path": "app.py"}));
    let run = Scenario::new()
        .file("app.py", "LANG = \"fr\"\n")
        .run(&[&read, &edit, &edit, &edit, &undo, "Done."], "make the language English")
        .await;
    assert_eq!(run.read("app.py"), "LANG = \"en\"\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    let results = run.results();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(
        results[2].2.contains("the change is made already") && results[3].2.contains("made already"),
        "{results:?}"
    );
    let said =
        run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains("the change stands")));
    assert!(said, "the user is told why the turn ended");

    // A change made once more, then other work, goes on as usual.
    let write = call("Write", serde_json::json!({"file_path": "notes.txt", "content": "en\n"}));
    let run = Scenario::new()
        .file("app.py", "LANG = \"fr\"\n")
        .run(&[&read, &edit, &edit, &write, "Done."], "make the language English and note it")
        .await;
    assert_eq!(run.read("notes.txt"), "en\n");
    assert_eq!(run.outcome.text, "Done.");
}

#[tokio::test]
async fn a_change_flipped_back_right_after_it_was_made_is_refused_and_the_turn_ends_with_it() {
    // What the Qwen2.5-Coder 0.5B did: the right edit, then the edit that
    // undoes it, then the right one again, and so on until the iteration
    // limit, ending wherever the flipping stopped.
    let edit = call(
        "Edit",
        serde_json::json!({"file_path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"}),
    );
    let undo = call(
        "Edit",
        serde_json::json!({"file_path": "settings.py", "old_string": "TIMEOUT = 60", "new_string": "TIMEOUT = 30"}),
    );
    let read = call("Read", serde_json::json!({"file_path": "settings.py"}));
    let run = Scenario::new()
        .file("settings.py", "TIMEOUT = 30\n")
        .run(&[&read, &edit, &undo, &undo, &edit, "Done."], "set the timeout to 60")
        .await;
    assert_eq!(run.read("settings.py"), "TIMEOUT = 60\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    let results = run.results();
    assert_eq!(results.len(), 4, "two refused undos end the turn: {results:?}");
    assert!(!results[2].1 && results[2].2.contains("undoing it"), "{results:?}");

    // Or the change, then edits that only restate it (old_string and
    // new_string both its new line).
    let restate = call(
        "Edit",
        serde_json::json!({"file_path": "settings.py", "old_string": "TIMEOUT = 60", "new_string": "TIMEOUT = 60"}),
    );
    let run = Scenario::new()
        .file("settings.py", "TIMEOUT = 30\n")
        .run(&[&read, &edit, &restate, &restate, &undo, "Done."], "set the timeout to 60")
        .await;
    assert_eq!(run.read("settings.py"), "TIMEOUT = 60\n");
    assert_eq!(run.results().len(), 4);
    // Before any change, such an edit is the mistake it always was.
    let run = Scenario::new()
        .file("settings.py", "TIMEOUT = 60\n")
        .run(&[&read, &restate, "Done."], "set the timeout to 60")
        .await;
    assert!(run.results()[1].1, "an error: {:?}", run.results());

    // A command run between the change and its undo (a debug line added,
    // run, and taken out) makes the undo a deliberate one.
    let debug = call(
        "Edit",
        serde_json::json!({"file_path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 30\nprint(TIMEOUT)"}),
    );
    let undebug = call(
        "Edit",
        serde_json::json!({"file_path": "settings.py", "old_string": "TIMEOUT = 30\nprint(TIMEOUT)", "new_string": "TIMEOUT = 30"}),
    );
    let run = Scenario::new()
        .file("settings.py", "TIMEOUT = 30\n")
        .run(&[&read, &debug, &bash("python3 settings.py", None), &undebug, "Done."], "see the timeout")
        .await;
    assert_eq!(run.read("settings.py"), "TIMEOUT = 30\n");
    assert_eq!(run.outcome.text, "Done.");
}

#[tokio::test]
async fn a_call_caught_in_a_cycle_of_lines_is_cut_and_the_model_told_why() {
    // What a small model decoding greedily wrote into a Write of a
    // three-line file, the same lines with the numbers counting up, until
    // max_tokens: the guard cuts it long before the call would close.
    let content: String = (0..200).map(|i| format!("{i}\nTIMEOUT = 60\n{}\nRETRIES = 3\n\n", i + 1)).collect();
    let looping = call("Write", serde_json::json!({"file_path": "settings.py", "content": content}));
    let write = call("Write", serde_json::json!({"file_path": "settings.py", "content": "TIMEOUT = 60\n"}));
    let small = ScriptedBackend::from_texts([looping.as_str(), write.as_str(), "Done."]).with_parameters(1_500_000_000);
    let run = Scenario::new().run_backend(small, "set the timeout to 60", CancellationToken::new()).await;
    let results: Vec<(String, bool)> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolResult { output, is_error, .. } => Some((output.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].1 && results[0].0.contains("kept repeating itself"), "{results:?}");
    // The generation cut short reports what it cost, as the others do.
    let usages: Vec<Usage> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Usage { usage } => Some(*usage),
            _ => None,
        })
        .collect();
    assert_eq!(usages.len(), 3, "{usages:?}");
    assert!(usages[0].completion_tokens > 20 && usages[0].prompt_tokens > 0, "{usages:?}");
    assert!(!results[1].1, "{results:?}");
    assert_eq!(run.read("settings.py"), "TIMEOUT = 60\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);

    // A large model (or one of unknown size) writing the same rows means
    // them: a long table asked for is written whole.
    let large = ScriptedBackend::from_texts([looping.as_str(), "Done."]);
    let run = Scenario::new().run_backend(large, "write the table", CancellationToken::new()).await;
    assert!(!run.results()[0].1, "{:?}", run.results());
    assert_eq!(run.read("settings.py"), content);
}

/// Tool settings for a model that answers with whole files.
fn whole_files() -> tack::config::ToolSettings {
    tack::config::ToolSettings { profile: tack::config::ToolProfile::WholeFiles, ..Default::default() }
}

/// The model's word, in both orders, that a request asks for a change: the
/// first two replies of a whole-file turn.
const CHANGE: [&str; 2] = ["change", "change"];
/// The model's word, in both orders, that a request asks for an answer.
const ANSWER: [&str; 2] = ["answer", "answer"];

/// A whole-file turn on a workspace of `files` that asks for a change, the
/// model replying `replies`.
async fn whole_file_run(files: &[(&str, &str)], replies: &[&str], prompt: &str) -> Run {
    whole_file_turn(files, CHANGE, replies, prompt).await
}

/// A whole-file turn on a workspace of `files`, the model's word on the
/// request's `intent` first, then its `replies`.
async fn whole_file_turn(files: &[(&str, &str)], intent: [&str; 2], replies: &[&str], prompt: &str) -> Run {
    let scenario = files.iter().fold(Scenario::new(), |scenario, (path, text)| scenario.file(path, text));
    let script: Vec<&str> = intent.iter().copied().chain(replies.iter().copied()).collect();
    scenario.tool_settings(whole_files()).run(&script, prompt).await
}

#[tokio::test]
async fn the_projects_rules_go_in_the_system_prompt_not_among_the_files() {
    let run = whole_file_run(
        &[("AGENTS.md", "Use tabs.\n"), ("calc.py", "def add(a, b):\n    return a - b\n")],
        &["calc.py\n```python\ndef add(a, b):\n\treturn a + b\n```\n"],
        // Naming no file, the prompt is handed every file but the rules.
        "Fix the bug.",
    )
    .await;
    assert_eq!(run.read("calc.py"), "def add(a, b):\n\treturn a + b\n");
    let request = run.backend.last_request().unwrap();
    assert!(request.system.contains("The project's rules (from AGENTS.md):\nUse tabs."), "{}", request.system);
    let sent = request.messages.last().unwrap().text();
    assert!(!sent.contains("AGENTS.md"), "{sent}");
}

#[tokio::test]
async fn a_model_answering_with_whole_files_changes_creates_and_adds_to_them() {
    let calc = "def add(a, b):\n    return a + b\n";
    // A changed version of a file: only the change is made, the rest kept;
    // the same file shown again later in the reply does not count twice.
    let reply = "calc.py\n```python\ndef add(a, b):\n    return a - b\n```\n\ncalc.py\n```python\nX = 1\n```\n";
    let run = Scenario::new()
        .file("calc.py", calc)
        .file("notes.md", "Notes.\n")
        .tool_settings(whole_files())
        .run(&["change", "change", reply], "add in calc.py should subtract.")
        .await;
    assert_eq!(run.read("calc.py"), "def add(a, b):\n    return a - b\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    let request = run.backend.last_request().unwrap();
    assert!(request.tools.is_empty(), "offered no tools: {:?}", request.tools);
    let sent = request.messages.last().unwrap().text();
    assert!(sent.starts_with("calc.py\n```\ndef add(a, b):\n    return a + b\n```"), "{sent}");
    // Only the files the prompt points to, when it points to some.
    assert!(!sent.contains("notes.md") && sent.contains("add in calc.py should subtract."), "{sent}");
    let run = Scenario::new()
        .file("calc.py", calc)
        .file("notes.md", "Notes.\n")
        .tool_settings(whole_files())
        .run(&["change", "change", "It adds."], "What does this project do?")
        .await;
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("calc.py\n```") && sent.contains("notes.md\n```\nNotes.\n```"), "{sent}");

    // A new file named in the block's first line; new code alone is added
    // to the file the prompt names.
    let reply = "```python\n# mathutil.py\ndef is_even(n):\n    return n % 2 == 0\n```\n";
    let run = Scenario::new()
        .file("calc.py", calc)
        .tool_settings(whole_files())
        .run(&["change", "change", reply], "Create mathutil.py.")
        .await;
    assert_eq!(run.read("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n");
    // The file asked for is shown empty.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("mathutil.py\n```\n\n```"), "{sent}");
    let reply = "```\ndef subtract(a, b):\n    return a - b\n```\n";
    let run = whole_file_run(&[("calc.py", calc)], &[reply], "Add subtract to calc.py.").await;
    assert_eq!(run.read("calc.py"), format!("{}\n\n\ndef subtract(a, b):\n    return a - b\n", calc.trim_end()));

    // A bare name means the file of that name that was shown, in its folder.
    let run = whole_file_run(
        &[("lib/numbers.py", "def is_even(n):\n    return n % 2 == 1\n")],
        &["numbers.py\n```\ndef is_even(n):\n    return n % 2 == 0\n```\n"],
        "is_even is wrong. Fix it.",
    )
    .await;
    assert_eq!(run.read("lib/numbers.py"), "def is_even(n):\n    return n % 2 == 0\n");
    assert!(!run.dir.path().join("numbers.py").exists());

    // A path the model made up, over a version of the file shown, is that
    // file; over other code, a file it creates.
    let factorial =
        "def factorial(n):\n    result = 1\n    for i in range(2, n + 1):\n        result *= i\n    return result\n";
    let checked = factorial.replace("    result = 1\n", "    if n < 0:\n        raise ValueError(n)\n    result = 1\n");
    let run = whole_file_run(
        &[("mathx.py", factorial)],
        &[&format!("```\nfactorial.py\n```\n```\n{checked}```\n")],
        "factorial should reject negative numbers.",
    )
    .await;
    assert_eq!(run.read("mathx.py"), checked);
    assert!(!run.exists("factorial.py"));
    let run = whole_file_run(
        &[("mathx.py", factorial)],
        &["test_mathx.py\n```\nfrom mathx import factorial\n\nassert factorial(3) == 6\n```\n"],
        "Test factorial.",
    )
    .await;
    assert_eq!(run.read("test_mathx.py"), "from mathx import factorial\n\nassert factorial(3) == 6\n");
    assert_eq!(run.read("mathx.py"), factorial);

    // A dotfile the prompt asks for is made, beside a copy of the code.
    let run = whole_file_run(
        &[("app.py", "print(\"hi\")\n")],
        &["app.py\n```\nprint(\"hi\")\n```\n\n.gitignore\n```\n__pycache__\n.env\n```\n"],
        "Create a .gitignore that ignores __pycache__ folders and .env files.",
    )
    .await;
    assert_eq!(run.read(".gitignore"), "__pycache__\n.env\n");
    assert_eq!(run.read("app.py"), "print(\"hi\")\n");
    // Without a path, a block is the one file the prompt asks to make,
    // unless it is code of a file shown.
    let run = whole_file_run(
        &[("app.py", "print(\"hi\")\n")],
        &["```\nprint(\"hi\")\n```\n\n```\n# Ignore caches\n__pycache__\n```\n"],
        "Create a .gitignore that ignores __pycache__ folders.",
    )
    .await;
    assert_eq!(run.read(".gitignore"), "# Ignore caches\n__pycache__\n");

    // The file the prompt names comes with the project's modules it
    // imports: the test that fails, with the code it tests.
    let mean = "def mean(values):\n    return sum(values) / (len(values) + 1)\n";
    let fixed_mean = "def mean(values):\n    return sum(values) / len(values)\n";
    let run = Scenario::new()
        .file("calc.py", mean)
        .file("test_calc.py", "from calc import mean\n\n\ndef test_mean():\n    assert mean([2, 4]) == 3\n")
        .file("notes.py", "NOTES = []\n")
        .tool_settings(whole_files())
        .run(
            &["change", "change", &format!("calc.py\n```python\n{fixed_mean}```\n")],
            "The test in test_calc.py fails. Fix the code.",
        )
        .await;
    assert_eq!(run.read("calc.py"), fixed_mean);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("calc.py\n```\ndef mean") && !sent.contains("notes.py"), "{sent}");

    // The path fenced instead of the code: the code after it, up to the
    // next fence, is the file's; the copy after it changes nothing.
    let stats = "function maxOf(values) {\n  let best = values[0];\n  for (const v of values) {\n    if (v < best) best = v;\n  }\n  return best;\n}\n";
    let fixed = stats.replace("v < best", "v > best");
    let reply = format!("```\nlib/stats.js\n```\n{fixed}```\n\nlib/stats.js\n```\n{stats}```\n");
    let run = whole_file_run(&[("lib/stats.js", stats)], &[&reply], "maxOf returns the smallest number. Fix it.").await;
    assert_eq!(run.read("lib/stats.js"), fixed);
    // Prose after a fenced path is no code of the file: the block after it is.
    let reply = format!("```\nlib/stats.js\n```\nThe comparison is the wrong way round.\n```js\n{fixed}```\n");
    let run = whole_file_run(&[("lib/stats.js", stats)], &[&reply], "maxOf returns the smallest number. Fix it.").await;
    assert_eq!(run.read("lib/stats.js"), fixed);

    // A version with every line changed is still the file's; a bare path as
    // a block's first line names it when it is a file shown.
    let hello = "def greet(name):\n    return \"Hello, \" + name + \"!\"\n";
    let version = "def greet(name, greeting=\"Hello\"):\n    return greeting + \", \" + name + \"!\"\n";
    for reply in [format!("```\nhello.py\n{version}```\n"), format!("```\n{version}```\n")] {
        let run = Scenario::new()
            .file("hello.py", hello)
            .tool_settings(whole_files())
            .run(&["change", "change", &reply], "Give greet in hello.py a greeting parameter.")
            .await;
        assert_eq!(run.read("hello.py"), version, "{reply}");
    }

    // A copy that differs only in blank lines is no change.
    let run = whole_file_run(
        &[("calc.py", calc)],
        &["calc.py\n```\ndef add(a, b):\n\n    return a + b\n```\n"],
        "Fix calc.py.",
    )
    .await;
    assert_eq!(run.read("calc.py"), calc);
    assert!(!run.events.iter().any(|e| matches!(e.event, Event::ToolCall { .. })));

    // In plan mode the files shown are the plan.
    let run = Scenario::new()
        .file("calc.py", calc)
        .tool_settings(whole_files())
        .mode(PermissionMode::Plan)
        .run(
            &["change", "change", "calc.py\n```\ndef add(a, b):\n    return a - b\n```\n"],
            "add in calc.py should subtract.",
        )
        .await;
    assert_eq!(run.read("calc.py"), calc);
    assert!(run.outcome.text.contains("return a - b"), "{}", run.outcome.text);

    // An answer without code changes nothing and is the answer.
    let run = whole_file_turn(&[("calc.py", calc)], ANSWER, &["It adds."], "What does add do?").await;
    assert_eq!(run.read("calc.py"), calc);
    assert_eq!(run.outcome.text, "It adds.");
}

#[tokio::test]
async fn a_file_the_prompt_asks_to_create_is_asked_for_when_the_reply_changes_prose_instead() {
    // The 1.5B gave README.md a heading for the new file, and no file.
    let readme = "# Utilities\n\nSmall helper modules.\n";
    let heading = "```\n# Utilities\n\nSmall helper modules.\n\n## mathutil.py\n\n```\n";
    let is_even = "mathutil.py\n```\ndef is_even(n):\n    return n % 2 == 0\n```\n";
    let run = whole_file_run(
        &[("README.md", readme)],
        &[heading, is_even],
        "Create a file mathutil.py with a function is_even(n).",
    )
    .await;
    assert_eq!(run.read("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n");
    // The README, neither named nor spoken of, is not the request's to change.
    assert_eq!(run.read("README.md"), readme);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("Reply with the whole new content of mathutil.py"), "{sent}");
    let told = |said: &str| run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains(said)));
    assert!(told("changes README.md, which the request does not ask to change"), "the user is told why");
    // Code that uses the new file changed, and no file created: the file
    // is asked for by name.
    let main = "print(1)\n";
    let uses = "main.py\n```\nfrom mathutil import is_even\n\nprint(is_even(1))\n```\n";
    let run =
        whole_file_run(&[("main.py", main)], &[uses, is_even], "Create a file mathutil.py with a function is_even(n).")
            .await;
    assert_eq!(run.read("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n");
    assert!(run.read("main.py").contains("print(is_even(1))"));
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(
        sent.ends_with("Reply with the whole new content of mathutil.py, in a code block after its path."),
        "{sent}"
    );
    let told = |said: &str| run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains(said)));
    assert!(told("did not create mathutil.py"), "the user is told why the model answers again");
}

#[tokio::test]
async fn a_reply_that_only_copies_files_back_is_asked_once_more_for_the_other_files() {
    let readme = "# Utilities\n\nSmall helper modules.\n";
    let echo = "```\n# Utilities\n\nSmall helper modules.\n```\n";
    let is_even = "```\ndef is_even(n):\n    return n % 2 == 0\n```\n";
    let run =
        whole_file_run(&[("README.md", readme)], &[echo, is_even], "Create mathutil.py with a function is_even(n).")
            .await;
    assert_eq!(run.read("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n");
    assert_eq!(run.read("README.md"), readme);
    // Asked by name, with the file to change shown first.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.starts_with("mathutil.py\n```\n\n```\n\nREADME.md\n```"), "{sent}");
    assert!(
        sent.ends_with(
            "Reply with the whole new content of mathutil.py, changed as asked, in a code block after its path."
        ),
        "{sent}"
    );
    // The user is told why the model answers again.
    let told = |run: &common::Run, words: &str| {
        run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains(words)))
    };
    assert!(told(&run, "asking for mathutil.py by name"));

    // A copy again: nothing changes, and there is no third ask. The first
    // ask is tried afresh, sampled, and the reply that changes what greedy
    // decoding never did is taken.
    let empty = "```\n\n```\n";
    let prompt = "Create mathutil.py with a function is_even(n).";
    let run = whole_file_run(&[("README.md", readme)], &[echo, empty, echo, empty, is_even], prompt).await;
    assert_eq!(run.read("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n");
    assert_eq!(run.backend.last_request().unwrap().resample, Some(2));
    assert!(told(&run, "trying afresh, sampled (1 of 3)") && told(&run, "trying afresh, sampled (2 of 3)"));
    // Three fresh tries that change nothing either: the turn ends unchanged.
    let run = whole_file_run(&[("README.md", readme)], &[echo, empty].repeat(4), prompt).await;
    assert!(!run.dir.path().join("mathutil.py").exists());
    assert_eq!((run.backend.used(), run.outcome.stop_reason), (10, StopReason::EndTurn));
    assert_eq!(run.backend.last_request().unwrap().resample, Some(3));

    // A copy of the one file left: asked for the line, the model writes it fixed.
    const GREET: &str = "def greet(name):\n    return \"Helo, \" + name + \"!\"\n";
    const TEST: &str = "from greet import greet\n\n\ndef test_greet():\n    assert greet(\"Ada\") == \"Hello, Ada!\"\n";
    /// The demo's task, the model's replies in `script`.
    async fn fix_greeting(script: &[&str]) -> common::Run {
        Scenario::new()
            .file("greet.py", GREET)
            .file("test_greet.py", TEST)
            .tool_settings(whole_files())
            .run(&[&CHANGE[..], script].concat(), "The greeting test fails. Fix it.")
            .await
    }
    let fixed = "def greet(name):\n    return \"Hello, \" + name + \"!\"\n";
    let line = "```python\nreturn \"Hello, \" + name + \"!\"\n```\n";
    let run = fix_greeting(&[&format!("```\n{TEST}```\n"), &format!("```\n{GREET}```\n"), line]).await;
    assert_eq!(run.read("greet.py"), fixed);
    assert_eq!(run.read("test_greet.py"), TEST);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.starts_with("greet.py\n```"), "{sent}");
    assert!(
        sent.ends_with("Which line of greet.py must change? Reply with that line only, as it must read."),
        "{sent}"
    );
    assert!(told(&run, "asking for the line to change"));
    // The line shown as it is, then as it must read.
    let explained = "The line that must change is:\n```python\nreturn \"Helo, \" + name + \"!\"\n```\n\
                     It should read:\n```python\nreturn \"Hello, \" + name + \"!\"\n```\n";
    let run = fix_greeting(&[&format!("```\n{GREET}```\n```\n{TEST}```\n"), explained]).await;
    assert_eq!(run.read("greet.py"), fixed);
    // A sentence quoting the line: the quoted code is the line, not the sentence.
    let run = fix_greeting(&[
        &format!("```\n{GREET}```\n```\n{TEST}```\n"),
        "Line 2 should be `return \"Hello, \" + name + \"!\"`\n",
    ])
    .await;
    assert_eq!(run.read("greet.py"), fixed);
    // A line number for an answer: shown that line, the model writes it fixed.
    let run = fix_greeting(&[&format!("```\n{GREET}```\n```\n{TEST}```\n"), "line 2", line]).await;
    assert_eq!(run.read("greet.py"), fixed);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("Line 2 of greet.py reads:\n```\nreturn \"Helo, \" + name + \"!\"\n```"), "{sent}");
    // The line written back as it reads: asked again, sampled, a small
    // model often writes it changed; a sample that fixes nothing is let go.
    let unchanged = "```\nreturn \"Helo, \" + name + \"!\"\n```\n";
    let run =
        fix_greeting(&[&format!("```\n{GREET}```\n```\n{TEST}```\n"), "line 2", unchanged, "return True", line]).await;
    assert_eq!(run.read("greet.py"), fixed);
    assert!(told(&run, "[line 2 of greet.py is not fixed yet — asking again, sampled (2 of 3)…]"));
    let resampled: Vec<Option<u32>> = run.backend.requests().iter().map(|request| request.resample).collect();
    assert_eq!(resampled, [None, None, None, None, None, Some(4), Some(5)]);
    // So is the line quoted as it reads: it points at the line.
    let quoted = "```python\nreturn \"Helo, \" + name + \"!\"\n```\n";
    let run = fix_greeting(&[&format!("```\n{GREET}```\n```\n{TEST}```\n"), quoted, line]).await;
    assert_eq!(run.read("greet.py"), fixed);
    assert!(told(&run, "[the reply named line 2 of greet.py — asking for it as it must read…]"));
    // A line that is not a small change of one of the file's changes nothing
    // (in any of the fresh tries either).
    let (test_copy, greet_copy) = (format!("```\n{TEST}```\n"), format!("```\n{GREET}```\n"));
    let script = [test_copy.as_str(), &greet_copy, "import os\n"].repeat(4);
    let run = Scenario::new()
        .file("greet.py", GREET)
        .file("test_greet.py", TEST)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { max_model_calls: 12, ..Default::default() })
        .run(&[&CHANGE[..], &script].concat(), "The greeting test fails. Fix it.")
        .await;
    assert_eq!(run.read("greet.py"), GREET);
    // Past the turn's budget of model calls, the turn ends, saying so.
    assert_eq!((run.backend.used(), run.outcome.stop_reason), (12, StopReason::MaxIterations));
    assert!(told(&run, "This turn spent its budget (12 model calls"));
    // Every file copied back at once: the line names the file it is in.
    let run = fix_greeting(&[&format!("```\n{GREET}```\n```\n{TEST}```\n"), line]).await;
    assert_eq!(run.read("greet.py"), fixed);
    assert_eq!(run.read("test_greet.py"), TEST);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.ends_with("Which line must change? Reply with that line only, as it must read."), "{sent}");
    // The file the prompt names, copied back: asked for the line, not for
    // the other files.
    let utils = "function capitalize(word) {\n  return word.charAt(0).toUpperCase() + word.slice(0);\n}\n";
    let run = Scenario::new()
        .file("utils.js", utils)
        .file("index.js", "const { capitalize } = require(\"./utils.js\");\n")
        .tool_settings(whole_files())
        .run(
            &[
                CHANGE[0],
                CHANGE[1],
                &format!("```\nutils.js\n{utils}```\n"),
                "```js\nreturn word.charAt(0).toUpperCase() + word.slice(1);\n```\n",
            ],
            "capitalize in utils.js repeats the first letter. Fix it.",
        )
        .await;
    assert_eq!(run.read("utils.js"), utils.replace("slice(0)", "slice(1)"));
    assert!(told(&run, "the reply copied utils.js back unchanged"));
    assert!(!told(&run, "by name"));
    // So is the file that declares what the prompt asks about.
    let stock = "def in_stock(item, stock):\n    return stock.get(item, 0) > 1\n";
    let run = Scenario::new()
        .file("stock.py", stock)
        .file("main.py", "from stock import in_stock\n")
        .tool_settings(whole_files())
        .run(
            &[
                CHANGE[0],
                CHANGE[1],
                &format!("```python\n{stock}```\n"),
                "```python\nreturn stock.get(item, 0) > 0\n```\n",
            ],
            "in_stock says an item with exactly one left is out of stock. Fix it.",
        )
        .await;
    assert_eq!(run.read("stock.py"), stock.replace("> 1", "> 0"));
    assert!(!told(&run, "by name"));
    // A copy with its path as the block's first line is a copy too; the
    // line asked for is an import the file lacks, and it goes on top.
    let stats = "def stddev(xs):\n    return math.sqrt(sum(x * x for x in xs))\n";
    let run = whole_file_run(
        &[("stats.py", stats)],
        &[&format!("```\nstats.py\n{stats}```\n"), "```python\nimport math\n```\n"],
        "Calling stddev fails with NameError: name 'math' is not defined. Fix it.",
    )
    .await;
    assert_eq!(run.read("stats.py"), format!("import math\n\n{stats}"));
    assert!(told(&run, "the reply copied stats.py back unchanged"));

    // A rename in one file: the file that still calls the old name is
    // renamed to match, as an editor's rename does.
    let cart = "def calc_total(prices):\n    return sum(prices)\n";
    let main = "from cart import calc_total\n\nprint(calc_total([1, 2]))  # calc_totals\n";
    let renamed = "def compute_total(prices):\n    return sum(prices)\n";
    let run = whole_file_run(
        &[("cart.py", cart), ("main.py", main)],
        &[&format!("```python\n{renamed}```\n")],
        "Rename the function calc_total to compute_total everywhere in the project.",
    )
    .await;
    assert_eq!(run.read("cart.py"), renamed);
    assert_eq!(run.read("main.py"), "from cart import compute_total\n\nprint(compute_total([1, 2]))  # calc_totals\n");
    assert_eq!(run.backend.used(), 3);
    assert!(told(&run, "renaming calc_total to compute_total there too"));
    // Renamed with its parameters changed: the file that uses it is asked
    // for, shown the change, and changed to match.
    let reworked = "def compute_total(prices, discount=0):\n    return sum(prices)\n";
    let fixed = "from cart import compute_total\n\nprint(compute_total([1, 2], 1))\n";
    let run = whole_file_run(
        &[("cart.py", cart), ("main.py", main)],
        &[&format!("cart.py\n```python\n{reworked}```\n"), &format!("main.py\n```python\n{fixed}```\n")],
        "calc_total should be compute_total, and take a discount.",
    )
    .await;
    assert_eq!(run.read("cart.py"), reworked);
    assert_eq!(run.read("main.py"), fixed);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.starts_with(&format!("cart.py\n```\n{reworked}```\n\nmain.py\n```\n{main}```")), "{sent}");
    assert!(
        sent.ends_with(
            "main.py still uses calc_total, which cart.py no longer declares. Reply with the whole new content of \
             main.py, changed to match, in a code block after its path."
        ),
        "{sent}"
    );
    assert!(told(&run, "main.py still uses calc_total"));
    // A change that keeps every name asks nothing more.
    let run = whole_file_run(
        &[("cart.py", cart), ("main.py", main)],
        &["cart.py\n```python\ndef calc_total(prices):\n    return sum(prices) * 2\n```\n"],
        "Double the total.",
    )
    .await;
    assert_eq!(run.backend.used(), 3);
    assert_eq!(run.read("main.py"), main);

    // A reshaped declaration: the file the prompt asks to change with it,
    // left as it was, is asked for, shown the change.
    let money = "def format_price(amount):\n    return \"$\" + format(amount, \".2f\")\n";
    let shop =
        "from money import format_price\n\n\ndef label(amount):\n    return \"Price: \" + format_price(amount)\n";
    let symbol = "def format_price(amount, symbol=\"$\"):\n    return symbol + format(amount, \".2f\")\n";
    let euro = shop.replace("format_price(amount)\n", "format_price(amount, \"€\")\n");
    let prompt = "format_price in money.py should take a currency symbol, and shop.py should call it with \"€\".";
    let run = whole_file_run(
        &[("money.py", money), ("shop.py", shop)],
        &[&format!("money.py\n```python\n{symbol}```\n"), &format!("shop.py\n```python\n{euro}```\n")],
        prompt,
    )
    .await;
    assert_eq!(run.read("money.py"), symbol);
    assert_eq!(run.read("shop.py"), euro);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.starts_with(&format!("money.py\n```\n{symbol}```\n\nshop.py\n```\n{shop}```")), "{sent}");
    assert!(
        sent.ends_with(
            "money.py now has `def format_price(amount, symbol=\"$\"):`. Reply with the whole new content of \
             shop.py, changed as asked, in a code block after its path."
        ),
        "{sent}"
    );
    assert!(told(&run, "the prompt asks for shop.py too"));
    // Copied back unchanged, it is asked for the line.
    let run = whole_file_run(
        &[("money.py", money), ("shop.py", shop)],
        &[
            &format!("money.py\n```python\n{symbol}```\n"),
            &format!("```python\n{shop}```\n"),
            "```python\n    return \"Price: \" + format_price(amount, \"€\")\n```\n",
        ],
        prompt,
    )
    .await;
    assert_eq!(run.read("money.py"), symbol);
    assert_eq!(run.read("shop.py"), euro);
    assert!(told(&run, "the reply copied shop.py back unchanged"));
    // A file the prompt does not name is not asked for: callers keep working.
    let run = whole_file_run(
        &[("money.py", money), ("shop.py", shop)],
        &[&format!("money.py\n```python\n{symbol}```\n")],
        "format_price in money.py should take a currency symbol.",
    )
    .await;
    assert_eq!(run.backend.used(), 3);
    assert_eq!(run.read("shop.py"), shop);

    // A question is answered, not retried: a copy of a file may be the answer.
    let run = Scenario::new()
        .file("config.py", "PORT = 8080\n")
        .file("server.py", "from config import PORT\n")
        .tool_settings(whole_files())
        .run(&["answer", "answer", "It listens on:\n```\nPORT = 8080\n```\n"], "Which port does the server use?")
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.backend.used(), 3);
}

#[tokio::test]
async fn a_request_the_model_is_torn_on_is_the_change_its_answer_shows() {
    // "Can you fix it?": the 1.5B said change one way round and answer the
    // other, and asked to work its answer out, wrote the file with the fix.
    let playlist = "function total(ids) {\n  let sum = 0;\n  for (const id of ids) {\n    sum += get(id);\n  }\n  return sum;\n}\n";
    let fixed = playlist.replace("sum += get(id)", "sum += await get(id)").replace("function", "async function");
    let reply = format!("Answer: `get` returns a promise.\n\n```javascript\n{fixed}```\n");
    let prompt = "total in playlist.js returns NaN. Can you fix it?";
    let run = Scenario::new()
        .file("playlist.js", playlist)
        .tool_settings(whole_files())
        .run(&["change", "answer", &reply], prompt)
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.read("playlist.js"), fixed);

    // Where the model says answer both ways round, code in its answer is
    // an answer: the file stays as it is.
    let run = Scenario::new()
        .file("playlist.js", playlist)
        .tool_settings(whole_files())
        .run(&["answer", "answer", &reply], prompt)
        .await;
    assert_eq!(run.read("playlist.js"), playlist);
    assert_eq!(run.outcome.text, "`get` returns a promise.");
}

#[tokio::test]
async fn an_import_line_fixed_to_another_name_renames_its_uses_in_the_file() {
    // The 0.5B copied main.py back, then wrote the import line fixed alone.
    let config = "def read_config():\n    return {\"debug\": True}\n";
    let main = "from config import load_config\n\nconfig = load_config()\nprint(config)\n";
    let run = whole_file_run(
        &[("config.py", config), ("main.py", main)],
        &[&format!("main.py\n```\n{main}```\n"), "```python\nfrom config import read_config\n```\n"],
        "main.py fails with ImportError: cannot import name 'load_config' from 'config'. The function in config.py is called read_config. Fix main.py.",
    )
    .await;
    assert_eq!(run.read("main.py"), "from config import read_config\n\nconfig = read_config()\nprint(config)\n");
    assert_eq!(run.read("config.py"), config);
}

#[tokio::test]
async fn a_file_named_for_the_line_is_asked_for_its_line() {
    // The 1.5B copied the files back, then answered "trip.py" for trips.py.
    let geo = "def distance_km(lat1, lon1, lat2, lon2):\n    return abs(lat2 - lat1) + abs(lon2 - lon1)\n";
    let trips = "from geo import distance_km\n\n\ndef leg(a, b):\n    \
                 return distance_km(a[\"lon\"], a[\"lat\"], b[\"lon\"], b[\"lat\"])\n";
    let fixed = "    return distance_km(a[\"lat\"], a[\"lon\"], b[\"lat\"], b[\"lon\"])";
    let run = whole_file_run(
        &[("geo.py", geo), ("trips.py", trips)],
        &[
            &format!("geo.py\n```\n{geo}```\n\ntrips.py\n```\n{trips}```\n"),
            "trip.py\n",
            &format!("```\n{fixed}\n```\n"),
        ],
        "Every leg length of the trip planner seems off; please find and fix the cause.",
    )
    .await;
    assert_eq!(run.read("trips.py"), format!("from geo import distance_km\n\n\ndef leg(a, b):\n{fixed}\n"));
    assert_eq!(run.read("geo.py"), geo);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("Which line of trips.py must change?"), "{sent}");
}

#[tokio::test]
async fn a_function_named_for_the_line_is_asked_for_as_it_must_read() {
    // The 1.5B answered `leg_lengths` where the change goes.
    let geo = "def distance_km(lat1, lon1, lat2, lon2):\n    return abs(lat2 - lat1) + abs(lon2 - lon1)\n";
    let trips = "from geo import distance_km\n\n\ndef leg_lengths(stops):\n    return [\n        \
                 distance_km(a[\"lon\"], a[\"lat\"], b[\"lon\"], b[\"lat\"])\n        \
                 for a, b in zip(stops, stops[1:])\n    ]\n\n\ndef total_km(stops):\n    return sum(leg_lengths(stops))\n";
    let function = "def leg_lengths(stops):\n    return [\n        distance_km(a[\"lat\"], a[\"lon\"], b[\"lat\"], b[\"lon\"])\n        \
                    for a, b in zip(stops, stops[1:])\n    ]\n";
    let run = whole_file_run(
        &[("geo.py", geo), ("trips.py", trips)],
        &[
            &format!("geo.py\n```\n{geo}```\n\ntrips.py\n```\n{trips}```\n"),
            "`leg_lengths`\n",
            &format!("```python\n{function}```\n"),
        ],
        "Every leg length of the trip planner seems off; please find and fix the cause.",
    )
    .await;
    assert_eq!(
        run.read("trips.py"),
        trips.replace(
            "a[\"lon\"], a[\"lat\"], b[\"lon\"], b[\"lat\"]",
            "a[\"lat\"], a[\"lon\"], b[\"lat\"], b[\"lon\"]"
        )
    );
    assert_eq!(run.read("geo.py"), geo);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("Reply with the whole new code of leg_lengths in trips.py, changed as asked"), "{sent}");
}

#[tokio::test]
async fn a_copy_without_the_files_docstring_is_a_copy_and_asked_for_the_line() {
    // The 0.5B wrote loans.py back unchanged but for its docstring.
    let loans = "\"\"\"Loan bookkeeping.\"\"\"\n\nfrom datetime import date\n\n\n\
                 def is_overdue(due: date, today: date) -> bool:\n    \"\"\"True once the loan is past its due date.\"\"\"\n    \
                 return today >= due\n\n\ndef days_late(due: date, today: date) -> int:\n    \
                 return (today - due).days if is_overdue(due, today) else 0\n";
    let headless = loans.split_once("\n\n").unwrap().1;
    let run = whole_file_run(
        &[("loans.py", loans)],
        &[&format!("```python\n{headless}```\n"), "```python\nreturn today > due\n```\n"],
        "is_overdue flags a book as overdue on its due date itself, but a loan should only count as overdue from the day after. Please fix it.",
    )
    .await;
    assert_eq!(run.read("loans.py"), loans.replace("today >= due", "today > due"));
}

#[tokio::test]
async fn a_changed_file_that_still_uses_what_the_change_removes_is_asked_for_again() {
    // The 1.5B removed read_csv_events and its import, and left the call.
    // (With a parameter of its own, it is no wrapper the harness inlines.)
    let events = "def read_events(path, fmt=\"csv\"):\n    return [path, fmt]\n\n\n\
                  def read_csv_events(path, strict=False):\n    return read_events(path, fmt=\"csv\")\n\n\n\
                  def count(events):\n    return len(events)\n";
    let report = "from events import read_csv_events, read_events\n\n\n\
                  def load(path):\n    if path.endswith(\".json\"):\n        return read_events(path, fmt=\"json\")\n\
                  \x20   return read_csv_events(path)\n";
    let events_after =
        "def read_events(path, fmt=\"csv\"):\n    return [path, fmt]\n\n\ndef count(events):\n    return len(events)\n";
    let half_done = report.replace("read_csv_events, read_events", "read_events");
    let done = half_done.replace("read_csv_events(path)", "read_events(path, fmt=\"csv\")");
    let run = whole_file_run(
        &[("events.py", events), ("report.py", report)],
        &[
            &format!("events.py\n```\n{events_after}```\n\nreport.py\n```\n{half_done}```\n"),
            &format!("report.py\n```\n{done}```\n"),
        ],
        "Remove the deprecated read_csv_events function and switch its one caller over to its replacement.",
    )
    .await;
    assert_eq!(run.read("events.py"), events_after);
    assert_eq!(run.read("report.py"), done);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("report.py still uses read_csv_events, which events.py no longer declares."), "{sent}");
    // Shown once, as the change left it.
    assert_eq!(sent.matches("report.py\n```").count(), 1, "{sent}");
    assert!(sent.contains(&half_done), "{sent}");
}

#[tokio::test]
async fn a_linters_findings_go_with_the_ask_for_the_line_to_change() {
    // The 0.5B copied linecount.sh back, named line 12, and copied that
    // back too: it could not see that `$f` splits at a space.
    let script = include_str!("../benches/tasks/sh-spaces/workspace/linecount.sh");
    let prompt = "linecount.sh breaks with \"ambiguous redirect\" when a file name has a space in it. Fix it.";
    let copy = format!("```bash\n{script}```\n");
    let run = whole_file_run(
        &[("linecount.sh", script)],
        &[&copy, "It is line 12 that needs to change.", "n=$(wc -l < \"$f\")"],
        prompt,
    )
    .await;
    assert_eq!(run.read("linecount.sh"), script.replace("< $f)", "< \"$f\")"));
    // The linter ran as a step the user sees, once, before the first ask for the line.
    let results = run.results();
    let linted: Vec<&(String, bool, String)> = results.iter().filter(|(name, ..)| name == "Bash").collect();
    assert_eq!(linted.len(), 1, "{results:?}");
    assert!(linted[0].2.contains("linecount.sh:12:"), "{results:?}");
    let asks: Vec<String> =
        run.backend.requests().iter().map(|request| request.messages.last().unwrap().text()).collect();
    let finding = "shellcheck: Double quote to prevent globbing and word splitting.";
    assert!(
        asks[3].ends_with(&format!(
            "Which line of linecount.sh must change?\nA linter finds:\n- line 12 of linecount.sh, `n=$(wc -l < $f)`: \
             {finding}\nReply with that line only, as it must read."
        )),
        "{}",
        asks[3]
    );
    assert!(
        asks[4].ends_with(&format!(
            "Line 12 of linecount.sh reads:\n```\nn=$(wc -l < $f)\n```\n{finding}\nReply with that line only, as it must read."
        )),
        "{}",
        asks[4]
    );
}

#[tokio::test]
async fn the_calls_of_a_wrapper_the_change_removes_become_what_it_returned() {
    // The 0.5B removed read_csv_events from events.py and, asked for
    // report.py to match, copied it back.
    let events = include_str!("../benches/tasks/remove-deprecated-reader/workspace/events.py");
    let report = include_str!("../benches/tasks/remove-deprecated-reader/workspace/report.py");
    let (head, rest) = events.split_once("\n\ndef read_csv_events").unwrap();
    let events_after =
        format!("{head}\n\ndef attendance_by_member{}", rest.split_once("def attendance_by_member").unwrap().1);
    let run = whole_file_run(
        &[("events.py", events), ("report.py", report)],
        &[&format!("events.py\n```python\n{events_after}```\n"), &format!("```python\n{report}```\n")],
        "Remove the deprecated read_csv_events function and switch its one caller over to its replacement.",
    )
    .await;
    assert_eq!(run.read("events.py"), events_after);
    let switched = report
        .replace(
            "from events import attendance_by_member, read_csv_events, read_events",
            "from events import attendance_by_member, read_events",
        )
        .replace("return read_csv_events(path)", "return read_events(path, fmt=\"csv\")");
    assert_ne!(switched, report);
    assert_eq!(run.read("report.py"), switched);
    assert_eq!(run.backend.requests().len(), 3, "the caller is switched over without asking the model again");
}

#[tokio::test]
async fn a_version_that_leaves_out_what_the_file_still_uses_changes_nothing() {
    // The 0.5B wrote recipes.py again without its RECIPES table, which the
    // function it renamed still reads.
    let recipes = "\"\"\"The recipe book.\"\"\"\n\nRECIPES = {\n    \"pancakes\": {\"serves\": 4},\n}\n\n\n\
                   def fetch_rec(name):\n    \"\"\"The recipe called name.\"\"\"\n    return RECIPES[name.lower()]\n";
    let reply = "```python\nfrom recipes import load_recipe\n\ndef load_recipe(name):\n    \
                 \"\"\"The recipe called name.\"\"\"\n    return RECIPES[name.lower()]\n```\n";
    let run = whole_file_run(&[("recipes.py", recipes)], &[reply], "Rename fetch_rec to load_recipe.").await;
    assert_eq!(run.read("recipes.py"), recipes);
    let told =
        run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains("recipes.py leaves")));
    assert!(told, "the user is told why nothing changed");
    // The 0.5B's reply as it was: the table gone, two imports made up.
    let recipes = include_str!("../benches/tasks/rename-fetch-rec/workspace/recipes.py");
    let reply = r#"```python
from recipes import load_recipe
from scale import scaled

def load_recipe(name):
    """Return a copy of the recipe called `name` (case-insensitive).

    Raises KeyError when there is no such recipe.
    """
    key = name.strip().lower()
    if key not in RECIPES:
        raise KeyError(f"no recipe named {name!r}")
    recipe = RECIPES[key]
    return {"name": key, "serves": recipe["serves"],
            "ingredients": dict(recipe["ingredients"])}

def ingredient_names(name):
    """Sorted ingredient names of a recipe, without their units."""
    return sorted(i.rsplit("_", 1)[0] for i in load_recipe(name)["ingredients"])
```
"#;
    let run = whole_file_run(&[("recipes.py", recipes)], &[reply], "Rename fetch_rec to load_recipe.").await;
    assert_eq!(run.read("recipes.py"), recipes);
    let told = run.events.iter().any(|e| {
        matches!(&e.event, Event::Text { text } if text.contains("recipes.py leaves out RECIPES, which it still uses"))
    });
    assert!(told, "the user is told why nothing changed");
}

#[tokio::test]
async fn asked_for_the_line_a_model_may_write_the_function_fixed_or_the_one_asked_for() {
    // A line the function lacks: the function written with it is the fix.
    let tags = "def normalize_tags(raw):\n    result = []\n    for part in raw.split(\",\"):\n        \
                tag = part.strip()\n        if tag:\n            result.append(tag)\n\n\n\
                def format_tags(tags):\n    return \" \".join(tags)\n";
    let with_return = "def normalize_tags(raw):\n    result = []\n    for part in raw.split(\",\"):\n        \
                       tag = part.strip()\n        if tag:\n            result.append(tag)\n    return result\n";
    let run = whole_file_run(
        &[("tags.py", tags)],
        &[&format!("```python\n{tags}```\n"), &format!("```python\n{with_return}```\n")],
        "normalize_tags() in tags.py always returns None. Fix it.",
    )
    .await;
    assert_eq!(run.read("tags.py"), tags.replace("result.append(tag)\n", "result.append(tag)\n    return result\n"));
    // The function the prompt asks for: it goes into the file it names.
    let lists = "def flatten(nested):\n    return [x for inner in nested for x in inner]\n";
    let chunk = "def chunk(items, size):\n    return [items[i:i + size] for i in range(0, len(items), size)]\n";
    let run = whole_file_run(
        &[("listutils.py", lists)],
        &[&format!("```python\n{lists}```\n"), &format!("```python\n{chunk}```\n")],
        "Add a function chunk(items, size) to listutils.py that splits a list into lists of at most size items.",
    )
    .await;
    assert_eq!(run.read("listutils.py"), format!("{lists}\n\n{chunk}"));
    // The function restated unchanged changes nothing.
    let run = whole_file_run(
        &[("tags.py", tags)],
        &[&format!("```python\n{tags}```\n"), &format!("```python\n{tags}```\n")],
        "normalize_tags() in tags.py always returns None. Fix it.",
    )
    .await;
    assert_eq!(run.read("tags.py"), tags);
}

#[tokio::test]
async fn a_question_answered_with_a_files_copy_is_asked_for_the_answer() {
    let levels = "QUIET = \"WARNING\"\nLOUD = \"DEBUG\"\n";
    let profiles = "import levels\n\nPROFILES = {\"production\": levels.QUIET, \"development\": levels.LOUD}\n";
    let run = whole_file_turn(
        &[("levels.py", levels), ("profiles.py", profiles)],
        ANSWER,
        &[&format!("```python\n# profiles.py\n{profiles}```\n"), "The production profile runs at WARNING."],
        "Which log level does the app run at with the production profile",
    )
    .await;
    assert_eq!(run.outcome.text, "The production profile runs at WARNING.");
    assert_eq!(run.read("profiles.py"), profiles);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.ends_with("Answer the question in one sentence. Change no file."), "{sent}");
    // A question changes no file: a reply that changes one is asked for the
    // answer, and the change is not made.
    let main = "from profiles import PROFILES\n\nstart(\"development\")\n";
    let run = whole_file_turn(
        &[("levels.py", levels), ("profiles.py", profiles), ("main.py", main)],
        ANSWER,
        &[
            &format!("main.py\n```python\n{}```\n", main.replace("development", "production")),
            "The production profile runs at WARNING.",
        ],
        "Which log level does the app run at with the production profile?",
    )
    .await;
    assert_eq!(run.outcome.text, "The production profile runs at WARNING.");
    assert_eq!(run.read("main.py"), main);
    assert!(run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains("did not answer"))));
    // A question that also asks for a change is a change, by the model's word.
    let numbers = "def is_even(n):\n    return n % 2 == 1\n";
    let run = whole_file_run(
        &[("numbers.py", numbers)],
        &[&format!("```python\n{}```\n", numbers.replace("== 1", "== 0"))],
        "What is wrong with is_even in numbers.py? Fix it.",
    )
    .await;
    assert_eq!(run.read("numbers.py"), numbers.replace("== 1", "== 0"));
}

#[tokio::test]
async fn another_files_copy_under_a_files_path_is_not_added_to_it() {
    // The 0.5B put report.py's text under the name grades.py.
    let grades = "def average(scores):\n    return sum(scores) / len(scores)\n\n\n\
                  def letter_grade(scores):\n    avg = average(scores)\n    return \"A\" if averge >= 90 else \"B\"\n";
    let report = "from grades import letter_grade\n\nSTUDENTS = {\"ana\": [95, 88]}\n\n\
                  for name, scores in STUDENTS.items():\n    print(name, letter_grade(scores))\n";
    let run = whole_file_run(
        &[("grades.py", grades), ("report.py", report)],
        &[&format!("grades.py\n```\n{report}```\n\nreport.py\n```\n{report}```\n")],
        "letter_grade crashes with a NameError for every list of scores I give it. Fix it.",
    )
    .await;
    assert_eq!(run.read("grades.py"), grades);
    assert_eq!(run.read("report.py"), report);
}

#[tokio::test]
async fn a_whole_file_change_waits_for_approval_like_any_edit() {
    let reply = "calc.py\n```\ndef add(a, b):\n    return a - b\n```\n";
    let run = Scenario::new()
        .file("calc.py", "def add(a, b):\n    return a + b\n")
        .tool_settings(whole_files())
        .mode(PermissionMode::Ask)
        .answers(&[ApprovalDecision::Deny])
        .run(&["change", "change", reply], "add should subtract.")
        .await;
    assert_eq!(run.asked.len(), 1);
    assert_eq!(run.read("calc.py"), "def add(a, b):\n    return a + b\n");
}

#[tokio::test]
async fn an_adaptive_model_is_handed_the_files_when_they_fit_and_offered_tools_when_they_do_not() {
    let adaptive = || tack::config::ToolSettings { profile: tack::config::ToolProfile::Adaptive, ..Default::default() };
    let calc = "def add(a, b):\n    return a + b\n";
    let reply = "calc.py\n```\ndef add(a, b):\n    return a - b\n```\n";
    // A small project: handed over whole, no tools.
    let run = Scenario::new()
        .file("calc.py", calc)
        .tool_settings(adaptive())
        .run(&["change", "change", reply], "add should subtract.")
        .await;
    assert_eq!(run.read("calc.py"), "def add(a, b):\n    return a - b\n");
    let request = run.backend.last_request().unwrap();
    assert!(request.tools.is_empty(), "{:?}", request.tools);

    // A project larger than one message goes through the pipeline. The
    // prompt naming nothing the code map holds: tools, to search it.
    let long: String = (0..500).map(|i| format!("LINE_{i} = {i}\n")).collect();
    let large =
        || Scenario::new().file("calc.py", calc).file("data.py", &long).tool_settings(adaptive()).pipeline(no_check());
    let run = large().run(&["change", "change", "It adds."], "The tests fail. Fix it.").await;
    let request = run.backend.last_request().unwrap();
    assert!(request.tools.iter().any(|t| t.name == "Grep"), "{:?}", request.tools);
    // The prompt pointing at a definition: that definition, changed alone.
    let fixed = "```python\ndef add(a, b):\n    return a - b\n```\n";
    let run = large().run(&["change", "change", fixed], "add in calc.py should subtract.").await;
    assert_eq!(run.read("calc.py"), "def add(a, b):\n    return a - b\n");
    assert!(run.backend.last_request().unwrap().tools.is_empty());
    // Naming nothing, but sharing words with one definition: that one.
    let documented = "def add(a, b):\n    \"\"\"The sum of two numbers.\"\"\"\n    return a + b\n";
    let run = Scenario::new()
        .file("calc.py", documented)
        .file("data.py", &long)
        .tool_settings(adaptive())
        .pipeline(no_check())
        .run(&["change", "change", fixed], "Adding two numbers gives a wrong result.")
        .await;
    let request = run.backend.last_request().unwrap();
    assert!(request.tools.is_empty(), "{:?}", request.tools);
    let sent = request.messages.last().unwrap().text();
    assert!(sent.contains("calc.py (lines 1 to 3 of 3)\n```python\ndef add") && !sent.contains("LINE_1"), "{sent}");
}

#[tokio::test]
async fn two_files_written_in_one_block_each_headed_by_its_path_are_both_changed() {
    let text = "import re\n\n\ndef slugify(title):\n    return \"-\".join(re.findall(r\"\\w+\", title))\n";
    let test = "from text import slugify\n\n\ndef test_slug():\n    assert slugify(\"A B\") == \"a-b\"\n";
    // The 1.5B coder's way: one block, each file after its path in a comment.
    let reply = "Lowercase the title first.\n\n```python\n# text.py\nimport re\n\n\ndef slugify(title):\n    \
                 return \"-\".join(re.findall(r\"\\w+\", title.lower()))\n\n\n# test_text.py\nfrom text import \
                 slugify\n\n\ndef test_slug():\n    assert slugify(\"A B\") == \"a-b\"\n```\n";
    let run = whole_file_run(
        &[("text.py", text), ("test_text.py", test)],
        &[reply],
        "slugify keeps capital letters in text.py. Fix it.",
    )
    .await;
    assert_eq!(run.read("text.py"), text.replace("title))", "title.lower()))"));
    // The test, copied back under its own path, is no part of text.py.
    assert_eq!(run.read("test_text.py"), test);
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn a_reply_that_changes_no_file_asks_for_the_named_file_whole() {
    let validate = "def parse_age(text):\n    return int(text)\n";
    let prompt = "parse_age in validate.py should raise ValueError with the message \"age must be a number\" when \
                  the input is not a number.";
    // The 1.5B coder's reply: blocks that hold only the path.
    let lost = "```\nvalidate.py\n```\n```\nvalidate.py\n```";
    let whole = "```python\n# validate.py\ndef parse_age(text):\n    try:\n        return int(text)\n    except \
                 ValueError:\n        raise ValueError(\"age must be a number\")\n```";
    let run = whole_file_run(&[("validate.py", validate)], &[lost, whole], prompt).await;
    assert!(run.read("validate.py").contains("except ValueError:"), "{}", run.read("validate.py"));
    let asked = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(asked.contains("Reply with the whole new content of validate.py"), "{asked}");

    // The change told in a sentence that names the file: asked for that
    // file, the model writes it.
    let numbers = "def is_even(n):\n    return n % 2 == 1\n";
    let app = "from lib.numbers import is_even\n\nprint(is_even(4))\n";
    let told = "In `lib/numbers.py`, the `is_even` function should return `n % 2 == 0` instead of `n % 2 == 1`.";
    let whole = "lib/numbers.py\n```python\ndef is_even(n):\n    return n % 2 == 0\n```";
    let files = [("app.py", app), ("lib/numbers.py", numbers)];
    let run =
        whole_file_run(&files, &[told, whole], "The is_even function gives wrong results. Find it and fix it.").await;
    assert_eq!(run.read("lib/numbers.py"), "def is_even(n):\n    return n % 2 == 0\n");
    assert_eq!(run.read("app.py"), app);
    // A question is answered in a sentence: no file is asked for.
    for prompt in ["What is wrong with is_even?", "Explain what is_even in lib/numbers.py does"] {
        let run = whole_file_turn(&files, ANSWER, &[told], prompt).await;
        assert_eq!(run.backend.used(), 3, "{prompt}");
        assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    }

    // A statement that changes the file, instead of the file: asked for
    // the file, the model writes it.
    let schema = "CREATE TABLE users (\n    id INTEGER PRIMARY KEY,\n    name TEXT NOT NULL\n);\n";
    let alter = "```sql\nALTER TABLE users ADD COLUMN email TEXT NOT NULL;\n```";
    let whole = "schema.sql\n```sql\nCREATE TABLE users (\n    id INTEGER PRIMARY KEY,\n    name TEXT NOT NULL,\n    \
                 email TEXT NOT NULL\n);\n```";
    let prompt = "Add an email column (TEXT, not null) to the users table in schema.sql.";
    let run = whole_file_run(&[("schema.sql", schema)], &[alter, whole], prompt).await;
    assert!(run.read("schema.sql").contains("    email TEXT NOT NULL\n);"), "{}", run.read("schema.sql"));
    // A shorter block under the path is a part, not the whole: the lines it
    // lacks are not deleted.
    let settings = "A = 1\nB = 2\n";
    let run = whole_file_run(
        &[("settings.py", settings)],
        &["settings.py\n```python\nB = 3\n```"],
        "Set B to 3 in settings.py.",
    )
    .await;
    assert!(run.read("settings.py").starts_with("A = 1\n"), "{}", run.read("settings.py"));
}

#[tokio::test]
async fn the_modules_that_the_file_declaring_a_named_function_imports_are_handed_over_with_it() {
    let invoice = "from billing.line import Line\n\n\nclass Invoice:\n    def __init__(self):\n        self.lines = \
                   []\n\n    def total(self):\n        return sum(line.amount() for line in self.lines)\n";
    let line = "class Line:\n    def __init__(self, price, quantity):\n        self.price = price\n        \
                self.quantity = quantity\n\n    def amount(self):\n        return self.price\n";
    let files = [
        ("billing/__init__.py", "\n"),
        ("billing/invoice.py", invoice),
        ("billing/line.py", line),
        ("billing/tax.py", "RATE = 0.2\n"),
    ];
    let run =
        whole_file_run(&files, &["No change."], "The total of an invoice ignores the quantity of each line.").await;
    let attached: Vec<&Event> = run.events.iter().map(|e| &e.event).filter(|e| e.kind() == "files_attached").collect();
    // invoice.py declares `total`; what it sums is in line.py.
    let paths = vec!["billing/invoice.py".to_string(), "billing/line.py".to_string()];
    assert_eq!(attached, [&Event::FilesAttached { paths }]);
}

#[tokio::test]
async fn a_reply_that_changes_nothing_is_asked_for_the_file_most_to_do_with_the_prompt() {
    // The 0.5B answered with empty code blocks. Of the two files, only
    // validate.js holds "short" as well as "password".
    let signup = "const { passwordErrors } = require('./validate');\n\nfunction signup(name, password) {\n  \
                  return passwordErrors(password);\n}\n";
    let validate = "function passwordErrors(password) {\n  const errors = [];\n  if (password.length < 8) {\n    \
                    errors.push('Password too short.');\n  }\n  return errors;\n}\n";
    let fixed = validate.replace("Password too short.", "Password must be at least 8 characters long.");
    let run = whole_file_run(
        &[("signup.js", signup), ("validate.js", validate)],
        &["```\n```\n", &format!("validate.js\n```js\n{fixed}```\n")],
        "A password that is too short should be told \"Password must be at least 8 characters long.\"",
    )
    .await;
    assert_eq!(run.read("validate.js"), fixed);
    assert_eq!(run.read("signup.js"), signup);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(
        sent.ends_with(
            "Reply with the whole new content of validate.js, changed as asked, in a code block after its path."
        ),
        "{sent}"
    );
}

#[tokio::test]
async fn a_number_in_the_prompt_is_no_file_to_make() {
    let tax = "def tax(amount):\n    return round(amount * 0.2, 2)\n";
    let lost = "```\ntax.py\n```\n```\ntax.py\n```\n";
    let whole = "tax.py\n```python\nTAX_RATE = 0.2\n\n\ndef tax(amount):\n    return round(amount * TAX_RATE, 2)\n```";
    let prompt = "Move the 0.2 in tax.py into a module-level constant named TAX_RATE and use it.";
    let run = whole_file_run(&[("tax.py", tax)], &[lost, whole], prompt).await;
    // "0.2" was handed over as a file to create, so tax.py was not the one
    // file to ask for.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(!sent.contains("0.2\n```"), "{sent}");
    assert!(run.read("tax.py").contains("amount * TAX_RATE"), "{}", run.read("tax.py"));
    assert!(!run.dir.path().join("0.2").exists());
}

#[tokio::test]
async fn a_json_file_shown_whole_is_its_new_content_not_a_tool_call() {
    let config = "{\n  \"name\": \"shop\",\n  \"port\": 8080\n}\n";
    let reply = "To add it, change the file as follows:\n\n**config.json**\n\n```json\n{\n  \"name\": \"shop\",\n  \
                 \"port\": 8080,\n  \"debug\": false\n}\n```\n";
    let run =
        whole_file_run(&[("config.json", config)], &[reply], "Add a \"debug\" setting, false, to config.json.").await;
    assert_eq!(run.read("config.json"), "{\n  \"name\": \"shop\",\n  \"port\": 8080,\n  \"debug\": false\n}\n");
    // The object named "shop" was never taken for a call of a tool "shop".
    let calls: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolCall { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["Edit"]);
}

#[tokio::test]
async fn a_reply_that_changes_only_comments_is_a_copy_and_is_asked_for_the_line() {
    // The 0.5B, asked for a fix it could not see, turned `//!` into `///`.
    let stats = "//! Helpers.\n\npub fn windows(n: usize, width: usize) -> usize {\n    n - width\n}\n";
    let run = whole_file_run(
        &[("src/stats.rs", stats)],
        &[&format!("src/stats.rs\n```rust\n{}```\n", stats.replace("//!", "///")), "```rust\n    n - width + 1\n```\n"],
        "windows in src/stats.rs counts one window too few. Fix it.",
    )
    .await;
    let notified =
        |words: &str| run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains(words)));
    assert!(notified("[the reply changes only comments of src/stats.rs — not changed]"));
    assert!(notified("[the reply copied src/stats.rs back unchanged — asking for the line to change…]"));
    assert_eq!(run.read("src/stats.rs"), stats.replace("n - width", "n - width + 1"));
    // Asked about comments, a change to them is the change.
    let run = whole_file_run(
        &[("src/stats.rs", stats)],
        &[&format!("src/stats.rs\n```rust\n{}```\n", stats.replace("Helpers.", "Counting helpers."))],
        "Make the module comment of src/stats.rs say what the helpers count.",
    )
    .await;
    assert_eq!(run.read("src/stats.rs"), stats.replace("Helpers.", "Counting helpers."));
}

#[tokio::test]
async fn a_reply_that_stops_short_or_copies_under_a_new_name_changes_nothing() {
    // The 0.5B's playlist.js came back without the `require.main` block at
    // its end, and nothing else changed: not a deletion it meant.
    let body = "async function total(ids) {\n  return ids.length;\n}\n\nfunction format(seconds) {\n  \
                const m = Math.floor(seconds / 60);\n  return `${m}:${seconds % 60}`;\n}\n\n\
                module.exports = { total, format };\n";
    let playlist = format!("{body}\nif (require.main === module) {{\n  total([1]).then(console.log);\n}}\n");
    let playlist = playlist.as_str();
    let short = format!("playlist.js\n```js\n{body}```\n");
    let short = short.as_str();
    let fix = "```js\n  return ids.length + 1;\n```\n";
    let run = whole_file_run(
        &[("playlist.js", playlist)],
        &[short, fix],
        "total in playlist.js is one short: it should count the intro track too. Fix it.",
    )
    .await;
    assert!(run.text().contains("[the reply's playlist.js stops before the file's end — not changed]"));
    assert_eq!(run.read("playlist.js"), playlist.replace("ids.length;", "ids.length + 1;"));
    // Asked to drop the block, the shorter file is the change.
    let run =
        whole_file_run(&[("playlist.js", playlist)], &[short], "Drop the require.main block from playlist.js.").await;
    assert!(!run.read("playlist.js").contains("require.main"), "{}\n{}", run.read("playlist.js"), run.text());

    // The 0.5B, looping, labelled running.py's function `# pace.py` again
    // and again: no new file, for nothing in it is new.
    let pace = "def pace_seconds(distance_km, elapsed_s):\n    return elapsed_s / distance_km\n";
    let running = format!(
        "KM_PER_MILE = 1.609344\n\n\n{pace}\n\ndef format_pace(seconds):\n    total = round(seconds)\n    \
         return f\"{{total // 60}}:{{total % 60:02d}}\"\n"
    );
    let running = running.as_str();
    let labelled = format!("```python\n# pace.py\n{}```\n", [pace; 4].join("\n# pace_seconds.py\n"));
    let run =
        whole_file_run(&[("running.py", running)], &[labelled.as_str(); 8], "Add a unit argument to pace_seconds.")
            .await;
    assert!(!run.exists("pace.py"));
    assert_eq!(run.read("running.py"), running);
}

#[tokio::test]
async fn a_question_answered_with_code_alone_is_asked_for_the_answer() {
    let settings = "DEFAULTS = {\"port\": 8000}\n\n\ndef setting(name):\n    return DEFAULTS[name]\n";
    let server =
        "from settings import setting\n\nADMIN_PORT_OFFSET = 1\n\n\ndef listen_port():\n    return setting(\"port\")\n";
    let run = whole_file_turn(
        &[("settings.py", settings), ("server.py", server), ("notes.txt", "Deploy on Fridays.\n")],
        ANSWER,
        &["```python\nlisten_port()\n```\n", "It listens on port 8000."],
        "Which port does the server listen on when PORT is not set? Answer with the number.",
    )
    .await;
    assert_eq!(run.outcome.text, "It listens on port 8000.");
    // server.py uses PORT (in ADMIN_PORT_OFFSET) and imports settings,
    // where the default is: both are handed, the unrelated notes are not.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("settings.py\n```") && sent.contains("server.py\n```"), "{sent}");
    assert!(!sent.contains("notes.txt"), "{sent}");
    assert_eq!(run.read("settings.py"), settings);
}

#[tokio::test]
async fn a_question_of_fact_is_worked_out_from_the_lines_and_answered_with_the_last() {
    // "How many retries": asked for the answer alone, the 1.5B said 8 for
    // `range(MAX_RETRIES + 1)`; worked out line by line, it says 7.
    let settings = "MAX_RETRIES = 7\n";
    let client = "from settings import MAX_RETRIES\n\n\ndef fetch(get):\n    for attempt in range(MAX_RETRIES + 1):\n        \
                  if get():\n            return True\n    return False\n";
    let files = [("settings.py", settings), ("client.py", client)];
    let prompt = "How many times does the client retry a failed request? Answer with the number.";
    let working = "`for attempt in range(MAX_RETRIES + 1):` tries MAX_RETRIES + 1 times.\n\
                   `MAX_RETRIES = 7`, so 8 attempts: the first and 7 retries.\n";
    // Asked then for a command that computes it, the model gives none.
    let run = whole_file_turn(&files, ANSWER, &[&format!("{working}\nAnswer: 7\n")], prompt).await;
    let sent = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(sent.contains("quote each line it depends on") && sent.contains("\"Answer:\""), "{sent}");
    assert_eq!(run.outcome.text, "7");
    assert_eq!(run.backend.used(), 3);
    assert_eq!(run.read("client.py"), client);

    // A working out that ends without the answer line is the answer: a
    // question of how, or of what, is answered at length.
    let steps = "1. client.py loops over `range(MAX_RETRIES + 1)`.\n2. settings.py sets `MAX_RETRIES = 7`.\n\
                 3. That is 8 attempts.\n4. The first is no retry.\n";
    let run = whole_file_turn(&files, ANSWER, &[steps], "How does the client retry a failed request?").await;
    assert_eq!(run.outcome.text, steps);
    assert_eq!(run.backend.used(), 3);
}

#[tokio::test]
async fn a_new_test_file_imports_what_it_tests_from_the_module_that_defines_it() {
    // Asked for tests of slug.py, the 0.5B wrote them calling `slugify`
    // with no import: every test failed with a NameError.
    let slug =
        "import re\n\n\ndef slugify(title):\n    return re.sub(r\"[^a-z0-9]+\", \"-\", title.lower()).strip(\"-\")\n";
    let tests = "def test_plain_words():\n    assert slugify(\"Hello, World!\") == \"hello-world\"\n";
    let reply = format!("test_slug.py\n```python\n{tests}```\n");
    let run =
        whole_file_run(&[("slug.py", slug)], &[&reply], "Write test_slug.py with tests for slugify in slug.py.").await;
    assert_eq!(run.read("test_slug.py"), format!("from slug import slugify\n\n{tests}"));
    assert_eq!(run.read("slug.py"), slug);
}

#[tokio::test]
async fn a_question_is_told_the_values_its_constants_compute() {
    // Shown `CAPACITY = READINGS_PER_DAY * …`, the 1.5B quoted the line
    // right and took 86400 // 45 for 182.2: the value is worked out for it.
    let config = "POLL_INTERVAL_S = 45\nRETENTION_DAYS = 2\n";
    let buffer = "import config\n\nREADINGS_PER_DAY = 86_400 // config.POLL_INTERVAL_S\n\
                  CAPACITY = READINGS_PER_DAY * config.RETENTION_DAYS + 32\nSIZE = len(CAPACITY)\n";
    let files = [("config.py", config), ("buffer.py", buffer)];
    let prompt = "How many readings does the buffer hold? Answer with the number.";
    let run = whole_file_turn(&files, ANSWER, &["Answer: 3872\n"], prompt).await;
    let sent = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(sent.contains("- `READINGS_PER_DAY` in buffer.py is 1920\n- `CAPACITY` in buffer.py is 3872\n"), "{sent}");
    // Written out, or only known by running code, a value is not told.
    assert!(!sent.contains("`RETENTION_DAYS` in") && !sent.contains("`SIZE` in"), "{sent}");
    assert_eq!(run.outcome.text, "3872");
    assert_eq!((run.read("config.py"), run.read("buffer.py")), (config.to_string(), buffer.to_string()));

    // A change is asked of the files alone.
    let fixed = buffer.replace("+ 32", "+ 64");
    let reply = format!("buffer.py\n```python\n{fixed}```\n");
    let run = whole_file_run(&files, &[&reply], "Leave 64 spare slots in the buffer.").await;
    let sent = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(!sent.contains("is 3872"), "{sent}");
    assert_eq!(run.read("buffer.py"), fixed);
}

#[tokio::test]
async fn a_small_workspace_s_question_is_asked_with_what_a_script_prints_on_the_project() {
    // The 0.5B read `"verbosity": levels.QUIET` and answered INFO: the
    // value is two files away from the question's words.
    let levels = "LOUD = \"DEBUG\"\nNORMAL = \"INFO\"\nQUIET = \"WARNING\"\n";
    let profiles = "import levels\n\nPROFILES = {\n    \"staging\": {\"verbosity\": levels.NORMAL},\n    \
                    \"production\": {\"verbosity\": levels.QUIET},\n}\n";
    let script = "```python\nfrom profiles import PROFILES\nprint(PROFILES['production']['verbosity'])\n```\n";
    let prompt = "Which log level do the production profiles run at?";
    let run = Scenario::new()
        .file("levels.py", levels)
        .file("profiles.py", profiles)
        .tool_settings(whole_files())
        .questions_run()
        .run(&["answer", "answer", script, "Answer: WARNING\n"], prompt)
        .await;
    let commands = bash_commands(&run);
    assert!(commands.len() == 1 && commands[0].contains("PROFILES['production']"), "{commands:?}");
    // The script is asked with the files shown, as the answer is.
    let script_ask = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(script_ask.starts_with("levels.py\n```") && script_ask.contains("script"), "{script_ask}");
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("prints, run on the project as it is:\n```\nWARNING\n```"), "{sent}");
    // The whole-file way asked no intent again: four calls in all.
    assert_eq!(run.backend.requests().len(), 4);
    assert_eq!(run.outcome.text, "WARNING");
    assert_eq!((run.read("levels.py"), run.read("profiles.py")), (levels.to_string(), profiles.to_string()));

    // A tiny model's question runs no script: its scripts showed nothing.
    let backend = ScriptedBackend::from_texts(["answer", "answer", "WARNING"]).with_parameters(500_000_000);
    let run = Scenario::new()
        .file("levels.py", levels)
        .file("profiles.py", profiles)
        .tool_settings(whole_files())
        .questions_run()
        .run_backend(backend, prompt, CancellationToken::new())
        .await;
    assert!(bash_commands(&run).is_empty());
    assert_eq!(run.outcome.text, "WARNING");

    // A change request runs no script, and is asked its intent once.
    let fixed = profiles.replace("levels.QUIET", "levels.NORMAL");
    let reply = format!("profiles.py\n```python\n{fixed}```\n");
    let run = Scenario::new()
        .file("levels.py", levels)
        .file("profiles.py", profiles)
        .tool_settings(whole_files())
        .questions_run()
        .run(&["change", "change", &reply], "Make the production profile in profiles.py run at the INFO level.")
        .await;
    assert!(bash_commands(&run).is_empty());
    let asks: Vec<String> = run.backend.requests().iter().map(|r| r.messages.last().unwrap().text()).collect();
    assert_eq!(asks.len(), 3, "{asks:#?}");
    assert_eq!(run.read("profiles.py"), fixed);
}

#[tokio::test]
async fn a_question_about_a_quoted_command_is_asked_with_the_functions_its_run_passes_through() {
    // Read by name, `backup` leads to `backup_notes`; run, the alias table
    // sends it to `write_bundle`. The program runs on a copy: the bundle it
    // writes never reaches the project. A tiny model is shown the run too:
    // it writes no script for it.
    let cli = "import sys\n\nfrom commands import ALIASES, COMMANDS\n\n\ndef main(argv):\n    \
               name = ALIASES.get(argv[1], argv[1])\n    return COMMANDS[name](argv[2:])\n\n\n\
               if __name__ == \"__main__\":\n    sys.exit(main(sys.argv))\n";
    let commands =
        "import handlers\n\nCOMMANDS = {\"export\": handlers.write_bundle}\nALIASES = {\"backup\": \"export\"}\n";
    let handlers = "def backup_notes(args):\n    print(\"backed up\")\n\n\ndef write_bundle(args):\n    \
                    open(\"bundle.json\", \"w\").write(\"{}\")\n    print(\"wrote bundle.json\")\n";
    let backend =
        ScriptedBackend::from_texts(["answer", "answer", "Answer: write_bundle\n"]).with_parameters(500_000_000);
    let run = Scenario::new()
        .file("cli.py", cli)
        .file("commands.py", commands)
        .file("handlers.py", handlers)
        .tool_settings(whole_files())
        .questions_run()
        .run_backend(
            backend,
            "When someone runs `python3 cli.py backup`, which function in handlers.py does the work?",
            CancellationToken::new(),
        )
        .await;
    let ran = bash_commands(&run);
    assert!(ran.len() == 1 && ran[0].contains("-m trace --listfuncs cli.py backup"), "{ran:?}");
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("`python3 cli.py backup` prints:\n```\nwrote bundle.json\n```"), "{sent}");
    assert!(sent.contains("`write_bundle` in handlers.py") && !sent.contains("`backup_notes` in"), "{sent}");
    assert_eq!(run.backend.requests().len(), 3, "the intent both ways, and the answer");
    assert_eq!(run.outcome.text, "write_bundle");
    assert!(!run.dir.path().join("bundle.json").exists(), "the program ran on a copy");
}

#[tokio::test]
async fn a_change_the_rust_compiler_refuses_sends_the_model_back_with_its_errors() {
    // The file still parses, so only the language's checker can tell.
    let manifest = "[package]\nname = \"stats\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let lib = "pub fn mean(values: &[f64]) -> f64 {\n    values.iter().sum::<f64>() / values.len() as f64\n}\n";
    let broken =
        "pub fn mean(values: &[f64]) -> Option<f64> {\n    values.iter().sum::<f64>() / values.len() as f64\n}\n";
    let fixed = "pub fn mean(values: &[f64]) -> Option<f64> {\n    if values.is_empty() {\n        return None;\n    }\n    \
                 Some(values.iter().sum::<f64>() / values.len() as f64)\n}\n";
    let replies = [
        "change",
        "change",
        &format!("src/lib.rs\n```rust\n{broken}```\n"),
        &format!("src/lib.rs\n```rust\n{fixed}```\n"),
    ];
    let run = Scenario::new()
        .file("Cargo.toml", manifest)
        .file("src/lib.rs", lib)
        .tool_settings(whole_files())
        .run(&replies, "mean should return None for no values.")
        .await;
    let commands = bash_commands(&run);
    assert!(commands.len() == 2 && commands.iter().all(|c| c.starts_with("cargo check")), "{commands:?}");
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("reports errors in the changed code") && sent.contains("src/lib.rs:2:5: error"), "{sent}");
    assert_eq!(run.read("src/lib.rs"), fixed);
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn a_tiny_model_is_asked_a_question_of_fact_for_the_answer_alone() {
    // Asked to work the answer out, the 0.5B wrote "Answer: 15" alone.
    let backend =
        ScriptedBackend::from_texts(["answer", "answer", "calc.py declares add."]).with_parameters(500_000_000);
    let run = Scenario::new()
        .file("calc.py", "def add(a, b):\n    return a + b\n")
        .tool_settings(whole_files())
        .run_backend(backend, "What does calc.py declare?", CancellationToken::new())
        .await;
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.ends_with("If no file must change, answer in one sentence."), "{sent}");
    assert_eq!(run.outcome.text, "calc.py declares add.");
}

#[tokio::test]
async fn new_files_a_fix_does_not_ask_for_and_nothing_uses_are_left_out() {
    // Around its fix of shop/text.py, the 1.5B wrote "example usage"
    // views.py and models.py.
    let text = "def slugify(title):\n    return \"-\".join(title.split())\n";
    let fixed = text.replace("title.split()", "title.lower().split()");
    let reply = format!(
        "shop/text.py\n```python\n{fixed}```\n\nshop/views.py\n```python\n# Example usage\nfrom .models import Product\n```\n\n\
         shop/models.py\n```python\nclass Product:\n    title = \"\"\n```\n"
    );
    let prompt = "slugify keeps capital letters; slugs must be lowercase. Fix it.";
    let run = whole_file_run(&[("shop/text.py", text)], &[&reply], prompt).await;
    assert_eq!(run.read("shop/text.py"), fixed);
    assert!(!run.exists("shop/views.py") && !run.exists("shop/models.py"));
    assert!(run.events.iter().any(|e| matches!(&e.event, Event::Text { text } if text.contains("left out"))));
    // Asked for something new, the new files are the change.
    let run = whole_file_run(&[("shop/text.py", text)], &[&reply], "Add a Product model and a view for it.").await;
    assert!(run.exists("shop/views.py") && run.exists("shop/models.py"));
}

#[tokio::test]
async fn the_readme_named_without_its_extension_is_handed_over() {
    let readme = "# cleanup\n\n## Options\n\n- `--verbose`: print every file.\n";
    let cleanup = "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument(\"--dry-run\")\n";
    let fixed = readme.replace("file.\n", "file.\n- `--dry-run`: delete nothing.\n");
    let run = whole_file_run(
        &[("README.md", readme), ("cleanup.py", cleanup), ("other.py", "X = 1\n")],
        &[&format!("README.md\n```markdown\n{fixed}```\n")],
        "cleanup.py gained a --dry-run flag but the README doesn't mention it. Add it to the options list.",
    )
    .await;
    assert_eq!(run.read("README.md"), fixed);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("README.md\n```") && !sent.contains("other.py"), "{sent}");
}

#[tokio::test]
async fn a_function_the_prompt_names_is_asked_for_alone_when_the_file_and_line_asks_change_nothing() {
    let thermostat = "\"\"\"Tiny thermostat helpers.\"\"\"\n\nCOMFORT_MIN = 18\nCOMFORT_MAX = 24\n\n\n\
                      def is_comfortable(celsius):\n    return COMFORT_MIN <= celsius < COMFORT_MAX\n\n\n\
                      def to_fahrenheit(celsius):\n    return celsius * 9 / 5 + 32\n\n\n\
                      def action(celsius):\n    if celsius < COMFORT_MIN:\n        return \"heat\"\n    \
                      if celsius > COMFORT_MAX:\n        return \"cool\"\n    return \"idle\"\n";
    let function = "def is_comfortable(celsius):\n    return COMFORT_MIN <= celsius < COMFORT_MAX\n";
    // The 0.5B copied the file back, then the function, unchanged; shown
    // the function alone, it wrote it fixed.
    let run = whole_file_run(
        &[("thermostat.py", thermostat)],
        &[
            &format!("```python\n{thermostat}```\n"),
            &format!("```python\n{function}```\n"),
            &format!("```python\n{}```\n", function.replace("< COMFORT_MAX", "<= COMFORT_MAX")),
        ],
        "is_comfortable(24) returns False, but 24 °C should count as comfortable. Fix it.",
    )
    .await;
    assert_eq!(run.read("thermostat.py"), thermostat.replace("< COMFORT_MAX", "<= COMFORT_MAX"));
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(
        sent.starts_with(&format!("thermostat.py (lines 7 to 8 of 20; the rest is left out)\n```\n{function}```")),
        "{sent}"
    );
    assert!(!sent.contains("def to_fahrenheit"), "{sent}");
    assert!(
        sent.ends_with("Reply with the whole new code of is_comfortable, changed as asked, in a code block."),
        "{sent}"
    );
}

#[tokio::test]
async fn what_the_request_says_stays_as_it_is_is_left_out_of_a_change() {
    let ini = "; Services.\n\n[web]\nport = 8080\nlog_level = INFO\n\n[worker]\nqueue = jobs\nlog_level = INFO\n";
    let prompt = "Turn on debug logging for the worker in app.ini, but leave the web server's logging as it is.";
    let every = format!("app.ini\n```ini\n{}```\n", ini.replace("INFO", "DEBUG"));
    let run = whole_file_run(&[("app.ini", ini)], &[&every], prompt).await;
    let worker_only =
        "; Services.\n\n[web]\nport = 8080\nlog_level = INFO\n\n[worker]\nqueue = jobs\nlog_level = DEBUG\n";
    assert_eq!(run.read("app.ini"), worker_only);
    assert!(run.text().contains("[the reply also changed web in app.ini, which the request says stays as it is"));
    // A change only there changes nothing: the model is asked again.
    let web_only = format!("app.ini\n```ini\n{}```\n", ini.replacen("INFO", "DEBUG", 1));
    let run = whole_file_run(&[("app.ini", ini)], &[&web_only, &every], prompt).await;
    assert_eq!(run.read("app.ini"), worker_only);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.ends_with("Reply with the whole new content of app.ini, changed as asked; web stays as it is, in a code block after its path."), "{sent}");
    // Asked again, a change only there again leaves nothing changed: a
    // fresh try follows, as for any reply that changes nothing.
    let worker = format!("app.ini\n```ini\n{worker_only}```\n");
    let run = whole_file_run(&[("app.ini", ini)], &[&web_only, &web_only, &worker], prompt).await;
    assert_eq!(run.read("app.ini"), worker_only);
    assert!(run.text().contains("[no reply changed anything — trying afresh, sampled (1 of 3)…]"), "{}", run.text());
}

#[tokio::test]
async fn a_change_to_a_file_the_model_was_not_shown_hands_it_over_and_asks_again() {
    let cleanup = "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument(\"--dry-run\")\n";
    let usage = "# Usage\n\nOptions:\n\n- `--verbose`: print every file\n";
    let documented = format!("{usage}- `--dry-run`: delete nothing\n");
    // Shown cleanup.py alone, the model writes docs/usage.md as a guess.
    let guessed = "docs/usage.md\n```\n# Usage\n\n- `--dry-run`: delete nothing\n```\n";
    let run = whole_file_run(
        &[("cleanup.py", cleanup), ("docs/usage.md", usage)],
        &[guessed, &format!("docs/usage.md\n```\n{documented}```\n")],
        "cleanup.py gained a --dry-run flag. Document it.",
    )
    .await;
    assert_eq!(run.read("docs/usage.md"), documented);
    assert_eq!(run.read("cleanup.py"), cleanup);
    let attached: Vec<&Event> = run.events.iter().map(|e| &e.event).filter(|e| e.kind() == "files_attached").collect();
    let paths = |paths: &[&str]| Event::FilesAttached { paths: paths.iter().map(|p| p.to_string()).collect() };
    assert_eq!(attached, [&paths(&["cleanup.py"]), &paths(&["docs/usage.md"])]);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("docs/usage.md\n```\n# Usage\n\nOptions:"), "shown as it is: {sent}");
    assert!(run.results().iter().all(|(_, is_error, _)| !is_error), "{:?}", run.results());
}

#[tokio::test]
async fn a_reply_that_rewrites_tests_the_request_never_names_leaves_them_as_they_are() {
    let parse = "module.exports = function parse(args) {\n  return args.filter((a) => a !== '-');\n};\n";
    let tests = "var parse = require('../');\nvar test = require('tape');\n\n\
test('dash value', function (t) {\n  t.deepEqual(parse(['--n', '-']), ['--n']);\n  t.end();\n});\n";
    let rewritten = tests.replace("['--n']);", "['--n', '-']);");
    let files = [("index.js", parse), ("test/parse.js", tests)];
    let prompt = "`parse(['--n', '-'])` drops the dash, but `-` is the value of `--n`. Fix it.";
    let run = whole_file_run(&files, &[&format!("test/parse.js\n```js\n{rewritten}```\n")], prompt).await;
    assert_eq!(run.read("test/parse.js"), tests);
    assert!(
        run.text().contains("[the reply changed the tests in test/parse.js, which the request does not name"),
        "{}",
        run.text()
    );
    // A request that names the test file may have it changed.
    let named = "test/parse.js expects the wrong list. Fix it.";
    let run = whole_file_run(&files, &[&format!("test/parse.js\n```js\n{rewritten}```\n")], named).await;
    assert_eq!(run.read("test/parse.js"), rewritten);
}

#[tokio::test]
async fn the_tests_handed_over_are_run_around_a_change_and_one_they_fail_is_sent_back() {
    let pricing = "def discount(total):\n    if total > 100:\n        return 0.1\n    return 0\n";
    let test = "from pricing import discount\n\n\ndef test_discount_from_100():\n    assert discount(100) == 0.1\n";
    let wrong = pricing.replace("if total > 100:", "if total > 100 and total != 100:");
    let fixed = pricing.replace("if total > 100:", "if total >= 100:");
    let files = [("pricing.py", pricing), ("test_pricing.py", test)];
    let replies = [format!("pricing.py\n```python\n{wrong}```\n"), format!("pricing.py\n```python\n{fixed}```\n")];
    let replies: Vec<&str> = replies.iter().map(String::as_str).collect();
    let prompt = "An order of exactly 100 gets no discount. Fix it.";
    let run = whole_file_run(&files, &replies, prompt).await;
    assert_eq!(run.read("pricing.py"), fixed);
    assert_eq!(run.read("test_pricing.py"), test);
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    // Real runs of the test, before the change, after each: failing,
    // failing, passing.
    let results = run.results();
    let runs: Vec<(bool, &str)> = results
        .iter()
        .map(|(name, is_error, output)| (*is_error, if name == "Bash" { output.as_str() } else { name.as_str() }))
        .collect();
    assert_eq!(runs.len(), 5, "{results:?}\n{}", run.text());
    assert!(runs[0].0 && runs[0].1.contains("FAILED test_pricing.py::test_discount_from_100"), "{runs:?}");
    assert_eq!(runs[1], (false, "Edit"));
    assert!(runs[2].0 && runs[2].1.contains("FAILED test_pricing.py::test_discount_from_100"), "{runs:?}");
    assert_eq!(runs[3], (false, "Edit"));
    assert!(!runs[4].0 && runs[4].1.ends_with("exit code 0"), "{runs:?}");
    // Sent back with what failed and the file as its change left it.
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("The change is not done: the tests in test_pricing.py fail:\n```\n"), "{sent}");
    assert_eq!(sent.matches("the tests in test_pricing.py fail").count(), 1, "not before the change: {sent}");
    assert!(sent.contains("assert discount(100) == 0.1"), "{sent}");
    assert!(sent.contains(&format!("pricing.py\n```\n{wrong}```")), "shown as it is now: {sent}");

    // A reply that makes the failing test expect what the code does fixes
    // nothing: the test is left as it is, unless the prompt asks about tests.
    let lenient = test.replace("== 0.1", "== 0");
    let run = whole_file_run(&files, &[&format!("test_pricing.py\n```python\n{lenient}```\n")], prompt).await;
    assert_eq!(run.read("test_pricing.py"), test);
    assert!(
        run.text().contains("[the reply changed test_pricing.py, whose failing tests check the fix"),
        "{}",
        run.text()
    );
    let run = whole_file_run(
        &files,
        &[&format!("test_pricing.py\n```python\n{lenient}```\n")],
        "Exactly 100 gets no discount, and that is right: the test is wrong. Fix it.",
    )
    .await;
    assert_eq!(run.read("test_pricing.py"), lenient);

    // Passing tests add nothing; a question runs none; plan mode runs none.
    let passing = test.replace("discount(100)", "discount(200)");
    let run = whole_file_run(
        &[("pricing.py", pricing), ("test_pricing.py", &passing)],
        &[&format!("pricing.py\n```python\n{fixed}```\n")],
        prompt,
    )
    .await;
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(!sent.contains("the tests in"), "{sent}");
    let names: Vec<String> = run.results().into_iter().map(|(name, _, _)| name).collect();
    assert_eq!(names, ["Bash", "Edit", "Bash"]);
    let run =
        whole_file_turn(&files, ANSWER, &["It gives none."], "Does an order of exactly 100 get the discount?").await;
    assert!(run.results().is_empty(), "{:?}", run.results());
    let plan = Scenario::new()
        .file("pricing.py", pricing)
        .file("test_pricing.py", test)
        .tool_settings(whole_files())
        .mode(tack::protocol::PermissionMode::Plan)
        .run(&["change", "change", "Change > to >= in discount."], prompt)
        .await;
    assert!(plan.results().is_empty(), "{:?}", plan.results());
}

#[tokio::test]
async fn a_python_change_that_python_cannot_run_is_no_change() {
    // The 0.5B's line for "I get pages of 10, not 20": a per_page that
    // app.py never defines, which would raise NameError on every page.
    let app = "from pager import paginate\n\n\ndef show(page):\n    rows = paginate(ARTICLES, page)\n    return rows\n\n\nARTICLES = list(range(55))\n";
    let pager = "def paginate(items, page=1, per_page=10):\n    start = (page - 1) * per_page\n    return items[start:start + per_page]\n";
    let prompt = "Calling paginate() without a page size should give pages of 20 items, but I get 10. Fix it.";
    let copy = format!("app.py\n```python\n{app}```\n\npager.py\n```python\n{pager}```\n");
    let unbound = "```python\nrows = paginate(ARTICLES, page, per_page)\n```\n";
    let fixed = format!("pager.py\n```python\n{}```\n", pager.replace("per_page=10", "per_page=20"));
    let files = [("app.py", app), ("pager.py", pager)];
    let run = whole_file_run(&files, &[&copy, unbound, &fixed], prompt).await;
    assert!(
        run.text().contains("[the reply's app.py uses per_page, which nothing in it defines — not changed]"),
        "{}",
        run.text()
    );
    assert_eq!(run.read("app.py"), app);
    assert_eq!(run.read("pager.py"), pager.replace("per_page=10", "per_page=20"));
    // A version with a syntax error is refused the same way.
    let broken = format!(
        "pager.py\n```python\n{}```\n",
        pager.replace("    start", "def start").replace("per_page=10", "per_page=20")
    );
    let run = whole_file_run(&files, &[&broken, &fixed], prompt).await;
    assert!(run.text().contains("[the reply's pager.py has a syntax error on line 2 — not changed]"), "{}", run.text());
    assert_eq!(run.read("pager.py"), pager.replace("per_page=10", "per_page=20"));
}

#[tokio::test]
async fn a_message_written_anew_for_a_line_of_another_file_is_fixed_there() {
    // Asked for the line of signup.js to change, the 0.5B wrote the line
    // of validate.js with the message the prompt asks for, and the line
    // above it: of the two `errors.push(…)`, that one is meant.
    let validate = "'use strict';\n\nconst MIN_LENGTH = 8;\n\nfunction passwordErrors(password) {\n  const errors = [];\n  if (password.length < MIN_LENGTH) {\n    errors.push('Password too short.');\n  }\n  if (!/[0-9]/.test(password)) {\n    errors.push('Password must contain a digit.');\n  }\n  return errors;\n}\n\nmodule.exports = { passwordErrors, MIN_LENGTH };\n";
    let signup = "'use strict';\n\nconst { passwordErrors } = require('./validate');\n\nfunction signup(username, password) {\n  const errors = passwordErrors(password);\n  return errors.length > 0 ? { ok: false, errors } : { ok: true };\n}\n\nmodule.exports = { signup };\n";
    let prompt = "When a password is too short, signup should say \"Password must be at least 8 characters long.\" instead of the current message.";
    let copy = format!("signup.js\n```javascript\n{signup}```\n");
    let line = "```javascript\nif (password.length < MIN_LENGTH) {\n  errors.push('Password must be at least 8 characters long.');\n}\n```\n";
    let run = whole_file_run(&[("signup.js", signup), ("validate.js", validate)], &[&copy, line], prompt).await;
    assert_eq!(run.read("signup.js"), signup);
    assert_eq!(
        run.read("validate.js"),
        validate.replace("Password too short.", "Password must be at least 8 characters long.")
    );
}

#[tokio::test]
async fn a_line_quoted_as_it_reads_points_at_it_in_whichever_file_holds_it() {
    // Both files copied back, digest.js first: asked for the line, the
    // 0.5B quoted prefs.js's as it reads. Shown it alone, it writes it.
    let digest = "'use strict';\n\nconst { shouldEmail } = require('./prefs');\n\nfunction recipients(users) {\n  return users.filter(shouldEmail).map((u) => u.email);\n}\n\nmodule.exports = { recipients };\n";
    let prefs = "'use strict';\n\nfunction shouldEmail(user) {\n  return !user.prefs.emailNotifications;\n}\n\nmodule.exports = { shouldEmail };\n";
    let prompt = "Users who switched off email notifications are still getting emails. Fix it.";
    let copy = format!("digest.js\n```javascript\n{digest}```\n\nprefs.js\n```javascript\n{prefs}```\n");
    let quoted = "```javascript\nreturn !user.prefs.emailNotifications;\n```\n";
    let fixed = "```javascript\nreturn user.prefs.emailNotifications;\n```\n";
    let run = whole_file_run(&[("digest.js", digest), ("prefs.js", prefs)], &[&copy, quoted, fixed], prompt).await;
    assert!(
        run.text().contains("[the reply named line 4 of prefs.js — asking for it as it must read…]"),
        "{}",
        run.text()
    );
    assert_eq!(run.read("prefs.js"), prefs.replace("!user", "user"));
    assert_eq!(run.read("digest.js"), digest);
}

/// The pipeline without its check: for the tests of what follows it.
fn no_check() -> tack::config::PipelineSettings {
    tack::config::PipelineSettings { check: false, ..Default::default() }
}

/// A module too long to show whole: 300 helpers, `parse_port`, 300 more.
fn long_module(port: &str) -> String {
    let filler: String = (0..300).map(|i| format!("def helper_{i}(x):\n    return x * {i}\n\n\n")).collect();
    format!("{filler}{port}\n\n{filler}")
}

const PORT: &str =
    "def parse_port(text):\n    port = int(text)\n    if port < 0:\n        raise ValueError(text)\n    return port\n";

#[tokio::test]
async fn a_file_too_long_to_show_is_changed_a_definition_at_a_time() {
    let utils = long_module(PORT);
    let fixed = PORT.replace("port < 0", "port < 1");
    let run = Scenario::new()
        .file("net/utils.py", &utils)
        .tool_settings(whole_files())
        .pipeline(no_check())
        .run(&["change", "change", &format!("```python\n{fixed}```\n")], "parse_port accepts 0. Fix it.")
        .await;
    // The definition's byte range is replaced, every other byte kept.
    assert_eq!(run.read("net/utils.py"), utils.replace(PORT, &fixed));
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(
        run.outcome.text,
        "Changed `parse_port` in net/utils.py. Not checked: no check of the request could be run, so nothing was run with it. Review it before relying on it."
    );
    let requests = run.backend.requests();
    // Change or answer, held to those two words, asked in both orders.
    assert_eq!(requests[0].choices, ["change", "answer"]);
    assert_eq!(requests[1].choices, ["answer", "change"]);
    // Named alone, the definition needs no choice: it is read, then asked for.
    let sent = requests[2].messages.last().unwrap().text();
    assert!(sent.contains(&format!("net/utils.py (lines 1201 to 1205 of 2407)\n```python\n{PORT}```")), "{sent}");
    assert!(!sent.contains("helper_0"), "{sent}");
    let calls: Vec<String> =
        run.results().into_iter().map(|(name, is_error, _)| format!("{name} {is_error}")).collect();
    assert_eq!(calls, ["Read false", "Edit false"]);
}

/// A file that fits in one message but is too long for a small model to
/// write whole in a turn is changed a definition at a time too.
#[tokio::test]
async fn a_file_too_long_to_write_whole_is_changed_a_definition_at_a_time() {
    let helpers: String = (0..40).map(|i| format!("def helper_{i}(x):\n    return x * {i}\n\n\n")).collect();
    let utils = format!("{helpers}{PORT}");
    assert!(utils.len() < 16 * 1024 && utils.lines().count() > 150);
    let fixed = PORT.replace("port < 0", "port < 1");
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .pipeline(no_check())
        .run(&["change", "change", &format!("```python\n{fixed}```\n")], "parse_port accepts 0. Fix it.")
        .await;
    assert_eq!(run.read("utils.py"), utils.replace(PORT, &fixed), "{}", run.text());
    let sent = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(sent.contains(&format!("```python\n{PORT}```")) && !sent.contains("helper_0"), "{sent}");
}

/// A change the project's tests then fail on stays in the file while the
/// turn goes round again: where the next round changes nothing, the answer
/// still says what the first one changed, and why it was sent back.
#[tokio::test]
async fn an_earlier_round_s_change_is_told_when_the_last_round_changes_nothing() {
    let utils = long_module(PORT);
    let wrong = PORT.replace("port < 0", "port <= -1");
    let run = Scenario::new()
        .file("utils.py", &utils)
        .test_command("grep -q 'port < 1' utils.py || { echo 'port 0 is still accepted'; exit 1; }")
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { max_model_calls: 4, ..no_check() })
        .run(
            &["change", "change", &format!("```python\n{wrong}```\n"), &format!("```python\n{wrong}```\n")],
            "parse_port accepts 0. Fix it.",
        )
        .await;
    assert_eq!(run.read("utils.py"), utils.replace(PORT, &wrong), "{}", run.text());
    let text = &run.outcome.text;
    assert!(text.starts_with("Earlier in this turn: Changed `parse_port` in utils.py."), "{text}");
    assert!(text.contains("Then: "), "{text}");
}

#[tokio::test]
async fn a_candidate_that_breaks_the_parse_is_refused_and_the_next_one_asked_with_the_reason() {
    let utils = long_module(PORT);
    let broken = "```python\ndef parse_port(text):\n    port = int(text\n    return port\n```\n";
    let fixed = PORT.replace("port < 0", "port < 1");
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .pipeline(no_check())
        .run(&["change", "change", broken, &format!("```python\n{fixed}```\n")], "parse_port accepts 0. Fix it.")
        .await;
    assert_eq!(run.read("utils.py"), utils.replace(PORT, &fixed));
    let requests = run.backend.requests();
    let retry = requests[3].messages.last().unwrap().text();
    assert!(retry.contains("Your last version was refused: with it the file no longer parses: line 1202"), "{retry}");
    // The fresh try is sampled.
    assert_eq!(requests[3].resample, Some(1));
    assert!(run.text().contains("[candidate 1 refused: with it the file no longer parses"), "{}", run.text());
}

const GREET: &str = "def greet(name):\n    text = 'Hello ' + name\n    return text\n";

/// The request's own example is the check; no small change passes it.
async fn greet_run(replies: &[&str]) -> Run {
    let probe = "```python\nfrom hello import greet\nprint(greet('Bob'))\n```\n";
    let mut all = vec!["change", "change", probe];
    all.extend_from_slice(replies);
    Scenario::new()
        .file("hello.py", &long_module(GREET))
        .tool_settings(whole_files())
        .run(&all, "`greet('Ann')` returns 'Hello Ann' but should return 'Hello, Ann!'. Fix it.")
        .await
}

/// A model that copies the definition back unchanged, and then names the
/// line to change by writing it as it is, has its next version opened for
/// it at that line: the lines before it written, and a comment begun where
/// it starts, which the model goes on from; once it is back on the old
/// lines, the rest is the old code's. The comment is no part of the change.
#[tokio::test]
async fn a_line_named_as_it_is_opens_the_next_version_there() {
    let copy = format!("```python\n{GREET}```\n");
    let continued = "greet with a comma\n    text = 'Hello, ' + name + '!'\n    return text\n";
    let run = greet_run(&[&copy, "The line is:\n```python\n    text = 'Hello ' + name\n```", continued]).await;
    let fixed = GREET.replace("'Hello ' + name", "'Hello, ' + name + '!'");
    assert_eq!(run.read("hello.py"), long_module(&fixed), "{}", run.text());
    let requests = run.backend.requests();
    let opened = requests.iter().find_map(|r| r.reply_prefix.clone()).unwrap_or_default();
    assert_eq!(opened, "```python\ndef greet(name):\n    # ");
    assert!(
        run.text().contains("[writing a version on from the line it names, `text = 'Hello ' + name`…]"),
        "{}",
        run.text()
    );
}

/// A version opened at a line that runs on without coming back to the
/// old code (a small model copying what it was shown) is cut after 40
/// lines and refused; the next one opened there can still be the fix.
#[tokio::test]
async fn a_version_opened_at_a_line_that_runs_on_is_cut_and_refused() {
    let copy = format!("```python\n{GREET}```\n");
    let runaway: String =
        std::iter::once("copying\n".to_string()).chain((0..200).map(|i| format!("    step_{i} = {i}\n"))).collect();
    let continued = "greet with a comma\n    text = 'Hello, ' + name + '!'\n    return text\n";
    let run =
        greet_run(&[&copy, "The line is:\n```python\n    text = 'Hello ' + name\n```", &runaway, continued]).await;
    let fixed = GREET.replace("'Hello ' + name", "'Hello, ' + name + '!'");
    assert_eq!(run.read("hello.py"), long_module(&fixed), "{}", run.text());
    assert!(
        run.text()
            .contains("refused: it wrote on for 40 lines without coming back to the code after the line it changes"),
        "{}",
        run.text()
    );
    assert!(!run.text().contains("step_60 = 60"), "the run-on reply was not cut: {}", run.text());
}

/// A reply to the ask for the line to change that names none (a line
/// number) is asked once more, held to the lines shown.
#[tokio::test]
async fn a_line_ask_answered_with_a_number_is_asked_again_held_to_the_lines() {
    let copy = format!("```python\n{GREET}```\n");
    let continued = "greet with a comma\n    text = 'Hello, ' + name + '!'\n    return text\n```\n";
    let run = greet_run(&[&copy, "1202", "text = 'Hello ' + name", continued]).await;
    let fixed = GREET.replace("'Hello ' + name", "'Hello, ' + name + '!'");
    assert_eq!(run.read("hello.py"), long_module(&fixed), "{}", run.text());
    let requests = run.backend.requests();
    let held =
        requests.iter().find(|r| r.choices.iter().any(|c| c == "return text")).expect("a line ask held to the lines");
    assert!(held.choices.iter().all(|line| !line.starts_with(' ')), "{:?}", held.choices);
}

/// An argument parser as such packages write theirs: one long function,
/// exported whole, that the project's tests load as `parse`.
fn long_parser(line: &str) -> String {
    let filler: String = (0..90).map(|i| format!("    var unused{i} = {i};\n")).collect();
    format!(
        "module.exports = function (args) {{\n    var out = {{}};\n    var count = 0;\n{filler}    \
for (var i = 0; i < args.length; i++) {{\n        var key = args[i][1];\n        var rest = args[i].slice(2);\n\
{line}\n        count += 1;\n    }}\n    out._ = [];\n    return out;\n}};\n"
    )
}

/// A request that calls a long function by the name the project's tests
/// load it as finds it, and is asked first for the line to change (not
/// for a whole version of a hundred lines): the version is opened there.
#[tokio::test]
async fn a_long_function_exported_whole_is_found_by_its_users_name_and_changed_from_the_line_named() {
    let buggy = "        out[key] = rest.split('=')[1];";
    let continued = "keep all after the first =\n        out[key] = rest.slice(1);\n        count += 1;\n    }\n    \
out._ = [];\n";
    let run = Scenario::new()
        .file("package.json", r#"{ "name": "argv-lite", "main": "index.js" }"#)
        .file("index.js", &long_parser(buggy))
        .file("test/short.js", "var parse = require('../');\nconsole.log(parse(['-b=1']));\n")
        // More code than one message holds: the pipeline's way.
        .file(
            "lib/usage.js",
            &(0..400).map(|i| format!("exports.line{i} = function () {{ return {i}; }};\n")).collect::<String>(),
        )
        .tool_settings(whole_files())
        .run(
            &["change", "change", "No probe.", &format!("The line is:\n```javascript\n{buggy}\n```"), continued],
            "Short options lose what follows a second `=`: `parse(['-k=a=b'])` gives `{ k: 'a', _: [] }`, but \
I expected `{ k: 'a=b', _: [] }`.",
        )
        .await;
    assert_eq!(run.read("index.js"), long_parser("        out[key] = rest.slice(1);"), "{}", run.text());
    let requests = run.backend.requests();
    let first_ask = requests[3].messages.last().unwrap().text();
    assert!(first_ask.contains("Which line of `exports` must change?"), "{first_ask}");
    assert!(run.outcome.text.contains("the request's own example does what the request asks"), "{}", run.outcome.text);
}

/// A value the request writes as an expression (`2 ** 20`) is what the
/// check must print evaluated, as the language prints it: printed as
/// written, no version could ever pass.
#[tokio::test]
async fn an_expected_value_written_as_an_expression_is_held_to_its_value() {
    const MEGABYTES: &str = "def megabytes(n):\n    return n * 1000 * 1000\n";
    let fixed = MEGABYTES.replace("1000 * 1000", "1024 * 1024");
    let run = Scenario::new()
        .file("units.py", &long_module(MEGABYTES))
        .tool_settings(whole_files())
        .run(
            &["change", "change", "No probe.", &format!("```python\n{fixed}```\n")],
            "`megabytes(1)` gives `1000000`, but I expected `2 ** 20`: a megabyte is binary here.",
        )
        .await;
    assert!(run.text().contains("[`2 ** 20` is `1048576`]"), "{}", run.text());
    assert_eq!(run.read("units.py"), long_module(&fixed), "{}", run.text());
}

/// The line a model is held to naming is one the check's run reaches: a
/// branch the request's example never takes cannot be where it fails.
#[tokio::test]
async fn the_lines_a_line_ask_is_held_to_are_those_the_check_runs() {
    const BRANCHED: &str = "def greet(name):\n    if name is None:\n        name = 'stranger'\n    text = 'Hello ' + name\n    return text\n";
    let probe = "```python\nfrom hello import greet\nprint(greet('Bob'))\n```\n";
    let copy = format!("```python\n{BRANCHED}```\n");
    let continued = "greet with a comma\n    text = 'Hello, ' + name + '!'\n    return text\n```\n";
    let run = Scenario::new()
        .file("hello.py", &long_module(BRANCHED))
        .tool_settings(whole_files())
        .run(
            &["change", "change", probe, &copy, "1203", "text = 'Hello ' + name", continued],
            "`greet('Ann')` returns 'Hello Ann' but should return 'Hello, Ann!'. Fix it.",
        )
        .await;
    let fixed = BRANCHED.replace("'Hello ' + name", "'Hello, ' + name + '!'");
    assert_eq!(run.read("hello.py"), long_module(&fixed), "{}", run.text());
    let requests = run.backend.requests();
    let held =
        requests.iter().find(|r| r.choices.iter().any(|c| c == "return text")).expect("a line ask held to the lines");
    assert!(held.choices.iter().any(|line| line == "if name is None:"), "{:?}", held.choices);
    assert!(!held.choices.iter().any(|line| line == "name = 'stranger'"), "{:?}", held.choices);
}

#[tokio::test]
async fn the_budget_ends_a_turn_that_verified_nothing_and_nothing_changes() {
    let utils = long_module(PORT);
    let copy = format!("```python\n{PORT}```\n");
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { max_model_calls: 4, ..no_check() })
        .run(&["change", "change", &copy, "The code is right.", &copy], "parse_port accepts 0. Fix it.")
        .await;
    assert_eq!(run.read("utils.py"), utils);
    // The intent twice and two candidates: the third is over the budget.
    assert_eq!(run.backend.used(), 4);
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    let text = &run.outcome.text;
    assert!(text.starts_with("No change was made to `parse_port` in utils.py"), "{text}");
    assert!(text.contains("1. the new version is the same as the old one"), "{text}");
    assert!(text.contains("2. the reply wrote no line of `parse_port` as it must read"), "{text}");
}

/// A reply still being written when the turn's seconds run out is cut
/// there (given the floor a command about to start is given, 10 s), and
/// the turn ends saying it spent its budget, the file as it was.
#[tokio::test]
async fn a_reply_still_written_at_the_turn_s_deadline_is_cut_there() {
    let utils = long_module(PORT);
    // At 50 ms a chunk of 3.6 characters on average, about 40 s of reply.
    let long_reply = format!("```python\n{PORT}```\n").repeat(20);
    let script = vec![
        ScriptEntry::Text("change".into()),
        ScriptEntry::Text("change".into()),
        ScriptEntry::Paced { text: long_reply, chunk_delay_ms: 50 },
    ];
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { max_seconds: 1, ..no_check() })
        .run_entries(script, "parse_port accepts 0. Fix it.", CancellationToken::new())
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::MaxIterations);
    assert!(
        run.text().contains("model calls or 1 s, `[pipeline]` in the configuration) and stopped"),
        "{}",
        run.text()
    );
    let written = run.text().matches("def parse_port").count();
    assert!(written < 10, "the reply was written on past the deadline: {written} copies of 20");
    assert_eq!(run.read("utils.py"), utils);
}

#[tokio::test]
async fn a_version_that_changes_nothing_is_followed_by_the_ask_for_the_one_line_to_change() {
    let utils = long_module(PORT);
    let copy = format!("```python\n{PORT}```\n");
    let line = "The wrong line:\n```python\nif port < 0:\n```\nIt must read:\n```python\nif port < 1:\n```\n";
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .pipeline(no_check())
        .run(&["change", "change", &copy, line], "parse_port accepts 0. Fix it.")
        .await;
    assert_eq!(run.read("utils.py"), utils.replace("port < 0", "port < 1"));
    let asked = run.backend.requests()[3].messages.last().unwrap().text();
    assert!(asked.contains("Which line of `parse_port` must change?"), "{asked}");
    // Asked narrower, not sampled.
    assert_eq!(run.backend.requests()[3].resample, None);
}

#[tokio::test]
async fn a_model_that_picks_by_the_order_of_the_words_leaves_the_intent_to_the_question_mark() {
    let utils = long_module(&format!("DEFAULT_PORT = 8080\n\n\n{PORT}"));
    // It says the first word it is offered each time: undecided.
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(&["change", "answer", "1", "1", "none", "It is 8080."], "What is the default port?")
        .await;
    assert_eq!(run.outcome.text, "It is 8080.");
    assert_eq!(run.read("utils.py"), utils);
}

#[tokio::test]
async fn a_question_about_a_large_project_is_answered_from_the_definition_chosen() {
    let utils = long_module(&format!("DEFAULT_PORT = 8080\n\n\n{PORT}"));
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "DEFAULT_PORT", "DEFAULT_PORT", "none", "The default port is 8080."],
            "What is the default port?",
        )
        .await;
    assert_eq!(run.read("utils.py"), utils);
    assert_eq!(run.outcome.text, "The default port is 8080.");
    let requests = &run.backend.requests()[1..];
    // The choice is held to the names listed, not to numbers a small
    // model picks by position.
    let listed = requests[1].messages.last().unwrap().text();
    let names = &requests[1].choices;
    assert!(names.len() >= 2 && names[0] == "DEFAULT_PORT", "{names:?}");
    assert!(names.iter().all(|n| listed.contains(&format!("`{n}` in utils.py"))), "{listed}");
    assert!(listed.contains("- constant `DEFAULT_PORT` in utils.py\n```\nDEFAULT_PORT = 8080\n```"), "{listed}");
    // Asked both ways round, the other way the second time.
    assert_eq!(requests[2].choices.first(), names.last(), "{:?}", requests[2].choices);
    // Where the model sees no script that shows it, the answer rests on the code.
    let sent = requests[4].messages.last().unwrap().text();
    assert!(sent.contains("DEFAULT_PORT = 8080") && sent.contains("Answer the request from the code shown,"), "{sent}");
}

#[tokio::test]
async fn a_question_s_pick_torn_between_two_leaves_the_better_ranked_of_them() {
    let utils = long_module(&format!("DEFAULT_PORT = 8080\n\n\n{PORT}"));
    // Forward it takes the second, backward the third: torn between those
    // two, set against each other it takes the first place both times.
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "parse_port", "helper_0", "parse_port", "helper_0", "none", "8080."],
            "What is the default port?",
        )
        .await;
    let requests = run.backend.requests();
    let offered = &requests[2].choices;
    assert_eq!(offered[..3], ["DEFAULT_PORT", "parse_port", "helper_0"], "{offered:?}");
    assert_eq!(requests[4].choices, ["parse_port", "helper_0"]);
    // Not the best ranked of all, which the model never took.
    let reads: Vec<String> = run.results().into_iter().map(|(name, _, output)| format!("{name} {output}")).collect();
    assert!(reads[0].starts_with("Read ") && reads[0].contains("def parse_port(text):"), "{reads:?}");
}

#[tokio::test]
async fn a_question_is_answered_from_what_a_script_of_its_example_prints_on_the_project() {
    let delays = "def retry_delays(n):\n    return [2 ** i for i in range(n)]\n";
    let utils = long_module(delays);
    let script = "```python\nfrom utils import retry_delays\nprint(retry_delays(4))\n```\n";
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(&["answer", "answer", script, "1, 2, 4 and 8 seconds."], "What delays does `retry_delays(4)` give?")
        .await;
    assert_eq!(run.outcome.text, "1, 2, 4 and 8 seconds.");
    assert_eq!(run.read("utils.py"), utils);
    // The script ran as a Bash call the user sees, on the project as it is.
    let calls: Vec<String> =
        run.results().into_iter().map(|(name, is_error, _)| format!("{name} {is_error}")).collect();
    assert_eq!(calls, ["Read false", "Bash false"]);
    let requests = run.backend.requests();
    let asked = requests[2].messages.last().unwrap().text();
    assert!(asked.contains("prints the value it asks for"), "{asked}");
    let sent = requests[3].messages.last().unwrap().text();
    assert!(sent.contains("prints, run on the project as it is:\n```\n[1, 2, 4, 8]\n```"), "{sent}");
    assert!(sent.contains("Answer the request from the code shown and what the script printed"), "{sent}");
}

#[tokio::test]
async fn a_large_project_s_question_about_a_quoted_command_is_answered_from_its_traced_run() {
    let tool = "ALIASES = {\"backup\": \"export\"}\n\n\ndef backup_notes(args):\n    print(\"backed up\")\n\n\n\
                def write_bundle(args):\n    print(\"wrote bundle\")\n\n\ndef main(argv):\n    \
                name = ALIASES.get(argv[1], argv[1])\n    {\"export\": write_bundle}[name](argv[2:])\n";
    let tool = format!("{}\n\nif __name__ == \"__main__\":\n    import sys\n    main(sys.argv)\n", long_module(tool));
    let run = Scenario::new()
        .file("tool.py", &tool)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "backup_notes", "backup_notes", "`write_bundle` does the work."],
            "When someone runs `python3 tool.py backup`, which function does the work?",
        )
        .await;
    assert_eq!(run.outcome.text, "`write_bundle` does the work.");
    let ran = bash_commands(&run);
    assert!(ran.len() == 1 && ran[0].contains("-m trace --listfuncs tool.py backup"), "no script asked: {ran:?}");
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("`python3 tool.py backup` prints:\n```\nwrote bundle\n```"), "{sent}");
    assert!(sent.contains("`write_bundle` in tool.py") && !sent.contains("`backup_notes` in tool.py,"), "{sent}");
    assert!(sent.contains("Answer the request from the code shown and what the run showed"), "{sent}");
    assert_eq!(run.read("tool.py"), tool);
}

#[tokio::test]
async fn an_answer_that_tells_the_script_s_own_helper_as_the_project_s_is_asked_again() {
    let code = "def divide(n, items):\n    \"\"\"Divide the items into n parts, keeping their order.\"\"\"\n    \
return [items[i::n] for i in range(n)]\n";
    let parts = long_module(code);
    let script = "```python\nfrom parts import divide\n\ndef split_items(items, n):\n    return divide(n, items)\n\n\
print(split_items([1, 2, 3, 4], 2))\n```\n";
    let run = Scenario::new()
        .file("parts.py", &parts)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "divide", "divide", script, "`split_items` does.", "`divide` does."],
            "Which function splits the items into n parts, keeping their order?",
        )
        .await;
    assert_eq!(run.outcome.text, "`divide` does.");
    let requests = run.backend.requests();
    let again = requests.last().unwrap().messages.last().unwrap().text();
    assert!(run.text().contains(
        "[the answer is set aside: `split_items` is the script's own, not the project's: the project defines no \
`split_items`]"
    ));
    // The script misled: the answer is asked again from the code alone, as
    // if it had not run.
    let plain = "Answer the request from the code shown, in one or two sentences.";
    assert!(!again.contains("split_items") && again.ends_with(plain), "{again}");

    // A name nothing defines is told, and the answer asked again beside it.
    let run = Scenario::new()
        .file("parts.py", &parts)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "divide", "divide", script, "`parts_of` does.", "`divide` does."],
            "Which function splits the items into n parts, keeping their order?",
        )
        .await;
    assert_eq!(run.outcome.text, "`divide` does.");
    let again = run.backend.requests().last().unwrap().messages.last().unwrap().text();
    assert!(
        again.ends_with(
            "Your last answer was set aside: the project defines no `parts_of`, and neither the request nor its code \
names one."
        ),
        "{again}"
    );
}

#[tokio::test]
async fn an_answer_that_only_quotes_what_the_script_printed_is_asked_again() {
    let code = "def divide(n, items):\n    \"\"\"Divide the items into n parts, keeping their order.\"\"\"\n    \
return [items[i::n] for i in range(n)]\n";
    let parts = long_module(code);
    let script = "```python\nfrom parts import divide\nprint(divide(2, [1, 2, 3, 4]))\n```\n";
    let echo = "The script printed, run on the project as it is:\n```\n[[1, 3], [2, 4]]\n```\n";
    let run = Scenario::new()
        .file("parts.py", &parts)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "divide", "divide", script, echo, "`divide` does."],
            "Which function splits the items into n parts, keeping their order?",
        )
        .await;
    assert_eq!(run.outcome.text, "`divide` does.");
    assert!(
        run.text().contains("[the answer is set aside: it only repeats what the script printed]"),
        "{}",
        run.text()
    );
    let again = run.backend.requests().last().unwrap().messages.last().unwrap().text();
    assert!(again.ends_with("Your last answer was set aside: it only repeats what the script printed."), "{again}");
}

#[tokio::test]
async fn a_definition_too_long_to_show_beside_the_chosen_one_is_listed_by_its_head() {
    // The chosen definition alone fills what an answer is shown of code.
    let long_doc: String = (0..160).map(|i| format!("    Partitions of the items, way {i} of many.\n")).collect();
    let code = format!(
        "def partitions(items):\n    \"\"\"Every way to split the items into parts.\n\n{long_doc}    \"\"\"\n    \
return [items]\n\n\ndef divide(n, items):\n    \"\"\"Divide the items into n parts, keeping their order.\"\"\"\n    \
return [items[i::n] for i in range(n)]\n"
    );
    let parts = long_module(&code);
    let run = Scenario::new()
        .file("parts.py", &parts)
        .tool_settings(whole_files())
        .run(
            &["answer", "answer", "partitions", "partitions", "none", "`divide` does."],
            "Which function splits the items into n parts, keeping their order?",
        )
        .await;
    let requests = run.backend.requests();
    let sent = requests.last().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("def partitions(items):"), "{sent}");
    assert!(
        sent.contains(
            "Other definitions of the project:\n- `def divide(n, items)` in parts.py: Divide the items into n parts"
        ),
        "{sent}"
    );
}

#[tokio::test]
async fn an_answer_is_shown_the_values_of_the_constants_the_code_it_is_shown_uses() {
    let names = long_module(
        "from limits import MAX_LENGTH\n\n\ndef check_name(name):\n    if len(name) > MAX_LENGTH:\n        \
raise ValueError('name too long')\n    return name\n",
    );
    let limits = long_module("MAX_LENGTH = 256\nMIN_LENGTH = 1\n");
    let run = Scenario::new()
        .file("names.py", &names)
        .file("limits.py", &limits)
        .tool_settings(whole_files())
        // The constant itself is no candidate: it is not shown whole.
        .pipeline(tack::config::PipelineSettings { choices: 1, ..Default::default() })
        // A `none` written as a script is the reply `none`.
        .run(
            &["answer", "answer", "```python\nnone\n```", "256 characters."],
            "How long may a name be before check_name refuses it?",
        )
        .await;
    let requests = run.backend.requests();
    let sent = requests.last().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("The constants they use:\n- `MAX_LENGTH = 256` in limits.py\n"), "{sent}");
    assert!(!sent.contains("MIN_LENGTH"), "only those the code shown uses: {sent}");
}

#[tokio::test]
async fn the_model_s_guess_at_the_code_s_names_ranks_what_the_request_s_words_miss() {
    // "How long" and "refused" are no words of the code: its name for the
    // bound is `MAX_LENGTH`.
    let limits = "MAX_LENGTH = 256\n\n\ndef check_name(name):\n    if len(name) > MAX_LENGTH:\n        raise ValueError(name)\n    return name\n";
    let utils = long_module(limits);
    let prompt = "How long may a user name be before it is refused?";
    let first_offered = |run: &Run, choice: usize| run.backend.requests()[choice].choices.first().cloned();
    let guessed = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .guessing_names()
        .run(
            &[
                "MAX_LENGTH, NAME_LIMIT",
                "answer",
                "answer",
                "MAX_LENGTH",
                "MAX_LENGTH",
                "none",
                "Up to 256 characters.",
            ],
            prompt,
        )
        .await;
    let requests = guessed.backend.requests();
    let ask = requests[0].messages.last().unwrap().text();
    assert!(ask.contains("what would the project's code for what the request speaks of be named?"), "{ask}");
    assert!(guessed.text().contains("[names the code may use, as the model guesses them: MAX_LENGTH, NAME_LIMIT]"));
    assert_eq!(first_offered(&guessed, 3).as_deref(), Some("MAX_LENGTH"));
    assert_eq!(guessed.outcome.text, "Up to 256 characters.");
    // Without the guess, the request's words rank the function first.
    let unguessed = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(&["answer", "answer", "check_name", "check_name", "none", "Up to 256 characters."], prompt)
        .await;
    assert_eq!(first_offered(&unguessed, 2).as_deref(), Some("check_name"));
}

#[tokio::test]
async fn the_short_functions_a_chosen_definition_calls_are_shown_and_may_be_the_one_changed() {
    let amount = "def line_amount(price, quantity):\n    return price\n";
    let total = "def invoice_total(lines):\n    return sum(line_amount(p, q) for p, q in lines)\n";
    let billing = long_module(&format!("{amount}\n\n{total}"));
    let fixed = "```python\ndef line_amount(price, quantity):\n    return price * quantity\n```\n";
    let run = Scenario::new()
        .file("billing.py", &billing)
        .tool_settings(whole_files())
        .pipeline(no_check())
        .run(&["change", "change", fixed], "`invoice_total(lines)` ignores the quantities. Fix it.")
        .await;
    assert_eq!(run.read("billing.py"), billing.replace("return price\n", "return price * quantity\n"));
    assert_eq!(
        run.outcome.text,
        "Changed `line_amount` in billing.py. Not checked: no check of the request could be run, so nothing was run with it. Review it before relying on it."
    );
    let sent = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(sent.contains("def invoice_total") && sent.contains("def line_amount"), "{sent}");
    assert!(sent.contains("(`invoice_total`, `line_amount`)"), "{sent}");

    // A reply that writes both, the one the request names as it is and
    // the one it calls fixed, changes the one it fixed; nothing of it
    // lands in the other's place.
    let both = "```python\ndef invoice_total(lines):\n    return sum(line_amount(p, q) for p, q in lines)\n\n\
def line_amount(price, quantity):\n    return price * quantity\n```\n";
    let run = Scenario::new()
        .file("billing.py", &billing)
        .tool_settings(whole_files())
        .pipeline(no_check())
        .run(&["change", "change", both], "`invoice_total(lines)` ignores the quantities. Fix it.")
        .await;
    assert_eq!(run.read("billing.py"), billing.replace("return price\n", "return price * quantity\n"));
    assert_eq!(
        run.outcome.text,
        "Changed `line_amount` in billing.py. Not checked: no check of the request could be run, so nothing was run with it. Review it before relying on it."
    );
}

#[tokio::test]
async fn a_check_the_model_writes_finds_the_small_variant_that_does_what_is_asked_in_a_scratch_copy() {
    let calc = long_module("def at_least(x, n):\n    return x > n\n");
    let check = "```python\nfrom calc import at_least\nprint(at_least(3, 3))\n```\n";
    let probe = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\nprint(at_least(1, 3))\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "```\nTrue\n```\n", "```\nTrue\n```\n", probe],
            "at_least with 3 and 3 returns False but should return True. Fix it.",
        )
        .await;
    assert_eq!(run.read("calc.py"), calc.replace("x > n", "x >= n"));
    assert_eq!(run.backend.used(), 6);
    assert!(
        run.outcome.text.contains(
            "`x > n` → `x >= n` on line 1202. Evidence: a check the model wrote from the request passes with it"
        ),
        "{}",
        run.outcome.text
    );
    // Each run is a Bash call the user sees: the check on the code as it
    // is (it prints False), the probe, the check once more following the
    // functions it calls, the variants, the uses near the check's with the
    // one that passes; then the Edit.
    let calls: Vec<String> =
        run.results().into_iter().map(|(name, is_error, _)| format!("{name} {is_error}")).collect();
    assert_eq!(
        calls,
        ["Read false", "Bash false", "Bash false", "Bash false", "Bash false", "Bash false", "Edit false"]
    );
    let outputs: Vec<String> = run.results().into_iter().map(|(_, _, output)| output).collect();
    assert!(outputs[1].starts_with("False\n"), "{}", outputs[1]);
    assert!(outputs[3].contains("calc.py:1201\n"), "{}", outputs[3]);
    assert!(outputs[4].starts_with("passes: "), "{}", outputs[4]);
    // The expected output is asked line by line, each with the statement
    // that printed it, held to the values it may take.
    let request = &run.backend.requests()[3];
    let asked = request.messages.last().unwrap().text();
    assert!(asked.contains("On the code as it is, `print(at_least(3, 3))` prints `False`."), "{asked}");
    assert_eq!(request.choices, ["False", "True"]);
}

#[tokio::test]
async fn the_request_s_own_example_is_run_as_written_and_costs_no_model_call() {
    let calc = long_module("def at_least(x, n):\n    return x > n\n");
    let probe = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\nprint(at_least(1, 3))\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .run(&["change", "change", probe], "`at_least(3, 3)` returns False but should return True. Fix it.")
        .await;
    assert_eq!(run.read("calc.py"), calc.replace("x > n", "x >= n"));
    assert_eq!(run.backend.used(), 3, "no model call writes the check or says what it must print");
    assert!(run.text().contains("[running the request's own examples, as written…]"), "{}", run.text());
    let commands = bash_commands(&run);
    assert!(commands[0].contains("from calc import *") && commands[0].contains("print(_value(at_least(3, 3)))"));
    let outputs: Vec<String> = run.results().into_iter().map(|(_, _, output)| output).collect();
    assert!(outputs[1].starts_with("False\n"), "{}", outputs[1]);
    // The report's one example is its symptom: the boolean it quotes must turn.
    assert!(run.text().contains("[the line `False` must read `True`, as the request writes]"), "{}", run.text());
}

#[tokio::test]
async fn a_small_workspace_s_failing_test_makes_the_check_a_change_must_pass() {
    // The request writes no example that runs, but the project's own test
    // fails: run alone, it is the check, and the variant that passes it
    // (and breaks no other test) is found.
    let pricing = "def discount(total):\n    if total > 100:\n        return 0.1\n    return 0\n";
    let tests = "from pricing import discount\n\n\ndef test_from_100():\n    assert discount(100) == 0.1\n\n\n\
def test_above():\n    assert discount(200) == 0.1\n\n\ndef test_below():\n    assert discount(99.5) == 0\n";
    let probe = "```python\nfrom pricing import discount\nprint(discount(20))\nprint(discount(500))\n```\n";
    let run = Scenario::new()
        .file("pricing.py", pricing)
        .file("test_pricing.py", tests)
        .tool_settings(whole_files())
        .tests_first()
        .run(&["change", "change", probe], "Orders of exactly 100 get no discount, but they should. Fix it.")
        .await;
    let text = run.text();
    assert!(text.contains("[running the project's failing tests alone (test_pricing.py::test_from_100)…]"), "{text}");
    assert_eq!(run.read("pricing.py"), pricing.replace("total > 100", "total >= 100"), "{text}");
    assert_eq!(run.read("test_pricing.py"), tests, "the test is the check, never the change");
    assert_eq!(run.backend.used(), 2, "the intent, both ways: the test's file guards, with no probe asked");
}

#[tokio::test]
async fn the_tests_a_request_names_as_failing_make_the_check() {
    // Named as unittest names them; the pipeline's way, with the project's
    // tests not run first: the named test, run alone, is the check.
    let pricing = long_module("def discount(total):\n    if total > 100:\n        return 0.1\n    return 0\n");
    let tests = "import unittest\nfrom pricing import discount\n\n\nclass TestDiscount(unittest.TestCase):\n    \
def test_from_100(self):\n        self.assertEqual(discount(100), 0.1)\n\n    def test_below(self):\n        \
self.assertEqual(discount(99.5), 0)\n";
    let run = Scenario::new()
        .file("pricing.py", &pricing)
        .file("test_pricing.py", tests)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "none", "none", "none", "none"],
            "This test fails: test_pricing.TestDiscount.test_from_100 (`python3 -m unittest test_pricing`). An \
order of exactly 100 should get the discount.",
        )
        .await;
    let text = run.text();
    assert!(
        text.contains("[running the project's failing tests alone (test_pricing.py::TestDiscount::test_from_100)…]"),
        "{text}"
    );
    assert_eq!(run.read("pricing.py"), pricing.replace("total > 100", "total >= 100"), "{text}");
    assert_eq!(run.read("test_pricing.py"), tests, "the test is the check, never the change");
}

#[tokio::test]
async fn a_large_project_s_failing_test_that_imports_the_code_makes_the_check_before_any_script() {
    // Too long for one message: the pipeline's way. No example runs as
    // written, and the model is asked for no script: the project's test
    // that imports the code fails, and is the check; the test beside it
    // guards the candidates.
    let slugify = "def slugify(title):\n    return \"-\".join(title.split())\n";
    let text = long_module(slugify);
    let tests = "from shop.text import slugify\n\n\ndef test_lower():\n    assert slugify(\"Red Lamp\") == \"red-lamp\"\n\n\n\
def test_dashes():\n    assert slugify(\"a  b\") == \"a-b\"\n";
    let breaks = "```python\ndef slugify(title):\n    return title.lower().replace(\" \", \"-\")\n```\n";
    let fixed = "```python\ndef slugify(title):\n    return \"-\".join(title.lower().split())\n```\n";
    let run = Scenario::new()
        .file("shop/__init__.py", "")
        .file("shop/text.py", &text)
        .file("tests/test_text.py", tests)
        .file("tests/test_other.py", "def test_nothing():\n    assert False\n")
        .tool_settings(whole_files())
        .tests_first()
        .run(
            &["change", "change", "slugify", breaks, fixed],
            "slugify keeps capital letters; slugs must be lowercase. Fix it.",
        )
        .await;
    let text_now = run.text();
    assert!(
        text_now.contains("[running the project's failing tests alone (tests/test_text.py::test_lower)…]"),
        "{text_now}"
    );
    assert!(!text_now.contains("[writing a check"), "{text_now}");
    assert!(text_now.contains("[candidate 1 refused: "), "the test beside it fails with the first: {text_now}");
    let fixed_text = text.replace("\"-\".join(title.split())", "\"-\".join(title.lower().split())");
    assert!(run.read("shop/text.py") == fixed_text, "{text_now}");
    // The model reads the failing test's own code as the check, not the script that calls it.
    let asked = run.backend.requests()[3].messages.last().unwrap().text();
    assert!(
        asked.contains("from shop.text import slugify\n\ndef test_lower():\n    assert slugify(\"Red Lamp\")"),
        "{asked}"
    );
    assert!(!asked.contains("_importlib"), "{asked}");
    // Only the tests that import the code run: another failing test is none of the request's.
    assert!(bash_commands(&run).iter().all(|c| !c.contains("test_other")), "{:?}", bash_commands(&run));
}

/// A Rust function whose value above 100 is one off, and the functions of
/// a crate too long for one message, named from `prefix`.
const CLAMP: &str =
    "pub fn clamp_percent(x: i32) -> i32 {\n    if x > 100 {\n        101\n    } else {\n        x\n    }\n}\n";

fn crate_filler(prefix: &str) -> String {
    (0..300).map(|i| format!("pub fn {prefix}{i}(x: i32) -> i32 {{\n    x * {i}\n}}\n\n")).collect()
}

#[tokio::test]
async fn the_rust_tests_a_request_names_as_failing_make_the_check() {
    // A crate too long for one message: the pipeline's way. The test the
    // request names, run alone with cargo in the scratch copy, is the check;
    // the crate's other tests guard the candidates.
    let manifest = "[package]\nname = \"percent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let (filler, clamp) = (crate_filler("helper_"), CLAMP);
    let tests = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn clamps_above() {\n        \
assert_eq!(clamp_percent(150), 100);\n    }\n\n    #[test]\n    fn keeps_middle() {\n        \
assert_eq!(clamp_percent(100), 100);\n        assert_eq!(clamp_percent(99), 99);\n    }\n}\n";
    let more = crate_filler("other_");
    let lib = format!("{filler}{clamp}\n{more}{tests}");
    let run = Scenario::new()
        .file("Cargo.toml", manifest)
        .file("src/lib.rs", &lib)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "none", "none", "none", "none"],
            "This test fails: `tests::clamps_above` (`cargo test --lib`). 150 percent must be clamped to 100.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[running the project's failing tests alone (src/lib.rs::tests::clamps_above)…]"), "{text}");
    assert!(text.contains("[they fail on the code as it is: a change must make them pass]"), "{text}");
    let commands = bash_commands(&run);
    assert!(
        commands.iter().any(|c| c.contains("cargo test --offline --quiet --lib -- tests::clamps_above")),
        "{commands:?}"
    );
    assert_eq!(run.read("src/lib.rs"), lib.replacen("        101\n", "        100\n", 1), "{text}");
    assert!(run.outcome.text.contains("the project's failing test passes with it"), "{}", run.outcome.text);
}

#[tokio::test]
async fn a_crate_s_check_is_a_test_the_model_writes_of_the_request_s_examples() {
    // No test is named, and a crate has no script runner: the model's
    // `#[test]` of the request's example, written in the copy the check
    // runs in, is the check. One the compiler refuses is asked again.
    let manifest = "[package]\nname = \"percent-calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let (filler, clamp) = (crate_filler("helper_"), CLAMP);
    let lib = format!("{filler}{clamp}");
    let broken = "```rust\n#[test]\nfn clamps() {\n    assert_eq!(percent_calc::clamp(150), 100);\n}\n```";
    let test = "```rust\n#[test]\nfn clamps() {\n    assert_eq!(percent_calc::clamp_percent(150), 100);\n}\n```";
    let run = Scenario::new()
        .file("Cargo.toml", manifest)
        .file("src/lib.rs", &lib)
        .tool_settings(whole_files())
        .run(
            &["change", "change", broken, test, "none", "none", "none", "none"],
            "`clamp_percent(150)` gives 101, but a percentage above 100 must be clamped to 100.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[the test is set aside: it does not compile (`error[E0425]"), "{text}");
    assert!(text.contains("[the test fails on the code as it is: a change must make it pass]"), "{text}");
    assert_eq!(run.read("src/lib.rs"), lib.replacen("        101\n", "        100\n", 1), "{text}");
    assert!(!run.exists("tests/tack_check.rs"), "the test is written in the copy, never in the project");
    assert!(
        run.outcome.text.contains("a check the model wrote from the request passes with it"),
        "{}",
        run.outcome.text
    );
}

/// A crate of the 2015 edition (its manifest names none) finds itself in
/// an integration test only through `extern crate`, which the model's
/// test, written as a newer crate's, leaves out: tack adds it.
#[tokio::test]
async fn a_2015_crate_s_check_finds_the_crate_its_test_uses() {
    let manifest = "[package]\nname = \"percent-calc\"\nversion = \"0.1.0\"\n";
    let lib = format!("{}{CLAMP}", crate_filler("helper_"));
    // A `use` of the crate itself, as a newer edition writes it, is dropped beside the `extern crate`.
    let test = "```rust\nuse percent_calc;\nuse percent_calc::clamp_percent;\n\n#[test]\nfn clamps() {\n    assert_eq!(clamp_percent(150), 100);\n}\n```";
    let run = Scenario::new()
        .file("Cargo.toml", manifest)
        .file("src/lib.rs", &lib)
        .tool_settings(whole_files())
        .run(
            &["change", "change", test, "none", "none", "none", "none"],
            "`clamp_percent(150)` gives 101, but a percentage above 100 must be clamped to 100.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[the test fails on the code as it is: a change must make it pass]"), "{text}");
    assert_eq!(run.read("src/lib.rs"), lib.replacen("        101\n", "        100\n", 1), "{text}");
}

#[tokio::test]
async fn the_node_tests_a_request_names_as_failing_make_the_check() {
    // The title a runner's summary names, in the test file the request
    // names, run alone under node's runner in the scratch copy; the other
    // tests of its file guard the candidates.
    let filler: String = (0..300).map(|i| format!("function helper{i}(x) {{\n  return x * {i};\n}}\n\n")).collect();
    let clamp = "function clampPercent(x) {\n  if (x > 100) {\n    return 101;\n  }\n  return x;\n}\n";
    let index = format!("{filler}{clamp}\nmodule.exports = {{ clampPercent }};\n");
    let tests = "'use strict';\nconst assert = require('assert');\nconst { describe, it } = require('node:test');\n\
const { clampPercent } = require('..');\n\ndescribe('clampPercent', () => {\n  it('clamps above', () => {\n    \
assert.strictEqual(clampPercent(150), 100);\n  });\n\n  it('keeps the middle', () => {\n    \
assert.strictEqual(clampPercent(99), 99);\n  });\n});\n";
    let run = Scenario::new()
        .file("package.json", "{ \"name\": \"percent\", \"main\": \"index.js\" }\n")
        .file("index.js", &index)
        .file("test/clamp.js", tests)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "none", "none", "none", "none"],
            "This test fails: test/clamp.js › clampPercent › clamps above. 150 percent must be clamped to 100.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[running the project's failing tests alone (test/clamp.js::clamps above)…]"), "{text}");
    assert!(text.contains("[the project's tests: 1 failing before any change]"), "{text}");
    assert_eq!(run.read("index.js"), index.replacen("return 101;", "return 100;", 1), "{text}");
    assert_eq!(run.read("test/clamp.js"), tests, "the test is the check, never the change");
    assert!(run.outcome.text.contains("the project's failing test passes with it"), "{}", run.outcome.text);
}

/// A long module whose `slugify` calls `normalize`, with the fault in
/// `normalize` on a line only the failing test runs; and its tests.
const NORMALIZE: &str = "def normalize(word):\n    if word[:1].isupper():\n        return word\n    return word\n";
const SLUGIFY_TESTS: &str = "from shop.text import slugify\n\n\ndef test_lower():\n    assert slugify(\"Red Lamp\") == \"red-lamp\"\n\n\n\
def test_dashes():\n    assert slugify(\"a  b\") == \"a-b\"\n";

fn slugify_module() -> String {
    let slugify = "def slugify(title):\n    return \"-\".join(normalize(w) for w in title.split())\n";
    long_module(&format!("{NORMALIZE}\n\n{slugify}"))
}

#[tokio::test]
async fn the_lines_only_the_failing_tests_run_single_out_the_definition_to_change() {
    // The request's words point to `slugify`; the fault is in the helper
    // it calls, on a line only the failing test runs. Each test of the
    // file runs alone, traced: that helper comes first, the line is shown,
    // and its version is asked with no pick among the definitions.
    let (text, tests) = (slugify_module(), SLUGIFY_TESTS);
    let fixed = "```python\ndef normalize(word):\n    if word[:1].isupper():\n        return word.lower()\n    return word\n```\n";
    let run = Scenario::new()
        .file("shop/__init__.py", "")
        .file("shop/text.py", &text)
        .file("tests/test_text.py", tests)
        .tool_settings(whole_files())
        .tests_first()
        .run(&["change", "change", "slugify", fixed], "slugify keeps capital letters; slugs must be lowercase. Fix it.")
        .await;
    let text_now = run.text();
    let line = text.lines().position(|l| l == "        return word").unwrap() + 1;
    assert!(
        text_now.contains(&format!(
            "[the failing tests single out lines {line} of `normalize` in shop/text.py: it comes first]"
        )),
        "{text_now}"
    );
    let asked = run.backend.requests()[3].messages.last().unwrap().text();
    assert!(
        asked.contains(
            "The project's failing tests run these lines of `normalize`, which every failing test runs and no \
passing test of their files does: the fault is likely there.\n```\nreturn word\n```"
        ),
        "{asked}"
    );
    assert!(asked.contains("Reply with the whole new version of `normalize`"), "{asked}");
    let fixed_text =
        text.replace("        return word\n    return word", "        return word.lower()\n    return word");
    assert!(run.read("shop/text.py") == fixed_text, "{text_now}");
    assert_eq!(run.backend.used(), 4, "the intent both ways, the choice, the version: no pick among definitions");
}

#[tokio::test]
async fn with_the_spectrum_off_the_failing_tests_run_no_traced_tests() {
    // The same project as above: with `spectrum = false` no test runs
    // traced and nothing is singled out, so the model picks among the
    // definitions the check runs.
    let (text, tests) = (slugify_module(), SLUGIFY_TESTS);
    let fixed =
        "```python\ndef slugify(title):\n    return \"-\".join(normalize(w).lower() for w in title.split())\n```\n";
    let run = Scenario::new()
        .file("shop/__init__.py", "")
        .file("shop/text.py", &text)
        .file("tests/test_text.py", tests)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { spectrum: false, ..Default::default() })
        .tests_first()
        .run(
            &["change", "change", "slugify", "slugify", "slugify", fixed],
            "slugify keeps capital letters; slugs must be lowercase. Fix it.",
        )
        .await;
    let text_now = run.text();
    assert!(!text_now.contains("which lines do only the failing ones run?"), "{text_now}");
    assert!(!text_now.contains("single out"), "{text_now}");
    // Nothing singles the helper out: the model picks among what the check runs.
    let asked = run.backend.requests()[3].messages.last().unwrap().text();
    assert!(asked.contains("Which one of these definitions must change"), "{asked}");
    let fixed_text = text.replace("join(normalize(w) for", "join(normalize(w).lower() for");
    assert!(run.read("shop/text.py") == fixed_text, "{text_now}");
}

#[tokio::test]
async fn a_turn_that_changes_nothing_names_the_definition_its_versions_were_of() {
    // The request's words choose `slugify`; the failing tests single out
    // its helper, and the model's version of that helper changes nothing.
    // The outcome names the helper, not the candidate first chosen.
    let (helper, text, tests) = (NORMALIZE, slugify_module(), SLUGIFY_TESTS);
    let unchanged = format!("```python\n{helper}```\n");
    let run = Scenario::new()
        .file("shop/__init__.py", "")
        .file("shop/text.py", &text)
        .file("tests/test_text.py", tests)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { candidates: 1, variants: false, ..Default::default() })
        .tests_first()
        .run(
            &["change", "change", "slugify", &unchanged],
            "slugify keeps capital letters; slugs must be lowercase. Fix it.",
        )
        .await;
    assert_eq!(run.read("shop/text.py"), text);
    let outcome = &run.outcome.text;
    assert!(outcome.starts_with("No change was made to `normalize` in shop/text.py:"), "{outcome}\n{}", run.text());
}

#[tokio::test]
async fn a_small_workspace_s_passing_tests_leave_the_request_to_the_whole_file_way() {
    let pricing = "def discount(total):\n    return 0.1 if total >= 100 else 0\n";
    let tests = "from pricing import discount\n\n\ndef test_from_100():\n    assert discount(100) == 0.1\n";
    let fixed = "def discount(amount):\n    return 0.1 if amount >= 100 else 0\n";
    let run = Scenario::new()
        .file("pricing.py", pricing)
        .file("test_pricing.py", tests)
        .tool_settings(whole_files())
        .tests_first()
        .run(&["change", "change", &format!("pricing.py\n```python\n{fixed}```\n")], "Call the parameter amount.")
        .await;
    let text = run.text();
    assert!(!text.contains("failing tests alone"), "{text}");
    assert!(bash_commands(&run)[0].contains("test_pricing.py"), "the tests ran first");
    assert_eq!(run.read("pricing.py"), fixed);
}

#[tokio::test]
async fn a_small_workspace_s_request_no_checked_change_is_found_for_goes_the_whole_file_way() {
    let greet = "def greeting(name):\n    return name\n";
    let fixed = "def greeting(name):\n    return f\"Hello, {name}\"\n";
    let tests = "from greet import greeting\n\n\ndef test_hello():\n    assert greeting('Bo') == 'Hello, Bo'\n";
    let wrong = "```python\ndef greeting(name):\n    return name.upper()\n```\n";
    let whole = format!("greet.py\n```python\n{fixed}```\n");
    let run = Scenario::new()
        .file("greet.py", greet)
        .file("test_greet.py", tests)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { candidates: 1, ..Default::default() })
        .tests_first()
        .run(
            &["change", "change", wrong, "change", "change", &whole],
            "Greetings should say hello to the name. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[running the project's failing tests alone (test_greet.py::test_hello)…]"), "{text}");
    assert!(text.contains("[candidate 1 refused: "), "{text}");
    assert!(text.contains("[no change found passes the check — handing the files over whole…]"), "{text}");
    assert_eq!(run.read("greet.py"), fixed);
    // The whole-file ask holds the request and the files, and none of the
    // pipeline's steps, which stay in the history.
    let asked = &run.backend.requests()[5].messages;
    let all: String = asked.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    assert!(all.contains("Greetings should say hello to the name."), "{all}");
    assert!(!all.contains("The change was refused") && !all.contains("name.upper()"), "{all}");
    assert!(run.history_len > 4, "the pipeline's steps are recorded");
}

#[tokio::test]
async fn a_check_that_reads_its_command_line_runs_with_the_example_s_arguments() {
    let code = "import argparse\n\n\ndef main(argv=None):\n    parser = argparse.ArgumentParser()\n    \
parser.add_argument('--loud', action='store_true')\n    args = parser.parse_args(argv)\n    \
return 'LOUD' if not args.loud else 'quiet'\n";
    let cli = long_module(code);
    let probe = "```python\nimport cli\nprint(cli.main.__name__)\n```\n";
    // The request writes its call in prose, without backticks: it runs as
    // written, reads the command line, and the model gives the arguments.
    let run = Scenario::new()
        .file("cli.py", &cli)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "```\n$ python3 cli.py --loud\n```\n", probe],
            "With --loud on the command line, main() returns 'quiet' but should return 'LOUD'. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[the check reads its command line: asking for the example's arguments…]"), "{text}");
    assert!(text.contains("[running it again with the arguments `--loud`…]"), "{text}");
    assert!(text.contains("[the line `quiet` must read `LOUD`, as the request writes]"), "{text}");
    let asked = run.backend.requests()[2].messages.last().unwrap().text();
    assert!(asked.contains("reads its command-line arguments (its line `print(_value(main()))`)"), "{asked}");
    // Every later run of the check passes them: the candidates' too.
    let commands = bash_commands(&run);
    assert!(!commands[0].contains("--loud"), "{}", commands[0]);
    assert!(commands[1..].iter().filter(|c| c.contains("check.py")).all(|c| c.contains("python3 -B - --loud")));
    assert_eq!(run.backend.used(), 4, "the intent, both ways, the arguments and the probe");
    assert!(run.read("cli.py") == cli.replace("if not args.loud", "if args.loud"), "{}", run.outcome.text);

    // The program's command line with nothing after it: the example passes
    // no arguments, and the run with none is the example's own.
    let run = Scenario::new()
        .file("cli.py", &cli)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "```\n$ python3 cli.py\n```\n", probe],
            "With no option on the command line, main() returns 'LOUD' but should return 'quiet'. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[the example passes no command-line arguments: the run stands]"), "{text}");
    assert!(text.contains("[the line `LOUD` must read `quiet`, as the request writes]"), "{text}");
    assert!(run.read("cli.py") == cli.replace("if not args.loud", "if args.loud"), "{text}");
}

#[tokio::test]
async fn a_check_that_defines_the_project_s_own_function_is_set_aside_before_it_runs() {
    let calc = long_module("def at_least(x, n):\n    return x > n\n");
    let own = "```python\nimport calc\ndef at_least(x, n):\n    return x >= n\nprint(at_least(3, 3))\n```\n";
    // A name given to the project's own function is no copy of it.
    let check = "```python\nimport calc\nat_least = calc.at_least\nat_least(3, 3)\n```\n";
    let probe = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\nprint(at_least(1, 3))\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .run(
            &["change", "change", own, check, "```\nTrue\n```\n", "```\nTrue\n```\n", probe],
            "at_least with 3 and 3 returns False but should return True. Fix it.",
        )
        .await;
    let why = "it defines `at_least` itself, which the project defines in calc.py: it must call the project's own";
    assert!(run.text().contains(&format!("[the check is set aside: {why}]")), "{}", run.text());
    let again = run.backend.requests()[3].messages.last().unwrap().text();
    assert!(again.contains(&format!("Your last script was set aside: {why}.")), "{again}");
    // The next check ends on the call it means to show: it is printed.
    let commands = bash_commands(&run);
    assert!(commands[0].contains("print(at_least(3, 3))"), "{}", commands[0]);
    assert!(run.read("calc.py") == calc.replace("x > n", "x >= n"), "{}", run.outcome.text);
}

#[tokio::test]
async fn where_the_request_makes_no_check_the_chosen_definition_s_doctests_make_one() {
    let documented = "def at_least(x, n):\n    \"\"\"Whether x is at least n.\n\n    >>> at_least(3, 3)\n    True\n    \"\"\"\n    \
return x > n\n";
    let calc = long_module(documented);
    // The model's check shows an example that works: it makes no check.
    let check = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\n```\n";
    let probe = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\nprint(at_least(1, 3))\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "True", "True", "```\nTrue\n```\n", "I cannot.", "I cannot.", probe],
            "at_least is wrong where both numbers are equal. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[the check is set aside: on the code as it is, it prints what it must print"), "{text}");
    assert!(text.contains("[running the doctests of `at_least`, the project's own examples of it…]"), "{text}");
    assert!(text.contains("[they fail on the code as it is: a change must make them pass]"), "{text}");
    assert!(run.read("calc.py") == calc.replace("return x > n", "return x >= n"), "{}", run.outcome.text);
    assert_eq!(run.backend.used(), 9, "the doctests cost no model call");
}

#[tokio::test]
async fn where_no_check_can_be_made_the_project_s_tests_still_refuse_a_version_that_breaks_them() {
    let calc = long_module("def at_least(x, n):\n    return x > n\n");
    let tests = "import unittest\n\nfrom calc import at_least\n\n\nclass AtLeast(unittest.TestCase):\n    \
def test_smaller_is_not(self):\n        self.assertFalse(at_least(1, 3))\n\n    def test_larger_is(self):\n        \
self.assertTrue(at_least(5, 3))\n";
    // The model's check shows an example that works: it makes no check.
    let check = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\n```\n";
    let breaks = "```python\ndef at_least(x, n):\n    return True\n```\n";
    let fixed = "```python\ndef at_least(x, n):\n    return x >= n\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .file("tests/test_calc.py", tests)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "True", "True", "```\nTrue\n```\n", "I cannot.", "I cannot.", breaks, fixed],
            "at_least is wrong where both numbers are equal. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(
        text.contains("[candidate 1 refused: with it some of the project's tests fail, which all passed before:"),
        "{text}"
    );
    // The check is asked with how the project's own tests call the code.
    let ask = run.backend.requests()[2].messages.last().unwrap().text();
    let shown = "How the project's own tests call it (tests/test_calc.py):\n```\ndef test_smaller_is_not(self):\n    \
self.assertFalse(at_least(1, 3))\n```";
    assert!(ask.contains(shown), "{ask}");
    // The next version is told which test failed, and how.
    let told = run.backend.requests()[9].messages.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    assert!(told.contains("test_smaller_is_not") && told.contains("True is not false"), "{told}");
    assert!(run.read("calc.py") == calc.replace("return x > n", "return x >= n"), "{text}");
    assert_eq!(
        run.outcome.text,
        "Changed `at_least` in calc.py. Not checked: no check of the request could be run; the project's tests all \
pass with it. Review it before relying on it."
    );
    assert_eq!(run.read("tests/test_calc.py"), tests, "the tests ran in a scratch copy");
}

#[tokio::test]
async fn a_version_that_passes_the_check_and_breaks_the_project_s_tests_is_told_which_test_broke() {
    let calc = long_module("def at_least(x, n):\n    return x > n\n");
    let tests = "import unittest\n\nfrom calc import at_least\n\n\nclass AtLeast(unittest.TestCase):\n    \
def test_smaller_is_not(self):\n        self.assertFalse(at_least(1, 3))\n";
    let breaks = "```python\ndef at_least(x, n):\n    return True\n```\n";
    let fixed = "```python\ndef at_least(x, n):\n    return x >= n\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .file("tests/test_calc.py", tests)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(&["change", "change", breaks, fixed], "`at_least(3, 3)` gives `False` but should give `True`. Fix it.")
        .await;
    let text = run.text();
    let refused = "[candidate 1 refused: the check passes, but with it some of the project's tests fail, which all \
passed before:";
    assert!(text.contains(refused), "{text}");
    let told = run.backend.requests()[3].messages.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    assert!(told.contains("test_smaller_is_not") && told.contains("True is not false"), "{told}");
    assert!(run.read("calc.py") == calc.replace("return x > n", "return x >= n"), "{text}");
}

#[tokio::test]
async fn what_the_request_says_its_example_should_give_needs_no_model_call() {
    let shop = long_module("def shipping(weight):\n    return weight * 2 + 1\n");
    let probe = "```python\nfrom shop import shipping\nprint(shipping(0) * 0)\n```\n";
    let run = Scenario::new()
        .file("shop.py", &shop)
        .tool_settings(whole_files())
        .run(&["change", "change", probe], "`shipping(10)` returns 21 but should return 20. Fix it.")
        .await;
    assert_eq!(run.read("shop.py"), shop.replace("weight * 2 + 1", "weight * 2 + 0"));
    assert!(run.text().contains("[the line `21` must read `20`, as the request writes]"), "{}", run.text());
    assert_eq!(run.backend.used(), 3, "the intent, both ways, and the probe");
}

#[tokio::test]
async fn an_example_the_request_quotes_as_right_beside_a_wrong_one_must_stay_as_it_is() {
    let shop = long_module("def shipping(weight):\n    return weight * 2 + 1 if weight > 0 else 10\n");
    let probe = "```python\nfrom shop import shipping\nprint(shipping(0) * 0)\n```\n";
    let run = Scenario::new()
        .file("shop.py", &shop)
        .tool_settings(whole_files())
        .run(
            &["change", "change", probe],
            "`shipping(10)` returns 21 instead of 20. `shipping(0)` gives 10 as it should. Fix it.",
        )
        .await;
    assert_eq!(run.read("shop.py"), shop.replace("weight * 2 + 1", "weight * 2 + 0"));
    assert!(run.text().contains("[the line `21` must read `20`, as the request writes]"), "{}", run.text());
    assert!(run.text().contains("[the line `10` stays as it is: the request quotes it so]"), "{}", run.text());
    assert_eq!(run.backend.used(), 3, "the intent, both ways, and the probe");
}

#[tokio::test]
async fn the_functions_a_check_runs_are_varied_where_the_request_s_words_and_references_do_not_reach() {
    // `_tax_standard` is found by its name at run time: no reference and
    // no word of the request leads to it; following the check's run does.
    let code = "def order_total(prices, kind=\"standard\"):\n    return round(_rule(kind)(sum(prices)), 2)\n\n\n\
def _rule(kind):\n    return globals()[\"_tax_\" + kind]\n\n\n\
def _tax_standard(amount):\n    return amount * 6 // 4\n";
    let shop = long_module(code);
    let check = "```python\nfrom shop import order_total\nprint(order_total([10, 20]))\n```\n";
    let probe = "```python\nfrom shop import order_total\nprint(order_total([0]))\n```\n";
    let run = Scenario::new()
        .file("shop.py", &shop)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "```\n36\n```\n", "```\n36\n```\n", probe],
            "order_total of [10, 20] returns 45 but should return 36. Fix it.",
        )
        .await;
    assert_eq!(run.read("shop.py"), shop.replace("6 // 4", "6 // 5"));
    assert!(
        run.outcome.text.starts_with("Changed `_tax_standard` in shop.py: `amount * 6 // 4` → `amount * 6 // 5`"),
        "{}",
        run.outcome.text
    );
    let outputs: Vec<String> = run.results().into_iter().map(|(_, _, output)| output).collect();
    for line in [1201, 1205, 1209] {
        assert!(outputs[3].contains(&format!("shop.py:{line}\n")), "{}", outputs[3]);
    }
    // Not the filler around them, which the check never runs.
    assert!(!outputs[3].contains("shop.py:1\n"), "{}", outputs[3]);
}

#[tokio::test]
async fn no_variant_is_tried_on_a_line_the_check_s_run_never_reaches() {
    let code = "def shipping(weight):\n    if weight > 100:\n        return weight * 3 - 7 + 2 * 5\n    \
return weight * 2 + 1\n";
    let shop = long_module(code);
    let check = "```python\nfrom shop import shipping\nprint(shipping(10))\n```\n";
    let probe = "```python\nfrom shop import shipping\nprint(shipping(0) * 0)\n```\n";
    let run = Scenario::new()
        .file("shop.py", &shop)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "```\n20\n```\n", "```\n20\n```\n", probe],
            "`shipping` of 10 returns 21 but should return 20. Fix it.",
        )
        .await;
    assert_eq!(run.read("shop.py"), shop.replace("weight * 2 + 1", "weight * 2 + 0"), "{:?}", run.results());
    // The other branch's operators and numbers are not run against the check.
    assert!(
        run.text().contains("small changes lie on lines the check's run never reaches: not tried]"),
        "{}",
        run.text()
    );
}

#[tokio::test]
async fn the_check_is_asked_about_a_definition_only_where_the_request_names_it() {
    let shop = long_module("def shipping(weight):\n    return weight * 2 + 1\n");
    let check = "```python\nfrom shop import shipping\nprint(shipping(10))\n```\n";
    let about = "The request is about `def shipping(weight)` in shop.py";
    for (request, named) in [
        ("`shipping` of 10 returns 21 but should return 20. Fix it.", true),
        // A symptom alone: the ranked guess is no part of the ask, which
        // the request's own example leads.
        ("Shipping a parcel of weight 10 costs 21 but should cost 20. Fix it.", false),
    ] {
        let run = Scenario::new()
            .file("shop.py", &shop)
            .tool_settings(whole_files())
            .run(&["change", "change", check, "none"], request)
            .await;
        let requests = run.backend.requests();
        let ask = requests
            .iter()
            .map(|r| r.messages.last().unwrap().text())
            .find(|text| text.contains("Before anything changes"))
            .unwrap_or_else(|| panic!("no check asked for: {}", run.text()));
        assert_eq!(ask.contains(about), named, "{ask}");
    }
}

#[tokio::test]
async fn a_check_that_calls_what_the_project_lacks_is_asked_again_with_the_heads_of_the_code() {
    let code = "class Invoice:\n    def __init__(self, currency):\n        self.lines = []\n\n    \
def add(self, name, price, quantity=1):\n        self.lines.append((price, quantity))\n\n    def total(self):\n        \
return sum(price for price, quantity in self.lines)\n";
    let billing = long_module(code);
    let imagined = "```python\nfrom billing import Invoice\ninvoice = Invoice('EUR')\ninvoice.add_line('pen', 2, 3)\n\
print(invoice.total())\n```\n";
    let run = Scenario::new()
        .file("billing.py", &billing)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "Invoice.total", imagined, "none"],
            "The total of an invoice ignores the quantity of each line. Fix it.",
        )
        .await;
    let asks: Vec<String> = run
        .backend
        .requests()
        .iter()
        .map(|r| r.messages.last().unwrap().text())
        .filter(|text| text.contains("Before anything changes"))
        .collect();
    // The first ask shows no code: heads shown up front lead a small model
    // to wrap each in a helper of its own.
    assert!(asks.len() >= 2 && !asks[0].contains("The project defines"), "{asks:?}");
    assert!(asks[1].contains("The project defines no `add_line`."), "{}", asks[1]);
    assert!(
        asks[1].contains("`def add(self, name, price, quantity=1)` of class `Invoice` in billing.py"),
        "{}",
        asks[1]
    );
    assert!(asks[1].contains("`class Invoice` in billing.py, made by `def __init__(self, currency)`"), "{}", asks[1]);
}

#[tokio::test]
async fn a_check_that_crashes_on_an_input_of_its_own_the_request_never_names_is_set_aside() {
    let utils = long_module(PORT);
    let made_up = "```python\nfrom utils import parse_port\nprint(parse_port('8080'))\nprint(parse_port('abc'))\n```\n";
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(&["change", "change", made_up, "none"], "parse_port in utils.py accepts 0, but ports start at 1. Fix it.")
        .await;
    let text = run.text();
    assert!(
        text.contains(
            "[the check is set aside: it stops on an error the project gives for the script's own input `abc`"
        ),
        "{text}"
    );
    // The request's own value is no input of the script's own: its crash may be the report.
    let run = Scenario::new()
        .file("utils.py", &utils)
        .tool_settings(whole_files())
        .run(
            &["change", "change", made_up, "none"],
            "parse_port('abc') in utils.py should raise a clearer error. Fix it.",
        )
        .await;
    assert!(!run.text().contains("the script's own input"), "{}", run.text());
}

#[tokio::test]
async fn a_crash_report_that_says_what_its_example_gives_takes_the_change_that_gives_it_not_one_that_only_stops_the_crash()
 {
    // `parts[0]` and `parts[-1]` both stop the IndexError; only the second
    // gives what the request says the example should.
    let code = "def halves(text):\n    parts = text.split(' ')\n    return (float(parts[0]), float(parts[2]))\n";
    let module = long_module(code);
    let run = Scenario::new()
        .file("pairs.py", &module)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "none", "none", "none", "none"],
            "`halves('1.5 2.25')` raises `IndexError: list index out of range`, though the text holds two numbers. \
It should give `(1.5, 2.25)`.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[once it runs, the check must give `(1.5, 2.25)`, as the request says]"), "{text}");
    let fixed = run.read("pairs.py");
    assert!(fixed.contains("float(parts[-1])") || fixed.contains("float(parts[1])"), "{text}");
    assert!(run.outcome.text.contains("runs and gives `(1.5, 2.25)` with it"), "{}", run.outcome.text);
}

#[tokio::test]
async fn a_crash_of_the_model_s_check_does_not_reproduce_a_report_of_a_wrong_result() {
    let module = long_module("def total(prices):\n    return sum(prices) + 1\n");
    let crashing = "```python\nfrom shop import total\nprint(total(None))\n```\n";
    let run = Scenario::new()
        .file("shop.py", &module)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "total", crashing, "none", "none", "none", "none"],
            "The total of the prices 1 and 2 comes out as 4, where it should be 3.",
        )
        .await;
    let text = run.text();
    assert!(
        text.contains(
            "[the check is set aside: it stops on an error (`TypeError: 'NoneType' object is not iterable`), where \
the request reports no error at all"
        ),
        "{text}"
    );
    assert!(!text.contains("[the check fails on the code as it is"), "{text}");
}

#[tokio::test]
async fn a_value_given_the_example_that_does_not_raise_the_error_the_request_quotes_is_asked_for_again() {
    let code = "def label(names):\n    seen = {}\n    out = []\n    for name in names:\n        if name in seen:\n            \
seen[name] += 1\n            out.append(name + '_' + seen[name])\n        else:\n            seen[name] = 0\n            \
out.append(name)\n    return out\n";
    let labels = long_module(code);
    let run = Scenario::new()
        .file("labels.py", &labels)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                "```python\nnames = ['a', 'b']\n```\n",
                "```python\nnames = ['a', 'a']\n```\n",
                "none",
            ],
            "A list that holds one name twice breaks `label(names)`: it raises `TypeError: can only concatenate str \
(not \"int\") to str`. Each repeat should get a number (a, a_1).",
        )
        .await;
    let text = run.text();
    let why = "it runs without the `TypeError` the request reports, so it does not show the problem";
    assert!(text.contains(&format!("[the check is set aside: {why}]")), "{text}");
    let asks: Vec<String> = run.backend.requests().iter().map(|r| r.messages.last().unwrap().text()).collect();
    let values: Vec<&String> = asks.iter().filter(|a| a.contains("which it never defines")).collect();
    assert_eq!(values.len(), 2, "{asks:#?}");
    assert!(values[1].contains(why), "{}", values[1]);
    // The second value raises it: the check stands, failing on the code as it is.
    assert!(text.contains("[the check fails on the code as it is"), "{text}");
}

#[tokio::test]
async fn a_probe_whose_uses_all_print_what_the_fixed_check_must_is_asked_for_again() {
    let sizes = long_module("def is_small(n):\n    return n < 10\n");
    let check = "```python\nfrom sizes import is_small\nprint(is_small(10))\n```\n";
    // Every use prints `True`, as the fixed check must: a change that made
    // `is_small` always true would keep them.
    let alike = "```python\nfrom sizes import is_small\nprint(is_small(3))\nprint(is_small(5))\n```\n";
    let differing = "```python\nfrom sizes import is_small\nprint(is_small(3))\nprint(is_small(50))\n```\n";
    let run = Scenario::new()
        .file("sizes.py", &sizes)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                alike,
                differing,
                "none",
                "return n <= 10",
                "return n <= 10",
            ],
            "`is_small` of 10 returns False, but 10 is small. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[every use the probe makes prints `True`, as the check must once fixed"), "{text}");
    let asked = run.backend.requests().iter().map(|r| r.messages.last().unwrap().text()).collect::<Vec<_>>();
    assert!(asked.iter().any(|a| a.contains("Your last script's uses all print `True`")), "{asked:#?}");
    assert!(text.contains("[a candidate must leave what the probe prints as it is]"), "{text}");
    assert_eq!(run.read("sizes.py"), sizes.replace("n < 10", "n <= 10"), "{text}");
}

#[tokio::test]
async fn a_probe_that_repeats_the_request_s_case_with_other_numbers_does_not_guard_the_bug() {
    let sizes = long_module("def size(n, unit):\n    return 'big' if n > 10 else 'small'\n");
    // `size(10, 4)` is the request's case again: it prints `small` now and
    // must print `big` with the fix; `size(20, 1)` is another use.
    let probe = "```python\nfrom sizes import size\nprint(size(10, 4))\nprint(size(20, 1))\n```\n";
    let run = Scenario::new()
        .file("sizes.py", &sizes)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                probe,
                "none",
                "return 'big' if n >= 10 else 'small'",
                "return 'big' if n >= 10 else 'small'",
            ],
            "`size(10, 3)` returns 'small', but a size of 10 or more is 'big'. Fix it.",
        )
        .await;
    assert!(
        run.text().contains("[the probe repeats the request's case with other values: those uses are left out]"),
        "{}",
        run.text()
    );
    let probes: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolCall { input, .. } => Some(input.to_string()),
            _ => None,
        })
        .filter(|input| input.contains("probe.py") && !input.contains("tries"))
        .collect();
    assert!(probes.last().is_some_and(|p| !p.contains("size(10, 4)") && p.contains("size(20, 1)")), "{probes:?}");
    assert_eq!(run.read("sizes.py"), sizes.replace("n > 10", "n >= 10"), "{}", run.text());
}

#[tokio::test]
async fn when_several_small_changes_pass_the_check_the_model_picks_the_one_that_does_what_is_asked() {
    let people = long_module("def is_adult(age):\n    return age > 18\n");
    let check = "```python\nfrom people import is_adult\nprint(is_adult(18))\n```\n";
    let probe = "```python\nfrom people import is_adult\nprint(is_adult(30))\n```\n";
    // The model's own version, asked where only a pick of lines stands: as it is.
    let unchanged = "```python\ndef is_adult(age):\n    return age > 18\n```\n";
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                probe,
                "none",
                "return age > 17",
                "return age > 17",
                unchanged,
                "return age > 18",
            ],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    // `>=` passes first, `18` → `17` too: the model's pick, the same both
    // ways round, is what is proposed, once the model's own version (asked
    // whole, then as its line) changed nothing.
    let text = run.text();
    assert!(
        text.contains(
            "[nothing the code prints tells the 2 small changes that pass apart: asking for the model's own version \
first…]"
        ) && text.contains("[the model's own version does not pass: the small change picked stands]"),
        "{text}"
    );
    let requests = run.backend.requests();
    let (forward, backward) = (&requests[requests.len() - 4], &requests[requests.len() - 3]);
    assert_eq!(forward.choices, ["return age >= 18", "return age > 17"]);
    assert_eq!(backward.choices, ["return age > 17", "return age >= 18"]);
    let listed = forward.messages.last().unwrap().text();
    assert!(listed.contains("`return age > 18`\n  becomes\n  `return age >= 18`"), "{listed}");
    assert_eq!(run.read("people.py"), people.replace("age > 18", "age > 17"));
    assert!(run.outcome.text.contains("`age > 18` → `age > 17`"), "{}", run.outcome.text);
    let said: Vec<String> = run.results().into_iter().map(|(name, _, _)| name).collect();
    assert_eq!(said.last().map(String::as_str), Some("Edit"));

    // Where the request writes the number a change would take out of the
    // code (`18`), that change is left out before any pick.
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "```\nTrue\n```\n", "```\nTrue\n```\n", probe],
            "is_adult of 18 returns False but should return True. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(
        text.contains("[left out, as it takes a number the request writes out of the code: `age > 18` → `age > 17`"),
        "{text}"
    );
    assert_eq!(run.read("people.py"), people.replace("age > 18", "age >= 18"));
    assert_eq!(run.backend.used(), 6, "no pick is asked");

    // Told apart first by what they do: where the two print otherwise
    // (`is_adult(17.5)`), the model says what it must print, and the
    // change that prints it stands, with no pick of lines.
    let uses = "```python\nfrom people import is_adult\nprint(is_adult(30))\nprint(is_adult(17.5))\n```\n";
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "```\nTrue\n```\n", "```\nTrue\n```\n", probe, uses, "False", "False"],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    let told = "[`print(is_adult(17.5))` must print `False`: 1 of the changes print it]";
    assert!(run.text().contains(told), "{}", run.text());
    let ran = run.results().into_iter().rev().nth(1).map(|(_, _, output)| output).unwrap_or_default();
    assert_eq!(ran.matches("=== ").count(), 2, "{ran}");
    assert!(ran.contains("True\nFalse\n") && ran.contains("True\nTrue\n"), "{ran}");
    assert_eq!(run.read("people.py"), people.replace("age > 18", "age >= 18"));

    // A pick that follows the order tells nothing: the first found stands.
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                probe,
                "none",
                "return age >= 18",
                "return age > 17",
                "yes",
                "yes",
                unchanged,
                "return age > 18",
            ],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    assert!(run.text().contains("[the pick stays torn between two changes: the one of them found first stands]"));
    assert_eq!(run.read("people.py"), people.replace("age > 18", "age >= 18"));

    // Each then judged alone, where no order leads: one said to do what
    // is asked stands.
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                probe,
                "none",
                "return age >= 18",
                "return age > 17",
                "no",
                "yes",
                unchanged,
                "return age > 18",
            ],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    assert!(run.text().contains("[judged alone, one of the two changes does what is asked]"), "{}", run.text());
    let requests = run.backend.requests();
    let alone = requests[requests.len() - 3].messages.last().unwrap().text();
    assert!(
        alone.contains("`return age > 18`\n  becomes\n  `return age > 17`\n\nDoes it do what is asked?"),
        "{alone}"
    );
    assert_eq!(run.read("people.py"), people.replace("age > 18", "age > 17"));

    // Of three, the two that make every use near the check's print one
    // value (`is_adult(17)`, `is_adult(0)`, …: `or known` and
    // `known=False` make all of them true) are left out, and the third
    // stands alone, before any pick is asked.
    let people = long_module("def is_adult(age, known=True):\n    return age > 18 or not known\n");
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "```\nTrue\n```\n", "```\nTrue\n```\n", probe, "none"],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    let near = run.results().into_iter().rev().nth(1).map(|(_, _, output)| output).unwrap_or_default();
    assert!(near.contains("=== 0\n--- use\nFalse\n"), "{near}");
    assert!(
        run.text().contains(
            "[left out, as with it every use near the check's prints one value: `(age, known=True)` → `(age, \
known=False)` on line 1201; `age > 18 or not known` → `age > 18 or known` on line 1202]"
        ),
        "{}",
        run.text()
    );
    let requests = run.backend.requests();
    assert_eq!(requests.iter().filter(|r| !r.choices.is_empty()).count(), 4, "the intent and the line's value only");
    assert_eq!(run.read("people.py"), people.replace("age > 18", "age >= 18"), "{}", run.text());

    // Without that step, a model torn between two both ways round is asked
    // between those two, both ways: a pick the same both ways then stands.
    let picked = || tack::config::PipelineSettings { near_uses: false, ..Default::default() };
    let unchanged_known = "```python\ndef is_adult(age, known=True):\n    return age > 18 or not known\n```\n";
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .pipeline(picked())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                probe,
                "none",
                "return age > 18 or known",
                "def is_adult(age, known=False):",
                "return age > 18 or known",
                "return age > 18 or known",
                unchanged_known,
                "return age > 18 or not known",
            ],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    let requests = run.backend.requests();
    let choices: Vec<&Vec<String>> = requests.iter().map(|r| &r.choices).filter(|c| !c.is_empty()).collect();
    // The intent and the line's value, each both ways, then the changes.
    assert_eq!(choices.len(), 8, "{choices:#?}");
    assert_eq!(choices[4].len(), 3, "{choices:#?}");
    assert_eq!(*choices[6], ["def is_adult(age, known=False):", "return age > 18 or known"]);
    assert_eq!(run.read("people.py"), people.replace("or not known", "or known"));

    // Torn between those two still (it takes the first place both times):
    // of the two it named, the one found first stands, not the first of all.
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .pipeline(picked())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                probe,
                "none",
                "return age > 18 or known",
                "def is_adult(age, known=False):",
                "def is_adult(age, known=False):",
                "return age > 18 or known",
                "no",
                "no",
                unchanged_known,
                "return age > 18 or not known",
            ],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    assert!(run.text().contains("[the pick stays torn between two changes: the one of them found first stands]"));
    assert_eq!(run.read("people.py"), people.replace("known=True", "known=False"), "{}", run.text());

    // Where the model's own version passes the check too, it stands: a
    // pick among lines is a reading, and the version answers the request.
    let people = long_module("def is_adult(age):\n    return age > 18\n");
    let run = Scenario::new()
        .file("people.py", &people)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                check,
                "```\nTrue\n```\n",
                "```\nTrue\n```\n",
                probe,
                "none",
                "return age > 17",
                "return age > 17",
                "```python\ndef is_adult(age):\n    return 18 <= age\n```\n",
            ],
            "is_adult of eighteen returns False but should return True. Fix it.",
        )
        .await;
    assert_eq!(run.read("people.py"), people.replace("age > 18", "18 <= age"), "{}", run.text());
    assert_eq!(run.backend.used(), 10, "one version asked");
}

#[tokio::test]
async fn a_run_that_ends_on_the_program_s_own_error_report_the_request_quotes_must_report_otherwise() {
    let code = "import sys\n\nOPTIONS = ['--color', '--size']\n\n\ndef suggest(word):\n    for option in OPTIONS:\n        \
name = option[1:]\n        if word[2:4] in name:\n            return '--' + name\n\n\ndef main(argv):\n    \
for arg in argv:\n        if arg not in OPTIONS:\n            \
sys.exit(f\"error: unknown option '{arg}'\\n(Did you mean {suggest(arg)}?)\")\n";
    let cli = long_module(code);
    let check = "```python\nfrom cli import main\nmain(['--colr'])\n```\n";
    let right = "(Did you mean --color?)";
    let run = Scenario::new()
        .file("cli.py", &cli)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "main", check, right, right, "none", "name = option[2:]", "name = option[2:]"],
            "A mistyped option gets a hint with one dash too many. Run with --colr the program prints:\n\n\
error: unknown option '--colr'\n(Did you mean ---color?)\n\nIt should suggest `--color`.",
        )
        .await;
    assert!(run.text().contains("[the check ends on the program's report of an error"), "{}", run.text());
    // The line the request quotes, a character off the value it names apart.
    assert!(run.text().contains("[the line `(Did you mean ---color?)` must read `(Did you mean --color?)`]"));
    assert!(run.outcome.text.contains("`option[1:]` → `option[2:]`"), "{}", run.outcome.text);
    assert_eq!(run.read("cli.py"), cli.replace("option[1:]", "option[2:]"), "{}", run.text());
}

#[tokio::test]
async fn a_variant_of_a_function_called_from_another_file_is_proposed_there() {
    // The file the variant changes was never read by a call: the pipeline
    // read it to vary it, and its Edit goes through.
    let helpers = "def exceeds(x, n):\n    return x > n\n";
    let calc =
        format!("from helpers import exceeds\n{}", long_module("def at_least(x, n):\n    return exceeds(x, n)\n"));
    let check = "```python\nfrom calc import at_least\nprint(at_least(3, 3))\n```\n";
    // `x + 1` in `at_least` passes the check too, but not the probe's 2.5.
    let probe = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\nprint(at_least(2.5, 3))\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .file("helpers.py", helpers)
        .tool_settings(whole_files())
        .run(
            &["change", "change", check, "True", "True", probe],
            "at_least with 3 and 3 returns False but should return True. Fix it.",
        )
        .await;
    assert_eq!(run.read("helpers.py"), "def exceeds(x, n):\n    return x >= n\n", "{}", run.text());
    assert_eq!(run.read("calc.py"), calc);
    assert!(run.outcome.text.contains("Changed `exceeds` in helpers.py"), "{}", run.outcome.text);
}

#[tokio::test]
async fn a_refused_version_one_small_change_from_passing_is_mended_and_proposed() {
    // No one-token change of `x > n + 1` passes both the check and the
    // probe; the model's version has the right shape and one operator
    // wrong, and its `>=` variant alone passes.
    let calc = long_module("def at_least(x, n):\n    return x > n + 1\n");
    let check = "```python\nfrom calc import at_least\nprint(at_least(3, 3))\n```\n";
    let probe = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\nprint(at_least(2.5, 3))\n```\n";
    let version = "```python\ndef at_least(x, n):\n    return x > n\n```\n";
    // Mended once every version asked has failed: one here.
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { candidates: 1, ..Default::default() })
        .run(
            &["change", "change", check, "True", "True", probe, version],
            "at_least with 3 and 3 returns False but should return True. Fix it.",
        )
        .await;
    let text = run.text();
    assert!(text.contains("[no small change passes the check]"), "{text}");
    assert!(
        text.contains("[candidate 1 refused: with it the check prints:\n```\nFalse\n```\nwhere it must print"),
        "{text}"
    );
    assert_eq!(run.read("calc.py"), calc.replace("x > n + 1", "x >= n"), "{text}");
    assert!(run.outcome.text.contains("the model's version, with `x > n` → `x >= n`"), "{}", run.outcome.text);
    let said: Vec<String> = run.results().into_iter().map(|(name, _, _)| name).collect();
    assert_eq!(said.last().map(String::as_str), Some("Edit"));
}

#[tokio::test]
async fn a_check_that_parses_no_command_line_is_told_the_call_that_parses_one() {
    // A command-line library: the options reach the code only through the
    // call that parses a command line, which reads `sys.argv` in a private
    // helper. A check that declares the option and prints what was parsed,
    // parsing nothing, shows nothing of the report.
    let parser = r#"import sys


class Parser:
    def __init__(self):
        self.flags = []
        self.values = {}

    def option(self, flag):
        self.flags.append(flag)
        return self

    def _user_args(self, argv):
        return sys.argv[1:] if argv is None else argv

    def parse(self, argv=None):
        for word in self._user_args(argv):
            if word in self.flags:
                self.values[word.lstrip('-').replace('-', '')] = True
        return self

    def opts(self):
        return self.values
"#;
    let text = long_module(parser);
    let unparsed = "```python\nfrom cli import Parser\np = Parser().option('--dry-run')\nprint(p.opts())\n```\n";
    let parsed = "```python\nfrom cli import Parser\np = Parser().option('--dry-run').parse(['--dry-run'])\nprint(p.opts())\n```\n";
    let run = Scenario::new()
        .file("cli.py", &text)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(
            &["change", "change", "Parser.opts", unparsed, parsed, "{'dry_run': True}"],
            "With `Parser().option('--dry-run')` and `--dry-run` on the command line, the options parsed are \
`{'dryrun': True}`; they should be `{'dry_run': True}`. Fix it.",
        )
        .await;
    let text_now = run.text();
    let why = "it prints only `{}`: the example's values never reach the code the request is about; the request's \
`--dry-run` is a command-line option, which reaches the project only through a call that parses a command line, as \
`def parse(self, argv=None)` in cli.py does: the script makes none";
    assert!(text_now.contains(&format!("[the check is set aside: {why}]")), "{text_now}");
    let again =
        run.backend.requests().iter().map(|r| r.messages.last().unwrap().text()).find(|t| t.contains("set aside"));
    assert!(again.is_some_and(|again| again.contains(why)), "{text_now}");
    assert!(bash_commands(&run).iter().any(|c| c.contains(".parse(['--dry-run'])")), "{text_now}");
}

#[tokio::test]
async fn a_check_that_shows_nothing_is_set_aside_and_the_model_s_versions_must_pass_a_usable_one() {
    let calc = long_module("def at_least(x, n):\n    return x > n\n");
    let prompt = "at_least with 3 and 3 returns False but should return True. Fix it.";
    // The model expects what the check prints now: the check runs a case
    // that works, not the one reported. It is set aside and asked again,
    // told why; the next one shows the report, and the version must pass it.
    let check = "```python\nfrom calc import at_least\nprint(at_least(5, 3))\n```\n";
    let reported = "```python\nfrom calc import at_least\nprint(at_least(3, 3))\n```\n";
    let fixed = "```python\ndef at_least(x, n):\n    return x >= n\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(
            &[
                "change",
                "change",
                check,
                "True",
                "True",
                "```\nTrue\n```\n",
                reported,
                "True",
                "True",
                "No probe.",
                fixed,
            ],
            prompt,
        )
        .await;
    let text = run.text();
    assert!(text.contains("[the line `True` must read `True`]"), "{text}");
    let why = "on the code as it is, it prints what it must print once the request is done, so it does not run the \
case the request reports";
    assert!(text.contains(&format!("[the check is set aside: {why}]")), "{text}");
    let again = run.backend.requests()[6].messages.last().unwrap().text();
    assert!(again.contains(&format!("Your last script was set aside: {why}.")), "{again}");
    assert!(text.contains("[the line `False` must read `True`]"), "{text}");
    assert!(bash_commands(&run).iter().any(|c| c.contains("print(at_least(3, 3))")));
    assert!(run.read("calc.py") == calc.replace("x > n", "x >= n"), "{text}");

    // A model whose pick follows the order the values are offered in says
    // nothing of what the line must print: no check either.
    let failing = "```python\nfrom calc import at_least\nprint(at_least(3, 3))\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(&["change", "change", failing, "False", "True", fixed], prompt)
        .await;
    let asked: Vec<String> = run.backend.requests()[3..5].iter().map(|r| r.messages.last().unwrap().text()).collect();
    assert!(
        asked[0].ends_with("Reply with one of: `False`, `True`.")
            && asked[1].ends_with("Reply with one of: `True`, `False`."),
        "{asked:?}"
    );
    assert!(
        run.text().contains("[the line `False`: the pick follows the order it is offered in — left free]"),
        "{}",
        run.text()
    );
    assert!(run.text().contains("[no check: which value each line must print, the model picks by the order offered]"));
    assert_eq!(run.read("calc.py"), calc.replace("x > n", "x >= n"));

    // A check that never loads the project (its own copy of the code) or
    // fails on its own mistake is asked again, sampled, told why; then a
    // version that leaves the check failing is refused.
    let copied = "```python\ndef at_least(x, n):\n    return x >= n\nprint(at_least(3, 3))\n```\n";
    let mistaken = "```python\nimport calc\nprint(at_least(3, 3))\n```\n";
    let asserting = "```python\nfrom calc import at_least\nassert at_least(3, 3)\n```\n";
    let wrong = "```python\ndef at_least(x, n):\n    return x < n\n```\n";
    let run = Scenario::new()
        .file("calc.py", &calc)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(&["change", "change", copied, mistaken, asserting, "```python\nprint(1)\n```\n", wrong, fixed], prompt)
        .await;
    let requests = run.backend.requests();
    let again = requests[3].messages.last().unwrap().text();
    assert!(again.contains("Your last script was set aside: it never loads the project"), "{again}");
    assert_eq!(requests[3].resample, Some(1));
    let again = requests[4].messages.last().unwrap().text();
    assert!(again.contains("Your last script was set aside: it uses a name it does not define"), "{again}");
    assert_eq!(requests[4].resample, Some(2));
    // The model's versions are asked with the check and how it fails now.
    let asked = requests[6].messages.last().unwrap().text();
    assert!(
        asked.contains("This check of the request:\n```\nfrom calc import at_least\nassert at_least(3, 3)\n```\nfails on the code as it is:"),
        "{asked}"
    );
    assert!(asked.contains("AssertionError") && asked.contains("It must run without that error."), "{asked}");
    // Refused, the version is told why, from the check's run with it in place.
    assert!(
        run.text().contains("[candidate 1 refused: with it the check fails with `AssertionError`]"),
        "{}",
        run.text()
    );
    let asked = run.backend.requests()[7].messages.last().unwrap().text();
    assert!(asked.contains("Your last version was refused: with it the check fails with `AssertionError`."), "{asked}");
    assert_eq!(run.read("calc.py"), calc.replace("x > n", "x >= n"));
}

/// The test command a project configures (`[checks] test`): asserts that
/// `double(2)` is 4, as the project's tests would.
const DOUBLE_TESTS: &str = "python3 -c 'from calc import double; assert double(2) == 4, double(2)'";

/// The Bash calls of a run, as the user sees them, less the lead that
/// runs the harness's own in the workspace's copy (see [`in_copy`]).
fn bash_commands(run: &Run) -> Vec<String> {
    run.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolCall { name, input, .. } if name == "Bash" => {
                let command = input["command"].as_str()?;
                Some(in_copy(command).unwrap_or(command).to_string())
            }
            _ => None,
        })
        .collect()
}

/// The command a harness's Bash call runs in the workspace's copy, where
/// it runs there (`export CARGO_TARGET_DIR=…; cd /tmp/tack-copy-…/project && …`).
fn in_copy(command: &str) -> Option<&str> {
    let (lead, rest) = command.split_once(" && ")?;
    (lead.starts_with("export CARGO_TARGET_DIR=") && lead.contains("/tack-copy-") && lead.ends_with("/project"))
        .then_some(rest)
}

#[tokio::test]
async fn what_the_harness_runs_runs_in_a_copy_and_leaves_the_project_as_it_was() {
    // Tests that leave a file behind, as many do (a cache, a report).
    let tests = format!("{DOUBLE_TESTS} && echo ran > .test-report");
    let run = Scenario::new()
        .file("calc.py", "def double(x):\n    return x + x + 1\n")
        .test_command(&tests)
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "calc.py"})),
                &call(
                    "Edit",
                    serde_json::json!({"file_path": "calc.py", "old_string": "x + x + 1", "new_string": "x * 2"}),
                ),
                "Fixed.",
            ],
            "double(2) gives 5. Fix it.",
        )
        .await;
    let ran: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolCall { name, input, .. } if name == "Bash" => input["command"].as_str(),
            _ => None,
        })
        .collect();
    assert!(ran.len() == 1 && in_copy(ran[0]) == Some(tests.as_str()), "{ran:?}");
    assert_eq!(run.outcome.text, "Fixed.", "the tests passed on the changed code, in the copy");
    assert!(!run.exists(".test-report"), "what the tests wrote stays in the copy");
    assert_eq!(run.read("calc.py"), "def double(x):\n    return x * 2\n");
}

#[tokio::test]
async fn the_configured_tests_run_after_a_change_and_a_failure_sends_the_model_back() {
    let edit = |old: &str, new: &str| {
        call("Edit", serde_json::json!({"file_path": "calc.py", "old_string": old, "new_string": new}))
    };
    let run = Scenario::new()
        .file("calc.py", "def double(x):\n    return x + x + 1\n")
        .test_command(DOUBLE_TESTS)
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "calc.py"})),
                &edit("x + x + 1", "x * 2 + 1"),
                "Done.",
                &edit("x * 2 + 1", "x * 2"),
                "Fixed: double returns twice its argument.",
            ],
            "double(2) gives 5. Fix it.",
        )
        .await;
    assert_eq!(run.read("calc.py"), "def double(x):\n    return x * 2\n");
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Fixed: double returns twice its argument.");
    // Each change is tested, in a step the user sees; the first run's
    // failure is what the model is sent back with.
    assert_eq!(bash_commands(&run), [DOUBLE_TESTS, DOUBLE_TESTS]);
    let told = run.told("[tack] The task is not done: the tests");
    assert!(told.contains(DOUBLE_TESTS) && told.contains("AssertionError: 5"), "{told}");
}

#[tokio::test]
async fn the_configured_tests_do_not_run_when_nothing_changed_and_stop_when_their_runs_are_spent() {
    let answer = Scenario::new()
        .file("calc.py", "def double(x):\n    return x + x + 1\n")
        .test_command(DOUBLE_TESTS)
        .run(&["double adds one too many."], "What is wrong with double?")
        .await;
    assert_eq!(bash_commands(&answer), Vec::<String>::new(), "an answer changes nothing to test");
    // A model that never makes them pass is sent back twice, not forever.
    let write = |n: usize| {
        call(
            "Write",
            serde_json::json!({"file_path": "calc.py", "content": format!("def double(x):\n    return x + {n}\n")}),
        )
    };
    let (one, two, three) = (write(10), write(20), write(30));
    let run = Scenario::new()
        .file("calc.py", "def double(x):\n    return x + x + 1\n")
        .test_command(DOUBLE_TESTS)
        .run(
            &[
                &call("Read", serde_json::json!({"file_path": "calc.py"})),
                &one,
                "Done.",
                &two,
                "Done.",
                &three,
                "Done.",
                "Still here.",
            ],
            "Fix double.",
        )
        .await;
    assert_eq!(bash_commands(&run).len(), 3, "{}", run.render());
    assert_eq!(run.outcome.text, "Done.", "the third failure ends the turn with its report in the history");
    assert_eq!(run.backend.used(), 7);
}

#[tokio::test]
async fn a_whole_file_change_is_tested_by_the_configured_command_and_sent_back_when_it_fails() {
    let wrong = "calc.py\n```python\ndef double(x):\n    return x * 2 + 1\n```\n";
    let right = "calc.py\n```python\ndef double(x):\n    return x * 2\n```\n";
    let script: Vec<&str> = CHANGE.iter().copied().chain([wrong, right]).collect();
    let run = Scenario::new()
        .file("calc.py", "def double(x):\n    return x + x + 1\n")
        .test_command(DOUBLE_TESTS)
        .tool_settings(whole_files())
        .run(&script, "double(2) gives 5 in calc.py. Fix it.")
        .await;
    assert_eq!(run.read("calc.py"), "def double(x):\n    return x * 2\n");
    assert_eq!(bash_commands(&run), [DOUBLE_TESTS, DOUBLE_TESTS]);
    let sent = run.backend.last_request().unwrap().messages.last().unwrap().text();
    assert!(sent.contains("AssertionError: 5") && sent.contains("x * 2 + 1"), "{sent}");
}

#[tokio::test]
async fn a_request_s_example_that_uses_a_value_it_never_defines_is_given_it() {
    let code = "def slugs(titles):\n    seen = {}\n    out = []\n    for title in titles:\n        \
n = seen.get(title)\n        seen[title] = (n or 0) + 1\n        out.append(title if n is None else title + '_' + n)\n    \
return out\n";
    let slug = long_module(code);
    let titles = "```python\ntitles = ['Setup', 'Setup', 'Setup']\n```\n";
    let run = Scenario::new()
        .file("slug.py", &slug)
        .tool_settings(whole_files())
        .run(
            &["change", "change", titles, "none"],
            "`slugs(titles)` raises TypeError when the titles repeat one three times. Each should get its own slug.",
        )
        .await;
    assert!(run.text().contains("[asking for the `titles` the request's example uses…]"), "{}", run.text());
    assert_eq!(run.read("slug.py"), slug.replace("'_' + n)", "'_' + str(n))"), "{}", run.text());
    // The check the user sees runs the value given and the example as written.
    let requests = run.backend.requests();
    let asked = requests[2].messages.last().unwrap().text();
    assert!(asked.contains("uses `titles`, which it never defines. Write the Python lines that define `titles`"));
}

#[tokio::test]
async fn a_check_that_stops_on_the_project_s_refusal_of_its_own_misuse_is_set_aside() {
    let code = "OPTIONS = {}\n\n\ndef option(flag):\n    if flag in OPTIONS:\n        \
raise ValueError(f'cannot add option {flag} due to conflicting flag {flag}')\n    OPTIONS[flag] = True\n\n\n\
def attribute(flag):\n    return flag.lstrip('-').replace('-', '')\n";
    let cli = long_module(code);
    let twice = "```python\nfrom cli import option, attribute\noption('--dry-run')\noption('--dry-run')\n\
print(attribute('--dry-run'))\n```\n";
    let once =
        "```python\nfrom cli import option, attribute\noption('--dry-run')\nprint(attribute('--dry-run'))\n```\n";
    let fixed = "```python\ndef attribute(flag):\n    return flag.lstrip('-').replace('-', '_')\n```\n";
    let run = Scenario::new()
        .file("cli.py", &cli)
        .tool_settings(whole_files())
        .run(
            &[
                "change",
                "change",
                "attribute",
                twice,
                once,
                "```\ndry_run\n```\n",
                "none",
                "attribute",
                "attribute",
                fixed,
            ],
            "The attribute name for the flag --dry-run comes out as dryrun instead of dry_run. Fix it.",
        )
        .await;
    assert!(
        run.text().contains(
            "[the check is set aside: it stops on an error the project raises on purpose where it is \
misused (`ValueError: cannot add option --dry-run due to conflicting flag --dry-run`)"
        ),
        "{}",
        run.text()
    );
    assert_eq!(run.read("cli.py"), cli.replace("replace('-', '')", "replace('-', '_')"), "{}", run.text());
}

#[tokio::test]
async fn a_blank_line_that_must_be_kept_makes_a_check_of_the_output_s_layout() {
    let code = "def render(text):\n    lines = [l.strip() for l in text.strip('\\n').splitlines() if l.strip()]\n    \
return '<pre>\\n' + '\\n'.join(lines) + '\\n</pre>'\n";
    let fmt = long_module(code);
    let check = "```python\nfrom fmt import render\nprint(render('''\nfirst line\n\nsecond line\n'''))\n```\n";
    let expected = "```\n<pre>\nfirst line\n\nsecond line\n</pre>\n```\n";
    let fixed = "```python\ndef render(text):\n    lines = [l.strip() for l in text.strip('\\n').splitlines()]\n    \
return '<pre>\\n' + '\\n'.join(lines) + '\\n</pre>'\n```\n";
    let run = Scenario::new()
        .file("fmt.py", &fmt)
        .tool_settings(whole_files())
        .run(
            &["change", "change", "render", check, expected, "none", fixed],
            "The renderer loses the blank lines of a block. This text:\n\n    first line\n\n    second line\n\n\
comes out with no empty line between the two lines. Blank lines should be kept.",
        )
        .await;
    // The lines the script echoes from its input are not asked about one by
    // one: the request quotes them as input.
    assert!(!run.text().contains("[the line `first line`"), "{}", run.text());
    assert!(run.text().contains("[the check prints its lines in another layout than it must"), "{}", run.text());
    assert_eq!(run.read("fmt.py"), fmt.replace(" if l.strip()]", "]"), "{}", run.text());
}

#[tokio::test]
async fn the_model_names_the_definition_that_must_change_and_is_asked_for_it_alone() {
    let report = format!(
        "from fmt import fmt_total\n\n\n{}",
        long_module("def summary(items):\n    return \"total: \" + fmt_total(items)\n")
    );
    let fmt = "def fmt_total(items):\n    return unit(sum(items))\n\n\ndef unit(n):\n    return str(n - 1) + ' EUR'\n";
    let probe = "```python\nprint('ok')\n```\n";
    let fixed = "```python\ndef unit(n):\n    return str(n) + ' EUR'\n```\n";
    let run = Scenario::new()
        .file("report.py", &report)
        .file("fmt.py", fmt)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(
            // What the line must read is the request's own words: no ask.
            &["change", "change", probe, "unit", "unit", fixed],
            "`summary([1, 2])` gives `total: 2 EUR` but it should be `total: 3 EUR`. Fix it.",
        )
        .await;
    assert!(run.text().contains("[`unit` must change, the model says]"), "{}", run.text());
    let requests = run.backend.requests();
    let named = requests[requests.len() - 2].messages.last().unwrap().text();
    assert!(named.contains("def summary(") && named.contains("def unit("), "all are shown to choose: {named}");
    let asked = requests.last().unwrap().messages.last().unwrap().text();
    assert!(asked.contains("def unit(") && !asked.contains("def summary("), "{asked}");
    assert!(asked.contains("Reply with the whole new version of `unit` that does what is asked"), "{asked}");
    assert_eq!(run.read("fmt.py"), fmt.replace("n - 1", "n"));
    assert_eq!(run.read("report.py"), report);
}

#[tokio::test]
async fn a_crashing_check_s_traceback_leads_the_change_to_where_the_error_is_raised() {
    // The request names `summary`; the error is raised two calls deeper,
    // in a function neither the request nor `summary` names.
    let report = format!(
        "from fmt import fmt_total\n\n\n{}",
        long_module("def summary(items):\n    return \"total: \" + fmt_total(items)\n")
    );
    let fmt = "def fmt_total(items):\n    return pad(str(sum(items)), 6)\n\n\ndef pad(text, width):\n    return text.rjust(width, 0)\n";
    let check = "```python\nfrom report import summary\nprint(summary([1, 2]))\n```\n";
    let probe = "```python\nprint('ok')\n```\n";
    let fixed = "```python\nreturn text.rjust(width)\n```\n";
    let run = Scenario::new()
        .file("report.py", &report)
        .file("fmt.py", fmt)
        .tool_settings(whole_files())
        .pipeline(tack::config::PipelineSettings { variants: false, ..Default::default() })
        .run(&["change", "change", check, probe, fixed], "`summary` of [1, 2] raises TypeError. Fix it.")
        .await;
    assert!(
        run.text().contains("[the check's traceback passes through `pad` in fmt.py, `fmt_total` in fmt.py]"),
        "{}",
        run.text()
    );
    // The definition the error is raised in is shown first, and the line
    // that raised it asked for first, with the error.
    let asked = run.backend.requests()[4].messages.last().unwrap().text();
    let (pad, summary) = (asked.find("def pad(").unwrap(), asked.find("def summary(").unwrap());
    assert!(pad < summary, "{asked}");
    assert!(
        asked.contains("The check fails with `TypeError: ")
            && asked.contains("raised on this line of `pad`:\n```\nreturn text.rjust(width, 0)\n```"),
        "{asked}"
    );
    assert!(run.text().contains("[asking for the line the error is raised on, as it must read…]"));
    assert_eq!(run.read("fmt.py"), fmt.replace("text.rjust(width, 0)", "text.rjust(width)"));
    assert_eq!(run.read("report.py"), report);
}
