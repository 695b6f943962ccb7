//! Glob: files whose path matches a glob pattern, honouring .gitignore.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::read::{Read, ReadInput};
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, folder_or_root, plural};

/// More matches than this are cut: the model should narrow the pattern.
const MAX_RESULTS: usize = 500;

pub struct Glob;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// Glob pattern, e.g. `**/*.rs` or `src/**/mod.rs`, matched against paths relative to `path`.
    pattern: String,
    /// Directory to search, relative to the workspace root (default: the root).
    path: Option<String>,
}

#[async_trait]
impl TypedTool for Glob {
    type Input = GlobInput;
    const NAME: &'static str = "Glob";
    const DESCRIPTION: &'static str = "Find files by glob pattern (e.g. `**/*.rs`). Skips files ignored by .gitignore. Returns paths relative to the workspace root, sorted.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;

    fn paths(input: &GlobInput) -> Vec<String> {
        vec![folder_or_root(&input.path).to_string()]
    }

    async fn call(&self, input: GlobInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let mut base = ctx.workspace.resolve(folder_or_root(&input.path))?;
        // Small models put a file, or a second pattern, where the folder
        // goes, then repeat the call that was refused: they get what they
        // most likely wanted, and are told so.
        let mut note = String::new();
        if base.abs.is_file() {
            let read = ReadInput { file_path: base.display().to_string(), offset: None, limit: None };
            let mut shown = Read.call(read, ctx).await?;
            shown.output = format!(
                "{} is a file, not a folder (Glob's path is the folder to search); here it is, as Read shows it:\n{}",
                base.display(),
                shown.output
            );
            return Ok(shown);
        }
        if !base.abs.exists() {
            note = format!("(there is no folder {}: searched the whole workspace)\n", base.display());
            base = ctx.workspace.resolve(".")?;
        }
        let mut found = matching(ctx, &base.abs, &input.pattern)?;
        // A bare file name names the file wherever it is (as in .gitignore
        // and ripgrep's globs); matched at the top only, `numbers.py` would
        // say no such file exists beside lib/numbers.py.
        if found.is_empty() && !input.pattern.contains('/') && !input.pattern.starts_with("**") {
            found = matching(ctx, &base.abs, &format!("**/{}", input.pattern))?;
            if !found.is_empty() {
                let top = if base.rel.is_empty() { "the workspace" } else { base.rel.as_str() };
                note.push_str(&format!(
                    "(`{}` matches nothing at the top of {top}; these below it do)\n",
                    input.pattern
                ));
            }
        }
        found.sort();
        let total = found.len();
        if total == 0 {
            return Ok(ToolOutput::ok(
                // Models often look for a function or setting by file name.
                format!(
                    "{note}no files match `{}` {}. Glob matches file names; to find where something is defined or used inside files, use Grep",
                    input.pattern,
                    base.place()
                ),
                format!("no files match {}", input.pattern),
            ));
        }
        found.truncate(MAX_RESULTS);
        let mut output = note.clone() + &found.join("\n");
        output.push('\n');
        if total > MAX_RESULTS {
            output.push_str(&format!("({} more not shown; narrow the pattern)\n", total - MAX_RESULTS));
        }
        Ok(ToolOutput::ok(output, format!("{} matching {}", plural(total, "file"), input.pattern)))
    }
}

/// The files under `base` whose path below it matches `pattern`, as paths
/// relative to the workspace root.
fn matching(ctx: &ToolContext<'_>, base: &std::path::Path, pattern: &str) -> Result<Vec<String>, ToolError> {
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::Invalid(format!("invalid glob pattern `{pattern}`: {e}")))?
        .compile_matcher();
    let mut found = Vec::new();
    for entry in walk(base).filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(below_base) = entry.path().strip_prefix(base) else { continue };
        if matcher.is_match(below_base) {
            found.push(ctx.workspace.relative(entry.path()));
        }
    }
    Ok(found)
}

/// The gitignore-aware walk shared by the search tools: hidden files are
/// included (dotfiles matter in code bases) but `.git` itself is not.
fn walk_builder(dir: &std::path::Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder.hidden(false).require_git(false).filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// [`walk_builder`]'s walk in path order.
pub(super) fn walk(dir: &std::path::Path) -> ignore::Walk {
    walk_builder(dir).sort_by_file_path(|a, b| a.cmp(b)).build()
}

/// [`walk_builder`]'s walk on every core, in no particular order.
pub(super) fn walk_parallel(dir: &std::path::Path) -> ignore::WalkParallel {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(12));
    walk_builder(dir).threads(threads).build_parallel()
}
