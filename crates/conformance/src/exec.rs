//! The exec family: the JSONL event protocol of `agentwire exec` (Responses-API streaming
//! events), its request bodies, its offline mocks, and the relay of upstream server-sent events.
//!
//! Fixtures are JSON in, JSON out, so that any implementation can replay them:
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `request` | `options`, then `expected` (body) or `expected_error` (code) | the body equals `expected` |
//! | `tool-spec` | `input` (a `--tool` value), then `expected` (`{name, path}`) or `expected_error` | the parse equals `expected` |
//! | `mock` | `mode`, `request` (body), then `expected` (events) or `expected_error` | the emitted events equal `expected` and pass the stream checks |
//! | `relay` | `request`, `sse` (body text), optional `max_event_bytes` and `failure`, `expected` (events), `outcome` | the emitted events equal `expected` and pass the stream checks; the outcome matches |
//! | `assemble` | `input` (JSONL), optional `strict_deltas`, then `expected` (transcript) or `expected_error` (`{code, line}`) | the transcript equals `expected` |
//! | `read` | `input` (JSONL), optional `max_line_bytes`, `expected` (one entry per event or error) | each entry matches; each event read writes back to the same JSON value |
//! | `sse` | `input` (body text), optional `max_event_bytes`, `expected` (events), optional `expected_error` and `open_at_end` | every chunking of the input gives the same events and end |
//! | `chat-request` | `request` (a Responses body), then `expected` (the Chat Completions body) with `notes`, or `expected_error` | the body and the notes equal the expected ones |
//! | `chat-relay` | `request`, `sse` (a Chat Completions server's `data:` chunks), `expected` (events), `outcome` | the emitted events equal `expected`, pass the stream checks and assemble with deltas adding up; the outcome matches |
//!
//! The stream checks, applied to everything a mock or a relay emits:
//!
//! - `sequence_number` counts from 0 in line order;
//! - every event has the members the v0 protocol shows, and the members the official
//!   Responses-API event schemas require (openai-python 3.54's `ResponseStreamEvent` types:
//!   `output_index`, `item_id`, `content_index`, `logprobs`, full `response` objects, usage
//!   details), so that strict consumers of either kind accept it;
//! - the first event is `response.created`, and every response object has the same `id`;
//! - exactly one terminal event (`response.completed`, `response.failed`,
//!   `response.incomplete`), last;
//! - argument deltas name an announced function call; each item's final values agree with each
//!   other (`function_call_arguments.done` with the item's `arguments`, `output_text.done` with
//!   `content_part.done` and the item's text, the item with the completed response's copy);
//! - a completed stream folds with the assembler, and a mock's stream (which the mock makes
//!   itself) has deltas that add up to the final values.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::compare::json_eq;
use crate::{same_json, Case, CodecError, Failure, Fixture, Harness, Suite};

/// One exec fixture's operation and fields.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub enum ExecCase {
    /// Build a request body from options.
    #[serde(rename = "request")]
    Request {
        /// The options: `prompt`, `input`, `model`, `instructions`, `append_system_prompt`,
        /// `tools` (`[{name, parameters, description?}]`), `web_search`, `tool_choice` (as on
        /// the command line), `parallel_tool_calls`, `session_id`.
        options: Value,
        /// The body.
        #[serde(default)]
        expected: Option<Value>,
        /// The error code instead.
        #[serde(default)]
        expected_error: Option<String>,
    },
    /// Parse a `--tool` value.
    #[serde(rename = "tool-spec")]
    ToolSpec {
        /// The value.
        input: String,
        /// `{name, path}`.
        #[serde(default)]
        expected: Option<Value>,
        /// The error code instead.
        #[serde(default)]
        expected_error: Option<String>,
    },
    /// Run a mock against a request body.
    #[serde(rename = "mock")]
    Mock {
        /// `echo`, `text`, `tool-call`, `tool-loop`.
        mode: String,
        /// The request body.
        request: Value,
        /// The emitted events.
        #[serde(default)]
        expected: Option<Vec<Value>>,
        /// The error code instead.
        #[serde(default)]
        expected_error: Option<String>,
    },
    /// Relay an upstream SSE body.
    #[serde(rename = "relay")]
    Relay {
        /// The request body the upstream answers.
        request: Value,
        /// The upstream's body.
        sse: String,
        /// The event size limit.
        #[serde(default)]
        max_event_bytes: Option<usize>,
        /// A failure reported after the body instead of its end.
        #[serde(default)]
        failure: Option<FailureSpec>,
        /// The emitted events.
        expected: Vec<Value>,
        /// `completed`, `failed` or `incomplete`.
        outcome: String,
    },
    /// Fold JSONL into a transcript.
    #[serde(rename = "assemble")]
    Assemble {
        /// The JSONL.
        input: String,
        /// Final values that differ from the concatenated deltas are errors
        /// (`arguments_mismatch`, `text_mismatch`) instead of corrections.
        #[serde(default)]
        strict_deltas: bool,
        /// The transcript.
        #[serde(default)]
        expected: Option<Value>,
        /// `{code, line}` instead.
        #[serde(default)]
        expected_error: Option<ExpectedError>,
    },
    /// Read JSONL event by event.
    #[serde(rename = "read")]
    Read {
        /// The JSONL.
        input: String,
        /// The line length limit.
        #[serde(default)]
        max_line_bytes: Option<usize>,
        /// `{line, type}` per event, `{line, error}` per error.
        expected: Vec<Value>,
    },
    /// Translate a Responses request body into a Chat Completions body.
    #[serde(rename = "chat-request")]
    ChatRequest {
        /// The Responses request body.
        request: Value,
        /// The Chat Completions body.
        #[serde(default)]
        expected: Option<Value>,
        /// The notes on what was left out, when `expected` is given.
        #[serde(default)]
        notes: Vec<String>,
        /// The error code instead.
        #[serde(default)]
        expected_error: Option<String>,
    },
    /// Relay a Chat Completions server's streamed answer as Responses events.
    #[serde(rename = "chat-relay")]
    ChatRelay {
        /// The request body the upstream answers.
        request: Value,
        /// The upstream's body: `data:` chunks.
        sse: String,
        /// The emitted events.
        expected: Vec<Value>,
        /// `completed`, `failed` or `incomplete`.
        outcome: String,
    },
    /// Decode a server-sent-event body.
    #[serde(rename = "sse")]
    Sse {
        /// The body.
        input: String,
        /// The event size limit.
        #[serde(default)]
        max_event_bytes: Option<usize>,
        /// `{line, data, event?, id?}` per event.
        expected: Vec<Value>,
        /// The error that stops decoding, if any.
        #[serde(default)]
        expected_error: Option<ExpectedError>,
        /// The first line of an event left open at the end, if any.
        #[serde(default)]
        open_at_end: Option<u64>,
    },
}

impl Case for ExecCase {
    fn operation(&self) -> &'static str {
        match self {
            ExecCase::Request { .. } => "request",
            ExecCase::ToolSpec { .. } => "tool-spec",
            ExecCase::Mock { .. } => "mock",
            ExecCase::Relay { .. } => "relay",
            ExecCase::Assemble { .. } => "assemble",
            ExecCase::Read { .. } => "read",
            ExecCase::Sse { .. } => "sse",
            ExecCase::ChatRequest { .. } => "chat-request",
            ExecCase::ChatRelay { .. } => "chat-relay",
        }
    }
}

/// A failure outside the stream: an HTTP error, a broken connection.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureSpec {
    /// The error code.
    pub code: String,
    /// The message.
    pub message: String,
    /// The HTTP status, if any.
    #[serde(default)]
    pub http_status: Option<u16>,
    /// The provider's error object, if any.
    #[serde(default)]
    pub details: Option<Value>,
}

/// An expected error with its line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedError {
    /// The error code.
    pub code: String,
    /// The 1-based line, when the error has one.
    #[serde(default)]
    pub line: Option<u64>,
}

/// An error located in a line-oriented input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedError {
    /// The error code.
    pub code: String,
    /// The 1-based line.
    pub line: Option<u64>,
    /// The message.
    pub message: String,
}

/// What a relay emitted.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayOutput {
    /// The emitted JSONL.
    pub jsonl: String,
    /// `completed`, `failed` or `incomplete`.
    pub outcome: String,
}

/// What decoding a server-sent-event body gave.
#[derive(Debug, Clone, PartialEq)]
pub struct SseOutput {
    /// `{line, data, event?, id?, retry?}` per event.
    pub events: Vec<Value>,
    /// The error that stopped decoding.
    pub error: Option<LocatedError>,
    /// The first line of an event left open at the end.
    pub open_at_end: Option<u64>,
}

/// What an exec implementation must offer the runner.
pub trait ExecCodec: Send + Sync {
    /// Builds a request body from options.
    fn build_request(&self, options: &Value) -> Result<Value, CodecError>;
    /// Parses a `--tool` value into `{name, path}`.
    fn tool_spec(&self, spec: &str) -> Result<Value, CodecError>;
    /// Runs a mock and returns the emitted JSONL.
    fn mock(&self, mode: &str, request: &Value) -> Result<String, CodecError>;
    /// Relays an upstream body (then `failure`, if given, instead of the body's end).
    fn relay(
        &self,
        request: &Value,
        sse: &[u8],
        max_event_bytes: Option<usize>,
        failure: Option<&FailureSpec>,
    ) -> Result<RelayOutput, CodecError>;
    /// Folds JSONL into a transcript; with `strict_deltas`, a final value that differs from the
    /// concatenated deltas is an error.
    fn assemble(&self, jsonl: &str, strict_deltas: bool) -> Result<Value, LocatedError>;
    /// Reads JSONL: per line read, the event as JSON with its line, or an error.
    fn read(
        &self,
        jsonl: &str,
        max_line_bytes: Option<usize>,
    ) -> Vec<Result<(u64, Value), LocatedError>>;
    /// Decodes a server-sent-event body fed in chunks of `chunk` bytes.
    fn sse(&self, input: &[u8], chunk: usize, max_event_bytes: Option<usize>) -> SseOutput;
    /// Translates a Responses request body into a Chat Completions body and its notes.
    fn chat_request(&self, request: &Value) -> Result<(Value, Vec<String>), CodecError> {
        let _ = request;
        Err(CodecError::message(
            "Chat Completions requests are not implemented",
        ))
    }
    /// Relays a Chat Completions server's body as Responses events.
    fn chat_relay(&self, request: &Value, sse: &[u8]) -> Result<RelayOutput, CodecError> {
        let _ = (request, sse);
        Err(CodecError::message(
            "Chat Completions relays are not implemented",
        ))
    }
}

/// A harness that checks exec fixtures against `codec`.
pub fn harness(codec: impl ExecCodec + 'static) -> Harness<ExecCase> {
    Harness::new(move |fixture, _suite| check(&codec, fixture))
}

/// Our own suite: `conformance/exec` in the workspace.
pub fn suite(workspace_root: &std::path::Path) -> Suite {
    Suite::new("exec", workspace_root.join("conformance/exec"))
        .expected_failures(workspace_root.join("conformance/exec.expected-failures"))
}

/// Checks one fixture.
pub fn check(codec: &dyn ExecCodec, fixture: &Fixture<ExecCase>) -> Result<(), Failure> {
    match &fixture.case {
        ExecCase::Request {
            options,
            expected,
            expected_error,
        } => {
            let result = codec.build_request(options);
            expect(
                "request",
                result,
                expected.as_ref(),
                expected_error.as_deref(),
            )
        }
        ExecCase::ToolSpec {
            input,
            expected,
            expected_error,
        } => {
            let result = codec.tool_spec(input);
            expect(
                "tool spec",
                result,
                expected.as_ref(),
                expected_error.as_deref(),
            )
        }
        ExecCase::Mock {
            mode,
            request,
            expected,
            expected_error,
        } => {
            let result = codec.mock(mode, request);
            match (result, expected, expected_error) {
                (Ok(jsonl), Some(expected), None) => {
                    let events = check_stream("mock", &jsonl)?;
                    same_events("mock", expected, &events)?;
                    let transcript = codec.assemble(&jsonl, true).map_err(|e| {
                        Failure::new(format!(
                            "assembling the mock's output failed: {}",
                            e.message
                        ))
                    })?;
                    if transcript.get("outcome") != Some(&Value::from("completed")) {
                        return Err(Failure::new("a mock's stream must complete"));
                    }
                    Ok(())
                }
                (Err(e), None, Some(code)) if e.code() == Some(code.as_str()) => Ok(()),
                (result, expected, code) => Err(mismatch(
                    "mock",
                    result.map(Value::from),
                    expected.is_some(),
                    code.as_deref(),
                )),
            }
        }
        ExecCase::Relay {
            request,
            sse,
            max_event_bytes,
            failure,
            expected,
            outcome,
        } => {
            let output = codec
                .relay(request, sse.as_bytes(), *max_event_bytes, failure.as_ref())
                .map_err(|e| Failure::codec("relay", &e))?;
            let events = check_stream("relay", &output.jsonl)?;
            same_events("relay", expected, &events)?;
            // Whatever the upstream sent, what is emitted folds.
            codec.assemble(&output.jsonl, false).map_err(|e| {
                Failure::new(format!(
                    "assembling the relay's output failed: {} at line {:?}",
                    e.message, e.line
                ))
            })?;
            if output.outcome != *outcome {
                return Err(Failure::new(format!(
                    "relay outcome: expected `{outcome}`, got `{}`",
                    output.outcome
                )));
            }
            Ok(())
        }
        ExecCase::ChatRequest {
            request,
            expected,
            notes,
            expected_error,
        } => match (codec.chat_request(request), expected, expected_error) {
            (Ok((body, got_notes)), Some(expected), None) => {
                same_json("chat request", expected, &body)?;
                if got_notes != *notes {
                    return Err(Failure::new(format!(
                        "chat request notes: expected {notes:?}, got {got_notes:?}"
                    )));
                }
                Ok(())
            }
            (result, expected, code) => match (result, code) {
                (Err(e), Some(code)) if e.code() == Some(code.as_str()) => Ok(()),
                (result, code) => Err(mismatch(
                    "chat request",
                    result.map(|(body, _)| body),
                    expected.is_some(),
                    code.as_deref(),
                )),
            },
        },
        ExecCase::ChatRelay {
            request,
            sse,
            expected,
            outcome,
        } => {
            let output = codec
                .chat_relay(request, sse.as_bytes())
                .map_err(|e| Failure::codec("chat relay", &e))?;
            let events = check_stream("chat relay", &output.jsonl)?;
            same_events("chat relay", expected, &events)?;
            codec.assemble(&output.jsonl, true).map_err(|e| {
                Failure::new(format!(
                    "assembling the chat relay's output failed: {} at line {:?}",
                    e.message, e.line
                ))
            })?;
            if output.outcome != *outcome {
                return Err(Failure::new(format!(
                    "chat relay outcome: expected `{outcome}`, got `{}`",
                    output.outcome
                )));
            }
            Ok(())
        }
        ExecCase::Assemble {
            input,
            strict_deltas,
            expected,
            expected_error,
        } => match (
            codec.assemble(input, *strict_deltas),
            expected,
            expected_error,
        ) {
            (Ok(actual), Some(expected), None) => same_json("transcript", expected, &actual),
            (Err(e), None, Some(want)) if e.code == want.code && e.line == want.line => Ok(()),
            (Ok(actual), _, Some(want)) => Err(Failure::new(format!(
                "assemble succeeded, but the fixture expects error `{}` at line {:?}; got {actual}",
                want.code, want.line
            ))),
            (Err(e), _, want) => Err(Failure::new(format!(
                "assemble failed with `{}` at line {:?} ({}); expected {}",
                e.code,
                e.line,
                e.message,
                want.as_ref().map_or("success".to_owned(), |w| format!(
                    "`{}` at line {:?}",
                    w.code, w.line
                ))
            ))),
            (Ok(_), None, None) => Err(Failure::new(
                "fixture: an assemble fixture needs `expected` or `expected_error`",
            )),
        },
        ExecCase::Read {
            input,
            max_line_bytes,
            expected,
        } => {
            let lines: Vec<&str> = input.split('\n').collect();
            let actual: Vec<Value> = codec
                .read(input, *max_line_bytes)
                .into_iter()
                .map(|result| match result {
                    Ok((line, event)) => {
                        let mut entry = Map::new();
                        entry.insert("line".to_owned(), Value::from(line));
                        let event_type = event.get("type").cloned().unwrap_or(Value::Null);
                        entry.insert("type".to_owned(), event_type);
                        // Reading and writing back keeps the JSON value.
                        let source = lines
                            .get(line as usize - 1)
                            .map(|l| l.trim_end_matches('\r'))
                            .and_then(|l| serde_json::from_str::<Value>(l).ok());
                        if source.as_ref().is_none_or(|s| !json_eq(s, &event)) {
                            entry.insert("roundtrip".to_owned(), Value::Bool(false));
                        }
                        Value::Object(entry)
                    }
                    Err(e) => {
                        let mut entry = Map::new();
                        entry.insert("line".to_owned(), e.line.map_or(Value::Null, Value::from));
                        entry.insert("error".to_owned(), Value::from(e.code));
                        Value::Object(entry)
                    }
                })
                .collect();
            same_json(
                "read",
                &Value::Array(expected.clone()),
                &Value::Array(actual),
            )
        }
        ExecCase::Sse {
            input,
            max_event_bytes,
            expected,
            expected_error,
            open_at_end,
        } => {
            let bytes = input.as_bytes();
            let mut sizes: Vec<usize> = (1..=7).collect();
            sizes.push(bytes.len().max(1));
            for chunk in sizes {
                let output = codec.sse(bytes, chunk, *max_event_bytes);
                let what = format!("sse (chunks of {chunk} bytes)");
                same_json(
                    &what,
                    &Value::Array(expected.clone()),
                    &Value::Array(output.events),
                )?;
                let error = output.error.map(|e| (e.code, e.line));
                let want = expected_error.clone().map(|e| (e.code, e.line));
                if error != want {
                    return Err(Failure::new(format!(
                        "{what}: expected error {want:?}, got {error:?}"
                    )));
                }
                if output.open_at_end != *open_at_end {
                    return Err(Failure::new(format!(
                        "{what}: expected an open event at the end at line {open_at_end:?}, got {:?}",
                        output.open_at_end
                    )));
                }
            }
            Ok(())
        }
    }
}

fn expect(
    what: &str,
    result: Result<Value, CodecError>,
    expected: Option<&Value>,
    expected_error: Option<&str>,
) -> Result<(), Failure> {
    match (result, expected, expected_error) {
        (Ok(actual), Some(expected), None) => same_json(what, expected, &actual),
        (Err(e), None, Some(code)) if e.code() == Some(code) => Ok(()),
        (result, expected, code) => Err(mismatch(what, result, expected.is_some(), code)),
    }
}

fn mismatch(
    what: &str,
    result: Result<Value, CodecError>,
    has_expected: bool,
    code: Option<&str>,
) -> Failure {
    match (result, code) {
        (Ok(actual), Some(code)) => Failure::new(format!(
            "{what} succeeded, but the fixture expects error `{code}`; got {actual}"
        )),
        (Err(e), Some(code)) => Failure::new(format!(
            "{what} failed with the wrong error: expected `{code}`, got {e}"
        )),
        (Err(e), None) => Failure::codec(what, &e),
        (Ok(_), None) if !has_expected => Failure::new(format!(
            "fixture: a {what} fixture needs `expected` or `expected_error`"
        )),
        (Ok(_), None) => Failure::new(format!("fixture: {what} has both expectations")),
    }
}

fn same_events(what: &str, expected: &[Value], actual: &[Value]) -> Result<(), Failure> {
    same_json(
        &format!("{what} events"),
        &Value::Array(expected.to_vec()),
        &Value::Array(actual.to_vec()),
    )
}

/// Parses emitted JSONL and applies the stream checks; returns the events.
pub fn check_stream(what: &str, jsonl: &str) -> Result<Vec<Value>, Failure> {
    if !jsonl.is_empty() && !jsonl.ends_with('\n') {
        return Err(Failure::new(format!(
            "{what}: the output does not end with a line break"
        )));
    }
    let mut events = Vec::new();
    for (i, line) in jsonl.lines().enumerate() {
        let event: Value = serde_json::from_str(line)
            .map_err(|e| Failure::new(format!("{what}: line {} is not JSON: {e}", i + 1)))?;
        events.push(event);
    }
    let mut problems = Vec::new();
    // The final values each item was given, to check that they agree.
    let mut arguments: HashMap<String, Option<String>> = HashMap::new();
    let mut texts: HashMap<(String, u64), String> = HashMap::new();
    let mut done_items: HashMap<String, Value> = HashMap::new();
    if events
        .first()
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        != Some("response.created")
    {
        problems.push("the first event is not response.created".to_owned());
    }
    let ids: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.get("response").and_then(|r| r.get("id")))
        .collect();
    if ids.windows(2).any(|w| w[0] != w[1]) {
        problems.push("the response objects do not all have the same id".to_owned());
    }
    let terminal_count = events.iter().filter(|e| is_terminal(e)).count();
    if terminal_count != 1 || !events.last().is_some_and(is_terminal) {
        problems.push(format!(
            "exactly one terminal event, last (found {terminal_count})"
        ));
    }
    for (i, event) in events.iter().enumerate() {
        let line = i + 1;
        let mut missing = Vec::new();
        profile(event, &mut missing);
        if event.get("sequence_number").and_then(Value::as_u64) != Some(i as u64) {
            problems.push(format!("line {line}: sequence_number is not {i}"));
        }
        for m in missing {
            problems.push(format!("line {line}: {m}"));
        }
        let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
        let item_id = event
            .get("item_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match ty {
            "response.output_item.added" => {
                let item = &event["item"];
                if item["type"] == "function_call" {
                    if let Some(id) = item["id"].as_str() {
                        arguments.insert(id.to_owned(), None);
                    }
                }
            }
            "response.function_call_arguments.delta" if !arguments.contains_key(&item_id) => {
                problems.push(format!(
                    "line {line}: argument delta for an unannounced call"
                ));
            }
            "response.function_call_arguments.done" => {
                arguments.insert(item_id, event["arguments"].as_str().map(str::to_owned));
            }
            "response.output_item.done" => {
                let item = &event["item"];
                let id = item["id"].as_str().unwrap_or("").to_owned();
                if item["type"] == "function_call" {
                    if let Some(Some(done)) = arguments.get(&id) {
                        if item["arguments"].as_str() != Some(done.as_str()) {
                            problems.push(format!(
                                "line {line}: the item's arguments differ from function_call_arguments.done"
                            ));
                        }
                    }
                }
                if item["type"] == "message" {
                    for (index, part) in
                        item["content"].as_array().into_iter().flatten().enumerate()
                    {
                        let key = (id.clone(), index as u64);
                        if let (Some(done), Some(text)) = (texts.get(&key), part["text"].as_str()) {
                            if done != text {
                                problems.push(format!(
                                    "line {line}: the item's text differs from output_text.done"
                                ));
                            }
                        }
                    }
                }
                done_items.insert(id, item.clone());
            }
            "response.output_text.done" => {
                let key = (item_id, event["content_index"].as_u64().unwrap_or(0));
                texts.insert(key, event["text"].as_str().unwrap_or("").to_owned());
            }
            "response.content_part.done" if event["part"]["type"] == "output_text" => {
                let key = (item_id, event["content_index"].as_u64().unwrap_or(0));
                if texts.get(&key).map(String::as_str) != event["part"]["text"].as_str() {
                    problems.push(format!(
                        "line {line}: content_part.done differs from output_text.done"
                    ));
                }
            }
            "response.completed" => {
                for item in event["response"]["output"].as_array().into_iter().flatten() {
                    let id = item["id"].as_str().unwrap_or("");
                    if done_items.get(id).is_some_and(|done| done != item) {
                        problems.push(format!(
                            "line {line}: the completed response's item `{id}` differs from its output_item.done"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if problems.is_empty() {
        Ok(events)
    } else {
        Err(Failure::new(format!(
            "{what}: the emitted stream breaks the protocol:\n  {}",
            problems.join("\n  ")
        )))
    }
}

fn is_terminal(event: &Value) -> bool {
    matches!(
        event.get("type").and_then(Value::as_str),
        Some("response.completed" | "response.failed" | "response.incomplete")
    )
}

/// The members both profiles require, as `(path, JSON type)` checks.
fn profile(event: &Value, missing: &mut Vec<String>) {
    let mut need = |path: &str, kind: &str| {
        let mut value = Some(event);
        for key in path.split('.') {
            value = value.and_then(|v| v.get(key));
        }
        let ok = match (value, kind) {
            (Some(v), "string") => v.is_string(),
            (Some(v), "integer") => v.is_u64(),
            (Some(v), "number") => v.is_number(),
            (Some(v), "bool") => v.is_boolean(),
            (Some(v), "array") => v.is_array(),
            (Some(v), "object") => v.is_object(),
            (Some(_), "any") => true,
            _ => false,
        };
        if !ok {
            missing.push(format!("`{path}` must be {kind}"));
        }
    };
    let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
    need("type", "string");
    need("sequence_number", "integer");
    match ty {
        "response.created"
        | "response.in_progress"
        | "response.completed"
        | "response.failed"
        | "response.incomplete" => {
            for (path, kind) in [
                ("response.id", "string"),
                ("response.object", "string"),
                ("response.created_at", "number"),
                ("response.status", "string"),
                ("response.model", "string"),
                ("response.output", "array"),
                ("response.parallel_tool_calls", "bool"),
                ("response.tool_choice", "any"),
                ("response.tools", "array"),
            ] {
                need(path, kind);
            }
            if ty == "response.completed"
                || event["response"].get("usage").is_some_and(|u| !u.is_null())
            {
                for (path, kind) in [
                    ("response.usage.input_tokens", "integer"),
                    (
                        "response.usage.input_tokens_details.cached_tokens",
                        "integer",
                    ),
                    ("response.usage.output_tokens", "integer"),
                    (
                        "response.usage.output_tokens_details.reasoning_tokens",
                        "integer",
                    ),
                    ("response.usage.total_tokens", "integer"),
                    ("response.usage.cached_tokens", "integer"),
                    (
                        "response.usage.input_tokens_details.cache_write_tokens",
                        "integer",
                    ),
                ] {
                    need(path, kind);
                }
            }
            if ty == "response.failed" {
                need("response.error.message", "string");
            }
            if let Some(output) = event["response"]["output"].as_array() {
                for item in output {
                    item_profile(item, missing);
                }
            }
        }
        "response.output_item.added" | "response.output_item.done" => {
            need("output_index", "integer");
            need("item", "object");
            item_profile(&event["item"], missing);
        }
        "response.content_part.added" | "response.content_part.done" => {
            for (path, kind) in [
                ("item_id", "string"),
                ("output_index", "integer"),
                ("content_index", "integer"),
                ("part.type", "string"),
            ] {
                need(path, kind);
            }
            if event["part"]["type"] == "output_text" {
                need("part.text", "string");
                need("part.annotations", "array");
            }
        }
        "response.output_text.delta" | "response.output_text.done" => {
            for (path, kind) in [
                ("item_id", "string"),
                ("output_index", "integer"),
                ("content_index", "integer"),
                ("logprobs", "array"),
            ] {
                need(path, kind);
            }
            need(
                if ty.ends_with("delta") {
                    "delta"
                } else {
                    "text"
                },
                "string",
            );
        }
        "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
            need("item_id", "string");
            need("output_index", "integer");
            need(
                if ty.ends_with("delta") {
                    "delta"
                } else {
                    "arguments"
                },
                "string",
            );
        }
        "error" => need("message", "string"),
        _ => {}
    }
}

fn item_profile(item: &Value, missing: &mut Vec<String>) {
    let required: &[&str] = match item.get("type").and_then(Value::as_str) {
        Some("function_call") => &["id", "call_id", "name", "arguments", "status"],
        Some("message") => &["id", "role", "status"],
        _ => &[],
    };
    for key in required {
        if !item.get(*key).is_some_and(Value::is_string) {
            missing.push(format!("item `{key}` must be string"));
        }
    }
    if item.get("type").and_then(Value::as_str) == Some("message") {
        match item.get("content").and_then(Value::as_array) {
            Some(parts) => {
                for part in parts {
                    if part["type"] == "output_text"
                        && !(part["text"].is_string() && part["annotations"].is_array())
                    {
                        missing.push("output_text parts need `text` and `annotations`".to_owned());
                    }
                }
            }
            None => missing.push("item `content` must be array".to_owned()),
        }
    }
}
