//! Proposed file changes. Tools compute them; the front end decides how they
//! land (the headless runner writes them, the LSP server asks the editor).

use similar::TextDiff;

use super::WorkspacePath;

/// One file change a tool wants to make. Contents are whole files: the front
/// end splits them into hunks when it needs to.
#[derive(Debug, Clone, PartialEq)]
pub enum FileChange {
    /// Create or overwrite. `before` is `None` for a new file.
    Write { path: WorkspacePath, before: Option<String>, after: String },
    Delete { path: WorkspacePath, before: String },
    Move { from: WorkspacePath, to: WorkspacePath },
}

impl FileChange {
    pub fn path(&self) -> &WorkspacePath {
        match self {
            FileChange::Write { path, .. } | FileChange::Delete { path, .. } => path,
            FileChange::Move { from, .. } => from,
        }
    }

    /// What the change does, as a unified diff (moves as a rename header).
    pub fn unified_diff(&self) -> String {
        match self {
            FileChange::Write { path, before, after } => {
                let old_name = if before.is_some() { format!("a/{}", path.rel) } else { "/dev/null".into() };
                TextDiff::from_lines(before.as_deref().unwrap_or(""), after.as_str())
                    .unified_diff()
                    .context_radius(3)
                    .header(&old_name, &format!("b/{}", path.rel))
                    .to_string()
            }
            FileChange::Delete { path, before } => TextDiff::from_lines(before.as_str(), "")
                .unified_diff()
                .header(&format!("a/{}", path.rel), "/dev/null")
                .to_string(),
            FileChange::Move { from, to } => format!("rename from {}\nrename to {}\n", from.rel, to.rel),
        }
    }

    /// Lines added and removed, for one-line summaries.
    pub fn line_counts(&self) -> (usize, usize) {
        let (before, after) = match self {
            FileChange::Write { before, after, .. } => (before.as_deref().unwrap_or(""), after.as_str()),
            FileChange::Delete { before, .. } => (before.as_str(), ""),
            FileChange::Move { .. } => return (0, 0),
        };
        let diff = TextDiff::from_lines(before, after);
        let mut counts = (0, 0);
        for change in diff.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => counts.0 += 1,
                similar::ChangeTag::Delete => counts.1 += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        counts
    }
}

/// How a proposed change ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOutcome {
    Applied,
    /// Only some hunks landed: the model is told exactly which.
    Partial { applied_hunks: Vec<usize>, total_hunks: usize },
    Rejected { reason: String },
}

/// Writes a change straight to disk: what a front end without an editor does
/// once the change is approved.
pub fn apply_to_disk(workspace: &super::Workspace, change: &FileChange) -> Result<(), super::WorkspaceError> {
    match change {
        FileChange::Write { path, after, .. } => workspace.write_atomic(path, after.as_bytes()),
        FileChange::Delete { path, .. } => workspace.remove_file(path),
        FileChange::Move { from, to } => workspace.rename(from, to),
    }
}
