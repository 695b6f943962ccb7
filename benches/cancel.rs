//! Interrupt latency: 100 turns cancelled while Bash runs a command that
//! starts background children (`sleep 300 & sleep 300`). Measures the time
//! from the cancel to `turn_finished` (target: under 200 ms) and counts the
//! processes that survive it (target: none).
//!
//! `cargo bench --bench cancel`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tack::agent::{Approval, ApprovalRequest, Conversation, ConversationParts, Host, LoopSettings};
use tack::model::scripted::ScriptedBackend;
use tack::permissions::Policy;
use tack::protocol::{AgentStatus, ApprovalDecision, Event, PermissionMode, SequencedEvent, StopReason};
use tack::tools::ToolRegistry;
use tack::workspace::Workspace;
use tack::workspace::edits::{EditOutcome, FileChange, apply_to_disk};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const CANCELS: usize = 100;

struct Watch {
    running_tool: Notify,
    finished: Mutex<Option<Instant>>,
}

#[async_trait]
impl Host for Watch {
    fn emit(&self, event: SequencedEvent) {
        match event.event {
            Event::Status { status: AgentStatus::RunningTool } => self.running_tool.notify_one(),
            Event::TurnFinished { .. } => *self.finished.lock().unwrap() = Some(Instant::now()),
            _ => {}
        }
    }
    async fn approve(&self, _: ApprovalRequest) -> Approval {
        Approval::by_user(ApprovalDecision::Allow)
    }
    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        apply_to_disk(workspace, change)
    }
}

fn survivors(marker: &str) -> usize {
    std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
        .unwrap_or(0)
}

async fn one_cancel(workspace: Arc<Workspace>, index: usize) -> (Duration, usize) {
    // A marker unique to this run, so survivors are counted exactly.
    let marker = format!("sleep 300.{index:03}");
    let call = serde_json::json!({"tool": "Bash", "input": {"command": format!("{marker} & {marker}")}}).to_string();
    let watch = Arc::new(Watch { running_tool: Notify::new(), finished: Mutex::new(None) });
    let mut conversation = Conversation::new(ConversationParts {
        backend: Arc::new(ScriptedBackend::from_texts([call, "never reached".to_string()])),
        tools: Arc::new(ToolRegistry::builtin(&Default::default())),
        workspace,
        host: watch.clone(),
        policy: Policy::new(PermissionMode::AutoAll, &[]).unwrap(),
        settings: LoopSettings::default(),
        session: None,
        history: Vec::new(),
        tasks: Vec::new(),
    });
    let cancel = CancellationToken::new();
    let turn_cancel = cancel.clone();
    let turn = tokio::spawn(async move { conversation.run_turn("sleep", turn_cancel).await });
    watch.running_tool.notified().await;
    // Let bash start both children before pulling the plug, and make sure
    // there is something to kill: the count below must not pass vacuously.
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(survivors(&marker), 3, "bash and both sleeps should be running before the cancel");
    let cancelled_at = Instant::now();
    cancel.cancel();
    let outcome = turn.await.unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    let finished = watch.finished.lock().unwrap().expect("turn_finished was sent");
    (finished - cancelled_at, survivors(&marker))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = Arc::new(Workspace::open(dir.path()).unwrap());
    let mut latencies = Vec::with_capacity(CANCELS);
    let mut surviving = 0;
    for index in 0..CANCELS {
        let (latency, left) = runtime.block_on(one_cancel(workspace.clone(), index));
        latencies.push(latency);
        surviving += left;
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("cancel: {CANCELS} turns cancelled while Bash ran `sleep 300 & sleep 300`");
    println!(
        "  cancel -> turn_finished: median {:.1} ms, p95 {:.1} ms, max {:.1} ms (target < 200 ms)",
        ms(latencies[CANCELS / 2]),
        ms(latencies[CANCELS * 95 / 100]),
        ms(latencies[CANCELS - 1])
    );
    println!("  surviving child processes: {surviving} (target 0)");
}
