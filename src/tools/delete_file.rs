//! DeleteFile: remove one file.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome};
use crate::workspace::edits::FileChange;

pub struct DeleteFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileInput {
    /// The file to delete, relative to the workspace root.
    file_path: String,
}

#[async_trait]
impl TypedTool for DeleteFile {
    type Input = DeleteFileInput;
    const NAME: &'static str = "DeleteFile";
    const DESCRIPTION: &'static str = "Delete one file. Directories are not deleted.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(input: &DeleteFileInput) -> Vec<String> {
        vec![input.file_path.clone()]
    }

    async fn call(&self, input: DeleteFileInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.file_path)?;
        if path.abs.is_dir() {
            return Err(ToolError::Invalid(format!(
                "{} is a directory; DeleteFile deletes files only",
                path.display()
            )));
        }
        let before = match ctx.workspace.read_text(&path) {
            Ok(text) => text,
            // A binary file has no text diff to show; its deletion still needs one.
            Err(crate::workspace::WorkspaceError::NotText { .. }) => String::new(),
            Err(e) => return Err(e.into()),
        };
        let display = path.display().to_string();
        let outcome = ctx.edits.propose(FileChange::Delete { path, before }).await;
        describe_outcome(&outcome, "deleted", &display)
    }
}
