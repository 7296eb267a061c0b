//! Building a [`SearchRequest`] from options: [`QueryBuilder`] with typed values for Rust
//! callers, and [`SearchRequest::apply_json_options`] for JSON objects (the MCP server's
//! `search` arguments and `--queries` lines).
//!
//! Both validate each option with the rules the command line uses, so an option rejected on
//! the command line is rejected here with the same SPEC error code, and options are validated
//! in the order given, the first invalid one reported (SPEC §6).

use serde_json::{Map, Value};

use crate::error::Result;
use crate::record::Timestamp;
use crate::search::profiles::rerank::RerankWeights;
use crate::search::request::{saturating_i64, Backend, Profile, SearchOption, SearchRequest};

/// A chainable way to write a [`SearchRequest`] with typed options; [`QueryBuilder::build`]
/// validates.
///
/// Each method records one option, as a command-line flag would; nothing is checked until
/// [`build`](QueryBuilder::build), which applies them in call order and reports the first
/// invalid one with its SPEC code. [`QueryBuilder::option`] reaches any option
/// [`SearchRequest::set_option`] knows by its flag name.
///
/// # Example
///
/// ```
/// use reliora::{ErrorCode, Profile, SearchRequest, Timestamp};
///
/// let request = SearchRequest::builder("connection pool timeout")
///     .limit(5)
///     .tag("postgres")
///     .project_context("payments")
///     .min_score(0.25)
///     .profile(Profile::Bm25f)
///     .now(Timestamp::parse("2026-01-01T00:00:00Z")?)
///     .build()?;
/// assert_eq!(request.limit(), 5);
/// assert_eq!(request.tags(), ["postgres"]);
/// assert_eq!(request.profile(), Profile::Bm25f);
///
/// // Invalid options fail with the code the command line reports.
/// let error = SearchRequest::builder("q").limit(0).build().unwrap_err();
/// assert_eq!(error.code(), ErrorCode::InvalidLimit);
/// let error = SearchRequest::builder("q").tag(" - ").build().unwrap_err();
/// assert_eq!(error.code(), ErrorCode::InvalidTag);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a query builder does nothing until `build` is called"]
pub struct QueryBuilder {
    query: String,
    options: Vec<SearchOption>,
}

impl SearchRequest {
    /// A [`QueryBuilder`] for `query`.
    pub fn builder(query: impl Into<String>) -> QueryBuilder {
        QueryBuilder {
            query: query.into(),
            options: Vec::new(),
        }
    }
}

impl QueryBuilder {
    fn push(mut self, option: SearchOption) -> Self {
        self.options.push(option);
        self
    }

    /// Any option by its flag name without dashes (`"limit"`, `"min-score"`, …) and textual
    /// value; `None` for a flag without a value (`"full"`). See [`SearchRequest::set_option`].
    pub fn option(self, name: impl Into<String>, value: Option<&str>) -> Self {
        self.push(SearchOption::Named(name.into(), value.map(str::to_string)))
    }

    /// `--limit N`: at most this many results (1–200; above 200 clamped with a notice; 0 is
    /// `invalid_limit`).
    pub fn limit(self, n: usize) -> Self {
        self.push(SearchOption::Limit(saturating_i64(n as u64), n.to_string()))
    }

    /// `--min-score X`: a fraction in [0, 1] or a percentage in (1, 100]; anything else is
    /// `invalid_min_score`.
    pub fn min_score(self, x: f64) -> Self {
        self.push(SearchOption::MinScore(x, x.to_string()))
    }

    /// `--project-context TEXT`: keep records whose project context, applicability or tags
    /// match it (`invalid_project_context` when TEXT has no tokens).
    pub fn project_context(self, text: impl Into<String>) -> Self {
        self.push(SearchOption::ProjectContext(text.into()))
    }

    /// `--tag T`: keep records with this tag; repeat for several, all required (`invalid_tag`
    /// when T has no words).
    pub fn tag(self, tag: impl Into<String>) -> Self {
        self.push(SearchOption::Tag(tag.into()))
    }

    /// `--type T`: keep records of this memory type (`invalid_option` when blank).
    pub fn memory_type(self, memory_type: impl Into<String>) -> Self {
        self.push(SearchOption::MemoryType(memory_type.into()))
    }

    /// `--profile`: the ranking profile.
    pub fn profile(self, profile: Profile) -> Self {
        self.push(SearchOption::Profile(profile))
    }

    /// `--now`: the reference time instead of the clock.
    pub fn now(self, now: Timestamp) -> Self {
        self.push(SearchOption::Now(now))
    }

    /// `--explain ID`: say why this record is or is not a result.
    pub fn explain(self, id: impl Into<String>) -> Self {
        self.push(SearchOption::Explain(id.into()))
    }

    /// `--full`: include each result's whole record.
    pub fn full(self, full: bool) -> Self {
        self.push(SearchOption::Full(full))
    }

    /// `--backend`: the index with fallback (default), the index only, or a scan.
    pub fn backend(self, backend: Backend) -> Self {
        self.push(SearchOption::Backend(backend))
    }

    /// `--include-superseded`: `decay` keeps superseded records.
    pub fn include_superseded(self, on: bool) -> Self {
        self.push(SearchOption::IncludeSuperseded(on))
    }

    /// `--candidates N` (1–500; above 500 clamped with a notice; 0 is `invalid_candidates`).
    pub fn candidates(self, n: usize) -> Self {
        self.push(SearchOption::Candidates(saturating_i64(n as u64)))
    }

    /// `--mmr`: near-duplicate demotion on or off (the default: on only in `decay`).
    pub fn mmr(self, on: bool) -> Self {
        self.push(SearchOption::Mmr(on))
    }

    /// `--token-budget N` (1–16000; above clamped with a notice; 0 is
    /// `invalid_token_budget`).
    pub fn token_budget(self, n: u64) -> Self {
        self.push(SearchOption::TokenBudget(saturating_i64(n)))
    }

    /// `--entity NAME`: a query entity, instead of detecting them; repeat for several.
    pub fn entity(self, name: impl Into<String>) -> Self {
        self.push(SearchOption::Entity(name.into()))
    }

    /// `--rerank`: the weights of the rerank features.
    pub fn rerank(self, weights: RerankWeights) -> Self {
        self.push(SearchOption::Rerank(weights))
    }

    /// `--config FILE`: the settings file (`invalid_option` when it cannot be read or parsed).
    pub fn config(self, path: impl Into<String>) -> Self {
        self.push(SearchOption::Config(path.into()))
    }

    /// The settings to score with instead of the index's `reliora.toml` (what `--config FILE`
    /// reads, given as a value).
    ///
    /// ```
    /// use reliora::settings::Settings;
    /// use reliora::SearchRequest;
    ///
    /// let settings = Settings::from_toml("[bm25f]\nproximity = 0.0\n", "example")?;
    /// let request = SearchRequest::builder("pool timeout").settings(settings).build()?;
    /// # Ok::<(), reliora::Error>(())
    /// ```
    pub fn settings(self, settings: crate::settings::Settings) -> Self {
        self.push(SearchOption::Settings(std::sync::Arc::new(settings)))
    }

    /// Validates the options in the order they were given and returns the request, or the
    /// first invalid option's error (an [`Error::InvalidQuery`](crate::Error::InvalidQuery) with its SPEC code).
    pub fn build(self) -> Result<SearchRequest> {
        let mut request = SearchRequest::new(self.query);
        for option in self.options {
            request.apply(option)?;
        }
        Ok(request)
    }
}

impl SearchRequest {
    /// Applies a JSON object of options, in its key order, with the names and values of a
    /// `--queries` line: flag names or their camelCase spellings (`minScore`,
    /// `projectContext`), `tags` for `tag`; a string or number value is the option's text, an
    /// array gives the option once per item, `null` is skipped, and `full` takes `true` or
    /// `false`. An unknown name is `invalid_option`, as an unknown flag is.
    ///
    /// The keys in `skip` (such as `query`) are left for the caller.
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::{ErrorCode, SearchRequest};
    /// use serde_json::json;
    ///
    /// let options = json!({"limit": 3, "tags": ["rust", "tokio"], "minScore": 0.5, "full": true});
    /// let mut request = SearchRequest::new("runtime panic");
    /// request.apply_json_options(options.as_object().unwrap(), &[])?;
    /// assert_eq!((request.limit(), request.tags().len(), request.full()), (3, 2, true));
    ///
    /// let bad = json!({"limit": "many"});
    /// let error = request.apply_json_options(bad.as_object().unwrap(), &[]).unwrap_err();
    /// assert_eq!(error.code(), ErrorCode::InvalidOption);
    /// # Ok::<(), reliora::Error>(())
    /// ```
    pub fn apply_json_options(
        &mut self,
        options: &Map<String, Value>,
        skip: &[&str],
    ) -> Result<()> {
        for (key, value) in options {
            if skip.contains(&key.as_str()) {
                continue;
            }
            let name = match key.as_str() {
                "tags" => "tag",
                "entities" => "entity",
                other => other,
            };
            let values: Vec<&Value> = match value {
                Value::Array(items) => items.iter().collect(),
                single => vec![single],
            };
            for value in values {
                let text = match value {
                    Value::Null => continue,
                    Value::String(s) => Some(s.clone()),
                    Value::Bool(true) if name == "full" => None,
                    other => Some(other.to_string()),
                };
                self.set_option(name, text.as_deref())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    fn apply(options: Value) -> Result<SearchRequest> {
        let mut request = SearchRequest::new("q");
        request.apply_json_options(options.as_object().unwrap(), &["query"])?;
        Ok(request)
    }

    fn code(options: Value) -> Option<ErrorCode> {
        apply(options).err().map(|e| e.code())
    }

    #[test]
    fn json_options_give_the_command_line_codes() {
        use ErrorCode::*;
        let cases = [
            (json!({"limit": 0}), Some(InvalidLimit)),
            (json!({"limit": "abc"}), Some(InvalidOption)),
            (json!({"limit": 2.5}), Some(InvalidOption)),
            (json!({"limit": true}), Some(InvalidOption)),
            (json!({"limit": 5}), None),
            (json!({"limit": "5"}), None),
            (json!({"minScore": 150}), Some(InvalidMinScore)),
            (json!({"min-score": -1}), Some(InvalidMinScore)),
            (json!({"minScore": 0.5}), None),
            (
                json!({"projectContext": "the of"}),
                Some(InvalidProjectContext),
            ),
            (json!({"tags": ["rust", " - "]}), Some(InvalidTag)),
            (json!({"tag": "rust"}), None),
            (json!({"type": "  "}), Some(InvalidOption)),
            (json!({"profile": "nope"}), Some(UnknownProfile)),
            (json!({"now": "yesterday"}), Some(InvalidOption)),
            (json!({"full": "yes"}), Some(InvalidOption)),
            (json!({"full": false}), None),
            (json!({"backend": "disk"}), Some(InvalidOption)),
            (json!({"bogus": 1}), Some(InvalidOption)),
            (json!({"limit": {"n": 1}}), Some(InvalidOption)),
            (json!({"query": 5, "limit": null}), None),
        ];
        for (options, expected) in cases {
            assert_eq!(code(options.clone()), expected, "{options}");
        }
    }

    #[test]
    fn json_options_are_validated_in_key_order() {
        let error = apply(json!({"tags": " - ", "limit": 0})).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidTag);
        let error = apply(json!({"limit": 0, "tags": " - "})).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidLimit);
    }

    #[test]
    fn json_options_set_every_field() {
        let request = apply(json!({
            "limit": 300, "minScore": 40, "projectContext": "payments", "tags": ["a", "b"],
            "type": " Semantic ", "profile": "standard", "now": "2026-01-01T00:00:00Z",
            "explain": "x-1", "full": true, "backend": "scan"
        }))
        .unwrap();
        assert_eq!(request.limit, 200);
        assert_eq!(request.notices.len(), 1);
        assert_eq!(request.min_score, Some(0.4));
        assert_eq!(request.project_context.as_deref(), Some("payments"));
        assert_eq!(request.tags, ["a", "b"]);
        assert_eq!(request.memory_type.as_deref(), Some("semantic"));
        assert!(request.now.is_some());
        assert_eq!(request.explain.as_deref(), Some("x-1"));
        assert!(request.full);
        assert_eq!(request.backend, Backend::Scan);
    }

    #[test]
    fn builder_reports_the_first_invalid_option_in_call_order() {
        let error = SearchRequest::builder("q")
            .min_score(f64::NAN)
            .limit(0)
            .build()
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidMinScore);
        let error = SearchRequest::builder("q")
            .option("profile", Some("nope"))
            .memory_type(" ")
            .build()
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::UnknownProfile);
        let error = SearchRequest::builder("q")
            .option("bogus", None)
            .build()
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidOption);
    }

    #[test]
    fn builder_sets_what_the_flags_set() {
        let request = SearchRequest::builder("q")
            .limit(7)
            .min_score(50.0)
            .tag("rust")
            .tag("tokio")
            .memory_type("Episodic")
            .explain("rs-1")
            .full(true)
            .backend(Backend::Index)
            .build()
            .unwrap();
        assert_eq!(request.limit, 7);
        assert_eq!(request.min_score, Some(0.5));
        assert_eq!(request.tags, ["rust", "tokio"]);
        assert_eq!(request.memory_type.as_deref(), Some("episodic"));
        assert_eq!(request.explain.as_deref(), Some("rs-1"));
        assert!(request.full);
        assert_eq!(request.backend, Backend::Index);
        assert!(
            !SearchRequest::builder("q")
                .full(false)
                .build()
                .unwrap()
                .full
        );
    }
}
