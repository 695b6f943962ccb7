//! Small variants (see [`super::variants`]) tried against the check in
//! the scratch copy, and the model's pick where several pass.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::probing::first_script;
use super::{Candidate, Stop, Target, check, expect, neighbours, reading, variants};
use crate::agent::code_text::is_comment;
use crate::agent::turn::Generation;
use crate::agent::{Conversation, TurnOutcome};
use crate::protocol::{Block, Message, Usage};

/// How a small change that passes the check was picked among those that do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pick {
    /// It alone passes.
    Alone,
    /// What the code prints with each told it from the others.
    Told,
    /// The model read the changed lines and picked it: a pick that the
    /// request's meaning leads, or one a small model makes by how a line
    /// looks (the 1.5B picked `a.minor <= b.minor` for a version check
    /// that none of the three one-token changes passing it fixes).
    Read,
    /// Nothing told: it was found first.
    First,
}

impl Pick {
    /// Whether what the code does singled the change out, rather than a
    /// reading of it or the order it was found in.
    pub(super) fn shown_by_runs(self) -> bool {
        matches!(self, Pick::Alone | Pick::Told)
    }
}

/// A small change that passes the check, picked, not yet proposed.
pub(super) struct Picked {
    pub target: Target,
    /// The change, placed in the target's definition.
    pub variant: variants::Variant,
    /// How many passed the check.
    pub passing: usize,
    pub pick: Pick,
    /// What the change rests on (see [`check::Check::evidence`]).
    pub evidence: String,
}

impl Conversation {
    /// Small variants of the definitions a crashing check's traceback
    /// passes through and the one its failing tests single out
    /// (`traced`), the chosen definition and what it calls,
    /// then of the functions the check runs (`executed`) and the other
    /// candidates, kind by kind across them (an operator, a number or a
    /// name changed, a pair swapped), tried against `check` in a scratch
    /// copy in one Bash call: the one that passes, the pick where several
    /// do (see [`Self::pick_passing`]), for [`Self::propose_variant`].
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn try_variants(
        &mut self,
        system: &str,
        base: &[Message],
        check: &mut check::Check,
        traced: &[Target],
        executed: &[Target],
        candidates: &[Candidate],
        chosen: usize,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<Picked>, Stop> {
        // Definitions varied at most, and variants tried at most in a turn.
        const MAX_DEFINITIONS: usize = 40;
        const MAX_EXECUTED: usize = 24;
        const MAX_TRIES: usize = 600;
        // Where the error is raised and what was chosen lead, each with
        // every variant it has.
        let mut varied: Vec<Target> = traced.to_vec();
        let add = |varied: &mut Vec<Target>, target: Target| {
            if varied.len() < MAX_DEFINITIONS && !varied.iter().any(|t| t.is(&target)) {
                varied.push(target);
            }
        };
        for target in self.targets(&candidates[chosen]) {
            add(&mut varied, target);
        }
        let leading = varied.len();
        // Then what the check's example runs, and the other candidates.
        let others = (0..candidates.len()).filter(|i| *i != chosen).flat_map(|i| self.targets(&candidates[i]));
        for target in executed.iter().take(MAX_EXECUTED).cloned().chain(others) {
            add(&mut varied, target);
        }
        tracing::debug!(
            "definitions varied: {} (executed: {})",
            varied.iter().map(Target::qualified).collect::<Vec<_>>().join(", "),
            executed.iter().map(Target::qualified).collect::<Vec<_>>().join(", ")
        );
        let mut tries: Vec<(usize, variants::Variant)> = Vec::new();
        let mut following: Vec<(usize, variants::Variant)> = Vec::new();
        for (at, target) in varied.iter().enumerate() {
            let found = variants::variants(target.file.language, &target.text, target.definition().range.clone());
            let into = if at < leading { &mut tries } else { &mut following };
            into.extend(found.into_iter().map(|variant| (at, variant)));
        }
        // A check's run passes through tens of short functions, none of
        // which the request singles out: a likely kind of change in any of
        // them is tried before an unlikely one in the first (a long
        // function's name swaps alone would fill the tries).
        following.sort_by_key(|(at, variant)| (variant.kind, *at));
        tries.extend(following);
        // A change where the check's run never goes cannot change what it shows.
        let unrun = check.unrun();
        let found = tries.len();
        tries.retain(|(at, variant)| {
            let target = &varied[*at];
            let Some(lines) = unrun.get(&target.path) else { return true };
            // Counted from the definition's first line: the variants lie in it.
            let definition = target.definition();
            let line_of =
                |byte: usize| definition.lines.0 + target.text[definition.range.start..byte].matches('\n').count();
            let last = variant.at.end.saturating_sub(1).max(variant.at.start);
            !(line_of(variant.at.start)..=line_of(last)).all(|line| lines.contains(&line))
        });
        if found > tries.len() {
            self.notify(&format!(
                "[{} small changes lie on lines the check's run never reaches: not tried]",
                found - tries.len()
            ));
        }
        // Two variants that make one text are one change (`!!x` without
        // either `!`): tried once, and never a pick between twins.
        let mut made = std::collections::HashSet::new();
        tries.retain(|(at, variant)| {
            let definition = varied[*at].definition().range.clone();
            let text = &varied[*at].text;
            let start = definition.start.min(variant.at.start);
            let end = definition.end.max(variant.at.end);
            made.insert((
                *at,
                format!("{}{}{}", &text[start..variant.at.start], variant.new, &text[variant.at.end..end]),
            ))
        });
        tries.truncate(MAX_TRIES);
        tracing::debug!(
            "variants tried, in order: {}",
            tries
                .iter()
                .map(|(at, v)| format!("{} {}", varied[*at].qualified(), v.what))
                .collect::<Vec<_>>()
                .join("; ")
        );
        if tries.is_empty() {
            return Ok(None);
        }
        let staged: Vec<(&str, String)> =
            tries.iter().map(|(at, v)| (varied[*at].path.as_str(), v.applied(&varied[*at].text))).collect();
        // Each varied file as it is now, once.
        let now: Vec<(&str, &str)> = varied
            .iter()
            .map(|t| (t.path.as_str(), t.text.as_str()))
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let ready = check.stage(&staged, &now);
        let command = match (ready, check.tries_command(self.budget.search_seconds())) {
            (Ok(()), Some(command)) => command,
            (Err(error), _) => {
                self.notify(&format!("[no variants tried: {error}]"));
                return Ok(None);
            }
            (_, None) => return Ok(None),
        };
        let names: Vec<String> = varied.iter().map(|t| format!("`{}`", t.qualified())).collect();
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: format!(
                "Trying {} small changes of {} against the check, in a scratch copy of the workspace.",
                tries.len(),
                names.join(", ")
            ),
        });
        // As long as the turn's seconds allow (see `harness_call`).
        let input = json!({ "command": command, "timeout_ms": u64::MAX });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        if let Some(at) = reading::tries_stopped(&output) {
            self.notify(&format!(
                "[the small changes had half the turn's seconds left: {} of {} tried]",
                at - 1,
                tries.len()
            ));
        }
        // One change reached through two definitions (a method and its
        // class) is staged twice: it counts once among those that pass.
        let mut files_after = std::collections::HashSet::new();
        let numbers: Vec<usize> = reading::all_passed(&output)
            .into_iter()
            .filter(|n| (1..=tries.len()).contains(n))
            .filter(|n| {
                let (at, variant) = &tries[n - 1];
                let text = &varied[*at].text;
                let after = format!("{}{}{}", &text[..variant.at.start], variant.new, &text[variant.at.end..]);
                files_after.insert((varied[*at].path.clone(), after))
            })
            .collect();
        let passing: Vec<&(usize, variants::Variant)> = numbers.iter().map(|n| &tries[n - 1]).collect();
        // A change that takes a number the request writes out of the code,
        // for one it never writes, goes against the request's own word
        // (`COMFORT_MAX = 24` made 25, where "the range is 18 to 24
        // inclusive"): where others pass too, it is left out.
        let request = super::prompt_of(base);
        let against: Vec<bool> = passing
            .iter()
            .map(|(at, variant)| takes_out_a_number(&request, &varied[*at].text[variant.at.clone()], &variant.new))
            .collect();
        let (numbers, passing) = match against.contains(&true) && against.contains(&false) {
            true => {
                self.tell_left_out("it takes a number the request writes out of the code", &passing, &against);
                (without(&numbers, &against), without(&passing, &against))
            }
            false => (numbers, passing),
        };
        // What uses near the check's print with each change: one that makes
        // them all print one value passes one case by giving up the others.
        let near = match self.settings.pipeline.near_uses && !passing.is_empty() {
            true => self.near_runs(check, &numbers, cancel).await?,
            false => None,
        };
        let (numbers, passing, near) = match near {
            Some((original, outputs)) => {
                let flat: Vec<bool> = outputs.iter().map(|output| neighbours::flattens(&original, output)).collect();
                if flat.contains(&true) {
                    self.tell_left_out("with it every use near the check's prints one value", &passing, &flat);
                }
                let (numbers, passing, outputs) =
                    (without(&numbers, &flat), without(&passing, &flat), without(&outputs, &flat));
                // A small change that alters what the request's own call
                // gives with its option the other way changes what the
                // request does not ask about (a search bounded short of the
                // text's end passed a check of `case_sensitive=True`).
                let turned: Vec<bool> =
                    outputs.iter().map(|output| neighbours::changes_turned(&original, output)).collect();
                if turned.contains(&true) {
                    self.tell_left_out(
                        "with it the request's own call gives another result with its option the other way",
                        &passing,
                        &turned,
                    );
                }
                let outputs = without(&outputs, &turned);
                (without(&numbers, &turned), without(&passing, &turned), Some((original, outputs)))
            }
            None => (numbers, passing, None),
        };
        let Some(first) = passing.first().copied() else {
            self.notify("[no small change passes the check]");
            return Ok(None);
        };
        let ((at, variant), pick) = match passing.len() {
            1 => (first, Pick::Alone),
            _ => {
                let near = near.as_ref().map(|(original, outputs)| (original.as_str(), outputs.as_slice()));
                self.pick_passing(system, base, check, &numbers, &passing, &varied, near, usage, cancel).await?
            }
        };
        let target = varied[*at].clone();
        let start = target.definition().range.start;
        let variant = variant.within(start);
        Ok(Some(Picked { target, variant, passing: passing.len(), pick, evidence: check.evidence(false) }))
    }

    /// Tells which of the `passing` changes `left_out` marks are left out, and `why`.
    fn tell_left_out(&self, why: &str, passing: &[&(usize, variants::Variant)], left_out: &[bool]) {
        let told: Vec<&str> =
            passing.iter().zip(left_out).filter(|(_, out)| **out).map(|((_, v), _)| v.what.as_str()).collect();
        self.notify(&format!("[left out, as {why}: {}]", told.join("; ")));
    }

    /// Proposes the small change `picked` as an Edit: the turn's outcome.
    pub(super) async fn propose_variant(
        &mut self,
        picked: Picked,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, Stop> {
        let Picked { target, variant, passing, pick, evidence } = picked;
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: match pick {
                Pick::Alone => format!("With {} in `{}`, the check passes.", variant.what, target.qualified()),
                Pick::First => format!(
                    "With {} in `{}`, the check passes; of the {passing} small changes that pass it, this one was \
found first, and which does what is asked was not told.",
                    variant.what,
                    target.qualified()
                ),
                Pick::Told | Pick::Read => format!(
                    "With {} in `{}`, the check passes; of the {passing} small changes that pass it, this one does \
what is asked.",
                    variant.what,
                    target.qualified()
                ),
            },
        });
        let changed = format!("Changed `{}` in {}: {}. {evidence}", target.qualified(), target.path, variant.what);
        self.propose_definition(&target, generation, &variant.applied(target.old()), changed, cancel).await
    }

    /// Small variants of the model's refused version of `target` (`placed`
    /// in its file, which then reads `after`), tried against the check in
    /// one Bash call: a version of the right shape with one operator wrong
    /// (`a.major >= b.major || (a.major === b.major && …)` for a version
    /// that must be compared part by part, in order) is one small change
    /// from passing, where no small change of the code as it is passes
    /// rightly. Proposed as an Edit where exactly one passes: of several,
    /// nothing says which the model meant.
    pub(super) async fn mend_refused(
        &mut self,
        check: &mut check::Check,
        target: &Target,
        placed: &str,
        after: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<TurnOutcome>, Stop> {
        /// Variants of one version tried at most.
        const MAX_MENDS: usize = 200;
        let start = target.definition().range.start;
        let range = start..start + placed.len();
        let mut found = variants::variants(target.file.language, after, range);
        found.truncate(MAX_MENDS);
        if found.is_empty() {
            return Ok(None);
        }
        let staged: Vec<(&str, String)> = found.iter().map(|v| (target.path.as_str(), v.applied(after))).collect();
        let command = match (
            check.stage(&staged, &[(target.path.as_str(), target.text.as_str())]),
            check.tries_command(self.budget.search_seconds()),
        ) {
            (Ok(()), Some(command)) => command,
            _ => return Ok(None),
        };
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: format!(
                "Trying {} small changes of the refused version of `{}` against the check, in a scratch copy.",
                found.len(),
                target.qualified()
            ),
        });
        let input = json!({ "command": command, "timeout_ms": u64::MAX });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let passing: Vec<&variants::Variant> =
            reading::all_passed(&output).into_iter().filter_map(|n| found.get(n.checked_sub(1)?)).collect();
        let [variant] = passing.as_slice() else {
            if passing.len() > 1 {
                self.notify(&format!(
                    "[{} small changes of the refused version pass the check: none is taken, as nothing says which \
was meant]",
                    passing.len()
                ));
            }
            return Ok(None);
        };
        let mended = variant.within(start).applied(placed);
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: format!(
                "With {} in the model's version of `{}`, the check passes.",
                variant.what,
                target.qualified()
            ),
        });
        let changed = format!(
            "Changed `{}` in {}: the model's version, with {}. {}",
            target.qualified(),
            target.path,
            variant.what,
            check.evidence(false)
        );
        self.propose_definition(target, generation, &mended, changed, cancel).await.map(Some)
    }

    /// The model's pick among changes that all pass the check (numbered
    /// `numbers` among the staged tries): first told apart by what they
    /// do where they differ (see [`Self::tell_apart`]), then each shown
    /// as the line it changes, before and after: a weak check passes a
    /// wrong change as readily as the right one, and which line does what
    /// the request means is what a model can read. With it, how it was
    /// picked: where nothing told them apart, the first found stands.
    #[allow(clippy::too_many_arguments)]
    async fn pick_passing<'p>(
        &mut self,
        system: &str,
        base: &[Message],
        check: &check::Check,
        numbers: &[usize],
        passing: &[&'p (usize, variants::Variant)],
        varied: &[Target],
        near: Option<(&str, &[String])>,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(&'p (usize, variants::Variant), Pick), Stop> {
        let lines: Vec<(String, String)> = passing
            .iter()
            .map(|(at, variant)| {
                let text = &varied[*at].text;
                let start = text[..variant.at.start].rfind('\n').map_or(0, |i| i + 1);
                let end = text[variant.at.end..].find('\n').map_or(text.len(), |i| variant.at.end + i);
                let after = format!("{}{}{}", &text[start..variant.at.start], variant.new, &text[variant.at.end..end]);
                (text[start..end].trim().to_string(), after.trim().to_string())
            })
            .collect();
        // Changes that read alike on their line cannot be told apart there.
        let distinct: std::collections::BTreeSet<&str> = lines.iter().map(|(_, after)| after.as_str()).collect();
        if distinct.len() < lines.len() {
            return Ok((passing[0], Pick::First));
        }
        let listed: Vec<String> = lines
            .iter()
            .zip(passing)
            .map(|((before, after), (at, variant))| {
                let target = &varied[*at];
                let said = comment_above(&target.text, variant.at.start)
                    .map(|comment| format!(" under the comment `{comment}`"))
                    .unwrap_or_default();
                format!("- in `{}` ({}){said}:\n  `{before}`\n  becomes\n  `{after}`", target.qualified(), target.path)
            })
            .collect();
        self.notify(&format!("[{} small changes pass the check: asking which does what is asked…]", passing.len()));
        // First by what they do near the check: of a 0.5B's picks among
        // such lines, and of a 1.5B's word on what a use must print, a
        // consistent one was the wrong change (semver's `diff`).
        if let Some(least) = near.and_then(|(original, outputs)| self.least_changing(original, outputs)) {
            return Ok((passing[least], Pick::Told));
        }
        let kept = self.tell_apart(system, base, check, numbers, &listed, usage, cancel).await?;
        if let [one] = kept.as_slice() {
            return Ok((passing[*one], Pick::Told));
        }
        let listed_of = |after: &str| -> String {
            let at = lines.iter().position(|(_, a)| a == after).unwrap_or(0);
            listed[at].clone()
        };
        let ask = |choices: &[&str]| {
            let listed: Vec<String> = choices.iter().map(|after| listed_of(after)).collect();
            format!(
                "Each of these changes makes the check of the request pass:\n\n{}\n\nWhich one does what is asked? \
Reply with its new line only.",
                listed.join("\n\n")
            )
        };
        let choices: Vec<&str> = kept.iter().map(|i| lines[*i].1.as_str()).collect();
        let found_first = kept[0];
        // A pick that follows the order tells nothing. Of two the model
        // stays torn between, each is judged alone, where no order can
        // lead: the one it says does what is asked, where it says so of
        // one only; else the one of them found first. Else the first found.
        let reply = match self.choice_or_torn(system, base, ask, &choices, true, usage, cancel).await? {
            Ok(reply) => reply,
            Err(torn) if !torn.is_empty() => {
                let mut said_yes = Vec::new();
                for after in &torn {
                    if !self.budget.allows_call() {
                        break;
                    }
                    let alone = format!(
                        "This change makes the check of the request pass:\n\n{}\n\nDoes it do what is asked? \
Reply yes or no.",
                        listed_of(after)
                    );
                    if self.choice_reply(system, base, &alone, &["yes", "no"], usage, cancel).await? == "yes" {
                        said_yes.push(after);
                    }
                }
                if let [after] = said_yes.as_slice() {
                    self.notify("[judged alone, one of the two changes does what is asked]");
                    let chosen = lines.iter().position(|(_, a)| a == *after).unwrap_or(0);
                    return Ok((passing[chosen], Pick::Read));
                }
                self.notify("[the pick stays torn between two changes: the one of them found first stands]");
                let first = lines.iter().position(|(_, after)| torn.contains(after)).unwrap_or(found_first);
                return Ok((passing[first], Pick::First));
            }
            Err(_) => {
                self.notify("[the pick follows the order the changes are offered in: the first found stands]");
                return Ok((passing[found_first], Pick::First));
            }
        };
        let chosen = lines.iter().position(|(_, after)| *after == reply).unwrap_or(found_first);
        Ok((passing[chosen], Pick::Read))
    }

    /// Changes that all pass the check, told apart by what they do: the
    /// model writes uses of the code where they would differ, the uses run
    /// with each change in place (a Bash call), and of each line they
    /// print differently the model says what it must print, asked both
    /// ways round. The changes (by their place in `listed`) that print
    /// what it says, all of them where nothing tells them apart.
    #[allow(clippy::too_many_arguments)]
    async fn tell_apart(
        &mut self,
        system: &str,
        base: &[Message],
        check: &check::Check,
        numbers: &[usize],
        listed: &[String],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Vec<usize>, Stop> {
        /// Lines asked about at most: each is two model calls.
        const MAX_ASKED: usize = 2;
        let all: Vec<usize> = (0..listed.len()).collect();
        if !self.budget.allows_call() {
            return Ok(all);
        }
        let ask = format!(
            "The check of the request:\n```\n{}\n```\nEach of these changes makes it pass:\n\n{}\n\nWrite another \
short script, in the same language and loading the project the same way, that prints the results of a few uses of \
the code, with other inputs than the check's, where these changes would give different results (the cases the \
changed lines decide), one per line. Reply with the script only, in one code block.",
            check.shown(),
            listed.join("\n\n")
        );
        self.notify("[asking for uses of the code where these changes differ…]");
        let (generation, reply) = self.ask_short(system, base, &ask, usage, cancel).await?;
        // The check's own examples print alike with every change that passes it.
        let script = first_script(&reply)
            .map(|script| expect::without_shared_prints(check.language(), &script, &check.script))
            .filter(|script| script.lines().any(|line| expect::prints_a_line(check.language(), line)));
        let Some(command) = script.and_then(|script| check.differ_command(&script, numbers)) else {
            self.notify("[the uses do not tell the changes apart]");
            self.record_reply(generation);
            return Ok(all);
        };
        let input = json!({ "command": command, "timeout_ms": 120_000 });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let outputs: Vec<String> = reading::outputs_by_try(&output).into_iter().map(|(_, printed)| printed).collect();
        let printed: Vec<Vec<&str>> = outputs.iter().map(|o| o.lines().collect()).collect();
        // Line by line, where every change printed as many lines.
        if printed.len() != listed.len() || printed.iter().any(|p| p.len() != printed[0].len()) {
            self.notify("[the uses do not tell the changes apart]");
            return Ok(all);
        }
        let script = check.differ_script();
        let statements = expect::printing_statements(check.language(), &script, &outputs[0]);
        let mut kept = all.clone();
        let mut asked = 0;
        for line in 0..printed[0].len() {
            let mut values: Vec<&str> = kept.iter().map(|k| printed[*k][line]).collect();
            values.sort();
            values.dedup();
            if values.len() < 2 {
                continue;
            }
            if asked == MAX_ASKED || !self.budget.allows_call() {
                break;
            }
            asked += 1;
            let what = match &statements {
                Some(statements) => format!("`{}` prints", statements[line]),
                None => format!("its line {} reads", line + 1),
            };
            let ask = |choices: &[&str]| {
                let listed: Vec<String> = choices.iter().map(|v| format!("`{v}`")).collect();
                format!(
                    "This script:\n```\n{}\n```\nWith one change or another of the code in place, {what} {}. Once \
the request is done, what must it print? Reply with one of: {}.",
                    script.trim_end(),
                    listed.join(" or "),
                    listed.join(", ")
                )
            };
            let Some(reply) = self.choice_both_ways(system, base, ask, &values, false, usage, cancel).await? else {
                continue;
            };
            kept.retain(|k| printed[*k][line] == reply);
            let statement = statements.as_ref().map_or(format!("line {}", line + 1), |s| format!("`{}`", s[line]));
            self.notify(&format!("[{statement} must print `{reply}`: {} of the changes print it]", kept.len()));
            if kept.len() == 1 {
                break;
            }
        }
        if kept.len() == all.len() {
            self.notify("[the uses do not tell the changes apart]");
        }
        Ok(kept)
    }
}

/// `items` without those `left_out` marks, in their order.
fn without<T: Clone>(items: &[T], left_out: &[bool]) -> Vec<T> {
    items.iter().zip(left_out).filter(|(_, out)| !**out).map(|(item, _)| item.clone()).collect()
}

/// The comment lines right above the line that holds byte `at` of `text`,
/// joined (at most three): what the code's author says the line does,
/// which a model can hold each change against (`// add the pre prefix if
/// we are going to a prerelease version` above `prefix = lowHasPre ? …`).
fn comment_above(text: &str, at: usize) -> Option<String> {
    const MAX_LINES: usize = 3;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut comment: Vec<&str> = text[..start]
        .lines()
        .rev()
        .take_while(|line| is_comment(line))
        .take(MAX_LINES)
        .map(|line| line.trim())
        .collect();
    comment.reverse();
    (!comment.is_empty()).then(|| comment.join(" "))
}

/// Whether changing the whole number `old` to `new` takes a number the
/// request writes out of the code for one it never writes.
fn takes_out_a_number(request: &str, old: &str, new: &str) -> bool {
    let whole = |word: &str| !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
    // A number of its own, not a part of a version or a decimal (`2.0.0`).
    let written = |number: &str| {
        request
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .any(|word| word.trim_end_matches('.') == number)
    };
    whole(old) && whole(new) && written(old) && !written(new)
}

#[cfg(test)]
mod tests {
    use super::{comment_above, takes_out_a_number};

    #[test]
    fn a_change_that_takes_a_number_the_request_writes_out_of_the_code_is_told() {
        let request = "is_comfortable(24) returns False: the range is 18 to 24 inclusive. Fix it.";
        assert!(takes_out_a_number(request, "24", "25"));
        assert!(!takes_out_a_number(request, "24", "18"), "to another number it writes");
        assert!(!takes_out_a_number(request, "23", "24"), "a number it does not write");
        assert!(!takes_out_a_number(request, "2", "3"), "a digit of a longer number is not one it writes");
        assert!(!takes_out_a_number(request, "<", "<="));
        let versions = "isAtLeast('2.0.0', '1.5.0') returns false";
        assert!(!takes_out_a_number(versions, "2", "3"), "a part of a version is no number of its own");
    }

    #[test]
    fn a_changed_line_is_told_with_the_comment_above_it() {
        let text = "function f(v) {\n  const high = v.pre\n  // add the prefix if we are going to a prerelease\n  \
// version\n  const prefix = low ? 'pre' : ''\n}\n";
        let at = text.find("low ?").unwrap();
        assert_eq!(
            comment_above(text, at).as_deref(),
            Some("// add the prefix if we are going to a prerelease // version")
        );
        assert_eq!(comment_above(text, text.find("v.pre").unwrap()), None);
        assert_eq!(comment_above("x = 1\n", 2), None);
    }
}
