//! Which files of an index directory belong to the index, and which the tool may delete.
//!
//! Reliora deletes only files it can prove it wrote: the files an older manifest named once a
//! newer one replaced it, and the files of a generation whose writer recorded it in the
//! `PENDING` journal and died before its manifest swap. Nothing is ever deleted because its
//! name looks like an index file: a user's `g000001-notes.txt` next to an index is left alone.
//!
//! `PENDING` is JSON — `{"generation": N, "previous": [file names]}` — written and synced
//! before a writer creates the first file of generation N. `previous` lists the files the
//! manifest named when it started. A writer that finds a `PENDING` left behind settles it first:
//! if the manifest names generation N, the swap happened and the previous files are deleted;
//! otherwise the files of generation N (exact index file names, all created after N was chosen
//! above every such name in the directory) are deleted.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::fsio;
use crate::format::manifest::{sync_dir, Manifest, MANIFEST_NAME};
use crate::format::{OPTIONAL_SEGMENT_FILES, SEGMENT_FILES};

/// The journal of the generation being written.
pub const PENDING_NAME: &str = "PENDING";
/// The writer lock.
pub const LOCK_NAME: &str = "LOCK";

/// The generation an index file name belongs to: `g<generation>.log`, `g<generation>.commit` or
/// `g<generation>-s<segment>.<suffix>` with a segment file suffix, the numbers written as
/// the writer writes them (at least six and four digits). Any other name is not an index file.
pub fn generation_of(name: &str) -> Option<u64> {
    let rest = name.strip_prefix('g')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits < 6 {
        return None;
    }
    let generation = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail == ".log" || tail == ".commit" {
        return Some(generation);
    }
    let segment = tail.strip_prefix("-s")?;
    let seg_digits = segment.bytes().take_while(u8::is_ascii_digit).count();
    let suffix = segment[seg_digits..].strip_prefix('.')?;
    let known = SEGMENT_FILES.contains(&suffix) || OPTIONAL_SEGMENT_FILES.contains(&suffix);
    (seg_digits >= 4 && known).then_some(generation)
}

/// Whether `locator` is a position in a record log (`g000003.log@120`): the record was written
/// by `record`, not built from an input.
pub fn is_log_locator(locator: &str) -> bool {
    locator.split_once('@').is_some_and(|(log, offset)| {
        log.ends_with(".log")
            && generation_of(log).is_some()
            && !offset.is_empty()
            && offset.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The file names `manifest` names: its log, the log's committed length, and every segment
/// file.
pub fn named_by(manifest: &Manifest) -> BTreeSet<String> {
    let mut named = BTreeSet::from([manifest.log.clone()]);
    if let Some(generation) = manifest.log.strip_suffix(".log") {
        named.insert(format!("{generation}.commit"));
    }
    for segment in &manifest.segments {
        for suffix in segment.files.keys() {
            named.insert(format!("{}.{suffix}", segment.name));
        }
    }
    named
}

/// The index file names (see [`generation_of`]) in `dir`, sorted.
pub fn index_files(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| generation_of(name).is_some())
        .collect();
    names.sort();
    Ok(names)
}

/// The index files of `dir` that no manifest and no journal explain: with no manifest, the
/// files of the generation `PENDING` names were written by a writer that died before its first
/// manifest (a first build or a first `record` killed), and do not count.
pub fn unexplained_index_files(dir: &Path) -> Result<Vec<String>> {
    let pending = read_pending(dir).map(|p| p.generation);
    Ok(index_files(dir)?
        .into_iter()
        .filter(|name| pending.is_none() || generation_of(name) != pending)
        .collect())
}

/// Index files in `dir` that the current manifest does not name: what a killed writer or a
/// salvage left behind.
pub fn leftovers(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let named = named_by(manifest);
    Ok(index_files(dir)?
        .into_iter()
        .filter(|name| !named.contains(name))
        .collect())
}

/// Creates the index directory when it does not exist, and makes its entry durable (syncs the
/// parent directory), so an acknowledged first write survives a power loss with its directory.
pub fn create_index_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    sync_dir(parent)
}

/// Reads the manifest of `dir`; a missing manifest beside index files is damage that names
/// `reliora salvage`, not "no index here".
pub fn load_manifest(dir: &Path) -> Result<Manifest> {
    Manifest::load(dir).map_err(|error| {
        if std::fs::symlink_metadata(dir.join(MANIFEST_NAME)).is_err() {
            if let Ok(found) = unexplained_index_files(dir) {
                if !found.is_empty() {
                    return missing_manifest(dir, &found);
                }
            }
        }
        error
    })
}

/// The refusal for a directory whose manifest is missing while index files remain.
pub fn missing_manifest(dir: &Path, files: &[String]) -> Error {
    Error::corrupt(
        dir.join(MANIFEST_NAME),
        format!(
            "the manifest is missing but {} index files are present ({}{}); nothing was \
             written — run `reliora salvage` to rebuild every intact record into a new generation",
            files.len(),
            files.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
            if files.len() > 3 { ", …" } else { "" }
        ),
    )
}

#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    generation: u64,
    previous: Vec<String>,
}

/// Records that generation `generation` is being written over `previous` (the manifest in force,
/// if any). Settles a journal a dead writer left first. The caller holds the writer lock.
pub fn begin(dir: &Path, generation: u64, previous: Option<&Manifest>) -> Result<()> {
    settle(dir)?;
    let pending = Pending {
        generation,
        previous: previous
            .map(named_by)
            .unwrap_or_default()
            .into_iter()
            .collect(),
    };
    let path = dir.join(PENDING_NAME);
    let mut file = fsio::create_new(&path).map_err(|e| Error::io(&path, e))?;
    file.write_all(&serde_json::to_vec(&pending).expect("journal serializes"))
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(&path, e))?;
    sync_dir(dir)
}

/// After the manifest naming `current` was swapped in: deletes the files the previous manifest
/// named that `current` does not, then the journal. Failures leave files behind, never lose any.
pub fn finish(dir: &Path, current: &Manifest) {
    if let Some(pending) = read_pending(dir) {
        remove_previous(dir, &pending, current);
    }
    let _ = std::fs::remove_file(dir.join(PENDING_NAME));
    let _ = sync_dir(dir);
}

/// After a generation failed before its manifest swap: deletes its files and the journal.
pub fn abandon(dir: &Path, generation: u64) {
    remove_generation(dir, generation, &BTreeSet::new());
    let _ = std::fs::remove_file(dir.join(PENDING_NAME));
    let _ = sync_dir(dir);
}

/// Settles a journal left by a writer that died: see the module docs.
fn settle(dir: &Path) -> Result<()> {
    let path = dir.join(PENDING_NAME);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    if let Some(pending) = read_pending(dir) {
        match Manifest::load(dir) {
            Ok(current) if current.generation == pending.generation => {
                remove_previous(dir, &pending, &current)
            }
            Ok(current) => remove_generation(dir, pending.generation, &named_by(&current)),
            // No manifest ever: the first generation's writer died; its files are its own.
            Err(_)
                if pending.previous.is_empty()
                    && std::fs::symlink_metadata(dir.join(MANIFEST_NAME)).is_err() =>
            {
                remove_generation(dir, pending.generation, &BTreeSet::new())
            }
            // A manifest that cannot be read: whatever the journal speaks of stays for
            // `salvage`.
            Err(_) => {}
        }
    }
    std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
    sync_dir(dir)
}

fn read_pending(dir: &Path) -> Option<Pending> {
    let bytes = fsio::read_bounded(&dir.join(PENDING_NAME), 16 << 20).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn remove_previous(dir: &Path, pending: &Pending, current: &Manifest) {
    let keep = named_by(current);
    for name in &pending.previous {
        if generation_of(name).is_some() && !keep.contains(name) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
}

/// Deletes the index files of `generation`, except those named in `keep`.
fn remove_generation(dir: &Path, generation: u64, keep: &BTreeSet<String>) {
    let Ok(names) = index_files(dir) else {
        return;
    };
    for name in names {
        if generation_of(&name) == Some(generation) && !keep.contains(&name) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_index_file_names_belong_to_a_generation() {
        for (name, generation) in [
            ("g000001.log", Some(1)),
            ("g000012-s0003.terms.fst", Some(12)),
            ("g1234567-s0000.store", Some(1234567)),
            ("g000001-notes.txt", None),
            ("g123456.jpg", None),
            ("g000001-s0000.store.bak", None),
            ("g00001.log", None),
            ("g000001-s01.store", None),
            ("g000001.commit", Some(1)),
            ("g000001.log.bak", None),
            ("MANIFEST", None),
        ] {
            assert_eq!(generation_of(name), generation, "{name}");
        }
    }
}
