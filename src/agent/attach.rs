//! Files the user's prompt names, attached to it as they are now: what an
//! `@file` mention does in the agents users know. The model starts from the
//! real text instead of guessing it (a small model edits what it imagines a
//! file holds), and an attached file counts as read for the edit guards.

use super::Conversation;
use super::prompt::load_rules;
use crate::permissions::{CallFacts, Verdict};
use crate::protocol::Event;
use crate::tools::{ToolKind, number_all_lines};
use crate::workspace::WorkspacePath;
use crate::workspace::mentions::named_files;

/// Files attached to one prompt.
const MAX_FILES: usize = 4;
/// Longer files are left for the model to Read in parts.
pub(super) const MAX_LINES: usize = 400;
/// Bytes of all attached files together: about 4k tokens.
pub(super) const MAX_BYTES: usize = 16 * 1024;

impl Conversation {
    /// The text block to add to `prompt`, if it names files that may be
    /// shown; each shown file is noted as read and reported in an event.
    pub(super) fn attach_named_files(&mut self, prompt: &str) -> Option<String> {
        let mut block = String::new();
        let mut attached = Vec::new();
        for path in named_files(&self.workspace, prompt, MAX_FILES) {
            if !self.may_show(&path) || std::fs::metadata(&path.abs).is_ok_and(|m| m.len() > MAX_BYTES as u64) {
                continue;
            }
            let Ok(text) = self.workspace.read_text(&path) else { continue };
            if text.lines().count() > MAX_LINES || block.len() + text.len() > MAX_BYTES || text.contains('\0') {
                continue;
            }
            self.state.note_read(&path, &text);
            let shown = if text.is_empty() { "(empty file)\n".to_string() } else { number_all_lines(&text) };
            block.push_str(&format!("<file path=\"{}\">\n{shown}</file>\n", path.display()));
            attached.push(path.display().to_string());
        }
        if attached.is_empty() {
            return None;
        }
        tracing::debug!(files = ?attached, "attached the files the prompt names");
        self.events.emit(Event::FilesAttached { paths: attached });
        Some(format!(
            "\n\n[tack: the files named above, as they are now, with line numbers as Read shows them]\n{block}"
        ))
    }

    /// The rules files (AGENTS.md, else CLAUDE.md) of the folders between the
    /// workspace root and the paths a call touched, nearest first, that this
    /// conversation has not been shown yet: a folder's rules apply to the
    /// work in it, and the root's are already in the first message.
    pub(super) fn folder_rules(&self, named: &[String]) -> Option<String> {
        let root = self.workspace.root().to_path_buf();
        let mut out = String::new();
        for path in named.iter().filter_map(|name| self.workspace.resolve(name).ok()) {
            let mut dir = if path.abs.is_dir() { Some(path.abs.as_path()) } else { path.abs.parent() };
            while let Some(folder) = dir.filter(|d| d.starts_with(&root) && *d != root.as_path()) {
                dir = folder.parent();
                let Some((name, text)) = load_rules(folder) else { continue };
                let file = folder.join(&name);
                if !self.rules_shown.lock().unwrap_or_else(|e| e.into_inner()).insert(file.clone()) {
                    continue;
                }
                let rel = file.strip_prefix(&root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
                let folder_rel = rel.rsplit_once('/').map_or("", |(folder, _)| folder);
                out.push_str(&format!(
                    "\n\n[rules from {rel}, for the files under {folder_rel}/]\n{}\n",
                    text.trim_end()
                ));
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// Whether Read of `path` would run without asking: an attachment shows
    /// nothing the model could not have read by itself.
    pub(super) fn may_show(&self, path: &WorkspacePath) -> bool {
        let paths = [path.rel.clone(), path.real_rel.clone()];
        let facts = CallFacts { tool: "Read", kind: ToolKind::ReadOnly, paths: &paths, command: None };
        matches!(self.policy.decide(&facts), Verdict::Allow { .. })
    }
}
