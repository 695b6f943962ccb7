//! Open editor documents overlaying the disk.
//!
//! The LSP front end implements [`BufferOverlay`] over its ropey documents, so
//! that tools see unsaved text. The headless front end has no buffers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// Documents that stand in for files on disk. Paths are absolute.
pub trait BufferOverlay: Send + Sync {
    /// The document's current text, when it is open.
    fn read(&self, abs: &Path) -> Option<String>;
    /// The document's length in bytes, when it is open. Overlays that can
    /// answer without copying the text (ropes) should.
    fn len(&self, abs: &Path) -> Option<u64> {
        self.read(abs).map(|text| text.len() as u64)
    }
    /// The text a search over the tree reads for this file, when it is open.
    /// An overlay whose reads are costly (a request to the editor per file)
    /// leaves searches to the disk.
    fn read_for_search(&self, abs: &Path) -> Option<String> {
        self.read(abs)
    }
    /// Every open document, so that tree walks can search them in place of their files.
    fn open_paths(&self) -> Vec<PathBuf>;
}

/// The overlay of a front end without an editor.
pub struct NoBuffers;

impl BufferOverlay for NoBuffers {
    fn read(&self, _abs: &Path) -> Option<String> {
        None
    }
    fn open_paths(&self) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// Plain in-memory documents: for embedding tack where the host keeps whole
/// strings rather than ropes.
#[derive(Default)]
pub struct MemoryBuffers {
    documents: RwLock<BTreeMap<PathBuf, String>>,
}

impl MemoryBuffers {
    pub fn set(&self, abs: impl Into<PathBuf>, text: impl Into<String>) {
        self.documents.write().unwrap_or_else(|e| e.into_inner()).insert(abs.into(), text.into());
    }
}

impl BufferOverlay for MemoryBuffers {
    fn read(&self, abs: &Path) -> Option<String> {
        self.documents.read().unwrap_or_else(|e| e.into_inner()).get(abs).cloned()
    }
    fn open_paths(&self) -> Vec<PathBuf> {
        self.documents.read().unwrap_or_else(|e| e.into_inner()).keys().cloned().collect()
    }
}
