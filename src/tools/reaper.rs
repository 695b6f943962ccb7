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
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The hidden subcommand the reaper runs as.
pub const SUBCOMMAND: &str = "reaper";

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
/// Tack's end of a socket whose other end is the reaper's stdin: a socket
/// rather than a pipe, so that a child writing to a reaper that has died
/// gets an error, not SIGPIPE.
static REAPER: Mutex<Option<UnixStream>> = Mutex::new(None);

/// Lets groups be watched, by a reaper started from `program` (tack's own binary).
pub fn enable(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

/// Has the child that `command` starts hand its group to the reaper itself,
/// between fork and exec: tack may die in the milliseconds before it could
/// say so. Keep the returned descriptor until the command has started.
pub fn register_in_child(command: &mut tokio::process::Command) -> Option<OwnedFd> {
    tell("");
    let reaper = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    // A copy for this child alone: the reaper may be replaced meanwhile, and
    // the child must never write to a descriptor that now means something else.
    let own = reaper.as_ref()?.as_fd().try_clone_to_owned().ok()?;
    let fd = own.as_raw_fd();
    // SAFETY: getpid and write are async-signal-safe; the message is built on
    // the stack, without allocating.
    unsafe {
        command.pre_exec(move || {
            let mut line = [0u8; 24];
            let mut digits = [0u8; 20];
            let mut pid = libc::getpid() as u32;
            let mut count = 0;
            loop {
                digits[count] = b'0' + (pid % 10) as u8;
                count += 1;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            line[0] = b'+';
            for index in 0..count {
                line[1 + index] = digits[count - 1 - index];
            }
            line[1 + count] = b'\n';
            libc::send(fd, line.as_ptr().cast(), 2 + count, libc::MSG_NOSIGNAL);
            Ok(())
        });
    }
    Some(own)
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
        && (line.is_empty() || stdin.write_all(line.as_bytes()).is_ok())
    {
        return;
    }
    // None yet, or the last one is gone: start one.
    let Ok((mut ours, theirs)) = UnixStream::pair() else {
        tracing::warn!("cannot start the reaper of command groups: no socket pair");
        return;
    };
    let started = Command::new(program)
        .arg(SUBCOMMAND)
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: a Ctrl-C meant for tack must not stop it first.
        .process_group(0)
        .spawn();
    match started {
        Ok(mut child) => {
            if !line.is_empty() {
                let _ = ours.write_all(line.as_bytes());
            }
            *reaper = Some(ours);
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
