//! A small, real LSP client for the integration tests: it starts the `tack`
//! binary with `lsp`, speaks JSON-RPC over its stdio (`Content-Length`
//! framing), answers the server's requests by a policy each test sets
//! (`tack/approveTool`, `workspace/applyEdit`, ...), keeps its own copy of the
//! documents it opened (UTF-16 positions, as LSP has them), and records
//! every notification so that tests can wait for events.
//!
//! Everything is synchronous: one reader thread routes what the server
//! writes; every wait has a timeout and panics with what did arrive.
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any wait lasts before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// What the client does with a `workspace/applyEdit`.
#[derive(Clone, Debug, PartialEq)]
pub enum EditPolicy {
    /// Apply every operation and every text edit.
    ApplyAll,
    /// Apply nothing; answer `{"applied": false, "failureReason": reason}`.
    Reject(String),
    /// Apply the resource operations and, in each text document edit, only the
    /// edits at these (0-based) indices: what a user who ticks some hunks of
    /// a preview does.
    ApplyOnly(BTreeSet<usize>),
}

impl EditPolicy {
    pub fn only(indices: &[usize]) -> EditPolicy {
        EditPolicy::ApplyOnly(indices.iter().copied().collect())
    }

    fn takes(&self, index: usize) -> bool {
        match self {
            EditPolicy::ApplyAll => true,
            EditPolicy::Reject(_) => false,
            EditPolicy::ApplyOnly(set) => set.contains(&index),
        }
    }
}

/// A document the client has open, as the editor holds it.
#[derive(Clone, Debug)]
pub struct Document {
    pub uri: String,
    pub language_id: String,
    pub version: i64,
    pub text: String,
}

/// Everything the server sent that was not an answer to one of our requests.
#[derive(Default)]
pub struct Inbox {
    /// `tack/event` notifications, flattened: the event's own fields plus
    /// `seq`, `agentPath`, `turnId` and `conversationId`, in arrival order.
    pub events: Vec<Value>,
    /// `$/progress` params.
    pub progress: Vec<Value>,
    /// `window/logMessage` params.
    pub log_messages: Vec<Value>,
    /// `window/showMessage` params.
    pub show_messages: Vec<Value>,
    /// Any other notification, whole.
    pub other_notifications: Vec<Value>,
    /// Every server-to-client request, whole, in arrival order.
    pub server_requests: Vec<Value>,
    /// `tack/approveTool` params.
    pub approvals: Vec<Value>,
    /// `workspace/applyEdit` params.
    pub apply_edits: Vec<Value>,
    /// What the client answered to each `workspace/applyEdit`, in order.
    pub apply_edit_answers: Vec<Value>,
    /// Server requests left unanswered (an approval with no decision queued).
    pub unanswered: Vec<Value>,
    /// Responses whose id matches no request of ours (a parse error has id null).
    pub orphan_responses: Vec<Value>,
    /// Message bodies that were not JSON.
    pub unparsable: Vec<String>,
    /// The server closed its stdout.
    pub closed: bool,
    /// How many `turn_finished` each conversation has had taken by
    /// [`LspClient::wait_turn_finished`].
    turn_finished_taken: HashMap<String, usize>,
}

impl Inbox {
    /// One line per thing that arrived, for failure messages.
    fn summary(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("{} tack/event notifications:\n", self.events.len()));
        for event in &self.events {
            out.push_str(&format!("  {}\n", brief_event(event)));
        }
        for request in &self.server_requests {
            out.push_str(&format!("server request: {}\n", clip(&request.to_string(), 400)));
        }
        for log in &self.log_messages {
            out.push_str(&format!("logMessage: {}\n", clip(&log.to_string(), 400)));
        }
        for shown in &self.show_messages {
            out.push_str(&format!("showMessage: {}\n", clip(&shown.to_string(), 400)));
        }
        for other in &self.other_notifications {
            out.push_str(&format!("notification: {}\n", clip(&other.to_string(), 300)));
        }
        for orphan in &self.orphan_responses {
            out.push_str(&format!("orphan response: {}\n", clip(&orphan.to_string(), 300)));
        }
        for bad in &self.unparsable {
            out.push_str(&format!("unparsable body: {}\n", clip(bad, 300)));
        }
        if self.closed {
            out.push_str("the server closed its stdout\n");
        }
        out
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// `conversation_1 #4 [call_1] tool_call {...}`.
pub fn brief_event(event: &Value) -> String {
    let mut rest = event.clone();
    if let Some(map) = rest.as_object_mut() {
        for key in ["conversationId", "turnId", "seq", "agentPath", "kind"] {
            map.remove(key);
        }
    }
    let path = event["agentPath"].as_array().map(|p| p.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("/"));
    format!(
        "{} {} #{} [{}] {} {}",
        event["conversationId"].as_str().unwrap_or("?"),
        event["turnId"].as_str().unwrap_or("?"),
        event["seq"],
        path.unwrap_or_default(),
        event["kind"].as_str().unwrap_or("?"),
        clip(&rest.to_string(), 300)
    )
}

struct Policies {
    /// Decisions for `tack/approveTool`, used in order; when none is left the
    /// request is never answered (a user who walked away).
    approvals: VecDeque<String>,
    /// Answers to `tack/askUser` (`None`: dismissed), used in order; when
    /// none is left the question is never answered.
    answers: VecDeque<Option<String>>,
    /// Policies for the next `workspace/applyEdit`s, used in order; then `edits`.
    next_edits: VecDeque<EditPolicy>,
    edits: EditPolicy,
}

struct Shared {
    root: PathBuf,
    inbox: Mutex<Inbox>,
    changed: Condvar,
    writer: Mutex<Option<ChildStdin>>,
    pending: Mutex<HashMap<i64, mpsc::Sender<Value>>>,
    /// Open documents by path relative to the root. Locked before `writer`
    /// whenever both are held, so that a document's changes go out in order.
    documents: Mutex<HashMap<String, Document>>,
    policies: Mutex<Policies>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

impl Shared {
    fn write_raw(&self, bytes: &[u8]) -> bool {
        let mut writer = lock(&self.writer);
        match writer.as_mut() {
            Some(stdin) => stdin.write_all(bytes).and_then(|_| stdin.flush()).is_ok(),
            None => false,
        }
    }

    fn write(&self, message: &Value) -> bool {
        self.write_raw(&frame(&serde_json::to_vec(message).unwrap()))
    }

    fn respond(&self, id: Value, result: Value) {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn with_inbox(&self, f: impl FnOnce(&mut Inbox)) {
        let mut inbox = lock(&self.inbox);
        f(&mut inbox);
        drop(inbox);
        self.changed.notify_all();
    }

    fn route(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, id) => {
                let waiter = id.as_ref().and_then(Value::as_i64).and_then(|id| lock(&self.pending).remove(&id));
                match waiter {
                    Some(waiter) => {
                        let _ = waiter.send(message);
                    }
                    None => self.with_inbox(|inbox| inbox.orphan_responses.push(message)),
                }
            }
            (Some(method), Some(id)) => self.handle_request(&method, id, message),
            (Some(method), None) => self.handle_notification(&method, message),
        }
    }

    fn handle_notification(&self, method: &str, message: Value) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        self.with_inbox(|inbox| match method {
            "tack/event" => inbox.events.push(flatten_event(&params)),
            "$/progress" => inbox.progress.push(params),
            "window/logMessage" => inbox.log_messages.push(params),
            "window/showMessage" => inbox.show_messages.push(params),
            _ => inbox.other_notifications.push(message),
        });
    }

    fn handle_request(&self, method: &str, id: Value, message: Value) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match method {
            "tack/approveTool" => {
                let decision = lock(&self.policies).approvals.pop_front();
                self.with_inbox(|inbox| {
                    inbox.server_requests.push(message.clone());
                    inbox.approvals.push(params);
                    if decision.is_none() {
                        inbox.unanswered.push(message);
                    }
                });
                if let Some(decision) = decision {
                    self.respond(id, json!({ "decision": decision }));
                }
            }
            "tack/askUser" => {
                let answer = lock(&self.policies).answers.pop_front();
                self.with_inbox(|inbox| {
                    inbox.server_requests.push(message.clone());
                    if answer.is_none() {
                        inbox.unanswered.push(message);
                    }
                });
                if let Some(answer) = answer {
                    self.respond(id, json!({ "answer": answer }));
                }
            }
            "workspace/applyEdit" => {
                let policy = {
                    let mut policies = lock(&self.policies);
                    policies.next_edits.pop_front().unwrap_or_else(|| policies.edits.clone())
                };
                // Applied (and the didChange sent) before the answer, as editors do.
                let answer = match self.apply_workspace_edit(&params["edit"], &policy) {
                    Ok(()) => json!({"applied": true}),
                    Err(reason) => json!({"applied": false, "failureReason": reason}),
                };
                self.with_inbox(|inbox| {
                    inbox.server_requests.push(message);
                    inbox.apply_edits.push(params);
                    inbox.apply_edit_answers.push(answer.clone());
                });
                self.respond(id, answer);
            }
            _ => {
                // window/workDoneProgress/create and anything else: null.
                self.with_inbox(|inbox| inbox.server_requests.push(message));
                self.respond(id, Value::Null);
            }
        }
    }

    /// The path of a file URI relative to the root, when it is under it.
    fn rel_of(&self, path: &Path) -> Option<String> {
        path.strip_prefix(&self.root).ok().map(|p| p.to_string_lossy().replace('\\', "/"))
    }

    fn apply_workspace_edit(&self, edit: &Value, policy: &EditPolicy) -> Result<(), String> {
        if let EditPolicy::Reject(reason) = policy {
            return Err(reason.clone());
        }
        let operations: Vec<Value> = if let Some(changes) = edit.get("documentChanges").and_then(Value::as_array) {
            changes.clone()
        } else if let Some(changes) = edit.get("changes").and_then(Value::as_object) {
            changes
                .iter()
                .map(|(uri, edits)| json!({"textDocument": {"uri": uri, "version": null}, "edits": edits}))
                .collect()
        } else {
            return Err(format!("a workspace edit with neither documentChanges nor changes: {edit}"));
        };
        for operation in &operations {
            match operation.get("kind").and_then(Value::as_str) {
                Some("create") => {
                    let path = uri_to_path(operation["uri"].as_str().unwrap_or(""))?;
                    let options = &operation["options"];
                    if path.exists() {
                        if options["overwrite"].as_bool() == Some(true) {
                            std::fs::write(&path, "").map_err(|e| e.to_string())?;
                        } else if options["ignoreIfExists"].as_bool() != Some(true) {
                            return Err(format!("{} exists", path.display()));
                        }
                    } else {
                        if let Some(parent) = path.parent() {
                            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                        }
                        std::fs::write(&path, "").map_err(|e| e.to_string())?;
                    }
                }
                Some("rename") => {
                    let from = uri_to_path(operation["oldUri"].as_str().unwrap_or(""))?;
                    let to = uri_to_path(operation["newUri"].as_str().unwrap_or(""))?;
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                    }
                    std::fs::rename(&from, &to).map_err(|e| format!("rename {}: {e}", from.display()))?;
                    // An editor keeps the buffer, under its new name.
                    let mut documents = lock(&self.documents);
                    if let (Some(old), Some(new)) = (self.rel_of(&from), self.rel_of(&to)) {
                        if let Some(mut document) = documents.remove(&old) {
                            self.write(&notification(
                                "textDocument/didClose",
                                json!({"textDocument": {"uri": document.uri}}),
                            ));
                            document.uri = operation["newUri"].as_str().unwrap_or("").to_string();
                            self.write(&notification(
                                "textDocument/didOpen",
                                json!({"textDocument": {"uri": document.uri, "languageId": document.language_id,
                                    "version": document.version, "text": document.text}}),
                            ));
                            documents.insert(new, document);
                        }
                    }
                }
                Some("delete") => {
                    let path = uri_to_path(operation["uri"].as_str().unwrap_or(""))?;
                    let result =
                        if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
                    if let Err(error) = result {
                        if operation["options"]["ignoreIfNotExists"].as_bool() != Some(true) {
                            return Err(format!("delete {}: {error}", path.display()));
                        }
                    }
                    let mut documents = lock(&self.documents);
                    if let Some(rel) = self.rel_of(&path) {
                        if let Some(document) = documents.remove(&rel) {
                            self.write(&notification(
                                "textDocument/didClose",
                                json!({"textDocument": {"uri": document.uri}}),
                            ));
                        }
                    }
                }
                Some(other) => return Err(format!("unknown resource operation `{other}`")),
                None => self.apply_text_document_edit(operation, policy)?,
            }
        }
        Ok(())
    }

    fn apply_text_document_edit(&self, operation: &Value, policy: &EditPolicy) -> Result<(), String> {
        let uri = operation["textDocument"]["uri"].as_str().ok_or("a text document edit without a uri")?;
        let version = operation["textDocument"]["version"].as_i64();
        let all = operation["edits"].as_array().ok_or("a text document edit without edits")?;
        let chosen: Vec<&Value> = all.iter().enumerate().filter(|(i, _)| policy.takes(*i)).map(|(_, e)| e).collect();
        let path = uri_to_path(uri)?;
        let mut documents = lock(&self.documents);
        let open = self.rel_of(&path).and_then(|rel| documents.get_mut(&rel));
        match open {
            Some(document) => {
                if let Some(version) = version {
                    if version != document.version {
                        return Err(format!(
                            "the edit is for version {version} of {uri}, the editor has version {}",
                            document.version
                        ));
                    }
                }
                let (text, changes) = apply_text_edits(&document.text, &chosen)?;
                if changes.is_empty() {
                    return Ok(());
                }
                document.text = text;
                document.version += 1;
                self.write(&notification(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": document.uri, "version": document.version},
                        "contentChanges": changes}),
                ));
            }
            None => {
                let current = std::fs::read_to_string(&path).unwrap_or_default();
                let (text, changes) = apply_text_edits(&current, &chosen)?;
                if !changes.is_empty() {
                    std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
                }
            }
        }
        Ok(())
    }
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A `tack/event`'s params as one object: the event with its envelope.
fn flatten_event(params: &Value) -> Value {
    let mut event = match params.get("event") {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        _ => return params.clone(),
    };
    for key in ["conversationId", "turnId", "agentPath", "seq"] {
        event[key] = params.get(key).cloned().unwrap_or(Value::Null);
    }
    event
}

/// Applies LSP text edits (ranges in the original text, UTF-16 positions) and
/// returns the new text and the equivalent incremental content changes
/// (applied last-first, so each range is still valid when it is applied).
pub fn apply_text_edits(text: &str, edits: &[&Value]) -> Result<(String, Vec<Value>), String> {
    let mut spans = Vec::new();
    for (index, edit) in edits.iter().enumerate() {
        let range = &edit["range"];
        let start = offset_of(text, &range["start"]).ok_or_else(|| format!("bad range {range}"))?;
        let end = offset_of(text, &range["end"]).ok_or_else(|| format!("bad range {range}"))?;
        if start > end {
            return Err(format!("range {range} ends before it starts"));
        }
        let new_text = edit["newText"].as_str().ok_or_else(|| format!("an edit without newText: {edit}"))?;
        spans.push((start, end, index, new_text.to_string(), range.clone()));
    }
    spans.sort_by_key(|(start, end, index, ..)| (*start, *end, *index));
    for pair in spans.windows(2) {
        if pair[0].1 > pair[1].0 {
            return Err(format!("overlapping edits {} and {}", pair[0].4, pair[1].4));
        }
    }
    let mut out = text.to_string();
    let mut changes = Vec::new();
    for (start, end, _, new_text, range) in spans.into_iter().rev() {
        out.replace_range(start..end, &new_text);
        changes.push(json!({"range": range, "text": new_text}));
    }
    Ok((out, changes))
}

/// The byte offset of an LSP position (`{"line", "character"}`, UTF-16 code
/// units). A line past the end is the text's end; a character past the line's
/// end is the line's end, as the spec says.
pub fn offset_of(text: &str, position: &Value) -> Option<usize> {
    let line = position["line"].as_u64()? as usize;
    let character = position["character"].as_u64()? as usize;
    Some(offset_at(text, line, character))
}

pub fn offset_at(text: &str, line: usize, character: usize) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(at) => start += at + 1,
            None => return text.len(),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |at| start + at);
    let mut units = 0;
    for (at, c) in text[start..end].char_indices() {
        if units >= character {
            return start + at;
        }
        units += c.len_utf16();
    }
    end
}

/// The LSP position (UTF-16) of a byte offset.
pub fn position_at(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let character: usize = before[line_start..].chars().map(char::len_utf16).sum();
    json!({"line": line, "character": character})
}

/// An LSP range from (line, character) pairs.
pub fn range(start_line: u32, start_character: u32, end_line: u32, end_character: u32) -> Value {
    json!({"start": {"line": start_line, "character": start_character},
        "end": {"line": end_line, "character": end_character}})
}

/// The LSP range of the first occurrence of `needle` in `text`.
pub fn range_of(text: &str, needle: &str) -> Value {
    let start = text.find(needle).unwrap_or_else(|| panic!("{needle:?} is not in {text:?}"));
    json!({"start": position_at(text, start), "end": position_at(text, start + needle.len())})
}

/// `file:///...`, percent-encoding what is not unreserved or `/`.
pub fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

pub fn uri_to_path(uri: &str) -> Result<PathBuf, String> {
    let rest = uri.strip_prefix("file://").ok_or_else(|| format!("{uri} is not a file URI"))?;
    // file://host/path: only the empty host (or localhost) is local.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(byte) = u8::from_str_radix(hex, 16) {
                decoded.push(byte);
                i += 3;
                continue;
            }
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(decoded).map(PathBuf::from).map_err(|_| format!("{uri} is not UTF-8"))
}

fn language_id(path: &str) -> &'static str {
    match Path::new(path).extension().and_then(|e| e.to_str()).unwrap_or("") {
        "rs" => "rust",
        "py" => "python",
        "js" => "javascript",
        "ts" => "typescript",
        "go" => "go",
        "c" | "h" => "c",
        "cpp" | "hpp" | "cc" => "cpp",
        "java" => "java",
        "md" => "markdown",
        "json" => "json",
        "toml" => "toml",
        "sh" => "shellscript",
        _ => "plaintext",
    }
}

fn read_message(reader: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
    let mut body = vec![0; length.unwrap_or(0)];
    reader.read_exact(&mut body)?;
    Ok(Some(body))
}

fn read_loop(shared: Arc<Shared>, stdout: ChildStdout) {
    let mut reader = BufReader::new(stdout);
    while let Ok(Some(body)) = read_message(&mut reader) {
        match serde_json::from_slice::<Value>(&body) {
            Ok(message) => shared.route(message),
            Err(_) => shared.with_inbox(|inbox| inbox.unparsable.push(String::from_utf8_lossy(&body).into_owned())),
        }
    }
    // Waiting requests see their sender dropped.
    lock(&shared.pending).clear();
    shared.with_inbox(|inbox| inbox.closed = true);
}

/// A running `tack lsp` and the client side of the connection.
pub struct LspClient {
    shared: Arc<Shared>,
    child: Child,
    next_id: AtomicI64,
    /// The workspace, canonical: the server keys documents by canonical paths.
    pub root: PathBuf,
    /// HOME and XDG_CONFIG_HOME of the server (no user config leaks in), and
    /// its stderr log.
    home: tempfile::TempDir,
    pub timeout: Duration,
    /// The answer to `initialize`, when the client sent it.
    pub initialize_result: Value,
}

impl LspClient {
    /// Starts `tack lsp` in `root` without any handshake.
    pub fn spawn(root: &Path) -> LspClient {
        let root = root.canonicalize().unwrap_or_else(|e| panic!("workspace {}: {e}", root.display()));
        let home = tempfile::tempdir().unwrap();
        let stderr = File::create(home.path().join("stderr.log")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tack"))
            .arg("lsp")
            .current_dir(&root)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env_remove("TACK_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("the tack binary starts");
        let shared = Arc::new(Shared {
            root: root.clone(),
            inbox: Mutex::new(Inbox::default()),
            changed: Condvar::new(),
            writer: Mutex::new(child.stdin.take()),
            pending: Mutex::new(HashMap::new()),
            documents: Mutex::new(HashMap::new()),
            policies: Mutex::new(Policies {
                approvals: VecDeque::new(),
                answers: VecDeque::new(),
                next_edits: VecDeque::new(),
                edits: EditPolicy::ApplyAll,
            }),
        });
        let stdout = child.stdout.take().unwrap();
        let reader = shared.clone();
        std::thread::spawn(move || read_loop(reader, stdout));
        LspClient {
            shared,
            child,
            next_id: AtomicI64::new(1),
            root,
            home,
            timeout: TIMEOUT,
            initialize_result: Value::Null,
        }
    }

    /// Starts `tack lsp` in `root` and does the `initialize`/`initialized`
    /// handshake with `init_options` as the initializationOptions.
    pub fn start(root: &Path, init_options: Value) -> LspClient {
        let mut client = LspClient::spawn(root);
        client.initialize(init_options);
        client
    }

    pub fn initialize(&mut self, init_options: Value) -> Value {
        let uri = file_uri(&self.root);
        let name = self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "tack-tests", "version": "0"},
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": name}],
            "capabilities": {
                "workspace": {
                    "applyEdit": true,
                    "workspaceEdit": {
                        "documentChanges": true,
                        "resourceOperations": ["create", "rename", "delete"],
                        "failureHandling": "abort",
                        "changeAnnotationSupport": {"groupsOnLabel": true}
                    },
                    "executeCommand": {"dynamicRegistration": false},
                    "workspaceFolders": true,
                    "configuration": false
                },
                "textDocument": {
                    "synchronization": {"dynamicRegistration": false, "didSave": true},
                    "codeAction": {
                        "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor"]}}
                    }
                },
                "window": {"workDoneProgress": true, "showMessage": {}},
                "general": {"positionEncodings": ["utf-16"]}
            },
            "initializationOptions": init_options,
        });
        let result = self.request("initialize", params).unwrap_or_else(|e| panic!("initialize failed: {e}"));
        self.notify("initialized", json!({}));
        self.initialize_result = result.clone();
        result
    }

    /// Sends a request and waits for its answer: `Ok(result)` or `Err(error)`.
    pub fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = mpsc::channel();
        lock(&self.shared.pending).insert(id, sender);
        let sent = self.shared.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if !sent {
            lock(&self.shared.pending).remove(&id);
            panic!("cannot send {method}: the server's stdin is closed\n{}", self.report());
        }
        match receiver.recv_timeout(self.timeout) {
            Ok(response) => match response.get("error") {
                Some(error) => Err(error.clone()),
                None => Ok(response.get("result").cloned().unwrap_or(Value::Null)),
            },
            Err(mpsc::RecvTimeoutError::Timeout) => {
                lock(&self.shared.pending).remove(&id);
                panic!("no answer to {method} (id {id}) within {:?}\n{}", self.timeout, self.report())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the server went away before answering {method}\n{}", self.report())
            }
        }
    }

    /// A request that must succeed.
    pub fn request_ok(&self, method: &str, params: Value) -> Value {
        self.request(method, params).unwrap_or_else(|e| panic!("{method} failed: {e}\n{}", self.report()))
    }

    pub fn notify(&self, method: &str, params: Value) {
        if !self.shared.write(&notification(method, params)) {
            panic!("cannot send {method}: the server's stdin is closed");
        }
    }

    /// Writes bytes as they are (for malformed input).
    pub fn send_raw(&self, bytes: &[u8]) {
        assert!(self.shared.write_raw(bytes), "the server's stdin is closed");
    }

    /// Frames `body` with a correct Content-Length, whatever it holds.
    pub fn send_body(&self, body: &[u8]) {
        self.send_raw(&frame(body));
    }

    /// Answers a server request left unanswered.
    pub fn respond(&self, id: Value, result: Value) {
        self.shared.respond(id, result);
    }

    // ------------------------------------------------------------ documents

    pub fn uri(&self, rel: &str) -> String {
        file_uri(&self.root.join(rel))
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// textDocument/didOpen, version 1; the client keeps the text.
    pub fn open(&self, rel: &str, text: &str) {
        let document = Document {
            uri: self.uri(rel),
            language_id: language_id(rel).to_string(),
            version: 1,
            text: text.to_string(),
        };
        let mut documents = lock(&self.shared.documents);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": document.uri, "languageId": document.language_id,
                "version": document.version, "text": document.text}}),
        );
        documents.insert(rel.to_string(), document);
    }

    /// An incremental textDocument/didChange replacing `range` (UTF-16
    /// positions) with `new_text`.
    pub fn change(&self, rel: &str, range: Value, new_text: &str) {
        let mut documents = lock(&self.shared.documents);
        let document = documents.get_mut(rel).unwrap_or_else(|| panic!("{rel} is not open"));
        let edit = json!({"range": range, "newText": new_text});
        let (text, _) = apply_text_edits(&document.text, &[&edit]).unwrap_or_else(|e| panic!("{e}"));
        document.text = text;
        document.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": document.uri, "version": document.version},
                "contentChanges": [{"range": range, "text": new_text}]}),
        );
    }

    /// A full-text textDocument/didChange.
    pub fn change_full(&self, rel: &str, text: &str) {
        let mut documents = lock(&self.shared.documents);
        let document = documents.get_mut(rel).unwrap_or_else(|| panic!("{rel} is not open"));
        document.text = text.to_string();
        document.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": document.uri, "version": document.version},
                "contentChanges": [{"text": text}]}),
        );
    }

    pub fn close(&self, rel: &str) {
        let mut documents = lock(&self.shared.documents);
        let document = documents.remove(rel).unwrap_or_else(|| panic!("{rel} is not open"));
        self.notify("textDocument/didClose", json!({"textDocument": {"uri": document.uri}}));
    }

    /// The client's text of an open document.
    pub fn text(&self, rel: &str) -> String {
        lock(&self.shared.documents).get(rel).unwrap_or_else(|| panic!("{rel} is not open")).text.clone()
    }

    pub fn version(&self, rel: &str) -> i64 {
        lock(&self.shared.documents).get(rel).unwrap_or_else(|| panic!("{rel} is not open")).version
    }

    pub fn is_open(&self, rel: &str) -> bool {
        lock(&self.shared.documents).contains_key(rel)
    }

    // ------------------------------------------------------------- policies

    /// Queues answers to `tack/approveTool` ("allow", "deny", "allowAlways"),
    /// used in order. With none left, approvals are never answered.
    pub fn approve_with(&self, decisions: &[&str]) {
        lock(&self.shared.policies).approvals.extend(decisions.iter().map(|d| d.to_string()));
    }

    /// Queues answers to `tack/askUser`, used in order (`None` dismisses).
    pub fn answer_with(&self, answers: &[Option<&str>]) {
        lock(&self.shared.policies).answers.extend(answers.iter().map(|a| a.map(str::to_string)));
    }

    /// The policy for every `workspace/applyEdit` (after the queued ones).
    pub fn set_edit_policy(&self, policy: EditPolicy) {
        lock(&self.shared.policies).edits = policy;
    }

    /// Policies for the next `workspace/applyEdit`s, one each, in order.
    pub fn queue_edit_policies(&self, policies: &[EditPolicy]) {
        lock(&self.shared.policies).next_edits.extend(policies.iter().cloned());
    }

    // --------------------------------------------------------------- inbox

    /// Looks at what arrived.
    pub fn inbox<T>(&self, f: impl FnOnce(&Inbox) -> T) -> T {
        f(&lock(&self.shared.inbox))
    }

    /// Waits until `f` finds something in the inbox; panics after the
    /// timeout, or when the server is gone, with everything that arrived.
    pub fn wait_for<T>(&self, what: &str, mut f: impl FnMut(&mut Inbox) -> Option<T>) -> T {
        let deadline = Instant::now() + self.timeout;
        let mut inbox = lock(&self.shared.inbox);
        loop {
            if let Some(found) = f(&mut inbox) {
                return found;
            }
            if inbox.closed {
                let summary = inbox.summary();
                drop(inbox);
                panic!("waiting for {what}, the server closed its output\n{summary}{}", self.stderr_tail());
            }
            let now = Instant::now();
            if now >= deadline {
                let summary = inbox.summary();
                drop(inbox);
                panic!("waited {:?} for {what}\n{summary}{}", self.timeout, self.stderr_tail());
            }
            inbox = self.shared.changed.wait_timeout(inbox, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Every event of every conversation, in arrival order (flattened: see [`Inbox::events`]).
    pub fn all_events(&self) -> Vec<Value> {
        self.inbox(|inbox| inbox.events.clone())
    }

    /// The events of one conversation, in arrival order.
    pub fn events(&self, conversation_id: &str) -> Vec<Value> {
        self.inbox(|inbox| inbox.events.iter().filter(|e| e["conversationId"] == conversation_id).cloned().collect())
    }

    /// The first event of the conversation (already arrived or to come) that
    /// `matches` accepts.
    pub fn wait_event(&self, conversation_id: &str, mut matches: impl FnMut(&Value) -> bool) -> Value {
        self.wait_for(&format!("an event of {conversation_id}"), |inbox| {
            inbox.events.iter().find(|e| e["conversationId"] == conversation_id && matches(e)).cloned()
        })
    }

    /// The first event of the conversation of this kind.
    pub fn wait_kind(&self, conversation_id: &str, kind: &str) -> Value {
        self.wait_for(&format!("a {kind} event of {conversation_id}"), |inbox| {
            inbox.events.iter().find(|e| e["conversationId"] == conversation_id && e["kind"] == kind).cloned()
        })
    }

    /// The next main-agent `turn_finished` of the conversation: the first
    /// call returns its first turn's, the second its second turn's, ...
    pub fn wait_turn_finished(&self, conversation_id: &str) -> Value {
        self.wait_for(&format!("turn_finished of {conversation_id}"), |inbox| {
            let taken = inbox.turn_finished_taken.get(conversation_id).copied().unwrap_or(0);
            let found = inbox
                .events
                .iter()
                .filter(|e| e["conversationId"] == conversation_id && e["kind"] == "turn_finished" && is_main(e))
                .nth(taken)
                .cloned();
            if found.is_some() {
                inbox.turn_finished_taken.insert(conversation_id.to_string(), taken + 1);
            }
            found
        })
    }

    /// The `turn_finished` of one turn.
    pub fn wait_turn_finished_of(&self, conversation_id: &str, turn_id: &str) -> Value {
        self.wait_event(conversation_id, |e| e["turnId"] == turn_id && e["kind"] == "turn_finished" && is_main(e))
    }

    pub fn approvals(&self) -> Vec<Value> {
        self.inbox(|inbox| inbox.approvals.clone())
    }

    pub fn apply_edits(&self) -> Vec<Value> {
        self.inbox(|inbox| inbox.apply_edits.clone())
    }

    pub fn log_messages(&self) -> Vec<Value> {
        self.inbox(|inbox| inbox.log_messages.clone())
    }

    pub fn server_requests(&self) -> Vec<Value> {
        self.inbox(|inbox| inbox.server_requests.clone())
    }

    // ----------------------------------------------------------- tack/* helpers

    /// tack/newConversation; returns the conversation id.
    pub fn new_conversation(&self, permission_mode: Option<&str>) -> String {
        let params = match permission_mode {
            Some(mode) => json!({ "permissionMode": mode }),
            None => json!({}),
        };
        let created = self.request_ok("tack/newConversation", params);
        created["conversationId"].as_str().unwrap_or_else(|| panic!("no conversationId in {created}")).to_string()
    }

    /// tack/turn; returns the turn id.
    pub fn turn(&self, conversation_id: &str, prompt: &str) -> String {
        let started = self.request_ok("tack/turn", json!({"conversationId": conversation_id, "prompt": prompt}));
        started["turnId"].as_str().unwrap_or_else(|| panic!("no turnId in {started}")).to_string()
    }

    pub fn cancel(&self, conversation_id: &str) {
        self.request_ok("tack/cancel", json!({ "conversationId": conversation_id }));
    }

    // ------------------------------------------------------------- lifetime

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `shutdown`, then `exit`; waits for the process to end.
    pub fn shutdown_and_exit(&mut self) -> ExitStatus {
        self.request("shutdown", Value::Null).unwrap_or_else(|e| panic!("shutdown failed: {e}"));
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Closes the server's stdin: the client went away.
    pub fn close_stdin(&self) {
        lock(&self.shared.writer).take();
    }

    /// Waits for the process to end; panics after the timeout.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() >= deadline {
                panic!("the server did not exit within {:?}\n{}", self.timeout, self.report());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.home.path().join("stderr.log")).unwrap_or_default()
    }

    fn stderr_tail(&self) -> String {
        let stderr = self.stderr();
        if stderr.is_empty() {
            return String::new();
        }
        let mut start = stderr.len().saturating_sub(4000);
        while !stderr.is_char_boundary(start) {
            start += 1;
        }
        format!("--- server stderr (tail) ---\n{}", &stderr[start..])
    }

    /// What arrived and the server's stderr, for failure messages.
    pub fn report(&self) -> String {
        format!("{}{}", self.inbox(Inbox::summary), self.stderr_tail())
    }
}

/// Whether an event is the main agent's (empty or absent agentPath).
pub fn is_main(event: &Value) -> bool {
    event["agentPath"].as_array().is_none_or(|path| path.is_empty())
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
