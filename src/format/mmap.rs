//! Read-only memory maps, and advice on memory: the one place Reliora uses `unsafe`.
//!
//! # Safety
//!
//! Mapping a file is `unsafe` because another process could change or truncate it while it is
//! mapped. Reliora only maps index files, which are write-once: a file is fully written, synced
//! and named by a manifest before any reader opens it, is never modified in place afterwards, and
//! is deleted (unlinked) only when no generation names it — unlinking keeps the mapped pages
//! alive. Files that are appended to (the record log) are never mapped.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{Error, Result};

/// A whole index file mapped read-only, shared between the structures that read it.
#[derive(Clone)]
pub struct MappedFile {
    bytes: Arc<Bytes>,
    path: Arc<PathBuf>,
    /// Bytes [`MappedFile::populate`] asked the kernel to map so far.
    populated: Arc<AtomicUsize>,
}

enum Bytes {
    Mapped(Mmap),
    Empty,
    /// A file of a memory directory (format/directory.rs).
    Memory(Arc<Vec<u8>>),
}

impl MappedFile {
    /// Maps `path` read-only.
    pub fn open(path: &Path) -> Result<MappedFile> {
        let file = crate::format::fsio::open_read(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => Error::corrupt(path, e.to_string()),
            _ => Error::io(path, e),
        })?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let bytes = if len == 0 {
            // Zero-length maps are not portable; an empty file is simply empty.
            Bytes::Empty
        } else {
            // SAFETY: index files are write-once and never modified in place (module docs);
            // the map is read-only and every read is bounds-checked against its length.
            Bytes::Mapped(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?)
        };
        Ok(MappedFile {
            bytes: Arc::new(bytes),
            path: Arc::new(path.to_path_buf()),
            populated: Arc::default(),
        })
    }

    /// A file held in memory, named `path` in error messages.
    pub fn from_memory(path: &Path, bytes: Arc<Vec<u8>>) -> MappedFile {
        MappedFile {
            bytes: Arc::new(Bytes::Memory(bytes)),
            path: Arc::new(path.to_path_buf()),
            populated: Arc::default(),
        }
    }

    /// The file's path, for error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Unmaps the pages read so far from this process (the data stays in the page cache; a
    /// later read maps it again). A pass over a large file — merging segments — calls this as
    /// it goes, so the pages it read do not add up in its resident memory.
    pub fn release_pages(&self) {
        #[cfg(unix)]
        if let Bytes::Mapped(map) = &*self.bytes {
            // SAFETY: the map is a read-only shared mapping of a write-once file (module docs):
            // MADV_DONTNEED only drops this process's page-table entries, and the next read of a
            // page faults in the same bytes from the file. No reference into the map becomes
            // invalid. The advice is a hint: failing to take it changes nothing.
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }

    /// Maps `range` into this process in one call (`MADV_POPULATE_READ`) before it is read
    /// whole: one system call instead of a page fault every few pages. A hint: where the
    /// kernel does not know it (before Linux 5.14), the reads fault the pages in as before.
    /// At most the file's length is asked for in all: a long-lived process, whose pages stay
    /// mapped, stops asking once it could have mapped the whole file.
    pub fn populate(&self, range: std::ops::Range<usize>) {
        #[cfg(target_os = "linux")]
        if let Bytes::Mapped(map) = &*self.bytes {
            let len = range.end.saturating_sub(range.start);
            if len > 0
                && range.end <= map.len()
                && self.populated.load(Ordering::Relaxed) < map.len()
                && self.populated.fetch_add(len, Ordering::Relaxed) + len <= map.len()
            {
                let _ = map.advise_range(
                    memmap2::Advice::PopulateRead,
                    range.start,
                    range.end - range.start,
                );
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }

    /// A shared view of `range` of this file.
    pub fn slice(&self, start: usize, end: usize) -> FileSlice {
        assert!(start <= end && end <= self.len(), "slice out of bounds");
        FileSlice {
            file: self.clone(),
            start,
            end,
        }
    }
}

impl Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &*self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Empty => &[],
            Bytes::Memory(bytes) => bytes,
        }
    }
}

/// Asks the kernel to back the whole 2 MiB pages of `array`'s allocation with transparent huge
/// pages as they are first written: a per-record work array of megabytes is then faulted in a
/// few times instead of once per 4 KiB page. The allocator's own memory does not use them (a
/// small process would clear 2 MiB pages it barely uses). A hint; arrays under 4 MiB are left
/// alone.
pub fn prefer_huge_pages<T>(array: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = array.capacity() * std::mem::size_of::<T>();
        if bytes < 2 * HUGE {
            return;
        }
        let start = array.as_mut_ptr() as usize;
        let (first, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
        if first < end {
            // SAFETY: [first, end) lies inside the allocation `array` owns (its capacity), held
            // mutably here. MADV_HUGEPAGE changes no byte and invalidates no pointer: it only
            // lets later page faults in the range be served by huge pages. Failing to take the
            // advice changes nothing.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = array;
}

/// A cheap, cloneable sub-range of a mapped file (for example an FST body without its footer).
#[derive(Clone)]
pub struct FileSlice {
    file: MappedFile,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for FileSlice {
    fn as_ref(&self) -> &[u8] {
        &self.file[self.start..self.end]
    }
}

impl Deref for FileSlice {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_ref()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The lines of the `/proc/self/smaps` entry of the mapping holding `address`.
    fn smaps_entry(address: usize) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        // A mapping's header starts with its address range; its fields with `Name:`.
        let range_of = |line: &str| {
            let first = line.split_whitespace().next()?;
            let (a, b) = first.split_once('-')?;
            Some((
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            ))
        };
        let mut lines = smaps.lines().skip_while(|line| {
            !range_of(line).is_some_and(|(start, end)| start <= address && address < end)
        });
        lines.next().expect("a mapping holds the address");
        lines
            .take_while(|line| range_of(line).is_none())
            .map(str::to_string)
            .collect()
    }

    fn field_kb(entry: &[String], name: &str) -> u64 {
        let line = entry
            .iter()
            .find(|l| l.starts_with(&format!("{name}:")))
            .expect("field");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[test]
    fn populating_a_range_maps_its_pages_at_once_linux_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        std::fs::write(&path, vec![7u8; 4 << 20]).unwrap();
        let file = MappedFile::open(&path).unwrap();
        let address = file.as_ptr() as usize;
        assert_eq!(
            field_kb(&smaps_entry(address), "Rss"),
            0,
            "nothing read yet"
        );
        file.populate(0..(2 << 20));
        let rss = field_kb(&smaps_entry(address), "Rss");
        assert!(
            (2048..4096).contains(&rss),
            "2 MiB mapped, not more: {rss} kB"
        );
        // Out of bounds or empty: nothing, and no panic.
        file.populate(0..(5 << 20));
        file.populate(3..3);
        assert_eq!(file[4 << 19], 7);
        // Pages unmapped, asked again: mapped again, up to the file's length in all.
        file.release_pages();
        file.populate(0..(1 << 20));
        let rss = field_kb(&smaps_entry(address), "Rss");
        // (The page cache may hold the file in folios larger than a page, mapped whole.)
        assert!((1024..=2048).contains(&rss), "1 MiB mapped again: {rss} kB");
        file.release_pages();
        file.populate(0..(2 << 20));
        let rss = field_kb(&smaps_entry(address), "Rss");
        assert_eq!(rss, 0, "the file's length was asked for already: {rss} kB");
    }

    #[test]
    fn huge_page_advice_marks_a_large_array_linux_only() {
        let mut large: Vec<u64> = Vec::with_capacity(1 << 20); // 8 MiB
        prefer_huge_pages(&mut large);
        let address = (large.as_ptr() as usize).next_multiple_of(2 << 20);
        let flags = smaps_entry(address)
            .into_iter()
            .find(|l| l.starts_with("VmFlags:"))
            .unwrap();
        // Kernels built without transparent huge pages refuse the advice.
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            assert!(flags.contains(" hg"), "{flags}");
        }
        large.resize(1 << 20, 3);
        assert!(large.iter().all(|&x| x == 3));
    }
}
