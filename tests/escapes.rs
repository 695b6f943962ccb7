//! The escape battery: ways out of the workspace, tried on every tool that
//! takes a path, through whole turns of the scripted model on real files.
//!
//! Each case runs in a fresh folder that holds the workspace and, beside it,
//! an `outside` folder of files the tools must never reach. Whatever a case
//! does, nothing outside the workspace may be created, changed or deleted,
//! and no outside file's content (nor the name of an outside file no input
//! mentions) may appear anywhere in the turn's events. Two races swap a
//! workspace file, then a folder, for a symlink out while the tools work on
//! them: what resolved inside must not be read or changed outside.

#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::{Run, Scenario};
use serde_json::{Value, json};

/// The content of every outside file the tools must not read. Inputs never
/// contain it, so finding it in an event means it was read.
const SECRET: &str = "outside secret 7f3a9c";
/// A pattern that matches [`SECRET`] without containing it.
const SECRET_PATTERN: &str = "secret 7f3a9[c]";
/// The name of an outside file that no input names: seeing it means an
/// outside folder was listed.
const UNLISTED: &str = "unlisted-e41b.txt";
/// The name of a file in the outside folder that a workspace folder is
/// swapped for: seeing it means that folder was listed.
const UNLISTED_IN_DIR: &str = "unlisted-5c2d.txt";
/// The content of the outside file the workspace shares through a hard link.
const SHARED: &str = "shared through a hard link\n";
/// What the hard-linked cases write in place of [`SHARED`].
const REPLACED: &str = "changed inside the workspace\n";

/// How a case must end, beyond the checks every case gets.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// The call is refused with an error result.
    Refused,
    /// The call may succeed, with what lies inside only (searches, paths
    /// that look like escapes but name something inside).
    Contained,
    /// The call succeeds: a hard link is, to the filesystem, a file inside.
    /// Changes replace the workspace's name for it, never the outside one.
    Succeeds,
}

/// What a case puts in the workspace before the call. In targets and inputs
/// `<outside>`, `<root>` and `<parent>` stand for those folders' absolute paths.
#[derive(Clone, Copy, Debug)]
enum Setup {
    /// A symlink at this workspace path to this target.
    Symlink(&'static str, &'static str),
    /// A hard link at this workspace path to this file under `outside`.
    HardLink(&'static str, &'static str),
    /// A git repository at the root with one commit.
    Git,
    /// A skill `notes` in `.tack/skills`.
    Skill,
}

struct Case {
    name: &'static str,
    setup: &'static [Setup],
    tool: &'static str,
    input: Value,
    expect: Expect,
}

fn case(name: &'static str, setup: &'static [Setup], tool: &'static str, input: Value, expect: Expect) -> Case {
    Case { name, setup, tool, input, expect }
}

const NONE: &[Setup] = &[];
const LINK: &[Setup] = &[Setup::Symlink("link.txt", "<outside>/secret.txt")];
const LINKDIR: &[Setup] = &[Setup::Symlink("linkdir", "<outside>")];
const RELDIR: &[Setup] = &[Setup::Symlink("reldir", "../outside")];
const CHAIN: &[Setup] = &[
    Setup::Symlink("link.txt", "<outside>/secret.txt"),
    Setup::Symlink("middle.txt", "link.txt"),
    Setup::Symlink("chain.txt", "<root>/middle.txt"),
];
const DIR_CHAIN: &[Setup] = &[Setup::Symlink("linkdir", "<outside>"), Setup::Symlink("hop", "linkdir")];
const PROC_LINK: &[Setup] = &[Setup::Symlink("proc.txt", "/proc/self/root<outside>/secret.txt")];
const DANGLING: &[Setup] = &[Setup::Symlink("dangling.txt", "<outside>/created-through-a-link.txt")];
const HARD: &[Setup] = &[Setup::HardLink("hard.txt", "shared.txt")];
const GIT: &[Setup] = &[Setup::Git];
const GIT_LINK: &[Setup] = &[Setup::Git, Setup::Symlink("link.txt", "<outside>/secret.txt")];
const GIT_LINKDIR: &[Setup] = &[Setup::Git, Setup::Symlink("linkdir", "<outside>")];
const SKILL: &[Setup] = &[Setup::Skill];
const SKILL_LINK: &[Setup] = &[Setup::Skill, Setup::Symlink(".tack/skills/notes/link.md", "<outside>/secret.txt")];
const MEMORY_LINK: &[Setup] = &[Setup::Symlink(".tack/MEMORY.md", "<outside>/secret.txt")];
const MEMORY_DIR_LINK: &[Setup] = &[Setup::Symlink(".tack", "<outside>/dir")];
const MEMORY_HARD: &[Setup] = &[Setup::HardLink(".tack/MEMORY.md", "shared.txt")];

fn cases() -> Vec<Case> {
    use Expect::*;
    vec![
        // `..` chains and absolute paths.
        case("read one level up", NONE, "Read", json!({"file_path": "../outside/secret.txt"}), Refused),
        case("read up through a folder", NONE, "Read", json!({"file_path": "sub/../../outside/secret.txt"}), Refused),
        case(
            "read far above the root",
            NONE,
            "Read",
            json!({"file_path": "../../../../../../../../etc/passwd"}),
            Refused,
        ),
        case("read an absolute outside path", NONE, "Read", json!({"file_path": "<outside>/secret.txt"}), Refused),
        case("read /etc/passwd", NONE, "Read", json!({"file_path": "/etc/passwd"}), Refused),
        case(
            "read the root's path then up",
            NONE,
            "Read",
            json!({"file_path": "<root>/../outside/secret.txt"}),
            Refused,
        ),
        case("read with a trailing dot", NONE, "Read", json!({"file_path": "../outside/secret.txt/."}), Refused),
        // Symlinks: to a file, to a folder, relative, chained, dangling.
        case("read a symlink to a file", LINK, "Read", json!({"file_path": "link.txt"}), Refused),
        case("read through a folder symlink", LINKDIR, "Read", json!({"file_path": "linkdir/secret.txt"}), Refused),
        case("read through a relative symlink", RELDIR, "Read", json!({"file_path": "reldir/dir/nested.txt"}), Refused),
        case("read a chain of symlinks", CHAIN, "Read", json!({"file_path": "chain.txt"}), Refused),
        case("read through chained folder links", DIR_CHAIN, "Read", json!({"file_path": "hop/secret.txt"}), Refused),
        case("read a symlink into /proc", PROC_LINK, "Read", json!({"file_path": "proc.txt"}), Refused),
        case("read a symlink with a trailing slash", LINK, "Read", json!({"file_path": "link.txt/"}), Refused),
        // /proc views of the filesystem.
        case(
            "read /proc/self/root",
            NONE,
            "Read",
            json!({"file_path": "/proc/self/root<outside>/secret.txt"}),
            Refused,
        ),
        case(
            "read /proc/self/cwd",
            NONE,
            "Read",
            json!({"file_path": "/proc/self/cwd/../outside/secret.txt"}),
            Refused,
        ),
        case("list /proc/self/root", NONE, "ListDir", json!({"path": "/proc/self/root<outside>"}), Refused),
        // Encodings and look-alikes are names inside, which do not exist.
        case("read a url-encoded slash", NONE, "Read", json!({"file_path": "..%2foutside%2fsecret.txt"}), Refused),
        case("read fullwidth dots", NONE, "Read", json!({"file_path": "\u{ff0e}\u{ff0e}/outside/secret.txt"}), Refused),
        case(
            "read one-dot leaders",
            NONE,
            "Read",
            json!({"file_path": "\u{2024}\u{2024}/outside/secret.txt"}),
            Refused,
        ),
        case("read backslashes", NONE, "Read", json!({"file_path": "..\\outside\\secret.txt"}), Refused),
        case("read a NUL byte", NONE, "Read", json!({"file_path": "ok.txt\u{0}/../../outside/secret.txt"}), Refused),
        case("read a NUL after a link", LINK, "Read", json!({"file_path": "link.txt\u{0}"}), Refused),
        case("write a NUL byte", NONE, "Write", json!({"file_path": "new\u{0}.txt", "content": "x"}), Refused),
        // A hard link shares the file; reading it reads the workspace's file.
        case("read a hard link", HARD, "Read", json!({"file_path": "hard.txt"}), Succeeds),
        // Write.
        case("write one level up", NONE, "Write", json!({"file_path": "../planted.txt", "content": "x"}), Refused),
        case(
            "overwrite an absolute outside path",
            NONE,
            "Write",
            json!({"file_path": "<outside>/secret.txt", "content": "x"}),
            Refused,
        ),
        case(
            "write through a folder symlink",
            LINKDIR,
            "Write",
            json!({"file_path": "linkdir/new.txt", "content": "x"}),
            Refused,
        ),
        case("write through a file symlink", LINK, "Write", json!({"file_path": "link.txt", "content": "x"}), Refused),
        case(
            "write a dangling symlink",
            DANGLING,
            "Write",
            json!({"file_path": "dangling.txt", "content": "x"}),
            Refused,
        ),
        case(
            "write beside a folder link's parent",
            LINKDIR,
            "Write",
            json!({"file_path": "linkdir/../planted.txt", "content": "x"}),
            Contained,
        ),
        case("write a hard link", HARD, "Write", json!({"file_path": "hard.txt", "content": REPLACED}), Succeeds),
        // Edit and MultiEdit.
        case(
            "edit a symlink to a file",
            LINK,
            "Edit",
            json!({"file_path": "link.txt", "old_string": "secret", "new_string": "x"}),
            Refused,
        ),
        case(
            "edit one level up",
            NONE,
            "Edit",
            json!({"file_path": "../outside/secret.txt", "old_string": "secret", "new_string": "x"}),
            Refused,
        ),
        case(
            "edit through a relative folder link",
            RELDIR,
            "Edit",
            json!({"file_path": "reldir/secret.txt", "old_string": "secret", "new_string": "x"}),
            Refused,
        ),
        case(
            "edit a hard link",
            HARD,
            "Edit",
            json!({"file_path": "hard.txt", "old_string": SHARED, "new_string": REPLACED}),
            Succeeds,
        ),
        case(
            "multi-edit through a folder symlink",
            LINKDIR,
            "MultiEdit",
            json!({"file_path": "linkdir/secret.txt", "edits": [{"old_string": "secret", "new_string": "x"}]}),
            Refused,
        ),
        case(
            "multi-edit an absolute outside path",
            NONE,
            "MultiEdit",
            json!({"file_path": "<outside>/secret.txt", "edits": [{"old_string": "secret", "new_string": "x"}]}),
            Refused,
        ),
        case(
            "multi-edit a hard link",
            HARD,
            "MultiEdit",
            json!({"file_path": "hard.txt", "edits": [{"old_string": SHARED, "new_string": REPLACED}]}),
            Succeeds,
        ),
        // Move: either end outside.
        case(
            "move a file out",
            NONE,
            "Move",
            json!({"source": "ok.txt", "destination": "../outside/moved.txt"}),
            Refused,
        ),
        case(
            "move a file in",
            NONE,
            "Move",
            json!({"source": "<outside>/secret.txt", "destination": "stolen.txt"}),
            Refused,
        ),
        case(
            "move a symlink's target in",
            LINK,
            "Move",
            json!({"source": "link.txt", "destination": "moved.txt"}),
            Refused,
        ),
        case(
            "move into a folder symlink",
            LINKDIR,
            "Move",
            json!({"source": "ok.txt", "destination": "linkdir/moved.txt"}),
            Refused,
        ),
        case(
            "move out of a folder symlink",
            LINKDIR,
            "Move",
            json!({"source": "linkdir/secret.txt", "destination": "stolen.txt"}),
            Refused,
        ),
        case("move a hard link", HARD, "Move", json!({"source": "hard.txt", "destination": "renamed.txt"}), Succeeds),
        // DeleteFile.
        case("delete one level up", NONE, "DeleteFile", json!({"file_path": "../outside/secret.txt"}), Refused),
        case("delete an absolute path", NONE, "DeleteFile", json!({"file_path": "<outside>/secret.txt"}), Refused),
        case("delete a symlink's target", LINK, "DeleteFile", json!({"file_path": "link.txt"}), Refused),
        case(
            "delete through a folder symlink",
            LINKDIR,
            "DeleteFile",
            json!({"file_path": "linkdir/secret.txt"}),
            Refused,
        ),
        case("delete a hard link", HARD, "DeleteFile", json!({"file_path": "hard.txt"}), Succeeds),
        // Glob and Grep: roots outside are refused, links inside are not followed.
        case("glob above the root", NONE, "Glob", json!({"pattern": "**/*", "path": ".."}), Refused),
        case("glob an absolute outside root", NONE, "Glob", json!({"pattern": "**/*", "path": "<outside>"}), Refused),
        case("glob a folder symlink", LINKDIR, "Glob", json!({"pattern": "**/*", "path": "linkdir"}), Refused),
        case("glob a pattern that climbs", NONE, "Glob", json!({"pattern": "../outside/*"}), Contained),
        case("glob past links inside", DIR_CHAIN, "Glob", json!({"pattern": "**/*"}), Contained),
        case("grep above the root", NONE, "Grep", json!({"pattern": SECRET_PATTERN, "path": ".."}), Refused),
        case(
            "grep an outside file",
            NONE,
            "Grep",
            json!({"pattern": SECRET_PATTERN, "path": "<outside>/secret.txt"}),
            Refused,
        ),
        case("grep a folder symlink", LINKDIR, "Grep", json!({"pattern": SECRET_PATTERN, "path": "linkdir"}), Refused),
        case("grep a file symlink", LINK, "Grep", json!({"pattern": SECRET_PATTERN, "path": "link.txt"}), Refused),
        case("grep past links inside", CHAIN, "Grep", json!({"pattern": SECRET_PATTERN}), Contained),
        case("grep past folder links inside", DIR_CHAIN, "Grep", json!({"pattern": SECRET_PATTERN}), Contained),
        case(
            "grep with a glob that climbs",
            NONE,
            "Grep",
            json!({"pattern": SECRET_PATTERN, "glob": "../outside/*"}),
            Contained,
        ),
        // ListDir.
        case("list above the root", NONE, "ListDir", json!({"path": ".."}), Refused),
        case("list an absolute outside folder", NONE, "ListDir", json!({"path": "<outside>"}), Refused),
        case("list a folder symlink", LINKDIR, "ListDir", json!({"path": "linkdir"}), Refused),
        case("list a folder symlink with a slash", LINKDIR, "ListDir", json!({"path": "linkdir/"}), Refused),
        case("list a folder symlink's dot", LINKDIR, "ListDir", json!({"path": "linkdir/."}), Refused),
        case("list a folder symlink's parent", LINKDIR, "ListDir", json!({"path": "linkdir/.."}), Contained),
        // git: paths pass the boundary, revisions cannot become options or file reads.
        case("git diff a path above the root", GIT, "GitDiff", json!({"path": "../outside/secret.txt"}), Refused),
        case("git log an absolute outside path", GIT, "GitLog", json!({"path": "<outside>"}), Refused),
        case("git log a folder symlink", GIT_LINKDIR, "GitLog", json!({"path": "linkdir"}), Refused),
        case("git show a file symlink", GIT_LINK, "GitShow", json!({"revision": "HEAD", "path": "link.txt"}), Refused),
        case(
            "git show a file above the root",
            GIT,
            "GitShow",
            json!({"revision": "HEAD:../outside/secret.txt"}),
            Refused,
        ),
        case("git show a file by revision", GIT, "GitShow", json!({"revision": "HEAD:ok.txt"}), Refused),
        case("git diff an output option", GIT, "GitDiff", json!({"commit": "--output=<parent>/pwned.txt"}), Refused),
        case("git diff a no-index option", GIT, "GitDiff", json!({"commit": "--no-index"}), Refused),
        case("git show an option", GIT, "GitShow", json!({"revision": "-p"}), Refused),
        case("git diff an option as a path", GIT, "GitDiff", json!({"path": "--output=<parent>/pwned.txt"}), Contained),
        case("git log an option as a path", GIT, "GitLog", json!({"path": "--output=<parent>/pwned.txt"}), Contained),
        // Skill files beside SKILL.md.
        case(
            "skill file above its folder",
            SKILL,
            "Skill",
            json!({"name": "notes", "file": "../../../../outside/secret.txt"}),
            Refused,
        ),
        case(
            "skill file at an absolute path",
            SKILL,
            "Skill",
            json!({"name": "notes", "file": "<outside>/secret.txt"}),
            Refused,
        ),
        case("skill file through a symlink", SKILL_LINK, "Skill", json!({"name": "notes", "file": "link.md"}), Refused),
        // Remember writes the memory file, wherever it leads.
        case("remember into a symlinked memory", MEMORY_LINK, "Remember", json!({"fact": "x"}), Refused),
        case("remember into a symlinked folder", MEMORY_DIR_LINK, "Remember", json!({"fact": "x"}), Refused),
        case("remember into a hard-linked memory", MEMORY_HARD, "Remember", json!({"fact": "x"}), Succeeds),
    ]
}

fn call(tool: &str, input: &Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

/// `value` with the placeholders of string leaves replaced.
fn substitute(value: &Value, places: &Places) -> Value {
    match value {
        Value::String(text) => Value::String(places.fill(text)),
        Value::Array(items) => Value::Array(items.iter().map(|item| substitute(item, places)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), substitute(v, places))).collect()),
        other => other.clone(),
    }
}

/// The folders of one case: `parent` holds the workspace and `outside`.
struct Places {
    parent: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Places {
    fn fill(&self, text: &str) -> String {
        text.replace("<outside>", &self.outside.display().to_string())
            .replace("<root>", &self.root.display().to_string())
            .replace("<parent>", &self.parent.display().to_string())
    }
}

/// What lies in the parent folder outside the workspace: every path with its
/// kind and content (file bytes, link target).
fn outside_state(places: &Places) -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path == skip {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let state = if meta.is_symlink() {
                format!("link to {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(&path, skip, out);
                "folder".to_string()
            } else {
                format!("file {:?}", String::from_utf8_lossy(&std::fs::read(&path).unwrap()))
            };
            out.insert(path, state);
        }
    }
    let mut state = BTreeMap::new();
    walk(&places.parent, &places.root, &mut state);
    state
}

/// Regular files in the workspace that hold outside content: what a call
/// would have copied in.
fn secrets_inside(root: &Path) -> Vec<PathBuf> {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .ignore(false)
        .git_ignore(false)
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(|entry| std::fs::read(entry.path()).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(SECRET)))
        .map(|entry| entry.path().to_path_buf())
        .collect()
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=Test Author", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

fn git_installed() -> bool {
    std::process::Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// A scenario whose workspace lies in a fresh folder beside `outside`,
/// which holds the files no call may reach.
fn scenario_beside_outside() -> (tempfile::TempDir, Scenario, Places) {
    let parent = tempfile::tempdir().unwrap();
    let mut scenario = Scenario::new();
    scenario.dir = tempfile::Builder::new().prefix("workspace-").tempdir_in(parent.path()).unwrap();
    let places = Places {
        parent: parent.path().to_path_buf(),
        root: scenario.root().to_path_buf(),
        outside: parent.path().join("outside"),
    };
    std::fs::create_dir_all(places.outside.join("dir")).unwrap();
    std::fs::write(places.outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(places.outside.join("dir/nested.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(places.outside.join(UNLISTED), format!("{SECRET}\n")).unwrap();
    std::fs::write(places.outside.join("dir").join(UNLISTED_IN_DIR), format!("{SECRET}\n")).unwrap();
    std::fs::write(places.outside.join("shared.txt"), SHARED).unwrap();
    let scenario = scenario.file("ok.txt", "inside\n").file("sub/a.txt", "inside too\n");
    (parent, scenario, places)
}

/// Runs one case; what went wrong, if anything.
async fn check(case: &Case) -> Result<(), String> {
    let (_parent, mut scenario, places) = scenario_beside_outside();
    for setup in case.setup {
        match *setup {
            Setup::Symlink(at, target) => {
                let at = places.root.join(at);
                std::fs::create_dir_all(at.parent().unwrap()).unwrap();
                symlink(places.fill(target), at).unwrap();
            }
            Setup::HardLink(at, target) => {
                let at = places.root.join(at);
                std::fs::create_dir_all(at.parent().unwrap()).unwrap();
                std::fs::hard_link(places.outside.join(target), at).unwrap();
            }
            Setup::Git => {
                git(&places.root, &["init", "-q", "-b", "main"]);
                git(&places.root, &["add", "."]);
                git(&places.root, &["commit", "-q", "-m", "first commit"]);
            }
            Setup::Skill => {
                scenario = scenario.file(
                    ".tack/skills/notes/SKILL.md",
                    "---\nname: notes\ndescription: Take notes.\n---\nWrite them down.\n",
                );
                scenario = scenario.file(".tack/skills/notes/template.md", "# Notes\n");
            }
        }
    }
    if case.setup.iter().any(|s| matches!(s, Setup::Skill)) {
        scenario = scenario.discover_skills();
    }
    let before = outside_state(&places);
    let input = substitute(&case.input, &places);
    // Changes are refused to a model that has not read the file: it reads first, as a model would.
    let mut script = Vec::new();
    if matches!(case.tool, "Edit" | "MultiEdit" | "Write") {
        script.push(call("Read", &json!({"file_path": input["file_path"]})));
    }
    script.push(call(case.tool, &input));
    let run = scenario.run(&[&script.join("\n"), "done", "done"], "try to get out").await;

    let mut problems = Vec::new();
    let results = run.results();
    match results.last() {
        None => problems.push("the call was never made".to_string()),
        Some((name, is_error, output)) => {
            if name != case.tool {
                problems.push(format!("the last result is {name}'s"));
            }
            match case.expect {
                Expect::Refused if !is_error => problems.push(format!("it was not refused: {output}")),
                // Refused late, by the disk, a change would already have been shown to the user.
                Expect::Refused if run.kinds().contains(&"edit_proposed") => {
                    problems.push(format!("it was proposed as an edit before being refused: {output}"))
                }
                Expect::Succeeds if *is_error => problems.push(format!("it failed: {output}")),
                _ => {}
            }
            if output.contains("panic") {
                problems.push(format!("it panicked: {output}"));
            }
        }
    }
    let events = format!("{:?}", run.events);
    for leak in [SECRET, UNLISTED, UNLISTED_IN_DIR, "root:x:0:0"] {
        if events.contains(leak) {
            problems.push(format!("{leak:?} appears in the events:\n{}", run.render()));
        }
    }
    let after = outside_state(&places);
    if after != before {
        problems.push(format!("the outside changed:\nbefore {before:#?}\nafter {after:#?}"));
    }
    let copied = secrets_inside(&places.root);
    if !copied.is_empty() {
        problems.push(format!("outside content was copied into {copied:?}"));
    }
    if case.expect == Expect::Succeeds && case.tool != "Read" {
        check_hard_link_changed_inside(case, &run, &mut problems);
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

/// After a change through a hard link, the workspace holds the change and
/// the outside name still holds what it held.
fn check_hard_link_changed_inside(case: &Case, run: &Run, problems: &mut Vec<String>) {
    let (inside, expected): (&str, Option<&str>) = match case.tool {
        "Move" => ("renamed.txt", Some(SHARED)),
        "DeleteFile" => ("hard.txt", None),
        "Remember" => (".tack/MEMORY.md", None),
        _ => ("hard.txt", Some(REPLACED)),
    };
    let now = std::fs::read_to_string(run.dir.path().join(inside)).ok();
    let fine = match (case.tool, expected) {
        ("Remember", _) => now.as_deref().is_some_and(|text| text.starts_with(SHARED) && text.len() > SHARED.len()),
        (_, expected) => now.as_deref() == expected,
    };
    if !fine {
        problems.push(format!("{inside} in the workspace holds {now:?}"));
    }
}

#[tokio::test]
async fn no_way_out_of_the_workspace_gets_through_any_tool() {
    // Skipped, the git cases would pass unseen: git is installed by
    // scripts/system-deps.
    assert!(git_installed(), "git is not installed: scripts/system-deps installs it");
    let cases = cases();
    println!("{} escape cases", cases.len());
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        ran += 1;
        if let Err(problem) = check(case).await {
            failures.push(format!("{} ({} {}): {problem}", case.name, case.tool, case.input));
        }
    }
    assert!(failures.is_empty(), "{} of {ran} cases got out:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// Races: a path swapped for a symlink out between the check and the use.
/// Only Linux names the file behind a descriptor (`/proc/self/fd`), which is
/// what closes them; elsewhere the check before the use is all there is.
#[cfg(target_os = "linux")]
mod races {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    /// Replaces `path` over and over, atomically, by a regular file and by a
    /// symlink to `target`, until `stop` is set; counts the swaps.
    fn flip(path: PathBuf, target: PathBuf, stop: Arc<AtomicBool>, swaps: Arc<AtomicUsize>) {
        let file = path.with_extension("flip-file");
        let link = path.with_extension("flip-link");
        while !stop.load(Ordering::Relaxed) {
            std::fs::write(&file, "inside\n").unwrap();
            std::fs::rename(&file, &path).unwrap();
            let _ = std::fs::remove_file(&link);
            symlink(&target, &link).unwrap();
            std::fs::rename(&link, &path).unwrap();
            swaps.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[tokio::test]
    async fn a_file_swapped_for_a_symlink_mid_call_is_never_read_or_written_through() {
        let (_parent, scenario, places) = scenario_beside_outside();
        let scenario = scenario.file("flip.txt", "inside\n");
        let before = outside_state(&places);
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let flipper = {
            let (path, target) = (places.root.join("flip.txt"), places.outside.join("secret.txt"));
            let (stop, swaps) = (stop.clone(), swaps.clone());
            std::thread::spawn(move || flip(path, target, stop, swaps))
        };
        let round = [
            call("Read", &json!({"file_path": "flip.txt"})),
            call("Grep", &json!({"pattern": ".", "path": "flip.txt"})),
            call("Grep", &json!({"pattern": ".", "output_mode": "content"})),
            call("Write", &json!({"file_path": "flip.txt", "content": "written\n"})),
            call("Read", &json!({"file_path": "flip.txt"})),
            call("Edit", &json!({"file_path": "flip.txt", "old_string": "inside", "new_string": "edited"})),
            call(
                "MultiEdit",
                &json!({"file_path": "flip.txt", "edits": [{"old_string": "inside", "new_string": "x"}]}),
            ),
            call("DeleteFile", &json!({"file_path": "flip.txt"})),
            call("Move", &json!({"source": "flip.txt", "destination": "moved.txt"})),
            call("DeleteFile", &json!({"file_path": "moved.txt"})),
        ];
        let script: Vec<String> = (0..150).flat_map(|_| round.iter().cloned()).collect();
        let run = scenario.max_iterations(3).run(&[&script.join("\n"), "done", "done"], "race").await;
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();

        let results = run.results();
        assert_eq!(results.len(), script.len());
        let swaps = swaps.load(Ordering::Relaxed);
        assert!(swaps > 100, "the path was swapped only {swaps} times");
        let leaked: Vec<&(String, bool, String)> =
            results.iter().filter(|(_, _, output)| output.contains(SECRET)).collect();
        assert!(leaked.is_empty(), "{} calls showed the outside file: {leaked:#?}", leaked.len());
        assert!(!format!("{:?}", run.events).contains(SECRET), "outside content appears in an event");
        assert_eq!(outside_state(&places), before, "the outside changed");
        assert!(secrets_inside(&places.root).is_empty(), "outside content was copied into the workspace");
    }

    /// Replaces the folder `path` over and over by a symlink to `target` and
    /// back, until `stop` is set; the real folder always holds `a.txt`. Counts
    /// the swaps.
    fn flip_folder(path: PathBuf, target: PathBuf, stop: Arc<AtomicBool>, swaps: Arc<AtomicUsize>) {
        let away = path.with_extension("away");
        let link = path.with_extension("link");
        symlink(&target, &link).unwrap();
        while !stop.load(Ordering::Relaxed) {
            if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_symlink()) {
                std::fs::rename(&path, &link).unwrap();
            }
            // A tool that wrote into the folder while it was away made a new
            // one in its place, which is the real folder from then on.
            if away.exists() && std::fs::rename(&away, &path).is_err() {
                std::fs::remove_dir_all(&away).unwrap();
            }
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join("a.txt"), "inside\n").unwrap();
            if std::fs::rename(&path, &away).is_ok() && std::fs::rename(&link, &path).is_ok() {
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    #[tokio::test]
    async fn a_folder_swapped_for_a_symlink_mid_call_is_never_reached_through() {
        let (_parent, scenario, places) = scenario_beside_outside();
        let scenario = scenario.file("flipdir/a.txt", "inside\n");
        std::fs::write(places.outside.join("dir/a.txt"), format!("{SECRET}\n")).unwrap();
        let before = outside_state(&places);
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let flipper = {
            let (path, target) = (places.root.join("flipdir"), places.outside.join("dir"));
            let (stop, swaps) = (stop.clone(), swaps.clone());
            std::thread::spawn(move || flip_folder(path, target, stop, swaps))
        };
        let round = [
            call("Read", &json!({"file_path": "flipdir/a.txt"})),
            call("ListDir", &json!({"path": "flipdir"})),
            call("Grep", &json!({"pattern": ".", "path": "flipdir", "output_mode": "content"})),
            call("Glob", &json!({"pattern": "**/*", "path": "flipdir"})),
            call("Write", &json!({"file_path": "flipdir/a.txt", "content": "written\n"})),
            call("Write", &json!({"file_path": "flipdir/new.txt", "content": "new\n"})),
            call("Read", &json!({"file_path": "flipdir/a.txt"})),
            call("Edit", &json!({"file_path": "flipdir/a.txt", "old_string": "inside", "new_string": "edited"})),
            call("DeleteFile", &json!({"file_path": "flipdir/new.txt"})),
            call("DeleteFile", &json!({"file_path": "flipdir/a.txt"})),
            call("Move", &json!({"source": "flipdir/a.txt", "destination": "moved.txt"})),
            call("Move", &json!({"source": "ok.txt", "destination": "flipdir/ok.txt"})),
            call("Move", &json!({"source": "flipdir/ok.txt", "destination": "ok.txt"})),
            call("DeleteFile", &json!({"file_path": "moved.txt"})),
        ];
        let script: Vec<String> = (0..120).flat_map(|_| round.iter().cloned()).collect();
        let run = scenario.max_iterations(3).run(&[&script.join("\n"), "done", "done"], "race").await;
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();

        let results = run.results();
        assert_eq!(results.len(), script.len());
        let swaps = swaps.load(Ordering::Relaxed);
        assert!(swaps > 100, "the folder was swapped only {swaps} times");
        let mut problems = Vec::new();
        if format!("{:?}", run.events).contains(SECRET) {
            problems.push(format!("outside content appears in the events:\n{}", run.render()));
        }
        // Walks go by path (Glob, and the hint naming what a missing path's
        // folder holds), so mid-swap they may name what the outside folder
        // holds; what they open is checked. ListDir reads the folder it checked.
        let listed: Vec<&String> = results
            .iter()
            .filter(|(name, _, output)| name == "ListDir" && output.contains(UNLISTED_IN_DIR))
            .map(|(_, _, output)| output)
            .collect();
        if !listed.is_empty() {
            problems.push(format!("ListDir listed the outside folder: {listed:#?}"));
        }
        let after = outside_state(&places);
        if after != before {
            problems.push(format!("the outside changed:\nbefore {before:#?}\nafter {after:#?}"));
        }
        let copied = secrets_inside(&places.root);
        if !copied.is_empty() {
            problems.push(format!("outside content was copied into {copied:?}"));
        }
        assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    }
}
