//! What the tools that run programs share: process groups that die with the
//! call, output capped to its head and tail, and an environment without
//! credentials.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use process_wrap::tokio::ChildWrapper;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::sandbox::{Confinement, Sandbox};
use crate::config::ToolSettings;

/// Bytes of output kept from each stream: half from the start, half from the end.
pub(crate) const OUTPUT_LIMIT: usize = 30_000;

/// Limits and environment of the processes tools start, from the settings.
#[derive(Debug, Clone)]
pub struct ProcessSettings {
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    /// Environment variable names (globs, case-insensitive) never passed on,
    /// beyond the built-in credential patterns.
    scrub_env: GlobSet,
    pub sandbox: Sandbox,
}

impl Default for ProcessSettings {
    fn default() -> Self {
        ProcessSettings::from_settings(&ToolSettings::default())
    }
}

impl ProcessSettings {
    pub fn from_settings(settings: &ToolSettings) -> ProcessSettings {
        let mut scrub = GlobSetBuilder::new();
        for pattern in &settings.scrub_env {
            let pattern = pattern.to_ascii_uppercase();
            // A pattern that is not a valid glob still names a variable: match
            // it literally rather than let the variable through.
            let glob = Glob::new(&pattern).or_else(|_| Glob::new(&globset::escape(&pattern)));
            if let Ok(glob) = glob {
                scrub.add(glob);
            }
        }
        let max_timeout = Duration::from_millis(settings.max_command_timeout_ms.max(1));
        ProcessSettings {
            default_timeout: Duration::from_millis(settings.command_timeout_ms.max(1)).min(max_timeout),
            max_timeout,
            scrub_env: scrub.build().unwrap_or_else(|_| GlobSet::empty()),
            sandbox: Sandbox::from_settings(settings),
        }
    }

    /// The timeout of a call that asked for `requested` milliseconds.
    pub fn timeout(&self, requested: Option<u64>) -> Duration {
        requested.map(Duration::from_millis).unwrap_or(self.default_timeout).min(self.max_timeout)
    }

    /// Whether an environment variable must not reach a child process.
    pub fn is_secret(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        looks_like_credential(&upper) || self.scrub_env.is_match(&upper)
    }

    /// Removes every secret variable of this process from `command`'s environment.
    pub fn scrub(&self, command: &mut tokio::process::Command) {
        for (name, _) in std::env::vars_os() {
            if self.is_secret(&name.to_string_lossy()) {
                command.env_remove(&name);
            }
        }
    }
}

/// A line for a command's output when it ran without the sandbox it was
/// meant to have: said once per process, like the log line.
pub(crate) fn unconfined_note(confinement: &Confinement) -> Option<String> {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    match confinement {
        Confinement::Unavailable(why) if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) => {
            Some(format!("[tack: this command ran without its sandbox: {why}]\n"))
        }
        _ => None,
    }
}

/// Names that look like credentials, upper-cased.
fn looks_like_credential(upper: &str) -> bool {
    ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "CREDENTIAL", "PRIVATE_KEY"]
        .iter()
        .any(|word| upper.contains(word))
        || upper.ends_with("_KEY")
        || upper.starts_with("AWS_")
}

/// Kills the whole process group when dropped: a turn cancelled mid-call
/// drops the tool's future, and `KillOnDrop` alone only reaches bash itself,
/// leaving its children running.
/// The group is also handed to the [`reaper`](super::reaper) while it runs,
/// for the case where tack dies without dropping anything.
pub(crate) struct GroupGuard(pub(crate) Box<dyn ChildWrapper>);

impl GroupGuard {
    pub(crate) fn new(child: Box<dyn ChildWrapper>) -> GroupGuard {
        if let Some(pgid) = child.id() {
            super::reaper::watch(pgid);
        }
        GroupGuard(child)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
        if let Some(pgid) = self.0.id() {
            super::reaper::release(pgid);
        }
    }
}

pub(crate) async fn drain(mut pipe: impl AsyncRead + Unpin, into: Arc<Mutex<Capped>>) {
    let mut buffer = [0u8; 8192];
    while let Ok(read) = pipe.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        into.lock().unwrap_or_else(|e| e.into_inner()).push(&buffer[..read]);
    }
}

/// Output with its middle dropped once it passes [`OUTPUT_LIMIT`]: the start
/// says what ran, the end says how it finished.
#[derive(Default)]
pub(crate) struct Capped {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    elided: usize,
}

impl Capped {
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let half = OUTPUT_LIMIT / 2;
        if self.head.len() < half {
            let take = bytes.len().min(half - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend(bytes);
        while self.tail.len() > half {
            let over = self.tail.len() - half;
            self.tail.drain(..over);
            self.elided += over;
        }
    }

    pub(crate) fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.elided > 0 {
            text.push_str(&format!("\n[… {} bytes of output elided …]\n", self.elided));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut capped = Capped::default();
        for i in 0..10_000 {
            capped.push(format!("line {i}\n").as_bytes());
        }
        let text = capped.text();
        assert!(text.starts_with("line 0\nline 1\n"));
        assert!(text.ends_with("line 9999\n"));
        assert!(text.contains("bytes of output elided"));
        assert!(text.len() < OUTPUT_LIMIT + 100);
    }

    #[test]
    fn credentials_are_recognised_by_name() {
        let settings = ProcessSettings::default();
        for name in
            ["GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "SSH_PRIVATE_KEY", "stripe_key"]
        {
            assert!(settings.is_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "KEYBOARD"] {
            assert!(!settings.is_secret(name), "{name}");
        }
    }
}

#[cfg(test)]
mod scrub_tests {
    use super::*;

    #[test]
    fn configured_names_are_scrubbed_too() {
        let tools =
            ToolSettings { scrub_env: vec!["internal_*".into(), "SENTRY_DSN".into()], ..ToolSettings::default() };
        let settings = ProcessSettings::from_settings(&tools);
        assert!(settings.is_secret("INTERNAL_HOST") && settings.is_secret("sentry_dsn"));
        assert!(settings.is_secret("GITHUB_TOKEN"));
        assert!(!settings.is_secret("PATH"));
    }

    #[test]
    fn timeouts_are_capped_by_the_maximum() {
        let tools =
            ToolSettings { command_timeout_ms: 1_000, max_command_timeout_ms: 5_000, ..ToolSettings::default() };
        let settings = ProcessSettings::from_settings(&tools);
        assert_eq!(settings.timeout(None), Duration::from_secs(1));
        assert_eq!(settings.timeout(Some(60_000)), Duration::from_secs(5));
    }
}
