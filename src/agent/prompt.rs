//! Prompt assembly: the system prompt (instructions, mode, tools, call
//! format), and the workspace context (project rules, a snapshot of the
//! files) that goes before the conversation's first message.
//!
//! The system prompt depends only on the mode and the tools, never on the
//! workspace: a model's saved prompt cache of it then serves every project.

use std::path::Path;

use crate::model::ToolProtocol;
use crate::protocol::PermissionMode;
use crate::tools::ToolSpec;
use crate::tools::skill::SkillCatalog;
use crate::tools::{MEMORY_FILE, recent_memory};
use crate::workspace::snapshot::snapshot;

/// Project instruction files, in order of preference: the first found is used.
pub const RULES_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Rules files past this size are cut: they are read on every generation.
const MAX_RULES_CHARS: usize = 32 * 1024;

const BASE: &str = "You are tack, a coding agent working inside the user's project. \
You read and change the project's files through the tools below; you cannot see anything you have not read. \
The project's files are listed at the start of the conversation; paths are relative to the workspace root. \
Work in small verified steps: find the file that matters (Grep searches contents), Read it before you change it, \
change it with Edit, copying old_string exactly from what Read showed, and check the result. \
Keep edits minimal and in the project's style, never invent file contents, and never repeat a call whose result you already have. \
Answer questions about the project from what you have read in it, not from guesses. \
When the task is done, or you need the user, answer in plain text without calling a tool.";

const TEXT_PROTOCOL: &str = "To call a tool, write one JSON object on its own line, exactly like this:\n\
{\"tool\": \"Read\", \"input\": {\"file_path\": \"src/main.rs\"}}\n\
Write nothing else on that line. You may call several tools in one reply, one per line. \
Each result comes back to you inside <tool_result> tags. \
To answer the user instead, write plain text with no tool call.";

/// The project's rules file, if any: (file name, contents).
pub fn load_rules(root: &Path) -> Option<(String, String)> {
    RULES_FILES.iter().find_map(|name| {
        let text = std::fs::read_to_string(root.join(name)).ok()?;
        let text = match text.char_indices().nth(MAX_RULES_CHARS) {
            Some((end, _)) => format!("{}\n(rest of {name} cut)", &text[..end]),
            None => text,
        };
        Some((name.to_string(), text))
    })
}

fn mode_text(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Plan => {
            "Mode: plan. You may only read and search; you cannot change files or run commands, \
and tools that would are not available. Investigate, then answer with a concrete plan the user can approve."
        }
        PermissionMode::Ask => {
            "Mode: ask. Every change you make is shown to the user for approval first; \
a denied call comes back as an error: do not retry it unchanged."
        }
        PermissionMode::AutoRead => {
            "Mode: auto_read. Reading is free; changes are shown to the user for approval \
unless already allowed. A denied call comes back as an error: do not retry it unchanged."
        }
        PermissionMode::AutoAll => "Mode: auto_all. Your changes apply without asking; be careful and verify them.",
    }
}

/// The whole system prompt for one turn.
pub fn system_prompt(mode: PermissionMode, tools: &[ToolSpec], protocol: ToolProtocol) -> String {
    let mut out = String::new();
    out.push_str(BASE);
    // Told to run tests it has no tool for, a model tells the user to.
    if tools.iter().any(|tool| tool.name == "Bash") {
        out.push_str(" Run the project's tests after a change when it has any.");
    }
    out.push_str("\n\n");
    out.push_str(mode_text(mode));
    out.push('\n');
    // A template that speaks tools presents them itself, in the format the
    // model was trained on: listing them here too would only confuse it.
    if protocol != ToolProtocol::Template {
        out.push_str("\n# Tools\n");
        for tool in tools {
            out.push_str(&format!("\n## {}\n{}\nInput schema: {}\n", tool.name, tool.description, tool.input_schema));
        }
    }
    if protocol == ToolProtocol::Text {
        out.push_str("\n# How to call a tool\n");
        out.push_str(TEXT_PROTOCOL);
        out.push('\n');
    }
    out
}

/// What the model is told about the project before the user's first words:
/// its rules file, its memory, its skills, and a snapshot of its files and
/// git state.
/// Skills are listed here, not in the system prompt, which stays the same
/// for every project (and so does its saved prompt cache).
pub fn workspace_context(root: &Path, skills: Option<&SkillCatalog>) -> String {
    let mut out = String::from("<context>\n");
    if let Some((name, text)) = load_rules(root) {
        out.push_str(&format!("# Project rules (from {name})\n{}\n\n", text.trim_end()));
    }
    if let Some(memory) = std::fs::read_to_string(root.join(MEMORY_FILE)).ok().as_deref().and_then(recent_memory) {
        out.push_str(&format!("# Project memory (from {MEMORY_FILE}; the Remember tool adds to it)\n{memory}\n"));
    }
    if let Some(skills) = skills.filter(|skills| !skills.is_empty()) {
        out.push_str(&skills.listing());
        out.push('\n');
    }
    out.push_str("# Workspace\n");
    out.push_str(&snapshot(root));
    out.push_str("</context>\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_md_wins_over_claude_md() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_rules(dir.path()), None);
        std::fs::write(dir.path().join("CLAUDE.md"), "use tabs").unwrap();
        assert_eq!(load_rules(dir.path()).unwrap().0, "CLAUDE.md");
        std::fs::write(dir.path().join("AGENTS.md"), "use spaces").unwrap();
        assert_eq!(load_rules(dir.path()), Some(("AGENTS.md".into(), "use spaces".into())));
    }

    #[test]
    fn the_workspace_context_holds_the_rules_and_the_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Run cargo fmt.\n").unwrap();
        std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
        assert_eq!(
            workspace_context(dir.path(), None),
            "<context>\n# Project rules (from AGENTS.md)\nRun cargo fmt.\n\n# Workspace\n\
             Files and folders in the workspace (paths are relative to its root):\nAGENTS.md\nmain.rs\n</context>\n\n"
        );
    }

    #[test]
    fn prompt_holds_mode_tools_and_format() {
        let tools = vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file.".into(),
            input_schema: serde_json::json!({"type": "object"}),
        }];
        let text = system_prompt(PermissionMode::Plan, &tools, ToolProtocol::Text);
        assert!(text.contains("Mode: plan"));
        assert!(!text.contains("Run the project's tests"), "no tool to run them with: {text}");
        assert!(text.contains("## Read\nRead a file.\nInput schema: {\"type\":\"object\"}"));
        assert!(text.contains("{\"tool\": \"Read\", \"input\""));
        let native = system_prompt(PermissionMode::AutoAll, &tools, ToolProtocol::Native);
        assert!(!native.contains("How to call a tool"));
        let template = system_prompt(PermissionMode::AutoAll, &tools, ToolProtocol::Template);
        assert!(!template.contains("## Read") && !template.contains("How to call a tool"), "{template}");
    }
}
