//! What a printing check must print once the request is done: read from
//! the request where it says both what an example gives and what it
//! should give, else asked of the model line by line, held to the values
//! the request writes and asked both ways round, else asked whole.

use tokio_util::sync::CancellationToken;

use super::{Stop, check, edit, examples, expect, reading};
use crate::agent::Conversation;
use crate::protocol::{Message, Usage};

/// What a printing check became once asked what it must print.
pub(super) enum Expected {
    /// The check, passing once it prints what it must.
    Made(Box<check::Check>),
    /// The model says it must print what it prints now: the script does
    /// not run the case the request reports, and another may.
    AsNow,
    /// No check: no call left, or nothing a check could hold.
    Unmade,
}

impl Conversation {
    /// What a printing check must print once the request is done, in the
    /// model's words.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn expect_output(
        &mut self,
        system: &str,
        base: &[Message],
        check: check::Check,
        printed: &str,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Expected, Stop> {
        const SHOWN_CHARS: usize = 1_500;
        let made =
            |check: Option<check::Check>| check.map_or(Expected::Unmade, |check| Expected::Made(Box::new(check)));
        if !self.budget.allows_call() {
            return Ok(Expected::Unmade);
        }
        let shown: String = printed.chars().take(SHOWN_CHARS).collect();
        if let Some(expected) = self.expect_by_line(system, base, &check, &shown, usage, cancel).await? {
            if expected.is_empty() {
                self.notify("[no check: which value each line must print, the model picks by the order offered]");
                return Ok(Expected::Unmade);
            }
            let expected = self.with_values(check.language(), &expected, cancel).await?;
            return Ok(made(self.expecting(check, &expected, false)));
        }
        if !self.budget.allows_call() {
            return Ok(Expected::Unmade);
        }
        let ask = format!(
            "This script:\n```\n{}\n```\nprints, on the code as it is:\n```\n{}\n```\nWhat must it print once the \
request is done? Reply with that output only, in one code block.",
            check.script.trim_end(),
            shown.trim_end()
        );
        let (generation, reply) = self.ask_short(system, base, &ask, usage, cancel).await?;
        self.record_reply(generation);
        let expected = edit::code_blocks(&reply).into_iter().next().unwrap_or_else(|| reply.trim().to_string());
        let expected = self.with_values(check.language(), &expected, cancel).await?;
        if reading::layout_changed(printed, &expected) {
            return Ok(made(self.expecting(check, &expected, true)));
        }
        let expected = reading::changed_lines(printed, &reading::normalized(&expected));
        if expected.trim().is_empty() {
            return Ok(Expected::AsNow);
        }
        Ok(made(self.expecting(check, &expected, false)))
    }

    /// `check`, from now on passing only when it prints `expected` (its
    /// lines one after another, `in_order`); `None` when that cannot be kept.
    fn expecting(&self, mut check: check::Check, expected: &str, in_order: bool) -> Option<check::Check> {
        let kept = match in_order {
            true => check.expect_in_order(expected),
            false => check.expect(expected),
        };
        if let Err(error) = kept {
            self.notify(&format!("[no check: {error}]"));
            return None;
        }
        self.notify(match in_order {
            true => "[the check prints its lines in another layout than it must: it passes once they read as expected]",
            false => "[the check prints something else than it must: it passes once it prints what is expected]",
        });
        Some(check)
    }

    /// `expected` with each line written as an expression (see
    /// [`expect::computed`]) made the value it evaluates to, where it runs.
    async fn with_values(
        &mut self,
        language: crate::codemap::Language,
        expected: &str,
        cancel: &CancellationToken,
    ) -> Result<String, Stop> {
        let expressions: Vec<String> =
            expected.lines().map(str::trim).filter(|line| expect::computed(line)).map(str::to_string).collect();
        if expressions.is_empty() {
            return Ok(expected.to_string());
        }
        let values = self.evaluated(language, &expressions, cancel).await?;
        let mut lines: Vec<String> = expected.lines().map(str::to_string).collect();
        for (expression, value) in expressions.iter().zip(values) {
            let Some(value) = value else { continue };
            self.notify(&format!("[`{expression}` is `{value}`]"));
            for line in lines.iter_mut().filter(|line| line.trim() == expression) {
                *line = value.clone();
            }
        }
        Ok(lines.join("\n"))
    }

    /// The values of `expressions` as the language prints them, each run
    /// alone by its bare interpreter in an empty folder (the project is not
    /// loaded: a value the request computes from the project's own calls
    /// stays text); `None` for one that does not run or prints no one line.
    async fn evaluated(
        &mut self,
        language: crate::codemap::Language,
        expressions: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Option<String>>, Stop> {
        const END: &str = "TACK_VALUE_END";
        let Some(runner) = self.check_runner(language) else { return Ok(vec![None; expressions.len()]) };
        let Some(printed) = runner.printed(expressions) else { return Ok(vec![None; expressions.len()]) };
        let command = format!("cd \"$(mktemp -d)\" && {{ {printed}; }}");
        let mut generation = crate::agent::turn::Generation::default();
        generation.blocks.push(crate::protocol::Block::Text {
            text: "The values the request writes as expressions, evaluated.".into(),
        });
        let input = serde_json::json!({ "command": command, "timeout_ms": 10_000 });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let mut values: Vec<Option<String>> = output
            .split(&format!("{END}\n"))
            .map(|part| Some(part.trim().to_string()).filter(|v| !v.is_empty() && !v.contains('\n')))
            .collect();
        values.resize(expressions.len(), None);
        Ok(values)
    }

    /// What the check must print, asked line by line of what it prints
    /// now (see [`expect`]): each line the request speaks of, held to the
    /// request's values of its shape, in both orders. The lines that must
    /// read otherwise (the others are left free); `None` when none must, or
    /// the request speaks of no line; empty when every pick followed the
    /// order offered.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn expect_by_line(
        &mut self,
        system: &str,
        base: &[Message],
        check: &check::Check,
        shown: &str,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, Stop> {
        /// Lines asked about at most: each is a model call.
        const MAX_ASKED: usize = 3;
        let request = super::prompt_of(base);
        let values = expect::request_values(&request);
        let printed = reading::normalized(shown);
        let statements = expect::printing_statements(check.language(), &check.script, &printed);
        let lines: Vec<(usize, String, Vec<String>)> = printed
            .lines()
            .enumerate()
            // A line the script itself holds whole is its input echoed (a
            // Markdown source's lines inside the HTML it renders): the
            // request quotes it as input, not as a value it must print.
            .filter(|(_, line)| !expect::echoed_input(line, &check.script))
            .filter_map(|(i, line)| {
                let options = expect::line_options(line, &values)
                    .or_else(|| expect::near_miss_options(line, &printed, &request, &values))?;
                Some((i, line.to_string(), options))
            })
            .take(MAX_ASKED)
            .collect();
        let mut expected = Vec::new();
        let mut asked = 0;
        // What the request itself says of each line needs no ask: a line it
        // says must become another value does; beside such a line, one it
        // quotes alone, as it prints now, is what the report finds right.
        let sole = printed.lines().count() == 1;
        let stated: Vec<Option<examples::Stated>> = lines
            .iter()
            .map(|(i, line, _)| statements.as_ref().and_then(|s| examples::stated(&request, &s[*i], line, sole)))
            .collect();
        let changing = stated.iter().any(|s| matches!(s, Some(examples::Stated::Becomes(_))));
        for ((i, line, options), stated) in lines.into_iter().zip(stated) {
            match stated {
                Some(examples::Stated::Becomes(value)) => {
                    self.notify(&format!("[the line `{line}` must read `{value}`, as the request writes]"));
                    expected.push((line, value));
                    continue;
                }
                Some(examples::Stated::Quoted) if changing => {
                    self.notify(&format!("[the line `{line}` stays as it is: the request quotes it so]"));
                    expected.push((line.clone(), line));
                    continue;
                }
                _ => {}
            }
            if !self.budget.allows_call() {
                break;
            }
            asked += 1;
            // Where each line's statement is known, the model is asked about
            // that statement: told only the output, it matched lines to the
            // request's examples by their order.
            let what = match &statements {
                Some(statements) => format!(
                    "On the code as it is, `{}` prints `{line}`. Once the request is done, what must it print?",
                    statements[i]
                ),
                None => format!(
                    "It prints, on the code as it is:\n```\n{}\n```\nOnce the request is done, what must the line \
that now reads `{line}` read?",
                    shown.trim_end()
                ),
            };
            let ask = |choices: &[&str]| {
                let listed: Vec<String> = choices.iter().map(|o| format!("`{o}`")).collect();
                format!(
                    "This script:\n```\n{}\n```\n{what} Reply with one of: {}.",
                    check.script.trim_end(),
                    listed.join(", ")
                )
            };
            let choices: Vec<&str> = options.iter().map(String::as_str).collect();
            // A small model that picks by position says nothing of what the
            // line must read.
            let Some(reply) = self.choice_both_ways(system, base, ask, &choices, false, usage, cancel).await? else {
                self.notify(&format!("[the line `{line}`: the pick follows the order it is offered in — left free]"));
                continue;
            };
            self.notify(&format!("[the line `{line}` must read `{reply}`]"));
            expected.push((line, reply));
        }
        if asked > 0 && expected.is_empty() {
            return Ok(Some(String::new()));
        }

        if expected.iter().all(|(line, reply)| line == reply) {
            return Ok(None);
        }
        Ok(Some(expected.into_iter().map(|(_, reply)| reply).collect::<Vec<_>>().join("\n")))
    }
}
