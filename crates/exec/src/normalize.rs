//! Turning an upstream event stream, whatever its dialect, into the stream this protocol
//! promises.

use std::collections::HashMap;

use serde_json::{Number, Value};

use crate::event::{
    ContentPart, ContentPartEvent, ErrorEvent, Event, FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone, FunctionCallItem, MessageItem, OutputItem, OutputItemEvent,
    OutputTextDelta, OutputTextDone, OutputTextPart, Response, ResponseError, ResponseEvent, Usage,
};
use crate::sse::SseEvent;
use crate::Request;

/// How a stream ended: the type of its terminal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// `response.completed`. A turn that ends by asking for tool calls is completed too.
    Completed,
    /// `response.failed`: an upstream error, an HTTP or transport failure, a cut stream or a
    /// protocol violation.
    Failed,
    /// `response.incomplete`: the output was cut short (a token limit, a content filter).
    Incomplete,
}

impl Outcome {
    /// The terminal event's type.
    pub fn event_type(self) -> &'static str {
        match self {
            Outcome::Completed => "response.completed",
            Outcome::Failed => "response.failed",
            Outcome::Incomplete => "response.incomplete",
        }
    }

    /// The status of the final response object: `completed`, `failed` or `incomplete`.
    pub fn status(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Incomplete => "incomplete",
        }
    }
}

/// A failure outside the event stream, reported with [`Normalizer::fail`]: an HTTP error
/// status, a transport error, a body that could not be framed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpstreamFailure {
    /// The `error` event's `code`: the provider's code when it sent one (`rate_limit_exceeded`,
    /// `invalid_api_key`, ...), otherwise one of this crate's (`http_error`, `transport_error`,
    /// `event_too_large`, ...).
    pub code: String,
    /// The `error` event's `message`.
    pub message: String,
    /// The HTTP status, when the failure is an HTTP response; written as `http_status`.
    pub http_status: Option<u16>,
}

impl UpstreamFailure {
    /// A failure with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        UpstreamFailure {
            code: code.into(),
            message: message.into(),
            http_status: None,
        }
    }

    /// Sets the HTTP status.
    #[must_use]
    pub fn with_http_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }

    /// The failure a read error of the response body stands for: an event over the size
    /// limit (`event_too_large`), a timeout (`timeout`), a broken connection
    /// (`transport_error`) or bytes that are not an event stream (`invalid_event`).
    ///
    /// ```
    /// use agentwire_exec::{SseReader, SseDecoder, UpstreamFailure};
    ///
    /// let body = format!("data: {}\n\n", "x".repeat(100));
    /// let mut reader = SseReader::with_decoder(body.as_bytes(), SseDecoder::new().max_event_bytes(50));
    /// let error = reader.next_event().unwrap_err();
    /// assert_eq!(UpstreamFailure::from_read_error(&error).code, "event_too_large");
    /// ```
    pub fn from_read_error(error: &crate::Error) -> Self {
        match error.kind() {
            crate::ErrorKind::EventTooLarge { limit } => UpstreamFailure::new(
                "event_too_large",
                format!("the upstream sent an event larger than the limit of {limit} bytes"),
            ),
            crate::ErrorKind::CommentTooLarge { limit } => UpstreamFailure::new(
                "comment_too_large",
                format!(
                    "the upstream sent a comment line longer than the limit of {limit} bytes"
                ),
            ),
            crate::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                UpstreamFailure::new("timeout", format!("the upstream stream timed out: {io}"))
            }
            crate::ErrorKind::Io(io) => UpstreamFailure::new(
                "transport_error",
                format!("the upstream stream broke off: {io}"),
            ),
            _ => UpstreamFailure::new(
                "invalid_event",
                format!("the upstream sent an unreadable event stream: {error}"),
            ),
        }
    }
}

/// What the normalizer knows of the request, used to fill response objects.
#[derive(Debug, Clone)]
struct Defaults {
    model: Option<String>,
    instructions: Option<Value>,
    tools: Vec<Value>,
    tool_choice: Value,
    parallel_tool_calls: bool,
    created_at: u64,
}

#[derive(Debug)]
struct Item {
    id: String,
    output_index: u64,
    kind: Kind,
    done: Option<OutputItem>,
}

#[derive(Debug)]
enum Kind {
    Message {
        template: MessageItem,
        parts: Vec<Part>,
    },
    Call {
        template: FunctionCallItem,
        arguments: String,
        deltas: bool,
        arguments_done: bool,
    },
    Other(OutputItem),
}

#[derive(Debug)]
struct Part {
    template: ContentPart,
    text: String,
    deltas: bool,
    text_done: bool,
    done: bool,
}

/// Turns upstream events into the stream this protocol promises.
///
/// Feed it what the provider sends ([`push`](Normalizer::push), or
/// [`push_sse`](Normalizer::push_sse) for a framed server-sent event), report failures outside
/// the stream ([`fail`](Normalizer::fail)) and the end of the body
/// ([`finish`](Normalizer::finish)); each call returns the events to emit. The output:
///
/// - every event has `sequence_number`, counting from 0 in output order (upstream numbers are
///   replaced), and the members the Responses API requires (`output_index`, `item_id`,
///   `content_index`, `logprobs`, `annotations`, full `response` objects, usage with cached
///   tokens in both places) while keeping the v0 shapes;
/// - every item has its whole lifecycle in order: `output_item.added`; for messages
///   `content_part.added`, text deltas, `output_text.done`, `content_part.done`; for function
///   calls argument deltas and `function_call_arguments.done`; then `output_item.done`. Missing
///   steps are filled in (an upstream that sends only `output_item.done` still gives a delta), and
///   the final text or arguments always equal the concatenated deltas; an upstream whose final
///   value disagrees with its own deltas fails the response (`arguments_mismatch`,
///   `text_mismatch`);
/// - the stream ends with exactly one terminal event. An upstream `error`, a `response.failed`,
///   an HTTP or transport failure and a stream that stops before its terminal event each give
///   an `error` event followed by `response.failed`;
/// - events of other types pass through unchanged apart from `sequence_number`; events after the
///   terminal one are dropped (and counted).
///
/// The normalizer is also how to *produce* the protocol: build events with only the members you
/// know (the constructors of the event types take just the required ones) and push them through
/// it; it fills in everything both profiles need. The mocks work that way.
///
/// ```
/// use agentwire_exec::{Normalizer, Outcome, RequestOptions};
///
/// let mut options = RequestOptions::new();
/// options.prompt = Some("hi".to_owned());
/// let mut normalizer = Normalizer::new(&options.build()?);
/// // A v0-style upstream: bare deltas, then the end of the body without a terminal event.
/// let mut out = normalizer.push_json(r#"{"type":"response.output_text.delta","delta":"Hel"}"#);
/// out.extend(normalizer.push_json(r#"{"type":"response.output_text.delta","delta":"lo"}"#));
/// out.extend(normalizer.finish());
/// let types: Vec<_> = out.iter().map(|e| e.event_type()).collect();
/// assert_eq!(types, [
///     "response.output_item.added",
///     "response.content_part.added",
///     "response.output_text.delta",
///     "response.output_text.delta",
///     "error",
///     "response.failed",
/// ]);
/// assert_eq!(normalizer.outcome(), Some(Outcome::Failed));
/// assert_eq!(out[5].sequence_number(), Some(5));
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug)]
pub struct Normalizer {
    defaults: Defaults,
    response_id: Option<String>,
    created_at: Option<Number>,
    model: Option<String>,
    seq: u64,
    items: Vec<Item>,
    by_id: HashMap<String, usize>,
    current_message: Option<usize>,
    error: Option<ResponseError>,
    outcome: Option<Outcome>,
    ignored: u64,
    max_output_bytes: usize,
    /// What is left of `max_output_bytes`.
    budget: usize,
}

/// The default [`Normalizer::max_output_bytes`]: 64 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 << 20;

/// What an item and a content part count against the output limit, for their bookkeeping.
const ITEM_COST: usize = 256;
const PART_COST: usize = 128;

impl Normalizer {
    /// A normalizer for the response to `request`, whose model, instructions and tools fill
    /// the response objects when the upstream leaves them out.
    pub fn new(request: &Request) -> Self {
        Normalizer {
            defaults: Defaults {
                model: Some(request.model.clone()),
                instructions: request.instructions.clone().map(Value::from),
                tools: request.tools.clone().unwrap_or_default(),
                tool_choice: request
                    .tool_choice
                    .clone()
                    .unwrap_or_else(|| Value::from("auto")),
                parallel_tool_calls: request.parallel_tool_calls.unwrap_or(true),
                created_at: 0,
            },
            response_id: None,
            created_at: None,
            model: None,
            seq: 0,
            items: Vec::new(),
            by_id: HashMap::new(),
            current_message: None,
            error: None,
            outcome: None,
            ignored: 0,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            budget: DEFAULT_MAX_OUTPUT_BYTES,
        }
    }

    /// Sets the most output the normalizer keeps track of: the text and arguments of every
    /// item (which the final response object repeats), plus a small allowance per item and
    /// content part. Past it the response fails (`output_too_large`), so that memory stays
    /// bounded whatever the upstream sends. Default [`DEFAULT_MAX_OUTPUT_BYTES`].
    #[must_use]
    pub fn max_output_bytes(mut self, limit: usize) -> Self {
        self.max_output_bytes = limit;
        self.budget = limit;
        self
    }

    fn spend(&mut self, bytes: usize) -> Result<(), UpstreamFailure> {
        match self.budget.checked_sub(bytes) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(UpstreamFailure::new(
                "output_too_large",
                format!(
                    "the response's output exceeds the limit of {} bytes",
                    self.max_output_bytes
                ),
            )),
        }
    }

    /// Sets the `created_at` (Unix seconds) of response objects when the upstream never sent
    /// one (for example when the request failed before the stream began). Default 0.
    #[must_use]
    pub fn created_at(mut self, unix_seconds: u64) -> Self {
        self.defaults.created_at = unix_seconds;
        self
    }

    /// How the stream ended, once it has.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Upstream events dropped because they came after the terminal event.
    pub fn ignored_after_terminal(&self) -> u64 {
        self.ignored
    }

    /// The next `sequence_number`: the number of events emitted so far.
    pub fn emitted(&self) -> u64 {
        self.seq
    }

    /// Takes one framed server-sent event: its data is one JSON event. Empty data and the
    /// `[DONE]` sentinel are skipped.
    pub fn push_sse(&mut self, event: &SseEvent) -> Vec<Event> {
        self.push_json(&event.data)
    }

    /// Takes one upstream event as JSON text. Text that is not a valid event fails the
    /// response (`invalid_event`); empty text and `[DONE]` are skipped.
    pub fn push_json(&mut self, data: &str) -> Vec<Event> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Vec::new();
        }
        match crate::read::from_str(data) {
            Ok(event) => self.push(event),
            Err(e) => {
                let message = match e.kind() {
                    crate::ErrorKind::InvalidJson { message } => {
                        format!("the upstream sent an event that is not JSON: {message}")
                    }
                    kind => format!("the upstream sent an invalid event: {kind}"),
                };
                self.fail(UpstreamFailure::new("invalid_event", message))
            }
        }
    }

    /// Takes one upstream event.
    pub fn push(&mut self, event: Event) -> Vec<Event> {
        let mut out = Vec::new();
        if self.outcome.is_some() {
            self.ignored += 1;
            return out;
        }
        let result = match event {
            Event::ResponseCreated(mut e) => {
                self.absorb(&e.response);
                self.fill_response(&mut e.response, "in_progress");
                self.emit(&mut out, Event::ResponseCreated(e));
                Ok(())
            }
            Event::ResponseInProgress(mut e) => {
                self.absorb(&e.response);
                self.fill_response(&mut e.response, "in_progress");
                self.emit(&mut out, Event::ResponseInProgress(e));
                Ok(())
            }
            Event::OutputItemAdded(e) => self.item_added(e, &mut out),
            Event::ContentPartAdded(e) => self.part_added(e, &mut out),
            Event::OutputTextDelta(e) => self.text_delta(e, &mut out),
            Event::OutputTextDone(e) => self.text_done(e, &mut out),
            Event::ContentPartDone(e) => self.part_done(e, &mut out),
            Event::FunctionCallArgumentsDelta(e) => self.arguments_delta(e, &mut out),
            Event::FunctionCallArgumentsDone(e) => self.arguments_done(e, &mut out),
            Event::OutputItemDone(e) => self.item_done(e, &mut out),
            Event::ResponseCompleted(e) => self.terminal(e, Outcome::Completed, &mut out),
            Event::ResponseIncomplete(e) => self.terminal(e, Outcome::Incomplete, &mut out),
            Event::ResponseFailed(e) => self.terminal(e, Outcome::Failed, &mut out),
            Event::Error(e) => {
                self.error_event(e, &mut out);
                Ok(())
            }
            other => {
                self.emit(&mut out, other);
                Ok(())
            }
        };
        if let Err(failure) = result {
            out.extend(self.fail(failure));
        }
        out
    }

    /// Reports a failure outside the stream: emits an `error` event with the failure's code,
    /// message and `http_status`, then `response.failed`. Nothing happens once the stream has
    /// ended.
    pub fn fail(&mut self, failure: UpstreamFailure) -> Vec<Event> {
        let mut out = Vec::new();
        if self.outcome.is_some() {
            return out;
        }
        let mut error = ErrorEvent::new(Some(failure.code.clone()), failure.message.clone());
        if let Some(status) = failure.http_status {
            error
                .extra
                .insert("http_status".to_owned(), Value::from(status));
        }
        self.error
            .get_or_insert_with(|| ResponseError::new(Some(failure.code), failure.message));
        self.emit(&mut out, Event::Error(error));
        let response = Response::default();
        self.finish_failed(response, &mut out);
        out
    }

    /// Reports the end of the upstream body. Without a terminal event so far, the stream was
    /// cut: emits `error` (`stream_truncated`) and `response.failed`, or only
    /// `response.failed` after an upstream `error`.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        if self.outcome.is_some() {
            return out;
        }
        if self.error.is_some() {
            self.finish_failed(Response::default(), &mut out);
            return out;
        }
        self.fail(UpstreamFailure::new(
            "stream_truncated",
            "the upstream stream ended before a terminal event",
        ))
    }

    fn emit(&mut self, out: &mut Vec<Event>, mut event: Event) {
        event.set_sequence_number(self.seq);
        self.seq += 1;
        out.push(event);
    }

    /// Remembers the identity of the response from an upstream response object.
    fn absorb(&mut self, response: &Response) {
        if self.response_id.is_none() {
            self.response_id.clone_from(&response.id);
        }
        if self.created_at.is_none() {
            self.created_at.clone_from(&response.created_at);
        }
        if self.model.is_none() {
            self.model.clone_from(&response.model);
        }
    }

    fn fill_response(&self, response: &mut Response, status: &str) {
        if response.id.is_none() {
            response.id = Some(self.response_id.clone().unwrap_or_default());
        }
        response.object.get_or_insert_with(|| "response".to_owned());
        if response.created_at.is_none() {
            response.created_at = Some(
                self.created_at
                    .clone()
                    .unwrap_or_else(|| Number::from(self.defaults.created_at)),
            );
        }
        response.status.get_or_insert_with(|| status.to_owned());
        if response.instructions.is_none() && !response.extra.contains_key("instructions") {
            response
                .instructions
                .clone_from(&self.defaults.instructions);
        }
        if response.model.is_none() {
            response.model = self.model.clone().or_else(|| self.defaults.model.clone());
        }
        if response.output.is_none() {
            response.output = Some(self.snapshot());
        }
        response
            .parallel_tool_calls
            .get_or_insert(self.defaults.parallel_tool_calls);
        response
            .tool_choice
            .get_or_insert_with(|| self.defaults.tool_choice.clone());
        response
            .tools
            .get_or_insert_with(|| self.defaults.tools.clone());
        for key in [
            "id",
            "object",
            "created_at",
            "status",
            "model",
            "output",
            "parallel_tool_calls",
            "tool_choice",
            "tools",
        ] {
            if response.extra.get(key) == Some(&Value::Null) {
                crate::wire::remove(&mut response.extra, key);
            }
        }
        if let Some(usage) = &mut response.usage {
            usage.fill();
        }
    }

    /// The output items so far, in output order.
    fn snapshot(&self) -> Vec<OutputItem> {
        let mut items: Vec<&Item> = self.items.iter().collect();
        items.sort_by_key(|item| item.output_index);
        items
            .into_iter()
            .map(|item| self.item_snapshot(item))
            .collect()
    }

    fn item_snapshot(&self, item: &Item) -> OutputItem {
        if let Some(done) = &item.done {
            return done.clone();
        }
        match &item.kind {
            Kind::Message { template, parts } => {
                let mut message = template.clone();
                message.content = Some(parts.iter().map(Part::snapshot).collect());
                OutputItem::Message(message)
            }
            Kind::Call {
                template,
                arguments,
                ..
            } => {
                let mut call = template.clone();
                call.arguments = Some(arguments.clone());
                OutputItem::FunctionCall(call)
            }
            Kind::Other(item) => item.clone(),
        }
    }

    fn lookup(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    fn next_output_index(&self) -> u64 {
        self.items
            .iter()
            .map(|item| item.output_index + 1)
            .max()
            .unwrap_or(0)
    }

    fn item_added(
        &mut self,
        mut e: OutputItemEvent,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let output_index = e.output_index.unwrap_or_else(|| self.next_output_index());
        e.output_index = Some(output_index);
        let id = match e.item.id() {
            Some(id) => id.to_owned(),
            // An item without an id gets a fresh one.
            None => {
                let mut id = format!("item_{output_index}");
                while self.by_id.contains_key(&id) {
                    id.push('_');
                }
                id
            }
        };
        self.spend(ITEM_COST)?;
        if self.by_id.contains_key(&id) {
            return Err(UpstreamFailure::new(
                "duplicate_item",
                format!("the upstream announced item `{id}` twice"),
            ));
        }
        let mut initial_arguments = String::new();
        let mut announced_parts = Vec::new();
        let kind = match &mut e.item {
            OutputItem::FunctionCall(call) => {
                call.id = Some(id.clone());
                // Arguments announced up front become a delta, so that the deltas always add
                // up to the final arguments.
                initial_arguments = call.arguments.replace(String::new()).unwrap_or_default();
                call.status.get_or_insert_with(|| "in_progress".to_owned());
                Kind::Call {
                    template: call.clone(),
                    arguments: String::new(),
                    deltas: false,
                    arguments_done: false,
                }
            }
            OutputItem::Message(message) => {
                message.id = Some(id.clone());
                message.role.get_or_insert_with(|| "assistant".to_owned());
                message
                    .status
                    .get_or_insert_with(|| "in_progress".to_owned());
                // Parts announced inside the item are played out after it, so that the
                // deltas carry all the text.
                announced_parts = message.content.replace(Vec::new()).unwrap_or_default();
                let mut template = message.clone();
                template.content = None;
                Kind::Message {
                    template,
                    parts: Vec::new(),
                }
            }
            OutputItem::Other(map) => {
                map.entry("id").or_insert_with(|| Value::from(id.clone()));
                Kind::Other(e.item.clone())
            }
        };
        let index = self.items.len();
        let is_message = matches!(kind, Kind::Message { .. });
        self.items.push(Item {
            id: id.clone(),
            output_index,
            kind,
            done: None,
        });
        self.by_id.insert(id.clone(), index);
        if is_message {
            self.current_message = Some(index);
        }
        self.emit(out, Event::OutputItemAdded(e));
        if !initial_arguments.is_empty() {
            self.arguments_delta(FunctionCallArgumentsDelta::new(id, initial_arguments), out)?;
        }
        for part in announced_parts {
            let empty = empty_part(&part);
            let slot = self.add_part(index, ContentPartEvent::new(empty), out)?;
            self.close_part(index, slot, Some(ContentPartEvent::new(part)), out)?;
        }
        Ok(())
    }

    /// The message item an event refers to: by id, or the open message; announces one when
    /// there is none.
    fn message_for(
        &mut self,
        item_id: Option<&str>,
        out: &mut Vec<Event>,
    ) -> Result<usize, UpstreamFailure> {
        let found = match item_id {
            Some(id) => self.lookup(id),
            None => self
                .current_message
                .filter(|&i| self.items[i].done.is_none()),
        };
        let index = match found {
            Some(index) => index,
            None => {
                let mut message = MessageItem::new();
                message.id = item_id.map(str::to_owned);
                self.item_added(OutputItemEvent::new(OutputItem::Message(message)), out)?;
                self.items.len() - 1
            }
        };
        let item = &self.items[index];
        match item.kind {
            Kind::Message { .. } if item.done.is_none() => Ok(index),
            Kind::Message { .. } => Err(UpstreamFailure::new(
                "invalid_event",
                format!(
                    "the upstream sent text for item `{}` after it was done",
                    item.id
                ),
            )),
            _ => Err(UpstreamFailure::new(
                "invalid_event",
                format!(
                    "the upstream sent text for item `{}`, which is not a message",
                    item.id
                ),
            )),
        }
    }

    /// The content part an event refers to: by index, or the open one; announces one when
    /// there is none.
    fn part_for(
        &mut self,
        item: usize,
        content_index: Option<u64>,
        out: &mut Vec<Event>,
    ) -> Result<usize, UpstreamFailure> {
        let Kind::Message { parts, .. } = &self.items[item].kind else {
            unreachable!("part_for is called for message items")
        };
        let found = match content_index {
            Some(ci) => usize::try_from(ci).ok().filter(|&ci| ci < parts.len()),
            None => parts
                .iter()
                .rposition(|p| !p.done)
                .filter(|&i| i + 1 == parts.len()),
        };
        if let Some(found) = found {
            return Ok(found);
        }
        let event = ContentPartEvent::new(ContentPart::OutputText(OutputTextPart::new("")));
        self.add_part(item, event, out)
    }

    fn add_part(
        &mut self,
        item: usize,
        mut e: ContentPartEvent,
        out: &mut Vec<Event>,
    ) -> Result<usize, UpstreamFailure> {
        self.spend(PART_COST)?;
        let output_index = self.items[item].output_index;
        let item_id = self.items[item].id.clone();
        let Kind::Message { parts, .. } = &mut self.items[item].kind else {
            unreachable!("add_part is called for message items")
        };
        let index = parts.len();
        if let ContentPart::OutputText(part) = &mut e.part {
            part.annotations.get_or_insert_with(Vec::new);
        }
        parts.push(Part::new(e.part.clone(), false));
        e.item_id = Some(item_id);
        e.output_index = Some(output_index);
        e.content_index = Some(index as u64);
        self.emit(out, Event::ContentPartAdded(e));
        Ok(index)
    }

    fn part_added(
        &mut self,
        e: ContentPartEvent,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let item = self.message_for(e.item_id.as_deref(), out)?;
        self.add_part(item, e, out)?;
        Ok(())
    }

    fn part_mut(&mut self, item: usize, part: usize) -> &mut Part {
        match &mut self.items[item].kind {
            Kind::Message { parts, .. } => &mut parts[part],
            _ => unreachable!("parts belong to message items"),
        }
    }

    fn text_delta(
        &mut self,
        mut e: OutputTextDelta,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let item = self.message_for(e.item_id.as_deref(), out)?;
        let part = self.part_for(item, e.content_index, out)?;
        let p = self.part_mut(item, part);
        if p.text_done {
            return Err(UpstreamFailure::new(
                "invalid_event",
                "the upstream sent a text delta after the part's output_text.done",
            ));
        }
        p.text.push_str(&e.delta);
        p.deltas = true;
        self.spend(e.delta.len())?;
        e.item_id = Some(self.items[item].id.clone());
        e.output_index = Some(self.items[item].output_index);
        e.content_index = Some(part as u64);
        e.logprobs.get_or_insert_with(Vec::new);
        self.emit(out, Event::OutputTextDelta(e));
        Ok(())
    }

    fn text_done(
        &mut self,
        e: OutputTextDone,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let item = self.message_for(e.item_id.as_deref(), out)?;
        let part = self.part_for(item, e.content_index, out)?;
        self.close_text(item, part, Some(e), out)
    }

    /// Emits `output_text.done` for a part (from the upstream's event, or made up), after a
    /// delta carrying the text when no delta came.
    fn close_text(
        &mut self,
        item: usize,
        part: usize,
        upstream: Option<OutputTextDone>,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let item_id = self.items[item].id.clone();
        let output_index = self.items[item].output_index;
        let p = self.part_mut(item, part);
        if p.text_done {
            return Err(UpstreamFailure::new(
                "invalid_event",
                format!("the upstream sent output_text.done twice for item `{item_id}`"),
            ));
        }
        let mut done = upstream.unwrap_or_else(|| OutputTextDone::new(p.text.clone()));
        if !p.deltas && !done.text.is_empty() {
            let text = done.text.clone();
            let mut delta = OutputTextDelta::new(text);
            delta.item_id = Some(item_id.clone());
            delta.content_index = Some(part as u64);
            self.text_delta(delta, out)?;
        } else if done.text.is_empty() {
            done.text.clone_from(&self.part_mut(item, part).text);
        } else if done.text != self.part_mut(item, part).text {
            return Err(UpstreamFailure::new(
                "text_mismatch",
                format!(
                    "the upstream's final text of item `{item_id}` differs from its concatenated deltas"
                ),
            ));
        }
        let p = self.part_mut(item, part);
        p.text_done = true;
        done.item_id = Some(item_id);
        done.output_index = Some(output_index);
        done.content_index = Some(part as u64);
        done.logprobs.get_or_insert_with(Vec::new);
        self.emit(out, Event::OutputTextDone(done));
        Ok(())
    }

    fn part_done(
        &mut self,
        e: ContentPartEvent,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let item = self.message_for(e.item_id.as_deref(), out)?;
        let part = self.part_for(item, e.content_index, out)?;
        self.close_part(item, part, Some(e), out)
    }

    /// Emits `content_part.done` for a part (from the upstream's event, or made up), after
    /// `output_text.done` when it has not come.
    fn close_part(
        &mut self,
        item: usize,
        part: usize,
        upstream: Option<ContentPartEvent>,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let p = self.part_mut(item, part);
        if p.done {
            return Err(UpstreamFailure::new(
                "invalid_event",
                "the upstream sent content_part.done twice for one part",
            ));
        }
        let is_text = matches!(p.template, ContentPart::OutputText(_));
        let final_text = match &upstream {
            Some(ContentPartEvent {
                part: ContentPart::OutputText(t),
                ..
            }) if !t.text.is_empty() => Some(t.text.clone()),
            _ => None,
        };
        if is_text && !p.text_done {
            let done = final_text.clone().map(OutputTextDone::new);
            self.close_text(item, part, done, out)?;
        } else if let Some(text) = &final_text {
            if *text != self.part_mut(item, part).text {
                return Err(UpstreamFailure::new(
                    "text_mismatch",
                    format!(
                        "the upstream's final text of item `{}` differs from its concatenated deltas",
                        self.items[item].id
                    ),
                ));
            }
        }
        let p = self.part_mut(item, part);
        p.done = true;
        let mut e = match upstream {
            Some(mut e) => {
                match &mut e.part {
                    ContentPart::OutputText(part) => {
                        part.text.clone_from(&p.text);
                        part.annotations.get_or_insert_with(Vec::new);
                    }
                    // A part this crate does not model (a refusal, ...) is final as sent.
                    other => p.template = other.clone(),
                }
                e
            }
            None => ContentPartEvent::new(p.snapshot()),
        };
        e.item_id = Some(self.items[item].id.clone());
        e.output_index = Some(self.items[item].output_index);
        e.content_index = Some(part as u64);
        self.emit(out, Event::ContentPartDone(e));
        Ok(())
    }

    fn call_for(&self, item_id: &str) -> Result<usize, UpstreamFailure> {
        let index = self.lookup(item_id).ok_or_else(|| {
            UpstreamFailure::new(
                "unknown_item",
                format!(
                    "the upstream sent arguments for item `{item_id}`, which it never announced"
                ),
            )
        })?;
        match &self.items[index].kind {
            Kind::Call {
                arguments_done: false,
                ..
            } if self.items[index].done.is_none() => Ok(index),
            Kind::Call { .. } => Err(UpstreamFailure::new(
                "invalid_event",
                format!("the upstream sent arguments for call `{item_id}` after they were done"),
            )),
            _ => Err(UpstreamFailure::new(
                "invalid_event",
                format!("the upstream sent arguments for item `{item_id}`, which is not a function call"),
            )),
        }
    }

    fn arguments_delta(
        &mut self,
        mut e: FunctionCallArgumentsDelta,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let index = self.call_for(&e.item_id)?;
        let output_index = self.items[index].output_index;
        self.spend(e.delta.len())?;
        if let Kind::Call {
            arguments, deltas, ..
        } = &mut self.items[index].kind
        {
            arguments.push_str(&e.delta);
            *deltas = true;
        }
        e.output_index = Some(output_index);
        self.emit(out, Event::FunctionCallArgumentsDelta(e));
        Ok(())
    }

    fn arguments_done(
        &mut self,
        e: FunctionCallArgumentsDone,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let index = self.call_for(&e.item_id)?;
        self.close_arguments(index, Some(e), out)
    }

    /// Emits `function_call_arguments.done` (from the upstream's event, or made up with the
    /// given final arguments), after a delta carrying the arguments when no delta came.
    fn close_arguments(
        &mut self,
        index: usize,
        upstream: Option<FunctionCallArgumentsDone>,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let id = self.items[index].id.clone();
        let output_index = self.items[index].output_index;
        let Kind::Call {
            arguments, deltas, ..
        } = &self.items[index].kind
        else {
            unreachable!("close_arguments is called for function calls")
        };
        let mut done = upstream
            .unwrap_or_else(|| FunctionCallArgumentsDone::new(id.clone(), arguments.clone()));
        if !*deltas && !done.arguments.is_empty() {
            let delta = FunctionCallArgumentsDelta::new(id.clone(), done.arguments.clone());
            self.arguments_delta(delta, out)?;
        } else if done.arguments.is_empty() {
            done.arguments.clone_from(arguments);
        } else if done.arguments != *arguments {
            return Err(UpstreamFailure::new(
                "arguments_mismatch",
                format!(
                    "the upstream's final arguments of call `{id}` differ from its concatenated deltas"
                ),
            ));
        }
        if let Kind::Call { arguments_done, .. } = &mut self.items[index].kind {
            *arguments_done = true;
        }
        done.item_id = id;
        done.output_index = Some(output_index);
        self.emit(out, Event::FunctionCallArgumentsDone(done));
        Ok(())
    }

    fn item_done(
        &mut self,
        mut e: OutputItemEvent,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        // Find the item: by id, else a call by call_id, else the open message.
        let found = match &e.item {
            OutputItem::FunctionCall(call) => match &call.id {
                Some(id) => self.lookup(id),
                None => self.items.iter().position(|item| {
                    matches!(&item.kind, Kind::Call { template, .. } if template.call_id == call.call_id)
                }),
            },
            OutputItem::Message(message) => match &message.id {
                Some(id) => self.lookup(id),
                None => self
                    .current_message
                    .filter(|&i| self.items[i].done.is_none()),
            },
            OutputItem::Other(_) => e.item.id().and_then(|id| self.lookup(id)),
        };
        let index = match found {
            Some(index) => index,
            None => {
                // Announce the item first, empty.
                let announced = match &e.item {
                    OutputItem::FunctionCall(call) => {
                        let mut call = call.clone();
                        call.arguments = None;
                        call.status = None;
                        OutputItem::FunctionCall(call)
                    }
                    OutputItem::Message(message) => {
                        let mut message = message.clone();
                        message.content = None;
                        message.status = None;
                        OutputItem::Message(message)
                    }
                    OutputItem::Other(map) => {
                        let mut map = map.clone();
                        crate::wire::remove(&mut map, "status");
                        OutputItem::Other(map)
                    }
                };
                let mut added = OutputItemEvent::new(announced);
                added.output_index = e.output_index;
                self.item_added(added, out)?;
                self.items.len() - 1
            }
        };
        if self.items[index].done.is_some() {
            return Err(UpstreamFailure::new(
                "invalid_event",
                format!(
                    "the upstream sent output_item.done twice for item `{}`",
                    self.items[index].id
                ),
            ));
        }
        let id = self.items[index].id.clone();
        e.output_index = Some(self.items[index].output_index);
        match &mut e.item {
            OutputItem::FunctionCall(call) => {
                if !matches!(self.items[index].kind, Kind::Call { .. }) {
                    return Err(UpstreamFailure::new(
                        "invalid_event",
                        format!("item `{id}` changed its type"),
                    ));
                }
                let final_arguments = call.arguments.clone().filter(|a| !a.is_empty());
                let arguments_done = matches!(
                    self.items[index].kind,
                    Kind::Call {
                        arguments_done: true,
                        ..
                    }
                );
                if !arguments_done {
                    let done = final_arguments
                        .clone()
                        .map(|a| FunctionCallArgumentsDone::new(id.clone(), a));
                    self.close_arguments(index, done, out)?;
                }
                let Kind::Call { arguments, .. } = &self.items[index].kind else {
                    unreachable!("checked above")
                };
                if let Some(final_arguments) = final_arguments {
                    if final_arguments != *arguments {
                        return Err(UpstreamFailure::new(
                            "arguments_mismatch",
                            format!(
                                "the upstream's final arguments of call `{id}` differ from its concatenated deltas"
                            ),
                        ));
                    }
                }
                call.arguments = Some(arguments.clone());
                call.id = Some(id.clone());
                call.status.get_or_insert_with(|| "completed".to_owned());
            }
            OutputItem::Message(message) => {
                if !matches!(self.items[index].kind, Kind::Message { .. }) {
                    return Err(UpstreamFailure::new(
                        "invalid_event",
                        format!("item `{id}` changed its type"),
                    ));
                }
                // Reconcile the final content with the parts seen: close open parts with the
                // final text, and play out parts that only the final item shows.
                let final_parts = message.content.take();
                let count = match &self.items[index].kind {
                    Kind::Message { parts, .. } => parts.len(),
                    _ => 0,
                };
                if let Some(final_parts) = &final_parts {
                    for (i, final_part) in final_parts.iter().enumerate() {
                        if i >= count {
                            let mut added = ContentPartEvent::new(empty_part(final_part));
                            added.item_id = Some(id.clone());
                            self.add_part(index, added, out)?;
                        }
                        if !self.part_mut(index, i).done {
                            self.close_part(
                                index,
                                i,
                                Some(ContentPartEvent::new(final_part.clone())),
                                out,
                            )?;
                        } else if let ContentPart::OutputText(p) = final_part {
                            if !p.text.is_empty() && p.text != self.part_mut(index, i).text {
                                return Err(UpstreamFailure::new(
                                    "text_mismatch",
                                    format!(
                                        "the upstream's final text of item `{id}` differs from its concatenated deltas"
                                    ),
                                ));
                            }
                        }
                    }
                }
                let total = match &self.items[index].kind {
                    Kind::Message { parts, .. } => parts.len(),
                    _ => 0,
                };
                for i in 0..total {
                    if !self.part_mut(index, i).done {
                        self.close_part(index, i, None, out)?;
                    }
                }
                let Kind::Message { parts, template } = &self.items[index].kind else {
                    unreachable!("checked above")
                };
                let mut content: Vec<ContentPart> = parts.iter().map(Part::snapshot).collect();
                // Keep the upstream's own part objects (annotations, logprobs) where it sent them.
                if let Some(final_parts) = final_parts {
                    for (slot, part) in content.iter_mut().zip(final_parts) {
                        if let (
                            ContentPart::OutputText(mine),
                            ContentPart::OutputText(mut theirs),
                        ) = (&*slot, part)
                        {
                            theirs.text.clone_from(&mine.text);
                            theirs.annotations.get_or_insert_with(Vec::new);
                            *slot = ContentPart::OutputText(theirs);
                        }
                    }
                }
                message.content = Some(content);
                message.id = Some(id.clone());
                if message.role.is_none() {
                    message.role.clone_from(&template.role);
                }
                message.status.get_or_insert_with(|| "completed".to_owned());
                if self.current_message == Some(index) {
                    self.current_message = None;
                }
            }
            OutputItem::Other(map) => {
                if !map.contains_key("id") {
                    map.insert("id".to_owned(), Value::from(id.clone()));
                }
            }
        }
        self.items[index].done = Some(e.item.clone());
        self.emit(out, Event::OutputItemDone(e));
        Ok(())
    }

    /// Emits the done events of every item still open.
    fn close_open_items(&mut self, out: &mut Vec<Event>) -> Result<(), UpstreamFailure> {
        for index in 0..self.items.len() {
            if self.items[index].done.is_some() {
                continue;
            }
            let item = match &self.items[index].kind {
                Kind::Message { template, .. } => {
                    let mut message = template.clone();
                    message.status = None;
                    OutputItem::Message(message)
                }
                Kind::Call { template, .. } => {
                    let mut call = template.clone();
                    call.arguments = None;
                    call.status = None;
                    OutputItem::FunctionCall(call)
                }
                Kind::Other(item) => item.clone(),
            };
            let mut done = OutputItemEvent::new(item);
            done.output_index = Some(self.items[index].output_index);
            self.item_done(done, out)?;
        }
        Ok(())
    }

    fn terminal(
        &mut self,
        mut e: ResponseEvent,
        outcome: Outcome,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        self.absorb(&e.response);
        if outcome == Outcome::Failed || self.error.is_some() {
            if self.error.is_none() {
                let (code, message) = match &e.response.error {
                    Some(error) => (error.code.clone(), error.message.clone()),
                    None => (None, "the response failed".to_owned()),
                };
                let error = ErrorEvent::new(code.clone(), message.clone());
                self.error = Some(ResponseError::new(code, message));
                self.emit(out, Event::Error(error));
            }
            self.finish_failed(e.response, out);
            return Ok(());
        }
        if outcome == Outcome::Completed {
            self.close_open_items(out)?;
            e.response.status = Some("completed".to_owned());
            let usage = e.response.usage.get_or_insert_with(|| Usage::new(0, 0, 0));
            usage.fill();
        } else {
            e.response.status = Some(outcome.status().to_owned());
        }
        self.fill_response(&mut e.response, outcome.status());
        self.outcome = Some(outcome);
        let event = match outcome {
            Outcome::Completed => Event::ResponseCompleted(e),
            _ => Event::ResponseIncomplete(e),
        };
        self.emit(out, event);
        Ok(())
    }

    /// Emits `response.failed` with the first error seen.
    fn finish_failed(&mut self, mut response: Response, out: &mut Vec<Event>) {
        response.status = Some("failed".to_owned());
        if response.error.is_none() {
            let mut error = self
                .error
                .clone()
                .unwrap_or_else(|| ResponseError::new(None, "the response failed"));
            // The response object's code is one of the API's; the `error` event before it
            // carries the precise one.
            error.code = Some(api_error_code(error.code.as_deref()).to_owned());
            response.error = Some(error);
        }
        crate::wire::remove(&mut response.extra, "error");
        self.fill_response(&mut response, "failed");
        self.outcome = Some(Outcome::Failed);
        self.emit(out, Event::ResponseFailed(ResponseEvent::new(response)));
    }

    fn error_event(&mut self, mut e: ErrorEvent, out: &mut Vec<Event>) {
        if e.message.is_none() {
            e.message = Some(e.text().unwrap_or("upstream error").to_owned());
        }
        if e.code.is_none() {
            e.code = e.code_text().map(str::to_owned);
        }
        if e.param.is_none() {
            e.param = e.nested("param").map(str::to_owned);
        }
        self.error.get_or_insert_with(|| {
            ResponseError::new(e.code.clone(), e.message.clone().unwrap_or_default())
        });
        self.emit(out, Event::Error(e));
    }
}

/// The codes a response object's `error.code` may take (openai-python 3.54's
/// `ResponseError.code`).
const API_ERROR_CODES: &[&str] = &[
    "server_error",
    "rate_limit_exceeded",
    "invalid_prompt",
    "data_residency_mismatch",
    "bio_policy",
    "misalignment_policy_violation",
    "vector_store_timeout",
    "invalid_image",
    "invalid_image_format",
    "invalid_base64_image",
    "invalid_image_url",
    "image_too_large",
    "image_too_small",
    "image_parse_error",
    "image_content_policy_violation",
    "invalid_image_mode",
    "image_file_too_large",
    "unsupported_image_media_type",
    "empty_image_file",
    "failed_to_download_image",
    "image_file_not_found",
];

/// `code` if the API knows it, else `server_error`.
fn api_error_code(code: Option<&str>) -> &str {
    match code {
        Some(code) if API_ERROR_CODES.contains(&code) => code,
        _ => "server_error",
    }
}

/// A part as announced before its content: an `output_text` part with empty text and no
/// annotations yet (they come with the final part), any other part as it is.
fn empty_part(part: &ContentPart) -> ContentPart {
    match part {
        ContentPart::OutputText(p) => {
            let mut p = p.clone();
            p.text.clear();
            p.annotations = Some(Vec::new());
            ContentPart::OutputText(p)
        }
        other => other.clone(),
    }
}

impl Part {
    fn new(template: ContentPart, done: bool) -> Self {
        let text = match &template {
            ContentPart::OutputText(part) if done => part.text.clone(),
            _ => String::new(),
        };
        Part {
            template,
            text,
            deltas: done,
            text_done: done,
            done,
        }
    }

    fn snapshot(&self) -> ContentPart {
        match &self.template {
            ContentPart::OutputText(part) => {
                let mut part = part.clone();
                part.text.clone_from(&self.text);
                part.annotations.get_or_insert_with(Vec::new);
                ContentPart::OutputText(part)
            }
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestOptions;

    fn run(lines: &[&str]) -> (Vec<Event>, Option<Outcome>) {
        let mut options = RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        let mut normalizer = Normalizer::new(&options.build().unwrap()).created_at(7);
        let mut out = Vec::new();
        for line in lines {
            out.extend(normalizer.push_json(line));
        }
        out.extend(normalizer.finish());
        (out, normalizer.outcome())
    }

    fn error_code(events: &[Event]) -> Option<String> {
        events.iter().find_map(|e| match e {
            Event::Error(e) => e.code.clone(),
            _ => None,
        })
    }

    #[test]
    fn protocol_violations_fail_the_response() {
        let added = r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f"}}"#;
        let message = r#"{"type":"response.output_item.added","item":{"type":"message","id":"m"}}"#;
        for (lines, code) in [
            (vec![added, added], "duplicate_item"),
            (
                vec![
                    added,
                    r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"}}"#,
                    r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"}}"#,
                ],
                "invalid_event",
            ),
            (
                vec![
                    added,
                    r#"{"type":"response.output_text.delta","item_id":"fc_1","delta":"x"}"#,
                ],
                "invalid_event",
            ),
            (
                vec![
                    message,
                    r#"{"type":"response.function_call_arguments.delta","item_id":"m","delta":"x"}"#,
                ],
                "invalid_event",
            ),
            (
                vec![
                    message,
                    r#"{"type":"response.output_text.delta","item_id":"m","delta":"a"}"#,
                    r#"{"type":"response.output_text.done","item_id":"m","text":"b"}"#,
                ],
                "text_mismatch",
            ),
            (vec![r#"{"no":"type"}"#], "invalid_event"),
            (vec!["[1,2]"], "invalid_event"),
            (
                vec![r#"{"type":"response.output_text.delta"}"#],
                "invalid_event",
            ),
        ] {
            let (events, outcome) = run(&lines);
            assert_eq!(outcome, Some(Outcome::Failed), "{lines:?}");
            assert_eq!(error_code(&events).as_deref(), Some(code), "{lines:?}");
            assert!(events.last().unwrap().is_terminal());
        }
    }

    #[test]
    fn output_is_bounded() {
        let mut options = RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        let mut normalizer = Normalizer::new(&options.build().unwrap()).max_output_bytes(1000);
        let delta = format!(
            r#"{{"type":"response.output_text.delta","delta":"{}"}}"#,
            "x".repeat(300)
        );
        let mut out = Vec::new();
        for _ in 0..3 {
            out.extend(normalizer.push_json(&delta));
        }
        assert_eq!(error_code(&out), Some("output_too_large".to_owned()));
        assert_eq!(normalizer.outcome(), Some(Outcome::Failed));
        // Parts cost too: a flood of empty parts ends the same way.
        let mut normalizer = Normalizer::new(&options.build().unwrap()).max_output_bytes(1000);
        let part =
            r#"{"type":"response.content_part.added","part":{"type":"output_text","text":""}}"#;
        let out: Vec<Event> = (0..20).flat_map(|_| normalizer.push_json(part)).collect();
        assert_eq!(error_code(&out), Some("output_too_large".to_owned()));
    }

    #[test]
    fn failures_fill_the_response_object() {
        let (events, outcome) = run(&[]);
        assert_eq!(outcome, Some(Outcome::Failed));
        let Event::ResponseFailed(failed) = events.last().unwrap() else {
            panic!("{events:?}")
        };
        let response = &failed.response;
        assert_eq!(response.id.as_deref(), Some(""));
        assert_eq!(response.created_at, Some(Number::from(7)));
        assert_eq!(response.model.as_deref(), Some(crate::DEFAULT_MODEL));
        assert_eq!(response.status.as_deref(), Some("failed"));
        let error = response.error.as_ref().unwrap();
        assert_eq!(error.code.as_deref(), Some("server_error"));
        assert_eq!(
            error.message,
            "the upstream stream ended before a terminal event"
        );
        assert_eq!(error_code(&events).as_deref(), Some("stream_truncated"));
    }

    #[test]
    fn nothing_follows_the_terminal_event() {
        let mut options = RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        let mut normalizer = Normalizer::new(&options.build().unwrap());
        let done = normalizer.push_json(r#"{"type":"response.completed","response":{}}"#);
        assert_eq!(done.len(), 1);
        assert!(normalizer
            .push_json(r#"{"type":"response.output_text.delta","delta":"late"}"#)
            .is_empty());
        assert!(normalizer
            .fail(UpstreamFailure::new("transport_error", "late"))
            .is_empty());
        assert!(normalizer.finish().is_empty());
        assert_eq!(normalizer.ignored_after_terminal(), 1);
        assert_eq!(normalizer.emitted(), 1);
        // [DONE] and empty data are not events.
        assert!(normalizer.push_json(" [DONE] ").is_empty());
        assert_eq!(normalizer.ignored_after_terminal(), 1);
    }
}
