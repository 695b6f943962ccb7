//! `tack mcp list`: the MCP servers of a workspace and their tools, as a
//! conversation would get them (each server started, listed and stopped).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::tools::mcp::{MCP_CONFIG, McpServers, StartAll};
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub(super) struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Start each server of .mcp.json and list its tools.
    List {
        /// Workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

pub(super) async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let McpCommand::List { workspace } = args.command;
    let workspace = Workspace::open(super::workspace_dir(workspace)?)?;
    let servers = McpServers::start(workspace.root(), &StartAll).await;
    if servers.listing().is_empty() && servers.failures().is_empty() {
        println!("no MCP servers: {} is missing or lists none", MCP_CONFIG);
        return Ok(ExitCode::SUCCESS);
    }
    for (server, tools) in servers.listing() {
        println!("{server}: {} tools", tools.len());
        for (tool, description) in tools {
            let first = description.lines().next().unwrap_or("");
            println!("  mcp__{server}__{tool}  {first}");
        }
    }
    for (server, problem) in servers.failures() {
        println!("{server}: not started: {problem}");
    }
    let code = if servers.failures().is_empty() { ExitCode::SUCCESS } else { ExitCode::from(super::exit::ERROR) };
    Ok(code)
}
