//! The record log: the one file that is appended to. It is read with ordinary reads and never
//! memory-mapped.
//!
//! ```text
//! header   magic b"RLOG", version u32 LE, log id u64 LE            (16 bytes)
//! entry*   payload_len u32 LE, payload_crc32 u32 LE, payload        (codec::encode_log_entry)
//! ```
//!
//! The log id is the manifest's `logId` (see manifest.rs): a log from another index or another
//! generation does not match and is reported as foreign. The log of a generation is created,
//! header included and synced, before the manifest that names it, so a missing log or one
//! shorter than its header is damage too.
//!
//! A crash can leave the last entry torn: shorter than its length says, or (a partly written
//! payload) failing its checksum as the file's last bytes. Readers ignore a torn tail; the next
//! writer cuts it off before appending. A bad entry followed by more data is damage, not a torn
//! tail, and is reported.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::codec::{decode_log_entry, encode_log_entry, LogEntry};
use crate::format::footer::FORMAT_VERSION;

const MAGIC: [u8; 4] = *b"RLOG";
/// Bytes before the first entry.
pub const HEADER_LEN: u64 = 16;
const ENTRY_HEADER_LEN: usize = 8;
/// Upper bound on one entry: a 1 MiB record plus its encoding overhead.
const MAX_ENTRY_LEN: usize = 4 << 20;

/// What a read of the log found.
#[derive(Debug, Default)]
pub struct LogContents {
    /// Each entry with the offset it starts at.
    pub entries: Vec<(u64, LogEntry)>,
    /// Bytes up to the end of the last sound entry (what a writer keeps).
    pub valid_len: u64,
    /// Bytes of the file.
    pub file_len: u64,
}

impl LogContents {
    /// Bytes after the last sound entry: an entry a crash interrupted, which readers ignore and
    /// the next writer cuts off (0 normally).
    pub fn torn_bytes(&self) -> u64 {
        self.file_len - self.valid_len
    }
}

fn header(log_id: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[0..4].copy_from_slice(&MAGIC);
    h[4..8].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[8..16].copy_from_slice(&log_id.to_le_bytes());
    h
}

/// Creates the empty log of a new generation (header only), synced with its directory entry,
/// before any manifest names it. Fails if the file exists.
pub fn create_log(path: &Path, log_id: u64) -> Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.write_all(&header(log_id))
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(path, e))?;
    if let Some(dir) = path.parent() {
        crate::format::manifest::sync_dir(dir)?;
    }
    Ok(())
}

/// Reads the log at `path`, whose header must carry `log_id`.
pub fn read_log(path: &Path, log_id: u64) -> Result<LogContents> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut file) => {
            file.read_to_end(&mut bytes)
                .map_err(|e| Error::io(path, e))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::corrupt(
                path,
                "the record log named by the manifest is missing",
            ))
        }
        Err(e) => return Err(Error::io(path, e)),
    }
    parse_log(&bytes, path, log_id)
}

fn parse_log(bytes: &[u8], path: &Path, log_id: u64) -> Result<LogContents> {
    let mut contents = LogContents {
        file_len: bytes.len() as u64,
        ..LogContents::default()
    };
    let expected = header(log_id);
    let Some(found) = bytes.get(..HEADER_LEN as usize) else {
        return Err(Error::corrupt(
            path,
            format!(
                "the record log is {} bytes, shorter than its {HEADER_LEN}-byte header (truncated)",
                bytes.len()
            ),
        ));
    };
    if found != expected {
        let problem = if found[0..4] != expected[0..4] {
            "not a record log (bad magic)"
        } else if found[4..8] != expected[4..8] {
            "the record log has another format version"
        } else {
            "the record log belongs to another index or generation (its log id differs from the manifest's)"
        };
        return Err(Error::corrupt(path, problem));
    }
    let mut at = HEADER_LEN as usize;
    contents.valid_len = HEADER_LEN;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.len() < ENTRY_HEADER_LEN || rest.iter().all(|&b| b == 0) {
            // Torn: a cut entry header, or space the file system allocated for an append that
            // a crash kept from being written (it reads as zeros).
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
        let end = at + ENTRY_HEADER_LEN + len;
        if end > bytes.len() {
            break; // torn: shorter than its length says
        }
        let payload = &rest[ENTRY_HEADER_LEN..ENTRY_HEADER_LEN + len];
        let sound = crc32fast::hash(payload) == crc;
        if !sound && end == bytes.len() {
            break; // torn: the last entry was partly written
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
    Ok(contents)
}

/// Appends entries to the log; only the writer holding the index lock has one.
pub struct LogAppender {
    file: File,
    path: PathBuf,
    len: u64,
}

impl LogAppender {
    /// Opens the existing log whose header carries `log_id`, cutting off a torn tail so the next
    /// entry follows the last sound one.
    pub fn open(path: &Path, log_id: u64) -> Result<(LogAppender, LogContents)> {
        let mut file = match OpenOptions::new().read(true).write(true).open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::corrupt(
                    path,
                    "the record log named by the manifest is missing",
                ))
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        let contents = parse_log(&bytes, path, log_id)?;
        let len = contents.valid_len;
        if contents.file_len > len {
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
        let payload = encode_log_entry(entry);
        let mut bytes = Vec::with_capacity(ENTRY_HEADER_LEN + payload.len());
        bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        let offset = self.len;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn delete(id: &str) -> LogEntry {
        LogEntry::Delete { id: id.into() }
    }

    #[test]
    fn appended_entries_read_back_and_torn_tails_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g000001.log");
        assert!(read_log(&path, 1).is_err(), "a missing log is damage");
        create_log(&path, 1).unwrap();
        assert!(create_log(&path, 1).is_err(), "never overwrites a log");
        assert!(read_log(&path, 1).unwrap().entries.is_empty());
        let (mut log, _) = LogAppender::open(&path, 1).unwrap();
        let first = log.append(&delete("a")).unwrap();
        let second = log.append(&delete("b")).unwrap();
        assert_eq!(first, HEADER_LEN);
        let read = read_log(&path, 1).unwrap();
        assert_eq!(
            read.entries,
            vec![(first, delete("a")), (second, delete("b"))]
        );

        // A torn tail: the last entry cut short.
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 2]).unwrap();
        let read = read_log(&path, 1).unwrap();
        assert_eq!(read.entries, vec![(first, delete("a"))]);
        assert_eq!(read.torn_bytes(), full.len() as u64 - 2 - second);
        // The next writer cuts it off and appends after the last sound entry.
        let (mut log, _) = LogAppender::open(&path, 1).unwrap();
        assert_eq!(log.position(), second);
        log.append(&delete("c")).unwrap();
        let ids: Vec<_> = read_log(&path, 1)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.1)
            .collect();
        assert_eq!(ids, vec![delete("a"), delete("c")]);

        // A torn tail of zeros: the file grew but the bytes never reached the disk.
        let mut zeros = std::fs::read(&path).unwrap();
        let sound_len = zeros.len();
        zeros.extend_from_slice(&[0; 40]);
        std::fs::write(&path, &zeros).unwrap();
        let read = read_log(&path, 1).unwrap();
        assert_eq!((read.entries.len(), read.torn_bytes()), (2, 40));
        std::fs::write(&path, &zeros[..sound_len]).unwrap();

        // A torn tail by checksum: the last payload's bytes not all written.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_log(&path, 1).unwrap().entries.len(), 1);

        // Damage in the middle is reported, not skipped.
        let mut bytes = full.clone();
        bytes[HEADER_LEN as usize + 9] ^= 0xFF;
        std::fs::write(&path, &bytes).unwrap();
        let err = read_log(&path, 1).unwrap_err().to_string();
        assert!(err.contains("checksum"), "{err}");

        // A log of another generation or index is foreign.
        std::fs::write(&path, &full).unwrap();
        let err = read_log(&path, 2).unwrap_err().to_string();
        assert!(err.contains("another index"), "{err}");
        // A log cut inside its header is damage, not an empty log.
        std::fs::write(&path, &full[..HEADER_LEN as usize - 1]).unwrap();
        let err = read_log(&path, 1).unwrap_err().to_string();
        assert!(err.contains("shorter than its"), "{err}");
    }
}
