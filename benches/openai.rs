//! The openai backend against a real llama.cpp `llama-server`, each figure a
//! ratio measured in the same run:
//! 1. overhead: time to first token and total time of the same generation
//!    streamed through tack's backend vs. sent directly by a minimal client
//!    (one request, the same body, read as raw server-sent events);
//! 2. parallel generations, as parallel sub-agents make them: 4 at once
//!    against llama-server with `--parallel 4` vs. the same 4 through the
//!    in-process llama backend (one worker, one after another).
//!
//! `cargo bench --bench openai` (llama-server: TACK_LLAMA_SERVER, else the
//! one scripts/build-llama-tool builds; model: TACK_BENCH_MODEL, else
//! TACK_TEST_MODEL; TACK_BENCH_ONLY=overhead,parallel). Run it on a quiet
//! machine.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use tack::model::llama::{LlamaBackend, LlamaSettings};
use tack::model::openai::{OpenAiBackend, OpenAiSettings};
use tack::model::{BackendError, CompletionRequest, ModelBackend, ModelChunk};
use tack::protocol::Message;

const RUNS: usize = 21;
const TOKENS: u32 = 64;
const SYSTEM: &str = "You are a helpful assistant.";
const PROMPT: &str = "Write a short story about a lighthouse keeper and a storm.";

fn model_path() -> PathBuf {
    for var in ["TACK_BENCH_MODEL", "TACK_TEST_MODEL"] {
        if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            return PathBuf::from(path);
        }
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-assets/gemma-3-270m-q4_k_m.gguf")
}

fn server_binary() -> PathBuf {
    std::env::var_os("TACK_LLAMA_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/llama-cpp/bin/llama-server"))
}

/// The server's log, kept for when a run goes wrong.
fn log_file() -> std::fs::File {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/llama-server-bench.log");
    std::fs::File::create(path).expect("cannot write the server log")
}

struct Server {
    child: Child,
    base_url: String,
}

impl Server {
    fn start(parallel: u32) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(server_binary())
            .arg("-m")
            .arg(model_path())
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-t", "2", "--alias", "bench"])
            .args(["-c", &(4096 * parallel).to_string(), "-np", &parallel.to_string()])
            .stdout(Stdio::null())
            .stderr(log_file())
            .spawn()
            .expect("llama-server not built: run scripts/build-llama-tool llama-server");
        let server = Server { child, base_url: format!("http://127.0.0.1:{port}/v1") };
        for _ in 0..600 {
            if healthy(port) {
                return server;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("llama-server did not start");
    }
}

/// Whether `/health` answers 200, asked with a plain blocking socket (this
/// runs inside the async runtime, where reqwest's blocking client may not).
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if write!(stream, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request() -> CompletionRequest {
    CompletionRequest { system: SYSTEM.into(), messages: vec![Message::user_text(PROMPT)], ..Default::default() }
}

fn settings(server: &Server) -> OpenAiSettings {
    let mut settings = OpenAiSettings::new(server.base_url.clone());
    settings.model = Some("bench".into());
    settings.max_tokens = Some(TOKENS);
    settings.temperature = Some(0.0);
    settings
}

/// (time to first text, total time, completion tokens) of one stream.
async fn timed(stream: BoxStream<'static, Result<ModelChunk, BackendError>>, started: Instant) -> (f64, f64, u64) {
    let mut stream = stream;
    let (mut first, mut tokens) = (None, 0);
    while let Some(chunk) = stream.next().await {
        match chunk.expect("generation failed") {
            ModelChunk::Text(_) => {
                first.get_or_insert_with(|| started.elapsed());
            }
            ModelChunk::Usage(usage) => tokens = usage.completion_tokens,
            ModelChunk::ToolCall { .. } => {}
        }
    }
    let first = first.unwrap_or_default().as_secs_f64() * 1000.0;
    (first, started.elapsed().as_secs_f64() * 1000.0, tokens)
}

/// The same body tack sends, posted by a bare client that reads the SSE
/// bytes and stops at `[DONE]`.
async fn direct(client: &reqwest::Client, url: &str, body: &Value) -> (f64, f64) {
    let started = Instant::now();
    let mut response = client.post(url).json(body).send().await.unwrap();
    let mut first = None;
    let mut seen = Vec::new();
    while let Some(bytes) = response.chunk().await.unwrap() {
        seen.extend_from_slice(&bytes);
        let text = String::from_utf8_lossy(&seen);
        if first.is_none() && text.contains("\"content\":\"") {
            first = Some(started.elapsed());
        }
        if text.contains("[DONE]") {
            break;
        }
    }
    (first.unwrap_or_default().as_secs_f64() * 1000.0, started.elapsed().as_secs_f64() * 1000.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

async fn overhead() {
    let server = Server::start(1);
    let backend = OpenAiBackend::connect(settings(&server)).await.expect("connects");
    let client = reqwest::Client::new();
    let url = format!("{}/chat/completions", server.base_url);
    let body = json!({
        "model": "bench", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}],
        "temperature": 0.0, "max_tokens": TOKENS, "cache_prompt": true,
    });
    // A first round warms the server's prompt cache for both: each run
    // then evaluates the same one token of prompt and decodes the same reply.
    // (Retried: a server that has just said it is healthy has been seen to
    // drop the very first connection.)
    for _ in 0..5 {
        if client.post(&url).json(&body).send().await.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let _ = direct(&client, &url, &body).await;
    let (mut tack_first, mut tack_total, mut direct_first, mut direct_total) = (vec![], vec![], vec![], vec![]);
    let mut tokens = 0;
    for run in 0..RUNS {
        // Alternate who goes first, so neither always meets a warmer server.
        for side in [run % 2, 1 - run % 2] {
            if side == 0 {
                let (first, total, n) = timed(backend.stream(request()), Instant::now()).await;
                tack_first.push(first);
                tack_total.push(total);
                tokens = n;
            } else {
                let (first, total) = direct(&client, &url, &body).await;
                direct_first.push(first);
                direct_total.push(total);
            }
        }
    }
    let (tf, tt, df, dt) = (median(tack_first), median(tack_total), median(direct_first), median(direct_total));
    println!("overhead ({RUNS} runs, {tokens} tokens, medians, model {}):", model_path().display());
    println!("  time to first token: tack {tf:.1} ms, direct {df:.1} ms, ratio {:.3}x", tf / df);
    println!("  total:               tack {tt:.1} ms, direct {dt:.1} ms, ratio {:.3}x", tt / dt);
}

/// Wall time of `count` generations started together.
async fn together(backend: &dyn ModelBackend, count: usize) -> (f64, u64) {
    let started = Instant::now();
    let streams: Vec<_> = (0..count)
        .map(|i| {
            let mut request = request();
            // Different prompts, as different sub-agents have.
            request.messages = vec![Message::user_text(format!("{PROMPT} Story number {i}."))];
            timed(backend.stream(request), started)
        })
        .collect();
    let results = futures::future::join_all(streams).await;
    (started.elapsed().as_secs_f64(), results.iter().map(|r| r.2).sum())
}

async fn parallel() {
    const AGENTS: usize = 4;
    let server = Server::start(AGENTS as u32);
    let remote = OpenAiBackend::connect(settings(&server)).await.expect("connects");
    let _ = together(&remote, 1).await;
    let (remote_secs, remote_tokens) = together(&remote, AGENTS).await;
    drop(server);

    let mut local = LlamaSettings::new(model_path());
    local.threads = Some(2);
    local.context_size = Some(4096);
    local.max_tokens = TOKENS;
    local.prompt_cache = None;
    let local = tokio::task::spawn_blocking(move || LlamaBackend::load(local)).await.unwrap().expect("loads");
    let _ = together(&local, 1).await;
    let (local_secs, local_tokens) = together(&local, AGENTS).await;
    println!("{AGENTS} generations at once ({TOKENS} tokens each at most):");
    let (remote_rate, local_rate) = (remote_tokens as f64 / remote_secs, local_tokens as f64 / local_secs);
    println!(
        "  llama-server --parallel {AGENTS}: {remote_secs:.2} s, {remote_tokens} tokens, {remote_rate:.1} tokens/s"
    );
    println!("  in-process llama backend: {local_secs:.2} s, {local_tokens} tokens, {local_rate:.1} tokens/s");
    println!(
        "  wall time server/in-process: {:.2}x; throughput server/in-process: {:.2}x",
        remote_secs / local_secs,
        remote_rate / local_rate
    );
}

fn main() {
    let only = std::env::var("TACK_BENCH_ONLY").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|s| s == name);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if wanted("overhead") {
        runtime.block_on(overhead());
    }
    if wanted("parallel") {
        runtime.block_on(parallel());
    }
}
