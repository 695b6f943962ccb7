//! The harness core: conversations, the turn loop, sessions, prompts, hooks.
//!
//! API boundary: the agent knows nothing of LSP, llama.cpp or terminals. It
//! talks to the outside through traits: [`ModelBackend`](crate::model::ModelBackend)
//! for the model, [`Tool`](crate::tools::Tool) for tools, and [`Host`] for the
//! front end (events out, approvals and edits in).

mod attach;
mod budget;
mod build_check;
mod code_check;
mod code_text;
pub mod context;
pub mod guard;
pub mod hooks;
mod inline;
mod kept;
mod pipeline;
pub mod prompt;
mod repetition;
mod rewrite;
pub mod servers;
pub mod session;
mod subagent;
mod tests_run;
mod turn;
mod whole_file;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::model::ModelBackend;
use crate::permissions::Policy;
use crate::protocol::{ApprovalDecision, Event, Message, Role, SequencedEvent, StopReason, Usage};
use crate::tools::task::Task;
use crate::tools::{ConversationState, ToolRegistry};
use crate::workspace::Workspace;
use crate::workspace::edits::{EditOutcome, FileChange};

pub use hooks::{HookCall, ToolHook};
pub use session::{SessionStore, SessionWriter};

/// A tool call waiting for the user's yes or no.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub tool_call_id: String,
    pub name: String,
    pub input: Value,
    /// Why the question is asked, e.g. "Edit changes the workspace".
    pub reason: String,
    /// The sub-agent asking; empty for the main agent.
    pub agent_path: Vec<String>,
}

/// A question the model puts to the user (the AskUser tool).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub tool_call_id: String,
    /// The sub-agent asking; empty for the main agent.
    pub agent_path: Vec<String>,
    pub question: String,
    /// Answers to pick from; empty for a free answer.
    pub choices: Vec<String>,
}

/// The user's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub decision: ApprovalDecision,
    /// Who answered: `user`, or why nobody could (`no_terminal`).
    pub source: &'static str,
    /// Told to the model with a denial, e.g. how the user can allow the call.
    pub note: Option<String>,
}

impl Approval {
    pub fn by_user(decision: ApprovalDecision) -> Approval {
        Approval { decision, source: "user", note: None }
    }
}

/// The front end, as the agent sees it. `lsp/` and `cli/` implement it.
#[async_trait]
pub trait Host: Send + Sync {
    /// Receives every event, in `seq` order. Must not block.
    fn emit(&self, event: SequencedEvent);
    /// Asks the user about a tool call. May wait as long as the user does;
    /// the turn stays cancellable meanwhile.
    async fn approve(&self, request: ApprovalRequest) -> Approval;
    /// Puts a question to the user and waits for the answer; `Err` says why
    /// there is none. The turn stays cancellable meanwhile.
    async fn ask_user(&self, _question: Question) -> Result<String, String> {
        Err("this front end cannot ask the user questions".into())
    }
    /// Carries out (or proposes) a file change and says how it ended.
    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome;
    /// Whether the user reviews every file change as a diff in `apply_edit`
    /// (an editor does). Edits then need no separate approval: the diff is it.
    fn reviews_edits(&self) -> bool {
        false
    }
}

/// Numbers events without gaps, in the order the host receives them. The
/// sinks of a conversation's sub-agents share its numbering.
pub(crate) struct EventSink {
    host: Arc<dyn Host>,
    /// The last `seq` handed out. Held while emitting, so that concurrent
    /// emitters (parallel tools, parallel sub-agents) cannot deliver out of order.
    seq: Arc<Mutex<u64>>,
    agent_path: Vec<String>,
}

impl EventSink {
    fn new(host: Arc<dyn Host>) -> Self {
        EventSink { host, seq: Arc::new(Mutex::new(0)), agent_path: Vec::new() }
    }

    /// The sink of a sub-agent named `name`, numbered with this one.
    fn child(&self, name: &str) -> EventSink {
        let mut agent_path = self.agent_path.clone();
        agent_path.push(name.to_string());
        EventSink { host: self.host.clone(), seq: self.seq.clone(), agent_path }
    }

    pub(crate) fn emit(&self, event: Event) {
        let mut seq = self.seq.lock().unwrap_or_else(|e| e.into_inner());
        *seq += 1;
        self.host.emit(SequencedEvent { seq: *seq, agent_path: self.agent_path.clone(), event });
    }

    pub(crate) fn host(&self) -> &Arc<dyn Host> {
        &self.host
    }
}

/// Limits and pacing of the turn loop.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    pub max_iterations: u32,
    /// How often a transient model error is retried before the turn fails.
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further one.
    pub retry_base_delay: Duration,
    /// Overrides the backend's context window (e.g. to test compaction).
    pub context_window: Option<usize>,
    pub context: context::ContextSettings,
    /// Prices for the cost in usage reports; `None` reports no cost.
    pub pricing: Option<crate::config::Pricing>,
    /// How deep sub-agents may nest: the main agent is depth 0, and an Agent
    /// call at this depth is refused.
    pub max_agent_depth: u32,
    /// The user's command hooks.
    pub hooks: crate::config::HookSettings,
    pub pipeline: crate::config::PipelineSettings,
    pub checks: crate::config::CheckSettings,
}

impl Default for LoopSettings {
    fn default() -> Self {
        LoopSettings {
            max_iterations: 40,
            max_retries: 3,
            retry_base_delay: Duration::from_millis(500),
            context_window: None,
            context: context::ContextSettings::default(),
            pricing: None,
            max_agent_depth: 3,
            hooks: Default::default(),
            pipeline: Default::default(),
            checks: Default::default(),
        }
    }
}

impl From<&crate::config::Settings> for LoopSettings {
    fn from(settings: &crate::config::Settings) -> Self {
        LoopSettings {
            max_iterations: settings.max_iterations,
            max_retries: settings.max_retries,
            retry_base_delay: Duration::from_millis(settings.retry_delay_ms),
            context_window: settings.model.context_window,
            context: settings.context.clone(),
            pricing: settings.model.pricing,
            max_agent_depth: settings.max_agent_depth,
            hooks: settings.hooks.clone(),
            pipeline: settings.pipeline.clone(),
            checks: settings.checks.clone(),
        }
    }
}

/// How a turn ended: what `turn_finished` carries.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    pub stop_reason: StopReason,
    pub text: String,
    pub usage: Usage,
}

/// A test of a reply streamed so far: whether it holds all that is needed.
pub(crate) type ReplyDone = std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Everything a conversation is built from.
pub struct ConversationParts {
    pub backend: Arc<dyn ModelBackend>,
    pub tools: Arc<ToolRegistry>,
    pub workspace: Arc<Workspace>,
    pub host: Arc<dyn Host>,
    pub policy: Policy,
    pub settings: LoopSettings,
    /// Where messages are persisted; `None` keeps the conversation in memory.
    pub session: Option<SessionWriter>,
    /// History to continue from (a resumed session).
    pub history: Vec<Message>,
    /// The task list to continue from (a resumed session).
    pub tasks: Vec<Task>,
}

/// One conversation: its history, permission state and event numbering.
/// Turns run one at a time (`&mut self`); conversations are independent.
pub struct Conversation {
    backend: Arc<dyn ModelBackend>,
    tools: Arc<ToolRegistry>,
    workspace: Arc<Workspace>,
    events: EventSink,
    policy: Policy,
    settings: LoopSettings,
    hooks: Vec<Arc<dyn ToolHook>>,
    history: Vec<Message>,
    session: Option<SessionWriter>,
    /// Source of tool call ids, unique within the conversation.
    next_call: u64,
    /// Set once a persistence failure has been reported, to report it once.
    session_failed: bool,
    /// Token count of each history message, filled as messages arrive:
    /// a long history is not tokenized again every iteration.
    token_counts: Vec<usize>,
    /// (summarized, omitted) of the last compaction reported, so an
    /// unchanged compaction is not reported again every iteration.
    last_compaction: Option<(usize, usize)>,
    /// Tokens of the last prompt built, as counted for the context gauge:
    /// the prompt size of a generation cut short, which reports no usage.
    last_prompt_tokens: usize,
    /// The tools' per-conversation state: interpreters, task list.
    state: ConversationState,
    /// The task list revision last saved to the session.
    saved_tasks: u64,
    /// 0 for the main agent; one more for each level of sub-agent.
    depth: u32,
    /// Rules and file snapshot shown before the first message; taken at the
    /// first turn.
    workspace_context: Option<String>,
    /// Lookups (tool and input) made this turn since the last call that could
    /// change the workspace; see `turn::repeated_lookup`.
    lookups_since_change: std::collections::HashSet<String>,
    /// The user's command hooks, when any are configured.
    command_hooks: Option<Arc<hooks::CommandHooks>>,
    /// Whether SessionStart hooks have run for this conversation.
    session_started: bool,
    /// Rules files of subfolders already shown to the model.
    /// (A lock: results are finished while the batch's futures still borrow the conversation.)
    rules_shown: std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
    /// The prompt of this turn carries the files it names (see `attach`).
    prompt_carries_files: bool,
    /// The files this turn hands the model, which takes whole files back
    /// instead of being offered tools (see `whole_file`); `None` on a turn
    /// with tools.
    whole_file_selection: Option<whole_file::Selection>,
    /// This turn goes through the real-project pipeline (see `pipeline`).
    pipeline_turn: bool,
    /// What the pipeline settled when it handed its turn to the whole-file
    /// way: where the history stood (what it recorded since is kept out of
    /// that way's asks), and for a question the model's word and its run.
    from_pipeline: Option<whole_file::FromPipeline>,
    /// The workspace's definitions, kept current across turns.
    code_map: crate::codemap::CodeMap,
    /// The model's guess at the code's own names for what this turn's
    /// request speaks of, which the pipeline ranks by with the request's
    /// words (see `codemap::rank::rank_hinted`); empty until it guessed.
    code_names: String,
    /// Set while a step asks the model to choose: the reply is one of these.
    reply_choices: Vec<String>,
    /// The next replies' bound in tokens, where the pipeline asks for
    /// something short; `None` leaves the backend's.
    reply_max_tokens: Option<u32>,
    /// The next reply's first words, written for the model (see
    /// `CompletionRequest::reply_prefix`).
    reply_prefix: Option<String>,
    /// Whether the next reply, as streamed so far, holds all that is
    /// needed of it: it stops there (a version that has rejoined the code
    /// it rewrites needs none of the rest copied).
    reply_done: Option<ReplyDone>,
    /// Set while the whole-file way tries afresh a request that greedy
    /// decoding answered with no change: the try's number (see
    /// `CompletionRequest::resample`).
    resample: Option<u32>,
    /// What this turn may still spend on model calls the harness makes
    /// (the whole-file way's asks and the pipeline's), reset with each turn.
    budget: budget::Budget,
    /// A change was made since the configured tests last ran this turn.
    untested_change: bool,
    /// Runs of the configured tests this turn may still make.
    test_runs_left: u32,
    /// The files changed this turn since the language's checker last ran.
    unbuilt_changes: Vec<String>,
    /// Runs of the language's checker this turn may still make.
    build_checks_left: u32,
    /// The workspace's copy the harness's own commands run in (checks,
    /// examples, the project's tests, the checker), made at the first.
    mirror: Option<crate::workspace::mirror::Mirror>,
}

impl Conversation {
    pub fn new(parts: ConversationParts) -> Conversation {
        let next_call = parts.history.iter().flat_map(|m| m.tool_uses()).count() as u64;
        let command_hooks = Some(hooks::CommandHooks::new(parts.settings.hooks.clone(), parts.workspace.root().into()))
            .filter(|hooks| !hooks.is_empty())
            .map(Arc::new);
        let budget = budget::Budget::new(&parts.settings.pipeline);
        Conversation {
            budget,
            backend: parts.backend,
            tools: parts.tools,
            workspace: parts.workspace,
            events: EventSink::new(parts.host),
            policy: parts.policy,
            settings: parts.settings,
            hooks: Vec::new(),
            history: parts.history,
            session: parts.session,
            next_call,
            session_failed: false,
            token_counts: Vec::new(),
            last_compaction: None,
            last_prompt_tokens: 0,
            state: ConversationState::with_tasks(parts.tasks),
            saved_tasks: 0,
            depth: 0,
            workspace_context: None,
            lookups_since_change: Default::default(),
            command_hooks,
            session_started: false,
            rules_shown: Default::default(),
            prompt_carries_files: false,
            whole_file_selection: None,
            pipeline_turn: false,
            from_pipeline: None,
            code_map: Default::default(),
            reply_choices: Vec::new(),
            reply_max_tokens: None,
            reply_prefix: None,
            reply_done: None,
            code_names: String::new(),
            resample: None,
            untested_change: false,
            test_runs_left: tests_run::MAX_CONFIGURED_TEST_RUNS,
            unbuilt_changes: Vec::new(),
            build_checks_left: build_check::MAX_BUILD_CHECKS,
            mirror: None,
        }
    }

    /// `results` of commands run in the workspace's copy, read as the workspace's
    /// own: the copy's paths (a traceback's files) read as the project's,
    /// which is what the model and the readings of a run are about.
    pub(in crate::agent) fn as_workspace_output(&self, results: &mut [crate::protocol::Block]) {
        let Some(mirror) = &self.mirror else { return };
        let copy = mirror.path().display().to_string();
        let root = self.workspace.root().display().to_string();
        for block in results {
            if let crate::protocol::Block::ToolResult { output, .. } = block {
                if output.contains(&copy) {
                    *output = output.replace(&copy, &root);
                }
            }
        }
    }

    /// `command` as it runs in the workspace's copy, the copy brought in
    /// step with the workspace (and the editor's unsaved documents) first:
    /// what the harness runs to learn about the code never runs in the
    /// user's project, so whatever the run writes stays out of it. `Err`
    /// says why no copy could be made.
    pub(in crate::agent) fn in_copy(&mut self, command: &str) -> Result<String, String> {
        if self.mirror.is_none() {
            let made = crate::workspace::mirror::Mirror::new();
            self.mirror = Some(made.map_err(|e| format!("cannot make a copy of the workspace to run in: {e}"))?);
        }
        let Some(mirror) = self.mirror.as_mut() else { unreachable!("made above") };
        mirror
            .sync(self.workspace.root(), self.workspace.overlay())
            .map_err(|e| format!("cannot bring the workspace's copy up to date: {e}"))?;
        let copy = crate::tools::mcp::shell_word(&mirror.path().display().to_string());
        // A crate's build in a fresh copy would compile every dependency
        // again: its builds share one folder per workspace, kept between
        // conversations, out of the project (the user's own setting wins).
        let root = self.workspace.root().display().to_string();
        let target =
            std::env::temp_dir().join(format!("tack-cargo-target-{:016x}", crate::text::fnv1a(root.as_bytes())));
        let target = crate::tools::mcp::shell_word(&target.display().to_string());
        Ok(format!("export CARGO_TARGET_DIR=\"${{CARGO_TARGET_DIR:-{target}}}\"; cd {copy} && {command}"))
    }

    /// The task list, as the task tools left it.
    pub fn tasks(&self) -> Vec<Task> {
        self.state.tasks()
    }

    pub fn add_hook(&mut self, hook: Arc<dyn ToolHook>) {
        self.hooks.push(hook);
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session.as_ref().map(SessionWriter::id)
    }

    pub fn policy_mut(&mut self) -> &mut Policy {
        &mut self.policy
    }

    /// Appends a message to the history and the session file.
    fn record(&mut self, message: Message) {
        self.record_with_usage(message, None);
    }

    /// Appends the model's reply as its generation wrote it, with its usage.
    fn record_reply(&mut self, generation: turn::Generation) {
        self.record_with_usage(Message { role: Role::Assistant, blocks: generation.blocks }, Some(generation.usage));
    }

    /// Appends an assistant message with the usage of the generation that wrote it.
    fn record_with_usage(&mut self, message: Message, usage: Option<Usage>) {
        if let Some(session) = &mut self.session {
            if let Err(error) = session.append(&message, usage.as_ref()) {
                self.report_session_error(error);
            }
        }
        self.history.push(message);
    }

    /// Saves the task list to the session when a tool changed it.
    fn save_tasks_if_changed(&mut self) {
        let revision = self.state.tasks_revision();
        if revision == self.saved_tasks {
            return;
        }
        self.saved_tasks = revision;
        if let Some(session) = &mut self.session {
            if let Err(error) = session.append_tasks(&self.state.tasks()) {
                self.report_session_error(error);
            }
        }
    }

    /// Tells the user once that the session is not being saved; logs every failure.
    fn report_session_error(&mut self, error: session::SessionError) {
        tracing::error!(%error, "cannot persist the session");
        if !self.session_failed {
            self.session_failed = true;
            self.events.emit(Event::Error { message: format!("session not saved: {error}") });
        }
    }
}
