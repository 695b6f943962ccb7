//! Skills: folders holding a `SKILL.md` (YAML front matter with `name` and
//! `description`, then instructions), as Claude Code and its kin keep them.
//! Their names and descriptions are listed for the model at the start of a
//! conversation; the Skill tool loads one's instructions, and files beside
//! them, when the task calls for it, so a long skill costs nothing until used.
//!
//! Found in the project's `.tack/skills/` and `.claude/skills/`, then the
//! user's `skills/` beside the user config; the first of a name wins.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

/// Skill files past this size are cut: they go into the prompt whole.
const MAX_SKILL_BYTES: usize = 64 * 1024;
/// Files beside a skill listed with it.
const MAX_LISTED_FILES: usize = 40;

/// One skill as found on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillEntry {
    pub name: String,
    pub description: String,
    /// The folder holding its SKILL.md.
    pub dir: PathBuf,
}

/// The skills one workspace offers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillCatalog {
    skills: Vec<SkillEntry>,
}

impl SkillCatalog {
    /// The skills of the workspace at `root` and of the user.
    pub fn discover(root: &Path) -> SkillCatalog {
        let user = crate::config::user_config_path().and_then(|file| file.parent().map(|dir| dir.join("skills")));
        let mut dirs = vec![root.join(".tack").join("skills"), root.join(".claude").join("skills")];
        dirs.extend(user);
        SkillCatalog::discover_in(&dirs)
    }

    /// The skills in `dirs` (each holding one folder per skill), earlier
    /// folders first; a name seen before is skipped.
    pub fn discover_in(dirs: &[PathBuf]) -> SkillCatalog {
        let mut skills: Vec<SkillEntry> = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
            folders.sort();
            for folder in folders {
                let file = folder.join("SKILL.md");
                let Ok(text) = std::fs::read_to_string(&file) else { continue };
                let Some(skill) = parse_skill(&text) else {
                    tracing::warn!(file = %file.display(), "skill without a description in its front matter; skipped");
                    continue;
                };
                let name =
                    skill.name.unwrap_or_else(|| folder.file_name().unwrap_or_default().to_string_lossy().into());
                if skills.iter().any(|known| known.name == name) {
                    continue;
                }
                skills.push(SkillEntry { name, description: skill.description, dir: folder });
            }
        }
        SkillCatalog { skills }
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub fn skills(&self) -> &[SkillEntry] {
        &self.skills
    }

    /// The list the model sees before the conversation.
    pub fn listing(&self) -> String {
        let mut out = String::from(
            "# Skills\nInstructions for particular tasks; when the task matches one, load it with the Skill tool first.\n",
        );
        for skill in &self.skills {
            out.push_str(&format!("- {}: {}\n", skill.name, skill.description));
        }
        out
    }
}

struct ParsedSkill {
    name: Option<String>,
    description: String,
    body: String,
}

/// The front matter's `name` and `description` (plain, quoted, or a `>`/`|`
/// block) and the text after it. `None` without a description.
fn parse_skill(text: &str) -> Option<ParsedSkill> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---")?.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let (front, body) = match rest.find("\n---") {
        Some(end) => (&rest[..end], rest[end + 4..].split_once('\n').map_or("", |(_, body)| body)),
        None => return None,
    };
    let mut name = None;
    let mut description = None;
    let lines: Vec<&str> = front.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let Some((key, value)) = line.split_once(':') else { continue };
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let mut value = value.trim().to_string();
        if matches!(value.as_str(), ">" | "|" | ">-" | "|-") {
            let mut parts = Vec::new();
            while i < lines.len() && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty()) {
                parts.push(lines[i].trim());
                i += 1;
            }
            value = parts.join(" ").trim().to_string();
        } else if value.len() >= 2
            && ((value.starts_with('"') && value.ends_with('"')) || (value.starts_with('\'') && value.ends_with('\'')))
        {
            value = value[1..value.len() - 1].to_string();
        }
        match key.trim() {
            "name" if !value.is_empty() => name = Some(value),
            "description" if !value.is_empty() => description = Some(value),
            _ => {}
        }
    }
    Some(ParsedSkill { name, description: description?, body: body.trim_start_matches('\n').to_string() })
}

pub struct Skill {
    pub catalog: Arc<SkillCatalog>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill's name, as listed.
    name: String,
    /// A file beside the skill's SKILL.md to read, relative to its folder;
    /// leave it out to load the skill's instructions.
    file: Option<String>,
}

#[async_trait]
impl TypedTool for Skill {
    type Input = SkillInput;
    const NAME: &'static str = "Skill";
    const DESCRIPTION: &'static str = "Load a skill listed at the start of the conversation: its instructions, and the files beside them. Load it before you start a task it matches, then follow it.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Read;

    fn paths(_: &SkillInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: SkillInput, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let Some(skill) = self.catalog.skills.iter().find(|s| s.name == input.name.trim()) else {
            let names: Vec<&str> = self.catalog.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::Invalid(format!(
                "there is no skill `{}`; the skills are: {}",
                input.name,
                names.join(", ")
            )));
        };
        match input.file.as_deref().map(str::trim).filter(|f| !f.is_empty() && *f != "SKILL.md") {
            None => load(skill),
            Some(file) => read_beside(skill, file),
        }
    }
}

fn load(skill: &SkillEntry) -> Result<ToolOutput, ToolError> {
    let text = read_capped(&skill.dir.join("SKILL.md"))?;
    let body = parse_skill(&text).map(|parsed| parsed.body).unwrap_or(text);
    let mut out = format!("Skill {}: {}\n\n{}", skill.name, skill.description, body.trim_end());
    let files = files_beside(&skill.dir);
    if !files.is_empty() {
        out.push_str(&format!(
            "\n\nFiles of this skill (read one with Skill, name {} and file set to its path): {}",
            skill.name,
            files.join(", ")
        ));
    }
    out.push('\n');
    Ok(ToolOutput::ok(out, format!("loaded skill {}", skill.name)))
}

fn read_beside(skill: &SkillEntry, file: &str) -> Result<ToolOutput, ToolError> {
    let relative = Path::new(file);
    if relative.is_absolute() || relative.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(ToolError::Invalid(format!("{file} is not a path inside the skill's folder")));
    }
    let path = skill.dir.join(relative);
    // A link out of the skill's folder would read what the skill does not hold.
    let inside = path.canonicalize().ok().zip(skill.dir.canonicalize().ok()).is_some_and(|(p, d)| p.starts_with(d));
    if !inside || !path.is_file() {
        let files = files_beside(&skill.dir);
        return Err(ToolError::Invalid(format!(
            "skill {} has no file {file}; its files are: {}",
            skill.name,
            if files.is_empty() { "none besides SKILL.md".to_string() } else { files.join(", ") }
        )));
    }
    let text = read_capped(&path)?;
    Ok(ToolOutput::ok(text, format!("read {file} of skill {}", skill.name)))
}

fn read_capped(path: &Path) -> Result<String, ToolError> {
    let bytes = std::fs::read(path).map_err(|e| ToolError::Invalid(format!("cannot read {}: {e}", path.display())))?;
    let mut text =
        String::from_utf8(bytes).map_err(|_| ToolError::Invalid(format!("{} is not UTF-8 text", path.display())))?;
    if text.len() > MAX_SKILL_BYTES {
        let mut end = MAX_SKILL_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[… cut: the file is longer …]");
    }
    Ok(text)
}

/// Files in a skill's folder besides SKILL.md, relative, sorted.
fn files_beside(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(dir)
        .max_depth(Some(3))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| e.path().strip_prefix(dir).ok().map(|p| p.to_string_lossy().replace('\\', "/")))
        .filter(|p| p != "SKILL.md")
        .collect();
    files.sort();
    files.truncate(MAX_LISTED_FILES);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_read_in_its_common_forms() {
        let plain = parse_skill("---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\nUse pypdf.\n").unwrap();
        assert_eq!((plain.name.as_deref(), plain.description.as_str()), (Some("pdf"), "Fill PDF forms."));
        assert_eq!(plain.body, "# PDF\nUse pypdf.\n");
        let folded =
            parse_skill("---\ndescription: >\n  Release steps\n  for tack.\nname: \"release\"\n---\nbody").unwrap();
        assert_eq!((folded.name.as_deref(), folded.description.as_str()), (Some("release"), "Release steps for tack."));
        assert!(parse_skill("# no front matter").is_none());
        assert!(parse_skill("---\nname: x\n---\nno description").is_none());
    }

    #[test]
    fn earlier_folders_win_and_broken_skills_are_skipped() {
        let project = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        let write = |dir: &Path, folder: &str, text: &str| {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
            std::fs::write(dir.join(folder).join("SKILL.md"), text).unwrap();
        };
        write(project.path(), "review", "---\nname: review\ndescription: project review\n---\n");
        write(user.path(), "review", "---\nname: review\ndescription: user review\n---\n");
        write(user.path(), "notes", "---\ndescription: named after its folder\n---\n");
        write(user.path(), "broken", "no front matter");
        let catalog = SkillCatalog::discover_in(&[project.path().into(), user.path().into()]);
        let found: Vec<(&str, &str)> =
            catalog.skills().iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
        assert_eq!(found, [("review", "project review"), ("notes", "named after its folder")]);
    }
}
