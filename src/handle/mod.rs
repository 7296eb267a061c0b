//! The handles that combine an index snapshot with search, above both: a [`IndexReader`] that
//! reopens the index whenever a writer changed it, and a [`IndexWriter`] whose `record` warns about
//! similar records.
//!
//! [`IndexReader`]: searcher::IndexReader
//! [`IndexWriter`]: writer::IndexWriter

pub mod searcher;
pub mod writer;
