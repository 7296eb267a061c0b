//! FST dictionaries: sorted byte keys mapped to `u64` values with the `fst` crate.
//!
//! The body of a dictionary file is exactly the bytes `fst::MapBuilder` produced. The FST is
//! only walked after the whole body passed its CRC (checked once per opened file), so damaged
//! bytes are reported instead of followed.
//!
//! The `fst` crate trusts the bytes it walks and may panic on an FST that is malformed yet
//! carries a valid checksum — which no accident produces, only a crafted file. As a last line of
//! defence every walk runs under `catch_unwind`, and such a panic becomes a damage report. Only
//! the `fst` crate's own steps are guarded: a panic in Reliora's code called back from a walk
//! (`visit`) is carried out of the guard and resumed, so it is never mistaken for damage and
//! the never-panic tests see it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::OnceLock;

use fst::{IntoStreamer, Streamer};

use crate::error::{Error, Result};
use crate::format::directory::FileTarget;
use crate::format::file::IndexFile;
use crate::format::footer::{write_file, FileKind, Footer};
use crate::format::mmap::FileSlice;
use crate::format::FormatError;

/// Writes a dictionary from keys in strictly ascending byte order.
pub fn write_dictionary<K: AsRef<[u8]>>(
    path: impl Into<FileTarget>,
    entries: impl IntoIterator<Item = (K, u64)>,
) -> Result<Footer> {
    let mut writer = DictionaryWriter::new(path);
    for (key, value) in entries {
        writer.insert(key, value)?;
    }
    writer.finish()
}

/// Writes a dictionary key by key, keys in strictly ascending byte order.
pub struct DictionaryWriter {
    target: FileTarget,
    builder: fst::MapBuilder<Vec<u8>>,
}

impl DictionaryWriter {
    /// Starts the dictionary file at `path` (written by `finish`).
    pub fn new(path: impl Into<FileTarget>) -> DictionaryWriter {
        DictionaryWriter {
            target: path.into(),
            builder: fst::MapBuilder::memory(),
        }
    }

    /// Adds the next key.
    pub fn insert(&mut self, key: impl AsRef<[u8]>, value: u64) -> Result<()> {
        self.builder.insert(key, value).map_err(|e| {
            Error::corrupt(
                self.target.path(),
                format!("dictionary keys out of order while building: {e}"),
            )
        })
    }

    /// Writes the file and syncs it.
    pub fn finish(self) -> Result<Footer> {
        let bytes = self.builder.into_inner().map_err(|e| {
            Error::corrupt(self.target.path(), format!("cannot finish dictionary: {e}"))
        })?;
        write_file(&self.target, FileKind::Fst, &bytes)
    }
}

/// A dictionary opened for reading.
pub struct Dictionary {
    file: IndexFile,
    map: OnceLock<std::result::Result<fst::Map<FileSlice>, FormatError>>,
}

impl Dictionary {
    /// Wraps an opened dictionary file; nothing is read yet.
    pub fn new(file: IndexFile) -> Dictionary {
        Dictionary {
            file,
            map: OnceLock::new(),
        }
    }

    /// The underlying file.
    pub fn file(&self) -> &IndexFile {
        &self.file
    }

    fn map(&self) -> Result<&fst::Map<FileSlice>> {
        self.map
            .get_or_init(|| {
                self.file.verify().map_err(|e| problem_of(&e))?;
                fst::Map::new(self.file.body_slice())
                    .map_err(|e| FormatError::Invalid(format!("invalid FST: {e}")))
            })
            .as_ref()
            .map_err(|problem| self.file.corrupt(problem.clone()))
    }

    /// Runs `walk` over the verified FST, turning a panic inside `fst` into a damage report.
    fn walk<T>(&self, walk: impl FnOnce(&fst::Map<FileSlice>) -> T) -> Result<T> {
        let map = self.map()?;
        catch_unwind(AssertUnwindSafe(|| walk(map))).map_err(|_| {
            self.file
                .corrupt("the FST is malformed although its checksum matches (crafted file?)")
        })
    }

    /// The number of keys.
    pub fn len(&self) -> Result<usize> {
        Ok(self.map()?.len())
    }

    /// Whether the dictionary is empty.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &[u8]) -> Result<Option<u64>> {
        self.walk(|map| map.get(key))
    }

    /// Calls `visit` with every key that starts with `prefix`, in key order.
    pub fn for_each_with_prefix(
        &self,
        prefix: &[u8],
        mut visit: impl FnMut(&[u8], u64),
    ) -> Result<()> {
        let mut ours = None;
        let walked = self.walk(|map| {
            let mut stream = map.range().ge(prefix).into_stream();
            while let Some((key, value)) = stream.next() {
                if !key.starts_with(prefix) {
                    break;
                }
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| visit(key, value))) {
                    ours = Some(panic);
                    break;
                }
            }
        });
        resume_ours(ours);
        walked
    }

    /// Calls `visit` with every entry, in key order.
    pub fn for_each(&self, mut visit: impl FnMut(&[u8], u64)) -> Result<()> {
        let mut ours = None;
        let walked = self.walk(|map| {
            let mut stream = map.stream();
            while let Some((key, value)) = stream.next() {
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| visit(key, value))) {
                    ours = Some(panic);
                    break;
                }
            }
        });
        resume_ours(ours);
        walked
    }
}

/// Calls `visit(key, entries)` for every key of any of `dictionaries`, in key order, `entries`
/// naming each dictionary holding the key (its position in `dictionaries`) and its value there.
/// Stops at the first error `visit` returns.
pub fn for_each_union(
    dictionaries: &[&Dictionary],
    mut visit: impl FnMut(&[u8], &[(usize, u64)]) -> Result<()>,
) -> Result<()> {
    let maps = dictionaries
        .iter()
        .map(|d| d.map())
        .collect::<Result<Vec<_>>>()?;
    let mut entries: Vec<(usize, u64)> = Vec::with_capacity(maps.len());
    let mut ours = None;
    let walked = catch_unwind(AssertUnwindSafe(|| {
        let mut union = maps
            .iter()
            .fold(fst::map::OpBuilder::new(), |op, map| op.add(map.stream()))
            .union();
        while let Some((key, values)) = union.next() {
            entries.clear();
            entries.extend(values.iter().map(|v| (v.index, v.value)));
            entries.sort_unstable();
            match catch_unwind(AssertUnwindSafe(|| visit(key, &entries))) {
                Ok(visited) => visited?,
                Err(panic) => {
                    ours = Some(panic);
                    break;
                }
            }
        }
        Ok(())
    }));
    resume_ours(ours);
    walked.unwrap_or_else(|_| {
        Err(Error::corrupt(
            dictionaries
                .first()
                .map_or_else(|| Path::new(""), |d| d.file.path()),
            "an FST is malformed although its checksum matches (crafted file?)",
        ))
    })
}

/// Resumes a panic of Reliora's own code that a guarded walk carried out.
fn resume_ours(panic: Option<Box<dyn std::any::Any + Send>>) {
    if let Some(panic) = panic {
        std::panic::resume_unwind(panic);
    }
}

fn problem_of(error: &Error) -> FormatError {
    match error {
        Error::Corrupt { problem, .. } => problem.clone(),
        other => other.to_string().into(),
    }
}
