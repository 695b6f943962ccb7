//! Any OpenAI-compatible chat-completions server: llama.cpp's `llama-server`,
//! Ollama, vLLM, LM Studio, hosted APIs.
//!
//! Replies are streamed (server-sent events). Tool calls travel natively
//! (`tools` / `tool_calls`) by default, or as tack's text protocol for servers
//! whose models cannot call tools, where a llama.cpp server can also be given
//! the call grammar. Several generations may run at once, up to a limit: the
//! server, not tack, decides how they share the hardware.
//!
//! What the connection learns once, at start: the model's name (checked
//! against the server's list), its context window and size, and whether the
//! server tokenizes (llama.cpp's `/tokenize`), which makes token counts exact.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::stream::{self, BoxStream, StreamExt};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::task::AbortOnDropHandle;

use super::grammar::{CallFormat, call_grammar, choice_grammar, reply_grammar};
use super::template::{JinjaTemplate, chat_messages, text_protocol_chat, tool_definitions};
use super::tokenizer::{HfTokenizer, estimate_tokens};
use super::toolcall::{ParseEvent, ToolCallParser};
use super::{BackendError, CompletionRequest, ModelBackend, ModelChunk, ToolProtocol};
use crate::config::{GrammarMode, ToolCallMode};
use crate::protocol::Usage;

/// Context window assumed when neither the config nor the server tells.
const FALLBACK_CONTEXT_WINDOW: usize = 8192;
/// Reply length for a llama.cpp server when none is configured, as for the
/// llama backend.
const LOCAL_MAX_TOKENS: u32 = 2048;
/// The longest a server may ask tack to wait before a retry.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// How to reach the server and what to ask of it.
#[derive(Debug, Clone)]
pub struct OpenAiSettings {
    /// The API root, with its version: `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The name the server knows the model by; the server's only model when absent.
    pub model: Option<String>,
    /// The environment variable holding the API key. The key itself is read
    /// once, sent as a bearer token, and never logged or stored.
    pub api_key_env: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub tool_calls: ToolCallMode,
    pub grammar: GrammarMode,
    /// Sampling parameters, sent only when set: hosted APIs reject some.
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i32>,
    pub min_p: Option<f32>,
    pub seed: Option<u32>,
    pub max_tokens: Option<u32>,
    pub stop: Vec<String>,
    /// Tool calls one reply may hold: the stream is closed (and the server
    /// stops) when the model starts one more.
    pub max_calls_per_reply: usize,
    pub context_window: Option<usize>,
    /// A `tokenizer.json` for exact counts when the server cannot tokenize.
    pub tokenizer: Option<PathBuf>,
    pub max_concurrent_requests: usize,
    pub connect_timeout: Duration,
    /// Longest silence of the server, before the first byte or between two.
    pub idle_timeout: Duration,
}

impl OpenAiSettings {
    pub fn new(base_url: impl Into<String>) -> OpenAiSettings {
        OpenAiSettings {
            base_url: base_url.into(),
            model: None,
            api_key_env: None,
            headers: BTreeMap::new(),
            tool_calls: ToolCallMode::Native,
            grammar: GrammarMode::Lazy,
            temperature: None,
            top_p: None,
            top_k: None,
            min_p: None,
            seed: None,
            max_tokens: None,
            stop: Vec::new(),
            max_calls_per_reply: 1,
            context_window: None,
            tokenizer: None,
            max_concurrent_requests: 4,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
        }
    }
}

/// How token counts are made, best first.
enum TokenCounter {
    /// The server's own tokenizer (llama.cpp's `/tokenize`).
    Server(ServerTokenizer),
    /// A `tokenizer.json` of the same model.
    File(Box<HfTokenizer>),
    Estimate,
}

impl TokenCounter {
    /// Tokens in `text`; blocks on the server's `/tokenize` where it counts.
    fn count(&self, text: &str) -> usize {
        match self {
            TokenCounter::Server(server) => server.count(text),
            TokenCounter::File(tokenizer) => tokenizer.count(text),
            TokenCounter::Estimate => estimate_tokens(text),
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            TokenCounter::Server(_) => "exact, from the server's /tokenize",
            TokenCounter::File(_) => "exact, from the configured tokenizer.json",
            TokenCounter::Estimate => "estimated at four bytes a token (set model.tokenizer for exact counts)",
        }
    }
}

pub struct OpenAiBackend {
    shared: Arc<Shared>,
    context_window: usize,
    parameters: Option<u64>,
    /// Shared with the generations: a server that reports no usage has
    /// its counts made here.
    counter: Arc<TokenCounter>,
}

/// What every generation of this backend needs, shared with its tasks.
struct Shared {
    client: reqwest::Client,
    chat_url: Url,
    /// The text-completions endpoint, for prompts tack renders itself.
    completions_url: Url,
    calls: CallRoute,
    base_url: String,
    model: String,
    settings: OpenAiSettings,
    /// The server is llama.cpp's: it takes `grammar`, `top_k`, `cache_prompt`.
    llama_cpp: bool,
    permits: Arc<Semaphore>,
}

/// How tool calls travel, once settled against what the server offers.
enum CallRoute {
    Native,
    /// tack renders the model's chat template; the reply is held by a grammar
    /// in the format that template teaches.
    Template {
        template: Box<JinjaTemplate>,
        format: CallFormat,
    },
    Text,
}

/// The model's chat template as a llama.cpp server reports it, when it lays
/// out tools in a call format tack can hold to a grammar.
fn server_template(props: Option<&Value>) -> Option<(Box<JinjaTemplate>, CallFormat)> {
    let props = props?;
    let source = props["chat_template"].as_str()?;
    let token = |key: &str| props[key].as_str().unwrap_or_default().to_string();
    let template = JinjaTemplate::new(source, &token("bos_token"), &token("eos_token")).ok()?;
    let format = CallFormat::of_template(source)?;
    template.speaks_tools().then_some((Box::new(template), format))
}

/// Why the backend could not start; each a sentence the user can act on.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(String);

impl OpenAiBackend {
    /// Connects to the server, checks the model and learns what it offers.
    pub async fn connect(settings: OpenAiSettings) -> Result<OpenAiBackend, ConnectError> {
        let base_url = settings.base_url.trim_end_matches('/').to_string();
        let parse = |path: &str| {
            Url::parse(&format!("{base_url}{path}")).map_err(|e| {
                ConnectError(format!(
                    "model.baseUrl `{base_url}` is not a URL ({e}); it should be the API root, e.g. http://127.0.0.1:8080/v1"
                ))
            })
        };
        let chat_url = parse("/chat/completions")?;
        let completions_url = parse("/completions")?;
        let models_url = parse("/models")?;
        let headers = headers(&settings)?;
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .default_headers(headers.clone())
            .build()
            .map_err(|e| ConnectError(format!("cannot set up the HTTP client: {e}")))?;

        let listing = probe(&client, models_url.clone(), &settings).await?;
        let served: Vec<&Value> = listing["data"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
        let names: Vec<&str> = served.iter().filter_map(|m| m["id"].as_str()).collect();
        let model = match (&settings.model, names.as_slice()) {
            (Some(wanted), names) if names.is_empty() || names.contains(&wanted.as_str()) => wanted.clone(),
            (Some(wanted), names) => {
                return Err(ConnectError(format!(
                    "the server at {base_url} does not serve model `{wanted}`; it serves: {}",
                    names.join(", ")
                )));
            }
            (None, [only]) => only.to_string(),
            (None, []) => {
                return Err(ConnectError(format!(
                    "the server at {base_url} lists no models: set model.model to the name it serves"
                )));
            }
            (None, names) => {
                return Err(ConnectError(format!(
                    "the server at {base_url} serves several models: set model.model to one of: {}",
                    names.join(", ")
                )));
            }
        };
        let listed = served.iter().find(|m| m["id"].as_str() == Some(model.as_str())).copied();

        // llama.cpp's server: its /props has the context size of a slot (the
        // window one request really gets), and it tokenizes.
        let root = base_url.strip_suffix("/v1").unwrap_or(&base_url).to_string();
        let props = get_json(&client, &format!("{root}/props")).await;
        let llama_cpp = props.as_ref().is_some_and(|p| p.get("default_generation_settings").is_some());
        let slot_context = props
            .as_ref()
            .and_then(|p| p["default_generation_settings"]["n_ctx"].as_u64().or_else(|| p["n_ctx"].as_u64()));
        let listed_context = listed.and_then(|m| {
            m["max_model_len"]
                .as_u64()
                .or_else(|| m["context_length"].as_u64())
                .or_else(|| m["meta"]["n_ctx_train"].as_u64())
        });
        let context_window = match settings.context_window.or(slot_context.or(listed_context).map(|n| n as usize)) {
            Some(window) => window,
            None => {
                tracing::warn!(
                    "the server does not say how long the context of `{model}` is; assuming {FALLBACK_CONTEXT_WINDOW} tokens (set model.contextWindow)"
                );
                FALLBACK_CONTEXT_WINDOW
            }
        };
        // llama.cpp lists the count; Ollama and vLLM name the size instead
        // (`qwen2.5-coder:1.5b`, `Qwen/Qwen2.5-Coder-1.5B-Instruct`), which
        // decides the tools a small model is offered as surely.
        let parameters = listed.and_then(|m| m["meta"]["n_params"].as_u64()).or_else(|| parameters_in_name(&model));
        let template = if llama_cpp { server_template(props.as_ref()) } else { None };
        let calls = match (settings.tool_calls, template) {
            (ToolCallMode::Native, _) | (ToolCallMode::Auto, None) => CallRoute::Native,
            (ToolCallMode::Text, _) => CallRoute::Text,
            (ToolCallMode::Auto | ToolCallMode::Template, Some((template, format))) => {
                CallRoute::Template { template, format }
            }
            (ToolCallMode::Template, None) => {
                return Err(ConnectError(format!(
                    "model.toolCalls = \"template\" needs a llama.cpp server that reports a chat template with tool calls in a format tack knows (Hermes/Qwen, Llama 3); {base_url} does not"
                )));
            }
        };

        let counter = if llama_cpp && ServerTokenizer::works(&client, &root).await {
            TokenCounter::Server(ServerTokenizer::start(root.clone(), headers))
        } else if let Some(path) = &settings.tokenizer {
            TokenCounter::File(Box::new(HfTokenizer::from_file(path).map_err(|e| ConnectError(e.to_string()))?))
        } else {
            TokenCounter::Estimate
        };
        let route = match &calls {
            CallRoute::Native => "native",
            CallRoute::Template { .. } => "template",
            CallRoute::Text => "text",
        };
        tracing::info!(
            server = %base_url, %model, context_window, llama_cpp, tool_calls = route,
            "connected to the model server; token counts are {}", counter.describe()
        );
        if matches!(counter, TokenCounter::Estimate) {
            tracing::warn!("token counts for `{model}` are {}", counter.describe());
        }
        let permits = Arc::new(Semaphore::new(settings.max_concurrent_requests.max(1)));
        let shared = Shared { client, chat_url, completions_url, calls, base_url, model, settings, llama_cpp, permits };
        Ok(OpenAiBackend { shared: Arc::new(shared), context_window, parameters, counter: Arc::new(counter) })
    }

    /// The model's name on the server.
    pub fn model(&self) -> &str {
        &self.shared.model
    }

    /// How token counts are made, in words.
    pub fn token_counting(&self) -> &'static str {
        self.counter.describe()
    }
}

impl ModelBackend for OpenAiBackend {
    fn stream(&self, request: CompletionRequest) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        let (url, body) = match self.shared.request_body(&request) {
            Ok(request) => request,
            Err(error) => return stream::once(async move { Err(error) }).boxed(),
        };
        let (out, receiver) = mpsc::channel(64);
        let shared = self.shared.clone();
        let counter = self.counter.clone();
        let tools = request.tools.iter().map(|tool| tool.name.clone()).collect();
        // Dropping the stream aborts the task, which drops the response and
        // closes the connection: the server notices and stops generating.
        let task = AbortOnDropHandle::new(tokio::spawn(async move {
            if let Err(error) = shared.generate(url, body, tools, counter, &out).await {
                let _ = out.send(Err(error)).await;
            }
        }));
        stream::unfold((receiver, task), |(mut receiver, task)| async move {
            receiver.recv().await.map(|item| (item, (receiver, task)))
        })
        .boxed()
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.counter.count(text)
    }

    fn context_window(&self) -> usize {
        self.context_window
    }

    fn parameters(&self) -> Option<u64> {
        self.parameters
    }

    fn tool_protocol(&self) -> ToolProtocol {
        match self.shared.calls {
            CallRoute::Native => ToolProtocol::Native,
            CallRoute::Template { .. } => ToolProtocol::Template,
            CallRoute::Text => ToolProtocol::Text,
        }
    }
}

/// The default headers: the key from its variable, and the configured extras.
fn headers(settings: &OpenAiSettings) -> Result<HeaderMap, ConnectError> {
    let mut map = HeaderMap::new();
    for (name, value) in &settings.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ConnectError(format!("model.headers: `{name}` is not a header name")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| ConnectError(format!("model.headers: the value of `{name}` is not a valid header value")))?;
        map.insert(name, value);
    }
    if let Some(variable) = &settings.api_key_env {
        let key = std::env::var(variable).map_err(|_| {
            ConnectError(format!("the API key variable {variable} (model.apiKeyEnv) is not set in tack's environment"))
        })?;
        let mut value = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
            .map_err(|_| ConnectError(format!("the API key in {variable} holds characters a header cannot carry")))?;
        value.set_sensitive(true);
        map.insert(AUTHORIZATION, value);
    }
    Ok(map)
}

/// Lists the server's models, turning each way that can fail into a sentence.
async fn probe(client: &reqwest::Client, url: Url, settings: &OpenAiSettings) -> Result<Value, ConnectError> {
    let base = settings.base_url.trim_end_matches('/');
    let response = client
        .get(url.clone())
        .timeout(settings.connect_timeout.max(Duration::from_secs(10)))
        .send()
        .await
        .map_err(|e| ConnectError(format!("cannot reach the model server at {base}: {}", transport_problem(&e))))?;
    let status = response.status();
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        return Err(ConnectError(key_problem(status, settings.api_key_env.as_deref())));
    }
    if status == StatusCode::NOT_FOUND {
        return Err(ConnectError(format!(
            "{url} was not found (404): model.baseUrl should be the API root that /chat/completions hangs from, e.g. http://127.0.0.1:8080/v1"
        )));
    }
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(ConnectError(format!("the model server at {base} answered {status}: {}", error_message(&text))));
    }
    serde_json::from_str(&text)
        .map_err(|_| ConnectError(format!("{url} did not answer with JSON: is {base} an OpenAI-compatible API root?")))
}

/// The size a model's name gives (`1.5b`, `0.5B`, `270m`, `7B`): a number
/// with a `b` or `m` suffix standing as a word of the name; of a mixture,
/// its whole size (`30B-A3B`). Versions and windows (`llama3.2`, `4k`) are
/// no size.
fn parameters_in_name(name: &str) -> Option<u64> {
    let lowered = name.to_ascii_lowercase();
    let mut found = lowered.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).filter_map(|word| {
        let (number, unit) = match word.strip_suffix('b') {
            Some(number) => (number, 1e9),
            None => (word.strip_suffix('m')?, 1e6),
        };
        let value: f64 =
            number.parse().ok().filter(|v: &f64| *v > 0.0 && number.starts_with(|c: char| c.is_ascii_digit()))?;
        Some((value * unit) as u64)
    });
    let size = found.next()?;
    // Two sizes in one name: which one is the model's is a guess.
    found.next().is_none().then_some(size)
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
    let response = client.get(url).timeout(Duration::from_secs(10)).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

/// A transport failure in a few words: which of the usual causes it was.
fn transport_problem(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    if error.is_connect() {
        format!("cannot connect ({cause}); is the server running?")
    } else if error.is_timeout() {
        "timed out".to_string()
    } else {
        cause.to_string()
    }
}

fn key_problem(status: StatusCode, variable: Option<&str>) -> String {
    match variable {
        Some(variable) => format!("the model server refused the API key in {variable} ({status})"),
        None => {
            format!("the model server wants an API key ({status}): set model.apiKeyEnv to the variable that holds it")
        }
    }
}

/// The message of an error body: OpenAI's `{"error": {"message"}}`, a bare
/// `{"error": "..."}` or `{"message"}`, or the start of the text.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .or_else(|| v["message"].as_str())
            .or_else(|| v["detail"].as_str())
    });
    let message = message.map(str::to_string).unwrap_or_else(|| body.trim().chars().take(300).collect());
    if message.is_empty() { "no message".to_string() } else { message.replace('\n', " ") }
}

fn is_context_overflow(message: &str) -> bool {
    let message = message.to_lowercase();
    ["context length", "context_length", "context size", "context window", "maximum context"]
        .iter()
        .any(|marker| message.contains(marker))
}

/// How long the server asked to wait: `retry-after-ms`, else `Retry-After` seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok().filter(|n| *n >= 0.0);
    let delay = number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))?;
    Some(delay.min(MAX_RETRY_AFTER))
}

impl Shared {
    /// What a failed response means for the turn: retry, or stop and say why.
    fn status_error(&self, status: StatusCode, headers: &HeaderMap, body: &str) -> BackendError {
        let message = error_message(body);
        let retryable = status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT
            || status.is_server_error() && status != StatusCode::NOT_IMPLEMENTED;
        if retryable {
            let message = format!("the model server answered {status}: {message}");
            return match retry_after(headers) {
                Some(retry_after) => BackendError::Busy { message, retry_after },
                None => BackendError::Transient(message),
            };
        }
        BackendError::Fatal(match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                key_problem(status, self.settings.api_key_env.as_deref())
            }
            StatusCode::NOT_FOUND => {
                format!("the model server does not know model `{}` ({status}): {message}", self.model)
            }
            _ if is_context_overflow(&message) => format!(
                "the prompt does not fit the model's context on the server ({message}); start a new conversation or raise the server's context size"
            ),
            _ => format!("the model server rejected the request ({status}): {message}"),
        })
    }

    /// Where a request goes and what it says.
    fn request_body(&self, request: &CompletionRequest) -> Result<(Url, Value), BackendError> {
        let settings = &self.settings;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({ "include_usage": true }));
        let grammar_off = settings.grammar == GrammarMode::Off || request.tools.is_empty();
        let required = settings.grammar == GrammarMode::Required || request.require_tool_call;
        let url = match &self.calls {
            CallRoute::Native => {
                body.insert("messages".into(), Value::Array(native_messages(request)));
                if !request.tools.is_empty() {
                    body.insert("tools".into(), Value::Array(tool_definitions(&request.tools)));
                    if request.require_tool_call {
                        body.insert("tool_choice".into(), json!("required"));
                    }
                    if settings.max_calls_per_reply == 1 {
                        body.insert("parallel_tool_calls".into(), json!(false));
                    }
                }
                &self.chat_url
            }
            CallRoute::Template { template, format } => {
                let tools = tool_definitions(&request.tools);
                let tools = (!tools.is_empty()).then_some(tools);
                let mut prompt =
                    template.render(&chat_messages(request), tools.as_deref(), true).map_err(BackendError::Fatal)?;
                prompt.push_str(request.reply_prefix.as_deref().unwrap_or_default());
                body.insert("prompt".into(), json!(prompt));
                if !grammar_off {
                    let callable = request.callable_tools();
                    let grammar = match required {
                        true => call_grammar(*format, &callable, true, settings.max_calls_per_reply as u32)?,
                        false => reply_grammar(*format, &callable)?,
                    };
                    body.insert("grammar".into(), json!(grammar));
                }
                &self.completions_url
            }
            CallRoute::Text => {
                body.insert("messages".into(), Value::Array(text_messages(request)));
                // Only a whole-reply grammar: llama.cpp's lazy grammars can
                // abort the server when a token runs past the trigger.
                if self.llama_cpp && !grammar_off && required {
                    let grammar = call_grammar(CallFormat::Tack, &request.tools, true, 1)?;
                    body.insert("grammar".into(), json!(grammar));
                }
                &self.chat_url
            }
        };
        // llama.cpp's server goes on from a last assistant message; other
        // servers would answer after it, so they get none.
        if let (Some(prefix), true) = (&request.reply_prefix, self.llama_cpp)
            && let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut)
        {
            messages.push(json!({ "role": "assistant", "content": prefix }));
        }
        // A choice among names: llama.cpp's server holds the reply to them;
        // other servers ignore the key and the caller reads the nearest choice.
        if !request.choices.is_empty() && self.llama_cpp {
            body.insert("grammar".into(), json!(choice_grammar(&request.choices)));
        }
        let mut set = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                body.insert(key.into(), value);
            }
        };
        // A llama.cpp server runs the same kind of local model as the llama
        // backend, and gets its defaults: greedy decoding, bounded replies.
        // Other servers keep their own defaults.
        let (mut temperature, max_tokens) = match self.llama_cpp {
            true => (settings.temperature.or(Some(0.0)), settings.max_tokens.or(Some(LOCAL_MAX_TOKENS))),
            false => (settings.temperature, settings.max_tokens),
        };
        let max_tokens = match (max_tokens, request.max_tokens) {
            (Some(own), Some(asked)) => Some(own.min(asked)),
            (own, asked) => own.or(asked),
        };
        let mut seed = settings.seed;
        if let Some(n) = request.resample {
            let (resampled_temperature, resampled_seed) = super::resampled(temperature, seed, n);
            (temperature, seed) = (Some(resampled_temperature), Some(resampled_seed));
        }
        set("temperature", temperature.map(|v| json!(v)));
        set("top_p", settings.top_p.map(|v| json!(v)));
        set("top_k", settings.top_k.map(|v| json!(v)));
        set("min_p", settings.min_p.map(|v| json!(v)));
        set("seed", seed.map(|v| json!(v)));
        set("max_tokens", max_tokens.map(|v| json!(v)));
        set("stop", (!settings.stop.is_empty()).then(|| json!(settings.stop)));
        if self.llama_cpp {
            // Reuse the server's KV cache for the prompt's unchanged prefix.
            set("cache_prompt", Some(json!(true)));
        }
        Ok((url.clone(), Value::Object(body)))
    }

    /// One streamed generation, its chunks sent to `out` as they arrive.
    async fn generate(
        &self,
        url: Url,
        body: Value,
        tools: Vec<String>,
        counter: Arc<TokenCounter>,
        out: &mpsc::Sender<Result<ModelChunk, BackendError>>,
    ) -> Result<(), BackendError> {
        let _permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| BackendError::Fatal("the model backend has shut down".into()))?;
        let idle = self.settings.idle_timeout;
        let silent =
            || BackendError::Transient(format!("the model server sent nothing for {} s", idle.as_secs_f64().round()));
        tracing::trace!(%url, %body, "request to the model server");
        let started = Instant::now();
        let send = self.client.post(url).json(&body).send();
        let response = tokio::time::timeout(idle, send).await.map_err(|_| silent())?.map_err(|e| {
            BackendError::Transient(format!("model server at {}: {}", self.base_url, transport_problem(&e)))
        })?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = tokio::time::timeout(idle, response.text()).await.ok().and_then(Result::ok).unwrap_or_default();
            return Err(self.status_error(status, &headers, &text));
        }

        let mut events = response.bytes_stream().eventsource();
        let mut reply = Reply::default();
        let mut first_token: Option<Instant> = None;
        let mut finished = false;
        // Counts the calls written in the text as the turn's parser will see them.
        let mut written = ToolCallParser::for_tools(tools.iter().map(String::as_str));
        let mut written_calls = 0;
        // The reply's text, counted here where the server reports no usage.
        let mut said = String::new();
        loop {
            let event = match tokio::time::timeout(idle, events.next()).await.map_err(|_| silent())? {
                None => break,
                Some(Ok(event)) => event,
                Some(Err(error)) => {
                    return Err(BackendError::Transient(format!("the connection to the model server broke: {error}")));
                }
            };
            if event.data.trim() == "[DONE]" {
                finished = true;
                break;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(&event.data) else {
                tracing::debug!(data = %event.data, "skipping an event that is not JSON");
                continue;
            };
            if chunk.get("error").is_some_and(|e| !e.is_null()) {
                let message = error_message(&event.data);
                return Err(if is_context_overflow(&message) {
                    BackendError::Fatal(format!(
                        "the prompt does not fit the model's context on the server ({message})"
                    ))
                } else {
                    BackendError::Fatal(format!("the model server failed: {message}"))
                });
            }
            let texts = reply.absorb(&chunk);
            if written_calls >= self.settings.max_calls_per_reply && texts.iter().any(|t| !t.trim().is_empty()) {
                // The calls were written as text (a grammar-held template,
                // the text protocol, a model that left out its call tags):
                // the reply is over when the last allowed one is complete.
                // A server held by a grammar stops there by itself and sends
                // its usage; one that goes on is hung up on.
                tracing::debug!(?texts, "the model wrote on after its last allowed call; hanging up");
                finished = true;
                break;
            }
            for text in texts {
                first_token.get_or_insert_with(Instant::now);
                said.push_str(&text);
                written_calls += written.push(&text).iter().filter(|e| matches!(e, ParseEvent::Call(_))).count();
                if out.send(Ok(ModelChunk::Text(text))).await.is_err() {
                    return Ok(());
                }
            }
            finished |= reply.finish_reason.is_some();
            if reply.calls.len() > self.settings.max_calls_per_reply {
                // The model started one call too many: drop it and hang up,
                // which stops the server generating.
                while reply.calls.len() > self.settings.max_calls_per_reply {
                    reply.calls.pop_last();
                }
                finished = true;
                break;
            }
        }
        if !finished {
            return Err(BackendError::Transient(
                "the model server closed the stream before the reply was complete".into(),
            ));
        }
        if let Some(close) = reply.close_reasoning() {
            let _ = out.send(Ok(ModelChunk::Text(close))).await;
        }
        for call in reply.calls.values() {
            said.push_str(&call.name);
            said.push_str(&call.arguments);
        }
        for call in std::mem::take(&mut reply.calls).into_values() {
            let input = if call.arguments.trim().is_empty() {
                json!({})
            } else {
                // A model that wrote broken JSON gets it back as it wrote it:
                // the tool check then says what is wrong.
                serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments))
            };
            let chunk = ModelChunk::ToolCall { id: call.id.filter(|id| !id.is_empty()), name: call.name, input };
            if out.send(Ok(chunk)).await.is_err() {
                return Ok(());
            }
        }
        let mut usage = reply.usage(started, first_token);
        if !reply.reports_counts() {
            // llama-cpp-python's server sends no usage when streaming, even
            // asked to: without counts the context gauge and compaction are blind.
            let prompt = prompt_text(&body);
            let counted = tokio::task::spawn_blocking(move || (counter.count(&prompt), counter.count(&said))).await;
            if let Ok((prompt_tokens, completion_tokens)) = counted {
                usage.prompt_tokens = prompt_tokens as u64;
                usage.completion_tokens = completion_tokens as u64;
            }
        }
        let _ = out.send(Ok(ModelChunk::Usage(usage))).await;
        Ok(())
    }
}

/// A reply being put together from its stream of deltas.
#[derive(Default)]
struct Reply {
    /// Calls by their index in the reply: arguments arrive in pieces.
    calls: BTreeMap<u64, PartialCall>,
    in_reasoning: bool,
    finish_reason: Option<String>,
    usage: Option<Value>,
    timings: Option<Value>,
}

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

impl Reply {
    /// Takes in one chunk; returns the text to show now. Reasoning (the
    /// `reasoning_content` of llama.cpp, vLLM and DeepSeek) is wrapped in
    /// `<think>` tags, which the parser turns into thoughts.
    fn absorb(&mut self, chunk: &Value) -> Vec<String> {
        let mut texts = Vec::new();
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        if let Some(timings) = chunk.get("timings").filter(|t| !t.is_null()) {
            self.timings = Some(timings.clone());
        }
        let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) else {
            return texts;
        };
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_string());
        }
        let delta = &choice["delta"];
        let reasoning = delta["reasoning_content"].as_str().or_else(|| delta["reasoning"].as_str());
        if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
            if !self.in_reasoning {
                self.in_reasoning = true;
                texts.push("<think>".to_string());
            }
            texts.push(reasoning.to_string());
        }
        // Chat streams carry `delta.content`; text completions carry `text`.
        let content = delta["content"].as_str().or_else(|| choice["text"].as_str());
        if let Some(content) = content.filter(|c| !c.is_empty()) {
            texts.extend(self.close_reasoning());
            texts.push(content.to_string());
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            texts.extend(self.close_reasoning());
            let index = call["index"].as_u64().unwrap_or(self.calls.len() as u64);
            let partial = self.calls.entry(index).or_default();
            if let Some(id) = call["id"].as_str() {
                partial.id = Some(id.to_string());
            }
            if let Some(name) = call["function"]["name"].as_str() {
                partial.name.push_str(name);
            }
            match &call["function"]["arguments"] {
                Value::String(piece) => partial.arguments.push_str(piece),
                // Some servers send the arguments already parsed.
                Value::Object(_) => partial.arguments = call["function"]["arguments"].to_string(),
                _ => {}
            }
        }
        texts
    }

    fn close_reasoning(&mut self) -> Option<String> {
        std::mem::take(&mut self.in_reasoning).then(|| "</think>".to_string())
    }

    /// Whether the server said how many tokens the prompt and reply took.
    fn reports_counts(&self) -> bool {
        let usage = self.usage.as_ref().unwrap_or(&Value::Null);
        let timings = self.timings.as_ref().unwrap_or(&Value::Null);
        usage["prompt_tokens"].is_u64() || timings["prompt_n"].is_u64()
    }

    /// The generation's accounting: the server's counts, its cache hits
    /// (OpenAI's `cached_tokens`, llama.cpp's `cache_n`) and timings, or the
    /// times seen from here.
    fn usage(&self, started: Instant, first_token: Option<Instant>) -> Usage {
        let usage = self.usage.as_ref().unwrap_or(&Value::Null);
        let timings = self.timings.as_ref().unwrap_or(&Value::Null);
        let now = Instant::now();
        let first = first_token.unwrap_or(now);
        let ms = |value: &Value| value.as_f64().map(|ms| ms.round() as u64);
        Usage {
            prompt_tokens: usage["prompt_tokens"]
                .as_u64()
                .or_else(|| Some(timings["prompt_n"].as_u64()? + timings["cache_n"].as_u64().unwrap_or(0)))
                .unwrap_or(0),
            cached_prompt_tokens: usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .or_else(|| timings["cache_n"].as_u64())
                .unwrap_or(0),
            completion_tokens: usage["completion_tokens"]
                .as_u64()
                .or_else(|| timings["predicted_n"].as_u64())
                .unwrap_or(0),
            prompt_eval_ms: ms(&timings["prompt_ms"]).unwrap_or_else(|| (first - started).as_millis() as u64),
            decode_ms: ms(&timings["predicted_ms"]).unwrap_or_else(|| (now - first).as_millis() as u64),
            cost_usd: None,
            // llama-server's speculative decoding reports its drafts here.
            drafted_tokens: timings["draft_n"].as_u64().unwrap_or(0),
            accepted_tokens: timings["draft_n_accepted"].as_u64().unwrap_or(0),
        }
    }
}

/// The text of a request's prompt as the server reads it, to count where
/// it does not: the rendered prompt, or each message's text and calls and
/// the tools offered.
fn prompt_text(body: &Value) -> String {
    if let Some(prompt) = body["prompt"].as_str() {
        return prompt.to_string();
    }
    let mut text = String::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        match &message["content"] {
            Value::String(content) => text.push_str(content),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).for_each(|t| text.push_str(t)),
            _ => {}
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            text.push_str(call["function"]["name"].as_str().unwrap_or_default());
            text.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
        text.push('\n');
    }
    if let Some(tools) = body.get("tools").filter(|t| !t.is_null()) {
        text.push_str(&tools.to_string());
    }
    text
}

/// The conversation as chat messages with native tool calls: the shape chat
/// templates take, with each call's arguments as a JSON string, as the API
/// wants them.
fn native_messages(request: &CompletionRequest) -> Vec<Value> {
    // A result whose call is not in the assistant message before it (the
    // history was compacted) is shown as text: servers reject orphans.
    let mut open_calls: Vec<String> = Vec::new();
    let mut messages = Vec::new();
    for message in chat_messages(request) {
        let mut entry = serde_json::to_value(&message).unwrap_or(Value::Null);
        match message.role.as_str() {
            "assistant" => {
                open_calls = message.tool_calls.iter().filter_map(|c| c["id"].as_str().map(str::to_string)).collect();
                for call in entry["tool_calls"].as_array_mut().into_iter().flatten() {
                    call["function"]["arguments"] = Value::String(call["function"]["arguments"].to_string());
                }
            }
            "tool" if !message.tool_call_id.as_ref().is_some_and(|id| open_calls.contains(id)) => {
                let content = format!("<tool_result>\n{}\n</tool_result>", message.content);
                entry = json!({ "role": "user", "content": content });
            }
            "user" => open_calls.clear(),
            _ => {}
        }
        messages.push(entry);
    }
    messages
}

/// The conversation for a model without native calls: tack's text protocol
/// in plain chat messages.
fn text_messages(request: &CompletionRequest) -> Vec<Value> {
    text_protocol_chat(request).into_iter().map(|(role, content)| json!({ "role": role, "content": content })).collect()
}

/// Exact counts from llama.cpp's `/tokenize`. Counting is synchronous for
/// the turn loop, so requests go through a thread of their own with a
/// blocking client; counts are remembered, since the same system prompt and
/// messages are counted again and again.
struct ServerTokenizer {
    requests: Mutex<std::sync::mpsc::Sender<(String, std::sync::mpsc::Sender<Option<usize>>)>>,
    known: Mutex<HashMap<u64, usize>>,
}

/// Counts remembered at most; past it the memory starts afresh.
const MAX_REMEMBERED_COUNTS: usize = 4096;

impl ServerTokenizer {
    async fn works(client: &reqwest::Client, root: &str) -> bool {
        let response = client
            .post(format!("{root}/tokenize"))
            .json(&json!({ "content": "hello" }))
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        match response {
            Ok(response) if response.status().is_success() => {
                response.json::<Value>().await.is_ok_and(|v| v["tokens"].is_array())
            }
            _ => false,
        }
    }

    fn start(root: String, headers: HeaderMap) -> ServerTokenizer {
        let (requests, inbox) = std::sync::mpsc::channel::<(String, std::sync::mpsc::Sender<Option<usize>>)>();
        std::thread::Builder::new()
            .name("tack-tokenize".into())
            .spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .default_headers(headers)
                    .timeout(Duration::from_secs(30))
                    .build();
                let Ok(client) = client else { return };
                let url = format!("{root}/tokenize");
                for (text, reply) in inbox {
                    let count = client
                        .post(&url)
                        .json(&json!({ "content": text }))
                        .send()
                        .ok()
                        .filter(|r| r.status().is_success())
                        .and_then(|r| r.json::<Value>().ok())
                        .and_then(|v| v["tokens"].as_array().map(Vec::len));
                    let _ = reply.send(count);
                }
            })
            .ok();
        ServerTokenizer { requests: Mutex::new(requests), known: Mutex::new(HashMap::new()) }
    }

    fn count(&self, text: &str) -> usize {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if let Some(count) = self.known.lock().ok().and_then(|known| known.get(&key).copied()) {
            return count;
        }
        let (reply, answer) = std::sync::mpsc::channel();
        let sent = self.requests.lock().is_ok_and(|requests| requests.send((text.to_string(), reply)).is_ok());
        let count = sent.then(|| answer.recv().ok().flatten()).flatten();
        match count {
            Some(count) => {
                if let Ok(mut known) = self.known.lock() {
                    if known.len() >= MAX_REMEMBERED_COUNTS {
                        known.clear();
                    }
                    known.insert(key, count);
                }
                count
            }
            None => {
                tracing::warn!("the server could not tokenize; estimating this count");
                estimate_tokens(text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Block, Message, Role};

    fn tool_use(id: &str) -> Block {
        Block::ToolUse { id: id.into(), name: "Read".into(), input: json!({ "file_path": "a.rs" }) }
    }

    fn result(id: &str) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            output: "fn main() {}".into(),
            is_error: false,
            summary: String::new(),
        }
    }

    #[test]
    fn a_model_name_gives_its_size_when_it_names_one() {
        assert_eq!(parameters_in_name("qwen2.5-coder:1.5b"), Some(1_500_000_000));
        assert_eq!(parameters_in_name("Qwen/Qwen2.5-Coder-0.5B-Instruct"), Some(500_000_000));
        assert_eq!(parameters_in_name("gemma-3-270m-it"), Some(270_000_000));
        assert_eq!(parameters_in_name("meta-llama/Llama-3.1-8B-Instruct"), Some(8_000_000_000));
        assert_eq!(parameters_in_name("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"), Some(1_500_000_000));
        // No size, or one that is not the model's whole size.
        assert_eq!(parameters_in_name("llama3.2"), None);
        assert_eq!(parameters_in_name("gpt-4o"), None);
        assert_eq!(parameters_in_name("phi-3-mini-4k-instruct"), None);
        assert_eq!(parameters_in_name("mixtral-8x7b"), None);
        assert_eq!(parameters_in_name("Qwen3-30B-A3B"), Some(30_000_000_000));
    }

    #[test]
    fn calls_and_results_become_native_messages_and_orphans_become_text() {
        let history = vec![
            Message::user_text("fix it"),
            Message { role: Role::Assistant, blocks: vec![Block::Text { text: "Reading.".into() }, tool_use("c1")] },
            Message { role: Role::User, blocks: vec![result("c1"), result("gone")] },
        ];
        let request =
            CompletionRequest { system: "be brief".into(), messages: history, ..CompletionRequest::default() };
        let messages = native_messages(&request);
        assert_eq!(messages[0], json!({ "role": "system", "content": "be brief" }));
        assert_eq!(messages[2]["tool_calls"][0]["function"]["arguments"], json!("{\"file_path\":\"a.rs\"}"));
        assert_eq!(messages[3], json!({ "role": "tool", "tool_call_id": "c1", "content": "fn main() {}" }));
        assert_eq!(messages[4]["role"], "user");
        assert!(messages[4]["content"].as_str().unwrap().contains("<tool_result>"), "{}", messages[4]);
        assert_eq!(messages.len(), 5);
    }

    #[test]
    fn deltas_assemble_calls_reasoning_and_usage() {
        let mut reply = Reply::default();
        let chunks = [
            json!({"choices": [{"delta": {"reasoning_content": "hmm"}}]}),
            json!({"choices": [{"delta": {"content": "Let me look."}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "x", "function": {"name": "Re", "arguments": "{\"file_"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "ad", "arguments": "path\": \"a\"}"}}]}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 32}}}),
        ];
        let texts: Vec<String> = chunks.iter().flat_map(|c| reply.absorb(c)).collect();
        assert_eq!(texts, ["<think>", "hmm", "</think>", "Let me look."]);
        let call = &reply.calls[&0];
        assert_eq!(
            (call.id.as_deref(), call.name.as_str(), call.arguments.as_str()),
            (Some("x"), "Read", "{\"file_path\": \"a\"}")
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        let usage = reply.usage(Instant::now(), None);
        assert_eq!((usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens), (50, 32, 9));
    }

    #[test]
    fn error_bodies_and_retry_headers_are_read() {
        assert_eq!(error_message(r#"{"error": {"message": "bad key", "type": "auth"}}"#), "bad key");
        assert_eq!(error_message(r#"{"error": "model not found"}"#), "model not found");
        assert_eq!(error_message("Bad Gateway\n"), "Bad Gateway");
        assert!(is_context_overflow("the request exceeds the available context size, try increasing it"));
        assert!(is_context_overflow("This model's maximum context length is 4096 tokens."));
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.insert("retry-after-ms", HeaderValue::from_static("9999999"));
        assert_eq!(retry_after(&headers), Some(MAX_RETRY_AFTER));
    }
}
