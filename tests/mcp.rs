//! MCP servers through `tack`: a real server written with the official
//! Python SDK (tests/mcp/server.py) over stdio, listed by `tack mcp list`,
//! called through `tack run`, gated by permission rules, and killed in the
//! middle of a call.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn python_path() -> String {
    std::env::var("TACK_TEST_MCP_PYTHONPATH")
        .expect("TACK_TEST_MCP_PYTHONPATH is not set: run the tests with ./scripts/test, which installs the MCP SDK")
}

struct Ws {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Ws {
    /// A workspace whose .mcp.json starts the test server as `py`, plus `extra` servers.
    fn new(extra: Value) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/server.py");
        let mut servers = json!({
            "py": {
                "command": "python3",
                "args": [server],
                "env": {"PYTHONPATH": python_path(), "TACK_TEST_WORKSPACE": root},
            }
        });
        if let (Value::Object(all), Value::Object(more)) = (&mut servers, extra) {
            all.extend(more);
        }
        std::fs::write(root.join(".mcp.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
        Ws { dir, home: tempfile::tempdir().unwrap() }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn tack(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tack"));
        command
            .args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env_remove("TACK_LOG")
            .stdin(Stdio::null());
        command
    }

    /// `tack run` replaying `replies`; the tool results (error flag, output).
    fn run(&self, replies: &[String], mode: &str) -> (Vec<(bool, String)>, Output) {
        let script = self.home.path().join("script.json");
        std::fs::write(&script, json!(replies).to_string()).unwrap();
        let output = self
            .tack(&["run", "--backend", "scripted", "--script", script.to_str().unwrap()])
            .args(["--permission-mode", mode, "--json-events", "use the server"])
            .output()
            .unwrap();
        let results = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|e| e["kind"] == "tool_result")
            .map(|e| (e["isError"].as_bool().unwrap(), e["output"].as_str().unwrap().to_string()))
            .collect();
        (results, output)
    }
}

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

#[test]
fn mcp_list_shows_each_server_and_its_tools_and_what_did_not_start() {
    let ws = Ws::new(json!({"broken": {"command": "/definitely/not/a/server"}}));
    let output = ws.tack(&["mcp", "list"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("py: 4 tools\n"), "{stdout}");
    assert!(stdout.contains("  mcp__py__echo  Repeat the text.\n"), "{stdout}");
    assert!(stdout.contains("  mcp__py__add  Add two integers.\n"), "{stdout}");
    assert!(stdout.contains("broken: not started: cannot start `/definitely/not/a/server`"), "{stdout}");
    assert_eq!(output.status.code(), Some(1), "a server that did not start fails the listing");
}

#[test]
fn server_tools_are_called_with_their_schemas_and_results_summarised() {
    let ws = Ws::new(json!({"broken": {"command": "/definitely/not/a/server"}}));
    let replies = [
        [
            call("mcp__py__echo", json!({"text": "hi"})),
            call("mcp__py__add", json!({"a": 2, "b": 3})),
            call("mcp__py__pixel", json!({})),
            call("mcp__py__add", json!({"a": "two"})),
        ]
        .join("\n"),
        "done".to_string(),
    ];
    let (results, output) = ws.run(&replies, "auto_all");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("MCP server broken did not start"), "reported once: {stderr}");
    assert_eq!(results[0], (false, "echo: hi".to_string()));
    assert_eq!(results[1], (false, "5".to_string()));
    assert!(results[2].1.starts_with("[image: image/png, about "), "{:?}", results[2]);
    assert!(
        results[3].0 && results[3].1.starts_with("invalid input for mcp__py__add"),
        "the server's schema holds: {:?}",
        results[3]
    );
}

#[test]
fn project_servers_start_only_when_allowed_and_their_tools_ask_by_default() {
    let ws = Ws::new(json!({}));
    let echo = call("mcp__py__echo", json!({"text": "hi"}));
    // auto_read asks before running a project's command; with no terminal, no.
    let (results, output) = ws.run(&[echo.clone(), "done".into()], "auto_read");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("MCP server py did not start: not allowed to start"), "{stderr}");
    assert!(results[0].0 && results[0].1.starts_with("unknown tool `mcp__py__echo`"), "{:?}", results[0]);

    // A rule allows the server's command; its tools still ask, and a rule allows one by name.
    std::fs::create_dir_all(ws.path(".tack")).unwrap();
    let start = "[[permissions.rules]]\naction = \"allow\"\ntool = \"McpServer\"\ncommand = \"python3 *\"\n";
    std::fs::write(ws.path(".tack/config.toml"), start).unwrap();
    let (results, _) = ws.run(&[echo.clone(), "done".into()], "auto_read");
    assert!(results[0].0 && results[0].1.starts_with("permission denied"), "{:?}", results[0]);
    let allow = format!("{start}[[permissions.rules]]\naction = \"allow\"\ntool = \"mcp__py__echo\"\n");
    std::fs::write(ws.path(".tack/config.toml"), allow).unwrap();
    let (results, _) = ws.run(&[echo.clone(), "done".into()], "auto_read");
    assert_eq!(results[0], (false, "echo: hi".to_string()));

    // A deny rule holds even in auto_all.
    std::fs::write(
        ws.path(".tack/config.toml"),
        "[[permissions.rules]]\naction = \"deny\"\ntool = \"mcp__py__echo\"\n",
    )
    .unwrap();
    let (results, _) = ws.run(&[echo.clone(), "done".into()], "auto_all");
    assert!(results[0].0 && results[0].1.starts_with("permission denied: denied by rule"), "{:?}", results[0]);

    // With the mcp tool set off, no server starts at all.
    std::fs::write(ws.path(".tack/config.toml"), "[tools]\ndisabled = [\"mcp\"]\n").unwrap();
    let (results, output) = ws.run(&[echo, "done".into()], "auto_all");
    assert!(results[0].1.starts_with("unknown tool"), "{:?}", results[0]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("MCP"), "nothing about servers");
}

#[test]
fn a_server_killed_mid_call_fails_that_call_and_drops_out_and_the_turn_goes_on() {
    let ws = Ws::new(json!({}));
    let pid_file = ws.path("server.pid");
    let killer = std::thread::spawn(move || {
        for _ in 0..300 {
            if let Ok(pid) = std::fs::read_to_string(&pid_file) {
                if !pid.is_empty() {
                    let _ = Command::new("kill").args(["-9", pid.trim()]).status();
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    });
    let replies = [
        call("mcp__py__slow", json!({"seconds": 60})),
        call("mcp__py__echo", json!({"text": "still there?"})),
        "The server is gone.".to_string(),
    ];
    let (results, output) = ws.run(&replies, "auto_all");
    assert!(killer.join().unwrap(), "the slow call never started");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(results[0].0, "{:?}", results[0]);
    assert!(results[0].1.contains("the MCP server py stopped during the call"), "{:?}", results[0]);
    assert!(results[1].0 && results[1].1.starts_with("the MCP server py has stopped"), "{:?}", results[1]);
    let events: Vec<Value> =
        String::from_utf8_lossy(&output.stdout).lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    assert_eq!(events.last().unwrap()["text"], "The server is gone.");
}
