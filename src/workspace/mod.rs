//! The world the tools see: a root directory, the only place paths may lead.
//!
//! Architecture invariant: every path a tool touches goes through
//! [`Workspace::resolve`], which refuses `..` escapes, absolute paths elsewhere
//! and symlinks (direct, through a parent directory, or chained) whose target
//! leaves the root. A symlink swapped in after that check is caught where the
//! path is used: [`Workspace::open_file`] proves that the file the kernel
//! opened lies inside the root, and changes go through folders held open and
//! proven the same way. Reads go through a [`BufferOverlay`] so that the
//! editor's unsaved documents stand in for the disk; writes are atomic and
//! keep the file's permissions.

pub mod buffers;
pub mod edits;
pub mod mentions;
pub mod mirror;
pub mod snapshot;

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

pub use buffers::{BufferOverlay, NoBuffers};

/// Errors of path resolution and file access; the message names the path and,
/// for boundary violations, the root.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("cannot access {path}: not inside the workspace root {root}")]
    OutsideRoot { path: String, root: String },
    #[error("cannot access {path}: it is a symlink to {target}, outside the workspace root {root}")]
    SymlinkEscape { path: String, target: String, root: String },
    #[error("cannot access {path}: it is a symlink whose target does not exist")]
    DanglingSymlink { path: String },
    /// The path passed [`Workspace::resolve`], but by the time it was opened a
    /// symlink out of the root had been put in its way.
    #[error("cannot access {path}: it was replaced by a link out of the workspace root {root} while being opened")]
    SwappedOut { path: String, root: String },
    #[error("cannot access an empty path")]
    EmptyPath,
    #[error("cannot access {path:?}: a path cannot contain a NUL byte")]
    NulByte { path: String },
    /// `hint` names what does exist nearby, so a model that guessed a path
    /// can correct itself (starts with "; ", or is empty).
    #[error("{path} does not exist{hint}")]
    NotFound { path: String, hint: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not valid UTF-8 text")]
    NotText { path: String },
    #[error("cannot open workspace root {root}: {source}")]
    BadRoot {
        root: String,
        #[source]
        source: std::io::Error,
    },
}

impl WorkspaceError {
    pub fn io(path: &WorkspacePath, source: std::io::Error) -> Self {
        match source.kind() {
            std::io::ErrorKind::NotFound => WorkspaceError::not_found(path),
            _ => WorkspaceError::Io { path: path.display().to_string(), source },
        }
    }

    pub fn not_found(path: &WorkspacePath) -> Self {
        let depth = path.real_rel.split('/').filter(|part| !part.is_empty()).count();
        let hint = match path.abs.ancestors().nth(depth) {
            Some(root) => snapshot::missing_path_hint(root, &path.real_rel),
            None => String::new(),
        };
        WorkspaceError::NotFound { path: path.display().to_string(), hint }
    }
}

/// A path proven to lie inside the workspace root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkspacePath {
    /// The absolute path on disk with every symlink of the existing prefix resolved.
    pub abs: PathBuf,
    /// The path relative to the root as the caller named it, `/`-separated,
    /// for messages and permission rules. Empty for the root itself.
    pub rel: String,
    /// `abs` relative to the root: differs from `rel` when a symlink inside the
    /// root was followed. Permission rules look at both.
    pub real_rel: String,
}

impl WorkspacePath {
    /// The name shown to users and the model: `.` for the root.
    pub fn display(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }

    /// Where a search looked, for a sentence: `.` read as a path of its own
    /// ("under .. Glob") has sent a model searching `..`.
    pub fn place(&self) -> String {
        if self.rel.is_empty() { "in the workspace".to_string() } else { format!("under {}", self.rel) }
    }
}

pub struct Workspace {
    /// Canonical root: all containment checks compare against it.
    root: PathBuf,
    /// The root as the user named it; absolute paths given under it are
    /// accepted even when it is itself reached through a symlink.
    root_as_given: PathBuf,
    /// The root, open, for [`Workspace::open_found`]'s opens beneath it.
    root_dir: Option<File>,
    overlay: Arc<dyn BufferOverlay>,
}

/// Opens `rel` beneath `root` with the kernel refusing any resolution that
/// leaves it, through `..` or a link (`openat2` with `RESOLVE_BENEATH`,
/// Linux 5.6 and later). `None` where the kernel or a seccomp filter lacks it.
#[cfg(target_os = "linux")]
fn open_beneath(root: &File, rel: &Path) -> Option<std::io::Result<File>> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(rel.as_os_str().as_bytes()).ok()?;
    // SAFETY: open_how is plain integers; all zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_RDONLY | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: the pointers are valid for the call, the size is open_how's,
    // and a descriptor returned is ours alone.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd >= 0 {
        return Some(Ok(unsafe { File::from_raw_fd(fd as i32) }));
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENOSYS | libc::EPERM) => None,
        _ => Some(Err(error)),
    }
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace").field("root", &self.root).finish_non_exhaustive()
    }
}

impl Workspace {
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace, WorkspaceError> {
        let given = root.as_ref();
        let bad_root = |source| WorkspaceError::BadRoot { root: given.display().to_string(), source };
        let canonical = given.canonicalize().map_err(bad_root)?;
        if !canonical.is_dir() {
            return Err(bad_root(std::io::Error::other("not a directory")));
        }
        let root_as_given = std::path::absolute(given).unwrap_or_else(|_| canonical.clone());
        let root_dir = File::open(&canonical).ok();
        Ok(Workspace { root: canonical, root_as_given, root_dir, overlay: Arc::new(NoBuffers) })
    }

    pub fn with_overlay(mut self, overlay: Arc<dyn BufferOverlay>) -> Self {
        self.overlay = overlay;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn overlay(&self) -> &dyn BufferOverlay {
        &*self.overlay
    }

    fn root_display(&self) -> String {
        self.root.display().to_string()
    }

    /// Resolves a path named by the model or the user.
    pub fn resolve(&self, input: &str) -> Result<WorkspacePath, WorkspaceError> {
        if input.trim().is_empty() {
            return Err(WorkspaceError::EmptyPath);
        }
        // No file has one: the system refuses such a path, or cuts it short.
        if input.contains('\0') {
            return Err(WorkspaceError::NulByte { path: input.to_string() });
        }
        let outside = || WorkspaceError::OutsideRoot { path: input.to_string(), root: self.root_display() };
        let requested = Path::new(input);
        let joined = if requested.is_absolute() { requested.to_path_buf() } else { self.root.join(requested) };
        let cleaned = clean_lexically(&joined).ok_or_else(outside)?;
        let rel_path = cleaned
            .strip_prefix(&self.root)
            .or_else(|_| cleaned.strip_prefix(&self.root_as_given))
            .map_err(|_| outside())?
            .to_path_buf();
        let rel = to_slash(&rel_path);

        // Follow the existing prefix one component at a time so that a symlink
        // anywhere (the file, a parent, a chain) is checked where it points.
        let mut real = self.root.clone();
        let mut components = rel_path.components();
        for component in components.by_ref() {
            real.push(component);
            let Ok(meta) = std::fs::symlink_metadata(&real) else {
                break;
            };
            if meta.file_type().is_symlink() {
                let target =
                    real.canonicalize().map_err(|_| WorkspaceError::DanglingSymlink { path: input.to_string() })?;
                if !target.starts_with(&self.root) {
                    return Err(WorkspaceError::SymlinkEscape {
                        path: input.to_string(),
                        target: target.display().to_string(),
                        root: self.root_display(),
                    });
                }
                real = target;
            }
        }
        real.extend(components);
        let real_rel = to_slash(real.strip_prefix(&self.root).unwrap_or(Path::new("")));
        Ok(WorkspacePath { abs: real, rel, real_rel })
    }

    /// The path of a file found by walking the tree (Glob, Grep), relative to the root.
    pub fn relative(&self, abs: &Path) -> String {
        to_slash(abs.strip_prefix(&self.root).unwrap_or(abs))
    }

    /// Opens the file at `path` for reading, and proves that the file opened
    /// lies inside the root: between [`Workspace::resolve`] and the open, the
    /// file or a folder above it may have been replaced by a symlink out.
    pub fn open_file(&self, path: &WorkspacePath) -> Result<File, WorkspaceError> {
        let file = File::open(&path.abs).map_err(|e| WorkspaceError::io(path, e))?;
        if !self.holds(&file) {
            return Err(WorkspaceError::SwappedOut { path: path.display().to_string(), root: self.root_display() });
        }
        Ok(file)
    }

    /// Opens a file found by walking the tree (Grep), as [`Workspace::open_file`]
    /// does; `None` when it cannot be opened or lies outside the root. Where
    /// the kernel can refuse a path that leaves the root as it opens it, it
    /// does: one call instead of two, and asking the kernel for the opened
    /// file's path cost a search of a large tree an eighth of its time.
    pub fn open_found(&self, abs: &Path) -> Option<File> {
        #[cfg(target_os = "linux")]
        if let (Some(root), Ok(rel)) = (&self.root_dir, abs.strip_prefix(&self.root)) {
            if let Some(opened) = open_beneath(root, rel) {
                return opened.ok();
            }
        }
        File::open(abs).ok().filter(|file| self.holds(file))
    }

    /// Whether `file` lies inside the root. The kernel names the file it
    /// opened, links and all resolved, so no later swap changes the answer.
    /// Without `/proc` there is only the check `resolve` made.
    fn holds(&self, file: &File) -> bool {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            if let Ok(opened) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
                return opened.starts_with(&self.root);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = file;
        true
    }

    /// The bytes a tool should see: the open buffer when there is one, else the disk.
    pub fn read_bytes(&self, path: &WorkspacePath) -> Result<Cow<'static, [u8]>, WorkspaceError> {
        if let Some(text) = self.overlay.read(&path.abs) {
            return Ok(Cow::Owned(text.into_bytes()));
        }
        let mut bytes = Vec::new();
        self.open_file(path)?.read_to_end(&mut bytes).map_err(|e| WorkspaceError::io(path, e))?;
        Ok(Cow::Owned(bytes))
    }

    /// Bytes in the open buffer, else on disk.
    pub fn size(&self, path: &WorkspacePath) -> Result<u64, WorkspaceError> {
        match self.overlay.len(&path.abs) {
            Some(len) => Ok(len),
            None => self.open_file(path)?.metadata().map(|m| m.len()).map_err(|e| WorkspaceError::io(path, e)),
        }
    }

    pub fn read_text(&self, path: &WorkspacePath) -> Result<String, WorkspaceError> {
        if let Some(text) = self.overlay.read(&path.abs) {
            return Ok(text);
        }
        let bytes = self.read_bytes(path)?.into_owned();
        String::from_utf8(bytes).map_err(|_| WorkspaceError::NotText { path: path.rel.clone() })
    }

    pub fn exists(&self, path: &WorkspacePath) -> bool {
        self.overlay.len(&path.abs).is_some() || path.abs.exists()
    }

    /// What the folder `path` holds, read through the folder proven inside
    /// the root (see [`Workspace::hold_folder`]).
    pub fn read_dir(&self, path: &WorkspacePath) -> Result<std::fs::ReadDir, WorkspaceError> {
        let folder = self.hold_folder(&path.abs, false, path)?;
        std::fs::read_dir(&folder.path).map_err(|e| WorkspaceError::io(path, e))
    }

    /// Replaces the file's contents atomically (temp file in the same
    /// directory, then rename), keeping the permissions of the file it replaces.
    pub fn write_atomic(&self, path: &WorkspacePath, contents: &[u8]) -> Result<(), WorkspaceError> {
        let io = |e| WorkspaceError::io(path, e);
        let (folder, name) = self.hold_parent(path, true)?;
        let target = folder.path.join(name);
        let mut temp = tempfile::Builder::new().prefix(".tack-").tempfile_in(&folder.path).map_err(io)?;
        temp.write_all(contents).map_err(io)?;
        temp.as_file().sync_data().map_err(io)?;
        // A symlink swapped in for the file says nothing about the file's mode.
        if let Some(meta) = std::fs::symlink_metadata(&target).ok().filter(|meta| meta.is_file()) {
            temp.as_file().set_permissions(meta.permissions()).map_err(io)?;
        }
        // The rename replaces whatever entry has the name, a symlink or a
        // hard link included, and never writes through it.
        temp.persist(&target).map_err(|e| io(e.error))?;
        Ok(())
    }

    pub fn remove_file(&self, path: &WorkspacePath) -> Result<(), WorkspaceError> {
        let (folder, name) = self.hold_parent(path, false)?;
        std::fs::remove_file(folder.path.join(name)).map_err(|e| WorkspaceError::io(path, e))
    }

    pub fn rename(&self, from: &WorkspacePath, to: &WorkspacePath) -> Result<(), WorkspaceError> {
        let (from_folder, from_name) = self.hold_parent(from, false)?;
        let (to_folder, to_name) = self.hold_parent(to, true)?;
        std::fs::rename(from_folder.path.join(from_name), to_folder.path.join(to_name))
            .map_err(|e| WorkspaceError::io(from, e))
    }

    /// The folder that holds `path`, held (see [`Workspace::hold_folder`]),
    /// and the name of `path` in it.
    fn hold_parent<'p>(
        &self,
        path: &'p WorkspacePath,
        create: bool,
    ) -> Result<(HeldFolder, &'p std::ffi::OsStr), WorkspaceError> {
        match (path.abs.parent(), path.abs.file_name()) {
            (Some(parent), Some(name)) => Ok((self.hold_folder(parent, create, path)?, name)),
            _ => Err(WorkspaceError::io(path, std::io::Error::other("no parent directory"))),
        }
    }

    /// Opens the folder `dir` one component at a time from the root, each
    /// through the one before, proving every folder opened lies inside the
    /// root; `create` makes the missing ones. `resolve` checked the path, but
    /// a folder on it may have been swapped for a symlink out since: changes
    /// made through the held folder land in the folder that was checked.
    /// `path` names the file the folder is held for, in errors.
    fn hold_folder(&self, dir: &Path, create: bool, path: &WorkspacePath) -> Result<HeldFolder, WorkspaceError> {
        let io = |e| WorkspaceError::io(path, e);
        let swapped = || WorkspaceError::SwappedOut { path: path.display().to_string(), root: self.root_display() };
        let outside = || WorkspaceError::OutsideRoot { path: path.display().to_string(), root: self.root_display() };
        let rel = dir.strip_prefix(&self.root).map_err(|_| outside())?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // `/proc/self/fd/N` is the open folder itself, not a path to look up again.
            let through = |file: &File| PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
            let mut held = File::open(&self.root).map_err(io)?;
            if std::fs::read_link(through(&held)).is_ok() {
                for component in rel.components() {
                    let next = through(&held).join(component);
                    if create {
                        match std::fs::create_dir(&next) {
                            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(io(e)),
                            _ => {}
                        }
                    }
                    let opened = File::open(&next).map_err(io)?;
                    if !self.holds(&opened) {
                        return Err(swapped());
                    }
                    held = opened;
                }
                return Ok(HeldFolder { path: through(&held), _open: Some(held) });
            }
        }
        // Without `/proc` the folder is reached by its path, as checked by `resolve`.
        if create {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        Ok(HeldFolder { path: self.root.join(rel), _open: None })
    }
}

/// A folder inside the root, kept open so that paths through it reach that
/// very folder, whatever is renamed or swapped in its place.
struct HeldFolder {
    /// A path to the folder: through its open descriptor where the kernel
    /// offers one (`/proc/self/fd/N`), else its own.
    path: PathBuf,
    /// What `path` goes through: it must stay open while `path` is used.
    _open: Option<File>,
}

/// Removes `.` and resolves `..` without touching the disk. `None` when `..`
/// climbs above the filesystem root.
fn clean_lexically(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    Some(out)
}

fn to_slash(path: &Path) -> String {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("src")).unwrap();
        std::fs::write(root.path().join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        let ws = Workspace::open(root.path()).unwrap();
        (root, outside, ws)
    }

    #[test]
    fn relative_and_absolute_paths_inside_the_root_resolve() {
        let (root, _outside, ws) = setup();
        let p = ws.resolve("src/./a.rs").unwrap();
        assert_eq!(p.rel, "src/a.rs");
        let abs = root.path().join("src/a.rs");
        assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap().rel, "src/a.rs");
        assert_eq!(ws.resolve("src/../src/a.rs").unwrap().rel, "src/a.rs");
        assert_eq!(ws.resolve("src/new/file.rs").unwrap().rel, "src/new/file.rs");
        assert_eq!(ws.resolve(".").unwrap().display(), ".");
    }

    #[test]
    fn escapes_are_refused_with_path_and_root_named() {
        let (_root, outside, ws) = setup();
        let err = ws.resolve("../x").unwrap_err().to_string();
        assert!(err.contains("../x") && err.contains(ws.root().to_str().unwrap()), "{err}");
        let abs = outside.path().join("secret.txt");
        let err = ws.resolve(abs.to_str().unwrap()).unwrap_err();
        assert!(matches!(err, WorkspaceError::OutsideRoot { .. }), "{err}");
        assert!(ws.resolve("src/../../x").is_err());
        assert!(matches!(ws.resolve(""), Err(WorkspaceError::EmptyPath)));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_leaving_the_root_are_refused() {
        use std::os::unix::fs::symlink;
        let (root, outside, ws) = setup();
        symlink(outside.path().join("secret.txt"), root.path().join("link.txt")).unwrap();
        symlink(outside.path(), root.path().join("linkdir")).unwrap();
        symlink(root.path().join("link.txt"), root.path().join("chain.txt")).unwrap();
        symlink(root.path().join("src/a.rs"), root.path().join("inner.rs")).unwrap();
        symlink(root.path().join("missing"), root.path().join("dangling")).unwrap();
        for path in ["link.txt", "linkdir/secret.txt", "linkdir/new.txt", "chain.txt"] {
            let err = ws.resolve(path).unwrap_err();
            assert!(matches!(err, WorkspaceError::SymlinkEscape { .. }), "{path}: {err}");
        }
        assert!(matches!(ws.resolve("dangling"), Err(WorkspaceError::DanglingSymlink { .. })));
        let inner = ws.resolve("inner.rs").unwrap();
        assert_eq!((inner.rel.as_str(), inner.real_rel.as_str()), ("inner.rs", "src/a.rs"));
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_the_file_mode() {
        use std::os::unix::fs::PermissionsExt;
        let (root, _outside, ws) = setup();
        let script = root.path().join("run.sh");
        std::fs::write(&script, "echo old\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
        let path = ws.resolve("run.sh").unwrap();
        ws.write_atomic(&path, b"echo new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo new\n");
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        let leftovers: Vec<_> = std::fs::read_dir(root.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tack-"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
