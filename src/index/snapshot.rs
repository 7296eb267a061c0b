//! The reader interface of an opened index: what a search may read of the snapshot — its
//! segments, the records the log replaced or deleted (dead), the log's own records and the
//! feedback it added, and the settings read at open. Nothing here knows of queries or scores.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;

use crate::error::Result;
use crate::index::segment::Segment;
use crate::index::Index;
use crate::record::Feedback;
use crate::settings::Settings;
use crate::text::TextAnalyzer;

impl Index {
    /// The analyzer the index was built with (stemming or not).
    pub(crate) fn analyzer(&self) -> &TextAnalyzer {
        &self.analyzer
    }

    /// Identifies the generation, the sound log and the directory, for fingerprints.
    pub(crate) fn generation_key(&self) -> &str {
        &self.generation_key
    }

    /// The settings of the directory's `reliora.toml` as read at open (`None` without one), or
    /// the error reading or parsing it gave.
    pub(crate) fn config(&self) -> Result<Option<(Arc<Settings>, String)>> {
        self.config.settings()
    }

    /// Whether the directory's settings file is still the one read at open.
    pub(crate) fn config_unchanged(&self) -> bool {
        crate::index::config::config_stamp(self.dir()) == self.config_stamp
    }

    /// The memory-mapped segments (none when the index is damaged).
    pub(crate) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The records of segment `s` that the log replaced or deleted.
    pub(crate) fn dead(&self, s: usize) -> &RoaringBitmap {
        &self.overlay.dead[s]
    }

    /// Whether the log replaced or deleted some segment record.
    pub(crate) fn any_dead(&self) -> bool {
        self.overlay.dead.iter().any(|d| !d.is_empty())
    }

    /// The feedback the log added to the segment record with this id.
    pub(crate) fn feedback_added(&self, id: &str) -> Option<&Feedback> {
        self.overlay.feedback_for(id)
    }

    /// The feedback the log added to records of segment `s`, by record number.
    pub(crate) fn feedback_added_docs(&self, s: usize) -> &HashMap<u32, Feedback> {
        &self.overlay.feedback_docs[s]
    }

    /// The least and the most each feedback count of a record of segment `s` can be: what
    /// the segment's columns can encode (read from their header, no row), the most raised by
    /// the most the log added to one of its records. Computed for every segment on first use,
    /// in time proportional to the feedback the log added.
    pub(crate) fn feedback_bounds(&self, s: usize) -> (Feedback, Feedback) {
        let bounds = self.feedback_bounds.get_or_init(|| {
            self.segments
                .iter()
                .zip(&self.overlay.feedback_docs)
                .map(|(segment, added)| {
                    let (least, mut most) = segment.columns.feedback_bounds();
                    let added_most = added.values().fold([0; 5], |most, more| {
                        let more = more.counts();
                        std::array::from_fn(|i| most[i].max(more[i]))
                    });
                    most.merge(&Feedback::from_counts(added_most));
                    (least, most)
                })
                .collect()
        });
        bounds[s]
    }

    /// How many dead segment records name `entity` (lowercased) in their `entities`.
    pub(crate) fn dead_naming(&self, entity: &str) -> Result<u64> {
        self.overlay.dead_naming(&self.segments, entity)
    }

    /// Bytes of sound record log read at open.
    pub(crate) fn log_bytes(&self) -> u64 {
        self.overlay.bytes
    }

    /// Entries of the record log replayed at open.
    pub(crate) fn log_entries(&self) -> usize {
        self.overlay.entries
    }
}
