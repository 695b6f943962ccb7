//! Chat templates from GGUF metadata: Hugging Face Jinja templates rendered
//! with minijinja and the variables those templates expect.

use minijinja::{Environment, Error, ErrorKind, Value, context};

/// A compiled Jinja chat template.
pub struct JinjaTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
}

impl std::fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JinjaTemplate").field("bos_token", &self.bos_token).finish_non_exhaustive()
    }
}

/// One message as templates see it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
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
        Ok(JinjaTemplate { env, bos_token: bos_token.to_string(), eos_token: eos_token.to_string() })
    }

    /// The prompt for `messages`, ending with the assistant's opening when
    /// `add_generation_prompt` is set.
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> Result<String, String> {
        let template = self.env.get_template("chat").map_err(|e| e.to_string())?;
        template
            .render(context! {
                messages => Value::from(minijinja::value::Serde(messages)),
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos_token.as_str(),
                eos_token => self.eos_token.as_str(),
            })
            .map_err(|e| format!("chat template failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(pairs: &[(&str, &str)]) -> Vec<ChatMessage> {
        pairs
            .iter()
            .map(|(role, content)| ChatMessage { role: role.to_string(), content: content.to_string() })
            .collect()
    }

    const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    /// Llama 3's shape: BOS, header tokens, `| trim`, and an error for an unknown role.
    const LLAMA3: &str = "{{ bos_token }}{% for message in messages %}{% if message['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('Unknown role: ' + message['role']) }}{% endif %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

    /// Gemma's shape: system folded into the first user turn, `.strip()` (Python method).
    const GEMMA: &str = "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set first_user_prefix = messages[0]['content'] + '\\n\\n' %}{% set loop_messages = messages[1:] %}{% else %}{% set first_user_prefix = '' %}{% set loop_messages = messages %}{% endif %}{% for message in loop_messages %}{% if message['role'] == 'assistant' %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') + message['content'].strip() + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

    #[test]
    fn chatml_renders_each_turn_and_the_generation_prompt() {
        let template = JinjaTemplate::new(CHATML, "", "<|im_end|>").unwrap();
        let prompt = template.render(&chat(&[("system", "Be brief."), ("user", "Hi")]), true).unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let without = template.render(&chat(&[("user", "Hi")]), false).unwrap();
        assert!(!without.ends_with("assistant\n"));
    }

    #[test]
    fn bos_filters_and_raise_exception_work_as_in_python_jinja() {
        let template = JinjaTemplate::new(LLAMA3, "<|begin_of_text|>", "<|eot_id|>").unwrap();
        let prompt = template.render(&chat(&[("user", "  Hi there \n")]), true).unwrap();
        assert_eq!(
            prompt,
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        let error = template.render(&chat(&[("tool", "x")]), true).unwrap_err();
        assert!(error.contains("Unknown role: tool"), "{error}");
    }

    #[test]
    fn python_string_methods_and_slices_work() {
        let template = JinjaTemplate::new(GEMMA, "<bos>", "<eos>").unwrap();
        let prompt = template
            .render(&chat(&[("system", "Rules."), ("user", " Hello "), ("assistant", "Hi!"), ("user", "Bye")]), true)
            .unwrap();
        assert_eq!(
            prompt,
            "<bos><start_of_turn>user\nRules.\n\nHello<end_of_turn>\n<start_of_turn>model\nHi!<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n"
        );
    }

    #[test]
    fn broken_templates_are_reported_not_panicked_on() {
        assert!(JinjaTemplate::new("{% for x in %}", "", "").unwrap_err().starts_with("invalid chat template"));
        let template = JinjaTemplate::new("{{ messages[5]['content'].nope() }}", "", "").unwrap();
        assert!(template.render(&chat(&[("user", "a")]), true).is_err());
    }
}
