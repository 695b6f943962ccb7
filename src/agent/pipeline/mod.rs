//! The real-project pipeline, for small models on projects larger than one
//! message: one general path, the same for every language the code map reads.
//!
//! 1. **Map** (`crate::codemap`): the workspace's definitions, kept current.
//! 2. **Intent**: the model says whether the request asks for a change or
//!    an answer, its reply held by a grammar to those two words and asked
//!    in both orders; a model that picks by the order is undecided, and a
//!    question mark in the request's prose decides.
//! 3. **Localize** ([`localize`], [`crate::codemap::rank`]): definitions ranked by the
//!    names, words and references of the request, and by the names the
//!    model guesses the code uses for it; the model chooses among the best
//!    few, its reply held by a grammar to their names, and the choice is
//!    read as a Read call. A question is answered from the chosen code and
//!    what a script of its example prints on the project.
//! 4. **Edit** ([`edit`], [`changing`]): the chosen definition is shown
//!    with the imports it uses; the reply's block that holds it replaces
//!    its byte range. Where the check ([`check`], [`checking`]) crashes,
//!    the project's functions its traceback passes through are shown and
//!    varied first; where it is the project's failing tests, the lines only
//!    they run point to the definition ([`localize`]).
//! 5. **Verify** ([`verify`]): the file must still parse, still define it,
//!    and change; where there is a check, it must pass.
//! 6. **Select** ([`trying`], [`changing`]): small variants of the code
//!    that pass the check, told apart by what the code prints; then the
//!    greedy version; after a version that changed nothing, the ask for the
//!    one line to change; then sampled ones, each told why the last was
//!    refused, within a budget of model calls and seconds. The first
//!    verified one is proposed as an Edit, which the user approves as any;
//!    a Stop hook that blocks (the project's tests) sends the pipeline round
//!    again with its reason.
//!
//! Every round is in the history and the session file: the choice with its
//! Read, each refused candidate with the reason, the Edit with its result.

mod answer;
mod changing;
mod check;
mod checking;
mod edit;
mod examples;
mod expect;
mod expecting;
mod loading;
mod localize;
mod neighbours;
mod probing;
mod reading;
mod test_uses;
mod traced;
mod trying;
mod variants;
mod verify;
mod watchers;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::turn::Generation;
use super::whole_file::{FromPipeline, prompt_of};
use super::{Conversation, TurnOutcome};
use crate::codemap::{DefKind, Definition, FileMap};
use crate::config::ToolProfile;
use crate::protocol::{AgentStatus, Block, Event, Message, PermissionMode, Role, StopReason, Usage};

const SYSTEM: &str = "You are a coding assistant working in a large project. You are shown the parts of it that \
matter to the user's request.";

/// A definition the model may choose, owned: the map is refreshed between turns.
#[derive(Debug, Clone)]
struct Candidate {
    path: String,
    qualified: String,
    kind: DefKind,
    lines: (usize, usize),
    doc: Option<String>,
    /// The request names it.
    named: bool,
}

/// Lines of each definition's code the choice shows: enough for a small
/// model to see what it does, few enough for six of them.
const EXCERPT_LINES: usize = 8;

impl Candidate {
    /// One entry of the list the model chooses from: where it is, its
    /// docstring's first line, and its first lines of code.
    fn listed(&self, text: Option<&str>) -> String {
        let doc = self.doc.as_deref().map(|d| format!(" — {d}")).unwrap_or_default();
        let head = format!("{} `{}` in {}{doc}", self.kind.name(), self.qualified, self.path);
        let Some(text) = text else { return head };
        let (first, last) = self.lines;
        let lines: Vec<&str> = text.lines().skip(first - 1).take((last + 1 - first).min(EXCERPT_LINES)).collect();
        let more = if last + 1 - first > EXCERPT_LINES { "\n    ..." } else { "" };
        format!("{head}\n```\n{}{more}\n```", lines.join("\n"))
    }
}

/// A definition a change may replace, with its file as it is now.
#[derive(Clone)]
struct Target {
    path: String,
    text: String,
    file: FileMap,
    at: usize,
}

impl Target {
    fn definition(&self) -> &Definition {
        &self.file.definitions[self.at]
    }

    fn qualified(&self) -> String {
        self.definition().qualified(self.file.language)
    }

    fn old(&self) -> &str {
        &self.text[self.definition().range.clone()]
    }

    fn shown(&self) -> String {
        edit::shown(&self.path, &self.text, &self.file, self.definition())
    }

    /// Whether `other` is the same definition: reached as a candidate and
    /// as another candidate's callee, it is one.
    fn is(&self, other: &Target) -> bool {
        self.path == other.path && self.definition().range == other.definition().range
    }
}

/// Rounds a turn makes at most: the first, and those a blocking Stop hook
/// sends it back for.
const MAX_ROUNDS: usize = 3;

/// Tokens a check, a probe or an expected output may take: a few lines.
const SCRIPT_TOKENS: u32 = 400;

/// Why a turn of the pipeline stopped early: its outcome.
type Stop = TurnOutcome;

impl Conversation {
    /// One turn of the pipeline. A request the map finds nothing for goes
    /// the way it went before the pipeline: the whole-file way with the
    /// `whole_files` profile, tools otherwise.
    ///
    /// For a workspace whose files fit in one message (`small`), the
    /// pipeline leads only where the project's tests fail on the code as it
    /// is, and changes the code only where a change passes the check they
    /// make: a small model's whole-file change is a guess no test holds it
    /// to, while the check, the variants and the candidates find the one
    /// that passes. A question (after its run on the project), a request no
    /// test fails for, and one no checked change was found for go the
    /// whole-file way, which can add code where the pipeline only replaces
    /// a definition.
    pub(super) async fn pipeline_turn(
        &mut self,
        selection: Option<super::whole_file::Selection>,
        small: bool,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let prompt = prompt_of(&self.history);
        let settings = self.settings.pipeline.clone();
        // What the pipeline records from here on is set aside when the
        // whole-file way takes the turn over.
        let aside = self.history.len();
        let mut usage = Usage::default();
        // A Stop hook that blocks (a project's tests, say) sends the pipeline
        // round again, its reason added to the request.
        let mut request = prompt.clone();
        let mut wants_change: Option<bool> = None;
        let mut stop_hook_active = false;
        let mut rounds = 0;
        // The project's tests that fail before any change, where they make the check.
        let mut failing_tests: Vec<String> = Vec::new();
        // Each round a Stop hook sent back: what it answered, and why.
        let mut earlier: Vec<String> = Vec::new();
        self.code_names.clear();
        loop {
            rounds += 1;
            let refreshed = self.code_map.refresh(&self.workspace);
            let mut candidates = self.candidates(&request, settings.choices.max(1));
            tracing::info!(
                files = refreshed.files,
                parsed = refreshed.parsed,
                candidates = candidates.len(),
                "pipeline"
            );
            if small && rounds == 1 {
                if self.runs_failing_tests() {
                    failing_tests = match self.failing_tests_now(&candidates, cancel).await {
                        Ok(tests) => tests,
                        Err(mut stop) => {
                            stop.usage += usage;
                            return stop;
                        }
                    };
                }
                if failing_tests.is_empty() {
                    let settled = match &selection {
                        Some(selection) => self.question_run(selection, aside, &candidates, &mut usage, cancel).await,
                        None => Ok((None, None)),
                    };
                    let (intent, ran) = match settled {
                        Ok(settled) => settled,
                        Err(mut stop) => {
                            stop.usage += usage;
                            return stop;
                        }
                    };
                    let from = FromPipeline { aside, intent, ran };
                    return self.whole_file_instead(selection, from, usage, cancel).await;
                }
            }
            if candidates.is_empty() && rounds == 1 {
                self.notify("[the code map finds nothing the request names — working with tools]");
                return match (selection, self.tools.profile()) {
                    (Some(selection), ToolProfile::WholeFiles) => self.whole_file_turn(selection, cancel).await,
                    _ => Box::pin(self.turn_loop(cancel)).await,
                };
            }
            if candidates.is_empty() {
                let text = "The code map finds nothing the check's report names: nothing more was changed.".to_string();
                return TurnOutcome { stop_reason: StopReason::EndTurn, text, usage };
            }
            let system = SYSTEM.to_string();
            let (base, _) = self.prompt_messages(self.backend.count_tokens(&system));
            // Only the first round stands on what the tests found: the
            // rounds a Stop hook sends back carry its reason instead.
            let checked_only = small && rounds == 1;
            if rounds == 1 && settings.guess_names && self.budget.allows_call() {
                match self.guess_code_names(&system, &base, &mut usage, cancel).await {
                    Ok(names) => self.code_names = names,
                    Err(mut stop) => {
                        stop.usage += usage;
                        return stop;
                    }
                }
                candidates = self.candidates(&request, settings.choices.max(1));
            }
            self.notify(&format!(
                "[code map: {} files, {} parsed now; the definitions that match the request best: {}]",
                refreshed.files,
                refreshed.parsed,
                candidates.iter().map(|c| format!("{} in {}", c.qualified, c.path)).collect::<Vec<_>>().join(", ")
            ));
            let outcome = async {
                let change = match wants_change {
                    Some(change) => change,
                    None => {
                        self.policy.mode != PermissionMode::Plan
                            && self.ask_intent(&system, &base, &mut usage, cancel).await?
                    }
                };
                wants_change = Some(change);
                if checked_only && !change {
                    return Ok(None);
                }
                let chosen = self.choose(&system, &base, &candidates, change, &mut usage, cancel).await?;
                if change {
                    let failing = failing_tests.as_slice();
                    self.change(
                        &system,
                        &base,
                        &request,
                        &candidates,
                        chosen,
                        checked_only,
                        failing,
                        &mut usage,
                        cancel,
                    )
                    .await
                } else {
                    self.answer(&system, &base, &candidates, chosen, &mut usage, cancel).await.map(Some)
                }
            }
            .await;
            let mut outcome = match outcome {
                Ok(Some(outcome)) => outcome,
                Ok(None) => {
                    let from = FromPipeline { aside, intent: None, ran: None };
                    return self.whole_file_instead(selection, from, usage, cancel).await;
                }
                Err(stop) => stop,
            };
            if outcome.stop_reason == StopReason::EndTurn {
                let reason = match self.why_not_done(stop_hook_active, &outcome.text, cancel).await {
                    Ok(reason) => reason,
                    Err(mut stop) => {
                        stop.usage += usage;
                        return stop;
                    }
                };
                if let Some(reason) = reason {
                    if rounds < MAX_ROUNDS && self.budget.allows_call() {
                        stop_hook_active = true;
                        self.record(Message::user_text(super::turn::sent_back(&reason)));
                        self.notify("[not done: a Stop hook or the tests sent the model back — localizing again with the reason…]");
                        let first = |text: &str| text.trim().lines().next().unwrap_or_default().to_string();
                        earlier.push(format!("{} Then: {}", first(&outcome.text), first(&reason)));
                        request = format!("{prompt}\nAfter the last change, a check still fails: {}", reason.trim());
                        wants_change = Some(true);
                        continue;
                    }
                }
            }
            // What an earlier round changed stands in the files: the
            // answer says so, whatever the last round found.
            if !earlier.is_empty() {
                outcome.text = format!("Earlier in this turn: {}\n\n{}", earlier.join("\n"), outcome.text);
            }
            outcome.usage += usage;
            return outcome;
        }
    }

    /// Whether the project's failing tests may make the check: they run
    /// as Bash calls, which the mode must allow.
    fn runs_failing_tests(&self) -> bool {
        let pipeline = &self.settings.pipeline;
        pipeline.tests_first && pipeline.check && self.may_run_commands()
    }

    /// The project's Python tests that fail on the code as it is, among
    /// those that import what `candidates` define or their modules, run as
    /// the whole-file way runs those it hands over (a Bash call), as
    /// pytest names them: none where no such test fails.
    async fn failing_tests_now(
        &mut self,
        candidates: &[Candidate],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, Stop> {
        /// Test files run at most: those of a large project that import the
        /// code may be many, and each run is the turn's time.
        const MAX_TEST_FILES: usize = 5;
        let imported = |words: &[String]| {
            candidates.iter().any(|c| {
                let name = c.qualified.split('.').next().unwrap_or_default();
                let module = c.path.rsplit('/').next().unwrap_or_default().split('.').next().unwrap_or_default();
                words.iter().any(|word| word == name || word == module)
            })
        };
        let paths: Vec<String> = self
            .code_map
            .files()
            .filter(|(path, map)| crate::codemap::rank::is_aside(path) && imported(&map.imported))
            .map(|(path, _)| path.to_string())
            .take(MAX_TEST_FILES)
            .collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        Ok(self.failing_tests(&paths, cancel).await?.map(|failure| failure.tests).unwrap_or_default())
    }

    /// For a small workspace's turn the whole-file way takes: the model's
    /// word on whether the request asks for a change, asked as that way
    /// asks it, and for a question, what the answer is shown of a run on
    /// the project: the program the request quotes, run on a copy under
    /// the tracer (see [`traced`]), else a script the model writes (see
    /// [`Self::experiment`]), where the code the request is about has a
    /// runner. `(None, None)` where questions are not run: the whole-file
    /// way then asks the intent itself.
    async fn question_run(
        &mut self,
        selection: &super::whole_file::Selection,
        aside: usize,
        candidates: &[Candidate],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(Option<Option<bool>>, Option<String>), Stop> {
        let runs = self.settings.pipeline.questions_run && self.policy.mode != PermissionMode::Plan;
        let prompt = prompt_of(&self.history[..aside]);
        // The program the request quotes runs with no script to write:
        // tiny models too are shown its run.
        let quoted = traced::quoted_python_run(&prompt, self.workspace.root()).filter(|_| runs);
        // A tiny model's scripts printed nothing of use (the 0.5B's runs of
        // the question tasks: the same answers, twice the seconds).
        let tiny = self.backend.parameters().is_some_and(|p| p < crate::config::TINY_MODEL_PARAMETERS);
        let target = candidates
            .first()
            .filter(|_| runs && !tiny)
            .and_then(|candidate| self.candidate_target(candidate))
            .filter(|target| self.check_runner(target.file.language).is_some());
        if quoted.is_none() && target.is_none() {
            return Ok((None, None));
        }
        let intent = self.whole_file_intent(selection, aside, usage, cancel).await?;
        let question = intent.map_or_else(|| super::whole_file::asks_question(&prompt), |change| !change);
        if !question {
            return Ok((Some(intent), None));
        }
        if let Some(words) = quoted {
            if let Some(shown) = self.traced_run(&words, cancel).await? {
                return Ok((Some(intent), Some(shown)));
            }
        }
        let Some(target) = target else { return Ok((Some(intent), None)) };
        // The script is asked with the files handed over, as the answer
        // will be: told only how to load the project, the 0.5B printed
        // `main.some_value`, an attribute it made up.
        let (system, base) = self.whole_file_asking(selection, aside, true);
        let ran = self.experiment(&system, &base, &target, candidates, usage, cancel).await?;
        Ok((Some(intent), ran.map(|(script, printed)| super::whole_file::ran_on_project(&script, &printed))))
    }

    /// The whole-file way with `selection`, where the pipeline took no
    /// turn of a small workspace: what it recorded from `aside` on stays
    /// in the history and the session, but out of the whole-file asks.
    async fn whole_file_instead(
        &mut self,
        selection: Option<super::whole_file::Selection>,
        from: FromPipeline,
        usage: Usage,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let Some(selection) = selection else { return Box::pin(self.turn_loop(cancel)).await };
        self.from_pipeline = Some(from);
        let mut outcome = self.whole_file_turn(selection, cancel).await;
        outcome.usage += usage;
        outcome
    }

    /// Makes `name` a call of the reply in `generation`, records both, and
    /// runs the call (approved as any): whether it succeeded, and its
    /// output. `Err` when the turn was cancelled meanwhile.
    async fn harness_call(
        &mut self,
        mut generation: Generation,
        name: &str,
        mut input: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<(bool, String), Stop> {
        // A command's time limit is cut to the turn's deadline; one that
        // names none has the Bash tool's shipped default.
        if let Some(fields) = input.as_object_mut().filter(|_| name == "Bash") {
            let command = fields.get("command").and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
            match self.in_copy(&command) {
                Ok(command) => fields.insert("command".into(), json!(command)),
                Err(why) => {
                    self.notify(&format!("[not run: {why}]"));
                    return Ok((false, why));
                }
            };
            let requested = fields.get("timeout_ms").and_then(serde_json::Value::as_u64);
            let requested = requested.unwrap_or(crate::config::DEFAULT_COMMAND_TIMEOUT_MS);
            fields.insert("timeout_ms".into(), json!(self.budget.command_timeout_ms(requested)));
        }
        self.add_harness_call(&mut generation, name, input);
        let Generation { blocks, mut calls, usage, .. } = generation;
        self.record_with_usage(Message { role: Role::Assistant, blocks }, Some(usage));
        let (mut results, cancelled) = self.run_calls(&mut calls, cancel).await;
        self.as_workspace_output(&mut results);
        let succeeded = results.iter().any(|b| matches!(b, Block::ToolResult { is_error: false, .. }));
        let output = results
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { output, .. } => Some(output.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        self.record(Message { role: Role::User, blocks: results });
        if cancelled {
            return Err(TurnOutcome {
                stop_reason: StopReason::Cancelled,
                text: String::new(),
                usage: Usage::default(),
            });
        }
        Ok((succeeded, output))
    }

    /// The model's reply to `ask` after the request, one call of the
    /// budget, bounded to [`SCRIPT_TOKENS`]: a script or an output asked
    /// for, which a small model that rambles would write on for minutes.
    /// The reply as generated (not yet recorded) and its text.
    pub(super) async fn ask_short(
        &mut self,
        system: &str,
        base: &[Message],
        ask: &str,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(Generation, String), Stop> {
        self.ask_bounded(system, base, ask, SCRIPT_TOKENS, usage, cancel).await
    }

    /// [`Conversation::ask_short`] for the `asked`-th ask of one script
    /// (from 0): the first greedy, each later one sampled, so that it is
    /// not the reply set aside again.
    pub(super) async fn ask_script(
        &mut self,
        system: &str,
        base: &[Message],
        ask: &str,
        asked: usize,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(Generation, String), Stop> {
        self.resample = (asked > 0).then_some(asked as u32);
        let reply = self.ask_short(system, base, ask, usage, cancel).await;
        self.resample = None;
        reply
    }

    /// [`Conversation::ask_short`] for a reply of at most `max_tokens`.
    pub(super) async fn ask_bounded(
        &mut self,
        system: &str,
        base: &[Message],
        ask: &str,
        max_tokens: u32,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(Generation, String), Stop> {
        let mut messages = base.to_vec();
        super::whole_file::after_prompt(&mut messages, ask);
        self.events.emit(Event::Status { status: AgentStatus::Thinking });
        self.reply_max_tokens = Some(max_tokens);
        let generation = self.whole_file_reply(system, messages, cancel).await;
        self.reply_max_tokens = None;
        let generation = generation?;
        *usage += generation.usage;
        let reply = Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text();
        Ok((generation, reply))
    }

    /// Proposes `target`'s definition replaced by `new` as an Edit, said
    /// with `generation`'s words: the turn's outcome, `changed` where the
    /// Edit was applied.
    async fn propose_definition(
        &mut self,
        target: &Target,
        generation: Generation,
        new: &str,
        changed: String,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, Stop> {
        self.propose_edit(target, generation, target.old(), new, changed, cancel).await
    }

    /// Proposes `target`'s file as `after` (a change of several places of
    /// it, see [`edit::with_companions`]) as one Edit of the lines between
    /// the first and the last that change.
    async fn propose_file(
        &mut self,
        target: &Target,
        generation: Generation,
        after: &str,
        changed: String,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, Stop> {
        let (old, new) = edit::spanning_edit(&target.text, after);
        self.propose_edit(target, generation, &old, &new, changed, cancel).await
    }

    /// Proposes `old` of `target`'s file replaced by `new` as an Edit.
    async fn propose_edit(
        &mut self,
        target: &Target,
        generation: Generation,
        old: &str,
        new: &str,
        changed: String,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, Stop> {
        // The harness read the file to show or vary it: the Edit needs no
        // Read of its own (a callee in another file has none).
        if let Ok(path) = self.workspace.resolve(&target.path) {
            self.state.note_read(&path, &target.text);
        }
        let input = json!({ "file_path": target.path, "old_string": old, "new_string": new });
        let (applied, _) = self.harness_call(generation, "Edit", input, cancel).await?;
        let text = match applied {
            true => changed,
            false => format!("The change to `{}` in {} was not applied.", target.qualified(), target.path),
        };
        Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() })
    }
}
