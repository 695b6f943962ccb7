//! The llama.cpp backend: a GGUF model run in-process, with KV-cache reuse.
//!
//! One worker thread owns the llama.cpp context and runs generations one at
//! a time; conversations queue for it. The model itself is shared (read-only)
//! so that tokenizing for token counts never waits for a generation.
//!
//! KV reuse: the worker remembers the tokens whose keys and values are in the
//! cache; a new prompt evaluates only what follows the longest common prefix.
//! Gemma 3 and other sliding-window models drop old cache entries unless the
//! context keeps the full window (`swa_full`), after which cutting the cache
//! back past the window would give wrong logits; the context is created with
//! the full window kept, so any common prefix can be reused.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Instant;

use futures::stream::{self, BoxStream, StreamExt};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::session::{LlamaStateSeqFlags, SeqState};
use llama_cpp_2::llama_backend::LlamaBackend as Runtime;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::grammar::{CallFormat, OpenerWatch, Sighting, call_grammar, choice_grammar};
use super::template::{ChatMessage, JinjaTemplate, chat_messages, text_protocol_chat, tool_definitions};
use super::toolcall::{self, ParseEvent};
use super::{BackendError, CompletionRequest, ModelBackend, ModelChunk, ToolProtocol};
pub use crate::config::{FlashAttention, GrammarMode};
use crate::protocol::Usage;
use crate::text::fnv1a;

/// Called with the share of the model loaded, from 0.0 to 1.0.
#[derive(Clone)]
pub struct LoadProgress(pub Arc<dyn Fn(f32) + Send + Sync>);

impl std::fmt::Debug for LoadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoadProgress")
    }
}

/// How to load and run a model.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LlamaSettings {
    pub path: PathBuf,
    /// Tokens of context; `None` for the model's training context, capped at 32k.
    pub context_size: Option<u32>,
    /// CPU threads; `None` picks one per available core.
    pub threads: Option<u32>,
    /// Tokens evaluated per decode call while reading the prompt.
    pub batch_size: u32,
    /// Layers offloaded to the GPU (only with the `cuda` feature).
    pub gpu_layers: u32,
    pub sampling: Sampling,
    /// Tokens one generation may produce.
    pub max_tokens: u32,
    /// Reuse the KV cache across generations (off only to measure it).
    pub reuse_prefix: bool,
    /// Constrain tool calls with a grammar built from the tools' schemas.
    pub grammar: GrammarMode,
    /// Texts that end a generation when the model writes them (not shown).
    pub stop: Vec<String>,
    /// Texts that end a generation when its reply starts with them.
    #[serde(default)]
    pub stop_at_start: Vec<String>,
    /// Tool calls one reply may hold: the generation ends after the last.
    pub max_calls_per_reply: u32,
    /// Teach tack's text protocol even when the chat template has a call
    /// format of its own.
    pub text_protocol: bool,
    /// Where the KV state of prompts' fixed prefix (system prompt and tools)
    /// is saved, so the first generation of a new process need not evaluate
    /// it again; `None` keeps no prompt cache.
    pub prompt_cache: Option<PathBuf>,
    /// Prompt-lookup speculative decoding: at most this many tokens are
    /// proposed from where the last ones occur earlier in the context, and
    /// checked in one batch; 0 decodes one token at a time. Greedy replies
    /// without a call grammar only: their tokens are the same either way.
    #[serde(default)]
    pub lookup: u32,
    /// Draft-model speculative decoding: a smaller GGUF with the same
    /// vocabulary drafts up to `lookup` tokens greedily, in place of
    /// prompt lookup; same replies, same bounds.
    #[serde(default)]
    pub draft_model: Option<PathBuf>,
    /// Fused attention (llama.cpp's flash attention).
    #[serde(default)]
    pub flash_attention: FlashAttention,
    /// Bytes of memory for earlier prompts' KV states: a prompt that goes
    /// back to one (a conversation after another one's turn on the same
    /// model) starts from it instead of evaluating it again; 0 keeps none.
    #[serde(default)]
    pub saved_prompts_bytes: usize,
    /// Told how loading goes, for progress bars.
    #[serde(skip)]
    pub progress: Option<LoadProgress>,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sampling {
    /// 0 samples greedily.
    pub temperature: f32,
    pub top_p: f32,
    pub top_k: i32,
    pub min_p: f32,
    pub seed: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { temperature: 0.0, top_p: 0.95, top_k: 40, min_p: 0.05, seed: 0 }
    }
}

impl LlamaSettings {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LlamaSettings {
            path: path.into(),
            context_size: None,
            threads: None,
            batch_size: 512,
            gpu_layers: if cfg!(feature = "cuda") { 999 } else { 0 },
            sampling: Sampling::default(),
            max_tokens: 2048,
            reuse_prefix: true,
            grammar: GrammarMode::default(),
            stop: Vec::new(),
            stop_at_start: Vec::new(),
            max_calls_per_reply: 1,
            text_protocol: false,
            prompt_cache: None,
            lookup: 0,
            draft_model: None,
            flash_attention: FlashAttention::Auto,
            saved_prompts_bytes: 0,
            progress: None,
        }
    }
}

/// What goes wrong with local models, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlamaError {
    #[error("no model file at {0}")]
    NotFound(String),
    #[error("{0} is not a GGUF model file (it does not start with the GGUF magic bytes)")]
    NotGguf(String),
    #[error("llama.cpp could not load {0}: unsupported model architecture, or a damaged file")]
    LoadFailed(String),
    #[error("cannot create a {context} token context for {path}: not enough memory? try a smaller context size")]
    ContextFailed { path: String, context: u32 },
    #[error("cannot start llama.cpp: {0}")]
    Runtime(String),
    #[error("the draft model {draft} cannot draft for {model}: their vocabularies differ ({detail})")]
    DraftVocabulary { draft: String, model: String, detail: String },
}

/// llama.cpp's global state may be set up once per process.
fn runtime() -> Result<&'static Runtime, LlamaError> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let mut runtime = Runtime::init().map_err(|e| e.to_string())?;
            // llama.cpp logs thousands of lines to stderr otherwise.
            runtime.void_logs();
            Ok(runtime)
        })
        .as_ref()
        .map_err(|e| LlamaError::Runtime(e.clone()))
}

/// How a generation's tool calls are held to the enabled tools.
struct CallConstraint {
    format: CallFormat,
    /// GBNF starting with the format's opener; see [`call_grammar`].
    gbnf: Arc<String>,
    /// The reply must start with a call, rather than the model choosing to.
    required: bool,
    /// Calls the reply may hold (at least 1): the generation ends after the last.
    max_calls: u32,
}

/// One generation handed to the worker.
struct Job {
    prompt: String,
    /// The start of `prompt` that depends only on the system prompt and the
    /// tools: what the prompt cache keeps.
    prefix: Option<Arc<String>>,
    /// The call grammar, when calls are constrained.
    calls: Option<CallConstraint>,
    /// Without a grammar: the calls a reply may hold and the tools' names,
    /// for ending the generation after the last call as the grammar would.
    free_calls: Option<(u32, Vec<String>)>,
    /// Tokens to decode instead of sampling (teacher forcing, for benchmarks
    /// that must replay the same session through the real model).
    forced: Option<Vec<LlamaToken>>,
    /// A fresh, sampled try (see `CompletionRequest::resample`).
    resample: Option<u32>,
    /// The request's own bound on the reply, below the settings'.
    max_tokens: Option<u32>,
    out: UnboundedSender<Result<ModelChunk, BackendError>>,
}

pub struct LlamaBackend {
    model: Arc<LlamaModel>,
    jobs: mpsc::Sender<Job>,
    template: ChatTemplate,
    context_size: u32,
    /// Tokens generated over the backend's life, for benchmarks and tests.
    generated: Arc<AtomicU64>,
    grammar_mode: GrammarMode,
    max_calls_per_reply: u32,
    /// Whether prompts' fixed prefix is worth finding (a prompt cache is kept).
    prompt_cache: bool,
    /// How this model writes calls: tack's text protocol, or its template's
    /// own format; `None` when the template's format is one tack cannot
    /// constrain (calls are then parsed but not held to a grammar).
    call_format: Option<CallFormat>,
    /// The grammar of the last tool list seen: tools rarely change between
    /// generations, and building a grammar takes milliseconds.
    grammar_cache: std::sync::Mutex<Option<(String, Arc<String>)>>,
    /// The fixed prefix of the last (system prompt, tools) seen, as text.
    prefix_cache: std::sync::Mutex<Option<(String, Arc<String>)>>,
}

/// How conversations become prompt text.
#[derive(Debug)]
enum ChatTemplate {
    /// The GGUF's own Jinja template, rendered faithfully.
    Jinja(Box<JinjaTemplate>),
    /// A template llama.cpp applies itself: the built-in one for the model's
    /// architecture when the GGUF has none (or one that does not compile).
    LlamaCpp { template: String },
}

impl LlamaBackend {
    /// Loads the model and creates its context. Blocking: call it off the
    /// async runtime (`spawn_blocking`).
    pub fn load(settings: LlamaSettings) -> Result<LlamaBackend, LlamaError> {
        let path_text = settings.path.display().to_string();
        let runtime = runtime()?;
        let mut params = LlamaModelParams::default().with_n_gpu_layers(settings.gpu_layers);
        if let Some(LoadProgress(report)) = settings.progress.clone() {
            params = params.with_progress_callback(move |share| {
                report(share);
                true
            });
        }
        let model = Arc::new(load_gguf(runtime, &settings.path, &params)?);
        let draft = match &settings.draft_model {
            Some(path) => Some(Arc::new(load_draft(runtime, &model, &settings.path, path, &settings)?)),
            None => None,
        };
        let context_size = settings.context_size.unwrap_or_else(|| model.n_ctx_train().clamp(512, 32_768));
        let mut template = choose_template(&model);
        if let (true, ChatTemplate::Jinja(jinja)) = (settings.text_protocol, &mut template) {
            jinja.ignore_tools();
        }
        let call_format = match &template {
            ChatTemplate::Jinja(jinja) if jinja.speaks_tools() => CallFormat::of_template(jinja.source()),
            _ => Some(CallFormat::Tack),
        };

        let (jobs, receiver) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LlamaError>>();
        let worker_model = model.clone();
        let mut worker_settings = settings.clone();
        // A model that goes on to write its call's result itself (Qwen's
        // `<tool_response>`) is imagining it: the reply ends there, and the
        // real result comes from the tool.
        if let ChatTemplate::Jinja(jinja) = &template
            && jinja.speaks_tools()
            && let Some(opener) = RESULT_OPENERS.iter().find(|opener| jinja.source().contains(**opener))
        {
            worker_settings.stop.push(opener.to_string());
        }
        // A reply that opens with the tag around the template's tool list
        // recites the system prompt: the 0.5B coder wrote its whole tool list
        // back, 2,048 tokens and two minutes, instead of a call.
        if let ChatTemplate::Jinja(jinja) = &template {
            let recited = PROMPT_TAGS.iter().filter(|tag| jinja.source().contains(**tag));
            worker_settings.stop_at_start.extend(recited.map(|tag| tag.to_string()));
        }
        let generated = Arc::new(AtomicU64::new(0));
        let worker_generated = generated.clone();
        std::thread::Builder::new()
            .name("tack-llama".into())
            .spawn(move || {
                let threads = worker_settings.threads.unwrap_or_else(default_threads) as i32;
                let params = LlamaContextParams::default()
                    .with_n_ctx(NonZeroU32::new(context_size))
                    .with_n_batch(worker_settings.batch_size)
                    .with_n_threads(threads)
                    .with_n_threads_batch(threads)
                    .with_swa_full(true)
                    .with_flash_attention_policy(match worker_settings.flash_attention {
                        FlashAttention::Auto => llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_AUTO,
                        FlashAttention::On => llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_ENABLED,
                        FlashAttention::Off => llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED,
                    })
                    .with_no_perf(false);
                let context = match worker_model.new_context(runtime, params.clone()) {
                    Ok(context) => context,
                    Err(_) => {
                        let _ =
                            ready_tx.send(Err(LlamaError::ContextFailed { path: path_text, context: context_size }));
                        return;
                    }
                };
                let drafter = match draft.as_deref().map(|draft| (draft, draft.new_context(runtime, params))) {
                    None => None,
                    Some((draft, Ok(context))) => {
                        Some(Drafter::new(draft, context, worker_settings.batch_size as usize))
                    }
                    Some((_, Err(_))) => {
                        let path = worker_settings.draft_model.as_ref().map(|p| p.display().to_string());
                        let path = path.unwrap_or_default();
                        let _ = ready_tx.send(Err(LlamaError::ContextFailed { path, context: context_size }));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                let mut worker = Worker {
                    model: &worker_model,
                    bos_text: token_text(&worker_model, worker_model.vocab().bos()),
                    context,
                    evaluated: Vec::new(),
                    saved: SavedPrompts::new(worker_settings.saved_prompts_bytes),
                    drafter,
                    settings: worker_settings,
                    generated: worker_generated,
                };
                // Ends when the backend, and with it the sender, is dropped.
                while let Ok(job) = receiver.recv() {
                    worker.run(job);
                }
            })
            .map_err(|e| LlamaError::Runtime(e.to_string()))?;
        ready_rx.recv().map_err(|_| LlamaError::Runtime("the model worker stopped while starting".into()))??;
        Ok(LlamaBackend {
            model,
            jobs,
            template,
            context_size,
            generated,
            grammar_mode: settings.grammar,
            max_calls_per_reply: settings.max_calls_per_reply.max(1),
            prompt_cache: settings.prompt_cache.is_some(),
            call_format,
            grammar_cache: std::sync::Mutex::new(None),
            prefix_cache: std::sync::Mutex::new(None),
        })
    }

    /// The prompt text for a request, as the model's chat template lays it
    /// out, with the reply's prefix after the assistant's turn opens.
    pub fn render(&self, request: &CompletionRequest) -> Result<String, BackendError> {
        let mut prompt = self.render_chat(request)?;
        if let Some(prefix) = &request.reply_prefix {
            prompt.push_str(prefix);
        }
        Ok(prompt)
    }

    fn render_chat(&self, request: &CompletionRequest) -> Result<String, BackendError> {
        match &self.template {
            ChatTemplate::Jinja(template) if template.speaks_tools() => {
                let tools = tool_definitions(&request.tools);
                let tools = (!tools.is_empty()).then_some(tools);
                template.render(&chat_messages(request), tools.as_deref(), true).map_err(BackendError::Fatal)
            }
            ChatTemplate::Jinja(template) => {
                let messages: Vec<ChatMessage> = text_protocol_chat(request)
                    .into_iter()
                    .map(|(role, content)| ChatMessage::new(role, content))
                    .collect();
                template.render(&messages, None, true).map_err(BackendError::Fatal)
            }
            ChatTemplate::LlamaCpp { template } => {
                let messages = text_protocol_chat(request)
                    .into_iter()
                    .map(|(role, content)| LlamaChatMessage::new(role.to_string(), content))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| BackendError::Fatal(format!("cannot build the chat: {e}")))?;
                let template = LlamaChatTemplate::new(template)
                    .map_err(|e| BackendError::Fatal(format!("bad chat template: {e}")))?;
                self.model
                    .apply_chat_template(&template, &messages, true)
                    .map_err(|e| BackendError::Fatal(format!("cannot apply the chat template: {e}")))
            }
        }
    }

    /// The start of every prompt with this system prompt and these tools:
    /// where two renderings that differ only in the user's words part.
    fn fixed_prefix(&self, request: &CompletionRequest) -> Option<Arc<String>> {
        let key = serde_json::to_string(&(
            &request.system,
            request.tools.iter().map(|t| (&t.name, &t.description, &t.input_schema)).collect::<Vec<_>>(),
        ))
        .ok()?;
        let mut cache = self.prefix_cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached_key, prefix)) = cache.as_ref() {
            if *cached_key == key {
                return Some(prefix.clone());
            }
        }
        let probe = |text: &str| {
            let probe = CompletionRequest {
                system: request.system.clone(),
                messages: vec![crate::protocol::Message::user_text(text)],
                tools: request.tools.clone(),
                ..CompletionRequest::default()
            };
            self.render(&probe).ok()
        };
        let (a, b) = (probe("a")?, probe("b")?);
        let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let mut end = common;
        while !a.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = Arc::new(a[..end].to_string());
        *cache = Some((key, prefix.clone()));
        Some(prefix)
    }

    /// The constraint on calls to the request's tools, its grammar built
    /// once per tool list and mode.
    fn constraint_for(&self, request: &CompletionRequest) -> Result<Option<CallConstraint>, BackendError> {
        // A choice is held whatever the grammar mode: it names what exists.
        if !request.choices.is_empty() {
            let gbnf = Arc::new(choice_grammar(&request.choices));
            let format = self.call_format.unwrap_or(CallFormat::Tack);
            return Ok(Some(CallConstraint { format, gbnf, required: true, max_calls: 1 }));
        }
        let Some(format) = self.call_format else { return Ok(None) };
        if self.grammar_mode == GrammarMode::Off || request.tools.is_empty() {
            return Ok(None);
        }
        let required = self.grammar_mode == GrammarMode::Required || request.require_tool_call;
        let max_calls = self.max_calls_per_reply;
        let tools = request.callable_tools();
        let key = serde_json::to_string(&(
            required,
            max_calls,
            tools.iter().map(|t| (&t.name, &t.input_schema)).collect::<Vec<_>>(),
        ))
        .unwrap_or_default();
        let mut cache = self.grammar_cache.lock().unwrap_or_else(|e| e.into_inner());
        let gbnf = match cache.as_ref() {
            Some((cached_key, grammar)) if *cached_key == key => grammar.clone(),
            _ => {
                let grammar = Arc::new(call_grammar(format, &tools, required, max_calls)?);
                *cache = Some((key, grammar.clone()));
                grammar
            }
        };
        Ok(Some(CallConstraint { format, gbnf, required, max_calls }))
    }

    /// A generation whose reply is `completion`, decoded token by token as if
    /// sampled: the model's real cost with a reply fixed in advance.
    pub fn stream_forced(
        &self,
        request: CompletionRequest,
        completion: &str,
    ) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        self.submit(&request, Some(self.tokenize(completion)))
    }

    /// Hands a generation to the worker; its chunks arrive on the stream.
    fn submit(
        &self,
        request: &CompletionRequest,
        forced: Option<Vec<LlamaToken>>,
    ) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        let prepared = self.render(request).and_then(|prompt| {
            let calls = if forced.is_some() { None } else { self.constraint_for(request)? };
            Ok((prompt, calls))
        });
        let prefix = if self.prompt_cache { self.fixed_prefix(request) } else { None };
        let (prompt, calls) = match prepared {
            Ok(prepared) => prepared,
            Err(error) => return stream::once(async move { Err(error) }).boxed(),
        };
        tracing::trace!(%prompt, constrained = calls.is_some(), "prompt for the model");
        let free_calls = (calls.is_none() && forced.is_none() && !request.tools.is_empty())
            .then(|| (self.max_calls_per_reply, request.tools.iter().map(|tool| tool.name.clone()).collect()));
        let (out, receiver) = unbounded_channel();
        if self
            .jobs
            .send(Job {
                prompt,
                prefix,
                calls,
                free_calls,
                forced,
                resample: request.resample,
                max_tokens: request.max_tokens,
                out,
            })
            .is_err()
        {
            let error = BackendError::Fatal("the model worker has stopped".into());
            return stream::once(async move { Err(error) }).boxed();
        }
        stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) })
            .boxed()
    }

    /// Tokens generated since the model was loaded.
    pub fn tokens_generated(&self) -> u64 {
        self.generated.load(Ordering::Relaxed)
    }

    pub fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }

    pub fn detokenize(&self, tokens: &[LlamaToken]) -> String {
        let mut bytes = Vec::new();
        for token in tokens {
            bytes.extend(self.model.vocab().token_to_piece(*token, true, None));
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A model's tokenizer alone (llama.cpp's vocab-only load): exact token
/// counts in a process that runs the model somewhere else.
pub struct LlamaTokenizer {
    model: LlamaModel,
}

impl LlamaTokenizer {
    pub fn load(path: &Path) -> Result<LlamaTokenizer, LlamaError> {
        let params = LlamaModelParams::default().with_vocab_only(true);
        Ok(LlamaTokenizer { model: load_gguf(runtime()?, path, &params)? })
    }

    pub fn count_tokens(&self, text: &str) -> usize {
        self.model.vocab().tokenize(text.as_bytes(), false, true).len()
    }
}

/// One thread per core llama.cpp can use, as llama-bench defaults to.
fn default_threads() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(4).clamp(1, 16)
}

/// The GGUF at `path`, loaded with `params`: a missing file or one that
/// is not GGUF is told as such before llama.cpp reads it.
fn load_gguf(runtime: &Runtime, path: &Path, params: &LlamaModelParams) -> Result<LlamaModel, LlamaError> {
    check_gguf(path)?;
    LlamaModel::load_from_file(runtime, path, params).map_err(|_| LlamaError::LoadFailed(path.display().to_string()))
}

fn check_gguf(path: &Path) -> Result<(), LlamaError> {
    use std::io::Read;
    let text = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|_| LlamaError::NotFound(text.clone()))?;
    if !path.is_file() {
        return Err(LlamaError::NotFound(text));
    }
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
        return Err(LlamaError::NotGguf(text));
    }
    Ok(())
}

/// What templates put before a tool's result, in the model's own turn
/// format: a model that writes one is making the result up.
const RESULT_OPENERS: [&str; 1] = ["<tool_response>"];

/// Tags templates put around parts of the system prompt (Qwen's tool list).
const PROMPT_TAGS: [&str; 1] = ["<tools>"];

/// The GGUF's own template, else llama.cpp's built-in one for the architecture.
fn choose_template(model: &LlamaModel) -> ChatTemplate {
    if let Ok(template) = model.chat_template(None) {
        if let Ok(source) = template.to_string() {
            let (bos, eos) = (token_text(model, model.vocab().bos()), token_text(model, model.vocab().eos()));
            match JinjaTemplate::new(&source, &bos, &eos) {
                Ok(template) => return ChatTemplate::Jinja(Box::new(template)),
                Err(error) => {
                    tracing::warn!(%error, "the model's chat template does not compile; llama.cpp will apply it");
                    return ChatTemplate::LlamaCpp { template: source };
                }
            }
        }
    }
    let architecture = model.meta_val_str("general.architecture").unwrap_or_default();
    let name = match architecture.as_str() {
        a if a.starts_with("gemma") => "gemma",
        a if a.starts_with("llama") => "llama3",
        a if a.starts_with("phi3") => "phi3",
        a if a.starts_with("mistral") => "mistral-v7",
        _ => "chatml",
    };
    ChatTemplate::LlamaCpp { template: name.to_string() }
}

/// A token as text, special tokens included (`<bos>`).
fn token_text(model: &LlamaModel, token: LlamaToken) -> String {
    String::from_utf8_lossy(&model.vocab().token_to_piece(token, true, None)).into_owned()
}

struct Worker<'m> {
    model: &'m LlamaModel,
    /// The BOS token's text: a Jinja template may write it into the prompt.
    bos_text: String,
    context: LlamaContext<'m>,
    /// Tokens whose keys and values are in the cache, in order, from position 0.
    evaluated: Vec<LlamaToken>,
    /// Earlier contents of the cache, kept in memory.
    saved: SavedPrompts<SeqState>,
    /// The draft model, when one drafts in place of prompt lookup.
    drafter: Option<Drafter<'m>>,
    settings: LlamaSettings,
    generated: Arc<AtomicU64>,
}

impl Worker<'_> {
    fn run(&mut self, job: Job) {
        let out = job.out.clone();
        if let Err(error) = self.generate(job) {
            // The cache may hold half a batch: forget it rather than trust it.
            self.evaluated.clear();
            self.context.clear_kv_cache();
            let _ = out.send(Err(error));
        }
    }

    fn generate(&mut self, job: Job) -> Result<(), BackendError> {
        let vocab = self.model.vocab();
        // A Jinja template may write the BOS itself; a second one confuses models.
        let add_bos = self.bos_text.is_empty() || !job.prompt.starts_with(&self.bos_text);
        let prompt = vocab.tokenize(job.prompt.as_bytes(), add_bos, true);
        let window = self.context.n_ctx() as usize;
        if prompt.len() + 1 >= window {
            return Err(BackendError::Fatal(format!(
                "the prompt is {} tokens, more than the {window}-token context holds; compact the history or raise the context size",
                prompt.len()
            )));
        }

        let started = Instant::now();
        // The prompt cache: a fresh context starts from the saved KV state of
        // the fixed prefix, or saves it when there is none (or it is damaged).
        // A context that holds tokens already reuses them instead.
        let (prefix_len, cache_file) = match &job.prefix {
            Some(prefix) if self.evaluated.is_empty() => {
                let tokens = vocab.tokenize(prefix.as_bytes(), add_bos, true);
                // The last token of the prefix may merge with what follows.
                let len = shared_start(&prompt, &tokens);
                let len = len.min(tokens.len().saturating_sub(1)).min(prompt.len() - 1);
                (len, self.prompt_cache_file(&prompt[..len]))
            }
            _ => (0, None),
        };
        let save_prefix = match &cache_file {
            Some(file) => !self.load_prefix(file, &prompt[..prefix_len]),
            None => false,
        };
        let mut reused = if self.settings.reuse_prefix { shared_start(&prompt, &self.evaluated) } else { 0 };
        if self.settings.reuse_prefix {
            reused = self.swap_in_saved(&prompt, reused);
        }
        // The last prompt token is always evaluated again: its logits start the reply.
        reused = reused.min(prompt.len() - 1);
        if self.context.kv_cache_seq_rm(0, Some(reused as u32), None).is_err() {
            self.context.clear_kv_cache();
            reused = 0;
        }
        self.evaluated.truncate(reused);

        let batch_size = self.settings.batch_size.max(1) as usize;
        let mut batch = LlamaBatch::new(batch_size, 1);
        // When the prefix is to be saved, the cache must hold exactly the
        // prefix at that moment: evaluate up to its end, save, go on.
        let save_at = if save_prefix && reused < prefix_len { prefix_len } else { prompt.len() };
        for (from, to) in [(reused, save_at), (save_at, prompt.len())] {
            for (chunk_index, chunk) in prompt[from..to].chunks(batch_size).enumerate() {
                if job.out.is_closed() {
                    return Ok(());
                }
                batch.clear();
                let start = from + chunk_index * batch_size;
                for (offset, token) in chunk.iter().enumerate() {
                    let position = start + offset;
                    let last = position == prompt.len() - 1;
                    batch.add(*token, position as i32, &[0], last).map_err(fatal)?;
                }
                self.context.decode(&mut batch).map_err(fatal)?;
                self.evaluated.extend_from_slice(chunk);
            }
            if let (Some(file), true) = (&cache_file, to == save_at && save_at < prompt.len()) {
                self.save_prefix(file);
            }
        }
        let greedy = self.settings.sampling.temperature <= 0.0 && job.resample.is_none();
        let speculates = self.settings.lookup > 0 && greedy && job.calls.is_none() && job.forced.is_none();
        // The draft model reads the prompt too: prompt time, not decoding's.
        if let (Some(drafter), true) = (self.drafter.as_mut(), speculates) {
            if !drafter.sync(&prompt[..prompt.len() - 1], prompt[prompt.len() - 1], || job.out.is_closed())? {
                return Ok(());
            }
        }
        let prompt_eval_ms = started.elapsed().as_millis() as u64;

        let decoding = Instant::now();
        let mut sampler = self.sampler(job.resample);
        let constraint = job.calls;
        // Calls written without a grammar are counted as the turn's parser
        // reads them: a small model that goes on after its last allowed call
        // writes calls whose input depends on results it has not seen (the
        // 0.5B wrote eleven calls to a tool named after the task in one reply).
        let mut free_calls = job
            .free_calls
            .map(|(max, names)| (max, 0u32, toolcall::ToolCallParser::for_tools(names.iter().map(String::as_str))));
        let mut watch = constraint.as_ref().filter(|c| !c.required).map(|c| OpenerWatch::new(c.format));
        let mut grammar = match &constraint {
            Some(c) if c.required => Some(self.grammar_sampler(&c.gbnf)?),
            _ => None,
        };
        // The rest of a call's opener, when a sampled token ran past it and
        // was cut back to end there; the grammar starts once it is written.
        let mut queued: VecDeque<LlamaToken> = VecDeque::new();
        let mut opening: Option<&str> = None;
        let mut utf8 = Utf8Stream::default();
        let mut stops = StopScanner::new(&self.settings.stop).at_start(&self.settings.stop_at_start);
        let mut produced = 0u64;
        let mut calls_written = 0u32;
        let mut last_call_done = false;
        let mut logits_at = batch.n_tokens() - 1;
        let mut forced = job.forced.map(Vec::into_iter);
        // Speculation holds the same tokens as decoding one at a time only
        // where each token is the greedy pick and no grammar or opener
        // watch may step in (see `LlamaSettings::lookup`).
        let mut lookup = Lookup::new(self.settings.lookup as usize).filter(|_| speculates);
        // Drafted tokens the model confirmed: already in the KV cache, they
        // are emitted without sampling or decoding.
        let mut confirmed: VecDeque<LlamaToken> = VecDeque::new();
        let mut drafted = 0u64;
        let mut accepted = 0u64;
        loop {
            if let Some(opener) = opening.filter(|_| queued.is_empty()) {
                opening = None;
                if let Some(c) = &constraint {
                    grammar = Some(self.opened_grammar(c, opener)?);
                }
            }
            let from_draft = confirmed.pop_front();
            let token = if let Some(token) = from_draft {
                token
            } else if let Some(forced) = forced.as_mut() {
                match forced.next() {
                    Some(token) => token,
                    None => break,
                }
            } else if let Some(token) = queued.pop_front() {
                token
            } else if let Some(grammar) = grammar.as_mut() {
                self.constrained_sample(&mut sampler, grammar, logits_at)?
            } else {
                let token = sampler.sample(&self.context, logits_at);
                let piece = vocab.token_to_piece(token, true, None);
                match watch.as_mut().map(|watch| watch.see(&piece)) {
                    Some(Sighting::Opened { opener }) => {
                        opening = Some(opener);
                        token
                    }
                    Some(Sighting::Straddles { opener, keep }) => {
                        // The model's own token stands when the grammar allows
                        // what it holds past the opener (`":` after `{"name`):
                        // a token split where the model never splits it throws
                        // a small model off for the rest of the call.
                        let through = match &constraint {
                            Some(c) => self.grammar_through(c, opener, &piece[keep..])?,
                            None => None,
                        };
                        if through.is_some() {
                            grammar = through;
                            token
                        } else {
                            // Cut back to the opener: what followed it is the
                            // grammar's to decide, and llama.cpp cannot take it back.
                            opening = Some(opener);
                            queued.extend(vocab.tokenize(&piece[..keep], false, true));
                            queued.pop_front().unwrap_or(token)
                        }
                    }
                    _ => token,
                }
            };
            if vocab.is_eog(token) {
                tracing::debug!(produced, "the model ended its reply");
                break;
            }
            let piece = vocab.token_to_piece(token, true, None);
            // A control token that is not a call tag the parser reads (`<|im_start|>`
            // where the GGUF does not mark it end-of-generation) means the model
            // has left its turn: it ends the reply and is never shown.
            if vocab.is_control(token) && !toolcall::is_call_tag(&String::from_utf8_lossy(&piece)) {
                tracing::debug!(produced, token = %String::from_utf8_lossy(&piece), "a control token ended the reply");
                break;
            }
            if let (Some(c), Some(active)) = (&constraint, grammar.as_mut()) {
                if !c.required && grammar_allows(active, vocab.eos()) {
                    // The call is complete: the text after it is free again,
                    // unless the reply has all the calls it may hold.
                    grammar = None;
                    calls_written += 1;
                    if let Some(watch) = &mut watch {
                        watch.reset();
                    }
                    if calls_written >= c.max_calls {
                        watch = None;
                        last_call_done = true;
                    }
                }
            }
            produced += 1;
            self.generated.fetch_add(1, Ordering::Relaxed);
            // Other special tokens are shown: some models write a call's tags
            // (Qwen's `<tool_call>`) as single special tokens.
            if let Some(text) = utf8.push(&piece) {
                let (visible, stopped) = stops.push(&text);
                if let Some((max, written, parser)) = free_calls.as_mut() {
                    let calls = parser.push(&visible).into_iter();
                    *written +=
                        calls.filter(|e| matches!(e, ParseEvent::Call(_) | ParseEvent::Malformed(_))).count() as u32;
                    if *written >= *max {
                        last_call_done = true;
                    }
                }
                if !visible.is_empty() && job.out.send(Ok(ModelChunk::Text(visible))).is_err() {
                    // The stream was dropped: the turn was cancelled.
                    return Ok(());
                }
                if stopped {
                    break;
                }
            }
            if last_call_done {
                break;
            }
            let position = self.evaluated.len();
            let bound = job.max_tokens.map_or(self.settings.max_tokens, |m| m.min(self.settings.max_tokens));
            if produced >= bound as u64 || position + 1 >= window {
                break;
            }
            if from_draft.is_some() {
                // Evaluated with its draft; the logits after the last
                // confirmed token are where the draft's check left them.
                continue;
            }
            // The drafted tokens ride along with this one, each with its
            // logits, as long as the window and the reply's bound allow.
            let room = (window - position - 2).min((bound as u64 - produced) as usize);
            let room = room.min(batch_size - 1);
            let draft = match (lookup.as_mut(), self.drafter.as_mut()) {
                (Some(lookup), Some(drafter)) => drafter.propose(&self.evaluated, token, lookup.length.min(room))?,
                (Some(lookup), None) => lookup.propose(&self.evaluated, token, room),
                (None, _) => Vec::new(),
            };
            batch.clear();
            batch.add(token, position as i32, &[0], true).map_err(fatal)?;
            for (offset, drafted) in draft.iter().enumerate() {
                batch.add(*drafted, (position + 1 + offset) as i32, &[0], true).map_err(fatal)?;
            }
            self.context.decode(&mut batch).map_err(fatal)?;
            self.evaluated.push(token);
            logits_at = 0;
            if draft.is_empty() {
                continue;
            }
            // A drafted token stands while it is what greedy decoding would
            // pick after the tokens before it; the first that is not ends
            // the run, and its position and those after leave the cache.
            let mut kept = 0;
            while kept < draft.len() && sampler.sample(&self.context, kept as i32) == draft[kept] {
                kept += 1;
            }
            drafted += draft.len() as u64;
            accepted += kept as u64;
            if let Some(lookup) = lookup.as_mut() {
                lookup.adapt(kept, draft.len());
            }
            let first_rejected = position + 1 + kept;
            if self.context.kv_cache_seq_rm(0, Some(first_rejected as u32), None).is_err() {
                return Err(fatal("cannot remove a rejected draft from the KV cache"));
            }
            self.evaluated.extend_from_slice(&draft[..kept]);
            confirmed.extend(draft[..kept].iter().copied());
            logits_at = kept as i32;
        }
        if drafted > 0 {
            tracing::debug!(drafted, accepted, draft_model = self.drafter.is_some(), "speculative decoding");
        }
        let rest = utf8.finish().map(|rest| stops.push(&rest).0).unwrap_or_default() + &stops.finish();
        if !rest.is_empty() {
            let _ = job.out.send(Ok(ModelChunk::Text(rest)));
        }
        let usage = Usage {
            prompt_tokens: prompt.len() as u64,
            cached_prompt_tokens: reused as u64,
            completion_tokens: produced,
            prompt_eval_ms,
            decode_ms: decoding.elapsed().as_millis() as u64,
            cost_usd: None,
            drafted_tokens: drafted,
            accepted_tokens: accepted,
        };
        let _ = job.out.send(Ok(ModelChunk::Usage(usage)));
        Ok(())
    }

    /// Keeps the cache's content in memory when `prompt` would cut much of it
    /// away, and starts from a saved earlier content instead when that one
    /// shares more of `prompt` than the cache does. Returns the tokens of
    /// `prompt` the cache now holds.
    fn swap_in_saved(&mut self, prompt: &[LlamaToken], reused: usize) -> usize {
        // Below this, saving and restoring cost more than evaluating again.
        const WORTH_SAVING: usize = 128;
        if self.saved.budget == 0 {
            return reused;
        }
        if self.evaluated.len() - reused >= WORTH_SAVING {
            match self.context.state_seq_get(0, LlamaStateSeqFlags::empty()) {
                Ok(state) => {
                    let bytes = state.byte_len();
                    self.saved.insert(self.evaluated.clone(), state, bytes);
                }
                Err(error) => tracing::warn!(%error, "cannot keep the prompt's KV state in memory"),
            }
        }
        let Some((index, shared)) = self.saved.best(prompt).filter(|(_, shared)| *shared >= reused + WORTH_SAVING)
        else {
            return reused;
        };
        self.context.clear_kv_cache();
        self.evaluated.clear();
        let (tokens, state) = self.saved.take(index);
        match self.context.state_seq_set(&state, 0) {
            Ok(()) => {
                tracing::debug!(shared, was = reused, "started from a saved prompt");
                self.evaluated = tokens;
                shared
            }
            Err(error) => {
                tracing::warn!(%error, "a saved prompt's KV state did not load; the prompt is evaluated");
                self.context.clear_kv_cache();
                0
            }
        }
    }

    /// The cache file of `prefix`'s KV state, for prefixes long enough to be
    /// worth one; named by the model file and a hash of the tokens.
    fn prompt_cache_file(&self, prefix: &[LlamaToken]) -> Option<PathBuf> {
        const WORTH_CACHING: usize = 64;
        let dir = self.settings.prompt_cache.as_ref()?;
        if prefix.len() < WORTH_CACHING {
            return None;
        }
        let model = &self.settings.path;
        let size = std::fs::metadata(model).map(|m| m.len()).unwrap_or(0);
        let stem = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let tokens: Vec<u8> = prefix.iter().flat_map(|t| t.0.to_le_bytes()).collect();
        // Fused and unfused attention lay the V cache out differently: a state
        // saved by one does not load into the other, and sharing a file would
        // have each rewrite it for the other.
        let attention = match self.settings.flash_attention {
            FlashAttention::Auto => String::new(),
            chosen => format!("-fa-{}", chosen.llama_cpp_name()),
        };
        Some(dir.join(format!("{stem}-{size}{attention}-{:016x}.kv", fnv1a(&tokens))))
    }

    /// Loads a saved prefix into the empty cache. False when there is none
    /// to load, or it is damaged or stale (then it is to be written again).
    fn load_prefix(&mut self, file: &Path, prefix: &[LlamaToken]) -> bool {
        if !file.is_file() {
            return false;
        }
        let intact = std::fs::read(file)
            .ok()
            .zip(std::fs::read_to_string(checksum_path(file)).ok())
            .is_some_and(|(bytes, sum)| sum.trim() == format!("{:016x}", fnv1a(&bytes)));
        let loaded = intact
            && matches!(
                self.context.state_seq_load_file(file, 0, prefix.len() + 1),
                Ok((tokens, _)) if tokens == prefix
            );
        if loaded {
            self.evaluated = prefix.to_vec();
        } else {
            tracing::warn!(file = %file.display(), "the prompt cache file is damaged or stale; it will be written again");
            self.context.clear_kv_cache();
            self.evaluated.clear();
        }
        loaded
    }

    /// Saves the cache, which holds exactly a prefix, beside its checksum.
    /// A failure costs the next process time, nothing more: it is logged.
    fn save_prefix(&self, file: &Path) {
        let saved = (|| -> std::io::Result<()> {
            let dir = file.parent().unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir)?;
            let partial = tempfile::NamedTempFile::new_in(dir)?;
            self.context
                .state_seq_save_file(partial.path(), 0, &self.evaluated)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let sum = format!("{:016x}\n", fnv1a(&std::fs::read(partial.path())?));
            partial.persist(file).map_err(|e| e.error)?;
            std::fs::write(checksum_path(file), sum)
        })();
        if let Err(error) = saved {
            tracing::warn!(file = %file.display(), %error, "cannot save the prompt cache");
        }
    }

    fn grammar_sampler(&self, gbnf: &str) -> Result<LlamaSampler, BackendError> {
        LlamaSampler::grammar(self.model, gbnf, "root")
            .map_err(|e| BackendError::Fatal(format!("llama.cpp refused the tool-call grammar: {e}")))
    }

    /// The grammar of a call whose `opener` the model has just written.
    fn opened_grammar(&self, constraint: &CallConstraint, opener: &str) -> Result<LlamaSampler, BackendError> {
        let mut grammar = self.grammar_sampler(&constraint.gbnf)?;
        // Every way into the grammar starts with one of the format's openers,
        // so it accepts these tokens whichever way the model split the opener.
        for token in self.model.vocab().tokenize(opener.as_bytes(), false, true) {
            if !grammar_allows(&mut grammar, token) {
                return Err(BackendError::Fatal(format!("the tool-call grammar does not start with {opener}")));
            }
            grammar.accept(token);
        }
        Ok(grammar)
    }

    /// The grammar of a call whose `opener` a sampled token ran past, moved
    /// on over the rest of that token (`after`); `None` when the grammar
    /// does not allow that rest.
    fn grammar_through(
        &self,
        constraint: &CallConstraint,
        opener: &str,
        after: &[u8],
    ) -> Result<Option<LlamaSampler>, BackendError> {
        let mut grammar = self.opened_grammar(constraint, opener)?;
        for token in self.model.vocab().tokenize(after, false, true) {
            if !grammar_allows(&mut grammar, token) {
                return Ok(None);
            }
            grammar.accept(token);
        }
        Ok(Some(grammar))
    }

    /// Samples under the grammar without paying for it on every token: the
    /// token the unconstrained sampler picks is checked alone first, and the
    /// whole vocabulary (262k entries for Gemma) only goes through the
    /// grammar when that token is refused. A token the grammar does not allow
    /// is never accepted: llama.cpp would abort the process.
    fn constrained_sample(
        &self,
        chain: &mut LlamaSampler,
        grammar: &mut LlamaSampler,
        at: i32,
    ) -> Result<LlamaToken, BackendError> {
        let mut candidates = self.context.token_data_array_ith(at);
        candidates.apply_sampler(chain);
        let token = match candidates.selected_token().filter(|token| grammar_allows(grammar, *token)) {
            Some(token) => token,
            None => {
                let mut candidates = self.context.token_data_array_ith(at);
                candidates.apply_sampler(grammar);
                candidates.apply_sampler(chain);
                match candidates.selected_token() {
                    Some(token) if grammar_allows(grammar, token) => token,
                    _ => {
                        return Err(BackendError::Fatal(
                            "the tool-call grammar allows no next token: the call was cut off".into(),
                        ));
                    }
                }
            }
        };
        // End-of-generation is allowed only where the grammar is complete,
        // and accepting it would only ask llama.cpp to check that again.
        if !self.model.vocab().is_eog(token) {
            grammar.accept(token);
        }
        chain.accept(token);
        Ok(token)
    }

    fn sampler(&self, resample: Option<u32>) -> LlamaSampler {
        let mut s = self.settings.sampling;
        if let Some(n) = resample {
            (s.temperature, s.seed) = super::resampled(Some(s.temperature), Some(s.seed), n);
        }
        if s.temperature <= 0.0 {
            // In a chain llama.cpp keeps one candidates buffer for every
            // token; alone, greedy allocates and fills a fresh one (1.8 MB
            // over Qwen's vocabulary) at each token.
            return LlamaSampler::chain_simple([LlamaSampler::greedy()]);
        }
        LlamaSampler::chain_simple([
            LlamaSampler::top_k(s.top_k),
            LlamaSampler::top_p(s.top_p, 1),
            LlamaSampler::min_p(s.min_p, 1),
            LlamaSampler::temp(s.temperature),
            LlamaSampler::dist(s.seed),
        ])
    }
}

/// How many tokens two sequences share from their start.
fn shared_start(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(a, b)| a == b).count()
}

/// Earlier contents of the KV cache (their tokens and state), least
/// recently used first out, within a byte budget.
struct SavedPrompts<S> {
    entries: Vec<(Vec<LlamaToken>, S, usize)>,
    budget: usize,
}

impl<S> SavedPrompts<S> {
    fn new(budget: usize) -> Self {
        SavedPrompts { entries: Vec::new(), budget }
    }

    /// The entry sharing the longest start with `prompt`, and how long.
    fn best(&self, prompt: &[LlamaToken]) -> Option<(usize, usize)> {
        let shared = |tokens: &[LlamaToken]| shared_start(prompt, tokens);
        self.entries.iter().enumerate().map(|(index, (tokens, _, _))| (index, shared(tokens))).max_by_key(|e| e.1)
    }

    /// Removes an entry to use it: the cache holds it from then on, and it
    /// is saved again (with what follows) when the cache moves on.
    fn take(&mut self, index: usize) -> (Vec<LlamaToken>, S) {
        let (tokens, state, _) = self.entries.remove(index);
        (tokens, state)
    }

    fn insert(&mut self, tokens: Vec<LlamaToken>, state: S, bytes: usize) {
        if bytes > self.budget || self.entries.iter().any(|(kept, _, _)| kept.starts_with(&tokens)) {
            return;
        }
        // An entry the new one continues holds nothing the new one lacks.
        self.entries.retain(|(kept, _, _)| !tokens.starts_with(kept));
        self.entries.push((tokens, state, bytes));
        while self.entries.iter().map(|(_, _, bytes)| bytes).sum::<usize>() > self.budget {
            self.entries.remove(0);
        }
    }
}

/// The longest draft of prompt lookup by default: a reply that copies
/// (a definition rewritten) is checked a long run at a time, and a draft
/// that would not stand is rarely made (see [`Lookup`]).
pub const LOOKUP_DRAFT_TOKENS: u32 = 48;

/// The longest draft of a draft model by default: each drafted token costs
/// the draft model a decoding step of its own.
pub const MODEL_DRAFT_TOKENS: u32 = 8;

/// Prompt lookup, the proposer of speculative decoding that needs no
/// second model: the tokens that followed the longest earlier match of the
/// last ones in the context (a file handed over and now written back with
/// a fix, a definition shown and now rewritten). Its length follows how
/// many the model keeps.
///
/// A draft is worth its batch only where it is kept: on a CPU a batch of
/// k tokens costs several single steps (on two cores, 3,000 tokens deep,
/// the 1.5B coder's batch of 9 costs 6.5 of them and of 49, 28), so a
/// short match (`) {` recurs everywhere) proposes nothing, and a long one
/// (the reply is copying) proposes far ahead.
struct Lookup {
    max: usize,
    length: usize,
}

impl Lookup {
    /// Fewer matching tokens than this say little about what follows.
    const SHORTEST_MATCH: usize = 4;
    /// A match this long is as sure as any: the search stops at it.
    const LONGEST_MATCH: usize = 16;
    /// Tokens drafted per token of the match, below `LONGEST_MATCH`: a
    /// longer match is a surer sign the reply copies on from there.
    const DRAFT_PER_MATCHED: usize = 2;

    fn new(max: usize) -> Option<Lookup> {
        (max > 0).then_some(Lookup { max, length: max })
    }

    /// The tokens that followed the latest of the longest earlier matches
    /// of the last tokens of `history` and `next`, at most `room` of them.
    fn propose(&self, history: &[LlamaToken], next: LlamaToken, room: usize) -> Vec<LlamaToken> {
        let length = self.length.min(room);
        if length == 0 {
            return Vec::new();
        }
        // The history with `next` after it, read in place: this runs once
        // per decoding step, over the whole context.
        let last = history.len();
        let at = |index: usize| history.get(index).copied().unwrap_or(next);
        // (tokens matched, where what followed the match starts)
        let mut best = (0, 0);
        for end in (1..=last).rev() {
            let matched =
                (0..Self::LONGEST_MATCH.min(end)).take_while(|&back| at(end - 1 - back) == at(last - back)).count();
            if matched > best.0 {
                best = (matched, end);
                if matched == Self::LONGEST_MATCH {
                    break;
                }
            }
        }
        let (matched, from) = best;
        if matched < Self::SHORTEST_MATCH {
            return Vec::new();
        }
        let length = match matched {
            Self::LONGEST_MATCH => length,
            _ => length.min(matched * Self::DRAFT_PER_MATCHED),
        };
        (from..(from + length).min(last + 1)).map(at).collect()
    }

    /// After `kept` of `proposed` tokens stood: all of them, and the next
    /// draft may be twice as long; fewer, and it is as long as what stood,
    /// and one.
    fn adapt(&mut self, kept: usize, proposed: usize) {
        self.length = if kept == proposed { (self.length * 2).min(self.max) } else { (kept + 1).max(2).min(self.max) };
    }
}

/// The draft model's side of speculative decoding: its own context, whose
/// cache follows the target's tokens, and greedy picks ahead of them.
struct Drafter<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    /// Tokens whose keys and values are in the draft's cache, from position 0.
    evaluated: Vec<LlamaToken>,
    batch: LlamaBatch<'static>,
    batch_size: usize,
    sampler: LlamaSampler,
}

impl<'m> Drafter<'m> {
    fn new(model: &'m LlamaModel, context: LlamaContext<'m>, batch_size: usize) -> Drafter<'m> {
        let batch_size = batch_size.max(1);
        Drafter {
            model,
            context,
            evaluated: Vec::new(),
            batch: LlamaBatch::new(batch_size, 1),
            batch_size,
            // In a chain, greedy reuses one candidates buffer (see `Worker::sampler`).
            sampler: LlamaSampler::chain_simple([LlamaSampler::greedy()]),
        }
    }

    /// Brings the draft's cache to `history` then `next`: what it already
    /// holds of them is kept (its own rejected picks leave), the rest is
    /// evaluated, and the logits after `next` are ready. `false` when
    /// `cancelled` says to stop between batches.
    fn sync(
        &mut self,
        history: &[LlamaToken],
        next: LlamaToken,
        cancelled: impl Fn() -> bool,
    ) -> Result<bool, BackendError> {
        let wanted = history.len() + 1;
        let held = history.iter().chain(std::iter::once(&next)).zip(&self.evaluated).take_while(|(a, b)| a == b);
        // `next` is evaluated again even when held: its logits start the draft.
        let mut common = held.count().min(wanted - 1);
        if self.context.kv_cache_seq_rm(0, Some(common as u32), None).is_err() {
            self.context.clear_kv_cache();
            common = 0;
        }
        self.evaluated.truncate(common);
        let missing: Vec<LlamaToken> = history[common..].iter().copied().chain(std::iter::once(next)).collect();
        for chunk in missing.chunks(self.batch_size) {
            if cancelled() {
                return Ok(false);
            }
            self.batch.clear();
            for (offset, token) in chunk.iter().enumerate() {
                let position = self.evaluated.len() + offset;
                self.batch.add(*token, position as i32, &[0], position == wanted - 1).map_err(fatal)?;
            }
            self.context.decode(&mut self.batch).map_err(fatal)?;
            self.evaluated.extend_from_slice(chunk);
        }
        Ok(true)
    }

    /// Up to `length` tokens the draft model picks greedily after `history`
    /// and `next`; it stops at the end of its own reply.
    fn propose(
        &mut self,
        history: &[LlamaToken],
        next: LlamaToken,
        length: usize,
    ) -> Result<Vec<LlamaToken>, BackendError> {
        if length == 0 {
            return Ok(Vec::new());
        }
        self.sync(history, next, || false)?;
        let mut logits_at = self.batch.n_tokens() - 1;
        let mut draft = Vec::with_capacity(length);
        loop {
            let token = self.sampler.sample(&self.context, logits_at);
            if self.model.vocab().is_eog(token) {
                break;
            }
            draft.push(token);
            if draft.len() == length {
                break;
            }
            self.batch.clear();
            self.batch.add(token, self.evaluated.len() as i32, &[0], true).map_err(fatal)?;
            self.context.decode(&mut self.batch).map_err(fatal)?;
            self.evaluated.push(token);
            logits_at = 0;
        }
        Ok(draft)
    }
}

/// Loads the draft model at `path` for `model`, refusing one whose tokens
/// differ: its drafts would be other words, never kept.
fn load_draft(
    runtime: &Runtime,
    model: &LlamaModel,
    model_path: &Path,
    path: &Path,
    settings: &LlamaSettings,
) -> Result<LlamaModel, LlamaError> {
    let params = LlamaModelParams::default().with_n_gpu_layers(settings.gpu_layers);
    let draft = load_gguf(runtime, path, &params)?;
    let refused = |detail: String| LlamaError::DraftVocabulary {
        draft: path.display().to_string(),
        model: model_path.display().to_string(),
        detail,
    };
    // Larger models of a family pad their vocabulary (Qwen2.5's 7B has 128
    // more ids than its 0.5B): the ids the draft can write must mean the
    // same; a few unused ones more in the model are no matter.
    const PADDING: i32 = 128;
    let (ours, theirs) = (model.vocab(), draft.vocab());
    if theirs.n_tokens() > ours.n_tokens() || ours.n_tokens() - theirs.n_tokens() > PADDING {
        return Err(refused(format!("{} tokens against {}", theirs.n_tokens(), ours.n_tokens())));
    }
    for id in 0..theirs.n_tokens() {
        let token = LlamaToken(id);
        let (a, b) = (ours.token_to_piece(token, true, None), theirs.token_to_piece(token, true, None));
        if a != b {
            let show = |piece: &[u8]| String::from_utf8_lossy(piece).into_owned();
            return Err(refused(format!("token {id} is {:?} in the draft, {:?} in the model", show(&b), show(&a))));
        }
    }
    Ok(draft)
}

fn checksum_path(file: &Path) -> PathBuf {
    file.with_extension("kv.sum")
}

/// Whether the grammar, in its current state, lets `token` come next.
fn grammar_allows(grammar: &mut LlamaSampler, token: LlamaToken) -> bool {
    let mut single = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 1.0)], false);
    single.apply_sampler(grammar);
    single.data.first().is_some_and(|d| d.logit().is_finite())
}

fn fatal(error: impl std::fmt::Display) -> BackendError {
    BackendError::Fatal(format!("llama.cpp: {error}"))
}

/// Holds back text that may be the start of a stop string, and ends the
/// generation at one. `stopped` text is never shown.
struct StopScanner<'a> {
    stops: &'a [String],
    /// Stop strings that count only where the reply's text starts.
    leading: &'a [String],
    /// The reply has begun with something other than blank space.
    started: bool,
    held: String,
    stopped: bool,
}

impl<'a> StopScanner<'a> {
    fn new(stops: &'a [String]) -> Self {
        StopScanner { stops, leading: &[], started: false, held: String::new(), stopped: false }
    }

    fn at_start(self, leading: &'a [String]) -> Self {
        StopScanner { leading, ..self }
    }

    /// The text that is now safe to show, and whether a stop string was hit.
    fn push(&mut self, text: &str) -> (String, bool) {
        if self.stopped {
            return (String::new(), true);
        }
        self.held.push_str(text);
        if !self.started {
            let head = self.held.trim_start();
            if self.leading.iter().any(|stop| head.starts_with(stop.as_str())) {
                self.stopped = true;
                self.held.clear();
                return (String::new(), true);
            }
            if !head.is_empty() && self.leading.iter().any(|stop| stop.starts_with(head)) {
                return (String::new(), false);
            }
            self.started = !head.is_empty();
        }
        if let Some(at) = self.stops.iter().filter(|s| !s.is_empty()).filter_map(|s| self.held.find(s.as_str())).min() {
            self.stopped = true;
            let visible = self.held[..at].to_string();
            self.held.clear();
            return (visible, true);
        }
        // Keep the longest tail that a stop string could still grow from.
        let keep = self
            .stops
            .iter()
            .flat_map(|stop| (1..stop.len()).filter(|n| stop.is_char_boundary(*n)).map(move |n| &stop[..n]))
            .filter(|prefix| self.held.ends_with(prefix))
            .map(str::len)
            .max()
            .unwrap_or(0);
        let cut = self.held.len() - keep;
        let visible = self.held[..cut].to_string();
        self.held.drain(..cut);
        (visible, false)
    }

    fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

/// Turns token pieces into text without splitting a character: a piece may
/// end inside a multi-byte UTF-8 sequence that the next piece completes.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn push(&mut self, bytes: &[u8]) -> Option<String> {
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            // Invalid bytes (not just an unfinished sequence) are passed on lossily.
            Err(e) if e.error_len().is_some() => self.pending.len(),
            Err(e) => e.valid_up_to(),
        };
        if valid == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&self.pending[..valid]).into_owned();
        self.pending.drain(..valid);
        Some(text)
    }

    fn finish(&mut self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        Some(text)
    }
}

impl ModelBackend for LlamaBackend {
    fn stream(&self, request: CompletionRequest) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        self.submit(&request, None)
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenize(text).len()
    }

    fn context_window(&self) -> usize {
        self.context_size as usize
    }

    fn parameters(&self) -> Option<u64> {
        Some(self.model.n_params())
    }

    fn tool_protocol(&self) -> ToolProtocol {
        match &self.template {
            ChatTemplate::Jinja(template) if template.speaks_tools() => ToolProtocol::Template,
            _ => ToolProtocol::Text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(ids: &[i32]) -> Vec<LlamaToken> {
        ids.iter().copied().map(LlamaToken).collect()
    }

    #[test]
    fn the_saved_prompt_sharing_most_is_chosen_and_the_oldest_leaves_first() {
        let mut saved = SavedPrompts::new(30);
        saved.insert(tokens(&[1, 2, 3, 4]), "conversation", 10);
        saved.insert(tokens(&[1, 2, 9]), "ask", 10);
        assert_eq!(saved.best(&tokens(&[1, 2, 3, 4, 5])), Some((0, 4)));
        assert_eq!(saved.best(&tokens(&[1, 2, 9, 9])), Some((1, 3)));
        // A content the cache went on from is replaced by the longer one,
        // and a content already held in a longer one is not kept twice.
        saved.insert(tokens(&[1, 2, 3, 4, 5, 6]), "longer conversation", 10);
        saved.insert(tokens(&[1, 2, 3]), "part of it", 10);
        assert_eq!(saved.entries.len(), 2);
        assert_eq!(saved.take(saved.best(&tokens(&[1, 2, 3, 4, 5])).unwrap().0).1, "longer conversation");
        // Over the budget, the least recently used leaves.
        saved.insert(tokens(&[7]), "a", 10);
        saved.insert(tokens(&[8]), "b", 10);
        saved.insert(tokens(&[9]), "c", 10);
        let kept: Vec<_> = saved.entries.iter().map(|(_, state, _)| *state).collect();
        assert_eq!(kept, ["a", "b", "c"]);
        saved.insert(tokens(&[5]), "too big", 31);
        assert_eq!(saved.entries.len(), 3);
    }

    #[test]
    fn prompt_lookup_proposes_what_followed_the_longest_recent_match() {
        let tokens = |ids: &[i32]| ids.iter().map(|id| LlamaToken(*id)).collect::<Vec<_>>();
        let lookup = Lookup::new(4).unwrap();
        // `6 7 8 9` occurred before, followed by `1 2 3 4`; the later
        // `7 8 9` after 5 is a shorter match and loses.
        let history = tokens(&[6, 7, 8, 9, 1, 2, 3, 4, 5, 7, 8, 9, 0, 0, 6, 7, 8]);
        assert_eq!(lookup.propose(&history, LlamaToken(9), 10), tokens(&[1, 2, 3, 4]));
        assert_eq!(lookup.propose(&history, LlamaToken(9), 2), tokens(&[1, 2]), "within the room left");
        assert!(lookup.propose(&history, LlamaToken(42), 10).is_empty(), "nothing to look up");
        let short = tokens(&[7, 8, 9, 1, 2, 3, 4, 0, 7, 8]);
        assert!(lookup.propose(&short, LlamaToken(9), 10).is_empty(), "three tokens matched say too little");
        assert!(Lookup::new(0).is_none());
        // A match shorter than the longest drafts twice its length; the
        // longest drafts as far as the length allows.
        let copied: Vec<i32> = (100..140).collect();
        let mut history: Vec<i32> = copied.clone();
        history.extend([0, 0]);
        history.extend(&copied[..4]);
        let long = Lookup::new(48).unwrap();
        let draft = long.propose(&tokens(&history), LlamaToken(104), 48);
        assert_eq!(draft, tokens(&copied[5..15]), "a match of 5 drafts 10");
        history.truncate(copied.len() + 2);
        history.extend(&copied[..20]);
        let draft = long.propose(&tokens(&history), LlamaToken(120), 48);
        assert_eq!(draft.len(), 42, "the longest match drafts all that followed it, up to the length");
        assert_eq!(draft[..19], tokens(&copied[21..]));
        // A rejection shortens the next draft; a full acceptance doubles it.
        let mut lookup = Lookup::new(8).unwrap();
        lookup.adapt(1, 8);
        assert_eq!(lookup.length, 2);
        lookup.adapt(2, 2);
        assert_eq!(lookup.length, 4);
        lookup.adapt(4, 4);
        assert_eq!(lookup.length, 8);
        let mut one = Lookup::new(1).unwrap();
        one.adapt(0, 1);
        assert_eq!(one.length, 1);
    }

    #[test]
    fn stop_strings_end_the_text_and_are_never_shown() {
        let stops = vec!["\nUser:".to_string(), "<|end|>".to_string()];
        let mut scanner = StopScanner::new(&stops);
        assert_eq!(scanner.push("Hello"), ("Hello".into(), false));
        assert_eq!(scanner.push(" world\nUs"), (" world".into(), false));
        assert_eq!(scanner.push("e"), (String::new(), false));
        assert_eq!(scanner.push("r: next"), (String::new(), true));
        assert_eq!(scanner.finish(), "");

        let mut scanner = StopScanner::new(&stops);
        assert_eq!(scanner.push("a <|en"), ("a ".into(), false));
        assert_eq!(scanner.push("joy"), ("<|enjoy".into(), false));
        assert_eq!(scanner.push("<|"), (String::new(), false));
        assert_eq!(scanner.finish(), "<|", "held text that never became a stop is shown at the end");
        let none: Vec<String> = Vec::new();
        assert_eq!(StopScanner::new(&none).push("x<|"), ("x<|".into(), false));
    }

    #[test]
    fn a_stop_at_start_ends_only_a_reply_that_opens_with_it() {
        let leading = vec!["<tools>".to_string()];
        let mut scanner = StopScanner::new(&[]).at_start(&leading);
        assert_eq!(scanner.push("\n<to"), (String::new(), false));
        assert_eq!(scanner.push("ols>\n{\"function\""), (String::new(), true));

        let mut scanner = StopScanner::new(&[]).at_start(&leading);
        assert_eq!(scanner.push("<to"), (String::new(), false));
        assert_eq!(scanner.push("ol_call>"), ("<tool_call>".into(), false));
        assert_eq!(scanner.push(" then <tools>"), (" then <tools>".into(), false), "later on it is text");
    }

    #[test]
    fn utf8_split_across_pieces_is_joined() {
        let mut stream = Utf8Stream::default();
        let crab = "🦀".as_bytes();
        assert_eq!(stream.push(b"a"), Some("a".into()));
        assert_eq!(stream.push(&crab[..2]), None);
        assert_eq!(stream.push(&crab[2..]), Some("🦀".into()));
        assert_eq!(stream.push(&[0xff, b'b']), Some("\u{fffd}b".into()));
        assert_eq!(stream.push(&crab[..1]), None);
        assert_eq!(stream.finish(), Some("\u{fffd}".into()));
    }

    #[test]
    fn files_that_are_not_models_are_refused_before_llama_cpp_sees_them() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.gguf");
        assert!(matches!(check_gguf(&missing), Err(LlamaError::NotFound(_))));
        let text = dir.path().join("notes.gguf");
        std::fs::write(&text, "hello, not a model").unwrap();
        assert!(matches!(check_gguf(&text), Err(LlamaError::NotGguf(_))));
        assert!(matches!(check_gguf(dir.path()), Err(LlamaError::NotFound(_))));
    }
}
