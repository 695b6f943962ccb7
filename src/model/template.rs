//! Chat templates from GGUF metadata: Hugging Face Jinja templates rendered
//! with minijinja and the variables those templates expect.

use minijinja::{Environment, Error, ErrorKind, Value, context};

use super::{CompletionRequest, render_block};
use crate::protocol::ToolSpec;
use crate::protocol::{Block, Role};

/// A compiled Jinja chat template.
pub struct JinjaTemplate {
    env: Environment<'static>,
    /// The template's text, for telling which call format it teaches.
    source: String,
    bos_token: String,
    eos_token: String,
    /// The template lays out tool definitions, calls and results itself.
    speaks_tools: bool,
}

impl std::fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JinjaTemplate").field("bos_token", &self.bos_token).finish_non_exhaustive()
    }
}

/// One message as Hugging Face templates see it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    /// Calls an assistant message makes, in the OpenAI shape templates expect.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<serde_json::Value>,
    /// For `tool` messages: the call this result answers, and its tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChatMessage {
    pub fn new(role: &str, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: role.to_string(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

impl JinjaTemplate {
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<JinjaTemplate, String> {
        let mut env = Environment::new();
        // HF templates are written for Python's Jinja: `.strip()`, `.split()`,
        // `.startswith()` and friends on strings.
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<Value, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_function("strftime_now", |format: String| -> String {
            // Templates use it to date the system prompt; a fixed clock-free
            // answer keeps prompts (and their KV cache) stable across a day.
            let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
            let date = &now[..10];
            if format.contains("%Y") { date.to_string() } else { now }
        });
        env.add_template_owned("chat", source.to_string()).map_err(|e| format!("invalid chat template: {e}"))?;
        let speaks_tools = source.contains("tools") && source.contains("tool_call");
        Ok(JinjaTemplate {
            env,
            source: source.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
            speaks_tools,
        })
    }

    /// Whether the template renders tool definitions, calls and results in
    /// the model's own format (Hermes, Qwen, Llama 3.1 and similar).
    pub fn speaks_tools(&self) -> bool {
        self.speaks_tools
    }

    /// Lays out no tools even where the template could: the model is then
    /// taught tack's text protocol instead of its own call format.
    pub fn ignore_tools(&mut self) {
        self.speaks_tools = false;
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The prompt for `messages`, ending with the assistant's opening when
    /// `add_generation_prompt` is set. `tools` are OpenAI-style function
    /// definitions, for templates that lay them out.
    pub fn render(
        &self,
        messages: &[ChatMessage],
        tools: Option<&[serde_json::Value]>,
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        let template = self.env.get_template("chat").map_err(|e| e.to_string())?;
        template
            .render(context! {
                messages => Value::from(minijinja::value::Serde(messages)),
                tools => tools.map(|tools| Value::from(minijinja::value::Serde(tools))),
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos_token.as_str(),
                eos_token => self.eos_token.as_str(),
            })
            .map_err(|e| format!("chat template failed: {e}"))
    }
}

/// The chat in the shape Hugging Face templates expect: calls as
/// `tool_calls`, each result as a `tool` message.
pub fn chat_messages(request: &CompletionRequest) -> Vec<ChatMessage> {
    let mut chat = Vec::new();
    if !request.system.is_empty() {
        chat.push(ChatMessage::new("system", request.system.clone()));
    }
    for message in &request.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut turn = ChatMessage::new(role, message.text());
        let mut results = Vec::new();
        for block in &message.blocks {
            match block {
                Block::ToolUse { id, name, input } => turn.tool_calls.push(serde_json::json!({
                    "id": id, "type": "function", "function": {"name": name, "arguments": input},
                })),
                Block::ToolResult { tool_use_id, output, is_error, .. } => {
                    let content = if *is_error { format!("error: {output}") } else { output.clone() };
                    let mut result = ChatMessage::new("tool", content);
                    result.tool_call_id = Some(tool_use_id.clone());
                    results.push(result);
                }
                Block::Text { .. } | Block::Thought { .. } => {}
            }
        }
        // Results come first: they answer the calls of the message before.
        chat.extend(results);
        if !turn.content.trim().is_empty() || !turn.tool_calls.is_empty() {
            chat.push(turn);
        }
    }
    chat
}

/// The chat with tool calls and results written in tack's text protocol.
pub fn text_protocol_chat(request: &CompletionRequest) -> Vec<(&'static str, String)> {
    let mut chat = Vec::new();
    if !request.system.is_empty() {
        chat.push(("system", request.system.clone()));
    }
    for message in &request.messages {
        let mut content = String::new();
        for block in &message.blocks {
            render_block(block, &mut content);
        }
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        chat.push((role, content.trim_end().to_string()));
    }
    chat
}

/// Tools as OpenAI-style function definitions, the shape chat templates and
/// OpenAI-compatible APIs take.
pub fn tool_definitions(tools: &[ToolSpec]) -> Vec<serde_json::Value> {
    tools
        .iter()
        .map(|tool| {
            serde_json::json!({"type": "function", "function": {
                "name": tool.name, "description": tool.description, "parameters": tool.input_schema,
            }})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_messages_carry_calls_and_results_in_the_hugging_face_shape() {
        use crate::protocol::Message;
        use crate::protocol::{Block, Role};
        let request = CompletionRequest {
            system: "sys".into(),
            messages: vec![
                Message::user_text("read a.rs"),
                Message {
                    role: Role::Assistant,
                    blocks: vec![
                        Block::Thought { text: "hidden".into() },
                        Block::Text { text: "Looking.".into() },
                        Block::ToolUse {
                            id: "call_1".into(),
                            name: "Read".into(),
                            input: serde_json::json!({"file_path": "a.rs"}),
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    blocks: vec![Block::ToolResult {
                        tool_use_id: "call_1".into(),
                        output: "no such file".into(),
                        is_error: true,
                        summary: "x".into(),
                    }],
                },
            ],
            ..CompletionRequest::default()
        };
        let chat = chat_messages(&request);
        let roles: Vec<&str> = chat.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool"]);
        assert_eq!(chat[2].content, "Looking.", "thoughts are not fed back");
        assert_eq!(chat[2].tool_calls[0]["function"]["arguments"]["file_path"], "a.rs");
        assert_eq!(chat[3].content, "error: no such file");
        assert_eq!(chat[3].tool_call_id.as_deref(), Some("call_1"));
    }

    fn chat(pairs: &[(&str, &str)]) -> Vec<ChatMessage> {
        pairs.iter().map(|(role, content)| ChatMessage::new(role, *content)).collect()
    }

    const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    /// Llama 3's shape: BOS, header tokens, `| trim`, and an error for an unknown role.
    const LLAMA3: &str = "{{ bos_token }}{% for message in messages %}{% if message['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('Unknown role: ' + message['role']) }}{% endif %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

    /// Gemma's shape: system folded into the first user turn, `.strip()` (Python method).
    const GEMMA: &str = "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set first_user_prefix = messages[0]['content'] + '\\n\\n' %}{% set loop_messages = messages[1:] %}{% else %}{% set first_user_prefix = '' %}{% set loop_messages = messages %}{% endif %}{% for message in loop_messages %}{% if message['role'] == 'assistant' %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') + message['content'].strip() + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

    #[test]
    fn chatml_renders_each_turn_and_the_generation_prompt() {
        let template = JinjaTemplate::new(CHATML, "", "<|im_end|>").unwrap();
        let prompt = template.render(&chat(&[("system", "Be brief."), ("user", "Hi")]), None, true).unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let without = template.render(&chat(&[("user", "Hi")]), None, false).unwrap();
        assert!(!without.ends_with("assistant\n"));
    }

    #[test]
    fn bos_filters_and_raise_exception_work_as_in_python_jinja() {
        let template = JinjaTemplate::new(LLAMA3, "<|begin_of_text|>", "<|eot_id|>").unwrap();
        let prompt = template.render(&chat(&[("user", "  Hi there \n")]), None, true).unwrap();
        assert_eq!(
            prompt,
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        let error = template.render(&chat(&[("tool", "x")]), None, true).unwrap_err();
        assert!(error.contains("Unknown role: tool"), "{error}");
    }

    #[test]
    fn python_string_methods_and_slices_work() {
        let template = JinjaTemplate::new(GEMMA, "<bos>", "<eos>").unwrap();
        let prompt = template
            .render(
                &chat(&[("system", "Rules."), ("user", " Hello "), ("assistant", "Hi!"), ("user", "Bye")]),
                None,
                true,
            )
            .unwrap();
        assert_eq!(
            prompt,
            "<bos><start_of_turn>user\nRules.\n\nHello<end_of_turn>\n<start_of_turn>model\nHi!<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n"
        );
    }

    /// The tool parts of a Hermes/Qwen 2.5 style template.
    const HERMES: &str = r#"{%- if tools %}<|im_start|>system
{{ messages[0]['content'] if messages[0]['role'] == 'system' else 'You are helpful.' }}

# Tools
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
For each call, return <tool_call>{"name": <function-name>, "arguments": <args-json-object>}</tool_call><|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == "user" or (message.role == "system" and not tools) %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == "assistant" %}<|im_start|>assistant
{{ message.content }}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
<tool_call>
{"name": "{{ tool_call.name }}", "arguments": {{ tool_call.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif message.role == "tool" %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"#;

    #[test]
    fn tool_definitions_calls_and_results_render_in_the_template_s_own_format() {
        let template = JinjaTemplate::new(HERMES, "", "<|im_end|>").unwrap();
        assert!(template.speaks_tools());
        assert!(!JinjaTemplate::new(CHATML, "", "").unwrap().speaks_tools());
        let tools = vec![
            serde_json::json!({"type": "function", "function": {"name": "Read", "description": "Read a file.", "parameters": {"type": "object"}}}),
        ];
        let mut call = ChatMessage::new("assistant", "Let me look.");
        call.tool_calls.push(serde_json::json!({"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": {"file_path": "a.rs"}}}));
        let mut result = ChatMessage::new("tool", "fn a() {}");
        result.tool_call_id = Some("call_1".into());
        let messages =
            vec![ChatMessage::new("system", "Be careful."), ChatMessage::new("user", "Read a.rs"), call, result];
        let prompt = template.render(&messages, Some(&tools), true).unwrap();
        // `tojson` writes JSON as Python's Jinja does: sorted keys, ", " and ": ".
        assert!(prompt.starts_with("<|im_start|>system\nBe careful.\n\n# Tools\n<tools>\n{\"function\": {\"description\": \"Read a file.\", \"name\": \"Read\""), "{prompt}");
        assert!(prompt.contains("<|im_start|>assistant\nLet me look.\n<tool_call>\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"a.rs\"}}\n</tool_call><|im_end|>"), "{prompt}");
        assert!(prompt.contains("<tool_response>\nfn a() {}\n</tool_response>"), "{prompt}");
        assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
    }

    #[test]
    fn broken_templates_are_reported_not_panicked_on() {
        assert!(JinjaTemplate::new("{% for x in %}", "", "").unwrap_err().starts_with("invalid chat template"));
        let template = JinjaTemplate::new("{{ messages[5]['content'].nope() }}", "", "").unwrap();
        assert!(template.render(&chat(&[("user", "a")]), None, true).is_err());
    }
}
