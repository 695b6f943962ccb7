//! `tack acp` driven by the Agent Client Protocol's official client library
//! (the TypeScript SDK, installed by scripts/test), which checks every message
//! against the protocol's schema: a full turn with a read of the editor's
//! unsaved buffer, a command and an edit asked through permission requests,
//! the edit written through the client, and a cancelled turn. The scenario
//! is tests/acp/client.mjs.

use std::path::PathBuf;
use std::process::Command;

fn call(tool: &str, input: serde_json::Value) -> String {
    serde_json::json!({ "tool": tool, "input": input }).to_string()
}

#[test]
fn an_acp_client_runs_a_turn_with_permissions_an_edit_through_its_buffers_and_a_cancel() {
    let sdk = std::env::var_os("TACK_TEST_ACP_SDK")
        .map(PathBuf::from)
        .expect("TACK_TEST_ACP_SDK is not set: run the tests with ./scripts/test, which installs the ACP SDK");
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::write(root.join("greet.py"), "def greet(name):\n    return 'Helo, ' + name\n").unwrap();
    let script = serde_json::json!([
        format!("Reading it.\n{}", call("Read", serde_json::json!({"file_path": "greet.py"}))),
        call("Bash", serde_json::json!({"command": "echo checked"})),
        call("Edit", serde_json::json!({"file_path": "greet.py", "old_string": "'Helo, '", "new_string": "'Hello, '"})),
        "Fixed the greeting.",
        call("Bash", serde_json::json!({"command": "sleep 30"})),
        "never reached",
    ]);
    std::fs::create_dir(root.join(".tack")).unwrap();
    std::fs::write(root.join(".tack/script.json"), script.to_string()).unwrap();
    std::fs::write(
        root.join(".tack/config.toml"),
        "permission_mode = \"auto_read\"\n[model]\nbackend = \"scripted\"\nscript = \".tack/script.json\"\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let output = Command::new("node")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs"))
        .env("TACK_BIN", env!("CARGO_BIN_EXE_tack"))
        .env("TACK_ACP_SDK", &sdk)
        .env("TACK_ACP_WORKSPACE", &root)
        .env("XDG_CONFIG_HOME", home.path())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the ACP scenario failed:\n{stderr}\n{stdout}");
    // The transcript is kept for the record (and the docs' example).
    let artifacts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/acp-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("transcript.jsonl"), stdout.as_bytes()).unwrap();
    assert!(!std::fs::read_to_string(root.join("greet.py")).unwrap().contains("Hello"));
}
