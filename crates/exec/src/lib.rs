//! The exec JSONL event protocol: Responses-API streaming events, one per line, for agent tool
//! loops.
//!
//! `agentwire exec` sends one turn to a model with JSON-Schema tools and prints the model's
//! streaming events as JSONL; an orchestrator reads them, runs the tools the model asked for,
//! and calls `exec` again with the conversation so far. This crate is everything in that loop
//! except the socket: the event types, JSONL reading and writing, the request body, the
//! server-sent-event framing of the provider's answer, the normalizer that turns whatever the
//! provider sends into the stream the protocol promises, the assembler that folds a stream into
//! text and tool calls, and deterministic offline mocks. The protocol, and every decision taken
//! where its v0 text is silent, is described in `docs/exec.md` in the repository.
//!
//! | piece | items |
//! |---|---|
//! | events | [`Event`] and its payloads ([`OutputTextDelta`], [`OutputItemEvent`], [`ResponseEvent`], ...) |
//! | JSONL | [`from_str`], [`to_string`], [`EventReader`], [`EventWriter`] |
//! | consumers | [`Assembler`], [`assemble`], [`Transcript`], [`ToolCall`] |
//! | requests | [`RequestOptions`], [`Request`], [`FunctionTool`], [`ToolChoice`], [`ToolSpec`], [`check_input`] |
//! | upstream | [`SseDecoder`], [`SseReader`], [`Normalizer`], [`UpstreamFailure`], [`RetryPolicy`], [`http_failure`] |
//! | Chat Completions upstreams | [`Request::to_chat_completions`], [`ChatRequest`], [`ChatStream`] |
//! | offline | [`MockMode`], [`MockEvents`] |
//!
//! The crate has no HTTP client and no async runtime: feed [`SseDecoder`] the bytes of a
//! response body from any client, blocking or not. To produce the protocol rather than consume
//! it, push events with only the members you know through a [`Normalizer`]: it numbers them,
//! completes item lifecycles and fills every member the v0 shapes and the Responses-API schemas
//! require.
//!
//! # Example: one offline turn, end to end
//!
//! ```
//! use agentwire_exec::{EventWriter, FunctionTool, MockMode, Normalizer, RequestOptions};
//! use serde_json::json;
//!
//! // The request: a prompt and one tool.
//! let mut options = RequestOptions::new();
//! options.prompt = Some("What is on https://example.com?".to_owned());
//! let schema = json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]});
//! options.tools.push(FunctionTool::new("web_fetch", schema)?);
//! let request = options.build()?;
//!
//! // The upstream (here a mock), normalized and written as JSONL.
//! let mut normalizer = Normalizer::new(&request);
//! let mut writer = EventWriter::new(Vec::new());
//! for upstream in MockMode::ToolCall.events(&request)? {
//!     for event in normalizer.push(upstream) {
//!         writer.write_event(&event)?;
//!     }
//! }
//! for event in normalizer.finish() {
//!     writer.write_event(&event)?;
//! }
//! let jsonl = writer.into_inner();
//!
//! // The orchestrator's side: fold the lines into tool calls.
//! let transcript = agentwire_exec::assemble(&jsonl[..])?;
//! assert!(transcript.is_completed());
//! let call = &transcript.tool_calls[0];
//! assert_eq!((call.name.as_str(), call.call_id.as_str()), ("web_fetch", "call_mock_1"));
//! assert_eq!(call.arguments, r#"{"url":"mock"}"#);
//! # Ok::<(), agentwire_exec::Error>(())
//! ```
//!
//! # Features of serde_json
//!
//! Request bodies hold the caller's JSON (schemas, input items) as `serde_json::Value`s; with
//! serde_json's default features their members are written in sorted order. Models read a
//! schema's properties in the order given, so a program that cares should enable serde_json's
//! `preserve_order` (the `agentwire` command does). This crate works the same with or without
//! `preserve_order` and `arbitrary_precision`.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod assemble;
mod chat;
mod error;
mod event;
mod mock;
mod normalize;
mod read;
mod request;
mod sse;
mod upstream;
mod wire;
mod write;

pub use assemble::{assemble, Assembler, Message, ToolCall, Transcript};
pub use chat::{ChatRequest, ChatStream};
pub use error::{Error, ErrorKind, Result};
pub use event::{
    ContentPart, ContentPartEvent, ErrorEvent, Event, FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone, FunctionCallItem, InputTokensDetails, MessageItem, OtherEvent,
    OutputItem, OutputItemEvent, OutputTextDelta, OutputTextDone, OutputTextPart,
    OutputTokensDetails, Response, ResponseError, ResponseEvent, Usage,
};
pub use mock::{MockEvents, MockMode, ECHO_DELTA_BYTES, MOCK_TEXT};
pub use normalize::{Normalizer, Outcome, UpstreamFailure, DEFAULT_MAX_OUTPUT_BYTES};
pub use read::{from_str, EventReader, DEFAULT_MAX_LINE_BYTES};
pub use request::{
    check_input, is_valid_tool_name, FunctionTool, ReasoningEffort, ReasoningSummary, Request,
    RequestOptions, TextFormat, ToolChoice, ToolSpec, DEFAULT_MODEL, INCLUDE_ENCRYPTED_REASONING,
};
pub use sse::{
    SseDecoder, SseEvent, SseReader, DEFAULT_MAX_COMMENT_BYTES, DEFAULT_MAX_EVENT_BYTES,
};
pub use upstream::{http_failure, parse_retry_after, RetryPolicy};
pub use write::{to_string, EventWriter};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
