//! How Reliora opens the files of an index directory: never through a symbolic link, only
//! regular files, and never more bytes than a bound checked before reading.
//!
//! Indexes travel by git and tar, so a directory may hold links or special files someone
//! planted. Every open here refuses a symbolic link as the last path component
//! (`O_NOFOLLOW`); reads accept only regular files (a FIFO would block, `/dev/zero` never
//! ends) and check the size before reading; new files are created with `O_EXCL`, which never
//! follows a link and never truncates what is there. The index directory itself may be a
//! link (`~/.reliora -> /data/memory`): that is the user's choice, not a file inside it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;

/// Flags added to every open of a file inside an index: do not follow a link, do not block on
/// a FIFO's open, and do not leak the descriptor into child processes.
fn guarded(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    options
}

/// The error for a path that is a link or not a regular file.
fn not_regular(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}: Reliora reads and writes only regular files here, never through a link"),
    )
}

/// Checks that an opened file is a regular one; `ELOOP` from `O_NOFOLLOW` becomes a clear
/// message about the link.
fn regular(opened: io::Result<File>) -> io::Result<File> {
    let file = opened.map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return not_regular("a symbolic link");
        }
        e
    })?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(not_regular("not a regular file"))
    }
}

/// Opens an existing regular file for reading.
pub fn open_read(path: &Path) -> io::Result<File> {
    regular(guarded(OpenOptions::new().read(true)).open(path))
}

/// Opens an existing regular file for reading and writing (the record log's appender).
pub fn open_read_write(path: &Path) -> io::Result<File> {
    regular(guarded(OpenOptions::new().read(true).write(true)).open(path))
}

/// Opens or creates a regular file for writing without truncating it (the writer lock).
pub fn open_or_create(path: &Path) -> io::Result<File> {
    regular(guarded(OpenOptions::new().write(true).create(true).truncate(false)).open(path))
}

/// Creates a new file; fails if anything, a link included, already has that name.
pub fn create_new(path: &Path) -> io::Result<File> {
    guarded(OpenOptions::new().write(true).create_new(true)).open(path)
}

/// Reads a whole regular file of at most `max` bytes; a larger one is an `InvalidData` error
/// naming the bound, found from its size before anything is read.
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_whole(open_read(path)?, max)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_bounded_text(path: &Path, max: u64) -> io::Result<String> {
    utf8(read_bounded(path, max)?)
}

/// Reads a whole regular file the user named (`--config FILE`), following links as any path
/// a user gives, but never blocking on a FIFO nor reading more than `max` bytes.
pub fn read_user_file_text(path: &Path, max: u64) -> io::Result<String> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular("not a regular file"));
    }
    utf8(read_whole(file, max)?)
}

/// Reads an opened regular file of at most `max` bytes, its size checked first; a file that
/// grows while it is read (the record log) is never read past the bound.
fn read_whole(file: File, max: u64) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    if len > max {
        return Err(too_large(len, max));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64, max));
    }
    Ok(bytes)
}

fn utf8(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

fn too_large(len: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{len} bytes, over the {max}-byte bound for this file"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_special_files_are_refused_and_sizes_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"secret").unwrap();
        let inside = dir.path().join("index");
        std::fs::create_dir(&inside).unwrap();
        let link = inside.join("MANIFEST");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, &link).unwrap();
            for opened in [
                open_read(&link),
                open_read_write(&link),
                open_or_create(&link),
                create_new(&link),
            ] {
                assert!(opened.is_err());
            }
            let message = read_bounded(&link, 100).unwrap_err().to_string();
            assert!(message.contains("link"), "{message}");
            // A dangling link is not created through either.
            let dangling = inside.join("LOCK");
            std::os::unix::fs::symlink(dir.path().join("created-outside"), &dangling).unwrap();
            assert!(open_or_create(&dangling).is_err());
            assert!(!dir.path().join("created-outside").exists());
            // Special files are not read.
            let zero = read_bounded(Path::new("/dev/zero"), 100).unwrap_err();
            assert!(zero.to_string().contains("regular"), "{zero}");
        }
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret");
        let plain = inside.join("plain");
        std::fs::write(&plain, b"0123456789").unwrap();
        assert_eq!(read_bounded(&plain, 10).unwrap(), b"0123456789");
        let large = read_bounded(&plain, 9).unwrap_err().to_string();
        assert!(large.contains("9-byte bound"), "{large}");
        assert!(
            create_new(&plain).is_err(),
            "never truncates an existing file"
        );
    }
}
