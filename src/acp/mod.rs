//! `tack acp`: the Agent Client Protocol (v1) on stdio, for editors that
//! speak it (Zed, and the ACP clients of Neovim and Emacs). The same agent
//! core as `tack lsp` and `tack run`: sessions are conversations, a prompt is
//! a turn, its events stream back as `session/update` notifications, tool
//! approvals are `session/request_permission` requests, and files are read
//! and written through the client's `fs/*` methods so that the editor's
//! buffers, unsaved changes included, are what the agent sees and changes.
//!
//! Messages are newline-delimited JSON-RPC 2.0. Incoming requests are parsed
//! into the fields of the protocol's types that tack uses (unknown fields
//! and content kinds are ignored, as the protocol asks); the replies are plain
//! JSON shaped after its schema. Each request runs in a task of its own, so a
//! prompt in one session never holds up a cancel, a permission answer or
//! another session.

mod host;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{OnceCell, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use self::host::{AcpBuffers, AcpHost};
use crate::agent::{Conversation, ConversationParts, LoopSettings, SessionStore};
use crate::config::{Settings, user_config_path};
use crate::model::{ModelBackend, load_backend};
use crate::permissions::Policy;
use crate::protocol::{PermissionMode, StopReason};
use crate::tools::ToolRegistry;
use crate::tools::mcp::McpServers;
use crate::tools::skill::SkillCatalog;
use crate::workspace::Workspace;

/// The protocol version tack speaks.
const PROTOCOL_VERSION: u16 = 1;

// The parts of ACP's requests that tack reads.

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeRequest {
    #[serde(default)]
    client_capabilities: ClientCapabilities,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ClientCapabilities {
    #[serde(default)]
    fs: FileSystemCapabilities,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct FileSystemCapabilities {
    #[serde(default)]
    read_text_file: bool,
    #[serde(default)]
    write_text_file: bool,
}

#[derive(Deserialize)]
struct NewSessionRequest {
    cwd: PathBuf,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptRequest {
    session_id: String,
    prompt: Vec<ContentBlock>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock {
    Text {
        text: String,
    },
    ResourceLink {
        uri: String,
    },
    Resource {
        resource: EmbeddedResource,
    },
    /// Images, audio: not offered in the capabilities, skipped if sent.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct EmbeddedResource {
    uri: String,
    /// Absent for binary (blob) resources.
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionRef {
    session_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetSessionModeRequest {
    session_id: String,
    mode_id: String,
}

/// A JSON-RPC error: code and message.
#[derive(Debug)]
struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn invalid(message: impl Into<String>) -> RpcError {
        RpcError { code: -32602, message: message.into() }
    }
    fn internal(message: impl Into<String>) -> RpcError {
        RpcError { code: -32603, message: message.into() }
    }
}

/// The client end: sends notifications and requests, and matches answers.
pub(crate) struct Client {
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    next_id: AtomicU64,
}

impl Client {
    fn send(&self, message: Value) {
        let _ = self.out.send(message.to_string());
    }

    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its answer; `Err` holds the client's
    /// error message, or says the client went away.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id, sender);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        receiver.await.unwrap_or_else(|_| Err("the client went away".into()))
    }

    fn answered(&self, id: u64, result: Result<Value, String>) {
        if let Some(sender) = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id) {
            let _ = sender.send(result);
        }
    }
}

/// What the client said it can do.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Capabilities {
    pub read_text_file: bool,
    pub write_text_file: bool,
}

struct Session {
    root: PathBuf,
    conversation: tokio::sync::Mutex<Conversation>,
    cancel: Mutex<CancellationToken>,
    host: Arc<AcpHost>,
}

struct Agent {
    client: Arc<Client>,
    capabilities: Mutex<Capabilities>,
    backend: OnceCell<Arc<dyn ModelBackend>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    next_session: AtomicU64,
}

/// Serves ACP on stdin and stdout until the client closes stdin.
pub async fn serve_stdio() -> anyhow::Result<()> {
    let (out, mut outbox) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = outbox.recv().await {
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let client = Arc::new(Client { out, pending: Mutex::new(HashMap::new()), next_id: AtomicU64::new(1) });
    let agent = Arc::new(Agent {
        client: client.clone(),
        capabilities: Mutex::new(Capabilities::default()),
        backend: OnceCell::new(),
        sessions: Mutex::new(HashMap::new()),
        next_session: AtomicU64::new(1),
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(error) => {
                client.send(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {error}")}}));
                continue;
            }
        };
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        let id = message.get("id").cloned().filter(|id| !id.is_null());
        match (method, id) {
            (Some(method), Some(id)) => {
                let agent = agent.clone();
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                tokio::spawn(async move {
                    let reply = match agent.handle(&method, params).await {
                        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                        Err(error) => {
                            json!({"jsonrpc": "2.0", "id": id, "error": {"code": error.code, "message": error.message}})
                        }
                    };
                    agent.client.send(reply);
                });
            }
            (Some(method), None) => agent.notification(&method, message.get("params").cloned().unwrap_or(Value::Null)),
            (None, Some(id)) => {
                let result = match message.get("error") {
                    Some(error) => Err(error.get("message").and_then(Value::as_str).unwrap_or("error").to_string()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                if let Some(id) = id.as_u64() {
                    client.answered(id, result);
                }
            }
            (None, None) => {}
        }
    }
    // The client is gone: stop every turn, so commands and the model stop too.
    for session in agent.sessions.lock().unwrap_or_else(|e| e.into_inner()).values() {
        session.cancel.lock().unwrap_or_else(|e| e.into_inner()).cancel();
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    drop(agent);
    drop(client);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(|e| RpcError::invalid(format!("invalid params: {e}")))
}

/// The permission modes as ACP session modes.
fn modes(current: PermissionMode) -> Value {
    let mode = |id: &str, name: &str, description: &str| json!({"id": id, "name": name, "description": description});
    json!({
        "currentModeId": current.as_str(),
        "availableModes": [
            mode("plan", "Plan", "Reads and plans; changes nothing"),
            mode("ask", "Ask", "Asks before every change and command"),
            mode("auto_read", "Auto read", "Reads freely; asks before commands"),
            mode("auto_all", "Auto all", "Runs everything; commands in the sandbox"),
        ],
    })
}

impl Agent {
    async fn handle(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let request: InitializeRequest = parse(params)?;
                let fs = &request.client_capabilities.fs;
                *self.capabilities.lock().unwrap_or_else(|e| e.into_inner()) =
                    Capabilities { read_text_file: fs.read_text_file, write_text_file: fs.write_text_file };
                Ok(json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "agentCapabilities": {
                        "loadSession": false,
                        "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                    },
                    "authMethods": [],
                    "agentInfo": {"name": "tack", "version": env!("CARGO_PKG_VERSION")},
                }))
            }
            "authenticate" => Ok(json!({})),
            "session/new" => {
                let request: NewSessionRequest = parse(params)?;
                self.new_session(request.cwd).await
            }
            "session/prompt" => {
                let request: PromptRequest = parse(params)?;
                self.prompt(request).await
            }
            "session/set_mode" => {
                let request: SetSessionModeRequest = parse(params)?;
                let mode: PermissionMode = serde_json::from_value(json!(request.mode_id))
                    .map_err(|_| RpcError::invalid(format!("unknown mode `{}`", request.mode_id)))?;
                let session = self.session(&request.session_id)?;
                session.host.set_mode(mode);
                // A running turn keeps its policy until it ends; the next one takes the mode.
                if let Ok(mut conversation) = session.conversation.try_lock() {
                    conversation.policy_mut().mode = mode;
                }
                Ok(json!({}))
            }
            other => Err(RpcError { code: -32601, message: format!("method not found: {other}") }),
        }
    }

    fn notification(&self, method: &str, params: Value) {
        if method == "session/cancel"
            && let Ok(cancel) = serde_json::from_value::<SessionRef>(params)
            && let Ok(session) = self.session(&cancel.session_id)
        {
            session.cancel.lock().unwrap_or_else(|e| e.into_inner()).cancel();
        }
    }

    fn session(&self, id: &str) -> Result<Arc<Session>, RpcError> {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| RpcError::invalid(format!("no session `{id}`")))
    }

    async fn new_session(&self, cwd: PathBuf) -> Result<Value, RpcError> {
        if !cwd.is_absolute() {
            return Err(RpcError::invalid(format!("cwd must be an absolute path, not {}", cwd.display())));
        }
        let settings =
            Settings::load(user_config_path().as_deref(), &cwd, &[]).map_err(|e| RpcError::invalid(e.to_string()))?;
        let backend = self
            .backend
            .get_or_try_init(|| async { load_backend(&settings, None).await })
            .await
            .map_err(|e| RpcError::internal(format!("cannot load the model: {e:#}")))?
            .clone();
        let number = self.next_session.fetch_add(1, Ordering::Relaxed);
        let session_id = format!("session_{number}");
        let capabilities = *self.capabilities.lock().unwrap_or_else(|e| e.into_inner());
        let mut workspace = Workspace::open(&cwd).map_err(|e| RpcError::invalid(e.to_string()))?;
        if capabilities.read_text_file {
            let buffers = AcpBuffers::new(self.client.clone(), session_id.clone(), tokio::runtime::Handle::current());
            workspace = workspace.with_overlay(Arc::new(buffers));
        }
        let mode = settings.permission_mode;
        let policy = Policy::new(mode, &settings.permissions.rules).map_err(|e| RpcError::invalid(e.to_string()))?;
        let host = Arc::new(AcpHost::new(
            self.client.clone(),
            session_id.clone(),
            workspace.root().to_path_buf(),
            capabilities,
            mode,
        ));
        let mcp_servers = if settings.tools.disabled.contains(&crate::tools::ToolSet::Mcp) {
            McpServers::default()
        } else {
            let gate = crate::agent::servers::PolicyGate {
                policy: policy.clone(),
                host: host.clone() as Arc<dyn crate::agent::Host>,
            };
            McpServers::start(workspace.root(), &gate).await
        };
        let session =
            SessionStore::for_workspace(workspace.root()).create().map_err(|e| RpcError::internal(e.to_string()))?;
        let conversation = Conversation::new(ConversationParts {
            tools: Arc::new(
                ToolRegistry::for_model(&settings.tools, backend.context_window(), backend.parameters())
                    .with_skills(SkillCatalog::discover(workspace.root()), &settings.tools)
                    .with_mcp(mcp_servers, &settings.tools),
            ),
            backend,
            workspace: Arc::new(workspace),
            host: host.clone(),
            policy,
            settings: LoopSettings::from(&settings),
            session: Some(session),
            history: Vec::new(),
            tasks: Vec::new(),
        });
        let session = Arc::new(Session {
            root: cwd,
            conversation: tokio::sync::Mutex::new(conversation),
            cancel: Mutex::new(CancellationToken::new()),
            host,
        });
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(session_id.clone(), session);
        Ok(json!({"sessionId": session_id, "modes": modes(mode)}))
    }

    async fn prompt(&self, request: PromptRequest) -> Result<Value, RpcError> {
        let session = self.session(&request.session_id)?;
        let Ok(mut conversation) = session.conversation.try_lock() else {
            return Err(RpcError::invalid("a prompt is already running in this session; cancel it first"));
        };
        let cancel = CancellationToken::new();
        *session.cancel.lock().unwrap_or_else(|e| e.into_inner()) = cancel.clone();
        let prompt = prompt_text(&request.prompt, &session.root);
        if let Some(mode) = session.host.mode_if_changed() {
            conversation.policy_mut().mode = mode;
        }
        let outcome = conversation.run_turn(&prompt, cancel).await;
        let stop = match outcome.stop_reason {
            StopReason::EndTurn => "end_turn",
            StopReason::Cancelled => "cancelled",
            StopReason::MaxIterations | StopReason::LoopDetected => "max_turn_requests",
            StopReason::Error => {
                return Err(RpcError::internal(
                    session.host.last_error().unwrap_or_else(|| "the turn ended with an error".into()),
                ));
            }
        };
        Ok(json!({"stopReason": stop}))
    }
}

/// The prompt's content as the agent reads it: text as it is, links to
/// workspace files as `@path` mentions (the agent attaches the files a
/// prompt names), embedded text resources in `<file>` blocks.
fn prompt_text(blocks: &[ContentBlock], root: &std::path::Path) -> String {
    let mut text = String::new();
    for block in blocks {
        let piece = match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::ResourceLink { uri } => match file_path(uri, root) {
                Some(rel) => format!("@{rel}"),
                None => uri.clone(),
            },
            ContentBlock::Resource { resource: EmbeddedResource { uri, text: Some(text) } } => {
                let name = file_path(uri, root).unwrap_or_else(|| uri.clone());
                format!("<file path=\"{name}\">\n{}\n</file>", text.trim_end_matches('\n'))
            }
            ContentBlock::Resource { .. } | ContentBlock::Other => continue,
        };
        if !text.is_empty() && !text.ends_with(char::is_whitespace) {
            text.push(' ');
        }
        text.push_str(&piece);
    }
    text
}

/// A `file://` URI (or absolute path) inside `root`, relative to it.
fn file_path(uri: &str, root: &std::path::Path) -> Option<String> {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let path = percent_decode(path);
    std::path::Path::new(&path).strip_prefix(root).ok().map(|rel| rel.display().to_string())
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(byte) = text.get(index + 1..index + 3).and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_content_becomes_text_mentions_and_file_blocks() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "fix"},
            {"type": "resource_link", "uri": "file:///work/my%20app/src/main.rs", "name": "main.rs"},
            {"type": "resource", "resource": {"uri": "file:///elsewhere/notes.md", "text": "remember\n"}},
            {"type": "image", "data": "", "mimeType": "image/png"},
        ]))
        .unwrap();
        let text = prompt_text(&blocks, std::path::Path::new("/work/my app"));
        assert_eq!(text, "fix @src/main.rs <file path=\"file:///elsewhere/notes.md\">\nremember\n</file>");
    }
}
