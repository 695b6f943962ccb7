//! A copy of the workspace that the programs tack runs to learn about the
//! code may change as they like: a check, an example the user wrote, the
//! project's tests. They run there, never in the user's project, and what
//! they write (a dotfile, a cache, an output) stays there.
//!
//! The copy is kept in step with the workspace, the editor's unsaved
//! documents standing in for their files, by copying only what changed
//! since the last [`Mirror::sync`]: a file changed on either side (the
//! workspace's edited, or the copy's rewritten by a run) is copied again,
//! and a file gone from the workspace goes from the copy. Files a run
//! created in the copy stay, as they would in a folder a user works in.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::BufferOverlay;

/// Bytes a copy may hold at most: past this, syncing fails rather than
/// fill the disk with a monorepo.
pub const MAX_MIRROR_BYTES: u64 = 256 * 1024 * 1024;

/// What a file was when it was copied, on both sides: a change to either
/// copies it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    source: (u64, Option<SystemTime>),
    copy: (u64, Option<SystemTime>),
}

fn stat(path: &Path) -> Option<(u64, Option<SystemTime>)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()))
}

/// A workspace's copy in a folder of its own, removed with it where the
/// mirror made it.
#[derive(Debug)]
pub struct Mirror {
    /// The copy's root.
    root: PathBuf,
    /// The temporary folder holding `root`, where the mirror made one.
    _dir: Option<tempfile::TempDir>,
    /// Each copied file (relative path) and its stamp, to copy only what changed.
    copied: HashMap<PathBuf, Stamp>,
    /// Open documents copied, with the text written: a buffer has no mtime.
    buffers: HashMap<PathBuf, u64>,
}

impl Mirror {
    /// A copy in a new temporary folder.
    pub fn new() -> io::Result<Mirror> {
        let dir = tempfile::Builder::new().prefix("tack-copy-").tempdir()?;
        let mut mirror = Mirror::at(dir.path().join("project"))?;
        mirror._dir = Some(dir);
        Ok(mirror)
    }

    /// A copy at `root`, a folder the caller owns.
    pub fn at(root: PathBuf) -> io::Result<Mirror> {
        std::fs::create_dir_all(&root)?;
        Ok(Mirror { root, _dir: None, copied: HashMap::new(), buffers: HashMap::new() })
    }

    /// The copy's root.
    pub fn path(&self) -> PathBuf {
        self.root.clone()
    }

    /// Brings the copy in step with the workspace at `root`: the files its
    /// ignore rules keep (`__pycache__` aside), each open document's text in
    /// place of its file, and a link to a `node_modules` the rules leave out.
    pub fn sync(&mut self, root: &Path, overlay: &dyn BufferOverlay) -> io::Result<()> {
        let to_root = self.path();
        let mut total = 0u64;
        let mut seen: HashMap<PathBuf, ()> = HashMap::new();
        let walk = ignore::WalkBuilder::new(root)
            .require_git(false)
            .filter_entry(|entry| entry.file_name() != "__pycache__")
            .build();
        for entry in walk.flatten() {
            let Ok(rel) = entry.path().strip_prefix(root) else { continue };
            if rel.as_os_str().is_empty() {
                continue;
            }
            let to = to_root.join(rel);
            match entry.file_type() {
                Some(kind) if kind.is_dir() => std::fs::create_dir_all(&to)?,
                Some(kind) if kind.is_file() => {
                    seen.insert(rel.to_path_buf(), ());
                    if let Some(text) = overlay.read(entry.path()) {
                        total += text.len() as u64;
                        check_size(total)?;
                        let hash = crate::text::fnv1a(text.as_bytes());
                        let unchanged = self.buffers.get(rel) == Some(&hash)
                            && self.copied.get(rel).is_some_and(|s| stat(&to) == Some(s.copy));
                        if !unchanged {
                            write_fresh(&to, text.as_bytes())?;
                            self.buffers.insert(rel.to_path_buf(), hash);
                            let copy = stat(&to).unwrap_or_default();
                            self.copied.insert(rel.to_path_buf(), Stamp { source: (0, None), copy });
                        }
                        continue;
                    }
                    let Some(source) = stat(entry.path()) else { continue };
                    total += source.0;
                    check_size(total)?;
                    let unchanged = !self.buffers.contains_key(rel)
                        && self.copied.get(rel).is_some_and(|s| s.source == source && stat(&to) == Some(s.copy));
                    if !unchanged {
                        // A file the run replaced by a link or a folder is put back as a file.
                        if to.is_dir() && !to.is_symlink() {
                            std::fs::remove_dir_all(&to)?;
                        }
                        let _ = std::fs::remove_file(&to);
                        std::fs::copy(entry.path(), &to)?;
                        self.buffers.remove(rel);
                        let copy = stat(&to).unwrap_or_default();
                        self.copied.insert(rel.to_path_buf(), Stamp { source, copy });
                    }
                }
                _ => {}
            }
        }
        let gone: Vec<PathBuf> = self.copied.keys().filter(|rel| !seen.contains_key(*rel)).cloned().collect();
        for rel in gone {
            let _ = std::fs::remove_file(to_root.join(&rel));
            self.copied.remove(&rel);
            self.buffers.remove(&rel);
        }
        let modules = root.join("node_modules");
        let link = to_root.join("node_modules");
        if modules.is_dir() && std::fs::symlink_metadata(&link).is_err() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(&modules, &link)?;
        }
        Ok(())
    }
}

fn check_size(total: u64) -> io::Result<()> {
    match total > MAX_MIRROR_BYTES {
        true => Err(io::Error::other(format!(
            "the workspace holds more than {} MiB of files: too large for a copy to run programs in",
            MAX_MIRROR_BYTES / (1024 * 1024)
        ))),
        false => Ok(()),
    }
}

/// Writes `bytes` to `to` as a new file: a link a run left there is
/// replaced, not followed.
fn write_fresh(to: &Path, bytes: &[u8]) -> io::Result<()> {
    let _ = std::fs::remove_file(to);
    std::fs::write(to, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::buffers::NoBuffers;

    struct OneBuffer(PathBuf, String);

    impl BufferOverlay for OneBuffer {
        fn read(&self, abs: &Path) -> Option<String> {
            (abs == self.0).then(|| self.1.clone())
        }
        fn open_paths(&self) -> Vec<PathBuf> {
            vec![self.0.clone()]
        }
    }

    fn read(path: PathBuf) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|_| "<none>".into())
    }

    #[test]
    fn what_a_run_writes_stays_in_the_copy_and_the_workspace_is_what_the_copy_shows() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pkg")).unwrap();
        std::fs::write(root.path().join("pkg/core.py"), "x = 1\n").unwrap();
        std::fs::write(root.path().join("old.txt"), "old\n").unwrap();
        let mut mirror = Mirror::new().unwrap();
        mirror.sync(root.path(), &NoBuffers).unwrap();
        let copy = mirror.path();
        assert_eq!(read(copy.join("pkg/core.py")), "x = 1\n");

        // A run writes a dotfile and rewrites a source file, in the copy.
        std::fs::write(copy.join(".history"), "ran\n").unwrap();
        std::fs::write(copy.join("pkg/core.py"), "x = 'changed by a run'\n").unwrap();
        // The user edits one file, removes another, and has one open unsaved.
        std::fs::write(root.path().join("new.py"), "y = 2\n").unwrap();
        std::fs::remove_file(root.path().join("old.txt")).unwrap();
        let open = OneBuffer(root.path().join("pkg/core.py"), "x = 3  # unsaved\n".into());
        mirror.sync(root.path(), &open).unwrap();

        assert_eq!(read(copy.join("pkg/core.py")), "x = 3  # unsaved\n");
        assert_eq!(read(copy.join("new.py")), "y = 2\n");
        assert_eq!(read(copy.join("old.txt")), "<none>");
        assert_eq!(read(copy.join(".history")), "ran\n", "what a run made stays in the copy");
        assert!(!root.path().join(".history").exists(), "and never reaches the workspace");

        // The buffer closed: the file on disk stands again.
        mirror.sync(root.path(), &NoBuffers).unwrap();
        assert_eq!(read(copy.join("pkg/core.py")), "x = 1\n");
        assert_eq!(read(root.path().join("pkg/core.py")), "x = 1\n");
    }
}
