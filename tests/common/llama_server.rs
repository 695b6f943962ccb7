//! A real llama.cpp `llama-server` (built by scripts/build-llama-tool), started
//! on a free loopback port for one test and killed when dropped.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct LlamaServer {
    pub child: Child,
    /// The API root: `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// The server itself, for its own endpoints (`/slots`, `/health`).
    pub root: String,
    pub log: PathBuf,
    _log_dir: tempfile::TempDir,
}

/// The llama-server binary the test scripts built, if any.
pub fn binary() -> PathBuf {
    let path = std::env::var_os("TACK_TEST_LLAMA_SERVER")
        .expect("TACK_TEST_LLAMA_SERVER is not set: run the tests with ./scripts/test, which builds llama-server");
    PathBuf::from(path)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl LlamaServer {
    /// Starts the server on `model` with extra arguments and waits until it
    /// answers `/health`.
    pub fn start(model: &std::path::Path, extra: &[&str]) -> LlamaServer {
        let port = free_port();
        let log_dir = tempfile::tempdir().unwrap();
        let log = log_dir.path().join("server.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(binary())
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-t", "2", "--alias", "test-model"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("cannot start llama-server");
        let root = format!("http://127.0.0.1:{port}");
        let mut server = LlamaServer { child, base_url: format!("{root}/v1"), root, log, _log_dir: log_dir };
        server.wait_healthy();
        server
    }

    fn wait_healthy(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("llama-server exited ({status}) before it was healthy:\n{}", self.log_text());
            }
            if self.get("/health").is_some_and(|(status, _)| status == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("llama-server did not become healthy:\n{}", self.log_text());
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether any slot is generating, from `/slots`.
    pub fn busy(&self) -> bool {
        let (status, body) = self.get("/slots").expect("llama-server does not answer");
        assert_eq!(status, 200, "/slots: {body}");
        let slots: serde_json::Value = serde_json::from_str(&body).unwrap();
        slots.as_array().unwrap().iter().any(|slot| slot["is_processing"].as_bool() == Some(true))
    }

    /// A plain blocking GET (status, body), usable inside or outside an
    /// async runtime; `None` when the server does not answer.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        use std::io::{Read, Write};
        let address = self.root.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let status = response.split(' ').nth(1)?.parse().ok()?;
        let body = response.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default();
        Some((status, body))
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        self.kill();
    }
}
