//! The LSP server's costs, measured through the real binary over stdio.
//!
//! Run with `cargo bench --bench lsp` (`TACK_BENCH_ONLY=turn` or
//! `did_change` for one of them). Two measurements:
//! - a 40-iteration scripted turn (Read 50 lines, Edit one, on a 10,000-line
//!   file open in the client) end to end over LSP: every edit goes out as a
//!   `workspace/applyEdit`, the client applies it and sends `didChange`. The
//!   reference is the same turn run in-process, writing to disk, in the same
//!   run: the difference is what the editor round trips cost.
//! - incremental `didChange` on a 100,000-line document: one-character edits
//!   at spread-out lines, timed from the first notification to the answer of
//!   a request sent after the last (handlers apply changes in order, so the
//!   answer means all were applied). The reference is full-document sync of
//!   the same document.

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

mod common;

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use lsp_client::{LspClient, range};
use serde_json::json;
use tack::agent::{Approval, ApprovalRequest, Conversation, ConversationParts, Host, LoopSettings, SessionStore};
use tack::model::scripted::ScriptedBackend;
use tack::permissions::Policy;
use tack::protocol::{ApprovalDecision, PermissionMode, SequencedEvent};
use tack::tools::ToolRegistry;
use tack::workspace::Workspace;
use tack::workspace::edits::{EditOutcome, FileChange, apply_to_disk};
use tokio_util::sync::CancellationToken;

const FILE_LINES: usize = 10_000;
const ITERATIONS: usize = 40;
const RUNS: usize = 5;
/// The turns are short and this machine's speed drifts: more runs, in pairs.
const TURN_RUNS: usize = 15;
const DOCUMENT_LINES: usize = 100_000;
const INCREMENTAL_CHANGES: usize = 2_000;
const FULL_CHANGES: usize = 20;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The turn over LSP, in milliseconds.
fn turn_over_lsp() -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, serde_json::to_string(&common::rename_script(ITERATIONS)).unwrap()).unwrap();
    let options = json!({"model": {"backend": "scripted", "script": script_path}, "maxIterations": ITERATIONS + 1});
    let mut client = LspClient::start(dir.path(), options);
    client.open("big.rs", &common::rename_file(FILE_LINES));
    let conversation = client.new_conversation(Some("auto_all"));
    let started = Instant::now();
    client.turn(&conversation, "rename the bindings");
    let finished = client.wait_turn_finished(&conversation);
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(finished["text"], "Renamed 40 bindings.", "{finished}");
    assert_eq!(client.text("big.rs").matches("renamed_").count(), ITERATIONS, "every edit landed in the editor");
    assert_eq!(client.apply_edits().len(), ITERATIONS);
    client.shutdown_and_exit();
    elapsed
}

struct DiskHost;

#[async_trait]
impl Host for DiskHost {
    fn emit(&self, _: SequencedEvent) {}
    async fn approve(&self, _: ApprovalRequest) -> Approval {
        Approval::by_user(ApprovalDecision::Allow)
    }
    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        apply_to_disk(workspace, change)
    }
}

/// The same turn in-process, in milliseconds.
fn turn_in_process(runtime: &tokio::runtime::Runtime) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.rs"), common::rename_file(FILE_LINES)).unwrap();
    let mut conversation = Conversation::new(ConversationParts {
        backend: Arc::new(ScriptedBackend::from_texts(common::rename_script(ITERATIONS))),
        tools: Arc::new(ToolRegistry::builtin(&Default::default())),
        workspace: Arc::new(Workspace::open(dir.path()).unwrap()),
        host: Arc::new(DiskHost),
        policy: Policy::new(PermissionMode::AutoAll, &[]).unwrap(),
        settings: LoopSettings { max_iterations: ITERATIONS as u32 + 1, ..LoopSettings::default() },
        session: Some(SessionStore::for_workspace(dir.path()).create().unwrap()),
        history: Vec::new(),
        tasks: Vec::new(),
    });
    let started = Instant::now();
    let outcome = runtime.block_on(conversation.run_turn("rename the bindings", CancellationToken::new()));
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(outcome.text, "Renamed 40 bindings.");
    elapsed
}

/// Microseconds per change: `changes` didChange notifications made by
/// `make`, then a request whose answer means they were all applied.
fn micros_per_change(client: &LspClient, uri: &str, changes: usize, make: impl Fn(usize) -> serde_json::Value) -> f64 {
    let started = Instant::now();
    for index in 0..changes {
        let params = json!({
            "textDocument": {"uri": uri, "version": index as i64 + 2},
            "contentChanges": [make(index)],
        });
        client.notify("textDocument/didChange", params);
    }
    client.request_ok("tack/sessions", json!({}));
    started.elapsed().as_secs_f64() * 1e6 / changes as f64
}

fn did_change_costs() -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let options = json!({"model": {"backend": "scripted", "script": dir.path().join("none.json")}});
    std::fs::write(dir.path().join("none.json"), "[]").unwrap();
    let document: String = (0..DOCUMENT_LINES).map(|i| format!("line {i}: some text 🎉 世界 to edit\n")).collect();
    let mut client = LspClient::start(dir.path(), options);
    client.open("huge.txt", &document);
    // The open itself (a 4 MB rope) is not what is measured: wait it out.
    client.request_ok("tack/sessions", json!({}));
    let uri = client.uri("huge.txt");
    // Lines spread over the whole document; the character lands after the emoji.
    let incremental = micros_per_change(&client, &uri, INCREMENTAL_CHANGES, |index| {
        let line = (index * 7919) % DOCUMENT_LINES;
        json!({"range": range(line as u32, 16, line as u32, 16), "text": "x"})
    });
    let full = micros_per_change(&client, &uri, FULL_CHANGES, |_| json!({"text": document}));
    client.shutdown_and_exit();
    (incremental, full)
}

fn main() {
    // TACK_BENCH_ONLY=turn or did_change runs one of the two.
    let only = std::env::var("TACK_BENCH_ONLY").unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if only != "did_change" {
        let (mut over_lsp, mut in_process, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..TURN_RUNS {
            let (lsp, local) = (turn_over_lsp(), turn_in_process(&runtime));
            over_lsp.push(lsp);
            in_process.push(local);
            ratios.push(lsp / local);
        }
        let (lsp, local) = (median(over_lsp), median(in_process));
        println!("{ITERATIONS}-iteration scripted turn, median of {TURN_RUNS} runs:");
        println!(
            "  over LSP (edits applied by the client):   {lsp:8.1} ms  ({:.2} ms per iteration)",
            lsp / ITERATIONS as f64
        );
        println!(
            "  in-process (edits written to disk):        {local:8.1} ms  ({:.2} ms per iteration)",
            local / ITERATIONS as f64
        );
        println!("  ratio LSP / in-process:                    {:8.2}x", lsp / local);
        println!("  median ratio of the paired runs:           {:8.2}x", median(ratios));
    }
    if only != "turn" {
        let (mut incremental, mut full) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let (inc, whole) = did_change_costs();
            incremental.push(inc);
            full.push(whole);
        }
        let (inc, whole) = (median(incremental), median(full));
        println!("didChange on a {DOCUMENT_LINES}-line document, median of {RUNS} runs:");
        println!("  incremental (one character):               {inc:8.1} µs per change");
        println!("  full sync (reference):                     {whole:8.1} µs per change");
        println!("  ratio incremental / full:                  {:8.3}x", inc / whole);
    }
}
