//! The tool-call parser and the grammar's opener watch on arbitrary model
//! text cut into arbitrary chunks: neither may panic, and where the chunk
//! boundaries fall must not change what they find.
//!
//! Input: the model text, then optionally a 0xFF byte (which no UTF-8 text
//! holds) and the chunking: the first byte after it picks the parser (bit 0:
//! one that knows tool names, so calls in code blocks count), each further
//! byte is the length of the next chunk in bytes, cycled. Without a 0xFF the
//! text is fed one char at a time. Seeds stay readable text that way.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tack::model::grammar::{CallFormat, OpenerWatch, Sighting};
use tack::model::toolcall::{ParseEvent, ToolCallParser, parse_complete};

const TOOLS: [&str; 3] = ["Read", "Grep", "Bash"];

fuzz_target!(|data: &[u8]| {
    let (text, chunking) = match data.iter().rposition(|&b| b == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let text = String::from_utf8_lossy(text);
    let knows_tools = chunking.first().is_some_and(|b| b & 1 == 1);
    let sizes: Vec<usize> = chunking.iter().skip(1).map(|&b| usize::from(b % 64) + 1).collect();
    let chunks = chunk(&text, if sizes.is_empty() { &[1] } else { &sizes });
    assert_eq!(chunks.concat(), text);

    let parser = || if knows_tools { ToolCallParser::for_tools(TOOLS) } else { ToolCallParser::new() };
    let whole = run(&mut parser(), &[&text]);
    let mut streaming = parser();
    let streamed = run(&mut streaming, &chunks);
    assert_eq!(streamed, whole, "chunks {chunks:?}");
    // `finish` resets the parser: it reads the same text the same way again.
    assert_eq!(run(&mut streaming, &chunks), whole, "a reused parser");
    if !knows_tools {
        assert_eq!(parse_complete(&text), whole);
    }

    for format in [CallFormat::Tack, CallFormat::Hermes, CallFormat::Llama3Json] {
        let in_one = first_sighting(format, &[&text]);
        assert_eq!(first_sighting(format, &chunks), in_one, "{format:?}, chunks {chunks:?}");
    }
});

/// Splits `text` into chunks of about the given byte lengths, cycled, each
/// moved on to the next char boundary.
fn chunk<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut chunks = Vec::new();
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at == text.len() {
            break;
        }
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        chunks.push(&text[at..end]);
        at = end;
    }
    chunks
}

/// Feeds the chunks, checks what holds of every event, and returns the
/// events with adjacent text merged (where text is split is not the parse).
fn run(parser: &mut ToolCallParser, chunks: &[&str]) -> Vec<ParseEvent> {
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    let mut merged: Vec<ParseEvent> = Vec::new();
    for event in events {
        match event {
            ParseEvent::Text(text) => {
                assert!(!text.is_empty(), "an empty Text event");
                match merged.last_mut() {
                    Some(ParseEvent::Text(last)) => last.push_str(&text),
                    _ => merged.push(ParseEvent::Text(text)),
                }
            }
            ParseEvent::Call(call) => {
                assert!(call.input.is_object(), "a call whose input is not an object: {call:?}");
                assert!(!call.name.trim().is_empty(), "a call without a name: {call:?}");
                merged.push(ParseEvent::Call(call));
            }
            other => merged.push(other),
        }
    }
    merged
}

/// Where the first call opener ends, in bytes from the start of the text,
/// and which opener it is, as the watch reports it token by token.
fn first_sighting(format: CallFormat, chunks: &[&str]) -> Option<(usize, &'static str)> {
    let mut watch = OpenerWatch::new(format);
    let mut fed = 0;
    for chunk in chunks {
        match watch.see(chunk.as_bytes()) {
            Sighting::None => fed += chunk.len(),
            Sighting::Opened { opener } => return Some((fed + chunk.len(), opener)),
            Sighting::Straddles { opener, keep } => {
                assert!(keep < chunk.len(), "a straddling opener keeps the whole token");
                return Some((fed + keep, opener));
            }
        }
    }
    None
}
