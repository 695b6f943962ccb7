//! Wire types shared by every front end: messages, events, stop reasons, usage.
//!
//! Everything here is serialized the same way on every channel: LSP
//! notifications, `tack run --json-events` lines and session files. Field
//! names are camelCase, event `kind` values snake_case. Changing a name here
//! changes the protocol: `docs/protocol.md` must change with it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Block {
    Text {
        text: String,
    },
    Thought {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        output: String,
        is_error: bool,
        /// The one line that compaction keeps of this result.
        summary: String,
    },
}

/// A message of the conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub blocks: Vec<Block>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message { role: Role::User, blocks: vec![Block::Text { text: text.into() }] }
    }

    /// The concatenated text blocks, without thoughts or tool traffic.
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|block| match block {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.blocks.iter().filter_map(|block| match block {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without calling a tool.
    EndTurn,
    /// The iteration limit was reached while the model still called tools.
    MaxIterations,
    Cancelled,
    Error,
    /// The model kept repeating itself after being warned.
    LoopDetected,
}

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    /// Read-only tools only: the others are hidden from the prompt, left out of
    /// the tool list and refused at run time.
    Plan,
    /// Every write or execute call asks, every time: allow rules and remembered
    /// "always allow" answers do not skip the question.
    Ask,
    /// Read-only tools run; write and execute tools ask unless a rule or a
    /// remembered answer allows them.
    #[default]
    AutoRead,
    /// Nothing asks. Sensitive paths and deny rules still refuse.
    AutoAll,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 4] =
        [PermissionMode::Plan, PermissionMode::Ask, PermissionMode::AutoRead, PermissionMode::AutoAll];

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Plan => "plan",
            PermissionMode::Ask => "ask",
            PermissionMode::AutoRead => "auto_read",
            PermissionMode::AutoAll => "auto_all",
        }
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == s)
            .ok_or_else(|| format!("unknown permission mode `{s}`: expected one of plan, ask, auto_read, auto_all"))
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Token and time accounting, per generation or summed over a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    /// Prompt tokens served from the backend's cache instead of evaluated.
    pub cached_prompt_tokens: u64,
    pub completion_tokens: u64,
    pub prompt_eval_ms: u64,
    pub decode_ms: u64,
    /// What the tokens cost, in US dollars, when a price table is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Tokens speculative decoding proposed, and those of them the model
    /// kept (each kept token saves a forward pass).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drafted_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub accepted_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Sums saturate: usage read back from a session file can hold any number,
/// and summing it must not panic.
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.cached_prompt_tokens = self.cached_prompt_tokens.saturating_add(other.cached_prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.prompt_eval_ms = self.prompt_eval_ms.saturating_add(other.prompt_eval_ms);
        self.decode_ms = self.decode_ms.saturating_add(other.decode_ms);
        self.drafted_tokens = self.drafted_tokens.saturating_add(other.drafted_tokens);
        self.accepted_tokens = self.accepted_tokens.saturating_add(other.accepted_tokens);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// What the agent is doing, for status bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    Idle,
    Thinking,
    RunningTool,
}

/// The answer to a permission question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalDecision {
    Allow,
    Deny,
    /// Allow, and do not ask again for this tool in this conversation.
    AllowAlways,
}

/// Everything a turn reports, in order. One enum for every front end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Event {
    TurnStarted {
        prompt: String,
    },
    /// A delta of assistant text.
    Text {
        text: String,
    },
    Thought {
        text: String,
    },
    ToolCall {
        tool_call_id: String,
        name: String,
        input: Value,
    },
    PermissionRequest {
        tool_call_id: String,
        name: String,
        reason: String,
    },
    PermissionDecision {
        tool_call_id: String,
        decision: ApprovalDecision,
        /// Who decided: `rule`, `mode`, `remembered`, `user`, `sensitive_path`, `no_terminal`, `hook`.
        source: String,
    },
    ToolResult {
        tool_call_id: String,
        name: String,
        is_error: bool,
        output: String,
        summary: String,
    },
    EditProposed {
        tool_call_id: String,
        path: String,
        /// Unified diff of the proposed change.
        diff: String,
    },
    EditApplied {
        tool_call_id: String,
        path: String,
    },
    EditRejected {
        tool_call_id: String,
        path: String,
        reason: String,
    },
    /// Files the prompt names, shown to the model with it.
    FilesAttached {
        paths: Vec<String>,
    },
    ContextUsage {
        used_tokens: u64,
        context_window: u64,
    },
    Compaction {
        tokens_before: u64,
        tokens_after: u64,
    },
    LoopDetected {
        description: String,
    },
    /// A command hook ran.
    Hook {
        /// `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, `PreCompact` or `SessionStart`.
        event: String,
        command: String,
        outcome: HookOutcome,
        /// The exit code, when the command exited by itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        duration_ms: u64,
        /// The reason given for a decision, or what went wrong.
        message: String,
    },
    Retry {
        attempt: u32,
        delay_ms: u64,
        error: String,
    },
    SubagentStarted {
        agent_id: String,
        description: String,
    },
    SubagentFinished {
        agent_id: String,
        stop_reason: StopReason,
    },
    Status {
        status: AgentStatus,
    },
    /// Usage of one generation.
    Usage {
        usage: Usage,
    },
    Error {
        message: String,
    },
    TurnFinished {
        stop_reason: StopReason,
        /// The assistant's final text.
        text: String,
        /// Usage summed over the turn.
        usage: Usage,
    },
}

impl Event {
    pub fn kind(&self) -> &'static str {
        match self {
            Event::TurnStarted { .. } => "turn_started",
            Event::Text { .. } => "text",
            Event::Thought { .. } => "thought",
            Event::ToolCall { .. } => "tool_call",
            Event::PermissionRequest { .. } => "permission_request",
            Event::PermissionDecision { .. } => "permission_decision",
            Event::ToolResult { .. } => "tool_result",
            Event::EditProposed { .. } => "edit_proposed",
            Event::EditApplied { .. } => "edit_applied",
            Event::EditRejected { .. } => "edit_rejected",
            Event::FilesAttached { .. } => "files_attached",
            Event::ContextUsage { .. } => "context_usage",
            Event::Compaction { .. } => "compaction",
            Event::LoopDetected { .. } => "loop_detected",
            Event::Hook { .. } => "hook",
            Event::Retry { .. } => "retry",
            Event::SubagentStarted { .. } => "subagent_started",
            Event::SubagentFinished { .. } => "subagent_finished",
            Event::Status { .. } => "status",
            Event::Usage { .. } => "usage",
            Event::Error { .. } => "error",
            Event::TurnFinished { .. } => "turn_finished",
        }
    }
}

/// How a command hook's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// Exited 0: the step goes on (possibly with the hook's changes).
    Ok,
    /// The hook stopped the step (exit 2, or a blocking decision).
    Blocked,
    /// It failed otherwise; reported, and the step goes on.
    Error,
    /// It ran past its timeout and was killed; the step goes on.
    TimedOut,
    /// The turn was cancelled while it ran; it was killed.
    Cancelled,
}

/// An event as it leaves the agent: numbered without gaps per conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequencedEvent {
    pub seq: u64,
    /// Empty for the main agent; otherwise the names of the nested sub-agents,
    /// outermost first.
    #[serde(rename = "agentPath", default, skip_serializing_if = "Vec::is_empty")]
    pub agent_path: Vec<String>,
    #[serde(flatten)]
    pub event: Event,
}

/// The `tack/*` methods of the LSP extension, their parameters and results.
/// `docs/protocol.md` shows each with an example.
pub mod lsp {
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    use super::{ApprovalDecision, Event, Message, PermissionMode};

    pub const NEW_CONVERSATION: &str = "tack/newConversation";
    pub const TURN: &str = "tack/turn";
    pub const CANCEL: &str = "tack/cancel";
    pub const SESSIONS: &str = "tack/sessions";
    pub const RESUME: &str = "tack/resume";
    pub const SET_PERMISSION_MODE: &str = "tack/setPermissionMode";
    pub const EVENT: &str = "tack/event";
    pub const APPROVE_TOOL: &str = "tack/approveTool";
    pub const ASK_USER: &str = "tack/askUser";
    /// The command behind tack's code actions (`workspace/executeCommand`).
    pub const CODE_ACTION_COMMAND: &str = "tack.codeAction";

    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct NewConversationParams {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub permission_mode: Option<PermissionMode>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ConversationCreated {
        pub conversation_id: String,
    }

    /// Where the user was when asking: a document and maybe a selection.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct TurnContext {
        pub uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub range: Option<Value>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct TurnParams {
        pub conversation_id: String,
        pub prompt: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub context: Option<TurnContext>,
        /// What the user attached to the prompt (files, selections, diagnostics).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub attachments: Vec<TurnAttachment>,
    }

    /// Something the user attached to a prompt: a whole file, a range of it,
    /// or the diagnostics the editor shows for it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct TurnAttachment {
        pub uri: String,
        /// An LSP range: only these lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub range: Option<Value>,
        /// LSP diagnostics of the document, attached instead of its text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub diagnostics: Vec<Value>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TurnStarted {
        pub turn_id: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct ConversationParams {
        pub conversation_id: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct ResumeParams {
        pub session_id: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Resumed {
        pub conversation_id: String,
        pub messages: Vec<Message>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionInfo {
        pub session_id: String,
        pub title: String,
        pub updated_at: String,
        pub message_count: usize,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct SetPermissionModeParams {
        pub conversation_id: String,
        pub permission_mode: PermissionMode,
    }

    /// `tack/event`: one event of a conversation.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct EventParams {
        pub conversation_id: String,
        pub turn_id: String,
        pub agent_path: Vec<String>,
        pub seq: u64,
        pub event: Event,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ToolCallInfo {
        pub id: String,
        pub name: String,
        pub input: Value,
    }

    /// `tack/approveTool`: may a tool call run?
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ApproveToolParams {
        pub conversation_id: String,
        pub turn_id: String,
        pub agent_path: Vec<String>,
        pub tool_call: ToolCallInfo,
        pub reason: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ApproveToolResult {
        pub decision: ApprovalDecision,
    }

    /// `tack/askUser`: the model's question to the user (the AskUser tool).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AskUserParams {
        pub conversation_id: String,
        pub turn_id: String,
        pub agent_path: Vec<String>,
        pub tool_call_id: String,
        pub question: String,
        /// Answers to pick from; empty for a free answer.
        pub choices: Vec<String>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AskUserResult {
        /// `null` when the user dismissed the question.
        pub answer: Option<String>,
    }

    /// What a code action asks of a sub-agent.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CodeActionTask {
        Ask,
        Fix,
        Explain,
        WriteTests,
    }

    /// The argument of the `tack.codeAction` command.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CodeActionArgs {
        pub action: CodeActionTask,
        pub uri: String,
        pub range: Value,
        /// The diagnostics the action was offered for.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub diagnostics: Vec<Value>,
        /// The user's question, for `ask`; the client fills it in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub prompt: Option<String>,
        /// The conversation to report under; a new one when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conversation_id: Option<String>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CodeActionStarted {
        pub conversation_id: String,
        pub turn_id: String,
    }
}

/// What a tool may do, which decides whether it needs approval and whether it
/// may run in parallel with its neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Never needs approval; may run in parallel with other read-only calls.
    ReadOnly,
    /// Changes files: goes through the front end's edit path.
    Edit,
    /// Runs programs or reaches outside the workspace.
    Execute,
    /// Hands work to a nested agent whose own calls are gated one by one: the
    /// hand-over itself needs no approval and may run beside other calls.
    Delegate,
    /// Reads from the network: changes nothing, so plan mode keeps it, but
    /// asks per host (the call's `command`) outside `auto_all`.
    Network,
}

impl ToolKind {
    /// Whether a call of this kind is put to the user outside `auto_all`.
    pub fn asks(self) -> bool {
        matches!(self, ToolKind::Edit | ToolKind::Execute | ToolKind::Network)
    }

    /// Whether a call of this kind may change something: plan mode runs none.
    pub fn changes_things(self) -> bool {
        matches!(self, ToolKind::Edit | ToolKind::Execute)
    }
}

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}
