//! The settings file of an index directory (`reliora.toml`), read once when the index is
//! opened: a search that names no `--config` uses it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::settings::{Settings, CONFIG_FILE, MAX_CONFIG_BYTES};

/// What the index directory's settings file held when the index was opened.
pub(crate) enum IndexConfig {
    /// No settings file: the SPEC defaults.
    Absent,
    /// The settings and where they came from.
    Loaded(Arc<Settings>, String),
    /// The file could not be read.
    Unreadable(PathBuf, std::io::ErrorKind, String),
    /// The file could not be parsed: its text, parsed again to give the error when a search
    /// needs the settings (a bad file fails searches, not the open).
    Invalid(String, String),
}

/// The length and modification time of `dir/reliora.toml` (`None` when there is none), to
/// tell whether it changed since it was read.
pub(crate) fn config_stamp(dir: &Path) -> Option<(u64, Option<std::time::SystemTime>)> {
    let metadata = std::fs::symlink_metadata(dir.join(CONFIG_FILE)).ok()?;
    Some((metadata.len(), metadata.modified().ok()))
}

impl IndexConfig {
    /// Reads `dir/reliora.toml`.
    pub(crate) fn load(dir: &Path) -> IndexConfig {
        let path = dir.join(CONFIG_FILE);
        match crate::format::fsio::read_bounded_text(&path, MAX_CONFIG_BYTES) {
            Ok(text) => {
                let origin = path.display().to_string();
                match Settings::from_toml(&text, &origin) {
                    Ok(settings) => IndexConfig::Loaded(Arc::new(settings), origin),
                    Err(_) => IndexConfig::Invalid(text, origin),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => IndexConfig::Absent,
            Err(e) => IndexConfig::Unreadable(path, e.kind(), e.to_string()),
        }
    }

    /// The settings and their origin, `None` without a settings file, or the error reading or
    /// parsing it gave.
    pub(crate) fn settings(&self) -> Result<Option<(Arc<Settings>, String)>> {
        match self {
            IndexConfig::Absent => Ok(None),
            IndexConfig::Loaded(settings, origin) => {
                Ok(Some((Arc::clone(settings), origin.clone())))
            }
            IndexConfig::Unreadable(path, kind, message) => Err(Error::io(
                path.clone(),
                std::io::Error::new(*kind, message.clone()),
            )),
            IndexConfig::Invalid(text, origin) => {
                Settings::from_toml(text, origin).map(|s| Some((Arc::new(s), origin.clone())))
            }
        }
    }
}
