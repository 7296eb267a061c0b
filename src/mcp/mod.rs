//! The MCP server: `reliora mcp` (SPEC §10), built on the official Rust SDK ([`rmcp`]).
//!
//! Four tools, with the semantics and the JSON of the command line:
//!
//! | tool | arguments | structured content |
//! |---|---|---|
//! | `search` | `query` and the options of a `--queries` line: `limit`, `minScore`, `projectContext`, `tags`, `type`, `profile`, `now`, `explain`, `full`, `backend` | the response of `reliora search` (SPEC §7) |
//! | `record` | `record`: the record object (or a string holding it) | `{"id", "locator", "replaced", "warnings"}` |
//! | `feedback` | `id`, `outcome` (`success`, `partial`, `failure`, `not-applicable`, `outdated`) | `{"id", "outcome", "feedback"}` |
//! | `show` | `id`: an id or a locator | the stored record, as `reliora show` prints it |
//!
//! Each tool declares an input schema and an output schema (see the `schema` module). Every
//! failure of a tool — an invalid argument, an invalid record, an unknown id, a damaged
//! index — is a *tool error*: a result with `isError: true` whose only content is a text block
//! holding the CLI's error JSON `{"error": CODE, "message": …}`, CODE being the SPEC code
//! ([`ErrorCode`](crate::ErrorCode)), with paths named relative to the index directory. It has
//! no structured content: structured content must match the tool's output schema, which
//! describes answers, and clients that validate it (the TypeScript SDK does, errors included)
//! would reject the error instead of showing it. An agent reads it like any answer and can
//! correct its call. An argument the tool's input schema does not declare is `invalid_option`,
//! refused before anything is opened. Protocol errors (JSON-RPC) are left for what is not a
//! tool call at all: an unknown tool, a malformed request.
//!
//! Every call works on the index directory afresh: searches go through a
//! [`IndexReader`](crate::IndexReader), which reopens the index whenever another process changed it,
//! and writes through a [`IndexWriter`], durable when the call returns. The library calls run on Tokio's blocking pool, so a write
//! waiting for another process's writer lock never stalls the protocol. The server writes
//! nothing but protocol messages to stdout; its few log lines go to stderr.
//!
//! # Example
//!
//! The tools are plain values of the SDK, so a server can run on any transport:
//!
//! ```
//! use reliora::mcp::McpServer;
//! use rmcp::ServerHandler;
//!
//! let dir = tempfile::tempdir()?;
//! let server = McpServer::new(dir.path());
//! let info = server.get_info();
//! assert!(info.instructions.unwrap().contains("before"));
//! let names: Vec<_> = McpServer::tools().into_iter().map(|t| t.name).collect();
//! assert_eq!(names, ["feedback", "record", "search", "show"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod framing;
mod schema;
mod tools;

pub use framing::MAX_MESSAGE_BYTES;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

use crate::error::Result;
use crate::handle::writer::IndexWriter;
use tools::Memory;

/// What the server tells an agent when it connects: when to search and when to record.
pub const INSTRUCTIONS: &str = "\
Reliora is your experience memory: records of past tasks, the problems met, what fixed them, \
what failed, and when that applies, searchable in milliseconds.

When to search:
- Before starting a task: search with a short description of the task, the stack and the \
project (projectContext narrows to a project, tags to a technology).
- When an error appears: search with the error message as it is, before trying fixes.
A strong or moderate match may hold the fix, or the attempts that already failed. matchLevel is \
retrieval evidence, not correctness: read the record (full: true, or show) for its \
applicability, warnings, verification, confidence and feedback before you rely on it. A weak or \
empty answer is honest: nothing relevant is known.

After using a record, report how it went with feedback (success, partial, failure, \
not-applicable, outdated): it ranks records that work above records that do not.

When to record: after you verified a fix (the tests pass, the error is gone), never for an \
unverified guess. Give a title as someone searching would phrase the problem, the task, the \
problems (exact error messages), the solution, whyItWorked, failedAttempts, warnings, tags, \
projectContext, applicability and verification. record answers with warnings about similar \
records: when one is the same experience, record again with its id to replace it, or set \
supersedes to its id when yours corrects it.

Tool errors come back as {\"error\": CODE, \"message\": ...}; the message names what to fix.";

const SEARCH: &str = "Search the experience memory: past tasks, problems, fixes, failed attempts. \
Use it before starting a task and whenever an error appears (pass the error message as the query). \
Returns ranked results with id, title, score, matchLevel (strong/moderate/weak), matchedTokens and \
a scoreBreakdown; full: true adds each whole record.";

const RECORD: &str =
    "Record one experience after you verified a fix: title, task, problems (exact \
error messages), solution, whyItWorked, failedAttempts, warnings, tags, projectContext, \
applicability, verification. It needs some searchable text; a title is optional but helps. \
Durable when it returns; a record with an \
existing id replaces it. Returns the id, its locator, whether it replaced one, and up to three \
warnings about similar records (they never block the save).";

const FEEDBACK: &str = "Report how reusing a record went: success, partial, failure, \
not-applicable or outdated. Adds one to that count; feedback ranks records that work above \
records that do not. Returns the counts after adding it.";

const SHOW: &str = "Show one stored record in full, by its id or by the locator a search \
result gives.";

/// The `reliora mcp` server for one index directory: an [`rmcp`] [`ServerHandler`] with the
/// tools `search`, `record`, `feedback` and `show`.
#[derive(Clone)]
pub struct McpServer {
    memory: Arc<Memory>,
    tool_router: ToolRouter<McpServer>,
}

#[tool_router(vis = "pub(crate)")]
impl McpServer {
    /// A server for the index in `dir`. It reads nothing until a tool is called; a
    /// directory without an index answers searches with `index_damaged` until something is
    /// recorded (see [`serve_stdio`], which creates an empty index up front).
    pub fn new(dir: impl AsRef<Path>) -> McpServer {
        McpServer {
            memory: Arc::new(Memory::new(dir.as_ref())),
            tool_router: Self::tool_router(),
        }
    }

    /// The tools the server lists, by name, with their schemas.
    pub fn tools() -> Vec<Tool> {
        let mut tools = Self::tool_router().list_all();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }

    #[tool(
        name = "search",
        description = SEARCH,
        input_schema = schema::search_input(),
        output_schema = schema::search_output(),
        annotations(title = "Search experience memory", read_only_hint = true, open_world_hint = false)
    )]
    async fn search(&self, arguments: JsonObject) -> Result<CallToolResult, ErrorData> {
        self.call(tools::search, arguments).await
    }

    #[tool(
        name = "record",
        description = RECORD,
        input_schema = schema::record_input(),
        output_schema = schema::record_output(),
        annotations(title = "Record an experience", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn record(&self, arguments: JsonObject) -> Result<CallToolResult, ErrorData> {
        self.call(tools::record, arguments).await
    }

    #[tool(
        name = "feedback",
        description = FEEDBACK,
        input_schema = schema::feedback_input(),
        output_schema = schema::feedback_output(),
        annotations(title = "Report an outcome", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn feedback(&self, arguments: JsonObject) -> Result<CallToolResult, ErrorData> {
        self.call(tools::feedback, arguments).await
    }

    #[tool(
        name = "show",
        description = SHOW,
        input_schema = schema::show_input(),
        output_schema = schema::show_output(),
        annotations(title = "Show a record", read_only_hint = true, open_world_hint = false)
    )]
    async fn show(&self, arguments: JsonObject) -> Result<CallToolResult, ErrorData> {
        self.call(tools::show, arguments).await
    }

    /// Runs one tool on the blocking pool and turns its outcome into a tool result.
    async fn call(
        &self,
        tool: fn(&Memory, &Map<String, Value>) -> Result<Value>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let memory = Arc::clone(&self.memory);
        let outcome = tokio::task::spawn_blocking(move || {
            tool(&memory, &arguments).map_err(|error| memory.error_json(&error))
        });
        match outcome.await {
            Ok(Ok(value)) => Ok(CallToolResult::structured(value)),
            // A tool error carries its JSON as text only: structured content must match the
            // tool's output schema (MCP, "Output Schema"), and clients that validate it, such
            // as the TypeScript SDK, reject an error object there.
            Ok(Err(error)) => Ok(CallToolResult::error(vec![ContentBlock::text(
                error.to_string(),
            )])),
            Err(panic) => Err(ErrorData::internal_error(
                format!("the tool failed unexpectedly: {panic}"),
                None,
            )),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("reliora", env!("CARGO_PKG_VERSION"))
                    .with_title("Reliora experience memory"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}

/// Serves the index in `dir` over stdin and stdout until the client closes stdin — what
/// `reliora mcp` runs. Creates an empty index first when the directory holds none, as
/// `record` would, so that a new memory answers searches with no results.
pub fn serve_stdio(dir: PathBuf) -> Result<()> {
    let created = IndexWriter::new(&dir).create_if_missing()?;
    eprintln!(
        "reliora mcp: serving {}{} on stdio",
        dir.display(),
        if created {
            " (created an empty index)"
        } else {
            ""
        }
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::io("<tokio runtime>", e))?;
    let outcome = runtime.block_on(async {
        // stdin → framing (answers malformed lines itself) → the SDK → one stdout writer.
        let (ours, sdk_side) = tokio::io::duplex(1 << 16);
        let (from_sdk, to_sdk) = tokio::io::split(ours);
        let (replies, lines) = tokio::sync::mpsc::channel(64);
        let writer = tokio::spawn(framing::write_lines(tokio::io::stdout(), lines));
        tokio::spawn(framing::pump_input(
            tokio::io::BufReader::new(tokio::io::stdin()),
            to_sdk,
            replies.downgrade(),
        ));
        tokio::spawn(framing::pump_output(
            tokio::io::BufReader::new(from_sdk),
            replies,
        ));
        let served = async {
            let service = McpServer::new(&dir)
                .serve(sdk_side)
                .await
                .map_err(std::io::Error::other)?;
            service.waiting().await.map_err(std::io::Error::other)?;
            Ok::<(), std::io::Error>(())
        }
        .await;
        // The SDK has closed its side: the writer ends once every reply is out.
        let written = writer.await.map_err(std::io::Error::other)?;
        served.and(written)
    });
    // A read of stdin cannot be cancelled: do not wait for one at shutdown.
    runtime.shutdown_background();
    outcome.map_err(|e| crate::Error::io("<stdio>", e))?;
    eprintln!("reliora mcp: the client closed the connection");
    Ok(())
}
