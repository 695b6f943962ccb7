//! The last line of defence against orphans: when tack dies without running
//! its destructors (SIGKILL, an abort, the machine's OOM killer), the process
//! groups of the commands it was running would live on. A small `tack
//! reaper` process, started with the first group, is told each group tack
//! starts and each one it has ended; when its stdin closes, tack is gone, and
//! it kills every group still listed.
//!
//! Only the tack binary enables it ([`enable`]): a library user, or a test
//! binary, has no `reaper` subcommand to start.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The hidden subcommand the reaper runs as.
pub const SUBCOMMAND: &str = "reaper";

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
static REAPER: Mutex<Option<ChildStdin>> = Mutex::new(None);

/// Lets groups be watched, by a reaper started from `program` (tack's own binary).
pub fn enable(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// From now until [`release`], the group `pgid` is killed if tack dies.
pub fn watch(pgid: u32) {
    tell(&format!("+{pgid}\n"));
}

/// The group `pgid` has been ended by tack itself.
pub fn release(pgid: u32) {
    tell(&format!("-{pgid}\n"));
}

fn tell(line: &str) {
    let Some(program) = PROGRAM.get() else { return };
    let mut reaper = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(stdin) = reaper.as_mut()
        && stdin.write_all(line.as_bytes()).is_ok()
    {
        return;
    }
    // None yet, or the last one is gone: start one.
    let started = Command::new(program)
        .arg(SUBCOMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: a Ctrl-C meant for tack must not stop it first.
        .process_group(0)
        .spawn();
    match started {
        Ok(mut child) => {
            let mut stdin = child.stdin.take();
            if let Some(stdin) = stdin.as_mut() {
                let _ = stdin.write_all(line.as_bytes());
            }
            *reaper = stdin;
            // It outlives tack by design; it is reaped by init then, and
            // by this thread now if it ends first.
            std::thread::spawn(move || child.wait());
        }
        Err(error) => tracing::warn!("cannot start the reaper of command groups: {error}"),
    }
}

/// The reaper's side: `tack reaper`.
pub fn serve() -> std::process::ExitCode {
    let mut groups = BTreeSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(Ok(pgid)) = line.strip_prefix('+').map(str::parse::<i32>)
            && pgid > 1
        {
            groups.insert(pgid);
        } else if let Some(Ok(pgid)) = line.strip_prefix('-').map(str::parse::<i32>) {
            groups.remove(&pgid);
        }
    }
    for pgid in groups {
        // SAFETY: a plain kill(2) of a process group tack started.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    std::process::ExitCode::SUCCESS
}
