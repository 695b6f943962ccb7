//! Harness overhead per iteration: a scripted Read + Edit loop on a
//! 10,000-line file, against the same file work done directly (the reference).
//!
//! Run with `cargo bench --bench harness`. Each iteration the model reads 50
//! lines and edits one; the reference does the same reads and atomic writes
//! through the workspace without the loop, parser, permissions, events and
//! session file. The difference is what the harness costs.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tack::agent::{Approval, ApprovalRequest, Conversation, ConversationParts, Host, LoopSettings, SessionStore};
use tack::model::scripted::ScriptedBackend;
use tack::permissions::Policy;
use tack::protocol::{ApprovalDecision, Event, PermissionMode, SequencedEvent};
use tack::tools::ToolRegistry;
use tack::workspace::Workspace;
use tack::workspace::edits::{EditOutcome, FileChange, apply_to_disk};
use tokio_util::sync::CancellationToken;

const LINES: usize = 10_000;
const ITERATIONS: usize = 40;
const RUNS: usize = 5;

/// Stamps the start of every iteration (the context gauge opens each one).
struct Stopwatch {
    starts: Mutex<Vec<Instant>>,
}

#[async_trait]
impl Host for Stopwatch {
    fn emit(&self, event: SequencedEvent) {
        if matches!(event.event, Event::ContextUsage { .. } | Event::TurnFinished { .. }) {
            self.starts.lock().unwrap().push(Instant::now());
        }
    }
    async fn approve(&self, _: ApprovalRequest) -> Approval {
        Approval::by_user(ApprovalDecision::Allow)
    }
    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        apply_to_disk(workspace, change)
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn harness_iterations() -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.rs"), common::rename_file(LINES)).unwrap();
    let workspace = Arc::new(Workspace::open(dir.path()).unwrap());
    let host = Arc::new(Stopwatch { starts: Mutex::new(Vec::new()) });
    let session = SessionStore::for_workspace(workspace.root()).create().unwrap();
    let mut conversation = Conversation::new(ConversationParts {
        backend: Arc::new(ScriptedBackend::from_texts(common::rename_script(ITERATIONS))),
        tools: Arc::new(ToolRegistry::builtin(&Default::default())),
        workspace: workspace.clone(),
        host: host.clone(),
        policy: Policy::new(PermissionMode::AutoAll, &[]).unwrap(),
        settings: LoopSettings { max_iterations: ITERATIONS as u32 + 1, ..LoopSettings::default() },
        session: Some(session),
        history: Vec::new(),
        tasks: Vec::new(),
    });
    let outcome = conversation.run_turn("rename the bindings", CancellationToken::new()).await;
    assert_eq!(outcome.text, "Renamed 40 bindings.");
    let text = std::fs::read_to_string(dir.path().join("big.rs")).unwrap();
    assert_eq!(text.matches("renamed_").count(), ITERATIONS);
    let starts = host.starts.lock().unwrap().clone();
    // Iterations with tool work only: the last one just answers.
    starts.windows(2).take(ITERATIONS).map(|w| w[1] - w[0]).collect()
}

/// The same reads and writes, straight through the workspace.
fn direct_iterations() -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.rs"), common::rename_file(LINES)).unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    (0..ITERATIONS)
        .map(|i| {
            let started = Instant::now();
            let line = i * 200 + 7;
            let path = workspace.resolve("big.rs").unwrap();
            let text = workspace.read_text(&path).unwrap();
            let excerpt: String = text.lines().skip(line - 1).take(50).map(|l| format!("{l}\n")).collect();
            std::hint::black_box(excerpt);
            let text = workspace.read_text(&path).unwrap();
            let after = text.replacen(&format!("let value_{line} = "), &format!("let renamed_{line} = "), 1);
            workspace.write_atomic(&path, after.as_bytes()).unwrap();
            started.elapsed()
        })
        .collect()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut harness = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..RUNS {
        harness.extend(runtime.block_on(harness_iterations()));
        direct.extend(direct_iterations());
    }
    let harness = median(harness);
    let direct = median(direct);
    let overhead = harness.saturating_sub(direct);
    println!("harness: Read + Edit loop on a {LINES}-line file, {ITERATIONS} iterations x {RUNS} runs");
    println!("  per iteration, through the agent loop:  {:>9.3} ms (median)", harness.as_secs_f64() * 1e3);
    println!("  per iteration, same file work directly: {:>9.3} ms (median, reference)", direct.as_secs_f64() * 1e3);
    println!("  harness overhead per iteration:         {:>9.3} ms", overhead.as_secs_f64() * 1e3);
    println!("  ratio loop / direct:                    {:>9.2}x", harness.as_secs_f64() / direct.as_secs_f64());
}
