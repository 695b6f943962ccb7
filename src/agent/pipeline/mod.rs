//! The real-project pipeline, for small models on projects larger than one
//! message: one general path, the same for every language the code map reads.
//!
//! 1. **Map** (`crate::codemap`): the workspace's definitions, kept current.
//! 2. **Intent**: the model says whether the request asks for a change or
//!    an answer, its reply held by a grammar to those two words and asked
//!    in both orders; a model that picks by the order is undecided, and a
//!    question mark in the request's prose decides.
//! 3. **Localize** ([`crate::codemap::rank`]): definitions ranked by the
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
mod expect;
mod loading;
mod reading;
mod trying;
mod variants;
mod verify;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::turn::Generation;
use super::whole_file::prompt_of;
use super::{Conversation, TurnOutcome};
use crate::codemap::{DefKind, Definition, FileMap, Language};
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

/// Whether `definition` is what a call of the class `class` runs: its
/// constructor (`__init__`, `constructor`, `new`).
fn constructs(definition: &Definition, class: &str) -> bool {
    definition.kind == DefKind::Method
        && definition.container.as_deref() == Some(class)
        && matches!(definition.name.as_str(), "__init__" | "constructor" | "new")
}

/// Short functions a definition calls that are shown with it, at most.
const MAX_CALLEES: usize = 3;
/// Lines a called function may have to be shown with the one chosen.
const MAX_CALLEE_LINES: usize = 60;

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

/// Definitions of the project a failing check's traceback is followed
/// into, at most.
const MAX_TRACED: usize = 2;

/// Definitions the check ran that are shown with the chosen one, at most.
const EXECUTED_SHOWN: usize = 2;
/// Definitions a change is asked of at most: each costs the prompt its length.
const MAX_SHOWN: usize = 6;

/// Rounds a turn makes at most: the first, and those a blocking Stop hook
/// sends it back for.
const MAX_ROUNDS: usize = 3;

/// Why a turn of the pipeline stopped early: its outcome.
type Stop = TurnOutcome;

impl Conversation {
    /// One turn of the pipeline. A request the map finds nothing for goes
    /// the way it went before the pipeline: the whole-file way with the
    /// `whole_files` profile, tools otherwise.
    pub(super) async fn pipeline_turn(
        &mut self,
        selection: Option<super::whole_file::Selection>,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let prompt = prompt_of(&self.history);
        let settings = self.settings.pipeline.clone();
        let mut usage = Usage::default();
        // A Stop hook that blocks (a project's tests, say) sends the pipeline
        // round again, its reason added to the request.
        let mut request = prompt.clone();
        let mut wants_change: Option<bool> = None;
        let mut stop_hook_active = false;
        let mut rounds = 0;
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
                let chosen = self.choose(&system, &base, &candidates, change, &mut usage, cancel).await?;
                if change {
                    self.change(&system, &base, &request, &candidates, chosen, &mut usage, cancel).await
                } else {
                    self.answer(&system, &base, &candidates, chosen, &mut usage, cancel).await
                }
            }
            .await;
            let mut outcome = outcome.unwrap_or_else(|stop| stop);
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

    /// The model's guess, before it sees any code, at the names the code
    /// uses for what the request speaks of: a report in the user's words
    /// ("how long", "required") lacks the code's (`MAX_LENGTH`,
    /// `mandatory`), which a model that has read much code often knows.
    /// The ranking searches them as words; one that names nothing in the
    /// project counts for nothing.
    async fn guess_code_names(
        &mut self,
        system: &str,
        base: &[Message],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<String, Stop> {
        /// Enough for a line of names; a reply that rambles is cut there.
        const NAMES_TOKENS: u32 = 60;
        const NAMES: usize = 8;
        let ask = format!(
            "Before any code is shown: what would the project's code for what the request speaks of be named? \
Reply with up to {NAMES} likely names of its functions, methods, classes, constants or variables, comma-separated, \
nothing else."
        );
        // Shown as a notice and counted in the turn's usage, as the intent
        // is; not a message of the conversation, which it would leave with
        // two model replies in a row.
        let (_, reply) = self.ask_bounded(system, base, &ask, NAMES_TOKENS, usage, cancel).await?;
        let names = edit::listed_names(&reply, NAMES);
        if !names.is_empty() {
            self.notify(&format!("[names the code may use, as the model guesses them: {}]", names.join(", ")));
        }
        Ok(names.join(" "))
    }

    /// Makes `name` a call of the reply in `generation`, records both, and
    /// runs the call (approved as any): whether it succeeded, and its
    /// output. `Err` when the turn was cancelled meanwhile.
    async fn harness_call(
        &mut self,
        mut generation: Generation,
        name: &str,
        input: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<(bool, String), Stop> {
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

    /// The definitions the model may choose among for `request`, best first.
    fn candidates(&self, request: &str, limit: usize) -> Vec<Candidate> {
        crate::codemap::rank::rank_hinted(&self.code_map, request, &self.code_names, limit)
            .into_iter()
            .filter(|r| self.workspace.resolve(r.found.path).is_ok_and(|path| self.may_show(&path)))
            .map(|r| Candidate {
                path: r.found.path.to_string(),
                qualified: r.found.definition.qualified(r.found.file.language),
                kind: r.found.definition.kind,
                lines: r.found.definition.lines,
                doc: r.found.definition.doc.clone(),
                named: r.named,
            })
            .collect()
    }

    /// The index of the candidate the model chooses; the only one, or the
    /// best-ranked when the request names it and no other, needs no choice.
    #[allow(clippy::too_many_arguments)]
    async fn choose(
        &mut self,
        system: &str,
        base: &[Message],
        candidates: &[Candidate],
        wants_change: bool,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<usize, Stop> {
        let named_alone = candidates[0].named && candidates.iter().filter(|c| c.named).count() == 1;
        let chosen = if candidates.len() == 1 || named_alone {
            0
        } else {
            // The reply is a name, held to those listed: a small model asked
            // for a number picks by position (the 0.5B "1", the 1.5B "3"),
            // while writing a name it reads what the names mean.
            let names: Vec<String> = candidates
                .iter()
                .map(|c| match candidates.iter().filter(|o| o.qualified == c.qualified).count() {
                    1 => c.qualified.clone(),
                    _ => format!("{} in {}", c.qualified, c.path),
                })
                .collect();
            let list: Vec<String> = candidates
                .iter()
                .map(|c| {
                    let text = self.workspace.resolve(&c.path).ok().and_then(|p| self.workspace.read_text(&p).ok());
                    format!("- {}", c.listed(text.as_deref()))
                })
                .collect();
            let question = if wants_change { "must change to do what is asked" } else { "holds the answer" };
            let ask = format!(
                "The definitions of the project that match the request best:\n\n{}\n\nWhich one {question}? \
Reply with its name: {}.",
                list.join("\n\n"),
                names.join(", ")
            );
            let choices: Vec<&str> = names.iter().map(String::as_str).collect();
            let reply = self.choice_reply(system, base, &ask, &choices, usage, cancel).await?;
            names.iter().position(|n| *n == reply).unwrap_or(0)
        };
        // The choice, as the user and the session see it: a Read of it.
        let candidate = &candidates[chosen];
        let (first, last) = candidate.lines;
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text { text: format!("`{}` in {}.", candidate.qualified, candidate.path) });
        let input = json!({ "file_path": candidate.path, "offset": first, "limit": last + 1 - first });
        self.harness_call(generation, "Read", input, cancel).await?;
        Ok(chosen)
    }

    /// The harness read `target`'s file to show or vary it: its Edit
    /// needs no Read of its own (a callee in another file has none).
    fn note_read(&self, target: &Target) {
        if let Ok(path) = self.workspace.resolve(&target.path) {
            self.state.note_read(&path, &target.text);
        }
    }

    /// The candidate's definition as it is now (the map may have moved it
    /// a few lines); `None` when it is gone.
    fn candidate_target(&self, candidate: &Candidate) -> Option<Target> {
        self.target(&candidate.path, |d, language| {
            d.qualified(language) == candidate.qualified && d.lines.0.abs_diff(candidate.lines.0) < 50
        })
    }

    /// The definition of `path` that `is_it` picks, as it is now.
    fn target(&self, path: &str, is_it: impl Fn(&Definition, Language) -> bool) -> Option<Target> {
        let resolved = self.workspace.resolve(path).ok()?;
        let text = self.workspace.read_text(&resolved).ok()?;
        let file = self.code_map.file(path)?.clone();
        let at = file.definitions.iter().position(|d| is_it(d, file.language))?;
        Some(Target { path: path.to_string(), text, file, at })
    }

    /// The project's definitions (functions and methods, not tests) a
    /// traceback in `output` passes through, innermost first: where an
    /// error is raised is where its fix most often goes.
    fn traced(&self, output: &str) -> Vec<Target> {
        let mut traced: Vec<Target> = Vec::new();
        for (file, line) in reading::frames(output) {
            if let Some(target) = self.running(&file, line) {
                if !traced.iter().any(|t| t.is(&target)) {
                    traced.push(target);
                }
            }
            if traced.len() == MAX_TRACED {
                break;
            }
        }
        traced
    }

    /// The project's functions the check ran (`output` of its
    /// [`check::Check::calls_command`]), those the request's words point to
    /// first, best first: the definitions a report's example really
    /// reaches, where those its words name may only be the door it came in by.
    fn executed(&self, output: &str, request: &str) -> Vec<Target> {
        let mut ran: Vec<Target> = Vec::new();
        for (file, line) in reading::calls(output) {
            if let Some(target) = self.running(&file, line) {
                if !ran.iter().any(|t| t.is(&target)) {
                    ran.push(target);
                }
            }
        }
        let ranked = crate::codemap::rank::rank_hinted(&self.code_map, request, &self.code_names, usize::MAX);
        let place = |t: &Target| {
            ranked
                .iter()
                .position(|r| r.found.path == t.path && r.found.definition.range == t.definition().range)
                .unwrap_or(usize::MAX)
        };
        // A stable sort: what the words do not reach keeps the order it ran in.
        ran.sort_by_cached_key(place);
        // Each followed by what it calls of the rest, and what those call:
        // the fault of a report about a call often lies in a helper it runs
        // (`opts` runs `attributeName`, which runs `camelcase`), whose own
        // words the request never uses.
        const DEPTH: usize = 2;
        let mut order: Vec<usize> = Vec::with_capacity(ran.len());
        let mut placed = vec![false; ran.len()];
        for top in 0..ran.len() {
            let mut stack = vec![(top, 0)];
            while let Some((at, depth)) = stack.pop() {
                if std::mem::replace(&mut placed[at], true) {
                    continue;
                }
                order.push(at);
                if depth == DEPTH {
                    continue;
                }
                let uses = &ran[at].definition().uses;
                let callees =
                    (0..ran.len()).filter(|&c| !placed[c] && uses.binary_search(&ran[c].definition().name).is_ok());
                // Reversed onto the stack: the best ranked is placed first.
                let callees: Vec<usize> = callees.collect();
                stack.extend(callees.into_iter().rev().map(|c| (c, depth + 1)));
            }
        }
        order.into_iter().map(|at| ran[at].clone()).collect()
    }

    /// The innermost function or method of the project's `file` (as a
    /// runtime prints it, absolute, or relative to the root) that holds
    /// `line`; `None` for the runtime's files, libraries and tests.
    fn running(&self, file: &str, line: usize) -> Option<Target> {
        // Runtimes print the real path, which may not be the one the root was named by.
        let root = self.workspace.root();
        let rel = match file.starts_with('/') {
            true => [Some(root.to_path_buf()), root.canonicalize().ok()]
                .into_iter()
                .flatten()
                .find_map(|root| file.strip_prefix(&format!("{}/", root.display())).map(str::to_string))?,
            false => file.to_string(),
        };
        // The check runs in the workspace: its frames are the project's
        // files under the root; others are the runtime's or libraries'.
        if rel.split('/').any(|part| matches!(part, "node_modules" | "site-packages" | "dist-packages")) {
            return None;
        }
        let (path, map) = self.code_map.files().find(|(path, _)| *path == rel)?;
        if crate::codemap::rank::is_aside(path) {
            return None;
        }
        let range = map
            .definitions
            .iter()
            .filter(|d| matches!(d.kind, DefKind::Function | DefKind::Method))
            .filter(|d| d.lines.0 <= line && line <= d.lines.1)
            .min_by_key(|d| d.lines.1 - d.lines.0)
            .map(|d| d.range.clone())?;
        self.target(path, |d, _| d.range == range)
    }

    /// What a change to `candidate` may replace: the candidate, then the
    /// short functions of the project it calls (a wrong result is often
    /// made by what the function named in the report calls), the same
    /// file's first.
    fn targets(&self, candidate: &Candidate) -> Vec<Target> {
        let Some(first) = self.candidate_target(candidate) else { return Vec::new() };
        let mut callees: Vec<(bool, String, String, (usize, usize))> = Vec::new();
        for used in &first.definition().uses {
            let defining: Vec<_> = self
                .code_map
                .definitions()
                .filter(|f| !f.definition.local && (f.definition.name == *used || constructs(f.definition, used)))
                .filter(|f| matches!(f.definition.kind, DefKind::Function | DefKind::Method))
                .filter(|f| f.definition.lines.1 + 1 - f.definition.lines.0 <= MAX_CALLEE_LINES)
                .filter(|f| !crate::codemap::rank::is_aside(f.path))
                .collect();
            // A name defined in many places (`get`, `run`) points nowhere.
            if let [found] = defining.as_slice() {
                let qualified = found.definition.qualified(found.file.language);
                if qualified != first.qualified() {
                    let same_file = found.path == first.path;
                    callees.push((!same_file, found.path.to_string(), qualified, found.definition.lines));
                }
            }
        }
        callees.sort_by_key(|c| c.0);
        let mut targets = vec![first];
        for (_, path, qualified, lines) in callees.into_iter().take(MAX_CALLEES) {
            let found = self.target(&path, |d, language| d.qualified(language) == qualified && d.lines == lines);
            targets.extend(found);
        }
        targets
    }

    /// Asks for the candidate's new version until one is verified or the
    /// budget is spent; proposes the verified one as an Edit.
    #[allow(clippy::too_many_arguments)]
    async fn change(
        &mut self,
        system: &str,
        base: &[Message],
        request: &str,
        candidates: &[Candidate],
        chosen: usize,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, Stop> {
        let candidate = &candidates[chosen];
        let mut targets = self.targets(candidate);
        if targets.is_empty() {
            let text = format!("`{}` is no longer in {}: nothing was changed.", candidate.qualified, candidate.path);
            return Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() });
        }
        let mut check = self.write_check(system, base, &targets[0], usage, cancel).await?;
        if let Some(made) = check.as_mut() {
            if let Err(error) = self.prepare_scratch(system, base, &targets[0], made, usage, cancel).await? {
                self.notify(&format!("[no check: {error}]"));
                check = None;
            }
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
        let reached: Vec<Target> =
            executed.iter().filter(|t| !targets.iter().any(|o| o.is(t))).take(EXECUTED_SHOWN).cloned().collect();
        let after = traced.len() + 1;
        targets.splice(after.min(targets.len())..after.min(targets.len()), reached);
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
        let mut shown: String = targets.iter().map(Target::shown).collect::<Vec<_>>().join("\n");
        if request != prompt_of(base) {
            shown = format!("{shown}\n{}\n", request.trim());
        }
        if let Some(check) = check.as_mut().filter(|_| self.settings.pipeline.variants) {
            if let Some(outcome) =
                self.try_variants(system, base, check, &traced, &executed, candidates, chosen, usage, cancel).await?
            {
                return Ok(outcome);
            }
        }
        // The model's versions are asked with the check beside the code, as
        // a failing test's report: what it prints and what it must.
        if let Some(check) = &check {
            shown = format!("{shown}\n{}\n", check.described());
        }
        let mut refusals: Vec<String> = Vec::new();
        let mut unchanged_last = false;
        let mut line_asked = false;
        let mut greedy_asked = false;
        let mut sampled = 0;
        for n in 0..self.settings.pipeline.candidates.max(1) {
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
            let mut this_ask = match (&raised, ask_raised, ask_line) {
                (Some((target, at, error)), true, _) => format!(
                    "The check fails with `{error}`, raised on this line of `{}`:\n```\n{}\n```\nReply with \
that line as it must read for the check to pass, in one code block.",
                    target.qualified(),
                    target.old().lines().nth(*at).unwrap_or_default().trim()
                ),
                (_, _, true) => line_ask.clone(),
                _ => ask.clone(),
            };
            if let (Some(last), false) = (refusals.last(), ask_line || ask_raised) {
                this_ask.push_str(&format!("\nYour last version was refused: {last}."));
            }
            let messages = super::whole_file::with_files(base.to_vec(), &shown, &this_ask);
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
                    false => targets
                        .iter()
                        .find(|t| edit::holds_head(&reply, t.old()))
                        .or(targets.first())
                        .and_then(|t| edit::definition_code(&reply, t.old()).map(|code| (t, code)))
                        .ok_or_else(|| "the reply holds no code block".to_string()),
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
                        let passes =
                            self.check_passes(check, generation, &target.path, after, &target.text, cancel).await?;
                        if let Err(why) = passes {
                            self.notify(&format!("[candidate {} refused: {why}]", n + 1));
                            self.record(Message::user_text(format!("[tack] The change was refused: {why}.")));
                            refusals.push(why);
                            continue;
                        }
                        generation = Generation::default();
                        generation.blocks.push(Block::Text { text: "The check passes with this version.".into() });
                    }
                    self.note_read(target);
                    let input = json!({ "file_path": target.path, "old_string": target.old(), "new_string": new });
                    let (applied, _) = self.harness_call(generation, "Edit", input, cancel).await?;
                    let text = match applied {
                        true => format!("Changed `{}` in {}.", target.qualified(), target.path),
                        false => format!("The change to `{}` in {} was not applied.", target.qualified(), target.path),
                    };
                    return Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() });
                }
                Err((why, _)) => {
                    self.notify(&format!("[candidate {} refused: {why}]", n + 1));
                    self.record_reply(generation);
                    self.record(Message::user_text(format!("[tack] The change was refused: {why}.")));
                    refusals.push(why);
                }
            }
        }
        let tried: Vec<String> = refusals.iter().enumerate().map(|(i, why)| format!("{}. {why}", i + 1)).collect();
        let text = format!(
            "No change was made to `{}` in {}: no candidate passed verification.\n{}",
            candidate.qualified,
            candidate.path,
            tried.join("\n")
        );
        Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() })
    }
}

#[cfg(test)]
mod tests {}
