//! The change step of a turn: the check made (the request's example, the
//! project's failing tests, the model's script or the doctests), the
//! definitions gathered where its run points (the traceback, the lines only
//! the failing tests run, what the example calls), small variants tried
//! against it, and the model's versions asked, verified and refused with
//! their reasons until one passes or the budget is spent.

use tokio_util::sync::CancellationToken;

use super::{Candidate, Stop, Target, check, edit, localize, reading, trying, verify};
use crate::agent::turn::Generation;
use crate::agent::{Conversation, TurnOutcome};
use crate::protocol::{AgentStatus, Block, Event, Message, Role, StopReason, Usage};

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
/// Versions a turn asks for where no check can run them.
const UNCHECKED_VERSIONS: u32 = 3;
/// Lines past which a definition's whole version is not asked first: it
/// costs a small model minutes to write and rarely comes back whole. The
/// line to change is asked, and versions are opened there.
const MAX_WHOLE_LINES: usize = 80;
/// Lines a version opened at a line may write before it is back on the old
/// code: past them it is cut, as a copy of the code running on.
const MAX_OPENED_LINES: usize = 40;

impl Conversation {
    /// Tells the user and the model that candidate `n` (from 0) was
    /// refused, and why.
    fn tell_refused(&mut self, n: u32, why: &str) {
        self.notify(&format!("[candidate {} refused: {why}]", n + 1));
        self.record(Message::user_text(format!("[tack] The change was refused: {why}.")));
    }

    /// Asks for the candidate's new version until one is verified or the
    /// budget is spent; proposes the verified one as an Edit. `None`, where
    /// `checked_only`, when neither the request's examples nor the failing
    /// tests made a check, or no change passed it: another way may take the
    /// turn. `failing_tests` are those a small workspace's run found.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn change(
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
        // The surest reproduction first: the tests the request names, the
        // request's own example as written, then the project's tests that fail, then the model's
        // script (not where only a checked change may take the turn), then
        // the definition's own doctests.
        let by_name = candidate.named;
        // The tests the request itself names as failing are the surest:
        // they assert what the user saw fail.
        let named = self.named_failing_tests(request, target.file.language);
        let mut check = match named.is_empty() {
            true => None,
            false => self.tests_check(target, &named, cancel).await?,
        };
        if check.is_none() {
            check = self.write_check(system, base, target, by_name, true, candidates, usage, cancel).await?;
        }
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
        // A crate has no script runner: the model's test of the examples is its script.
        if check.is_none() && target.file.language == crate::codemap::Language::Rust {
            check = self.rust_check(system, base, target, usage, cancel).await?;
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
            Some(check) if self.settings.pipeline.spectrum => self.suspects(check, cancel).await?,
            _ => Vec::new(),
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
        if request != super::prompt_of(base) {
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
        // The definitions the model wrote versions of: the turn's outcome
        // names them, not the candidate first chosen.
        let mut versioned: Vec<Target> = Vec::new();
        // The versions that ran and failed the check: each the target, the
        // version as placed, and its file with it.
        let mut near_misses: Vec<(Target, String, String)> = Vec::new();
        // Where there is no check: the project's tests as they ran before
        // any change, made at the first version (`None` until then).
        let mut tests_guard: Option<Option<check::Check>> = None;
        // A long definition is asked for its line first, where a check can
        // tell the versions opened there apart.
        let long = |t: &Target| {
            let (first, last) = t.definition().lines;
            last + 1 - first > MAX_WHOLE_LINES
        };
        let mut unchanged_last = check.is_some() && targets.first().is_some_and(long);
        // The lines the check's run never reached: no change there shows,
        // so no line named there is where a version opens.
        let unrun = check.as_ref().map(check::Check::unrun).unwrap_or_default();
        let runs = |t: &Target, i: usize| {
            !unrun.get(&t.path).is_some_and(|lines| lines.contains(&(t.definition().lines.0 + i)))
        };
        let mut line_asked = false;
        // The line the model named as the one to change (a target's index,
        // the line's), written as it is or anew: the versions after are
        // opened there, the first greedy.
        let mut named_line: Option<(usize, usize)> = None;
        let mut opened_greedy = false;
        let mut greedy_asked = false;
        let mut sampled = 0;
        // Beside a change that passes already, two versions are asked: the
        // greedy one, and one more (the line, after a version that changed
        // nothing; else sampled).
        let versions = match untold {
            Some(_) => 2,
            // Without a check, a sampled try is a guess applied unrun: the
            // greedy one, the line ask and one more at most.
            None if check.is_none() => self.settings.pipeline.candidates.clamp(1, UNCHECKED_VERSIONS),
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
            // Only a check can tell a version pushed into writing something
            // new from one that means it: without one, none is opened.
            let opened = named_line.filter(|_| !ask_line && !ask_raised && check.is_some());
            let alone = match opened {
                Some((at, _)) => Some(&targets[at]),
                None => named.filter(|_| !greedy_asked && !ask_line && !ask_raised).map(|at| &targets[at]),
            };
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
            // A line ask's refusal ("wrote no line as it must read") says
            // nothing to the version opened at the line it named.
            let after_line_ask = opened.is_some() && !opened_greedy;
            if let (Some(last), false) = (refusals.last(), ask_line || ask_raised || after_line_ask) {
                this_ask.push_str(&format!("\nYour last version was refused: {last}."));
            }
            let shown_now = match (alone, &check) {
                (Some(one), Some(check)) => {
                    let pointed = pointed.as_deref().filter(|_| singled_out.is_some_and(|s| s.target.is(one)));
                    format!("{}\n{}{}\n", one.shown(), pointed.unwrap_or_default(), check.described())
                }
                _ => shown.clone(),
            };
            let messages = crate::agent::whole_file::with_files(base.to_vec(), &shown_now, &this_ask);
            self.resample = None;
            let opening = opened.map(|(at, line)| edit::opened_at(targets[at].file.language, targets[at].old(), line));
            if let Some((at, line)) = opened {
                let quoted = targets[at].old().lines().nth(line).unwrap_or_default().trim().to_string();
                if opened_greedy {
                    sampled += 1;
                    self.resample = Some(sampled);
                }
                opened_greedy = true;
                self.notify(&format!("[writing a version on from the line it names, `{quoted}`…]"));
            } else if greedy_asked && !ask_line {
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
            if let Some(opening) = &opening {
                self.events.emit(Event::Text { text: opening.clone() });
            }
            self.reply_prefix = opening.clone();
            // Back on the old lines, the version needs none of the rest copied.
            self.reply_done = opened.map(|(at, line)| {
                let old = targets[at].old().to_string();
                let done: crate::agent::ReplyDone = std::sync::Arc::new(move |continued: &str| {
                    edit::rejoined(&old, line, continued).is_some() || continued.lines().count() > MAX_OPENED_LINES
                });
                done
            });
            let generation = self.whole_file_reply(system, messages, cancel).await;
            (self.resample, self.reply_prefix, self.reply_done) = (None, None, None);
            let mut generation = generation?;
            *usage += generation.usage;
            let mut reply = Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text();
            // An opened version that ran on without coming back to the old
            // lines (a small model copying the code it was shown, from the
            // top) was cut: it changes no line, it rewrites the definition.
            let ran_on = opened.is_some_and(|(at, line)| {
                edit::rejoined(targets[at].old(), line, &reply).is_none() && reply.lines().count() > MAX_OPENED_LINES
            });
            if let (Some(opening), Some((at, line))) = (&opening, opened) {
                reply = edit::from_opening(opening, targets[at].old(), line, &reply);
                generation.blocks = vec![Block::Text { text: reply.clone() }];
            }
            // Which definition the reply changes: the one whose line it
            // fixes, or whose head its block holds; the chosen one else.
            let found = match (&raised, ask_raised) {
                _ if ran_on => Err(format!(
                    "it wrote on for {MAX_OPENED_LINES} lines without coming back to the code after the line it changes"
                )),
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
                        // An opened version is of the definition it was opened in,
                        // whatever nested definition's head it holds.
                        let opened_in = opened.map(|(at, _)| &targets[at]);
                        opened_in
                            .or(changed)
                            .or(holding.first().copied())
                            .or(alone)
                            .or(targets.first())
                            .and_then(|t| version(t).map(|code| (t, code)))
                            .ok_or_else(|| "the reply holds no code block".to_string())
                    }
                },
            };
            // The line the error is raised on, written unchanged, is
            // where the next version opens.
            if let (true, Some((target, line, _)), Err(_)) = (ask_raised, &raised, &found) {
                named_line = targets.iter().position(|t| t.is(target)).map(|at| (at, *line));
            }
            if ask_line {
                named_line = match &found {
                    Ok((target, code)) => {
                        let at = targets.iter().position(|t| t.is(target)).unwrap_or(0);
                        edit::first_changed_line(target.old(), code).map(|line| (at, line))
                    }
                    Err(_) => {
                        let mut quoted = targets
                            .iter()
                            .enumerate()
                            .filter_map(|(at, t)| Some((at, edit::line_quoted(t.old(), &reply)?)))
                            .filter(|(at, line)| runs(&targets[*at], *line));
                        quoted.next().filter(|_| quoted.next().is_none())
                    }
                };
            }
            // A reply that names no line (a line number, a sentence) is
            // asked once more, held to the lines shown.
            if ask_line && named_line.is_none() && check.is_some() && self.budget.allows_call() {
                named_line = self.line_chosen(system, base, &targets, &runs, &shown, usage, cancel).await?;
            }
            if let Ok((target, _)) = &found
                && !versioned.iter().any(|v| v.is(target))
            {
                versioned.push((*target).clone());
            }
            // A refusal carries whether the reply changed nothing: a version
            // that is the old one, or prose where a version was asked for.
            let whole_version = !ask_line && !ask_raised;
            let verdict = found.map_err(|why| (why, whole_version)).and_then(|(target, code)| {
                let definition = target.definition();
                let language = target.file.language;
                let (after, placed) = edit::replaced(&target.text, definition, &code);
                // What else the version brings: the file's other definitions
                // written anew, the helpers it calls.
                let elsewhere = |name: &str| self.homes(name).any(|(path, _)| path != target.path);
                let companions = whole_version
                    .then(|| {
                        edit::with_companions(
                            language,
                            &target.text,
                            &target.file,
                            definition,
                            &placed,
                            &reply,
                            elsewhere,
                        )
                    })
                    .flatten();
                match companions {
                    Some(after) => verify::check_file(language, &target.text, &target.file, definition, &after)
                        .map(|_| (target, placed, after)),
                    None => verify::check(language, &target.text, &target.file, definition, &placed, &after)
                        .map(|_| (target, placed, after)),
                }
                .map_err(|refusal| (refusal.to_string(), refusal == verify::Refusal::Unchanged))
            });
            // A version that special-cases the check's own input passes it
            // and fixes nothing else: refused before it runs.
            let verdict = verdict.and_then(|(target, placed, after)| {
                let script = check.as_ref().map(|c| c.script.as_str()).unwrap_or_default();
                match edit::special_cased(target.file.language, &target.text, &after, script) {
                    Some(literal) => Err((
                        format!(
                            "it compares with `{literal}`, the example's own input: a fix must work for the \
request's other cases too, not that one alone"
                        ),
                        false,
                    )),
                    None => Ok((target, placed, after)),
                }
            });
            unchanged_last = matches!(verdict, Err((_, true)));
            match verdict {
                Ok((target, new, after)) => {
                    let mut generation = generation;
                    let mut evidence = "Not checked: no check of the request could be run, so nothing was run \
with it. Review it before relying on it."
                        .to_string();
                    // No check of the request: the project's tests, where
                    // they run, still hold a version to what passed before.
                    if check.is_none() && tests_guard.is_none() {
                        tests_guard = Some(self.tests_guard(target, cancel).await?);
                    }
                    if let Some(held) = check.as_mut().or(tests_guard.as_mut().and_then(Option::as_mut)) {
                        let passes = self
                            .check_passes(held, generation, &target.path, after.clone(), &target.text, cancel)
                            .await?;
                        let uses_changed = match passes {
                            Ok(uses_changed) => uses_changed,
                            Err(why) => {
                                self.tell_refused(n, &why);
                                refusals.push(why);
                                // Its small variants are tried where it changed this definition alone.
                                let alone = edit::replaced(&target.text, target.definition(), &new).0 == after;
                                if alone && !held.guards_alone() && !near_misses.iter().any(|(_, _, m)| *m == after) {
                                    near_misses.push((target.clone(), new, after));
                                }
                                continue;
                            }
                        };
                        let passed = match held.guards_alone() {
                            true => "The project's tests pass with this version as they did before.",
                            false => "The check passes with this version.",
                        };
                        generation = Generation::default();
                        generation.blocks.push(Block::Text { text: passed.into() });
                        evidence = held.evidence(uses_changed);
                    }
                    if edit::replaced(&target.text, target.definition(), &new).0 != after {
                        let changed = format!(
                            "Changed `{}` in {}, with the other code of the file it needs. {evidence}",
                            target.qualified(),
                            target.path
                        );
                        return self.propose_file(target, generation, &after, changed, cancel).await.map(Some);
                    }
                    let changed = format!("Changed `{}` in {}. {evidence}", target.qualified(), target.path);
                    return self.propose_definition(target, generation, &new, changed, cancel).await.map(Some);
                }
                Err((why, _)) => {
                    self.record_reply(generation);
                    self.tell_refused(n, &why);
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
        let of: Vec<String> = match versioned.as_slice() {
            [] => vec![format!("`{}` in {}", candidate.qualified, candidate.path)],
            versioned => versioned.iter().map(|t| format!("`{}` in {}", t.qualified(), t.path)).collect(),
        };
        let text = format!(
            "No change was made to {}: no candidate passed verification.\n{}",
            of.join(" or "),
            tried.join("\n")
        );
        Ok(Some(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() }))
    }

    /// The line of `targets` (shown in `shown`) the model says must change,
    /// its reply held to their lines that the check `runs`: a target's
    /// index and the line's.
    #[allow(clippy::too_many_arguments)]
    async fn line_chosen(
        &mut self,
        system: &str,
        base: &[Message],
        targets: &[Target],
        runs: &(dyn Fn(&Target, usize) -> bool + Sync),
        shown: &str,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<(usize, usize)>, Stop> {
        // Each line once, where it says something: a bracket alone is no
        // place a model names.
        let mut lines: Vec<(String, (usize, usize))> = Vec::new();
        for (at, target) in targets.iter().enumerate() {
            for (i, line) in target.old().lines().enumerate() {
                let line = line.trim();
                if line.chars().any(char::is_alphanumeric) && runs(target, i) && !lines.iter().any(|(l, _)| l == line) {
                    lines.push((line.to_string(), (at, i)));
                }
            }
        }
        if lines.is_empty() {
            return Ok(None);
        }
        let choices: Vec<&str> = lines.iter().map(|(line, _)| line.as_str()).collect();
        let ask = format!(
            "{shown}\nWhich line of the code above must change to do what is asked? Reply with that line as it is now."
        );
        self.notify("[asking which line must change, held to the lines shown…]");
        let reply = self.choice_reply(system, base, &ask, &choices, usage, cancel).await?;
        Ok(lines.iter().find(|(line, _)| *line == reply).map(|(_, at)| *at))
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
