//! The language's own checker after a change, as an engineer runs it before
//! calling a change done: `cargo check` in a Rust crate, the project's
//! `tsc --noEmit` in a TypeScript project that installs it, `go vet` in a
//! Go module. What it reports in the files the turn changed sends the model
//! back, as failing tests do: a small model's Rust or TypeScript parses
//! more often than it type-checks, and the syntax tree alone cannot tell.
//! Each run is the harness's own Bash call, approved as any.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::turn::Generation;
use super::{Conversation, TurnOutcome};
use crate::protocol::{Block, PermissionMode};

/// Runs of the checker a turn makes at most: a model that two tries did not
/// bring to type-check is not brought there by a third, and the last run's
/// report ends the turn.
pub(super) const MAX_BUILD_CHECKS: u32 = 3;

/// Error lines the model is shown at most: the first errors are the causes.
const SHOWN_ERRORS: usize = 20;

/// A language's checker for some changed files: the project folder it runs
/// in (relative to the workspace's root, empty for the root itself), found
/// from a changed file upward, and its command there.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Checker {
    pub folder: String,
    pub command: String,
}

impl Checker {
    /// The command as it runs from the workspace's root.
    pub fn command_line(&self) -> String {
        match self.folder.is_empty() {
            true => self.command.clone(),
            false => format!("cd {} && {}", crate::tools::mcp::shell_word(&self.folder), self.command),
        }
    }

    /// `changed` (relative to the root) as the checker names them, relative
    /// to its folder; those outside it are not its to report.
    fn within(&self, changed: &[String]) -> Vec<String> {
        match self.folder.is_empty() {
            true => changed.to_vec(),
            false => changed
                .iter()
                .filter_map(|path| path.strip_prefix(&format!("{}/", self.folder)))
                .map(str::to_string)
                .collect(),
        }
    }
}

/// The checker of the project at `root` for the `changed` files (relative
/// paths), where one of them is in its language and the checker is
/// installed: the nearest folder from that file upward that holds the
/// language's project file (a crate in a subfolder has its own Cargo.toml).
/// `None` otherwise.
pub(super) fn checker_for(root: &Path, changed: &[String]) -> Option<Checker> {
    let nearest = |path: &str, marker: &str| -> Option<String> {
        let mut folder = Path::new(path).parent();
        while let Some(at) = folder {
            if root.join(at).join(marker).is_file() {
                return Some(at.to_string_lossy().into_owned());
            }
            folder = at.parent();
        }
        None
    };
    let found = |extensions: &[&str], marker: &str| {
        changed
            .iter()
            .filter(|path| extensions.iter().any(|extension| path.ends_with(extension)))
            .find_map(|path| nearest(path, marker))
    };
    if let Some(folder) = found(&[".rs"], "Cargo.toml").filter(|_| super::code_check::on_path("cargo")) {
        return Some(Checker { folder, command: "cargo check --quiet --message-format=short".into() });
    }
    if let Some(folder) = found(&[".ts", ".tsx"], "tsconfig.json")
        .filter(|folder| root.join(folder).join("node_modules/.bin/tsc").is_file())
    {
        return Some(Checker { folder, command: "node_modules/.bin/tsc --noEmit --pretty false -p .".into() });
    }
    if let Some(folder) = found(&[".go"], "go.mod").filter(|_| super::code_check::on_path("go")) {
        return Some(Checker { folder, command: "go vet ./...".into() });
    }
    None
}

/// The lines of the checker's `output` that report an error in one of the
/// `changed` files: `src/stats.rs:17:9: error[E0308]: …` (cargo),
/// `src/money.ts(3,5): error TS2322: …` (tsc), `./config.go:14:2: …` (go vet,
/// which reports nothing but errors). Warnings, and errors in files the
/// turn did not change, are not the change's to fix.
fn errors_in(output: &str, changed: &[String]) -> Vec<String> {
    output
        .lines()
        .map(str::trim)
        .filter(|line| {
            let line = line.trim_start_matches("./").trim_start_matches("vet: ").trim_start_matches("./");
            let at_changed = changed.iter().any(|path| {
                line.strip_prefix(path.as_str()).is_some_and(|rest| rest.starts_with(':') || rest.starts_with('('))
            });
            let error = line.contains("error") || line.split(':').nth(1).is_some_and(|n| n.parse::<u32>().is_ok());
            at_changed && error && !line.contains("warning")
        })
        .take(SHOWN_ERRORS)
        .map(str::to_string)
        .collect()
}

impl Conversation {
    /// What the language's checker reports in the files changed since it
    /// last ran, as the reason the turn is not done; `None` where nothing
    /// changed, no checker applies, its runs are spent, or it finds no
    /// error in them. `Err` when the turn was cancelled meanwhile.
    pub(super) async fn build_failing(&mut self, cancel: &CancellationToken) -> Result<Option<String>, TurnOutcome> {
        if self.unbuilt_changes.is_empty()
            || self.build_checks_left == 0
            || !self.settings.checks.build
            || self.policy.mode == PermissionMode::Plan
            || !self.tools.harness_can_call("Bash")
        {
            return Ok(None);
        }
        let changed = std::mem::take(&mut self.unbuilt_changes);
        let Some(checker) = checker_for(self.workspace.root(), &changed) else { return Ok(None) };
        let command = checker.command_line();
        self.build_checks_left -= 1;
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text { text: "The language's checker, after the change:".into() });
        let Some(output) = self.run_own_bash(generation, &command, None, cancel).await? else { return Ok(None) };
        let errors = errors_in(&output, &checker.within(&changed));
        // The last run's report stays in the history, for the user to see;
        // it sends the model back no more.
        if errors.is_empty() || self.build_checks_left == 0 {
            return Ok(None);
        }
        Ok(Some(format!("`{command}` reports errors in the changed code:\n```\n{}\n```", errors.join("\n"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checker_reports_the_errors_of_the_changed_files_only() {
        let changed = vec!["src/stats.rs".to_string(), "src/money.ts".to_string(), "config.go".to_string()];
        let cargo = "src/stats.rs:17:9: error[E0308]: mismatched types\n\
                     src/stats.rs:3:5: warning: unused import: `std::fmt`\n\
                     src/lib.rs:2:1: error[E0432]: unresolved import `crate::gone`\n\
                     error: could not compile `stats` (lib) due to 2 previous errors";
        assert_eq!(errors_in(cargo, &changed), ["src/stats.rs:17:9: error[E0308]: mismatched types"]);
        let tsc = "src/money.ts(3,5): error TS2322: Type 'number' is not assignable to type 'string'.\n\
                   src/invoice.ts(9,1): error TS2554: Expected 1 arguments, but got 2.";
        assert_eq!(errors_in(tsc, &changed).len(), 1);
        let vet = "# example.com/config\nvet: ./config.go:14:2: undefined: value";
        assert_eq!(errors_in(vet, &changed), ["vet: ./config.go:14:2: undefined: value"]);
        // A path that only starts like a changed one is another file.
        assert!(errors_in("src/stats.rs.bak:1:1: error: x", &changed).is_empty());
    }

    #[test]
    fn a_checker_applies_where_its_language_changed_and_its_project_is() {
        let root = tempfile::tempdir().unwrap();
        let rust = vec!["src/lib.rs".to_string()];
        assert_eq!(checker_for(root.path(), &rust), None, "no Cargo.toml");
        std::fs::write(root.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let at_root = checker_for(root.path(), &rust).expect("cargo is installed where the tests run");
        assert_eq!(at_root.command_line(), "cargo check --quiet --message-format=short");
        assert_eq!(checker_for(root.path(), &["notes.md".to_string()]), None);
        // TypeScript's checker is the project's own, where it installs it.
        std::fs::write(root.path().join("tsconfig.json"), "{}").unwrap();
        assert_eq!(checker_for(root.path(), &["src/a.ts".to_string()]), None);
    }

    #[test]
    fn a_crate_in_a_subfolder_is_checked_in_its_folder_and_its_errors_read_from_there() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tools/split/src")).unwrap();
        std::fs::write(root.path().join("tools/split/Cargo.toml"), "[package]\nname = \"split\"\n").unwrap();
        let changed = vec!["tools/split/src/lib.rs".to_string(), "README.md".to_string()];
        let checker = checker_for(root.path(), &changed).expect("the crate's own Cargo.toml");
        assert_eq!(checker.folder, "tools/split");
        assert_eq!(checker.command_line(), "cd tools/split && cargo check --quiet --message-format=short");
        let cargo = "src/lib.rs:4:9: error[E0308]: mismatched types";
        assert_eq!(errors_in(cargo, &checker.within(&changed)), [cargo]);
    }
}
