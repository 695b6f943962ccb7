//! The agent core's front end over ACP: events become `session/update`
//! notifications, approvals `session/request_permission` requests, file
//! changes `fs/write_text_file` requests (after the user has seen the diff,
//! unless the mode runs everything), and file reads `fs/read_text_file`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Capabilities, Client};
use crate::agent::{Approval, ApprovalRequest, Host, Question};
use crate::protocol::{ApprovalDecision, Event, PermissionMode, SequencedEvent};
use crate::workspace::Workspace;
use crate::workspace::buffers::BufferOverlay;
use crate::workspace::edits::{EditOutcome, FileChange, apply_to_disk};

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct AcpHost {
    client: Arc<Client>,
    session_id: String,
    /// The session's workspace: ACP wants absolute paths.
    root: PathBuf,
    capabilities: Capabilities,
    /// The session's mode, and whether it changed since a turn last took it.
    mode: Mutex<(PermissionMode, bool)>,
    /// The call that proposed the latest change of each file, so that the
    /// diff shows on that call.
    edit_calls: Mutex<HashMap<String, String>>,
    last_error: Mutex<Option<String>>,
}

/// ACP tool call ids are unique per session: a sub-agent's calls carry its path.
fn call_id(agent_path: &[String], id: &str) -> String {
    if agent_path.is_empty() { id.to_string() } else { format!("{}/{id}", agent_path.join("/")) }
}

/// The ACP kind of a tool, which decides its icon in the editor.
fn kind(name: &str) -> &'static str {
    match name {
        "Read" | "ListDir" | "GitDiff" | "GitLog" | "GitShow" | "GitStatus" | "Skill" => "read",
        "Grep" | "Glob" | "WebSearch" => "search",
        "Edit" | "MultiEdit" | "Write" | "Remember" => "edit",
        "DeleteFile" => "delete",
        "Move" => "move",
        "Bash" | "REPL" => "execute",
        "WebFetch" => "fetch",
        "Agent" | "TaskCreate" | "TaskUpdate" | "TaskList" => "think",
        _ => "other",
    }
}

/// "Read greet.py", "Bash cargo test": the tool and its main argument.
fn title(name: &str, input: &Value) -> String {
    let main = ["file_path", "path", "pattern", "command", "url", "query", "description", "source"]
        .iter()
        .find_map(|key| input.get(key).and_then(Value::as_str))
        .map(|text| text.lines().next().unwrap_or("").chars().take(80).collect::<String>());
    match main {
        Some(main) if !main.is_empty() => format!("{name} {main}"),
        _ => name.to_string(),
    }
}

impl AcpHost {
    pub(crate) fn new(
        client: Arc<Client>,
        session_id: String,
        root: PathBuf,
        capabilities: Capabilities,
        mode: PermissionMode,
    ) -> Self {
        AcpHost {
            client,
            session_id,
            root,
            capabilities,
            mode: Mutex::new((mode, false)),
            edit_calls: Mutex::new(HashMap::new()),
            last_error: Mutex::new(None),
        }
    }

    pub(crate) fn set_mode(&self, mode: PermissionMode) {
        *lock(&self.mode) = (mode, true);
    }

    /// The mode set since the last turn began, once.
    pub(crate) fn mode_if_changed(&self) -> Option<PermissionMode> {
        let mut mode = lock(&self.mode);
        let changed = mode.1;
        mode.1 = false;
        changed.then_some(mode.0)
    }

    /// The last error the turn reported, for the prompt's error reply.
    pub(crate) fn last_error(&self) -> Option<String> {
        lock(&self.last_error).take()
    }

    fn runs_everything(&self) -> bool {
        lock(&self.mode).0 == PermissionMode::AutoAll
    }

    fn update(&self, update: Value) {
        self.client.notify("session/update", json!({"sessionId": self.session_id, "update": update}));
    }

    /// Asks the user, showing `tool_call`; `true` when allowed.
    async fn permission(&self, tool_call: Value, always: bool) -> Result<ApprovalDecision, String> {
        let mut options = vec![json!({"optionId": "allow", "name": "Allow", "kind": "allow_once"})];
        if always {
            options.push(json!({"optionId": "always", "name": "Always allow", "kind": "allow_always"}));
        }
        options.push(json!({"optionId": "deny", "name": "Deny", "kind": "reject_once"}));
        let answer = self
            .client
            .request(
                "session/request_permission",
                json!({"sessionId": self.session_id, "toolCall": tool_call, "options": options}),
            )
            .await?;
        let outcome = &answer["outcome"];
        Ok(match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
            (Some("selected"), Some("allow")) => ApprovalDecision::Allow,
            (Some("selected"), Some("always")) => ApprovalDecision::AllowAlways,
            _ => ApprovalDecision::Deny,
        })
    }

    async fn write(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        match change {
            FileChange::Write { path, after, .. } if self.capabilities.write_text_file => {
                // Folders the client may not create.
                if let Some(parent) = path.abs.parent()
                    && let Err(error) = std::fs::create_dir_all(parent)
                {
                    return EditOutcome::Rejected { reason: format!("cannot create {}: {error}", parent.display()) };
                }
                let params = json!({"sessionId": self.session_id, "path": path.abs, "content": after});
                match self.client.request("fs/write_text_file", params).await {
                    Ok(_) => EditOutcome::Applied,
                    Err(error) => {
                        EditOutcome::Rejected { reason: format!("the editor could not write the file: {error}") }
                    }
                }
            }
            _ => apply_to_disk(workspace, change),
        }
    }
}

/// A change as ACP shows it: a diff of the file's text.
fn diff_content(change: &FileChange) -> Value {
    match change {
        FileChange::Write { path, before, after } => {
            json!({"type": "diff", "path": path.abs, "oldText": before, "newText": after})
        }
        FileChange::Delete { path, before } => {
            json!({"type": "diff", "path": path.abs, "oldText": before, "newText": ""})
        }
        FileChange::Move { from, to } => json!({"type": "content", "content": {"type": "text",
            "text": format!("move {} to {}", from.display(), to.display())}}),
    }
}

#[async_trait]
impl Host for AcpHost {
    fn emit(&self, sequenced: SequencedEvent) {
        let path = &sequenced.agent_path;
        match sequenced.event {
            Event::Text { text } if path.is_empty() => {
                self.update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}));
            }
            // What a sub-agent writes is its own thinking, as far as the user is concerned.
            Event::Text { text } | Event::Thought { text } => {
                self.update(json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}));
            }
            Event::ToolCall { tool_call_id, name, input } => {
                let mut update = json!({
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id(path, &tool_call_id),
                    "title": title(&name, &input),
                    "kind": kind(&name),
                    "status": "pending",
                    "rawInput": input,
                });
                if let Some(file) = input.get("file_path").and_then(Value::as_str) {
                    update["locations"] = json!([{"path": self.root.join(file)}]);
                }
                self.update(update);
            }
            Event::EditProposed { tool_call_id, path: file, .. } => {
                lock(&self.edit_calls).insert(file, call_id(path, &tool_call_id));
            }
            Event::ToolResult { tool_call_id, is_error, output, .. } => {
                self.update(json!({
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id(path, &tool_call_id),
                    "status": if is_error { "failed" } else { "completed" },
                    "content": [{"type": "content", "content": {"type": "text", "text": output}}],
                }));
            }
            Event::Error { message } if path.is_empty() => {
                *lock(&self.last_error) = Some(message);
            }
            _ => {}
        }
    }

    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let id = call_id(&request.agent_path, &request.tool_call_id);
        let tool_call = json!({
            "toolCallId": id,
            "title": format!("{} — {}", title(&request.name, &request.input), request.reason),
            "kind": kind(&request.name),
            "status": "pending",
            "rawInput": request.input,
        });
        match self.permission(tool_call, true).await {
            Ok(decision) => Approval::by_user(decision),
            Err(error) => Approval {
                decision: ApprovalDecision::Deny,
                source: "user",
                note: Some(format!("the editor did not answer the permission request: {error}")),
            },
        }
    }

    async fn ask_user(&self, _question: Question) -> Result<String, String> {
        Err("this editor (ACP) cannot put questions to the user: decide, or ask in your answer".into())
    }

    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        let id = lock(&self.edit_calls).get(&change.path().rel).cloned();
        let content = diff_content(change);
        if let Some(id) = &id {
            self.update(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "content": [content.clone()]}));
        }
        if !self.runs_everything() {
            let tool_call = json!({
                "toolCallId": id.clone().unwrap_or_else(|| format!("edit:{}", change.path().rel)),
                "title": format!("Change {}", change.path().display()),
                "kind": "edit",
                "status": "pending",
                "content": [content],
            });
            match self.permission(tool_call, false).await {
                Ok(ApprovalDecision::Allow | ApprovalDecision::AllowAlways) => {}
                Ok(ApprovalDecision::Deny) => {
                    return EditOutcome::Rejected { reason: "the user rejected the change".into() };
                }
                Err(error) => return EditOutcome::Rejected { reason: format!("no answer from the editor: {error}") },
            }
        }
        self.write(workspace, change).await
    }

    /// Every change is shown as a diff and asked about, unless the mode
    /// runs everything: then no separate approval is needed.
    fn reviews_edits(&self) -> bool {
        !self.runs_everything()
    }
}

/// The editor's buffers, read through `fs/read_text_file`: what the agent
/// reads is what the user sees, unsaved changes included. ACP says nothing
/// of which documents are open, so searches over the tree read the disk.
pub(crate) struct AcpBuffers {
    client: Arc<Client>,
    session_id: String,
    runtime: tokio::runtime::Handle,
}

impl AcpBuffers {
    pub(crate) fn new(client: Arc<Client>, session_id: String, runtime: tokio::runtime::Handle) -> Self {
        AcpBuffers { client, session_id, runtime }
    }
}

impl BufferOverlay for AcpBuffers {
    fn read(&self, abs: &Path) -> Option<String> {
        let request = self.client.request("fs/read_text_file", json!({"sessionId": self.session_id, "path": abs}));
        // Tools read synchronously; the answer comes through the async
        // reader, which runs on another worker meanwhile.
        let answer = match tokio::runtime::Handle::try_current() {
            Ok(_) => tokio::task::block_in_place(|| self.runtime.block_on(request)),
            Err(_) => self.runtime.block_on(request),
        };
        answer.ok()?.get("content")?.as_str().map(str::to_string)
    }

    fn read_for_search(&self, _abs: &Path) -> Option<String> {
        None
    }

    fn open_paths(&self) -> Vec<PathBuf> {
        Vec::new()
    }
}
