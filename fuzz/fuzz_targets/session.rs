//! The session reader (`src/agent/session.rs`) on torn and corrupt files. A
//! file whose header is whole must load, whatever follows it, keeping every
//! message of the complete lines before the damage in order; resuming it and
//! appending must give a file that reads back as what was loaded plus the new
//! message. Nothing may panic, header damage included.
//!
//! Input: a script of entries (messages with arbitrary text, calls and their
//! results, usage with arbitrary counts, task lists, turn ends), written with
//! the library's own types, then one kind of damage at an offset the input
//! picks: the file cut there, a byte overwritten, bytes inserted, or bytes
//! appended at the end.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tack::agent::SessionStore;
use tack::agent::session::{FORMAT, Header, VERSION};
use tack::protocol::{Block, Message, Role, StopReason, Usage};

const ID: &str = "fuzz";

/// One workspace for the whole run; each input rewrites the session file.
fn workspace() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tempfile::Builder::new().prefix("tack-fuzz-session").tempdir().unwrap().keep();
        std::fs::create_dir_all(root.join(".tack/sessions")).unwrap();
        root
    })
}

fuzz_target!(|data: &[u8]| {
    let mut script = Script(data);
    let header = Header { format: FORMAT.into(), version: VERSION, id: ID.into(), created_at: "2026-01-01T00:00:00Z".into() };
    let mut file = serde_json::to_string(&header).unwrap().into_bytes();
    file.push(b'\n');
    let header_len = file.len();
    // (end of the line in the file, the message it holds)
    let mut lines: Vec<(usize, Option<Message>)> = Vec::new();
    let entries = script.byte() % 12;
    for _ in 0..entries {
        for (entry, message) in script.entries(lines.len()) {
            file.extend(entry.to_string().into_bytes());
            file.push(b'\n');
            lines.push((file.len(), message));
        }
    }

    // The damage, and the offset before which every line is whole.
    let offset = usize::from(u16::from_le_bytes([script.byte(), script.byte()])) % (file.len() + 1);
    let intact = match script.byte() % 5 {
        0 => {
            file.truncate(offset);
            offset
        }
        1 => {
            if offset < file.len() {
                file[offset] = script.byte();
            }
            offset
        }
        2 => {
            let inserted = script.bytes();
            file.splice(offset..offset, inserted);
            offset
        }
        3 => {
            let end = file.len();
            file.extend(script.bytes());
            end
        }
        _ => file.len(),
    };

    let path = workspace().join(".tack/sessions").join(format!("{ID}.jsonl"));
    std::fs::write(&path, &file).unwrap();
    let store = SessionStore::for_workspace(workspace());
    let loaded = store.load(ID);
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    if intact < header_len {
        return;
    }
    let loaded = loaded.unwrap_or_else(|e| panic!("a session with a whole header fails to load: {e}"));
    let kept: Vec<&Message> = lines.iter().filter(|(end, _)| *end <= intact).filter_map(|(_, m)| m.as_ref()).collect();
    assert!(loaded.messages.len() >= kept.len(), "lost messages: {:?}", loaded.warnings);
    let read: Vec<&Message> = loaded.messages[..kept.len()].iter().collect();
    assert_eq!(read, kept, "{:?}", loaded.warnings);

    let mut writer = store.resume(&loaded).unwrap();
    let after = Message::user_text("after the damage");
    writer.append(&after, None).unwrap();
    drop(writer);
    let reloaded = store.load(ID).unwrap();
    let mut expected = loaded.messages.clone();
    expected.push(after);
    assert_eq!(reloaded.messages, expected, "resumed: {:?}", reloaded.warnings);
});

struct Script<'a>(&'a [u8]);

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }

    fn bytes(&mut self) -> Vec<u8> {
        let len = usize::from(self.byte()).min(self.0.len());
        let (taken, rest) = self.0.split_at(len);
        self.0 = rest;
        taken.to_vec()
    }

    fn text(&mut self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }

    fn count(&mut self) -> u64 {
        let mut bytes = [0; 8];
        bytes.iter_mut().for_each(|b| *b = self.byte());
        u64::from_le_bytes(bytes)
    }

    /// The next entry lines, as a session writer writes them: a call comes
    /// with the line of its result.
    fn entries(&mut self, n: usize) -> Vec<(Value, Option<Message>)> {
        let at = "2026-01-01T00:00:01Z";
        let message = |message: Message| (json!({"at": at, "message": message}), Some(message));
        match self.byte() % 6 {
            0 => vec![message(Message::user_text(self.text()))],
            1 => {
                let reply = Message { role: Role::Assistant, blocks: vec![Block::Text { text: self.text() }] };
                let usage = Usage {
                    prompt_tokens: self.count(),
                    cached_prompt_tokens: self.count(),
                    completion_tokens: self.count(),
                    prompt_eval_ms: self.count(),
                    decode_ms: self.count(),
                    cost_usd: (self.byte() & 1 == 1).then_some(0.25),
                };
                vec![(json!({"at": at, "message": reply, "usage": usage}), Some(reply))]
            }
            2 => {
                let id = format!("call-{n}");
                let input = json!({"command": self.text()});
                let call = Block::ToolUse { id: id.clone(), name: "Bash".into(), input };
                let thought = Block::Thought { text: self.text() };
                let result = Block::ToolResult {
                    tool_use_id: id,
                    output: self.text(),
                    is_error: self.byte() & 1 == 1,
                    summary: String::new(),
                };
                vec![
                    message(Message { role: Role::Assistant, blocks: vec![thought, call] }),
                    message(Message { role: Role::User, blocks: vec![result] }),
                ]
            }
            3 => vec![(json!({"at": at, "tasks": []}), None)],
            4 => vec![(json!({"at": at, "stop": StopReason::Cancelled}), None)],
            _ => vec![message(Message { role: Role::Assistant, blocks: vec![Block::Text { text: self.text() }] })],
        }
    }
}
