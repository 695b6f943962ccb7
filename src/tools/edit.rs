//! Edit: replace an exact string in a file.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome};
use crate::workspace::edits::FileChange;

pub struct Edit;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Path of the file, relative to the workspace root.
    pub(super) file_path: String,
    /// The exact text to replace, including indentation. It must occur exactly once unless replace_all is set.
    pub(super) old_string: String,
    /// The text to put in its place.
    pub(super) new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub(super) replace_all: bool,
}

/// Applies one replacement to `text`, or says precisely why it cannot.
pub(super) fn replace(text: &str, edit: &EditInput, file: &str) -> Result<String, String> {
    if edit.old_string.is_empty() {
        return Err(format!("old_string is empty; to create {file} use Write"));
    }
    if edit.old_string == edit.new_string {
        return Err("old_string and new_string are the same; nothing would change".to_string());
    }
    let old = edit.old_string.as_str();
    let Some(first) = text.find(old) else {
        return Err(format!(
            "old_string was not found in {file}; read the file and copy the text exactly, including whitespace"
        ));
    };
    if edit.replace_all {
        return Ok(text.replace(old, &edit.new_string));
    }
    // One search for the common case (unique): stop at the second match.
    if text[first + old.len()..].contains(old) {
        let count = text.matches(old).count();
        return Err(format!(
            "old_string occurs {count} times in {file}; include more surrounding text to make it unique, or set replace_all"
        ));
    }
    let mut out = String::with_capacity(text.len() - old.len() + edit.new_string.len());
    out.push_str(&text[..first]);
    out.push_str(&edit.new_string);
    out.push_str(&text[first + old.len()..]);
    Ok(out)
}

#[async_trait]
impl TypedTool for Edit {
    type Input = EditInput;
    const NAME: &'static str = "Edit";
    const DESCRIPTION: &'static str = "Replace an exact string in a file. old_string must match the file exactly (whitespace included) and occur once, unless replace_all is true.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(input: &EditInput) -> Vec<String> {
        vec![input.file_path.clone()]
    }

    async fn call(&self, input: EditInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.file_path)?;
        let before = ctx.workspace.read_text(&path)?;
        ctx.state.check_read(&path, &before)?;
        let after = replace(&before, &input, path.display()).map_err(ToolError::Invalid)?;
        let display = path.display().to_string();
        let outcome = ctx.edits.propose(FileChange::Write { path: path.clone(), before: Some(before), after }).await;
        ctx.state.note_changed(ctx.workspace, &path);
        describe_outcome(&outcome, "edited", &display)
    }
}
