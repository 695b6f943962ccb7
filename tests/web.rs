//! WebFetch and WebSearch through `tack run`, against a real HTTP server
//! this test starts on the loopback interface: pages become markdown,
//! redirects stay on their host, big pages are cut, the local network is
//! refused unless configured, and a SearXNG-shaped answer becomes results.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// A small HTTP/1.1 server on 127.0.0.1, one thread per connection.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream, port));
        }
    });
    port
}

fn answer(mut stream: TcpStream, port: u16) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    let target = request_line.split(' ').nth(1).unwrap_or("/").to_string();
    let (status, headers, body): (&str, Vec<String>, Vec<u8>) = match target.split('?').next().unwrap() {
        "/docs" => (
            "200 OK",
            vec!["Content-Type: text/html; charset=utf-8".into()],
            b"<!doctype html><html><head><script>track()</script></head><body><h1>Install</h1>\
              <p>Run <code>make install</code>, then <a href=\"/next\">go on</a>.</p></body></html>"
                .to_vec(),
        ),
        "/moved" => ("302 Found", vec!["Location: /docs".into()], Vec::new()),
        "/away" => ("301 Moved Permanently", vec![format!("Location: http://localhost:{port}/docs")], Vec::new()),
        "/big" => ("200 OK", vec!["Content-Type: text/plain".into()], vec![b'x'; 3 * 1024 * 1024]),
        "/binary" => ("200 OK", vec!["Content-Type: application/octet-stream".into()], vec![0, 1, 2, 3]),
        "/res/v1/web/search" => {
            let results = json!({"web": {"results": [
                {"title": "Brave result", "url": "https://example.org/brave", "description": "Found <strong>it</strong>."},
            ]}});
            ("200 OK", vec!["Content-Type: application/json".into()], results.to_string().into_bytes())
        }
        "/search" => {
            let results = json!({"query": "tack", "results": [
                {"title": "tack docs", "url": "https://example.org/tack", "content": "The <strong>tack</strong> agent."},
                {"title": "no url"},
                {"title": "tack source", "url": "https://example.org/src", "content": ""},
            ]});
            ("200 OK", vec!["Content-Type: application/json".into()], results.to_string().into_bytes())
        }
        _ => ("404 Not Found", vec!["Content-Type: text/plain".into()], b"no such page".to_vec()),
    };
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for header in headers {
        head.push_str(&format!("{header}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

/// `tack run` in a fresh workspace whose config is `config`, replaying `calls`
/// as one reply; returns the tool results (error flag, output) and the run.
fn run(config: &str, calls: &[String], mode: &str) -> (Vec<(bool, String)>, Output) {
    run_in(config, calls, mode, None)
}

fn run_with_env(config: &str, calls: &[String], env: (&str, &str)) -> (Vec<(bool, String)>, Output) {
    run_in(config, calls, "auto_all", Some(env))
}

fn run_in(config: &str, calls: &[String], mode: &str, env: Option<(&str, &str)>) -> (Vec<(bool, String)>, Output) {
    let workspace = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join(".tack")).unwrap();
    std::fs::write(workspace.path().join(".tack/config.toml"), config).unwrap();
    let script = home.path().join("script.json");
    std::fs::write(&script, json!([calls.join("\n"), "done"]).to_string()).unwrap();
    let mut command = tack(workspace.path(), home.path());
    if let Some((key, value)) = env {
        command.env(key, value);
    }
    let output = command
        .args(["run", "--backend", "scripted", "--script", script.to_str().unwrap()])
        .args(["--permission-mode", mode, "--json-events", "read the docs"])
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

fn tack(workspace: &Path, home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tack"));
    command
        .current_dir(workspace)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("TACK_LOG")
        .stdin(Stdio::null());
    command
}

#[test]
fn web_fetch_turns_pages_into_markdown_and_keeps_to_the_approved_host() {
    let port = serve();
    let base = format!("http://127.0.0.1:{port}");
    let config = "[tools.web]\nallow_private_hosts = true\nmax_page_bytes = 1000\n";
    let calls: Vec<String> = ["/docs", "/moved", "/away", "/big", "/binary", "/gone"]
        .iter()
        .map(|path| call("WebFetch", json!({ "url": format!("{base}{path}") })))
        .chain([call("WebFetch", json!({"url": "file:///etc/passwd"}))])
        .collect();
    let (results, output) = run(config, &calls, "auto_all");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let docs = format!("# {base}/docs\n\n# Install\n\nRun `make install`, then [go on](/next).\n");
    assert_eq!(results[0], (false, docs.clone()));
    assert_eq!(results[1], (false, docs), "a redirect on the same host is followed");
    assert_eq!(
        results[2],
        (
            false,
            format!(
                "{base}/away redirects (301 Moved Permanently) to http://localhost:{port}/docs, on another host; \
                 not followed. Fetch that URL to follow it."
            )
        )
    );
    assert!(results[3].1.starts_with(&format!("# {base}/big\n(only the first 1000 bytes of the page were read)\n\n")));
    assert_eq!(results[3].1.matches('x').count(), 1000);
    assert_eq!(
        results[4],
        (true, format!("{base}/binary is application/octet-stream, not a page that can be read as text"))
    );
    assert_eq!(results[5], (true, format!("{base}/gone answered 404 Not Found")));
    assert_eq!(results[6], (true, "only http and https pages can be fetched, not file:".to_string()));
}

#[test]
fn the_local_network_is_refused_unless_configured_and_hosts_are_asked_about() {
    let port = serve();
    let fetch = call("WebFetch", json!({ "url": format!("http://127.0.0.1:{port}/docs") }));
    let (results, _) = run("", std::slice::from_ref(&fetch), "auto_all");
    assert!(results[0].0);
    assert!(
        results[0].1.starts_with("127.0.0.1 is at 127.0.0.1, a loopback, private or link-local address"),
        "{:?}",
        results[0]
    );

    // Outside auto_all each host is asked about; with no terminal that is a denial.
    let (results, output) = run("[tools.web]\nallow_private_hosts = true\n", &[fetch], "auto_read");
    assert!(results[0].0);
    assert!(results[0].1.starts_with("permission denied"), "{:?}", results[0]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("WebFetch needs approval"));

    // A rule allows a host.
    let allowed = "[tools.web]\nallow_private_hosts = true\n[[permissions.rules]]\naction = \"allow\"\ntool = \"WebFetch\"\ncommand = \"127.0.0.1\"\n";
    let fetch = call("WebFetch", json!({ "url": format!("http://127.0.0.1:{port}/docs") }));
    let (results, _) = run(allowed, &[fetch], "auto_read");
    assert!(!results[0].0, "{:?}", results[0]);
}

#[test]
fn web_search_is_offered_with_a_provider_and_lists_its_results() {
    let port = serve();
    let search = call("WebSearch", json!({"query": "tack agent"}));
    let (results, _) = run("", std::slice::from_ref(&search), "auto_all");
    assert!(results[0].0);
    assert!(results[0].1.starts_with("unknown tool `WebSearch`"), "no provider, no tool: {:?}", results[0]);

    let config = format!("[tools.web.search]\nprovider = \"searxng\"\nurl = \"http://127.0.0.1:{port}\"\n");
    let (results, _) = run(&config, std::slice::from_ref(&search), "auto_all");
    assert_eq!(
        results[0],
        (
            false,
            "1. tack docs\n   https://example.org/tack\n   The tack agent.\n2. tack source\n   https://example.org/src\n"
                .to_string()
        )
    );

    // Brave's answer shape, its key from the environment the config names.
    let config = format!(
        "[tools.web.search]\nprovider = \"brave\"\nurl = \"http://127.0.0.1:{port}\"\napi_key_env = \"TACK_TEST_BRAVE_KEY\"\n"
    );
    let (results, _) = run(&config, std::slice::from_ref(&search), "auto_all");
    assert_eq!(
        results[0],
        (true, "Brave Search needs an API key in the environment variable TACK_TEST_BRAVE_KEY".to_string())
    );
    let (results, _) = run_with_env(&config, &[search], ("TACK_TEST_BRAVE_KEY", "secret"));
    assert_eq!(results[0], (false, "1. Brave result\n   https://example.org/brave\n   Found it.\n".to_string()));
}
