//! Line framing in front of the SDK's transport, so that no input line leaves a client waiting.
//!
//! MCP over stdio is one JSON-RPC message per line. The SDK's transport drops a line that is
//! not JSON, and drops an oversized one, without a word; a client that sent either waits for
//! an answer that never comes. So `reliora mcp` reads stdin itself, one line at a time, never
//! holding more than [`MAX_MESSAGE_BYTES`] of a line:
//!
//! - a line that is not JSON gets `-32700` (parse error) with `id: null`;
//! - JSON that is not a JSON-RPC message object (a number, a string, a batch array, an object
//!   without `"jsonrpc": "2.0"`, a method or a result, or a request whose fields do not fit the
//!   MCP request it names) gets `-32600` (invalid request), with the request's id when it has
//!   one, else `null`;
//! - a line longer than [`MAX_MESSAGE_BYTES`] gets `-32600` as soon as the limit is passed, and
//!   the rest of the line is read and discarded as it arrives;
//! - blank lines are skipped; every other line goes to the SDK unchanged.
//!
//! Those replies and the SDK's messages reach stdout through one writer task, a whole line at
//! a time, so they never interleave.

use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// The largest JSON-RPC message `reliora mcp` reads: 16 MiB on one line, newline excluded
/// (a record is at most 1 MiB, SPEC §11).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC 2.0: the line is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON is not a valid request object.
const INVALID_REQUEST: i64 = -32600;

/// One line of input, as read by [`read_line`].
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A whole line, its newline removed, in the buffer given.
    Whole,
    /// A line over the limit: the bytes read so far are dropped; the rest of it is skipped by
    /// the following calls, which then go on with the next line.
    Oversized,
    /// The end of the input (an unterminated last line is dropped: it cannot be complete).
    End,
}

/// Reads one line into `line` (cleared first), keeping at most `limit` bytes of it. After
/// [`Line::Oversized`], call again with `discarding` set: the rest of that line is skipped.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
    discarding: &mut bool,
) -> std::io::Result<Line> {
    line.clear();
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            line.clear();
            return Ok(Line::End);
        }
        let newline = memchr::memchr(b'\n', available);
        let take = newline.map_or(available.len(), |at| at + 1);
        let content = newline.unwrap_or(available.len());
        let mut outcome = None;
        if *discarding {
            if newline.is_some() {
                *discarding = false;
            }
        } else if line.len() + content > limit {
            line.clear();
            *discarding = newline.is_none();
            outcome = Some(Line::Oversized);
        } else {
            line.extend_from_slice(&available[..content]);
            if newline.is_some() {
                outcome = Some(Line::Whole);
            }
        }
        input.consume(take);
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
    }
}

/// A JSON-RPC error response, as one line.
fn error_line(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// `None` when the SDK should have `line`; else the error response to send instead.
pub(crate) fn check_message(line: &[u8]) -> Option<Vec<u8>> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Some(error_line(
                Value::Null,
                PARSE_ERROR,
                &format!("Parse error: not JSON ({e})"),
            ))
        }
    };
    let object =
        match value {
            Value::Object(object) => object,
            Value::Array(_) => return Some(error_line(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: batches are not supported; send one JSON-RPC message per line",
            )),
            _ => {
                return Some(error_line(
                    Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: a JSON-RPC message is a JSON object",
                ))
            }
        };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        None => None,
        Some(_) => {
            return Some(error_line(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: \"id\" must be a string or a number",
            ))
        }
    };
    let invalid = |message: &str| {
        Some(error_line(
            id.clone().unwrap_or(Value::Null),
            INVALID_REQUEST,
            message,
        ))
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("Invalid Request: \"jsonrpc\" must be \"2.0\"");
    }
    match object.get("method") {
        Some(Value::String(_)) if id.is_some() => {
            // A request whose fields do not fit the request it names: the SDK would answer
            // without the id, so answer here with it.
            let parsed =
                serde_json::from_slice::<rmcp::service::RxJsonRpcMessage<rmcp::RoleServer>>(line);
            match parsed {
                Ok(_) => None,
                Err(e) => invalid(&format!("Invalid Request: {e}")),
            }
        }
        Some(Value::String(_)) => None,
        Some(_) => invalid("Invalid Request: \"method\" must be a string"),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            None
        }
        None => invalid("Invalid Request: neither a request, a notification nor a response"),
    }
}

/// Reads `input` line by line until it ends: good lines go to `to_sdk`, error responses to
/// `replies`. Shuts `to_sdk` down at the end, so that the SDK sees the end of its input.
/// `replies` is weak: the output closes when the SDK's does, even while stdin stays open.
pub(crate) async fn pump_input<R, W>(
    mut input: R,
    mut to_sdk: W,
    replies: mpsc::WeakSender<Vec<u8>>,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::new();
    let mut discarding = false;
    let outcome = loop {
        match read_line(&mut input, &mut line, MAX_MESSAGE_BYTES, &mut discarding).await {
            Err(e) => break Err(e),
            Ok(Line::End) => break Ok(()),
            Ok(Line::Oversized) => {
                let message = format!(
                    "Invalid Request: the message is longer than {MAX_MESSAGE_BYTES} bytes (16 MiB), the most a line may hold; it was discarded"
                );
                let reply = error_line(Value::Null, INVALID_REQUEST, &message);
                if !send(&replies, reply).await {
                    break Ok(());
                }
            }
            Ok(Line::Whole) => {
                let trimmed = line.strip_suffix(b"\r").unwrap_or(&line);
                if trimmed.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match check_message(trimmed) {
                    Some(reply) => {
                        if !send(&replies, reply).await {
                            break Ok(());
                        }
                    }
                    None => {
                        line.push(b'\n');
                        if to_sdk.write_all(&line).await.is_err() {
                            // The SDK stopped reading: the server is shutting down.
                            break Ok(());
                        }
                    }
                }
            }
        }
    };
    let _ = to_sdk.shutdown().await;
    outcome
}

/// Sends `line` unless the output is closed; whether it was sent.
async fn send(replies: &mpsc::WeakSender<Vec<u8>>, line: Vec<u8>) -> bool {
    match replies.upgrade() {
        Some(sender) => sender.send(line).await.is_ok(),
        None => false,
    }
}

/// Forwards the SDK's output to `replies`, one whole line at a time.
pub(crate) async fn pump_output<R: AsyncBufRead + Unpin>(
    mut from_sdk: R,
    replies: mpsc::Sender<Vec<u8>>,
) {
    loop {
        let mut line = Vec::new();
        match from_sdk.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if replies.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes each line received to `output`, flushing after each; the only writer of stdout.
pub(crate) async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut lines: mpsc::Receiver<Vec<u8>>,
) -> std::io::Result<()> {
    while let Some(line) = lines.recv().await {
        output.write_all(&line).await?;
        output.flush().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Option<Value> {
        check_message(line.as_bytes()).map(|r| serde_json::from_slice(&r).unwrap())
    }

    #[test]
    fn malformed_lines_get_json_rpc_errors() {
        let cases = [
            ("not json", PARSE_ERROR, Value::Null),
            ("{\"jsonrpc\": \"2.0\", \"id\": 1", PARSE_ERROR, Value::Null),
            ("42", INVALID_REQUEST, Value::Null),
            ("\"hello\"", INVALID_REQUEST, Value::Null),
            (
                "[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                "{\"id\": 7, \"method\": \"ping\"}",
                INVALID_REQUEST,
                json!(7),
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": \"a\"}",
                INVALID_REQUEST,
                json!("a"),
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": 5}",
                INVALID_REQUEST,
                json!(3),
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": {}, \"method\": \"ping\"}",
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                "{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"tools/call\", \"params\": \"x\"}",
                INVALID_REQUEST,
                json!(9),
            ),
        ];
        for (line, code, id) in cases {
            let reply = reply(line).unwrap_or_else(|| panic!("{line}: no reply"));
            assert_eq!(reply["jsonrpc"], "2.0", "{line}");
            assert_eq!(reply["error"]["code"], code, "{line}");
            assert_eq!(reply["id"], id, "{line}");
        }
        for good in [
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}",
            "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}",
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"result\": {}}",
            "\u{feff}{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}",
        ] {
            assert_eq!(reply(good), None, "{good}");
        }
    }

    #[test]
    fn an_oversized_line_is_dropped_as_it_streams_and_reading_goes_on() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut input = b"short\n".to_vec();
            input.extend(std::iter::repeat_n(b'x', 100));
            input.extend_from_slice(b"\nnext\ntail");
            // A small buffer: the long line arrives in pieces.
            let mut reader = tokio::io::BufReader::with_capacity(8, &input[..]);
            let mut line = Vec::new();
            let mut discarding = false;
            let mut read = Vec::new();
            loop {
                let outcome = read_line(&mut reader, &mut line, 10, &mut discarding)
                    .await
                    .unwrap();
                assert!(line.len() <= 10);
                let end = outcome == Line::End;
                read.push((outcome, String::from_utf8(line.clone()).unwrap()));
                if end {
                    break;
                }
            }
            assert_eq!(
                read,
                [
                    (Line::Whole, "short".to_string()),
                    (Line::Oversized, String::new()),
                    (Line::Whole, "next".to_string()),
                    (Line::End, String::new()),
                ]
            );
        });
    }
}
