//! Holds docs/protocol.md and src/protocol.rs in step: every example on the
//! page must round-trip through the wire types unchanged, and every event
//! kind the code knows must have an example.

use std::path::Path;

use serde_json::Value;
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
    assert_eq!(kinds.len(), 20, "the Event enum has 20 kinds; update this test with it");
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
