//! Progress of a long operation (a build), reported through a callback: the library draws
//! nothing itself; the command line turns the reports into a progress bar.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How far a build has come.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Records indexed so far.
    pub done: u64,
    /// Records to index, when known in advance.
    pub total: Option<u64>,
    /// Whether this is the last report: the operation has ended.
    pub finished: bool,
}

/// A callback that receives [`Progress`] reports, possibly from several threads.
///
/// # Example
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use reliora::{BuildOptions, Index, OnProgress};
///
/// let dir = tempfile::tempdir()?;
/// let input = dir.path().join("in.jsonl");
/// std::fs::write(&input, "{\"id\": \"a\", \"title\": \"flaky test\"}\n")?;
/// let seen = Arc::new(AtomicU64::new(0));
/// let counter = Arc::clone(&seen);
/// let options = BuildOptions {
///     inputs: vec![input],
///     progress: Some(OnProgress::new(move |p| counter.store(p.done, Ordering::Relaxed))),
///     ..BuildOptions::default()
/// };
/// Index::build(&dir.path().join("index"), &options)?;
/// assert_eq!(seen.load(Ordering::Relaxed), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct OnProgress(Arc<dyn Fn(Progress) + Send + Sync>);

impl OnProgress {
    /// Wraps a callback.
    pub fn new(callback: impl Fn(Progress) + Send + Sync + 'static) -> OnProgress {
        OnProgress(Arc::new(callback))
    }

    /// Calls the callback with `progress`.
    pub fn report(&self, progress: Progress) {
        (self.0)(progress)
    }
}

impl fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnProgress(..)")
    }
}

/// Counts the records of one operation and reports each step to an [`OnProgress`].
pub(crate) struct ProgressCounter {
    callback: OnProgress,
    done: AtomicU64,
    total: Option<u64>,
}

impl ProgressCounter {
    /// A counter at 0 of `total` (when known).
    pub(crate) fn new(callback: OnProgress, total: Option<u64>) -> ProgressCounter {
        ProgressCounter {
            callback,
            done: AtomicU64::new(0),
            total,
        }
    }

    /// Counts `n` more records done.
    pub(crate) fn inc(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        self.callback.report(Progress {
            done,
            total: self.total,
            finished: false,
        });
    }

    /// Reports the end.
    pub(crate) fn finish_and_clear(&self) {
        self.callback.report(Progress {
            done: self.done.load(Ordering::Relaxed),
            total: self.total,
            finished: true,
        });
    }
}
