//! The pipeline's answer to a question: the chosen definition and the
//! next best while they fit, the heads of those that do not, the values
//! of the constants they use, and what a script of the request's example
//! prints on the project.

use tokio_util::sync::CancellationToken;

use super::{Candidate, Stop, Target};
use crate::agent::{Conversation, TurnOutcome};
use crate::codemap::DefKind;
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
        let ran = match self.candidate_target(&candidates[chosen]) {
            Some(target) => self.experiment(system, base, &target, usage, cancel).await?,
            None => None,
        };
        let (ran, from) = match ran {
            Some((script, printed)) => (
                format!(
                    "This script:\n```\n{script}\n```\nprints, run on the project as it is:\n```\n{printed}\n```\n"
                ),
                "the code shown and what the script printed",
            ),
            None => (String::new(), "the code shown"),
        };
        let mut messages = base.to_vec();
        crate::agent::whole_file::after_prompt(
            &mut messages,
            &format!("{shown}\n{ran}Answer the request from {from}, in one or two sentences."),
        );
        self.events.emit(Event::Status { status: AgentStatus::Thinking });
        let generation = self.whole_file_reply(system, messages, cancel).await?;
        *usage += generation.usage;
        let text = Message { role: Role::Assistant, blocks: generation.blocks.clone() }.text();
        self.record_reply(generation);
        Ok(TurnOutcome { stop_reason: StopReason::EndTurn, text, usage: Usage::default() })
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
                let line = format!("- `{}` in {}", text.split_whitespace().collect::<Vec<_>>().join(" "), found.path);
                if !told.contains(&line) {
                    told.push(line);
                }
            }
        }
        told
    }
}
