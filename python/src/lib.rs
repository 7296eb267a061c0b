//! The native module `reliora._reliora` behind the Python package `reliora`.
//!
//! It is deliberately thin: paths, strings and JSON text in and out, every library call in
//! [`engine`], and the Pythonic API (classes, keyword arguments, typed results) written in
//! Python on top (`reliora/__init__.py`). Every call that touches an index releases the GIL,
//! so Python threads search (and build, and write) in parallel.
//!
//! No `unsafe` here beyond what the PyO3 macros generate.

// Each #[pyfunction] mirrors a Python signature argument for argument (`build` has eight).
#![allow(clippy::too_many_arguments)]

use std::path::PathBuf;

use pyo3::prelude::*;

mod engine;

/// Search options as the Python layer passes them: `(flag name, value or None)`.
type Options = Vec<(String, Option<String>)>;

/// The library's failure as the exception class of its SPEC code, made by
/// `reliora._errors.from_code` so that the classes are plain Python ones.
fn raise(py: Python<'_>, failure: engine::Failure) -> PyErr {
    let made = py
        .import("reliora._errors")
        .and_then(|module| module.getattr("from_code"))
        .and_then(|from_code| from_code.call1((failure.code, failure.message)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(error) => error,
    }
}

/// An opened index directory that sees every later write, from this process or another.
#[pyclass(frozen, module = "reliora._reliora")]
struct Reader {
    inner: engine::Reader,
}

#[pymethods]
impl Reader {
    /// Opens the index in `path` (which must hold one).
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Reader> {
        py.detach(|| engine::Reader::open(&path))
            .map(|inner| Reader { inner })
            .map_err(|f| raise(py, f))
    }

    /// The index directory.
    #[getter]
    fn path(&self) -> String {
        self.inner.dir().to_string_lossy().into_owned()
    }

    /// One search: the response as JSON text.
    fn search(&self, py: Python<'_>, query: String, options: Options) -> PyResult<String> {
        py.detach(|| self.inner.search(&query, &options))
            .map_err(|f| raise(py, f))
    }

    /// Several queries searched in parallel: the responses as JSON texts, in query order.
    fn search_batch(
        &self,
        py: Python<'_>,
        queries: Vec<String>,
        options: Options,
    ) -> PyResult<Vec<String>> {
        py.detach(|| self.inner.search_batch(&queries, &options))
            .map_err(|f| raise(py, f))
    }

    /// SPEC §6.1 `supersededBy` of this index's superseded ids, as a JSON object.
    fn superseded_by(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.inner.superseded_by())
            .map_err(|f| raise(py, f))
    }

    /// Phase one of a sharded search on this shard: its collection statistics as JSON.
    fn collection_statistics(
        &self,
        py: Python<'_>,
        query: String,
        options: Options,
    ) -> PyResult<String> {
        py.detach(|| self.inner.collection_statistics(&query, &options))
            .map_err(|f| raise(py, f))
    }

    /// Phase two of a sharded search on this shard: its candidates as JSON.
    fn shard_candidates(
        &self,
        py: Python<'_>,
        query: String,
        options: Options,
        shard_query: String,
    ) -> PyResult<String> {
        py.detach(|| self.inner.shard_candidates(&query, &options, &shard_query))
            .map_err(|f| raise(py, f))
    }

    /// The live record named by an id or a locator: (record JSON, locator).
    fn get(&self, py: Python<'_>, id_or_locator: String) -> PyResult<(String, String)> {
        py.detach(|| self.inner.get(&id_or_locator))
            .map_err(|f| raise(py, f))
    }
}

/// Builds an index generation: the build report as JSON text.
#[pyfunction]
fn build(
    py: Python<'_>,
    path: PathBuf,
    inputs: Vec<PathBuf>,
    field_map: Vec<String>,
    stem: bool,
    skip_invalid: bool,
    replace: bool,
    shard: Option<(u32, u32)>,
) -> PyResult<String> {
    py.detach(|| {
        engine::build(
            &path,
            inputs,
            &field_map,
            stem,
            skip_invalid,
            replace,
            shard,
        )
    })
    .map_err(|f| raise(py, f))
}

/// The id of a record given as JSON text, to route it to its shard.
#[pyfunction]
fn record_id(py: Python<'_>, text: String) -> PyResult<String> {
    engine::record_id(&text).map_err(|f| raise(py, f))
}

/// The similar records a record would be warned of in one index: JSON.
#[pyfunction]
fn similar(py: Python<'_>, path: PathBuf, text: String) -> PyResult<String> {
    py.detach(|| engine::similar(&path, &text))
        .map_err(|f| raise(py, f))
}

/// Records one record reporting the warnings given (JSON) instead of searching: the report.
#[pyfunction]
fn record_with_warnings(
    py: Python<'_>,
    path: PathBuf,
    text: String,
    warnings: String,
) -> PyResult<String> {
    py.detach(|| engine::record_with_warnings(&path, &text, &warnings))
        .map_err(|f| raise(py, f))
}

/// The shard of `count` that owns `id`.
#[pyfunction]
fn shard_of(id: &str, count: u32) -> u32 {
    engine::shard_of(id, count)
}

/// Every shard's collection statistics (JSON), added up.
#[pyfunction]
fn combine_statistics(py: Python<'_>, parts: Vec<String>) -> PyResult<String> {
    engine::combine_statistics(&parts).map_err(|f| raise(py, f))
}

/// Every shard's supersededBy map (JSON), combined.
#[pyfunction]
fn combine_superseded_by(py: Python<'_>, parts: Vec<String>) -> PyResult<String> {
    engine::combine_superseded_by(&parts).map_err(|f| raise(py, f))
}

/// Merges the shards' candidates: (response JSON or None, shards to ask again deeper).
#[pyfunction]
fn merge(
    py: Python<'_>,
    query: String,
    options: Options,
    shard_query: String,
    parts: Vec<String>,
) -> PyResult<(Option<String>, Vec<usize>)> {
    py.detach(|| engine::merge(&query, &options, &shard_query, &parts))
        .map_err(|f| raise(py, f))
}

/// Records one record given as JSON text: the report as JSON text.
#[pyfunction]
fn record(py: Python<'_>, path: PathBuf, text: String) -> PyResult<String> {
    py.detach(|| engine::record(&path, &text))
        .map_err(|f| raise(py, f))
}

/// Adds one feedback outcome: the report as JSON text.
#[pyfunction]
fn feedback(py: Python<'_>, path: PathBuf, id: String, outcome: String) -> PyResult<String> {
    py.detach(|| engine::feedback(&path, &id, &outcome))
        .map_err(|f| raise(py, f))
}

/// Deletes a record: the report as JSON text.
#[pyfunction]
fn delete(py: Python<'_>, path: PathBuf, id: String) -> PyResult<String> {
    py.detach(|| engine::delete(&path, &id))
        .map_err(|f| raise(py, f))
}

/// Compacts the index: the report as JSON text.
#[pyfunction]
fn compact(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    py.detach(|| engine::compact(&path))
        .map_err(|f| raise(py, f))
}

/// Evaluates a BEIR folder: the metrics as JSON text.
#[pyfunction]
fn eval_beir(
    py: Python<'_>,
    path: PathBuf,
    split: String,
    field_map: Vec<String>,
    stem: bool,
    skip_invalid: bool,
    options: Options,
) -> PyResult<String> {
    py.detach(|| engine::eval_beir(path, split, &field_map, stem, skip_invalid, &options))
        .map_err(|f| raise(py, f))
}

/// The native half of the `reliora` package.
#[pymodule]
fn _reliora(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Reader>()?;
    module.add_function(wrap_pyfunction!(build, module)?)?;
    module.add_function(wrap_pyfunction!(record, module)?)?;
    module.add_function(wrap_pyfunction!(feedback, module)?)?;
    module.add_function(wrap_pyfunction!(delete, module)?)?;
    module.add_function(wrap_pyfunction!(compact, module)?)?;
    module.add_function(wrap_pyfunction!(eval_beir, module)?)?;
    module.add_function(wrap_pyfunction!(record_id, module)?)?;
    module.add_function(wrap_pyfunction!(similar, module)?)?;
    module.add_function(wrap_pyfunction!(record_with_warnings, module)?)?;
    module.add_function(wrap_pyfunction!(shard_of, module)?)?;
    module.add_function(wrap_pyfunction!(combine_statistics, module)?)?;
    module.add_function(wrap_pyfunction!(combine_superseded_by, module)?)?;
    module.add_function(wrap_pyfunction!(merge, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
