//! The record log: the one file that is appended to. It is read with ordinary reads and never
//! memory-mapped.
//!
//! ```text
//! header   magic b"RLOG", version u32 LE (2), log id u64 LE                  (16 bytes)
//! entry*   payload_len u32 LE, payload_crc32 u32 LE, offset u64 LE,
//!          header_crc32 u32 LE (over the 16 bytes before it), payload        (20 + len bytes)
//! ```
//!
//! The payload is [`codec::encode_log_entry`](crate::format::codec::encode_log_entry); `offset`
//! is where the entry itself starts in the file. The log id is the manifest's `logId` (see
//! manifest.rs): a log from another index or another generation does not match and is reported
//! as foreign. The log of a generation is created, header included and synced, before the
//! manifest that names it, so a missing log or one shorter than its header is damage too.
//!
//! # Torn tails and damage
//!
//! An entry is written with one `write` and synced before the command that made it is
//! acknowledged, so a crash can only leave the *last* entry unfinished: a cut header, zeros the
//! file system allocated but never wrote, a sound header whose payload is cut short, or a sound
//! header whose payload fails its checksum at the very end of the file. Readers ignore such a
//! *torn tail*; the next writer cuts it off (a tail with a sound header is first copied aside to
//! `<log>.torn-<offset>`, since a flipped bit in the last acknowledged payload looks the same).
//!
//! Anything else is damage, never taken for a torn tail: a header failing its own checksum, or
//! claiming another offset or more than [`MAX_ENTRY_LEN`] bytes, or a payload failing its
//! checksum with more log after it. The header checksum is what makes this decidable: a flipped
//! length can no longer make the rest of the log look like a torn tail. After damage the reader
//! resynchronizes — it scans for the next offset holding a sound header that names that offset
//! and a payload that matches its checksum — so every sound entry on both sides of the damage is
//! still read. Searches answer from them with a notice; writers refuse to append to a damaged
//! log (`reliora salvage` rebuilds every intact record into a new generation).
//!
//! A cut exactly at an entry boundary cannot be told from a shorter log without a committed
//! length kept outside the log, which would cost a second `fsync` per write; Reliora does not
//! pay it (README, "Reliability").
//!
//! Logs of format 1 (entries without offset and header checksum) are still read, so indexes
//! written before format 2 open and search; writers refuse to append to them and name
//! `reliora compact`, which folds such a log into a new generation.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::codec::{decode_log_entry, encode_log_entry, LogEntry};
use crate::format::fsio;

const MAGIC: [u8; 4] = *b"RLOG";
/// The log format this version writes.
pub const LOG_VERSION: u32 = 2;
/// The first log format: entries of `payload_len, payload_crc, payload`, read but never
/// appended to.
const LOG_VERSION_1: u32 = 1;
/// Bytes before the first entry.
pub const HEADER_LEN: u64 = 16;
const ENTRY_HEADER_LEN: usize = 20;
const ENTRY_HEADER_LEN_1: usize = 8;
/// Upper bound on one entry: a 1 MiB record plus its encoding overhead.
pub const MAX_ENTRY_LEN: usize = 4 << 20;
/// Upper bound on a whole log. Compaction keeps a log near 8 MiB; a larger file is not read.
pub const MAX_LOG_BYTES: u64 = 1 << 30;

/// A stretch of the log that holds no sound entry, with more log after it or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDamage {
    /// Where the damage starts.
    pub offset: u64,
    /// How many bytes were skipped to the next sound entry (or the end of the file).
    pub len: u64,
    /// What was wrong.
    pub problem: String,
}

/// What a read of the log found.
#[derive(Debug, Default)]
pub struct LogContents {
    /// Each sound entry with the offset it starts at.
    pub entries: Vec<(u64, LogEntry)>,
    /// Where the torn tail starts, if the file ends in one; else the file's length.
    pub valid_len: u64,
    /// Bytes of the file.
    pub file_len: u64,
    /// Whether the torn tail starts with a sound entry header (so the writer copies it aside
    /// before cutting it off).
    pub torn_has_header: bool,
    /// Damage found, in file order: stretches no interrupted write could have left.
    pub damage: Vec<LogDamage>,
    /// The format version in the header.
    pub version: u32,
}

impl LogContents {
    /// Bytes of the torn tail: an entry a crash interrupted, which readers ignore and the next
    /// writer cuts off (0 normally).
    pub fn torn_bytes(&self) -> u64 {
        self.file_len - self.valid_len
    }

    /// The damage as one error naming the file, each damaged offset and the remedy, if any.
    pub fn damage_error(&self, path: &Path) -> Option<Error> {
        let first = self.damage.first()?;
        let more = match self.damage.len() {
            1 => String::new(),
            n => format!(" (and {} more damaged stretches)", n - 1),
        };
        Some(Error::corrupt(
            path,
            format!(
                "{} bytes at offset {}: {}{more}; the {} sound entries around it are still read",
                first.len,
                first.offset,
                first.problem,
                self.entries.len()
            ),
        ))
    }
}

fn header(version: u32, log_id: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[0..4].copy_from_slice(&MAGIC);
    h[4..8].copy_from_slice(&version.to_le_bytes());
    h[8..16].copy_from_slice(&log_id.to_le_bytes());
    h
}

/// Creates the empty log of a new generation (header only), synced with its directory entry,
/// before any manifest names it. Fails if the name exists, a link included.
pub fn create_log(path: &Path, log_id: u64) -> Result<()> {
    let mut file = fsio::create_new(path).map_err(|e| Error::io(path, e))?;
    file.write_all(&header(LOG_VERSION, log_id))
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(path, e))?;
    if let Some(dir) = path.parent() {
        crate::format::manifest::sync_dir(dir)?;
    }
    Ok(())
}

/// Reads the log at `path`, whose header must carry `log_id`.
pub fn read_log(path: &Path, log_id: u64) -> Result<LogContents> {
    let bytes = read_log_bytes(path, fsio::open_read)?.1;
    parse_log(&bytes, path, Some(log_id))
}

/// Reads the log at `path` whatever log id its header carries (`reliora salvage`, which may
/// have no manifest to name it).
pub fn read_any_log(path: &Path) -> Result<LogContents> {
    let bytes = read_log_bytes(path, fsio::open_read)?.1;
    parse_log(&bytes, path, None)
}

fn read_log_bytes(
    path: &Path,
    open: fn(&Path) -> std::io::Result<File>,
) -> Result<(File, Vec<u8>)> {
    let mut file = match open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::corrupt(
                path,
                "the record log named by the manifest is missing",
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            return Err(Error::corrupt(path, e.to_string()))
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len > MAX_LOG_BYTES {
        return Err(Error::corrupt(
            path,
            format!("the record log is {len} bytes, over the {MAX_LOG_BYTES}-byte bound"),
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    (&mut file)
        .take(MAX_LOG_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok((file, bytes))
}

fn parse_log(bytes: &[u8], path: &Path, log_id: Option<u64>) -> Result<LogContents> {
    let Some(found) = bytes.get(..HEADER_LEN as usize) else {
        return Err(Error::corrupt(
            path,
            format!(
                "the record log is {} bytes, shorter than its {HEADER_LEN}-byte header (truncated)",
                bytes.len()
            ),
        ));
    };
    if found[0..4] != MAGIC {
        return Err(Error::corrupt(path, "not a record log (bad magic)"));
    }
    let version = u32::from_le_bytes(found[4..8].try_into().expect("4 bytes"));
    let id = u64::from_le_bytes(found[8..16].try_into().expect("8 bytes"));
    if log_id.is_some_and(|expected| expected != id) {
        return Err(Error::corrupt(
            path,
            "the record log belongs to another index or generation (its log id differs from the manifest's)",
        ));
    }
    let mut contents = LogContents {
        file_len: bytes.len() as u64,
        version,
        ..LogContents::default()
    };
    match version {
        LOG_VERSION => parse_entries(bytes, &mut contents),
        LOG_VERSION_1 => parse_entries_1(bytes, path, &mut contents)?,
        other => {
            return Err(Error::corrupt(
                path,
                format!(
                    "the record log has format version {other}, which this Reliora cannot read"
                ),
            ))
        }
    }
    Ok(contents)
}

/// An entry header that checks out at `at`: its payload length.
fn sound_header(bytes: &[u8], at: usize) -> Option<(usize, u32)> {
    let h = bytes.get(at..at + ENTRY_HEADER_LEN)?;
    let len = u32::from_le_bytes(h[0..4].try_into().expect("4 bytes")) as usize;
    let payload_crc = u32::from_le_bytes(h[4..8].try_into().expect("4 bytes"));
    let offset = u64::from_le_bytes(h[8..16].try_into().expect("8 bytes"));
    let header_crc = u32::from_le_bytes(h[16..20].try_into().expect("4 bytes"));
    (crc32fast::hash(&h[..16]) == header_crc && offset == at as u64 && len <= MAX_ENTRY_LEN)
        .then_some((len, payload_crc))
}

/// Whether a whole sound entry (header and payload) starts at `at`.
fn sound_entry_at(bytes: &[u8], at: usize) -> bool {
    sound_header(bytes, at).is_some_and(|(len, crc)| {
        let start = at + ENTRY_HEADER_LEN;
        bytes
            .get(start..start + len)
            .is_some_and(|payload| crc32fast::hash(payload) == crc)
    })
}

/// The first offset after `from` where a whole sound entry starts. An entry names its own
/// offset, so only positions whose offset field matches are checksummed.
fn resync(bytes: &[u8], from: usize) -> Option<usize> {
    (from + 1..bytes.len().saturating_sub(ENTRY_HEADER_LEN - 1)).find(|&at| {
        bytes[at + 8..at + 16] == (at as u64).to_le_bytes() && sound_entry_at(bytes, at)
    })
}

fn parse_entries(bytes: &[u8], contents: &mut LogContents) {
    let mut at = HEADER_LEN as usize;
    let end_of_file = bytes.len();
    while at < end_of_file {
        let rest = &bytes[at..];
        if rest.len() < ENTRY_HEADER_LEN || rest.iter().all(|&b| b == 0) {
            // Torn: a cut entry header, or space the file system allocated for an append that
            // a crash kept from being written (it reads as zeros).
            contents.valid_len = at as u64;
            return;
        }
        let Some((len, crc)) = sound_header(bytes, at) else {
            let next = resync(bytes, at);
            contents.damage.push(LogDamage {
                offset: at as u64,
                len: (next.unwrap_or(end_of_file) - at) as u64,
                problem: "an entry header fails its checksum (or names another offset or an \
                          impossible length)"
                    .to_string(),
            });
            match next {
                Some(next) => {
                    at = next;
                    continue;
                }
                None => break,
            }
        };
        let end = at + ENTRY_HEADER_LEN + len;
        if end > end_of_file {
            // Torn: a sound header whose payload the crash cut short.
            contents.valid_len = at as u64;
            contents.torn_has_header = true;
            return;
        }
        let payload = &bytes[at + ENTRY_HEADER_LEN..end];
        if crc32fast::hash(payload) != crc {
            if end == end_of_file {
                // Torn: the last payload partly written.
                contents.valid_len = at as u64;
                contents.torn_has_header = true;
                return;
            }
            contents.damage.push(LogDamage {
                offset: at as u64,
                len: (end - at) as u64,
                problem: "an entry's payload fails its checksum".to_string(),
            });
        } else {
            match decode_log_entry(payload) {
                Ok(entry) => contents.entries.push((at as u64, entry)),
                Err(problem) => contents.damage.push(LogDamage {
                    offset: at as u64,
                    len: (end - at) as u64,
                    problem: format!("an entry does not decode: {problem}"),
                }),
            }
        }
        at = end;
    }
    contents.valid_len = end_of_file as u64;
}

/// Format 1: no entry offsets and no header checksums, so damage cannot be told from a torn
/// tail as surely; read as that format's readers did.
fn parse_entries_1(bytes: &[u8], path: &Path, contents: &mut LogContents) -> Result<()> {
    let mut at = HEADER_LEN as usize;
    contents.valid_len = HEADER_LEN;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.len() < ENTRY_HEADER_LEN_1 || rest.iter().all(|&b| b == 0) {
            break;
        }
        let len = u32::from_le_bytes(rest[0..4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes"));
        if len > MAX_ENTRY_LEN {
            return Err(Error::corrupt(
                path,
                format!("log entry at offset {at} claims {len} bytes"),
            ));
        }
        let end = at + ENTRY_HEADER_LEN_1 + len;
        if end > bytes.len() {
            break;
        }
        let payload = &rest[ENTRY_HEADER_LEN_1..ENTRY_HEADER_LEN_1 + len];
        let sound = crc32fast::hash(payload) == crc;
        if !sound && end == bytes.len() {
            break;
        }
        if !sound {
            return Err(Error::corrupt(
                path,
                format!("log entry at offset {at} fails its checksum"),
            ));
        }
        let entry = decode_log_entry(payload).map_err(|problem| {
            Error::corrupt(path, format!("log entry at offset {at}: {problem}"))
        })?;
        contents.entries.push((at as u64, entry));
        at = end;
        contents.valid_len = at as u64;
    }
    Ok(())
}

/// The bytes of one entry at `offset`, as [`LogAppender::append`] writes them.
fn encode_entry(entry: &LogEntry, offset: u64) -> Vec<u8> {
    let payload = encode_log_entry(entry);
    let mut bytes = Vec::with_capacity(ENTRY_HEADER_LEN + payload.len());
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&offset.to_le_bytes());
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

/// Appends entries to the log; only the writer holding the index lock has one.
pub struct LogAppender {
    file: File,
    path: PathBuf,
    len: u64,
}

impl LogAppender {
    /// Opens the existing log whose header carries `log_id` for appending. A torn tail is cut
    /// off (copied aside first when it starts with a sound header); a damaged log, or one of
    /// format 1, is refused with the command that heals it — nothing is ever cut but a tail
    /// an interrupted write left.
    pub fn open(path: &Path, log_id: u64) -> Result<(LogAppender, LogContents)> {
        let (file, bytes) = read_log_bytes(path, fsio::open_read_write)?;
        let contents = parse_log(&bytes, path, Some(log_id))?;
        if let Some(damage) = contents.damage_error(path) {
            return Err(refuse_write(damage));
        }
        if contents.version != LOG_VERSION {
            return Err(Error::corrupt(
                path,
                format!(
                    "the record log has format version {} and is read but never appended to; \
                     run `reliora compact` to fold it into a new generation, then write again",
                    contents.version
                ),
            ));
        }
        let len = contents.valid_len;
        if contents.file_len > len {
            if contents.torn_has_header {
                set_aside(path, len, &bytes[len as usize..])?;
            }
            file.set_len(len).map_err(|e| Error::io(path, e))?;
            file.sync_all().map_err(|e| Error::io(path, e))?;
        }
        Ok((
            LogAppender {
                file,
                path: path.to_path_buf(),
                len,
            },
            contents,
        ))
    }

    /// Where the next entry will start.
    pub fn position(&self) -> u64 {
        self.len
    }

    /// Appends `entry` and syncs it to disk before returning its offset: once this returns, the
    /// entry survives a crash.
    pub fn append(&mut self, entry: &LogEntry) -> Result<u64> {
        let offset = self.len;
        let bytes = encode_entry(entry, offset);
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(&self.path, e))?;
        let written = self
            .file
            .write_all(&bytes)
            .and_then(|_| self.file.sync_data());
        if let Err(e) = written {
            // Leave no half entry behind for readers to trip over.
            let _ = self.file.set_len(offset);
            return Err(Error::io(&self.path, e));
        }
        self.len += bytes.len() as u64;
        Ok(offset)
    }
}

/// A write that found damage refuses, naming the damage and the command that recovers every
/// intact record.
pub fn refuse_write(damage: Error) -> Error {
    match damage {
        Error::Corrupt { file, problem } if !problem.contains("reliora salvage") => {
            Error::Corrupt {
                file,
                problem: format!(
                    "{problem} — the write was refused, so nothing acknowledged is lost; run \
                 `reliora salvage` to rebuild every intact record into a new generation"
                ),
            }
        }
        other => other,
    }
}

/// Copies a torn tail that starts with a sound header to `<log>.torn-<offset>` before the
/// writer cuts it: it may be the last acknowledged entry with a flipped bit rather than an
/// interrupted write.
fn set_aside(path: &Path, offset: u64, tail: &[u8]) -> Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".torn-{offset}"));
    let aside = path.with_file_name(name);
    let mut file = match fsio::create_new(&aside) {
        Ok(file) => file,
        // Set aside by an earlier writer that failed to cut it.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(Error::io(&aside, e)),
    };
    file.write_all(tail)
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(&aside, e))?;
    if let Some(dir) = path.parent() {
        crate::format::manifest::sync_dir(dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delete(id: &str) -> LogEntry {
        LogEntry::Delete { id: id.into() }
    }

    /// A log of `n` delete entries; returns its bytes and each entry's offset.
    fn log_of(path: &Path, n: usize) -> (Vec<u8>, Vec<u64>) {
        create_log(path, 1).unwrap();
        let (mut log, _) = LogAppender::open(path, 1).unwrap();
        let offsets = (0..n)
            .map(|i| log.append(&delete(&format!("record-{i}"))).unwrap())
            .collect();
        (std::fs::read(path).unwrap(), offsets)
    }

    fn ids(contents: &LogContents) -> Vec<String> {
        contents
            .entries
            .iter()
            .map(|(_, e)| match e {
                LogEntry::Delete { id } => id.clone(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn appended_entries_read_back_and_torn_tails_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g000001.log");
        assert!(read_log(&path, 1).is_err(), "a missing log is damage");
        let (full, offsets) = log_of(&path, 2);
        assert!(create_log(&path, 1).is_err(), "never overwrites a log");
        assert_eq!(offsets[0], HEADER_LEN);
        let read = read_log(&path, 1).unwrap();
        assert_eq!(
            read.entries,
            vec![
                (offsets[0], delete("record-0")),
                (offsets[1], delete("record-1"))
            ]
        );
        assert!(read.damage.is_empty());

        // A torn tail: the last entry's payload cut short. The next writer copies it aside and
        // appends after the last sound entry.
        std::fs::write(&path, &full[..full.len() - 2]).unwrap();
        let read = read_log(&path, 1).unwrap();
        assert_eq!(ids(&read), ["record-0"]);
        assert_eq!(read.torn_bytes(), full.len() as u64 - 2 - offsets[1]);
        assert!(read.damage.is_empty());
        let (mut log, _) = LogAppender::open(&path, 1).unwrap();
        assert_eq!(log.position(), offsets[1]);
        let aside = dir.path().join(format!("g000001.log.torn-{}", offsets[1]));
        assert_eq!(
            std::fs::read(&aside).unwrap(),
            &full[offsets[1] as usize..full.len() - 2]
        );
        log.append(&delete("c")).unwrap();
        assert_eq!(ids(&read_log(&path, 1).unwrap()), ["record-0", "c"]);

        // A cut entry header and a tail of zeros are torn too, and cut without a copy.
        for tail in [
            &[0u8; 40][..],
            &full[offsets[1] as usize..offsets[1] as usize + 7],
        ] {
            let mut bytes = full[..offsets[1] as usize].to_vec();
            bytes.extend_from_slice(tail);
            std::fs::write(&path, &bytes).unwrap();
            let read = read_log(&path, 1).unwrap();
            assert_eq!(
                (ids(&read).len(), read.torn_bytes()),
                (1, tail.len() as u64)
            );
            assert!(!read.torn_has_header && read.damage.is_empty());
        }

        // A torn tail by checksum: the last payload's bytes not all written.
        let mut bytes = full.clone();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(&path, &bytes).unwrap();
        let read = read_log(&path, 1).unwrap();
        assert_eq!((read.entries.len(), read.damage.len()), (1, 0));

        // A log of another generation or index is foreign.
        std::fs::write(&path, &full).unwrap();
        let err = read_log(&path, 2).unwrap_err().to_string();
        assert!(err.contains("another index"), "{err}");
        // A log cut inside its header is damage, not an empty log.
        std::fs::write(&path, &full[..HEADER_LEN as usize - 1]).unwrap();
        let err = read_log(&path, 1).unwrap_err().to_string();
        assert!(err.contains("shorter than its"), "{err}");
    }

    /// Every bit of every entry header, flipped: never a torn tail, every other entry still
    /// read, the damage named by offset, and a writer refuses instead of cutting.
    #[test]
    fn a_flipped_header_bit_is_damage_and_every_other_entry_survives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g000001.log");
        let (full, offsets) = log_of(&path, 4);
        for (i, &offset) in offsets.iter().enumerate() {
            for byte in 0..ENTRY_HEADER_LEN {
                for bit in 0..8 {
                    let mut bytes = full.clone();
                    bytes[offset as usize + byte] ^= 1 << bit;
                    std::fs::write(&path, &bytes).unwrap();
                    let read = read_log(&path, 1).unwrap();
                    let expected: Vec<String> = (0..4)
                        .filter(|&j| j != i)
                        .map(|j| format!("record-{j}"))
                        .collect();
                    assert_eq!(ids(&read), expected, "entry {i}, byte {byte}, bit {bit}");
                    assert_eq!(read.damage.len(), 1, "entry {i}, byte {byte}, bit {bit}");
                    assert_eq!(read.damage[0].offset, offset);
                    assert_eq!(read.torn_bytes(), 0);
                    let refused = LogAppender::open(&path, 1).err().expect("a writer refuses");
                    let message = refused.to_string();
                    assert!(message.contains("reliora salvage"), "{message}");
                    assert!(message.contains(&format!("offset {offset}")), "{message}");
                    assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing was cut");
                }
            }
        }
    }

    #[test]
    fn a_damaged_payload_in_the_middle_and_appended_garbage_are_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g000001.log");
        let (full, offsets) = log_of(&path, 3);
        let mut bytes = full.clone();
        bytes[offsets[1] as usize + ENTRY_HEADER_LEN + 2] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let read = read_log(&path, 1).unwrap();
        assert_eq!(ids(&read), ["record-0", "record-2"]);
        assert_eq!(read.damage[0].offset, offsets[1]);
        assert!(LogAppender::open(&path, 1).is_err());

        // Garbage no interrupted write could leave: a tail with a header that is not sound.
        let mut bytes = full.clone();
        bytes.extend_from_slice(b"not a log entry at all");
        std::fs::write(&path, &bytes).unwrap();
        let read = read_log(&path, 1).unwrap();
        assert_eq!(ids(&read).len(), 3);
        assert_eq!(read.damage[0].offset, full.len() as u64);
        let err = read.damage_error(&path).unwrap().to_string();
        assert!(err.contains(&format!("offset {}", full.len())), "{err}");
        assert!(LogAppender::open(&path, 1).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing was cut");
    }

    #[test]
    fn a_format_1_log_is_read_but_not_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g000001.log");
        let mut bytes = header(LOG_VERSION_1, 7).to_vec();
        for id in ["a", "b"] {
            let payload = encode_log_entry(&delete(id));
            bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
            bytes.extend_from_slice(&payload);
        }
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(ids(&read_log(&path, 7).unwrap()), ["a", "b"]);
        let err = LogAppender::open(&path, 7).err().unwrap().to_string();
        assert!(err.contains("reliora compact"), "{err}");
    }
}
