//! `tack run`: one agent turn, headless.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::exit;
use super::host::{EventOutput, TerminalHost};
use crate::agent::servers::PolicyGate;
use crate::agent::{Conversation, ConversationParts, LoopSettings, SessionStore};
use crate::config::{Settings, user_config_path};
use crate::model::llama::LoadProgress;
use crate::model::load_backend;
use crate::permissions::Policy;
use crate::protocol::{PermissionMode, StopReason};
use crate::tools::ToolRegistry;
use crate::tools::ToolSet;
use crate::tools::mcp::McpServers;
use crate::tools::skill::SkillCatalog;
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Model backend.
    #[arg(long, value_name = "BACKEND", value_parser = ["scripted", "llama", "openai"])]
    backend: Option<String>,
    /// Script of model completions, for the scripted backend.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// GGUF model file, for the llama backend.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// OpenAI-compatible server's API root, for the openai backend (e.g. http://127.0.0.1:8080/v1).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model's name on the server, for the openai backend.
    #[arg(long, value_name = "NAME")]
    model_name: Option<String>,
    /// plan, ask, auto_read (default) or auto_all.
    #[arg(long, value_name = "MODE")]
    permission_mode: Option<PermissionMode>,
    /// Most model generations in the turn (default 40).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_iterations: Option<u32>,
    /// Local models: hold tool calls to the tools' schemas: lazy (default), required or off.
    #[arg(long, value_name = "MODE", value_parser = ["off", "lazy", "required"])]
    grammar: Option<String>,
    /// Context window in tokens, overriding the model's.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    context_window: Option<u64>,
    /// Print every event as one JSON object per line on stdout.
    #[arg(long, conflicts_with = "stream_events")]
    json_events: bool,
    /// Print every event as one JSON object per line on stderr; the answer stays on stdout.
    #[arg(long)]
    stream_events: bool,
    /// Continue the session with this id.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    /// What to ask.
    #[arg(required = true, value_name = "PROMPT")]
    prompt: Vec<String>,
}

impl RunArgs {
    /// The flags that are settings, as the highest config layer.
    fn as_layer(&self, cwd: &Path) -> Value {
        let mut model = Map::new();
        if let Some(backend) = &self.backend {
            model.insert("backend".into(), json!(backend));
        }
        if let Some(script) = &self.script {
            model.insert("script".into(), json!(cwd.join(script)));
        }
        if let Some(path) = &self.model {
            model.insert("path".into(), json!(cwd.join(path)));
        }
        if let Some(url) = &self.base_url {
            model.insert("baseUrl".into(), json!(url));
        }
        if let Some(name) = &self.model_name {
            model.insert("model".into(), json!(name));
        }
        if let Some(grammar) = &self.grammar {
            model.insert("grammar".into(), json!(grammar));
        }
        if let Some(tokens) = self.context_window {
            model.insert("contextWindow".into(), json!(tokens));
        }
        let mut layer = Map::new();
        layer.insert("model".into(), Value::Object(model));
        if let Some(mode) = self.permission_mode {
            layer.insert("permissionMode".into(), json!(mode));
        }
        if let Some(max) = self.max_iterations {
            layer.insert("maxIterations".into(), json!(max));
        }
        Value::Object(layer)
    }
}

pub(super) async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = super::workspace_dir(args.workspace.clone())?;
    let workspace = Workspace::open(&root)?;
    let user_config = user_config_path();
    let settings = Settings::load(user_config.as_deref(), workspace.root(), &[("command line", args.as_layer(&cwd))])?;
    let progress = std::io::stderr().is_terminal().then(|| {
        LoadProgress(Arc::new(|share: f32| {
            let done = if share >= 1.0 { "\r\x1b[2K" } else { "" };
            eprint!("\rtack: loading the model {:>3.0}%{done}", share * 100.0);
        }))
    });
    let backend = load_backend(&settings, progress).await?;
    let policy = Policy::new(settings.permission_mode, &settings.permissions.rules)?;

    let store = SessionStore::for_workspace(workspace.root());
    let (session, history, tasks) = match &args.resume {
        Some(id) => {
            let loaded = store.load(id)?;
            for warning in &loaded.warnings {
                eprintln!("tack: warning: {warning}");
            }
            (store.resume(&loaded)?, loaded.messages, loaded.tasks)
        }
        None => (store.create()?, Vec::new(), Vec::new()),
    };
    let session_id = session.id().to_string();

    let output = if args.json_events {
        EventOutput::JsonStdout
    } else if args.stream_events {
        EventOutput::JsonStderr
    } else {
        EventOutput::Human
    };
    let host = Arc::new(TerminalHost::new(output));
    let mcp_servers = match settings.tools.disabled.contains(&ToolSet::Mcp) {
        true => McpServers::default(),
        false => {
            let gate = PolicyGate { policy: policy.clone(), host: host.clone() };
            McpServers::start(workspace.root(), &gate).await
        }
    };
    for (server, problem) in mcp_servers.failures() {
        eprintln!("tack: MCP server {server} did not start: {problem}; its tools are left out");
    }
    let mut conversation = Conversation::new(ConversationParts {
        tools: Arc::new(
            ToolRegistry::for_model(&settings.tools, backend.context_window(), backend.parameters())
                .with_skills(SkillCatalog::discover(workspace.root()), &settings.tools)
                .with_mcp(mcp_servers, &settings.tools),
        ),
        backend,
        workspace: Arc::new(workspace),
        host,
        policy,
        settings: LoopSettings::from(&settings),
        session: Some(session),
        history,
        tasks,
    });

    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    // A SIGTERM (a CI job's timeout, `kill`) cancels the turn as Ctrl-C
    // does, so the programs the turn started end with it.
    let terminated = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let on_terminate = terminated.clone();
    tokio::spawn(async move {
        tokio::select! {
            interrupted = tokio::signal::ctrl_c() => if interrupted.is_err() { return },
            () = termination() => on_terminate.store(true, std::sync::atomic::Ordering::SeqCst),
        }
        on_interrupt.cancel();
    });

    let prompt = args.prompt.join(" ");
    let outcome = conversation.run_turn(&prompt, cancel).await;
    // In a terminal the answer has just streamed past on stderr; print it
    // again only where stdout goes somewhere else (a pipe, a file).
    let answer_already_seen =
        output == EventOutput::Human && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    if output != EventOutput::JsonStdout && !answer_already_seen && !outcome.text.trim().is_empty() {
        println!("{}", outcome.text.trim_end());
    }
    // With the events on stdout, stderr is free for the line a script needs
    // to go on with the session.
    if output != EventOutput::JsonStderr {
        eprintln!(
            "tack: session {session_id} ({}); continue with --resume {session_id}",
            describe(outcome.stop_reason)
        );
    }
    Ok(match outcome.stop_reason {
        StopReason::EndTurn | StopReason::MaxIterations => ExitCode::SUCCESS,
        StopReason::Error | StopReason::LoopDetected => ExitCode::from(exit::ERROR),
        StopReason::Cancelled if terminated.load(std::sync::atomic::Ordering::SeqCst) => {
            ExitCode::from(exit::TERMINATED)
        }
        StopReason::Cancelled => ExitCode::from(exit::INTERRUPTED),
    })
}

/// Resolves when the process is asked to terminate (SIGTERM); never where
/// that signal cannot be listened for.
async fn termination() {
    #[cfg(unix)]
    if let Ok(mut terminate) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        terminate.recv().await;
        return;
    }
    std::future::pending::<()>().await
}

fn describe(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "done",
        StopReason::MaxIterations => "stopped at the iteration limit",
        StopReason::Cancelled => "interrupted",
        StopReason::Error => "failed",
        StopReason::LoopDetected => "stopped: the model was going in circles",
    }
}
