//! Grep: regex search over the workspace, honouring .gitignore and open buffers.

use std::path::Path;

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;

use super::glob::walk_parallel;
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, folder_or_root, plural};
use crate::permissions::sensitive_reason;
use crate::workspace::{Workspace, WorkspaceError};

/// Output lines past this are cut: the model should narrow the search.
const MAX_LINES: usize = 500;
/// Matching lines are cut to this many characters (minified files).
const MAX_LINE_CHARS: usize = 300;

/// Matching lines up to which a search without an output mode shows them.
const FEW_LINES: usize = 20;

/// Matching lines outside a narrowed search's path shown beside its own.
const FEW_OTHER_LINES: usize = 3;

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
    /// true: match regardless of case; false: match case exactly. Default:
    /// regardless of case when the pattern has no capital letter.
    case_insensitive: Option<bool>,
    /// content, files_with_matches or count. Default: content when the path
    /// is a file or there are few matching lines, else files_with_matches.
    output_mode: Option<OutputMode>,
}

/// How much of a matching file a search needs.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Hits {
    /// Every matching line, numbered.
    Every,
    /// The first matching line alone, unnumbered (0): the file matches, and
    /// the rest of it is not read, as `rg -l` does.
    First,
}

/// A line-oriented matcher for `pattern`: the line terminator lets the
/// searcher run the regex over whole buffers instead of line by line (many
/// times faster for patterns like `fn\s+\w+`, whose `\s` could match a
/// newline); a match never spans lines either way.
pub(super) fn line_matcher(builder: &mut RegexMatcherBuilder, pattern: &str) -> Result<RegexMatcher, String> {
    builder.line_terminator(Some(b'\n')).build(pattern).map_err(|error| {
        let error = error.to_string();
        match error.contains("not allowed") {
            true => format!("{error}: Grep matches within one line"),
            false => error,
        }
    })
}

/// The matching lines of every file under `base` (a file or a folder), the
/// editor's unsaved buffers included, by path.
pub(super) fn search(
    ctx: &ToolContext<'_>,
    base: &Path,
    matcher: &RegexMatcher,
    file_filter: Option<&globset::GlobMatcher>,
    hits: Hits,
) -> Vec<(String, Vec<(u64, String)>)> {
    let search = Search { workspace: ctx.workspace, matcher, file_filter, hits, max_files: usize::MAX };
    search.run(base, &ctx.cancel)
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
        // A search of a path that is not there finds nothing, and "no
        // matches" would tell the model the text is not in the project.
        if !base.abs.exists() && ctx.workspace.overlay().read(&base.abs).is_none() {
            return Err(WorkspaceError::not_found(&base).into());
        }
        let matcher = line_matcher(
            RegexMatcherBuilder::new()
                // Smart case, as ripgrep users set it: `port` finds `PORT = 8427`,
                // which a model searching by the word alone would otherwise miss.
                .case_smart(input.case_insensitive.is_none())
                .case_insensitive(input.case_insensitive == Some(true)),
            &input.pattern,
        )
        .map_err(|e| ToolError::Invalid(format!("invalid regex `{}`: {e}", input.pattern)))?;
        let file_filter = match input.glob.as_ref().filter(|glob| !glob.trim().is_empty()) {
            Some(glob) => Some(
                globset::Glob::new(glob)
                    .map_err(|e| ToolError::Invalid(format!("invalid glob `{glob}`: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let hits = match input.output_mode {
            Some(OutputMode::FilesWithMatches) => Hits::First,
            _ => Hits::Every,
        };
        let found = search(ctx, &base.abs, &matcher, file_filter.as_ref(), hits);
        let matching_files = found.len();
        let matching_lines: usize = found.iter().map(|(_, lines)| lines.len()).sum();
        // The lines themselves unless they are many: a list of file names
        // only sends the model to Read, and searching one file for one is
        // never what was meant.
        let mode = input.output_mode.unwrap_or(if base.abs.is_file() || matching_lines <= FEW_LINES {
            OutputMode::Content
        } else {
            OutputMode::FilesWithMatches
        });
        let mut lines: Vec<String> = Vec::new();
        for (rel, hits) in &found {
            match mode {
                OutputMode::FilesWithMatches => lines.push(rel.clone()),
                OutputMode::Count => lines.push(format!("{rel}:{}", hits.len())),
                OutputMode::Content => {
                    for (number, text) in hits {
                        lines.push(content_line(rel, *number, text));
                    }
                }
            }
        }

        let narrowed = !base.rel.is_empty() || file_filter.is_some();
        if matching_files == 0 {
            let mut output = format!("no matches for `{}` {}", input.pattern, base.place());
            let other = if narrowed { elsewhere(ctx, &matcher, &found, FEW_LINES) } else { Vec::new() };
            if !other.is_empty() {
                output.push_str(&format!("; elsewhere in the workspace:\n{}", other.join("\n")));
            }
            return Ok(ToolOutput::ok(output, format!("no matches for {}", input.pattern)));
        }
        let total = lines.len();
        lines.truncate(MAX_LINES);
        let mut output = lines.join("\n");
        output.push('\n');
        if total > MAX_LINES {
            output.push_str(&format!("({} more lines not shown; narrow the search)\n", total - MAX_LINES));
        }
        if narrowed && mode == OutputMode::Content {
            let other = elsewhere(ctx, &matcher, &found, FEW_OTHER_LINES);
            if !other.is_empty() {
                let scope = match &input.glob {
                    Some(glob) if base.rel.is_empty() => format!("files matching {glob}"),
                    _ => base.rel.clone(),
                };
                output.push_str(&format!("Also outside {scope}:\n{}\n", other.join("\n")));
            }
        }
        let summary = match hits {
            Hits::Every => format!(
                "{} in {} for {}",
                plural(matching_lines, "matching line"),
                plural(matching_files, "file"),
                input.pattern
            ),
            Hits::First => format!("{} for {}", plural(matching_files, "matching file"), input.pattern),
        };
        Ok(ToolOutput::ok(output, summary))
    }
}

/// Matching lines a search narrowed to a path or glob left out, in the rest
/// of the workspace: up to `max_lines` of them (in at most that many files),
/// or none when there are more. A model that guessed the file ("the
/// server's port is set in server.py") reads "no matches" as "not in the
/// project", and `server.py:1:from config import HOST, PORT` as the whole
/// story; the line that sets it one file away is what it was after. Past a
/// few, other matches are a search of their own, not a footnote.
fn elsewhere(
    ctx: &ToolContext<'_>,
    matcher: &RegexMatcher,
    shown: &[(String, Vec<(u64, String)>)],
    max_lines: usize,
) -> Vec<String> {
    let max_files = shown.len() + max_lines + 1;
    let search = Search { workspace: ctx.workspace, matcher, file_filter: None, hits: Hits::Every, max_files };
    let found = search.run(ctx.workspace.root(), &ctx.cancel);
    let lines: Vec<String> = found
        .iter()
        .filter(|(rel, _)| !shown.iter().any(|(known, _)| known == rel))
        .flat_map(|(rel, lines)| lines.iter().map(move |(number, text)| content_line(rel, *number, text)))
        .take(max_lines + 1)
        .collect();
    if lines.len() > max_lines { Vec::new() } else { lines }
}

/// One search's pattern and filters, applied to files.
struct Search<'a> {
    workspace: &'a Workspace,
    matcher: &'a RegexMatcher,
    file_filter: Option<&'a globset::GlobMatcher>,
    hits: Hits,
    /// The walk stops once this many files matched (results are then some
    /// of the matches, not the first in any order).
    max_files: usize,
}

/// Collects matching lines; binary files were already cut off by the
/// searcher, and a line that is not UTF-8 is shown as ripgrep shows it.
struct Collect<'a> {
    lines: &'a mut Vec<(u64, String)>,
    hits: Hits,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let text = String::from_utf8_lossy(found.bytes());
        self.lines.push((found.line_number().unwrap_or(0), text.trim_end_matches(['\n', '\r']).to_string()));
        Ok(self.hits == Hits::Every)
    }
}

impl Search<'_> {
    fn run(&self, base: &Path, cancel: &tokio_util::sync::CancellationToken) -> Vec<(String, Vec<(u64, String)>)> {
        let mut found: Vec<(String, Vec<(u64, String)>)> = if base.is_file() {
            self.file(&mut self.searcher(), base).into_iter().collect()
        } else {
            self.tree(base, cancel)
        };
        // Open documents the walk did not reach (not saved yet) are searched
        // too; one it reached without a match is searched again, in vain.
        let mut searcher = self.searcher();
        for open in self.workspace.overlay().open_paths() {
            let rel = self.workspace.relative(&open);
            if open.starts_with(base) && !found.iter().any(|(known, _)| *known == rel) {
                found.extend(self.file(&mut searcher, &open));
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            // Counting lines reads every byte once more; a file list needs no numbers.
            .line_number(self.hits == Hits::Every)
            .binary_detection(BinaryDetection::quit(0))
            .build()
    }

    /// The matching lines of one file (its open buffer when it has one), or
    /// `None` when it is skipped or nothing matches.
    fn file(&self, searcher: &mut Searcher, file: &Path) -> Option<(String, Vec<(u64, String)>)> {
        let rel = self.workspace.relative(file);
        if sensitive_reason(&rel).is_some() {
            return None;
        }
        if let Some(filter) = self.file_filter {
            let name = file.file_name().map(Path::new).unwrap_or(Path::new(""));
            if !filter.is_match(name) && !filter.is_match(&rel) {
                return None;
            }
        }
        let mut lines: Vec<(u64, String)> = Vec::new();
        let sink = Collect { lines: &mut lines, hits: self.hits };
        // Unreadable files (permissions, races with deletion, a symlink
        // swapped in after the walk saw a file) are skipped like ripgrep does.
        let searched = match self.workspace.overlay().read_for_search(file) {
            Some(text) => searcher.search_slice(self.matcher, text.as_bytes(), sink),
            None => match self.workspace.open_found(file) {
                Some(opened) => searcher.search_file(self.matcher, &opened, sink),
                None => return None,
            },
        };
        (searched.is_ok() && !lines.is_empty()).then_some((rel, lines))
    }

    /// Every file under `dir`, walked and searched on all cores as ripgrep
    /// does; the results in no particular order.
    fn tree(&self, dir: &Path, cancel: &tokio_util::sync::CancellationToken) -> Vec<(String, Vec<(u64, String)>)> {
        let found = std::sync::Mutex::new(Vec::new());
        walk_parallel(dir).run(|| {
            let mut searcher = self.searcher();
            let found = &found;
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else { return WalkState::Continue };
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    if let Some(hit) = self.file(&mut searcher, entry.path()) {
                        let mut found = found.lock().unwrap_or_else(|e| e.into_inner());
                        found.push(hit);
                        if found.len() >= self.max_files {
                            return WalkState::Quit;
                        }
                    }
                }
                WalkState::Continue
            })
        });
        found.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// A matching line as Grep shows it: `path:line:text`, long text cut.
fn content_line(rel: &str, number: u64, text: &str) -> String {
    format!("{rel}:{number}:{}", clip(text))
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}
