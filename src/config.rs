//! Settings and where they come from.
//!
//! Layers, later wins: defaults < `~/.config/tack/config.toml` <
//! `<workspace>/.tack/config.toml` < front-end overrides (LSP
//! initializationOptions, then CLI flags). Objects merge key by key; lists
//! (permission rules, disabled tool sets) add up, so a project cannot drop a
//! user's deny rule by writing its own. Keys are camelCase; snake_case is
//! accepted too, since that is how TOML is usually written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::permissions::Rule;
use crate::protocol::PermissionMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// A GGUF model run in-process through llama.cpp.
    #[default]
    Llama,
    /// Any OpenAI-compatible server.
    Openai,
    /// Replays a script of recorded model text.
    Scripted,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Llama => "llama",
            BackendKind::Openai => "openai",
            BackendKind::Scripted => "scripted",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ModelSettings {
    pub backend: BackendKind,
    /// GGUF file for the llama backend.
    pub path: Option<PathBuf>,
    /// Script file for the scripted backend.
    pub script: Option<PathBuf>,
    /// A Hugging Face `tokenizer.json` for exact token counts where the
    /// backend has no tokenizer of its own.
    pub tokenizer: Option<PathBuf>,
    /// Overrides the model's context window, in tokens.
    pub context_window: Option<usize>,
    /// Prices of a remote model, for the cost in usage reports.
    pub pricing: Option<Pricing>,
    /// Local models: tokens of context (default: the model's, up to 32k).
    pub context_size: Option<u32>,
    /// Local models: CPU threads (default: one per core).
    pub threads: Option<u32>,
    /// Local models: prompt tokens evaluated per batch.
    pub batch_size: Option<u32>,
    /// Local models: layers offloaded to the GPU (builds with the `cuda` feature).
    pub gpu_layers: Option<u32>,
    /// Sampling temperature; 0 decodes greedily.
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i32>,
    pub min_p: Option<f32>,
    pub seed: Option<u32>,
    /// Tokens one generation may produce.
    pub max_tokens: Option<u32>,
    /// Local models: grammar-constrained tool calls (`lazy` by default).
    pub grammar: Option<GrammarMode>,
    /// Texts that end a generation when the model writes them.
    pub stop: Vec<String>,
    /// Tool calls one reply may hold; the generation ends after
    /// the last (default 1: a small model that goes on writes calls whose
    /// input depends on results it has not seen).
    pub max_calls_per_reply: Option<u32>,
    /// Local models: save the KV state of the system prompt and tools in the
    /// cache directory, so a new session does not evaluate them again
    /// (default on).
    pub prompt_cache: Option<bool>,
    /// Local models: speculative decoding (`lookup` by default, drafting
    /// from the context; `draft` with `draft_model`; `off`).
    pub speculative: Option<Speculative>,
    /// Local models: the GGUF that drafts with `speculative = "draft"`, a
    /// smaller model of the same vocabulary (relative to the config file).
    pub draft_model: Option<PathBuf>,
    /// Local models: the most tokens one speculative draft holds (default
    /// 48 with `lookup`, 8 with `draft`).
    pub draft_tokens: Option<u32>,
    /// Local models: fused attention (llama.cpp's flash attention; `auto`
    /// by default, which turns it on where the device supports it).
    pub flash_attention: Option<FlashAttention>,
    /// Local models: MiB of memory for earlier prompts' KV states, so a
    /// prompt that goes back to one is not evaluated again (default 512;
    /// 0 keeps none).
    pub prompt_memory: Option<u32>,
    /// Local models: run llama.cpp in a worker process, so that a crash in
    /// it ends one generation rather than tack (default on).
    pub worker: Option<bool>,
    /// OpenAI-compatible servers: the API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    /// OpenAI-compatible servers: the model's name on the server (default:
    /// the server's only model).
    pub model: Option<String>,
    /// OpenAI-compatible servers: the environment variable that holds the
    /// API key. The key itself never goes in a config file.
    pub api_key_env: Option<String>,
    /// OpenAI-compatible servers: extra HTTP headers (not for secrets).
    pub headers: BTreeMap<String, String>,
    /// OpenAI-compatible servers: how tool calls travel (`auto` by default).
    pub tool_calls: Option<ToolCallMode>,
    /// OpenAI-compatible servers: generations in flight at once (default 4),
    /// across conversations and sub-agents.
    pub max_concurrent_requests: Option<u32>,
    /// OpenAI-compatible servers: time to connect (default 10 s).
    pub connect_timeout_ms: Option<u64>,
    /// OpenAI-compatible servers: longest silence before the first byte or
    /// between two (default 300 s), after which the generation is retried.
    pub idle_timeout_ms: Option<u64>,
}

/// How an OpenAI-compatible server's model calls tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallMode {
    /// `template` for a llama.cpp server whose model's chat template lays out
    /// tools in a format tack knows, `native` otherwise.
    #[default]
    Auto,
    /// The API's `tools` and `tool_calls`: the server parses the model's calls.
    Native,
    /// llama.cpp servers: tack renders the model's chat template itself and
    /// sends a grammar that holds calls to the tools' schemas, as the llama
    /// backend does (the server refuses a grammar beside `tools`).
    Template,
    /// tack's text protocol, taught in the prompt and parsed by tack, for
    /// servers or models without tool calling.
    Text,
}

/// How a local model's decoding is constrained by the enabled tools' schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrammarMode {
    Off,
    /// Free text until the model starts a call (`{"tool"`); from there the
    /// call must name an enabled tool and match its input schema.
    #[default]
    Lazy,
    /// The whole reply must be one or more well-formed calls.
    Required,
}

/// How a local model proposes tokens ahead of decoding, for the model to
/// check in one batch: the reply is the same, sooner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speculative {
    /// One token per forward pass.
    Off,
    /// The tokens that followed the longest earlier match of the reply's
    /// last ones in the context (prompt lookup): no second model. The
    /// default: edit replies decode 1.55x faster with the 1.5B coder and
    /// 1.64x with the 0.5B on two CPU cores (its text may differ from plain
    /// decoding's where batched logits turn a near-tie: `cargo bench
    /// --bench llama`, section 7).
    #[default]
    Lookup,
    /// A smaller model of the same vocabulary (`draft_model`) drafts.
    Draft,
}

/// Whether a local model computes attention fused (llama.cpp's flash
/// attention). A trade on a CPU: deep in the context, fused attention
/// evaluates prompts faster, unfused decodes faster and checks a batch of
/// drafted tokens for less (the 1.5B coder on two cores at a depth of
/// 4,096 tokens: prompts 39.1 tok/s fused against 31.8 unfused, decoding
/// 10.8 against 12.2; edit replies with prompt lookup 1.52x plain fused,
/// 1.80x unfused; `cargo bench --bench llama`, sections 6 and 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlashAttention {
    /// llama.cpp's choice: on where the device supports it.
    #[default]
    Auto,
    On,
    /// For work that writes more than it reads: long copying replies.
    Off,
}

impl FlashAttention {
    /// The name llama.cpp's own tools take (`-fa`).
    pub fn llama_cpp_name(self) -> &'static str {
        match self {
            FlashAttention::Auto => "auto",
            FlashAttention::On => "on",
            FlashAttention::Off => "off",
        }
    }
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pricing {
    pub input_per_million: f64,
    /// Prompt tokens served from the provider's cache; the input price when absent.
    #[serde(default)]
    pub cached_input_per_million: Option<f64>,
    pub output_per_million: f64,
}

impl Pricing {
    pub fn cost(&self, usage: &crate::protocol::Usage) -> f64 {
        let cached = usage.cached_prompt_tokens.min(usage.prompt_tokens);
        let fresh = usage.prompt_tokens - cached;
        let cached_price = self.cached_input_per_million.unwrap_or(self.input_per_million);
        (fresh as f64 * self.input_per_million
            + cached as f64 * cached_price
            + usage.completion_tokens as f64 * self.output_per_million)
            / 1_000_000.0
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PermissionSettings {
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ToolSettings {
    /// Tool sets switched off: `read`, `edit`, ...
    pub disabled: BTreeSet<ToolSet>,
    /// How many tools the model is offered: `auto` sizes the list to the model.
    pub profile: ToolProfile,
    /// Time limit of a command (Bash, REPL) that names none.
    pub command_timeout_ms: u64,
    /// The most a command may ask for.
    pub max_command_timeout_ms: u64,
    /// Environment variables (names or globs, case-insensitive) kept from
    /// commands, beyond the built-in credential patterns (`*TOKEN*`, `*_KEY`, ...).
    pub scrub_env: Vec<String>,
    /// WebFetch and WebSearch.
    pub web: WebSettings,
    /// The OS sandbox of Bash and REPL: `workspace-write`, `read-only` or `off`.
    pub sandbox: SandboxMode,
    /// Paths commands may write to beyond the workspace and temporary folders.
    pub sandbox_writable: Vec<PathBuf>,
    /// Paths commands may not read, beyond the home directory's credential folders.
    pub sandbox_hidden: Vec<PathBuf>,
    /// Whether sandboxed commands may open network (TCP) connections.
    pub sandbox_network: bool,
}

/// The web tools' limits and search provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct WebSettings {
    /// Let WebFetch reach loopback, private and link-local addresses (a
    /// local docs server); off, a page on the local network is refused.
    pub allow_private_hosts: bool,
    /// Bytes of a page downloaded at most; the rest is not read.
    pub max_page_bytes: u64,
    /// Time a fetch or a search may take, connection included.
    pub timeout_ms: u64,
    /// Where WebSearch searches; without one, WebSearch is not offered.
    pub search: Option<SearchSettings>,
}

impl Default for WebSettings {
    fn default() -> Self {
        WebSettings { allow_private_hosts: false, max_page_bytes: 2 * 1024 * 1024, timeout_ms: 20_000, search: None }
    }
}

/// A search provider: a SearXNG instance's JSON API, or Brave Search's API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchSettings {
    pub provider: SearchProvider,
    /// The instance's address (SearXNG: `https://searx.example.org`); Brave's
    /// API address by default.
    #[serde(default)]
    pub url: Option<String>,
    /// The environment variable holding the API key (Brave), never the key.
    #[serde(default)]
    pub api_key_env: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchProvider {
    Searxng,
    Brave,
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            disabled: BTreeSet::new(),
            profile: ToolProfile::Auto,
            command_timeout_ms: DEFAULT_COMMAND_TIMEOUT_MS,
            max_command_timeout_ms: 600_000,
            scrub_env: Vec::new(),
            web: WebSettings::default(),
            sandbox: Default::default(),
            sandbox_writable: Vec::new(),
            sandbox_hidden: Vec::new(),
            sandbox_network: true,
        }
    }
}

/// How many of the built-in tools the model is offered. Every tool costs
/// prompt tokens, and a small model offered many picks worse among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolProfile {
    /// `whole_files` for models under [`TINY_MODEL_PARAMETERS`] parameters,
    /// `adaptive` for models under [`SMALL_MODEL_PARAMETERS`] parameters,
    /// `compact` for other models with a context window under
    /// [`SMALL_CONTEXT_WINDOW`] tokens, else `full`.
    #[default]
    Auto,
    /// Every tool of the enabled sets.
    Full,
    /// The few tools a coding task needs: find, read, change
    /// (`tools::COMPACT_TOOLS`).
    Compact,
    /// No tools: the model is handed the workspace's files with each prompt
    /// and answers with the whole new content of the files it changes,
    /// which become Edit and Write calls (`agent::whole_file`).
    WholeFiles,
    /// Chosen at each turn: `whole_files` when the files the prompt points
    /// to, or when it points to none every file of the project, fit in one
    /// message; `compact` tools otherwise, to search what one message cannot
    /// hold.
    Adaptive,
}

/// The time limit of a command (Bash, REPL) that names none, unless
/// `[tools] command_timeout_ms` says otherwise.
pub const DEFAULT_COMMAND_TIMEOUT_MS: u64 = 120_000;

/// Models smaller than this get the `whole_files` profile by default: on the
/// task benchmark a 0.5B coder solves 10 of 12 tasks handed the files and 3
/// offered tools. Larger small models get `adaptive`: handed the files when
/// they fit, tools to search when they do not.
pub const TINY_MODEL_PARAMETERS: u64 = 1_000_000_000;

/// Models smaller than this get the compact tool list by default.
pub const SMALL_MODEL_PARAMETERS: u64 = 4_000_000_000;
/// Whether a model of this many parameters is small (`None`: a remote model
/// of unknown size, taken as not small): the compact tool list and the
/// guards for small models' habits go by it.
pub fn is_small_model(parameters: Option<u64>) -> bool {
    parameters.is_some_and(|p| p < SMALL_MODEL_PARAMETERS)
}

/// Context windows smaller than this get the compact tool list by default.
pub const SMALL_CONTEXT_WINDOW: usize = 16_384;

impl ToolProfile {
    /// The profile for a model of this size; `parameters` is `None`
    /// when the backend does not know (a remote model).
    pub fn resolve(self, context_window: usize, parameters: Option<u64>) -> ToolProfile {
        match self {
            ToolProfile::Auto if parameters.is_some_and(|p| p < TINY_MODEL_PARAMETERS) => ToolProfile::WholeFiles,
            ToolProfile::Auto if is_small_model(parameters) => ToolProfile::Adaptive,
            ToolProfile::Auto if context_window < SMALL_CONTEXT_WINDOW => ToolProfile::Compact,
            ToolProfile::Auto => ToolProfile::Full,
            chosen => chosen,
        }
    }
}

/// How the prompt is kept inside the context window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ContextSettings {
    /// Share of the context window the prompt may fill before compaction.
    pub compact_threshold: f64,
    /// Messages at the end of the history kept whole.
    pub keep_recent: usize,
    /// Tool outputs longer than this many characters are cut when compacting.
    pub max_tool_output_chars: usize,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings { compact_threshold: 0.8, keep_recent: 2, max_tool_output_chars: 20_000 }
    }
}

/// The real-project pipeline of small models (`agent::pipeline`): how many
/// candidates it samples and what a turn may spend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PipelineSettings {
    /// Candidate changes a turn tries at most: the greedy one, then sampled ones.
    pub candidates: u32,
    /// Definitions the model chooses among.
    pub choices: usize,
    /// Model calls a turn may make, choosing and asking again included.
    pub max_model_calls: u32,
    /// Seconds a turn may spend before it ends with what it tried.
    pub max_seconds: u64,
    /// Before a change, a check of what the request expects runs (the
    /// request's own examples as written, else a script the model
    /// writes); a change is offered only when the check passes with it.
    pub check: bool,
    /// With a check, small variants of the definitions found (an operator,
    /// a number or a name changed) are tried before the model's versions.
    pub variants: bool,
    /// Of several variants that pass the check, the one that alters
    /// fewest uses near the check's (its calls with one literal put to
    /// another value) is kept, before the model is asked what a use must
    /// print or which change to pick.
    pub near_uses: bool,
    /// Where the check is the project's failing Python tests, each test of
    /// their files runs alone, traced, and the definitions whose lines only
    /// the failing ones run are followed, varied and asked of first.
    pub spectrum: bool,
    /// Before the definitions are ranked, the model guesses the names the
    /// code uses for what the request speaks of, and the ranking searches
    /// them with the request's words. Off by default: on the real-project
    /// tasks it turned none with either coder model, at one call a turn.
    pub guess_names: bool,
    /// In a workspace whose files fit in one message, a change request
    /// the project's failing tests make a check of goes through the check
    /// and the candidates first; the whole-file way takes it where no
    /// change passes the check.
    pub tests_first: bool,
    /// In a workspace whose files fit in one message, a question is first
    /// run on the project: the model writes a script that prints what the
    /// request asks about, tack runs it (a Bash call), and the answer is
    /// asked with the files and what the script printed.
    pub questions_run: bool,
    /// Where the model writes a check, it is shown how the project's own
    /// tests call the code (the start of the first test that does, and
    /// the helpers of the tests' own it uses).
    pub test_uses: bool,
}

impl Default for PipelineSettings {
    fn default() -> Self {
        PipelineSettings {
            candidates: 6,
            choices: 6,
            max_model_calls: 16,
            max_seconds: 300,
            check: true,
            variants: true,
            near_uses: true,
            spectrum: true,
            guess_names: false,
            tests_first: true,
            questions_run: true,
            test_uses: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Settings {
    pub model: ModelSettings,
    pub permission_mode: PermissionMode,
    pub max_iterations: u32,
    /// Delay before the first retry of a transient model error, doubled after.
    pub retry_delay_ms: u64,
    /// Retries of a transient model error before the turn fails.
    pub max_retries: u32,
    pub permissions: PermissionSettings,
    pub tools: ToolSettings,
    pub context: ContextSettings,
    /// How deep sub-agents may nest (Agent tool, code actions).
    pub max_agent_depth: u32,
    /// Commands run at the agent's steps; see `agent::hooks`.
    pub hooks: HookSettings,
    pub pipeline: PipelineSettings,
    pub checks: CheckSettings,
}

/// Checks the harness runs on the model's changes, as steps of the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CheckSettings {
    /// The project's test command (`pytest -q`, `cargo test`, `npm test`).
    /// After a turn that changed files it runs as a Bash call; when it
    /// fails, its output sends the model back. The pipeline also runs it
    /// in its scratch copy: a candidate must fail no more than it does now.
    pub test: Option<String>,
    /// After a turn that changed files of a Rust crate, a Go module or a
    /// TypeScript project that installs `tsc`, the language's checker runs
    /// (`cargo check`, `go vet`, `tsc --noEmit`) where no test command is
    /// configured; its errors in the changed files send the model back.
    pub build: bool,
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings { test: None, build: true }
    }
}

/// Command hooks per event, in the order they run. Lists add up across
/// layers: the user's hooks run first, then the project's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookSettings {
    #[serde(rename = "PreToolUse", alias = "preToolUse")]
    pub pre_tool_use: Vec<HookCommand>,
    #[serde(rename = "PostToolUse", alias = "postToolUse")]
    pub post_tool_use: Vec<HookCommand>,
    #[serde(rename = "UserPromptSubmit", alias = "userPromptSubmit")]
    pub user_prompt_submit: Vec<HookCommand>,
    #[serde(rename = "Stop", alias = "stop")]
    pub stop: Vec<HookCommand>,
    #[serde(rename = "PreCompact", alias = "preCompact")]
    pub pre_compact: Vec<HookCommand>,
    #[serde(rename = "SessionStart", alias = "sessionStart")]
    pub session_start: Vec<HookCommand>,
}

impl HookSettings {
    pub fn is_empty(&self) -> bool {
        self.all().next().is_none()
    }

    /// Every hook of every event.
    pub fn all(&self) -> impl Iterator<Item = &HookCommand> {
        let lists = [
            &self.pre_tool_use,
            &self.post_tool_use,
            &self.user_prompt_submit,
            &self.stop,
            &self.pre_compact,
            &self.session_start,
        ];
        lists.into_iter().flatten()
    }

    /// The hooks of one event.
    pub fn of(&self, event: HookEvent) -> &[HookCommand] {
        match event {
            HookEvent::PreToolUse => &self.pre_tool_use,
            HookEvent::PostToolUse => &self.post_tool_use,
            HookEvent::UserPromptSubmit => &self.user_prompt_submit,
            HookEvent::Stop => &self.stop,
            HookEvent::PreCompact => &self.pre_compact,
            HookEvent::SessionStart => &self.session_start,
        }
    }
}

/// One hook: a command line for `sh -c`, run in the workspace root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookCommand {
    /// For tool events: a regular expression the whole tool name must match
    /// (`Edit|Write`, `mcp__.*`); empty or `*` matches every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    pub command: String,
    /// Longest the command may run (default 60 s); it is then killed.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl HookCommand {
    /// Whether this hook runs for a call to `tool` (`None`: not a tool event).
    pub fn matches(&self, tool: Option<&str>) -> bool {
        let (Some(tool), Some(matcher)) = (tool, self.matcher.as_deref()) else { return true };
        let matcher = matcher.trim();
        if matcher.is_empty() || matcher == "*" {
            return true;
        }
        match regex::Regex::new(&format!("^(?:{matcher})$")) {
            Ok(pattern) => pattern.is_match(tool),
            // Checked when the settings load.
            Err(_) => matcher == tool,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            model: ModelSettings::default(),
            permission_mode: PermissionMode::default(),
            max_iterations: 40,
            retry_delay_ms: 500,
            max_retries: 3,
            permissions: PermissionSettings::default(),
            tools: ToolSettings::default(),
            context: ContextSettings::default(),
            max_agent_depth: 3,
            hooks: HookSettings::default(),
            pipeline: PipelineSettings::default(),
            checks: CheckSettings::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid config {origin}: {message}")]
    Invalid { origin: String, message: String },
}

/// The config file of the user, if the environment names a home.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("tack").join("config.toml"))
}

/// tack's cache directory (`$XDG_CACHE_HOME/tack`, else `~/.cache/tack`):
/// fetched models and saved prompt caches.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("tack"))
}

pub fn workspace_config_path(root: &Path) -> PathBuf {
    root.join(".tack").join("config.toml")
}

impl Settings {
    /// Loads every layer for a workspace. `user_config` is normally
    /// [`user_config_path`]; `overrides` are (origin, JSON) pairs from the
    /// front end, lowest first, whose relative paths are already absolute.
    pub fn load(user_config: Option<&Path>, root: &Path, overrides: &[(&str, Value)]) -> Result<Settings, ConfigError> {
        let mut merged = Value::Object(Map::new());
        if let Some(user) = user_config {
            let base = user.parent().map(Path::to_path_buf).unwrap_or_default();
            if let Some(layer) = read_toml_layer(user, &base)? {
                merge(&mut merged, layer);
            }
        }
        if let Some(mut layer) = read_toml_layer(&workspace_config_path(root), root)? {
            keep_sandbox_from_loosening(&mut layer);
            merge(&mut merged, layer);
        }
        for (origin, layer) in overrides {
            let mut layer = normalize_keys(layer.clone());
            check(&layer, origin)?;
            strip_nulls(&mut layer);
            merge(&mut merged, layer);
        }
        // Deserializing the merged layers on top of the defaults' own JSON form
        // keeps the defaults in one place: `Default for Settings`.
        let mut full = serde_json::to_value(Settings::default()).unwrap_or(Value::Null);
        strip_nulls(&mut full);
        if let Some(rules) = full.pointer_mut("/permissions/rules") {
            *rules = Value::Array(Vec::new());
        }
        merge(&mut full, merged);
        serde_json::from_value(full)
            .map_err(|e| ConfigError::Invalid { origin: "merged settings".into(), message: e.to_string() })
    }
}

/// A project's own config may tighten the sandbox of its commands, never
/// loosen it: a cloned repository must not be able to switch it off.
fn keep_sandbox_from_loosening(layer: &mut Value) {
    let Some(tools) = layer.get_mut("tools").and_then(Value::as_object_mut) else { return };
    let loosening = [
        ("sandbox", tools.get("sandbox").is_some_and(|mode| mode == "off")),
        ("sandboxNetwork", tools.get("sandboxNetwork").is_some_and(|network| network == true)),
        ("sandboxWritable", tools.contains_key("sandboxWritable")),
    ];
    for (key, loosens) in loosening {
        if loosens {
            tools.remove(key);
            tracing::warn!(
                "ignoring tools.{key} in the project's .tack/config.toml: only the user config may loosen the sandbox"
            );
        }
    }
}

/// Reads one TOML file; a missing file is no layer. Relative model paths are
/// made absolute against `base`.
fn read_toml_layer(path: &Path, base: &Path) -> Result<Option<Value>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ConfigError::Read { path: path.display().to_string(), source }),
    };
    let origin = path.display().to_string();
    let value: Value = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        origin: origin.clone(),
        message: e.to_string().trim().replace('\n', " "),
    })?;
    let mut value = normalize_keys(value);
    check(&value, &origin)?;
    for key in ["/model/path", "/model/script", "/model/tokenizer", "/model/draftModel"] {
        if let Some(Value::String(p)) = value.pointer_mut(key) {
            if Path::new(p.as_str()).is_relative() {
                *p = base.join(&*p).display().to_string();
            }
        }
    }
    Ok(Some(value))
}

/// Rejects unknown keys and wrong types with the layer's origin in the message,
/// so the user learns which file to fix.
fn check(layer: &Value, origin: &str) -> Result<(), ConfigError> {
    let mut full = serde_json::to_value(Settings::default()).unwrap_or(Value::Null);
    strip_nulls(&mut full);
    let mut layer = layer.clone();
    strip_nulls(&mut layer);
    merge(&mut full, layer);
    let invalid = |message: String| ConfigError::Invalid { origin: origin.to_string(), message };
    let settings = serde_json::from_value::<Settings>(full).map_err(|e| invalid(e.to_string()))?;
    for hook in settings.hooks.all() {
        if let Some(matcher) = hook.matcher.as_deref().filter(|m| !m.trim().is_empty() && m.trim() != "*") {
            regex::Regex::new(matcher)
                .map_err(|e| invalid(format!("hook matcher `{matcher}` is not a regular expression: {e}")))?;
        }
        if hook.command.trim().is_empty() {
            return Err(invalid("a hook's command is empty".into()));
        }
    }
    Ok(())
}

fn strip_nulls(value: &mut Value) {
    if let Value::Object(map) = value {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(strip_nulls);
    }
}

/// `max_iterations` -> `maxIterations`, recursively, for object keys only.
fn normalize_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, v)| {
                    let mut out = String::with_capacity(key.len());
                    let mut upper = false;
                    for c in key.chars() {
                        if c == '_' && !out.is_empty() {
                            upper = true;
                        } else if upper {
                            out.extend(c.to_uppercase());
                            upper = false;
                        } else {
                            out.push(c);
                        }
                    }
                    (out, normalize_keys(v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize_keys).collect()),
        other => other,
    }
}

fn merge(base: &mut Value, layer: Value) {
    match (base, layer) {
        (Value::Object(base), Value::Object(layer)) => {
            for (key, value) in layer {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(base), Value::Array(layer)) => base.extend(layer),
        (base, layer) => *base = layer,
    }
}

/// Groups of tools that can be switched off together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSet {
    Read,
    Edit,
    Command,
    Git,
    Web,
    Agent,
    /// The tools of MCP servers.
    Mcp,
}

/// Where a command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// The workspace, the temporary directories and the configured paths.
    #[default]
    WorkspaceWrite,
    /// Nowhere (edits go through the edit tools and their review).
    ReadOnly,
    /// No sandbox: the command can do whatever the user can.
    Off,
}

/// The moments a command hook can be attached to, named as in Claude Code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// Before a call's permission check; may block it, allow it, or rewrite its input.
    PreToolUse,
    /// After a call ran; may give the model feedback on the result.
    PostToolUse,
    /// Before a prompt reaches the model; may block it or add context.
    UserPromptSubmit,
    /// When the model has answered; may send it back to work with a reason.
    Stop,
    /// Before the history is compacted to fit the context window.
    PreCompact,
    /// At a conversation's first turn; may add context.
    SessionStart,
}

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionStart => "SessionStart",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::RuleAction;

    #[test]
    fn a_project_config_may_tighten_the_sandbox_but_not_loosen_it() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("tack")).unwrap();
        std::fs::create_dir_all(root.path().join(".tack")).unwrap();
        let project = root.path().join(".tack/config.toml");
        let user = home.path().join("tack/config.toml");
        std::fs::write(&user, "[tools]\nsandbox_network = false\n").unwrap();
        std::fs::write(&project, "[tools]\nsandbox = \"off\"\nsandbox_network = true\nsandbox_writable = [\"/\"]\n")
            .unwrap();
        let settings = Settings::load(Some(&user), root.path(), &[]).unwrap();
        assert_eq!(settings.tools.sandbox, SandboxMode::WorkspaceWrite);
        assert!(!settings.tools.sandbox_network);
        assert!(settings.tools.sandbox_writable.is_empty());

        std::fs::write(&project, "[tools]\nsandbox = \"read-only\"\nsandbox_hidden = [\"/srv/keys\"]\n").unwrap();
        let settings = Settings::load(Some(&user), root.path(), &[]).unwrap();
        assert_eq!(settings.tools.sandbox, SandboxMode::ReadOnly);
        assert_eq!(settings.tools.sandbox_hidden, vec![PathBuf::from("/srv/keys")]);

        std::fs::write(&user, "[tools]\nsandbox = \"off\"\n").unwrap();
        std::fs::write(&project, "").unwrap();
        let settings = Settings::load(Some(&user), root.path(), &[]).unwrap();
        assert_eq!(settings.tools.sandbox, SandboxMode::Off, "the user may switch it off");
    }

    #[test]
    fn layers_merge_with_later_winning_and_rules_adding_up() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("tack")).unwrap();
        std::fs::write(
            home.path().join("tack/config.toml"),
            "max_iterations = 10\n[[permissions.rules]]\naction = \"deny\"\ntool = \"DeleteFile\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.path().join(".tack")).unwrap();
        std::fs::write(
            root.path().join(".tack/config.toml"),
            "permission_mode = \"plan\"\n[model]\nbackend = \"scripted\"\nscript = \"s.json\"\n[[permissions.rules]]\naction = \"allow\"\ntool = \"Edit\"\n",
        )
        .unwrap();
        let flags = serde_json::json!({"maxIterations": 3, "model": {"contextWindow": null}});
        let user = home.path().join("tack/config.toml");
        let settings = Settings::load(Some(&user), root.path(), &[("command line", flags)]).unwrap();
        assert_eq!(settings.max_iterations, 3);
        assert_eq!(settings.permission_mode, PermissionMode::Plan);
        assert_eq!(settings.model.backend, BackendKind::Scripted);
        assert_eq!(settings.model.script, Some(root.path().join("s.json")));
        let actions: Vec<RuleAction> = settings.permissions.rules.iter().map(|r| r.action).collect();
        assert_eq!(actions, [RuleAction::Deny, RuleAction::Allow]);
    }

    #[test]
    fn pricing_counts_cached_tokens_at_their_own_price() {
        let pricing = Pricing { input_per_million: 3.0, cached_input_per_million: Some(0.3), output_per_million: 15.0 };
        let usage = crate::protocol::Usage {
            prompt_tokens: 1_000_000,
            cached_prompt_tokens: 500_000,
            completion_tokens: 100_000,
            ..Default::default()
        };
        assert!((pricing.cost(&usage) - (1.5 + 0.15 + 1.5)).abs() < 1e-9);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_their_origin() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".tack")).unwrap();
        let file = root.path().join(".tack/config.toml");
        std::fs::write(&file, "max_iterashuns = 3\n").unwrap();
        let err = Settings::load(None, root.path(), &[]).unwrap_err().to_string();
        assert!(err.contains("config.toml") && err.contains("maxIterashuns"), "{err}");
        std::fs::write(&file, "permission_mode = \"yolo\"\n").unwrap();
        let err = Settings::load(None, root.path(), &[]).unwrap_err().to_string();
        assert!(err.contains("yolo"), "{err}");
        std::fs::write(&file, "[model\n").unwrap();
        assert!(Settings::load(None, root.path(), &[]).is_err());
    }
}
