//! What the model is told about the workspace without asking: a compact
//! listing of the files and folders near the root (gitignore honoured) with
//! the git branch and changed files, and, when a path it names is missing,
//! what does exist near it.

use std::path::Path;
use std::process::Command;

/// Entries the snapshot lists; the rest are counted.
const MAX_ENTRIES: usize = 60;
/// How deep below the root the snapshot looks.
const MAX_DEPTH: usize = 3;
/// Entries walked before the snapshot stops counting: a huge tree must not
/// make every new conversation slow.
const MAX_WALKED: usize = 5_000;
/// Changed files the snapshot names.
const MAX_CHANGED: usize = 15;
/// Names a "does not exist" hint lists.
const MAX_NEIGHBOURS: usize = 15;

/// Paths under `root` the walk shows: gitignore, `.ignore` and hidden files
/// honoured, tack's own folder left out. (path relative to root, is a dir, depth)
fn walk(root: &Path, max_depth: usize) -> impl Iterator<Item = (String, bool, usize)> {
    let root_owned = root.to_path_buf();
    ignore::WalkBuilder::new(root)
        .max_depth(Some(max_depth))
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.depth() > 0)
        .filter_map(move |entry| {
            let rel = entry.path().strip_prefix(&root_owned).ok()?.to_string_lossy().replace('\\', "/");
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            Some((rel, is_dir, entry.depth()))
        })
        .take(MAX_WALKED)
}

/// The files under `root` (relative paths, sorted), as deep as the snapshot
/// looks and one level more, gitignore honoured.
pub fn files(root: &Path) -> Vec<String> {
    walk(root, MAX_DEPTH + 1).filter(|(_, is_dir, _)| !is_dir).map(|(rel, _, _)| rel).collect()
}

/// The snapshot as prompt text: a tree of the entries nearest the root, then
/// the git state when the root is a repository.
pub fn snapshot(root: &Path) -> String {
    // Level by level, stopping at the level that fills the listing: the
    // folders below it are never read, so a huge tree (a vendored registry,
    // a monorepo) costs one directory read, not thousands, at every new
    // conversation. The levels above are re-walked, but they are small.
    let mut entries: Vec<(String, bool, usize)> = Vec::new();
    let mut unread_below = false;
    for depth in 1..=MAX_DEPTH {
        let level: Vec<(String, bool, usize)> = walk(root, depth).filter(|(_, _, d)| *d == depth).collect();
        let has_folders = level.iter().any(|(_, is_dir, _)| *is_dir);
        entries.extend(level);
        if !has_folders || entries.len() >= MAX_ENTRIES {
            unread_below = has_folders && depth < MAX_DEPTH;
            break;
        }
    }
    let total = entries.len();
    entries.truncate(MAX_ENTRIES);
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::from("Files and folders in the workspace (paths are relative to its root):\n");
    if entries.is_empty() {
        out.push_str("(the workspace is empty)\n");
    }
    for (rel, is_dir, depth) in &entries {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        out.push_str(&"  ".repeat(depth - 1));
        out.push_str(name);
        out.push_str(if *is_dir { "/\n" } else { "\n" });
    }
    if total > entries.len() {
        let more = if unread_below || total >= MAX_WALKED {
            format!("{}+", total - entries.len())
        } else {
            (total - entries.len()).to_string()
        };
        out.push_str(&format!("({more} more entries not listed; use ListDir, Glob or Grep)\n"));
    }
    if let Some(git) = git_state(root) {
        out.push_str(&git);
    }
    out
}

/// "Git branch: main. Changed: M greet.py, ?? notes.txt" for a repository.
fn git_state(root: &Path) -> Option<String> {
    if !root.join(".git").exists() {
        return None;
    }
    let output = Command::new("git")
        .args(["status", "--porcelain=v1", "--branch", "--untracked-files=normal"])
        .current_dir(root)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let branch = lines.next()?.strip_prefix("## ")?;
    let branch = branch.split("...").next().unwrap_or(branch).replace("No commits yet on ", "");
    let changed: Vec<&str> = lines.collect();
    let mut out = format!("Git branch: {branch}.");
    if changed.is_empty() {
        out.push_str(" No uncommitted changes.\n");
    } else {
        let shown: Vec<String> = changed.iter().take(MAX_CHANGED).map(|line| line.trim().to_string()).collect();
        out.push_str(&format!(" Uncommitted changes: {}", shown.join(", ")));
        if changed.len() > MAX_CHANGED {
            out.push_str(&format!(" and {} more", changed.len() - MAX_CHANGED));
        }
        out.push_str(".\n");
    }
    Some(out)
}

/// Files elsewhere under `root` with the same file name as `rel`: a model
/// that guessed a folder (`src/stats.py`) learns where the file really is.
pub fn same_name_elsewhere(root: &Path, rel: &str) -> Vec<String> {
    let Some(name) = rel.rsplit('/').next().filter(|n| !n.is_empty()) else { return Vec::new() };
    walk(root, usize::MAX)
        .filter(|(path, is_dir, _)| !is_dir && path != rel && path.rsplit('/').next() == Some(name))
        .map(|(path, _, _)| path)
        .take(5)
        .collect()
}

/// What exists near a path that does not: "; the root holds a.py, src/" or
/// "; did you mean src/stats.py?". `root` is the workspace root and `rel` the
/// missing path relative to it.
pub fn missing_path_hint(root: &Path, rel: &str) -> String {
    let elsewhere = same_name_elsewhere(root, rel);
    if !elsewhere.is_empty() {
        return format!("; did you mean {}?", elsewhere.join(" or "));
    }
    // The nearest folder on the way to the missing path that does exist.
    let mut dir = rel.trim_end_matches('/');
    loop {
        dir = match dir.rfind('/') {
            Some(at) => &dir[..at],
            None => "",
        };
        if root.join(dir).is_dir() {
            break;
        }
    }
    let names: Vec<String> =
        walk(&root.join(dir), 1).map(|(name, is_dir, _)| if is_dir { format!("{name}/") } else { name }).collect();
    let place = if dir.is_empty() { "the root".to_string() } else { format!("{dir}/") };
    match names.len() {
        0 => format!("; {place} is empty"),
        n if n > MAX_NEIGHBOURS => {
            format!("; {place} holds {} and {} more", names[..MAX_NEIGHBOURS].join(", "), n - MAX_NEIGHBOURS)
        }
        _ => format!("; {place} holds {}", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    #[test]
    fn the_snapshot_is_a_tree_that_honours_gitignore() {
        let dir = tree(&["greet.py", "src/stats.py", "src/deep/a/b/far.py", "target/junk.o", ".gitignore"]);
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        let text = snapshot(dir.path());
        assert_eq!(
            text,
            "Files and folders in the workspace (paths are relative to its root):\ngreet.py\nsrc/\n  deep/\n    a/\n  stats.py\n"
        );
    }

    #[test]
    fn a_large_tree_is_capped_with_the_shallow_entries_kept() {
        let many: Vec<String> = (0..100).map(|i| format!("lib/deep/m{i:03}.rs")).collect();
        let mut files: Vec<&str> = many.iter().map(String::as_str).collect();
        files.push("README.md");
        let dir = tree(&files);
        let text = snapshot(dir.path());
        assert!(text.contains("\nREADME.md\n"), "{text}");
        assert_eq!(text.lines().count(), 1 + MAX_ENTRIES + 1, "{text}");
        assert!(text.ends_with("(43 more entries not listed; use ListDir, Glob or Grep)\n"), "{text}");
    }

    #[test]
    fn a_full_level_leaves_the_folders_below_it_uncounted() {
        let many: Vec<String> = (0..70).map(|i| format!("crate{i:02}/src/lib.rs")).collect();
        let dir = tree(&many.iter().map(String::as_str).collect::<Vec<_>>());
        let text = snapshot(dir.path());
        assert!(text.contains("\ncrate00/\n") && !text.contains("lib.rs"), "{text}");
        assert!(text.ends_with("(10+ more entries not listed; use ListDir, Glob or Grep)\n"), "{text}");
    }

    #[test]
    fn a_repository_shows_its_branch_and_changes() {
        let dir = tree(&["a.txt"]);
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(status.status.success(), "{status:?}");
        };
        git(&["init", "-q", "-b", "work"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "add", "."]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        std::fs::write(dir.path().join("a.txt"), "changed").unwrap();
        std::fs::write(dir.path().join("b.txt"), "new").unwrap();
        let text = snapshot(dir.path());
        assert!(text.ends_with("Git branch: work. Uncommitted changes: M a.txt, ?? b.txt.\n"), "{text}");
    }

    #[test]
    fn a_missing_path_names_what_exists_near_it() {
        let dir = tree(&["greet.py", "test_greet.py", "AGENTS.md", "lib/stats.py"]);
        assert_eq!(
            missing_path_hint(dir.path(), "README.md"),
            "; the root holds AGENTS.md, greet.py, lib/, test_greet.py"
        );
        assert_eq!(
            missing_path_hint(dir.path(), "src/main.rs"),
            "; the root holds AGENTS.md, greet.py, lib/, test_greet.py"
        );
        assert_eq!(missing_path_hint(dir.path(), "lib/nope.py"), "; lib/ holds stats.py");
        assert_eq!(missing_path_hint(dir.path(), "src/stats.py"), "; did you mean lib/stats.py?");
    }
}
