//! The Neovim plugin (editors/nvim) in real headless Neovim 0.11 against the
//! real `tack lsp`, with the scripted model. The scenario itself is Lua:
//! tests/nvim/chat_review.lua.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn nvim() -> PathBuf {
    let path = std::env::var_os("TACK_TEST_NVIM")
        .expect("TACK_TEST_NVIM is not set: run the tests with ./scripts/test, which installs Neovim");
    PathBuf::from(path)
}

fn call(tool: &str, input: serde_json::Value) -> String {
    serde_json::json!({ "tool": tool, "input": input }).to_string()
}

/// Runs a Lua scenario headless; returns (success, stdout and stderr).
fn run_scenario(scenario: &str, workspace: &Path) -> (bool, String) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = tempfile::tempdir().unwrap();
    // Made here, where making it twice is no error: the scenarios run at
    // once, and Neovim's mkdir() fails when another process made it first.
    let artifacts = repo.join("target/nvim-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut child = Command::new(nvim())
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", repo.join("tests/nvim").join(scenario).display()))
        .current_dir(workspace)
        .env("TACK_BIN", env!("CARGO_BIN_EXE_tack"))
        .env("TACK_NVIM_PLUGIN", repo.join("editors/nvim"))
        .env("TACK_TEST_WORKSPACE", workspace)
        .env("TACK_NVIM_ARTIFACTS", &artifacts)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nvim starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[test]
fn a_chat_turn_an_approval_and_a_hunk_by_hunk_review_in_neovim() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::write(
        root.join("greet.py"),
        "def greet(name):\n    return 'Hello, ' + name\n\n\n\n\nprint(greet('world'))\n",
    )
    .unwrap();
    let bash = call("Bash", serde_json::json!({"command": "echo hi"}));
    // Read first: an edit of a file the model has not read is refused.
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let edit = call(
        "MultiEdit",
        serde_json::json!({"file_path": "greet.py", "edits": [
            {"old_string": "def greet(name):", "new_string": "def greet(name: str) -> str:"},
            {"old_string": "print(greet('world'))", "new_string": "print(greet(\"world\"))"},
        ]}),
    );
    let pick = call("AskUser", serde_json::json!({"question": "Which quotes?", "choices": ["double", "single"]}));
    let free = call("AskUser", serde_json::json!({"question": "Your name?"}));
    let script =
        serde_json::json!([format!("Checking the shell.\n{read}\n{bash}\n"), pick, free, edit, "Done with one hunk."]);
    std::fs::write(root.join("script.json"), script.to_string()).unwrap();
    let (ok, output) = run_scenario("chat_review.lua", &root);
    assert!(ok, "the Neovim scenario failed:\n{output}");
}

#[test]
fn a_change_reviewed_in_the_native_diff_view_in_neovim() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::write(
        root.join("greet.py"),
        "def greet(name):\n    return 'Hello, ' + name\n\n\n\n\nprint(greet('world'))\n",
    )
    .unwrap();
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let edit = call(
        "MultiEdit",
        serde_json::json!({"file_path": "greet.py", "edits": [
            {"old_string": "def greet(name):", "new_string": "def greet(name: str) -> str:"},
            {"old_string": "print(greet('world'))", "new_string": "print(greet(\"world\"))"},
        ]}),
    );
    let script = serde_json::json!([read, edit, "Done with one hunk."]);
    std::fs::write(root.join("script.json"), script.to_string()).unwrap();
    let (ok, output) = run_scenario("review_diff.lua", &root);
    assert!(ok, "the Neovim scenario failed:\n{output}");
}

#[test]
fn a_code_action_a_mode_change_and_a_resumed_session_in_neovim() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::write(root.join("greet.py"), "def greet(name):\n    return 'Hello, ' + name\n").unwrap();
    let read = call("Read", serde_json::json!({"file_path": "greet.py"}));
    let write = call("Write", serde_json::json!({"file_path": "new.txt", "content": "x\n"}));
    let script = serde_json::json!({
        "main": [write, "I may not write in plan mode."],
        "code_action_1": [read, "It greets people by name."],
    });
    std::fs::write(root.join("script.json"), script.to_string()).unwrap();
    let (ok, output) = run_scenario("actions_modes_sessions.lua", &root);
    assert!(ok, "the Neovim scenario failed:\n{output}");
}

#[test]
fn checkhealth_tackadd_and_tackfix_in_neovim() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::write(root.join("greet.py"), "def greet(name):\n    return 'Hello, ' + nme\n\nprint(greet('world'))\n")
        .unwrap();
    std::fs::write(root.join("script.json"), serde_json::json!(["Looking at it.", "Fixed."]).to_string()).unwrap();
    let (ok, output) = run_scenario("health_context.lua", &root);
    assert!(ok, "the Neovim scenario failed:\n{output}");
}
