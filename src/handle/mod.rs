//! The handles that combine an index snapshot with search, above both: a [`Searcher`] that
//! reopens the index whenever a writer changed it, and a [`Writer`] whose `record` warns about
//! similar records.
//!
//! [`Searcher`]: searcher::Searcher
//! [`Writer`]: writer::Writer

pub mod searcher;
pub mod writer;
