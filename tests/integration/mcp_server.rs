//! `reliora mcp` (SPEC §10) driven over stdio as an MCP client would: a plain JSON-RPC client
//! written here against the protocol, independent of the SDK the server is built on.
//!
//! It initializes, lists the tools and checks their schemas, calls every tool, checks that the
//! answers are the CLI's JSON, that invalid arguments come back as tool errors carrying the SPEC
//! code, that other processes' writes are seen, and that stdout carries only protocol messages.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

const NOW: &str = "2026-01-01T00:00:00Z";
/// Long enough for a slow shared machine; a hung server fails the test instead of hanging it.
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Runs the CLI and returns its JSON output.
fn cli(index: &Path, args: &[&str], stdin: Option<&str>) -> (i32, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reliora"))
        .arg("--format")
        .arg("json")
        .arg("--index")
        .arg(index)
        .args(args)
        .env_remove("RELIORA_INDEX")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.unwrap_or("").as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "CLI {args:?} printed no JSON ({e}): {stdout:?} {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap(), value)
}

/// A running `reliora mcp` and the client side of its stdio.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    next_id: u64,
    /// Every stdout line, to check that all of them are protocol messages.
    transcript: Vec<Value>,
}

impl Server {
    fn spawn(index: &Path) -> Server {
        Server::spawn_with(|command| {
            command.arg("--index").arg(index);
        })
    }

    fn spawn_with(configure: impl FnOnce(&mut Command)) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_reliora"));
        configure(&mut command);
        let mut child = command
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("reliora mcp starts");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
            next_id: 1,
            transcript: Vec::new(),
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its response (`result` or `error` object included).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(REPLY_TIMEOUT)
                .unwrap_or_else(|e| panic!("no reply to {method} ({e})"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
            self.transcript.push(message.clone());
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn notify(&mut self, method: &str) {
        self.send(json!({"jsonrpc": "2.0", "method": method}));
    }

    /// The handshake; returns the initialize result.
    fn initialize(&mut self) -> Value {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reliora-test", "version": "1.0.0"}
            }),
        );
        self.notify("notifications/initialized");
        response["result"].clone()
    }

    /// Calls a tool; returns the result (which may be a tool error).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(
            response.get("error").is_none(),
            "{tool} {arguments}: a protocol error instead of a tool result: {response}"
        );
        response["result"].clone()
    }

    /// Calls a tool that must succeed; returns its structured content, after checking that the
    /// text content says the same.
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_ne!(
            result["isError"],
            json!(true),
            "{tool} {arguments} failed: {result}"
        );
        let structured = result["structuredContent"].clone();
        let text = result["content"][0]["text"].as_str().expect("text content");
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            structured,
            "text and structured content agree"
        );
        structured
    }

    /// Calls a tool that must fail; returns its `{"error", "message"}`.
    fn tool_error(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"],
            json!(true),
            "{tool} {arguments} should fail: {result}"
        );
        // Text content only: structured content would have to match the output schema.
        assert!(
            result.get("structuredContent").is_none(),
            "{tool} {arguments}: an error with structured content: {result}"
        );
        assert_eq!(
            result["content"].as_array().map(Vec::len),
            Some(1),
            "{result}"
        );
        assert_eq!(result["content"][0]["type"], "text", "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        let error: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("the error text is not JSON ({e}): {text:?}"));
        assert!(
            error["error"].is_string() && error["message"].is_string(),
            "{error}"
        );
        error
    }

    /// Writes raw bytes to the server's stdin.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next message on stdout.
    fn next_message(&mut self, waiting_for: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(REPLY_TIMEOUT)
            .unwrap_or_else(|e| panic!("no reply to {waiting_for} ({e})"));
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        self.transcript.push(message.clone());
        message
    }

    /// Calls a tool that must fail within `timeout`; returns its `{"error", "message"}`.
    fn tool_error_within(&mut self, tool: &str, arguments: Value, timeout: Duration) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!("no reply to {tool} {arguments} within {timeout:?} ({e})")
            });
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                let result = message["result"].clone();
                assert_eq!(result["isError"], json!(true), "{message}");
                assert!(result.get("structuredContent").is_none(), "{message}");
                let text = result["content"][0]["text"].as_str().unwrap();
                return serde_json::from_str(text).unwrap();
            }
        }
    }

    /// Closes stdin and waits for the server to exit; returns its status and stderr.
    fn finish(mut self) -> (i32, String, Vec<Value>) {
        drop(self.stdin.take());
        let status = wait_with_timeout(&mut self.child);
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100)) {
            self.transcript
                .push(serde_json::from_str(&line).expect("stdout carries only JSON"));
        }
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status, stderr, std::mem::take(&mut self.transcript))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_with_timeout(child: &mut Child) -> i32 {
    for _ in 0..600 {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().expect("exited normally");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("reliora mcp did not exit after stdin closed");
}

/// An index of the sample data, built with the CLI.
fn sample_index() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let data = data_dir();
    let (status, report) = cli(&index, &["build", "--input", data.to_str().unwrap()], None);
    assert_eq!(status, 0, "{report}");
    assert_eq!(report["records"], 315);
    (dir, index)
}

fn names(values: &Value) -> Vec<&str> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn initialize_announces_tools_and_instructions() {
    let (_dir, index) = sample_index();
    let mut server = Server::spawn(&index);
    let init = server.initialize();
    assert_eq!(init["serverInfo"]["name"], "reliora");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert!(init["protocolVersion"].is_string());
    let instructions = init["instructions"].as_str().expect("instructions");
    for must in [
        "Before starting a task",
        "When an error appears",
        "after you verified a fix",
        "feedback",
    ] {
        assert!(instructions.contains(must), "instructions lack {must:?}");
    }
    let (status, stderr, transcript) = server.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("reliora mcp: serving"),
        "logs on stderr: {stderr:?}"
    );
    assert!(transcript.iter().all(|m| m["jsonrpc"] == "2.0"));
}

#[test]
fn tools_list_declares_four_tools_with_their_schemas() {
    let (_dir, index) = sample_index();
    let mut server = Server::spawn(&index);
    server.initialize();
    let list = server.request("tools/list", json!({}))["result"].clone();
    let tools = list["tools"].as_array().expect("tools");
    let mut tool_names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    tool_names.sort();
    assert_eq!(tool_names, ["feedback", "record", "search", "show"]);
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();

    for t in tools {
        let name = t["name"].as_str().unwrap();
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 40),
            "{name}: description"
        );
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(t["inputSchema"]["additionalProperties"], false, "{name}");
        assert_eq!(t["outputSchema"]["type"], "object", "{name}: output schema");
        assert_eq!(t["annotations"]["openWorldHint"], false, "{name}");
    }

    let search = tool("search");
    let properties: Vec<&String> = search["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    for option in [
        "query",
        "limit",
        "minScore",
        "projectContext",
        "tags",
        "type",
        "profile",
        "now",
        "explain",
        "full",
    ] {
        assert!(
            properties.iter().any(|p| *p == option),
            "search lacks {option}"
        );
    }
    assert_eq!(names(&search["inputSchema"]["required"]), ["query"]);
    assert_eq!(
        search["inputSchema"]["properties"]["limit"]["type"],
        "integer"
    );
    assert_eq!(search["inputSchema"]["properties"]["tags"]["type"], "array");
    assert_eq!(search["annotations"]["readOnlyHint"], true);
    assert!(names(&search["outputSchema"]["required"]).contains(&"results"));

    let record = tool("record");
    assert_eq!(names(&record["inputSchema"]["required"]), ["record"]);
    let record_object = &record["inputSchema"]["properties"]["record"];
    // No field is required on its own: one of the searchable ones is.
    assert!(record_object.get("required").is_none());
    assert_eq!(record_object["anyOf"].as_array().unwrap().len(), 10);
    for field in [
        "problems",
        "solution",
        "whyItWorked",
        "tags",
        "projectContext",
    ] {
        assert!(record_object["properties"][field].is_object(), "{field}");
    }
    // Annotations tell the truth: a record with an existing id replaces it; feedback adds.
    assert_eq!(record["annotations"]["readOnlyHint"], false);
    assert_eq!(record["annotations"]["destructiveHint"], true);
    assert_eq!(record["annotations"]["idempotentHint"], false);

    let feedback = tool("feedback");
    assert_eq!(
        names(&feedback["inputSchema"]["required"]),
        ["id", "outcome"]
    );
    assert_eq!(
        names(&feedback["inputSchema"]["properties"]["outcome"]["enum"]),
        [
            "success",
            "partial",
            "failure",
            "not-applicable",
            "outdated"
        ]
    );

    assert_eq!(feedback["annotations"]["readOnlyHint"], false);
    assert_eq!(feedback["annotations"]["destructiveHint"], false);
    assert_eq!(feedback["annotations"]["idempotentHint"], false);

    let show = tool("show");
    assert_eq!(names(&show["inputSchema"]["required"]), ["id"]);
    assert_eq!(show["annotations"]["readOnlyHint"], true);
}

#[test]
fn every_tool_answers_with_the_cli_json() {
    let (_dir, index) = sample_index();
    let mut server = Server::spawn(&index);
    server.initialize();

    // search: the same document the CLI prints, fingerprint included.
    let query = "pool timed out waiting for a connection";
    let via_mcp = server.ok(
        "search",
        json!({"query": query, "limit": 3, "tags": ["rust"], "now": NOW, "explain": "rs-008"}),
    );
    let (status, via_cli) = cli(
        &index,
        &[
            "search",
            query,
            "--limit",
            "3",
            "--tag",
            "rust",
            "--now",
            NOW,
            "--explain",
            "rs-008",
        ],
        None,
    );
    assert_eq!(status, 0);
    assert_eq!(via_mcp, via_cli);
    assert!(!via_mcp["results"].as_array().unwrap().is_empty());

    let full = server.ok("search", json!({"query": query, "full": true, "limit": 1}));
    let first = &full["results"][0];
    assert_eq!(first["record"]["id"], first["id"]);

    // show: by id and by locator, as `reliora show` prints it.
    let id = first["id"].as_str().unwrap().to_string();
    let locator = first["locator"].as_str().unwrap().to_string();
    let shown = server.ok("show", json!({"id": id}));
    assert_eq!(shown, cli(&index, &["show", &id], None).1);
    assert_eq!(server.ok("show", json!({"id": locator})), shown);

    // record: a new experience, then a near copy that draws a duplicate warning.
    let experience = json!({
        "id": "mcp-1",
        "title": "wasm-pack build fails: linker rust-lld not found for wasm32-unknown-unknown",
        "problems": ["error: linker `rust-lld` not found"],
        "solution": "rustup target add wasm32-unknown-unknown, then rebuild",
        "tags": ["rust", "wasm"],
        "projectContext": "web-editor, wasm-pack 0.12",
        "verification": "wasm-pack build --release succeeds in CI"
    });
    let recorded = server.ok("record", json!({"record": experience}));
    assert_eq!(recorded["id"], "mcp-1");
    assert_eq!(recorded["replaced"], false);
    // The sample data holds other wasm experiences: warnings, never a refusal.
    assert!(recorded["warnings"].as_array().unwrap().len() <= 3);
    assert!(recorded["locator"].as_str().unwrap().contains('@'));
    let mut copy = experience.clone();
    copy["id"] = json!("mcp-2");
    let second = server.ok("record", json!({"record": copy}));
    assert_eq!(second["replaced"], false);
    assert_eq!(second["warnings"][0]["id"], "mcp-1", "{second}");
    assert_eq!(second["warnings"][0]["matchLevel"], "strong");
    assert_eq!(second["warnings"][0]["code"], "SIMILAR_EXPERIENCE_FOUND");
    let replaced = server.ok("record", json!({"record": experience}));
    assert_eq!(replaced["replaced"], true);

    let found = server.ok(
        "search",
        json!({"query": "linker rust-lld not found", "limit": 2}),
    );
    let found_ids: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(found_ids.contains(&"mcp-1"), "{found_ids:?}");

    // feedback: counts after adding, visible to show and to the CLI.
    let counted = server.ok("feedback", json!({"id": "mcp-1", "outcome": "success"}));
    assert_eq!(
        counted,
        json!({"id": "mcp-1", "outcome": "success",
               "feedback": {"success": 1, "partial": 0, "failure": 0, "notApplicable": 0, "outdated": 0}})
    );
    let counted = server.ok(
        "feedback",
        json!({"id": "mcp-1", "outcome": "not-applicable"}),
    );
    assert_eq!(counted["feedback"]["notApplicable"], 1);
    assert_eq!(
        cli(&index, &["show", "mcp-1"], None).1["feedback"]["success"],
        1
    );
    assert_eq!(
        server.ok("show", json!({"id": "mcp-1"}))["verification"],
        "wasm-pack build --release succeeds in CI"
    );

    let (status, stderr, transcript) = server.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        transcript
            .iter()
            .all(|m| m["jsonrpc"] == "2.0"
                && (m.get("result").is_some() || m.get("method").is_some())),
        "stdout carries only protocol messages"
    );
}

#[test]
fn invalid_arguments_are_tool_errors_with_the_spec_code() {
    let (_dir, index) = sample_index();
    let mut server = Server::spawn(&index);
    server.initialize();

    // The codes the CLI gives for the same mistakes.
    let cases = [
        (json!({"query": "q", "limit": 0}), &["--limit", "0"][..]),
        (json!({"query": "q", "limit": "abc"}), &["--limit", "abc"]),
        (
            json!({"query": "q", "minScore": 150}),
            &["--min-score", "150"],
        ),
        (json!({"query": "q", "tags": [" - "]}), &["--tag", " - "]),
        (
            json!({"query": "q", "projectContext": "the"}),
            &["--project-context", "the"],
        ),
        (
            json!({"query": "q", "profile": "fancy"}),
            &["--profile", "fancy"],
        ),
        (
            json!({"query": "q", "now": "yesterday"}),
            &["--now", "yesterday"],
        ),
        (json!({"query": "q", "type": " "}), &["--type", " "]),
    ];
    for (arguments, flags) in cases {
        let error = server.tool_error("search", arguments.clone());
        let mut args = vec!["search", "q"];
        args.extend_from_slice(flags);
        let (status, cli_error) = cli(&index, &args, None);
        assert_eq!(status, 2);
        assert_eq!(error["error"], cli_error["error"], "{arguments}");
    }
    let empty = server.tool_error("search", json!({"query": "the of and"}));
    assert_eq!(empty["error"], "empty_query");
    let unknown = server.tool_error("search", json!({"query": "q", "limt": 3}));
    assert_eq!(unknown["error"], "invalid_option");
    assert!(unknown["message"].as_str().unwrap().contains("limt"));
    assert_eq!(
        server.tool_error("search", json!({"limit": 3}))["error"],
        "invalid_option"
    );

    let invalid = server.tool_error("record", json!({"record": {"title": "t", "salience": 7}}));
    assert_eq!(invalid["error"], "invalid_record");
    assert!(invalid["message"].as_str().unwrap().contains("salience"));
    assert_eq!(
        server.tool_error(
            "record",
            json!({"record": {"title": " ", "verification": "v"}})
        )["error"],
        "invalid_record"
    );
    assert_eq!(
        server.tool_error("record", json!({"title": "flat fields"}))["error"],
        "invalid_option"
    );
    assert_eq!(
        server.tool_error("feedback", json!({"id": "rs-008", "outcome": "great"}))["error"],
        "invalid_option"
    );
    assert_eq!(
        server.tool_error(
            "feedback",
            json!({"id": "no-such-id", "outcome": "success"})
        )["error"],
        "not_found"
    );
    assert_eq!(
        server.tool_error("show", json!({"id": "no-such-id"}))["error"],
        "not_found"
    );
    assert_eq!(
        server.tool_error("show", json!({}))["error"],
        "invalid_option"
    );

    // Not a tool call at all: a protocol error.
    let response = server.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert!(response["error"]["code"].is_i64(), "{response}");

    // The server carries on after errors.
    assert!(!server.ok("search", json!({"query": "docker"}))["results"]
        .as_array()
        .unwrap()
        .is_empty());
    let (status, stderr, _) = server.finish();
    assert_eq!(status, 0, "{stderr}");
}

#[test]
fn writes_by_other_processes_are_seen_and_a_new_directory_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("fresh");
    // The index directory from the environment, as for every command.
    let mut server = Server::spawn_with(|command| {
        command.env("RELIORA_INDEX", &index);
    });
    server.initialize();
    let empty = server.ok("search", json!({"query": "terraform state lock"}));
    assert_eq!(empty["results"], json!([]));
    assert_eq!(empty["counts"]["candidates"], 0);

    let record = r#"{"id": "tf-1", "title": "terraform state lock held by a crashed run",
        "solution": "terraform force-unlock LOCK_ID after checking no apply runs"}"#;
    let (status, report) = cli(&index, &["record", "-"], Some(record));
    assert_eq!(status, 0, "{report}");
    let found = server.ok("search", json!({"query": "terraform state lock"}));
    assert_eq!(found["results"][0]["id"], "tf-1");

    let (status, _) = cli(&index, &["feedback", "tf-1", "--outcome", "failure"], None);
    assert_eq!(status, 0);
    assert_eq!(
        server.ok("show", json!({"id": "tf-1"}))["feedback"]["failure"],
        1
    );

    server.ok(
        "record",
        json!({"record": {"id": "tf-2", "title": "terraform provider cache"}}),
    );
    let (status, _) = cli(&index, &["compact"], None);
    assert_eq!(status, 0);
    let (_, via_cli) = cli(&index, &["search", "terraform", "--now", NOW], None);
    assert_eq!(
        server.ok("search", json!({"query": "terraform", "now": NOW})),
        via_cli
    );
    let (_, deleted) = cli(&index, &["delete", "tf-1"], None);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(
        server.tool_error("show", json!({"id": "tf-1"}))["error"],
        "not_found"
    );

    let (status, stderr, _) = server.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("created an empty index"), "{stderr}");
}

#[test]
fn undeclared_arguments_are_refused_before_anything_is_opened() {
    let (dir, index) = sample_index();
    let secret = dir.path().join("settings.toml");
    std::fs::write(&secret, "[profile]\nsecret-line = \"do-not-echo-me\"\n").unwrap();
    let mut server = Server::spawn(&index);
    server.initialize();
    // `config` is a command-line option only: naming a file, an endless device or the server's
    // own stdin gets a prompt refusal that shows nothing of the file.
    for path in [secret.to_str().unwrap(), "/dev/zero", "/dev/stdin"] {
        let started = std::time::Instant::now();
        let error = server.tool_error_within(
            "search",
            json!({"query": "docker", "config": path}),
            Duration::from_secs(10),
        );
        assert_eq!(error["error"], "invalid_option", "{path}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("config"), "{message}");
        assert!(!message.contains("do-not-echo-me"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(10), "{path}");
    }
    // Other spellings a `--queries` line accepts are not arguments of the tool either.
    for (name, value) in [
        ("tag", json!("rust")),
        ("min-score", json!(0.5)),
        ("project-context", json!("payments")),
    ] {
        let error = server.tool_error("search", json!({"query": "docker", name: value}));
        assert_eq!(error["error"], "invalid_option", "{name}");
    }
    // Every argument the schema declares is taken.
    let listed = server.request("tools/list", json!({}))["result"]["tools"].clone();
    let search = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search")
        .unwrap()
        .clone();
    let mut arguments = serde_json::Map::new();
    for (name, declared) in search["inputSchema"]["properties"].as_object().unwrap() {
        let value = match (name.as_str(), declared["type"].as_str().unwrap()) {
            (_, "integer") => json!(5),
            (_, "number") => json!(0),
            (_, "boolean") => json!(false),
            (_, "array") => json!(["docker"]),
            ("query", _) => json!("docker compose"),
            ("now", _) => json!(NOW),
            ("profile", _) => json!("decay"),
            ("backend", _) => json!("auto"),
            ("rerank", _) => json!("relevance=1"),
            ("type", _) => json!("episodic"),
            ("projectContext", _) => json!("docker"),
            (_, _) => json!("docker"),
        };
        arguments.insert(name.clone(), value);
    }
    let answer = server.ok("search", Value::Object(arguments.clone()));
    assert_eq!(answer["profile"], "decay", "{answer}");
    let (status, stderr, _) = server.finish();
    assert_eq!(status, 0, "{stderr}");
}

#[test]
fn tool_errors_name_index_files_relative_to_the_index() {
    let (_dir, index) = sample_index();
    let absolute = index.canonicalize().unwrap();
    let mut server = Server::spawn(&absolute);
    server.initialize();
    // The manifest goes while the server runs: reads answer index_damaged, naming it.
    std::fs::remove_file(absolute.join("MANIFEST")).unwrap();
    let dir = absolute.to_str().unwrap();
    for (tool, arguments) in [
        ("show", json!({"id": "rs-008"})),
        ("search", json!({"query": "docker", "backend": "index"})),
    ] {
        let error = server.tool_error(tool, arguments);
        assert_eq!(error["error"], "index_damaged", "{tool}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("MANIFEST"), "{tool}: {message}");
        assert!(!message.contains(dir), "{tool}: {message} names {dir}");
    }
    drop(server);
}

/// Sends `line` as is and returns the JSON-RPC error it must draw.
fn protocol_error(server: &mut Server, line: &[u8], what: &str) -> Value {
    server.send_raw(line);
    let reply = server.next_message(what);
    assert_eq!(reply["jsonrpc"], "2.0", "{what}: {reply}");
    // An error response always has an id, null when the request's could not be read.
    assert!(reply.get("id").is_some(), "{what}: {reply}");
    assert!(reply.get("result").is_none(), "{what}: {reply}");
    assert!(reply["error"]["message"].is_string(), "{what}: {reply}");
    reply
}

#[test]
fn malformed_and_oversized_lines_get_protocol_errors_and_the_server_goes_on() {
    let (_dir, index) = sample_index();
    let mut server = Server::spawn(&index);
    server.initialize();
    let still_serving = |server: &mut Server, after: &str| {
        let answer = server.ok("search", json!({"query": "docker", "limit": 1}));
        assert_eq!(
            answer["results"].as_array().unwrap().len(),
            1,
            "after {after}"
        );
    };

    let cases: [(&[u8], i64, Value); 7] = [
        (b"this is not json\n", -32700, Value::Null),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 41, \"method\"\n", -32700, Value::Null),
        (b"42\n", -32600, Value::Null),
        (b"\"tools/list\"\n", -32600, Value::Null),
        (
            b"[{\"jsonrpc\": \"2.0\", \"id\": 42, \"method\": \"tools/list\"}]\n",
            -32600,
            Value::Null,
        ),
        (b"{\"id\": 43, \"method\": \"tools/list\"}\n", -32600, json!(43)),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 44, \"method\": \"tools/call\", \"params\": \"search\"}\n",
            -32600,
            json!(44),
        ),
    ];
    for (line, code, id) in cases {
        let what = String::from_utf8_lossy(line).trim().to_string();
        let reply = protocol_error(&mut server, line, &what);
        assert_eq!(reply["error"]["code"], code, "{what}: {reply}");
        assert_eq!(reply["id"], id, "{what}: {reply}");
        still_serving(&mut server, &what);
    }

    // 17 MiB on one line: refused with an error, the rest of the line skipped as it arrives.
    let mut huge = br#"{"jsonrpc": "2.0", "id": 45, "method": "tools/call", "params": {"name": "search", "arguments": {"query": ""#.to_vec();
    huge.resize(huge.len() + 17 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}}}\n");
    let reply = protocol_error(&mut server, &huge, "a 17 MiB line");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16777216"),
        "{reply}"
    );
    still_serving(&mut server, "a 17 MiB line");
    // A message just under the limit is read whole.
    let mut large = br#"{"jsonrpc": "2.0", "id": 46, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "docker"#.to_vec();
    large.resize(large.len() + 2 * 1024 * 1024, b' ');
    large.extend_from_slice(b"\", \"limit\": 1}}}\n");
    server.send_raw(&large);
    let answer = server.next_message("a 2 MiB request");
    assert_eq!(answer["id"], 46, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    let (status, stderr, _) = server.finish();
    assert_eq!(status, 0, "{stderr}");
}
