//! Asking the model, in the whole-file way: one reply as text, within
//! the turn's budget, and the asks again that take its place.

use super::handed::*;
use crate::agent::code_text::code_blocks;
use crate::agent::turn::{Generation, StreamEnd};
use crate::agent::{Conversation, TurnOutcome};
use crate::config::PipelineSettings;
use crate::protocol::{Block, Event, Message, PermissionMode, Role, StopReason, Usage};
use tokio_util::sync::CancellationToken;

/// `messages` with the last user message led by the files `shown` and
/// followed by `ask`.
pub(in crate::agent) fn with_files(mut messages: Vec<Message>, shown: &str, ask: &str) -> Vec<Message> {
    if let Some(last) = messages.iter_mut().rev().find(|m| m.role == Role::User).filter(|_| !shown.is_empty()) {
        last.blocks.insert(0, Block::Text { text: shown.to_string() });
    }
    if !ask.is_empty() {
        after_prompt(&mut messages, ask);
    }
    messages
}

/// `text` on a line of its own after the prompt, in the last user message
/// of `messages`.
pub(in crate::agent) fn after_prompt(messages: &mut [Message], text: &str) {
    if let Some(last) = messages.iter_mut().rev().find(|m| m.role == Role::User) {
        last.blocks.push(Block::Text { text: format!("\n{text}") });
    }
}

/// What ends a turn, with `usage` spent before it added.
pub(super) fn adding(usage: Usage) -> impl FnOnce(TurnOutcome) -> TurnOutcome {
    move |mut outcome| {
        outcome.usage += usage;
        outcome
    }
}

/// The text of a reply.
pub(super) fn reply_text(generation: &Generation) -> String {
    Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text()
}

/// What every ask of one whole-file turn shares.
pub(super) struct Asking<'a> {
    pub(super) system: &'a str,
    /// The conversation; its last user message is the prompt.
    pub(super) messages: &'a [Message],
    pub(super) prompt: &'a str,
    /// The request asks for an answer, not a change.
    pub(super) question: bool,
    /// The model's word on the request's intent was split, and its form
    /// decided it (see `Conversation::intent`).
    pub(super) undecided: bool,
    pub(super) handed: &'a [HandedFile],
    /// The test files whose tests failed before any change: what the
    /// change must make pass, not a place for it.
    pub(super) checks: &'a [String],
}

impl Conversation {
    /// Whether the harness may run its own Bash calls: the tool is on and
    /// the turn is no plan.
    pub(in crate::agent) fn may_run_commands(&self) -> bool {
        self.tools.harness_can_call("Bash") && self.policy.mode != PermissionMode::Plan
    }

    /// Runs `command` as the harness's own Bash call, approved as any,
    /// added to `generation` and recorded with its result: what the call
    /// output, end trimmed. `timeout_ms` in place of the Bash tool's.
    /// `Err` when the turn was cancelled meanwhile.
    pub(in crate::agent) async fn run_own_bash(
        &mut self,
        mut generation: Generation,
        command: &str,
        timeout_ms: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, TurnOutcome> {
        let command = match self.in_copy(command) {
            Ok(command) => command,
            Err(why) => {
                self.notify(&format!("[not run: {why}]"));
                return Ok(None);
            }
        };
        let mut input = serde_json::json!({ "command": command });
        if let Some(timeout_ms) = timeout_ms {
            input["timeout_ms"] = timeout_ms.into();
        }
        self.add_harness_call(&mut generation, "Bash", input);
        let Generation { blocks, mut calls, usage, .. } = generation;
        self.record_with_usage(Message { role: Role::Assistant, blocks }, Some(usage));
        let (mut results, cancelled) = self.run_calls(&mut calls, cancel).await;
        self.as_workspace_output(&mut results);
        let output = results.iter().find_map(|block| match block {
            Block::ToolResult { output, .. } => Some(output.trim_end().to_string()),
            _ => None,
        });
        self.record(Message { role: Role::User, blocks: results });
        if cancelled {
            return Err(TurnOutcome { stop_reason: StopReason::Cancelled, text: String::new(), usage });
        }
        Ok(output)
    }

    /// Another reply, to the conversation with `shown` files and `ask`, in
    /// place of `generation` (whose usage it adds to), the user told why by
    /// `notice`: its text, or the outcome that ends the turn.
    pub(super) async fn ask_again(
        &mut self,
        asking: &Asking<'_>,
        shown: &str,
        ask: &str,
        notice: &str,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<String, TurnOutcome> {
        let messages = with_files(asking.messages.to_vec(), shown, ask);
        self.reply_to(asking.system, messages, notice, generation, cancel).await
    }

    /// `ask` asked again as `ask_again` does, sampled: the `nth` sample of
    /// one reply, seeded apart from every fresh try's seed.
    pub(super) async fn ask_sampled(
        &mut self,
        nth: u32,
        asking: &Asking<'_>,
        shown: &str,
        (ask, notice): (&str, &str),
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<String, TurnOutcome> {
        let greedy = self.resample;
        self.resample = Some(greedy.unwrap_or(0) * (LINE_RESAMPLES + 1) + nth + RESAMPLES);
        let asked = self.ask_again(asking, shown, ask, notice, generation, cancel).await;
        self.resample = greedy;
        asked
    }

    /// The reply to `messages`, after `notice`, in place of `generation`
    /// (whose usage it adds to): its text.
    pub(super) async fn reply_to(
        &mut self,
        system: &str,
        messages: Vec<Message>,
        notice: &str,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<String, TurnOutcome> {
        self.notify(notice);
        let usage = generation.usage;
        match self.whole_file_reply(system, messages, cancel).await {
            Ok(next) => {
                *generation = next;
                generation.usage += usage;
                Ok(reply_text(generation))
            }
            Err(outcome) => Err(adding(usage)(outcome)),
        }
    }

    /// Tells the user, between the model's replies, what the turn does next.
    pub(in crate::agent) fn notify(&self, notice: &str) {
        self.events.emit(Event::Text { text: format!("\n{notice}\n") });
    }

    /// One reply to `messages`, as text: offered no tools, the model has no
    /// calls to make, and what looks like one is text. `Err` ends the turn.
    pub(in crate::agent) async fn whole_file_reply(
        &mut self,
        system: &str,
        messages: Vec<Message>,
        cancel: &CancellationToken,
    ) -> Result<Generation, TurnOutcome> {
        let finish = |stop_reason, text: String, usage| TurnOutcome { stop_reason, text, usage };
        // A model that never gives what is asked would be asked again and
        // again: the turn's calls and seconds are bounded.
        if !self.budget.allows_call() {
            let text = self.budget_spent();
            return Err(finish(StopReason::MaxIterations, text, Usage::default()));
        }
        self.budget.spend_call();
        // A reply still being written when the turn's seconds run out is
        // cut there, as a command is.
        let bounded = cancel.child_token();
        let deadline = {
            let (bounded, left) = (bounded.clone(), self.budget.time_left());
            tokio::spawn(async move {
                tokio::time::sleep(left).await;
                bounded.cancel();
            })
        };
        let end = self.generate(system, &[], &[], messages, false, &bounded).await;
        deadline.abort();
        match end {
            StreamEnd::Complete(mut generation) => {
                generation.calls.clear();
                generation.blocks.retain(|block| !matches!(block, Block::ToolUse { .. }));
                Ok(generation)
            }
            StreamEnd::Cancelled(partial) => {
                let usage = partial.usage;
                let message = partial.into_message(false);
                let text = message.text();
                if !message.blocks.is_empty() {
                    self.record_with_usage(message, Some(usage));
                }
                if cancel.is_cancelled() {
                    return Err(finish(StopReason::Cancelled, text, usage));
                }
                let text = self.budget_spent();
                Err(finish(StopReason::MaxIterations, text, usage))
            }
            StreamEnd::Failed(error) => {
                self.events.emit(Event::Error { message: error.to_string() });
                Err(finish(StopReason::Error, String::new(), Default::default()))
            }
        }
    }

    /// Tells that the turn spent its budget and stopped: the text that
    /// ends it.
    fn budget_spent(&self) -> String {
        let PipelineSettings { max_model_calls, max_seconds, .. } = self.settings.pipeline;
        let text = format!(
            "This turn spent its budget ({max_model_calls} model calls or {max_seconds} s, `[pipeline]` in the \
             configuration) and stopped; what it changed so far is in the conversation."
        );
        self.notify(&format!("[{text}]"));
        text
    }

    /// Whether the request asks for a change (else for an answer), by the
    /// model's word where it gives one whichever way it is asked.
    pub(in crate::agent) async fn ask_intent(
        &mut self,
        system: &str,
        base: &[Message],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnOutcome> {
        Ok(self.intent(system, base, usage, cancel).await?.unwrap_or_else(|| !asks_question(&prompt_of(base))))
    }

    /// Whether the request asks for a change (else for an answer), where
    /// the model says the same whichever way it is asked; `None` where it
    /// is undecided, and the request's own form must decide: a question
    /// mark asks a question.
    pub(in crate::agent) async fn intent(
        &mut self,
        system: &str,
        base: &[Message],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<bool>, TurnOutcome> {
        // Asked with the two words in both orders: a small model that picks
        // by the order (the 0.5B always picks the first word) is undecided.
        let forward = "Does this request ask to change the code, or to answer a question about it? \
Reply with one word: change or answer.";
        let backward = "Does this request ask to answer a question about the code, or to change the code? \
Reply with one word: answer or change.";
        let ask = |choices: &[&str]| if choices[0] == "change" { forward } else { backward }.to_string();
        let picked = self.choice_both_ways(system, base, ask, &["change", "answer"], false, usage, cancel).await?;
        Ok(picked.map(|picked| picked == "change"))
    }

    /// The model's pick among `choices`, asked as `ask` words it for them
    /// in the order given and again the other way round; `None` where the
    /// picks differ, as a small model's that picks by position do. Of more
    /// than two, and where `narrow`, the two it picked, where it did not
    /// take the same place both times, are set against each other the same
    /// way: a model torn between two may still tell them from the rest.
    /// With one choice, or no call left for the second ask, the first pick
    /// stands.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::agent) async fn choice_both_ways(
        &mut self,
        system: &str,
        base: &[Message],
        ask: impl Fn(&[&str]) -> String,
        choices: &[&str],
        narrow: bool,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, TurnOutcome> {
        Ok(self.choice_or_torn(system, base, ask, choices, narrow, usage, cancel).await?.ok())
    }

    /// As [`Self::choice_both_ways`], telling where the picks differ which
    /// choices the model took, in the order given: the two it stayed torn
    /// between (of two, both: picks that differ took the same place), none
    /// where it took the same place both times among more (it read the
    /// order, not the choices).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::agent) async fn choice_or_torn(
        &mut self,
        system: &str,
        base: &[Message],
        ask: impl Fn(&[&str]) -> String,
        choices: &[&str],
        narrow: bool,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Result<String, Vec<String>>, TurnOutcome> {
        let first = self.choice_reply(system, base, &ask(choices), choices, usage, cancel).await?;
        if choices.len() < 2 || !self.budget.allows_call() {
            return Ok(Ok(first));
        }
        let backward: Vec<&str> = choices.iter().rev().copied().collect();
        let second = self.choice_reply(system, base, &ask(&backward), &backward, usage, cancel).await?;
        if first == second {
            return Ok(Ok(first));
        }
        // A model that took the same place both times picks by the order.
        let first_both = first == choices[0] && second == backward[0];
        let last_both = Some(&first.as_str()) == choices.last() && Some(&second.as_str()) == backward.last();
        if (first_both || last_both) && choices.len() > 2 {
            return Ok(Err(Vec::new()));
        }
        let pair = [first.as_str(), second.as_str()];
        let pair: Vec<&str> = choices.iter().copied().filter(|c| pair.contains(c)).collect();
        if !narrow || choices.len() < 3 || pair.len() != 2 || !self.budget.allows_call() {
            return Ok(Err(pair.into_iter().map(str::to_string).collect()));
        }
        Box::pin(self.choice_or_torn(system, base, ask, &pair, false, usage, cancel)).await
    }

    /// The model's pick among `choices`, its reply held to them where the
    /// backend can; a reply that is none of them reads as the first.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::agent) async fn choice_reply(
        &mut self,
        system: &str,
        base: &[Message],
        ask: &str,
        choices: &[&str],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<String, TurnOutcome> {
        let mut messages = base.to_vec();
        after_prompt(&mut messages, ask);
        self.reply_choices = choices.iter().map(|c| c.to_string()).collect();
        let generation = self.whole_file_reply(system, messages, cancel).await;
        self.reply_choices.clear();
        let generation = generation?;
        *usage += generation.usage;
        let reply = Message { role: Role::Assistant, blocks: generation.blocks }.text();
        Ok(picked(&reply, choices).unwrap_or(choices[0]).to_string())
    }
}

/// Which of `choices` a reply picks, where the backend could not hold it
/// to them: the one it is, inside a code block or not; else the one it is
/// but for case and the marks around it; else the first it contains.
pub(in crate::agent) fn picked<'c>(reply: &str, choices: &[&'c str]) -> Option<&'c str> {
    let reply = reply.trim();
    let inner = code_blocks(reply).into_iter().next().unwrap_or_else(|| reply.to_string());
    let inner = inner.trim();
    let key = |s: &str| s.trim().trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    let exact = choices.iter().find(|c| reply == **c || inner == **c);
    let alike = || choices.iter().find(|c| !key(c).is_empty() && key(c) == key(inner));
    let within = || choices.iter().find(|c| !key(c).is_empty() && key(inner).contains(&key(c)));
    exact.or_else(alike).or_else(within).copied()
}

/// The text of the last user message: the request as the model reads it.
pub(in crate::agent) fn prompt_of(messages: &[Message]) -> String {
    messages.iter().rev().find(|m| m.role == Role::User).map(Message::text).unwrap_or_default()
}

/// Whether the request's own prose holds a question mark: not in code
/// (backticks), a quotation or an aside in parentheses, where it is a
/// message the user saw ("Did you mean --color?"), not a question asked.
pub(in crate::agent) fn asks_question(request: &str) -> bool {
    let mut depth = 0usize;
    let mut quoted: Option<char> = None;
    let mut sentence = 0;
    for (at, c) in request.char_indices() {
        match (quoted, c) {
            (Some(q), c) if c == q => quoted = None,
            (Some(_), _) => {}
            (None, '`' | '"' | '“' | '”') => quoted = Some(if c == '“' { '”' } else { c }),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, '?' | '？') if depth == 0 && !asks_for_change(&request[sentence..at]) => return true,
            (None, '.' | '!' | '?' | '？' | '\n') => sentence = at + c.len_utf8(),
            _ => {}
        }
    }
    false
}

/// Whether a sentence written as a question is a polite request for a
/// change: "Could the crate provide a `join` function?", "Can you add a
/// `--verbose` flag?" (not "Can you tell me which …?", "Can I pass …?").
fn asks_for_change(sentence: &str) -> bool {
    const POLITE: [&str; 4] = ["could", "can", "would", "will"];
    const ASKERS: [&str; 6] = ["you", "the", "it", "this", "we", "tack"];
    const CHANGES: [&str; 14] = [
        "add",
        "provide",
        "support",
        "make",
        "fix",
        "change",
        "allow",
        "implement",
        "expose",
        "accept",
        "rename",
        "remove",
        "handle",
        "let",
    ];
    let words: Vec<String> = sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let [first, second, ..] = words.as_slice() else { return false };
    POLITE.contains(&first.as_str())
        && ASKERS.contains(&second.as_str())
        && words.iter().skip(2).take(6).any(|w| CHANGES.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::{asks_question, picked};

    #[test]
    fn a_free_reply_picks_the_choice_it_writes() {
        let values = ["1.2.0", "1.3.0", "[1, [2], 3]"];
        assert_eq!(picked("1.3.0", &values), Some("1.3.0"));
        assert_eq!(picked("```\n[1, [2], 3]\n```", &values), Some("[1, [2], 3]"));
        assert_eq!(picked("True", &["False", "True"]), Some("True"));
        assert_eq!(picked("**answer**", &["change", "answer"]), Some("answer"));
        assert_eq!(picked("I would say 2.", &["1", "2"]), Some("2"));
        assert_eq!(picked("no idea", &["1", "2"]), None);
    }

    #[test]
    fn a_question_mark_asks_a_question_only_in_the_request_s_own_prose() {
        assert!(asks_question("What is the error's `code`? Answer with the exact string."));
        assert!(asks_question("Which format does `markdown(text)` use?"));
        assert!(!asks_question("The hint says (Did you mean ---color?) and should say `--color`. Fix it."));
        assert!(!asks_question("It prints \"Is this right?\" twice. Fix it."));
        assert!(!asks_question("`f(x)?` fails to compile. Fix it."));
        // A request put politely as a question asks for the change.
        assert!(!asks_question(
            "I need the reverse of `split`. Could the crate provide a `join` function that quotes \
each word? For example `join(vec![\"a b\"])` should return `\"\\\"a b\\\"\"`."
        ));
        assert!(!asks_question("Can you add a `--verbose` flag to the `run` command?"));
        assert!(asks_question("Can you tell me which function parses the flags?"));
        assert!(asks_question("Could the parser handle it? Which function would change?"));
    }
}
