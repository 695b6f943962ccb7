//! Bash: a shell command in the workspace root, in its own process group.
//!
//! The whole group is killed on timeout, on cancel, and when the command
//! exits (so `server &` does not outlive the call). Output is capped, keeping
//! its head and tail; secrets are scrubbed from the environment.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes of output kept from each stream: half from the start, half from the end.
const OUTPUT_LIMIT: usize = 30_000;
/// How long output readers may take once the process group is gone.
const DRAIN: Duration = Duration::from_secs(2);

pub struct Bash;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line, run by bash in the workspace root.
    command: String,
    /// Time limit in milliseconds (default 120000, at most 600000).
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
}

#[async_trait]
impl TypedTool for Bash {
    type Input = BashInput;
    const NAME: &'static str = "Bash";
    const DESCRIPTION: &'static str = "Run a shell command (bash) in the workspace root. Returns stdout, stderr and the exit code. Background processes are stopped when the command ends.";
    const KIND: ToolKind = ToolKind::Execute;
    const SET: ToolSet = ToolSet::Command;

    fn paths(_: &BashInput) -> Vec<String> {
        Vec::new()
    }

    fn command(input: &BashInput) -> Option<String> {
        Some(input.command.clone())
    }

    async fn call(&self, input: BashInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let timeout = Duration::from_millis(input.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).min(MAX_TIMEOUT_MS));
        let root = ctx.workspace.root().to_path_buf();
        let mut command = CommandWrap::with_new("bash", |c| {
            c.arg("-c").arg(&input.command).current_dir(&root);
            c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
            for (name, _) in std::env::vars_os() {
                if is_secret(&name.to_string_lossy()) {
                    c.env_remove(&name);
                }
            }
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = GroupGuard(command.spawn().map_err(|e| ToolError::Invalid(format!("cannot start bash: {e}")))?);
        let stdout = Arc::new(Mutex::new(Capped::default()));
        let stderr = Arc::new(Mutex::new(Capped::default()));
        let readers = [
            child.0.stdout().take().map(|pipe| tokio::spawn(drain(pipe, stdout.clone()))),
            child.0.stderr().take().map(|pipe| tokio::spawn(drain(pipe, stderr.clone()))),
        ];

        enum End {
            Exited(Option<i32>),
            TimedOut,
            Cancelled,
        }
        let end = tokio::select! {
            status = child.0.wait() => End::Exited(status.ok().and_then(|s| s.code())),
            _ = tokio::time::sleep(timeout) => End::TimedOut,
            _ = ctx.cancel.cancelled() => End::Cancelled,
        };
        // Whatever ended it, nothing of the group survives the call.
        let _ = child.0.start_kill();
        let _ = child.0.wait().await;
        for reader in readers.into_iter().flatten() {
            let _ = tokio::time::timeout(DRAIN, reader).await;
        }

        let stdout = stdout.lock().unwrap_or_else(|e| e.into_inner()).text();
        let stderr = stderr.lock().unwrap_or_else(|e| e.into_inner()).text();
        let mut output = stdout;
        if !stderr.is_empty() {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str("[stderr]\n");
            output.push_str(&stderr);
        }
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        let brief = brief(&input.command);
        let (status, summary, is_error) = match end {
            End::Exited(Some(0)) => ("exit code 0".to_string(), format!("`{brief}` exited with 0"), false),
            End::Exited(Some(code)) => (format!("exit code {code}"), format!("`{brief}` exited with {code}"), true),
            End::Exited(None) => ("killed by a signal".to_string(), format!("`{brief}` was killed by a signal"), true),
            End::TimedOut => (
                format!("timed out after {} ms; the command and its children were killed", timeout.as_millis()),
                format!("`{brief}` timed out"),
                true,
            ),
            End::Cancelled => (
                "cancelled by the user; the command and its children were killed".to_string(),
                format!("`{brief}` was cancelled"),
                true,
            ),
        };
        output.push_str(&status);
        Ok(ToolOutput { output, summary, is_error })
    }
}

/// Kills the whole process group when dropped: a turn cancelled mid-call
/// drops the tool's future, and `KillOnDrop` alone only reaches bash itself,
/// leaving its children running.
struct GroupGuard(Box<dyn ChildWrapper>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// Environment variables that look like credentials are not passed on.
fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "CREDENTIAL", "PRIVATE_KEY"]
        .iter()
        .any(|word| upper.contains(word))
        || upper.ends_with("_KEY")
        || upper.starts_with("AWS_")
}

fn brief(command: &str) -> String {
    let line = command.lines().next().unwrap_or("");
    match line.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None if command.lines().count() > 1 => format!("{line} …"),
        None => line.to_string(),
    }
}

async fn drain(mut pipe: impl AsyncRead + Unpin, into: Arc<Mutex<Capped>>) {
    let mut buffer = [0u8; 8192];
    while let Ok(read) = pipe.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        into.lock().unwrap_or_else(|e| e.into_inner()).push(&buffer[..read]);
    }
}

/// Output with its middle dropped once it passes [`OUTPUT_LIMIT`]: the start
/// says what ran, the end says how it finished.
#[derive(Default)]
struct Capped {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    elided: usize,
}

impl Capped {
    fn push(&mut self, mut bytes: &[u8]) {
        let half = OUTPUT_LIMIT / 2;
        if self.head.len() < half {
            let take = bytes.len().min(half - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend(bytes);
        while self.tail.len() > half {
            let over = self.tail.len() - half;
            self.tail.drain(..over);
            self.elided += over;
        }
    }

    fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.elided > 0 {
            text.push_str(&format!("\n[… {} bytes of output elided …]\n", self.elided));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut capped = Capped::default();
        for i in 0..10_000 {
            capped.push(format!("line {i}\n").as_bytes());
        }
        let text = capped.text();
        assert!(text.starts_with("line 0\nline 1\n"));
        assert!(text.ends_with("line 9999\n"));
        assert!(text.contains("bytes of output elided"));
        assert!(text.len() < OUTPUT_LIMIT + 100);
    }

    #[test]
    fn credentials_are_recognised_by_name() {
        for name in
            ["GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "SSH_PRIVATE_KEY", "stripe_key"]
        {
            assert!(is_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "KEYBOARD"] {
            assert!(!is_secret(name), "{name}");
        }
    }
}
