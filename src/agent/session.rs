//! Sessions: one JSONL file per conversation, appended as messages complete.
//!
//! Format (version 2): the first line is a [`Header`]; every following line is
//! one [`Entry`] holding a complete message, the whole task list after a
//! tool changed it (the last one wins), or how a turn ended. Version 1 had
//! only messages. Each line is written and flushed
//! as its message completes, so a crash can tear at most the last line. A torn
//! last line is skipped with a warning; a resumed session cuts it off before
//! appending, so the file never holds a broken line in its middle.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::protocol::{Block, Message, Role, StopReason, Usage};
use crate::tools::task::Task;

pub const FORMAT: &str = "tack-session";
pub const VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub id: String,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
    /// Usage of the generation that wrote an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tasks: Option<Vec<Task>>,
    /// How a turn ended, written when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop: Option<StopReason>,
}

impl Entry {
    fn now() -> Entry {
        Entry { at: now_rfc3339(), message: None, usage: None, tasks: None, stop: None }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no session `{id}` in {dir}")]
    NotFound { id: String, dir: String },
    #[error("invalid session id `{0}`: ids are letters, digits, `-` and `_`")]
    BadId(String),
    #[error("session file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("session file {path} is not a tack session: {reason}")]
    BadHeader { path: String, reason: String },
}

/// A session read back from disk.
#[derive(Debug)]
pub struct LoadedSession {
    pub header: Header,
    pub messages: Vec<Message>,
    /// The task list as last saved.
    pub tasks: Vec<Task>,
    /// Usage summed over every generation of the session.
    pub usage: Usage,
    /// Problems found and skipped (a torn last line), for the user to see.
    pub warnings: Vec<String>,
    /// Bytes of the file that hold complete lines: appending starts here.
    valid_len: u64,
    /// The answers to calls a crash cut off, when they end the session:
    /// written first when it is resumed.
    unsaved_tail: Option<Message>,
    path: PathBuf,
}

/// One line of `tack sessions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub session_id: String,
    /// The first prompt, on one line.
    pub title: String,
    pub updated_at: String,
    pub message_count: usize,
    pub usage: Usage,
}

/// The sessions of one workspace: `<workspace>/.tack/sessions/`.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// Appends messages to an open session file.
#[derive(Debug)]
pub struct SessionWriter {
    id: String,
    file: File,
    path: PathBuf,
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + '_ {
    move |source| SessionError::Io { path: path.display().to_string(), source }
}

impl SessionStore {
    pub fn for_workspace(root: &Path) -> SessionStore {
        SessionStore { dir: root.join(".tack").join("sessions") }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, id: &str) -> Result<PathBuf, SessionError> {
        let valid = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(SessionError::BadId(id.to_string()));
        }
        Ok(self.dir.join(format!("{id}.jsonl")))
    }

    /// Starts a new session file with a fresh id.
    pub fn create(&self) -> Result<SessionWriter, SessionError> {
        std::fs::create_dir_all(&self.dir).map_err(io_error(&self.dir))?;
        // Sessions are tack's transcripts, not the project: kept out of git,
        // and out of the agent's own searches, which honour .gitignore files
        // (a Grep that finds the conversation it is part of misleads the model).
        let ignore = self.dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "*\n").map_err(io_error(&ignore))?;
        }
        let created_at = now_rfc3339();
        // Sortable by time, unique enough for one workspace: 20261122-034500-3fa9.
        let stamp: String = created_at.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
        let id = format!("{}-{}-{:04x}", &stamp[..8.min(stamp.len())], &stamp[8.min(stamp.len())..], fastrand::u16(..));
        let path = self.path_of(&id)?;
        let header = Header { format: FORMAT.into(), version: VERSION, id: id.clone(), created_at };
        let mut line = serde_json::to_string(&header).unwrap_or_default();
        line.push('\n');
        // The file appears with its header whole: written under another
        // name first, then linked in place (which fails rather than replace
        // a session of the same id). A process killed between creating the
        // file and writing its header left a session no one could load.
        let fresh = path.with_extension("jsonl.new");
        let written = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&fresh)
            .and_then(|mut file| file.write_all(line.as_bytes()).and_then(|_| file.flush()));
        let linked = written.and_then(|_| match std::fs::hard_link(&fresh, &path) {
            // A file system without hard links: renamed into place instead.
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => std::fs::rename(&fresh, &path),
            linked => linked,
        });
        let _ = std::fs::remove_file(&fresh);
        linked.map_err(io_error(&path))?;
        let file = OpenOptions::new().append(true).open(&path).map_err(io_error(&path))?;
        Ok(SessionWriter { id, file, path })
    }

    pub fn load(&self, id: &str) -> Result<LoadedSession, SessionError> {
        let path = self.path_of(id)?;
        if !path.exists() {
            return Err(SessionError::NotFound { id: id.to_string(), dir: self.dir.display().to_string() });
        }
        load_file(&path)
    }

    /// Opens a session for appending, cutting off a torn last line first.
    pub fn resume(&self, loaded: &LoadedSession) -> Result<SessionWriter, SessionError> {
        let path = &loaded.path;
        let file = OpenOptions::new().write(true).open(path).map_err(io_error(path))?;
        file.set_len(loaded.valid_len).map_err(io_error(path))?;
        drop(file);
        let file = OpenOptions::new().append(true).open(path).map_err(io_error(path))?;
        let mut writer = SessionWriter { id: loaded.header.id.clone(), file, path: path.clone() };
        if let Some(answers) = &loaded.unsaved_tail {
            writer.append(answers, None)?;
        }
        Ok(writer)
    }

    /// Every session, most recently updated first. Unreadable files are
    /// listed with their problem as the title rather than hidden.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&self.dir)(e)),
        };
        let mut summaries = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_none_or(|ext| ext != "jsonl") {
                continue;
            }
            let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let modified = entry.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
            let updated_at = humantime::format_rfc3339_seconds(modified).to_string();
            let summary = match load_file(&path) {
                Ok(loaded) => SessionSummary {
                    session_id: loaded.header.id,
                    title: title_of(&loaded.messages),
                    updated_at,
                    message_count: loaded.messages.len(),
                    usage: loaded.usage,
                },
                Err(e) => SessionSummary {
                    session_id: id,
                    title: format!("(unreadable: {e})"),
                    updated_at,
                    message_count: 0,
                    usage: Usage::default(),
                },
            };
            summaries.push(summary);
        }
        summaries.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| b.session_id.cmp(&a.session_id)));
        Ok(summaries)
    }
}

fn title_of(messages: &[Message]) -> String {
    let first = messages.iter().find(|m| m.role == Role::User).map(Message::text).unwrap_or_default();
    let line = first.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

fn load_file(path: &Path) -> Result<LoadedSession, SessionError> {
    let file = File::open(path).map_err(io_error(path))?;
    let mut reader = BufReader::new(file);
    let bad_header = |reason: String| SessionError::BadHeader { path: path.display().to_string(), reason };

    // Lines are read as bytes: one that is not UTF-8 is a bad line like any
    // other, not the end of the file.
    let mut line = Vec::new();
    let mut valid_len = reader.read_until(b'\n', &mut line).map_err(io_error(path))? as u64;
    let header: Header = serde_json::from_slice(&line).map_err(|e| bad_header(e.to_string()))?;
    if header.format != FORMAT {
        return Err(bad_header(format!("format is `{}`", header.format)));
    }
    if header.version > VERSION {
        return Err(bad_header(format!("format version {} is newer than this tack reads ({VERSION})", header.version)));
    }

    let mut messages = Vec::new();
    let mut tasks = Vec::new();
    let mut usage = Usage::default();
    let mut warnings = Vec::new();
    let mut number = 1;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(io_error(path))?;
        if read == 0 {
            break;
        }
        number += 1;
        let complete = line.ends_with(b"\n");
        match serde_json::from_slice::<Entry>(&line) {
            Ok(entry) if complete => {
                if let Some(generation) = entry.usage {
                    usage += generation;
                }
                messages.extend(entry.message);
                if let Some(saved) = entry.tasks {
                    tasks = saved;
                }
                valid_len += read as u64;
            }
            parsed => {
                let at_end = reader.fill_buf().map(|rest| rest.is_empty()).unwrap_or(true);
                let problem = match parsed {
                    Ok(_) => "has no line end".to_string(),
                    Err(e) => e.to_string(),
                };
                if at_end {
                    warnings.push(format!(
                        "{}: skipped a torn last line (line {number}: {problem}); the {} messages before it are intact",
                        path.display(),
                        messages.len()
                    ));
                } else {
                    // A bad line in the middle is not a crash artefact: keep going
                    // without it, but say so, and never cut the file there.
                    warnings.push(format!("{}: skipped unreadable line {number}: {problem}", path.display()));
                    valid_len += read as u64;
                }
                if at_end {
                    break;
                }
            }
        }
    }
    let last_on_disk = messages.last().map(|m| m.role);
    let interrupted = answer_interrupted_calls(&mut messages);
    // A crash can only cut the end: the answers added there are written when
    // the session is resumed, so the file reads whole from then on. Answers
    // are added after the last message only when it is the assistant's; a
    // last user message was read from the file (answers added before it,
    // after a damaged line, are added again at every load).
    let answered_last = last_on_disk == Some(Role::Assistant);
    let unsaved_tail = (answered_last && messages.last().is_some_and(|m| m.role == Role::User))
        .then(|| messages.last().cloned())
        .flatten();
    if interrupted > 0 {
        warnings.push(format!(
            "{}: {interrupted} tool call(s) never got a result (tack stopped while they ran); they are marked interrupted",
            path.display()
        ));
    }
    for warning in &warnings {
        tracing::warn!(session = %header.id, "{warning}");
    }
    Ok(LoadedSession { header, messages, tasks, usage, warnings, valid_len, unsaved_tail, path: path.to_path_buf() })
}

/// What a call that tack stopped during reads as its result.
pub const INTERRUPTED: &str = "interrupted: tack stopped while this call ran, so its result was never recorded; \
any change it made may or may not have happened: check before repeating it";

/// Gives every call without a result one saying it was interrupted: a session
/// cut short by a crash ends with calls whose results were never written, and
/// models (and model servers) expect each call to be answered. Returns how
/// many calls were answered so.
fn answer_interrupted_calls(messages: &mut Vec<Message>) -> usize {
    let mut answered = 0;
    let mut index = 0;
    while index < messages.len() {
        let calls: Vec<(String, String)> = match &messages[index] {
            Message { role: Role::Assistant, blocks } => blocks
                .iter()
                .filter_map(|block| match block {
                    Block::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        if calls.is_empty() {
            index += 1;
            continue;
        }
        let results_follow = messages.get(index + 1).is_some_and(|next| next.role == Role::User);
        if !results_follow {
            messages.insert(index + 1, Message { role: Role::User, blocks: Vec::new() });
        }
        let next = &mut messages[index + 1];
        let missing: Vec<Block> = calls
            .into_iter()
            .filter(|(id, _)| {
                !next
                    .blocks
                    .iter()
                    .any(|block| matches!(block, Block::ToolResult { tool_use_id, .. } if tool_use_id == id))
            })
            .map(|(id, name)| Block::ToolResult {
                tool_use_id: id,
                output: INTERRUPTED.to_string(),
                is_error: true,
                summary: format!("{name} was interrupted"),
            })
            .collect();
        answered += missing.len();
        next.blocks.splice(0..0, missing);
        index += 2;
    }
    answered
}

impl SessionWriter {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one message (with the usage of its generation, for assistant
    /// messages) as one line and flushes it.
    pub fn append(&mut self, message: &Message, usage: Option<&Usage>) -> Result<(), SessionError> {
        self.write(&Entry { message: Some(message.clone()), usage: usage.copied(), ..Entry::now() })
    }

    /// Saves the whole task list; loading keeps the last one saved.
    pub fn append_tasks(&mut self, tasks: &[Task]) -> Result<(), SessionError> {
        self.write(&Entry { tasks: Some(tasks.to_vec()), ..Entry::now() })
    }

    /// Records how a turn ended, so a reader of the file sees a cancelled
    /// or failed turn as such.
    pub fn append_stop(&mut self, stop: StopReason) -> Result<(), SessionError> {
        self.write(&Entry { stop: Some(stop), ..Entry::now() })
    }

    fn write(&mut self, entry: &Entry) -> Result<(), SessionError> {
        let mut line = serde_json::to_string(entry).unwrap_or_default();
        line.push('\n');
        self.file.write_all(line.as_bytes()).and_then(|_| self.file.flush()).map_err(io_error(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_appears_with_its_header_whole_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        let writer = store.create().unwrap();
        let loaded = store.load(&writer.id).unwrap();
        assert_eq!(loaded.header.id, writer.id);
        let names: Vec<String> = std::fs::read_dir(writer.path().parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| n == ".gitignore" || n.ends_with(".jsonl")), "{names:?}");
    }

    #[test]
    fn calls_cut_off_by_a_crash_are_answered_as_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        let mut writer = store.create().unwrap();
        let call = |id: &str| Block::ToolUse { id: id.into(), name: "Bash".into(), input: serde_json::json!({}) };
        let result = |id: &str| Block::ToolResult {
            tool_use_id: id.into(),
            output: "ok".into(),
            is_error: false,
            summary: String::new(),
        };
        writer.append(&Message::user_text("go"), None).unwrap();
        writer.append(&Message { role: Role::Assistant, blocks: vec![call("a"), call("b")] }, None).unwrap();
        writer.append(&Message { role: Role::User, blocks: vec![result("a")] }, None).unwrap();
        writer.append(&Message { role: Role::Assistant, blocks: vec![call("c")] }, None).unwrap();
        let loaded = store.load(writer.id()).unwrap();
        let results: Vec<(String, bool)> = loaded
            .messages
            .iter()
            .flat_map(|m| m.blocks.iter())
            .filter_map(|b| match b {
                Block::ToolResult { tool_use_id, is_error, .. } => Some((tool_use_id.clone(), *is_error)),
                _ => None,
            })
            .collect();
        assert_eq!(results, [("b".to_string(), true), ("a".to_string(), false), ("c".to_string(), true)]);
        assert_eq!(loaded.messages.len(), 5);
        assert_eq!(loaded.messages[4].role, Role::User);
        assert!(loaded.warnings.iter().any(|w| w.contains("2 tool call(s)")), "{:?}", loaded.warnings);
    }
    use crate::protocol::Block;

    #[test]
    fn messages_round_trip_and_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        assert!(store.list().unwrap().is_empty());
        let mut writer = store.create().unwrap();
        writer.append(&Message::user_text("fix the\nparser please"), None).unwrap();
        let reply = Message { role: Role::Assistant, blocks: vec![Block::Text { text: "done".into() }] };
        writer.append(&reply, Some(&Usage { prompt_tokens: 10, completion_tokens: 2, ..Usage::default() })).unwrap();
        let loaded = store.load(writer.id()).unwrap();
        assert_eq!(loaded.messages.len(), 2);
        assert_eq!(loaded.messages[1], reply);
        assert!(loaded.warnings.is_empty());
        let list = store.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].title, "fix the parser please");
        assert_eq!(list[0].message_count, 2);
        assert_eq!((list[0].usage.prompt_tokens, list[0].usage.completion_tokens), (10, 2));
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_cut_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        let mut writer = store.create().unwrap();
        writer.append(&Message::user_text("one"), None).unwrap();
        writer.append(&Message::user_text("two"), None).unwrap();
        let path = writer.path().to_path_buf();
        drop(writer);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"at":"2026-01-01T00:00:00Z","message":{"role":"user","blo"#).unwrap();
        let id = path.file_stem().unwrap().to_str().unwrap().to_string();

        let loaded = store.load(&id).unwrap();
        assert_eq!(loaded.messages.len(), 2);
        assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
        assert!(loaded.warnings[0].contains("torn last line"));

        let mut resumed = store.resume(&loaded).unwrap();
        resumed.append(&Message::user_text("three"), None).unwrap();
        let reloaded = store.load(&id).unwrap();
        let texts: Vec<String> = reloaded.messages.iter().map(Message::text).collect();
        assert_eq!(texts, ["one", "two", "three"]);
        assert!(reloaded.warnings.is_empty());
    }

    #[test]
    fn bad_ids_and_missing_sessions_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        assert!(matches!(store.load("../etc/passwd"), Err(SessionError::BadId(_))));
        let err = store.load("nope").unwrap_err().to_string();
        assert!(err.contains("no session `nope`"), "{err}");
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/session.rs`), as were the next two:
    /// a line that was not UTF-8 failed the whole load.
    #[test]
    fn a_line_that_is_not_utf8_is_skipped_like_any_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        let mut writer = store.create().unwrap();
        writer.append(&Message::user_text("one"), None).unwrap();
        let mut raw = OpenOptions::new().append(true).open(writer.path()).unwrap();
        raw.write_all(b"{\"at\": \"\xff\xfe\"}\n").unwrap();
        writer.append(&Message::user_text("two"), None).unwrap();
        raw.write_all(b"\xff").unwrap();
        let loaded = store.load(writer.id()).unwrap();
        let texts: Vec<String> = loaded.messages.iter().map(Message::text).collect();
        assert_eq!(texts, ["one", "two"]);
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    }

    #[test]
    fn usage_past_the_largest_count_saturates() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        let mut writer = store.create().unwrap();
        let reply = Message { role: Role::Assistant, blocks: vec![Block::Text { text: "ok".into() }] };
        let usage = Usage { prompt_tokens: u64::MAX, completion_tokens: u64::MAX, ..Usage::default() };
        writer.append(&reply, Some(&usage)).unwrap();
        writer.append(&reply, Some(&usage)).unwrap();
        let loaded = store.load(writer.id()).unwrap();
        assert_eq!((loaded.usage.prompt_tokens, loaded.usage.completion_tokens), (u64::MAX, u64::MAX));
    }

    /// Answers added after a damaged line, in the middle, were taken for
    /// the unsaved tail and the last message was written a second time.
    #[test]
    fn answers_added_before_a_damaged_line_are_not_written_on_resume() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::for_workspace(dir.path());
        let mut writer = store.create().unwrap();
        let call = |id: &str| Message {
            role: Role::Assistant,
            blocks: vec![Block::ToolUse { id: id.into(), name: "Bash".into(), input: serde_json::json!({}) }],
        };
        let result = Message {
            role: Role::User,
            blocks: vec![Block::ToolResult {
                tool_use_id: "b".into(),
                output: "ok".into(),
                is_error: false,
                summary: String::new(),
            }],
        };
        writer.append(&call("a"), None).unwrap();
        OpenOptions::new().append(true).open(writer.path()).unwrap().write_all(b"{not json\n").unwrap();
        writer.append(&call("b"), None).unwrap();
        writer.append(&result, None).unwrap();
        let loaded = store.load(writer.id()).unwrap();
        assert_eq!(loaded.messages.len(), 4);
        assert_eq!(loaded.messages[3], result);

        let mut resumed = store.resume(&loaded).unwrap();
        resumed.append(&Message::user_text("next"), None).unwrap();
        let reloaded = store.load(writer.id()).unwrap();
        let mut expected = loaded.messages.clone();
        expected.push(Message::user_text("next"));
        assert_eq!(reloaded.messages, expected);
    }
}
