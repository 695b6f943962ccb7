//! Bash: a shell command in the workspace root, in its own process group.
//!
//! The whole group is killed on timeout, on cancel, and when the command
//! exits (so `server &` does not outlive the call). Output is capped, keeping
//! its head and tail; secrets are scrubbed from the environment.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use schemars::JsonSchema;
use serde::Deserialize;

use super::process::{Capped, GroupGuard, ProcessSettings, drain, unconfined_note};
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

/// How long output readers may take once the process group is gone.
const DRAIN: Duration = Duration::from_secs(2);

pub struct Bash {
    pub(crate) settings: Arc<ProcessSettings>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line, run by bash in the workspace root.
    command: String,
    /// Time limit in milliseconds (default 120000; the settings cap it, at 600000 unless changed).
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

    fn sandbox(&self) -> Option<String> {
        Some(self.settings.sandbox.describe())
    }

    async fn call(&self, input: BashInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let timeout = self.settings.timeout(input.timeout_ms);
        let root = ctx.workspace.root().to_path_buf();
        let (mut confined, mut registration) = (None, None);
        let mut command = CommandWrap::with_new("bash", |c| {
            c.arg("-c").arg(&input.command).current_dir(&root);
            c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
            self.settings.scrub(c);
            registration = crate::tools::reaper::register_in_child(c);
            confined = Some(self.settings.sandbox.confine(&root, c));
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child =
            GroupGuard::new(command.spawn().map_err(|e| ToolError::Invalid(format!("cannot start bash: {e}")))?);
        drop(registration);
        let note = confined.and_then(|confined| unconfined_note(&confined.confinement));
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
        let mut output = note.unwrap_or_default();
        output.push_str(&stdout);
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
        Ok(ToolOutput { output, summary, is_error, already_done: false })
    }
}

fn brief(command: &str) -> String {
    let line = command.lines().next().unwrap_or("");
    match line.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None if command.lines().count() > 1 => format!("{line} …"),
        None => line.to_string(),
    }
}
