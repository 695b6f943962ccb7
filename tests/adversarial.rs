//! Adversarial model output through the real loop: generated completions of
//! every hostile kind (random bytes, deeply nested and huge JSON, calls whose
//! paths leave the workspace, thousands of calls in one reply, unicode edge
//! cases, broken call syntax) replayed by the scripted backend, each as a
//! turn in a real workspace with the file tools. No turn may panic or hang,
//! nothing outside the workspace may be read or changed, and memory stays
//! bounded.
//!
//! `TACK_ADVERSARIAL_COMPLETIONS` sets how many (default 300); the figures
//! are printed at the end (`cargo test --test adversarial -- --nocapture`).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::Scenario;
use serde_json::{Value, json};
use tack::protocol::Event;

/// What the outside file holds; seeing it in any event means it was read.
const CANARY: &str = "canary 5d1e outside";

const TOOLS: [&str; 12] =
    ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "ListDir", "Move", "DeleteFile", "GitDiff", "Skill", "Nope"];

fn hostile_path(rng: &mut fastrand::Rng, outside: &Path) -> String {
    let outside = outside.display().to_string();
    let choices = [
        format!("{outside}/canary.txt"),
        "../outside/canary.txt".to_string(),
        "../../../../../../etc/passwd".to_string(),
        "/proc/self/root/etc/hostname".to_string(),
        "/proc/self/environ".to_string(),
        "~/.ssh/id_rsa".to_string(),
        "src/../../outside/canary.txt".to_string(),
        "a\u{0}b.txt".to_string(),
        "\u{202e}txt.exe".to_string(),
        "ｆｉｌｅ．ｔｘｔ".to_string(),
        "dir/\u{200d}\u{fe0f}/x".to_string(),
        "x".repeat(5000),
        "a/".repeat(300) + "deep.txt",
        "-rf".to_string(),
        "notes.txt".to_string(),
        String::new(),
    ];
    choices[rng.usize(..choices.len())].clone()
}

fn unicode(rng: &mut fastrand::Rng) -> String {
    let pieces = [
        "\u{feff}",
        "\u{202e}",
        "\u{200b}",
        "e\u{301}",
        "\u{1f469}\u{200d}\u{1f4bb}",
        "\u{fffd}",
        "\\ud800",
        "\u{10ffff}",
        "\r\n",
        "\u{2028}",
        "𝕏",
        "<tool_call>",
        "</tool_use>",
        "{\"tool\"",
    ];
    (0..rng.usize(1..40)).map(|_| pieces[rng.usize(..pieces.len())]).collect()
}

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

fn random_input(rng: &mut fastrand::Rng, outside: &Path) -> Value {
    let path = hostile_path(rng, outside);
    match rng.usize(..6) {
        0 => json!({ "file_path": path }),
        1 => json!({ "file_path": path, "content": unicode(rng) }),
        2 => json!({ "file_path": path, "old_string": "hello", "new_string": unicode(rng) }),
        3 => json!({ "pattern": unicode(rng), "path": path }),
        4 => json!({ "source": path, "destination": hostile_path(rng, outside) }),
        _ => json!([path, 1, null, {"nested": {"deeper": [true]}}]),
    }
}

/// One hostile completion.
fn completion(rng: &mut fastrand::Rng, outside: &Path) -> String {
    match rng.usize(..9) {
        // Random bytes, as a model's detokenizer would pass them on.
        0 => {
            let bytes: Vec<u8> = (0..rng.usize(0..4096)).map(|_| rng.u8(..)).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
        // Deeply nested JSON where a call's input goes.
        1 => {
            let depth = rng.usize(100..20_000);
            format!("{{\"tool\": \"Read\", \"input\": {}{}}}", "[".repeat(depth), "]".repeat(depth))
        }
        // A huge call: megabytes of content.
        2 => call("Write", json!({"file_path": "big.txt", "content": "x".repeat(rng.usize(100_000..3_000_000))})),
        // Calls whose paths leave the workspace.
        3 => {
            let tool = TOOLS[rng.usize(..TOOLS.len())];
            call(tool, random_input(rng, outside))
        }
        // Thousands of calls in one reply.
        4 => (0..rng.usize(1000..5000))
            .map(|i| call(if i % 2 == 0 { "Glob" } else { "Read" }, json!({"pattern": "*", "file_path": "notes.txt"})))
            .collect::<Vec<_>>()
            .join("\n"),
        // Unicode edge cases around and inside calls.
        5 => format!("{}{}{}", unicode(rng), call("Read", json!({"file_path": unicode(rng)})), unicode(rng)),
        // Broken call syntax of every format the parser reads.
        6 => {
            let broken = [
                "<tool_call>\n{\"name\": \"Read\", \"arguments\": {\"file_path\": ",
                "<tool_use><name>Edit</name><input>{\"file_path\": \"notes.txt\"",
                "{\"tool\": \"Read\", \"input\": {\"file_path\": \"notes.txt\"}",
                "```json\n{\"name\": \"Write\", \"arguments\": \"not an object\"}\n```",
                "<tool_call></tool_call><tool_call>{}</tool_call>",
                "{\"tool\": 42, \"input\": {}}",
                "{\"tool\": \"Read\", \"input\": {\"file_path\": \"notes.txt\"}}}}}}}",
            ];
            broken[rng.usize(..broken.len())].repeat(rng.usize(1..4))
        }
        // A valid-looking call with a long unicode name.
        7 => call(&unicode(rng), json!({})),
        // Mixed: prose with several hostile calls.
        _ => (0..rng.usize(2..8))
            .map(|_| format!("Let me try.\n{}", call(TOOLS[rng.usize(..TOOLS.len())], random_input(rng, outside))))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut entries: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap_or_default()))
        .collect();
    entries.sort();
    entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_completions_never_panic_hang_escape_or_grow_memory() {
    let count: usize = std::env::var("TACK_ADVERSARIAL_COMPLETIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(300);
    let seed = std::env::var("TACK_ADVERSARIAL_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(7);
    let mut rng = fastrand::Rng::with_seed(seed);
    let base = tempfile::tempdir().unwrap();
    let outside = base.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("canary.txt"), CANARY).unwrap();
    let before = tree(&outside);
    let started = Instant::now();
    let (mut rss_start, mut rss_peak, mut turns_with_errors, mut slowest) = (0, 0, 0, Duration::ZERO);
    for index in 0..count {
        let reply = completion(&mut rng, &outside);
        let turn_started = Instant::now();
        let run = tokio::time::timeout(
            Duration::from_secs(60),
            Scenario::new().file("notes.txt", "hello world\n").max_iterations(3).run(&[&reply, "done"], "go"),
        )
        .await
        .unwrap_or_else(|_| panic!("completion {index} (seed {seed}) did not end within 60 s: {:.200}", reply));
        slowest = slowest.max(turn_started.elapsed());
        let finished = run.events.iter().any(|e| matches!(e.event, Event::TurnFinished { .. }));
        assert!(finished, "completion {index} (seed {seed}) has no turn_finished");
        for event in &run.events {
            let text = serde_json::to_string(&event.event).unwrap();
            assert!(!text.contains(CANARY), "completion {index} (seed {seed}) read outside: {text:.300}");
        }
        if run.events.iter().any(|e| matches!(&e.event, Event::ToolResult { is_error: true, .. })) {
            turns_with_errors += 1;
        }
        assert_eq!(tree(&outside), before, "completion {index} (seed {seed}) changed the outside folder");
        if index == 50 {
            rss_start = rss_kib();
        }
        rss_peak = rss_peak.max(rss_kib());
    }
    let rss_end = rss_kib();
    println!(
        "{count} hostile completions (seed {seed}): 0 panics, 0 escapes, {turns_with_errors} turns with refused calls; \
         slowest turn {:.2} s, all in {:.1} s; RSS after 50: {} MiB, peak {} MiB, end {} MiB",
        slowest.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        rss_start / 1024,
        rss_peak / 1024,
        rss_end / 1024
    );
    // Each turn's workspace and history are dropped when it ends: what stays
    // is allocator slack, far below a leak of even a fraction of the inputs
    // (megabyte replies, thousands of calls).
    assert!(rss_end < rss_start + 512 * 1024, "memory grew from {rss_start} KiB to {rss_end} KiB");
}
