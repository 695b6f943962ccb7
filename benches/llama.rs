//! Local inference benchmarks on a real GGUF, each reported as a ratio:
//! 1. prompt-eval and generation tokens/s against upstream `llama-bench`
//!    (built by scripts/build-llama-bench; skipped with a note when absent);
//! 2. a 10-iteration agent session replayed through the model (teacher
//!    forcing), prompt tokens evaluated and time to first token with KV
//!    prefix reuse on and off;
//! 3. the share of generations that parse into a schema-valid call, with and
//!    without the grammar, over 20 prompts, in the model's own call format
//!    where its template has one (Qwen's `<tool_call>`), else tack's;
//! 4. time to first token of a new process's first turn with the prompt
//!    cache cold and warm (the agent's real system prompt and tools);
//! 5. the model in a worker process against the same model in tack's own
//!    process: time to first token and generation tokens/s as the caller
//!    sees them, sampled with tack's real sampler chain;
//! 6. prompt and generation tokens/s at an agent turn's depth (4,096 tokens
//!    in the cache), sampled with tack's real sampler chain, against
//!    llama-bench's `-d 4096`;
//! 7. edit replies (a task's file handed over, the whole fixed file asked
//!    for, greedy) decoded one token at a time, with prompt lookup and with
//!    a draft model (TACK_BENCH_DRAFT_MODEL, else the 0.5B coder for another
//!    model): generation tokens/s, the share of drafted tokens kept, whether
//!    the text is the same, and the prompt time the draft model adds;
//! 8. two conversations taking turns on one model (two editor sessions, or
//!    a session and its sub-agent), each handing over a file first: prompt
//!    tokens evaluated and prompt seconds with earlier prompts' KV states
//!    kept in memory (`prompt_memory`) and without.
//!
//! `cargo bench --bench llama` (model: TACK_BENCH_MODEL, else TACK_TEST_MODEL,
//! else the default model; threads: TACK_BENCH_THREADS, default 2; sections:
//! TACK_BENCH_ONLY=throughput,loop,calls,first-turn,worker,depth,speculative,alternating, default all;
//! flash attention: TACK_BENCH_FLASH_ATTENTION=auto|on|off, default auto). Run it on
//! a quiet machine: two inference workloads on two cores starve each other.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use tack::agent::{Approval, ApprovalRequest, Conversation, ConversationParts, Host, LoopSettings};
use tack::model::llama::{
    FlashAttention, GrammarMode, LOOKUP_DRAFT_TOKENS, LlamaBackend, LlamaSettings, MODEL_DRAFT_TOKENS,
};
use tack::model::toolcall::{ParseEvent, parse_complete};
use tack::model::{BackendError, CompletionRequest, ModelBackend, ModelChunk, ToolProtocol};
use tack::permissions::Policy;
use tack::protocol::{ApprovalDecision, Event, Message, PermissionMode, SequencedEvent, Usage};
use tack::tools::ToolRegistry;
use tack::workspace::Workspace;
use tack::workspace::edits::{EditOutcome, FileChange, apply_to_disk};
use tokio_util::sync::CancellationToken;

fn model_path() -> PathBuf {
    for var in ["TACK_BENCH_MODEL", "TACK_TEST_MODEL"] {
        if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            return PathBuf::from(path);
        }
    }
    let cache = tack::config::cache_dir().unwrap_or_default();
    cache.join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
}

fn threads() -> u32 {
    std::env::var("TACK_BENCH_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2)
}

/// `[model] flash_attention` for every model the benchmark loads, read as
/// the config file reads it: a misspelt value stops the run rather than
/// measuring `auto` under another name.
fn flash_attention() -> FlashAttention {
    match std::env::var("TACK_BENCH_FLASH_ATTENTION") {
        Ok(value) if !value.is_empty() => serde_json::from_value(serde_json::Value::String(value.clone()))
            .unwrap_or_else(|e| panic!("TACK_BENCH_FLASH_ATTENTION={value}: {e}")),
        _ => FlashAttention::Auto,
    }
}

fn load(configure: impl FnOnce(&mut LlamaSettings)) -> LlamaBackend {
    let mut settings = LlamaSettings::new(model_path());
    settings.threads = Some(threads());
    settings.flash_attention = flash_attention();
    settings.context_size = Some(8192);
    configure(&mut settings);
    LlamaBackend::load(settings).expect("the benchmark model loads")
}

async fn usage_of(stream: BoxStream<'static, Result<ModelChunk, BackendError>>) -> (String, Usage) {
    let mut stream = stream;
    let (mut text, mut usage) = (String::new(), Usage::default());
    while let Some(chunk) = stream.next().await {
        match chunk.expect("generation succeeds") {
            ModelChunk::Text(piece) => text.push_str(&piece),
            ModelChunk::Usage(u) => usage = u,
            ModelChunk::ToolCall { .. } => {}
        }
    }
    (text, usage)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

// ------------------------------------------------------------ 1. throughput

/// (prompt tokens/s, generation tokens/s) of tack, as llama-bench measures
/// them: a 512-token prompt evaluated from scratch, then 128 tokens decoded.
async fn tack_throughput() -> (f64, f64) {
    let backend = load(|s| {
        s.reuse_prefix = false;
        s.max_tokens = 128;
    });
    let paragraph = "The quick brown fox jumps over the lazy dog while the river runs past the old mill. ";
    let mut text = String::new();
    while backend.count_tokens(&text) < 500 {
        text.push_str(paragraph);
    }
    let request = CompletionRequest { messages: vec![Message::user_text(text)], ..CompletionRequest::default() };
    let completion = "one two three four five six seven eight nine ten ".repeat(30);
    let completion: String = {
        let tokens = backend.tokenize(&completion);
        backend.detokenize(&tokens[..128])
    };
    let mut prompt_rates = Vec::new();
    let mut generation_rates = Vec::new();
    for _ in 0..6 {
        let (_, usage) = usage_of(backend.stream_forced(request.clone(), &completion)).await;
        prompt_rates.push(usage.prompt_tokens as f64 / (usage.prompt_eval_ms.max(1) as f64 / 1000.0));
        generation_rates.push(usage.completion_tokens as f64 / (usage.decode_ms.max(1) as f64 / 1000.0));
    }
    // The first run warms caches and pages the model in.
    (median(prompt_rates[1..].to_vec()), median(generation_rates[1..].to_vec()))
}

/// llama-bench's (pp512, tg128 at depth 512) tokens/s, or why there are none.
fn llama_bench() -> Result<(f64, f64), String> {
    let runs = run_llama_bench(&["-p", "512", "-n", "128", "-d", "0,512", "-r", "5"])?;
    // tack generates after its 512-token prompt, so its generation compares
    // with llama-bench's at the same depth.
    Ok((bench_rate(&runs, 512, 0, 0)?, bench_rate(&runs, 0, 128, 512)?))
}

/// llama-bench's JSON results for `args` on the benchmark model.
fn run_llama_bench(args: &[&str]) -> Result<serde_json::Value, String> {
    let binary = std::env::var_os("LLAMA_BENCH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/llama-cpp/bin/llama-bench"));
    if !binary.is_file() {
        return Err("llama-bench not built: run scripts/build-llama-bench for the reference".into());
    }
    let output = std::process::Command::new(&binary)
        .args(["-m", &model_path().display().to_string(), "-t", &threads().to_string()])
        .args(["-fa", flash_attention().llama_cpp_name()])
        .args(args)
        .args(["-o", "json"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("llama-bench printed no JSON ({e}): {}", String::from_utf8_lossy(&output.stderr)))
}

/// The tokens/s of llama-bench's run of this shape.
fn bench_rate(runs: &serde_json::Value, prompt: u64, generated: u64, depth: u64) -> Result<f64, String> {
    runs.as_array()
        .into_iter()
        .flatten()
        .find(|r| r["n_prompt"] == prompt && r["n_gen"] == generated && r["n_depth"] == depth)
        .and_then(|r| r["avg_ts"].as_f64())
        .ok_or_else(|| format!("no pp{prompt}/tg{generated}@d{depth} in llama-bench's output"))
}

// ------------------------------------------------------------ 2. agent loop

/// Replays scripted completions through the real model as forced tokens.
struct Forced {
    llama: Arc<LlamaBackend>,
    script: Vec<String>,
    next: AtomicUsize,
}

impl ModelBackend for Forced {
    fn stream(&self, request: CompletionRequest) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let completion = self.script.get(index).cloned().unwrap_or_default();
        self.llama.stream_forced(request, &completion)
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.llama.count_tokens(text)
    }
    fn context_window(&self) -> usize {
        self.llama.context_window()
    }
    fn tool_protocol(&self) -> ToolProtocol {
        ToolProtocol::Text
    }
}

struct Recorder {
    usages: Mutex<Vec<Usage>>,
}

#[async_trait]
impl Host for Recorder {
    fn emit(&self, event: SequencedEvent) {
        if let Event::Usage { usage } = event.event {
            self.usages.lock().unwrap().push(usage);
        }
    }
    async fn approve(&self, _: ApprovalRequest) -> Approval {
        Approval::by_user(ApprovalDecision::Allow)
    }
    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        apply_to_disk(workspace, change)
    }
}

/// Per-iteration usage of a 10-iteration session: nine tool calls, one answer.
async fn agent_session(reuse: bool) -> Vec<Usage> {
    let llama = Arc::new(load(|s| s.reuse_prefix = reuse));
    let dir = tempfile::tempdir().unwrap();
    for i in 0..9 {
        let body: String = (0..12).map(|line| format!("def step_{i}_{line}(x):\n    return x + {line}\n")).collect();
        std::fs::write(dir.path().join(format!("step{i}.py")), body).unwrap();
    }
    let mut script: Vec<String> = (0..9)
        .map(|i| {
            format!("Looking at step {i}.\n{{\"tool\": \"Read\", \"input\": {{\"file_path\": \"step{i}.py\"}}}}\n")
        })
        .collect();
    script.push("All nine steps add a constant to their input.".into());
    let recorder = Arc::new(Recorder { usages: Mutex::new(Vec::new()) });
    let mut conversation = Conversation::new(ConversationParts {
        backend: Arc::new(Forced { llama, script, next: AtomicUsize::new(0) }),
        tools: Arc::new(ToolRegistry::builtin(&Default::default())),
        workspace: Arc::new(Workspace::open(dir.path()).unwrap()),
        host: recorder.clone(),
        policy: Policy::new(PermissionMode::AutoAll, &[]).unwrap(),
        settings: LoopSettings { max_iterations: 10, ..LoopSettings::default() },
        session: None,
        history: Vec::new(),
        tasks: Vec::new(),
    });
    let outcome = conversation.run_turn("What do the step files do?", CancellationToken::new()).await;
    assert_eq!(outcome.text, "All nine steps add a constant to their input.");
    let usages = recorder.usages.lock().unwrap().clone();
    assert_eq!(usages.len(), 10);
    usages
}

// ------------------------------------------------------------ 3. valid calls

const CALL_PROMPTS: [&str; 20] = [
    "Read the file src/main.rs.",
    "Show me README.md.",
    "List the files in the src directory.",
    "Find all Rust files in the project.",
    "Search the code for TODO comments.",
    "Find where the function parse_args is defined.",
    "Create a file hello.txt containing the word hello.",
    "Replace the word foo with bar in lib.rs.",
    "Delete the file old.log.",
    "Rename notes.txt to docs/notes.md.",
    "Count how many times unwrap appears in src.",
    "Open Cargo.toml.",
    "Look for the string FIXME, ignoring case.",
    "What is in the tests folder?",
    "Find every markdown file.",
    "Read lines 10 to 20 of src/lib.rs.",
    "Write a .gitignore that ignores target.",
    "Search for fn main in all files.",
    "Show the top-level directory.",
    "Find JSON files under config.",
];

/// (valid calls, prompts, generation tokens/s) for one grammar mode.
async fn valid_call_rate(grammar: GrammarMode) -> (usize, usize, f64) {
    let backend = load(|s| {
        s.grammar = grammar;
        s.max_tokens = 160;
    });
    let registry = ToolRegistry::builtin(&Default::default());
    let tools = registry.specs(|_| true);
    let system = tack::agent::prompt::system_prompt(PermissionMode::AutoAll, &tools, backend.tool_protocol());
    let mut valid = 0;
    let (mut tokens, mut decode_ms) = (0, 0);
    for prompt in CALL_PROMPTS {
        let request = CompletionRequest {
            system: system.clone(),
            messages: vec![Message::user_text(prompt)],
            tools: tools.clone(),
            ..CompletionRequest::default()
        };
        let (text, usage) = usage_of(backend.stream(request)).await;
        tokens += usage.completion_tokens;
        decode_ms += usage.decode_ms;
        let good = parse_complete(&text).iter().any(|event| match event {
            ParseEvent::Call(call) => registry.check(&call.name, &call.input).is_ok(),
            _ => false,
        });
        valid += usize::from(good);
    }
    (valid, CALL_PROMPTS.len(), tokens as f64 / (decode_ms.max(1) as f64 / 1000.0))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!(
        "model: {}  threads: {}  flash attention: {}",
        model_path().display(),
        threads(),
        flash_attention().llama_cpp_name()
    );

    let only = std::env::var("TACK_BENCH_ONLY").unwrap_or_default();
    let wanted = |section: &str| only.is_empty() || only.split(',').any(|s| s == section);
    if wanted("throughput") {
        throughput(&runtime);
    }
    if wanted("loop") {
        agent_loop(&runtime);
    }
    if wanted("calls") {
        valid_calls(&runtime);
    }
    if wanted("first-turn") {
        first_turn(&runtime);
    }
    if wanted("worker") {
        worker(&runtime);
    }
    if wanted("depth") {
        depth(&runtime);
    }
    if wanted("speculative") {
        speculative(&runtime);
    }
    if wanted("alternating") {
        alternating(&runtime);
    }
}

// ---------------------------------------------------------- 8. alternating

/// (prompt tokens evaluated, prompt ms) over four rounds of two
/// conversations taking turns, each opened on one of the edit asks' files.
async fn alternating_conversations(saved_prompts_bytes: usize) -> (u64, u64) {
    let backend = load(|s| {
        s.saved_prompts_bytes = saved_prompts_bytes;
        s.max_tokens = 32;
    });
    let mut conversations: Vec<CompletionRequest> = edit_requests().into_iter().take(2).collect();
    let (mut evaluated, mut ms) = (0, 0);
    for round in 0..4 {
        for conversation in &mut conversations {
            if round > 0 {
                conversation.messages.push(Message::user_text(format!("Now say in one line what part {round} does.")));
            }
            let (reply, usage) = usage_of(backend.stream(conversation.clone())).await;
            evaluated += usage.prompt_tokens - usage.cached_prompt_tokens;
            ms += usage.prompt_eval_ms;
            conversation.messages.push(Message {
                role: tack::protocol::Role::Assistant,
                blocks: vec![tack::protocol::Block::Text { text: reply }],
            });
        }
    }
    (evaluated, ms)
}

fn alternating(runtime: &tokio::runtime::Runtime) {
    println!("\n8. two conversations taking turns, four rounds each");
    let (kept_tokens, kept_ms) = runtime.block_on(alternating_conversations(512 << 20));
    let (plain_tokens, plain_ms) = runtime.block_on(alternating_conversations(0));
    println!("   prompt tokens evaluated: kept {kept_tokens}, not kept {plain_tokens}");
    println!(
        "   prompt seconds: kept {:.1}, not kept {:.1} (kept / not kept = {:.2})",
        kept_ms as f64 / 1000.0,
        plain_ms as f64 / 1000.0,
        kept_ms as f64 / plain_ms.max(1) as f64
    );
}

// ----------------------------------------------------------- 7. speculative

/// The edit asks of the task benchmark: a task's file handed over whole
/// with its request, the whole new file asked for, as the whole-file way
/// asks a small model. benches/speculative-server asks llama-server the
/// same, for llama.cpp's own speculation as the reference: keep the two alike.
fn edit_requests() -> Vec<CompletionRequest> {
    let tasks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tasks");
    [
        ("long-file", "utils.py"),
        ("js-truncate", "text.js"),
        ("off-by-one", "listutil.py"),
        ("rs-window", "src/stats.rs"),
    ]
    .iter()
    .filter_map(|(task, file)| {
        let text = std::fs::read_to_string(tasks.join(task).join("workspace").join(file)).ok()?;
        let prompt = std::fs::read_to_string(tasks.join(task).join("prompt")).ok()?;
        let ask = format!(
            "{file}\n```\n{text}```\n\n{}\n\nReply with the whole new content of each file you change, \
                 each in a code block after its path.",
            prompt.trim()
        );
        Some(CompletionRequest {
            system: "You are a coding assistant. The user's project files are shown to you in full.".into(),
            messages: vec![Message::user_text(ask)],
            ..CompletionRequest::default()
        })
    })
    .collect()
}

/// The draft model of section 7: TACK_BENCH_DRAFT_MODEL (`off` for none),
/// else the 0.5B coder when the model benchmarked is another one (the 1.5B).
fn draft_model_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TACK_BENCH_DRAFT_MODEL").filter(|p| !p.is_empty()) {
        return (path != "off").then(|| PathBuf::from(path));
    }
    let small = tack::config::cache_dir()?.join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    (small.is_file() && small != model_path()).then_some(small)
}

fn speculative(runtime: &tokio::runtime::Runtime) {
    println!(
        "\n7. edit replies decoded plain, with prompt lookup and with a draft model (greedy, up to 600 tokens each)"
    );
    let settings = |lookup: u32, draft: Option<PathBuf>| {
        move |s: &mut LlamaSettings| {
            s.max_tokens = 600;
            s.reuse_prefix = false;
            s.lookup = lookup;
            s.draft_model = draft;
        }
    };
    let plain = load(settings(0, None));
    let mut ways = vec![("lookup", load(settings(LOOKUP_DRAFT_TOKENS, None)))];
    match draft_model_path() {
        Some(draft) => {
            println!("   draft model: {}", draft.display());
            ways.push(("draft", load(settings(MODEL_DRAFT_TOKENS, Some(draft)))));
        }
        None => println!("   no draft model (TACK_BENCH_DRAFT_MODEL): the draft row is skipped"),
    }
    #[derive(Default)]
    struct Tally {
        tokens: u64,
        ms: u64,
        prompt_ms: u64,
        drafted: u64,
        accepted: u64,
        same: usize,
    }
    let rate = |tokens: u64, ms: u64| tokens as f64 * 1000.0 / ms.max(1) as f64;
    let mut plain_tally = Tally::default();
    let mut tallies: Vec<Tally> = ways.iter().map(|_| Tally::default()).collect();
    let mut total = 0;
    for request in edit_requests() {
        let (expected, plain_usage) = runtime.block_on(usage_of(plain.stream(request.clone())));
        plain_tally.tokens += plain_usage.completion_tokens;
        plain_tally.ms += plain_usage.decode_ms;
        plain_tally.prompt_ms += plain_usage.prompt_eval_ms;
        total += 1;
        let mut line = format!(
            "   reply of {:>4} tokens: plain {:>6.1} tok/s",
            plain_usage.completion_tokens,
            rate(plain_usage.completion_tokens, plain_usage.decode_ms)
        );
        for ((name, backend), tally) in ways.iter().zip(tallies.iter_mut()) {
            let (text, usage) = runtime.block_on(usage_of(backend.stream(request.clone())));
            tally.tokens += usage.completion_tokens;
            tally.ms += usage.decode_ms;
            tally.prompt_ms += usage.prompt_eval_ms;
            tally.drafted += usage.drafted_tokens;
            tally.accepted += usage.accepted_tokens;
            tally.same += usize::from(text == expected);
            line.push_str(&format!(
                ", {name} {:>6.1} tok/s (kept {:>4} of {:>4})",
                rate(usage.completion_tokens, usage.decode_ms),
                usage.accepted_tokens,
                usage.drafted_tokens
            ));
        }
        println!("{line}");
    }
    let plain_rate = rate(plain_tally.tokens, plain_tally.ms);
    println!("   plain: {plain_rate:.1} tok/s, prompts {} ms", plain_tally.prompt_ms);
    for ((name, _), tally) in ways.iter().zip(&tallies) {
        let way_rate = rate(tally.tokens, tally.ms);
        println!(
            "   {name}: {way_rate:.1} tok/s, {name} / plain = {:.2}x (target >= 2x); {:.0}% of drafted tokens kept; \
             same text in {} of {total}; prompts {} ms ({:.2}x plain's)",
            way_rate / plain_rate,
            tally.accepted as f64 * 100.0 / tally.drafted.max(1) as f64,
            tally.same,
            tally.prompt_ms,
            tally.prompt_ms as f64 / plain_tally.prompt_ms.max(1) as f64,
        );
    }
}

// ----------------------------------------------------------------- 6. depth

/// The cache depth of an agent turn: system prompt, tools, files read.
const AGENT_DEPTH: usize = 4096;

/// (prompt tokens/s, generation tokens/s) of tack with `AGENT_DEPTH` tokens
/// already in the cache: each run evaluates a fresh 512-token part after the
/// cached prefix, and each other run samples up to 128 tokens with the real
/// sampler chain right after the prefix, so both happen at llama-bench's
/// depth.
async fn tack_at_depth() -> (f64, f64, usize) {
    let backend = load(|s| s.max_tokens = 128);
    let mut prefix = String::new();
    let mut n = 0;
    while backend.count_tokens(&prefix) < AGENT_DEPTH {
        n += 1;
        prefix.push_str(&format!("Note {n}: the river runs past the old mill while the fox watches the dog. "));
    }
    let part = |run: usize| {
        let mut text = String::new();
        let mut line = 0;
        while backend.count_tokens(&text) < 500 {
            line += 1;
            text.push_str(&format!("Entry {run}.{line}: a crate of apples left the farm at dawn. "));
        }
        text
    };
    let request = |text: String| CompletionRequest { messages: vec![Message::user_text(text)], ..Default::default() };
    // Fills the cache with the prefix.
    usage_of(backend.stream(request(prefix.clone()))).await;
    let (mut prompt_rates, mut generation_rates, mut generated) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..4 {
        let (_, usage) = usage_of(backend.stream(request(format!("{prefix}{}", part(run))))).await;
        let evaluated = usage.prompt_tokens - usage.cached_prompt_tokens;
        prompt_rates.push(evaluated as f64 / (usage.prompt_eval_ms.max(1) as f64 / 1000.0));
        let text = format!("{prefix}\nCount from 1 to 300, separated by spaces.");
        let (_, usage) = usage_of(backend.stream(request(text))).await;
        generation_rates.push(usage.completion_tokens as f64 / (usage.decode_ms.max(1) as f64 / 1000.0));
        generated.push(usage.completion_tokens as f64);
    }
    (median(prompt_rates), median(generation_rates), median(generated) as usize)
}

/// llama-bench's (pp512, tg128) tokens/s at `AGENT_DEPTH`.
fn llama_bench_at_depth() -> Result<(f64, f64), String> {
    let depth = AGENT_DEPTH.to_string();
    let runs = run_llama_bench(&["-p", "512", "-n", "128", "-d", &depth, "-r", "3"])?;
    let depth = AGENT_DEPTH as u64;
    Ok((bench_rate(&runs, 512, 0, depth)?, bench_rate(&runs, 0, 128, depth)?))
}

fn depth(runtime: &tokio::runtime::Runtime) {
    let (prompt_rate, generation_rate, generated) = runtime.block_on(tack_at_depth());
    println!("\n6. at agent depth, {AGENT_DEPTH} tokens cached (tokens/s; tack samples, median {generated} tokens)");
    print_against_llama_bench("tg128", (prompt_rate, generation_rate), llama_bench_at_depth());
}

/// tack's (prompt, generation) tokens/s beside llama-bench's, and the ratios.
fn print_against_llama_bench(
    generation: &str,
    (prompt_rate, generation_rate): (f64, f64),
    reference: Result<(f64, f64), String>,
) {
    println!("   {:<28} {:>10} {:>10}", "", "pp512", generation);
    println!("   {:<28} {:>10.1} {:>10.1}", "tack", prompt_rate, generation_rate);
    match reference {
        Ok((pp, tg)) => {
            println!("   {:<28} {:>10.1} {:>10.1}", "llama-bench (upstream)", pp, tg);
            println!("   {:<28} {:>9.2}x {:>9.2}x", "tack / llama-bench", prompt_rate / pp, generation_rate / tg);
        }
        Err(why) => println!("   {why}"),
    }
}

// ---------------------------------------------------------------- 5. worker

/// (ms to first token, tokens/s after it) of one generation, timed by the caller.
async fn caller_timing(backend: &dyn ModelBackend, request: CompletionRequest) -> (f64, f64) {
    let started = std::time::Instant::now();
    let mut stream = backend.stream(request);
    let (mut first, mut tokens) = (None, 0);
    while let Some(chunk) = stream.next().await {
        match chunk.expect("generation succeeds") {
            ModelChunk::Text(_) => {
                first.get_or_insert_with(std::time::Instant::now);
            }
            ModelChunk::Usage(usage) => tokens = usage.completion_tokens,
            ModelChunk::ToolCall { .. } => {}
        }
    }
    let first = first.expect("the model wrote something");
    let ttft = (first - started).as_secs_f64() * 1000.0;
    (ttft, tokens.saturating_sub(1) as f64 / first.elapsed().as_secs_f64())
}

fn worker(runtime: &tokio::runtime::Runtime) {
    let configure = |s: &mut LlamaSettings| {
        s.threads = Some(threads());
        s.flash_attention = flash_attention();
        s.context_size = Some(8192);
        s.reuse_prefix = false;
        s.max_tokens = 128;
    };
    let in_process = load(configure);
    let mut settings = LlamaSettings::new(model_path());
    configure(&mut settings);
    let program = PathBuf::from(env!("CARGO_BIN_EXE_tack"));
    let isolated = runtime
        .block_on(tack::model::worker::WorkerBackend::start(program, settings))
        .expect("the worker loads the model");
    let paragraph = "The old lighthouse keeper wrote in his log every night about the ships, the storms and the sea. ";
    let request = CompletionRequest {
        messages: vec![Message::user_text(format!("{}Tell the rest of his story.", paragraph.repeat(8)))],
        ..CompletionRequest::default()
    };
    let (mut local, mut remote) = (Vec::new(), Vec::new());
    // Alternating, so that neither side gets the quieter minutes; the first
    // round warms caches.
    for round in 0..6 {
        let a = runtime.block_on(caller_timing(&in_process, request.clone()));
        let b = runtime.block_on(caller_timing(&isolated, request.clone()));
        if round > 0 {
            local.push(a);
            remote.push(b);
        }
    }
    let ttft = |runs: &[(f64, f64)]| median(runs.iter().map(|r| r.0).collect());
    let rate = |runs: &[(f64, f64)]| median(runs.iter().map(|r| r.1).collect());
    println!("\nworker process vs in-process (median of 5, 128 tokens sampled, prefix reuse off)");
    println!(
        "  first token: {:.0} ms vs {:.0} ms (ratio {:.3})",
        ttft(&remote),
        ttft(&local),
        ttft(&remote) / ttft(&local)
    );
    println!(
        "  generation:  {:.1} vs {:.1} tokens/s (ratio {:.3})",
        rate(&remote),
        rate(&local),
        rate(&remote) / rate(&local)
    );
}

// ------------------------------------------------------------ 4. first turn

/// Milliseconds from a new backend's first request to its first token, on
/// the demo's first prompt as the agent sends it, with the prompt cache in `dir`.
async fn first_token_ms(dir: &std::path::Path) -> f64 {
    let backend = load(|s| {
        s.prompt_cache = Some(dir.to_path_buf());
        s.max_tokens = 1;
    });
    let tools = ToolRegistry::for_model(&Default::default(), backend.context_window(), backend.parameters());
    let specs = tools.specs(|_| true);
    let system = tack::agent::prompt::system_prompt(PermissionMode::AutoAll, &specs, backend.tool_protocol());
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let first = format!("{}The greeting test fails. Fix it.", tack::agent::prompt::workspace_context(&demo, None));
    let request =
        CompletionRequest { system, messages: vec![Message::user_text(first)], tools: specs, ..Default::default() };
    let started = std::time::Instant::now();
    let mut stream = backend.stream(request);
    while let Some(chunk) = stream.next().await {
        if let Ok(ModelChunk::Text(_)) = chunk.as_ref() {
            break;
        }
        chunk.expect("generation succeeds");
    }
    started.elapsed().as_secs_f64() * 1000.0
}

fn first_turn(runtime: &tokio::runtime::Runtime) {
    println!("\n4. first turn of a new process: time to first token, prompt cache cold and warm");
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        cold.push(runtime.block_on(first_token_ms(dir.path())));
        warm.push(runtime.block_on(first_token_ms(dir.path())));
    }
    let (cold, warm) = (median(cold), median(warm));
    println!("   cold {cold:.0} ms, warm {warm:.0} ms: warm / cold = {:.3} (target <= 0.2)", warm / cold);
}

fn throughput(runtime: &tokio::runtime::Runtime) {
    let rates = runtime.block_on(tack_throughput());
    println!("\n1. throughput (tokens/s)");
    print_against_llama_bench("tg128@d512", rates, llama_bench());
}

fn agent_loop(runtime: &tokio::runtime::Runtime) {
    println!("\n2. agent loop, 10 iterations replayed through the model (teacher forcing)");
    let on = runtime.block_on(agent_session(true));
    let off = runtime.block_on(agent_session(false));
    println!(
        "   {:>4} {:>14} {:>14} {:>12} {:>12}",
        "iter", "evaluated:on", "evaluated:off", "ttft ms:on", "ttft ms:off"
    );
    for (i, (a, b)) in on.iter().zip(&off).enumerate() {
        println!(
            "   {:>4} {:>14} {:>14} {:>12} {:>12}",
            i + 1,
            a.prompt_tokens - a.cached_prompt_tokens,
            b.prompt_tokens - b.cached_prompt_tokens,
            a.prompt_eval_ms,
            b.prompt_eval_ms
        );
    }
    let (first, last, last_off) = (on[0], on[9], off[9]);
    println!(
        "   iteration 10: prompt tokens evaluated on/off = {:.3} (target <= 0.1); ttft iteration 10 / iteration 1 with reuse = {:.2} (target <= 1.2)",
        (last.prompt_tokens - last.cached_prompt_tokens) as f64
            / (last_off.prompt_tokens - last_off.cached_prompt_tokens) as f64,
        last.prompt_eval_ms as f64 / first.prompt_eval_ms.max(1) as f64
    );
}

fn valid_calls(runtime: &tokio::runtime::Runtime) {
    println!("\n3. valid-call rate over {} prompts", CALL_PROMPTS.len());
    for mode in [GrammarMode::Required, GrammarMode::Lazy, GrammarMode::Off] {
        let (valid, total, rate) = runtime.block_on(valid_call_rate(mode));
        println!(
            "   grammar {:<9} {:>3}/{} = {:>5.1}% valid calls, generating at {:.1} tokens/s",
            format!("{mode:?}"),
            valid,
            total,
            100.0 * valid as f64 / total as f64,
            rate
        );
    }
}
