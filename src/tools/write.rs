//! Write: create a file or replace its whole contents.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Retry, ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome};
use crate::workspace::edits::FileChange;

pub struct Write;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// Path of the file, relative to the workspace root. Parent directories are created.
    file_path: String,
    /// The complete new contents of the file.
    content: String,
}

#[async_trait]
impl TypedTool for Write {
    type Input = WriteInput;
    const NAME: &'static str = "Write";
    const DESCRIPTION: &'static str =
        "Create a file, or replace all of an existing file's contents. Prefer Edit for changes to existing files.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(input: &WriteInput) -> Vec<String> {
        vec![input.file_path.clone()]
    }

    async fn call(&self, input: WriteInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.file_path)?;
        if path.abs.is_dir() {
            return Err(ToolError::Invalid(format!("{} is a directory", path.display())));
        }
        let before = if ctx.workspace.exists(&path) { Some(ctx.workspace.read_text(&path)?) } else { None };
        match &before {
            Some(text) => ctx.state.check_read(&path, text, Retry::WholeFile)?,
            None => ctx.state.check_new_file(ctx.workspace, &path)?,
        }
        if before.as_deref() == Some(input.content.as_str()) {
            return Ok(ToolOutput::already_done(
                format!("{} already has exactly this content; nothing changed", path.display()),
                format!("{} unchanged", path.display()),
            ));
        }
        if let Some(refused) = before.as_deref().and_then(|text| ctx.state.refuse_undo(&path, text, &input.content)) {
            return Ok(refused);
        }
        let verb = if before.is_some() { "wrote" } else { "created" };
        let display = path.display().to_string();
        let outcome = ctx
            .edits
            .propose(FileChange::Write { path: path.clone(), before: before.clone(), after: input.content })
            .await;
        ctx.state.note_changed(ctx.workspace, &path, before.as_deref());
        describe_outcome(&outcome, verb, &display)
    }
}
