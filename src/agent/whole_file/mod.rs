//! The whole-file way of working, for models too small to drive tools
//! (`tools.profile = "whole_files"`), and for small ones on the turns whose
//! files fit in one message (`adaptive`). Measured on the task benchmark, a
//! 0.5B coder offered tools calls them badly and edits what it imagines,
//! while the same model handed the project's files in one message, and
//! asked for the changed files whole, writes the right change more than
//! twice as often: the format aider gives weak models. So such a model gets no
//! tools: each turn hands it the files of the workspace that fit (those the
//! prompt names first), and the files its reply shows become Edit and Write
//! calls, approved and applied like any other. A 1.5B coder, which can
//! drive tools, also fixes more this way, and faster; it keeps the tools for
//! what one message cannot hold.

mod asking;
mod asks;
mod changes;
mod handed;
mod judge;
mod line;
mod reply;
mod selection;
#[cfg(test)]
mod tests;

use self::{asking::*, changes::*, handed::*};
use super::turn::{Generation, sent_back};
use super::{Conversation, TurnOutcome};
use crate::agent::code_text::{Part, declaring_part};
use crate::protocol::{AgentStatus, Block, Event, Message, PermissionMode, Role, StopReason, Usage};
use crate::workspace::WorkspacePath;
use crate::workspace::mentions::{named_files, new_files};
use tokio_util::sync::CancellationToken;

pub(super) use self::asking::{after_prompt, asks_question, prompt_of, with_files};
pub(super) use self::handed::{Selection, ran_on_project};

const SYSTEM: &str = "You are a coding assistant. The user's project files are shown to you in full.";

/// The system prompt of a turn handing over `selection`: the project's
/// rules, where it has them, after the way's own words.
fn system_of(selection: &Selection) -> String {
    let mut system = SYSTEM.to_string();
    if let Some((name, rules)) = &selection.rules {
        system.push_str(&format!("\n\nThe project's rules (from {name}):\n{}", rules.trim_end()));
    }
    system
}

/// Rounds a failing test sends back: a model that two tries did not bring
/// to pass is not brought there by a third.
const MAX_TEST_CHECKS: usize = 2;

/// Put after the prompt: the one instruction such a model follows.
const ASK: &str = "Reply with the whole new content of each file you change, each in a code block after its path. \
If no file must change, answer in one sentence.";

/// Put after a prompt that asks a question of fact: a model past tiny that
/// works the answer out line by line gets it right where one asked for the
/// answer alone guesses (eight retries for `range(MAX_RETRIES + 1)`).
const QUESTION_ASK: &str = "Work the answer out from the files: quote each line it depends on, and follow each name \
to the line that gives its value. Then give the answer alone on a last line that starts with \"Answer:\".";

/// What the pipeline settled before it handed a small workspace's turn to
/// the whole-file way.
pub(in crate::agent) struct FromPipeline {
    /// Where the history stood: what the pipeline recorded since stays in
    /// the history and the session, but out of the whole-file asks.
    pub aside: usize,
    /// The model's word on whether the request asks for a change, where
    /// the pipeline asked it as this way asks it (see `whole_file_intent`).
    pub intent: Option<Option<bool>>,
    /// For a question: what a run on the project showed (a script the
    /// model wrote and what it printed, or the program the request quotes
    /// and the functions it ran), as the answer is shown it.
    pub ran: Option<String>,
}

impl Conversation {
    /// The system prompt and the messages of a turn handing over
    /// `selection`, as the whole-file way asks: the history before `aside`,
    /// with the files before the prompt where `files`.
    pub(in crate::agent) fn whole_file_asking(
        &mut self,
        selection: &Selection,
        aside: usize,
        files: bool,
    ) -> (String, Vec<Message>) {
        let system = system_of(selection);
        let shown: String = match files {
            true => selection.files.iter().map(HandedFile::shown).collect(),
            false => String::new(),
        };
        let fixed_tokens = self.backend.count_tokens(&system) + self.backend.count_tokens(&shown);
        let (mut messages, _) = self.prompt_messages(fixed_tokens);
        messages.truncate(messages.len().saturating_sub(self.history.len().saturating_sub(aside)));
        (system, with_files(messages, &shown, ""))
    }

    /// Whether the request asks for a change (else for an answer), asked
    /// as [`Self::whole_file_turn`] asks it, with the history before `aside`.
    pub(in crate::agent) async fn whole_file_intent(
        &mut self,
        selection: &Selection,
        aside: usize,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<bool>, TurnOutcome> {
        let (system, messages) = self.whole_file_asking(selection, aside, false);
        self.intent(&system, &messages, usage, cancel).await
    }

    /// One turn of the whole-file way, handing over `selection`: a reply,
    /// its files applied; asked again (three times at most) when it only
    /// copies files back, and once for the files its change breaks. A Stop
    /// hook that blocks hands the files over again, as they are now, with
    /// its reason: the way a project's tests tell a model its change fails.
    pub(super) async fn whole_file_turn(&mut self, selection: Selection, cancel: &CancellationToken) -> TurnOutcome {
        let system = system_of(&selection);
        let from_pipeline = self.from_pipeline.take();
        let aside = from_pipeline.as_ref().map_or(self.history.len(), |from| from.aside).min(self.history.len());
        let prompt = prompt_of(&self.history[..aside]);
        let Selection { files, named, .. } = selection;
        let new = new_files(&self.workspace, &prompt, MAX_FILES);
        // "Add a function to calc.py": a block of new code alone goes there.
        let only_named = match (named.as_slice(), new.as_slice()) {
            ([only], []) | ([], [only]) => Some(only.clone()),
            _ => None,
        };
        let mut handed = self.hand_over_files(files, &new);
        // The files count against the window like the system prompt.
        let shown: String = handed.iter().map(HandedFile::shown).collect();
        let fixed_tokens = self.backend.count_tokens(&system) + self.backend.count_tokens(&shown);
        let (mut messages, compaction) = self.prompt_messages(fixed_tokens);
        // Compaction leaves out the oldest messages first: those after `aside` end the list.
        messages.truncate(messages.len().saturating_sub(self.history.len() - aside));
        self.report_compaction(compaction, cancel).await;
        let mut usage = Usage::default();
        // Whether the request asks for an answer rather than a change is
        // the model's word (see `intent`), in any wording and language.
        let intent = match from_pipeline.as_ref().and_then(|from| from.intent) {
            Some(known) => Ok(known),
            None => self.intent(&system, &messages, &mut usage, cancel).await,
        };
        let (question, undecided) = match intent {
            Ok(Some(change)) => (!change, false),
            Ok(None) => (asks_question(&prompt), true),
            Err(outcome) => return adding(usage)(outcome),
        };
        // What the pipeline's script printed on the project goes after the
        // request, for the answer to rest on what the code does.
        if let Some(ran) = from_pipeline.and_then(|from| from.ran).filter(|_| question) {
            after_prompt(&mut messages, &ran);
        }
        // A change is checked by the tests handed over: those that fail
        // before it say what it must do, and failing after it, they send
        // the model back, as a Stop hook does. What they print before it is
        // not shown: told it, the 0.5B wrapped the demo's greet in a string.
        let checks_tests = self.may_run_commands() && !question;
        let mut checks = Vec::new();
        if checks_tests {
            match self.failing_tests(&handed_paths(&handed), cancel).await {
                Ok(Some(failure)) => checks = failure.files,
                Ok(None) => {}
                Err(outcome) => return adding(usage)(outcome),
            }
        }
        let mut test_checks_left = MAX_TEST_CHECKS;
        let mut text = String::new();
        let mut stop_hook_active = false;
        for _ in 0..self.settings.max_iterations.max(1) {
            self.events.emit(Event::Status { status: AgentStatus::Thinking });
            let asked = (system.as_str(), messages.as_slice(), prompt.as_str(), (question, undecided));
            let round = self.whole_file_round(asked, &handed, (only_named.clone(), &checks), cancel).await;
            let cancelled = match round {
                Ok((round_text, round_usage, cancelled)) => {
                    text = round_text;
                    usage += round_usage;
                    cancelled
                }
                Err(outcome) => return adding(usage)(outcome),
            };
            if cancelled {
                return TurnOutcome { stop_reason: StopReason::Cancelled, text, usage };
            }
            let reason = match self.why_not_done(stop_hook_active, &text, cancel).await {
                Err(outcome) => return adding(usage)(outcome),
                Ok(Some(reason)) => {
                    stop_hook_active = true;
                    self.record(Message::user_text(sent_back(&reason)));
                    self.notify(
                        "[not done: a Stop hook or the tests sent the model back — handing the files over again, as they \
are now…]",
                    );
                    reason
                }
                // A configured test command stands for the tests handed over.
                Ok(None)
                    if checks_tests
                        && test_checks_left > 0
                        && self.configured_test().is_none()
                        && self.last_round_changed() =>
                {
                    test_checks_left -= 1;
                    match self.failing_tests(&handed_paths(&handed), cancel).await {
                        Ok(Some(failure)) => {
                            self.notify("[the tests still fail — handing the files over again, as they are now…]");
                            failure.report
                        }
                        Ok(None) => return TurnOutcome { stop_reason: StopReason::EndTurn, text, usage },
                        Err(outcome) => return adding(usage)(outcome),
                    }
                }
                Ok(None) => return TurnOutcome { stop_reason: StopReason::EndTurn, text, usage },
            };
            // Every ask of the next round carries the reason, after the prompt.
            after_prompt(&mut messages, &format!("The change is not done: {}", reason.trim_end()));
            // The files as they are now, those the last round made included,
            // and those the reason names (the test that fails).
            let (mut files, mut new) = (Vec::new(), Vec::new());
            for HandedFile { path, part, .. } in handed {
                match (self.workspace.read_text(&path), part) {
                    (Ok(text), None) if !text.trim().is_empty() => files.push(HandedFile::whole(path, text)),
                    // The declaration shown, as it is now.
                    (Ok(text), Some(Part { name, .. })) => {
                        if let Some((text, part)) = declaring_part(&text, &[name.as_str()]) {
                            files.push(HandedFile { path, text, part: Some(part) });
                        }
                    }
                    _ => new.push(path),
                }
            }
            for path in named_files(&self.workspace, &reason, MAX_FILES) {
                if files.len() < MAX_FILES && !files.iter().map(|f| &f.path).chain(&new).any(|p| p.rel == path.rel) {
                    files.extend(self.showable(path));
                }
            }
            handed = self.hand_over_files(files, &new);
        }
        TurnOutcome { stop_reason: StopReason::MaxIterations, text, usage }
    }

    /// One reply to the handed files, asked again as needed, and its
    /// changes made: its text, its usage, and whether it was cancelled
    /// while they ran. `Err` ends the turn.
    async fn whole_file_round(
        &mut self,
        (system, messages, prompt, (question, undecided)): (&str, &[Message], &str, (bool, bool)),
        handed: &[HandedFile],
        (only_named, checks): (Option<WorkspacePath>, &[String]),
        cancel: &CancellationToken,
    ) -> Result<(String, Usage, bool), TurnOutcome> {
        let mut shown: String = handed.iter().map(HandedFile::shown).collect();
        if question {
            shown.push_str(&computed_values(handed));
        }
        let first_ask = with_files(messages.to_vec(), &shown, self.first_ask(question));
        let mut generation = self.whole_file_reply(system, first_ask.clone(), cancel).await?;
        let asking = Asking { system, messages, prompt, question, undecided, handed, checks };
        // In plan mode the files a reply shows are the plan, not changes.
        let (mut text, mut changes) = if self.policy.mode == PermissionMode::Plan {
            (reply_text(&generation), Vec::new())
        } else {
            let asked = self.changes_asked_for(&asking, only_named.clone(), &mut generation, cancel).await?;
            self.without_kept(&asking, asked, &mut generation, cancel).await?
        };
        // Greedy decoding gives a small model one reply to an ask, and where
        // that copies the files back through every ask (the 0.5B did so on
        // half the requests it failed), a sampled try starts afresh.
        let mut tries = 0;
        while changes.is_empty() && tries < RESAMPLES && self.policy.mode != PermissionMode::Plan && !question {
            tries += 1;
            self.notify(&format!("[no reply changed anything — trying afresh, sampled ({tries} of {RESAMPLES})…]"));
            let earlier = std::mem::take(&mut generation.usage);
            let fresh = self.fresh_try(tries, &asking, only_named.clone(), first_ask.clone(), cancel);
            let (fresh, fresh_text, fresh_changes) = fresh.await.map_err(adding(earlier))?;
            generation = fresh;
            generation.usage += earlier;
            (text, changes) = (fresh_text, fresh_changes);
        }
        // Beside its fix of shop/text.py, the 1.5B wrote "example usage"
        // files (views.py, models.py, urls.py…) that the request names
        // nowhere and no file uses: they are left out, and the user told.
        let unasked = unasked_new_files(prompt, &changes, handed, |path| {
            self.workspace.resolve(path).is_ok_and(|path| path.abs.exists())
        });
        self.leave_out(&mut changes, &unasked, |names| {
            format!("[the reply also wrote {names}, which the request does not ask for and no file uses — left out]")
        });
        // "An order of exactly 100 gets none. Fix it.": the test that fails
        // until the fix is made says what the fix must do; a reply that
        // changes it instead (the 1.5B made `shipping_cost(20, 2.0) == 0.0`
        // expected) fixes nothing, unless the request speaks of the test.
        let tampered: Vec<String> = changes
            .iter()
            .filter_map(|(_, input)| input["file_path"].as_str())
            .filter(|path| checks.iter().any(|check| check == path))
            .filter(|path| !speaks_of_file(prompt, path))
            .map(str::to_string)
            .collect();
        self.leave_out(&mut changes, &tampered, |names| {
            format!("[the reply changed {names}, whose failing tests check the fix — left as it is]")
        });
        // Other tests the request names nowhere say what the code must do
        // as well: the 0.5B, handed a library with its tests, rewrote them
        // to expect what the bug prints and left the code as it was.
        let rewritten: Vec<String> = changes
            .iter()
            .filter_map(|(_, input)| input["file_path"].as_str())
            .filter(|path| !checks.iter().any(|check| check == path) && unnamed_tests(prompt, handed, path))
            .map(str::to_string)
            .collect();
        self.leave_out(&mut changes, &rewritten, |names| {
            format!("[the reply changed the tests in {names}, which the request does not name — left as they are]")
        });
        // A change to a file the model was not shown (a README.md written
        // from what READMEs say) is a guess at it, which the read guard
        // refuses: handed that file and asked again, it changes what is there.
        let unseen: Vec<HandedFile> = changes
            .iter()
            .filter_map(|(_, input)| input["file_path"].as_str())
            .filter(|path| !handed.iter().any(|f| f.path.display() == *path))
            .filter_map(|path| self.workspace.resolve(path).ok())
            .filter(|path| path.abs.exists())
            .filter_map(|path| self.showable(path))
            .collect();
        if !unseen.is_empty() && handed.len() + unseen.len() <= MAX_FILES {
            let names = unseen.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>().join(", ");
            self.notify(&format!("[the reply changed {names}, which it had not been shown — handing it over…]"));
            let mut widened = handed.to_vec();
            widened.extend(self.hand_over_files(unseen, &[]));
            let asked = (system, messages, prompt, (question, undecided));
            let round = Box::pin(self.whole_file_round(asked, &widened, (only_named, checks), cancel)).await;
            return match round {
                Ok((text, mut round_usage, cancelled)) => {
                    round_usage += generation.usage;
                    Ok((text, round_usage, cancelled))
                }
                Err(outcome) => Err(adding(generation.usage)(outcome)),
            };
        }
        for (name, input) in changes {
            let id = self.next_call_id();
            self.add_call(&mut generation, id, name.to_string(), input, None);
        }
        let Generation { blocks, mut calls, usage, .. } = generation;
        self.record_with_usage(Message { role: Role::Assistant, blocks }, Some(usage));
        if calls.is_empty() {
            return Ok((text, usage, false));
        }
        let (results, cancelled) = self.run_calls(&mut calls, cancel).await;
        self.record(Message { role: Role::User, blocks: results });
        Ok((text, usage, cancelled))
    }

    /// `changes` without those to `paths`, the user told why by `notice`
    /// of the paths' names.
    fn leave_out(&self, changes: &mut Vec<Change>, paths: &[String], notice: impl FnOnce(&str) -> String) {
        if paths.is_empty() {
            return;
        }
        self.notify(&notice(&paths.join(", ")));
        changes.retain(|(_, input)| !paths.iter().any(|path| input["file_path"] == path.as_str()));
    }

    /// What follows the prompt in the first ask of a round. A tiny model
    /// follows one instruction: asked to work the answer out first, it
    /// answers with that alone ("Answer: 15", no working out).
    fn first_ask(&self, question: bool) -> &'static str {
        let tiny = self.backend.parameters().is_some_and(|p| p < crate::config::TINY_MODEL_PARAMETERS);
        if !tiny && question { QUESTION_ASK } else { ASK }
    }

    /// Whether the last round changed a file: its calls, the last message,
    /// applied.
    fn last_round_changed(&self) -> bool {
        self.history.last().is_some_and(|message| {
            message.role == Role::User
                && message.blocks.iter().any(|block| matches!(block, Block::ToolResult { is_error: false, .. }))
        })
    }
}
