//! The probe: where the project's tests cannot guard, a script of other
//! uses of the code that work as they should, whose output a candidate
//! must leave as it is. Uses that are the request's own case again, or
//! that all print what the fixed check must, guard nothing.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Stop, Target, check, edit, expect};
use crate::agent::Conversation;
use crate::agent::turn::Generation;
use crate::protocol::{Block, Message, Usage};

impl Conversation {
    /// Where the project's tests cannot guard, the model writes a probe:
    /// a script of other uses of the code that work as they should. What
    /// it prints in the scratch copy as it is, a candidate must leave as
    /// it is, so that a change which passes the check by breaking the
    /// code's other uses is not offered.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn probe(
        &mut self,
        system: &str,
        base: &[Message],
        target: &Target,
        check: &mut check::Check,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> Result<(), Stop> {
        /// Asks at most: a probe that guards nothing is asked for again once.
        const ASKS: usize = 2;
        let language = check.language();
        let mut told = String::new();
        for attempt in 0..ASKS {
            if !self.budget.allows_call() {
                return Ok(());
            }
            let ask = format!(
                "Now write another short script, in the same language and loading the project the same way, that \
prints the results of five other uses of `{}` in {} that work as they should (not the ones the request is about), one \
per line. Reply with the script only, in one code block.{told}",
                target.definition().signature,
                target.path
            );
            let ask = format!("The script that shows the problem:\n```\n{}\n```\n{ask}", check.shown());
            self.notify("[writing a probe of the code's other uses…]");
            let (generation, reply) = self.ask_short(system, base, &ask, usage, cancel).await?;
            let command = first_script(&reply)
                .map(|script| expect::without_shared_prints(language, &script, &check.script))
                .and_then(|script| check.probe_command(&script));
            let Some(command) = command else {
                self.record_reply(generation);
                return Ok(());
            };
            let (mut ran, _) = self.harness_call(generation, "Bash", json!({ "command": command }), cancel).await?;
            let cases = check.request_cases();
            let trimmed =
                expect::without_request_cases(language, &check.probe_script(), &check.probe_printed(), &cases);
            if let Some(command) = trimmed.filter(|_| ran).and_then(|script| check.probe_command(&script)) {
                let mut generation = Generation::default();
                generation.blocks.push(Block::Text {
                    text: "The probe again without its uses that print, in the request's own shape, the value the \
request says is wrong: those are the request's case, not other uses."
                        .into(),
                });
                self.notify("[the probe repeats the request's case with other values: those uses are left out]");
                ran = self.harness_call(generation, "Bash", json!({ "command": command }), cancel).await?.0;
            }
            // Uses that all print what the fixed check must print keep a
            // change that makes every use print it (a range that lets no
            // version in): they are asked for again, told so.
            if let Some(value) = check.fixed_alike(&check.probe_printed()).filter(|_| ran && attempt + 1 < ASKS) {
                self.notify(&format!(
                    "[every use the probe makes prints `{value}`, as the check must once fixed: it would keep a \
change that makes every use print it — asked again]"
                ));
                told = format!(
                    "\nYour last script's uses all print `{value}`, as the script that shows the problem must once \
it is fixed: a change that made every use print `{value}` would keep them. Write uses whose results differ."
                );
                continue;
            }
            let doubtful = expect::doubtful_prints(language, &check.probe_script(), &check.probe_printed(), &cases);
            match ran && check.guard_with_probe(&doubtful).unwrap_or(false) {
                true => self.notify("[a candidate must leave what the probe prints as it is]"),
                false => self.notify("[the probe does not run: candidates are judged by the check alone]"),
            }
            return Ok(());
        }
        Ok(())
    }
}

/// The first script of a reply, in a code block. A block left open is a
/// reply cut at its token limit (a small model asked for a few uses writes
/// far more): its unfinished last line goes.
pub(super) fn first_script(reply: &str) -> Option<String> {
    let cut = reply.matches("```").count() % 2 == 1;
    edit::code_blocks(reply).into_iter().next().map(|script| match cut {
        true => script.trim_end().rsplit_once('\n').map_or(String::new(), |(whole, _)| whole.to_string()),
        false => script,
    })
}
