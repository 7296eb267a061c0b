//! Where index files live: a directory on disk, or memory.
//!
//! The segments of a generation are files on disk. The record log's live records are indexed
//! at open into one more segment held in memory ([`MemoryDirectory`]), written and read by the
//! same writers and readers, so a search never asks whether a record came from the log.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::format::mmap::MappedFile;

/// The path of file `suffix` of segment `segment` in `dir`: `<dir>/<segment>.<suffix>`.
pub fn segment_file(dir: &Path, segment: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{segment}.{suffix}"))
}

/// Files written into memory, by path. Paths are only names here (for error messages); nothing
/// is created on disk.
#[derive(Debug, Default)]
pub struct MemoryDirectory {
    root: PathBuf,
    files: Mutex<HashMap<PathBuf, Arc<Vec<u8>>>>,
}

impl MemoryDirectory {
    /// An empty directory whose files are named under `root`.
    pub fn new(root: impl Into<PathBuf>) -> MemoryDirectory {
        MemoryDirectory {
            root: root.into(),
            files: Mutex::default(),
        }
    }

    fn files(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Vec<u8>>>> {
        // A writer that panicked mid-insert leaves the map itself intact.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the whole file at `path`; refuses a name that exists, like a file on disk.
    pub(crate) fn insert(&self, path: &Path, bytes: Vec<u8>) -> Result<()> {
        let mut files = self.files();
        if files.contains_key(path) {
            return Err(Error::io(
                path,
                std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            ));
        }
        files.insert(path.to_path_buf(), Arc::new(bytes));
        Ok(())
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.files().values().map(|f| f.len() as u64).sum()
    }
}

/// A directory of index files.
#[derive(Debug, Clone)]
pub enum Directory {
    /// Files on disk, memory-mapped for reading.
    Disk(PathBuf),
    /// Files on disk written without an fsync: a generation's segments before its commit,
    /// which syncs those it keeps (`GenerationWriter::commit`); a build's spills, merged into
    /// one segment and deleted, never reach the disk if the page cache can hold them.
    Unsynced(PathBuf),
    /// Files in memory.
    Memory(Arc<MemoryDirectory>),
}

impl Directory {
    /// The directory's path (for a memory directory, the prefix of its files' names).
    pub fn root(&self) -> &Path {
        match self {
            Directory::Disk(dir) | Directory::Unsynced(dir) => dir,
            Directory::Memory(memory) => &memory.root,
        }
    }

    /// The file `<segment>.<suffix>`, to be written.
    pub fn file(&self, segment: &str, suffix: &str) -> FileTarget {
        FileTarget {
            path: segment_file(self.root(), segment, suffix),
            memory: match self {
                Directory::Disk(_) | Directory::Unsynced(_) => None,
                Directory::Memory(memory) => Some(Arc::clone(memory)),
            },
            sync: !matches!(self, Directory::Unsynced(_)),
        }
    }

    /// Whether the file at `path` exists.
    pub fn exists(&self, path: &Path) -> bool {
        match self {
            Directory::Disk(_) | Directory::Unsynced(_) => path.exists(),
            Directory::Memory(memory) => memory.files().contains_key(path),
        }
    }

    /// The whole file at `path`, for reading.
    pub fn map(&self, path: &Path) -> Result<MappedFile> {
        match self {
            Directory::Disk(_) | Directory::Unsynced(_) => MappedFile::open(path),
            Directory::Memory(memory) => {
                let bytes = memory.files().get(path).cloned().ok_or_else(|| {
                    Error::io(path, std::io::Error::from(std::io::ErrorKind::NotFound))
                })?;
                Ok(MappedFile::from_memory(path, bytes))
            }
        }
    }
}

/// Where a file is written: a path on disk, or a name in a [`MemoryDirectory`].
#[derive(Debug, Clone)]
pub struct FileTarget {
    path: PathBuf,
    memory: Option<Arc<MemoryDirectory>>,
    /// Whether the writer syncs the file (on disk) when it finishes it.
    sync: bool,
}

impl FileTarget {
    /// The file's path (its name, in memory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The memory directory the file goes to, if not to disk.
    pub(crate) fn memory(&self) -> Option<&Arc<MemoryDirectory>> {
        self.memory.as_ref()
    }

    /// Whether the file is synced when its writer finishes it.
    pub(crate) fn sync(&self) -> bool {
        self.sync
    }
}

impl From<PathBuf> for FileTarget {
    fn from(path: PathBuf) -> FileTarget {
        FileTarget {
            path,
            memory: None,
            sync: true,
        }
    }
}

impl From<&Path> for FileTarget {
    fn from(path: &Path) -> FileTarget {
        FileTarget::from(path.to_path_buf())
    }
}

impl From<&PathBuf> for FileTarget {
    fn from(path: &PathBuf) -> FileTarget {
        FileTarget::from(path.clone())
    }
}

impl From<&FileTarget> for FileTarget {
    fn from(target: &FileTarget) -> FileTarget {
        target.clone()
    }
}
