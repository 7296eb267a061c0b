//! Read-only memory maps, and advice on memory: the one place Reliora uses `unsafe`.
//!
//! # Safety
//!
//! Mapping a file is `unsafe` because another process could change or truncate it while it is
//! mapped. Reliora only maps index files, which are write-once: a file is fully written, synced
//! and named by a manifest before any reader opens it, is never modified in place afterwards, and
//! is deleted (unlinked) only when no generation names it — unlinking keeps the mapped pages
//! alive. Files that are appended to (the record log) are never mapped.
//!
//! The per-record work arrays of a search ([`WorkArray`]) are slices over memory they own
//! alone — an anonymous mapping or a vector — made from a pointer kept beside it, as a `Vec`
//! does; their element types ([`Zeroed`]) read all-zero bytes as the number 0.

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

/// Values whose all-zero bytes are their default value, zero: what a fresh anonymous mapping
/// holds. The element types of the per-record work arrays ([`WorkArray`]).
pub trait Zeroed: Copy + Default + Send + Sync + 'static + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! zeroed {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Zeroed for $t {}
    )*};
}
zeroed!(u16, u32, u64);

/// The size of a transparent huge page on x86-64 and most Linux systems.
const HUGE_PAGE: usize = 2 << 20;

/// A per-record work array of a search (a segment's sums, masks…): megabytes at a million
/// records, zero when it arrives. Arrays of [`WorkArray::MAPPED_FROM`] bytes and more lie in an
/// anonymous mapping of their own, starting on a 2 MiB boundary and rounded up to whole 2 MiB
/// pages, which the kernel is asked to back with transparent huge pages: a fresh process then
/// faults a million-record array in two or four times instead of once per 4 KiB page (a
/// thousand times), and nothing clears it before the kernel does. Smaller arrays are on the
/// heap. A hint only: without huge pages the array is the same, faulted page by page.
///
/// Its length can change within its capacity ([`WorkArray::resize_within`]), keeping the values
/// there, so that a pool hands it from search to search.
pub struct WorkArray<T: Zeroed> {
    /// The first value: in `memory`, aligned for `T`, and `capacity` initialized values long.
    start: std::ptr::NonNull<T>,
    len: usize,
    capacity: usize,
    /// What owns the values (never read through: `start` is).
    memory: Memory<T>,
}

/// Held to be freed with the array, never read (its values are, through `start`).
enum Memory<T> {
    None,
    Heap { _values: Vec<T> },
    Mapped { _map: memmap2::MmapMut },
}

// SAFETY: a `WorkArray` owns its values alone (like a `Vec<T>`): `start` points into memory no
// other value refers to, read through `&self` and written through `&mut self` only, and `T` is
// a plain number (`Zeroed`), `Send` and `Sync`.
unsafe impl<T: Zeroed> Send for WorkArray<T> {}
// SAFETY: as for `Send`: shared references give shared access to the values alone.
unsafe impl<T: Zeroed> Sync for WorkArray<T> {}

impl<T: Zeroed> WorkArray<T> {
    /// Arrays of at least this many bytes are mapped on their own (below it, the 4 KiB faults
    /// of a heap array cost less than clearing a whole 2 MiB page).
    pub const MAPPED_FROM: usize = HUGE_PAGE / 2;

    /// An array of `len` zeros.
    pub fn zeroed(len: usize) -> WorkArray<T> {
        if len == 0 {
            return WorkArray::default();
        }
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        if bytes >= Self::MAPPED_FROM {
            if let Some(array) = Self::mapped(len, bytes) {
                return array;
            }
        }
        let mut heap = vec![T::default(); len];
        WorkArray {
            start: std::ptr::NonNull::new(heap.as_mut_ptr()).expect("a vector's pointer"),
            len,
            capacity: len,
            memory: Memory::Heap { _values: heap },
        }
    }

    /// `len` zeros in a mapping of their own, from a 2 MiB boundary, or `None` when the
    /// mapping is refused (the caller falls back on the heap).
    fn mapped(len: usize, bytes: usize) -> Option<WorkArray<T>> {
        let reserved = bytes.checked_next_multiple_of(HUGE_PAGE)?;
        // The mapping starts on a page boundary; a 2 MiB one lies less than 2 MiB after it.
        let mut map = memmap2::MmapMut::map_anon(reserved.checked_add(HUGE_PAGE)?).ok()?;
        let base = map.as_mut_ptr();
        let offset = (base as usize).next_multiple_of(HUGE_PAGE) - base as usize;
        // Failing to take the advice changes nothing.
        #[cfg(target_os = "linux")]
        let _ = map.advise_range(memmap2::Advice::HugePage, offset, reserved);
        // SAFETY: `offset + reserved` ≤ the mapping's length (`offset` < 2 MiB), so the pointer
        // stays inside the mapping; it is 2 MiB-aligned, hence aligned for `T`.
        let start = unsafe { base.add(offset) }.cast::<T>();
        Some(WorkArray {
            start: std::ptr::NonNull::new(start)?,
            len,
            capacity: reserved / std::mem::size_of::<T>(),
            memory: Memory::Mapped { _map: map },
        })
    }

    /// How long the array can be made without new memory.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Makes the array `len` values long when its capacity allows, keeping the values it holds
    /// there (zero where it was never written); false, unchanged, when it does not.
    pub fn resize_within(&mut self, len: usize) -> bool {
        if len > self.capacity {
            return false;
        }
        self.len = len;
        true
    }

    /// Whether the array lies in a mapping of its own.
    pub fn is_mapped(&self) -> bool {
        matches!(self.memory, Memory::Mapped { .. })
    }
}

impl<T: Zeroed> Default for WorkArray<T> {
    fn default() -> WorkArray<T> {
        WorkArray {
            start: std::ptr::NonNull::dangling(),
            len: 0,
            capacity: 0,
            memory: Memory::None,
        }
    }
}

impl<T: Zeroed> Deref for WorkArray<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `start` is aligned and points to `capacity` ≥ `len` initialized values of
        // `T` (a vector's values, or a mapping, zero until written, which every `T` reads as a
        // number), owned by `self.memory` for as long as `self` lives; no `&mut` to them
        // exists while `&self` does. An empty array's dangling pointer is aligned and non-null.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T: Zeroed> std::ops::DerefMut for WorkArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`; `&mut self` makes this the only reference to the values.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl<T: Zeroed + std::fmt::Debug> std::fmt::Debug for WorkArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
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
    fn work_arrays_come_zeroed_and_large_ones_aligned_for_huge_pages() {
        // A million-record segment's sums: under 4 MiB, on a 2 MiB boundary all the same.
        let mut sums: WorkArray<u32> = WorkArray::zeroed(1_000_000);
        assert!(sums.is_mapped());
        assert_eq!(sums.as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(sums.len(), 1_000_000);
        assert_eq!(sums.capacity(), 2 * HUGE_PAGE / 4);
        assert!(sums.iter().all(|&x| x == 0));
        sums[999_999] = 7;
        sums[0] = 3;
        // Shorter and longer again within its capacity: the values stay, the rest is zero.
        assert!(sums.resize_within(10));
        assert_eq!(sums.len(), 10);
        assert!(sums.resize_within(sums.capacity()));
        assert_eq!((sums[0], sums[999_999], sums[1_000_000]), (3, 7, 0));
        assert!(!sums.resize_within(sums.capacity() + 1));
        assert_eq!(sums.len(), sums.capacity());

        // Small arrays are on the heap; empty ones nowhere.
        let small: WorkArray<u16> = WorkArray::zeroed(1000);
        assert!(!small.is_mapped());
        assert_eq!(&*small, &[0u16; 1000][..]);
        let empty: WorkArray<u64> = WorkArray::zeroed(0);
        assert!(empty.is_empty() && !empty.is_mapped());
        assert_eq!(WorkArray::<u64>::MAPPED_FROM, 1 << 20);
        let just: WorkArray<u64> = WorkArray::zeroed((1 << 20) / 8);
        assert!(just.is_mapped());
    }

    #[test]
    fn a_large_work_array_asks_for_huge_pages_where_the_kernel_has_them() {
        let sums: WorkArray<u32> = WorkArray::zeroed(1_000_000);
        let flags = smaps_entry(sums.as_ptr() as usize)
            .into_iter()
            .find(|l| l.starts_with("VmFlags:"))
            .unwrap();
        // Kernels built without transparent huge pages refuse the advice.
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            assert!(flags.contains(" hg"), "{flags}");
        } else {
            println!("no transparent huge pages in this kernel: the advice is not checked");
        }
    }
}
