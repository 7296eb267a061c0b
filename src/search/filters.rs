//! The filters of SPEC §3, applied before scoring: project context, tags and memory type.

use crate::record::Record;
use crate::search::query::token_matches;
use crate::search::request::SearchRequest;
use crate::search::response::FilterKind;
use crate::text::{self, Analyzer, IndexToken, TextAnalyzer, Token};

/// The filters of one request, analyzed.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// `--project-context` tokens and the analyzer their text routed to.
    pub project_context: Option<(Vec<Token>, Analyzer)>,
    /// `--tag` values as phrases.
    pub tags: Vec<String>,
    /// `--type`, trimmed and lowercased.
    pub memory_type: Option<String>,
    /// Ids treated as absent (the duplicate check of `record` leaves out the record itself and
    /// the one it supersedes).
    pub exclude: Vec<String>,
}

impl Filters {
    /// Analyzes the filters of `request`.
    pub fn new(request: &SearchRequest, analyzer: &TextAnalyzer) -> Filters {
        Filters {
            project_context: request.project_context.as_ref().map(|text| {
                let routed = text::route(text);
                (analyzer.tokens(text, routed), routed)
            }),
            tags: request.tags.iter().map(|t| text::phrase(t)).collect(),
            memory_type: request.memory_type.clone(),
            exclude: request.exclude_ids.clone(),
        }
    }

    /// Whether `id` is left out of this search altogether.
    pub fn excludes(&self, id: &str) -> bool {
        self.exclude.iter().any(|e| e == id)
    }

    /// Whether any filter is given.
    pub fn any(&self) -> bool {
        self.project_context.is_some() || !self.tags.is_empty() || self.memory_type.is_some()
    }

    /// The first filter `record` fails, by its option name, or `None` when it passes them all.
    pub fn rejects(&self, record: &Record, analyzer: &TextAnalyzer) -> Option<FilterKind> {
        if let Some((tokens, routed)) = &self.project_context {
            let mut record_tokens: Vec<IndexToken> = Vec::new();
            for value in record
                .project_context
                .iter()
                .chain(&record.applicability)
                .chain(&record.tags)
            {
                analyzer.index_tokens(value, &mut record_tokens);
            }
            let hit = tokens
                .iter()
                .any(|q| record_tokens.iter().any(|t| token_matches(q, t, *routed)));
            if !hit {
                return Some(FilterKind::ProjectContext);
            }
        }
        if !self.tags.is_empty() {
            let record_tags: Vec<String> = record.tags.iter().map(|t| text::phrase(t)).collect();
            if !self.tags.iter().all(|t| record_tags.contains(t)) {
                return Some(FilterKind::Tag);
            }
        }
        if let Some(wanted) = &self.memory_type {
            if record.memory_type_normalized() != *wanted {
                return Some(FilterKind::MemoryType);
            }
        }
        None
    }
}
