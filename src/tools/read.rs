//! Read: a file's lines, numbered, from the open buffer or the disk.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::list_dir::{ListDir, ListDirInput};
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, number_lines, plural};

/// Lines returned when the model gives no limit.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut: minified files would otherwise flood the context.
const MAX_LINE_CHARS: usize = 2000;
/// Files past this size are refused outright: nothing useful fits in a prompt.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

pub struct Read;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// Path of the file, relative to the workspace root.
    pub(super) file_path: String,
    /// First line to return, 1-based.
    #[schemars(range(min = 1))]
    pub(super) offset: Option<usize>,
    /// How many lines to return (default 2000).
    #[schemars(range(min = 1))]
    pub(super) limit: Option<usize>,
}

#[async_trait]
impl TypedTool for Read {
    type Input = ReadInput;
    const NAME: &'static str = "Read";
    const DESCRIPTION: &'static str =
        "Read a text file. Returns numbered lines (`cat -n` style). Use offset and limit to page through long files.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;

    fn paths(input: &ReadInput) -> Vec<String> {
        vec![input.file_path.clone()]
    }

    async fn call(&self, input: ReadInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.file_path)?;
        if path.abs.is_dir() {
            // What a model reading a folder wants is what it holds.
            let listing = ListDirInput { path: Some(path.display().to_string()) };
            let mut shown = ListDir.call(listing, ctx).await?;
            shown.output =
                format!("{} is a folder; what it holds, as ListDir shows it:\n{}", path.display(), shown.output);
            return Ok(shown);
        }
        // Sized before reading, so a huge file is refused without loading it.
        let size = ctx.workspace.size(&path)?;
        if size > MAX_FILE_BYTES {
            return Err(ToolError::Invalid(format!(
                "{} is {} MiB, too large to read; use Grep to find the part you need",
                path.display(),
                size / (1024 * 1024)
            )));
        }
        let bytes = ctx.workspace.read_bytes(&path)?;
        let sniff = &bytes[..bytes.len().min(8192)];
        if sniff.contains(&0) {
            return Err(ToolError::Invalid(format!(
                "{} is a binary file ({} bytes); not shown",
                path.display(),
                bytes.len()
            )));
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(ToolError::Invalid(format!(
                "{} is not UTF-8 text ({} bytes); not shown",
                path.display(),
                bytes.len()
            )));
        };
        ctx.state.note_read(&path, text);
        if text.is_empty() {
            return Ok(ToolOutput::ok(
                format!("{} is empty", path.display()),
                format!("read {} (empty)", path.display()),
            ));
        }
        // Counting newline bytes vectorizes; iterating lines does not.
        let total = text.bytes().filter(|&b| b == b'\n').count() + usize::from(!text.ends_with('\n'));
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        let mut offset = input.offset.unwrap_or(1);
        let mut past_the_end = None;
        if offset > total {
            // Small models fill optional numbers with noise (`offset:
            // 1000000000000000`); a file that fits one page is shown whole.
            if total > limit {
                return Err(ToolError::Invalid(format!(
                    "offset {offset} is past the end of {} ({total} lines)",
                    path.display()
                )));
            }
            past_the_end = Some(format!(
                "(offset {offset} is past the end of {}, which has {}: here is all of it)\n",
                path.display(),
                plural(total, "line")
            ));
            offset = 1;
        }
        let mut cut_lines = 0;
        let lines = text.lines().enumerate().skip(offset - 1).take(limit).map(|(i, line)| {
            if line.chars().count() > MAX_LINE_CHARS {
                cut_lines += 1;
                let end = line.char_indices().nth(MAX_LINE_CHARS).map_or(line.len(), |(i, _)| i);
                (i + 1, &line[..end])
            } else {
                (i + 1, line)
            }
        });
        let mut output = past_the_end.unwrap_or_default() + &number_lines(lines);
        let last = (offset - 1 + limit).min(total);
        let partial = offset > 1 || last < total;
        if last < total {
            output
                .push_str(&format!("\n(showing lines {offset}-{last} of {total}; read on with offset {})\n", last + 1));
        }
        if cut_lines > 0 {
            output.push_str(&format!("({cut_lines} lines longer than {MAX_LINE_CHARS} characters were cut)\n"));
        }
        let summary = if partial {
            format!("read {} lines {offset}-{last} of {total}", path.display())
        } else {
            format!("read {} ({})", path.display(), plural(total, "line"))
        };
        Ok(ToolOutput::ok(output, summary))
    }
}
