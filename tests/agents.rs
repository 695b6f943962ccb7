//! Sub-agents, the task list and Sleep: whole turns with the scripted model,
//! each agent replaying its own script.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Edits, RecordingHost, Scenario};
use insta::assert_snapshot;
use tack::agent::{Conversation, ConversationParts, LoopSettings, SessionStore};
use tack::model::scripted::{ScriptEntry, ScriptedBackend};
use tack::permissions::Policy;
use tack::protocol::{ApprovalDecision, Event, PermissionMode, StopReason};
use tack::tools::ToolRegistry;
use tack::workspace::Workspace;
use tokio_util::sync::CancellationToken;

fn call(tool: &str, input: serde_json::Value) -> String {
    serde_json::json!({ "tool": tool, "input": input }).to_string()
}

fn agent(description: &str, prompt: &str) -> String {
    call("Agent", serde_json::json!({"description": description, "prompt": prompt}))
}

// ---------------------------------------------------------------- Agent

#[tokio::test]
async fn a_sub_agent_works_from_a_fresh_history_and_its_answer_is_the_result() {
    let run = Scenario::new()
        .file("notes.txt", "the answer is 42\n")
        .run_agents(
            &[
                ("main", &[&agent("find the answer", "What number does notes.txt hold?"), "It is 42."]),
                ("call_1", &[&call("Read", serde_json::json!({"file_path": "notes.txt"})), "notes.txt holds 42."]),
            ],
            "what is the answer?",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_snapshot!(run.render());
    let results = run.results();
    assert_eq!(results.last().unwrap(), &("Agent".to_string(), false, "notes.txt holds 42.".to_string()));
    // The last request was the main agent's: its history holds the answer as
    // the Agent call's result, and nothing of the sub-agent's own calls.
    let request = run.backend.last_request().unwrap();
    assert!(request.agent_path.is_empty());
    let shown = format!("{:?}", request.messages);
    assert!(shown.contains("notes.txt holds 42.") && !shown.contains("the answer is 42"), "{shown}");
}

#[tokio::test]
async fn parallel_sub_agents_run_together_and_each_stream_is_complete_and_in_order() {
    let sleep = |ms: u64| call("Sleep", serde_json::json!({"duration_ms": ms}));
    let both = format!("{}\n{}\n", agent("left", "Look left."), agent("right", "Look right."));
    let run = Scenario::new()
        .run_agents(
            &[
                ("main", &[&both, "Both sides looked."]),
                ("call_1", &[&sleep(300), "left done"]),
                ("call_2", &[&sleep(300), "right done"]),
            ],
            "look both ways",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    // Both sub-agents start before either finishes: they ran side by side.
    let position = |wanted: &dyn Fn(&Event) -> bool| run.events.iter().position(|e| wanted(&e.event)).unwrap();
    let last_start = position(&|e| matches!(e, Event::SubagentStarted { agent_id, .. } if agent_id == "call_2"));
    let first_finish = position(&|e| matches!(e, Event::SubagentFinished { .. }));
    assert!(last_start < first_finish, "{}", run.render());
    // Each sub-agent's own events form a complete turn, in order.
    for (name, answer) in [("call_1", "left done"), ("call_2", "right done")] {
        let own: Vec<&Event> =
            run.events.iter().filter(|e| e.agent_path == [name.to_string()]).map(|e| &e.event).collect();
        let mut kinds: Vec<&str> = own.iter().map(|e| e.kind()).filter(|k| !matches!(*k, "status" | "usage")).collect();
        kinds.dedup();
        assert_eq!(kinds, ["context_usage", "tool_call", "tool_result", "context_usage", "text"], "{name}");
        let text: String =
            own.iter().filter_map(|e| if let Event::Text { text } = e { Some(text.as_str()) } else { None }).collect();
        assert_eq!(text, answer);
    }
    // Results are recorded in call order, whatever order the agents ended in.
    let results = run.results();
    let agent_results: Vec<&str> =
        results.iter().filter(|(name, _, _)| name == "Agent").map(|(_, _, out)| out.as_str()).collect();
    assert_eq!(agent_results, ["left done", "right done"]);
}

#[tokio::test]
async fn nesting_deeper_than_the_limit_is_refused_with_an_error_result() {
    let run = Scenario::new()
        .max_agent_depth(2)
        .run_agents(
            &[
                ("main", &[&agent("level 1", "go deeper"), "done"]),
                ("call_1", &[&agent("level 2", "go deeper"), "level 1 done"]),
                ("call_1/call_1", &[&agent("level 3", "go deeper"), "level 2 done"]),
            ],
            "dig",
        )
        .await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    let refused: Vec<_> = run.results().into_iter().filter(|(_, is_error, _)| *is_error).collect();
    assert_eq!(refused.len(), 1, "{}", run.render());
    assert!(refused[0].2.contains("sub-agents may nest at most 2 deep and this agent is at depth 2"), "{refused:?}");
    let deepest = run.events.iter().filter(|e| e.agent_path.len() == 3).count();
    assert_eq!(deepest, 0, "no agent ran at depth 3");
}

#[tokio::test]
async fn a_sub_agent_asks_for_approval_under_its_own_path_and_obeys_plan_mode() {
    let write = call("Write", serde_json::json!({"file_path": "out.txt", "content": "hi\n"}));
    let run = Scenario::new()
        .mode(PermissionMode::AutoRead)
        .answers(&[ApprovalDecision::Allow])
        .run_agents(&[("main", &[&agent("write", "write out.txt"), "ok"]), ("call_1", &[&write, "written"])], "go")
        .await;
    assert_eq!(run.read("out.txt"), "hi\n");
    assert_eq!(run.asked.len(), 1);
    assert_eq!(run.asked[0].agent_path, ["call_1"]);
    assert_eq!(run.asked[0].name, "Write");

    let run = Scenario::new()
        .mode(PermissionMode::Plan)
        .run_agents(&[("main", &[&agent("write", "write out.txt"), "ok"]), ("call_1", &[&write, "could not"])], "go")
        .await;
    assert!(!run.exists("out.txt"));
    let results = run.results();
    assert!(results[0].1 && results[0].2.contains("not available in plan mode"), "{results:?}");
    assert_eq!(results[1], ("Agent".into(), false, "could not".into()));
}

#[tokio::test]
async fn cancelling_the_turn_stops_running_sub_agents() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let sleep = call("Sleep", serde_json::json!({"duration_ms": 30000}));
    let mut scripts = std::collections::BTreeMap::new();
    scripts.insert("main".to_string(), vec![ScriptEntry::Text(agent("wait", "wait a long time"))]);
    scripts.insert("call_1".to_string(), vec![ScriptEntry::Text(sleep), ScriptEntry::Text("never".into())]);
    let started = std::time::Instant::now();
    let run = Scenario::new().run_backend(ScriptedBackend::per_agent(scripts), "wait", cancel).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    let finished: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::SubagentFinished { stop_reason, .. } => Some(*stop_reason),
            _ => None,
        })
        .collect();
    assert_eq!(finished, [StopReason::Cancelled]);
    assert_eq!(run.events.last().unwrap().event.kind(), "turn_finished");
    assert!(run.events.last().unwrap().agent_path.is_empty());
}

// ---------------------------------------------------------------- tasks

#[tokio::test]
async fn task_tools_plan_and_track_work() {
    let run = Scenario::new()
        .run(
            &[
                &format!(
                    "{}\n{}\n",
                    call(
                        "TaskCreate",
                        serde_json::json!({"subject": "Write the parser", "description": "All call forms."})
                    ),
                    call("TaskCreate", serde_json::json!({"subject": "Test the parser", "blocked_by": [1]})),
                ),
                &call("TaskUpdate", serde_json::json!({"id": 2, "status": "in_progress"})),
                &format!(
                    "{}\n{}\n",
                    call("TaskUpdate", serde_json::json!({"id": 1, "status": "completed"})),
                    call("TaskUpdate", serde_json::json!({"id": 2, "status": "in_progress"})),
                ),
                &format!(
                    "{}\n{}\n",
                    call("TaskGet", serde_json::json!({"id": 1})),
                    call("TaskGet", serde_json::json!({"id": 9}))
                ),
                &call("TaskList", serde_json::json!({})),
                "Half done.",
            ],
            "plan it",
        )
        .await;
    assert_snapshot!(run.render());
}

#[tokio::test]
async fn the_task_list_is_saved_with_the_session_and_restored_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_workspace(dir.path());
    let conversation = |script: &[&str], session, history, tasks| {
        let host = Arc::new(RecordingHost::new(Vec::new(), Edits::Apply));
        Conversation::new(ConversationParts {
            backend: Arc::new(ScriptedBackend::from_texts(script.to_vec())),
            tools: Arc::new(ToolRegistry::builtin(&Default::default())),
            workspace: Arc::new(Workspace::open(dir.path()).unwrap()),
            host,
            policy: Policy::new(PermissionMode::AutoRead, &[]).unwrap(),
            settings: LoopSettings::default(),
            session: Some(session),
            history,
            tasks,
        })
    };
    let create = call("TaskCreate", serde_json::json!({"subject": "Ship it"}));
    let start = call("TaskUpdate", serde_json::json!({"id": 1, "status": "in_progress"}));
    let mut first = conversation(&[&create, &start, "Started."], store.create().unwrap(), Vec::new(), Vec::new());
    first.run_turn("start", CancellationToken::new()).await;
    let id = first.session_id().unwrap().to_string();
    drop(first);

    let loaded = store.load(&id).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.tasks.len(), 1);
    assert_eq!(loaded.tasks[0].subject, "Ship it");
    let list = call("TaskList", serde_json::json!({}));
    let writer = store.resume(&loaded).unwrap();
    let mut resumed = conversation(&[&list, "Listed."], writer, loaded.messages, loaded.tasks);
    resumed.run_turn("where are we?", CancellationToken::new()).await;
    let shown = format!("{:?}", resumed.history());
    assert!(shown.contains("[~] #1 Ship it"), "{shown}");
}

// ---------------------------------------------------------------- Sleep

#[tokio::test]
async fn sleep_waits_and_a_cancel_cuts_it_short() {
    let run = Scenario::new().run(&[&call("Sleep", serde_json::json!({"duration_ms": 50})), "Rested."], "rest").await;
    assert_eq!(run.results()[0], ("Sleep".into(), false, "slept 50 ms".into()));

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let script = vec![ScriptEntry::Text(call("Sleep", serde_json::json!({"duration_ms": 600000})))];
    let run = Scenario::new().run_entries(script, "rest long", cancel).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    let (name, is_error, output) = &run.results()[0];
    assert!(name == "Sleep" && *is_error && output.starts_with("sleep cancelled after"), "{output}");
}
