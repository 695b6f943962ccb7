//! Model backends behind one trait, and the tool-call parser they share.
//!
//! A backend turns a [`CompletionRequest`] into a stream of [`ModelChunk`]s.
//! Backends that speak a text protocol (local models) emit raw text; the turn
//! loop feeds it to [`toolcall::ToolCallParser`]. Backends with native
//! function calling emit [`ModelChunk::ToolCall`] directly.

pub mod grammar;
pub mod llama;
mod load;
pub mod openai;
pub mod scripted;
pub mod template;
pub mod tokenizer;
pub mod toolcall;
pub mod worker;

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::ToolSpec;
use crate::protocol::{Block, Message, Role, Usage};

pub use load::load_backend;

/// Everything a backend needs for one generation.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompletionRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// Which agent asks: empty for the main agent, the sub-agents' names
    /// otherwise. Backends may ignore it; the scripted one scripts by it.
    pub agent_path: Vec<String>,
    /// The reply must start with a tool call: a last chance for a model that
    /// keeps answering empty. Backends that cannot force a call ignore it.
    pub require_tool_call: bool,
    /// Tools the model is shown but may not call in this reply (one refused
    /// for a repeated lookup). Backends whose grammar decides what a reply
    /// may call leave them out of it; the prompt keeps every tool, so the
    /// cached prefix stays valid.
    #[serde(default)]
    pub held_back: Vec<String>,
    /// A fresh try at a reply that greedy decoding got wrong, the nth:
    /// sampled at the configured temperature (or RESAMPLE_TEMPERATURE where
    /// decoding is greedy), seeded with the configured seed plus n, so that
    /// a run repeats and each try differs.
    #[serde(default)]
    pub resample: Option<u32>,
    /// When not empty, the reply is exactly one of these strings: a choice
    /// among names that exist. Backends with a grammar hold the reply to
    /// them; the others are told, and the caller reads the reply as the
    /// nearest choice.
    #[serde(default)]
    pub choices: Vec<String>,
    /// The reply's length at most, in tokens, below the backend's own
    /// bound: for a short script or a line asked for, where a small model
    /// that rambles would write until that bound.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// The reply's first words, written for the model: it goes on from
    /// them, and what it streams is what follows them. A backend that
    /// cannot start a reply midway ignores it, and its reply starts afresh.
    #[serde(default)]
    pub reply_prefix: Option<String>,
}

/// The temperature of a fresh try where decoding is greedy: enough to leave
/// the one reply greedy decoding always gives, little enough to stay on task.
pub const RESAMPLE_TEMPERATURE: f32 = 0.7;

/// The temperature and seed of fresh try `n`, from the configured ones.
pub fn resampled(temperature: Option<f32>, seed: Option<u32>, n: u32) -> (f32, u32) {
    let temperature = temperature.filter(|t| *t > 0.0).unwrap_or(RESAMPLE_TEMPERATURE);
    (temperature, seed.unwrap_or(0).wrapping_add(n))
}

impl CompletionRequest {
    /// The tools a reply may call: all but those held back, unless that
    /// leaves none.
    pub fn callable_tools(&self) -> Vec<ToolSpec> {
        let callable: Vec<ToolSpec> =
            self.tools.iter().filter(|tool| !self.held_back.contains(&tool.name)).cloned().collect();
        if callable.is_empty() { self.tools.clone() } else { callable }
    }
}

/// One piece of a streamed completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ModelChunk {
    /// Raw text, which may contain text-protocol tool calls.
    Text(String),
    /// A native function call (OpenAI-compatible servers).
    ToolCall { id: Option<String>, name: String, input: Value },
    /// Accounting for the generation; sent once, at the end.
    Usage(Usage),
}

/// How tool calls reach the agent, which decides what the system prompt says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolProtocol {
    /// Calls are written in the text; the prompt must teach the format.
    Text,
    /// The backend's API carries calls natively.
    Native,
    /// The model's chat template lays out the tools and their results in the
    /// model's own format; calls come back as text the parser reads.
    Template,
}

/// Failures of a backend, and how the turn loop reacts to each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum BackendError {
    /// A hiccup (overloaded server, dropped connection): the turn retries the
    /// generation with backoff, a few times, then gives up with `error`.
    #[error("transient model error: {0}")]
    Transient(String),
    /// The server is overloaded and said how long to wait (`Retry-After`):
    /// retried like a transient error, but not sooner than that.
    #[error("transient model error: {message}")]
    Busy { message: String, retry_after: std::time::Duration },
    /// Nothing to retry (bad request, script exhausted, model not loaded):
    /// the turn ends with stop reason `error`.
    #[error("{0}")]
    Fatal(String),
}

impl BackendError {
    /// For an error worth retrying, the least time to wait before the retry
    /// (zero unless the server said); `None` for one that is not.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            BackendError::Transient(_) => Some(std::time::Duration::ZERO),
            BackendError::Busy { retry_after, .. } => Some(*retry_after),
            BackendError::Fatal(_) => None,
        }
    }

    /// What went wrong, without the kind of error.
    pub fn message(&self) -> &str {
        match self {
            BackendError::Transient(message) | BackendError::Busy { message, .. } | BackendError::Fatal(message) => {
                message
            }
        }
    }
}

/// A language model, local or remote.
pub trait ModelBackend: Send + Sync {
    /// Starts one generation. Dropping the stream cancels it.
    fn stream(&self, request: CompletionRequest) -> BoxStream<'static, Result<ModelChunk, BackendError>>;
    /// Tokens `text` takes in this model's tokenizer (an estimate where the
    /// backend has none).
    fn count_tokens(&self, text: &str) -> usize;
    /// Tokens the model attends to, prompt and completion together.
    fn context_window(&self) -> usize;
    /// The model's parameter count, where the backend knows it.
    fn parameters(&self) -> Option<u64> {
        None
    }
    fn tool_protocol(&self) -> ToolProtocol;
}

/// A plain-text rendering of a conversation, for backends without a chat
/// template of their own and for counting tokens.
pub fn transcript(system: &str, messages: &[Message]) -> String {
    let mut out = String::new();
    if !system.is_empty() {
        out.push_str("System:\n");
        out.push_str(system);
        out.push_str("\n\n");
    }
    for message in messages {
        render_message(message, &mut out);
    }
    out
}

/// One message of a [`transcript`].
pub fn render_message(message: &Message, out: &mut String) {
    out.push_str(match message.role {
        Role::User => "User:\n",
        Role::Assistant => "Assistant:\n",
    });
    for block in &message.blocks {
        render_block(block, out);
    }
    out.push('\n');
}

/// A block as a text-protocol model reads it: tool calls in the format the
/// prompt teaches, results in `<tool_result>` tags.
pub fn render_block(block: &Block, out: &mut String) {
    match block {
        Block::Text { text } => {
            out.push_str(text);
            out.push('\n');
        }
        // Thoughts are the model's scratch space: shown to the user, not fed
        // back, unless a chat template asks for them.
        Block::Thought { .. } => {}
        Block::ToolUse { name, input, .. } => {
            out.push_str(&serde_json::json!({ "tool": name, "input": input }).to_string());
            out.push('\n');
        }
        Block::ToolResult { output, is_error, .. } => {
            out.push_str(if *is_error { "<tool_result error=\"true\">\n" } else { "<tool_result>\n" });
            out.push_str(output);
            if !output.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("</tool_result>\n");
        }
    }
}
