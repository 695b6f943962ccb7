//! Call grammars: GBNF that holds a local model's tool calls to the enabled
//! tools and their input schemas, in the call format the model writes.
//!
//! The grammar is never handed to llama.cpp's lazy mode. That mode accepts
//! any token while it waits for the trigger and then feeds the text after
//! the trigger into the grammar; a token that straddles the trigger (`"s`
//! after `{"tool`) leaves the grammar with no way on, and llama.cpp aborts
//! the process (`GGML_ASSERT(!stacks.empty())`). Instead the decoder watches
//! the free text for [`CallFormat::opener`] itself ([`OpenerWatch`]), makes
//! a straddling token end exactly at the opener, and only then starts a plain
//! (non-lazy) grammar whose first words are the opener.

use super::BackendError;
use crate::protocol::ToolSpec;

/// How a model writes a tool call as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFormat {
    /// tack's text protocol: `{"tool": "Read", "input": {...}}` on one line.
    Tack,
    /// Hermes, Qwen 2.5 and their kin:
    /// `<tool_call>\n{"name": "Read", "arguments": {...}}\n</tool_call>`.
    Hermes,
    /// Llama 3.x JSON calls: `{"name": "Read", "parameters": {...}}`.
    Llama3Json,
}

impl CallFormat {
    /// The format a chat template teaches, when it speaks tools.
    pub fn of_template(source: &str) -> Option<CallFormat> {
        if source.contains("<tool_call>") {
            Some(CallFormat::Hermes)
        } else if source.contains("<|start_header_id|>") && source.contains("\"parameters\"") {
            Some(CallFormat::Llama3Json)
        } else {
            None
        }
    }

    /// The texts that start a call: from the end of one the grammar holds.
    /// Small Hermes-style models sometimes drop the tags and write the bare
    /// JSON object, which the parser reads as a call too, so that opens one.
    pub fn openers(self) -> &'static [&'static str] {
        match self {
            CallFormat::Tack => &["{\"tool\""],
            CallFormat::Hermes => &["<tool_call>", "{\"name\""],
            CallFormat::Llama3Json => &["{\"name\""],
        }
    }

    /// Keys of the call object: the tool's name, then its input.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            CallFormat::Tack => ("tool", "input"),
            CallFormat::Hermes => ("name", "arguments"),
            CallFormat::Llama3Json => ("name", "parameters"),
        }
    }
}

/// Blank space between the tokens of a pretty-printed JSON call.
const PRETTY_SPACE: &str = "space ::= [ \\t\\n]{0,16}\n";

/// GBNF for calls in `format` to `tools`. With `required` the reply must
/// consist of one to `max_calls` calls; without, `root` is exactly one call,
/// which the decoder starts at the opener and leaves when the call is complete.
pub fn call_grammar(
    format: CallFormat,
    tools: &[ToolSpec],
    required: bool,
    max_calls: u32,
) -> Result<String, BackendError> {
    if tools.is_empty() {
        return Err(BackendError::Fatal("a call grammar needs at least one tool".into()));
    }
    let (name_key, input_key) = format.keys();
    // Written as text so the keys keep this order (the name first, as models
    // write it): llama.cpp's converter lays properties out in schema order.
    let alternatives: Vec<String> = tools
        .iter()
        .map(|tool| {
            format!(
                r#"{{"type":"object","properties":{{"{name_key}":{{"const":{}}},"{input_key}":{}}},"required":["{name_key}","{input_key}"],"additionalProperties":false}}"#,
                serde_json::Value::from(tool.name.as_str()),
                required_first(&tool.input_schema)
            )
        })
        .collect();
    let schema = format!(r#"{{"anyOf":[{}]}}"#, alternatives.join(","));
    let generated = llama_cpp_2::json_schema_to_grammar(&schema)
        .map_err(|e| BackendError::Fatal(format!("cannot build a grammar from the tool schemas: {e}")))?;
    let mut out = String::new();
    match max_calls {
        2.. if required => out.push_str(&format!("root ::= call (\"\\n\" call){{0,{}}}\n", max_calls - 1)),
        _ => out.push_str("root ::= call\n"),
    }
    match format {
        CallFormat::Hermes => {
            out.push_str("call ::= \"<tool_call>\" \"\\n\"? object \"\\n\"? \"</tool_call>\" | object\n")
        }
        CallFormat::Tack | CallFormat::Llama3Json => out.push_str("call ::= object\n"),
    }
    for line in generated.lines() {
        if let Some(rest) = line.strip_prefix("root ::=") {
            out.push_str(&format!("object ::={rest}\n"));
        } else if line.starts_with("space ::=") {
            out.push_str(match format {
                // tack's protocol puts a call on one line.
                CallFormat::Tack => "space ::= \" \"?\n",
                // JSON calls keep the layout the model writes: small models
                // pretty-print them (`{\n  "name": ...`), and held to one line
                // mid-call they drift (` : ` after a key, a string never
                // closed) until they loop.
                CallFormat::Hermes | CallFormat::Llama3Json => PRETTY_SPACE,
            });
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

/// GBNF whose only sentences are `choices`: a reply that picks one of them.
pub fn choice_grammar(choices: &[String]) -> String {
    let alternatives: Vec<String> = choices.iter().map(|choice| gbnf_literal(choice)).collect();
    format!("root ::= {}\n", alternatives.join(" | "))
}

/// `text` as a GBNF string literal.
fn gbnf_literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// GBNF for a whole reply decoded by a server, which cannot start a grammar
/// midway as tack's decoder does: free text in which no call opener can
/// appear, then at most one call held to the tools' schemas. Whatever way the
/// model starts a call (bare, in tags, inside a code fence) it is held from
/// the opener on, as with the llama backend, pretty-printed or not. The cost: the text cannot hold
/// `{"` (every call object starts so) or a call tag; code with JSON in it
/// belongs in files, which calls write.
pub fn reply_grammar(format: CallFormat, tools: &[ToolSpec]) -> Result<String, BackendError> {
    let calls = call_grammar(format, tools, false, 1)?;
    let rules = calls.strip_prefix("root ::= call\n").unwrap_or(&calls);
    let tags: Vec<&str> = format.openers().iter().copied().filter(|o| o.starts_with('<')).collect();
    // `{` then `"`, with any blank space between, only starts a call.
    let mut piece = vec![r#"[^{<]"#.to_string(), r#""{" [ \t\n]* [^" \t\n]"#.to_string()];
    match tags.as_slice() {
        [] => piece.push(r#""<""#.to_string()),
        tags => piece.extend(tags.iter().map(|tag| format!("\"<\" {}", not_rest(&tag[1..])))),
    }
    let mut out = String::from("root ::= text call?\n");
    out.push_str(&format!("text ::= ({})* (\"{{\" [ \\t\\n]* | \"<\")?\n", piece.join(" | ")));
    for line in rules.lines() {
        // Models that write a call as pretty JSON (`{\n  "name"`) must stay
        // on the call's path: the text's `{` may not be followed by `"`.
        if line.starts_with("space ::=") {
            out.push_str(PRETTY_SPACE);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

/// GBNF for a few characters that do not spell `rest`: `[^t] | "t" ([^o] | ...)`.
fn not_rest(rest: &str) -> String {
    let mut chars = rest.chars();
    let Some(first) = chars.next() else { return "[^\\x00]".to_string() };
    let escaped = |c: char| match c {
        '"' | '\\' | ']' | '[' | '^' | '-' => format!("\\{c}"),
        c => c.to_string(),
    };
    let tail = chars.as_str();
    if tail.is_empty() {
        format!("[^{}]", escaped(first))
    } else {
        format!("([^{}] | \"{}\" {})", escaped(first), escaped(first), not_rest(tail))
    }
}

/// `schema` as JSON text with each object's required properties first, in
/// the order `required` lists them (`file_path`, `old_string`, `new_string`),
/// then the optional ones: the grammar makes the model write them in this
/// order, and it is the order the tool was designed to be called in.
fn required_first(schema: &serde_json::Value) -> String {
    use serde_json::Value;
    match schema {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(key, value)| {
                    let text = match (key.as_str(), value) {
                        ("properties", Value::Object(properties)) => {
                            let required: Vec<&str> = map
                                .get("required")
                                .and_then(Value::as_array)
                                .map(|r| r.iter().filter_map(Value::as_str).collect())
                                .unwrap_or_default();
                            let mut names: Vec<&String> = properties.keys().collect();
                            names.sort_by_key(|name| required.iter().position(|r| r == name).unwrap_or(usize::MAX));
                            let inner: Vec<String> = names
                                .into_iter()
                                .map(|name| {
                                    format!("{}:{}", Value::from(name.as_str()), required_first(&properties[name]))
                                })
                                .collect();
                            format!("{{{}}}", inner.join(","))
                        }
                        _ => required_first(value),
                    };
                    format!("{}:{text}", Value::from(key.as_str()))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(required_first).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Watches free text for a call's openers, token by token.
#[derive(Debug)]
pub struct OpenerWatch {
    openers: &'static [&'static str],
    /// The end of the free text, as long as the longest opener minus one
    /// byte: the part an opener could be completed from.
    tail: Vec<u8>,
}

/// What a token's text means for the watch.
#[derive(Debug, PartialEq, Eq)]
pub enum Sighting {
    /// No call starts here.
    None,
    /// The token ends exactly at `opener`: constrain from the next token.
    Opened { opener: &'static str },
    /// `opener` ends inside the token, which runs on past it: only the
    /// token's first `keep` bytes may stand, the rest must be left to the grammar.
    Straddles { opener: &'static str, keep: usize },
}

/// Blank space a pretty-printed call may hold between its `{` and its first
/// key (`{\n  "name"`): as much as the server's reply grammar allows.
const MAX_OPENER_GAP: usize = 16;

/// Where the first `opener` in `text` ends. An opener that starts a JSON
/// object also matches with blank space after its brace: small models write
/// calls pretty-printed in code fences, and such a call must be held by the
/// grammar (and end the reply) like any other.
fn opener_end(text: &[u8], opener: &[u8]) -> Option<usize> {
    let Some(rest) = opener.strip_prefix(b"{") else {
        return text.windows(opener.len()).position(|w| w == opener).map(|at| at + opener.len());
    };
    text.iter().enumerate().filter(|(_, byte)| **byte == b'{').find_map(|(at, _)| {
        let gap = text[at + 1..]
            .iter()
            .take(MAX_OPENER_GAP)
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .count();
        let start = at + 1 + gap;
        text[start..].starts_with(rest).then_some(start + rest.len())
    })
}

impl OpenerWatch {
    pub fn new(format: CallFormat) -> OpenerWatch {
        OpenerWatch { openers: format.openers(), tail: Vec::new() }
    }

    /// Looks at the next token's text. A sighting resets the watch.
    pub fn see(&mut self, piece: &[u8]) -> Sighting {
        let mut joined = std::mem::take(&mut self.tail);
        let before = joined.len();
        joined.extend_from_slice(piece);
        // The opener that is complete first wins.
        let first = self
            .openers
            .iter()
            .filter_map(|opener| Some((opener_end(&joined, opener.as_bytes())?, *opener)))
            .min_by_key(|(end, _)| *end);
        if let Some((end, opener)) = first {
            // The tail alone never holds a whole opener, so `end > before`.
            return if end == joined.len() {
                Sighting::Opened { opener }
            } else {
                Sighting::Straddles { opener, keep: end - before }
            };
        }
        let longest = self.openers.iter().map(|o| o.len()).max().unwrap_or(1);
        let keep = joined.len().min(longest - 1 + MAX_OPENER_GAP);
        self.tail = joined.split_off(joined.len() - keep);
        Sighting::None
    }

    pub fn reset(&mut self) {
        self.tail.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<ToolSpec> {
        let without_commands = crate::config::ToolSettings {
            disabled: [crate::tools::ToolSet::Command, crate::tools::ToolSet::Agent].into(),
            ..Default::default()
        };
        crate::tools::ToolRegistry::builtin(&without_commands).specs(|_| true)
    }

    #[test]
    fn the_call_grammar_admits_only_enabled_tools_with_the_name_first() {
        let grammar = call_grammar(CallFormat::Tack, &tools(), false, 3).unwrap();
        assert!(grammar.starts_with("root ::= call\ncall ::= object\n"), "{grammar}");
        assert!(grammar.contains("\nobject ::= alternative-0 | alternative-1 | "), "{grammar}");
        for tool in ["Read", "Glob", "Grep", "ListDir", "Write", "Edit", "MultiEdit", "Move", "DeleteFile"] {
            assert!(grammar.contains(&format!("-tool ::= \"\\\"{tool}\\\"\"\n")), "{tool}: {grammar}");
        }
        assert!(
            grammar.contains("alternative-0 ::= \"{\" space alternative-0-tool-kv \",\" space alternative-0-input-kv"),
            "the name comes first: {grammar}"
        );
        assert!(!grammar.contains("\\\"Bash\\\""));
        assert!(grammar.contains("\nspace ::= \" \"?\n"), "calls stay on one line: {grammar}");
        let required = call_grammar(CallFormat::Tack, &tools(), true, 3).unwrap();
        assert!(required.starts_with("root ::= call (\"\\n\" call){0,2}\n"), "{required}");
        let one = call_grammar(CallFormat::Tack, &tools(), true, 1).unwrap();
        assert!(one.starts_with("root ::= call\n"), "{one}");
    }

    #[test]
    fn required_properties_come_first_in_their_listed_order() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a_opt": {"type": "string"}, "new_string": {"type": "string"}, "old_string": {"type": "string"}},
            "required": ["old_string", "new_string"],
        });
        let text = required_first(&schema);
        assert_eq!(
            text,
            r#"{"properties":{"old_string":{"type":"string"},"new_string":{"type":"string"},"a_opt":{"type":"string"}},"required":["old_string","new_string"],"type":"object"}"#
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), schema);
    }

    #[test]
    fn hermes_calls_are_wrapped_in_their_tags() {
        let grammar = call_grammar(CallFormat::Hermes, &tools(), false, 1).unwrap();
        assert!(
            grammar.contains("call ::= \"<tool_call>\" \"\\n\"? object \"\\n\"? \"</tool_call>\" | object\n"),
            "{grammar}"
        );
        assert!(grammar.contains("\nspace ::= [ \\t\\n]{0,16}\n"), "pretty-printed calls stay possible: {grammar}");
        assert!(grammar.contains("alternative-0-name ::= \"\\\"Read\\\"\"\n"), "{grammar}");
        assert!(
            grammar
                .contains("alternative-0 ::= \"{\" space alternative-0-name-kv \",\" space alternative-0-arguments-kv"),
            "{grammar}"
        );
    }

    #[test]
    fn template_formats_are_told_apart() {
        assert_eq!(CallFormat::of_template("... <tool_call>{\"name\": ...}</tool_call>"), Some(CallFormat::Hermes));
        assert_eq!(
            CallFormat::of_template("<|start_header_id|>ipython ... {\"name\": ..., \"parameters\": ...}"),
            Some(CallFormat::Llama3Json)
        );
        assert_eq!(CallFormat::of_template("{{ messages }}"), None);
    }

    #[test]
    fn the_watch_sees_openers_split_across_tokens_and_straddling_ones() {
        let tool = "{\"tool\"";
        let mut watch = OpenerWatch::new(CallFormat::Tack);
        assert_eq!(watch.see(b"Let me look.\n{\"to"), Sighting::None);
        assert_eq!(watch.see(b"ol\""), Sighting::Opened { opener: tool });
        // After a sighting the watch starts afresh.
        assert_eq!(watch.see(b"ol\""), Sighting::None);

        let mut watch = OpenerWatch::new(CallFormat::Tack);
        assert_eq!(watch.see(b"{\"to"), Sighting::None);
        assert_eq!(watch.see(b"ol\"s"), Sighting::Straddles { opener: tool, keep: 3 });
        assert_eq!(watch.see(b"x{\"tool\": "), Sighting::Straddles { opener: tool, keep: 8 });

        let mut hermes = OpenerWatch::new(CallFormat::Hermes);
        let tag = "<tool_call>";
        assert_eq!(
            hermes.see(b"<tool_call>"),
            Sighting::Opened { opener: tag },
            "a special token holding the whole opener"
        );
        assert_eq!(hermes.see(b"<tool"), Sighting::None);
        hermes.reset();
        assert_eq!(hermes.see(b"_call>"), Sighting::None, "reset forgets the tail");
        assert_eq!(hermes.see(b"\n{\"name\""), Sighting::Opened { opener: "{\"name\"" }, "a call without its tags");

        // Pretty-printed in a code fence: the grammar takes over at the key,
        // from the opener as it reads without the blank space.
        let mut fenced = OpenerWatch::new(CallFormat::Hermes);
        assert_eq!(fenced.see(b"```json\n{"), Sighting::None);
        assert_eq!(fenced.see(b"\n   "), Sighting::None);
        assert_eq!(fenced.see(b" \"name"), Sighting::None);
        assert_eq!(fenced.see(b"\": \""), Sighting::Straddles { opener: "{\"name\"", keep: 1 });
        let mut spaced = OpenerWatch::new(CallFormat::Tack);
        assert_eq!(spaced.see(b"{ \"tool\""), Sighting::Opened { opener: tool });
        let mut prose = OpenerWatch::new(CallFormat::Hermes);
        assert_eq!(prose.see(b"a set {1, 2} and {\"x\": 1}"), Sighting::None, "other objects are text");
    }

    #[test]
    fn a_choice_grammar_lists_each_choice_as_a_literal() {
        let choices = ["1".to_string(), "say \"hi\"".to_string()];
        assert_eq!(choice_grammar(&choices), "root ::= \"1\" | \"say \\\"hi\\\"\"\n");
    }

    #[test]
    fn a_reply_grammar_keeps_openers_out_of_the_free_text() {
        let tools = vec![ToolSpec {
            name: "Read".into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
        }];
        let grammar = reply_grammar(CallFormat::Hermes, &tools).unwrap();
        assert!(grammar.starts_with("root ::= text call?\n"), "{grammar}");
        assert!(grammar.contains(r#""<" ([^t] | "t" ([^o] | "o" "#), "{grammar}");
        assert!(grammar.contains("call ::= \"<tool_call>\""), "{grammar}");
        assert!(!grammar.contains("root ::= call"), "{grammar}");
        assert!(grammar.contains("space ::= [ \\t\\n]{0,16}\n"), "{grammar}");
    }
}
