//! Running a request against an index snapshot: the settings of the index directory, the
//! choice of backend (the index, or a scan of the stored records) and the fallback to a scan
//! when the index is damaged (SPEC §9).

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::index::{no_scan_possible, Index};
use crate::search::index_source::IndexSource;
use crate::search::request::{Backend, SearchRequest};
use crate::search::response::SearchResponse;
use crate::search::scan::ScanSource;
use crate::search::{execute, Context, Source};

// Searching is `search`'s job; the method sits on `Index` (a snapshot that knows nothing of
// searching) so that `index.search(&request)` reads as users expect.
impl Index {
    /// Runs one search (SPEC §3–7).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let request = &*with_index_config(self, request)?;
        with_source(self, request, &|source, context| {
            execute(source, request, context)
        })
    }
}

/// Runs `run` on the source `request` asks for: the index, or a scan of the stored records
/// when `--backend scan` asks or the index is damaged (SPEC §9) — found at open or while
/// searching it, then `run` starts over on the scan.
pub(crate) fn with_source<T>(
    index: &Index,
    request: &SearchRequest,
    run: &dyn Fn(&dyn Source, Context<'_>) -> Result<T>,
) -> Result<T> {
    let log_notice = index.log_damage_notice();
    if request.backend == Backend::Scan {
        let degraded = log_notice.is_some();
        return scan(index, degraded, log_notice.into_iter().collect(), run);
    }
    if let Some(error) = index.damage() {
        if request.backend == Backend::Index {
            return Err(Error::corrupt(
                index.dir().to_path_buf(),
                format!("the index cannot be used (--backend index): {error}"),
            ));
        }
        let notice = format!("index damaged, scanned the stored records instead: {error}");
        let notices = std::iter::once(notice).chain(log_notice).collect();
        return scan(index, true, notices, run);
    }
    let context = Context {
        analyzer: index.analyzer(),
        generation: index.generation_key(),
        degraded: log_notice.is_some(),
        notices: log_notice.iter().cloned().collect(),
        best_relevance: None,
        collection: None,
    };
    match run(&IndexSource::new(index), context) {
        Err(error @ Error::Corrupt { .. }) if request.backend == Backend::Auto => {
            let notice = format!("index damaged, scanned the stored records instead: {error}");
            let notices = std::iter::once(notice).chain(log_notice).collect();
            scan(index, true, notices, run)
        }
        other => other,
    }
}

/// `request` with the settings of the index directory's `reliora.toml` (read at open) when it
/// names none.
pub(crate) fn with_index_config<'r>(
    index: &Index,
    request: &'r SearchRequest,
) -> Result<Cow<'r, SearchRequest>> {
    if request.settings.is_some() {
        return Ok(Cow::Borrowed(request));
    }
    match index.config()? {
        Some(settings) => {
            let mut request = request.clone();
            request.settings = Some(settings);
            Ok(Cow::Owned(request))
        }
        None => Ok(Cow::Borrowed(request)),
    }
}

/// The degraded mode: every live record decoded and scanned.
fn scan<T>(
    index: &Index,
    degraded: bool,
    notices: Vec<String>,
    run: &dyn Fn(&dyn Source, Context<'_>) -> Result<T>,
) -> Result<T> {
    let records = index
        .all_records()
        .map_err(|e| match (degraded, index.damage()) {
            (false, _) => e,
            (true, first) => no_scan_possible(e, first),
        })?;
    let source = ScanSource::new(records, index.manifest().stem);
    let context = Context {
        analyzer: index.analyzer(),
        generation: index.generation_key(),
        degraded,
        notices,
        best_relevance: None,
        collection: None,
    };
    run(&source, context)
}
