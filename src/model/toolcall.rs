//! Incremental parser that splits a local model's streamed completion into plain text,
//! `<think>` reasoning and the tool calls the model wrote as text (JSON lines, fenced JSON,
//! `<tool_use>` XML and native `<tool_call>` tags).
//!
//! Chunks may split anything anywhere, so the parser keeps one buffer whose front is always
//! the start of the construct its [`Mode`] is deciding about. Text is released as soon as no
//! continuation could turn it into part of a call; only the shortest ambiguous suffix is held.

use serde_json::{Map, Value};

/// Something the parser has become certain about.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseEvent {
    /// Plain text. Consecutive `Text` events may or may not be merged; callers concatenate.
    Text(String),
    /// Content of a `<think>...</think>` block, tags stripped.
    Thought(String),
    Call(ParsedCall),
    Malformed(MalformedCall),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    pub name: String,
    /// Always a JSON object.
    pub input: Value,
    /// Source text of the call: the JSON object (forms without tags) or the whole tag element.
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MalformedCall {
    pub name: Option<String>,
    /// Lowercase sentence shown to the model so it can fix its next call.
    pub problem: String,
    pub raw: String,
}

/// Streaming tool-call parser; see the module docs.
#[derive(Debug)]
pub struct ToolCallParser {
    /// Unconsumed input. Invariant: it begins where the construct `mode` describes begins.
    buf: String,
    mode: Mode,
    /// The enabled tools' names, when known: a call object inside a code
    /// block (```` ```python ````) is a call only if it names one of them.
    tools: Option<std::collections::BTreeSet<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Ordinary text; `line_start` means `buf` begins at the start of a line.
    Text { line_start: bool },
    /// Right after a line-start JSON call: trailing blanks and one newline belong to the call.
    AfterLineCall,
    /// `buf` begins with an indented backtick at line start: is it a ```` ```json ```` call fence?
    FenceOpen,
    /// Inside a fence that is not a call: verbatim text up to and including the closing fence.
    TextFence { line_start: bool },
    /// Inside a call fence after an object: another object or the closing fence follows.
    FenceAfterCall,
    /// A `{` object that may be, or is known to be, a JSON tool call.
    Json(JsonScan),
    /// Inside a tag element; `searched` bytes are known not to start the closing tag.
    Tagged { kind: TagKind, searched: usize },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TagKind {
    ToolUse,
    ToolCall,
    Think,
}

impl TagKind {
    const ALL: [TagKind; 3] = [TagKind::ToolUse, TagKind::ToolCall, TagKind::Think];

    fn open(self) -> &'static str {
        match self {
            TagKind::ToolUse => "<tool_use>",
            TagKind::ToolCall => "<tool_call>",
            TagKind::Think => "<think>",
        }
    }

    fn close(self) -> &'static str {
        match self {
            TagKind::ToolUse => "</tool_use>",
            TagKind::ToolCall => "</tool_call>",
            TagKind::Think => "</think>",
        }
    }
}

/// Incremental brace matcher over a JSON object that starts at `buf[start]`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct JsonScan {
    /// Offset of the `{`; bytes before it are indentation or the fence opener.
    start: usize,
    /// Next byte to scan; bytes in `start..pos` are folded into the fields below.
    pos: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The first key is complete and is one of [`CALL_KEYS`].
    is_call: bool,
    fenced: bool,
    /// Inside a code block that is not a call fence: a call only if it names
    /// a known tool, else the object is code and shown as text.
    in_code: bool,
}

impl JsonScan {
    fn new(start: usize, fenced: bool) -> Self {
        JsonScan { start, pos: start, fenced, ..Default::default() }
    }

    /// Returns the end offset of the object once its braces balance. A raw newline inside a
    /// string also ends it (JSON forbids one there), so a broken quote cannot swallow the
    /// rest of the completion; the text is then malformed and the parser says so.
    fn advance(&mut self, bytes: &[u8]) -> Option<usize> {
        while let Some(&b) = bytes.get(self.pos) {
            if self.in_string {
                match b {
                    b'\n' => return Some(self.pos),
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            return Some(self.pos + 1);
                        }
                    }
                    _ => {}
                }
            }
            self.pos += 1;
        }
        None
    }
}

enum Head {
    Undecided,
    Call,
    NotCall,
}

/// Keys a call object may start with. Serializers that sort keys put
/// "arguments" or "input" before "name" or "tool", so those count too.
/// Whether `text` is one of the tags this parser reads (`<tool_call>`,
/// `</think>`, ...): a model may write them as single special tokens, which
/// must then reach the parser.
pub fn is_call_tag(text: &str) -> bool {
    TagKind::ALL.iter().any(|kind| text == kind.open() || text == kind.close())
}

const CALL_KEYS: [&str; 5] = ["tool", "name", "input", "arguments", "parameters"];
/// The keys a call's arguments may come under.
const ARGUMENT_KEYS: [&str; 3] = ["input", "arguments", "parameters"];

/// Decides from the first key whether a `{` object is a tool call, as early as possible.
fn classify_head(object: &str) -> Head {
    let after = object.get(1..).unwrap_or_default().trim_start();
    let Some(key) = after.strip_prefix('"') else {
        return if after.is_empty() { Head::Undecided } else { Head::NotCall };
    };
    match key.find('"') {
        Some(end) if CALL_KEYS.contains(&&key[..end]) => Head::Call,
        None if CALL_KEYS.iter().any(|k| k.starts_with(key)) => Head::Undecided,
        _ => Head::NotCall,
    }
}

const FENCE: &str = "```";
const LINE_START: Mode = Mode::Text { line_start: true };
const MID_LINE: Mode = Mode::Text { line_start: false };

impl Default for ToolCallParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolCallParser {
    pub fn new() -> Self {
        ToolCallParser { buf: String::new(), mode: LINE_START, tools: None }
    }

    /// A parser that also reads a call to one of `tools` written on its own
    /// line inside a code block of any language. A grammar that holds calls
    /// from their opener on makes such a line a call wherever it appears, and
    /// small models put calls in ```` ```python ```` blocks.
    pub fn for_tools<'a>(tools: impl IntoIterator<Item = &'a str>) -> Self {
        ToolCallParser { tools: Some(tools.into_iter().map(str::to_string).collect()), ..Self::new() }
    }

    /// Whether the model was offered no tool at all: then nothing it
    /// writes is a call, and a JSON object is code it shows.
    fn offers_no_tools(&self) -> bool {
        self.tools.as_ref().is_some_and(|tools| tools.is_empty())
    }

    /// Feed the next chunk of model text; returns what became certain.
    pub fn push(&mut self, chunk: &str) -> Vec<ParseEvent> {
        self.buf.push_str(chunk);
        let mut out = Vec::new();
        while self.step(&mut out) {}
        out
    }

    /// End of the stream: flush held-back text; an unterminated call becomes Malformed.
    /// The parser is reset and can be reused.
    pub fn finish(&mut self) -> Vec<ParseEvent> {
        let mut out = Vec::new();
        while self.step(&mut out) {}
        let rest = std::mem::take(&mut self.buf);
        match std::mem::replace(&mut self.mode, LINE_START) {
            Mode::Json(scan) if scan.is_call && !scan.in_code && !self.offers_no_tools() => {
                let raw = rest.get(scan.start..).unwrap_or_default();
                out.push(malformed(
                    sniff_json_name(raw),
                    "unterminated JSON tool call: the completion ended before its braces balanced",
                    raw,
                ));
            }
            Mode::Tagged { kind: TagKind::Think, .. } => {
                let thought = rest.get(TagKind::Think.open().len()..).unwrap_or_default();
                out.push(ParseEvent::Thought(thought.to_string()));
            }
            Mode::Tagged { kind, .. } => {
                let name = match kind {
                    TagKind::ToolUse => xml_name(&rest),
                    _ => sniff_json_name(&rest),
                };
                let problem = format!("unterminated tool call: the completion ended inside {}", kind.open());
                out.push(malformed(name, problem, &rest));
            }
            _ => push_text(&mut out, &rest),
        }
        out
    }

    /// Makes one decision about the front of `buf`. Returns false when more input is needed.
    /// Every `true` either consumes input or moves to a mode that will, so the loop ends.
    fn step(&mut self, out: &mut Vec<ParseEvent>) -> bool {
        match self.mode {
            Mode::Text { line_start: true } => self.line_start(),
            Mode::Text { line_start: false } => self.mid_line(out),
            Mode::AfterLineCall => self.after_line_call(),
            Mode::FenceOpen => self.fence_open(out),
            Mode::TextFence { line_start } => self.text_fence(line_start, out),
            Mode::FenceAfterCall => self.fence_after_call(),
            Mode::Json(scan) => self.json(scan, out),
            Mode::Tagged { kind, searched } => self.tagged(kind, searched, out),
        }
    }

    fn line_start(&mut self) -> bool {
        let indent = count_leading(&self.buf, b" \t");
        self.mode = match self.buf.as_bytes().get(indent) {
            None => return false,
            Some(b'{') => Mode::Json(JsonScan::new(indent, false)),
            Some(b'`') => Mode::FenceOpen,
            Some(_) => MID_LINE,
        };
        true
    }

    fn mid_line(&mut self, out: &mut Vec<ParseEvent>) -> bool {
        if self.buf.is_empty() {
            return false;
        }
        let Some(i) = self.buf.find(['<', '\n']) else {
            self.emit_text(out, self.buf.len());
            return true;
        };
        if self.buf.as_bytes()[i] == b'\n' {
            self.emit_text(out, i + 1);
            self.mode = LINE_START;
            return true;
        }
        self.emit_text(out, i);
        for kind in TagKind::ALL {
            if self.buf.starts_with(kind.open()) {
                self.mode = Mode::Tagged { kind, searched: kind.open().len() };
                return true;
            }
        }
        if TagKind::ALL.iter().any(|kind| kind.open().starts_with(self.buf.as_str())) {
            return i > 0;
        }
        self.emit_text(out, 1);
        true
    }

    fn after_line_call(&mut self) -> bool {
        let blanks = count_leading(&self.buf, b" \t\r");
        match self.buf.as_bytes().get(blanks) {
            None => return false,
            Some(b'\n') => {
                self.buf.drain(..=blanks);
                self.mode = LINE_START;
            }
            Some(_) => self.mode = MID_LINE,
        }
        true
    }

    fn fence_open(&mut self, out: &mut Vec<ParseEvent>) -> bool {
        let indent = count_leading(&self.buf, b" \t");
        let rest = &self.buf[indent..];
        if !rest.starts_with(FENCE) {
            if rest.len() < FENCE.len() && FENCE.starts_with(rest) {
                return false;
            }
            self.mode = MID_LINE;
            return true;
        }
        let after = &rest[FENCE.len()..];
        let newline = after.find('\n');
        let info = after[..newline.unwrap_or(after.len())].trim().to_ascii_lowercase();
        let info_ok = match newline {
            Some(_) => info.is_empty() || info == "json",
            None => "json".starts_with(&info),
        };
        if !info_ok {
            self.mode = Mode::TextFence { line_start: false };
            return true;
        }
        let Some(newline) = newline else { return false };
        let content = indent + FENCE.len() + newline + 1;
        let body = &self.buf[content..];
        let first = content + (body.len() - body.trim_start().len());
        match self.buf.as_bytes().get(first) {
            None => return false,
            Some(b'{') => self.mode = Mode::Json(JsonScan::new(first, true)),
            Some(_) => {
                self.emit_text(out, content);
                self.mode = Mode::TextFence { line_start: true };
            }
        }
        true
    }

    fn text_fence(&mut self, line_start: bool, out: &mut Vec<ParseEvent>) -> bool {
        if line_start {
            let indent = count_leading(&self.buf, b" \t");
            let rest = &self.buf[indent..];
            if rest.starts_with(FENCE) {
                self.emit_text(out, indent + FENCE.len());
                self.mode = MID_LINE;
                return true;
            }
            if rest.starts_with('{') && self.tools.is_some() {
                self.mode = Mode::Json(JsonScan { in_code: true, ..JsonScan::new(indent, true) });
                return true;
            }
            if rest.len() < FENCE.len() && FENCE.starts_with(rest) {
                return false;
            }
        }
        if let Some(i) = self.buf.find('\n') {
            self.emit_text(out, i + 1);
            self.mode = Mode::TextFence { line_start: true };
            return true;
        }
        // A line-start `buf` is non-empty here, so `false` always means "nothing to do".
        let progress = !self.buf.is_empty();
        self.mode = Mode::TextFence { line_start: false };
        self.emit_text(out, self.buf.len());
        progress
    }

    fn fence_after_call(&mut self) -> bool {
        let blanks = self.buf.len() - self.buf.trim_start().len();
        let rest = &self.buf[blanks..];
        if rest.is_empty() || (rest.len() < FENCE.len() && FENCE.starts_with(rest)) {
            return false;
        }
        if rest.starts_with(FENCE) {
            self.buf.drain(..blanks + FENCE.len());
            self.mode = Mode::AfterLineCall;
        } else if rest.starts_with('{') {
            self.buf.drain(..blanks);
            self.mode = Mode::Json(JsonScan::new(0, true));
        } else {
            // Not the shape of a call fence after all: show the remainder verbatim.
            self.mode = Mode::TextFence { line_start: false };
        }
        true
    }

    fn json(&mut self, mut scan: JsonScan, out: &mut Vec<ParseEvent>) -> bool {
        if !scan.is_call {
            match classify_head(&self.buf[scan.start..]) {
                Head::Undecided => return false,
                Head::Call => scan.is_call = true,
                Head::NotCall => {
                    self.emit_text(out, scan.start);
                    self.mode = if scan.fenced { Mode::TextFence { line_start: false } } else { MID_LINE };
                    return true;
                }
            }
        }
        let Some(end) = scan.advance(self.buf.as_bytes()) else {
            self.mode = Mode::Json(scan);
            return false;
        };
        let raw = &self.buf[scan.start..end];
        let call = call_from_json(raw, raw, "tool call has no \"tool\" name");
        let known = |name: &str| self.tools.as_ref().is_some_and(|tools| tools.contains(name));
        let unknown = matches!(&call, ParseEvent::Call(c) if !known(&c.name));
        let data = || self.tools.is_some() && unknown && is_data(raw);
        if scan.in_code || self.offers_no_tools() || data() {
            if !matches!(&call, ParseEvent::Call(c) if known(&c.name)) {
                // Code that looks like a call (a config's `{"name": …}`):
                // shown as it was written.
                self.emit_text(out, end);
                self.mode = if scan.fenced { Mode::TextFence { line_start: false } } else { MID_LINE };
                return true;
            }
            self.emit_text(out, scan.start);
            let end = end - scan.start;
            out.push(call);
            self.buf.drain(..end);
            self.mode = Mode::FenceAfterCall;
            return true;
        }
        out.push(call);
        self.buf.drain(..end);
        self.mode = if scan.fenced { Mode::FenceAfterCall } else { Mode::AfterLineCall };
        true
    }

    fn tagged(&mut self, kind: TagKind, searched: usize, out: &mut Vec<ParseEvent>) -> bool {
        let close = kind.close();
        let Some(at) = find_from(&self.buf, close, searched) else {
            let searched = self.buf.len().saturating_sub(close.len() - 1).max(searched);
            self.mode = Mode::Tagged { kind, searched };
            return false;
        };
        let end = at + close.len();
        let raw = &self.buf[..end];
        let inner = &self.buf[kind.open().len()..at];
        out.push(match kind {
            TagKind::Think => ParseEvent::Thought(inner.to_string()),
            TagKind::ToolUse => xml_call(inner, raw),
            TagKind::ToolCall => call_from_json(inner.trim(), raw, "tool call has no \"name\""),
        });
        self.buf.drain(..end);
        // A think block is block-level: what follows it may start a line-start call.
        self.mode = if kind == TagKind::Think { LINE_START } else { MID_LINE };
        true
    }

    fn emit_text(&mut self, out: &mut Vec<ParseEvent>, len: usize) {
        push_text(out, &self.buf[..len]);
        self.buf.drain(..len);
    }
}

/// Convenience for tests and non-streaming callers: `push(all)` + `finish()`, adjacent Text merged.
pub fn parse_complete(text: &str) -> Vec<ParseEvent> {
    let mut parser = ToolCallParser::new();
    let mut events = parser.push(text);
    for event in parser.finish() {
        match event {
            ParseEvent::Text(text) => push_text(&mut events, &text),
            other => events.push(other),
        }
    }
    events
}

/// Appends text, merging with a preceding Text event; never emits an empty Text.
fn push_text(out: &mut Vec<ParseEvent>, text: &str) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(ParseEvent::Text(last)) => last.push_str(text),
        _ => out.push(ParseEvent::Text(text.to_string())),
    }
}

fn count_leading(s: &str, set: &[u8]) -> usize {
    s.bytes().take_while(|b| set.contains(b)).count()
}

/// Byte offset of `needle` in `hay` at or after `from`; `from` need not be a char boundary.
fn find_from(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let tail = hay.as_bytes().get(from..)?;
    tail.windows(needle.len()).position(|w| w == needle.as_bytes()).map(|i| from + i)
}

fn malformed(name: Option<String>, problem: impl Into<String>, raw: &str) -> ParseEvent {
    let problem = problem.into();
    ParseEvent::Malformed(MalformedCall { name, problem, raw: raw.to_string() })
}

fn call_or_malformed(name: String, input: Result<Value, String>, raw: &str) -> ParseEvent {
    match input {
        Ok(input) => ParseEvent::Call(ParsedCall { name, input, raw: raw.to_string() }),
        Err(problem) => malformed(Some(name), problem, raw),
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Interprets `json` as `{"tool"|"name": ..., "input"|"arguments"|"parameters": {...}}`.
fn call_from_json(json: &str, raw: &str, missing_name: &str) -> ParseEvent {
    let value = match serde_json::from_str::<Value>(json) {
        Ok(value) => value,
        Err(e) => {
            let problem = format!("malformed JSON in tool call: {e}");
            return malformed(sniff_json_name(json), problem, raw);
        }
    };
    let Value::Object(mut object) = value else {
        let problem = format!("tool call must be a JSON object, not {}", describe(&value));
        return malformed(None, problem, raw);
    };
    let name = match object.get("tool").or_else(|| object.get("name")) {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_string(),
        _ => return malformed(None, missing_name, raw),
    };
    let args = ARGUMENT_KEYS.into_iter().find_map(|key| Some((key, object.remove(key)?)));
    let input = match args {
        None | Some((_, Value::Null)) => Ok(empty_object()),
        Some((_, object @ Value::Object(_))) => Ok(object),
        // `arguments` as a string holding the object is the OpenAI wire format.
        Some((key, Value::String(s))) if s.trim().is_empty() || s.trim_start().starts_with('{') => {
            parse_object(&s, &format!("\"{key}\" string"))
        }
        Some((key, other)) => Err(format!("tool call \"{key}\" must be a JSON object, not {}", describe(&other))),
    };
    call_or_malformed(name, input, raw)
}

/// Whether `raw`, a JSON object naming no offered tool, is data the model
/// shows rather than a call: it holds keys of its own but no arguments
/// (`{"name": "shop", "port": 8080}`, a package.json quoted).
fn is_data(raw: &str) -> bool {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(raw) else { return false };
    !object.keys().any(|key| ARGUMENT_KEYS.contains(&key.as_str()))
        && object.keys().any(|key| !CALL_KEYS.contains(&key.as_str()))
}

/// Parses the text of an arguments object; `what` names it in the problem sentence.
fn parse_object(json: &str, what: &str) -> Result<Value, String> {
    if json.trim().is_empty() {
        return Ok(empty_object());
    }
    match serde_json::from_str::<Value>(json) {
        Ok(object @ Value::Object(_)) => Ok(object),
        Ok(other) => Err(format!("tool call {what} must be a JSON object, not {}", describe(&other))),
        Err(e) => Err(format!("malformed JSON in tool call {what}: {e}")),
    }
}

fn xml_call(inner: &str, raw: &str) -> ParseEvent {
    let Some(name) = xml_name(inner) else {
        return malformed(None, "tool call has no <name>", raw);
    };
    let input = match inner.find("<input>") {
        None => Ok(empty_object()),
        Some(at) => {
            let body = &inner[at + "<input>".len()..];
            // rfind: the JSON itself may mention "</input>" inside a string.
            match body.rfind("</input>") {
                None => Err("tool call <input> is not closed with </input>".to_string()),
                Some(end) => parse_object(&body[..end], "<input>"),
            }
        }
    };
    call_or_malformed(name, input, raw)
}

fn xml_name(text: &str) -> Option<String> {
    let start = text.find("<name>")? + "<name>".len();
    let len = text[start..].find("</name>")?;
    let name = text[start..start + len].trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Best-effort name from JSON that does not parse, so the model is told which call failed.
fn sniff_json_name(text: &str) -> Option<String> {
    ["\"tool\"", "\"name\""].into_iter().find_map(|key| {
        let after = &text[text.find(key)? + key.len()..];
        let value = after.trim_start().strip_prefix(':')?.trim_start();
        value.strip_prefix('"')?;
        let mut escaped = false;
        let len = value.bytes().skip(1).position(|b| {
            let closes = b == b'"' && !escaped;
            escaped = b == b'\\' && !escaped;
            closes
        })?;
        let name: String = serde_json::from_str(value.get(..len + 2)?).ok()?;
        (!name.trim().is_empty()).then(|| name.trim().to_string())
    })
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed<'a>(chunks: impl IntoIterator<Item = &'a str>) -> Vec<ParseEvent> {
        feed_to(ToolCallParser::new(), chunks)
    }

    fn feed_to<'a>(mut parser: ToolCallParser, chunks: impl IntoIterator<Item = &'a str>) -> Vec<ParseEvent> {
        let mut events: Vec<ParseEvent> = chunks.into_iter().flat_map(|c| parser.push(c)).collect();
        events.extend(parser.finish());
        let mut merged = Vec::new();
        for event in events {
            match event {
                ParseEvent::Text(text) => push_text(&mut merged, &text),
                other => merged.push(other),
            }
        }
        merged
    }

    /// Splits on char boundaries, cycling through `sizes` (counted in chars).
    fn chunked<'a>(input: &'a str, sizes: &[usize]) -> Vec<&'a str> {
        let mut bounds: Vec<usize> = input.char_indices().map(|(i, _)| i).collect();
        bounds.push(input.len());
        let (mut chunks, mut at) = (Vec::new(), 0);
        for size in sizes.iter().cycle() {
            if at + 1 >= bounds.len() {
                break;
            }
            let next = (at + size).min(bounds.len() - 1);
            chunks.push(&input[bounds[at]..bounds[next]]);
            at = next;
        }
        chunks
    }

    /// Runs every chunking, asserts they all agree, and returns the merged events.
    fn check(input: &str) -> Vec<ParseEvent> {
        let whole = parse_complete(input);
        let patterns: [&[usize]; 5] = [&[1], &[2], &[3, 1, 4, 1, 5, 9, 2, 6], &[7, 13, 5], &[64]];
        for sizes in patterns {
            assert_eq!(feed(chunked(input, sizes)), whole, "sizes {sizes:?} of {input:?}");
        }
        whole
    }

    fn text(s: &str) -> ParseEvent {
        ParseEvent::Text(s.to_string())
    }

    fn call(name: &str, input: Value, raw: &str) -> ParseEvent {
        ParseEvent::Call(ParsedCall { name: name.into(), input, raw: raw.into() })
    }

    const READ: &str = r#"{"tool": "Read", "input": {"file_path": "a.rs"}}"#;

    fn read() -> ParseEvent {
        call("Read", json!({"file_path": "a.rs"}), READ)
    }

    /// (name, input) of every call, ignoring text and raw.
    fn calls(events: &[ParseEvent]) -> Vec<(&str, Value)> {
        let calls = events.iter().filter_map(|e| match e {
            ParseEvent::Call(c) => Some((c.name.as_str(), c.input.clone())),
            _ => None,
        });
        calls.collect()
    }

    fn malformed_at(events: &[ParseEvent], i: usize) -> &MalformedCall {
        match &events[i] {
            ParseEvent::Malformed(m) => m,
            _ => panic!("expected Malformed at {i}: {events:?}"),
        }
    }

    #[test]
    fn plain_and_unicode_text_pass_through_unchanged() {
        for input in [
            "Hello!\n  indented\n\n\ta < b and c > d, <b>bold</b> </think>\n",
            "héllo 🦀 世界\n{ 🦀 }\n<工具>\n```\n🎉\n```\n",
        ] {
            assert_eq!(check(input), [text(input)]);
        }
        assert_eq!(check(""), []);
    }

    #[test]
    fn holds_back_only_the_ambiguous_suffix() {
        let mut p = ToolCallParser::new();
        assert_eq!(p.push("hello wor"), [text("hello wor")]);
        assert_eq!(p.push("ld. see <tool_"), [text("ld. see ")]);
        assert_eq!(p.push("x"), [text("<tool_x")]);
        assert_eq!(p.push("\n   "), [text("\n")]);
        assert_eq!(p.push("x"), [text("   x")]);
        assert_eq!(p.push("\n`"), [text("\n")]);
        assert_eq!(p.push("`"), []);
        assert_eq!(p.push("`rust"), [text("```rust")]);
        assert_eq!(p.push("\n```\n{"), [text("\n```\n")]);
        assert_eq!(p.push(" \"to"), []);
        assert_eq!(p.push("ken\": 1}"), [text("{ \"token\": 1}")]);
        assert_eq!(p.push("\n{\"tool\": \"X\""), [text("\n")]);
        assert_eq!(p.push("}"), [call("X", json!({}), r#"{"tool": "X"}"#)]);
        assert_eq!(p.finish(), []);
    }

    #[test]
    fn single_line_json_calls() {
        let input = format!("I'll read it.\n{READ}\nDone.\n");
        assert_eq!(check(&input), [text("I'll read it.\n"), read(), text("Done.\n")]);
        // Indentation belongs to the call; a call may end the completion.
        assert_eq!(check(&format!("  \t{READ}")), [read()]);
        let events = check("{\"tool\": \"Ls\"}\n{\"name\": \"Cat\", \"arguments\": {\"path\": \"b\"}}\n");
        assert_eq!(calls(&events), [("Ls", json!({})), ("Cat", json!({"path": "b"}))]);
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn bad_input_or_name_is_malformed() {
        let input = concat!(
            "{\"tool\": \"Read\", \"input\": [1, 2]}\nok\n",
            "{\"tool\": \"Read\", \"input\": \"a.rs\"}\n",
            "{\"tool\": 3, \"input\": {}}\n",
            "<tool_call>{\"arguments\": {}}</tool_call>",
        );
        let events = check(input);
        let problem = |i| malformed_at(&events, i).problem.as_str();
        assert_eq!(problem(0), "tool call \"input\" must be a JSON object, not an array");
        assert_eq!(events[1], text("ok\n"));
        assert_eq!(problem(2), "tool call \"input\" must be a JSON object, not a string");
        assert_eq!(problem(3), "tool call has no \"tool\" name");
        assert_eq!(problem(4), "tool call has no \"name\"");
        assert_eq!(malformed_at(&events, 0).name.as_deref(), Some("Read"));
    }

    #[test]
    fn pretty_printed_json_calls() {
        let raw = "{\n  \"tool\": \"Edit\",\n  \"input\": {\n    \"path\": \"a.rs\",\n    \"n\": [1]\n  }\n}";
        let events = check(&format!("Editing:\n\n{raw}\nthen more\n"));
        let edit = call("Edit", json!({"path": "a.rs", "n": [1]}), raw);
        assert_eq!(events, [text("Editing:\n\n"), edit, text("then more\n")]);
        let spaced = check("{\n\n  \"name\" : \"Ls\"\n}\n");
        assert_eq!(calls(&spaced), [("Ls", json!({}))]);
    }

    #[test]
    fn braces_inside_json_strings_do_not_count() {
        let raw = r#"{"tool": "Write", "input": {"content": "f() { \"}\" }\n}{", "q": "\\"}}"#;
        let write = call("Write", json!({"content": "f() { \"}\" }\n}{", "q": "\\"}), raw);
        assert_eq!(check(&format!("{raw}\nafter")), [write, text("after")]);
    }

    #[test]
    fn fenced_json_calls() {
        let ls = r#"{"name": "Ls", "arguments": {}}"#;
        let input = format!("Reading:\n```json\n{READ}\n```\nand\n  ```\n{ls}\n  ```  \nend");
        let expected = [text("Reading:\n"), read(), text("and\n"), call("Ls", json!({}), ls), text("end")];
        assert_eq!(check(&input), expected);
        let events = check("```JSON\n{\"tool\": \"A\"}\n\n{\"tool\": \"B\"}\n```\n");
        assert_eq!(calls(&events), [("A", json!({})), ("B", json!({}))]);
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn fenced_code_that_is_not_a_call_is_text() {
        let input = concat!(
            "Example:\n```rust\nfn main() {\n}\n```\n",
            "```json\n{\"tool_x\": 1}\n```\n",
            "```\n\n{ not json }\n```\n``\nx\n",
            "```xml\n<tool_use><name>Read</name></tool_use>\n```\n",
        );
        assert_eq!(check(input), [text(input)]);
        // A text block's closing fence is not taken for the opening of a call fence.
        assert_eq!(check(&format!("```\nplain\n```\n{READ}\n")), [text("```\nplain\n```\n"), read()]);
    }

    #[test]
    fn a_call_to_a_known_tool_inside_a_code_block_is_a_call_and_other_code_stays_text() {
        // Any chunking gives the same events.
        let with_tools = |input: &str| {
            let patterns: [&[usize]; 4] = [&[1], &[2], &[3, 1, 4, 1, 5, 9, 2, 6], &[64]];
            let runs: Vec<_> = patterns
                .iter()
                .map(|sizes| feed_to(ToolCallParser::for_tools(["Grep"]), chunked(input, sizes)))
                .collect();
            assert!(runs.windows(2).all(|w| w[0] == w[1]), "{runs:?}");
            runs[0].clone()
        };
        let grep = "{\"name\" : \"Grep\", \"arguments\" : {\"pattern\" : \"port\"} }";
        let input = format!("Searching.\n\n```python\n# tools\n{grep}\n```\nDone.");
        assert_eq!(
            with_tools(&input),
            [text("Searching.\n\n```python\n# tools\n"), call("Grep", json!({"pattern": "port"}), grep), text("Done.")]
        );
        // Unclosed, as a generation that ends at the call leaves it.
        let open = format!("```python\n{grep}");
        assert_eq!(with_tools(&open), [text("```python\n"), call("Grep", json!({"pattern": "port"}), grep)]);

        // Code that only looks like a call, or a call to a tool that does not
        // exist, stays code; without tool names nothing in code is a call.
        let code =
            "```python\nperson = 1\n{\"name\": \"Bob\", \"age\": 3}\n  {\"name\": \"Nope\", \"arguments\": {}}\n```\n";
        assert_eq!(with_tools(code), [text(code)]);
        assert_eq!(check(&input), [text(&input)]);
    }

    #[test]
    fn offered_no_tools_a_model_writes_no_calls_only_code() {
        // A config file shown whole, a call-shaped line, and one cut off.
        let input = "config.json\n```json\n{\n  \"name\": \"shop\",\n  \"debug\": false\n}\n```\n\
                     {\"name\": \"Read\", \"arguments\": {\"file_path\": \"a\"}}\n{\"name\": \"cut";
        for sizes in [&[1][..], &[3, 1, 4], &[64]] {
            let parser = ToolCallParser::for_tools(std::iter::empty::<&str>());
            assert_eq!(feed_to(parser, chunked(input, sizes)), [text(input)], "sizes {sizes:?}");
        }
    }

    #[test]
    fn a_json_file_quoted_among_tools_is_text_and_a_call_to_an_unknown_tool_is_still_a_call() {
        let package = "Its package.json reads:\n```json\n{\"name\": \"my-app\", \"version\": \"1.0.0\"}\n```\nDone.";
        assert_eq!(feed_to(ToolCallParser::for_tools(["Read"]), chunked(package, &[5])), [text(package)]);
        // Arguments make it a call, known tool or not: the model is told the
        // tool does not exist.
        let unknown = "{\"name\": \"Raed\", \"arguments\": {\"file_path\": \"a\"}}";
        let events = feed_to(ToolCallParser::for_tools(["Read"]), chunked(unknown, &[5]));
        assert_eq!(events, [call("Raed", json!({"file_path": "a"}), unknown)]);
    }

    #[test]
    fn brace_line_that_is_not_a_call_is_text() {
        let input = "{foo} bar\n{\"key\": \"tool\"}\n  {\n}\n{ \"names\": 1 }\n{";
        assert_eq!(check(input), [text(input)]);
    }

    #[test]
    fn xml_form() {
        let raw = "<tool_use>\n  <name>Read</name>\n  <input>{\"file_path\": \"a.rs\"}</input>\n</tool_use>";
        let ls = "<tool_use><name> Ls </name></tool_use>";
        let events = check(&format!("Let me look: {raw} ok\n{ls}"));
        let read = call("Read", json!({"file_path": "a.rs"}), raw);
        assert_eq!(events, [text("Let me look: "), read, text(" ok\n"), call("Ls", json!({}), ls)]);

        let events = check(concat!(
            "<tool_use><input>{}</input></tool_use>",
            "<tool_use><name>R</name><input>{\"a\": }</input></tool_use>",
        ));
        assert_eq!(malformed_at(&events, 0).problem, "tool call has no <name>");
        let m = malformed_at(&events, 1);
        assert!(m.problem.starts_with("malformed JSON in tool call <input>: expected value"));
        assert_eq!(m.name.as_deref(), Some("R"));
    }

    #[test]
    fn native_form_variants() {
        let input = concat!(
            "<tool_call>\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"a.rs\"}}\n</tool_call>\n",
            "<tool_call>{\"name\": \"Grep\", \"arguments\": \"{\\\"pattern\\\": \\\"fn\\\"}\"}</tool_call>",
            "<tool_call>{\"name\": \"Ls\", \"parameters\": {\"path\": \".\"}}</tool_call>",
            "<tool_call>{\"name\": \"Bash\", \"input\": {\"cmd\": \"ls\"}}</tool_call>",
            "<tool_call>{\"name\": \"Grep\", \"arguments\": \"{pattern\"}</tool_call>",
        );
        let events = check(input);
        let expected = [
            ("Read", json!({"file_path": "a.rs"})),
            ("Grep", json!({"pattern": "fn"})),
            ("Ls", json!({"path": "."})),
            ("Bash", json!({"cmd": "ls"})),
        ];
        assert_eq!(calls(&events), expected);
        assert_eq!(events[1], text("\n"));
        let m = malformed_at(&events, 5);
        let expected = "malformed JSON in tool call \"arguments\" string: key must be a string";
        assert!(m.problem.starts_with(expected), "{}", m.problem);
    }

    #[test]
    fn think_blocks() {
        let events = check("<think>\nuse {\"tool\": \"X\"}?\n</think>\n\nAnswer.");
        let thought = ParseEvent::Thought("\nuse {\"tool\": \"X\"}?\n".into());
        assert_eq!(events, [thought, text("\n\nAnswer.")]);
        let events = check("<think>still going <tool_use>");
        assert_eq!(events, [ParseEvent::Thought("still going <tool_use>".into())]);
        let events = check(&format!("<think>hm</think>{READ}"));
        assert_eq!(events, [ParseEvent::Thought("hm".into()), read()]);
    }

    #[test]
    fn several_calls_of_every_form_in_one_completion() {
        let input = format!(
            "Plan.\n{READ}\n\n```json\n{{\"tool\": \"B\"}}\n```\nmid <tool_use><name>C</name></tool_use> \
             and <tool_call>{{\"name\": \"D\"}}</tool_call>\n{{\n  \"name\": \"E\"\n}}\nbye"
        );
        let events = check(&input);
        let names: Vec<&str> = calls(&events).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["Read", "B", "C", "D", "E"]);
        let shown: String =
            events.iter().filter_map(|e| if let ParseEvent::Text(t) = e { Some(t.as_str()) } else { None }).collect();
        assert_eq!(shown, "Plan.\n\nmid  and \nbye");
    }

    #[test]
    fn malformed_call_then_good_call() {
        let bad = r#"{"tool": "Read", "input": {"file_path": "a.rs"},}"#;
        let events = check(&format!("{bad}\n{READ}\n"));
        assert_eq!(events.len(), 2);
        let m = malformed_at(&events, 0);
        assert_eq!((m.name.as_deref(), m.raw.as_str()), (Some("Read"), bad));
        assert!(m.problem.starts_with("malformed JSON in tool call: trailing comma"), "{}", m.problem);
        assert_eq!(events[1], read());
    }

    #[test]
    fn broken_quote_does_not_swallow_following_lines() {
        let bad = r#"{"tool": "Read, "input": {"file_path": "a.rs"}}"#;
        let events = check(&format!("{bad}\nmore text\n{READ}"));
        assert!(malformed_at(&events, 0).problem.starts_with("malformed JSON in tool call"));
        assert_eq!(events[1..], [text("more text\n"), read()]);
    }

    #[test]
    fn unterminated_calls_at_finish() {
        let events = check("ok <tool_use><name>Read</name><input>{\"a\": 1}");
        assert_eq!(events[0], text("ok "));
        let m = malformed_at(&events, 1);
        assert_eq!(m.problem, "unterminated tool call: the completion ended inside <tool_use>");
        assert_eq!(m.name.as_deref(), Some("Read"));
        assert_eq!(m.raw, "<tool_use><name>Read</name><input>{\"a\": 1}");

        let events = check("<tool_call>{\"name\": \"Ls\"");
        let expected = "unterminated tool call: the completion ended inside <tool_call>";
        assert_eq!(malformed_at(&events, 0).problem, expected);

        let events = check("x\n{\"tool\": \"Read\", \"input\": {\n\nmore words");
        assert_eq!(events[0], text("x\n"));
        let m = malformed_at(&events, 1);
        assert!(m.problem.starts_with("unterminated JSON tool call"));
        assert_eq!(m.raw, "{\"tool\": \"Read\", \"input\": {\n\nmore words");
        assert_eq!(m.name.as_deref(), Some("Read"));

        let events = check("```json\n{\"tool\": \"A\"");
        assert!(malformed_at(&events, 0).problem.starts_with("unterminated JSON tool call"));
    }

    #[test]
    fn partial_markers_at_finish_are_text() {
        for input in ["a <tool_", "x\n{\"to", "```js", "``", "   ", "<thi", "```json\n  "] {
            assert_eq!(check(input), [text(input)], "{input:?}");
        }
    }

    #[test]
    fn calls_whose_keys_were_sorted_by_a_serializer_are_recognised() {
        let sorted = r#"{"input":{"file_path":"a.rs"},"tool":"Read"}"#;
        assert_eq!(check(sorted), [call("Read", json!({"file_path": "a.rs"}), sorted)]);
        let openai = r#"{"arguments":{"q":1},"name":"Find"}"#;
        assert_eq!(calls(&check(openai)), [("Find", json!({"q": 1}))]);
        assert_eq!(check("{\"other\": 1}\n"), [text("{\"other\": 1}\n")]);
    }
}
