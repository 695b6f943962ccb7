//! Shared scenario harness: a temp workspace, a scripted model and a host
//! that records every event and answers approvals from a list.
#![allow(dead_code)]

pub mod llama_server;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tack::agent::TurnOutcome;
use tack::agent::{Approval, ApprovalRequest, Conversation, ConversationParts, Host, LoopSettings, ToolHook};
use tack::model::ModelBackend;
use tack::model::scripted::{ScriptEntry, ScriptedBackend};
use tack::permissions::{Policy, Rule};
use tack::protocol::{ApprovalDecision, Event, PermissionMode, SequencedEvent};
use tack::tools::{Tool, ToolRegistry};
use tack::workspace::edits::{EditOutcome, FileChange, apply_to_disk};
use tack::workspace::{BufferOverlay, Workspace};
use tokio_util::sync::CancellationToken;

/// What the host does with proposed edits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Edits {
    Apply,
    Reject,
}

pub struct RecordingHost {
    pub events: Mutex<Vec<SequencedEvent>>,
    answers: Mutex<VecDeque<ApprovalDecision>>,
    pub asked: Mutex<Vec<ApprovalRequest>>,
    edits: Edits,
    /// Cancelled when an approval is asked and no answer is scripted: lets a
    /// test cancel a turn that waits on the user.
    pub on_unanswered: CancellationToken,
}

impl RecordingHost {
    pub fn new(answers: Vec<ApprovalDecision>, edits: Edits) -> Self {
        RecordingHost {
            events: Mutex::new(Vec::new()),
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
            edits,
            on_unanswered: CancellationToken::new(),
        }
    }
}

#[async_trait]
impl Host for RecordingHost {
    fn emit(&self, event: SequencedEvent) {
        self.events.lock().unwrap().push(event);
    }

    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.asked.lock().unwrap().push(request);
        let answer = self.answers.lock().unwrap().pop_front();
        match answer {
            Some(decision) => Approval::by_user(decision),
            None => {
                self.on_unanswered.cancel();
                // Like a user who walked away: never answers.
                std::future::pending().await
            }
        }
    }

    async fn apply_edit(&self, workspace: &Workspace, change: &FileChange) -> EditOutcome {
        match self.edits {
            Edits::Apply => apply_to_disk(workspace, change),
            Edits::Reject => EditOutcome::Rejected { reason: "the user rejected the diff".into() },
        }
    }
}

pub struct Scenario {
    pub dir: tempfile::TempDir,
    mode: PermissionMode,
    rules: Vec<Rule>,
    answers: Vec<ApprovalDecision>,
    edits: Edits,
    max_iterations: u32,
    context_window: Option<usize>,
    max_agent_depth: u32,
    tools: Option<Vec<Arc<dyn Tool>>>,
    hooks: Vec<Arc<dyn ToolHook>>,
    command_hooks: tack::config::HookSettings,
    skills: tack::tools::skill::SkillCatalog,
    overlay: Option<Arc<dyn BufferOverlay>>,
    /// Offer the tools the front ends offer this model (`tools.profile = auto`).
    sized_for_model: bool,
    tool_settings: tack::config::ToolSettings,
    pipeline: tack::config::PipelineSettings,
    guess_names: bool,
    tests_first: bool,
    questions_run: bool,
    checks: tack::config::CheckSettings,
}

pub struct Run {
    pub dir: tempfile::TempDir,
    pub events: Vec<SequencedEvent>,
    pub outcome: TurnOutcome,
    pub asked: Vec<ApprovalRequest>,
    pub backend: Arc<ScriptedBackend>,
    pub history_len: usize,
}

impl Scenario {
    pub fn new() -> Scenario {
        Scenario {
            dir: tempfile::tempdir().unwrap(),
            mode: PermissionMode::AutoAll,
            rules: Vec::new(),
            answers: Vec::new(),
            edits: Edits::Apply,
            max_iterations: 40,
            context_window: None,
            max_agent_depth: 3,
            tools: None,
            hooks: Vec::new(),
            command_hooks: Default::default(),
            skills: Default::default(),
            overlay: None,
            sized_for_model: false,
            tool_settings: Default::default(),
            pipeline: Default::default(),
            guess_names: false,
            tests_first: false,
            questions_run: false,
            checks: Default::default(),
        }
    }

    /// The project's test command, as `[checks] test` configures it.
    pub fn test_command(mut self, command: &str) -> Scenario {
        self.checks.test = Some(command.to_string());
        self
    }

    pub fn pipeline(mut self, settings: tack::config::PipelineSettings) -> Scenario {
        self.pipeline = settings;
        self
    }

    /// The pipeline's first model call is its guess at the code's names
    /// (left out of other scenarios' scripts).
    pub fn guessing_names(mut self) -> Scenario {
        self.guess_names = true;
        self
    }

    /// A small workspace's change request whose project's tests fail goes
    /// through the pipeline's check first (left out of other scenarios'
    /// scripts, written for the whole-file way).
    pub fn tests_first(mut self) -> Scenario {
        self.tests_first = true;
        self
    }

    /// A small workspace's question is first run on the project by a
    /// script the model writes (left out of other scenarios' scripts,
    /// written for the whole-file way).
    pub fn questions_run(mut self) -> Scenario {
        self.questions_run = true;
        self
    }

    /// Offers the model the tool list the front ends would (compact for a
    /// small model), instead of every tool.
    pub fn sized_for_model(mut self) -> Scenario {
        self.sized_for_model = true;
        self
    }

    pub fn file(self, path: &str, contents: &str) -> Scenario {
        let full = self.dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, contents).unwrap();
        self
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn mode(mut self, mode: PermissionMode) -> Scenario {
        self.mode = mode;
        self
    }

    pub fn rules(mut self, rules: Vec<Rule>) -> Scenario {
        self.rules = rules;
        self
    }

    pub fn answers(mut self, answers: &[ApprovalDecision]) -> Scenario {
        self.answers = answers.to_vec();
        self
    }

    pub fn edits(mut self, edits: Edits) -> Scenario {
        self.edits = edits;
        self
    }

    pub fn max_iterations(mut self, max: u32) -> Scenario {
        self.max_iterations = max;
        self
    }

    pub fn max_agent_depth(mut self, depth: u32) -> Scenario {
        self.max_agent_depth = depth;
        self
    }

    pub fn context_window(mut self, tokens: usize) -> Scenario {
        self.context_window = Some(tokens);
        self
    }

    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Scenario {
        self.tools = Some(tools);
        self
    }

    /// The built-in tools with these settings (limits, sandbox).
    pub fn tool_settings(mut self, settings: tack::config::ToolSettings) -> Scenario {
        self.tool_settings = settings;
        self
    }

    pub fn hook(mut self, hook: Arc<dyn ToolHook>) -> Scenario {
        self.hooks.push(hook);
        self
    }

    /// Command hooks, from a project config file holding `config` (its
    /// `[[hooks.PreToolUse]]` and other tables), loaded as tack loads it.
    pub fn command_hooks(mut self, config: &str) -> Scenario {
        let file = tack::config::workspace_config_path(self.dir.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, config).unwrap();
        self.command_hooks = tack::config::Settings::load(None, self.dir.path(), &[]).expect("config").hooks;
        self
    }

    /// Skills found in the workspace's skill folders, as the front ends find them.
    pub fn discover_skills(mut self) -> Scenario {
        self.skills = tack::tools::skill::SkillCatalog::discover_in(&[self.dir.path().join(".tack/skills")]);
        self
    }

    pub fn overlay(mut self, overlay: Arc<dyn BufferOverlay>) -> Scenario {
        self.overlay = Some(overlay);
        self
    }

    /// Runs one turn with the model replaying `script` (plain texts).
    pub async fn run(self, script: &[&str], prompt: &str) -> Run {
        let entries = script.iter().map(|t| ScriptEntry::Text(t.to_string())).collect();
        self.run_entries(entries, prompt, CancellationToken::new()).await
    }

    pub async fn run_entries(self, script: Vec<ScriptEntry>, prompt: &str, cancel: CancellationToken) -> Run {
        self.run_backend(ScriptedBackend::new(script), prompt, cancel).await
    }

    /// Runs one turn with a script per agent path (`main`, `call_1`, `call_1/call_2`).
    pub async fn run_agents(self, scripts: &[(&str, &[&str])], prompt: &str) -> Run {
        let scripts = scripts
            .iter()
            .map(|(key, texts)| (key.to_string(), texts.iter().map(|t| ScriptEntry::Text(t.to_string())).collect()))
            .collect();
        self.run_backend(ScriptedBackend::per_agent(scripts), prompt, CancellationToken::new()).await
    }

    pub async fn run_backend(self, backend: ScriptedBackend, prompt: &str, cancel: CancellationToken) -> Run {
        let backend = Arc::new(backend);
        let model: Arc<dyn ModelBackend> = backend.clone();
        let (dir, events, outcome, asked, history_len) = self.drive(model, prompt, cancel).await;
        Run { dir, events, outcome, asked, backend, history_len }
    }

    /// Runs one turn against any backend (a model server, a real model).
    pub async fn run_model(self, model: Arc<dyn ModelBackend>, prompt: &str, cancel: CancellationToken) -> ModelRun {
        let (dir, events, outcome, _, _) = self.drive(model, prompt, cancel).await;
        ModelRun { dir, events, outcome }
    }

    async fn drive(
        self,
        backend: Arc<dyn ModelBackend>,
        prompt: &str,
        cancel: CancellationToken,
    ) -> (tempfile::TempDir, Vec<SequencedEvent>, TurnOutcome, Vec<ApprovalRequest>, usize) {
        let host = Arc::new(RecordingHost::new(self.answers.clone(), self.edits));
        let unanswered = host.on_unanswered.clone();
        let cancel_on_wait = cancel.clone();
        tokio::spawn(async move {
            unanswered.cancelled().await;
            cancel_on_wait.cancel();
        });
        let mut workspace = Workspace::open(self.dir.path()).unwrap();
        if let Some(overlay) = self.overlay.clone() {
            workspace = workspace.with_overlay(overlay);
        }
        let tools = match self.tools {
            Some(tools) => ToolRegistry::new(tools),
            None if self.sized_for_model => {
                ToolRegistry::for_model(&self.tool_settings, backend.context_window(), backend.parameters())
            }
            None => ToolRegistry::builtin(&self.tool_settings),
        };
        let tools = tools.with_skills(self.skills.clone(), &Default::default());
        let mut conversation = Conversation::new(ConversationParts {
            backend: backend.clone(),
            tools: Arc::new(tools),
            workspace: Arc::new(workspace),
            host: host.clone(),
            policy: Policy::new(self.mode, &self.rules).unwrap(),
            settings: LoopSettings {
                max_iterations: self.max_iterations,
                retry_base_delay: Duration::from_millis(1),
                context_window: self.context_window,
                max_agent_depth: self.max_agent_depth,
                hooks: self.command_hooks.clone(),
                // A scenario's script holds the model's guess at the
                // code's names, and the steps of a request's example
                // before the whole-file way, only where it asks for them.
                pipeline: tack::config::PipelineSettings {
                    guess_names: self.guess_names,
                    tests_first: self.tests_first,
                    questions_run: self.questions_run,
                    ..self.pipeline.clone()
                },
                checks: self.checks.clone(),
                ..LoopSettings::default()
            },
            session: None,
            history: Vec::new(),
            tasks: Vec::new(),
        });
        for hook in self.hooks {
            conversation.add_hook(hook);
        }
        let outcome = conversation.run_turn(prompt, cancel).await;
        let events = host.events.lock().unwrap().clone();
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>(), "seq must be gapless from 1");
        let asked = host.asked.lock().unwrap().clone();
        (self.dir, events, outcome, asked, conversation.history().len())
    }
}

/// A turn against a backend other than the scripted one.
pub struct ModelRun {
    pub dir: tempfile::TempDir,
    pub events: Vec<SequencedEvent>,
    pub outcome: TurnOutcome,
}

impl ModelRun {
    /// The events of one kind, by their protocol name (`retry`, `usage`, ...).
    pub fn of_kind(&self, kind: &str) -> Vec<&Event> {
        self.events.iter().map(|e| &e.event).filter(|e| e.kind() == kind).collect()
    }

    /// Every text delta of the turn, joined.
    pub fn text(&self) -> String {
        text_of(&self.events)
    }
}

/// Every text delta of `events`, joined: the model's text and the
/// harness's notices between its replies.
fn text_of(events: &[SequencedEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

impl Run {
    /// Every text delta of the turn, joined.
    pub fn text(&self) -> String {
        text_of(&self.events)
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(path)).unwrap()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.dir.path().join(path).exists()
    }

    /// The tool results in event order: (name, is_error, output).
    pub fn results(&self) -> Vec<(String, bool, String)> {
        self.events
            .iter()
            .filter_map(|e| match &e.event {
                Event::ToolResult { name, is_error, output, .. } => {
                    Some((name.clone(), *is_error, self.redact(output)))
                }
                _ => None,
            })
            .collect()
    }

    pub fn result_output(&self, index: usize) -> String {
        self.results()[index].2.clone()
    }

    /// The message tack told the model that starts with `start`, as the
    /// model last saw it.
    pub fn told(&self, start: &str) -> String {
        let request = self.backend.last_request().expect("the model was asked");
        let told = request.messages.iter().map(|m| m.text()).find(|text| text.starts_with(start));
        told.unwrap_or_else(|| panic!("nothing told that starts with {start:?}"))
    }

    fn redact(&self, text: &str) -> String {
        let root = self.dir.path().canonicalize().unwrap();
        text.replace(root.to_str().unwrap(), "<root>").replace(self.dir.path().to_str().unwrap(), "<root>")
    }

    /// The event stream, one readable line per event (status, usage and
    /// context gauges left out), text deltas merged, the temp root redacted.
    /// A sub-agent's events are prefixed with its path.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut pending_text = String::new();
        let mut text_path: Vec<String> = Vec::new();
        let prefix = |path: &[String]| if path.is_empty() { String::new() } else { format!("[{}] ", path.join("/")) };
        let flush = |out: &mut String, text: &mut String, path: &[String]| {
            if !text.is_empty() {
                out.push_str(&format!("{}text {:?}\n", prefix(path), text));
                text.clear();
            }
        };
        for event in &self.events {
            if event.agent_path != text_path {
                flush(&mut out, &mut pending_text, &text_path);
                text_path = event.agent_path.clone();
            }
            let line = match &event.event {
                Event::Text { text } => {
                    pending_text.push_str(text);
                    continue;
                }
                Event::SubagentStarted { agent_id, description } => {
                    format!("subagent_started {agent_id} {description:?}")
                }
                Event::SubagentFinished { agent_id, stop_reason } => {
                    format!("subagent_finished {agent_id} {stop_reason:?}")
                }
                Event::Status { .. } | Event::Usage { .. } | Event::ContextUsage { .. } => continue,
                Event::TurnStarted { prompt } => format!("turn_started {prompt:?}"),
                Event::Thought { text } => format!("thought {text:?}"),
                Event::ToolCall { tool_call_id, name, input } => format!("tool_call {tool_call_id} {name} {input}"),
                Event::PermissionRequest { tool_call_id, name, reason } => {
                    format!("permission_request {tool_call_id} {name}: {reason}")
                }
                Event::PermissionDecision { tool_call_id, decision, source } => {
                    format!("permission_decision {tool_call_id} {decision:?} ({source})")
                }
                Event::ToolResult { tool_call_id, name, is_error, output, summary } => {
                    let status = if *is_error { "error" } else { "ok" };
                    let mut line = format!("tool_result {tool_call_id} {name} {status}: {}", self.redact(summary));
                    if output.trim() != summary.trim() {
                        for l in self.redact(output).lines().take(12) {
                            line.push_str(&format!("\n    | {l}"));
                        }
                    }
                    line
                }
                Event::EditProposed { tool_call_id, path, diff } => {
                    let mut line = format!("edit_proposed {tool_call_id} {path}");
                    for l in diff.lines() {
                        line.push_str(&format!("\n    {l}"));
                    }
                    line
                }
                Event::EditApplied { tool_call_id, path } => format!("edit_applied {tool_call_id} {path}"),
                Event::EditRejected { tool_call_id, path, reason } => {
                    format!("edit_rejected {tool_call_id} {path}: {reason}")
                }
                Event::FilesAttached { paths } => format!("files_attached {}", paths.join(", ")),
                Event::LoopDetected { description } => format!("loop_detected {description}"),
                Event::Hook { event, command, outcome, exit_code, message, .. } => {
                    format!("hook {event} `{command}` {outcome:?} exit={exit_code:?}: {message}")
                }
                Event::Compaction { tokens_before, tokens_after } => {
                    format!("compaction {tokens_before} -> {tokens_after} tokens")
                }
                Event::Retry { attempt, error, .. } => format!("retry {attempt}: {error}"),
                Event::Error { message } => format!("error {message}"),
                Event::TurnFinished { stop_reason, text, .. } => format!("turn_finished {stop_reason:?} {text:?}"),
            };
            flush(&mut out, &mut pending_text, &text_path);
            out.push_str(&prefix(&event.agent_path));
            out.push_str(&line);
            out.push('\n');
        }
        flush(&mut out, &mut pending_text, &text_path);
        out
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.event.kind()).collect()
    }
}
