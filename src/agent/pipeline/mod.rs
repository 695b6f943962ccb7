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
//! 4. **Edit** ([`edit`]): the chosen definition is shown with the imports
//!    it uses; the reply's block that holds it replaces its byte range.
//!    Where the check (see below) crashes, the project's functions its
//!    traceback passes through are shown and varied first.
//! 5. **Verify** ([`verify`]): the file must still parse, still define it,
//!    and change.
//! 6. **Select** ([`select`]): the greedy candidate first; after a version
//!    that changed nothing, the ask for the one line to change; then
//!    sampled ones, each told why the last was refused, within a budget of
//!    model calls and seconds. The first verified one is proposed as an
//!    Edit, which the user approves as any; a Stop hook that blocks (the
//!    project's tests) sends the pipeline round again with its reason.
//!
//! Every round is in the history and the session file: the choice with its
//! Read, each refused candidate with the reason, the Edit with its result.

mod answer;
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

/// The least score of the failing tests' lines (see `Suspect`) by which
/// a definition that alone has the best is the one a change is asked of.
const SINGLED_OUT: f32 = 0.8;
/// Definitions the check ran that are shown with the chosen one, at most.
const EXECUTED_SHOWN: usize = 2;
/// Definitions a change is asked of at most: each costs the prompt its length.
const MAX_SHOWN: usize = 6;

/// Lines a definition may have for the model's own version of it to be
/// asked beside a small change picked among several that pass the check.
const MAX_VERSION_LINES: usize = 30;

/// Rounds a turn makes at most: the first, and those a blocking Stop hook
/// sends it back for.
const MAX_ROUNDS: usize = 3;

/// Why a turn of the pipeline stopped early: its outcome.
type Stop = TurnOutcome;

impl Conversation {
    /// One turn of the pipeline. A request the map finds nothing for goes
    /// the way it went before the pipeline: the whole-file way with the
    /// `whole_files` profile, tools otherwise.
    ///
    /// With `examples_first`, for a workspace whose files fit in one
    /// message, the pipeline leads only where the request writes an example
    /// of the project's code that runs as written (`isAtLeast('2.0.0',
    /// '1.5.0') returns false`), and changes the code only where that
    /// example makes a check and a change passes it: a small model's
    /// whole-file change is a guess no example holds it to, while the
    /// check, the variants and the candidates find the one that passes. A
    /// question, a request without such an example, and one no checked
    /// change was found for go the whole-file way, which can add code where
    /// the pipeline only replaces a definition.
    pub(super) async fn pipeline_turn(
        &mut self,
        selection: Option<super::whole_file::Selection>,
        examples_first: bool,
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
            if examples_first && rounds == 1 {
                let examples = settings.examples_first && self.writes_examples(&request, &candidates);
                if !examples && self.runs_failing_tests() {
                    failing_tests = match self.failing_tests_now(&candidates, cancel).await {
                        Ok(tests) => tests,
                        Err(mut stop) => {
                            stop.usage += usage;
                            return stop;
                        }
                    };
                }
                if !examples && failing_tests.is_empty() {
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
            // Only the first round stands on the request's examples: the
            // rounds a Stop hook sends back carry its reason instead.
            let checked_only = examples_first && rounds == 1;
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
                        request = format!("{prompt}\nAfter the last change, a check still fails: {}", reason.trim());
                        wants_change = Some(true);
                        continue;
                    }
                }
            }
            outcome.usage += usage;
            return outcome;
        }
    }

    /// Whether `request` writes an example that runs as written on the
    /// project, in the language of a definition it points to.
    fn writes_examples(&self, request: &str, candidates: &[Candidate]) -> bool {
        let mut languages: Vec<(crate::codemap::Language, &str)> = Vec::new();
        for candidate in candidates {
            let Some(language) = crate::codemap::Language::of_path(&candidate.path) else { continue };
            if !languages.iter().any(|(known, _)| *known == language) {
                languages.push((language, &candidate.path));
            }
        }
        languages.into_iter().any(|(language, path)| {
            let loading = loading::loading(self.workspace.root(), language, path);
            !self.request_examples(language, &loading, request).is_empty()
        })
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
            let requested = fields.get("timeout_ms").and_then(serde_json::Value::as_u64);
            let requested = requested.unwrap_or(crate::config::DEFAULT_COMMAND_TIMEOUT_MS);
            fields.insert("timeout_ms".into(), json!(self.budget.command_timeout_ms(requested)));
        }
        self.add_harness_call(&mut generation, name, input);
        let Generation { blocks, mut calls, usage, .. } = generation;
        self.record_with_usage(Message { role: Role::Assistant, blocks }, Some(usage));
        let (results, cancelled) = self.run_calls(&mut calls, cancel).await;
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
        // The harness read the file to show or vary it: the Edit needs no
        // Read of its own (a callee in another file has none).
        if let Ok(path) = self.workspace.resolve(&target.path) {
            self.state.note_read(&path, &target.text);
        }
        let input = json!({ "file_path": target.path, "old_string": target.old(), "new_string": new });
        let (applied, _) = self.harness_call(generation, "Edit", input, cancel).await?;
        let text = match applied {
            true => changed,
            false => format!("The change to `{}` in {} was not applied.", target.qualified(), target.path),
        };
        Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() })
    }

    /// Asks for the candidate's new version until one is verified or the
    /// budget is spent; proposes the verified one as an Edit. `None`, where
    /// `checked_only`, when neither the request's examples nor the failing
    /// tests made a check, or no change passed it: another way may take the
    /// turn. `failing_tests` are those a small workspace's run found.
    #[allow(clippy::too_many_arguments)]
    async fn change(
        &mut self,
        system: &str,
        base: &[Message],
        request: &str,
        candidates: &[Candidate],
        chosen: usize,
        checked_only: bool,
        failing_tests: &[String],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<TurnOutcome>, Stop> {
        let candidate = &candidates[chosen];
        let mut targets = self.targets(candidate);
        if targets.is_empty() {
            let text = format!("`{}` is no longer in {}: nothing was changed.", candidate.qualified, candidate.path);
            return Ok(Some(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() }));
        }
        let target = &targets[0];
        // The surest reproduction first: the request's own example as
        // written, then the project's tests that fail, then the model's
        // script (not where only a checked change may take the turn), then
        // the definition's own doctests.
        let by_name = candidate.named;
        let mut check = self.write_check(system, base, target, by_name, true, candidates, usage, cancel).await?;
        if check.is_none() {
            // A small workspace's were run before the turn came this way.
            let failing = match failing_tests.is_empty() && !checked_only && self.runs_failing_tests() {
                true => self.failing_tests_now(candidates, cancel).await?,
                false => failing_tests.to_vec(),
            };
            check = self.tests_check(target, &failing, cancel).await?;
        }
        if check.is_none() && !checked_only {
            check = self.write_check(system, base, target, by_name, false, candidates, usage, cancel).await?;
        }
        if check.is_none() {
            check = self.doctest_check(target, cancel).await?;
        }
        if let Some(made) = check.as_mut() {
            if let Err(error) = self.prepare_scratch(system, base, &targets[0], made, usage, cancel).await? {
                self.notify(&format!("[no check: {error}]"));
                check = None;
            }
        }
        if checked_only && check.is_none() {
            self.notify(
                "[neither the request's example nor the project's tests make a check — handing the files over whole…]",
            );
            return Ok(None);
        }
        // Where the check crashes, the crash names where it happened: the
        // project's definitions its traceback passes through come first,
        // whichever the request's words pointed to.
        let traced = check.as_ref().and_then(check::Check::failure).map(|f| self.traced(f)).unwrap_or_default();
        // The project's line the error is raised on, and the error: asked
        // about first, alone, as a small model fixes one line it is shown
        // better than one it must find in a definition.
        let raised = check.as_ref().and_then(check::Check::failure).and_then(|failure| {
            let error = reading::error_line(failure)?.to_string();
            let (target, line) = reading::frames(failure)
                .into_iter()
                .find_map(|(file, line)| self.running(&file, line).map(|target| (target, line)))?;
            let at = line.checked_sub(target.definition().lines.0)?;
            Some((target, at, error))
        });
        if !traced.is_empty() {
            let names: Vec<String> = traced.iter().map(|t| format!("`{}` in {}", t.qualified(), t.path)).collect();
            self.notify(&format!("[the check's traceback passes through {}]", names.join(", ")));
            targets.retain(|t| !traced.iter().any(|first| first.is(t)));
            targets.splice(0..0, traced.iter().cloned());
        }
        // What the check's example runs that the request's words point to
        // comes after the chosen definition: the door the report names is
        // often not where its fault is.
        let executed = match check.as_ref() {
            Some(check) => self.follow_calls(check, request, cancel).await?,
            None => Vec::new(),
        };
        // Where the check is the project's failing tests, the lines they run
        // and the passing tests of their files do not point to the fault
        // (the models, shown Markdown's entry points beside the code-block
        // processor the failing tests single out, rewrote an entry point):
        // those definitions are followed and varied first, and one that
        // alone scores best comes first and is the one asked of.
        let suspects = match check.as_ref() {
            Some(check) => self.suspects(check, cancel).await?,
            None => Vec::new(),
        };
        let singled_out = suspects
            .first()
            .filter(|top| top.score >= SINGLED_OUT && suspects.get(1).is_none_or(|next| next.score < top.score));
        let mut executed = executed;
        if !suspects.is_empty() {
            let first: Vec<Target> = suspects.iter().map(|s| s.target.clone()).collect();
            executed.retain(|t| !first.iter().any(|s| s.is(t)));
            executed.splice(0..0, first);
        }
        let reached: Vec<Target> =
            executed.iter().filter(|t| !targets.iter().any(|o| o.is(t))).take(EXECUTED_SHOWN).cloned().collect();
        let after = traced.len() + 1;
        targets.splice(after.min(targets.len())..after.min(targets.len()), reached);
        if let Some(suspect) = singled_out {
            self.notify(&format!(
                "[the failing tests single out lines {} of `{}` in {}: it comes first]",
                suspect.lines_told(),
                suspect.target.qualified(),
                suspect.target.path
            ));
            targets.retain(|t| !t.is(&suspect.target));
            targets.insert(0, suspect.target.clone());
        }
        targets.truncate(MAX_SHOWN);
        let names: Vec<String> = targets.iter().map(|t| format!("`{}`", t.qualified())).collect();
        // The definitions before the request, as the whole-file way hands
        // files: read first, then asked about.
        let (ask, line_ask) = match names.as_slice() {
            [one] => (
                format!("Reply with the whole new version of {one} that does what is asked, in one code block."),
                format!("Which line of {one} must change? Reply with that line only, as it must read."),
            ),
            _ => (
                format!(
                    "Reply with the whole new version of the one definition above ({}) that must change to do what \
is asked, in one code block.",
                    names.join(", ")
                ),
                "Which line of these definitions must change? Reply with that line only, as it must read.".to_string(),
            ),
        };
        // Shown with the definitions, and with the singled-out one alone,
        // where the lines are a small part of it: quoting most of a short
        // definition back tells the model nothing it does not see.
        let narrows = |suspect: &&localize::Suspect| {
            let (first, last) = suspect.target.definition().lines;
            suspect.lines.len() * 2 < last + 1 - first
        };
        let pointed = singled_out.filter(narrows).map(|suspect| {
            let how = match suspect.score >= 1.0 - f32::EPSILON {
                true => "which every failing test runs and no passing test of their files does",
                false => "which the failing tests run most and the passing tests of their files least",
            };
            format!(
                "The project's failing tests run these lines of `{}`, {how}: the fault is likely there.\n```\n{}\n```\n",
                suspect.target.qualified(),
                suspect.quoted()
            )
        });
        let mut shown: String = targets.iter().map(Target::shown).collect::<Vec<_>>().join("\n");
        if let Some(pointed) = &pointed {
            shown = format!("{shown}\n{pointed}");
        }
        if request != prompt_of(base) {
            shown = format!("{shown}\n{}\n", request.trim());
        }
        // A small change that passes where no other does, or that what
        // the code prints singles out, is proposed. One that only a
        // reading of the changed lines, or the order, picked among several
        // is a guess the check could not make: the request's fault is often
        // no one-token change at all (a version compared part by part, that
        // must compare in order), and the model's own version, informed by
        // what is asked, is tried first; the pick stands where it fails.
        // Where the check's failure points (its traceback, the lines only
        // the failing tests run), every variant is tried before any other's.
        let mut pointed_to = traced.clone();
        if let Some(suspect) = singled_out.filter(|s| !traced.iter().any(|t| t.is(&s.target))) {
            pointed_to.push(suspect.target.clone());
        }
        let mut untold: Option<trying::Picked> = None;
        if let Some(check) = check.as_mut().filter(|_| self.settings.pipeline.variants) {
            let picked = self
                .try_variants(system, base, check, &pointed_to, &executed, candidates, chosen, usage, cancel)
                .await?;
            // A long definition's version costs a small model a minute to
            // write and rarely comes back whole: there the pick stands.
            let short = |picked: &trying::Picked| {
                let (first, last) = picked.target.definition().lines;
                last + 1 - first <= MAX_VERSION_LINES
            };
            match picked {
                Some(picked) if picked.pick.shown_by_runs() || !short(&picked) || !self.budget.allows_call() => {
                    return self.propose_variant(picked, cancel).await.map(Some);
                }
                Some(picked) => {
                    self.notify(&format!(
                        "[nothing the code prints tells the {} small changes that pass apart: asking for the model's \
own version first…]",
                        picked.passing
                    ));
                    if !targets.iter().any(|t| t.is(&picked.target)) {
                        targets.insert(0, picked.target.clone());
                        targets.truncate(MAX_SHOWN);
                    }
                    // The picked change leaves the probe as it is: the
                    // model's must too, where it might have changed what
                    // may be the request's case again.
                    check.strictly();
                    untold = Some(picked);
                }
                None => {}
            }
        }
        // The model's versions are asked with the check beside the code, as
        // a failing test's report: what it prints and what it must.
        if let Some(check) = &check {
            shown = format!("{shown}\n{}\n", check.described());
        }
        // Among several, the model first names the one that must change:
        // a small model rewrites one definition it is shown alone better
        // than it finds it among several (it rewrote the entry point the
        // request names, unchanged, where the fault lay three calls down).
        // Its first version is asked of that one alone; later tries see all.
        // A crash's traceback has named it already.
        // Where a small change passed, the definition it lies in is the one.
        let named = match (&untold, check.is_some() && raised.is_none() && targets.len() > 1) {
            (Some(picked), _) => targets.iter().position(|t| t.is(&picked.target)),
            (None, _) if let Some(suspect) = singled_out => targets.iter().position(|t| t.is(&suspect.target)),
            (None, true) => self.name_the_one(system, base, &targets, &shown, usage, cancel).await?,
            (None, false) => None,
        };
        let mut refusals: Vec<String> = Vec::new();
        // The versions that ran and failed the check: each the target, the
        // version as placed, and its file with it.
        let mut near_misses: Vec<(Target, String, String)> = Vec::new();
        let mut unchanged_last = false;
        let mut line_asked = false;
        let mut greedy_asked = false;
        let mut sampled = 0;
        // Beside a change that passes already, two versions are asked: the
        // greedy one, and one more (the line, after a version that changed
        // nothing; else sampled).
        let versions = match untold {
            Some(_) => 2,
            None => self.settings.pipeline.candidates.max(1),
        };
        for n in 0..versions {
            if !self.budget.allows_call() {
                self.notify("[the turn's budget of model calls or seconds is spent]");
                break;
            }
            // Where the check crashes in the project, the line that raised
            // is asked about first. A version that changed nothing is
            // followed once by the narrower ask for the one line to change;
            // after one version asked greedily, tries are sampled afresh.
            let ask_raised = n == 0 && raised.is_some();
            let ask_line = !ask_raised && unchanged_last && !line_asked;
            line_asked |= ask_line;
            let alone = named.filter(|_| !greedy_asked && !ask_line && !ask_raised).map(|at| &targets[at]);
            let mut this_ask = match (&raised, ask_raised, ask_line) {
                (Some((target, at, error)), true, _) => format!(
                    "The check fails with `{error}`, raised on this line of `{}`:\n```\n{}\n```\nReply with \
that line as it must read for the check to pass, in one code block.",
                    target.qualified(),
                    target.old().lines().nth(*at).unwrap_or_default().trim()
                ),
                (_, _, true) => line_ask.clone(),
                _ => match alone {
                    Some(one) => format!(
                        "Reply with the whole new version of `{}` that does what is asked, in one code block.",
                        one.qualified()
                    ),
                    None => ask.clone(),
                },
            };
            if let (Some(last), false) = (refusals.last(), ask_line || ask_raised) {
                this_ask.push_str(&format!("\nYour last version was refused: {last}."));
            }
            let shown_now = match (alone, &check) {
                (Some(one), Some(check)) => {
                    let pointed = pointed.as_deref().filter(|_| singled_out.is_some_and(|s| s.target.is(one)));
                    format!("{}\n{}{}\n", one.shown(), pointed.unwrap_or_default(), check.described())
                }
                _ => shown.clone(),
            };
            let messages = super::whole_file::with_files(base.to_vec(), &shown_now, &this_ask);
            self.resample = None;
            if greedy_asked && !ask_line {
                sampled += 1;
                self.resample = Some(sampled);
                self.notify(&format!("[trying afresh, sampled (try {})…]", n + 1));
            } else if ask_line {
                self.notify("[asking for the one line to change…]");
            } else if ask_raised {
                self.notify("[asking for the line the error is raised on, as it must read…]");
            }
            greedy_asked |= !ask_line && !ask_raised;
            self.events.emit(Event::Status { status: AgentStatus::Thinking });
            let generation = self.whole_file_reply(system, messages, cancel).await;
            self.resample = None;
            let generation = generation?;
            *usage += generation.usage;
            let reply = Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text();
            // Which definition the reply changes: the one whose line it
            // fixes, or whose head its block holds; the chosen one else.
            let found = match (&raised, ask_raised) {
                (Some((target, at, _)), true) => edit::line_rewritten(target.old(), *at, &reply)
                    .map(|code| (target, code))
                    .ok_or_else(|| "the reply wrote no new version of the line".to_string()),
                _ => match ask_line {
                    true => targets
                        .iter()
                        .find_map(|t| edit::line_fixed(t.old(), &reply).map(|code| (t, code)))
                        .ok_or_else(|| format!("the reply wrote no line of {} as it must read", names.join(" or "))),
                    false => {
                        let version =
                            |t: &Target| edit::definition_code(t.file.language, &reply, t.definition(), t.old());
                        let holding: Vec<&Target> =
                            targets.iter().filter(|t| edit::holds_head(&reply, t.old())).collect();
                        // Of those the reply writes, the one it changes: a
                        // small model writes the one it was asked for as
                        // it is beside the one it fixed.
                        let changed = holding.iter().copied().find(|t| {
                            version(t).is_some_and(|code| !crate::agent::code_text::same_code(&code, t.old()))
                        });
                        changed
                            .or(holding.first().copied())
                            .or(alone)
                            .or(targets.first())
                            .and_then(|t| version(t).map(|code| (t, code)))
                            .ok_or_else(|| "the reply holds no code block".to_string())
                    }
                },
            };
            // A refusal carries whether the reply changed nothing: a version
            // that is the old one, or prose where a version was asked for.
            let verdict = found.map_err(|why| (why, !ask_line && !ask_raised)).and_then(|(target, code)| {
                let definition = target.definition();
                let (after, placed) = edit::replaced(&target.text, definition, &code);
                verify::check(target.file.language, &target.text, &target.file, definition, &placed, &after)
                    .map(|_| (target, placed, after))
                    .map_err(|refusal| (refusal.to_string(), refusal == verify::Refusal::Unchanged))
            });
            unchanged_last = matches!(verdict, Err((_, true)));
            match verdict {
                Ok((target, new, after)) => {
                    let mut generation = generation;
                    if let Some(check) = check.as_mut() {
                        let passes = self
                            .check_passes(check, generation, &target.path, after.clone(), &target.text, cancel)
                            .await?;
                        if let Err(why) = passes {
                            self.notify(&format!("[candidate {} refused: {why}]", n + 1));
                            self.record(Message::user_text(format!("[tack] The change was refused: {why}.")));
                            refusals.push(why);
                            if !near_misses.iter().any(|(_, _, missed)| *missed == after) {
                                near_misses.push((target.clone(), new, after));
                            }
                            continue;
                        }
                        generation = Generation::default();
                        generation.blocks.push(Block::Text { text: "The check passes with this version.".into() });
                    }
                    let changed = format!("Changed `{}` in {}.", target.qualified(), target.path);
                    return self.propose_definition(target, generation, &new, changed, cancel).await.map(Some);
                }
                Err((why, _)) => {
                    self.notify(&format!("[candidate {} refused: {why}]", n + 1));
                    self.record_reply(generation);
                    self.record(Message::user_text(format!("[tack] The change was refused: {why}.")));
                    refusals.push(why);
                }
            }
        }
        // A version that ran and failed may be one small change from
        // passing, as the code itself may: the first two are varied, once
        // no version passes as written.
        const MENDED: usize = 2;
        if let Some(check) = check.as_mut().filter(|_| self.settings.pipeline.variants) {
            for (target, new, after) in near_misses.iter().take(MENDED) {
                if !self.budget.has_time() {
                    break;
                }
                if let Some(outcome) = self.mend_refused(check, target, new, after, cancel).await? {
                    return Ok(Some(outcome));
                }
            }
        }
        if let Some(picked) = untold {
            self.notify("[the model's own version does not pass: the small change picked stands]");
            return self.propose_variant(picked, cancel).await.map(Some);
        }
        if checked_only {
            self.notify("[no change found passes the check — handing the files over whole…]");
            return Ok(None);
        }
        let tried: Vec<String> = refusals.iter().enumerate().map(|(i, why)| format!("{}. {why}", i + 1)).collect();
        let text = format!(
            "No change was made to `{}` in {}: no candidate passed verification.\n{}",
            candidate.qualified,
            candidate.path,
            tried.join("\n")
        );
        Ok(Some(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() }))
    }

    /// Which of `targets` (shown in `shown`, with the check) the model says
    /// must change, held to their names and asked both ways round; `None`
    /// where it picks by the order offered.
    async fn name_the_one(
        &mut self,
        system: &str,
        base: &[Message],
        targets: &[Target],
        shown: &str,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<usize>, Stop> {
        let names: Vec<String> = targets.iter().map(Target::qualified).collect();
        let twins = names.iter().enumerate().any(|(i, name)| names[..i].contains(name));
        if twins || !self.budget.allows_call() {
            return Ok(None);
        }
        let ask = |choices: &[&str]| {
            let listed: Vec<String> = choices.iter().map(|name| format!("`{name}`")).collect();
            format!(
                "{shown}\nWhich one of these definitions must change to do what is asked? Reply with its name \
only: {}.",
                listed.join(", ")
            )
        };
        let choices: Vec<&str> = names.iter().map(String::as_str).collect();
        self.notify("[asking which definition must change…]");
        let Some(reply) = self.choice_both_ways(system, base, ask, &choices, true, usage, cancel).await? else {
            self.notify("[which definition must change: the pick follows the order offered — all are shown]");
            return Ok(None);
        };
        self.notify(&format!("[`{reply}` must change, the model says]"));
        Ok(names.iter().position(|name| *name == reply))
    }
}

#[cfg(test)]
mod tests {}
