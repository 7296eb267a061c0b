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
//! *torn tail*; the next writer cuts it off. Only bytes after the committed length (below) can
//! be a torn tail.
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
//! # The committed length
//!
//! Beside the log, `g<generation>.commit` records how many bytes of it were acknowledged:
//!
//! ```text
//! slot 0, slot 1   each: sequence u64 LE, committed length u64 LE,
//!                  CRC-32 of those 16 bytes followed by the log id (u64 LE)
//! ```
//!
//! After an entry is appended and synced, the writer writes the next sequence number and the new
//! length into the slot it did not write last, and syncs again; only then is the write
//! acknowledged. Readers take the slot with the higher sequence; a slot never written is zeros,
//! and one failing its checksum (damaged, or copied from another log) is damage. Everything before the committed length was acknowledged, so there a cut, a short
//! file or an entry failing its checksum is damage — even at the very end, even at an entry
//! boundary. Only bytes after it can be a torn tail. Readers read entries up to the committed
//! length; a sound entry after it is a write whose command never returned. The cost is a second
//! `fsync` per write (README, "The record log").
//!
//! Logs of format 1 (entries without offset and header checksum) are still read, so indexes
//! written before format 2 open and search; writers refuse to append to them and name
//! `reliora compact`, which folds such a log into a new generation.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::bytes::{u32_at, u64_at};
use crate::format::codec::{decode_log_entry, encode_log_entry, LogEntry};
use crate::format::fsio;
use crate::format::FormatError;

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

/// The committed-length file beside the log at `path` (`g000001.log` → `g000001.commit`).
pub fn commit_path(path: &Path) -> PathBuf {
    path.with_extension("commit")
}

const SLOT_LEN: usize = 20;

/// A slot's checksum covers its 16 bytes and the log id, so a committed length copied in from
/// another log fails it.
fn slot_crc(bytes: &[u8], log_id: u64) -> [u8; 4] {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..16]);
    hasher.update(&log_id.to_le_bytes());
    hasher.finalize().to_le_bytes()
}

fn slot(sequence: u64, len: u64, log_id: u64) -> [u8; SLOT_LEN] {
    let mut slot = [0u8; SLOT_LEN];
    slot[0..8].copy_from_slice(&sequence.to_le_bytes());
    slot[8..16].copy_from_slice(&len.to_le_bytes());
    let crc = slot_crc(&slot, log_id);
    slot[16..20].copy_from_slice(&crc);
    slot
}

/// The slot with the higher sequence: (sequence, committed length). A slot never written is
/// zeros; any other slot failing its checksum is damage — a 20-byte write within one sector
/// does not tear in practice, and reading past a damaged newest slot would take the last
/// acknowledged entry for an unacknowledged one.
fn committed(bytes: &[u8], log_id: u64) -> std::result::Result<(u64, u64), FormatError> {
    if bytes.len() != 2 * SLOT_LEN {
        return Err(format!("{} bytes, not {}", bytes.len(), 2 * SLOT_LEN).into());
    }
    let mut newest = None;
    for (n, s) in bytes.chunks_exact(SLOT_LEN).enumerate() {
        if s.iter().all(|&b| b == 0) {
            continue;
        }
        FormatError::check_crc(
            || format!("slot {n}"),
            u32_at(s, 16),
            u32::from_le_bytes(slot_crc(s, log_id)),
        )
        .map_err(|problem| problem.noted("damaged, or copied from another log"))?;
        newest = newest.max(Some((u64_at(s, 0), u64_at(s, 8))));
    }
    newest.ok_or_else(|| "no slot was ever written".into())
}

/// Reads the committed length of the log at `log`: (sequence, length).
fn read_committed(log: &Path, log_id: u64) -> Result<(u64, u64)> {
    let path = commit_path(log);
    let bytes = fsio::read_bounded(&path, 2 * SLOT_LEN as u64).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::corrupt(
            &path,
            "the record log's committed length is missing (it is created with the log)",
        ),
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput => {
            Error::corrupt(&path, e.to_string())
        }
        _ => Error::io(&path, e),
    })?;
    committed(&bytes, log_id)
        .map_err(|problem| Error::corrupt(&path, problem.within("the log's committed length")))
}

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
    /// Damage found, in file order: stretches no interrupted write could have left.
    pub damage: Vec<LogDamage>,
    /// The format version in the header.
    pub version: u32,
    /// The log id in the header.
    pub log_id: u64,
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
    let commit = commit_path(path);
    let mut file = fsio::create_new(&commit).map_err(|e| Error::io(&commit, e))?;
    let mut slots = [0u8; 2 * SLOT_LEN];
    slots[..SLOT_LEN].copy_from_slice(&slot(1, HEADER_LEN, log_id));
    file.write_all(&slots)
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(&commit, e))?;
    if let Some(dir) = path.parent() {
        crate::format::manifest::sync_dir(dir)?;
    }
    Ok(())
}

/// Reads the log at `path`, whose header must carry `log_id`.
pub fn read_log(path: &Path, log_id: u64) -> Result<LogContents> {
    // The committed length first: the log only grows past it while this reads.
    let committed = read_committed_if_v2(path, log_id);
    let bytes = read_log_bytes(path, fsio::open_read)?.1;
    match committed {
        Ok(committed) => parse_log(&bytes, path, Some(log_id), committed.map(|(_, len)| len)),
        Err(error) => {
            // Every sound entry is still read; the damage is reported.
            let mut contents = parse_log(&bytes, path, Some(log_id), None)?;
            contents.damage.insert(
                0,
                LogDamage {
                    offset: 0,
                    len: 0,
                    problem: error.to_string(),
                },
            );
            Ok(contents)
        }
    }
}

/// Reads the log at `path` whatever log id its header carries and whatever its committed
/// length says, every sound entry included (`reliora salvage`, which may have no manifest to
/// name it).
pub fn read_any_log(path: &Path) -> Result<LogContents> {
    let bytes = read_log_bytes(path, fsio::open_read)?.1;
    parse_log(&bytes, path, None, None)
}

/// The committed length of a log of this format, with its sequence number; `None` for a
/// format 1 log, which has none.
fn read_committed_if_v2(path: &Path, log_id: u64) -> Result<Option<(u64, u64)>> {
    match read_committed(path, log_id) {
        Ok(committed) => Ok(Some(committed)),
        Err(error) => {
            let version = fsio::open_read(path).ok().and_then(|mut file| {
                let mut header = [0u8; HEADER_LEN as usize];
                file.read_exact(&mut header).ok()?;
                Some(u32_at(&header, 4))
            });
            if version == Some(LOG_VERSION_1) {
                Ok(None)
            } else {
                Err(error)
            }
        }
    }
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

fn parse_log(
    bytes: &[u8],
    path: &Path,
    log_id: Option<u64>,
    committed: Option<u64>,
) -> Result<LogContents> {
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
    let version = u32_at(found, 4);
    let id = u64_at(found, 8);
    if log_id.is_some_and(|expected| expected != id) {
        return Err(Error::corrupt(
            path,
            "the record log belongs to another index or generation (its log id differs from the manifest's)",
        ));
    }
    let mut contents = LogContents {
        file_len: bytes.len() as u64,
        version,
        log_id: id,
        ..LogContents::default()
    };
    match version {
        LOG_VERSION => parse_entries(bytes, committed, &mut contents),
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
    let len = u32_at(h, 0) as usize;
    let payload_crc = u32_at(h, 4);
    let offset = u64_at(h, 8);
    let header_crc = u32_at(h, 16);
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

/// Reads the entries of a format 2 log. Before `committed` (every byte of it acknowledged)
/// anything but a sound entry is damage; after it, an interrupted append's torn tail is ignored.
/// Without a committed length (salvage) every sound entry is read.
fn parse_entries(bytes: &[u8], committed: Option<u64>, contents: &mut LogContents) {
    let end_of_file = bytes.len();
    let acknowledged = committed.map_or(0, |c| c as usize);
    let mut at = HEADER_LEN as usize;
    while at < end_of_file {
        let before_commit = at < acknowledged;
        let rest = &bytes[at..];
        if !before_commit && (rest.len() < ENTRY_HEADER_LEN || rest.iter().all(|&b| b == 0)) {
            // Torn: a cut entry header, or space the file system allocated for an append that
            // a crash kept from being written (it reads as zeros).
            contents.valid_len = at as u64;
            return;
        }
        let damage = |contents: &mut LogContents, len: usize, problem: &str| {
            contents.damage.push(LogDamage {
                offset: at as u64,
                len: len as u64,
                problem: problem.to_string(),
            })
        };
        let Some((len, crc)) = sound_header(bytes, at) else {
            let next = resync(bytes, at);
            damage(
                contents,
                next.unwrap_or(end_of_file) - at,
                "an entry header fails its checksum (or names another offset or an impossible \
                 length)",
            );
            match next {
                Some(next) => {
                    at = next;
                    continue;
                }
                None => break,
            }
        };
        let end = at + ENTRY_HEADER_LEN + len;
        if !before_commit && committed.is_some() {
            // A whole or partial entry after the committed length: an append whose command was
            // never acknowledged.
            contents.valid_len = at as u64;
            return;
        }
        if end > end_of_file {
            if before_commit {
                damage(
                    contents,
                    end_of_file - at,
                    "an acknowledged entry is cut short",
                );
                break;
            }
            // Torn: a sound header whose payload the crash cut short.
            contents.valid_len = at as u64;
            return;
        }
        let payload = &bytes[at + ENTRY_HEADER_LEN..end];
        if crc32fast::hash(payload) != crc {
            if end == end_of_file && !before_commit {
                // Torn: the last payload partly written.
                contents.valid_len = at as u64;
                return;
            }
            damage(contents, end - at, "an entry's payload fails its checksum");
        } else {
            match decode_log_entry(payload) {
                Ok(entry) => contents.entries.push((at as u64, entry)),
                Err(problem) => damage(
                    contents,
                    end - at,
                    &format!("an entry does not decode: {problem}"),
                ),
            }
        }
        at = end;
    }
    contents.valid_len = end_of_file as u64;
    if acknowledged > end_of_file {
        contents.damage.push(LogDamage {
            offset: end_of_file as u64,
            len: (acknowledged - end_of_file) as u64,
            problem: format!(
                "the log ends before its committed length {acknowledged}: acknowledged entries \
                 were cut off"
            ),
        });
    }
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
        let len = u32_at(rest, 0) as usize;
        let crc = u32_at(rest, 4);
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
    commit: File,
    commit_path: PathBuf,
    sequence: u64,
    log_id: u64,
}

impl LogAppender {
    /// Opens the existing log whose header carries `log_id` for appending. A torn tail after the
    /// committed length is cut off; a damaged log, or one of format 1, is refused with the
    /// command that heals it — nothing acknowledged is ever cut.
    pub fn open(path: &Path, log_id: u64) -> Result<(LogAppender, LogContents)> {
        let committed = read_committed_if_v2(path, log_id).map_err(refuse_write)?;
        let (file, bytes) = read_log_bytes(path, fsio::open_read_write)?;
        let contents = parse_log(&bytes, path, Some(log_id), committed.map(|(_, len)| len))?;
        if let Some(damage) = contents.damage_error(path) {
            return Err(refuse_write(damage));
        }
        let Some((sequence, _)) = committed.filter(|_| contents.version == LOG_VERSION) else {
            return Err(Error::corrupt(
                path,
                format!(
                    "the record log has format version {} and is read but never appended to; \
                     run `reliora compact` to fold it into a new generation, then write again",
                    contents.version
                ),
            ));
        };
        let len = contents.valid_len;
        if contents.file_len > len {
            // Never acknowledged: its command did not return.
            file.set_len(len).map_err(|e| Error::io(path, e))?;
            file.sync_all().map_err(|e| Error::io(path, e))?;
        }
        let commit_path = commit_path(path);
        let commit = fsio::open_read_write(&commit_path).map_err(|e| Error::io(&commit_path, e))?;
        Ok((
            LogAppender {
                file,
                path: path.to_path_buf(),
                len,
                commit,
                commit_path,
                sequence,
                log_id,
            },
            contents,
        ))
    }

    /// Where the next entry will start.
    pub fn position(&self) -> u64 {
        self.len
    }

    /// Appends `entry`, syncs it, then records and syncs the new committed length before
    /// returning the entry's offset: once this returns, the entry survives a crash, and a log
    /// shorter than that length is damage.
    pub fn append(&mut self, entry: &LogEntry) -> Result<u64> {
        let offset = self.len;
        let bytes = encode_entry(entry, offset);
        let end = offset + bytes.len() as u64;
        let sequence = self.sequence + 1;
        let written = self
            .file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.write_all(&bytes))
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, e))
            .and_then(|()| {
                // The slot not written last: a torn slot write leaves the other one sound.
                let at = (sequence % 2) * SLOT_LEN as u64;
                self.commit
                    .seek(SeekFrom::Start(at))
                    .and_then(|_| self.commit.write_all(&slot(sequence, end, self.log_id)))
                    .and_then(|_| self.commit.sync_data())
                    .map_err(|e| Error::io(&self.commit_path, e))
            });
        if let Err(error) = written {
            // Leave no unacknowledged entry behind for readers to trip over.
            let _ = self.file.set_len(offset);
            return Err(error);
        }
        self.len = end;
        self.sequence = sequence;
        Ok(offset)
    }
}

/// A write that found damage refuses, naming the damage and the command that recovers every
/// intact record.
pub fn refuse_write(damage: Error) -> Error {
    match damage {
        Error::Corrupt { file, problem } if !problem.to_string().contains("reliora salvage") => {
            Error::Corrupt {
                file,
                problem: problem.noted(
                    "the write was refused, so nothing acknowledged is lost; run `reliora \
                     salvage` to rebuild every intact record into a new generation",
                ),
            }
        }
        other => other,
    }
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

        // What an append interrupted before its committed length was recorded can leave after
        // the committed length: a prefix of the entry, zeros, or the whole entry.
        let unacknowledged = encode_entry(&delete("never acknowledged"), full.len() as u64);
        let tails = [
            unacknowledged[..7].to_vec(),
            unacknowledged[..25].to_vec(),
            unacknowledged.clone(),
            vec![0; 40],
        ];
        let commit = commit_path(&path);
        let full_commit = std::fs::read(&commit).unwrap();
        for tail in tails {
            std::fs::write(&path, [&full[..], &tail].concat()).unwrap();
            std::fs::write(&commit, &full_commit).unwrap();
            let read = read_log(&path, 1).unwrap();
            assert_eq!(ids(&read), ["record-0", "record-1"]);
            assert_eq!(read.torn_bytes(), tail.len() as u64);
            assert!(read.damage.is_empty());
            // The next writer cuts it and appends after the last acknowledged entry.
            let (mut log, _) = LogAppender::open(&path, 1).unwrap();
            assert_eq!(log.position(), full.len() as u64);
            log.append(&delete("c")).unwrap();
            assert_eq!(
                ids(&read_log(&path, 1).unwrap()),
                ["record-0", "record-1", "c"]
            );
        }
        std::fs::write(&commit, &full_commit).unwrap();

        // Before the committed length every byte was acknowledged: a cut there — at an entry
        // boundary too — and a flipped bit in the last payload are damage, not torn tails.
        for (bytes, what) in [
            (
                full[..offsets[1] as usize].to_vec(),
                "a cut at an entry boundary",
            ),
            (
                full[..full.len() - 2].to_vec(),
                "a cut inside the last entry",
            ),
            (
                {
                    let mut flipped = full.clone();
                    *flipped.last_mut().unwrap() ^= 1;
                    flipped
                },
                "a flipped bit in the last payload",
            ),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            let read = read_log(&path, 1).unwrap();
            assert!(!read.damage.is_empty(), "{what}");
            assert!(LogAppender::open(&path, 1).is_err(), "{what}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                bytes,
                "{what}: nothing was cut"
            );
        }
        // A damaged committed length is damage too, whichever slot it hits.
        std::fs::write(&path, &full).unwrap();
        for at in [3, SLOT_LEN + 9] {
            let mut slots = full_commit.clone();
            slots[at] ^= 1;
            std::fs::write(&commit, &slots).unwrap();
            let read = read_log(&path, 1).unwrap();
            assert_eq!(
                ids(&read),
                ["record-0", "record-1"],
                "every sound entry is read"
            );
            assert!(read.damage[0].problem.contains("fails its checksum"));
            assert!(LogAppender::open(&path, 1).is_err());
        }
        std::fs::write(&commit, &full_commit).unwrap();

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
