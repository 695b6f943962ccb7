//! `tack lsp`: the agent as a language server on stdio.
//!
//! Requests are answered at once: a turn runs in a task of its own and
//! reports through `tack/event` notifications, sent in order by one task. No
//! handler ever waits on the client (a handler awaiting a reply holds one of
//! the server's few concurrency slots; enough of them and stdin stops being
//! read). Documents are changed synchronously in their notification handler,
//! before any await, so changes keep their order.

mod documents;
mod edits;
mod host;
mod stdin;

/// The private pieces the fuzz targets in `fuzz/` drive directly; not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use super::documents::{Documents, position_at};
    pub use super::edits::{ProposedHunk, hunks, judge_write, landed_hunks};
    pub use super::stdin::{MALFORMED, filtered};
}

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tokio::sync::{OnceCell, mpsc};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use self::documents::Documents;
use self::host::{LspHost, Outbox, Outgoing};
use crate::agent::{Conversation, ConversationParts, LoopSettings, SessionStore, TurnOutcome};
use crate::config::{Settings, user_config_path};
use crate::model::llama::LoadProgress;
use crate::model::{ModelBackend, load_backend};
use crate::permissions::Policy;
use crate::protocol::lsp::*;
use crate::protocol::{Message, PermissionMode};
use crate::tools::ToolRegistry;
use crate::tools::mcp::McpServers;
use crate::tools::skill::SkillCatalog;
use crate::workspace::Workspace;

/// How long running turns get to stop (and kill their processes) when the
/// client goes away.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

pub(crate) enum EventNotification {}

impl Notification for EventNotification {
    type Params = EventParams;
    const METHOD: &'static str = EVENT;
}

/// One conversation and its running turn.
struct Slot {
    conversation: Arc<tokio::sync::Mutex<Conversation>>,
    /// Cancels the running turn; replaced at each turn.
    cancel: Mutex<CancellationToken>,
    turn_id: Arc<Mutex<String>>,
    turns: AtomicU64,
    /// A mode set while a turn runs, applied when it ends.
    pending_mode: Arc<Mutex<Option<PermissionMode>>>,
}

struct State {
    client: Client,
    documents: Arc<Documents>,
    root: OnceLock<PathBuf>,
    /// (origin, layer) pairs above the config files: initializationOptions,
    /// then the last workspace/didChangeConfiguration.
    layers: Mutex<Vec<(&'static str, Value)>>,
    backend: OnceCell<Arc<dyn ModelBackend>>,
    conversations: Mutex<HashMap<String, Arc<Slot>>>,
    next_conversation: AtomicU64,
    next_code_action: AtomicU64,
    outbox: Arc<Outbox>,
    turn_tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    progress_supported: Mutex<bool>,
}

pub struct TackServer {
    state: Arc<State>,
}

/// Serves LSP on stdin and stdout until the client exits or goes away.
pub async fn serve_stdio() {
    let (service, socket) = LspService::build(TackServer::new)
        .custom_method(NEW_CONVERSATION, TackServer::new_conversation)
        .custom_method(TURN, TackServer::turn)
        .custom_method(CANCEL, TackServer::cancel)
        .custom_method(SESSIONS, TackServer::sessions)
        .custom_method(RESUME, TackServer::resume)
        .custom_method(SET_PERMISSION_MODE, TackServer::set_permission_mode)
        .custom_method(stdin::MALFORMED, TackServer::malformed)
        .finish();
    let state = service.inner().state.clone();
    Server::new(stdin::filtered(tokio::io::stdin()), tokio::io::stdout(), socket).serve(service).await;
    state.stop_everything().await;
}

fn invalid(message: impl Into<String>) -> Error {
    Error { code: ErrorCode::InvalidParams, message: message.into().into(), data: None }
}

fn failed(message: impl Into<String>) -> Error {
    Error { code: ErrorCode::InternalError, message: message.into().into(), data: None }
}

/// Runs a handler body so that a panic becomes an error answer, not a dead server.
async fn guarded<T>(work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(%message, "handler panicked");
            Err(failed(format!("internal error: {message}")))
        }
    }
}

impl TackServer {
    fn new(client: Client) -> TackServer {
        let outbox = Outbox::start(client.clone());
        TackServer {
            state: Arc::new(State {
                client,
                documents: Arc::new(Documents::default()),
                root: OnceLock::new(),
                layers: Mutex::new(Vec::new()),
                backend: OnceCell::new(),
                conversations: Mutex::new(HashMap::new()),
                next_conversation: AtomicU64::new(0),
                next_code_action: AtomicU64::new(0),
                outbox,
                turn_tasks: Mutex::new(Vec::new()),
                progress_supported: Mutex::new(false),
            }),
        }
    }

    async fn new_conversation(&self, params: Option<NewConversationParams>) -> Result<ConversationCreated> {
        guarded(async {
            let params = params.unwrap_or_default();
            let id = self.state.create_conversation(params.permission_mode, Vec::new(), Vec::new(), None).await?;
            Ok(ConversationCreated { conversation_id: id })
        })
        .await
    }

    async fn turn(&self, params: TurnParams) -> Result<TurnStarted> {
        guarded(async {
            let slot = self.state.slot(&params.conversation_id)?;
            let prompt = match &params.context {
                Some(context) => self.state.prompt_with_context(&params.prompt, context),
                None => params.prompt.clone(),
            };
            let prompt = self.state.prompt_with_attachments(prompt, &params.attachments)?;
            let turn_id = self
                .state
                .start(&slot, move |conversation, cancel| {
                    Box::pin(async move { conversation.run_turn(&prompt, cancel).await })
                })
                .await?;
            Ok(TurnStarted { turn_id })
        })
        .await
    }

    async fn cancel(&self, params: ConversationParams) -> Result<Value> {
        guarded(async {
            let slot = self.state.slot(&params.conversation_id)?;
            slot.cancel.lock().unwrap_or_else(|e| e.into_inner()).cancel();
            Ok(Value::Object(Default::default()))
        })
        .await
    }

    async fn sessions(&self, _params: Option<Value>) -> Result<Vec<SessionInfo>> {
        guarded(async {
            let store = SessionStore::for_workspace(&self.state.root()?);
            let sessions = store.list().map_err(|e| failed(e.to_string()))?;
            Ok(sessions
                .into_iter()
                .map(|s| SessionInfo {
                    session_id: s.session_id,
                    title: s.title,
                    updated_at: s.updated_at,
                    message_count: s.message_count,
                })
                .collect())
        })
        .await
    }

    async fn resume(&self, params: ResumeParams) -> Result<Resumed> {
        guarded(async {
            let store = SessionStore::for_workspace(&self.state.root()?);
            let loaded = store.load(&params.session_id).map_err(|e| invalid(e.to_string()))?;
            for warning in &loaded.warnings {
                self.state.log(MessageType::WARNING, warning.clone());
            }
            let writer = store.resume(&loaded).map_err(|e| failed(e.to_string()))?;
            let messages = loaded.messages.clone();
            let id = self.state.create_conversation(None, loaded.messages, loaded.tasks, Some(writer)).await?;
            Ok(Resumed { conversation_id: id, messages })
        })
        .await
    }

    /// A message that could not be decoded, dropped by the input filter.
    async fn malformed(&self, params: Value) {
        let problem = params.get("problem").and_then(Value::as_str).unwrap_or("unreadable");
        tracing::warn!(problem, "dropped a malformed message");
        self.state.log(MessageType::ERROR, format!("tack: dropped a malformed message from the client: {problem}"));
    }

    async fn set_permission_mode(&self, params: SetPermissionModeParams) -> Result<Value> {
        guarded(async {
            let slot = self.state.slot(&params.conversation_id)?;
            match slot.conversation.try_lock() {
                Ok(mut conversation) => conversation.policy_mut().mode = params.permission_mode,
                // A turn is running: its mode holds until it ends.
                Err(_) => *slot.pending_mode.lock().unwrap_or_else(|e| e.into_inner()) = Some(params.permission_mode),
            }
            Ok(Value::Object(Default::default()))
        })
        .await
    }
}

/// How long a new turn waits for the conversation before it is refused.
const FINISHING_GRACE: Duration = Duration::from_millis(250);

type TurnFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = TurnOutcome> + Send + 'a>>;

impl State {
    fn root(&self) -> Result<PathBuf> {
        self.root.get().cloned().ok_or_else(|| invalid("the server has no workspace folder"))
    }

    fn log(&self, kind: MessageType, text: String) {
        self.outbox.push(Outgoing::Log(kind, text));
    }

    fn settings(&self) -> Result<Settings> {
        let root = self.root()?;
        let layers = self.layers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let layers: Vec<(&str, Value)> = layers.iter().map(|(origin, value)| (*origin, value.clone())).collect();
        Settings::load(user_config_path().as_deref(), &root, &layers).map_err(|e| invalid(e.to_string()))
    }

    fn slot(&self, id: &str) -> Result<Arc<Slot>> {
        self.conversations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| invalid(format!("no conversation `{id}`; start one with {NEW_CONVERSATION}")))
    }

    /// The model, loaded once for every conversation, with `$/progress` while
    /// it loads. A failed load is reported and tried again next time (the
    /// user may fix the settings meanwhile).
    async fn backend(&self, settings: &Settings) -> Result<Arc<dyn ModelBackend>> {
        let loaded = self
            .backend
            .get_or_try_init(|| async {
                let reporting = self.load_progress();
                let callback = reporting.as_ref().map(|(callback, _, _)| callback.clone());
                let loaded = load_backend(settings, callback).await.map_err(|e| format!("{e:#}"));
                if let Some((_, done, reporter)) = reporting {
                    let _ = done.send(100);
                    let _ = tokio::time::timeout(Duration::from_secs(5), reporter).await;
                }
                if let Err(error) = &loaded {
                    self.log(MessageType::ERROR, format!("tack: cannot load the model: {error}"));
                }
                loaded
            })
            .await;
        loaded.cloned().map_err(failed)
    }

    /// A load-progress callback that reports through `$/progress`, a sender
    /// that ends the report (100), and the task that sends the reports.
    fn load_progress(&self) -> Option<(LoadProgress, mpsc::UnboundedSender<u32>, tokio::task::JoinHandle<()>)> {
        if !*self.progress_supported.lock().unwrap_or_else(|e| e.into_inner()) {
            return None;
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
        let client = self.client.clone();
        let reporter = tokio::spawn(async move {
            let token = NumberOrString::String("tack/loadModel".into());
            if client.create_work_done_progress(token.clone()).await.is_err() {
                return;
            }
            let progress = client.progress(token, "tack: loading the model").with_percentage(0).begin().await;
            let mut last = 0;
            while let Some(percent) = rx.recv().await {
                if percent >= 100 {
                    break;
                }
                if percent > last {
                    last = percent;
                    progress.report(percent).await;
                }
            }
            progress.finish().await;
        });
        let sender = tx.clone();
        let callback = LoadProgress(Arc::new(move |share: f32| {
            // The load's own 100% is not the end: the backend is not built yet.
            let _ = sender.send(((share.clamp(0.0, 1.0) * 100.0) as u32).min(99));
        }));
        Some((callback, tx, reporter))
    }

    async fn create_conversation(
        &self,
        mode: Option<PermissionMode>,
        history: Vec<Message>,
        tasks: Vec<crate::tools::task::Task>,
        session: Option<crate::agent::SessionWriter>,
    ) -> Result<String> {
        let settings = self.settings()?;
        let root = self.root()?;
        let backend = self.backend(&settings).await?;
        let workspace =
            Workspace::open(&root).map_err(|e| invalid(e.to_string()))?.with_overlay(self.documents.clone());
        let policy = Policy::new(mode.unwrap_or(settings.permission_mode), &settings.permissions.rules)
            .map_err(|e| invalid(e.to_string()))?;
        let session = match session {
            Some(session) => session,
            None => SessionStore::for_workspace(&root).create().map_err(|e| failed(e.to_string()))?,
        };
        let number = self.next_conversation.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("conversation_{number}");
        let turn_id = Arc::new(Mutex::new(String::new()));
        let host = Arc::new(LspHost {
            client: self.client.clone(),
            conversation_id: id.clone(),
            turn_id: turn_id.clone(),
            outbox: self.outbox.clone(),
            documents: self.documents.clone(),
        });
        // Each conversation runs its own servers, stopped with it.
        let mcp_servers = match settings.tools.disabled.contains(&crate::tools::ToolSet::Mcp) {
            true => McpServers::default(),
            false => {
                let gate = crate::agent::servers::PolicyGate {
                    policy: policy.clone(),
                    host: host.clone() as Arc<dyn crate::agent::Host>,
                };
                McpServers::start(&root, &gate).await
            }
        };
        for (server, problem) in mcp_servers.failures() {
            self.log(
                MessageType::WARNING,
                format!("MCP server {server} did not start: {problem}; its tools are left out"),
            );
        }
        let conversation = Conversation::new(ConversationParts {
            tools: Arc::new(
                ToolRegistry::for_model(&settings.tools, backend.context_window(), backend.parameters())
                    .with_skills(SkillCatalog::discover(workspace.root()), &settings.tools)
                    .with_mcp(mcp_servers, &settings.tools),
            ),
            backend,
            workspace: Arc::new(workspace),
            host,
            policy,
            settings: LoopSettings::from(&settings),
            session: Some(session),
            history,
            tasks,
        });
        let slot = Arc::new(Slot {
            conversation: Arc::new(tokio::sync::Mutex::new(conversation)),
            cancel: Mutex::new(CancellationToken::new()),
            turn_id,
            turns: AtomicU64::new(0),
            pending_mode: Arc::new(Mutex::new(None)),
        });
        self.conversations.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), slot);
        Ok(id)
    }

    /// Starts `work` on the conversation in a task of its own and returns the
    /// turn's id. One turn at a time per conversation.
    async fn start(
        &self,
        slot: &Arc<Slot>,
        work: impl for<'a> FnOnce(&'a mut Conversation, CancellationToken) -> TurnFuture<'a> + Send + 'static,
    ) -> Result<String> {
        // The turn before has sent turn_finished a moment before it lets go
        // of the conversation: a client that starts the next turn at once
        // waits out that moment instead of being refused.
        let lock = slot.conversation.clone().lock_owned();
        let Ok(mut conversation) = tokio::time::timeout(FINISHING_GRACE, lock).await else {
            return Err(invalid("a turn is already running in this conversation; cancel it or wait for turn_finished"));
        };
        let number = slot.turns.fetch_add(1, Ordering::Relaxed) + 1;
        let turn_id = format!("turn_{number}");
        *slot.turn_id.lock().unwrap_or_else(|e| e.into_inner()) = turn_id.clone();
        let cancel = CancellationToken::new();
        *slot.cancel.lock().unwrap_or_else(|e| e.into_inner()) = cancel.clone();
        let pending_mode = slot.pending_mode.clone();
        let task = tokio::spawn(async move {
            if let Some(mode) = pending_mode.lock().unwrap_or_else(|e| e.into_inner()).take() {
                conversation.policy_mut().mode = mode;
            }
            work(&mut conversation, cancel).await;
            if let Some(mode) = pending_mode.lock().unwrap_or_else(|e| e.into_inner()).take() {
                conversation.policy_mut().mode = mode;
            }
        });
        let mut tasks = self.turn_tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
        Ok(turn_id)
    }

    /// A document's path, and the same relative to the workspace root.
    fn workspace_path(&self, uri: &Uri) -> Result<(PathBuf, String)> {
        let root = self.root()?;
        let path = documents::path_of(uri).map_err(|e| invalid(e.to_string()))?;
        let rel = path
            .strip_prefix(&root)
            .map(|p| p.display().to_string())
            .map_err(|_| invalid(format!("{} is outside the workspace {}", path.display(), root.display())))?;
        Ok((path, rel))
    }

    /// The prompt with the user's place in the editor: the document, and the
    /// selected text when there is a selection.
    fn prompt_with_context(&self, prompt: &str, context: &TurnContext) -> String {
        let Ok(uri) = context.uri.parse::<Uri>() else {
            return prompt.to_string();
        };
        let Ok((_, path)) = self.workspace_path(&uri) else {
            return prompt.to_string();
        };
        let range = context.range.clone().and_then(|r| serde_json::from_value::<Range>(r).ok());
        match range.map(|range| (range, self.documents.text_in(&uri, range))) {
            Some((range, Ok(text))) if !text.is_empty() => format!(
                "The user is in {path}, lines {}-{}, with this selected:\n```\n{text}\n```\n\n{prompt}",
                range.start.line + 1,
                range.end.line + 1
            ),
            _ => format!("The user is in {path}.\n\n{prompt}"),
        }
    }

    /// The prompt led by what the user attached: whole files as mentions (the
    /// agent attaches the files a prompt names, within its limits, and counts
    /// them as read), selections and diagnostics as text.
    fn prompt_with_attachments(&self, prompt: String, attachments: &[TurnAttachment]) -> Result<String> {
        if attachments.is_empty() {
            return Ok(prompt);
        }
        let mut files = Vec::new();
        let mut blocks = String::new();
        for attachment in attachments {
            let uri =
                attachment.uri.parse::<Uri>().map_err(|_| invalid(format!("bad attachment uri {}", attachment.uri)))?;
            let (path, rel) = self.workspace_path(&uri)?;
            let range = attachment.range.clone().map(serde_json::from_value::<Range>).transpose();
            let range = range.map_err(|e| invalid(format!("bad attachment range: {e}")))?;
            if !attachment.diagnostics.is_empty() {
                blocks.push_str(&format!("The editor reports these problems in {rel}:\n"));
                for diagnostic in
                    attachment.diagnostics.iter().filter_map(|d| serde_json::from_value::<Diagnostic>(d.clone()).ok())
                {
                    let severity = match diagnostic.severity {
                        Some(DiagnosticSeverity::ERROR) => "error",
                        Some(DiagnosticSeverity::WARNING) => "warning",
                        Some(DiagnosticSeverity::HINT) => "hint",
                        _ => "info",
                    };
                    let source = diagnostic.source.map(|s| format!(" [{s}]")).unwrap_or_default();
                    blocks.push_str(&format!(
                        "- line {}: {severity}{source}: {}\n",
                        diagnostic.range.start.line + 1,
                        diagnostic.message.replace('\n', " ")
                    ));
                }
                blocks.push('\n');
            } else if let Some(range) = range {
                let text = match self.documents.text_in(&uri, range) {
                    Ok(text) => text,
                    Err(_) => {
                        let whole =
                            std::fs::read_to_string(&path).map_err(|e| invalid(format!("cannot read {rel}: {e}")))?;
                        let lines = whole.lines().skip(range.start.line as usize);
                        lines
                            .take((range.end.line.saturating_sub(range.start.line) + 1) as usize)
                            .collect::<Vec<_>>()
                            .join("\n")
                    }
                };
                blocks.push_str(&format!(
                    "The user attached lines {}-{} of {rel}:\n```\n{}\n```\n\n",
                    range.start.line + 1,
                    range.end.line + 1,
                    text.trim_end_matches('\n')
                ));
            } else {
                files.push(format!("@{rel}"));
            }
        }
        let files =
            if files.is_empty() { String::new() } else { format!("The user attached {}.\n\n", files.join(", ")) };
        Ok(format!("{files}{blocks}{prompt}"))
    }

    /// The client went away or asked to exit: cancel every turn and give the
    /// turns a moment to kill their processes and save their sessions.
    async fn stop_everything(&self) {
        let slots: Vec<Arc<Slot>> =
            self.conversations.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        for slot in &slots {
            slot.cancel.lock().unwrap_or_else(|e| e.into_inner()).cancel();
        }
        let tasks: Vec<_> = std::mem::take(&mut *self.turn_tasks.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, futures::future::join_all(tasks)).await;
        // Dropping the conversations stops their interpreters.
        self.conversations.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

impl LanguageServer for TackServer {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first())
            .and_then(|folder| folder.uri.to_file_path().map(|p| p.into_owned()))
            .or_else(|| {
                #[allow(deprecated)]
                params.root_uri.as_ref().and_then(|uri| uri.to_file_path().map(|p| p.into_owned()))
            })
            .or_else(|| std::env::current_dir().ok())
            .ok_or_else(|| invalid("no workspace folder, root URI or current directory"))?;
        let root = documents::canonical(&root);
        let _ = self.state.root.set(root.clone());
        if let Some(options) = params.initialization_options {
            self.state.layers.lock().unwrap_or_else(|e| e.into_inner()).push(("initializationOptions", options));
        }
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        *self.state.progress_supported.lock().unwrap_or_else(|e| e.into_inner()) = progress;
        // Bad settings are reported now rather than at the first turn.
        self.state.settings()?;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![CODE_ACTION_COMMAND.to_string()],
                    ..Default::default()
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "tack".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tracing::info!(root = ?self.state.root.get(), "tack lsp ready");
    }

    async fn shutdown(&self) -> Result<()> {
        for slot in self.state.conversations.lock().unwrap_or_else(|e| e.into_inner()).values() {
            slot.cancel.lock().unwrap_or_else(|e| e.into_inner()).cancel();
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        if let Err(error) = self.state.documents.open(document.uri, &document.text, document.version) {
            self.state.log(MessageType::WARNING, format!("tack: {error}"));
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let document = params.text_document;
        if let Err(error) = self.state.documents.change(&document.uri, document.version, params.content_changes) {
            self.state.log(MessageType::WARNING, format!("tack: {error}; reopen the document to resync it"));
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let _ = self.state.documents.close(&params.text_document.uri);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // Clients send `null` or `{}` to say "ask me"; only objects are settings.
        let settings = match params.settings {
            Value::Object(map) if !map.is_empty() => Value::Object(map),
            _ => return,
        };
        let settings = settings.get("tack").cloned().unwrap_or(settings);
        {
            let mut layers = self.state.layers.lock().unwrap_or_else(|e| e.into_inner());
            layers.retain(|(origin, _)| *origin != "workspace/didChangeConfiguration");
            layers.push(("workspace/didChangeConfiguration", settings));
        }
        match self.state.settings() {
            Ok(_) => self.state.log(MessageType::INFO, "tack: settings changed; new conversations use them".into()),
            Err(error) => {
                self.state.layers.lock().unwrap_or_else(|e| e.into_inner()).pop();
                self.state.log(MessageType::ERROR, format!("tack: settings not changed: {}", error.message));
            }
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let diagnostics: Vec<Value> =
            params.context.diagnostics.iter().filter_map(|d| serde_json::to_value(d).ok()).collect();
        let range = serde_json::to_value(params.range).unwrap_or(Value::Null);
        let uri = params.text_document.uri.as_str().to_string();
        let mut actions = Vec::new();
        for (action, title, kind) in [
            (CodeActionTask::Ask, "Ask tack…", tower_lsp_server::ls_types::CodeActionKind::EMPTY),
            (CodeActionTask::Fix, "Fix with tack", tower_lsp_server::ls_types::CodeActionKind::QUICKFIX),
            (CodeActionTask::Explain, "Explain with tack", tower_lsp_server::ls_types::CodeActionKind::EMPTY),
            (CodeActionTask::WriteTests, "Write tests with tack", tower_lsp_server::ls_types::CodeActionKind::EMPTY),
        ] {
            let args = CodeActionArgs {
                action,
                uri: uri.clone(),
                range: range.clone(),
                diagnostics: if action == CodeActionTask::Fix { diagnostics.clone() } else { Vec::new() },
                prompt: None,
                conversation_id: None,
            };
            actions.push(CodeActionOrCommand::CodeAction(tower_lsp_server::ls_types::CodeAction {
                title: title.to_string(),
                kind: Some(kind),
                command: Some(Command {
                    title: title.to_string(),
                    command: CODE_ACTION_COMMAND.to_string(),
                    arguments: Some(vec![serde_json::to_value(&args).unwrap_or(Value::Null)]),
                }),
                ..Default::default()
            }));
        }
        Ok(Some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        guarded(async {
            if params.command != CODE_ACTION_COMMAND {
                return Err(invalid(format!("unknown command `{}`", params.command)));
            }
            let args: CodeActionArgs = params
                .arguments
                .into_iter()
                .next()
                .ok_or_else(|| invalid("tack.codeAction needs one argument"))
                .and_then(|arg| {
                    serde_json::from_value(arg).map_err(|e| invalid(format!("bad tack.codeAction argument: {e}")))
                })?;
            let started = self.start_code_action(args).await?;
            Ok(Some(serde_json::to_value(started).unwrap_or(Value::Null)))
        })
        .await
    }
}

impl TackServer {
    /// Runs a code action as a sub-agent under a conversation (a new one when
    /// none is named).
    async fn start_code_action(&self, args: CodeActionArgs) -> Result<CodeActionStarted> {
        let uri: Uri = args.uri.parse().map_err(|_| invalid(format!("bad document URI `{}`", args.uri)))?;
        let range: Range =
            serde_json::from_value(args.range.clone()).map_err(|e| invalid(format!("bad range: {e}")))?;
        let (path, rel) = self.state.workspace_path(&uri)?;
        let text = match self.state.documents.text_in(&uri, range) {
            Ok(text) => text,
            Err(_) => {
                let disk = std::fs::read_to_string(&path).map_err(|e| invalid(format!("cannot read {rel}: {e}")))?;
                lines_of(&disk, range.start.line as usize, range.end.line as usize)
            }
        };
        let (description, task) = match args.action {
            CodeActionTask::Ask => {
                let question = args.prompt.clone().filter(|p| !p.trim().is_empty()).ok_or_else(|| {
                    invalid("Ask tack needs a prompt: put the user's question in the argument's `prompt`")
                })?;
                ("Ask tack".to_string(), question)
            }
            CodeActionTask::Fix => (
                "Fix with tack".to_string(),
                "Fix the problems in this code with the smallest correct change, using the edit tools. \
                 Say in one or two sentences what you changed."
                    .to_string(),
            ),
            CodeActionTask::Explain => (
                "Explain with tack".to_string(),
                "Explain what this code does and why, briefly, for a colleague reading it for the first time. \
                 Do not change any file."
                    .to_string(),
            ),
            CodeActionTask::WriteTests => (
                "Write tests with tack".to_string(),
                "Write tests for this code, in the project's existing test style and place, using the edit tools. \
                 Say which tests you added."
                    .to_string(),
            ),
        };
        let mut prompt = format!(
            "{task}\n\nThe code is {rel}, lines {}-{}:\n```\n{text}\n```\n",
            range.start.line + 1,
            range.end.line + 1
        );
        if !args.diagnostics.is_empty() {
            prompt.push_str("\nDiagnostics reported there:\n");
            for diagnostic in &args.diagnostics {
                let message = diagnostic.get("message").and_then(Value::as_str).unwrap_or("");
                let line = diagnostic.pointer("/range/start/line").and_then(Value::as_u64).unwrap_or(0) + 1;
                prompt.push_str(&format!("- line {line}: {message}\n"));
            }
        }
        let conversation_id = match args.conversation_id {
            Some(id) => id,
            None => self.state.create_conversation(None, Vec::new(), Vec::new(), None).await?,
        };
        let slot = self.state.slot(&conversation_id)?;
        let number = self.state.next_code_action.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("code_action_{number}");
        let turn_id = self
            .state
            .start(&slot, move |conversation, cancel| {
                Box::pin(async move { conversation.run_delegated(&name, &description, &prompt, cancel).await })
            })
            .await?;
        Ok(CodeActionStarted { conversation_id, turn_id })
    }
}

/// Lines `first..=last` of a text (0-based).
fn lines_of(text: &str, first: usize, last: usize) -> String {
    text.split_inclusive('\n').skip(first).take(last.saturating_sub(first) + 1).collect()
}
