//! Grep: regex search over the workspace, honouring .gitignore and open buffers.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::UTF8};
use schemars::JsonSchema;
use serde::Deserialize;

use super::glob::walk;
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, folder_or_root, plural};
use crate::permissions::sensitive_reason;

/// Output lines past this are cut: the model should narrow the search.
const MAX_LINES: usize = 500;
/// Matching lines are cut to this many characters (minified files).
const MAX_LINE_CHARS: usize = 300;

/// Matching lines up to which a search without an output mode shows them.
const FEW_LINES: usize = 20;

pub struct Grep;

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines as `path:line:text`.
    Content,
    /// Only the paths of files that match.
    FilesWithMatches,
    /// `path:count` per matching file.
    Count,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// Regular expression (Rust regex syntax).
    pattern: String,
    /// File or directory to search, relative to the workspace root (default: the root).
    path: Option<String>,
    /// Only search files whose path matches this glob; leave it out to search every file.
    glob: Option<String>,
    /// Match regardless of case.
    #[serde(default)]
    case_insensitive: bool,
    /// content, files_with_matches or count. Default: content when the path
    /// is a file or there are few matching lines, else files_with_matches.
    output_mode: Option<OutputMode>,
}

#[async_trait]
impl TypedTool for Grep {
    type Input = GrepInput;
    const NAME: &'static str = "Grep";
    const DESCRIPTION: &'static str = "Search file contents with a regular expression. Skips .gitignored and binary files. output_mode: content (path:line:text; the default for few lines), files_with_matches or count.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;

    fn paths(input: &GrepInput) -> Vec<String> {
        vec![folder_or_root(&input.path).to_string()]
    }

    async fn call(&self, input: GrepInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let base = ctx.workspace.resolve(folder_or_root(&input.path))?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(input.case_insensitive)
            .build(&input.pattern)
            .map_err(|e| ToolError::Invalid(format!("invalid regex `{}`: {e}", input.pattern)))?;
        let file_filter = match input.glob.as_ref().filter(|glob| !glob.trim().is_empty()) {
            Some(glob) => Some(
                globset::Glob::new(glob)
                    .map_err(|e| ToolError::Invalid(format!("invalid glob `{glob}`: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let mut searcher = SearcherBuilder::new().line_number(true).binary_detection(BinaryDetection::quit(0)).build();

        let mut files: Vec<PathBuf> = if base.abs.is_file() {
            vec![base.abs.clone()]
        } else {
            walk(&base.abs)
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
                .map(|e| e.into_path())
                .collect()
        };
        // Open documents not yet saved to disk are searched too.
        for open in ctx.workspace.overlay().open_paths() {
            if open.starts_with(&base.abs) && !files.contains(&open) {
                files.push(open);
            }
        }
        files.sort();

        let mut found: Vec<(String, Vec<(u64, String)>)> = Vec::new();
        let mut matching_files = 0;
        let mut matching_lines = 0;
        for file in files {
            if ctx.cancel.is_cancelled() {
                break;
            }
            let rel = ctx.workspace.relative(&file);
            if sensitive_reason(&rel).is_some() {
                continue;
            }
            if let Some(filter) = &file_filter {
                let name = file.file_name().map(Path::new).unwrap_or(Path::new(""));
                if !filter.is_match(name) && !filter.is_match(&rel) {
                    continue;
                }
            }
            let mut hits: Vec<(u64, String)> = Vec::new();
            let sink = UTF8(|number, line| {
                hits.push((number, line.trim_end_matches(['\n', '\r']).to_string()));
                Ok(true)
            });
            let searched = match ctx.workspace.overlay().read(&file) {
                Some(text) => searcher.search_slice(&matcher, text.as_bytes(), sink),
                None => searcher.search_path(&matcher, &file, sink),
            };
            // Unreadable files (permissions, races with deletion) are skipped like ripgrep does.
            if searched.is_err() || hits.is_empty() {
                continue;
            }
            matching_files += 1;
            matching_lines += hits.len();
            found.push((rel, hits));
        }
        // The lines themselves unless they are many: a list of file names
        // only sends the model to Read, and searching one file for one is
        // never what was meant.
        let mode = input.output_mode.unwrap_or(if base.abs.is_file() || matching_lines <= FEW_LINES {
            OutputMode::Content
        } else {
            OutputMode::FilesWithMatches
        });
        let mut lines: Vec<String> = Vec::new();
        for (rel, hits) in found {
            match mode {
                OutputMode::FilesWithMatches => lines.push(rel),
                OutputMode::Count => lines.push(format!("{rel}:{}", hits.len())),
                OutputMode::Content => {
                    for (number, text) in hits {
                        lines.push(format!("{rel}:{number}:{}", clip(&text)));
                    }
                }
            }
        }

        if matching_files == 0 {
            return Ok(ToolOutput::ok(
                format!("no matches for `{}` under {}", input.pattern, base.display()),
                format!("no matches for {}", input.pattern),
            ));
        }
        let total = lines.len();
        lines.truncate(MAX_LINES);
        let mut output = lines.join("\n");
        output.push('\n');
        if total > MAX_LINES {
            output.push_str(&format!("({} more lines not shown; narrow the search)\n", total - MAX_LINES));
        }
        let summary = format!(
            "{} in {} for {}",
            plural(matching_lines, "matching line"),
            plural(matching_files, "file"),
            input.pattern
        );
        Ok(ToolOutput::ok(output, summary))
    }
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}
