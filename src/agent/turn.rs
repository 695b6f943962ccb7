//! The turn loop: stream the model, parse its calls, gate and run them, repeat.
//!
//! Invariants:
//! - every `ToolUse` recorded in the history is followed by exactly one
//!   `ToolResult` with its id, in the model's order, even when the turn is
//!   cancelled or a tool panics;
//! - calls in one parallel batch are all read-only; any other call runs alone;
//! - every message is persisted as soon as it is complete.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::context;
use super::guard::{self, CallRecord, Intervention};
use super::hooks::{HookEvent, HookPermission};
use super::prompt;
use super::repetition::RepetitionGuard;
use super::rewrite::ShownEdit;
use super::subagent::SubAgents;
use super::{ApprovalRequest, Conversation, EventSink, HookCall, Question, TurnOutcome};
use crate::model::toolcall::{ParseEvent, ToolCallParser};
use crate::model::{BackendError, CompletionRequest, ModelBackend, ModelChunk, ToolProtocol, render_message};
use crate::permissions::{CallFacts, Source, Verdict, visible_in_mode};
use crate::protocol::{AgentStatus, ApprovalDecision, Block, Event, Message, Role, StopReason, Usage};
use crate::tools::{
    EditGate, Tool, ToolContext, ToolKind, ToolOutput, ToolSet, ToolSpec, UserQuestions, number_all_lines,
};
use crate::workspace::Workspace;
use crate::workspace::edits::{EditOutcome, FileChange};

/// How long running tools may take to wind down after a cancel.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// Silent replies nudged in a row before the turn gives up.
const MAX_NUDGES: usize = 2;

/// (notice shown to the user, nudge told to the model) for an empty reply.
/// It names concrete first steps: a small model that went silent rarely
/// finds one by itself.
const EMPTY_RESPONSE: (&str, &str) = (
    "[model returned an empty response — retrying…]",
    "[tack] Your last reply was empty. Continue with the task now. If you are unsure where to start, \
     list the project's files with ListDir, search with Grep, or Read the file the task names; \
     when you have the answer, write it in plain text.",
);

/// The same for a reply that held only `<think>` blocks.
const THOUGHTS_ONLY: (&str, &str) = (
    "[model produced only internal thoughts — nudging…]",
    "[tack] Your last reply held only internal thoughts, which the user cannot see. Act on them now: call a tool, or answer the user in plain text.",
);

/// Told to a model that answered right after a failed change, once a turn:
/// small models read an error as the end of their part and explain to the
/// user what *they* should do, instead of fixing the call themselves. The
/// next reply is held to a call: told, such a model still explains (even
/// the exact call an error named, copied out as text).
const UNFIXED_ERROR: (&str, &str) = (
    "[the last change failed and the model stopped — asking it to go on…]",
    "[tack] Your last change failed, so nothing was changed, and you stopped without fixing it. The task is not \
     done yet, and nobody else will do it: continue yourself now with the next tool call, using what the error \
     told you.",
);

/// Told to a model whose reply wrote calls out as text (`Edit {...}`, often
/// copied from an error that suggested them) instead of making them; the
/// calls follow in the model's own call format, and its next reply is held
/// to a call.
const WRITTEN_CALL: (&str, &str) = (
    "[the model wrote a tool call as text — offering it the call…]",
    "[tack] Your reply wrote a tool call as text, but text does not run, so nothing was done. Make the call \
     the task needs now, as a real tool call; the one you wrote would be:",
);

/// Told to a model that stopped right after a change whose result named
/// calls still to make (the other files a rename must reach, which would
/// not work without them); the calls follow in the model's own call
/// format, and its next reply is held to a call: told, a small model
/// explains the calls to the user instead.
const NAMED_CALLS: (&str, &str) = (
    "[the last change named calls still to make and the model stopped — offering them…]",
    "[tack] The result of your last change named calls that are still to be made, and you stopped before \
     making them. Make them now as tool calls. They are:",
);

/// Calls a reply wrote as text offered back at most.
const MAX_OFFERED_CALLS: usize = 3;

/// Told to a model whose reply ended announcing a call it did not make
/// ("Here is the call:"); its next reply is held to a call.
const ANNOUNCED_CALL: (&str, &str) = (
    "[the model announced a tool call but did not make it — asking for the call…]",
    "[tack] Your reply ended before the tool call it announced, so nothing was done. Make that call now.",
);

/// Replies in a row that only make changes already made before the turn ends.
const MAX_REDONE: usize = 2;
const REDONE_NOTICE: &str = "[the model made its change again after it was made — the change stands; ending the turn]";

/// Shown where a reply that fell into a cycle of lines was cut.
const REPEATED: &str = "\n[the reply kept repeating itself — cut off]\n";

/// Announced calls asked for per turn: each costs a generation, and a small
/// model that announces again after one forced call is narrating (after a
/// finished change, "Here's the corrected call:"), and a second forced call
/// undoes good work.
const MAX_ASKED_FOR_CALLS: usize = 1;

/// Whether a failed call's result is one the model should fix and retry:
/// not a refusal by the user, a rule or a hook, which it must respect.
fn fixable_failure(block: &Block) -> bool {
    match block {
        Block::ToolResult { is_error: true, output, .. } => {
            !(output.starts_with("permission denied")
                || output.starts_with("blocked by a hook")
                || output.contains(" was rejected: "))
        }
        _ => false,
    }
}

/// The tool name recorded for a call whose text could not be parsed at all.
const UNPARSED_CALL: &str = "invalid_tool_call";

/// A call the model made, checked against the registry but not yet run.
pub(super) struct PendingCall {
    id: String,
    name: String,
    input: Value,
    /// The tool, when the call names one that exists with valid input.
    tool: Option<Arc<dyn Tool>>,
    /// Why the call cannot run (unparseable, unknown tool, bad input).
    problem: Option<String>,
    /// The problem is that the same lookup was made before, unchanged.
    repeated_lookup: bool,
    /// It ran, and its change was one the workspace already showed.
    already_done: bool,
}

impl PendingCall {
    /// Calls that never ask (read-only, delegating) and invalid calls may
    /// share a batch: nothing they do waits on the user or races an edit.
    fn concurrency_safe(&self) -> bool {
        self.tool.as_ref().is_none_or(|tool| !tool.kind().asks())
    }
}

/// What one generation produced.
#[derive(Default)]
pub(super) struct Generation {
    pub(super) blocks: Vec<Block>,
    pub(super) calls: Vec<PendingCall>,
    pub(super) usage: Usage,
    /// The reply fell into a cycle of lines and was cut there.
    repeated: bool,
}

impl Generation {
    fn push_text(&mut self, text: &str) {
        if let Some(Block::Text { text: last }) = self.blocks.last_mut() {
            last.push_str(text);
        } else {
            self.blocks.push(Block::Text { text: text.to_string() });
        }
    }

    /// The message to record. Calls are dropped when the generation was cut
    /// short: a call without its result would break the history's pairing.
    pub(super) fn into_message(self, keep_calls: bool) -> Message {
        let blocks =
            self.blocks.into_iter().filter(|block| keep_calls || !matches!(block, Block::ToolUse { .. })).collect();
        Message { role: Role::Assistant, blocks }
    }
}

pub(super) enum StreamEnd {
    Complete(Generation),
    Cancelled(Generation),
    Failed(BackendError),
}

/// What the gate decided for one call.
enum Gate {
    Run(Arc<dyn Tool>),
    Done(ToolOutput),
    Cancelled,
}

impl Conversation {
    /// Runs one user turn to its end. Never panics on bad model output; the
    /// outcome is also sent as the `turn_finished` event.
    pub async fn run_turn(&mut self, prompt: &str, cancel: CancellationToken) -> TurnOutcome {
        self.events.emit(Event::TurnStarted { prompt: prompt.to_string() });
        self.lookups_since_change.clear();
        self.state.forget_last_change();
        self.budget = super::budget::Budget::new(&self.settings.pipeline);
        self.untested_change = false;
        self.test_runs_left = super::tests_run::MAX_CONFIGURED_TEST_RUNS;
        self.unbuilt_changes.clear();
        self.build_checks_left = super::build_check::MAX_BUILD_CHECKS;
        let outcome = match self.submit_prompt(prompt, &cancel).await {
            Ok(()) => self.turn_loop(&cancel).await,
            Err(reason) => {
                self.events.emit(Event::Error { message: format!("the prompt was blocked by a hook: {reason}") });
                TurnOutcome { stop_reason: StopReason::Error, text: String::new(), usage: Usage::default() }
            }
        };
        if outcome.stop_reason == StopReason::Cancelled {
            tracing::info!("turn cancelled");
            self.state.stop_processes().await;
        }
        if let Some(session) = &mut self.session {
            if let Err(error) = session.append_stop(outcome.stop_reason) {
                self.report_session_error(error);
            }
        }
        self.events.emit(Event::Status { status: AgentStatus::Idle });
        self.events.emit(Event::TurnFinished {
            stop_reason: outcome.stop_reason,
            text: outcome.text.clone(),
            usage: outcome.usage,
        });
        outcome
    }

    /// Records the user's prompt with what it brings along: the context of
    /// SessionStart (first turn) and UserPromptSubmit hooks and the files it
    /// names. A prompt a hook blocks is not recorded; `Err` holds the reason.
    async fn submit_prompt(&mut self, prompt: &str, cancel: &CancellationToken) -> Result<(), String> {
        let mut message = Message::user_text(prompt);
        let mut add_context = |event: HookEvent, context: Vec<String>| {
            for text in context {
                message
                    .blocks
                    .push(Block::Text { text: format!("\n\n[context from a {} hook]\n{text}", event.name()) });
            }
        };
        if !self.session_started {
            self.session_started = true;
            let source = if self.history.is_empty() { "startup" } else { "resume" };
            let started = self.run_hooks(HookEvent::SessionStart, None, json!({ "source": source }), cancel).await;
            add_context(HookEvent::SessionStart, started.context);
        }
        let submitted = self.run_hooks(HookEvent::UserPromptSubmit, None, json!({ "prompt": prompt }), cancel).await;
        if let Some(reason) = submitted.block {
            // The prompt and what came with it are dropped: the next one starts the session.
            self.session_started = self.history.iter().any(|m| m.role == Role::User);
            return Err(reason);
        }
        add_context(HookEvent::UserPromptSubmit, submitted.context);
        // The whole-file way hands over the files at each generation instead;
        // it is chosen by the text that turn reads back, hook context included.
        self.choose_way(&message.text());
        let files = if self.whole_file_selection.is_some() { None } else { self.attach_named_files(prompt) };
        if let Some(files) = files {
            self.prompt_carries_files = true;
            message.blocks.push(Block::Text { text: files });
        }
        self.record(message);
        Ok(())
    }

    pub(super) async fn turn_loop(&mut self, cancel: &CancellationToken) -> TurnOutcome {
        if std::mem::take(&mut self.pipeline_turn) {
            let selection = self.whole_file_selection.take();
            return self.pipeline_turn(selection, false, cancel).await;
        }
        if let Some(selection) = self.whole_file_selection.take() {
            let pipeline = &self.settings.pipeline;
            if (pipeline.tests_first || pipeline.questions_run) && pipeline.check && self.may_run_commands() {
                return self.pipeline_turn(Some(selection), true, cancel).await;
            }
            return self.whole_file_turn(selection, cancel).await;
        }
        let mode = self.policy.mode;
        let specs = self.tools.specs(|kind| visible_in_mode(mode, kind));
        let system = prompt::system_prompt(mode, &specs, self.backend.tool_protocol());
        let workspace_context = self.workspace_context();
        let system_tokens = self.backend.count_tokens(&system) + self.backend.count_tokens(&workspace_context);
        let mut usage = Usage::default();
        let mut text = String::new();
        let finish = |stop_reason, text: &str, usage| TurnOutcome { stop_reason, text: text.to_string(), usage };
        // Guard state, per turn: the calls since the last detection, how many
        // loops were seen, and how many silent replies in a row were nudged.
        let mut recent_calls: Vec<CallRecord> = Vec::new();
        let mut detections = 0;
        let mut nudges = 0;
        // Whether the last results held a failure the model should fix, and
        // whether it was already told once this turn to go on after one.
        let mut unfixed_failure = false;
        let mut failed_output = String::new();
        // Calls the last successful changes named (once a turn).
        let mut named_calls: Vec<String> = Vec::new();
        let mut offered_named = false;
        let mut repeated_tools: Vec<String> = Vec::new();
        // Lookups refused as repeats this turn, by tool, since the last change.
        let mut repeats: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        let mut pushed_on = false;
        // Replies in a row whose every call was a change already made.
        let mut redone = 0;
        // The model was offered the edit its reply showed (once a turn), or
        // asked for the call it announced; either way its next reply is a call.
        let mut offered_edit = false;
        let mut offered_written = false;
        let mut asked_for_calls = 0;
        // A change was made this turn.
        let mut changed = false;
        let mut force_call = false;
        // A Stop hook has sent the model back this turn (hooks read it to
        // avoid sending it back forever).
        let mut stop_hook_active = false;
        let can_edit = specs.iter().any(|spec| spec.name == "Edit");
        let small = crate::config::is_small_model(self.backend.parameters());
        let lookups: Vec<String> = specs
            .iter()
            .filter(|spec| self.tools.get(&spec.name).is_some_and(|tool| tool.kind() == ToolKind::ReadOnly))
            .map(|spec| spec.name.clone())
            .collect();

        for _ in 0..self.settings.max_iterations {
            if cancel.is_cancelled() {
                return finish(StopReason::Cancelled, &text, usage);
            }
            let (messages, compaction) = self.prompt_messages(system_tokens);
            self.report_compaction(compaction, cancel).await;
            self.events.emit(Event::Status { status: AgentStatus::Thinking });
            // The last nudge before giving up holds the model to a call.
            let require_call = nudges == MAX_NUDGES || std::mem::take(&mut force_call);
            // A tool just refused for a repeated lookup cannot be called in
            // this reply, and one refused so twice not until something is
            // changed: a small model decoding greedily makes the same call
            // again after every refusal and nudge.
            let mut held_back = std::mem::take(&mut repeated_tools);
            // A small model whose prompt carries the files it names looks
            // them up again anyway, often until the turn runs out, instead
            // of changing them: its first reply makes the change or answers.
            if std::mem::take(&mut self.prompt_carries_files) && small {
                held_back.extend(lookups.iter().cloned());
            }
            held_back.extend(repeats.iter().filter(|(_, count)| **count >= 2).map(|(name, _)| name.clone()));
            held_back.sort();
            held_back.dedup();
            let generation = match self.generate(&system, &specs, &held_back, messages, require_call, cancel).await {
                StreamEnd::Complete(generation) => generation,
                StreamEnd::Cancelled(partial) => {
                    usage += partial.usage;
                    let generation_usage = partial.usage;
                    let message = partial.into_message(false);
                    if !message.blocks.is_empty() {
                        text = message.text();
                        self.record_with_usage(message, Some(generation_usage));
                    }
                    return finish(StopReason::Cancelled, &text, usage);
                }
                StreamEnd::Failed(error) => {
                    self.events.emit(Event::Error { message: error.to_string() });
                    return finish(StopReason::Error, &text, usage);
                }
            };
            let Generation { mut blocks, mut calls, usage: generation_usage, repeated } = generation;
            // A reply cut for repeating itself is retried as a call: left
            // free, the model answers the cut with silence or apologies.
            force_call |= repeated;
            usage += generation_usage;
            // Bare template tags (`<tools>` before a call) are not words to
            // the user, and kept in the history the model copies them into
            // every later reply, until it writes nothing else.
            let bare_tags = blocks
                .iter()
                .any(|block| matches!(block, Block::Text { text } if !text.trim().is_empty() && says_nothing(text)));
            // A reply that only repeats tack's own last message back (small
            // models echo a nudge) is no answer: shown to the user as one,
            // it reads as tack's.
            let nudge = self.history.last().filter(|m| m.role == Role::User).map(Message::text).unwrap_or_default();
            blocks.retain(|block| !matches!(block, Block::Text { text } if says_nothing(text) || echoes(text, &nudge)));
            let message = Message { role: Role::Assistant, blocks };
            text = message.text();
            let silent = calls.is_empty() && says_nothing(&text);
            let thoughts_only = silent && message.blocks.iter().any(|b| matches!(b, Block::Thought { .. }));
            self.record_with_usage(message, Some(generation_usage));
            if silent {
                nudges += 1;
                if nudges > MAX_NUDGES {
                    self.events.emit(Event::Error {
                        message: format!("the model gave no answer and called no tool, {nudges} times in a row"),
                    });
                    return finish(StopReason::Error, &text, usage);
                }
                let (notice, nudge) = if thoughts_only { THOUGHTS_ONLY } else { EMPTY_RESPONSE };
                // A reply of bare template tags (`<tools>`) is a call the
                // model began in the wrong words: the next reply is held to one.
                force_call |= bare_tags;
                self.events.emit(Event::Text { text: format!("{notice}\n") });
                self.record(Message::user_text(nudge));
                continue;
            }
            nudges = 0;
            if calls.is_empty() && can_edit && !offered_edit {
                if let Some(shown) = self.shown_edit(&text) {
                    offered_edit = true;
                    force_call = true;
                    let nudge = self.offer_shown_edit(&shown);
                    self.events.emit(Event::Text {
                        text: format!(
                            "\n[the model showed a change to {} without making it — offering it the edit…]\n",
                            shown.path.display()
                        ),
                    });
                    self.record(Message::user_text(nudge));
                    continue;
                }
            }
            if calls.is_empty() && !offered_written {
                let calls = self.offered_calls(&text);
                if !calls.is_empty() {
                    offered_written = true;
                    force_call = true;
                    let (notice, nudge) = WRITTEN_CALL;
                    self.nudge(notice, format!("{nudge}\n{}", calls.join("\n")));
                    continue;
                }
            }
            // A reply that ends announcing a call ("Here is the call:"), or
            // that names a tool it means to use ("use the `Edit` function")
            // before anything was changed, is a step described, not taken.
            let announces = text.trim_end().ends_with(':') || (!changed && names_a_tool(&text, &specs));
            if calls.is_empty() && asked_for_calls < MAX_ASKED_FOR_CALLS && announces {
                asked_for_calls += 1;
                force_call = true;
                let (notice, nudge) = ANNOUNCED_CALL;
                self.nudge(notice, nudge.to_string());
                continue;
            }
            if calls.is_empty() && unfixed_failure && !pushed_on {
                pushed_on = true;
                unfixed_failure = false;
                force_call = true;
                let (notice, nudge) = UNFIXED_ERROR;
                let mut nudge = nudge.to_string();
                // An error that named the calls that work is the model's
                // best next step; shown in its own call format, it is copied.
                let suggested = self.offered_calls(&failed_output);
                if !suggested.is_empty() {
                    nudge.push_str(&format!(" The error named calls that would work:\n{}", suggested.join("\n")));
                }
                self.nudge(notice, nudge);
                continue;
            }
            if calls.is_empty() && !named_calls.is_empty() && !offered_named {
                offered_named = true;
                force_call = true;
                let (notice, nudge) = NAMED_CALLS;
                self.nudge(notice, format!("{nudge}\n{}", named_calls.join("\n")));
                continue;
            }
            if calls.is_empty() {
                let reason = match self.why_not_done(stop_hook_active, &text, cancel).await {
                    Ok(reason) => reason,
                    Err(outcome) => return finish(outcome.stop_reason, &text, usage),
                };
                if let Some(reason) = reason {
                    stop_hook_active = true;
                    self.record(Message::user_text(sent_back(&reason)));
                    continue;
                }
                return finish(StopReason::EndTurn, &text, usage);
            }
            repeated_tools = calls.iter().filter(|call| call.repeated_lookup).map(|call| call.name.clone()).collect();
            for name in &repeated_tools {
                *repeats.entry(name.clone()).or_default() += 1;
            }
            let (mut results, cancelled) = self.run_calls(&mut calls, cancel).await;
            self.save_tasks_if_changed();
            if cancelled {
                self.record(Message { role: Role::User, blocks: results });
                return finish(StopReason::Cancelled, &text, usage);
            }
            // Only failed changes count: a lookup that finds nothing is often
            // an answer in itself, and a capable model rightly says so.
            // The last change of the batch decides: one that failed and was
            // then made another way in the same reply is fixed.
            let change_results: Vec<&Block> = calls
                .iter()
                .zip(&results)
                .filter(|(call, _)| call.tool.as_ref().is_some_and(|tool| tool.kind() == ToolKind::Edit))
                .map(|(_, result)| result)
                .collect();
            let last_change = change_results.last().filter(|result| fixable_failure(result));
            unfixed_failure = last_change.is_some();
            if let Some(Block::ToolResult { output, .. }) = last_change {
                failed_output.clone_from(output);
            }
            let made: Vec<&String> = change_results
                .iter()
                .filter_map(|result| match result {
                    Block::ToolResult { output, is_error: false, .. } => Some(output),
                    _ => None,
                })
                .collect();
            if !made.is_empty() {
                // After a change, looking again is how it is checked.
                repeats.clear();
                changed = true;
            }
            named_calls = made.iter().flat_map(|output| self.offered_calls(output)).take(MAX_OFFERED_CALLS).collect();
            // A model that makes a change again after being told it is made
            // has finished but cannot stop: small ones go on until they
            // undo it. The change stands, and the turn ends.
            redone = if calls.iter().all(|call| call.already_done) { redone + 1 } else { 0 };
            if redone >= MAX_REDONE {
                redone = 0;
                self.events.emit(Event::Text { text: format!("\n{REDONE_NOTICE}\n") });
                // A hook's reason joins the results; the tests are calls of
                // their own, recorded after the results they follow.
                let hook = self.stop_hook_blocks(stop_hook_active, &text, cancel).await;
                results.extend(hook.as_ref().map(|reason| Block::Text { text: sent_back(reason) }));
                self.record(Message { role: Role::User, blocks: results });
                let tests = match hook {
                    Some(_) => None,
                    None => match self.configured_tests_failing(cancel).await {
                        Ok(report) => report,
                        Err(outcome) => return finish(outcome.stop_reason, &text, usage),
                    },
                };
                if let Some(report) = &tests {
                    self.record(Message::user_text(sent_back(report)));
                } else if hook.is_none() {
                    return finish(StopReason::EndTurn, &text, usage);
                }
                stop_hook_active = true;
                continue;
            }
            for (call, result) in calls.iter().zip(&results) {
                let is_error = matches!(result, Block::ToolResult { is_error: true, .. });
                recent_calls.push(CallRecord { name: call.name.clone(), input: call.input.clone(), is_error });
            }
            if let Some(detection) = guard::detect(&recent_calls) {
                recent_calls.clear();
                detections += 1;
                self.events.emit(Event::LoopDetected { description: detection.description.clone() });
                match guard::intervention(&detection, detections) {
                    Intervention::Nudge(advice) => results.push(Block::Text { text: advice }),
                    Intervention::Stop => {
                        self.record(Message { role: Role::User, blocks: results });
                        self.events.emit(Event::Error {
                            message: format!("stopped: the model kept looping ({})", detection.description),
                        });
                        return finish(StopReason::LoopDetected, &text, usage);
                    }
                }
            }
            self.record(Message { role: Role::User, blocks: results });
        }
        finish(StopReason::MaxIterations, &text, usage)
    }

    /// The workspace context of this conversation, taken once, at its first
    /// turn: a snapshot that stays put keeps the prompt's prefix, and with it
    /// the model's KV cache, valid from one iteration to the next.
    fn workspace_context(&mut self) -> String {
        let root = self.workspace.root();
        let skills = self.tools.skills();
        self.workspace_context.get_or_insert_with(|| prompt::workspace_context(root, skills)).clone()
    }

    /// The messages of the next prompt: the history, compacted when it would
    /// pass the budget, the workspace context put before its first user
    /// message. Reports the context gauge; returns a compaction not seen
    /// before as (tokens before, tokens after), for the caller to report.
    pub(super) fn prompt_messages(&mut self, system_tokens: usize) -> (Vec<Message>, Option<(u64, u64)>) {
        while self.token_counts.len() < self.history.len() {
            let tokens = message_tokens(&*self.backend, &self.history[self.token_counts.len()]);
            self.token_counts.push(tokens);
        }
        let window = self.settings.context_window.unwrap_or_else(|| self.backend.context_window());
        let budget = context::budget(window, &self.settings.context);
        let backend = self.backend.clone();
        let count = move |message: &Message| message_tokens(&*backend, message);
        let compacted =
            context::compact(&self.history, &self.token_counts, system_tokens, budget, &self.settings.context, &count);
        let mut new_compaction = None;
        let (messages, used) = match compacted {
            None => (self.history.clone(), system_tokens + self.token_counts.iter().sum::<usize>()),
            Some(compacted) => {
                let shape = (compacted.summarized, compacted.omitted);
                if self.last_compaction != Some(shape) {
                    self.last_compaction = Some(shape);
                    new_compaction = Some((compacted.tokens_before as u64, compacted.tokens_after as u64));
                }
                (compacted.messages, compacted.tokens_after)
            }
        };
        self.last_prompt_tokens = used;
        self.events.emit(Event::ContextUsage { used_tokens: used as u64, context_window: window as u64 });
        let mut messages = messages;
        if let (Some(context), Some(first)) =
            (&self.workspace_context, messages.iter_mut().find(|m| m.role == Role::User))
        {
            first.blocks.insert(0, Block::Text { text: context.clone() });
        }
        (messages, new_compaction)
    }

    /// Runs the PreCompact hooks and reports a compaction `prompt_messages`
    /// returned, if any.
    pub(super) async fn report_compaction(&mut self, compaction: Option<(u64, u64)>, cancel: &CancellationToken) {
        if let Some((tokens_before, tokens_after)) = compaction {
            let payload = json!({ "trigger": "auto", "custom_instructions": "" });
            self.run_hooks(HookEvent::PreCompact, None, payload, cancel).await;
            self.events.emit(Event::Compaction { tokens_before, tokens_after });
        }
    }

    /// One generation, retrying transient backend errors with backoff.
    pub(super) async fn generate(
        &mut self,
        system: &str,
        specs: &[ToolSpec],
        held_back: &[String],
        messages: Vec<Message>,
        require_call: bool,
        cancel: &CancellationToken,
    ) -> StreamEnd {
        let mut attempt = 0;
        loop {
            match self.stream_once(system, specs, held_back, messages.clone(), require_call, cancel).await {
                StreamEnd::Failed(error) if attempt < self.settings.max_retries && error.retry_after().is_some() => {
                    attempt += 1;
                    // Jitter spreads the retries of many clients hitting one overloaded server.
                    let backoff = self.settings.retry_base_delay * 2u32.saturating_pow(attempt - 1);
                    let delay = backoff.mul_f64(0.5 + fastrand::f64()).max(error.retry_after().unwrap_or_default());
                    let error = error.message().to_string();
                    self.events.emit(Event::Retry { attempt, delay_ms: delay.as_millis() as u64, error });
                    tokio::select! {
                        _ = cancel.cancelled() => return StreamEnd::Cancelled(Generation::default()),
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
                end => return end,
            }
        }
    }

    /// The usage of a generation cut before its end: the backend reports
    /// usage when a generation ends, and this one never does, so it is
    /// counted here and the turn's usage holds what it cost.
    fn report_cut_usage(&mut self, generation: &mut Generation, streamed: &str) {
        let usage = Usage {
            prompt_tokens: self.last_prompt_tokens as u64,
            completion_tokens: self.backend.count_tokens(streamed) as u64,
            ..Usage::default()
        };
        self.report_usage(generation, usage);
    }

    async fn stream_once(
        &mut self,
        system: &str,
        specs: &[ToolSpec],
        held_back: &[String],
        messages: Vec<Message>,
        require_tool_call: bool,
        cancel: &CancellationToken,
    ) -> StreamEnd {
        let request = CompletionRequest {
            system: system.to_string(),
            messages,
            tools: specs.to_vec(),
            agent_path: self.events.agent_path.clone(),
            require_tool_call,
            held_back: held_back.to_vec(),
            resample: self.resample,
            choices: self.reply_choices.clone(),
            max_tokens: self.reply_max_tokens,
            reply_prefix: self.reply_prefix.clone(),
        };
        let mut stream = self.backend.stream(request);
        let mut parser = ToolCallParser::for_tools(specs.iter().map(|spec| spec.name.as_str()));
        let mut generation = Generation::default();
        // Only small models fall into these cycles; a large one writing a
        // long table of near-identical rows means every row.
        let mut repetition = crate::config::is_small_model(self.backend.parameters()).then(RepetitionGuard::default);
        // What the model wrote, for the usage of a generation the guard cuts.
        let mut streamed = String::new();
        let done = self.reply_done.clone();
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return StreamEnd::Cancelled(generation),
                next = stream.next() => next,
            };
            match next {
                None => break,
                Some(Ok(ModelChunk::Text(chunk))) => {
                    if repetition.is_some() || done.is_some() {
                        streamed.push_str(&chunk);
                    }
                    for event in parser.push(&chunk) {
                        self.on_parsed(event, &mut generation);
                    }
                    if repetition.as_mut().is_some_and(|guard| guard.push(&chunk)) {
                        // Dropping the stream stops the generation.
                        tracing::info!("the reply fell into a cycle of lines; cutting it");
                        generation.repeated = true;
                        self.events.emit(Event::Text { text: REPEATED.into() });
                        self.report_cut_usage(&mut generation, &streamed);
                        break;
                    }
                    if done.as_ref().is_some_and(|done| done(&streamed)) {
                        self.report_cut_usage(&mut generation, &streamed);
                        break;
                    }
                }
                Some(Ok(ModelChunk::ToolCall { id, name, input })) => {
                    let id = id.unwrap_or_else(|| self.next_call_id());
                    self.add_call(&mut generation, id, name, input, None);
                }
                Some(Ok(ModelChunk::Usage(usage))) => self.report_usage(&mut generation, usage),
                Some(Err(error)) => return StreamEnd::Failed(error),
            }
        }
        for event in parser.finish() {
            self.on_parsed(event, &mut generation);
        }
        StreamEnd::Complete(generation)
    }

    /// Makes `usage` the generation's, priced when a price table is
    /// configured, and tells the front end.
    fn report_usage(&self, generation: &mut Generation, mut usage: Usage) {
        if let Some(pricing) = &self.settings.pricing {
            usage.cost_usd = Some(pricing.cost(&usage));
        }
        generation.usage = usage;
        self.events.emit(Event::Usage { usage });
    }

    pub(super) fn next_call_id(&mut self) -> String {
        self.next_call += 1;
        format!("call_{}", self.next_call)
    }

    fn on_parsed(&mut self, event: ParseEvent, generation: &mut Generation) {
        match event {
            ParseEvent::Text(text) => {
                if !text.is_empty() {
                    self.events.emit(Event::Text { text: text.clone() });
                    generation.push_text(&text);
                }
            }
            ParseEvent::Thought(text) => {
                self.events.emit(Event::Thought { text: text.clone() });
                generation.blocks.push(Block::Thought { text });
            }
            ParseEvent::Call(call) => {
                let id = self.next_call_id();
                self.add_call(generation, id, call.name, call.input, None);
            }
            ParseEvent::Malformed(bad) => {
                let id = self.next_call_id();
                // The example is in the format the model was taught: tack's
                // protocol, or the one its chat template lays out.
                let call = self.call_text("Read", &[("file_path", Value::from("src/main.rs"))]);
                let example = match self.backend.tool_protocol() {
                    ToolProtocol::Template => format!("exactly as the tool list shows, e.g. {call}"),
                    ToolProtocol::Text | ToolProtocol::Native => {
                        format!("as one JSON object on its own line, e.g. {call}")
                    }
                };
                let problem = if generation.repeated {
                    // The format was not the problem: an example call here
                    // was answered with silence.
                    "your tool call was cut off: it kept repeating itself, so it never ended, and nothing was done. \
                     Make the call again, shorter: only what the task asks for, without examples, prints or tests \
                     it did not ask for."
                        .to_string()
                } else {
                    format!("your tool call could not be read: {}\nwrite each call {example}", bad.problem)
                };
                let name = bad.name.unwrap_or_else(|| UNPARSED_CALL.to_string());
                self.add_call(generation, id, name, serde_json::json!({ "raw": bad.raw }), Some(problem));
            }
        }
    }

    /// Shows the user `notice` on a line of its own and tells the model
    /// `nudge`, for its next reply.
    fn nudge(&mut self, notice: &str, nudge: String) {
        self.events.emit(Event::Text { text: format!("\n{notice}\n") });
        self.record(Message::user_text(nudge));
    }

    /// The valid calls written out in `text` (a reply, an error that
    /// suggests calls), each as the model was taught to make it.
    fn offered_calls(&self, text: &str) -> Vec<String> {
        written_calls(text)
            .into_iter()
            .filter(|(name, input)| self.tools.check(name, input).is_ok())
            .take(MAX_OFFERED_CALLS)
            .map(|(name, input)| {
                let fields: Vec<(&str, Value)> =
                    input.as_object().into_iter().flatten().map(|(key, value)| (key.as_str(), value.clone())).collect();
                self.call_text(&name, &fields)
            })
            .collect()
    }

    /// A call as the model was taught to write it: tack's protocol, or the
    /// format its chat template lays out. Keys stay in the order given, the
    /// order the tools are called in (`file_path`, `old_string`, `new_string`).
    fn call_text(&self, name: &str, fields: &[(&str, Value)]) -> String {
        let input: Vec<String> = fields.iter().map(|(key, value)| format!("{}: {value}", Value::from(*key))).collect();
        let (name, input) = (Value::from(name), format!("{{{}}}", input.join(", ")));
        match self.backend.tool_protocol() {
            ToolProtocol::Template => {
                format!("<tool_call>\n{{\"name\": {name}, \"arguments\": {input}}}\n</tool_call>")
            }
            ToolProtocol::Text | ToolProtocol::Native => format!("{{\"tool\": {name}, \"input\": {input}}}"),
        }
    }

    /// The nudge that offers the model the Edit its reply showed. A file it
    /// had not read as it is comes with it, and then counts as read.
    fn offer_shown_edit(&self, shown: &ShownEdit) -> String {
        let path = shown.path.display();
        let mut nudge = format!(
            "[tack] Your reply shows a changed {path}, but replies do not change files: only tool calls do, \
             and {path} is unchanged.\n"
        );
        if let Some(text) = &shown.unread_text {
            self.state.note_read(&shown.path, text);
            nudge.push_str(&format!("Here is {path} as it is now:\n{}", number_all_lines(text)));
        }
        let input = [
            ("file_path", Value::from(path)),
            ("old_string", Value::from(shown.rewrite.old_string.as_str())),
            ("new_string", Value::from(shown.rewrite.new_string.as_str())),
        ];
        nudge.push_str(&format!(
            "If that is the change you mean, make it now with this call:\n{}\nOtherwise make the call the task needs.",
            self.call_text("Edit", &input)
        ));
        nudge
    }

    pub(super) fn add_call(
        &mut self,
        generation: &mut Generation,
        id: String,
        name: String,
        input: Value,
        problem: Option<String>,
    ) {
        let checked = match problem {
            Some(problem) => Err(problem),
            None => self.tools.check(&name, &input).cloned().map_err(|problem| problem.to_string()),
        };
        self.push_call(generation, id, name, input, checked);
    }

    /// A call the harness makes itself (the command a prompt asks to run),
    /// among the tools only it calls too; approved and run as any call.
    pub(super) fn add_harness_call(&mut self, generation: &mut Generation, name: &str, input: Value) {
        let id = self.next_call_id();
        let checked = self.tools.check_harness_call(name, &input).cloned().map_err(|problem| problem.to_string());
        self.push_call(generation, id, name.to_string(), input, checked);
    }

    fn push_call(
        &mut self,
        generation: &mut Generation,
        id: String,
        name: String,
        input: Value,
        checked: Result<Arc<dyn Tool>, String>,
    ) {
        self.events.emit(Event::ToolCall { tool_call_id: id.clone(), name: name.clone(), input: input.clone() });
        let (tool, problem) = match checked {
            Ok(tool) => (Some(tool), None),
            Err(problem) => (None, Some(problem)),
        };
        let repeat = match problem {
            Some(_) => None,
            None => self.repeated_lookup(&name, &input, tool.as_deref()),
        };
        let repeated_lookup = repeat.is_some();
        let problem = problem.or(repeat);
        generation.blocks.push(Block::ToolUse { id: id.clone(), name: name.clone(), input: input.clone() });
        generation.calls.push(PendingCall { id, name, input, tool, problem, repeated_lookup, already_done: false });
    }

    /// Why a Stop hook sends the model back to work instead of letting the
    /// turn end, if one does.
    pub(super) async fn stop_hook_blocks(
        &self,
        stop_hook_active: bool,
        last_text: &str,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let payload = json!({ "stop_hook_active": stop_hook_active, "last_assistant_message": last_text });
        self.run_hooks(HookEvent::Stop, None, payload, cancel).await.block
    }

    /// Refuses a lookup (Read, Grep, ...) the model already made since the
    /// workspace last changed: its result is in the history, and a small
    /// model that repeats one is stuck; telling it so beats running it again.
    fn repeated_lookup(&mut self, name: &str, input: &Value, tool: Option<&dyn Tool>) -> Option<String> {
        let tool = tool?;
        if tool.set() != ToolSet::Read {
            // Anything else may change what the lookups would find.
            self.lookups_since_change.clear();
            return None;
        }
        if self.lookups_since_change.insert(format!("{name} {input}")) {
            return None;
        }
        Some(format!(
            "you already called {name} with exactly this input, and nothing has changed since: its result is above. \
             Do not repeat it; take the next step (Read another file, Edit the file you read, or answer)"
        ))
    }

    /// Runs the calls of one assistant message and returns their results in
    /// the model's order, plus whether the turn was cancelled meanwhile.
    pub(super) async fn run_calls(
        &mut self,
        calls: &mut [PendingCall],
        cancel: &CancellationToken,
    ) -> (Vec<Block>, bool) {
        let mut outputs: Vec<Option<ToolOutput>> = calls.iter().map(|_| None).collect();
        let mut cancelled = false;
        let mut start = 0;
        'batches: while start < calls.len() {
            let end = if calls[start].concurrency_safe() {
                start + calls[start..].iter().take_while(|c| c.concurrency_safe()).count()
            } else {
                start + 1
            };
            let mut runnable = Vec::new();
            for index in start..end {
                let hooked = match self.pre_tool_hooks(&mut calls[index], cancel).await {
                    _ if cancel.is_cancelled() => {
                        cancelled = true;
                        break 'batches;
                    }
                    Ok(permission) => permission,
                    Err(output) => {
                        outputs[index] = Some(output);
                        continue;
                    }
                };
                match self.gate(&calls[index], hooked, cancel).await {
                    Gate::Run(tool) => runnable.push((index, tool)),
                    Gate::Done(output) => outputs[index] = Some(output),
                    Gate::Cancelled => {
                        cancelled = true;
                        break 'batches;
                    }
                }
            }
            if !runnable.is_empty() {
                self.events.emit(Event::Status { status: AgentStatus::RunningTool });
                let mut running = std::pin::pin!(futures::future::join_all(
                    runnable.iter().map(|(index, tool)| self.execute(tool.clone(), &calls[*index], cancel)),
                ));
                let results = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        // Tools see the cancellation too: give them a moment to
                        // stop their processes and say what they did.
                        tokio::time::timeout(CANCEL_GRACE, &mut running).await.ok()
                    }
                    results = &mut running => Some(results),
                };
                let Some(results) = results else {
                    cancelled = true;
                    break 'batches;
                };
                if cancel.is_cancelled() {
                    cancelled = true;
                }
                for ((index, _), mut output) in runnable.into_iter().zip(results) {
                    let call = &calls[index];
                    let hook_call = HookCall { tool_call_id: &call.id, name: &call.name, input: &call.input };
                    for hook in &self.hooks {
                        hook.after(&hook_call, &mut output);
                    }
                    if !cancelled {
                        self.post_tool_hooks(call, &mut output, cancel).await;
                    }
                    if !output.is_error {
                        let named = call.tool.as_ref().map(|tool| tool.paths(&call.input)).unwrap_or_default();
                        if let Some(rules) = self.folder_rules(&named) {
                            output.output.push_str(&rules);
                        }
                    }
                    outputs[index] = Some(output);
                }
            }
            for index in start..end {
                if let Some(output) = &outputs[index] {
                    self.emit_result(&calls[index], output);
                }
            }
            if cancelled {
                break;
            }
            start = end;
        }

        let mut blocks = Vec::with_capacity(calls.len());
        for (call, output) in calls.iter_mut().zip(outputs) {
            let output = match output {
                Some(output) => output,
                None => {
                    let output = ToolOutput::error("cancelled by the user before this call finished");
                    self.emit_result(call, &output);
                    output
                }
            };
            call.already_done = output.already_done;
            // A note to the memory file changes nothing the tests test.
            let changes =
                call.tool.as_ref().is_some_and(|tool| tool.kind() == ToolKind::Edit) && call.name != "Remember";
            let changed = changes && !output.is_error && !output.already_done;
            self.untested_change |= changed;
            let path = call.input["file_path"].as_str().and_then(|path| self.workspace.resolve(path).ok());
            if let Some(path) = path.filter(|_| changed) {
                let rel = path.display().to_string();
                if !self.unbuilt_changes.contains(&rel) {
                    self.unbuilt_changes.push(rel);
                }
            }
            blocks.push(Block::ToolResult {
                tool_use_id: call.id.clone(),
                output: output.output,
                is_error: output.is_error,
                summary: output.summary,
            });
        }
        (blocks, cancelled)
    }

    fn emit_result(&self, call: &PendingCall, output: &ToolOutput) {
        self.events.emit(Event::ToolResult {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            is_error: output.is_error,
            output: output.output.clone(),
            summary: output.summary.clone(),
        });
    }

    /// PreToolUse command hooks of a valid call: `Err` is the result of a
    /// call they block (or rewrite into an invalid one); `Ok` carries their
    /// say on its permission. A rewritten input replaces the call's.
    async fn pre_tool_hooks(
        &mut self,
        call: &mut PendingCall,
        cancel: &CancellationToken,
    ) -> Result<Option<HookPermission>, ToolOutput> {
        if call.tool.is_none() || call.problem.is_some() || self.command_hooks.is_none() {
            return Ok(None);
        }
        let payload = json!({ "tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id });
        let decision = self.run_hooks(HookEvent::PreToolUse, Some(&call.name), payload, cancel).await;
        if let Some(reason) = decision.block {
            return Err(ToolOutput::error(format!("blocked by a hook: {reason}")));
        }
        if let Some(input) = decision.updated_input {
            match self.tools.check(&call.name, &input) {
                Ok(tool) => {
                    call.tool = Some(tool.clone());
                    call.input = input;
                }
                Err(problem) => {
                    return Err(ToolOutput::error(format!(
                        "a PreToolUse hook rewrote this call's input badly: {problem}"
                    )));
                }
            }
        }
        Ok(decision.permission)
    }

    /// PostToolUse command hooks: a block's reason and any context they give
    /// are added to the result, for the model to act on.
    async fn post_tool_hooks(&self, call: &PendingCall, output: &mut ToolOutput, cancel: &CancellationToken) {
        if self.command_hooks.is_none() {
            return;
        }
        let payload = json!({
            "tool_name": call.name,
            "tool_input": call.input,
            "tool_use_id": call.id,
            "tool_response": { "output": output.output, "is_error": output.is_error },
        });
        let decision = self.run_hooks(HookEvent::PostToolUse, Some(&call.name), payload, cancel).await;
        for note in decision.block.into_iter().chain(decision.context) {
            output.output.push_str(&format!("\n[from a PostToolUse hook] {note}"));
        }
    }

    /// Permission (with what PreToolUse hooks said about it), then the
    /// in-process hooks. Sequential: it may ask the user and may change the
    /// remembered answers.
    async fn gate(&mut self, call: &PendingCall, hooked: Option<HookPermission>, cancel: &CancellationToken) -> Gate {
        let (Some(tool), None) = (&call.tool, &call.problem) else {
            return Gate::Done(ToolOutput::error(call.problem.clone().unwrap_or_default()));
        };
        let mut paths = Vec::new();
        for named in tool.paths(&call.input) {
            match self.workspace.resolve(&named) {
                Ok(resolved) => {
                    paths.push(resolved.rel.clone());
                    if resolved.real_rel != resolved.rel {
                        paths.push(resolved.real_rel);
                    }
                }
                // The tool itself reports the boundary error; rules still see the name.
                Err(_) => paths.push(named),
            }
        }
        let command = tool.command(&call.input);
        let facts = CallFacts { tool: &call.name, kind: tool.kind(), paths: &paths, command: command.as_deref() };
        let decision = |decision, source: &str| Event::PermissionDecision {
            tool_call_id: call.id.clone(),
            decision,
            source: source.to_string(),
        };
        let verdict = match (self.policy.decide(&facts), hooked) {
            (Verdict::Ask { .. }, Some(HookPermission::Allow)) => Verdict::Allow { source: Source::Hook },
            (Verdict::Allow { .. }, Some(HookPermission::Ask)) => {
                Verdict::Ask { reason: "a PreToolUse hook asks for approval".into() }
            }
            (verdict, _) => verdict,
        };
        match verdict {
            Verdict::Allow { source } => {
                if tool.kind().asks() {
                    self.events.emit(decision(ApprovalDecision::Allow, source.as_str()));
                }
            }
            Verdict::Deny { reason, source } => {
                self.events.emit(decision(ApprovalDecision::Deny, source.as_str()));
                return Gate::Done(ToolOutput::error(format!("permission denied: {reason}")));
            }
            // The user will see the diff and take or leave each hunk.
            Verdict::Ask { .. } if tool.kind() == ToolKind::Edit && self.events.host().reviews_edits() => {
                self.events.emit(decision(ApprovalDecision::Allow, "diff_review"));
            }
            Verdict::Ask { mut reason } => {
                if let Some(sandbox) = tool.sandbox() {
                    reason = format!("{reason}; it runs {sandbox}");
                }
                self.events.emit(Event::PermissionRequest {
                    tool_call_id: call.id.clone(),
                    name: call.name.clone(),
                    reason: reason.clone(),
                });
                let request = ApprovalRequest {
                    tool_call_id: call.id.clone(),
                    name: call.name.clone(),
                    input: call.input.clone(),
                    reason,
                    agent_path: self.events.agent_path.clone(),
                };
                let host = self.events.host().clone();
                let approval = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Gate::Cancelled,
                    approval = host.approve(request) => approval,
                };
                self.events.emit(decision(approval.decision, approval.source));
                match approval.decision {
                    ApprovalDecision::Allow => {}
                    ApprovalDecision::AllowAlways => self.policy.remember(&facts),
                    ApprovalDecision::Deny => {
                        let message = approval
                            .note
                            .unwrap_or_else(|| "the user denied this call; do not retry it unchanged".to_string());
                        return Gate::Done(ToolOutput::error(format!("permission denied: {message}")));
                    }
                }
            }
        }
        let hook_call = HookCall { tool_call_id: &call.id, name: &call.name, input: &call.input };
        for hook in &self.hooks {
            if let Err(reason) = hook.before(&hook_call) {
                return Gate::Done(ToolOutput::error(format!("blocked by a hook: {reason}")));
            }
        }
        Gate::Run(tool.clone())
    }

    /// Runs one tool. A tool error or panic becomes an error result.
    async fn execute(&self, tool: Arc<dyn Tool>, call: &PendingCall, cancel: &CancellationToken) -> ToolOutput {
        if !matches!(tool.kind(), ToolKind::ReadOnly | ToolKind::Edit) {
            self.state.forget_last_change();
        }
        let edits = HostEdits { events: &self.events, workspace: &self.workspace, tool_call_id: &call.id };
        let agents = SubAgents { parent: self, cancel: cancel.clone() };
        let ctx = ToolContext {
            workspace: &self.workspace,
            edits: &edits,
            cancel: cancel.clone(),
            tool_call_id: &call.id,
            state: &self.state,
            agents: &agents,
            user: &edits,
        };
        match AssertUnwindSafe(tool.call(call.input.clone(), &ctx)).catch_unwind().await {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => ToolOutput::error(error.to_string()),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                tracing::error!(tool = %call.name, %message, "tool panicked");
                ToolOutput::error(format!("tool {} failed unexpectedly: {message}", call.name))
            }
        }
    }
}

/// Whether an answer holds no words: blank, or only bare markup tags
/// (`<tools>`) that a small model copied from its chat template.
/// Calls written out in a reply's text as `Name {json}` lines, the form
/// tack's own errors suggest them in. Backticks and list markers around
/// them are allowed; anything else on the line is not.
fn written_calls(text: &str) -> Vec<(String, Value)> {
    let mut calls: Vec<(String, Value)> = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*']).trim().trim_matches('`');
        let Some((name, input)) = line.split_once(' ') else { continue };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let Ok(input @ Value::Object(_)) = serde_json::from_str::<Value>(input.trim()) else { continue };
        let call = (name.to_string(), input);
        if !calls.contains(&call) {
            calls.push(call);
        }
    }
    calls
}

/// Whether `text` names one of the tools as a thing to use: `` `Edit` ``,
/// "the Edit tool", "the Edit function", or a step of a plan that starts
/// with it ("### Step 2: Read the file", "1. Grep for is_even").
fn names_a_tool(text: &str, specs: &[ToolSpec]) -> bool {
    let steps: Vec<&str> = text.lines().filter_map(step_verb).collect();
    specs.iter().any(|spec| {
        let name = spec.name.as_str();
        text.contains(&format!("`{name}`"))
            || text.contains(&format!("{name} tool"))
            || text.contains(&format!("{name} function"))
            || steps.contains(&name)
    })
}

/// The first word of a line that is a step of a plan: a markdown heading or
/// list item, past its numbering and a "Step N:" label.
fn step_verb(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let marked = line.trim_start_matches(['#', '-', '*']);
    let numbered = marked.trim_start().trim_start_matches(|c: char| c.is_ascii_digit());
    let is_step = marked.len() < line.len() || numbered.len() < marked.trim_start().len();
    let mut rest = numbered.trim_start_matches(['.', ')', ':', ' ']);
    if let Some(label) = rest.strip_prefix("Step ") {
        rest = label.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches(['.', ')', ':', ' ']);
    }
    let word = rest.trim_start_matches(['*', '`', ' ']).split(|c: char| !c.is_alphanumeric()).next()?;
    (is_step && !word.is_empty()).then_some(word)
}

/// Whether a reply's text is one of tack's own messages (which all start
/// `[tack]`), or a piece of the nudge it answers (`[Read the file the task
/// names]`).
fn echoes(text: &str, nudge: &str) -> bool {
    let text = text.trim();
    let inner = text.trim_matches(|c: char| c == '[' || c == ']' || c == '.' || c.is_whitespace());
    text.starts_with("[tack]") || (nudge.starts_with("[tack]") && inner.len() >= 12 && nudge.contains(inner))
}

fn says_nothing(text: &str) -> bool {
    let mut rest = text.trim();
    while let Some(tag) = rest.strip_prefix('<') {
        let Some(end) = tag.find('>') else { return false };
        let name = tag[..end].trim_start_matches('/');
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|') {
            return false;
        }
        rest = tag[end + 1..].trim_start();
    }
    rest.is_empty()
}

fn message_tokens(backend: &dyn ModelBackend, message: &Message) -> usize {
    let mut text = String::new();
    render_message(message, &mut text);
    backend.count_tokens(&text)
}

/// The edit path of one call: events around the front end's decision.
struct HostEdits<'a> {
    events: &'a EventSink,
    workspace: &'a Workspace,
    tool_call_id: &'a str,
}

#[async_trait]
impl EditGate for HostEdits<'_> {
    async fn propose(&self, change: FileChange) -> EditOutcome {
        let path = change.path().rel.clone();
        let tool_call_id = self.tool_call_id.to_string();
        self.events.emit(Event::EditProposed {
            tool_call_id: tool_call_id.clone(),
            path: path.clone(),
            diff: change.unified_diff(),
        });
        let outcome = self.events.host().apply_edit(self.workspace, &change).await;
        match &outcome {
            EditOutcome::Applied | EditOutcome::Partial { .. } => {
                self.events.emit(Event::EditApplied { tool_call_id, path });
            }
            EditOutcome::Rejected { reason } => {
                self.events.emit(Event::EditRejected { tool_call_id, path, reason: reason.clone() });
            }
        }
        outcome
    }
}

#[async_trait]
impl UserQuestions for HostEdits<'_> {
    async fn ask(&self, question: &str, choices: &[String]) -> Result<String, String> {
        let question = Question {
            tool_call_id: self.tool_call_id.to_string(),
            agent_path: self.events.agent_path.clone(),
            question: question.to_string(),
            choices: choices.to_vec(),
        };
        self.events.host().ask_user(question).await
    }
}

/// What the model is told when a Stop hook or the configured tests send
/// it back to work.
pub(super) fn sent_back(reason: &str) -> String {
    format!("[tack] The task is not done: {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_of_a_plan_names_its_verb() {
        assert_eq!(step_verb("### Step 2: Read the file"), Some("Read"));
        assert_eq!(step_verb("1. Grep for `is_even`"), Some("Grep"));
        assert_eq!(step_verb("- **Edit** lib/numbers.py"), Some("Edit"));
        assert_eq!(step_verb("Read the docs."), None, "prose is not a step");
        assert_eq!(step_verb("#"), None);
    }

    #[test]
    fn an_answer_of_bare_tags_says_nothing() {
        assert!(says_nothing(" \n"));
        assert!(says_nothing("<tools>\n\n"));
        let written = written_calls(
            "To change one line:\nEdit {\"file_path\": \"a.py\", \"old_string\": \"x\"}\n\
             - `Read {\"file_path\": \"b.py\"}`\nEdit {\"file_path\": \"a.py\", \"old_string\": \"x\"}\n\
             Then Edit {\"file_path\": \"c.py\"}\nRead {not json}",
        );
        assert_eq!(
            written,
            [
                ("Edit".to_string(), serde_json::json!({"file_path": "a.py", "old_string": "x"})),
                ("Read".to_string(), serde_json::json!({"file_path": "b.py"})),
            ]
        );
        assert!(says_nothing("<tools>\n</tools>"));
        assert!(!says_nothing("<tools> src/date.py"));
        assert!(!says_nothing("src/date.py"));
        assert!(!says_nothing("a < b > c"));
        assert!(!says_nothing("<"));
    }
}
