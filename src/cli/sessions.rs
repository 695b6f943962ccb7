//! `tack sessions`: the sessions of a workspace.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::agent::SessionStore;
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub(super) struct SessionsArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(super) fn list(args: SessionsArgs) -> anyhow::Result<ExitCode> {
    let workspace = Workspace::open(super::workspace_dir(args.workspace)?)?;
    let store = SessionStore::for_workspace(workspace.root());
    let sessions = store.list().context("cannot list sessions")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        eprintln!("no sessions in {}", store.dir().display());
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<22}  {:<20}  {:>8}  {:>9}  {:>8}  TITLE", "ID", "UPDATED", "MESSAGES", "TOKENS", "COST");
    for session in sessions {
        let tokens = session.usage.prompt_tokens.saturating_add(session.usage.completion_tokens);
        let cost = session.usage.cost_usd.map(|c| format!("${c:.4}")).unwrap_or_else(|| "-".into());
        println!(
            "{:<22}  {:<20}  {:>8}  {:>9}  {:>8}  {}",
            session.session_id, session.updated_at, session.message_count, tokens, cost, session.title
        );
    }
    Ok(ExitCode::SUCCESS)
}
