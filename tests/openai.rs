//! The OpenAI-compatible backend, end to end through the agent loop.
//!
//! Faults a real model server will not produce on demand (429 with
//! Retry-After, a 500, a stream cut short, a slow first byte, a refused key)
//! come from a small real HTTP server on loopback, started by each test: it
//! stands in for the network, not for the model. Everything else runs
//! against a real llama.cpp `llama-server` (tests/common/llama_server.rs).

// The lock spans each whole inference test by design.
#![allow(clippy::await_holding_lock)]

mod common;
mod lsp_client;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::Scenario;
use common::llama_server::LlamaServer;
use futures::StreamExt;
use serde_json::{Value, json};
use tack::config::{ToolCallMode, ToolProfile, ToolSettings};
use tack::model::openai::{OpenAiBackend, OpenAiSettings};
use tack::model::{CompletionRequest, ModelBackend, ModelChunk};
use tack::protocol::{Event, Message, StopReason, Usage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

// ------------------------------------------------------------ fault server

/// What the fault server answers to one chat-completions request.
#[derive(Clone)]
enum Answer {
    /// A plain response: status, extra header lines, body.
    Status(u16, &'static str, String),
    /// An event stream; `complete` ends it with `[DONE]`, else the
    /// connection is closed after the events, mid-reply.
    Stream { events: Vec<Value>, complete: bool, first_byte_delay: Duration },
}

fn streamed(events: Vec<Value>) -> Answer {
    Answer::Stream { events, complete: true, first_byte_delay: Duration::ZERO }
}

/// The events of a text reply, split in pieces, with usage at the end.
fn text_events(pieces: &[&str]) -> Vec<Value> {
    let mut events: Vec<Value> =
        pieces.iter().map(|p| json!({ "choices": [{ "index": 0, "delta": { "content": p } }] })).collect();
    events.push(json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] }));
    events.push(json!({ "choices": [], "usage": { "prompt_tokens": 30, "completion_tokens": pieces.len() } }));
    events
}

struct FaultServer {
    base_url: String,
    /// Bodies of the chat requests received, in order.
    requests: Arc<Mutex<Vec<Value>>>,
    /// Chat requests being answered now, and the most there ever were.
    in_flight: Arc<Mutex<(usize, usize)>>,
}

impl FaultServer {
    async fn start(answers: Vec<Answer>) -> FaultServer {
        FaultServer::listing("fault-model", answers).await
    }

    /// A server whose one model is `model`, listed by name only, as Ollama
    /// and vLLM list theirs.
    async fn listing(model: &'static str, answers: Vec<Answer>) -> FaultServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let in_flight = Arc::new(Mutex::new((0, 0)));
        let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
        let (seen, flight) = (requests.clone(), in_flight.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, model, answers.clone(), seen.clone(), flight.clone()));
            }
        });
        FaultServer { base_url, requests, in_flight }
    }

    fn settings(&self) -> OpenAiSettings {
        let mut settings = OpenAiSettings::new(self.base_url.clone());
        settings.model = Some("fault-model".into());
        settings
    }

    fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

async fn serve(
    mut socket: tokio::net::TcpStream,
    model: &str,
    answers: Arc<Mutex<VecDeque<Answer>>>,
    seen: Arc<Mutex<Vec<Value>>>,
    in_flight: Arc<Mutex<(usize, usize)>>,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let request_line = head.lines().next().unwrap_or_default().to_string();
    let answer = if request_line.starts_with("GET /v1/models") {
        Answer::Status(200, "", json!({ "object": "list", "data": [{ "id": model }] }).to_string())
    } else if request_line.starts_with("POST /v1/chat/completions") {
        seen.lock().unwrap().push(serde_json::from_slice(&buffer[head_end..]).unwrap_or(Value::Null));
        let mut flight = in_flight.lock().unwrap();
        flight.0 += 1;
        flight.1 = flight.1.max(flight.0);
        drop(flight);
        let next = answers.lock().unwrap().pop_front();
        next.unwrap_or(Answer::Status(500, "", "no answer left".into()))
    } else {
        Answer::Status(404, "", "not found".into())
    };
    match answer {
        Answer::Status(code, headers, body) => {
            let response = format!(
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
        Answer::Stream { events, complete, first_byte_delay } => {
            tokio::time::sleep(first_byte_delay).await;
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for event in events {
                if socket.write_all(format!("data: {event}\n\n").as_bytes()).await.is_err() {
                    return;
                }
                let _ = socket.flush().await;
            }
            if complete {
                let _ = socket.write_all(b"data: [DONE]\n\n").await;
            }
        }
    }
    let _ = socket.shutdown().await;
    if request_line.starts_with("POST /v1/chat/completions") {
        in_flight.lock().unwrap().0 -= 1;
    }
}

async fn connect(settings: OpenAiSettings) -> Arc<dyn ModelBackend> {
    Arc::new(OpenAiBackend::connect(settings).await.unwrap())
}

fn retries(run: &common::ModelRun) -> Vec<(u64, String)> {
    run.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Retry { delay_ms, error, .. } => Some((*delay_ms, error.clone())),
            _ => None,
        })
        .collect()
}

fn errors(run: &common::ModelRun) -> Vec<String> {
    run.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Error { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_429_waits_as_long_as_retry_after_says_then_succeeds() {
    let server = FaultServer::start(vec![
        Answer::Status(429, "Retry-After: 1\r\n", json!({ "error": { "message": "slow down" } }).to_string()),
        streamed(text_events(&["Hel", "lo"])),
    ])
    .await;
    let run = Scenario::new().run_model(connect(server.settings()).await, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Hello");
    let retries = retries(&run);
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(retries[0].0 >= 1000, "the retry came before Retry-After's second: {retries:?}");
    assert!(retries[0].1.contains("429") && retries[0].1.contains("slow down"), "{retries:?}");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_500_then_a_stream_cut_short_are_retried_until_a_whole_reply() {
    let cut = Answer::Stream {
        events: vec![json!({ "choices": [{ "index": 0, "delta": { "content": "Half an ans" } }] })],
        complete: false,
        first_byte_delay: Duration::ZERO,
    };
    let server = FaultServer::start(vec![
        Answer::Status(500, "", "upstream exploded".into()),
        cut,
        streamed(text_events(&["Whole ", "answer."])),
    ])
    .await;
    let run = Scenario::new().run_model(connect(server.settings()).await, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(run.outcome.text, "Whole answer.");
    let retries = retries(&run);
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(retries[0].1.contains("500") && retries[0].1.contains("upstream exploded"), "{retries:?}");
    assert!(retries[1].1.contains("before the reply was complete"), "{retries:?}");
}

#[tokio::test]
async fn a_server_silent_past_the_idle_timeout_is_retried() {
    let slow =
        Answer::Stream { events: text_events(&["late"]), complete: true, first_byte_delay: Duration::from_secs(3) };
    let server = FaultServer::start(vec![slow, streamed(text_events(&["on ", "time"]))]).await;
    let mut settings = server.settings();
    settings.idle_timeout = Duration::from_millis(300);
    let run = Scenario::new().run_model(connect(settings).await, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.text, "on time");
    let retries = retries(&run);
    assert_eq!(retries.len(), 1);
    assert!(retries[0].1.contains("sent nothing"), "{retries:?}");
}

#[tokio::test]
async fn client_errors_are_not_retried_and_name_the_key_variable_not_the_key() {
    let secret = "sk-test-do-not-print-0123456789";
    // SAFETY: the variable is unique to this test; nothing else reads it.
    unsafe { std::env::set_var("TACK_TEST_FAULT_KEY", secret) };
    let server = FaultServer::start(vec![Answer::Status(
        401,
        "",
        json!({ "error": { "message": "Incorrect API key provided" } }).to_string(),
    )])
    .await;
    let mut settings = server.settings();
    settings.api_key_env = Some("TACK_TEST_FAULT_KEY".into());
    let run = Scenario::new().run_model(connect(settings).await, "hi", CancellationToken::new()).await;
    assert_eq!(run.outcome.stop_reason, StopReason::Error);
    assert_eq!(server.request_count(), 1, "a 401 must not be retried");
    let refused = errors(&run);
    assert!(refused.iter().any(|e| e.contains("TACK_TEST_FAULT_KEY") && e.contains("401")), "{refused:?}");
    let everything = format!("{:?}", run.events);
    assert!(!everything.contains(secret), "the key leaked into the events");

    let server = FaultServer::start(vec![Answer::Status(
        400,
        "",
        json!({ "error": { "message": "This model's maximum context length is 4096 tokens." } }).to_string(),
    )])
    .await;
    let run = Scenario::new().run_model(connect(server.settings()).await, "hi", CancellationToken::new()).await;
    assert_eq!(server.request_count(), 1);
    assert!(errors(&run).iter().any(|e| e.contains("does not fit the model's context")), "{:?}", errors(&run));
}

#[tokio::test]
async fn a_server_that_reports_no_usage_has_its_tokens_counted_here() {
    // As llama-cpp-python's server streams: no `usage`, even when asked for it.
    let mut events = text_events(&["The answer ", "is 42."]);
    events.pop();
    let server = FaultServer::start(vec![streamed(events)]).await;
    let backend = connect(server.settings()).await;
    let prompt = "What is the answer? Say it in one sentence.";
    let run = Scenario::new().run_model(backend.clone(), prompt, CancellationToken::new()).await;
    assert_eq!(run.outcome.text, "The answer is 42.");
    let usage = *usages(&run).last().expect("a usage event");
    assert_eq!(usage.completion_tokens, backend.count_tokens("The answer is 42.") as u64);
    assert!(usage.prompt_tokens > backend.count_tokens(prompt) as u64, "the system prompt counts too: {usage:?}");
    assert_eq!(run.outcome.usage.prompt_tokens, usage.prompt_tokens);
}

#[tokio::test]
async fn native_calls_streamed_in_pieces_run_and_their_results_go_back_as_tool_messages() {
    let call = vec![
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "id": "call_a", "type": "function", "function": { "name": "Read", "arguments": "" } }] } }] }),
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "function": { "arguments": "{\"file_path\": " } }] } }] }),
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "function": { "arguments": "\"notes.txt\"}" } }] } }] }),
        json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
    ];
    let server = FaultServer::start(vec![streamed(call), streamed(text_events(&["It says ", "hello."]))]).await;
    let run = Scenario::new()
        .file("notes.txt", "hello\n")
        .run_model(connect(server.settings()).await, "what does notes.txt say?", CancellationToken::new())
        .await;
    assert_eq!(run.outcome.text, "It says hello.");
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert!(requests[0]["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "Read")));
    let messages = requests[1]["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").expect("no tool message");
    assert_eq!(tool["tool_call_id"], "call_a");
    assert!(tool["content"].as_str().unwrap().contains("hello"), "{tool}");
    let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "Read");
}

#[tokio::test]
async fn a_reply_is_cut_after_its_allowed_calls_and_the_rest_never_runs() {
    let delta = |index: u32, id: &str, arguments: &str| json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": index, "id": id, "function": { "name": "Read", "arguments": arguments } }] } }] });
    let two_calls = vec![
        delta(0, "first", "{\"file_path\": \"a.txt\"}"),
        delta(1, "second", "{\"file_path\": \"b.txt\"}"),
        json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
    ];
    let server = FaultServer::start(vec![streamed(two_calls), streamed(text_events(&["done"]))]).await;
    let run = Scenario::new()
        .file("a.txt", "A\n")
        .file("b.txt", "B\n")
        .run_model(connect(server.settings()).await, "read both", CancellationToken::new())
        .await;
    assert_eq!(run.of_kind("tool_call").len(), 1, "{:?}", run.events);
    assert_eq!(server.requests.lock().unwrap()[0]["parallel_tool_calls"], json!(false));
    assert_eq!(run.outcome.text, "done");
}

#[tokio::test]
async fn generations_run_in_parallel_up_to_the_configured_limit() {
    let slow = || Answer::Stream {
        events: text_events(&["ok"]),
        complete: true,
        first_byte_delay: Duration::from_millis(300),
    };
    let server = FaultServer::start((0..6).map(|_| slow()).collect()).await;
    let mut settings = server.settings();
    settings.max_concurrent_requests = 2;
    let backend = connect(settings).await;
    let request = CompletionRequest { messages: vec![Message::user_text("hi")], ..CompletionRequest::default() };
    let streams = (0..6).map(|_| backend.stream(request.clone()).collect::<Vec<_>>());
    let replies = futures::future::join_all(streams).await;
    assert!(replies.iter().all(|r| r.iter().all(Result::is_ok)));
    assert_eq!(server.request_count(), 6);
    assert_eq!(server.in_flight.lock().unwrap().1, 2, "two at once, never more");
}

#[tokio::test]
async fn sub_agents_generate_at_the_same_time_against_a_server() {
    let agent_call = |index: u32, id: &str, task: &str| {
        let arguments = json!({ "description": task, "prompt": format!("Say {task}.") }).to_string();
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": index, "id": id, "function": { "name": "Agent", "arguments": arguments } }] } }] })
    };
    let slow = |word: &str| Answer::Stream {
        events: text_events(&[word]),
        complete: true,
        first_byte_delay: Duration::from_millis(500),
    };
    let server = FaultServer::start(vec![
        streamed(vec![
            agent_call(0, "a", "one"),
            agent_call(1, "b", "two"),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
        ]),
        slow("one"),
        slow("two"),
        streamed(text_events(&["Both said their word."])),
    ])
    .await;
    let mut settings = server.settings();
    settings.max_calls_per_reply = 2;
    let run = Scenario::new().run_model(connect(settings).await, "ask two helpers", CancellationToken::new()).await;
    assert_eq!(run.outcome.text, "Both said their word.");
    assert_eq!(run.of_kind("subagent_finished").len(), 2, "{:?}", run.events);
    assert_eq!(server.in_flight.lock().unwrap().1, 2, "the two sub-agents' generations should overlap");
}

#[tokio::test]
async fn connecting_explains_a_refused_port_a_wrong_path_and_an_unknown_model() {
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let error = OpenAiBackend::connect(OpenAiSettings::new(format!("http://{closed}/v1"))).await.err().unwrap();
    assert!(error.to_string().contains("cannot connect"), "{error}");

    let server = FaultServer::start(Vec::new()).await;
    let wrong_path = server.base_url.replace("/v1", "/api");
    let error = OpenAiBackend::connect(OpenAiSettings::new(wrong_path)).await.err().unwrap();
    assert!(error.to_string().contains("404") && error.to_string().contains("API root"), "{error}");

    let mut settings = server.settings();
    settings.model = Some("gpt-imaginary".into());
    let error = OpenAiBackend::connect(settings).await.err().unwrap();
    assert!(error.to_string().contains("gpt-imaginary") && error.to_string().contains("fault-model"), "{error}");

    // Without a name, the server's only model is the one.
    let backend = OpenAiBackend::connect(OpenAiSettings::new(server.base_url.clone())).await.unwrap();
    assert_eq!(backend.model(), "fault-model");
    assert!(backend.token_counting().contains("estimated"));
}

// ------------------------------------------------------ real llama-server

/// One inference workload at a time: two on two cores starve each other.
fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn model(variable: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(variable).unwrap_or_else(|| panic!("{variable} is not set: run ./scripts/test")))
}

fn server_settings(server: &LlamaServer) -> OpenAiSettings {
    let mut settings = OpenAiSettings::new(server.base_url.clone());
    settings.model = Some("test-model".into());
    settings.temperature = Some(0.0);
    settings.max_tokens = Some(64);
    settings
}

fn plain_request(prompt: &str) -> CompletionRequest {
    CompletionRequest { messages: vec![Message::user_text(prompt)], ..CompletionRequest::default() }
}

#[tokio::test]
async fn gemma_streams_counts_exactly_and_frees_its_slot_when_cancelled() {
    let _lock = exclusive();
    let server = LlamaServer::start(&model("TACK_TEST_MODEL"), &["-c", "4096"]);
    let backend = OpenAiBackend::connect(server_settings(&server)).await.unwrap();
    assert_eq!(backend.context_window(), 4096);
    assert!(backend.token_counting().contains("/tokenize"), "{}", backend.token_counting());
    assert!(backend.parameters().is_some_and(|p| p > 200_000_000), "{:?}", backend.parameters());
    // The server's tokenizer: "hello world" is two tokens, not the estimate's three.
    assert_eq!(backend.count_tokens("hello world"), 2);

    let mut stream = backend.stream(plain_request("Write a long story about a lighthouse keeper."));
    let (mut texts, mut usage) = (0, None);
    while let Some(chunk) = stream.next().await {
        match chunk.unwrap() {
            ModelChunk::Text(_) => texts += 1,
            ModelChunk::Usage(u) => usage = Some(u),
            ModelChunk::ToolCall { .. } => {}
        }
    }
    let usage = usage.expect("no usage");
    assert!(texts > 5, "the reply came in {texts} pieces, not streamed");
    assert!(usage.prompt_tokens > 5 && usage.completion_tokens > 5, "{usage:?}");

    // Cancel mid-stream: dropping the stream closes the connection, and the
    // server stops generating.
    let mut settings = server_settings(&server);
    settings.max_tokens = Some(2000);
    let backend = OpenAiBackend::connect(settings).await.unwrap();
    let mut stream = backend.stream(plain_request("Count from one to one thousand in words."));
    for _ in 0..3 {
        assert!(matches!(stream.next().await, Some(Ok(ModelChunk::Text(_)))));
    }
    assert!(server.busy(), "the slot should be generating");
    drop(stream);
    let mut waited = Duration::ZERO;
    while server.busy() {
        assert!(waited < Duration::from_secs(10), "the server kept generating after the cancel");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    }
}

#[tokio::test]
async fn a_fresh_try_is_sent_sampled_and_seeded_so_it_repeats() {
    let _lock = exclusive();
    let server = LlamaServer::start(&model("TACK_TEST_MODEL"), &["-c", "4096"]);
    let backend = OpenAiBackend::connect(server_settings(&server)).await.unwrap();
    let reply = |resample| {
        let request = CompletionRequest { resample, ..plain_request("Write a short poem about the sea.") };
        let stream = backend.stream(request);
        async move {
            let chunks: Vec<_> = stream.collect().await;
            chunks
                .into_iter()
                .filter_map(|chunk| match chunk.unwrap() {
                    ModelChunk::Text(text) => Some(text),
                    _ => None,
                })
                .collect::<String>()
        }
    };
    let greedy = reply(None).await;
    let (first, second) = (reply(Some(1)).await, reply(Some(2)).await);
    assert_ne!(first, second, "each try is seeded apart");
    assert!(first != greedy || second != greedy, "a fresh try leaves the greedy reply: {greedy:?}");
    assert_eq!(reply(Some(1)).await, first, "a try repeats, so a run does");
}

#[test]
fn a_server_killed_mid_stream_ends_tack_run_with_a_clear_error_and_a_session_that_loads() {
    use std::io::BufRead;
    let _lock = exclusive();
    let mut server = LlamaServer::start(&model("TACK_TEST_MODEL"), &["-c", "4096"]);
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join(".tack")).unwrap();
    std::fs::write(workspace.path().join(".tack/config.toml"), "max_retries = 1\nretry_delay_ms = 10\n").unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["run", "--backend", "openai", "--base-url", &server.base_url, "--model-name", "test-model"])
        .args(["--json-events", "Count from one to one thousand in words."])
        .current_dir(workspace.path())
        .env("XDG_CONFIG_HOME", workspace.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut events = Vec::new();
    let mut killed = false;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["kind"] == "text" && !killed {
            server.kill();
            killed = true;
        }
        events.push(event);
    }
    let status = child.wait().unwrap();
    assert!(killed, "the model never streamed text: {events:?}\n{}", server.log_text());
    assert!(!status.success());
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "turn_finished");
    assert_eq!(last["stopReason"], "error");
    let error = events.iter().rev().find(|e| e["kind"] == "error").expect("no error event");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("cannot connect") && message.contains("is the server running"), "{message}");

    // The session holds the prompt and loads; it can be continued.
    let store = tack::agent::SessionStore::for_workspace(workspace.path());
    let sessions = store.list().unwrap();
    assert_eq!(sessions.len(), 1);
    let loaded = store.load(&sessions[0].session_id).unwrap();
    assert!(loaded.messages.first().is_some_and(|m| m.text().contains("one thousand")), "{:?}", loaded.messages);
}

/// One turn of the coder model behind llama-server, its calls sent `mode`.
async fn coder_turn(server: &LlamaServer, mode: ToolCallMode) -> common::ModelRun {
    let mut settings = server_settings(server);
    settings.max_tokens = Some(200);
    settings.tool_calls = mode;
    // Sized for the model, but offered tools, as a model this small is not
    // by default.
    let tools = ToolSettings { profile: ToolProfile::Compact, ..ToolSettings::default() };
    Scenario::new()
        .file("notes.txt", "The secret word is pelican.\n")
        .sized_for_model()
        .tool_settings(tools)
        .max_iterations(2)
        .run_model(
            connect(settings).await,
            "Read the notes file and tell me the secret word.",
            CancellationToken::new(),
        )
        .await
}

fn usages(run: &common::ModelRun) -> Vec<Usage> {
    run.events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Usage { usage } => Some(*usage),
            _ => None,
        })
        .collect()
}

/// The first call of a run: (name, input, its result's error flag).
fn first_call(run: &common::ModelRun) -> (String, Value, bool) {
    let (name, input) = run
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::ToolCall { name, input, .. } => Some((name.clone(), input.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no tool call: {}", run.text()));
    let failed = run.events.iter().find_map(|e| match &e.event {
        Event::ToolResult { is_error, .. } => Some(*is_error),
        _ => None,
    });
    (name, input, failed.expect("the call got no result"))
}

#[tokio::test]
async fn the_coder_model_calls_tools_through_llama_server_natively_and_through_its_template() {
    let _lock = exclusive();
    let server = LlamaServer::start(&model("TACK_TEST_CODER_MODEL"), &["-c", "8192", "--jinja"]);
    for mode in [ToolCallMode::Auto, ToolCallMode::Native] {
        let run = coder_turn(&server, mode).await;
        let (name, input, failed) = first_call(&run);
        assert_eq!((name.as_str(), &input["file_path"]), ("Read", &json!("notes.txt")), "{mode:?}");
        let usages = usages(&run);
        assert_eq!(usages.len(), 2, "{mode:?}: {usages:?}");
        assert!(usages[0].prompt_tokens > 100, "{mode:?}: {usages:?}");
        if mode == ToolCallMode::Auto {
            // The model's template with tack's grammar: the call is valid,
            // as with the llama backend, and the reply ends with it, so the
            // server reports the second generation too: its prompt is longer
            // by the result, and only that was evaluated.
            assert!(!failed, "{input}");
            assert!(usages[1].prompt_tokens > usages[0].prompt_tokens + 10, "{usages:?}");
            assert!(usages[1].cached_prompt_tokens >= usages[0].prompt_tokens / 2, "{usages:?}");
        }
    }
}

#[test]
fn the_language_server_runs_a_turn_through_llama_server() {
    let _lock = exclusive();
    let server = LlamaServer::start(&model("TACK_TEST_MODEL"), &["-c", "4096"]);
    let workspace = tempfile::tempdir().unwrap();
    let options = json!({
        "model": { "backend": "openai", "baseUrl": server.base_url, "model": "test-model", "maxTokens": 24 },
    });
    let mut client = lsp_client::LspClient::start(workspace.path(), options);
    client.timeout = Duration::from_secs(120);
    let conversation = client.new_conversation(None);
    client.turn(&conversation, "Say hello.");
    let finished = client.wait_turn_finished(&conversation);
    assert!(["end_turn", "max_iterations"].contains(&finished["stopReason"].as_str().unwrap()), "{finished}");
    assert!(finished["usage"]["completionTokens"].as_u64().unwrap() > 0, "{finished}");
    assert!(client.events(&conversation).iter().any(|e| e["kind"] == "text"), "{}", client.report());
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

#[test]
fn two_conversations_in_the_language_server_generate_at_the_same_time() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let slow = |word: &'static str| Answer::Stream {
        events: text_events(&[word]),
        complete: true,
        first_byte_delay: Duration::from_millis(800),
    };
    let server = runtime.block_on(FaultServer::start(vec![slow("first"), slow("second")]));
    let workspace = tempfile::tempdir().unwrap();
    let options = json!({ "model": { "backend": "openai", "baseUrl": server.base_url, "model": "fault-model" } });
    let mut client = lsp_client::LspClient::start(workspace.path(), options);
    client.timeout = Duration::from_secs(30);
    let one = client.new_conversation(None);
    let two = client.new_conversation(None);
    client.turn(&one, "hi");
    client.turn(&two, "hello");
    let answers = [client.wait_turn_finished(&one), client.wait_turn_finished(&two)];
    let mut texts: Vec<&str> = answers.iter().map(|f| f["text"].as_str().unwrap()).collect();
    texts.sort();
    assert_eq!(texts, ["first", "second"], "{}", client.report());
    assert_eq!(server.in_flight.lock().unwrap().1, 2, "the conversations' generations should overlap");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

#[tokio::test]
async fn a_server_that_lists_no_size_gives_it_by_the_model_name_and_a_small_model_is_handed_the_files() {
    let reply = text_events(&["greet.py\n```python\ndef greet(name):\n    return 'Hello, ' + name\n```\n"]);
    // First the model's word, in both orders, that the request asks for a change.
    let intent = || streamed(text_events(&["change"]));
    let server = FaultServer::listing("qwen2.5-coder:1.5b", vec![intent(), intent(), streamed(reply)]).await;
    let mut settings = server.settings();
    settings.model = None;
    let backend = connect(settings).await;
    assert_eq!(backend.parameters(), Some(1_500_000_000));
    // Sized, it gets the way of small models: the files in the first
    // message, no tools offered.
    let run = Scenario::new()
        .file("greet.py", "def greet(name):\n    return 'Helo, ' + name\n")
        .sized_for_model()
        .run_model(backend, "Fix the typo in greet.py", CancellationToken::new())
        .await;
    let request = &server.requests.lock().unwrap()[2];
    assert!(request.get("tools").is_none_or(|tools| tools.as_array().is_some_and(Vec::is_empty)), "{request}");
    assert!(request.to_string().contains("Helo, "), "the file was not handed over: {request}");
    let fixed = std::fs::read_to_string(run.dir.path().join("greet.py")).unwrap();
    assert_eq!(fixed, "def greet(name):\n    return 'Hello, ' + name\n");
}

#[tokio::test]
async fn an_unknown_model_name_is_refused_with_the_names_the_server_has() {
    let _lock = exclusive();
    let server = LlamaServer::start(&model("TACK_TEST_MODEL"), &["-c", "2048"]);
    let mut settings = server_settings(&server);
    settings.model = Some("qwen-imaginary".into());
    let error = OpenAiBackend::connect(settings).await.err().expect("an unknown model must be refused");
    assert!(error.to_string().contains("qwen-imaginary") && error.to_string().contains("test-model"), "{error}");
}
