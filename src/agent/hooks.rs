//! Hooks: what runs around the agent's steps besides the model and the tools.
//!
//! Two kinds share the turn's pipeline (permission -> `before` -> execute ->
//! `after` for calls):
//! - [`ToolHook`]s, in-process, for embedders and tests;
//! - command hooks, configured by the user (`[[hooks.PreToolUse]]` and the
//!   other [`HookEvent`]s in config): programs run through `sh -c` in the
//!   workspace with the event as JSON on stdin, under the contract of Claude
//!   Code's hooks so that existing hook scripts work. Exit 0 proceeds (JSON
//!   on stdout may decide, rewrite a call's input or add context); exit 2
//!   blocks, its stderr being the reason; anything else is reported and does
//!   not block. A hook that passes its timeout, or whose turn is cancelled,
//!   is killed with its whole process group.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::EventSink;
pub use crate::config::{HookCommand, HookSettings};
use crate::protocol::{Event, HookOutcome};
use crate::tools::ToolOutput;
use crate::tools::process::{Capped, GroupGuard, drain};

/// A call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    pub tool_call_id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
}

pub trait ToolHook: Send + Sync {
    /// Runs after the permission check. `Err(reason)` blocks the call; the
    /// reason becomes its error result.
    fn before(&self, _call: &HookCall<'_>) -> Result<(), String> {
        Ok(())
    }

    /// Runs after the tool, before the result is recorded; may rewrite it.
    fn after(&self, _call: &HookCall<'_>, _output: &mut ToolOutput) {}
}

pub use crate::config::HookEvent;

/// Whether exit code 2 stops what the event announces.
fn can_block(event: HookEvent) -> bool {
    !matches!(event, HookEvent::PreCompact | HookEvent::SessionStart)
}

/// What the hooks of one event decided together.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct HookDecision {
    /// Why the step is blocked, for the model (or the user, for a prompt).
    pub block: Option<String>,
    /// A PreToolUse verdict on the call's permission.
    pub permission: Option<HookPermission>,
    /// A PreToolUse hook's replacement for the call's input.
    pub updated_input: Option<Value>,
    /// Text for the model: added to the prompt, the session, or a result.
    pub context: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookPermission {
    /// Run without asking (deny rules and sensitive paths still hold).
    Allow,
    /// Ask the user even where the mode or a rule would not.
    Ask,
}

/// Longest a hook may run unless its config says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a finished hook's pipes may take to drain.
const DRAIN: Duration = Duration::from_secs(2);

/// The command hooks of one workspace.
#[derive(Debug, Clone)]
pub struct CommandHooks {
    settings: HookSettings,
    root: PathBuf,
}

impl CommandHooks {
    pub fn new(settings: HookSettings, root: PathBuf) -> CommandHooks {
        CommandHooks { settings, root }
    }

    pub fn is_empty(&self) -> bool {
        self.settings.is_empty()
    }

    /// Runs the hooks of `event` whose matcher admits `tool` (every hook of
    /// an event without tools), in the order configured. `payload` holds the
    /// event's own fields; the common ones are added here. A block ends the
    /// run; a PreToolUse input rewrite is what the next hook sees.
    pub(crate) async fn run(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        mut payload: Value,
        common: &HookContext<'_>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> HookDecision {
        let mut decision = HookDecision::default();
        for hook in self.settings.of(event).iter().filter(|hook| hook.matches(tool)) {
            if let Value::Object(map) = &mut payload {
                map.insert("session_id".into(), json!(common.session_id));
                map.insert("transcript_path".into(), json!(common.transcript_path));
                map.insert("cwd".into(), json!(self.root));
                map.insert("permission_mode".into(), json!(common.permission_mode));
                map.insert("hook_event_name".into(), json!(event.name()));
            }
            let run = self.run_one(hook, &payload, cancel).await;
            let message = match &run.end {
                End::Exited(0) => read_output(event, &run.stdout, &mut decision),
                End::Exited(2) if can_block(event) => {
                    let reason = run.stderr.trim();
                    let reason = if reason.is_empty() {
                        format!("`{}` exited with 2", hook.command)
                    } else {
                        reason.to_string()
                    };
                    decision.block = Some(reason.clone());
                    reason
                }
                End::Exited(code) => format!("exited with {code}: {}", run.stderr.trim()),
                End::Signalled => format!("killed by a signal: {}", run.stderr.trim()),
                End::TimedOut(after) => format!("timed out after {} ms; it was killed", after.as_millis()),
                End::Cancelled => "cancelled with the turn; it was killed".to_string(),
                End::Failed(error) => format!("could not start: {error}"),
            };
            let outcome = match &run.end {
                _ if decision.block.is_some() => HookOutcome::Blocked,
                End::Exited(0) => HookOutcome::Ok,
                End::TimedOut(_) => HookOutcome::TimedOut,
                End::Cancelled => HookOutcome::Cancelled,
                _ => HookOutcome::Error,
            };
            if outcome == HookOutcome::Error || outcome == HookOutcome::TimedOut {
                tracing::warn!(event = event.name(), command = hook.command, "hook failed: {message}");
            }
            events.emit(Event::Hook {
                event: event.name().to_string(),
                command: hook.command.clone(),
                outcome,
                exit_code: match run.end {
                    End::Exited(code) => Some(code),
                    _ => None,
                },
                duration_ms: run.duration.as_millis() as u64,
                message,
            });
            if let (Some(input), Value::Object(map)) = (&decision.updated_input, &mut payload) {
                map.insert("tool_input".into(), input.clone());
            }
            if decision.block.is_some() || cancel.is_cancelled() {
                break;
            }
        }
        decision
    }

    async fn run_one(&self, hook: &HookCommand, payload: &Value, cancel: &CancellationToken) -> Run {
        let started = Instant::now();
        let timeout = hook.timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_TIMEOUT);
        let finish = |end, stdout, stderr| Run { end, stdout, stderr, duration: started.elapsed() };
        let mut registration = None;
        let mut command = CommandWrap::with_new("sh", |c| {
            c.arg("-c").arg(&hook.command).current_dir(&self.root);
            c.env("TACK_PROJECT_DIR", &self.root).env("CLAUDE_PROJECT_DIR", &self.root);
            c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            registration = crate::tools::reaper::register_in_child(c);
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let spawned = command.spawn();
        drop(registration);
        let mut child = match spawned {
            Ok(child) => GroupGuard::new(child),
            Err(error) => return finish(End::Failed(error.to_string()), String::new(), String::new()),
        };
        let stdout = Arc::new(Mutex::new(Capped::default()));
        let stderr = Arc::new(Mutex::new(Capped::default()));
        let readers = [
            child.0.stdout().take().map(|pipe| tokio::spawn(drain(pipe, stdout.clone()))),
            child.0.stderr().take().map(|pipe| tokio::spawn(drain(pipe, stderr.clone()))),
        ];
        // A hook that never reads its stdin must not block the write, and one
        // that exits early closes the pipe: neither is an error.
        if let Some(mut stdin) = child.0.stdin().take() {
            let input = payload.to_string();
            tokio::spawn(async move {
                let _ = stdin.write_all(input.as_bytes()).await;
                let _ = stdin.shutdown().await;
            });
        }
        let end = tokio::select! {
            status = child.0.wait() => match status.ok().and_then(|s| s.code()) {
                Some(code) => End::Exited(code),
                None => End::Signalled,
            },
            _ = tokio::time::sleep(timeout) => End::TimedOut(timeout),
            _ = cancel.cancelled() => End::Cancelled,
        };
        // Whatever ended it, nothing of the group outlives the hook.
        let _ = child.0.start_kill();
        let _ = child.0.wait().await;
        for reader in readers.into_iter().flatten() {
            let _ = tokio::time::timeout(DRAIN, reader).await;
        }
        let text = |capped: &Arc<Mutex<Capped>>| capped.lock().unwrap_or_else(|e| e.into_inner()).text();
        finish(end, text(&stdout), text(&stderr))
    }
}

impl super::Conversation {
    /// Runs the command hooks of `event`, if any are configured.
    pub(super) async fn run_hooks(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        payload: Value,
        cancel: &CancellationToken,
    ) -> HookDecision {
        let Some(hooks) = &self.command_hooks else { return HookDecision::default() };
        let context = HookContext {
            session_id: self.session_id().unwrap_or(""),
            transcript_path: self.session.as_ref().map(|session| session.path().display().to_string()),
            permission_mode: self.policy.mode.as_str(),
        };
        hooks.run(event, tool, payload, &context, &self.events, cancel).await
    }
}

/// Fields every hook input carries, from the conversation.
pub struct HookContext<'a> {
    pub session_id: &'a str,
    pub transcript_path: Option<String>,
    pub permission_mode: &'a str,
}

struct Run {
    end: End,
    stdout: String,
    stderr: String,
    duration: Duration,
}

enum End {
    Exited(i32),
    Signalled,
    TimedOut(Duration),
    Cancelled,
    Failed(String),
}

/// Reads what a hook that exited 0 printed into `decision`, and returns what
/// the `hook` event reports. JSON output follows Claude Code's fields; plain
/// text is context for the events that take it.
fn read_output(event: HookEvent, stdout: &str, decision: &mut HookDecision) -> String {
    let text = stdout.trim();
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(text) else {
        if !text.is_empty() && matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart) {
            decision.context.push(text.to_string());
        }
        return String::new();
    };
    let specific = output.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |name: &str| specific.and_then(|s| s.get(name)).or_else(|| output.get(name));
    let reason = field("permissionDecisionReason")
        .or_else(|| output.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(context) = field("additionalContext").and_then(Value::as_str) {
        decision.context.push(context.to_string());
    }
    let verdict = field("permissionDecision").or_else(|| output.get("decision")).and_then(Value::as_str);
    match verdict {
        Some("block" | "deny") if can_block(event) => {
            decision.block = Some(if reason.is_empty() { "blocked by a hook".to_string() } else { reason.clone() });
        }
        // Of several hooks' verdicts, the strictest holds: ask over allow.
        Some("allow" | "approve") if event == HookEvent::PreToolUse => {
            decision.permission.get_or_insert(HookPermission::Allow);
        }
        Some("ask") if event == HookEvent::PreToolUse => decision.permission = Some(HookPermission::Ask),
        _ => {}
    }
    if event == HookEvent::PreToolUse {
        if let Some(input) = field("updatedInput").filter(|input| input.is_object()) {
            decision.updated_input = Some(input.clone());
        }
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_decides_rewrites_and_adds_context() {
        let mut decision = HookDecision::default();
        let out = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "no edits on Fridays"}}"#;
        assert_eq!(read_output(HookEvent::PreToolUse, out, &mut decision), "no edits on Fridays");
        assert_eq!(decision.block.as_deref(), Some("no edits on Fridays"));

        let mut decision = HookDecision::default();
        let out = r#"{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}"#;
        read_output(HookEvent::PreToolUse, out, &mut decision);
        assert_eq!(decision.permission, Some(HookPermission::Allow));
        assert_eq!(decision.updated_input, Some(json!({"command": "ls -la"})));

        let mut decision = HookDecision::default();
        read_output(HookEvent::UserPromptSubmit, "The build is broken on main.\n", &mut decision);
        assert_eq!(decision.context, ["The build is broken on main."]);
        read_output(HookEvent::PostToolUse, "plain text is only logged", &mut decision);
        assert_eq!(decision.context.len(), 1);

        let mut decision = HookDecision::default();
        read_output(HookEvent::PreCompact, r#"{"decision": "block", "reason": "no"}"#, &mut decision);
        assert_eq!(decision.block, None, "compaction cannot be blocked");
        read_output(HookEvent::Stop, r#"{"decision": "block", "reason": "run the tests first"}"#, &mut decision);
        assert_eq!(decision.block.as_deref(), Some("run the tests first"));
    }
}
