//! Remember: a fact worth keeping across sessions, appended with its date to
//! the project's memory file, which later conversations are shown. The write
//! is an edit like any other: the user reviews it, outside `auto_all`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome};
use crate::workspace::edits::FileChange;

/// The project's memory, relative to the workspace root.
pub const MEMORY_FILE: &str = ".tack/MEMORY.md";
/// Facts longer than this are refused: memory is for short facts.
const MAX_FACT_CHARS: usize = 500;
/// Lines of the memory shown to a new conversation, newest kept.
const SHOWN_LINES: usize = 60;
/// Bytes of the memory shown to a new conversation, newest kept.
const SHOWN_BYTES: usize = 4 * 1024;

pub struct Remember;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberInput {
    /// One short fact about this project that later sessions should know
    /// (a command, a convention, a decision), in one sentence.
    fact: String,
}

#[async_trait]
impl TypedTool for Remember {
    type Input = RememberInput;
    const NAME: &'static str = "Remember";
    const DESCRIPTION: &'static str = "Save a short fact about this project for later sessions (how to run the tests, a convention, a decision the user made). Not for facts about this task only.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(_: &RememberInput) -> Vec<String> {
        vec![MEMORY_FILE.to_string()]
    }

    async fn call(&self, input: RememberInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let fact = input.fact.split_whitespace().collect::<Vec<_>>().join(" ");
        if fact.is_empty() {
            return Err(ToolError::Invalid("the fact is empty".into()));
        }
        if fact.chars().count() > MAX_FACT_CHARS {
            return Err(ToolError::Invalid(format!(
                "the fact is longer than {MAX_FACT_CHARS} characters; keep to one short sentence"
            )));
        }
        let path = ctx.workspace.resolve(MEMORY_FILE)?;
        let before = if ctx.workspace.exists(&path) { Some(ctx.workspace.read_text(&path)?) } else { None };
        let mut after = before.clone().unwrap_or_else(|| "# Project memory\n\n".to_string());
        if !after.is_empty() && !after.ends_with('\n') {
            after.push('\n');
        }
        let today = &humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10];
        after.push_str(&format!("- {today}: {fact}\n"));
        let outcome = ctx.edits.propose(FileChange::Write { path: path.clone(), before, after }).await;
        ctx.state.note_changed(ctx.workspace, &path, None);
        describe_outcome(&outcome, "remembered in", MEMORY_FILE)
    }
}

/// The end of the memory file's text, for a new conversation: at most
/// [`SHOWN_LINES`] lines and [`SHOWN_BYTES`], whole lines, newest kept.
pub fn recent_memory(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty() && !line.starts_with('#')).collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut bytes = 0;
    for line in lines.iter().rev().take(SHOWN_LINES) {
        bytes += line.len() + 1;
        if bytes > SHOWN_BYTES {
            break;
        }
        kept.push(line);
    }
    if kept.is_empty() {
        return None;
    }
    kept.reverse();
    let left_out = lines.len() - kept.len();
    let mut out = kept.join("\n");
    out.push('\n');
    if left_out > 0 {
        out.insert_str(0, &format!("({left_out} older entries are left out)\n"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_memories_are_kept() {
        assert_eq!(recent_memory("# Project memory\n\n"), None);
        let text: String = (0..100).map(|i| format!("- 2026-01-01: fact {i}\n")).collect();
        let shown = recent_memory(&format!("# Project memory\n\n{text}")).unwrap();
        assert!(shown.starts_with("(40 older entries are left out)\n- 2026-01-01: fact 40\n"), "{shown}");
        assert!(shown.ends_with("fact 99\n"));
        let long: String = (0..10).map(|i| format!("- {i}: {}\n", "x".repeat(1000))).collect();
        let shown = recent_memory(&long).unwrap();
        assert!(shown.starts_with("(6 older entries are left out)\n- 6: "), "{}", &shown[..60]);
    }
}
