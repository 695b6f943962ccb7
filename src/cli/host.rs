//! The terminal as a [`Host`]: events to stderr or stdout, approvals asked on the tty.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::Value;

use crate::agent::{Approval, ApprovalRequest, Host, Question};
use crate::protocol::{ApprovalDecision, Event, HookOutcome, SequencedEvent};
use crate::workspace::Workspace;
use crate::workspace::edits::{EditOutcome, FileChange, apply_to_disk};

/// Where events go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventOutput {
    /// Text and one line per tool call on stderr.
    Human,
    /// Every event as one JSON line on stdout.
    JsonStdout,
    /// Every event as one JSON line on stderr; stdout keeps the answer.
    JsonStderr,
}

pub struct TerminalHost {
    output: EventOutput,
    /// Whether a person can answer approval questions on this terminal.
    interactive: bool,
    /// Whether the last thing written to stderr ended a line, so tool lines
    /// never start in the middle of streamed text.
    at_line_start: Mutex<bool>,
}

impl TerminalHost {
    pub fn new(output: EventOutput) -> TerminalHost {
        let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        TerminalHost { output, interactive, at_line_start: Mutex::new(true) }
    }

    fn human(&self, event: &SequencedEvent) {
        // A sub-agent's calls show indented under its Agent call; its text
        // would interleave with other agents', and its answer shows as the
        // Agent call's result anyway.
        let depth = event.agent_path.len();
        let indent = "  ".repeat(depth);
        let line = match &event.event {
            Event::Text { .. } if depth > 0 => return,
            Event::Text { text } => {
                let mut at_line_start = self.at_line_start.lock().unwrap_or_else(|e| e.into_inner());
                // The newline that ends a tool call's line would print as a blank line.
                let text = if *at_line_start { text.trim_start_matches('\n') } else { text.as_str() };
                if text.is_empty() {
                    return;
                }
                eprint!("{text}");
                *at_line_start = text.ends_with('\n');
                return;
            }
            Event::ToolCall { name, input, .. } => format!("{indent}● {name}({})", brief(input)),
            Event::ToolResult { is_error: true, summary, .. } => format!("{indent}  ✗ {summary}"),
            Event::ToolResult { summary, .. } => format!("{indent}  ⎿ {summary}"),
            Event::Retry { attempt, delay_ms, error, .. } => {
                format!("  ↻ model error, retry {attempt} in {delay_ms} ms: {error}")
            }
            Event::Hook { event, command, outcome, message, .. } if *outcome != HookOutcome::Ok => {
                let outcome = serde_json::to_value(outcome).ok().and_then(|v| v.as_str().map(String::from));
                format!("{indent}⚑ {event} hook `{command}` {}: {message}", outcome.unwrap_or_default())
            }
            Event::FilesAttached { paths } => format!("{indent}+ {}", paths.join(", ")),
            Event::Error { message } => format!("tack: error: {message}"),
            Event::TurnFinished { .. } => String::new(),
            _ => return,
        };
        self.line(&line);
    }

    /// Writes `text` as a line of its own on stderr; an empty text only ends
    /// the current line.
    fn line(&self, text: &str) {
        let mut at_line_start = self.at_line_start.lock().unwrap_or_else(|e| e.into_inner());
        if !*at_line_start {
            eprintln!();
        }
        if !text.is_empty() {
            eprintln!("{text}");
        }
        *at_line_start = true;
    }
}

/// The input of a call in a few words: the argument that names what it works on.
fn brief(input: &Value) -> String {
    const TELLING: [&str; 6] = ["file_path", "path", "pattern", "command", "source", "query"];
    let object = input.as_object();
    let first = object
        .and_then(|o| TELLING.iter().find_map(|key| o.get(*key).and_then(Value::as_str)))
        .or_else(|| object.and_then(|o| o.values().find_map(Value::as_str)))
        .unwrap_or("");
    let first = first.lines().next().unwrap_or("");
    match first.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &first[..end]),
        None => first.to_string(),
    }
}

#[async_trait]
impl Host for TerminalHost {
    fn emit(&self, event: SequencedEvent) {
        match self.output {
            EventOutput::Human => self.human(&event),
            EventOutput::JsonStdout => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", serde_json::to_string(&event).unwrap_or_default());
                let _ = out.flush();
            }
            EventOutput::JsonStderr => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{}", serde_json::to_string(&event).unwrap_or_default());
            }
        }
    }

    async fn approve(&self, request: ApprovalRequest) -> Approval {
        if !self.interactive {
            let hint = format!(
                "{} needs approval and there is no terminal to ask; to allow it, rerun with --permission-mode auto_all \
                 or add to .tack/config.toml: [[permissions.rules]] action = \"allow\" tool = \"{}\"",
                request.name, request.name
            );
            eprintln!("tack: {hint}");
            return Approval { decision: ApprovalDecision::Deny, source: "no_terminal", note: Some(hint) };
        }
        self.line("");
        eprint!(
            "? Allow {}({})? {}. [y]es / [n]o / [a]lways for this session: ",
            request.name,
            brief(&request.input),
            request.reason
        );
        let answer = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|_| line)
        })
        .await;
        let decision = match answer {
            Ok(Ok(line)) => match line.trim().to_lowercase().as_str() {
                "y" | "yes" => ApprovalDecision::Allow,
                "a" | "always" => ApprovalDecision::AllowAlways,
                _ => ApprovalDecision::Deny,
            },
            _ => ApprovalDecision::Deny,
        };
        Approval::by_user(decision)
    }

    async fn ask_user(&self, question: Question) -> Result<String, String> {
        if !self.interactive {
            return Err("tack run has no terminal to ask on".into());
        }
        self.line("");
        let mut prompt = format!("? {}\n", question.question);
        for (number, choice) in question.choices.iter().enumerate() {
            prompt.push_str(&format!("  {}) {choice}\n", number + 1));
        }
        prompt.push_str(if question.choices.is_empty() { "> " } else { "> (a number, or your own answer) " });
        eprint!("{prompt}");
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|read| (read, line))
        })
        .await;
        let answer = match line {
            Ok(Ok((0, _))) | Err(_) | Ok(Err(_)) => return Err("the terminal closed before an answer".into()),
            Ok(Ok((_, line))) => line.trim().to_string(),
        };
        let picked = answer.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| question.choices.get(i));
        match picked {
            Some(choice) => Ok(choice.clone()),
            None if answer.is_empty() => Err("the user gave no answer".into()),
            None => Ok(answer),
        }
    }

    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        apply_to_disk(workspace, change)
    }
}
