//! Move: rename or move a file inside the workspace.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome};
use crate::workspace::edits::FileChange;

pub struct Move;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveInput {
    /// The file to move, relative to the workspace root.
    source: String,
    /// Where it goes; must not exist yet. Parent directories are created.
    destination: String,
}

#[async_trait]
impl TypedTool for Move {
    type Input = MoveInput;
    const NAME: &'static str = "Move";
    const DESCRIPTION: &'static str = "Move or rename a file inside the workspace. The destination must not exist.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(input: &MoveInput) -> Vec<String> {
        vec![input.source.clone(), input.destination.clone()]
    }

    async fn call(&self, input: MoveInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let from = ctx.workspace.resolve(&input.source)?;
        let to = ctx.workspace.resolve(&input.destination)?;
        if !from.abs.is_file() {
            return Err(ToolError::Invalid(format!("{} is not a file", from.display())));
        }
        if to.abs.exists() {
            return Err(ToolError::Invalid(format!(
                "{} already exists; delete it first or pick another name",
                to.display()
            )));
        }
        let description = format!("{} to {}", from.display(), to.display());
        let outcome = ctx.edits.propose(FileChange::Move { from, to }).await;
        describe_outcome(&outcome, "moved", &description)
    }
}
