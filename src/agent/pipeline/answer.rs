//! The pipeline's answer to a question: the chosen definition and the
//! next best while they fit, the heads of those that do not, the values
//! of the constants they use, and what a run on the project shows: the
//! program the request quotes, traced, else a script of its example.

use tokio_util::sync::CancellationToken;

use super::checking::NOT_LOADED;
use super::{Candidate, Stop, Target, check, edit, loading, reading, traced};
use crate::agent::{Conversation, TurnOutcome};
use crate::codemap::{DefKind, Definition, Source};
use crate::protocol::{AgentStatus, Event, Message, Role, StopReason, Usage};

impl Conversation {
    /// Answers from the chosen definition and the next best ones.
    pub(super) async fn answer(
        &mut self,
        system: &str,
        base: &[Message],
        candidates: &[Candidate],
        chosen: usize,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, Stop> {
        const SHOWN_CHARS: usize = 6_000;
        // The chosen definition with what it calls (a class's constructor
        // for a class it makes), then the next best while they fit.
        let mut targets = self.targets(&candidates[chosen]);
        let others = (0..candidates.len()).filter(|i| *i != chosen);
        targets.extend(others.filter_map(|i| self.candidate_target(&candidates[i])));
        let mut shown = String::new();
        let mut whole: Vec<Target> = Vec::new();
        // Those that do not fit whole are listed by their heads: which
        // definition does a thing may be the question.
        let mut listed: Vec<(Target, String)> = Vec::new();
        for target in targets {
            if whole.iter().chain(listed.iter().map(|(t, _)| t)).any(|t| t.is(&target)) {
                continue;
            }
            let definition = target.shown();
            if !shown.is_empty() && shown.len() + definition.len() > SHOWN_CHARS {
                let d = target.definition();
                let doc = d.doc.as_deref().map(|doc| format!(": {doc}")).unwrap_or_default();
                let head = format!("- `{}` in {}{doc}", d.signature, target.path);
                listed.push((target, head));
                continue;
            }
            shown.push_str(&definition);
            shown.push('\n');
            whole.push(target);
        }
        let listed: Vec<String> = listed.into_iter().map(|(_, head)| head).collect();
        let constants = self.constants_used(&whole);
        if !constants.is_empty() {
            shown.push_str(&format!("The constants they use:\n{}\n", constants.join("\n")));
        }
        if !listed.is_empty() {
            shown.push_str(&format!("Other definitions of the project:\n{}\n", listed.join("\n")));
        }
        let request = super::prompt_of(base);
        // The program the request quotes, run as quoted, shows what it does
        // with no script of the model's (see `traced`).
        let traced = match traced::quoted_python_run(&request, self.workspace.root()) {
            Some(words) => self.traced_run(&words, cancel).await?,
            None => None,
        };
        let ran = match self.candidate_target(&candidates[chosen]).filter(|_| traced.is_none()) {
            Some(target) => self.experiment(system, base, &target, candidates, usage, cancel).await?,
            None => None,
        };
        let (script, printed) = ran.unzip();
        let (ran, from) = match (traced, &script, &printed) {
            (Some(traced), _, _) => (traced, "the code shown and what the run showed"),
            (None, Some(script), Some(printed)) => (
                crate::agent::whole_file::ran_on_project(script, printed),
                "the code shown and what the script printed",
            ),
            _ => (String::new(), "the code shown"),
        };
        let asked =
            |ran: &str, from: &str| format!("{shown}\n{ran}Answer the request from {from}, in one or two sentences.");
        let mut ask = asked(&ran, from);
        let mut refused = String::new();
        let mut asked_again = false;
        loop {
            let mut messages = base.to_vec();
            crate::agent::whole_file::after_prompt(&mut messages, &format!("{ask}{refused}"));
            self.events.emit(Event::Status { status: AgentStatus::Thinking });
            let generation = self.whole_file_reply(system, messages, cancel).await?;
            *usage += generation.usage;
            let text = Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text();
            self.record_reply(generation);
            // An answer that names what the project does not define is
            // asked again once, told so: the second stands.
            let unfounded = self.unfounded(&text, &request, &shown, script.as_deref()).or_else(|| {
                // An answer that only quotes the script's output, framed in
                // the ask's own words, has not said what it means: asked
                // again once, told so; the second stands (where the output
                // itself is the answer, it is given again).
                printed.as_deref().filter(|printed| only_quotes(&text, printed, &format!("{request}\n{ask}"))).map(
                    |_| {
                        let why = "it only repeats what the script printed".to_string();
                        (why, false)
                    },
                )
            });
            match unfounded.filter(|_| !asked_again && self.budget.allows_call()) {
                Some((why, scripts_own)) => {
                    asked_again = true;
                    self.notify(&format!("[the answer is set aside: {why}]"));
                    self.record(Message::user_text(format!("[tack] The answer was set aside: {why}.")));
                    // A script whose own helper was told as the project's
                    // misled: the answer is asked again from the code alone,
                    // as if no script had run (told the helper's name, a
                    // small model answers that it is not defined).
                    match scripts_own {
                        true => ask = asked("", "the code shown"),
                        false => refused = format!("\nYour last answer was set aside: {why}."),
                    }
                }
                None => return Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() }),
            }
        }
    }

    /// For a question, the model's script that runs on the project what
    /// the request asks about and prints the value asked for, run on the
    /// code as it is (a Bash call): the script and what it printed, for
    /// the answer to rest on what the code does rather than on what a small
    /// model reads into it. A script that fails on its own mistake, never
    /// loads the project, reads its empty command line, or prints an
    /// object, only empty values or nothing is asked for again (twice),
    /// told why (a small model's first script often calls what the project
    /// does not offer). `None` where the check is switched off or has no
    /// runner, the model sees no script that shows it, or no script within
    /// the asks shows anything.
    pub(super) async fn experiment(
        &mut self,
        system: &str,
        base: &[Message],
        target: &Target,
        candidates: &[Candidate],
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<Option<(String, String)>, Stop> {
        /// What the answer is shown of the run at most.
        const SHOWN_CHARS: usize = 1_500;
        const ASKS: usize = 3;
        let language = target.file.language;
        let Some(runner) = self.check_runner(language) else { return Ok(None) };
        let loading = loading::loading(self.workspace.root(), &self.code_map, language, &target.path);
        let request = super::prompt_of(base);
        let mut refused = String::new();
        for attempt in 0..ASKS {
            if !self.budget.allows_call() {
                break;
            }
            let ask = format!(
                "Write a short {} script that runs on the project what the request asks about and prints the value \
it asks for. {} It runs with no command-line arguments: write any it passes into the script itself. Reply with the \
script only, in one code block; if no script can show it, reply `none`.{refused}",
                runner.language_name(),
                loading.hint,
            );
            self.notify("[writing a script that shows what the request asks about…]");
            let (generation, reply) = self.ask_script(system, base, &ask, attempt, usage, cancel).await?;
            // A `none` written as a script is the reply `none`.
            let made = edit::code_blocks(&reply)
                .into_iter()
                .next()
                .filter(|script| !script.trim().eq_ignore_ascii_case("none"))
                .map(|script| check::Check::new(runner, loading.clone(), &script));
            let Some(Ok(mut check)) = made else {
                self.record_reply(generation);
                break;
            };
            if let Some(why) = self.cannot_show(language, &loading, &check.script, NOT_LOADED) {
                refused = self.set_aside_unrun(generation, "script", &why, candidates);
                continue;
            }
            let (ran, output) = self.run_now(system, base, generation, &mut check, usage, cancel).await?;
            if output.starts_with("permission denied") {
                break;
            }
            let shown = match (ran, check.arguments_why()) {
                (_, Some(why)) => Err(why),
                (true, None) => {
                    let printed = check.now_output();
                    match runner.shows_no_values(&printed, &request) {
                        Some(why) => Err(format!("{why}{}", self.command_line_hint(runner, &request, &check.script))),
                        None => Ok(reading::normalized(&printed)),
                    }
                }
                // The project's own error may be the answer (the error a call raises).
                (false, None) => match reading::shows_nothing(&output, true) {
                    None => reading::empty_why(&output, &request).map_or_else(|| Ok(reading::normalized(&output)), Err),
                    Some(why) => Err(why),
                },
            };
            let why = match shown {
                Ok(shown) => {
                    let cut = shown.chars().count().saturating_sub(SHOWN_CHARS);
                    return Ok(Some((check.script.trim_end().to_string(), shown.chars().skip(cut).collect())));
                }
                Err(why) => why,
            };
            self.notify(&format!("[the script is set aside: {why}]"));
            self.record(Message::user_text(format!("[tack] The script was set aside: {why}.")));
            refused = self.told_why(&why, candidates);
        }
        self.notify("[no script shows what the request asks about]");
        Ok(None)
    }

    /// Why `answer` cannot stand, where it writes as code a name of the
    /// kind a program defines (see [`code_names`]) that the project does
    /// not define and neither the request nor the code shown names: a
    /// small model tells its script's own helper (`split_iterable`) as the
    /// project's function, or a name it remembers from elsewhere. With it,
    /// whether the script defines that name.
    fn unfounded(&self, answer: &str, request: &str, shown: &str, script: Option<&str>) -> Option<(String, bool)> {
        let names = |text: &str| -> std::collections::BTreeSet<String> {
            text.split(|c: char| !(c.is_alphanumeric() || c == '_')).map(str::to_string).collect()
        };
        let (request, shown) = (names(request), names(shown));
        let name = code_names(answer)
            .into_iter()
            .find(|name| !request.contains(*name) && !shown.contains(*name) && self.homes(name).next().is_none())?;
        let scripts_own = script.is_some_and(|script| names(script).contains(name));
        let why = match scripts_own {
            true => format!("`{name}` is the script's own, not the project's: the project defines no `{name}`"),
            false => format!("the project defines no `{name}`, and neither the request nor its code names one"),
        };
        Some((why, scripts_own))
    }

    /// The project's constants the `shown` definitions use, each a line
    /// (`- MAX_LENGTH = 256 in internal/constants.js`) where one short
    /// definition holds it: the value a question asks for often sits in a
    /// constant a function only names.
    fn constants_used(&self, shown: &[Target]) -> Vec<String> {
        /// Lines a constant may take to be told whole.
        const MAX_LINES: usize = 3;
        let mut told: Vec<String> = Vec::new();
        for target in shown {
            for used in &target.definition().uses {
                let defining: Vec<_> = self
                    .code_map
                    .definitions()
                    .filter(|f| f.definition.kind == DefKind::Constant && f.definition.name == *used)
                    .filter(|f| !crate::codemap::rank::is_aside(f.path))
                    .collect();
                let [found] = defining.as_slice() else { continue };
                let (first, last) = found.definition.lines;
                let whole =
                    shown.iter().any(|t| t.path == found.path && t.definition().range == found.definition.range);
                if last + 1 - first > MAX_LINES || whole {
                    continue;
                }
                // Its text as the file holds it now, read only for one that is told.
                let Some(text) =
                    self.target(found.path, |d, _| d.range == found.definition.range).map(|t| t.old().to_string())
                else {
                    continue;
                };
                let value = self.computed_value(found.path, found.definition);
                let value = value.map(|v| format!(", which computes {v}")).unwrap_or_default();
                let written = text.split_whitespace().collect::<Vec<_>>().join(" ");
                let line = format!("- `{written}` in {}{value}", found.path);
                if !told.contains(&line) {
                    told.push(line);
                }
            }
        }
        told
    }

    /// The value the constant `definition` of `path` computes (see
    /// [`crate::codemap::computed`]), folded over its file and the files of
    /// the constants it names; `None` where it is written out or does not fold.
    fn computed_value(&self, path: &str, definition: &Definition) -> Option<String> {
        let mut paths = vec![path];
        let named = self.code_map.definitions().filter(|f| {
            f.definition.kind == DefKind::Constant
                && definition.uses.contains(&f.definition.name)
                && !crate::codemap::rank::is_aside(f.path)
        });
        for found in named {
            if !paths.contains(&found.path) {
                paths.push(found.path);
            }
        }
        let read: Vec<Target> = paths.iter().filter_map(|path| self.target(path, |_, _| true)).collect();
        let sources: Vec<Source> =
            read.iter().map(|t| Source { path: &t.path, text: &t.text, file: &t.file }).collect();
        let computed = crate::codemap::computed(&sources);
        computed.into_iter().find(|c| c.path == path && c.name == definition.name).map(|c| c.value)
    }
}

/// The names `answer` writes between backticks that read as a program's
/// own (`split_iterable`, `parseArgs`, `pkg.divide`, `run()`), each the
/// last part of a dotted name: a plain word (`list`, `None`) may be any
/// language's.
fn code_names(answer: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for span in answer.split('`').skip(1).step_by(2) {
        let span = span.trim();
        let head = span.split('(').next().unwrap_or_default();
        let Some(last) = head.rsplit('.').next() else { continue };
        if !head.split('.').all(crate::text::is_identifier) {
            continue;
        }
        let snake = last.trim_matches('_').contains('_');
        let camel = last.chars().any(char::is_lowercase) && last.chars().skip(1).any(char::is_uppercase);
        if (snake || camel || head.contains('.') || span.contains('(')) && !names.contains(&last) {
            names.push(last);
        }
    }
    names
}

/// Whether `answer` only quotes `printed` (a script's output) in a code
/// block, with no word of its own beside it: each word outside its code
/// blocks is one of `asked` (the request and the ask) or of the output.
fn only_quotes(answer: &str, printed: &str, asked: &str) -> bool {
    let squeezed = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let printed = squeezed(printed);
    let blocks = edit::code_blocks(answer);
    if printed.is_empty() || !blocks.iter().any(|block| squeezed(block) == printed) {
        return false;
    }
    let known: std::collections::BTreeSet<String> =
        reading::lowercase_words(asked).chain(reading::lowercase_words(&printed)).collect();
    // The prose: the answer with its fenced blocks taken out.
    let prose: String = answer.split("```").step_by(2).collect::<Vec<_>>().join(" ");
    reading::lowercase_words(&prose).all(|word| known.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::{code_names, only_quotes};

    #[test]
    fn an_answer_s_code_names_are_those_a_program_defines() {
        let answer = "Use `split_iterable` (or `more.divide()`, `parseArgs`); it gives `None` from a `list`, \
not `'x_y'` or `__init__`.";
        assert_eq!(code_names(answer), ["split_iterable", "divide", "parseArgs"]);
    }

    #[test]
    fn an_answer_that_only_quotes_the_output_is_told_from_one_that_reads_it() {
        let asked = "Which output format does it use?\nThis script prints, run on the project as it is:\nAnswer the \
request from the code shown and what the script printed, in one or two sentences.";
        let printed = "<p>Hello, world!</p>\n";
        let echo = "The script printed, run on the project as it is, is:\n\n```\n<p>Hello, world!</p>\n```\n";
        assert!(only_quotes(echo, printed, asked));
        let read = "It uses `xhtml`: the script printed\n```\n<p>Hello, world!</p>\n```";
        assert!(!only_quotes(read, printed, asked));
        // Words of its own, no quote of the output: an answer.
        assert!(!only_quotes("The output format is xhtml.", printed, asked));
    }
}
