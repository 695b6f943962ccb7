//! The agent's front end over LSP: events become `tack/event` notifications,
//! approvals `tack/approveTool` requests, file changes `workspace/applyEdit`.
//! All of it runs in turn tasks, never in a request handler.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::request::{ApplyWorkspaceEdit, Request};
use tower_lsp_server::ls_types::{ApplyWorkspaceEditParams, MessageType, Uri};

use super::EventNotification;
use super::documents::Documents;
use super::edits::{judge_write, workspace_edit};
use crate::agent::{Approval, ApprovalRequest, Host, Question};
use crate::protocol::lsp::{
    APPROVE_TOOL, ASK_USER, ApproveToolParams, ApproveToolResult, AskUserParams, AskUserResult, EventParams,
    ToolCallInfo,
};
use crate::protocol::{ApprovalDecision, SequencedEvent};
use crate::workspace::Workspace;
use crate::workspace::edits::{EditOutcome, FileChange};

/// How long to wait for the editor's `didChange` after it answered an edit:
/// the answer and the notification may be handled in either order.
const SETTLE: Duration = Duration::from_millis(300);

pub enum AskUser {}

impl Request for AskUser {
    type Params = AskUserParams;
    type Result = AskUserResult;
    const METHOD: &'static str = ASK_USER;
}

pub enum ApproveTool {}

impl Request for ApproveTool {
    type Params = ApproveToolParams;
    type Result = ApproveToolResult;
    const METHOD: &'static str = APPROVE_TOOL;
}

/// A notification the server sends: a `tack/event` or a log message.
pub enum Outgoing {
    Event(Box<EventParams>),
    Log(MessageType, String),
}

/// Notifications in the order made, handed to the client's queue by whoever
/// drains them first: a task that sends them as they come, or a turn about
/// to send a request, so that the request follows the events that explain
/// it. The turn drains them itself rather than waiting for that task, and
/// neither waits for the client's writer to take each one: those waits cost
/// an edit round trip three quarters of a millisecond.
pub struct Outbox {
    client: Client,
    queue: Mutex<VecDeque<Outgoing>>,
    /// Held while draining, so that messages leave in the order queued.
    draining: tokio::sync::Mutex<()>,
    queued: tokio::sync::Notify,
}

impl Outbox {
    /// The outbox and the task that sends what is queued as it comes.
    pub fn start(client: Client) -> Arc<Outbox> {
        let outbox = Arc::new(Outbox {
            client,
            queue: Mutex::new(VecDeque::new()),
            draining: tokio::sync::Mutex::new(()),
            queued: tokio::sync::Notify::new(),
        });
        let sender = outbox.clone();
        tokio::spawn(async move {
            loop {
                sender.drain().await;
                // A permit stored by `notify_one` wakes this even when the
                // message came during the drain.
                sender.queued.notified().await;
            }
        });
        outbox
    }

    pub fn push(&self, message: Outgoing) {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push_back(message);
        self.queued.notify_one();
    }

    /// Hands everything queued so far to the client's queue, in order.
    pub async fn drain(&self) {
        let _draining = self.draining.lock().await;
        loop {
            let next = self.queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            let Some(message) = next else { break };
            let client = self.client.clone();
            let mut send = Box::pin(async move {
                match message {
                    Outgoing::Event(params) => client.send_notification::<EventNotification>(*params).await,
                    Outgoing::Log(kind, text) => client.log_message(kind, text).await,
                }
            });
            // The first poll puts the message in the client's queue (a new
            // sender always has a slot there), which fixes its place; the
            // send then waits until the writer has taken it, which must not
            // hold up the next message or a turn's request: a hop to the
            // writer's thread and back per event.
            if futures::poll!(send.as_mut()).is_pending() {
                tokio::spawn(send);
            }
        }
    }
}

pub struct LspHost {
    pub client: Client,
    pub conversation_id: String,
    /// The turn now running, for the events' `turnId`.
    pub turn_id: Arc<Mutex<String>>,
    pub outbox: Arc<Outbox>,
    pub documents: Arc<Documents>,
}

impl LspHost {
    /// Sends the events emitted so far, so that a request to the client
    /// follows the events that explain it.
    async fn flush(&self) {
        self.outbox.drain().await;
    }

    fn turn_id(&self) -> String {
        self.turn_id.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The open document's text and version, or the file's text on disk.
    fn current(&self, abs: &Path) -> (Option<String>, Option<i32>) {
        match self.documents.snapshot(abs) {
            Some((text, version, _)) => (Some(text), Some(version)),
            None => (std::fs::read_to_string(abs).ok(), None),
        }
    }

    async fn send_edit(
        &self,
        change: &FileChange,
        uri: Uri,
        version: Option<i32>,
        to: Option<Uri>,
    ) -> Result<(), String> {
        let edit = workspace_edit(change, &uri, version, to.as_ref());
        let label = Some(match change {
            FileChange::Write { path, before: None, .. } => format!("tack: create {}", path.rel),
            FileChange::Write { path, .. } => format!("tack: edit {}", path.rel),
            FileChange::Delete { path, .. } => format!("tack: delete {}", path.rel),
            FileChange::Move { from, to } => format!("tack: move {} to {}", from.rel, to.rel),
        });
        let params = ApplyWorkspaceEditParams { label, edit };
        self.flush().await;
        match self.client.send_request::<ApplyWorkspaceEdit>(params).await {
            Ok(response) if response.applied => Ok(()),
            Ok(response) => Err(response.failure_reason.unwrap_or_else(|| "the user rejected the change".into())),
            Err(error) => Err(format!("the editor could not apply the change: {}", error.message)),
        }
    }
}

#[async_trait::async_trait]
impl Host for LspHost {
    fn reviews_edits(&self) -> bool {
        true
    }

    fn emit(&self, event: SequencedEvent) {
        let params = EventParams {
            conversation_id: self.conversation_id.clone(),
            turn_id: self.turn_id(),
            agent_path: event.agent_path,
            seq: event.seq,
            event: event.event,
        };
        self.outbox.push(Outgoing::Event(Box::new(params)));
    }

    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let params = ApproveToolParams {
            conversation_id: self.conversation_id.clone(),
            turn_id: self.turn_id(),
            agent_path: request.agent_path,
            tool_call: ToolCallInfo { id: request.tool_call_id, name: request.name, input: request.input },
            reason: request.reason,
        };
        self.flush().await;
        match self.client.send_request::<ApproveTool>(params).await {
            Ok(result) => Approval::by_user(result.decision),
            Err(error) => Approval {
                decision: ApprovalDecision::Deny,
                source: "editor_error",
                note: Some(format!("the editor could not ask the user ({}); the call did not run", error.message)),
            },
        }
    }

    async fn ask_user(&self, question: Question) -> Result<String, String> {
        let params = AskUserParams {
            conversation_id: self.conversation_id.clone(),
            turn_id: self.turn_id(),
            agent_path: question.agent_path,
            tool_call_id: question.tool_call_id,
            question: question.question,
            choices: question.choices,
        };
        self.flush().await;
        match self.client.send_request::<AskUser>(params).await {
            Ok(AskUserResult { answer: Some(answer) }) => Ok(answer),
            Ok(AskUserResult { answer: None }) => Err("the user dismissed the question".into()),
            Err(error) => Err(format!("the editor could not ask ({})", error.message)),
        }
    }

    async fn apply_edit(&self, _workspace: &Workspace, change: &FileChange) -> EditOutcome {
        let abs = change.path().abs.clone();
        let Some(uri) = Uri::from_file_path(&abs) else {
            return EditOutcome::Rejected { reason: format!("{} has no file URI", abs.display()) };
        };
        let (text, version) = self.current(&abs);
        // The change was computed from a text; if the document moved on since,
        // applying it would undo the user's typing. A move carries no text.
        let stale = match change {
            FileChange::Write { before, .. } => text != *before,
            FileChange::Delete { before, .. } => text.as_ref() != Some(before),
            FileChange::Move { .. } => false,
        };
        if stale {
            return EditOutcome::Rejected {
                reason: format!(
                    "{} changed after the tool read it (the user is editing it); read it again and redo the change",
                    change.path().rel
                ),
            };
        }
        let to = match change {
            FileChange::Move { to, .. } => match Uri::from_file_path(&to.abs) {
                Some(uri) => Some(uri),
                None => return EditOutcome::Rejected { reason: format!("{} has no file URI", to.abs.display()) },
            },
            _ => None,
        };
        if let Err(reason) = self.send_edit(change, uri, version, to).await {
            return EditOutcome::Rejected { reason };
        }
        match change {
            FileChange::Write { before, after, .. } => {
                let before = before.as_deref().unwrap_or("");
                // The editor answers after applying; its didChange may be handled
                // a moment later. Settled: the proposal landed whole, or the open
                // document moved to a new version (some hunks, or none).
                let deadline = tokio::time::Instant::now() + SETTLE;
                let current = loop {
                    // Taken before reading, so a change in between still wakes us.
                    let changed = self.documents.changed();
                    let current = self.current(&abs);
                    let landed = current.0.as_deref() == Some(after.as_str());
                    let new_version = current.1.is_some() && current.1 != version;
                    if landed || new_version || tokio::time::timeout_at(deadline, changed).await.is_err() {
                        break current;
                    }
                };
                let outcome = judge_write(before, after, current.0.as_deref().unwrap_or(""));
                if let EditOutcome::Partial { applied_hunks, .. } = &outcome {
                    if applied_hunks.is_empty() {
                        self.outbox.push(Outgoing::Log(
                            MessageType::WARNING,
                            format!("{}: the editor's text matches no subset of the proposed hunks", change.path().rel),
                        ));
                    }
                }
                outcome
            }
            FileChange::Delete { .. } | FileChange::Move { .. } => EditOutcome::Applied,
        }
    }
}
