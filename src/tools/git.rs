//! GitStatus, GitDiff, GitLog, GitShow: read-only views of the repository at
//! the workspace root.
//!
//! git runs directly, never through a shell, with arguments built here:
//! revisions that start with `-` are refused so that they cannot become
//! options, and paths pass the workspace boundary and follow `--` as literal
//! pathspecs. git may not look for a repository above the workspace root,
//! whose files lie outside the workspace. The tools need no approval, so
//! repository config gets no chance to start programs (external diff,
//! textconv, fsmonitor, pager), and credentials are scrubbed from the
//! environment as for every process tack starts.

use std::process::Stdio;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::process::{Capped, ProcessSettings};
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, plural};

const DEFAULT_LOG_COUNT: u32 = 20;
const MAX_LOG_COUNT: u32 = 200;

/// Variables that would point git at another repository than the workspace's.
const REPOSITORY_VARS: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

pub struct GitStatus {
    pub(crate) settings: Arc<ProcessSettings>,
}

pub struct GitDiff {
    pub(crate) settings: Arc<ProcessSettings>,
}

pub struct GitLog {
    pub(crate) settings: Arc<ProcessSettings>,
}

pub struct GitShow {
    pub(crate) settings: Arc<ProcessSettings>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitStatusInput {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitDiffInput {
    /// Show staged changes (the index against HEAD, or against `commit`) instead of the working tree's.
    #[serde(default)]
    staged: bool,
    /// Only this file or directory, relative to the workspace root.
    path: Option<String>,
    /// Compare against this revision (e.g. `HEAD~1`), or diff a range of two (`a..b`).
    commit: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitLogInput {
    /// How many commits to list, newest first (default 20, at most 200).
    #[schemars(range(min = 1, max = 200))]
    max_count: Option<u32>,
    /// Only commits that touch this file or directory.
    path: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitShowInput {
    /// The commit to show: a hash, branch, tag or expression such as `HEAD~2`.
    revision: String,
    /// Only this file or directory's part of the commit.
    path: Option<String>,
}

#[async_trait]
impl TypedTool for GitStatus {
    type Input = GitStatusInput;
    const NAME: &'static str = "GitStatus";
    const DESCRIPTION: &'static str = "Show the branch and the changed, staged and untracked files of the workspace's git repository (git status --short --branch).";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Git;

    fn paths(_: &GitStatusInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, _: GitStatusInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let mut text = git(&self.settings, ctx, args(["status", "--short", "--branch"])).await?;
        let branch = text.lines().next().and_then(|l| l.strip_prefix("## ")).unwrap_or("").to_string();
        let changed = text.lines().filter(|l| !l.starts_with("## ")).count();
        let summary = if changed == 0 {
            text.push_str("(working tree clean)\n");
            format!("clean, on {branch}")
        } else {
            format!("{}, on {branch}", plural(changed, "changed path"))
        };
        Ok(ToolOutput::ok(text, summary))
    }
}

#[async_trait]
impl TypedTool for GitDiff {
    type Input = GitDiffInput;
    const NAME: &'static str = "GitDiff";
    const DESCRIPTION: &'static str = "Show a git diff of the workspace: unstaged working-tree changes by default, staged ones with staged, or against a revision or range with commit (e.g. HEAD~1, main..feature). Optionally limited to one path.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Git;

    fn paths(input: &GitDiffInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    async fn call(&self, input: GitDiffInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let mut command = args(["diff", "--no-color", "--no-ext-diff", "--no-textconv"]);
        if input.staged {
            command.push("--cached".into());
        }
        if let Some(commit) = &input.commit {
            command.push(revision(commit, "commit")?);
        }
        command.push("--".into());
        command.extend(pathspec(ctx, input.path.as_deref())?);
        let text = git(&self.settings, ctx, command).await?;
        if text.trim().is_empty() {
            return Ok(ToolOutput::ok("no differences", "no differences"));
        }
        let files = text.lines().filter(|l| l.starts_with("diff --git ")).count();
        Ok(ToolOutput::ok(text, format!("diff of {}", plural(files, "file"))))
    }
}

#[async_trait]
impl TypedTool for GitLog {
    type Input = GitLogInput;
    const NAME: &'static str = "GitLog";
    const DESCRIPTION: &'static str = "List recent commits of the workspace's git repository, newest first, one line each: short hash, date, (author), subject. Optionally only those touching one path.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Git;

    fn paths(input: &GitLogInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    async fn call(&self, input: GitLogInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let count = input.max_count.unwrap_or(DEFAULT_LOG_COUNT).clamp(1, MAX_LOG_COUNT);
        let mut command = args(["log", "--no-color", "--date=short", "--format=%h %ad (%an) %s"]);
        command.push(format!("--max-count={count}"));
        command.push("--".into());
        command.extend(pathspec(ctx, input.path.as_deref())?);
        let text = git(&self.settings, ctx, command).await?;
        let commits = text.lines().count();
        if commits == 0 {
            return Ok(ToolOutput::ok("no commits", "no commits"));
        }
        Ok(ToolOutput::ok(text, plural(commits, "commit")))
    }
}

#[async_trait]
impl TypedTool for GitShow {
    type Input = GitShowInput;
    const NAME: &'static str = "GitShow";
    const DESCRIPTION: &'static str = "Show one commit of the workspace's git repository: its message, the files it changed and its patch (git show --stat --patch). Optionally limited to one path.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Git;

    fn paths(input: &GitShowInput) -> Vec<String> {
        input.path.iter().cloned().collect()
    }

    async fn call(&self, input: GitShowInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let mut command = args(["show", "--no-color", "--no-ext-diff", "--no-textconv", "--stat", "--patch"]);
        command.push(revision(&input.revision, "revision")?);
        command.push("--".into());
        command.extend(pathspec(ctx, input.path.as_deref())?);
        let text = git(&self.settings, ctx, command).await?;
        let subject = text.lines().skip_while(|l| !l.is_empty()).find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        let summary = format!("{}: {subject}", input.revision.trim());
        Ok(ToolOutput::ok(text, summary))
    }
}

fn args<const N: usize>(fixed: [&str; N]) -> Vec<String> {
    fixed.iter().map(|a| a.to_string()).collect()
}

/// A revision as git will get it, refusing what git could read as something else.
fn revision(value: &str, field: &str) -> Result<String, ToolError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ToolError::Invalid(format!("{field} is empty: name a revision such as HEAD~1 or a commit hash")));
    }
    if value.starts_with('-') {
        return Err(ToolError::Invalid(format!(
            "{field} `{value}` starts with `-`, which git would read as an option; name a revision such as HEAD~1 or a commit hash"
        )));
    }
    // `rev:path` reads a file out of a revision and would get past the path
    // checks that `path` goes through.
    if value.contains(':') {
        return Err(ToolError::Invalid(format!(
            "{field} `{value}` names a file inside a revision; give the revision alone and the file as `path`"
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(ToolError::Invalid(format!("{field} {value:?} contains control characters")));
    }
    Ok(value.to_string())
}

/// The pathspec for `path`, checked against the workspace boundary.
fn pathspec(ctx: &ToolContext<'_>, path: Option<&str>) -> Result<Option<String>, ToolError> {
    let Some(path) = path else { return Ok(None) };
    let resolved = ctx.workspace.resolve(path)?;
    Ok(Some(if resolved.rel.is_empty() { ".".to_string() } else { resolved.rel }))
}

/// Runs git with `args` in the workspace root; its stdout, capped, or an
/// error the model can act on.
async fn git(settings: &ProcessSettings, ctx: &ToolContext<'_>, args: Vec<String>) -> Result<String, ToolError> {
    let root = ctx.workspace.root();
    let mut command = tokio::process::Command::new("git");
    command
        .args(["--no-pager", "-c", "color.ui=false", "-c", "core.quotePath=false", "-c", "core.fsmonitor=false"])
        .args(&args)
        .current_dir(root)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for var in REPOSITORY_VARS {
        command.env_remove(var);
    }
    // git would otherwise find a repository that merely contains the workspace.
    if let Some(parent) = root.parent() {
        command.env("GIT_CEILING_DIRECTORIES", parent);
    }
    settings.scrub(&mut command);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::Invalid("git is not installed (no `git` on PATH)".into()),
        _ => ToolError::Invalid(format!("cannot start git: {e}")),
    })?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let timeout = settings.timeout(None);
    // Leaving early drops `child`, which kills git.
    let (out, err, status) = tokio::select! {
        done = async { tokio::join!(read_capped(stdout), read_capped(stderr), child.wait()) } => done,
        _ = tokio::time::sleep(timeout) => {
            return Err(ToolError::Invalid(format!("git timed out after {} ms and was stopped", timeout.as_millis())));
        }
        _ = ctx.cancel.cancelled() => return Err(ToolError::Invalid("cancelled by the user; git was stopped".into())),
    };
    let status = status.map_err(|e| ToolError::Invalid(format!("git failed: {e}")))?;
    if status.success() {
        return Ok(out);
    }
    let err = err.trim();
    if err.contains("not a git repository") {
        return Err(ToolError::Invalid(format!(
            "the workspace root {} is not a git repository (the git tools only use a repository whose top directory is the workspace root)",
            root.display()
        )));
    }
    let subcommand = args.first().map(String::as_str).unwrap_or("");
    let why = if err.is_empty() { status.to_string() } else { err.to_string() };
    Err(ToolError::Invalid(format!("git {subcommand} failed: {why}")))
}

async fn read_capped(pipe: Option<impl AsyncRead + Unpin>) -> String {
    let mut capped = Capped::default();
    if let Some(mut pipe) = pipe {
        let mut buffer = vec![0u8; 16 * 1024];
        while let Ok(read) = pipe.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            capped.push(&buffer[..read]);
        }
    }
    capped.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_cannot_become_options_or_file_reads() {
        assert_eq!(revision(" HEAD~1 ", "commit").unwrap(), "HEAD~1");
        assert_eq!(revision("main..feature", "commit").unwrap(), "main..feature");
        for bad in ["--output=/tmp/x", "-p", "HEAD:.env", "", "a\nb"] {
            assert!(revision(bad, "commit").is_err(), "{bad:?}");
        }
    }
}
