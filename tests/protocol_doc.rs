//! Holds docs/protocol.md and src/protocol.rs in step: every example on the
//! page must round-trip through the wire types unchanged, and every event
//! kind the code knows must have an example.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tack::protocol::lsp::*;
use tack::protocol::{Message, SequencedEvent};

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The bodies of the fenced blocks whose info string is exactly `info`.
fn blocks(markdown: &str, info: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim() == format!("```{info}") => current = Some(String::new()),
            None => {}
            Some(_) if line.trim() == "```" => found.push(current.take().unwrap()),
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    found
}

#[test]
fn every_event_example_round_trips_through_the_wire_types() {
    let doc = read("docs/protocol.md");
    let examples = blocks(&doc, "json event");
    assert!(!examples.is_empty());
    for example in &examples {
        let written: Value = serde_json::from_str(example).unwrap_or_else(|e| panic!("{example}: {e}"));
        let event: SequencedEvent =
            serde_json::from_value(written.clone()).unwrap_or_else(|e| panic!("{example}: {e}"));
        let reserialized = serde_json::to_value(&event).unwrap();
        assert_eq!(reserialized, written, "the example has fields the type does not (or misses some)");
    }
}

#[test]
fn every_event_kind_is_documented_with_an_example() {
    let doc = read("docs/protocol.md");
    let documented: Vec<String> = blocks(&doc, "json event")
        .iter()
        .map(|e| serde_json::from_str::<Value>(e).unwrap()["kind"].as_str().unwrap().to_string())
        .collect();
    let source = read("src/protocol.rs");
    let kinds: Vec<&str> = source
        .lines()
        .filter(|line| line.trim_start().starts_with("Event::") && line.contains("=> \""))
        .filter_map(|line| line.split('"').nth(1))
        .collect();
    assert_eq!(kinds.len(), 22, "the Event enum has 22 kinds; update this test with it");
    for kind in kinds {
        assert!(documented.iter().any(|d| d == kind), "event kind `{kind}` has no example in docs/protocol.md");
        assert!(doc.contains(&format!("### {kind}\n")), "event kind `{kind}` has no heading in docs/protocol.md");
    }
}

#[test]
fn message_examples_round_trip() {
    let doc = read("docs/protocol.md");
    let examples = blocks(&doc, "json message");
    assert_eq!(examples.len(), 2);
    for example in examples {
        let written: Value = serde_json::from_str(&example).unwrap();
        let message: Message = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(serde_json::to_value(&message).unwrap(), written);
    }
}

fn round_trip<T: Serialize + DeserializeOwned>(example: &str) {
    let written: Value = serde_json::from_str(example).unwrap_or_else(|e| panic!("{example}: {e}"));
    let parsed: T = serde_json::from_value(written.clone()).unwrap_or_else(|e| panic!("{example}: {e}"));
    assert_eq!(serde_json::to_value(&parsed).unwrap(), written, "{example}");
}

#[test]
fn every_lsp_example_round_trips_and_every_method_is_documented() {
    let doc = read("docs/protocol.md");
    let mut types = Vec::new();
    let lines: Vec<&str> = doc.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let Some(name) = line.trim().strip_prefix("```json lsp ") else { continue };
        let body: String =
            lines[index + 1..].iter().take_while(|l| l.trim() != "```").map(|l| format!("{l}\n")).collect();
        match name {
            "NewConversationParams" => round_trip::<NewConversationParams>(&body),
            "ConversationCreated" => round_trip::<ConversationCreated>(&body),
            "TurnParams" => round_trip::<TurnParams>(&body),
            "TurnStarted" => round_trip::<TurnStarted>(&body),
            "ConversationParams" => round_trip::<ConversationParams>(&body),
            "SessionInfo" => round_trip::<SessionInfo>(&body),
            "ResumeParams" => round_trip::<ResumeParams>(&body),
            "Resumed" => round_trip::<Resumed>(&body),
            "SetPermissionModeParams" => round_trip::<SetPermissionModeParams>(&body),
            "EventParams" => round_trip::<EventParams>(&body),
            "ApproveToolParams" => round_trip::<ApproveToolParams>(&body),
            "ApproveToolResult" => round_trip::<ApproveToolResult>(&body),
            "AskUserParams" => round_trip::<AskUserParams>(&body),
            "AskUserResult" => round_trip::<AskUserResult>(&body),
            "CodeActionArgs" => round_trip::<CodeActionArgs>(&body),
            "CodeActionStarted" => round_trip::<CodeActionStarted>(&body),
            other => panic!("docs/protocol.md names an unknown type `{other}`"),
        }
        types.push(name);
    }
    assert_eq!(types.len(), 17, "{types:?}");
    for method in [NEW_CONVERSATION, TURN, CANCEL, SESSIONS, RESUME, SET_PERMISSION_MODE, EVENT, APPROVE_TOOL, ASK_USER]
    {
        assert!(doc.contains(&format!("### {method}\n")), "{method} has no section in docs/protocol.md");
    }
}
