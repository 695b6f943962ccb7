//! ListDir: what a directory holds, one level deep.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, folder_or_root};

const MAX_ENTRIES: usize = 1000;

pub struct ListDir;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirInput {
    /// Directory relative to the workspace root (default: the root).
    pub(super) path: Option<String>,
}

#[async_trait]
impl TypedTool for ListDir {
    type Input = ListDirInput;
    const NAME: &'static str = "ListDir";
    const DESCRIPTION: &'static str =
        "List a directory's entries, directories first (with a trailing /), then files with their sizes.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;

    fn paths(input: &ListDirInput) -> Vec<String> {
        vec![folder_or_root(&input.path).to_string()]
    }

    async fn call(&self, input: ListDirInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let dir = ctx.workspace.resolve(folder_or_root(&input.path))?;
        if dir.abs.is_file() {
            return Err(ToolError::Invalid(format!("{} is a file; use Read to see it", dir.display())));
        }
        let entries = ctx.workspace.read_dir(&dir)?;
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => dirs.push(format!("{name}/")),
                Ok(meta) => files.push(format!("{name} ({} bytes)", meta.len())),
                Err(_) => files.push(name),
            }
        }
        dirs.sort();
        files.sort();
        let total = dirs.len() + files.len();
        if total == 0 {
            return Ok(ToolOutput::ok(format!("{} is empty", dir.display()), format!("{} is empty", dir.display())));
        }
        let mut lines: Vec<String> = dirs.into_iter().chain(files).collect();
        lines.truncate(MAX_ENTRIES);
        let mut output = lines.join("\n");
        output.push('\n');
        if total > MAX_ENTRIES {
            output.push_str(&format!("({} more entries not shown)\n", total - MAX_ENTRIES));
        }
        let count = if total == 1 { "1 entry".to_string() } else { format!("{total} entries") };
        Ok(ToolOutput::ok(output, format!("{count} in {}", dir.display())))
    }
}
