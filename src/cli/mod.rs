//! The headless front end: argument parsing and the `tack` subcommands.

mod host;
mod map;
mod mcp;
mod run;
mod sessions;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use host::TerminalHost;

#[derive(Debug, Parser)]
#[command(name = "tack", version, about = "A local-first coding agent that lives in your editor", max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one agent turn headless: streamed text and tool calls on stderr, the answer on stdout.
    Run(Box<run::RunArgs>),
    /// List the sessions of a workspace, most recent first.
    Sessions(sessions::SessionsArgs),
    /// Serve the Language Server Protocol on stdin and stdout, for an editor.
    Lsp,
    /// Serve the Agent Client Protocol on stdin and stdout (Zed and other ACP editors).
    Acp,
    /// The workspace's MCP servers (.mcp.json).
    Mcp(mcp::McpArgs),
    /// The workspace's code map; with --rank, the definitions a request is about.
    Map(map::MapArgs),
    /// Runs a local model for another tack process (internal).
    #[command(name = "model-worker", hide = true)]
    ModelWorker,
    /// Kills the command groups of a tack process that died (internal).
    #[command(hide = true)]
    Reaper,
}

/// Exit statuses of `tack run`.
pub(crate) mod exit {
    pub const ERROR: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const INTERRUPTED: u8 = 130;
    /// Cancelled by SIGTERM (a CI job's timeout, `kill`): 128 + 15, as a shell reports it.
    pub const TERMINATED: u8 = 143;
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => {
            // --help and --version.
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            let rendered = error.to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
            eprintln!("tack: {first} (see tack --help)");
            return ExitCode::from(exit::USAGE);
        }
    };
    if let Command::Reaper = cli.command {
        return crate::tools::reaper::serve();
    }
    init_logging();
    if let Ok(program) = std::env::current_exe() {
        crate::tools::reaper::enable(program);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tack: cannot start the async runtime: {error}");
            return ExitCode::from(exit::ERROR);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(*args).await,
            Command::Sessions(args) => sessions::list(args),
            Command::Mcp(args) => mcp::run(args).await,
            Command::Map(args) => map::run(args),
            Command::ModelWorker => Ok(crate::model::worker::serve().await),
            Command::Reaper => Ok(ExitCode::SUCCESS),
            Command::Lsp => {
                crate::lsp::serve_stdio().await;
                Ok(ExitCode::SUCCESS)
            }
            Command::Acp => crate::acp::serve_stdio().await.map(|_| ExitCode::SUCCESS),
        }
    });
    // A turn task may still hold a blocked stdin read; do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("tack: {}", one_line(&error));
            ExitCode::from(exit::ERROR)
        }
    }
}

/// An error and its causes on one line: `cannot open x: permission denied`.
fn one_line(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// Logs go to stderr, filtered by `TACK_LOG` (e.g. `TACK_LOG=debug`); stdout
/// belongs to the answer or the event stream.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TACK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colour only for a person: a model worker's stderr is read line by line
    // and logged again by its parent, and an editor shows a server's stderr raw.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).try_init();
}

/// The workspace root a command works in: the flag, else the current directory.
fn workspace_dir(flag: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match flag {
        Some(dir) => Ok(dir),
        None => Ok(std::env::current_dir()?),
    }
}
