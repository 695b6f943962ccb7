//! The OS sandbox of the commands the model runs (Bash, REPL): Landlock on
//! Linux, applied in the child between fork and exec, so the command and
//! everything it starts can write only where the mode allows, cannot read
//! the home directory's credential folders, and, when configured, cannot
//! open TCP connections.
//!
//! The ruleset is built in tack's process (it opens the allowed paths); the
//! child only calls `prctl(PR_SET_NO_NEW_PRIVS)` and
//! `landlock_restrict_self`, both async-signal-safe. Landlock only adds
//! rights to paths and the folders beneath them, so a hidden folder is kept
//! out by allowing each of its siblings and its ancestors' siblings instead
//! of the root: listing `/` or the home directory itself is refused too.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError, path_beneath_rules,
};

use crate::config::ToolSettings;

pub use crate::config::SandboxMode;

/// The newest Landlock ABI whose rights tack asks for; older kernels get
/// what they support (best effort), a kernel without Landlock gets none.
const ABI_WANTED: ABI = ABI::V5;
/// Devices every command may read and write.
const DEVICES: [&str; 5] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
/// Folders of the home directory that hold credentials; commands may not read them.
const HOME_SECRETS: [&str; 11] = [
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
];

/// The sandbox commands run in, from the settings.
#[derive(Debug, Clone)]
pub struct Sandbox {
    mode: SandboxMode,
    /// Writable beyond the workspace and the temporary directories.
    writable: Vec<PathBuf>,
    /// Hidden from commands: canonical paths that exist.
    hidden: Vec<PathBuf>,
    network: bool,
}

/// How a command was confined.
#[derive(Debug)]
pub enum Confinement {
    Enforced,
    Off,
    /// The sandbox is on but the kernel cannot enforce it: why.
    Unavailable(String),
}

/// A sandbox set up for one command; keep it until the command has started.
#[derive(Debug)]
pub struct Confined {
    pub confinement: Confinement,
    _ruleset: Option<OwnedFd>,
}

/// Landlock's ABI version on this kernel; 0 without Landlock.
fn kernel_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and this flag the call only reports the version.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    version.max(0)
}

impl Sandbox {
    pub fn from_settings(settings: &ToolSettings) -> Sandbox {
        let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
        let expand_home = |path: &PathBuf| match (path.strip_prefix("~"), &home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ => path.clone(),
        };
        let defaults = home.iter().flat_map(|home| HOME_SECRETS.iter().map(move |name| home.join(name)));
        let hidden = defaults
            .chain(settings.sandbox_hidden.iter().map(expand_home))
            .filter_map(|path| std::fs::canonicalize(path).ok())
            .collect();
        Sandbox {
            mode: settings.sandbox,
            writable: settings.sandbox_writable.iter().map(expand_home).collect(),
            hidden,
            network: settings.sandbox_network,
        }
    }

    /// Under what a command will run, for the permission prompt.
    pub fn describe(&self) -> String {
        let network = if self.network { "" } else { ", without network" };
        let mut text = match self.mode {
            SandboxMode::Off => return "without a sandbox (sandbox = \"off\")".into(),
            SandboxMode::WorkspaceWrite => {
                format!(
                    "in the workspace-write sandbox (writes only in the workspace and temporary directories{network})"
                )
            }
            SandboxMode::ReadOnly => format!("in the read-only sandbox (writes nowhere{network})"),
        };
        if kernel_abi() == 0 {
            text.push_str(", which this kernel cannot enforce (no Landlock): it runs unconfined");
        }
        text
    }

    /// Sets `command` up to confine itself before it starts the program.
    pub fn confine(&self, root: &Path, command: &mut tokio::process::Command) -> Confined {
        if self.mode == SandboxMode::Off {
            return Confined { confinement: Confinement::Off, _ruleset: None };
        }
        let unavailable = |why: String| {
            static SAID: AtomicBool = AtomicBool::new(false);
            if !SAID.swap(true, Ordering::Relaxed) {
                tracing::warn!("commands run without their sandbox: {why}");
            }
            Confined { confinement: Confinement::Unavailable(why), _ruleset: None }
        };
        let abi = kernel_abi();
        if abi == 0 {
            return unavailable("this kernel has no Landlock (Linux 5.13 or later, with Landlock enabled)".into());
        }
        if !self.network && abi < 4 {
            return unavailable(format!("this kernel's Landlock (ABI {abi}) cannot refuse network connections"));
        }
        let ruleset = match self.ruleset(root) {
            Ok(Some(ruleset)) => ruleset,
            Ok(None) => return unavailable("Landlock refused to create a ruleset".into()),
            Err(error) => return unavailable(format!("cannot build the Landlock ruleset: {error}")),
        };
        let fd = ruleset.as_raw_fd();
        // SAFETY: only async-signal-safe system calls run in the child; the
        // ruleset descriptor stays open in the parent until the spawn returns.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Confined { confinement: Confinement::Enforced, _ruleset: Some(ruleset) }
    }

    fn ruleset(&self, root: &Path) -> Result<Option<OwnedFd>, RulesetError> {
        let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(ABI_WANTED))?;
        if !self.network {
            ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED))?;
        }
        let mut created = ruleset
            .create()?
            .add_rules(path_beneath_rules(readable_roots(&self.hidden), AccessFs::from_read(ABI_WANTED)))?
            .add_rules(path_beneath_rules(DEVICES, AccessFs::from_file(ABI_WANTED)))?;
        if self.mode == SandboxMode::WorkspaceWrite {
            let temp =
                [std::env::temp_dir(), PathBuf::from("/tmp"), PathBuf::from("/var/tmp"), PathBuf::from("/dev/shm")];
            let writable = std::iter::once(root.to_path_buf()).chain(temp).chain(self.writable.iter().cloned());
            created = created.add_rules(path_beneath_rules(writable, AccessFs::from_all(ABI_WANTED)))?;
        }
        Ok(created.into())
    }
}

/// The folders and files to allow reading beneath so that everything is
/// readable but `hidden`.
fn readable_roots(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    expand(Path::new("/"), hidden, &mut roots);
    roots
}

fn expand(path: &Path, hidden: &[PathBuf], roots: &mut Vec<PathBuf>) {
    if hidden.iter().any(|h| h == path) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(path)) {
        roots.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for entry in entries.flatten() {
        let entry = entry.path();
        // A rule on a link holds for its target: a link that leads to a
        // hidden path, or to a folder holding one, is left out (the target
        // is reached by its own path).
        if let Ok(real) = std::fs::canonicalize(&entry)
            && real != entry
            && hidden.iter().any(|h| h.starts_with(&real) || real.starts_with(h))
        {
            continue;
        }
        expand(&entry, hidden, roots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_folders_are_left_out_and_everything_beside_them_kept() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for folder in ["home/.ssh", "home/code", "other"] {
            std::fs::create_dir_all(base.join(folder)).unwrap();
        }
        std::fs::write(base.join("home/.bashrc"), "").unwrap();
        std::os::unix::fs::symlink(base.join("home"), base.join("home-link")).unwrap();
        let hidden = vec![base.join("home/.ssh")];
        let mut roots = Vec::new();
        expand(&base, &hidden, &mut roots);
        roots.sort();
        let mut expected = vec![base.join("home/.bashrc"), base.join("home/code"), base.join("other")];
        expected.sort();
        assert_eq!(roots, expected, "the link to the folder holding the hidden one is left out too");
        let mut nothing_hidden = Vec::new();
        expand(&base, &[], &mut nothing_hidden);
        assert_eq!(nothing_hidden, vec![base]);
    }
}
