//! The scripted backend: replays recorded raw model text, for tests and demos.
//!
//! A script is a JSON array; element i is what the model emits on its i-th
//! generation. A string is streamed in small chunks of varying size so that
//! the incremental tool-call parser runs as it would on a real stream. An
//! object injects a fault (`{"error": "transient" | "fatal", "message"?}`) or
//! paces the text (`{"text": "...", "chunkDelayMs": 20}`).
//!
//! A script may instead be an object that scripts each agent on its own, so
//! that parallel sub-agents replay deterministically: `{"main": [...],
//! "call_2": [...], "call_2/call_1": [...]}`, keyed by the agent path joined
//! with `/` (`main` for the main agent).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use serde::Deserialize;

use super::tokenizer::{HfTokenizer, estimate_tokens};
use super::{BackendError, CompletionRequest, ModelBackend, ModelChunk, ToolProtocol, transcript};
use crate::protocol::Usage;

/// Chunk sizes in characters, cycled: uneven on purpose, so calls and tags
/// are split at every kind of boundary.
const CHUNK_PATTERN: [usize; 5] = [3, 1, 7, 2, 5];

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ScriptEntry {
    Text(String),
    Paced {
        text: String,
        #[serde(rename = "chunkDelayMs", default)]
        chunk_delay_ms: u64,
    },
    Fault {
        error: FaultKind,
        #[serde(default)]
        message: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    Transient,
    Fatal,
}

/// A script file: one list for every agent, or a list per agent path.
#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptFile {
    Shared(Vec<ScriptEntry>),
    PerAgent(BTreeMap<String, Vec<ScriptEntry>>),
}

/// The key of the main agent in a per-agent script.
pub const MAIN_AGENT: &str = "main";

pub struct ScriptedBackend {
    /// Entries by agent key; a shared script has only [`MAIN_AGENT`], and
    /// then serves every agent from it.
    scripts: BTreeMap<String, Vec<ScriptEntry>>,
    per_agent: bool,
    /// Index of the next entry of each script. Shared by every conversation
    /// using this backend.
    next: Mutex<BTreeMap<String, usize>>,
    context_window: usize,
    /// Every request served, in order, so tests can check what the model was shown.
    requests: Mutex<Vec<CompletionRequest>>,
    /// Exact counts when a tokenizer is configured; an estimate otherwise.
    tokenizer: Option<Arc<HfTokenizer>>,
    /// The size of the model the script stands for, where a test needs the
    /// harness to treat it as that model.
    parameters: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read script {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "invalid script {path}: {message}; expected a JSON array of strings or {{\"error\": \"transient\"|\"fatal\"}} objects"
    )]
    Parse { path: String, message: String },
}

impl ScriptedBackend {
    pub const DEFAULT_CONTEXT_WINDOW: usize = 32_768;

    pub fn new(entries: Vec<ScriptEntry>) -> Self {
        ScriptedBackend {
            scripts: BTreeMap::from([(MAIN_AGENT.to_string(), entries)]),
            per_agent: false,
            next: Mutex::new(BTreeMap::new()),
            context_window: Self::DEFAULT_CONTEXT_WINDOW,
            requests: Mutex::new(Vec::new()),
            tokenizer: None,
            parameters: None,
        }
    }

    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ScriptError::Read { path: path.display().to_string(), source })?;
        let script = serde_json::from_str(&text)
            .map_err(|e| ScriptError::Parse { path: path.display().to_string(), message: e.to_string() })?;
        Ok(match script {
            ScriptFile::Shared(entries) => Self::new(entries),
            ScriptFile::PerAgent(scripts) => Self::per_agent(scripts),
        })
    }

    /// A script per agent, keyed as in a script file.
    pub fn per_agent(scripts: BTreeMap<String, Vec<ScriptEntry>>) -> Self {
        ScriptedBackend { scripts, per_agent: true, ..Self::new(Vec::new()) }
    }

    /// Texts only: the common case in tests.
    pub fn from_texts<S: Into<String>>(texts: impl IntoIterator<Item = S>) -> Self {
        Self::new(texts.into_iter().map(|t| ScriptEntry::Text(t.into())).collect())
    }

    pub fn with_parameters(mut self, parameters: u64) -> Self {
        self.parameters = Some(parameters);
        self
    }

    pub fn with_tokenizer(mut self, tokenizer: Arc<HfTokenizer>) -> Self {
        self.tokenizer = Some(tokenizer);
        self
    }

    pub fn with_context_window(mut self, tokens: usize) -> Self {
        self.context_window = tokens;
        self
    }

    /// Generations served so far, to every agent.
    pub fn used(&self) -> usize {
        self.next.lock().unwrap_or_else(|e| e.into_inner()).values().sum()
    }

    /// The request of the most recent generation.
    pub fn last_request(&self) -> Option<CompletionRequest> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).last().cloned()
    }

    /// Every generation's request, in order.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn take(&self, agent_path: &[String]) -> Result<ScriptEntry, BackendError> {
        let key = if self.per_agent && !agent_path.is_empty() { agent_path.join("/") } else { MAIN_AGENT.to_string() };
        let Some(entries) = self.scripts.get(&key) else {
            let known: Vec<&str> = self.scripts.keys().map(String::as_str).collect();
            return Err(BackendError::Fatal(format!(
                "the script has no entries for agent `{key}`; it scripts {}",
                known.join(", ")
            )));
        };
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let index = next.entry(key.clone()).or_default();
        let entry = entries.get(*index).cloned().ok_or_else(|| {
            let whose = if self.per_agent { format!(" of agent `{key}`") } else { String::new() };
            BackendError::Fatal(format!("script{whose} exhausted after {} completions", entries.len()))
        })?;
        *index += 1;
        Ok(entry)
    }
}

/// Splits `text` on character boundaries following [`CHUNK_PATTERN`].
fn chunks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut pattern = CHUNK_PATTERN.iter().cycle();
    while chars.peek().is_some() {
        let size = *pattern.next().unwrap_or(&1);
        out.push(chars.by_ref().take(size).collect());
    }
    out
}

impl ModelBackend for ScriptedBackend {
    fn stream(&self, request: CompletionRequest) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        let prompt_tokens = self.count_tokens(&transcript(&request.system, &request.messages)) as u64;
        let taken = self.take(&request.agent_path);
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).push(request);
        let (text, delay) = match taken {
            Err(error) => return stream::once(async move { Err(error) }).boxed(),
            Ok(ScriptEntry::Fault { error, message }) => {
                let error = match error {
                    FaultKind::Transient => {
                        BackendError::Transient(message.unwrap_or_else(|| "scripted transient fault".into()))
                    }
                    FaultKind::Fatal => BackendError::Fatal(message.unwrap_or_else(|| "scripted fatal fault".into())),
                };
                return stream::once(async move { Err(error) }).boxed();
            }
            Ok(ScriptEntry::Text(text)) => (text, 0),
            Ok(ScriptEntry::Paced { text, chunk_delay_ms }) => (text, chunk_delay_ms),
        };
        let usage = Usage { prompt_tokens, completion_tokens: self.count_tokens(&text) as u64, ..Usage::default() };
        let pieces = stream::iter(chunks(&text)).then(move |piece| async move {
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            Ok(ModelChunk::Text(piece))
        });
        pieces.chain(stream::once(async move { Ok(ModelChunk::Usage(usage)) })).boxed()
    }

    fn count_tokens(&self, text: &str) -> usize {
        match &self.tokenizer {
            Some(tokenizer) => tokenizer.count(text),
            None => estimate_tokens(text),
        }
    }

    fn context_window(&self) -> usize {
        self.context_window
    }

    fn parameters(&self) -> Option<u64> {
        self.parameters
    }

    fn tool_protocol(&self) -> ToolProtocol {
        ToolProtocol::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_text_on_char_boundaries() {
        let text = "héllo 🌍 world, 世界";
        let pieces = chunks(text);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.len() > 3);
    }

    #[test]
    fn scripts_parse_texts_faults_and_pacing() {
        let entries: Vec<ScriptEntry> = serde_json::from_str(
            r#"["hi", {"error": "transient"}, {"error": "fatal", "message": "boom"}, {"text": "slow", "chunkDelayMs": 5}]"#,
        )
        .unwrap();
        assert_eq!(entries[0], ScriptEntry::Text("hi".into()));
        assert_eq!(entries[1], ScriptEntry::Fault { error: FaultKind::Transient, message: None });
        assert_eq!(entries[3], ScriptEntry::Paced { text: "slow".into(), chunk_delay_ms: 5 });
    }

    #[tokio::test]
    async fn per_agent_scripts_serve_each_agent_its_own_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.json");
        std::fs::write(&path, r#"{"main": ["m1", "m2"], "call_1": ["s1"]}"#).unwrap();
        let backend = ScriptedBackend::from_file(&path).unwrap();
        let ask = |path: &[&str]| CompletionRequest {
            agent_path: path.iter().map(|s| s.to_string()).collect(),
            ..CompletionRequest::default()
        };
        let text = |chunks: Vec<Result<ModelChunk, BackendError>>| -> String {
            chunks
                .into_iter()
                .filter_map(|c| match c {
                    Ok(ModelChunk::Text(t)) => Some(t),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(text(backend.stream(ask(&[])).collect().await), "m1");
        assert_eq!(text(backend.stream(ask(&["call_1"])).collect().await), "s1");
        assert_eq!(text(backend.stream(ask(&[])).collect().await), "m2");
        let unknown: Vec<_> = backend.stream(ask(&["call_9"])).collect().await;
        assert_eq!(
            unknown,
            vec![Err(BackendError::Fatal(
                "the script has no entries for agent `call_9`; it scripts call_1, main".into()
            ))]
        );
        assert_eq!(backend.used(), 3);
    }

    #[tokio::test]
    async fn running_past_the_end_is_a_clear_error() {
        let backend = ScriptedBackend::from_texts(["only"]);
        let request = CompletionRequest::default();
        let first: Vec<_> = backend.stream(request.clone()).collect().await;
        assert!(first.iter().all(Result::is_ok));
        let second: Vec<_> = backend.stream(request).collect().await;
        assert_eq!(second, vec![Err(BackendError::Fatal("script exhausted after 1 completions".into()))]);
    }
}
