//! `tack map`: the code map of a workspace as tack reads it, and with
//! `--rank` the definitions a request is about, best first: what the
//! real-project pipeline would offer the model to choose from.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use crate::codemap::{CodeMap, rank};
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub(super) struct MapArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// A request: print the definitions it is about, best first.
    #[arg(long, value_name = "REQUEST")]
    rank: Option<String>,
    /// How many ranked definitions to print.
    #[arg(long, default_value_t = 10)]
    limit: usize,
}

pub(super) fn run(args: MapArgs) -> anyhow::Result<ExitCode> {
    let workspace = Workspace::open(super::workspace_dir(args.workspace)?)?;
    let mut map = CodeMap::new();
    let started = Instant::now();
    let built = map.refresh(&workspace);
    let build_ms = started.elapsed().as_millis();
    let started = Instant::now();
    let again = map.refresh(&workspace);
    let refresh_ms = started.elapsed().as_millis();
    let definitions = map.definitions().count();
    let broken = map.files().filter(|(_, file)| !file.error_lines.is_empty()).count();
    eprintln!(
        "{} files, {definitions} definitions ({broken} files with parse errors); built in {build_ms} ms, \
refreshed with {} changed in {refresh_ms} ms; peak memory {}",
        built.files,
        again.parsed,
        peak_memory().unwrap_or_else(|| "unknown".into()),
    );
    if let Some(request) = args.rank {
        for ranked in rank::rank(&map, &request, args.limit) {
            let definition = ranked.found.definition;
            println!(
                "{:>7.2}  {}:{}-{}  {} {}{}",
                ranked.score,
                ranked.found.path,
                definition.lines.0,
                definition.lines.1,
                definition.kind.name(),
                definition.qualified(ranked.found.file.language),
                if ranked.named { "  (named)" } else { "" },
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The process's peak resident memory, where the system tells it (Linux).
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} MiB", kib / 1024))
}
