//! The llama.cpp backend against the real Gemma 3 270M GGUF (installed by
//! scripts/test). Inference tests take one lock, so they never run at the
//! same time: two inference workloads on two cores starve each other.

// The lock spans each whole test by design; every test has its own runtime.
#![allow(clippy::await_holding_lock)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

mod lsp_client;

use futures::StreamExt;
use tack::model::llama::{FlashAttention, LOOKUP_DRAFT_TOKENS, LlamaBackend, LlamaError, LlamaSettings};
use tack::model::{BackendError, CompletionRequest, ModelBackend, ModelChunk};
use tack::protocol::{Block, Message, Role, Usage};

fn model_path() -> PathBuf {
    let path = std::env::var_os("TACK_TEST_MODEL")
        .expect("TACK_TEST_MODEL is not set: run the tests with ./scripts/test, which installs the test model");
    PathBuf::from(path)
}

/// Serializes inference across the tests of this binary.
fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const MAX_TOKENS: u32 = 48;

fn settings() -> LlamaSettings {
    let mut settings = LlamaSettings::new(model_path());
    settings.context_size = Some(4096);
    settings.max_tokens = MAX_TOKENS;
    settings
}

/// The model, loaded once for the tests that share it.
fn shared() -> Arc<LlamaBackend> {
    static BACKEND: OnceLock<Arc<LlamaBackend>> = OnceLock::new();
    BACKEND.get_or_init(|| Arc::new(LlamaBackend::load(settings()).expect("the test model loads"))).clone()
}

fn request(messages: Vec<Message>) -> CompletionRequest {
    CompletionRequest { system: "You are a helpful assistant.".into(), messages, ..CompletionRequest::default() }
}

/// Runs a generation to its end: (text, usage, number of text chunks).
async fn generate(backend: &LlamaBackend, request: CompletionRequest) -> (String, Usage, usize) {
    let mut stream = backend.stream(request);
    let (mut text, mut usage, mut chunks) = (String::new(), None, 0);
    while let Some(item) = stream.next().await {
        match item.expect("generation succeeds") {
            ModelChunk::Text(piece) => {
                text.push_str(&piece);
                chunks += 1;
            }
            ModelChunk::Usage(u) => usage = Some(u),
            other => panic!("unexpected chunk {other:?}"),
        }
    }
    (text, usage.expect("a usage chunk ends every generation"), chunks)
}

#[test]
fn tokenizing_round_trips_exactly() {
    let _guard = exclusive();
    let backend = shared();
    for text in ["fn main() {\n    println!(\"héllo 🦀 世界\");\n}\n", "  leading spaces\tand tabs\n\n", "a"] {
        let tokens = backend.tokenize(text);
        assert!(!tokens.is_empty());
        assert_eq!(backend.detokenize(&tokens), text);
        assert_eq!(backend.count_tokens(text), tokens.len());
    }
    assert_eq!(backend.context_window(), 4096);
}

#[tokio::test]
async fn a_generation_streams_text_and_reports_usage() {
    let _guard = exclusive();
    let backend = shared();
    let (text, usage, chunks) =
        generate(&backend, request(vec![Message::user_text("Write a short poem about the sea.")])).await;
    assert!(!text.trim().is_empty());
    assert!(chunks > 1, "text should stream in pieces, got {chunks}");
    assert!(usage.completion_tokens > 0 && usage.completion_tokens <= MAX_TOKENS as u64, "{usage:?}");
    assert!(usage.prompt_tokens > 10);
    let rendered = backend.render(&request(vec![Message::user_text("hi")])).unwrap();
    assert!(rendered.contains("<start_of_turn>user") && rendered.ends_with("<start_of_turn>model\n"), "{rendered}");
    assert!(rendered.contains("You are a helpful assistant."), "the system prompt folds into the first turn");
}

#[tokio::test]
async fn the_next_generation_reuses_the_common_prefix() {
    let _guard = exclusive();
    let backend = shared();
    let first = vec![Message::user_text("List three colours.")];
    let (reply, first_usage, _) = generate(&backend, request(first.clone())).await;
    let mut second = first;
    second.push(Message { role: Role::Assistant, blocks: vec![Block::Text { text: reply }] });
    second.push(Message::user_text("Now list three animals."));
    let (_, usage, _) = generate(&backend, request(second.clone())).await;
    assert!(
        usage.cached_prompt_tokens + 2 >= first_usage.prompt_tokens,
        "the first prompt should be reused: {usage:?} after {first_usage:?}"
    );
    assert!(usage.prompt_tokens > usage.cached_prompt_tokens);

    // The same prompt, evaluated from scratch, starts its answer the same way.
    // Logits differ slightly between cached and fresh batch shapes, so only
    // the first tokens are compared, not the whole text.
    let mut fresh_settings = settings();
    fresh_settings.reuse_prefix = false;
    let fresh = LlamaBackend::load(fresh_settings).unwrap();
    let (fresh_text, fresh_usage, _) = generate(&fresh, request(second.clone())).await;
    let (cached_text, _, _) = generate(&backend, request(second)).await;
    assert_eq!(fresh_usage.cached_prompt_tokens, 0);
    let head = |text: &str| backend.tokenize(text).into_iter().take(3).collect::<Vec<_>>();
    assert_eq!(head(&cached_text), head(&fresh_text), "{cached_text:?} vs {fresh_text:?}");
}

#[tokio::test]
async fn a_conversation_that_comes_back_after_another_prompt_starts_from_its_saved_state() {
    let _guard = exclusive();
    let mut remembering = settings();
    remembering.saved_prompts_bytes = 64 << 20;
    let backend = LlamaBackend::load(remembering).unwrap();
    let notes: String = (1..=40).map(|n| format!("Note {n}: the shelf in room {n} holds {} books.\n", n * 7)).collect();
    let conversation = vec![Message::user_text(format!("{notes}Which room holds 21 books?"))];
    let (reply, first, _) = generate(&backend, request(conversation.clone())).await;
    assert!(first.prompt_tokens > 400, "{first:?}");
    // Another prompt in between (a pipeline's own ask) takes over the cache.
    let (_, aside, _) = generate(&backend, request(vec![Message::user_text("Name a colour.")])).await;
    assert!(aside.cached_prompt_tokens < 50, "{aside:?}");
    let mut back = conversation;
    back.push(Message { role: Role::Assistant, blocks: vec![Block::Text { text: reply }] });
    back.push(Message::user_text("And which holds 70?"));
    let (text, usage, _) = generate(&backend, request(back.clone())).await;
    assert!(usage.cached_prompt_tokens + 2 >= first.prompt_tokens, "{usage:?} after {first:?}");

    // Without saved states, the same path evaluates the conversation again,
    // and its answer starts the same way.
    let forgetting = shared();
    generate(&forgetting, request(vec![Message::user_text("Name a colour.")])).await;
    let (plain_text, plain, _) = generate(&forgetting, request(back)).await;
    assert!(plain.cached_prompt_tokens < 50, "{plain:?}");
    let head = |text: &str| backend.tokenize(text).into_iter().take(3).collect::<Vec<_>>();
    assert_eq!(head(&text), head(&plain_text), "{text:?} vs {plain_text:?}");
}

#[tokio::test]
async fn dropping_the_stream_stops_generation_within_a_token() {
    let _guard = exclusive();
    let backend = shared();
    let counting = || request(vec![Message::user_text("Count from 1 to 100: 1, 2, 3, 4, 5, 6, 7, 8,")]);
    // Uncancelled, this prompt runs to the token limit.
    let (_, full, _) = generate(&backend, counting()).await;
    assert_eq!(full.completion_tokens, MAX_TOKENS as u64);

    let before = backend.tokens_generated();
    let mut stream = backend.stream(counting());
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, ModelChunk::Text(_)));
    drop(stream);
    // The worker takes jobs in order: once this one is done, the dropped one
    // has stopped, and what it generated is what remains of the count.
    let (_, after, _) = generate(&backend, counting()).await;
    let cancelled = backend.tokens_generated() - before - after.completion_tokens;
    assert!(cancelled <= 4, "the dropped generation ran on for {cancelled} tokens");
}

#[tokio::test]
async fn a_fresh_try_is_sampled_repeatably_and_each_try_differs() {
    let _guard = exclusive();
    let backend = shared();
    let ask = |resample| CompletionRequest {
        resample,
        ..request(vec![Message::user_text("Write a short poem about the sea.")])
    };
    let (greedy, _, _) = generate(&backend, ask(None)).await;
    let (first, _, _) = generate(&backend, ask(Some(1))).await;
    let (second, _, _) = generate(&backend, ask(Some(2))).await;
    assert_ne!(first, second, "each try is seeded apart");
    assert!(first != greedy || second != greedy, "a fresh try leaves the greedy reply: {greedy:?}");
    let (first_again, _, _) = generate(&backend, ask(Some(1))).await;
    assert_eq!(first_again, first, "a try repeats, so a run does");
    let (greedy_again, _, _) = generate(&backend, ask(None)).await;
    assert_eq!(greedy_again, greedy, "greedy decoding is untouched by the tries before it");
}

/// A reply begun for the model (a version's first lines) is where it goes
/// on: it writes what follows, not the start again.
#[tokio::test]
async fn a_reply_begun_for_the_model_is_continued_from_where_it_stops() {
    let _guard = exclusive();
    let backend = shared();
    let ask = |reply_prefix: Option<&str>| CompletionRequest {
        reply_prefix: reply_prefix.map(str::to_string),
        max_tokens: Some(12),
        ..request(vec![Message::user_text("Count from 1 to 30 in digits, separated by commas.")])
    };
    let (continued, _, _) = generate(&backend, ask(Some("1, 2, 3, 4, 5, 6, 7, 8,"))).await;
    assert!(continued.trim_start().starts_with("9, 10"), "{continued:?}");
    let (fresh, _, _) = generate(&backend, ask(None)).await;
    assert!(!fresh.trim_start().starts_with("9"), "{fresh:?}");
}

#[tokio::test]
async fn a_request_s_own_bound_ends_the_reply_before_the_backend_s() {
    let _guard = exclusive();
    let backend = shared();
    let ask = |max_tokens| CompletionRequest {
        max_tokens,
        ..request(vec![Message::user_text("Write a long story about the sea, in many paragraphs.")])
    };
    let (_, bounded, _) = generate(&backend, ask(Some(6))).await;
    assert!(bounded.completion_tokens <= 6, "{bounded:?}");
    let (_, free, _) = generate(&backend, ask(None)).await;
    assert!(free.completion_tokens > 6, "{free:?}");
}

#[tokio::test]
async fn a_prompt_larger_than_the_context_is_a_clear_error() {
    let _guard = exclusive();
    let backend = shared();
    let huge = "word ".repeat(6000);
    let mut stream = backend.stream(request(vec![Message::user_text(huge)]));
    let error = stream.next().await.unwrap().unwrap_err();
    let BackendError::Fatal(message) = error else { panic!("{error:?}") };
    assert!(message.contains("more than the 4096-token context holds"), "{message}");
    // The backend still works afterwards.
    let (text, _, _) = generate(&backend, request(vec![Message::user_text("Say hello.")])).await;
    assert!(!text.is_empty());
}

#[test]
fn bad_model_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = LlamaBackend::load(LlamaSettings::new(dir.path().join("nope.gguf"))).err().unwrap();
    assert!(matches!(missing, LlamaError::NotFound(_)), "{missing}");
    let text_file = dir.path().join("model.gguf");
    std::fs::write(&text_file, "not a model").unwrap();
    let error = LlamaBackend::load(LlamaSettings::new(&text_file)).err().unwrap();
    assert_eq!(
        error.to_string(),
        format!("{} is not a GGUF model file (it does not start with the GGUF magic bytes)", text_file.display())
    );
    // GGUF magic, then garbage: llama.cpp itself refuses it, and the process lives on.
    let truncated = dir.path().join("truncated.gguf");
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(std::fs::read(model_path()).unwrap().into_iter().skip(4).take(4096));
    std::fs::write(&truncated, bytes).unwrap();
    let error = LlamaBackend::load(LlamaSettings::new(&truncated)).err().unwrap();
    assert!(matches!(error, LlamaError::LoadFailed(_)), "{error}");
}

#[test]
fn tack_run_completes_a_turn_with_the_local_model() {
    let _guard = exclusive();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "remember the milk\n").unwrap();
    std::fs::create_dir_all(workspace.path().join(".tack")).unwrap();
    std::fs::write(workspace.path().join(".tack/config.toml"), "[model]\nmax_tokens = 24\ncontext_size = 4096\n")
        .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["run", "--backend", "llama", "--model", model_path().to_str().unwrap(), "--json-events", "Say hello."])
        .current_dir(workspace.path())
        .env("XDG_CONFIG_HOME", workspace.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let events: Vec<serde_json::Value> =
        String::from_utf8_lossy(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "turn_finished");
    assert!(["end_turn", "max_iterations"].contains(&last["stopReason"].as_str().unwrap()), "{last}");
    assert!(last["usage"]["completionTokens"].as_u64().unwrap() > 0);
    assert!(events.iter().any(|e| e["kind"] == "text"));

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["run", "--backend", "llama", "--model", "notes.txt", "hi"])
        .current_dir(workspace.path())
        .env("XDG_CONFIG_HOME", workspace.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let message = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("notes.txt is not a GGUF model file"), "{message}");
}

fn tool_request(prompt: &str) -> CompletionRequest {
    let tools = tack::tools::ToolRegistry::builtin(&Default::default());
    CompletionRequest {
        system: "You are a coding agent. Call tools by writing {\"tool\": NAME, \"input\": {...}} on its own line."
            .into(),
        messages: vec![Message::user_text(prompt)],
        tools: tools.specs(|_| true),
        ..CompletionRequest::default()
    }
}

#[tokio::test]
async fn with_the_grammar_required_replies_hold_nothing_but_schema_valid_calls() {
    use tack::model::toolcall::{ParseEvent, parse_complete};
    let _guard = exclusive();
    let mut required = settings();
    required.grammar = tack::model::llama::GrammarMode::Required;
    required.max_tokens = 240;
    let backend = LlamaBackend::load(required).unwrap();
    let registry = tack::tools::ToolRegistry::builtin(&Default::default());
    let mut complete_calls = 0;
    for prompt in ["Read the file notes.txt.", "Find every Rust file.", "Search for TODO comments."] {
        let (text, _, _) = generate(&backend, tool_request(prompt)).await;
        let events = parse_complete(&text);
        for (index, event) in events.iter().enumerate() {
            match event {
                ParseEvent::Call(call) => {
                    assert!(registry.check(&call.name, &call.input).is_ok(), "{prompt}: invalid call {call:?}");
                    complete_calls += 1;
                }
                // A small model may repeat itself inside a string until the
                // token limit cuts the call: only the last call may be cut.
                ParseEvent::Malformed(bad) => {
                    assert_eq!(index, events.len() - 1, "{prompt}: {text:?}");
                    assert!(bad.problem.starts_with("unterminated"), "{prompt}: {bad:?}");
                }
                ParseEvent::Text(t) => assert!(t.trim().is_empty(), "{prompt}: text outside calls: {t:?}"),
                ParseEvent::Thought(t) => panic!("{prompt}: unexpected thought {t:?}"),
            }
        }
    }
    assert!(complete_calls > 0);
}

#[tokio::test]
async fn with_the_lazy_grammar_plain_text_stays_free() {
    let _guard = exclusive();
    let backend = shared();
    let mut request = tool_request("Say hello in French.");
    request.system = "You are a friendly assistant.".into();
    let (text, usage, _) = generate(&backend, request).await;
    assert!(!text.trim().is_empty());
    assert!(usage.completion_tokens > 0);
}

#[test]
fn loading_reports_progress_up_to_done() {
    let _guard = exclusive();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut settings = settings();
    settings.progress = Some(tack::model::llama::LoadProgress(Arc::new(move |share| sink.lock().unwrap().push(share))));
    let backend = LlamaBackend::load(settings).unwrap();
    drop(backend);
    let seen = seen.lock().unwrap();
    assert!(seen.len() > 2, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(seen.last(), Some(&1.0));
}

#[test]
fn the_language_server_loads_the_model_with_progress_and_runs_a_turn() {
    let _guard = exclusive();
    let workspace = tempfile::tempdir().unwrap();
    let options = serde_json::json!({
        "model": {"backend": "llama", "path": model_path(), "maxTokens": 24, "contextSize": 4096},
    });
    let mut client = lsp_client::LspClient::start(workspace.path(), options);
    client.timeout = std::time::Duration::from_secs(120);
    let conversation = client.new_conversation(None);
    client.turn(&conversation, "Say hello.");
    let finished = client.wait_turn_finished(&conversation);
    assert!(["end_turn", "max_iterations"].contains(&finished["stopReason"].as_str().unwrap()), "{finished}");
    assert!(finished["usage"]["completionTokens"].as_u64().unwrap() > 0, "{finished}");
    let created = client.server_requests().iter().any(|r| r["method"] == "window/workDoneProgress/create");
    assert!(created, "no progress token was created");
    let kinds: Vec<String> = client
        .inbox(|inbox| inbox.progress.clone())
        .iter()
        .map(|p| p["value"]["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("begin"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("end"), "{kinds:?}");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
}

/// The default coder model (Qwen2.5-Coder-0.5B-Instruct), installed by scripts/test.
fn coder_settings() -> LlamaSettings {
    let path = std::env::var_os("TACK_TEST_CODER_MODEL")
        .expect("TACK_TEST_CODER_MODEL is not set: run the tests with ./scripts/test, which installs the coder model");
    let mut settings = LlamaSettings::new(PathBuf::from(path));
    settings.context_size = Some(4096);
    settings.max_tokens = 96;
    settings
}

/// A request offering only Read and Glob, for a task that names another tool.
fn narrow_request(prompt: &str) -> (CompletionRequest, tack::tools::ToolRegistry) {
    let all = tack::tools::ToolRegistry::builtin(&Default::default());
    let narrow = tack::tools::ToolRegistry::new(
        ["Read", "Glob"].iter().map(|name| all.get(name).expect("a built-in tool").clone()),
    );
    let request = CompletionRequest {
        system: "You are a coding agent.".into(),
        messages: vec![Message::user_text(prompt)],
        tools: narrow.specs(|_| true),
        ..CompletionRequest::default()
    };
    (request, narrow)
}

/// Every call in `text` parses and names an offered tool with valid input; returns how many.
fn assert_calls_valid(text: &str, registry: &tack::tools::ToolRegistry) -> usize {
    use tack::model::toolcall::{ParseEvent, parse_complete};
    let mut calls = 0;
    for event in parse_complete(text) {
        match event {
            ParseEvent::Call(call) => {
                assert!(registry.check(&call.name, &call.input).is_ok(), "invalid call {call:?} in {text:?}");
                calls += 1;
            }
            ParseEvent::Malformed(bad) => {
                // Only the token limit may cut a call short.
                assert!(bad.problem.starts_with("unterminated"), "{bad:?} in {text:?}");
            }
            ParseEvent::Text(_) | ParseEvent::Thought(_) => {}
        }
    }
    calls
}

#[tokio::test]
async fn the_coder_model_s_own_call_format_is_held_to_the_offered_tools() {
    let _guard = exclusive();
    let mut required = coder_settings();
    required.grammar = tack::model::llama::GrammarMode::Required;
    let backend = LlamaBackend::load(required).expect("the coder model loads");
    assert_eq!(backend.tool_protocol(), tack::model::ToolProtocol::Template);
    // The task names Grep, which is not offered: the grammar leaves only Read and Glob.
    let (request, narrow) = narrow_request("Use the Grep tool to search every file for TODO comments.");
    let (text, _, _) = generate(&backend, request).await;
    assert!(text.trim_start().starts_with("<tool_call>") || text.trim_start().starts_with("{\"name\""), "{text:?}");
    assert!(assert_calls_valid(&text, &narrow) > 0, "{text:?}");
    assert!(!text.contains("<|im_start|>") && !text.contains("<|im_end|>"), "{text:?}");

    // A tool held back stays in the prompt but cannot be called: the task
    // names Read, and the reply calls Glob.
    let (mut request, narrow) = narrow_request("Use the Read tool to read notes.txt.");
    request.held_back = vec!["Read".into()];
    let (text, _, _) = generate(&backend, request).await;
    assert!(assert_calls_valid(&text, &narrow) > 0, "{text:?}");
    assert!(!text.contains("\"Read\"") && text.contains("\"Glob\""), "{text:?}");
}

#[test]
fn without_the_grammar_a_reply_still_ends_after_its_last_allowed_call() {
    let _guard = exclusive();
    let coder = std::env::var("TACK_TEST_CODER_MODEL").expect("TACK_TEST_CODER_MODEL is not set");
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    // Offered tools, as a model of this size is not by default.
    std::fs::create_dir(workspace.path().join("tack")).unwrap();
    std::fs::write(workspace.path().join("tack/config.toml"), "[tools]\nprofile = \"compact\"\n").unwrap();
    // Free to write on, the coder model's second reply to this task holds a
    // call to a tool named `subtract`, again and again, 65 times.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["run", "--backend", "llama", "--model", &coder, "--grammar", "off", "--max-iterations", "2"])
        .args(["--permission-mode", "auto_all", "--json-events"])
        .arg("Add a function subtract(a, b) to calc.py that returns a minus b.")
        .current_dir(workspace.path())
        .env("XDG_CONFIG_HOME", workspace.path())
        .output()
        .unwrap();
    let events: Vec<serde_json::Value> =
        String::from_utf8_lossy(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The turn ran: the model loaded, replied with calls and the turn ended
    // (a model that failed to load makes no call at all).
    let finished = events.iter().find(|e| e["kind"] == "turn_finished");
    assert!(finished.is_some(), "the turn did not finish: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let calls = events.iter().filter(|e| e["kind"] == "tool_call").count();
    assert!((1..=2).contains(&calls), "one call a reply by default, and the model called: {stdout}");
}

#[tokio::test]
async fn the_coder_model_on_tack_s_text_protocol_with_the_lazy_grammar_does_not_abort() {
    let _guard = exclusive();
    let mut text_protocol = coder_settings();
    text_protocol.text_protocol = true;
    text_protocol.max_tokens = 160;
    let backend = LlamaBackend::load(text_protocol).expect("the coder model loads");
    assert_eq!(backend.tool_protocol(), tack::model::ToolProtocol::Text);
    let registry = tack::tools::ToolRegistry::builtin(&Default::default());
    let specs = registry.specs(|_| true);
    let system = tack::agent::prompt::system_prompt(
        tack::protocol::PermissionMode::AutoAll,
        &specs,
        tack::model::ToolProtocol::Text,
    );
    for prompt in ["The greeting test fails. Fix it.", "Change the timeout in settings.py to 60 seconds."] {
        let request = CompletionRequest {
            system: system.clone(),
            messages: vec![Message::user_text(prompt)],
            tools: specs.clone(),
            ..CompletionRequest::default()
        };
        // The process survives (before, llama.cpp's lazy grammar aborted it
        // here), and whatever calls the model wrote are valid.
        let (text, usage, _) = generate(&backend, request).await;
        assert!(usage.completion_tokens > 0);
        assert_calls_valid(&text, &registry);
    }
}

/// The prompt cache files (`.kv`) in `dir`.
fn cache_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|path| path.extension().is_some_and(|ext| ext == "kv"));
    files
}

#[tokio::test]
async fn a_new_process_starts_from_the_saved_prefix_and_a_damaged_cache_is_rewritten() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let with_cache = || {
        let mut settings = settings();
        settings.prompt_cache = Some(dir.path().to_path_buf());
        settings.max_tokens = 8;
        settings
    };
    let rules: String = (1..=40).map(|i| format!("Rule {i}: keep answers short and plain.\n")).collect();
    let request = || CompletionRequest {
        system: format!("You are a helpful assistant.\n{rules}"),
        messages: vec![Message::user_text("Name three colours.")],
        ..CompletionRequest::default()
    };

    let cold_backend = LlamaBackend::load(with_cache()).unwrap();
    let (cold, cold_usage, _) = generate(&cold_backend, request()).await;
    drop(cold_backend);
    assert_eq!(cold_usage.cached_prompt_tokens, 0);
    let files = cache_files(dir.path());
    assert_eq!(files.len(), 1, "one cache file for one model and prefix");

    // A new process (a fresh context) evaluates only what follows the prefix,
    // and the model continues exactly as it did from a cold evaluation.
    let warm_backend = LlamaBackend::load(with_cache()).unwrap();
    let (warm, warm_usage, _) = generate(&warm_backend, request()).await;
    drop(warm_backend);
    assert!(warm_usage.cached_prompt_tokens > 300, "{warm_usage:?}");
    assert!(warm_usage.cached_prompt_tokens < warm_usage.prompt_tokens);
    assert_eq!(warm, cold);

    // A damaged file is not trusted: the prompt is evaluated in full, and
    // the file is written again, so the next process is warm again.
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&files[0], &bytes).unwrap();
    let damaged_backend = LlamaBackend::load(with_cache()).unwrap();
    let (after_damage, damaged_usage, _) = generate(&damaged_backend, request()).await;
    drop(damaged_backend);
    assert_eq!(damaged_usage.cached_prompt_tokens, 0);
    assert_eq!(after_damage, cold);
    let rewarmed = LlamaBackend::load(with_cache()).unwrap();
    let (_, rewarmed_usage, _) = generate(&rewarmed, request()).await;
    assert_eq!(rewarmed_usage.cached_prompt_tokens, warm_usage.cached_prompt_tokens);

    // A truncated file, too.
    std::fs::write(&files[0], &bytes[..100]).unwrap();
    let truncated = LlamaBackend::load(with_cache()).unwrap();
    let (_, truncated_usage, _) = generate(&truncated, request()).await;
    assert_eq!(truncated_usage.cached_prompt_tokens, 0);
}

/// Fused and unfused attention keep KV states of different layouts: each
/// setting has its cache file, so switching it and back starts warm.
#[tokio::test]
async fn each_attention_setting_keeps_its_own_saved_prefix() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let with_cache = |flash_attention| LlamaSettings {
        prompt_cache: Some(dir.path().to_path_buf()),
        max_tokens: 8,
        flash_attention,
        ..settings()
    };
    let rules: String = (1..=40).map(|i| format!("Rule {i}: keep answers short and plain.\n")).collect();
    let request = || CompletionRequest {
        system: format!("You are a helpful assistant.\n{rules}"),
        messages: vec![Message::user_text("Name three colours.")],
        ..CompletionRequest::default()
    };
    let mut cached = Vec::new();
    for flash_attention in [FlashAttention::Auto, FlashAttention::Off, FlashAttention::Auto, FlashAttention::Off] {
        let backend = LlamaBackend::load(with_cache(flash_attention)).unwrap();
        let (text, usage, _) = generate(&backend, request()).await;
        assert!(!text.is_empty());
        cached.push(usage.cached_prompt_tokens);
    }
    assert_eq!(&cached[..2], [0, 0], "{cached:?}");
    assert!(cached[2] > 300 && cached[3] > 300, "switching back started cold: {cached:?}");
    assert_eq!(cache_files(dir.path()).len(), 2, "one file per attention setting");
}

/// The model processes a language server runs: its children started as
/// `tack model-worker`.
fn model_processes(server: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(threads) = std::fs::read_dir(format!("/proc/{server}/task")) else { return found };
    for thread in threads.flatten() {
        let children = std::fs::read_to_string(thread.path().join("children")).unwrap_or_default();
        for pid in children.split_whitespace().filter_map(|p| p.parse::<u32>().ok()) {
            let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&command).contains("model-worker") {
                found.push(pid);
            }
        }
    }
    found
}

#[test]
fn a_model_process_that_dies_mid_generation_fails_that_turn_and_the_next_turn_runs() {
    let _guard = exclusive();
    let workspace = tempfile::tempdir().unwrap();
    let options = serde_json::json!({
        "model": {"backend": "llama", "path": model_path(), "maxTokens": 120, "contextSize": 4096},
    });
    let mut client = lsp_client::LspClient::start(workspace.path(), options);
    // A turn of a tiny model makes several generations (the intent, the
    // reply, its asks again), each slow on a loaded machine.
    client.timeout = std::time::Duration::from_secs(300);
    let conversation = client.new_conversation(None);
    // SIGABRT is what llama.cpp's failed GGML_ASSERT raises.
    for (signal, said) in [("KILL", "signal 9"), ("ABRT", "signal 6")] {
        let turn = client.turn(&conversation, "Tell me a long story about a lighthouse keeper.");
        client.wait_event(&conversation, |e| e["kind"] == "text" && e["turnId"] == turn.as_str());
        let workers = model_processes(client.pid());
        assert_eq!(workers.len(), 1, "one model process: {workers:?}\n{}", client.report());
        let killed = std::process::Command::new("kill").arg(format!("-{signal}")).arg(workers[0].to_string()).status();
        assert!(killed.unwrap().success());
        let finished = client.wait_turn_finished_of(&conversation, &turn);
        assert_eq!(finished["stopReason"], "error", "{finished}");
        let error = client.events(&conversation).into_iter().rev().find(|e| e["kind"] == "error").unwrap();
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("model process") && message.contains(said), "{message}");
        assert!(client.is_running(), "the server survived the model process");
    }
    let before = model_processes(client.pid());
    let turn = client.turn(&conversation, "Say hello.");
    let finished = client.wait_turn_finished_of(&conversation, &turn);
    assert!(["end_turn", "max_iterations"].contains(&finished["stopReason"].as_str().unwrap()), "{finished}");
    assert!(finished["usage"]["completionTokens"].as_u64().unwrap() > 0, "{finished}");
    let worker = model_processes(client.pid());
    assert_eq!(worker.len(), 1, "a new model process: {worker:?} (before: {before:?})");
    assert_eq!(client.shutdown_and_exit().code(), Some(0));
    for _ in 0..50 {
        if !std::path::Path::new(&format!("/proc/{}", worker[0])).exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the model process {} outlived the server", worker[0]);
}

#[tokio::test]
async fn a_choice_is_held_to_the_names_offered_even_when_the_model_would_write_another() {
    let _guard = exclusive();
    let backend = LlamaBackend::load(coder_settings()).expect("the coder model loads");
    // Asked for a name that is not offered, and told to explain: the reply
    // is still exactly one of the choices, and nothing after it.
    let choices = vec!["parse_port".to_string(), "format_port".to_string(), "helpers.clamp".to_string()];
    for prompt in [
        "Which function parses a port number? Reply with its name.",
        "Name the function that validates emails, and explain why in a paragraph.",
    ] {
        let request = CompletionRequest {
            system: "You are a coding assistant.".into(),
            messages: vec![Message::user_text(prompt)],
            choices: choices.clone(),
            ..CompletionRequest::default()
        };
        let (text, usage, _) = generate(&backend, request).await;
        assert!(choices.contains(&text), "{text:?} is not one of {choices:?}");
        assert!(usage.completion_tokens > 0);
    }
    // A choice among numbers, as the pipeline lists definitions.
    let numbers: Vec<String> = (1..=12).map(|n| n.to_string()).collect();
    let request = CompletionRequest {
        messages: vec![Message::user_text(
            "1. alpha\n2. beta\n...\n12. lambda\nWhich is the last? Reply with its number.",
        )],
        choices: numbers.clone(),
        ..CompletionRequest::default()
    };
    let (text, _, _) = generate(&backend, request).await;
    assert!(numbers.contains(&text), "{text:?}");
}

/// Replies that copy what the prompt holds, as an edit does: where prompt
/// lookup has the most to propose.
fn copying_requests() -> Vec<CompletionRequest> {
    let code = "def parse_port(text):\n    port = int(text)\n    if port < 0:\n        raise ValueError(f\"bad port: {text}\")\n    return port\n\n\ndef format_port(port):\n    return f\":{port}\"\n";
    [
        format!("Here is ports.py:\n```python\n{code}```\nPorts start at 1. Reply with the whole fixed file in a code block."),
        format!("Here is ports.py:\n```python\n{code}```\nRename format_port to port_suffix. Reply with the whole new file."),
        "Count from one to twelve in words, one per line, then count back down.".to_string(),
    ]
    .into_iter()
    .map(|prompt| CompletionRequest {
        system: "You are a coding assistant.".into(),
        messages: vec![Message::user_text(prompt)],
        ..CompletionRequest::default()
    })
    .collect()
}

/// Speculation configured by `speculate` gives the replies of decoding
/// one token at a time, twice in a row (the second from the cache the
/// drafts left), and keeps some of its drafts.
async fn assert_speculation_keeps_the_text(
    mut plain: LlamaSettings,
    requests: Vec<CompletionRequest>,
    speculate: impl FnOnce(&mut LlamaSettings),
) {
    plain.max_tokens = 160;
    let mut speculating = plain.clone();
    speculate(&mut speculating);
    let (plain, speculating) = (LlamaBackend::load(plain).unwrap(), LlamaBackend::load(speculating).unwrap());
    let (mut drafted, mut accepted) = (0, 0);
    for request in requests {
        let (expected, _, _) = generate(&plain, request.clone()).await;
        let (text, usage, _) = generate(&speculating, request.clone()).await;
        assert_eq!(text, expected, "speculation changed the reply");
        // Asked again, the reply continues from the cache the drafts left:
        // the rejected positions are gone, the kept ones reused.
        let (again, again_usage, _) = generate(&speculating, request).await;
        assert_eq!(again, expected, "the second generation read a KV cache the drafts had spoiled");
        assert!(again_usage.cached_prompt_tokens > 0);
        (drafted, accepted) = (drafted + usage.drafted_tokens, accepted + usage.accepted_tokens);
    }
    assert!(accepted > 0 && accepted <= drafted, "drafted {drafted}, accepted {accepted}");
    // A choice is held by its grammar: no draft is proposed there.
    let choice = CompletionRequest { choices: vec!["yes".into(), "no".into()], ..copying_requests().remove(0) };
    let (text, usage, _) = generate(&speculating, choice).await;
    assert!(text == "yes" || text == "no", "{text:?}");
    assert_eq!(usage.drafted_tokens, 0);
}

#[tokio::test]
async fn prompt_lookup_gives_the_same_text_as_decoding_one_token_at_a_time() {
    let _guard = exclusive();
    assert_speculation_keeps_the_text(coder_settings(), copying_requests(), |settings| {
        settings.lookup = LOOKUP_DRAFT_TOKENS
    })
    .await;
}

/// Unfused attention is where a batch of drafts costs least on a CPU.
#[tokio::test]
async fn prompt_lookup_with_flash_attention_off_gives_the_same_text() {
    let _guard = exclusive();
    let unfused = LlamaSettings { flash_attention: FlashAttention::Off, ..coder_settings() };
    let code_replies = copying_requests().into_iter().take(2).collect();
    assert_speculation_keeps_the_text(unfused, code_replies, |settings| settings.lookup = LOOKUP_DRAFT_TOKENS).await;
}

/// The draft here is the coder itself, the one model of its vocabulary the
/// tests install: its drafts follow their own cache across replies. On
/// the code replies only: batched logits are not bit-identical to one
/// token's, and the counting reply's 12th token is a near tie (0.09 logit
/// apart decoded alone) that a cache of long accepted drafts turns over.
#[tokio::test]
async fn a_draft_model_gives_the_same_text_as_decoding_one_token_at_a_time() {
    let _guard = exclusive();
    let code_replies = copying_requests().into_iter().take(2).collect();
    assert_speculation_keeps_the_text(coder_settings(), code_replies, |settings| {
        settings.lookup = 6;
        settings.draft_model = Some(settings.path.clone());
    })
    .await;
}

#[test]
fn a_draft_model_of_another_vocabulary_is_refused_with_a_clear_error() {
    let _guard = exclusive();
    let mut settings = coder_settings();
    settings.lookup = 8;
    settings.draft_model = Some(model_path());
    let error = LlamaBackend::load(settings).err().expect("a draft of another vocabulary is refused");
    assert!(matches!(error, LlamaError::DraftVocabulary { .. }), "{error:?}");
    let message = error.to_string();
    let draft = model_path().display().to_string();
    assert!(message.contains("vocabularies differ") && message.contains(&draft), "{message}");
}

#[tokio::test]
async fn a_cancelled_speculative_generation_leaves_a_cache_the_next_one_continues_from() {
    let _guard = exclusive();
    let mut plain = coder_settings();
    plain.max_tokens = 160;
    plain.reuse_prefix = false;
    let plain = LlamaBackend::load(plain).unwrap();
    let request = copying_requests().remove(0);
    let (expected, _, _) = generate(&plain, request.clone()).await;
    drop(plain);
    // Prompt lookup, then a draft model whose own cache must follow too.
    for draft_model in [None, Some(coder_settings().path)] {
        let mut settings = coder_settings();
        settings.max_tokens = 160;
        settings.lookup = 8;
        settings.draft_model = draft_model;
        let backend = LlamaBackend::load(settings).unwrap();
        // Dropped after a few chunks, mid-draft or not.
        let mut stream = backend.stream(request.clone());
        let mut seen = 0;
        while let Some(item) = stream.next().await {
            if matches!(item.unwrap(), ModelChunk::Text(_)) {
                seen += 1;
                if seen == 20 {
                    break;
                }
            }
        }
        drop(stream);
        let (text, _, _) = generate(&backend, request.clone()).await;
        assert_eq!(text, expected);
    }
}
