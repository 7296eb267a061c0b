//! A search request and the validation of its options (SPEC §3, §6): the same rules serve the
//! command line, `--queries` batch lines and the MCP server.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::record::Timestamp;
use crate::search::budget::MAX_TOKEN_BUDGET;
use crate::search::profiles::rerank::RerankWeights;
use crate::search::settings::Settings;
use crate::text::{self, TextAnalyzer};

/// Default number of results.
pub const DEFAULT_LIMIT: usize = 10;
/// Largest number of results; larger limits are clamped with a notice.
pub const MAX_LIMIT: usize = 200;
/// Largest `--candidates`; larger values are clamped with a notice.
pub const MAX_CANDIDATES: usize = 500;
/// Longest option value, in characters (a resource cap; SPEC is silent). A longer value is an
/// error with the option's code: unlike the query, a filter cut short would silently change
/// what it selects.
pub const MAX_OPTION_CHARS: usize = 8192;
/// Most `--tag` options in one request: a record has at most 256 tags, so more can never match.
pub const MAX_TAGS: usize = 256;

/// A ranking profile (SPEC §4–5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// The default, SPEC §4.
    Standard,
    /// Salience and time, SPEC §5.1.
    Decay,
    /// Text match, recency and pins, SPEC §5.2.
    Recency,
    /// Field-weighted BM25F, SPEC §5.3.
    Bm25f,
}

impl Profile {
    /// Every profile, in SPEC order.
    pub const ALL: [Profile; 4] = [
        Profile::Standard,
        Profile::Decay,
        Profile::Recency,
        Profile::Bm25f,
    ];

    /// Parses a profile name.
    pub fn parse(name: &str) -> Result<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| {
                Error::query(
                    ErrorCode::UnknownProfile,
                    format!(
                        "--profile {name:?}: unknown profile (known: standard, decay, recency, \
                         bm25f)"
                    ),
                )
            })
    }

    /// The profile's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Standard => "standard",
            Profile::Decay => "decay",
            Profile::Recency => "recency",
            Profile::Bm25f => "bm25f",
        }
    }
}

/// Where a search reads from (SPEC §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The index, falling back to a scan of the stored records when it cannot be used.
    #[default]
    Auto,
    /// The index only: fail rather than fall back.
    Index,
    /// Scan the stored records on purpose.
    Scan,
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Profile {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for Profile {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Backend {
    /// Parses `auto`, `index` or `scan`.
    pub fn parse(name: &str) -> Result<Backend> {
        match name {
            "auto" => Ok(Backend::Auto),
            "index" => Ok(Backend::Index),
            "scan" => Ok(Backend::Scan),
            _ => Err(Error::query(
                ErrorCode::InvalidOption,
                format!("--backend {name:?}: expected auto, index or scan"),
            )),
        }
    }

    /// The backend's name, as `--backend` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Index => "index",
            Backend::Scan => "scan",
        }
    }
}

/// One search: the query and its validated options.
///
/// Written with [`SearchRequest::builder`] (typed options, validated by
/// [`QueryBuilder::build`](crate::QueryBuilder::build)) or, for options that arrive as text
/// (command-line flags, MCP arguments, `--queries` lines), with [`SearchRequest::set_option`].
/// Either way every option passes the same validation, with the same SPEC error codes. The
/// fields are read through accessors of the same names.
///
/// # Example
///
/// ```
/// use reliora::{Backend, Profile, SearchRequest};
///
/// let request = SearchRequest::builder("tokio runtime panic")
///     .profile(Profile::Bm25f)
///     .limit(5)
///     .backend(Backend::Index)
///     .build()?;
/// assert_eq!((request.profile(), request.limit()), (Profile::Bm25f, 5));
///
/// // The same options as text, as the command line gives them.
/// let mut same = SearchRequest::new("tokio runtime panic");
/// same.set_option("profile", Some("bm25f"))?;
/// same.set_option("limit", Some("5"))?;
/// assert_eq!(same.profile(), Profile::Bm25f);
/// # Ok::<(), reliora::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The query text; any text is valid.
    pub(crate) query: String,
    /// At most this many results (1–200).
    pub(crate) limit: usize,
    /// Keep results whose normalizedScore is at least this fraction.
    pub(crate) min_score: Option<f64>,
    /// `--project-context`.
    pub(crate) project_context: Option<String>,
    /// `--tag`, each required.
    pub(crate) tags: Vec<String>,
    /// `--type`, trimmed and lowercased.
    pub(crate) memory_type: Option<String>,
    /// The ranking profile.
    pub(crate) profile: Profile,
    /// The reference time; the clock when absent.
    pub(crate) now: Option<Timestamp>,
    /// `--explain ID`.
    pub(crate) explain: Option<String>,
    /// `--full`: include each result's whole record.
    pub(crate) full: bool,
    /// Index, scan, or index with fallback.
    pub(crate) backend: Backend,
    /// Notices produced while validating (clamped values).
    pub(crate) notices: Vec<String>,
    /// Records treated as absent, by id (not a command-line option: the duplicate check of
    /// `record` uses it).
    pub(crate) exclude_ids: Vec<String>,
    /// `--include-superseded`: `decay` keeps superseded records.
    pub(crate) include_superseded: bool,
    /// `--candidates N` (1–500): `decay` keeps the top N by relevance (default 200); the other
    /// profiles, when it is given, keep their top N before the post-steps.
    pub(crate) candidates: Option<usize>,
    /// `--mmr`: near-duplicate demotion; `None` is the profile's default (on only in `decay`).
    pub(crate) mmr: Option<bool>,
    /// `--token-budget N` (1–16000): keep results while their JSON fits in 4 × N characters.
    pub(crate) token_budget: Option<u64>,
    /// `--entity NAME` (repeatable): the query entities, instead of detecting them.
    pub(crate) entities: Vec<String>,
    /// `--rerank name=weight,…`.
    pub(crate) rerank: Option<RerankWeights>,
    /// `--config FILE` (or `reliora.toml` in the index directory): the settings and where they
    /// came from. `None`: the SPEC defaults.
    pub(crate) settings: Option<(Arc<Settings>, String)>,
}

/// One option with its typed value, as [`QueryBuilder`](crate::QueryBuilder) records it and
/// [`SearchRequest::set_option`] parses it; [`SearchRequest::apply`] validates it.
#[derive(Debug, Clone)]
pub(crate) enum SearchOption {
    /// `--limit`; the text shown in messages.
    Limit(i64, String),
    MinScore(f64, String),
    ProjectContext(String),
    Tag(String),
    MemoryType(String),
    Profile(Profile),
    Now(Timestamp),
    Explain(String),
    Full(bool),
    Backend(Backend),
    IncludeSuperseded(bool),
    Candidates(i64),
    Mmr(bool),
    TokenBudget(i64),
    Entity(String),
    Rerank(RerankWeights),
    Config(String),
    /// Settings given as a value (the library's builder).
    Settings(Arc<Settings>),
    /// An option by its flag name and textual value.
    Named(String, Option<String>),
}

/// Saturates an unsigned count into the `i64` the validation takes.
pub(crate) fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SearchRequest {
    /// A request for `query` with every option at its default.
    pub fn new(query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            limit: DEFAULT_LIMIT,
            min_score: None,
            project_context: None,
            tags: Vec::new(),
            memory_type: None,
            profile: Profile::Standard,
            now: None,
            explain: None,
            full: false,
            backend: Backend::Auto,
            notices: Vec::new(),
            exclude_ids: Vec::new(),
            include_superseded: false,
            candidates: None,
            mmr: None,
            token_budget: None,
            entities: Vec::new(),
            rerank: None,
            settings: None,
        }
    }

    /// The query text.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Replaces the query text, keeping every option (a `--queries` line over the defaults).
    pub fn set_query(&mut self, query: impl Into<String>) {
        self.query = query.into();
    }

    /// At most this many results (1–200; default 10).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The `--min-score` fraction in [0, 1], when given.
    pub fn min_score(&self) -> Option<f64> {
        self.min_score
    }

    /// `--project-context`, when given.
    pub fn project_context(&self) -> Option<&str> {
        self.project_context.as_deref()
    }

    /// The required tags, in the order given.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// `--type`, trimmed and lowercased, when given.
    pub fn memory_type(&self) -> Option<&str> {
        self.memory_type.as_deref()
    }

    /// The ranking profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The reference time; `None` reads the clock when searching.
    pub fn now(&self) -> Option<&Timestamp> {
        self.now.as_ref()
    }

    /// The id `--explain` asks about, when given.
    pub fn explain(&self) -> Option<&str> {
        self.explain.as_deref()
    }

    /// Whether each result includes its whole record (`--full`).
    pub fn full(&self) -> bool {
        self.full
    }

    /// Where the search reads from.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Notices produced while validating (clamped values); the response repeats them.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Whether `decay` keeps superseded records (`--include-superseded`).
    pub fn include_superseded(&self) -> bool {
        self.include_superseded
    }

    /// `--candidates N` (1–500), when given.
    pub fn candidates(&self) -> Option<usize> {
        self.candidates
    }

    /// `--mmr` when given; `None` is the profile's default (see [`Self::mmr_enabled`]).
    pub fn mmr(&self) -> Option<bool> {
        self.mmr
    }

    /// `--token-budget N` (1–16000), when given.
    pub fn token_budget(&self) -> Option<u64> {
        self.token_budget
    }

    /// The query entities given with `--entity`.
    pub fn entities(&self) -> &[String] {
        &self.entities
    }

    /// The `--rerank` weights, when given.
    pub fn rerank(&self) -> Option<&RerankWeights> {
        self.rerank.as_ref()
    }

    /// Where the `--config` settings came from, when given.
    pub fn config(&self) -> Option<&str> {
        self.settings.as_ref().map(|(_, origin)| origin.as_str())
    }

    /// Whether near-duplicate demotion runs: `--mmr` when given, else only in `decay`.
    pub fn mmr_enabled(&self) -> bool {
        self.mmr.unwrap_or(self.profile == Profile::Decay)
    }

    /// Sets the option `name` (a flag name without dashes, e.g. `limit`, `min-score`, or its
    /// camelCase spelling) from its textual value, validating it with the SPEC error codes.
    /// Flags without a value (`full`) take `None`.
    ///
    /// This is the one adapter from names and text to typed options: the command line, the
    /// MCP server and `--queries` lines all set options through it. Rust callers usually
    /// prefer the typed [`SearchRequest::builder`].
    pub fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<()> {
        let option = SearchOption::parse(name, value)?;
        self.apply(option)
    }

    /// Validates one typed option and sets it.
    pub(crate) fn apply(&mut self, option: SearchOption) -> Result<()> {
        match option {
            SearchOption::Limit(n, shown) => {
                let limit = MAX_LIMIT as u64;
                self.limit =
                    self.count("limit", n, &shown, limit, ErrorCode::InvalidLimit)? as usize;
            }
            SearchOption::MinScore(x, shown) => {
                self.min_score = Some(min_score_fraction(x).ok_or_else(|| {
                    Error::query(
                        ErrorCode::InvalidMinScore,
                        format!(
                            "--min-score {shown}: must be a fraction in [0, 1] or a percentage in (1, 100]"
                        ),
                    )
                })?);
            }
            SearchOption::ProjectContext(v) => {
                check_length("project-context", &v)?;
                if TextAnalyzer::new(false)
                    .tokens(&v, text::route(&v))
                    .is_empty()
                {
                    return Err(Error::query(
                        ErrorCode::InvalidProjectContext,
                        format!("--project-context {v:?} has no searchable tokens"),
                    ));
                }
                self.project_context = Some(v);
            }
            SearchOption::Tag(v) => {
                check_length("tag", &v)?;
                if text::phrase(&v).is_empty() {
                    return Err(Error::query(
                        ErrorCode::InvalidTag,
                        format!("--tag {v:?} has no words"),
                    ));
                }
                if self.tags.len() == MAX_TAGS {
                    return Err(Error::query(
                        ErrorCode::InvalidTag,
                        format!("--tag {v:?}: at most {MAX_TAGS} --tag options are allowed"),
                    ));
                }
                self.tags.push(v);
            }
            SearchOption::MemoryType(v) => {
                let t = non_blank("type", &v, "a non-blank memory type")?;
                self.memory_type = Some(t.to_lowercase());
            }
            SearchOption::Profile(profile) => self.profile = profile,
            SearchOption::Now(now) => self.now = Some(now),
            SearchOption::Explain(id) => {
                check_length("explain", &id)?;
                self.explain = Some(id);
            }
            SearchOption::Full(full) => self.full = full,
            SearchOption::Backend(backend) => self.backend = backend,
            SearchOption::IncludeSuperseded(on) => self.include_superseded = on,
            SearchOption::Candidates(n) => {
                let (shown, max) = (n.to_string(), MAX_CANDIDATES as u64);
                let n = self.count("candidates", n, &shown, max, ErrorCode::InvalidCandidates)?;
                self.candidates = Some(n as usize);
            }
            SearchOption::Mmr(on) => self.mmr = Some(on),
            SearchOption::TokenBudget(n) => {
                let (shown, code) = (n.to_string(), ErrorCode::InvalidTokenBudget);
                let n = self.count("token-budget", n, &shown, MAX_TOKEN_BUDGET, code)?;
                self.token_budget = Some(n);
            }
            SearchOption::Entity(v) => {
                let name = non_blank("entity", &v, "a non-blank name")?;
                self.entities.push(name.to_string());
            }
            SearchOption::Rerank(weights) => self.rerank = Some(weights),
            SearchOption::Config(path) => {
                check_length("config", &path)?;
                let settings = Settings::load(Path::new(&path))?;
                self.settings = Some((Arc::new(settings), path));
            }
            SearchOption::Settings(settings) => {
                self.settings = Some((settings, "the request's settings".to_string()));
            }
            SearchOption::Named(name, value) => self.set_option(&name, value.as_deref())?,
        }
        Ok(())
    }

    /// A count option `--flag n` (shown as the user wrote it): at least 1, else `code`; above
    /// `max`, clamped with a notice.
    fn count(&mut self, flag: &str, n: i64, shown: &str, max: u64, code: ErrorCode) -> Result<u64> {
        if n < 1 {
            return Err(Error::query(
                code,
                format!("--{flag} {shown}: must be at least 1"),
            ));
        }
        if n as u64 > max {
            self.notices
                .push(format!("--{flag} {shown} clamped to {max}"));
            return Ok(max);
        }
        Ok(n as u64)
    }
}

/// The trimmed value of `--flag`, which must not be blank (else `--flag needs {what}`).
fn non_blank<'v>(flag: &str, value: &'v str, what: &str) -> Result<&'v str> {
    check_length(flag, value)?;
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(Error::query(
            ErrorCode::InvalidOption,
            format!("--{flag} needs {what}"),
        ));
    }
    Ok(trimmed)
}

impl SearchOption {
    /// Parses a flag name (without dashes, or its camelCase spelling) and its textual value.
    /// Only the form of the value is checked here; [`SearchRequest::apply`] validates it.
    pub(crate) fn parse(name: &str, value: Option<&str>) -> Result<SearchOption> {
        let flag = format!("--{name}");
        let need = |value: Option<&str>| -> Result<String> {
            value.map(str::to_string).ok_or_else(|| {
                Error::query(ErrorCode::InvalidOption, format!("{flag} needs a value"))
            })
        };
        if let Some(v) = value {
            check_length(name, v)?;
        }
        // Integers beyond i64 are out of range like any other: clamped or refused.
        let integer =
            |v: &str| -> Result<i64> { v.trim().parse().map_err(|_| unparsable(&flag, v)) };
        Ok(match name {
            "limit" => {
                let v = need(value)?;
                let t = v.trim();
                let all_digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
                let n: i64 = match t.parse() {
                    Ok(n) => n,
                    Err(_) if all_digits(t.strip_prefix('+').unwrap_or(t)) => i64::MAX,
                    Err(_) if t.strip_prefix('-').is_some_and(all_digits) => i64::MIN,
                    Err(_) => return Err(unparsable(&flag, &v)),
                };
                SearchOption::Limit(n, t.to_string())
            }
            "min-score" | "minScore" => {
                let v = need(value)?;
                let x: f64 = v.trim().parse().map_err(|_| unparsable(&flag, &v))?;
                SearchOption::MinScore(x, v)
            }
            "project-context" | "projectContext" => SearchOption::ProjectContext(need(value)?),
            "tag" => SearchOption::Tag(need(value)?),
            "type" => SearchOption::MemoryType(need(value)?),
            "profile" => SearchOption::Profile(Profile::parse(&need(value)?)?),
            "now" => {
                let v = need(value)?;
                SearchOption::Now(Timestamp::parse(v.trim()).map_err(|e| {
                    Error::query(
                        ErrorCode::InvalidOption,
                        format!("--now {v:?} is not an RFC 3339 timestamp: {e}"),
                    )
                })?)
            }
            "explain" => SearchOption::Explain(need(value)?),
            "full" => SearchOption::Full(parse_bool(&flag, value)?),
            "backend" => SearchOption::Backend(Backend::parse(&need(value)?)?),
            "include-superseded" | "includeSuperseded" => {
                SearchOption::IncludeSuperseded(parse_bool(&flag, value)?)
            }
            "candidates" => SearchOption::Candidates(integer(&need(value)?)?),
            "mmr" => SearchOption::Mmr(parse_bool(&flag, value)?),
            "token-budget" | "tokenBudget" => SearchOption::TokenBudget(integer(&need(value)?)?),
            "entity" => SearchOption::Entity(need(value)?),
            "rerank" => {
                let v = need(value)?;
                SearchOption::Rerank(RerankWeights::parse(&v).map_err(|problem| {
                    Error::query(
                        ErrorCode::InvalidOption,
                        format!("--rerank {v:?}: {problem} (expected name=weight,…)"),
                    )
                })?)
            }
            "config" => SearchOption::Config(need(value)?),
            _ => {
                return Err(Error::query(
                    ErrorCode::InvalidOption,
                    format!("unknown option {flag}"),
                ))
            }
        })
    }
}

/// Refuses an option value longer than [`MAX_OPTION_CHARS`], with the option's code.
fn check_length(name: &str, value: &str) -> Result<()> {
    let chars = value.chars().count();
    if chars > MAX_OPTION_CHARS {
        let code = match name {
            "project-context" | "projectContext" => ErrorCode::InvalidProjectContext,
            "tag" => ErrorCode::InvalidTag,
            _ => ErrorCode::InvalidOption,
        };
        return Err(Error::query(
            code,
            format!(
                "--{name}: a value of {chars} characters is longer than the {MAX_OPTION_CHARS} allowed"
            ),
        ));
    }
    Ok(())
}

/// Maps a `--min-score` value to a fraction: [0, 1] as is, (1, 100] divided by 100.
pub fn min_score_fraction(x: f64) -> Option<f64> {
    if !x.is_finite() || !(0.0..=100.0).contains(&x) {
        None
    } else if x <= 1.0 {
        Some(x)
    } else {
        Some(x / 100.0)
    }
}

fn parse_bool(flag: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(v) => Err(unparsable(flag, v)),
    }
}

fn unparsable(flag: &str, value: &str) -> Error {
    Error::query(
        ErrorCode::InvalidOption,
        format!("{flag} {value:?}: not a valid value"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(name: &str, value: &str) -> Option<ErrorCode> {
        SearchRequest::new("q")
            .set_option(name, Some(value))
            .err()
            .map(|e| e.code())
    }

    #[test]
    fn option_validation_table() {
        use ErrorCode::*;
        let cases = [
            ("limit", "0", Some(InvalidLimit)),
            ("limit", "-3", Some(InvalidLimit)),
            ("limit", "abc", Some(InvalidOption)),
            ("limit", "1", None),
            ("limit", "500", None),
            ("limit", "99999999999999999999999", None),
            ("limit", "-99999999999999999999999", Some(InvalidLimit)),
            ("limit", "1e3", Some(InvalidOption)),
            ("min-score", "1e400", Some(InvalidMinScore)),
            (
                "project-context",
                &"x".repeat(MAX_OPTION_CHARS + 1),
                Some(InvalidProjectContext),
            ),
            ("project-context", &"x ".repeat(MAX_OPTION_CHARS / 2), None),
            ("tag", &"x".repeat(MAX_OPTION_CHARS + 1), Some(InvalidTag)),
            (
                "explain",
                &"x".repeat(MAX_OPTION_CHARS + 1),
                Some(InvalidOption),
            ),
            ("min-score", "150", Some(InvalidMinScore)),
            ("min-score", "-0.1", Some(InvalidMinScore)),
            ("min-score", "NaN", Some(InvalidMinScore)),
            ("min-score", "inf", Some(InvalidMinScore)),
            ("min-score", "x", Some(InvalidOption)),
            ("min-score", "100", None),
            ("min-score", "0", None),
            ("project-context", "the of", Some(InvalidProjectContext)),
            ("project-context", "!!!", Some(InvalidProjectContext)),
            ("project-context", "payments", None),
            ("tag", " - ", Some(InvalidTag)),
            ("tag", "rust", None),
            ("type", "  ", Some(InvalidOption)),
            ("profile", "nope", Some(UnknownProfile)),
            ("now", "yesterday", Some(InvalidOption)),
            ("now", "2026-01-01T00:00:00Z", None),
            ("backend", "disk", Some(InvalidOption)),
            ("bogus", "1", Some(InvalidOption)),
            ("profile", "decay", None),
            ("profile", "recency", None),
            ("profile", "bm25f", None),
            ("profile", "Decay", Some(UnknownProfile)),
            ("candidates", "0", Some(InvalidCandidates)),
            ("candidates", "-1", Some(InvalidCandidates)),
            ("candidates", "x", Some(InvalidOption)),
            ("candidates", "1", None),
            ("candidates", "501", None),
            ("token-budget", "0", Some(InvalidTokenBudget)),
            ("tokenBudget", "-5", Some(InvalidTokenBudget)),
            ("token-budget", "1.5", Some(InvalidOption)),
            ("token-budget", "16001", None),
            ("mmr", "false", None),
            ("mmr", "maybe", Some(InvalidOption)),
            ("include-superseded", "yes", Some(InvalidOption)),
            ("entity", "  ", Some(InvalidOption)),
            ("entity", "Tokio", None),
            ("rerank", "relevance=1,temporal=0.5", None),
            ("rerank", "relevance", Some(InvalidOption)),
            ("rerank", "relevance=abc", Some(InvalidOption)),
            ("config", "/nonexistent/reliora.toml", Some(InvalidOption)),
        ];
        for (name, value, expected) in cases {
            assert_eq!(code_of(name, value), expected, "--{name} {value}");
        }
    }

    #[test]
    fn min_score_fraction_and_percentage() {
        assert_eq!(min_score_fraction(0.5), Some(0.5));
        assert_eq!(min_score_fraction(1.0), Some(1.0));
        assert_eq!(min_score_fraction(50.0), Some(0.5));
        assert_eq!(min_score_fraction(100.0), Some(1.0));
        assert_eq!(min_score_fraction(100.5), None);
    }

    #[test]
    fn candidates_and_token_budget_are_clamped_with_a_notice() {
        let mut request = SearchRequest::new("q");
        request.set_option("candidates", Some("500")).unwrap();
        assert_eq!(request.candidates, Some(500));
        assert!(request.notices.is_empty());
        request.set_option("candidates", Some("501")).unwrap();
        assert_eq!(request.candidates, Some(500));
        request.set_option("token-budget", Some("16000")).unwrap();
        assert_eq!(request.token_budget, Some(16_000));
        assert_eq!(request.notices.len(), 1);
        request.set_option("token-budget", Some("99999")).unwrap();
        assert_eq!(request.token_budget, Some(16_000));
        assert_eq!(request.notices.len(), 2);
        assert!(request.notices[0].contains("--candidates 501"));
        assert!(request.notices[1].contains("--token-budget 99999"));
    }

    #[test]
    fn mmr_defaults_to_on_only_in_decay() {
        for profile in Profile::ALL {
            let mut request = SearchRequest::new("q");
            request.profile = profile;
            assert_eq!(request.mmr_enabled(), profile == Profile::Decay);
            request.set_option("mmr", None).unwrap();
            assert!(request.mmr_enabled());
            request.set_option("mmr", Some("false")).unwrap();
            assert!(!request.mmr_enabled());
        }
    }

    #[test]
    fn at_most_256_tags() {
        let mut request = SearchRequest::new("q");
        for i in 0..MAX_TAGS {
            request.set_option("tag", Some(&format!("t{i}"))).unwrap();
        }
        let error = request.set_option("tag", Some("one-more")).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidTag);
    }

    #[test]
    fn an_integer_limit_beyond_i64_is_clamped_too() {
        let mut request = SearchRequest::new("q");
        request
            .set_option("limit", Some("123456789012345678901234567890"))
            .unwrap();
        assert_eq!(request.limit, MAX_LIMIT);
        assert!(request.notices[0].contains("123456789012345678901234567890"));
    }

    #[test]
    fn limit_above_200_is_clamped_with_a_notice() {
        let mut request = SearchRequest::new("q");
        request.set_option("limit", Some("201")).unwrap();
        assert_eq!(request.limit, 200);
        assert_eq!(request.notices.len(), 1);
        request.set_option("limit", Some("200")).unwrap();
        assert_eq!(request.notices.len(), 1);
    }
}
