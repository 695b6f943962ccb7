//! Localization: the definitions a request is about, ranked by the code
//! map and the names the model guesses, chosen by the model among a few;
//! and the definitions a check's run reaches, by its traceback or the
//! calls it makes, each followed by what it calls.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Candidate, Stop, Target, edit, examples, loading, reading};
use crate::agent::Conversation;
use crate::agent::turn::Generation;
use crate::codemap::{DefKind, Definition, Language};
use crate::protocol::{Block, Message, Usage};

/// Short functions a definition calls that are shown with it, at most.
const MAX_CALLEES: usize = 3;
/// Lines a called function may have to be shown with the one chosen.
const MAX_CALLEE_LINES: usize = 60;

/// Definitions of the project a failing check's traceback is followed
/// into, at most.
const MAX_TRACED: usize = 2;

/// Whether `definition` is what a call of the class `class` runs: its
/// constructor (`__init__`, `constructor`, `new`).
fn constructs(definition: &Definition, class: &str) -> bool {
    definition.kind == DefKind::Method
        && definition.container.as_deref() == Some(class)
        && matches!(definition.name.as_str(), "__init__" | "constructor" | "new")
}

/// A definition the failing tests point to (see [`Conversation::suspects`]).
pub(super) struct Suspect {
    pub target: Target,
    /// How surely, from 0 to 1: 1 where only failing tests run its line,
    /// and all of them do.
    pub score: f32,
    /// Its lines of that score, as the file numbers them, in order.
    pub lines: Vec<usize>,
}

impl Suspect {
    /// Its lines as its file writes them (a few at most), in order.
    pub fn quoted(&self) -> String {
        const QUOTED: usize = 8;
        let text: Vec<&str> = self.target.text.lines().collect();
        let quoted: Vec<&str> = self
            .lines
            .iter()
            .filter_map(|line| text.get(line.checked_sub(1)?))
            .map(|l| l.trim_end())
            .take(QUOTED)
            .collect();
        edit::dedented(&quoted.join("\n"))
    }

    /// The lines, runs of them joined (`262, 266-269`).
    pub fn lines_told(&self) -> String {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &line in &self.lines {
            match runs.last_mut() {
                Some((_, end)) if *end + 1 == line => *end = line,
                _ => runs.push((line, line)),
            }
        }
        let told: Vec<String> = runs
            .into_iter()
            .map(|(start, end)| if start == end { start.to_string() } else { format!("{start}-{end}") })
            .collect();
        told.join(", ")
    }
}

impl Conversation {
    /// The model's guess, before it sees any code, at the names the code
    /// uses for what the request speaks of: a report in the user's words
    /// ("how long", "required") lacks the code's (`MAX_LENGTH`,
    /// `mandatory`), which a model that has read much code often knows.
    /// The ranking searches them as words; one that names nothing in the
    /// project counts for nothing.
    pub(super) async fn guess_code_names(
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

    /// The definitions the model may choose among for `request`, best first.
    pub(super) fn candidates(&self, request: &str, limit: usize) -> Vec<Candidate> {
        // A request that names tests as failing names their files to say
        // what fails: the tests are its check, never its change.
        let reports_tests = self.names_failing_tests(request);
        crate::codemap::rank::rank_hinted(&self.code_map, request, &self.code_names, limit)
            .into_iter()
            .filter(|r| !(reports_tests && crate::codemap::rank::is_aside(r.found.path)))
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
    pub(super) async fn choose(
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
                    let text = self.workspace_text(&c.path);
                    format!("- {}", c.listed(text.as_deref()))
                })
                .collect();
            let question = if wants_change { "must change to do what is asked" } else { "holds the answer" };
            let ask = |choices: &[&str]| {
                let listed: Vec<&str> = choices
                    .iter()
                    .filter_map(|choice| names.iter().position(|n| n == choice).map(|at| list[at].as_str()))
                    .collect();
                format!(
                    "The definitions of the project that match the request best:\n\n{}\n\nWhich one {question}? \
Reply with its name: {}.",
                    listed.join("\n\n"),
                    choices.join(", ")
                )
            };
            let choices: Vec<&str> = names.iter().map(String::as_str).collect();
            // Where the definition is the answer (which function does a
            // thing), the pick is asked both ways round: a small model's
            // that follows the order answers with the best ranked, and of
            // two it stays torn between, the better ranked stands. A change
            // has the check's run and traceback to correct it.
            let reply = match wants_change {
                true => Some(self.choice_reply(system, base, &ask(&choices), &choices, usage, cancel).await?),
                false => match self.choice_or_torn(system, base, ask, &choices, true, usage, cancel).await? {
                    Ok(reply) => Some(reply),
                    Err(torn) => torn.into_iter().next(),
                },
            };
            reply.and_then(|reply| names.iter().position(|n| *n == reply)).unwrap_or(0)
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

    /// The candidate's definition as it is now (the map may have moved it
    /// a few lines); `None` when it is gone.
    pub(super) fn candidate_target(&self, candidate: &Candidate) -> Option<Target> {
        self.target(&candidate.path, |d, language| {
            d.qualified(language) == candidate.qualified && d.lines.0.abs_diff(candidate.lines.0) < 50
        })
    }

    /// The heads of the `candidates`, as a script that calls the project
    /// needs them: each one's signature and file, a class's with its
    /// constructor's: told to a model whose script called the API it
    /// imagines (`invoice.add_line`, `buffer.get_buffer_size()`).
    pub(super) fn outline(&self, candidates: &[Candidate]) -> String {
        let heads: Vec<String> = candidates
            .iter()
            .filter_map(|candidate| {
                let target = self.candidate_target(candidate)?;
                let definition = target.definition();
                let head = match (definition.kind, &definition.container) {
                    (DefKind::Method, Some(container)) => format!("`{}` of class `{container}`", definition.signature),
                    _ => format!("`{}`", definition.signature),
                };
                let constructor = match definition.kind {
                    DefKind::Class => target
                        .file
                        .definitions
                        .iter()
                        .find(|d| constructs(d, &definition.name))
                        .map(|d| format!(", made by `{}`", d.signature))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                Some(format!("- {head} in {}{constructor}", target.path))
            })
            .collect();
        match heads.is_empty() {
            true => String::new(),
            false => format!("The project defines, among others:\n{}\n", heads.join("\n")),
        }
    }

    /// What a script that showed nothing of the request's example is told
    /// where the request writes command-line options (`--dry-run`) and the
    /// script parsed no command line: the project's own calls that parse
    /// one (those that read the language's, or call a private helper that
    /// does), which the options reach the code through. A small model wrote
    /// `program.option('--dry-run')` and printed `program.opts()`, never
    /// parsing the command line the request speaks of. Empty where the
    /// `script` calls one of them: it parsed one.
    pub(super) fn command_line_hint(&self, runner: loading::Runner, request: &str, script: &str) -> String {
        /// Calls told at most.
        const TOLD: usize = 2;
        let (Some(reads), Some(option)) =
            (runner.command_line(), examples::command_line_options(request).first().copied())
        else {
            return String::new();
        };
        // The name the code map records for the read (`argv` of `sys.argv`).
        let argv = reads.rsplit('.').next().unwrap_or(reads).to_string();
        let mut told: Vec<String> = Vec::new();
        let mut calls = false;
        for (path, reader) in self.own_definitions().filter(|(_, d)| d.uses.contains(&argv)) {
            let Some(target) = self.target(path, |d, _| d.range == reader.range) else { continue };
            if !target.old().contains(reads) {
                continue;
            }
            // A private helper is reached through the public calls that use it.
            let entries: Vec<(&str, &Definition)> = match reader.name.starts_with('_') {
                true => self
                    .own_definitions()
                    .filter(|(_, d)| !d.name.starts_with('_') && d.uses.contains(&reader.name))
                    .collect(),
                false => vec![(path, reader)],
            };
            for (path, entry) in entries {
                calls |= script.contains(&format!("{}(", entry.name));
                let head = format!("`{}` in {path}", entry.signature.trim_end_matches('{').trim_end());
                if !told.contains(&head) {
                    told.push(head);
                }
            }
        }
        if told.is_empty() || calls {
            return String::new();
        }
        told.truncate(TOLD);
        format!(
            "; the request's `{option}` is a command-line option, which reaches the project only through a call \
that parses a command line, as {} does: the script makes none",
            told.join(" or ")
        )
    }

    /// The definition of `path` that `is_it` picks, as it is now.
    pub(super) fn target(&self, path: &str, is_it: impl Fn(&Definition, Language) -> bool) -> Option<Target> {
        let resolved = self.workspace.resolve(path).ok()?;
        let text = self.workspace.read_text(&resolved).ok()?;
        let file = self.code_map.file(path)?.clone();
        let at = file.definitions.iter().position(|d| is_it(d, file.language))?;
        Some(Target { path: path.to_string(), text, file, at })
    }

    /// The project's definitions (functions and methods, not tests) a
    /// traceback in `output` passes through, innermost first: where an
    /// error is raised is where its fix most often goes.
    pub(super) fn traced(&self, output: &str) -> Vec<Target> {
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
    pub(super) fn executed(&self, output: &str, request: &str) -> Vec<Target> {
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

    /// The definitions the check's failing tests point to, most suspect
    /// first: each test of their files runs alone, traced (a Bash call),
    /// and a line the failing tests run and the passing ones do not is
    /// where the fault likely lies (spectrum-based fault localization, by
    /// Ochiai's measure). Each definition with its best score and the lines
    /// that score it. Empty where the check is not made of Python tests, or
    /// no test of their files passes: then nothing tells lines apart.
    pub(super) async fn suspects(
        &mut self,
        check: &super::check::Check,
        cancel: &CancellationToken,
    ) -> Result<Vec<Suspect>, Stop> {
        let Some(command) = check.spectrum_command() else { return Ok(Vec::new()) };
        self.notify("[running each test of the failing tests' files alone: which lines do only the failing ones run?]");
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text:
                "Each test of the failing tests' files, alone and traced, on the code as it is: the lines the failing \
tests run and the passing ones do not point to the fault."
                    .into(),
        });
        let input = json!({ "command": command, "timeout_ms": 60_000 });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let Some((failing, passing, scored)) = reading::spectrum(&output) else { return Ok(Vec::new()) };
        if failing == 0 || passing == 0 {
            return Ok(Vec::new());
        }
        let mut suspects: Vec<Suspect> = Vec::new();
        for (score, file, line) in scored {
            let Some(target) = self.running(&file, line) else { continue };
            match suspects.iter_mut().find(|s| s.target.is(&target)) {
                // Best first: a definition's first line holds its score.
                Some(suspect) if (suspect.score - score).abs() < f32::EPSILON => suspect.lines.push(line),
                Some(_) => {}
                None => suspects.push(Suspect { target, score, lines: vec![line] }),
            }
        }
        for suspect in &mut suspects {
            suspect.lines.sort_unstable();
            suspect.lines.dedup();
        }
        Ok(suspects)
    }

    /// The innermost function or method of the project's `file` (as a
    /// runtime prints it, absolute, or relative to the root) that holds
    /// `line`; `None` for the runtime's files, libraries and tests.
    pub(super) fn running(&self, file: &str, line: usize) -> Option<Target> {
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
    pub(super) fn targets(&self, candidate: &Candidate) -> Vec<Target> {
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
}
