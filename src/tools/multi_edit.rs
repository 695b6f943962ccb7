//! MultiEdit: several replacements in one file, all or nothing.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit::{EditInput, replace};
use super::{Retry, ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome};
use crate::workspace::edits::FileChange;

pub struct MultiEdit;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditInput {
    /// Path of the file, relative to the workspace root.
    file_path: String,
    /// Replacements applied in order, each to the result of the previous one.
    #[schemars(length(min = 1))]
    edits: Vec<OneEdit>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OneEdit {
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

#[async_trait]
impl TypedTool for MultiEdit {
    type Input = MultiEditInput;
    const NAME: &'static str = "MultiEdit";
    const DESCRIPTION: &'static str =
        "Apply several exact-string replacements to one file, in order. If any one fails, none is applied.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(input: &MultiEditInput) -> Vec<String> {
        vec![input.file_path.clone()]
    }

    async fn call(&self, input: MultiEditInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.file_path)?;
        let before = ctx.workspace.read_text(&path)?;
        let count = input.edits.len();
        let applied = input.edits.into_iter().enumerate().try_fold(before.clone(), |text, (index, one)| {
            let edit = EditInput {
                file_path: input.file_path.clone(),
                old_string: one.old_string,
                new_string: one.new_string,
                replace_all: one.replace_all,
            };
            replace(&text, &edit, path.display())
                .map_err(|problem| format!("edit {} of {count} failed, so none was applied: {problem}", index + 1))
        });
        ctx.state.check_read(
            &path,
            &before,
            match &applied {
                Ok(_) => Retry::SameCall,
                Err(problem) => Retry::CopyOldString(problem),
            },
        )?;
        let after = applied.map_err(ToolError::Invalid)?;
        if let Some(refused) = ctx.state.refuse_undo(&path, &before, &after) {
            return Ok(refused);
        }
        let display = path.display().to_string();
        let outcome =
            ctx.edits.propose(FileChange::Write { path: path.clone(), before: Some(before.clone()), after }).await;
        ctx.state.note_changed(ctx.workspace, &path, Some(&before));
        describe_outcome(&outcome, &format!("applied {count} edits to"), &display)
    }
}
