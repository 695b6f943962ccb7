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

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::attach::{MAX_BYTES, MAX_LINES};
use super::code_check::{Finding, fault_brought, findings};
use super::inline::{inline_calls, wrapper};
use super::kept::{kept_names, sparing};
use super::prompt::load_rules;
use super::rewrite::{Rewrite, rewrite_of};
use super::turn::{Generation, StreamEnd, sent_back};
use super::{Conversation, TurnOutcome};
use crate::config::{PipelineSettings, ToolProfile};
use crate::protocol::{AgentStatus, Block, Event, Message, PermissionMode, Role, StopReason, Usage};
use crate::workspace::WorkspacePath;
use crate::workspace::mentions::{has_extension, is_dotfile, named_files, names_conventionally, new_files};
use crate::workspace::snapshot;

/// The languages a code fence names (```` ```python ````), as a small
/// model also writes them on the line below the fence.
const FENCE_LANGUAGES: [&str; 30] = [
    "python",
    "py",
    "javascript",
    "js",
    "typescript",
    "ts",
    "jsx",
    "tsx",
    "go",
    "rust",
    "bash",
    "sh",
    "shell",
    "ini",
    "toml",
    "yaml",
    "yml",
    "json",
    "sql",
    "c",
    "cpp",
    "java",
    "ruby",
    "php",
    "html",
    "css",
    "markdown",
    "kotlin",
    "swift",
    "lua",
];

/// Files handed over with one prompt.
const MAX_FILES: usize = 24;
/// Files handed over for sharing the prompt's words, when it names none.
const MAX_RELEVANT: usize = 4;

const SYSTEM: &str = "You are a coding assistant. The user's project files are shown to you in full.";

/// Rounds a failing test sends back: a model that two tries did not bring
/// to pass is not brought there by a third.
const MAX_TEST_CHECKS: usize = 2;
/// Fresh, sampled tries at a change request every greedy reply left
/// undone: each gave the 0.5B a change it never made greedily on some tasks,
/// and a different task each.
const RESAMPLES: u32 = 3;

/// How many times a line written back as it reads is asked for again,
/// sampled.
const LINE_RESAMPLES: u32 = 3;

/// Put after the prompt: the one instruction such a model follows.
const ASK: &str = "Reply with the whole new content of each file you change, each in a code block after its path. \
If no file must change, answer in one sentence.";

/// Put after a prompt that asks a question of fact: a model past tiny that
/// works the answer out line by line gets it right where one asked for the
/// answer alone guesses (eight retries for `range(MAX_RETRIES + 1)`).
const QUESTION_ASK: &str = "Work the answer out from the files: quote each line it depends on, and follow each name \
to the line that gives its value. Then give the answer alone on a last line that starts with \"Answer:\".";

impl Conversation {
    /// One turn of the whole-file way, handing over `selection`: a reply,
    /// its files applied; asked again (three times at most) when it only
    /// copies files back, and once for the files its change breaks. A Stop
    /// hook that blocks hands the files over again, as they are now, with
    /// its reason: the way a project's tests tell a model its change fails.
    pub(super) async fn whole_file_turn(&mut self, selection: Selection, cancel: &CancellationToken) -> TurnOutcome {
        let mut system = SYSTEM.to_string();
        if let Some((name, rules)) = &selection.rules {
            system.push_str(&format!("\n\nThe project's rules (from {name}):\n{}", rules.trim_end()));
        }
        let prompt = self.history.iter().rev().find(|m| m.role == Role::User).map(Message::text).unwrap_or_default();
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
        self.report_compaction(compaction, cancel).await;
        let mut usage = Usage::default();
        // Whether the request asks for an answer rather than a change is
        // the model's word (see `ask_intent`), in any wording and language.
        let question = match self.ask_intent(&system, &messages, &mut usage, cancel).await {
            Ok(change) => !change,
            Err(outcome) => return adding(usage)(outcome),
        };
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
            let asked = (system.as_str(), messages.as_slice(), prompt.as_str(), question);
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
            let reason = match self.stop_hook_blocks(stop_hook_active, &text, cancel).await {
                Some(reason) => {
                    stop_hook_active = true;
                    self.record(Message::user_text(sent_back(&reason)));
                    self.notify(
                        "[a Stop hook sent the model back to work — handing the files over again, as they are now…]",
                    );
                    reason
                }
                None if checks_tests && test_checks_left > 0 && self.last_round_changed() => {
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
                None => return TurnOutcome { stop_reason: StopReason::EndTurn, text, usage },
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
        (system, messages, prompt, question): (&str, &[Message], &str, bool),
        handed: &[HandedFile],
        (only_named, checks): (Option<WorkspacePath>, &[String]),
        cancel: &CancellationToken,
    ) -> Result<(String, Usage, bool), TurnOutcome> {
        let shown: String = handed.iter().map(HandedFile::shown).collect();
        let first_ask = with_files(messages.to_vec(), &shown, self.first_ask(question));
        let mut generation = self.whole_file_reply(system, first_ask.clone(), cancel).await?;
        let asking = Asking { system, messages, prompt, question, handed, checks };
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
        {
            let unasked = unasked_new_files(prompt, &changes, handed, |path| {
                self.workspace.resolve(path).is_ok_and(|path| path.abs.exists())
            });
            if !unasked.is_empty() {
                self.notify(&format!(
                    "[the reply also wrote {}, which the request does not ask for and no file uses — left out]",
                    unasked.join(", ")
                ));
                changes.retain(|(_, input)| !unasked.iter().any(|path| input["file_path"] == path.as_str()));
            }
        }
        // "An order of exactly 100 gets none. Fix it.": the test that fails
        // until the fix is made says what the fix must do; a reply that
        // changes it instead (the 1.5B made `shipping_cost(20, 2.0) == 0.0`
        // expected) fixes nothing, unless the request speaks of the test.
        {
            let tampered: Vec<String> = changes
                .iter()
                .filter_map(|(_, input)| input["file_path"].as_str())
                .filter(|path| checks.iter().any(|check| check == path))
                .filter(|path| !speaks_of_file(prompt, path))
                .map(str::to_string)
                .collect();
            if !tampered.is_empty() {
                self.notify(&format!(
                    "[the reply changed {}, whose failing tests check the fix — left as it is]",
                    tampered.join(", ")
                ));
                changes.retain(|(_, input)| !tampered.iter().any(|path| input["file_path"] == path.as_str()));
            }
        }
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
            let asked = (system, messages, prompt, question);
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

    /// The changes the reply in `generation` shows, and the text of the
    /// last reply: asked again when it only copies files back, and for the
    /// files its change breaks. `Err` ends the turn.
    async fn changes_asked_for(
        &mut self,
        asking: &Asking<'_>,
        mut only_named: Option<WorkspacePath>,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        let Asking { prompt, handed, checks, .. } = *asking;
        let mut text = reply_text(generation);
        // A question changes no file. Asked one, a small model copies a
        // file back (main.py for "which log level…"), changes one (the
        // default profile made "production"), or quotes code that leads to
        // the answer (`listen_address()` for "which port…"): asked for the
        // answer alone, it reads the files for one.
        if asking.question {
            // Worked out line by line, the answer is its last line; a
            // working out that ends without one is asked for it, with the
            // working out kept in the conversation.
            if let Some(answer) = answer_line(&text) {
                return Ok((answer, Vec::new()));
            }
            if copies_only(&text, handed)
                || only_code(&text)
                || !self.changes_shown(&text, prompt, handed, only_named.as_ref()).is_empty()
            {
                let shown: String = handed.iter().map(HandedFile::shown).collect();
                let notice = "[the reply did not answer the question — asking for the answer…]";
                let ask = "Answer the question in one sentence. Change no file.";
                text = self.ask_again(asking, &shown, ask, notice, generation, cancel).await?;
            }
            return Ok((text, Vec::new()));
        }
        let mut changes = self.changes_shown(&text, prompt, handed, only_named.as_ref());
        // A reply that only copies files back looked at the wrong ones: asked
        // once more for the others by name, a small model writes the change.
        let overlooked = overlooked(&text, prompt, handed, checks).filter(|_| changes.is_empty());
        let asked_by_name = overlooked.is_some();
        if let Some((echoed, others)) = overlooked {
            let names: Vec<String> = others.iter().map(|f| f.path.display().to_string()).collect();
            let ask = match names.as_slice() {
                [one] => format!(
                    "Reply with the whole new content of {one}, changed as asked, in a code block after its path."
                ),
                _ => format!(
                    "Reply with the whole new content of each of {} that must change, each in a code block after its path.",
                    names.join(", ")
                ),
            };
            let shown: String = others.iter().chain(&echoed).map(|f| f.shown()).collect();
            let notice = format!("[the reply only copied files back — asking for {} by name…]", names.join(", "));
            text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
            if let [one] = others.as_slice() {
                only_named = Some(one.path.clone());
            }
            changes = self.changes_shown(&text, prompt, handed, only_named.as_ref());
        }
        // Code that is no file's version ("ALTER TABLE users ADD …" for a
        // change to schema.sql), blocks that hold only a path, or the change
        // told in a sentence ("is_even should return `n % 2 == 0`"): asked
        // for the file by name, whole, a small model writes it.
        let unplaced = changes.is_empty() && !asked_by_name;
        if let Some(file) = file_to_ask_for(prompt, &text, handed, checks)
            .filter(|_| unplaced && copied_back(&text, prompt, handed).is_none())
        {
            let path = file.path.display();
            let notice = format!("[the reply changed no file — asking for {path} whole…]");
            (text, changes) = self.file_asked(asking, file, ", changed as asked", &notice, generation, cancel).await?;
        }
        // "Create mathutil.py with is_even" answered with a change elsewhere
        // (a heading for it in README.md): the file asked for is still to be
        // written. Asked for it by name, a small model writes it.
        let unwritten =
            only_named.as_ref().and_then(|path| handed.iter().find(|f| f.path.rel == path.rel)).filter(|f| {
                let written = changes.iter().any(|(_, input)| input["file_path"] == f.path.display());
                !changes.is_empty() && !written && f.text.is_empty() && !self.workspace.exists(&f.path)
            });
        if let Some(file) = unwritten {
            let notice = format!("[the reply did not create {} — asking for it whole…]", file.path.display());
            let (reply, more) = self.file_asked(asking, file, "", &notice, generation, cancel).await?;
            text = reply;
            changes.extend(more.into_iter().filter(|(_, input)| input["file_path"] == file.path.display()));
        }
        let copied = copied_back(&text, prompt, handed).filter(|_| changes.is_empty());
        if let Some(copied) = copied {
            // Still copies: the model sees where the change goes but not
            // what it is. Asked for just the line, it often writes it fixed.
            let others: Vec<&HandedFile> =
                handed.iter().filter(|f| !copied.iter().any(|c| c.path.rel == f.path.rel)).collect();
            (text, changes) =
                self.line_asked(asking, (&copied, &others), only_named.as_ref(), generation, cancel).await?;
        }
        // A change that renames or removes what other files use (`def
        // calc_total` now `def compute_total`, main.py still calling
        // calc_total) breaks them: shown the change and asked for them by
        // name, a small model changes them to match.
        let changed: Vec<HandedFile> = changes.iter().filter_map(|change| changed_file(change, handed)).collect();
        if let Some((stale, users)) = dangling(&changed, handed) {
            let renames = renames(&changed, handed);
            // A declaration renamed: the files that use it are renamed to
            // match, as an editor's rename does, not left to the model.
            if stale.iter().all(|name| renames.iter().any(|(old, _)| old == name)) {
                let what = renames.iter().map(|(old, new)| format!("{old} to {new}")).collect::<Vec<_>>().join(", ");
                for user in users {
                    // A file the change changed too is renamed as it will be,
                    // in one Edit that takes the place of its change.
                    let will_hold = as_changed(user, &changed);
                    let text =
                        renames.iter().fold(will_hold.text.clone(), |text, (old, new)| replace_word(&text, old, new));
                    let path = user.path.display();
                    self.notify(&format!("[{path} uses what the change renames — renaming {what} there too]"));
                    changes.retain(|(_, input)| input["file_path"] != path);
                    changes.push(edit(path, &user.text, &text));
                }
                return Ok((text, changes));
            }
            // A wrapper removed (read_csv_events, which warned and
            // returned read_events(path, fmt="csv")): its calls are made
            // what it returned, as an editor's inline does, not left to
            // the model, which copies its caller back.
            // Only where the request names what goes: else the removal is
            // the model's slip, for the model to undo.
            let removal_asked = stale.iter().all(|name| uses_word(prompt, name));
            if let Some(inlined) = self.inlined(&stale, &changed, handed, &users).filter(|_| removal_asked) {
                for (user, text) in inlined {
                    let path = user.path.display();
                    self.notify(&format!(
                        "[{path} calls what the change removes — calling what it returned there in its place]"
                    ));
                    changes.retain(|(_, input)| input["file_path"] != path);
                    changes.push(edit(path, &user.text, &text));
                }
                return Ok((text, changes));
            }
            let names = users.iter().map(|f| f.path.display()).collect::<Vec<_>>().join(", ");
            // Those that no longer declare it: report.py, changed and still
            // calling read_csv_events, is a user, not where it went.
            let declarers: Vec<&HandedFile> =
                changed.iter().filter(|c| !users.iter().any(|u| u.path == c.path)).collect();
            let declarers = if declarers.is_empty() { changed.iter().collect() } else { declarers };
            let (use_, declare) = match (users.len(), declarers.len()) {
                (1, 1) => ("uses", "declares"),
                (1, _) => ("uses", "declare"),
                (_, 1) => ("use", "declares"),
                _ => ("use", "declare"),
            };
            let stale = stale.join(", ");
            let ask = format!(
                "{names} still {use_} {stale}, which {} no longer {declare}. Reply with the whole new content of \
                 {names}, changed to match, in a code block after its path.",
                declarers.iter().map(|f| f.path.display()).collect::<Vec<_>>().join(", "),
            );
            let notice = format!("[{names} still {use_} {stale} — asking for it to match…]");
            let (reply, matching) =
                self.ask_to_match(asking, &changed, &users, (&ask, &notice), generation, cancel).await?;
            text = reply;
            // A new version of a file the change changed takes the place of
            // the change it holds; a line fixed beside it goes in with it.
            for (_, input) in &matching {
                changes.retain(|(_, earlier)| {
                    let covered = match (earlier["old_string"].as_str(), input["old_string"].as_str()) {
                        (Some(earlier), Some(now)) => now.contains(earlier),
                        _ => true,
                    };
                    earlier["file_path"] != input["file_path"] || !covered
                });
            }
            changes.extend(matching);
        } else if let Some((reshaped, users)) = reshaped(&changed, handed, prompt) {
            // "…and shop.py should call it with €": the prompt asks for a
            // file that uses what the change reshapes, and it was left as is.
            let names = users.iter().map(|f| f.path.display()).collect::<Vec<_>>().join(", ");
            let ask = format!(
                "{}. Reply with the whole new content of {names}, changed as asked, in a code block after its path.",
                reshaped.join("; "),
            );
            let notice = format!("[the prompt asks for {names} too — asking for it…]");
            let (reply, matching) =
                self.ask_to_match(asking, &changed, &users, (&ask, &notice), generation, cancel).await?;
            text = reply;
            changes.extend(matching);
        }
        Ok((text, changes))
    }

    /// Fresh try `n` at the first ask, sampled, and the changes it comes to
    /// through the asks that follow it (sampled too).
    async fn fresh_try(
        &mut self,
        n: u32,
        asking: &Asking<'_>,
        only_named: Option<WorkspacePath>,
        first: Vec<Message>,
        cancel: &CancellationToken,
    ) -> Result<(Generation, String, Vec<Change>), TurnOutcome> {
        self.resample = Some(n);
        let tried = async {
            let mut generation = self.whole_file_reply(asking.system, first, cancel).await?;
            let asked = self.changes_asked_for(asking, only_named, &mut generation, cancel).await?;
            let (text, changes) = self.without_kept(asking, asked, &mut generation, cancel).await?;
            Ok((generation, text, changes))
        }
        .await;
        self.resample = None;
        tried
    }

    /// `changes` without what they change of the parts the prompt says stay
    /// as they are ("…but leave the web server's logging as it is": the
    /// 1.5B set every log level to DEBUG), the user told. A reply that
    /// changed only those (the 0.5B scaled the web service, not the worker)
    /// is asked again for its file; one that does so again leaves nothing,
    /// so a fresh try follows.
    async fn without_kept(
        &mut self,
        asking: &Asking<'_>,
        (text, changes): (String, Vec<Change>),
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        let kept = kept_names(asking.prompt);
        let (changes, spared) = spare_kept(changes, asking.handed, &kept);
        let only_kept = spared.first().filter(|_| changes.is_empty()).map(|(file, parts)| (*file, parts.join(", ")));
        let Some((file, parts)) = only_kept else {
            self.tell_spared(&spared);
            return Ok((text, changes));
        };
        let path = file.path.display();
        let notice = format!(
            "[the reply changed only {parts} in {path}, which the request says stays as it is — asking again…]"
        );
        let how = format!(", changed as asked; {parts} stays as it is");
        let (text, again) = self.file_asked(asking, file, &how, &notice, generation, cancel).await?;
        let (changes, spared) = spare_kept(again, asking.handed, &kept);
        self.tell_spared(&spared);
        Ok((text, changes))
    }

    /// Asks for `file` alone, whole, `how` (", changed as asked", " without
    /// old_helper"): the reply's text and the changes it makes to it.
    async fn file_asked(
        &mut self,
        asking: &Asking<'_>,
        file: &HandedFile,
        how: &str,
        notice: &str,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        let path = file.path.display();
        let ask = format!("Reply with the whole new content of {path}{how}, in a code block after its path.");
        let text = self.ask_again(asking, &file.shown(), &ask, notice, generation, cancel).await?;
        let changes = self.changes_shown(&text, asking.prompt, asking.handed, Some(&file.path));
        Ok((text, changes))
    }

    /// Asks which line of the `copied` files (shown first, then `others`)
    /// must change, for that line as it must read, and again for a line
    /// number's line: the reply's text and the Edit its line makes.
    async fn line_asked(
        &mut self,
        asking: &Asking<'_>,
        (copied, others): (&[&HandedFile], &[&HandedFile]),
        only_named: Option<&WorkspacePath>,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        const MAX_FINDINGS: usize = 3;
        let names: Vec<String> = copied.iter().map(|f| f.path.display().to_string()).collect();
        // What a linter finds (shellcheck's unquoted `$f`) is where a small
        // model that saw nothing to change can look.
        let found: Vec<String> = copied
            .iter()
            .flat_map(|f| {
                let lines: Vec<&str> = f.text.lines().collect();
                let path = f.path.display();
                findings_on(f).into_iter().filter_map(move |Finding { line, message }| {
                    let code = lines.get(line.checked_sub(1)?)?.trim();
                    Some(format!("- line {line} of {path}, `{code}`: {message}\n"))
                })
            })
            .take(MAX_FINDINGS)
            .collect();
        let found = if found.is_empty() { " ".to_string() } else { format!("\nA linter finds:\n{}", found.concat()) };
        let ask = match names.as_slice() {
            [one] => format!("Which line of {one} must change?{found}Reply with that line only, as it must read."),
            _ => format!("Which line must change?{found}Reply with that line only, as it must read."),
        };
        let shown: String = copied.iter().chain(others).map(|f| f.shown()).collect();
        let notice = format!("[the reply copied {} back unchanged — asking for the line to change…]", names.join(", "));
        let mut text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
        // Asked for a line of signup.js, the 0.5B wrote validate.js's
        // message as it must read: a line of another file shown is fixed
        // where it is.
        let other_code: Vec<&HandedFile> = others.iter().copied().filter(|f| !is_prose(&f.path.rel)).collect();
        let line_fixed = self.line_fix(copied, &text).or_else(|| self.line_fix(&other_code, &text));
        let mut changes: Vec<Change> = line_fixed.into_iter().collect();
        let mut focus = copied.first().copied();
        // "trip.py": of several files, a small model answers with the one
        // where the change goes, its name often misspelt. Asked for that
        // file's line, it can write it.
        let named = copied.iter().find(|f| names_only(&text, f)).filter(|_| changes.is_empty() && copied.len() > 1);
        if let Some(file) = named {
            let path = file.path.display();
            let ask = format!("Which line of {path} must change? Reply with that line only, as it must read.");
            let notice = format!("[the reply named {path} — asking for its line to change…]");
            let shown = shown_first(file, copied.iter().chain(others).copied());
            text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
            changes = self.line_fix(&[*file], &text).into_iter().collect();
            focus = Some(*file);
        }
        // "line 3", or the line itself as it reads (`return
        // !user.prefs.emailNotifications;`): a small model answers where
        // the line is. Shown that line, it writes it as it must read.
        // The line quoted may be of any file shown (prefs.js's, with
        // digest.js copied back first), if of one only.
        let quoted = || {
            let code = quoted_code(&text)?;
            let mut quoting = copied.iter().chain(others).filter_map(|f| Some((*f, line_reading(&f.text, &code)?)));
            let found = quoting.next()?;
            quoting.next().is_none().then_some(found)
        };
        let numbered = line_number(&text).and_then(|n| Some((focus?, n))).or_else(quoted).and_then(|(file, n)| {
            let line = file.text.lines().nth(n.checked_sub(1)?).filter(|line| !line.trim().is_empty())?;
            Some((file, n, line))
        });
        if let Some((file, n, line)) = numbered.filter(|_| changes.is_empty()) {
            let path = file.path.display();
            let said: String = findings_on(file)
                .into_iter()
                .filter(|finding| finding.line == n)
                .map(|finding| format!("{}\n", finding.message))
                .collect();
            let ask = format!(
                "Line {n} of {path} reads:\n```\n{}\n```\n{said}Reply with that line only, as it must read.",
                line.trim()
            );
            let notice = format!("[the reply named line {n} of {path} — asking for it as it must read…]");
            text = self.ask_again(asking, &file.shown(), &ask, &notice, generation, cancel).await?;
            changes = self.line_fix(&[file], &text).into_iter().collect();
            // Greedy decoding writes the line back as it reads, again and
            // again; sampled, a small model often writes it changed. One
            // line is a short reply: a few samples cost little.
            let copied_line =
                |text: &str| reply_code(text, &shown_files(text)).iter().any(|shown| shown.trim() == line.trim());
            // A sample that fixes nothing (`return true;`) is let go: the
            // asks below go on from the line copied.
            let copied = copied_line(&text);
            let mut sampled = 0;
            while changes.is_empty() && sampled < LINE_RESAMPLES && copied {
                sampled += 1;
                let notice = format!(
                    "[line {n} of {path} is not fixed yet — asking again, sampled ({sampled} of {LINE_RESAMPLES})…]"
                );
                let again =
                    self.ask_sampled(sampled, asking, &file.shown(), (&ask, &notice), generation, cancel).await?;
                changes = self.line_fix(&[file], &again).into_iter().collect();
                if !changes.is_empty() {
                    text = again;
                }
            }
        }
        // "`leg_lengths`": a small model answers with the function the
        // change goes in. Asked for that function as it must read, it can
        // write it.
        let function = bare_name(&text).and_then(|name| {
            let mut declaring = copied.iter().filter(|f| declaration(&f.text, name).is_some());
            let file = declaring.next()?;
            declaring.next().is_none().then(|| (*file, name.to_string()))
        });
        if let Some((file, name)) = function.clone().filter(|_| changes.is_empty()) {
            let path = file.path.display();
            // "As it must read" alone, the 1.5B wrote what leg_lengths returns.
            let ask = format!("Reply with the whole new code of {name} in {path}, changed as asked, in a code block.");
            let notice = format!("[the reply named {name} — asking for it as it must read…]");
            let shown = shown_first(file, copied.iter().chain(others).copied());
            text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
            changes = self.changes_shown(&text, asking.prompt, asking.handed, Some(&file.path));
        }
        // Asked for a line, a small model writes the function with the line
        // it lacked (`return result`), or the function the prompt asks for:
        // a change as any reply's blocks make one.
        if changes.is_empty() {
            changes = self.changes_shown(&text, asking.prompt, asking.handed, only_named);
        }
        // "is_comfortable(24) returns False": the function the prompt
        // names, shown alone, away from the rest of its file, is where a
        // small model that saw no change in the whole file can see it.
        let asked = asked_function(asking.prompt, &text, copied).filter(|part| {
            let asked_already =
                function.as_ref().is_some_and(|(_, name)| Some(name) == part.part.as_ref().map(|p| &p.name));
            changes.is_empty() && !asked_already
        });
        if let Some(part) = asked {
            let (path, name) = (part.path.display(), part.part.as_ref().map(|p| p.name.clone()).unwrap_or_default());
            let ask = format!("Reply with the whole new code of {name}, changed as asked, in a code block.");
            let notice = format!("[no change yet — asking for {name} of {path} alone, as it must read…]");
            text = self.ask_again(asking, &part.shown(), &ask, &notice, generation, cancel).await?;
            changes = self.changes_shown(&text, asking.prompt, asking.handed, Some(&part.path));
        }
        Ok((text, changes))
    }

    /// Whether the harness may run its own Bash calls: the tool is on and
    /// the turn is no plan.
    fn may_run_commands(&self) -> bool {
        self.tools.harness_can_call("Bash") && self.policy.mode != PermissionMode::Plan
    }

    /// Runs `command` as the harness's own Bash call, approved as any,
    /// added to `generation` and recorded with its result: what the call
    /// output, end trimmed. `timeout_ms` in place of the Bash tool's.
    /// `Err` when the turn was cancelled meanwhile.
    pub(super) async fn run_own_bash(
        &mut self,
        mut generation: Generation,
        command: &str,
        timeout_ms: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, TurnOutcome> {
        let mut input = serde_json::json!({ "command": command });
        if let Some(timeout_ms) = timeout_ms {
            input["timeout_ms"] = timeout_ms.into();
        }
        self.add_harness_call(&mut generation, "Bash", input);
        let Generation { blocks, mut calls, usage, .. } = generation;
        self.record_with_usage(Message { role: Role::Assistant, blocks }, Some(usage));
        let (results, cancelled) = self.run_calls(&mut calls, cancel).await;
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

    /// Asks for the `users` of what the `changed` files change, shown
    /// those as they will be: the reply's text and the changes it makes
    /// to `users`.
    async fn ask_to_match(
        &mut self,
        asking: &Asking<'_>,
        changed: &[HandedFile],
        users: &[&HandedFile],
        (ask, notice): (&str, &str),
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        // A user the change changed is shown once, as it will be.
        let unchanged_users = users.iter().copied().filter(|u| !changed.iter().any(|c| c.path == u.path));
        let shown: String = changed.iter().chain(unchanged_users).map(HandedFile::shown).collect();
        let text = self.ask_again(asking, &shown, ask, notice, generation, cancel).await?;
        let users: Vec<HandedFile> = users.iter().map(|f| (*f).clone()).collect();
        // Versions of the files only: new code alone is no match.
        let matching: Vec<Change> = self
            .changes_shown(&text, asking.prompt, &users, None)
            .into_iter()
            // Only the users: the changed files are shown as they will be.
            .filter(|(_, input)| users.iter().any(|f| input["file_path"] == f.path.display()))
            .collect();
        // Copied back: asked for the line, as after the first reply.
        match copied_back(&text, asking.prompt, &users).filter(|_| matching.is_empty()) {
            Some(copied) => {
                let changed: Vec<&HandedFile> = changed.iter().collect();
                self.line_asked(asking, (&copied, &changed), None, generation, cancel).await
            }
            None => Ok((text, matching)),
        }
    }

    /// Another reply, to the conversation with `shown` files and `ask`, in
    /// place of `generation` (whose usage it adds to), the user told why by
    /// `notice`: its text, or the outcome that ends the turn.
    async fn ask_again(
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
    async fn ask_sampled(
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
    async fn reply_to(
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

    /// Tells the user, between the model's replies, what the turn does next.
    pub(super) fn notify(&self, notice: &str) {
        self.events.emit(Event::Text { text: format!("\n{notice}\n") });
    }

    /// Tells the user what of a change was left out as `spare_kept` left it.
    fn tell_spared(&self, spared: &[(&HandedFile, Vec<String>)]) {
        if spared.is_empty() {
            return;
        }
        let what: Vec<String> =
            spared.iter().map(|(file, parts)| format!("{} in {}", parts.join(", "), file.path.display())).collect();
        self.notify(&format!(
            "[the reply also changed {}, which the request says stays as it is — that part left out]",
            what.join("; ")
        ));
    }

    /// The Edit that makes the one line of `files` that `reply` shows fixed:
    /// a line of the reply in none of them that differs from exactly one of
    /// their lines by a few words (`return "Hello, " + name` for
    /// `return "Helo, " + name`).
    fn line_fix(&self, files: &[&HandedFile], reply: &str) -> Option<Change> {
        let current: Vec<(&HandedFile, String)> =
            files.iter().filter_map(|f| Some((*f, self.workspace.read_text(&f.path).ok()?))).collect();
        // "The line that must change is: (block) It should read: (block)":
        // the lines of every block, those of the file as it is dropped below.
        let reply_lines = reply_code(reply, &shown_files(reply));
        let known: std::collections::HashSet<&str> =
            current.iter().flat_map(|(_, text)| text.lines().map(str::trim)).collect();
        let files_lines: Vec<Vec<&str>> = current.iter().map(|(_, text)| code_lines(text).collect()).collect();
        let shown_lines: Vec<&str> = reply_lines.iter().map(String::as_str).collect();
        let mut fixes =
            shown_lines.iter().enumerate().filter(|(_, line)| !known.contains(line.trim())).filter_map(|(i, fixed)| {
                let near: Vec<(usize, usize, usize)> = files_lines
                    .iter()
                    .enumerate()
                    .flat_map(|(at, lines)| lines.iter().enumerate().map(move |(n, line)| (at, n, *line)))
                    .filter_map(|(at, n, line)| words_changed(line, fixed).map(|changed| (changed, at, n)))
                    .collect();
                let best = near.iter().map(|(changed, _, _)| *changed).min()?;
                let mut tied: Vec<(usize, usize)> =
                    near.iter().filter(|(changed, _, _)| *changed == best).map(|(_, at, n)| (*at, *n)).collect();
                // Two lines as near (two `errors.push(…)` of validate.js):
                // the one the reply shows between the lines around it is
                // meant; else which one is a guess.
                if tied.len() > 1 {
                    tied.retain(|(at, n)| shown_around(&shown_lines, i, &files_lines[*at], *n));
                }
                match tied.as_slice() {
                    [(at, n)] => Some((*at, files_lines[*at][*n], *fixed)),
                    _ => None,
                }
            });
        let Some((at, old, fixed)) = fixes.next() else {
            return added_import(&current, &reply_lines);
        };
        let (file, text) = &current[at];
        if fixes.next().is_some() || text.matches(old).count() != 1 {
            return None;
        }
        let new_line = as_line_of(old, fixed);
        // An import renamed (`from config import read_config` for
        // `load_config`): the file's uses follow, as an editor's rename does.
        let (old_string, new_string) = match renamed_import(old, &new_line) {
            Some((from, to)) if !uses_word(text, to) => {
                let renamed: Vec<String> = text
                    .lines()
                    .map(|line| if line == old { new_line.clone() } else { replace_word(line, from, to) })
                    .collect();
                let ending = if text.ends_with('\n') { "\n" } else { "" };
                (text.clone(), format!("{}{ending}", renamed.join("\n")))
            }
            _ => (old.to_string(), new_line),
        };
        // `rows = paginate(ARTICLES, page, per_page)`, in a file with no
        // per_page: a line the file cannot run with fixes nothing.
        if self.breaks_file(&file.path, text, &text.replacen(&old_string, &new_string, 1)) {
            return None;
        }
        Some(edit(file.path.display(), &old_string, &new_string))
    }

    /// One reply to `messages`, as text: offered no tools, the model has no
    /// calls to make, and what looks like one is text. `Err` ends the turn.
    pub(super) async fn whole_file_reply(
        &mut self,
        system: &str,
        messages: Vec<Message>,
        cancel: &CancellationToken,
    ) -> Result<Generation, TurnOutcome> {
        let finish = |stop_reason, text: String, usage| TurnOutcome { stop_reason, text, usage };
        // A model that never gives what is asked would be asked again and
        // again: the turn's calls and seconds are bounded.
        if !self.budget.allows_call() {
            let PipelineSettings { max_model_calls, max_seconds, .. } = self.settings.pipeline;
            let text = format!(
                "This turn spent its budget ({max_model_calls} model calls or {max_seconds} s, `[pipeline]` in the \
                 configuration) and stopped; what it changed so far is in the conversation."
            );
            self.notify(&format!("[{text}]"));
            return Err(finish(StopReason::MaxIterations, text, Usage::default()));
        }
        self.budget.spend_call();
        match self.generate(system, &[], &[], messages, false, cancel).await {
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
                Err(finish(StopReason::Cancelled, text, usage))
            }
            StreamEnd::Failed(error) => {
                self.events.emit(Event::Error { message: error.to_string() });
                Err(finish(StopReason::Error, String::new(), Default::default()))
            }
        }
    }

    /// Whether this turn goes the whole-file way, and with which files:
    /// always for the `whole_files` profile; for `adaptive`, when the files
    /// `prompt` points to (or every file, or those that share its words)
    /// fit in one message.
    pub(super) fn choose_way(&mut self, prompt: &str) {
        let profile = self.tools.profile();
        if !matches!(profile, ToolProfile::WholeFiles | ToolProfile::Adaptive) {
            self.whole_file_selection = None;
            self.pipeline_turn = false;
            return;
        }
        let named = named_files(&self.workspace, prompt, MAX_FILES);
        let rules = load_rules(self.workspace.root());
        let mut selection = self.select_files(prompt, named, rules.as_ref().map(|(name, _)| name.as_str()));
        selection.rules = rules;
        // A project larger than one message goes through the pipeline:
        // localized, then changed a definition at a time.
        self.pipeline_turn = !selection.whole_workspace_fits;
        tracing::debug!(pipeline = self.pipeline_turn, "chose the way of this turn");
        self.whole_file_selection = Some(selection);
    }

    /// The `chosen` files and the `new` ones the prompt asks for, shown
    /// empty, as handed to the model. Each counts as read for the edit
    /// guards.
    fn hand_over_files(&mut self, chosen: Vec<HandedFile>, new: &[WorkspacePath]) -> Vec<HandedFile> {
        let mut handed = chosen;
        for file in &handed {
            // A part counts as reading the file, as a Read of some lines does.
            match file.part {
                None => self.state.note_read(&file.path, &file.text),
                Some(_) => {
                    if let Ok(text) = self.workspace.read_text(&file.path) {
                        self.state.note_read(&file.path, &text);
                    }
                }
            }
        }
        if !handed.is_empty() {
            let paths = handed.iter().map(|f| f.path.display().to_string()).collect();
            self.events.emit(Event::FilesAttached { paths });
        }
        handed.extend(new.iter().map(|path| HandedFile::whole(path.clone(), String::new())));
        handed
    }

    /// The file at `path` as handed over, unless it may not be shown or is
    /// too long for the whole-file way.
    fn showable(&self, path: WorkspacePath) -> Option<HandedFile> {
        let fits = std::fs::metadata(&path.abs).is_ok_and(|m| m.len() <= MAX_BYTES as u64);
        if !fits || !self.may_show(&path) {
            return None;
        }
        let text = self.workspace.read_text(&path).ok()?;
        let readable = !text.trim().is_empty() && !text.contains('\0') && text.lines().count() <= MAX_LINES;
        readable.then_some(HandedFile::whole(path, text))
    }

    /// The files of the workspace that `prompt` points to (it names them, or
    /// they hold a code name it uses), or when it points to none every file,
    /// or when those do not fit the few that share its rarest words, as
    /// many as fit in one message, in path order. `skip` is a file not to show.
    fn select_files(&self, prompt: &str, named: Vec<WorkspacePath>, skip: Option<&str>) -> Selection {
        let words: Vec<&str> = words(prompt).filter(|word| word.len() > 2).collect();
        /// Files larger than this are not read for a part to show.
        const MAX_PART_SOURCE_BYTES: u64 = 1024 * 1024;
        let mut readable: Vec<(bool, String, WorkspacePath, String)> = Vec::new();
        // Text files too long to show whole: a part of one may be shown.
        let mut long: Vec<(bool, String, WorkspacePath, String)> = Vec::new();
        // Files too long to show at all: the project holds more than one
        // message can, unless the prompt points elsewhere.
        let mut too_long = false;
        for rel in snapshot::files(self.workspace.root()) {
            if skip == Some(rel.as_str()) {
                continue;
            }
            let Ok(path) = self.workspace.resolve(&rel) else { continue };
            if !self.may_show(&path) {
                continue;
            }
            let is_named = named.iter().any(|n| n.rel == path.rel);
            if std::fs::metadata(&path.abs).is_ok_and(|m| m.len() > MAX_PART_SOURCE_BYTES) {
                too_long = true;
                continue;
            }
            let Ok(text) = self.workspace.read_text(&path) else { continue };
            if text.trim().is_empty() || text.contains('\0') {
                continue;
            }
            if text.len() > MAX_BYTES || text.lines().count() > MAX_LINES {
                long.push((is_named, rel, path, text));
                continue;
            }
            readable.push((is_named, rel, path, text));
        }
        // Code names the prompt uses: `in_stock`, `parseDate`, and plain
        // words the project declares (`slugify` of `def slugify`).
        let declared: std::collections::HashSet<&str> =
            readable.iter().chain(&long).flat_map(|(_, _, _, text)| text.lines().filter_map(declared_name)).collect();
        let code_names: Vec<&str> = words
            .into_iter()
            .filter(|word| {
                word.contains('_') || word.chars().skip(1).any(char::is_uppercase) || declared.contains(word)
            })
            .collect();
        // Of a file too long to show, the part that declares a code name
        // the prompt uses ("parse_port in utils.py accepts 0"): where the
        // change goes, and all of the file a small model needs.
        let has_long = !long.is_empty();
        let mut parts: Vec<(bool, String, WorkspacePath, String, Part)> = Vec::new();
        for (is_named, rel, path, text) in long {
            match declaring_part(&text, &code_names) {
                Some((part, at)) => parts.push((is_named, rel, path, part, at)),
                None => {
                    too_long = true;
                }
            }
        }
        // The project's modules that the named files, and those using a
        // code name the prompt uses, import (calc.py for test_calc.py's
        // `from calc import mean`; line.py for the `def total` of
        // invoice.py, which sums `line.amount()`; settings.py, which holds
        // the default, for server.py's `setting("port")` when the prompt
        // asks about PORT): where what they use is.
        let uses_code_name = |text: &str| code_names.iter().any(|name| text.contains(name));
        let imported: std::collections::HashSet<String> = readable
            .iter()
            .filter(|(is_named, _, _, text)| *is_named || uses_code_name(text))
            .flat_map(|(_, _, _, text)| text.lines().filter(|line| is_import(line)).flat_map(import_names))
            .map(str::to_string)
            .collect();
        let stem = |rel: &str| file_name(rel).split('.').next().unwrap_or_default().to_string();
        let mut candidates: Vec<(u8, String, WorkspacePath, String, Option<Part>)> = readable
            .into_iter()
            .map(|(is_named, rel, path, text)| {
                let rank = if is_named {
                    0
                } else if code_names.iter().any(|name| text.contains(name)) || imported.contains(&stem(&rel)) {
                    1
                } else {
                    2
                };
                (rank, rel, path, text, None)
            })
            .chain(
                parts
                    .into_iter()
                    .map(|(is_named, rel, path, text, at)| (u8::from(!is_named), rel, path, text, Some(at))),
            )
            .collect();
        candidates.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        // Files the prompt points to are all a small model should see: the
        // rest only draw its reply away from them.
        let pointed = candidates.first().is_some_and(|c| c.0 < 2);
        let all_fit = !too_long
            && candidates.len() <= MAX_FILES
            && candidates.iter().map(|c| c.3.len()).sum::<usize>() <= MAX_BYTES;
        if pointed {
            candidates.retain(|c| c.0 < 2);
        } else if !all_fit {
            // A project larger than one message, the prompt naming nothing
            // in it: the files that share its rarest words, best first.
            // Failing that, the files in path order, as many as fit.
            let scores = relevance(prompt, candidates.iter().map(|c| c.3.as_str()));
            let best = scores.iter().copied().fold(0.0, f32::max);
            if best > 0.0 {
                let mut scored: Vec<_> =
                    candidates.into_iter().zip(scores).filter(|(_, score)| *score * 2.0 >= best).collect();
                scored.sort_by(|a, b| b.1.total_cmp(&a.1));
                candidates = scored.into_iter().take(MAX_RELEVANT).map(|(c, _)| c).collect();
            }
        }
        let mut files = Vec::new();
        let mut bytes = 0;
        for (_, _, path, text, part) in candidates {
            if files.len() == MAX_FILES || bytes + text.len() > MAX_BYTES {
                continue;
            }
            bytes += text.len();
            files.push(HandedFile { path, text, part });
        }
        // In the project's order, as a listing reads.
        files.sort_by(|a, b| a.path.rel.cmp(&b.path.rel));
        Selection { files, named, rules: None, whole_workspace_fits: all_fit && !has_long }
    }

    /// The Edit and Write calls that make the files as `reply` shows them.
    /// A block that is not a version of any file, new code alone, is added
    /// at the end of the file its path names, or of the one file the prompt
    /// names when it declares what the prompt asks for.
    fn changes_shown(
        &self,
        reply: &str,
        prompt: &str,
        handed: &[HandedFile],
        only_named: Option<&WorkspacePath>,
    ) -> Vec<Change> {
        let mut calls: Vec<Change> = Vec::new();
        let mut done: Vec<String> = Vec::new();
        for shown in blocks_for(reply, handed) {
            // The handed file the block is a version of.
            let version_of = || {
                handed
                    .iter()
                    .filter_map(|f| rewrite_of(&f.text, &shown.text).map(|r| (r.shared_lines, f.path.clone())))
                    .max_by_key(|(shared, _)| *shared)
                    .map(|(_, path)| path)
                    .or_else(|| {
                        let best = handed
                            .iter()
                            .filter_map(|f| whole_version_likeness(&f.text, &shown.text).map(|r| (r, &f.path)))
                            .max_by(|a, b| a.0.total_cmp(&b.0));
                        best.map(|(_, path)| path.clone())
                    })
            };
            let target = match shown.path.as_deref() {
                // A path the model made up (`factorial.py` for the function
                // of mathx.py) over a version of a handed file is that file;
                // over copies of handed code (`# pace.py` over running.py's
                // function, again and again), nothing the prompt asks to
                // create; over other code, a file the model creates.
                Some(label) => match self.labelled(label, handed) {
                    Some(path) if !path.abs.exists() && handed_under(label, handed).is_none() => {
                        version_of().or_else(|| {
                            let copies =
                                only_handed_lines(handed, &shown.text) && !prompt.contains(file_name(&path.rel));
                            (!copies).then_some(path)
                        })
                    }
                    known => known,
                },
                // A block without a path is the handed file it is a version of,
                // the one file the prompt asks to make, or new code the prompt
                // asks for in the one file it names.
                None => version_of().or_else(|| {
                    let named = only_named?;
                    if !named.abs.exists() {
                        let copies = handed.iter().any(|f| shares_code(&f.text, &shown.text));
                        return (!copies).then(|| named.clone());
                    }
                    let text = self.workspace.read_text(named).unwrap_or_default();
                    let new = introduces_asked_name(prompt, &text, &shown.text)
                        && handed.iter().all(|f| is_new_code(&f.text, &shown.text));
                    new.then(|| named.clone())
                }),
            };
            let Some(path) = target else { continue };
            // A small model repeats its answer: the first version counts.
            if done.contains(&path.rel) {
                continue;
            }
            done.push(path.rel.clone());
            let file_path = Value::from(path.display());
            if !path.abs.exists() {
                calls.push(("Write", serde_json::json!({ "file_path": file_path, "content": shown.text })));
                continue;
            }
            let Ok(text) = self.workspace.read_text(&path) else { continue };
            if let Some(Rewrite { old_string, new_string, .. }) = rewrite_of(&text, &shown.text) {
                // A copy that differs only in blank lines changes nothing the
                // model meant: it is an echo, not an edit.
                if same_code(&old_string, &new_string) {
                    continue;
                }
                let after = text.replacen(&old_string, &new_string, 1);
                if self.unmeant_change((prompt, handed), &path, &text, &after) || self.breaks_file(&path, &text, &after)
                {
                    continue;
                }
                calls.push(edit(&file_path, &old_string, &new_string));
            } else if whole_version_likeness(&text, &shown.text).is_some()
                || (shown.path.is_some() && rewrites_whole(&text, &shown.text))
            {
                // Every line touched ("def greet(name):" given a parameter,
                // the call below it changed to use it): the block is the file.
                if self.unmeant_change((prompt, handed), &path, &text, &shown.text)
                    || self.breaks_file(&path, &text, &shown.text)
                {
                    continue;
                }
                calls.push(edit(&file_path, &text, &shown.text));
            } else if is_new_code(&text, &shown.text) && !handed.iter().any(|f| same_code(&f.text, &shown.text)) {
                // Another handed file's copy under this one's path is no
                // addition to it: the model labelled the wrong file.
                let content = format!("{}\n\n\n{}", text.trim_end(), shown.text);
                calls.push(("Write", serde_json::json!({ "file_path": file_path, "content": content })));
            }
        }
        calls
    }
}

impl Conversation {
    /// Whether the change of the file at `path` from `before` to `after` is
    /// none the model meant, of a kind `prompt` does not ask for (the
    /// `handed` files say what else there was to change): it changes prose
    /// the prompt neither names nor speaks of, where there was code; it
    /// touches only comments; it only adds imports nothing uses (the 0.5B,
    /// sampled, added `from collections import defaultdict` above the line
    /// it was to fix); or it only drops the file's last lines, where the
    /// reply stopped short of the end (the 0.5B's playlist.js without its
    /// `require.main` block, its stats.rs without the last function). Each
    /// is a copy: no change to make, and the user is told.
    fn unmeant_change(
        &self,
        (prompt, handed): (&str, &[HandedFile]),
        path: &WorkspacePath,
        before: &str,
        after: &str,
    ) -> bool {
        let file = path.display();
        // A note written anew (notes/todo.md given a heading) for a report
        // of what a script does with notes: prose that the prompt neither
        // names nor speaks of as prose is no place for a fix, where there
        // is code to fix.
        let code_handed = handed.iter().any(|f| !is_prose(&f.path.rel));
        let named = handed.iter().any(|f| f.path.rel == path.rel && names_file(prompt, f));
        let spoken_of = speaks_of_change(&without_file_names(prompt, handed), before, after);
        let notice = if is_prose(&path.rel) && code_handed && !named && !spoken_of {
            format!("[the reply changes {file}, which the request does not ask to change — not changed]")
        } else if !spoken_of && comments_only_differ(&path.rel, before, after) {
            format!("[the reply changes only comments of {file} — not changed]")
        } else if !spoken_of && adds_only_unused_imports(before, after) {
            format!("[the reply only adds imports that nothing in {file} uses — not changed]")
        } else if !spoken_of && stops_short(before, after) {
            format!("[the reply's {file} stops before the file's end — not changed]")
        } else if let Some(dropped) = dropped_declarations(prompt, before, after) {
            format!(
                "[the reply's {file} no longer has {}, which the request does not ask to remove — not changed]",
                dropped.join(", ")
            )
        } else {
            return false;
        };
        self.notify(&notice);
        true
    }

    /// Whether the file at `path`, changed from `before` to `after`, is
    /// broken by the change: it no longer declares a name it still uses
    /// (the 0.5B's recipes.py without the RECIPES table its functions
    /// read), its brackets, balanced before, no longer are, or it gained a
    /// syntax error or (in Python) a name nothing binds. Such a change is
    /// none to make, and the user is told.
    fn breaks_file(&self, path: &WorkspacePath, before: &str, after: &str) -> bool {
        // In prose and settings a name is a word, not code that reads it.
        if is_prose(&path.rel) || is_settings(&path.rel) {
            return false;
        }
        let kept = top_level_names(after);
        let mut lost: Vec<&str> =
            top_level_names(before).into_iter().filter(|name| !kept.contains(name) && code_uses(after, name)).collect();
        lost.sort_unstable();
        let why = if !lost.is_empty() {
            format!("leaves out {}, which it still uses", lost.join(", "))
        } else if bracket_balance(before) == [0; 3] && bracket_balance(after) != [0; 3] {
            "leaves a bracket unclosed".to_string()
        } else if let Some(fault) = fault_brought(&path.rel, before, after) {
            // Last: it starts the language's checker, where those above read text.
            fault
        } else {
            return false;
        };
        self.notify(&format!("[the reply's {} {why} — not changed]", path.display()));
        true
    }

    /// Each of `users` as the change leaves it, with its calls of the
    /// `stale` names inlined: each stale name a wrapper (see
    /// `inline::wrapper`) in the file the change took it from, of a
    /// function that file still declares. `None`
    /// where one is not, a call cannot be inlined, or the result still
    /// uses a stale name or breaks its file.
    fn inlined<'h>(
        &self,
        stale: &[String],
        changed: &[HandedFile],
        handed: &[HandedFile],
        users: &[&'h HandedFile],
    ) -> Option<Vec<(&'h HandedFile, String)>> {
        let wrappers: Vec<_> = stale
            .iter()
            .map(|name| {
                changed.iter().find_map(|new| {
                    let old = handed.iter().find(|f| f.path == new.path)?;
                    let wrapper = wrapper(&old.text, name)?;
                    // What it wraps is still there to call: a replacement.
                    wrapper.calls_any(&top_level_names(&new.text)).then_some((wrapper, new))
                })
            })
            .collect::<Option<_>>()?;
        let mut inlined = Vec::new();
        for user in users {
            let before = &as_changed(user, changed).text;
            let mut text = before.clone();
            for (wrapper, declarer) in &wrappers {
                // In the wrapper's own file its module's names need no import.
                let declared =
                    if declarer.path == user.path { Default::default() } else { top_level_names(&declarer.text) };
                text = inline_calls(&text, wrapper, &declared)?;
            }
            if stale.iter().any(|name| code_uses(&text, name)) || self.breaks_file(&user.path, before, &text) {
                return None;
            }
            inlined.push((*user, text));
        }
        Some(inlined)
    }

    /// The file a reply's path means: a file handed over under that path or,
    /// for a bare name, under that name in its folder; else the path itself
    /// (a new file). A small model drops the folder of `lib/numbers.py`.
    fn labelled(&self, label: &str, handed: &[HandedFile]) -> Option<WorkspacePath> {
        match handed_under(label, handed) {
            Some(file) => Some(file.path.clone()),
            None => self.workspace.resolve(label).ok(),
        }
    }
}

/// A linter's findings on a handed file shown whole (a part's lines are
/// not the file's).
fn findings_on(file: &HandedFile) -> Vec<Finding> {
    if file.part.is_some() {
        return Vec::new();
    }
    findings(&file.path.rel, &file.text)
}

fn handed_paths(handed: &[HandedFile]) -> Vec<&str> {
    handed.iter().map(|file| file.path.display()).collect()
}

/// The handed file `label` names: by its path or, bare, by its name.
fn handed_under<'a>(label: &str, handed: &'a [HandedFile]) -> Option<&'a HandedFile> {
    handed.iter().find(|f| f.path.rel == label || (!label.contains('/') && file_name(&f.path.rel) == label))
}

/// How alike `block` is to `file` (0 to 1, by characters) when it is a
/// whole new version of it that shares too few lines for `rewrite_of`: it
/// declares every name the file declares, holds about as much code, and
/// reads mostly the same. `None` when it is not one: new code beside the
/// file's ("def subtract" for a file of "def add") declares other names.
fn whole_version_likeness(file: &str, block: &str) -> Option<f32> {
    const MIN_LIKENESS: f32 = 0.6;
    version_likeness(file, block).filter(|likeness| *likeness >= MIN_LIKENESS)
}

/// How alike `block` is to `file` (0 to 1, by characters) when it may be
/// the file's whole new version, however unlike: it changes something,
/// shows more than the file's tail, and declares every name the file does.
fn version_likeness(file: &str, block: &str) -> Option<f32> {
    let file_lines = code_lines(file).count();
    // A copy is no version: it changes nothing.
    if file_lines == 0 || code_lines(block).count() * 3 < file_lines * 2 || same_code(file, block) {
        return None;
    }
    // The file with its head left out (docstring and imports), and nothing
    // else changed, is a part shown, not a version: as one, it would
    // delete the imports the code it keeps still uses. A version without
    // the file's last lines (a trailing print taken out) is one.
    let file_code: Vec<&str> = code_lines(file).collect();
    let block_code: Vec<&str> = code_lines(block).collect();
    if file_code.windows(block_code.len()).skip(1).any(|part| part == block_code.as_slice()) {
        return None;
    }
    let in_block = declared_names(block);
    if !declared_names(file).is_subset(&in_block) {
        return None;
    }
    Some(similar::TextDiff::from_chars(file, block).ratio())
}

/// Whether `block`, shown under `file`'s path, is its whole new content
/// though it reads little like it (a two-line function wrapped in `try`):
/// it declares every name the file declares, keeps every import and is no
/// shorter, so nothing of the file is left out.
fn rewrites_whole(file: &str, block: &str) -> bool {
    const MIN_LIKENESS: f32 = 0.4;
    let block_lines: std::collections::HashSet<&str> = block.lines().map(str::trim).collect();
    let keeps_imports = file.lines().filter(|line| is_import(line)).all(|line| block_lines.contains(line.trim()));
    // Shorter, it may be a part: the lines it lacks would be deleted.
    code_lines(block).count() >= code_lines(file).count()
        && keeps_imports
        && version_likeness(file, block).is_some_and(|likeness| likeness >= MIN_LIKENESS)
}

/// The names that lines of `text` that are not indented declare
/// (`def greet`, `class Rectangle`, `function capitalize`, `fn main`).
fn declared_names(text: &str) -> std::collections::HashSet<&str> {
    text.lines().filter(|line| !line.starts_with(char::is_whitespace)).filter_map(declared_name).collect()
}

/// The names `text` declares at its top level: those of `declared_names`
/// and the constants and variables it assigns (`RECIPES = {`, `const
/// LIMIT = 3;`).
fn top_level_names(text: &str) -> std::collections::HashSet<&str> {
    let assigned = text.lines().filter(|line| !line.starts_with(char::is_whitespace)).filter_map(|line| {
        let (target, _) = line.split_once('=')?;
        let mut target =
            words(target).filter(|word| !["const", "let", "var", "export", "pub", "static", "mut"].contains(word));
        let name = target.next()?;
        let plain = target.next().is_none() && !line[line.find('=')?..].starts_with("==");
        plain.then_some(name)
    });
    let mut names = declared_names(text);
    names.extend(assigned);
    names
}

/// How many more of each bracket, `(`, `[` and `{`, `text` opens than it
/// closes.
fn bracket_balance(text: &str) -> [i64; 3] {
    let mut balance = [0; 3];
    for c in text.chars() {
        match c {
            '(' => balance[0] += 1,
            ')' => balance[0] -= 1,
            '[' => balance[1] += 1,
            ']' => balance[1] -= 1,
            '{' => balance[2] += 1,
            '}' => balance[2] -= 1,
            _ => {}
        }
    }
    balance
}

/// Whether a line of code in `text`, not a comment nor a docstring, uses
/// `name`: "use read_events instead of read_csv_events" in a docstring is
/// no use of read_csv_events.
fn code_uses(text: &str, name: &str) -> bool {
    let mut in_docstring = false;
    text.lines().any(|line| {
        let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
        let docstring = in_docstring || quotes > 0;
        if quotes % 2 == 1 {
            in_docstring = !in_docstring;
        }
        !docstring && !is_comment(line) && uses_word(line, name)
    })
}

/// The name `line` declares, if it declares one: a declaring keyword led
/// only by modifiers (`pub fn main`, `export default function f`), so that
/// prose ("the type checker") declares nothing.
pub(super) fn declared_name(line: &str) -> Option<&str> {
    const KEYWORDS: [&str; 9] = ["def", "class", "function", "fn", "func", "struct", "enum", "interface", "type"];
    const MODIFIERS: [&str; 10] =
        ["pub", "crate", "export", "default", "async", "static", "public", "private", "abstract", "unsafe"];
    let mut tokens = words(line);
    let keyword = tokens.find(|word| !MODIFIERS.contains(word))?;
    KEYWORDS.contains(&keyword).then(|| tokens.next()).flatten()
}

/// `messages` with the last user message led by the files `shown` and
/// followed by `ask`.
pub(super) fn with_files(mut messages: Vec<Message>, shown: &str, ask: &str) -> Vec<Message> {
    if let Some(last) = messages.iter_mut().rev().find(|m| m.role == Role::User).filter(|_| !shown.is_empty()) {
        last.blocks.insert(0, Block::Text { text: shown.to_string() });
    }
    after_prompt(&mut messages, ask);
    messages
}

/// `text` on a line of its own after the prompt, in the last user message
/// of `messages`.
pub(super) fn after_prompt(messages: &mut [Message], text: &str) {
    if let Some(last) = messages.iter_mut().rev().find(|m| m.role == Role::User) {
        last.blocks.push(Block::Text { text: format!("\n{text}") });
    }
}

/// When `reply` shows only unchanged copies of handed files, and `prompt`
/// asks for a change rather than an answer: the copied files to show
/// again, and the few others handed over, one of which the change must be
/// in. A copied test tells what the code must do (greet.py's test, the
/// greeting expected); but picked from many files, the one asked for is
/// shown alone: shown the test too, a small model wrote the test's imports
/// into shop/text.py.
fn overlooked<'a>(
    reply: &str,
    prompt: &str,
    handed: &'a [HandedFile],
    checks: &[String],
) -> Option<(Vec<&'a HandedFile>, Vec<&'a HandedFile>)> {
    const MAX_OTHERS: usize = 3;
    let mut echoed = copied_back(reply, prompt, handed)?;
    let asked: std::collections::HashSet<&str> = words(prompt).collect();
    let declares_asked = |f: &HandedFile| declared_names(&f.text).iter().any(|name| asked.contains(name));
    // The file the prompt names, or that declares what it asks about,
    // copied back, was the right one to look at: the model saw where the
    // change goes but not what it is.
    if echoed.iter().all(|f| names_file(prompt, f) || declares_asked(f)) {
        // "cleanup.py gained --dry-run but the README doesn't mention it":
        // code the prompt names, copied back, is what the change tells of;
        // the prose it names, not copied, is where the change goes.
        let named_prose: Vec<&HandedFile> = handed
            .iter()
            .filter(|f| is_prose(&f.path.rel) && names_file(prompt, f))
            .filter(|f| !echoed.iter().any(|e| e.path.rel == f.path.rel))
            .collect();
        let echoed_code = echoed.iter().all(|f| !is_prose(&f.path.rel));
        return (echoed_code && !named_prose.is_empty()).then_some((echoed, named_prose));
    }
    // Prose that mentions what the prompt asks about (a README) is no place
    // for the change unless the prompt names it, nor a test that fails
    // until the change is made.
    let may_hold_change =
        |f: &HandedFile| (!is_prose(&f.path.rel) && !checks.contains(&f.path.rel)) || names_file(prompt, f);
    let mut others: Vec<&HandedFile> =
        handed.iter().filter(|f| !echoed.iter().any(|e| e.path.rel == f.path.rel) && may_hold_change(f)).collect();
    // Of many others (a test copied back, the package it tests handed
    // too): those that declare what the prompt names (slugify, in
    // shop/text.py), else the one most to do with the prompt, if one is.
    if others.len() > MAX_OTHERS {
        let declaring: Vec<&HandedFile> = others.iter().copied().filter(|f| declares_asked(f)).collect();
        others = if declaring.is_empty() { most_relevant(prompt, &others).into_iter().collect() } else { declaring };
        echoed.clear();
    }
    (!others.is_empty() && others.len() <= MAX_OTHERS).then_some((echoed, others))
}

/// The one of `files` that has most to do with `prompt` by `relevance`,
/// when one has more than every other.
fn most_relevant<'a>(prompt: &str, files: &[&'a HandedFile]) -> Option<&'a HandedFile> {
    let scores = relevance(prompt, files.iter().map(|f| f.text.as_str()));
    let mut ranked: Vec<(f32, &HandedFile)> = scores.into_iter().zip(files.iter().copied()).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    match ranked.as_slice() {
        [(best, file), (next, _), ..] if best > next => Some(file),
        [(best, file)] if *best > 0.0 => Some(file),
        _ => None,
    }
}

/// How much each of `texts` has to do with `prompt`: the sum, over the
/// words of the prompt it contains, of how rare each is among `texts`
/// (inverse document frequency, as a search engine weighs terms). A word
/// counts without a plural `s`, so "titles" finds "title".
fn relevance<'a>(prompt: &str, texts: impl Iterator<Item = &'a str>) -> Vec<f32> {
    const COMMON: [&str; 32] = [
        "that", "this", "with", "from", "must", "should", "have", "does", "when", "then", "than", "they", "them",
        "their", "what", "which", "there", "where", "into", "only", "also", "some", "more", "most", "make", "keep",
        "file", "code", "function", "work", "like", "every",
    ];
    let mut terms: Vec<String> = prompt
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|word| word.len() > 3 && !COMMON.contains(&word.as_str()))
        .map(|word| match word.strip_suffix('s') {
            Some(stem) if stem.len() > 3 => stem.to_string(),
            _ => word,
        })
        .collect();
    terms.sort();
    terms.dedup();
    // Which terms each text holds, found once.
    let holds: Vec<Vec<bool>> = texts
        .map(|text| {
            let text = text.to_lowercase();
            terms.iter().map(|term| text.contains(term.as_str())).collect()
        })
        .collect();
    let count = holds.len() as f32;
    let weights: Vec<f32> = (0..terms.len())
        .map(|at| {
            let holding = holds.iter().filter(|held| held[at]).count() as f32;
            if holding == 0.0 { 0.0 } else { ((count + 1.0) / holding).ln() }
        })
        .collect();
    holds.iter().map(|held| held.iter().zip(&weights).filter(|(held, _)| **held).map(|(_, w)| w).sum()).collect()
}

/// The Edit that adds an import line of `reply` to the one file of
/// `current` that uses what it imports but does not import it (`import
/// math` to a file calling `math.sqrt`): asked which line must change, a
/// model answers with the line that is missing.
fn added_import(current: &[(&HandedFile, String)], reply_lines: &[String]) -> Option<Change> {
    let import = reply_lines.iter().map(|line| line.trim()).find(|line| is_import(line))?;
    let mut needing = current.iter().filter(|(_, text)| {
        let lacks = !text.lines().any(|line| line.trim() == import);
        lacks && import_names(import).any(|name| uses_word(text, name))
    });
    let (file, text) = needing.next()?;
    if needing.next().is_some() {
        return None;
    }
    Some(edit(file.path.display(), text, &with_import(text, import)))
}

/// The handed file that `change` (an Edit or Write of `changes_shown`)
/// makes, as it will read.
fn changed_file(change: &Change, handed: &[HandedFile]) -> Option<HandedFile> {
    let (name, input) = change;
    let path = input["file_path"].as_str()?;
    let file = handed.iter().find(|f| f.path.display() == path)?;
    let text = match *name {
        "Write" => input["content"].as_str()?.to_string(),
        _ => {
            let old = input["old_string"].as_str()?;
            file.text.contains(old).then(|| file.text.replacen(old, input["new_string"].as_str().unwrap_or(old), 1))?
        }
    };
    Some(HandedFile { path: file.path.clone(), text, part: file.part.clone() })
}

/// `file` as the change leaves it: its version among `changed`, or itself.
fn as_changed<'a>(file: &'a HandedFile, changed: &'a [HandedFile]) -> &'a HandedFile {
    changed.iter().find(|c| c.path == file.path).unwrap_or(file)
}

/// The names that the `changed` files (as `changed_file` makes them) stop
/// declaring and that no handed file declares instead, with the handed
/// files that still use them, as the change leaves them (three at most):
/// the files the change breaks.
fn dangling<'a>(changed: &[HandedFile], handed: &'a [HandedFile]) -> Option<(Vec<String>, Vec<&'a HandedFile>)> {
    const MAX_USERS: usize = 3;
    let is_changed = |f: &HandedFile| changed.iter().any(|c| c.path == f.path);
    let still_declared: std::collections::HashSet<&str> = changed
        .iter()
        .map(|f| f.text.as_str())
        .chain(handed.iter().filter(|f| !is_changed(f)).map(|f| f.text.as_str()))
        .flat_map(declared_names)
        .collect();
    let stale: Vec<&str> = changed
        .iter()
        .filter_map(|c| handed.iter().find(|f| f.path == c.path))
        .flat_map(|f| declared_names(&f.text))
        .filter(|name| !still_declared.contains(name))
        .collect();
    // A file the change itself changed uses what it will hold: report.py
    // with its import of read_csv_events dropped and the call left.
    let users: Vec<&HandedFile> =
        handed.iter().filter(|f| stale.iter().any(|name| uses_word(&as_changed(f, changed).text, name))).collect();
    let stale: Vec<String> = stale
        .iter()
        .filter(|name| users.iter().any(|f| uses_word(&as_changed(f, changed).text, name)))
        .map(|name| name.to_string())
        .collect();
    (!users.is_empty() && users.len() <= MAX_USERS).then_some((stale, users))
}

/// The declaration lines that the `changed` files reshape (`def
/// format_price(amount):` given a parameter), said as "money.py now has
/// `…`", with the unchanged handed files that the prompt names and that
/// use what they declare (three at most): the files the prompt asks to
/// change with them.
fn reshaped<'a>(
    changed: &[HandedFile],
    handed: &'a [HandedFile],
    prompt: &str,
) -> Option<(Vec<String>, Vec<&'a HandedFile>)> {
    const MAX_USERS: usize = 3;
    let mut lines: Vec<(String, String)> = Vec::new();
    for new in changed {
        let Some(old) = handed.iter().find(|f| f.path == new.path) else { continue };
        for name in declared_names(&old.text) {
            let (Some(before), Some(after)) = (declaration(&old.text, name), declaration(&new.text, name)) else {
                continue;
            };
            if before.trim_end() != after.trim_end() {
                lines.push((name.to_string(), format!("{} now has `{}`", new.path.display(), after.trim())));
            }
        }
    }
    let users: Vec<&HandedFile> = handed
        .iter()
        .filter(|f| !f.text.is_empty() && !changed.iter().any(|c| c.path == f.path) && names_file(prompt, f))
        .filter(|f| lines.iter().any(|(name, _)| uses_word(&f.text, name)))
        .collect();
    let lines = lines.into_iter().filter(|(name, _)| users.iter().any(|f| uses_word(&f.text, name)));
    let lines: Vec<String> = lines.map(|(_, line)| line).collect();
    (!users.is_empty() && users.len() <= MAX_USERS).then_some((lines, users))
}

/// The declarations that the `changed` files rename, as (old name, new
/// name): a file that stops declaring one name and starts declaring one
/// other on the same line otherwise unchanged (`def calc_total(prices):`
/// to `def compute_total(prices):`).
fn renames(changed: &[HandedFile], handed: &[HandedFile]) -> Vec<(String, String)> {
    changed
        .iter()
        .filter_map(|new| {
            let old = handed.iter().find(|f| f.path == new.path)?;
            let (before, after) = (declared_names(&old.text), declared_names(&new.text));
            let (&[gone], &[came]) = (
                before.difference(&after).collect::<Vec<_>>().as_slice(),
                after.difference(&before).collect::<Vec<_>>().as_slice(),
            ) else {
                return None;
            };
            renamed_to(&old.text, &new.text, gone, came).then(|| (gone.to_string(), came.to_string()))
        })
        .collect()
}

/// Whether `after` holds `before`'s declaration of `gone` with `came` in
/// its place, the line otherwise the same (`def calc_total(prices):` to
/// `def compute_total(prices):`).
fn renamed_to(before: &str, after: &str, gone: &str, came: &str) -> bool {
    let Some(line) = declaration(before, gone) else { return false };
    let renamed = replace_word(line, gone, came);
    after.lines().any(|line| line == renamed)
}

/// `text` with every whole-word `old` made `new`.
fn replace_word(text: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_word = false;
    while let Some(at) = rest.find(old) {
        let before_ok = !(if at == 0 { after_word } else { rest[..at].chars().next_back().is_some_and(is_word) });
        let after_ok = !rest[at + old.len()..].chars().next().is_some_and(is_word);
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { new } else { old });
        after_word = old.chars().next_back().is_some_and(is_word);
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `line` imports something, in the common languages.
pub(super) fn is_import(line: &str) -> bool {
    let line = line.trim();
    let starts = |word: &str| line.strip_prefix(word).is_some_and(|rest| rest.starts_with(' '));
    starts("import")
        || (starts("from") && line.contains(" import "))
        || (starts("use") && line.ends_with(';'))
        || line.starts_with("#include")
        || (["const", "let", "var"].iter().any(|word| starts(word)) && line.contains("require("))
}

/// The names an import line brings in, with the module's own words
/// (`from x import y as z` gives x, y, z): the file must use one of them.
fn import_names(line: &str) -> impl Iterator<Item = &str> {
    const KEYWORDS: [&str; 11] =
        ["import", "from", "as", "use", "const", "let", "var", "require", "include", "crate", "self"];
    words(line).filter(|word| !KEYWORDS.contains(word))
}

/// The last part of a path (`shop/cart.py`: `cart.py`).
fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Whether `prompt` speaks of the file at `path`: it names it, or uses a
/// word of its name ("the test" of test_pricing.py, "a view" of views.py),
/// a letter apart at most.
fn speaks_of_file(prompt: &str, path: &str) -> bool {
    let name = file_name(path);
    let stem = name.split('.').next().unwrap_or_default().to_lowercase();
    let parts: Vec<&str> = stem.split(['_', '-']).filter(|part| part.len() > 3).collect();
    prompt.contains(name)
        || words(prompt)
            .map(str::to_lowercase)
            .any(|word| word.len() > 3 && parts.iter().any(|part| one_edit_apart(&word, part)))
}

/// Whether `prompt` names `file` (`cart.py`, `shop/cart.py`, or "the
/// README" at the root).
fn names_file(prompt: &str, file: &HandedFile) -> bool {
    let name = file_name(&file.path.rel);
    prompt.contains(name) || (!file.path.rel.contains('/') && names_conventionally(prompt, name))
}

/// The line of `text` that declares `name` at the top level.
fn declaration<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    text.lines().find(|line| !line.starts_with(char::is_whitespace) && declared_name(line) == Some(name))
}

pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of `text`, as code names them (`in_stock`, `parseDate`).
pub(super) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word(c)).filter(|word| !word.is_empty())
}

/// Whether `word` can name something in code: letters, digits and `_`,
/// not led by a digit.
pub(super) fn is_identifier(word: &str) -> bool {
    !word.is_empty() && word.chars().all(is_word) && !word.starts_with(|c: char| c.is_ascii_digit())
}

/// Whether `text` holds `name` as a whole word.
pub(super) fn uses_word(text: &str, name: &str) -> bool {
    words(text).any(|word| word == name)
}

/// `text` with `import` added after its last import, or else at the top,
/// below a leading shebang, comments and docstring.
fn with_import(text: &str, import: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let top_level_import = |line: &&str| !line.starts_with(char::is_whitespace) && is_import(line);
    let (at, spaced) = match lines.iter().rposition(top_level_import) {
        // A parenthesized import runs on to its closing line.
        Some(last) if lines[last].contains('(') && !lines[last].contains(')') => {
            (lines[last..].iter().position(|line| line.contains(')')).map_or(last, |end| last + end) + 1, false)
        }
        Some(last) => (last + 1, false),
        None => {
            let mut at = 0;
            let mut in_docstring: Option<&str> = None;
            while let Some(line) = lines.get(at) {
                let trimmed = line.trim();
                if let Some(quote) = in_docstring {
                    in_docstring = (!trimmed.contains(quote)).then_some(quote);
                } else if let Some(quote) = ["\"\"\"", "'''"].into_iter().find(|q| trimmed.starts_with(q)) {
                    let closed = trimmed.len() > quote.len() && trimmed[quote.len()..].contains(quote);
                    in_docstring = (!closed).then_some(quote);
                } else if !(trimmed.is_empty() || is_comment(trimmed)) {
                    break;
                }
                at += 1;
            }
            (at, true)
        }
    };
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(import);
    if spaced && lines.get(at).is_some_and(|line| !line.trim().is_empty()) {
        out.push("");
    }
    out.extend(&lines[at..]);
    let mut joined = out.join("\n");
    if text.ends_with('\n') || text.is_empty() {
        joined.push('\n');
    }
    joined
}

/// The code a line of prose quotes (`Line 7 should be \`x = 1\``: the
/// longest span between backticks), or the line itself when it quotes none.
/// The words around the code are no part of the line.
fn inline_code(line: &str) -> &str {
    let spans = line.split('`').skip(1).step_by(2);
    let closed = line.matches('`').count() >= 2;
    match spans.filter(|_| closed).max_by_key(|span| span.len()) {
        Some(span) if !span.trim().is_empty() => span,
        _ => line.trim_matches('`'),
    }
}

/// Whether `reply` is nothing but copies of handed files: code blocks that
/// change nothing, and not a word beside them ("It listens on:" before a
/// copy of config.py makes the copy an answer).
fn copies_only(reply: &str, handed: &[HandedFile]) -> bool {
    let prose = lines_outside_code(reply).any(|line| path_in(line).is_none());
    !prose && copies(reply, handed, "").is_some()
}

/// The lines of `reply` outside its code blocks that are not blank.
fn lines_outside_code(reply: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    reply.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            return false;
        }
        !in_code && !line.trim().is_empty()
    })
}

/// `first` shown, then the other `files`: the file an ask is about leads.
fn shown_first<'a>(first: &'a HandedFile, files: impl Iterator<Item = &'a HandedFile>) -> String {
    let rest = files.filter(|f| f.path != first.path);
    std::iter::once(first).chain(rest).map(HandedFile::shown).collect()
}

/// The one name that is all of `reply` ("`leg_lengths`", "leg_lengths()").
fn bare_name(reply: &str) -> Option<&str> {
    let name = reply.trim().trim_matches(['`', '*']).trim_end_matches('.').trim_end_matches("()");
    let is_name = name.len() > 1 && is_identifier(name);
    is_name.then_some(name)
}

/// Whether all of `reply` is the name of `file` ("trips.py", "`trip.py`"),
/// or that name with one letter wrong, missing or added.
fn names_only(reply: &str, file: &HandedFile) -> bool {
    let reply = reply.trim().trim_matches(['`', '*', '"', '\'']).trim_end_matches('.').to_lowercase();
    let path = file.path.display().to_lowercase();
    let name = file_name(&path);
    !reply.contains(char::is_whitespace) && (one_edit_apart(&reply, &path) || one_edit_apart(&reply, name))
}

/// Whether `a` becomes `b` by at most one letter changed, left out or added.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let head = short.iter().zip(long.iter()).take_while(|(x, y)| x == y).count();
    let skip = if short.len() == long.len() { 1 } else { 0 };
    short.len() == head || short[head + skip..] == long[head + 1..]
}

/// The lines of code of `reply`, whose code blocks are `blocks`: those of
/// every block, else its lines with their inline code taken out.
fn reply_code(reply: &str, blocks: &[ShownFile]) -> Vec<String> {
    if blocks.is_empty() {
        code_lines(reply).map(|line| inline_code(line).to_string()).collect()
    } else {
        blocks.iter().flat_map(|block| code_lines(&block.text)).map(str::to_string).collect()
    }
}

/// The one line of code that is all of `reply`, in one block at most.
fn quoted_code(reply: &str) -> Option<String> {
    let blocks = shown_files(reply);
    if blocks.len() > 1 {
        return None;
    }
    let [quoted] = reply_code(reply, &blocks).try_into().ok()?;
    let quoted = quoted.trim();
    (!quoted.is_empty()).then(|| quoted.to_string())
}

/// The number of the one line of `file` that reads `quoted`.
fn line_reading(file: &str, quoted: &str) -> Option<usize> {
    let mut found = file.lines().enumerate().filter(|(_, line)| line.trim() == quoted);
    let (at, _) = found.next()?;
    found.next().is_none().then_some(at + 1)
}

/// The line number that is all of `reply` ("line 3", "13.", "`7`"), or
/// the one line a short sentence without code names ("It is line 12 that
/// needs to change.", the 0.5B on the right line of linecount.sh).
fn line_number(reply: &str) -> Option<usize> {
    /// Longer, a reply explains more than it points.
    const POINTING: usize = 120;
    static LINE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let line = LINE.get_or_init(|| regex::Regex::new(r"(?i)\bline\s+(\d+)\b").expect("a valid pattern"));
    let reply = reply.trim().trim_matches('`').trim().trim_end_matches('.');
    let digits = reply.strip_prefix("line").or_else(|| reply.strip_prefix("Line")).unwrap_or(reply);
    let named = || {
        let mut numbers = line.captures_iter(reply).map(|found| found[1].parse::<usize>().ok());
        let number = numbers.next()??;
        let pointing = reply.len() <= POINTING && !reply.contains('`') && !reply.contains('\n');
        (pointing && numbers.next().is_none()).then_some(number)
    };
    digits.trim().parse().ok().or_else(named).filter(|n| *n > 0)
}

/// The one handed file the prompt names, else the one the reply names,
/// else the one file handed over, else the code file that has most to do
/// with the prompt: where the change asked for goes. A test among the
/// `checks`, failing until the change is made, is none of these unless
/// the prompt names it: a reply that repeats "the tests in
/// tests/test_shop.py fail" names what the change must pass.
fn file_to_ask_for<'a>(
    prompt: &str,
    reply: &str,
    handed: &'a [HandedFile],
    checks: &[String],
) -> Option<&'a HandedFile> {
    let may_hold_change = |f: &&HandedFile| !checks.contains(&f.path.rel);
    let named_in = |text: &str| handed.iter().filter(|f| names_file(text, f)).collect::<Vec<_>>();
    let named_in_reply: Vec<&HandedFile> = named_in(reply).into_iter().filter(may_hold_change).collect();
    match (named_in(prompt).as_slice(), named_in_reply.as_slice(), handed) {
        ([one], _, _) | ([], [one], _) => Some(*one),
        ([], [], [one]) => Some(one),
        ([], [], _) => {
            let code: Vec<&HandedFile> =
                handed.iter().filter(|f| !is_prose(&f.path.rel)).filter(may_hold_change).collect();
            most_relevant(prompt, &code)
        }
        _ => None,
    }
}

/// The answer a worked-out reply ends with, on its line that starts with "Answer:".
fn answer_line(reply: &str) -> Option<String> {
    let line = reply
        .lines()
        .rev()
        .map(|line| line.trim().trim_start_matches(['*', '#', ' ']))
        .find(|line| line.get(..7).is_some_and(|head| head.eq_ignore_ascii_case("answer:")))?;
    let answer = line[7..].trim().trim_start_matches(['*', ' ']).trim();
    (!answer.is_empty()).then(|| answer.to_string())
}

/// What a command run by the Bash tool printed and the exit code it
/// ended with, from the tool's output; `None` when it ran to no exit (it
/// was refused, timed out or killed).
pub(super) fn exited(output: &str) -> Option<(&str, &str)> {
    let (printed, status) = output.rsplit_once('\n').unwrap_or(("", output));
    Some((printed, status.strip_prefix("exit code ")?))
}

/// `changes` with what they change in the parts of handed files named
/// `kept` undone (a change left with nothing to change dropped), and the
/// files where some was, each with the names of those parts.
fn spare_kept<'a>(
    changes: Vec<Change>,
    handed: &'a [HandedFile],
    kept: &[String],
) -> (Vec<Change>, Vec<(&'a HandedFile, Vec<String>)>) {
    let mut spared = Vec::new();
    if kept.is_empty() {
        return (changes, spared);
    }
    let changes = changes
        .into_iter()
        .filter_map(|change| {
            let file = handed.iter().find(|f| change.1["file_path"] == f.path.display());
            // A new file has no part to keep.
            let Some((file, changed)) =
                file.filter(|f| !f.text.is_empty()).and_then(|f| Some((f, changed_file(&change, handed)?)))
            else {
                return Some(change);
            };
            let (text, parts) = sparing(&file.path.rel, &file.text, &changed.text, kept);
            if parts.is_empty() {
                return Some(change);
            }
            spared.push((file, parts));
            let path = file.path.display();
            (text != file.text).then(|| edit(path, &file.text, &text))
        })
        .collect();
    (changes, spared)
}

/// The Edit that replaces `old` with `new` in the file at `path`.
fn edit(path: impl serde::Serialize, old: &str, new: &str) -> Change {
    ("Edit", serde_json::json!({ "file_path": path, "old_string": old, "new_string": new }))
}

/// What ends a turn, with `usage` spent before it added.
fn adding(usage: Usage) -> impl FnOnce(TurnOutcome) -> TurnOutcome {
    move |mut outcome| {
        outcome.usage += usage;
        outcome
    }
}

/// The files `changes` create that were not handed over (none the prompt
/// names) and that nothing uses by name, when they also change a file that
/// `exists`: written around the change, not part of it.
fn unasked_new_files(
    prompt: &str,
    changes: &[Change],
    handed: &[HandedFile],
    exists: impl Fn(&str) -> bool,
) -> Vec<String> {
    let path_of = |(_, input): &Change| input["file_path"].as_str().map(str::to_string);
    let (existing, created): (Vec<&Change>, Vec<&Change>) =
        changes.iter().partition(|change| path_of(change).is_some_and(|path| exists(&path)));
    if existing.is_empty() {
        return Vec::new();
    }
    // Used by the change to existing files, or by those files: another new
    // file's use (views.py importing models.py) counts for nothing.
    let texts: Vec<&str> = existing
        .iter()
        .filter_map(|(_, input)| input["new_string"].as_str().or(input["content"].as_str()))
        .chain(handed.iter().map(|f| f.text.as_str()))
        .collect();
    created
        .into_iter()
        .filter_map(path_of)
        .filter(|path| !handed.iter().any(|f| f.path.display() == *path) && !speaks_of_file(prompt, path))
        .filter(|path| {
            let stem = file_name(path).split('.').next().unwrap_or_default();
            !texts.iter().any(|text| uses_word(text, stem))
        })
        .collect()
}

/// Whether `line` is a comment in the common languages.
fn is_comment(line: &str) -> bool {
    const OPENERS: [&str; 6] = ["#", "//", "--", "/*", "*", "<!--"];
    let line = line.trim_start();
    OPENERS.iter().any(|opener| line.starts_with(opener))
}

/// Whether the file at `path` is prose, going by its extension.
fn is_prose(path: &str) -> bool {
    has_extension_in(path, &["md", "markdown", "txt", "rst", "adoc"])
}

/// Whether the file at `path` holds settings, going by its extension.
fn is_settings(path: &str) -> bool {
    has_extension_in(path, &["ini", "toml", "yaml", "yml", "json", "cfg", "conf", "env", "properties"])
}

fn has_extension_in(path: &str, extensions: &[&str]) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| extensions.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The one function (or method, or type) of the `copied` files that
/// `prompt` names, else the one whose declaration `reply` repeats (asked
/// for the line to change, a small model quotes the function unchanged),
/// as the part of its file that declares it; `None` when there is none
/// or several, or when that part is most of its file (shown alone, it
/// would show nothing new).
fn asked_function(prompt: &str, reply: &str, copied: &[&HandedFile]) -> Option<HandedFile> {
    let asked: std::collections::HashSet<&str> = words(prompt).filter(|word| word.len() > 2).collect();
    let quoted: std::collections::HashSet<&str> =
        reply.lines().filter_map(|line| declared_name(line.trim_start())).collect();
    let (file, name) = one_declared(copied, &asked).or_else(|| one_declared(copied, &quoted))?;
    if file.part.is_some() {
        return None;
    }
    let (text, part) = declaring_part(&file.text, &[name])?;
    let focused = text.lines().count() * 3 < file.text.lines().count() * 2;
    focused.then(|| HandedFile { path: file.path.clone(), text, part: Some(part) })
}

/// The one of `names` that the `files` declare, and the file that does;
/// `None` when they declare none of them, or several.
fn one_declared<'a>(
    files: &[&'a HandedFile],
    names: &std::collections::HashSet<&str>,
) -> Option<(&'a HandedFile, &'a str)> {
    let mut declared = files.iter().flat_map(|file| {
        let mut found: Vec<&str> = file
            .text
            .lines()
            .filter_map(|line| declared_name(line.trim_start()))
            .filter(|n| names.contains(n))
            .collect();
        found.dedup();
        found.into_iter().map(move |name| (*file, name))
    });
    let first = declared.next()?;
    declared.next().is_none().then_some(first)
}

/// Whether `reply` is code blocks and nothing else: no answer in words.
fn only_code(reply: &str) -> bool {
    let any_code = reply.lines().any(|line| line.trim_start().starts_with("```"));
    any_code && lines_outside_code(reply).next().is_none()
}

/// Whether `after` is `before` with import lines added, blank lines aside,
/// none of whose names the code of `after` uses.
fn adds_only_unused_imports(before: &str, after: &str) -> bool {
    fn non_blank(text: &str) -> impl Iterator<Item = &str> {
        text.lines().map(str::trim_end).filter(|line| !line.trim().is_empty())
    }
    let Some(added) = lines_added(non_blank(before), non_blank(after)) else { return false };
    let code: String = after.lines().filter(|line| !is_import(line)).map(|line| format!("{line}\n")).collect();
    !added.is_empty()
        && added.iter().all(|line| is_import(line) && !import_names(line).any(|name| code_uses(&code, name)))
}

/// The lines of `after` that are not `before`'s, when `after` is `before`
/// with lines added and none taken away or changed.
fn lines_added<T: PartialEq>(before: impl Iterator<Item = T>, after: impl Iterator<Item = T>) -> Option<Vec<T>> {
    let mut kept = before.peekable();
    let mut added = Vec::new();
    for line in after {
        if kept.peek().is_some_and(|next| *next == line) {
            kept.next();
        } else {
            added.push(line);
        }
    }
    kept.peek().is_none().then_some(added)
}

/// The names `before` declares at its top level that `after` neither
/// declares nor renames, where `prompt` asks to remove nothing and names
/// none of them: the 0.5B's text.js with wordCount (and the exports below
/// it) made a test of truncate. A fix keeps what the file offered.
fn dropped_declarations(prompt: &str, before: &str, after: &str) -> Option<Vec<String>> {
    let (had, has) = (declared_names(before), declared_names(after));
    let came: Vec<&&str> = has.difference(&had).collect();
    let renamed = |gone: &str| came.iter().any(|new| renamed_to(before, after, gone, new));
    let mut dropped: Vec<String> = had
        .difference(&has)
        .filter(|gone| !uses_word(prompt, gone) && !renamed(gone))
        .map(|gone| gone.to_string())
        .collect();
    dropped.sort_unstable();
    (!dropped.is_empty()).then_some(dropped)
}

/// `prompt` without the names of the `handed` files: a file the request
/// names ("Create mathutil.py") is no word of a change to another file
/// that mentions it.
fn without_file_names(prompt: &str, handed: &[HandedFile]) -> String {
    let names_a_file = |token: &str| {
        let token = token.trim_matches(|c: char| !is_word(c) && c != '.' && c != '/').trim_end_matches('.');
        handed.iter().any(|f| token == f.path.display() || token == file_name(&f.path.rel))
    };
    prompt.split_whitespace().filter(|token| !names_a_file(token)).collect::<Vec<_>>().join(" ")
}

/// Whether `prompt` speaks of what changes from `before` to `after`: it
/// uses a word (of three letters or more) that one of them has and the
/// other lacks, as "Remove the debug print" speaks of the `print` that goes.
fn speaks_of_change(prompt: &str, before: &str, after: &str) -> bool {
    let lower = |text: &str| -> std::collections::HashSet<String> {
        words(text).filter(|word| word.len() > 2).map(str::to_lowercase).collect()
    };
    let (had, has, asked) = (lower(before), lower(after), lower(prompt));
    // A word and its forms: "count" speaks of "counting".
    let alike = |a: &str, b: &str| a == b || (a.len().min(b.len()) > 4 && (a.starts_with(b) || b.starts_with(a)));
    had.symmetric_difference(&has).any(|word| asked.iter().any(|asked| alike(word, asked)))
}

/// Whether `after` is `before` without its last lines of code, two or more
/// of them, and otherwise the same: a reply that ended before the file did.
fn stops_short(before: &str, after: &str) -> bool {
    let before: Vec<&str> = code_lines(before).collect();
    let after: Vec<&str> = code_lines(after).collect();
    !after.is_empty() && after.len() + 2 <= before.len() && before.starts_with(&after)
}

/// Whether `before` and `after`, versions of the file at `path`, hold the
/// same code once comments, docstrings and whitespace are set aside: the
/// 0.5B, asked for a fix it cannot see, rewrites a module docstring or
/// turns `//!` into `///`, and that is no fix.
fn comments_only_differ(path: &str, before: &str, after: &str) -> bool {
    match (code_without_comments(path, before), code_without_comments(path, after)) {
        (Some(before_code), Some(after_code)) => before != after && before_code == after_code,
        _ => false,
    }
}

/// The code of `text` without its comments and, in Python, its
/// docstrings, each line's whitespace collapsed; `None` where the language
/// (by the extension of `path`) is not known.
fn code_without_comments(path: &str, text: &str) -> Option<Vec<String>> {
    let markers: &[&str] =
        if has_extension_in(path, &["py", "pyi", "sh", "bash", "rb", "pl", "r", "yaml", "yml", "toml"]) {
            &["#"]
        } else if has_extension_in(
            path,
            &[
                "js", "mjs", "cjs", "jsx", "ts", "tsx", "rs", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt",
                "swift", "cs", "scala", "php", "dart",
            ],
        ) {
            &["//", "/*", "*"]
        } else if has_extension_in(path, &["sql", "lua", "hs"]) {
            &["--"]
        } else {
            return None;
        };
    let python = has_extension_in(path, &["py", "pyi"]);
    let mut code = Vec::new();
    // The quotes of the docstring being read.
    let mut docstring: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(quotes) = docstring {
            if trimmed.contains(quotes) {
                docstring = None;
            }
            continue;
        }
        if trimmed.is_empty() || markers.iter().any(|marker| trimmed.starts_with(marker)) {
            continue;
        }
        // A string alone where a docstring goes: first in the module or
        // right under a `def` or `class` line.
        let opens_body = code.last().is_none_or(|last: &String| last.ends_with(':'));
        let quotes =
            ["\"\"\"", "'''"].into_iter().find(|q| trimmed.trim_start_matches(['r', 'b', 'u', 'R']).starts_with(q));
        if let Some(quotes) = quotes.filter(|_| python && opens_body) {
            if trimmed.matches(quotes).count() < 2 {
                docstring = Some(quotes);
            }
            continue;
        }
        code.push(trimmed.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    Some(code)
}

/// The handed files `reply` copies back, when that is all it shows: a
/// change to comments only, or a copy that stops short, counts as a copy
/// unless the request speaks of what it changes.
fn copied_back<'a>(reply: &str, prompt: &str, handed: &'a [HandedFile]) -> Option<Vec<&'a HandedFile>> {
    copies(reply, handed, prompt)
}

/// The handed files `reply` copies back unchanged, blank lines aside (and
/// comments, with `comments_aside`; a copy that stops before the file's
/// end, with `tail_aside`), when its blocks show nothing else.
fn copies<'a>(reply: &str, handed: &'a [HandedFile], prompt: &str) -> Option<Vec<&'a HandedFile>> {
    let shown = blocks_for(reply, handed);
    let prompt = without_file_names(prompt, handed);
    let is_copy = |f: &HandedFile, block: &ShownFile| {
        let aside = || !speaks_of_change(&prompt, &f.text, &block.text);
        same_code(&f.text, &block.text)
            || headless(&f.text, &block.text)
            || (comments_only_differ(&f.path.rel, &f.text, &block.text) && aside())
            || (stops_short(&f.text, &block.text) && aside())
    };
    if shown.is_empty() || !shown.iter().all(|block| handed.iter().any(|f| is_copy(f, block))) {
        return None;
    }
    Some(handed.iter().filter(|f| shown.iter().any(|block| is_copy(f, block))).collect())
}

/// Whether `block` is `file` without its head (the module docstring, or
/// that and its imports) and otherwise unchanged: a copy as a small model
/// writes one, which the same asks follow as any copy.
fn headless(file: &str, block: &str) -> bool {
    let file_code: Vec<&str> = code_lines(file).collect();
    let block_code: Vec<&str> = code_lines(block).collect();
    let most = block_code.len() * 3 >= file_code.len() * 2;
    most && block_code.len() < file_code.len() && file_code.ends_with(&block_code)
}

/// How many of `line`'s words `fixed` changes, when it keeps the line:
/// changes at least one and at most a third of them, and at most doubles
/// its length (`== 1` to `== 0`; not `import os` to `import math`). A line
/// written again without its closing `:` or `;` is the line restated, not
/// changed: taken as a fix, it would break the code.
fn words_changed(line: &str, fixed: &str) -> Option<usize> {
    /// How much of a short line's letters a fix of it keeps.
    const NEAR_LETTERS: f32 = 0.9;
    let closing = |line: &str| line.trim().trim_end_matches([':', ';', '{', ',']).trim_end().to_string();
    if closing(line) == closing(fixed) {
        return None;
    }
    // A declaration made other code (`def top_words(text, n=5):` written
    // `return top_words(text, n=5):`) takes the function away: no fix.
    if declared_name(line).is_some() && declared_name(fixed).is_none() {
        return None;
    }
    // Part of the line quoted from its middle (`grep -m1 '^# ' $f` of
    // `title=$(grep -m1 '^# ' $f)`) shows where the change goes, not what
    // it is; the line's start kept (`return a + b` of `return a + b + 1`) is a fix.
    let (line_code, fixed_code) = (line.trim(), fixed.trim());
    if line_code.contains(fixed_code) && !line_code.starts_with(fixed_code) {
        return None;
    }
    // The same words in another order (`distance_km(a["lat"], a["lon"])`
    // for `distance_km(a["lon"], a["lat"])`): operands swapped, the line fixed.
    let mut sorted_words: [Vec<&str>; 2] = [words(line_code).collect(), words(fixed_code).collect()];
    sorted_words.iter_mut().for_each(|words| words.sort_unstable());
    let mut letters: [Vec<char>; 2] =
        [line_code, fixed_code].map(|code| code.chars().filter(|c| !c.is_whitespace()).collect());
    // Spaced otherwise, the line is restated.
    if letters[0] == letters[1] {
        return None;
    }
    letters.iter_mut().for_each(|letters| letters.sort_unstable());
    if sorted_words[0] == sorted_words[1] && letters[0] == letters[1] && sorted_words[0].len() >= 2 {
        return Some(2);
    }
    // What a message says, alone changed (`errors.push('Password too
    // short.')` made to say what the prompt asks): the line is the same
    // code, fixed.
    // A docstring's words are no code: its skeleton is quotes alone.
    let (line_skeleton, line_texts) = string_literals(line_code);
    let (fixed_skeleton, fixed_texts) = string_literals(fixed_code);
    let is_code = line_skeleton.chars().any(char::is_alphanumeric) && !is_comment(line_code);
    if is_code && line_skeleton == fixed_skeleton && line_texts != fixed_texts {
        return Some(1);
    }
    // Without what closes the line, which sticks to its last word: `ids.length;`
    // to `ids.length + 1;` keeps that word.
    let (line, fixed) = (closing(line), closing(fixed));
    let old: Vec<&str> = line.split_whitespace().collect();
    let new: Vec<&str> = fixed.split_whitespace().collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    let changed = ops.iter().filter(|op| !matches!(op, similar::DiffOp::Equal { .. }));
    let (old_changed, new_changed) =
        changed.fold((0, 0), |(o, n), op| (o + op.old_range().len(), n + op.new_range().len()));
    let keeps_line = old_changed * 3 <= old.len() && new.len() <= old.len() * 2;
    if old_changed + new_changed > 0 && keeps_line {
        return Some(old_changed.max(new_changed));
    }
    // A line of few words, one of them touched (`return
    // !user.prefs.emailNotifications;` without its `!`): a word of two is
    // half the line, yet the letters are the line's.
    let letters_kept = similar::TextDiff::from_chars(line.as_str(), fixed.as_str()).ratio();
    (old.len() <= 3 && letters_kept >= NEAR_LETTERS).then_some(old_changed.max(new_changed))
}

/// Whether the reply's line `i` stands where line `n` of `file` does: a
/// line of code next to it, above or below, is the file's line there.
fn shown_around(reply: &[&str], i: usize, file: &[&str], n: usize) -> bool {
    let same = |shown: Option<&&str>, there: Option<&&str>| match (shown, there) {
        (Some(shown), Some(there)) => shown.trim() == there.trim() && shown.chars().any(char::is_alphanumeric),
        _ => false,
    };
    let (reply_above, file_above) = (i.checked_sub(1), n.checked_sub(1));
    same(reply_above.and_then(|i| reply.get(i)), file_above.and_then(|n| file.get(n)))
        || same(reply.get(i + 1), file.get(n + 1))
}

/// `code` with its string literals emptied, and what they say: the code
/// of a line apart from its messages. A quote left open takes the rest of
/// the line.
fn string_literals(code: &str) -> (String, Vec<&str>) {
    let (mut skeleton, mut texts) = (String::new(), Vec::new());
    let mut chars = code.char_indices();
    while let Some((at, c)) = chars.next() {
        skeleton.push(c);
        if !['"', '\'', '`'].contains(&c) {
            continue;
        }
        let start = at + c.len_utf8();
        let mut end = code.len();
        while let Some((inner, next)) = chars.next() {
            if next == '\\' {
                chars.next();
            } else if next == c {
                skeleton.push(c);
                end = inner;
                break;
            }
        }
        texts.push(&code[start..end]);
    }
    (skeleton, texts)
}

/// `fixed` in place of `old`: at its indentation and, when the model left
/// it off (`if len(text) <= limit - 3` for `if len(text) <= limit:`),
/// with the punctuation that closes it, without which the code is broken.
fn as_line_of(old: &str, fixed: &str) -> String {
    let indent = &old[..old.len() - old.trim_start().len()];
    let fixed = fixed.trim();
    let closing = old.trim_end().chars().last().filter(|c| [':', ';', '{'].contains(c));
    match closing {
        Some(close) if !fixed.ends_with(close) => format!("{indent}{fixed}{close}"),
        _ => format!("{indent}{fixed}"),
    }
}

/// The one name an import line imports in place of another (`from config
/// import read_config` for `… import load_config`): that old name and the
/// new one. An alias (`import read_config as load_config`) renames nothing.
fn renamed_import<'a>(old: &'a str, new: &'a str) -> Option<(&'a str, &'a str)> {
    if !is_import(old.trim()) || !is_import(new.trim()) {
        return None;
    }
    let (before, after): (Vec<&str>, Vec<&str>) = (import_names(old).collect(), import_names(new).collect());
    let gone: Vec<&str> = before.iter().copied().filter(|name| !after.contains(name)).collect();
    let came: Vec<&str> = after.iter().copied().filter(|name| !before.contains(name)).collect();
    match (gone.as_slice(), came.as_slice()) {
        ([from], [to]) => Some((from, to)),
        _ => None,
    }
}

/// Whether a line of `block` that is not indented declares a name
/// (`def subtract(`) that the prompt uses and `file` does not have yet: code
/// the prompt asks for, not an example calling what exists.
fn introduces_asked_name(prompt: &str, file: &str, block: &str) -> bool {
    let asked: std::collections::HashSet<&str> = words(prompt).collect();
    block.lines().filter(|line| !line.starts_with(char::is_whitespace)).any(|line| {
        line.match_indices('(').any(|(at, _)| {
            let before = &line[..at];
            let start = before.rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
            let name = &before[start..];
            name.len() > 1 && asked.contains(name) && !file.contains(&format!("{name}("))
        })
    })
}

/// The lines of `text` that are not blank, without trailing whitespace.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim_end).filter(|line| !line.is_empty())
}

/// Whether `a` and `b` hold the same code, blank lines and trailing
/// whitespace aside: a copy, not a change.
pub(super) fn same_code(a: &str, b: &str) -> bool {
    code_lines(a).eq(code_lines(b))
}

/// The text of a reply.
fn reply_text(generation: &Generation) -> String {
    Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text()
}

/// Whether `block` shares no line of code with `file`: an addition to it,
/// not a version of it.
fn is_new_code(file: &str, block: &str) -> bool {
    block.lines().filter(|line| !line.trim().is_empty()).count() > 1 && !shares_code(file, block)
}

/// Whether every line of code in `block`, two or more, is a line of a
/// handed file: code copied, nothing new. Comments aside, which a model
/// adds to label what it copies.
fn only_handed_lines(handed: &[HandedFile], block: &str) -> bool {
    let known: std::collections::HashSet<&str> = handed.iter().flat_map(|f| f.text.lines().map(str::trim)).collect();
    let is_comment = |line: &str| ["#", "//", "/*", "*", "--"].iter().any(|marker| line.starts_with(marker));
    let code: Vec<&str> = block.lines().map(str::trim).filter(|line| !line.is_empty() && !is_comment(line)).collect();
    code.len() >= 2 && code.iter().all(|line| known.contains(line))
}

/// Whether `block` holds a line of code of `file`.
fn shares_code(file: &str, block: &str) -> bool {
    let lines: std::collections::HashSet<&str> = file.lines().map(str::trim).filter(|line| line.len() > 3).collect();
    block.lines().any(|line| lines.contains(line.trim()))
}

/// The files to hand the model with one prompt.
pub(super) struct Selection {
    files: Vec<HandedFile>,
    /// The existing files the prompt names.
    named: Vec<WorkspacePath>,
    /// The project's rules file, by name, and its text: read once a turn,
    /// it goes in the system prompt, not among the files.
    rules: Option<(String, String)>,
    /// Every file of the workspace fits in one message.
    whole_workspace_fits: bool,
}

/// An Edit or Write call that a reply's files make, as (tool, input).
type Change = (&'static str, Value);

/// What every ask of one whole-file turn shares.
struct Asking<'a> {
    system: &'a str,
    /// The conversation; its last user message is the prompt.
    messages: &'a [Message],
    prompt: &'a str,
    /// The request asks for an answer, not a change.
    question: bool,
    handed: &'a [HandedFile],
    /// The test files whose tests failed before any change: what the
    /// change must make pass, not a place for it.
    checks: &'a [String],
}

/// A file shown to the model, as it was then: whole, or the part of a
/// file too long to show that declares what the prompt asks about.
#[derive(Clone)]
struct HandedFile {
    path: WorkspacePath,
    text: String,
    part: Option<Part>,
}

/// Where the part of a file shown is: its first line (from 1), the number
/// of lines of the whole file, and the name it declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Part {
    first: usize,
    total: usize,
    name: String,
}

impl HandedFile {
    fn whole(path: WorkspacePath, text: String) -> HandedFile {
        HandedFile { path, text, part: None }
    }

    /// The file as the model reads it: its path, then its text in a code
    /// block; a part is said to be one, so that the model answers with
    /// that part changed.
    fn shown(&self) -> String {
        let text = self.text.trim_end_matches('\n');
        match self.part {
            None => format!("{}\n```\n{text}\n```\n\n", self.path.display()),
            Some(Part { first, total, .. }) => format!(
                "{} (lines {first} to {} of {total}; the rest is left out)\n```\n{text}\n```\n\n",
                self.path.display(),
                first + text.lines().count() - 1,
            ),
        }
    }
}

/// The lines of `text` that declare the first of `names` it declares (a
/// function, a class, a method) down to the end of that declaration, at
/// most `MAX_PART_LINES`, with the decorators and comments right above it.
pub(super) fn declaring_part(text: &str, names: &[&str]) -> Option<(String, Part)> {
    const MAX_PART_LINES: usize = 120;
    let lines: Vec<&str> = text.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    let (at, name) = lines
        .iter()
        .enumerate()
        .find_map(|(at, line)| declared_name(line.trim_start()).filter(|name| names.contains(name)).map(|n| (at, n)))?;
    let depth = indent(lines[at]);
    let mut start = at;
    while start > 0 && indent(lines[start - 1]) == depth && lines[start - 1].trim_start().starts_with(['@', '#', '/']) {
        start -= 1;
    }
    let mut end = at + 1;
    while end < lines.len() && end - start < MAX_PART_LINES {
        let line = lines[end];
        if !line.trim().is_empty() && indent(line) <= depth {
            // The closing brace of a block in braces is the block's.
            if line.trim_start().starts_with(['}', ')', ']']) {
                end += 1;
            }
            break;
        }
        end += 1;
    }
    while end > at + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let part = Part { first: start + 1, total: lines.len(), name: name.to_string() };
    Some((lines[start..end].join("\n") + "\n", part))
}

/// A code block of a reply, with the path written on the line before it or
/// as its own first line (`# calc.py`), when there is one.
#[derive(Debug, PartialEq, Eq)]
struct ShownFile {
    path: Option<String>,
    text: String,
}

fn shown_files(reply: &str) -> Vec<ShownFile> {
    let mut out = Vec::new();
    let mut label: Option<String> = None;
    let mut block: Option<Vec<&str>> = None;
    let mut lines_of = reply.lines();
    loop {
        let line = lines_of.next();
        let fence = line.is_some_and(|line| line.trim_start().starts_with("```"));
        match (block.take(), line) {
            (None, None) => break,
            (None, Some(_)) if fence => block = Some(Vec::new()),
            (None, Some(line)) if !line.trim().is_empty() => label = path_in(line).or_else(|| introduced_path(line)),
            (None, Some(_)) => {}
            (Some(mut lines), Some(line)) if !fence => {
                lines.push(line);
                block = Some(lines);
            }
            // A block closed, or cut off with the reply: it still shows the file up to there.
            (Some(lines), line) => {
                let code: Vec<&str> = lines.iter().copied().filter(|l| !l.trim().is_empty()).collect();
                // A block that holds only a path heads the next one.
                if let [only] = code.as_slice() {
                    if let Some(path) = path_in(only) {
                        label = Some(path);
                        continue;
                    }
                }
                let (path, lines) = match lines.first().and_then(|first| comment_path(first)) {
                    Some(named) => (Some(named), &lines[1..]),
                    None => (label.take(), &lines[..]),
                };
                // "```" then "python" on a line of its own: the fence's
                // language, put on the wrong line, is not the file's.
                let lines = match lines.split_first() {
                    Some((first, rest)) if FENCE_LANGUAGES.contains(first) && !rest.is_empty() => rest,
                    _ => lines,
                };
                let text = lines.join("\n");
                // "# No changes needed" under a code file's path is a remark,
                // not the file's content.
                let remark = path.as_deref().is_some_and(|p| !is_prose(p)) && code_lines(&text).all(is_comment);
                if !text.trim().is_empty() && !remark {
                    out.push(ShownFile { path, text: format!("{}\n", text.trim_matches('\n')) });
                }
                if line.is_none() {
                    break;
                }
            }
        }
    }
    out
}

/// The blocks of `reply`, a block whose own first line is bare
/// `shapes.py` under that path: taken so only when it is a file handed
/// over, for code can read so too.
fn blocks_for(reply: &str, handed: &[HandedFile]) -> Vec<ShownFile> {
    let mut blocks = shown_files(&realign_fences(reply, handed));
    for shown in blocks.iter_mut().filter(|shown| shown.path.is_none()) {
        let first = shown.text.lines().next().unwrap_or_default();
        if let Some(label) = path_in(first).filter(|label| handed_under(label, handed).is_some()) {
            shown.text = shown.text[first.len()..].trim_start_matches('\n').to_string();
            shown.path = Some(label);
        }
    }
    blocks.into_iter().flat_map(|shown| split_at_paths(shown, handed)).collect()
}

/// `shown` cut where, after a blank line, a comment names another handed
/// file (`# tests/test_shop.py`): a model that writes several files in one
/// block heads each as it heads the first.
fn split_at_paths(shown: ShownFile, handed: &[HandedFile]) -> Vec<ShownFile> {
    let heads_file = |line: &str| comment_path(line).filter(|path| handed_under(path, handed).is_some());
    let mut out = vec![ShownFile { path: shown.path, text: String::new() }];
    let mut previous_blank = false;
    for line in shown.text.lines() {
        match heads_file(line).filter(|_| previous_blank && out.last().is_some_and(|last| last.path.is_some())) {
            Some(path) => out.push(ShownFile { path: Some(path), text: String::new() }),
            None => {
                let last = out.last_mut().expect("out starts with one file");
                last.text.push_str(line);
                last.text.push('\n');
            }
        }
        previous_blank = line.trim().is_empty();
    }
    out.retain(|shown| !shown.text.trim().is_empty());
    for shown in &mut out {
        shown.text = format!("{}\n", shown.text.trim_matches('\n'));
    }
    out
}

/// `reply` with its fences paired again where a model fenced a handed
/// file's path instead of its code ("```\nstats.js\n```\n<code>\n```"),
/// which leaves the code outside and pairs every later fence wrongly: the
/// lines after such a path block, up to the next fence, are the file's
/// block when they share a line with it (prose after a path does not).
fn realign_fences(reply: &str, handed: &[HandedFile]) -> String {
    let lines: Vec<&str> = reply.lines().collect();
    let is_fence = |line: &str| line.trim_start().starts_with("```");
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut in_block = false;
    let mut at = 0;
    while let Some(&line) = lines.get(at) {
        at += 1;
        if !is_fence(line) {
            out.push(line);
            continue;
        }
        if in_block {
            in_block = false;
            out.push(line);
            continue;
        }
        let path_block = match (lines.get(at), lines.get(at + 1)) {
            (Some(&path), Some(&close)) if is_fence(close) => {
                path_in(path).and_then(|label| handed_under(&label, handed)).map(|file| (path, file))
            }
            _ => None,
        };
        if let Some((path, file)) = path_block {
            let rest = &lines[at + 2..];
            let code = &rest[..rest.iter().position(|line| is_fence(line)).unwrap_or(rest.len())];
            let known: std::collections::HashSet<&str> =
                file.text.lines().map(str::trim).filter(|line| line.len() > 3).collect();
            if code.iter().any(|line| known.contains(line.trim())) {
                out.extend([path, "```"]);
                out.extend(code);
                out.push("```");
                // Past the path block, the code and the fence that closes it.
                at += 2 + code.len() + 1;
                continue;
            }
        }
        in_block = true;
        out.push(line);
    }
    out.join("\n")
}

/// The path a line outside code names, when that is all it says
/// (`calc.py`, `**src/lib.rs**`, `File: app.py:`).
fn path_in(line: &str) -> Option<String> {
    let line = line.trim();
    let words = line.strip_prefix("File:").unwrap_or(line).trim_matches(|c: char| "*`#: ".contains(c));
    looks_like_path(words).then(|| words.to_string())
}

/// The one path a sentence that introduces a block quotes ("Here's the
/// updated `test_slug.py` with the tests:"), as the 1.5B coder labels a
/// block when it explains its change before it.
fn introduced_path(line: &str) -> Option<String> {
    if !line.trim_end().ends_with(':') {
        return None;
    }
    let mut quoted = line.split('`').skip(1).step_by(2).filter(|span| looks_like_path(span));
    match (quoted.next(), quoted.next()) {
        (Some(path), None) => Some(path.to_string()),
        _ => None,
    }
}

/// The path a first line of code names in a comment (`# calc.py`, `// src/main.rs`).
fn comment_path(line: &str) -> Option<String> {
    let trimmed = line.trim();
    if !trimmed.starts_with(['#', '/', '-', ';']) {
        return None;
    }
    let words = trimmed.trim_start_matches(['#', '/', '-', ';', ' ']).trim_end_matches([':', ' ']);
    looks_like_path(words).then(|| words.to_string())
}

/// A path that heads code: a file name with an extension or a dotfile,
/// nothing but path characters.
fn looks_like_path(words: &str) -> bool {
    let name = words.rsplit('/').next().unwrap_or(words);
    words.chars().all(|c| c.is_alphanumeric() || "._-/".contains(c)) && (has_extension(name) || is_dotfile(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handed_file(path: &str, text: &str) -> HandedFile {
        let path = WorkspacePath { abs: path.into(), rel: path.to_string(), real_rel: path.to_string() };
        HandedFile::whole(path, text.to_string())
    }

    fn shown(path: Option<&str>, text: &str) -> ShownFile {
        ShownFile { path: path.map(str::to_string), text: text.to_string() }
    }

    #[test]
    fn a_sentence_that_quotes_one_path_and_introduces_a_block_labels_it() {
        let reply = "The tests:\n\nHere's the updated `test_slug.py` with the tests:\n```python\nX = 1\n```\n\n\
                     It reads `a.py` and `b.py`:\n```\nY = 2\n```\n\nSee `c.py`.\n```\nZ = 3\n```\n";
        assert_eq!(
            shown_files(reply),
            [shown(Some("test_slug.py"), "X = 1\n"), shown(None, "Y = 2\n"), shown(None, "Z = 3\n")]
        );
    }

    #[test]
    fn a_block_belongs_to_the_path_before_it_or_in_its_first_line() {
        let reply = "Here it is.\n\n**calc.py**\n```python\ndef add(a, b):\n    return a + b\n```\n\n\
                     ```\n# lib/util.py\nX = 1\n```\n\n```\nno path\n```\n";
        assert_eq!(
            shown_files(reply),
            vec![
                shown(Some("calc.py"), "def add(a, b):\n    return a + b\n"),
                shown(Some("lib/util.py"), "X = 1\n"),
                shown(None, "no path\n"),
            ]
        );
    }

    #[test]
    fn a_fences_language_on_the_line_below_it_is_not_code() {
        let reply = "mathutil.py\n```\npython\ndef is_even(n):\n    return n % 2 == 0\n```\n";
        assert_eq!(shown_files(reply), vec![shown(Some("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n")]);
        let word_alone = "notes.txt\n```\njson\n```\n";
        assert_eq!(shown_files(word_alone), vec![shown(Some("notes.txt"), "json\n")]);
    }

    #[test]
    fn a_sentence_before_a_block_is_not_its_path_and_a_cut_block_counts() {
        let reply = "To fix it, change main.py as follows.\n```\nprint(1)\n";
        assert_eq!(shown_files(reply), vec![shown(None, "print(1)\n")]);
    }

    #[test]
    fn a_block_that_holds_only_a_path_heads_the_next() {
        let reply = "```\napp.py\n```\n```\nX = 1\n```\n";
        assert_eq!(shown_files(reply), vec![shown(Some("app.py"), "X = 1\n")]);
    }

    #[test]
    fn one_block_holding_several_handed_files_is_cut_at_each_path() {
        let handed = [handed_file("shop/text.py", ""), handed_file("tests/test_shop.py", "")];
        let reply =
            "```python\n# shop/text.py\nimport re\n\n# tests/test_shop.py\nfrom shop.text import slugify\n```\n";
        assert_eq!(
            blocks_for(reply, &handed),
            vec![
                shown(Some("shop/text.py"), "import re\n"),
                shown(Some("tests/test_shop.py"), "from shop.text import slugify\n")
            ]
        );
        // A comment naming a file that was not handed over is code.
        let reply = "```python\n# shop/text.py\nimport re\n\n# see docs/slugs.md\nX = 1\n```\n";
        assert_eq!(blocks_for(reply, &handed).len(), 1);
    }

    #[test]
    fn a_reply_that_is_a_line_number_is_read_as_one() {
        assert_eq!(line_number("line 3"), Some(3));
        assert_eq!(line_number("13\n"), Some(13));
        assert_eq!(line_number("`Line 7.`"), Some(7));
        assert_eq!(line_number("It is line 12 that needs to change."), Some(12));
        assert_eq!(line_number("Test slug.py, line 17"), Some(17));
        assert_eq!(line_number("Line 3 or line 4."), None, "two lines named");
        assert_eq!(line_number("Line 3 reads `n = 1`."), None, "code with it");
        assert_eq!(line_number("return 3"), None);
        let file = "function f(user) {\n  return !user.on;\n}\n\nfunction g() {\n  return 1;\n}\n";
        let quoted_line = |reply| quoted_code(reply).and_then(|quoted| line_reading(file, &quoted));
        assert_eq!(quoted_line("```javascript\nreturn !user.on;\n```\n"), Some(2));
        assert_eq!(quoted_line("The line is `return !user.on;`."), Some(2));
        assert_eq!(quoted_line("```\n}\n```"), None, "two lines read so");
        assert_eq!(quoted_line("```\nreturn !user.off;\n```"), None, "no line reads so");
        assert_eq!(line_number("0"), None);
    }

    #[test]
    fn a_remark_under_a_code_file_is_no_content_but_a_heading_of_prose_is() {
        let reply = "```python\n# shop/models.py\n# No changes needed\n```\n```\n# README.md\n# Shop\n```\n";
        assert_eq!(shown_files(reply), vec![shown(Some("README.md"), "# Shop\n")]);
    }

    #[test]
    fn the_files_sharing_the_rarest_words_of_a_prompt_are_the_most_relevant() {
        let texts = [
            "def slugify(title):\n    \"\"\"The URL slug of a title: lowercase words.\"\"\"\n",
            "class Cart:\n    \"\"\"A cart of products.\"\"\"\n",
            "def tax(amount):\n    return amount * 0.07\n",
        ];
        let scores =
            relevance("Product URLs keep capital letters of titles; they must be lowercase.", texts.into_iter());
        assert!(scores[0] > scores[1] && scores[1] > 0.0 && scores[2] == 0.0, "{scores:?}");
        assert!(relevance("Fix it.", texts.into_iter()).iter().all(|score| *score == 0.0));
    }

    #[test]
    fn new_code_alone_is_an_addition_and_a_version_is_not() {
        let file = "def add(a, b):\n    return a + b\n";
        assert!(is_new_code(file, "def subtract(a, b):\n    return a - b\n"));
        assert!(!is_new_code(file, "def add(a, b):\n    return a - b\n"));
        assert!(!is_new_code(file, "app.py\n"));
    }

    #[test]
    fn only_code_that_declares_what_the_prompt_asks_for_is_new() {
        let file = "def add(a, b):\n    return a + b\n";
        let prompt = "Add a function subtract(a, b) to calc.py.";
        assert!(introduces_asked_name(prompt, file, "def subtract(a, b):\n    return a - b\n"));
        // A call of what exists, or a name the prompt does not use.
        assert!(!introduces_asked_name("How do I call add?", file, "x = add(1, 2)\nprint(x)\n"));
        assert!(!introduces_asked_name(prompt, file, "def minus(a, b):\n    return a - b\n"));
        assert!(!introduces_asked_name("Add subtraction.", file, "def subtract(a, b):\n    return a - b\n"));
    }

    #[test]
    fn a_block_with_every_line_changed_is_a_version_when_it_declares_what_the_file_does() {
        let file = "def greet(name):\n    return \"Hello, \" + name + \"!\"\n";
        let version = "def greet(name, greeting=\"Hello\"):\n    return greeting + \", \" + name + \"!\"\n";
        assert!(whole_version_likeness(file, version).is_some());
        assert_eq!(whole_version_likeness(file, &format!("\n{file}")), None);
        // New code beside the file's declares another name.
        let calc = "def add(a, b):\n    return a + b\n";
        assert_eq!(whole_version_likeness(calc, "def subtract(a, b):\n    return a - b\n"), None);
        // A part of a larger file is not the file.
        let two = format!("{file}\n\ndef part(name):\n    return name[:1]\n");
        assert_eq!(whole_version_likeness(&two, version), None);
        // Nor is other code of about the same size.
        assert_eq!(whole_version_likeness("import os\nprint(os.getcwd())\n", "x = [1, 2]\ny = sum(x)\n"), None);
        // The file shown without its head deletes nothing; without its
        // last line it does.
        let orders = "\"\"\"Orders.\"\"\"\n\nfrom shop.tax import tax\n\n\nclass Order:\n    def __init__(self, subtotal):\n        \
                      self.subtotal = subtotal\n\n    def total(self):\n        return tax(self.subtotal)\n\n    \
                      def paid(self):\n        return True\n";
        let without_head = orders.split_once("\n\n\n").unwrap().1;
        assert_eq!(whole_version_likeness(orders, without_head), None);
        assert!(headless(orders, without_head), "a copy, but for its head");
        assert!(!headless(orders, orders.split_once("class").unwrap().0), "the head alone is no copy");
        let without_last = orders.trim_end().rsplit_once('\n').unwrap().0;
        assert!(whole_version_likeness(orders, without_last).is_some());
    }

    #[test]
    fn the_code_a_sentence_quotes_is_the_line() {
        assert_eq!(inline_code("Line 7 should be `return math.sqrt(x)`"), "return math.sqrt(x)");
        assert_eq!(inline_code("`x = 1`"), "x = 1");
        assert_eq!(inline_code("    return a + b"), "    return a + b");
        // An unclosed backtick quotes nothing.
        assert_eq!(inline_code("Line 7 should be `return x"), "Line 7 should be `return x");
    }

    #[test]
    fn a_line_without_its_closing_colon_is_no_fix() {
        assert_eq!(words_changed("    if total <= LIMIT:", "if total <= LIMIT"), None);
        assert_eq!(words_changed("let x = 1;", "let x = 1"), None);
        assert_eq!(words_changed("    if total <= LIMIT:", "if total >= LIMIT:"), Some(1));
    }

    #[test]
    fn a_fixed_line_keeps_the_indentation_and_the_closing_of_the_line_it_replaces() {
        assert_eq!(as_line_of("    if len(text) <= limit:", "if len(text) < limit"), "    if len(text) < limit:");
        assert_eq!(as_line_of("\tx := f(a);", "x := f(b);"), "\tx := f(b);");
        assert_eq!(as_line_of("  } else {", "} else if (x) {"), "  } else if (x) {");
        assert_eq!(as_line_of("    return a + b", "return a - b"), "    return a - b");
    }

    #[test]
    fn an_import_of_one_name_for_another_renames_it_and_an_alias_does_not() {
        let old = "from config import load_config";
        assert_eq!(renamed_import(old, "from config import read_config"), Some(("load_config", "read_config")));
        assert_eq!(renamed_import(old, "from config import read_config as load_config"), None);
        assert_eq!(renamed_import(old, "from config import load_config, read_config"), None);
        assert_eq!(renamed_import("x = load_config()", "x = read_config()"), None);
    }

    #[test]
    fn a_name_is_used_by_code_not_by_a_comment_or_a_docstring() {
        let text = "\"\"\"Reads events; read_csv_events is gone.\"\"\"\n\n\
                    def load(path):\n    \"\"\"Not read_csv_events:\n    read_events.\"\"\"\n\
                    \x20   # read_csv_events was here\n    return RECIPES[path]\n";
        assert!(!code_uses(text, "read_csv_events"));
        assert!(code_uses(text, "RECIPES"));
        let names = top_level_names("RECIPES = {\nconst LIMIT = 3;\nif x == 1:\n    y = 2\ndef load(path):\n");
        let mut names: Vec<&str> = names.into_iter().collect();
        names.sort_unstable();
        assert_eq!(names, ["LIMIT", "RECIPES", "load"]);
    }

    #[test]
    fn a_file_name_with_one_letter_wrong_still_names_it() {
        assert!(one_edit_apart("trip.py", "trips.py"));
        assert!(one_edit_apart("trips.py", "trips.py"));
        assert!(one_edit_apart("tripz.py", "trips.py"));
        assert!(!one_edit_apart("trip.py", "strips.py"));
        assert!(!one_edit_apart("geo.py", "trips.py"));
    }

    #[test]
    fn a_line_fix_changes_a_few_words_of_a_line() {
        assert_eq!(words_changed("    return n % 2 == 1", "return n % 2 == 0"), Some(1));
        assert_eq!(words_changed("  return ids.length;", "return ids.length + 1;"), Some(2));
        assert_eq!(words_changed("def top_words(text, n=5):", "return top_words(text, n=5):"), None);
        assert_eq!(words_changed("def top_words(text, n=5):", "def top_words(text, n=10):"), Some(1));
        assert_eq!(words_changed("    if total > 100:", "if total >= 100:"), Some(1));
        assert_eq!(words_changed("import os", "import math"), None, "half the line is another line");
        assert_eq!(words_changed("x = 1", "x = 1"), None, "no change");
        let negated = "  return !user.prefs.emailNotifications;";
        assert_eq!(words_changed(negated, "return user.prefs.emailNotifications;"), Some(1), "a `!` dropped");
        assert_eq!(words_changed(negated, "return user.email;"), None, "another line");
        let message = "errors.push('Password must be at least 8 characters long.');";
        assert_eq!(words_changed("    errors.push('Password too short.');", message), Some(1), "a message said anew");
        assert_eq!(words_changed("    \"\"\"The rate.\"\"\"", "\"\"\"The rate of tax.\"\"\""), None, "a docstring");
        assert_eq!(words_changed("print('a', 'b')", "print('a', 'b', 'c')"), None, "code added between quotes");
        assert_eq!(words_changed("def greet(name):", "print(greet(\"world\"))"), None);
        assert_eq!(words_changed("    return total", "return total + tax"), Some(2), "an addition keeps the line");
        assert_eq!(words_changed("x = 1", "x = compute(a, b, c) + 1"), None, "more than doubled is another line");
        assert_eq!(
            words_changed("  title=$(grep -m1 '^# ' $f | sed 's/^# //')", "grep -m1 '^# ' $f | sed 's/^# //'"),
            None,
            "a quote"
        );
        assert_eq!(
            words_changed("    return total + shipping + 1", "return total + shipping"),
            Some(2),
            "the end dropped"
        );
        assert_eq!(
            words_changed("        distance_km(a[\"lon\"], a[\"lat\"])", "distance_km(a[\"lat\"], a[\"lon\"])"),
            Some(2),
            "operands swapped"
        );
    }

    #[test]
    fn a_change_that_only_adds_imports_nothing_uses_is_a_copy() {
        let stock = "def in_stock(item, stock):\n    return stock.get(item, 0) > 1\n";
        let unused = format!("from collections import defaultdict\n\n{stock}");
        assert!(adds_only_unused_imports(stock, &unused));
        let js = "function f(a) {\n  return a;\n}\n";
        assert!(adds_only_unused_imports(js, &format!("const fs = require(\"fs\");\n{js}")));
        // An import the code uses, a line changed with it, lines reordered:
        // changes.
        let uses = "def root(x):\n    return math.sqrt(x)\n";
        assert!(!adds_only_unused_imports(uses, &format!("import math\n{uses}")));
        let fixed = unused.replace("> 1", ">= 1");
        assert!(!adds_only_unused_imports(stock, &fixed));
        assert!(!adds_only_unused_imports("a = 1\nb = 2\n", "import os\nb = 2\na = 1\n"));
        assert!(!adds_only_unused_imports(stock, stock));
    }

    #[test]
    fn a_reply_that_ends_before_the_file_does_is_a_copy_unless_removal_is_asked() {
        let playlist = "function total(ids) {\n  return ids.length;\n}\n\nmodule.exports = { total };\n\n\
                        if (require.main === module) {\n  console.log(total([1]));\n}\n";
        let short = "function total(ids) {\n  return ids.length;\n}\n\nmodule.exports = { total };\n";
        assert!(stops_short(playlist, short));
        // One line dropped is a change as likely as a lapse; a fix above the
        // cut, the whole file kept, or nothing kept at all are no lapse.
        assert!(!stops_short("a = 1\nb = 2\n", "a = 1\n"));
        assert!(!stops_short(playlist, &short.replace("length", "length + 1")));
        assert!(!stops_short(playlist, playlist));
        assert!(!stops_short(playlist, "\n"));
        // A request that speaks of what goes asks for it gone.
        assert!(speaks_of_change("Drop the console.log at the end of playlist.js.", playlist, short));
        assert!(!speaks_of_change("totalDuration in playlist.js returns NaN. Can you fix it?", playlist, short));
    }

    #[test]
    fn declared_names_are_read_across_languages() {
        let text = "class Rectangle:\n    def area(self):\nfunction capitalize(word) {\npub fn main() {\nx = 1\n";
        let names = declared_names(text);
        assert_eq!(names, ["Rectangle", "capitalize", "main"].into_iter().collect());
        assert_eq!(declared_name("export default function capitalize(word) {"), Some("capitalize"));
        assert_eq!(declared_name("pub(crate) struct Cache {"), Some("Cache"));
        assert_eq!(declared_name("    \"\"\"The type checker runs here.\"\"\""), None);
        assert_eq!(declared_name("# a class of its own"), None);
    }

    #[test]
    fn an_import_goes_after_the_last_import_or_below_the_head_of_the_file() {
        assert_eq!(
            with_import("import os\nimport sys\n\nX = 1\n", "import math"),
            "import os\nimport sys\nimport math\n\nX = 1\n"
        );
        assert_eq!(
            with_import("def f():\n    return math.pi\n", "import math"),
            "import math\n\ndef f():\n    return math.pi\n"
        );
        assert_eq!(
            with_import("#!/usr/bin/env python3\n\"\"\"Stats.\n\nMore.\n\"\"\"\n\ndef f():\n    pass\n", "import math"),
            "#!/usr/bin/env python3\n\"\"\"Stats.\n\nMore.\n\"\"\"\n\nimport math\n\ndef f():\n    pass\n"
        );
        assert_eq!(
            with_import("from a import (\n    b,\n)\nX = b\n", "import math"),
            "from a import (\n    b,\n)\nimport math\nX = b\n"
        );
        // An import inside a function is not the file's.
        assert_eq!(with_import("def f():\n    import os\n", "import math"), "import math\n\ndef f():\n    import os\n");
    }

    #[test]
    fn new_files_beside_a_fix_that_nothing_uses_are_unasked() {
        let text = "def slugify(title):\n    return title\n";
        let handed = [handed_file("shop/text.py", text)];
        let edit = |path: &str, new: &str| {
            ("Edit", serde_json::json!({"file_path": path, "old_string": "x", "new_string": new}))
        };
        let write = |path: &str, content: &str| ("Write", serde_json::json!({"file_path": path, "content": content}));
        let exists = |path: &str| path == "shop/text.py";
        let fix = edit("shop/text.py", "    return title.lower()");
        let views = write("shop/views.py", "from .models import Product\n");
        let models = write("shop/models.py", "class Product:\n    pass\n");
        // views.py uses models.py, but nothing uses views.py: both are unasked.
        let changes = [fix, views.clone(), models];
        let fix_it = "Product URLs keep capital letters. Fix it.";
        assert_eq!(unasked_new_files(fix_it, &changes, &handed, exists), ["shop/views.py", "shop/models.py"]);
        // Unless the request speaks of them.
        let asked = "Add a Product model and a view for it.";
        assert!(unasked_new_files(asked, &changes, &handed, exists).is_empty());
        // A new module the fix imports is part of it.
        let uses = edit("shop/text.py", "from shop.casing import lower\n");
        let casing = write("shop/casing.py", "def lower(s):\n    return s.lower()\n");
        assert!(unasked_new_files(fix_it, &[uses, casing], &handed, exists).is_empty());
        // New files alone are the change.
        assert!(unasked_new_files(fix_it, &[views], &handed, exists).is_empty());
        assert!(speaks_of_file("The test is wrong.", "test_pricing.py"));
        assert!(speaks_of_file("Fix test_pricing.py.", "test_pricing.py"));
        assert!(!speaks_of_file("Prices are wrong.", "test_pricing.py"), "pricing is no price");
    }

    #[test]
    fn the_answer_a_worked_out_reply_ends_with() {
        let reply = "MAX_RETRIES = 7\nrange(MAX_RETRIES + 1) makes 8 attempts: the first and 7 retries.\n\nAnswer: 7\n";
        assert_eq!(answer_line(reply).as_deref(), Some("7"));
        assert_eq!(answer_line("Steps…\n**Answer:** `write_bundle`").as_deref(), Some("`write_bundle`"));
        assert_eq!(answer_line("The answer: it retries 7 times."), None);
        assert_eq!(answer_line("Answer:\n"), None);
    }

    #[test]
    fn an_import_line_is_added_only_to_the_one_file_that_uses_it() {
        let stats = handed_file("stats.py", "def sd(xs):\n    return math.sqrt(xs)\n");
        let main = handed_file("main.py", "from stats import sd\nprint(sd([1]))\n");
        let current: Vec<(&HandedFile, String)> = vec![(&stats, stats.text.clone()), (&main, main.text.clone())];
        let lines = |reply: &str| reply.lines().map(str::to_string).collect::<Vec<_>>();
        let (name, input) = added_import(&current, &lines("import math")).expect("an Edit");
        assert_eq!(name, "Edit");
        assert_eq!(input["file_path"], "stats.py");
        assert_eq!(input["new_string"], "import math\n\ndef sd(xs):\n    return math.sqrt(xs)\n");
        // Nothing uses it, or it is there already: no edit.
        assert!(added_import(&current, &lines("import json")).is_none());
        assert!(added_import(&current[1..], &lines("from stats import sd")).is_none());
        // Not an import at all.
        assert!(added_import(&current, &lines("math.sqrt(xs)")).is_none());
    }

    #[test]
    fn the_part_of_a_long_file_is_the_declaration_of_a_name_asked_about() {
        let python = "class Cart:\n    @property\n    def total(self):\n        return 1\n\n    def tax(self):\n        \
                      return 2\n\n\ndef other():\n    pass\n";
        let (part, at) = declaring_part(python, &["total"]).expect("a part");
        assert_eq!(part, "    @property\n    def total(self):\n        return 1\n");
        assert_eq!(at, Part { first: 2, total: 11, name: "total".to_string() });
        let js = "const a = 1;\n\nfunction maxOf(xs) {\n  let best = xs[0];\n  return best;\n}\n\nfunction f() {}\n";
        let (part, at) = declaring_part(js, &["maxOf"]).expect("a part");
        assert_eq!(part, "function maxOf(xs) {\n  let best = xs[0];\n  return best;\n}\n");
        assert_eq!(at.first, 3);
        // A name used but not declared has no part.
        assert_eq!(declaring_part(python, &["Order"]), None);
    }

    #[test]
    fn a_word_is_replaced_whole_and_a_rename_is_one_declaration_renamed() {
        assert_eq!(replace_word("f(f_x, xf, f) # f", "f", "g"), "g(f_x, xf, g) # g");
        assert_eq!(replace_word("ff", "f", "g"), "ff");
        let handed = [handed_file("cart.py", "def calc(a):\n    return a\n")];
        let edit = |new: &str| {
            ("Edit", serde_json::json!({"file_path": "cart.py", "old_string": "def calc(a):", "new_string": new}))
        };
        let renamed = |new: &str| renames(&[changed_file(&edit(new), &handed).expect("a change")], &handed);
        assert_eq!(renamed("def total(a):"), vec![("calc".to_string(), "total".to_string())]);
        // Its parameters changed too: no mere rename.
        assert!(renamed("def total(a, b):").is_empty());
    }

    #[test]
    fn a_code_comment_is_not_a_path() {
        assert_eq!(comment_path("# Seconds to wait for the server."), None);
        assert_eq!(comment_path("// main.rs"), Some("main.rs".into()));
        assert_eq!(path_in("File: `src/app.py`:"), Some("src/app.py".into()));
        assert_eq!(path_in("app.py is fixed."), None);
    }

    #[test]
    fn a_change_to_comments_and_docstrings_alone_is_no_change_to_code() {
        let module = "\"\"\"Reading events.\n\nMore.\n\"\"\"\nimport csv\n\n\ndef read(path):\n    \"\"\"Rows of path.\"\"\"\n    return list(csv.reader(open(path)))  # all of them\n";
        let docstring_split = module.replacen("\"\"\"Reading events.", "\"\"\"\nReading events.", 1);
        assert!(comments_only_differ("events.py", module, &docstring_split));
        let commented = module.replace("    return list", "    # Read it all.\n    return  list");
        assert!(comments_only_differ("events.py", module, &commented), "a comment added, spacing changed");
        let fixed = module.replace("list(csv.reader", "list(csv.DictReader");
        assert!(!comments_only_differ("events.py", module, &fixed));
        assert!(!comments_only_differ("events.py", module, module), "no change at all is a copy, not this");
        // A print commented out is a change to the code.
        let script = "x = 1\nprint(x)\n";
        assert!(!comments_only_differ("run.py", script, "x = 1\n# print(x)\n"));
        // A string assigned is code, not a docstring.
        let assigned = "HELP = \"\"\"\nusage\n\"\"\"\n";
        assert!(!comments_only_differ("cli.py", assigned, &assigned.replace("usage", "Usage")));
        let rust = "//! Helpers.\n\npub fn one() -> u8 {\n    1\n}\n";
        assert!(comments_only_differ("src/lib.rs", rust, &rust.replace("//!", "///")));
        assert!(!comments_only_differ("src/lib.rs", rust, &rust.replace("    1", "    2")));
        // Where comments are not known, every change counts.
        assert!(!comments_only_differ("notes.md", "# A\n", "# B\n"));
        // Unless the request speaks of what the comments say.
        let reworded = module.replace("Rows of", "Records of");
        assert!(speaks_of_change("The docstring of read says Rows; make it say Records.", module, &reworded));
        assert!(!speaks_of_change("Fix read.", module, &commented));
    }

    #[test]
    fn only_the_parts_kept_are_left_out_of_changes() {
        let handed = [handed_file("app.ini", "[web]\nlevel = INFO\n[worker]\nlevel = INFO\n")];
        let both: Change = (
            "Edit",
            serde_json::json!({ "file_path": "app.ini", "old_string": "INFO\n[worker]\nlevel = INFO", "new_string": "DEBUG\n[worker]\nlevel = DEBUG" }),
        );
        let new_file: Change = ("Write", serde_json::json!({ "file_path": "web.md", "content": "web\n" }));
        let (changes, spared) = spare_kept(vec![both.clone(), new_file.clone()], &handed, &["web".to_string()]);
        assert_eq!(changes[0].1["new_string"], "[web]\nlevel = INFO\n[worker]\nlevel = DEBUG\n");
        assert_eq!(changes[1], new_file, "a new file has no part to keep");
        assert_eq!(spared[0].1, ["web"]);
        assert_eq!(spare_kept(vec![both.clone()], &handed, &[]).0, [both]);
    }

    #[test]
    fn a_reply_of_code_blocks_alone_says_nothing_in_words() {
        assert!(only_code("```python\nlisten_address()\n```\n"));
        assert!(!only_code("It listens on 8000:\n```python\n\"port\": 8000,\n```\n"));
        assert!(!only_code("8000"));
    }

    #[test]
    fn of_many_files_the_one_to_ask_for_declares_what_the_prompt_names_or_has_most_to_do_with_it() {
        let test = "from shop.text import slugify\n\n\ndef test_slug():\n    assert slugify(\"A B\") == \"a-b\"\n";
        let handed = [
            handed_file("shop/cart.py", "class Cart:\n    \"\"\"Products to buy.\"\"\"\n"),
            handed_file("shop/orders.py", "class Order:\n    def total(self):\n        return 1\n"),
            handed_file(
                "shop/shipping.py",
                "def shipping_cost(subtotal):\n    \"\"\"Orders of 50 or more ship free.\"\"\"\n",
            ),
            handed_file("shop/text.py", "def slugify(title):\n    return \"-\".join(title.split())\n"),
            handed_file("tests/test_shop.py", test),
        ];
        let copy = format!("```python\n{test}```\n");
        let paths = |files: Vec<&HandedFile>| files.iter().map(|f| f.path.rel.clone()).collect::<Vec<_>>();
        // The test copied back: of four others, the one that declares slugify.
        let (echoed, asked) =
            overlooked(&copy, "slugify keeps capital letters. Fix it.", &handed, &[]).expect("others");
        assert_eq!(paths(asked), ["shop/text.py"]);
        assert!(echoed.is_empty(), "picked from many, the file is shown alone");
        // Named by none: the one that shares the prompt's rarest words.
        let (_, asked) =
            overlooked(&copy, "Big orders should ship free but are charged. Fix it.", &handed, &[]).expect("others");
        assert_eq!(paths(asked), ["shop/shipping.py"]);
        // Nothing to tell them apart: no file to ask for.
        assert!(overlooked(&copy, "It is broken. Fix it.", &handed, &[]).is_none());
        // The code the prompt names copied back: the README it names.
        let flag = [
            handed_file("README.md", "# cleanup\n\nOptions:\n- `--verbose`\n"),
            handed_file("cleanup.py", "import argparse\nparser.add_argument(\"--dry-run\")\n"),
        ];
        let cleanup = format!("```python\n{}```\n", flag[1].text);
        let prompt = "cleanup.py gained a --dry-run flag but the README doesn't mention it. Add it.";
        let (_, asked) = overlooked(&cleanup, prompt, &flag, &[]).expect("the README");
        assert_eq!(paths(asked), ["README.md"]);
        assert!(overlooked(&cleanup, "cleanup.py ignores --dry-run. Fix it.", &flag, &[]).is_none());
        // A test that fails until the change is made is no place for it.
        let two = [handed[0].clone(), handed[4].clone()];
        let cart = format!("```python\n{}```\n", handed[0].text);
        let prompt = "Big orders are charged. Fix it.";
        assert!(overlooked(&cart, prompt, &two, &[]).is_some());
        assert!(overlooked(&cart, prompt, &two, &["tests/test_shop.py".to_string()]).is_none());

        // A reply that changed nothing: the code file most to do with the
        // prompt, when the prompt and the reply name none.
        let prompt = "Big orders should ship free but are charged for shipping.";
        let asked = file_to_ask_for(prompt, "```\n```\n", &handed, &[]).expect("a file");
        assert_eq!(asked.path.rel, "shop/shipping.py");
        assert!(file_to_ask_for("Fix the bug.", "", &handed, &[]).is_none());
        // A reply that repeats which tests fail: not the test, but the code
        // the prompt has most to do with.
        let failing = ["tests/test_shop.py".to_string()];
        let repeated = "The change is not done: the tests in tests/test_shop.py fail.";
        assert_eq!(file_to_ask_for(prompt, repeated, &handed, &[]).expect("a file").path.rel, "tests/test_shop.py");
        let asked = file_to_ask_for(prompt, repeated, &handed, &failing).expect("a file");
        assert_eq!(asked.path.rel, "shop/shipping.py");
    }

    #[test]
    fn the_function_shown_alone_is_the_one_the_prompt_names_else_the_one_the_reply_quotes() {
        let text = "import re\n\n\ndef slugify(title):\n    words = re.findall(r\"\\w+\", title)\n    return \"-\".join(words)\n\n\n\
                    def excerpt(text, limit=80):\n    if len(text) <= limit:\n        return text\n    return text[:limit]\n";
        let file = handed_file("text.py", text);
        let part_name = |found: Option<HandedFile>| found.and_then(|f| f.part).map(|part| part.name);
        let quoted = "```python\ndef slugify(title):\n    words = re.findall(r\"\\w+\", title)\n```\n";
        let unnamed = "Product URLs keep capital letters. Fix it.";
        assert_eq!(part_name(asked_function(unnamed, quoted, &[&file])), Some("slugify".to_string()));
        // The prompt's name comes first.
        assert_eq!(part_name(asked_function("excerpt cuts too much.", quoted, &[&file])), Some("excerpt".to_string()));
        // A line that declares nothing points at no function.
        assert_eq!(part_name(asked_function(unnamed, "return \"-\".join(words)", &[&file])), None);
    }

    #[test]
    fn a_change_that_drops_what_the_file_declares_is_unmeant_unless_the_request_names_it() {
        let text = "function truncate(str, max) {\n  return str.slice(0, max);\n}\n\nfunction wordCount(str) {\n  return str.split(' ').length;\n}\n\nmodule.exports = { truncate, wordCount };\n";
        // The 0.5B's text.js: wordCount and the exports made a test.
        let tested = text.split_once("function wordCount").unwrap().0.to_string()
            + "function testTruncate() {\n  console.log(truncate('abc', 2));\n}\n";
        let fix = "Fix truncate.";
        assert_eq!(dropped_declarations(fix, text, &tested), Some(vec!["wordCount".to_string()]));
        // Only a removal the request names is meant.
        assert_eq!(dropped_declarations("Remove wordCount: nothing calls it.", text, &tested), None);
        assert_eq!(dropped_declarations("wordCount is dead weight: fold it into truncate.", text, &tested), None);
        // Renamed, or kept, a declaration is not dropped.
        let renamed = text.replace("wordCount", "countWords");
        assert_eq!(dropped_declarations(fix, text, &renamed), None);
        assert_eq!(dropped_declarations(fix, text, &text.replace("max);", "max - 1);")), None);
    }
}
