//! Turning an upstream event stream, whatever its dialect, into the stream this protocol
//! promises.

use std::collections::HashMap;

use serde_json::{Number, Value};

use crate::event::{
    ContentPart, ContentPartEvent, ErrorEvent, Event, FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone, FunctionCallItem, MessageItem, OtherEvent, OutputItem,
    OutputItemEvent, OutputTextDelta, OutputTextDone, OutputTextPart, Response, ResponseError,
    ResponseEvent, Usage,
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
    /// The provider's own error object, as sent (`{"message", "type", "code", "param"}` for
    /// OpenAI-style bodies); written as the `error` member of the `error` event, so that
    /// nothing the provider said is lost. Its `param` and `type` also go to the failed
    /// response's `error`.
    pub details: Option<Box<Value>>,
}

impl UpstreamFailure {
    /// A failure with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        UpstreamFailure {
            code: code.into(),
            message: message.into(),
            http_status: None,
            details: None,
        }
    }

    /// Sets the provider's error object.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// The `param` of the provider's error object, when it names one.
    pub fn param(&self) -> Option<&str> {
        self.details.as_ref()?.get("param")?.as_str()
    }

    /// The `type` of the provider's error object, when it names one.
    pub fn error_type(&self) -> Option<&str> {
        self.details.as_ref()?.get("type")?.as_str()
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
                format!("the upstream sent a comment line longer than the limit of {limit} bytes"),
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

impl Kind {
    /// Whether `item` is an item of this kind: the same variant, and for other items the same
    /// `type`.
    fn admits(&self, item: &OutputItem) -> bool {
        match (self, item) {
            (Kind::Message { .. }, OutputItem::Message(_))
            | (Kind::Call { .. }, OutputItem::FunctionCall(_)) => true,
            (Kind::Other(known), OutputItem::Other(_)) => known.item_type() == item.item_type(),
            _ => false,
        }
    }

    fn name(&self) -> String {
        match self {
            Kind::Message { .. } => "message".to_owned(),
            Kind::Call { .. } => "function_call".to_owned(),
            Kind::Other(item) => item.item_type().to_owned(),
        }
    }
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
/// - starts with `response.created` (made up when the provider sends none, as v0-style and
///   compatible servers do), and every response object in it has the same `id`;
/// - every event has `sequence_number`, counting from 0 in output order (upstream numbers are
///   replaced), and the members the Responses API requires (`output_index`, `item_id`,
///   `content_index`, `logprobs`, `annotations`, full `response` objects, usage with cached
///   tokens in both places) while keeping the v0 shapes;
/// - every item has its whole lifecycle in order: `output_item.added`; for messages
///   `content_part.added`, text deltas, `output_text.done`, `content_part.done`; for function
///   calls argument deltas and `function_call_arguments.done`; then `output_item.done`. Missing
///   steps are filled in (an upstream that sends only `output_item.done` still gives a delta);
/// - **nothing is lost**: a final value (`output_text.done`, `function_call_arguments.done`,
///   `output_item.done`, and last the completed response's `output`) wins over what came
///   before it. When it extends the deltas, the rest is sent as one more delta; when it
///   contradicts them, the done events carry the final value and a [note](Normalizer::take_notes)
///   says so. Items still open at `response.completed` are closed from the completed response's
///   own copy of them, and items only that copy shows are played out before it;
/// - an item whose kind changes (an id reused for another kind of item, a call whose `call_id`
///   changes) fails the response (`item_kind_mismatch`): it is never passed through;
/// - the stream ends with exactly one terminal event. An upstream `error`, a `response.failed`,
///   an HTTP or transport failure and a stream that stops before its terminal event each give
///   an `error` event followed by `response.failed`, whose `error.code` is the failure's own
///   code (`invalid_api_key`, `stream_truncated`, `cancelled`, ...);
/// - events of other types pass through unchanged apart from `sequence_number` (and an
///   `output_index` filled in for the item their `item_id` names); events after the terminal one
///   are dropped (and counted).
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
///     "response.created",
///     "response.output_item.added",
///     "response.content_part.added",
///     "response.output_text.delta",
///     "response.output_text.delta",
///     "error",
///     "response.failed",
/// ]);
/// assert_eq!(normalizer.outcome(), Some(Outcome::Failed));
/// assert_eq!(out[6].sequence_number(), Some(6));
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug)]
pub struct Normalizer {
    defaults: Defaults,
    /// `response.created` has been emitted.
    started: bool,
    response_id: Option<String>,
    /// The first response object has been emitted: its id is the stream's.
    id_fixed: bool,
    created_at: Option<Number>,
    model: Option<String>,
    seq: u64,
    items: Vec<Item>,
    by_id: HashMap<String, usize>,
    current_message: Option<usize>,
    error: Option<ResponseError>,
    outcome: Option<Outcome>,
    ignored: u64,
    notes: Vec<String>,
    max_output_bytes: usize,
    /// What is left of `max_output_bytes`.
    budget: usize,
}

/// The default [`Normalizer::max_output_bytes`]: 64 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 << 20;

/// What an item and a content part count against the output limit, for their bookkeeping.
const ITEM_COST: usize = 256;
const PART_COST: usize = 128;

/// The most notes a normalizer keeps; later ones are counted in the last.
const MAX_NOTES: usize = 64;

fn kind_mismatch(message: String) -> UpstreamFailure {
    UpstreamFailure::new("item_kind_mismatch", message)
}

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
            started: false,
            response_id: None,
            id_fixed: false,
            created_at: None,
            model: None,
            seq: 0,
            items: Vec::new(),
            by_id: HashMap::new(),
            current_message: None,
            error: None,
            outcome: None,
            ignored: 0,
            notes: Vec::new(),
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

    /// Takes the notes gathered since the last call: one sentence each about something the
    /// upstream did that the normalizer repaired without failing the response (a final value
    /// that contradicts its deltas and wins, a response id that changed, ...). A program shows
    /// them as warnings; `agentwire exec` prints them on standard error.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        }
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
        if !matches!(event, Event::ResponseCreated(_)) {
            // A stream that begins with another response event (`response.in_progress`,
            // `response.queued`, ...) names the response the made-up `response.created` is about.
            if !self.started {
                match &event {
                    Event::ResponseInProgress(e)
                    | Event::ResponseCompleted(e)
                    | Event::ResponseFailed(e)
                    | Event::ResponseIncomplete(e) => self.absorb(&e.response),
                    Event::Other(other) => {
                        if let Some(id) = other_response_id(other) {
                            self.response_id = Some(id.to_owned());
                        }
                    }
                    _ => {}
                }
            }
            self.start(&mut out);
        }
        let result = match event {
            Event::ResponseCreated(mut e) => {
                self.absorb(&e.response);
                self.fill_response(&mut e.response, "in_progress");
                self.started = true;
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
            Event::OutputItemDone(e) => self.item_done(e, None, &mut out),
            Event::ResponseCompleted(e) => self.terminal(e, Outcome::Completed, &mut out),
            Event::ResponseIncomplete(e) => self.terminal(e, Outcome::Incomplete, &mut out),
            Event::ResponseFailed(e) => self.terminal(e, Outcome::Failed, &mut out),
            Event::Error(e) => {
                self.error_event(e, &mut out);
                Ok(())
            }
            Event::Other(mut other) => {
                // An event about an item (reasoning summaries, web searches, ...) gets the
                // item's position.
                let index = other
                    .fields
                    .get("item_id")
                    .and_then(Value::as_str)
                    .and_then(|id| self.lookup(id));
                if let Some(index) = index {
                    other.fields.insert(
                        "output_index".to_owned(),
                        Value::from(self.items[index].output_index),
                    );
                }
                // Other response events (`response.queued`, ...) keep the stream's id too.
                if let Some(id) = other_response_id(&other).map(str::to_owned) {
                    let kept = self.response_id.clone().unwrap_or_default();
                    if id != kept {
                        self.note(format!(
                            "the upstream's {} names response `{id}`; the stream keeps `{kept}`",
                            other.event_type
                        ));
                    }
                    if let Some(Value::Object(response)) = other.fields.get_mut("response") {
                        response.insert("id".to_owned(), Value::from(kept));
                    }
                }
                self.emit(&mut out, Event::Other(other));
                Ok(())
            }
        };
        if let Err(failure) = result {
            out.extend(self.fail(failure));
        }
        out
    }

    /// Reports a failure outside the stream: emits an `error` event with the failure's code,
    /// message, `param`, `http_status` and the provider's error object (`error`), then
    /// `response.failed`. Nothing happens once the stream has ended.
    ///
    /// ```
    /// use agentwire_exec::{http_failure, Event, Normalizer, RequestOptions};
    ///
    /// let mut options = RequestOptions::new();
    /// options.prompt = Some("hi".to_owned());
    /// let mut normalizer = Normalizer::new(&options.build()?);
    /// let failure = http_failure(404, r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}"#);
    /// let out = normalizer.fail(failure);
    /// let Event::Error(error) = &out[1] else { unreachable!() };
    /// assert_eq!((error.code.as_deref(), error.param.as_deref()), (Some("model_not_found"), Some("model")));
    /// assert_eq!(error.extra["error"]["type"], "invalid_request_error");
    /// let Event::ResponseFailed(failed) = &out[2] else { unreachable!() };
    /// let response_error = failed.response.error.as_ref().unwrap();
    /// assert_eq!(response_error.code.as_deref(), Some("model_not_found"));
    /// assert_eq!(response_error.error_type(), Some("invalid_request_error"));
    /// # Ok::<(), agentwire_exec::Error>(())
    /// ```
    pub fn fail(&mut self, failure: UpstreamFailure) -> Vec<Event> {
        let mut out = Vec::new();
        if self.outcome.is_some() {
            return out;
        }
        self.start(&mut out);
        let param = failure.param().map(str::to_owned);
        let error_type = failure.error_type().map(str::to_owned);
        if self.error.is_none() {
            let mut response_error =
                ResponseError::new(Some(failure.code.clone()), failure.message.clone());
            response_error.param.clone_from(&param);
            if let Some(error_type) = error_type {
                response_error
                    .extra
                    .insert("type".to_owned(), Value::from(error_type));
            }
            self.error = Some(response_error);
        }
        let mut error = ErrorEvent::new(Some(failure.code), failure.message);
        error.param = param;
        if let Some(status) = failure.http_status {
            error
                .extra
                .insert("http_status".to_owned(), Value::from(status));
        }
        if let Some(details) = failure.details {
            error.extra.insert("error".to_owned(), *details);
        }
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
            self.start(&mut out);
            self.finish_failed(Response::default(), &mut out);
            return out;
        }
        self.fail(UpstreamFailure::new(
            "stream_truncated",
            "the upstream stream ended before a terminal event",
        ))
    }

    /// Emits a made-up `response.created` when the stream has not begun with one.
    fn start(&mut self, out: &mut Vec<Event>) {
        if self.started {
            return;
        }
        self.started = true;
        let mut response = Response::default();
        self.fill_response(&mut response, "in_progress");
        self.emit(out, Event::ResponseCreated(ResponseEvent::new(response)));
    }

    fn emit(&mut self, out: &mut Vec<Event>, mut event: Event) {
        event.set_sequence_number(self.seq);
        self.seq += 1;
        out.push(event);
    }

    /// Remembers the identity of the response from an upstream response object.
    fn absorb(&mut self, response: &Response) {
        if let Some(id) = &response.id {
            if !self.id_fixed {
                self.response_id = Some(id.clone());
            } else if self.response_id.as_deref().unwrap_or("") != id {
                let kept = self.response_id.clone().unwrap_or_default();
                self.note(format!(
                    "the upstream changed the response id to `{id}` after the stream began; \
                     the stream keeps `{kept}`"
                ));
            }
        }
        if self.created_at.is_none() {
            self.created_at.clone_from(&response.created_at);
        }
        if self.model.is_none() {
            self.model.clone_from(&response.model);
        }
    }

    fn fill_response(&mut self, response: &mut Response, status: &str) {
        // Every response object of a stream has the same id (consumers such as the OpenAI
        // SDK's stream helper reject a change).
        self.id_fixed = true;
        response.id = Some(self.response_id.clone().unwrap_or_default());
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
        let next = self.next_output_index();
        let output_index = match e.output_index {
            Some(index) if self.items.iter().any(|item| item.output_index == index) => {
                self.note(format!(
                    "the upstream gave two items output_index {index}; the second one gets {next}"
                ));
                next
            }
            Some(index) => index,
            None => next,
        };
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
        if let Some(index) = self.lookup(&id) {
            let code = if self.items[index].kind.admits(&e.item) {
                "duplicate_item"
            } else {
                "item_kind_mismatch"
            };
            return Err(UpstreamFailure::new(
                code,
                format!(
                    "the upstream announced item `{id}` twice (a {} and then a {})",
                    self.items[index].kind.name(),
                    e.item.item_type()
                ),
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
            _ => Err(kind_mismatch(format!(
                "the upstream sent text for item `{}`, which is a {}, not a message",
                item.id,
                item.kind.name()
            ))),
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

    /// Makes `final_text` the text of a part whose deltas gave something else: when it extends
    /// them, the rest goes out as one more delta; otherwise the part takes the final text and a
    /// note says so (the done events carry it).
    fn settle_text(
        &mut self,
        item: usize,
        part: usize,
        final_text: &str,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let item_id = self.items[item].id.clone();
        let p = self.part_mut(item, part);
        let had_deltas = p.deltas;
        if let Some(rest) = final_text.strip_prefix(p.text.as_str()) {
            if had_deltas {
                self.note(format!(
                    "the final text of item `{item_id}` goes on past its deltas; the rest is \
                     sent as one more delta"
                ));
            }
            let mut delta = OutputTextDelta::new(rest);
            delta.item_id = Some(item_id);
            delta.content_index = Some(part as u64);
            return self.text_delta(delta, out);
        }
        self.spend(final_text.len())?;
        final_text.clone_into(&mut self.part_mut(item, part).text);
        self.note(format!(
            "the final text of item `{item_id}` differs from its deltas; the final text wins"
        ));
        Ok(())
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
        if !done.text.is_empty() && done.text != p.text {
            self.settle_text(item, part, &done.text, out)?;
        }
        let p = self.part_mut(item, part);
        done.text.clone_from(&p.text);
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
            let done = final_text.map(OutputTextDone::new);
            self.close_text(item, part, done, out)?;
        } else if let Some(text) = final_text {
            if text != self.part_mut(item, part).text {
                // After output_text.done: the text is final, and the part's copy contradicts it.
                self.spend(text.len())?;
                let item_id = self.items[item].id.clone();
                self.note(format!(
                    "content_part.done of item `{item_id}` differs from its output_text.done; \
                     the later one wins"
                ));
                self.part_mut(item, part).text = text;
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
            kind => Err(kind_mismatch(format!(
                "the upstream sent arguments for item `{item_id}`, which is a {}, not a function call",
                kind.name()
            ))),
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

    fn call_arguments(&self, index: usize) -> (&str, bool) {
        match &self.items[index].kind {
            Kind::Call {
                arguments, deltas, ..
            } => (arguments, *deltas),
            _ => unreachable!("called for function calls"),
        }
    }

    /// Makes `final_arguments` the arguments of a call whose deltas gave something else (see
    /// [`settle_text`](Normalizer::settle_text)).
    fn settle_arguments(
        &mut self,
        index: usize,
        final_arguments: &str,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let id = self.items[index].id.clone();
        let (so_far, had_deltas) = self.call_arguments(index);
        if let Some(rest) = final_arguments.strip_prefix(so_far) {
            if had_deltas {
                self.note(format!(
                    "the final arguments of call `{id}` go on past its deltas; the rest is sent \
                     as one more delta"
                ));
            }
            let delta = FunctionCallArgumentsDelta::new(id, rest);
            return self.arguments_delta(delta, out);
        }
        self.spend(final_arguments.len())?;
        if let Kind::Call { arguments, .. } = &mut self.items[index].kind {
            final_arguments.clone_into(arguments);
        }
        self.note(format!(
            "the final arguments of call `{id}` differ from its deltas; the final arguments win"
        ));
        Ok(())
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
        let mut done = upstream.unwrap_or_else(|| {
            FunctionCallArgumentsDone::new(id.clone(), self.call_arguments(index).0)
        });
        if !done.arguments.is_empty() && done.arguments != self.call_arguments(index).0 {
            self.settle_arguments(index, &done.arguments, out)?;
        }
        done.arguments = self.call_arguments(index).0.to_owned();
        if let Kind::Call { arguments_done, .. } = &mut self.items[index].kind {
            *arguments_done = true;
        }
        done.item_id = id;
        done.output_index = Some(output_index);
        self.emit(out, Event::FunctionCallArgumentsDone(done));
        Ok(())
    }

    /// Finds the item an `output_item.done` (or a completed response's item at `position`)
    /// is about: by id, else a call by `call_id`, else the open message, else (for a completed
    /// response's item without id) the item of the same kind at that position.
    fn find_item(&self, item: &OutputItem, position: Option<u64>) -> Option<usize> {
        if let Some(id) = item.id() {
            if let Some(index) = self.lookup(id) {
                return Some(index);
            }
        }
        match item {
            OutputItem::FunctionCall(call) => self.items.iter().position(|known| {
                matches!(&known.kind, Kind::Call { template, .. } if template.call_id == call.call_id)
            }),
            _ if item.id().is_some() => None,
            OutputItem::Message(_) if position.is_none() => self
                .current_message
                .filter(|&i| self.items[i].done.is_none()),
            _ => position.and_then(|position| {
                self.items.iter().position(|known| {
                    known.output_index == position && known.kind.admits(item)
                })
            }),
        }
    }

    /// Closes an item with its final form: an upstream `output_item.done`, or a completed
    /// response's copy of an item still open (`found` given then).
    fn item_done(
        &mut self,
        mut e: OutputItemEvent,
        found: Option<usize>,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let index = match found.or_else(|| self.find_item(&e.item, None)) {
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
        let id = self.items[index].id.clone();
        if !self.items[index].kind.admits(&e.item) {
            return Err(kind_mismatch(format!(
                "item `{id}` changed its kind from {} to {}",
                self.items[index].kind.name(),
                e.item.item_type()
            )));
        }
        if self.items[index].done.is_some() {
            return Err(UpstreamFailure::new(
                "invalid_event",
                format!("the upstream sent output_item.done twice for item `{id}`"),
            ));
        }
        e.output_index = Some(self.items[index].output_index);
        match &mut e.item {
            OutputItem::FunctionCall(call) => {
                self.check_call_id(index, call)?;
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
                } else if let Some(final_arguments) = &final_arguments {
                    if final_arguments != self.call_arguments(index).0 {
                        self.revise_arguments(index, final_arguments)?;
                    }
                }
                call.arguments = Some(self.call_arguments(index).0.to_owned());
                call.id = Some(id.clone());
                call.status.get_or_insert_with(|| "completed".to_owned());
            }
            OutputItem::Message(message) => {
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
                                self.revise_text(index, i, &p.text)?;
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
                // The item's final form is kept for the response objects: pay for it.
                self.spend(Value::Object(map.clone()).to_string().len())?;
            }
        }
        self.items[index].done = Some(e.item.clone());
        self.emit(out, Event::OutputItemDone(e));
        Ok(())
    }

    /// A call's `call_id` is what the orchestrator answers with: it must not change.
    fn check_call_id(&self, index: usize, call: &FunctionCallItem) -> Result<(), UpstreamFailure> {
        match &self.items[index].kind {
            Kind::Call { template, .. } if template.call_id != call.call_id => {
                Err(kind_mismatch(format!(
                    "call `{}` changed its call_id from `{}` to `{}`",
                    self.items[index].id, template.call_id, call.call_id
                )))
            }
            _ => Ok(()),
        }
    }

    /// Arguments that arrive after `function_call_arguments.done` and contradict it: the later
    /// one wins.
    fn revise_arguments(&mut self, index: usize, value: &str) -> Result<(), UpstreamFailure> {
        self.spend(value.len())?;
        let id = self.items[index].id.clone();
        self.note(format!(
            "the upstream revised the arguments of call `{id}` after they were done; the later \
             arguments win"
        ));
        if let Kind::Call { arguments, .. } = &mut self.items[index].kind {
            value.clone_into(arguments);
        }
        Ok(())
    }

    /// Text that arrives after a part was done and contradicts it: the later one wins.
    fn revise_text(&mut self, item: usize, part: usize, text: &str) -> Result<(), UpstreamFailure> {
        self.spend(text.len())?;
        let id = self.items[item].id.clone();
        self.note(format!(
            "the upstream revised the text of item `{id}` after it was done; the later text wins"
        ));
        text.clone_into(&mut self.part_mut(item, part).text);
        Ok(())
    }

    /// Takes one item of the completed response's `output`: closes the stream's item from it
    /// when still open, revises it when done (the completed response is the last word), plays
    /// it out when the stream never showed it.
    fn adopt_final(
        &mut self,
        position: u64,
        item: OutputItem,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let Some(index) = self.find_item(&item, Some(position)) else {
            return self.item_done(OutputItemEvent::new(item), None, out);
        };
        if self.items[index].done.is_none() {
            let mut done = OutputItemEvent::new(item);
            done.output_index = Some(self.items[index].output_index);
            return self.item_done(done, Some(index), out);
        }
        let id = self.items[index].id.clone();
        if !self.items[index].kind.admits(&item) {
            return Err(kind_mismatch(format!(
                "the completed response gives item `{id}` as a {}, the stream as a {}",
                item.item_type(),
                self.items[index].kind.name()
            )));
        }
        let Some(known) = self.items[index].done.take() else {
            unreachable!("checked above")
        };
        let revised = match (known, item) {
            (OutputItem::FunctionCall(known), OutputItem::FunctionCall(mut call)) => {
                self.check_call_id(index, &call)?;
                match call.arguments.as_deref() {
                    Some(arguments)
                        if !arguments.is_empty()
                            && Some(arguments) != known.arguments.as_deref() =>
                    {
                        self.revise_arguments(index, arguments)?;
                    }
                    _ => call.arguments.clone_from(&known.arguments),
                }
                call.id = Some(id);
                call.status = call.status.or(known.status);
                OutputItem::FunctionCall(call)
            }
            (OutputItem::Message(known), OutputItem::Message(mut message)) => {
                let known_parts = known.content.unwrap_or_default();
                match message.content.as_mut() {
                    None => message.content = Some(known_parts),
                    Some(parts) => {
                        for (i, part) in parts.iter_mut().enumerate() {
                            let (
                                ContentPart::OutputText(theirs),
                                Some(ContentPart::OutputText(mine)),
                            ) = (part, known_parts.get(i))
                            else {
                                continue;
                            };
                            if theirs.text.is_empty() {
                                theirs.text.clone_from(&mine.text);
                            } else if theirs.text != mine.text {
                                let text = theirs.text.clone();
                                if i < self.part_count(index) {
                                    self.revise_text(index, i, &text)?;
                                }
                            }
                            theirs.annotations.get_or_insert_with(Vec::new);
                        }
                    }
                }
                message.id = Some(id);
                message.role = message.role.or(known.role);
                message.status = message.status.or(known.status);
                OutputItem::Message(message)
            }
            (_, OutputItem::Other(mut map)) => {
                map.entry("id").or_insert_with(|| Value::from(id));
                OutputItem::Other(map)
            }
            _ => unreachable!("admits() checked the kinds"),
        };
        self.items[index].done = Some(revised);
        Ok(())
    }

    fn part_count(&self, item: usize) -> usize {
        match &self.items[item].kind {
            Kind::Message { parts, .. } => parts.len(),
            _ => 0,
        }
    }

    /// Emits the done events of every item still open, from what the stream gave.
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
            self.item_done(done, Some(index), out)?;
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
                let error = match &e.response.error {
                    Some(error) => error.clone(),
                    None => ResponseError::new(None, "the response failed"),
                };
                let mut event = ErrorEvent::new(error.code.clone(), error.message.clone());
                event.param.clone_from(&error.param);
                self.error = Some(error);
                self.emit(out, Event::Error(event));
            }
            self.finish_failed(e.response, out);
            return Ok(());
        }
        if outcome == Outcome::Completed {
            // The completed response's output is the last word on every item.
            if let Some(final_items) = e.response.output.take() {
                for (position, item) in final_items.into_iter().enumerate() {
                    self.adopt_final(position as u64, item, out)?;
                }
            }
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

    /// Emits `response.failed` with the first error seen (its own code: the `error` event
    /// before it says the same).
    fn finish_failed(&mut self, mut response: Response, out: &mut Vec<Event>) {
        response.status = Some("failed".to_owned());
        if response.error.is_none() {
            let mut error = self
                .error
                .clone()
                .unwrap_or_else(|| ResponseError::new(None, "the response failed"));
            error.code.get_or_insert_with(|| "server_error".to_owned());
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
        if self.error.is_none() {
            let mut error =
                ResponseError::new(e.code.clone(), e.message.clone().unwrap_or_default());
            error.param.clone_from(&e.param);
            if let Some(error_type) = e.nested("type") {
                error
                    .extra
                    .insert("type".to_owned(), Value::from(error_type));
            }
            self.error = Some(error);
        }
        self.emit(out, Event::Error(e));
    }
}

/// The id of the response object an event of another type carries (`response.queued`).
fn other_response_id(event: &OtherEvent) -> Option<&str> {
    event.fields.get("response")?.get("id")?.as_str()
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
                "item_kind_mismatch",
            ),
            (
                vec![
                    message,
                    r#"{"type":"response.function_call_arguments.delta","item_id":"m","delta":"x"}"#,
                ],
                "item_kind_mismatch",
            ),
            // Issue 22: an id reused for an item of another kind.
            (
                vec![
                    added,
                    r#"{"type":"response.output_item.done","item":{"type":"reasoning","id":"fc_1","summary":[]}}"#,
                ],
                "item_kind_mismatch",
            ),
            (
                vec![
                    added,
                    r#"{"type":"response.output_item.added","item":{"type":"message","id":"fc_1"}}"#,
                ],
                "item_kind_mismatch",
            ),
            (
                vec![
                    message,
                    r#"{"type":"response.completed","response":{"output":[{"type":"function_call","id":"m","call_id":"c9","name":"f","arguments":"{}"}]}}"#,
                ],
                "item_kind_mismatch",
            ),
            (
                vec![
                    added,
                    r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"other","name":"f","arguments":"{}"}}"#,
                ],
                "item_kind_mismatch",
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

    fn notes_of(lines: &[&str]) -> (Vec<Event>, Option<Outcome>, Vec<String>) {
        let mut options = RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        let mut normalizer = Normalizer::new(&options.build().unwrap());
        let mut out = Vec::new();
        for line in lines {
            out.extend(normalizer.push_json(line));
        }
        out.extend(normalizer.finish());
        (out, normalizer.outcome(), normalizer.take_notes())
    }

    fn final_arguments(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::OutputItemDone(OutputItemEvent {
                    item: OutputItem::FunctionCall(call),
                    ..
                }) => call.arguments.clone(),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_open_call_is_closed_from_the_completed_response() {
        // Issue 23: the call is still open at response.completed; its arguments are in the
        // completed response's output only.
        let (events, outcome, notes) = notes_of(&[
            r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f"}}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"a\":"}"#,
            r#"{"type":"response.completed","response":{"output":[{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{\"a\":1}"}]}}"#,
        ]);
        assert_eq!(outcome, Some(Outcome::Completed));
        assert_eq!(final_arguments(&events), [r#"{"a":1}"#]);
        // The rest went out as a delta: the deltas add up.
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                Event::FunctionCallArgumentsDelta(d) => Some(d.delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, r#"{"a":1}"#);
        assert_eq!(notes.len(), 1, "{notes:?}");
        // A contradiction: the completed response wins, and a note says so.
        let (events, outcome, notes) = notes_of(&[
            r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f"}}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"a\":2}"}"#,
            r#"{"type":"response.completed","response":{"output":[{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{\"a\":1}"}]}}"#,
        ]);
        assert_eq!(outcome, Some(Outcome::Completed));
        assert_eq!(final_arguments(&events), [r#"{"a":1}"#]);
        assert!(notes[0].contains("the final arguments win"), "{notes:?}");
        let Some(Event::ResponseCompleted(completed)) = events.last() else {
            panic!()
        };
        let Some(OutputItem::FunctionCall(call)) =
            completed.response.output.as_ref().unwrap().first()
        else {
            panic!()
        };
        assert_eq!(call.arguments.as_deref(), Some(r#"{"a":1}"#));
    }

    #[test]
    fn final_text_wins_over_its_deltas() {
        let (events, outcome, notes) = notes_of(&[
            r#"{"type":"response.output_item.added","item":{"type":"message","id":"m"}}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","delta":"helo"}"#,
            r#"{"type":"response.output_text.done","item_id":"m","text":"hello"}"#,
            r#"{"type":"response.completed","response":{}}"#,
        ]);
        assert_eq!(outcome, Some(Outcome::Completed));
        assert!(notes[0].contains("the final text wins"), "{notes:?}");
        let done = events.iter().find_map(|e| match e {
            Event::OutputTextDone(d) => Some(d.text.clone()),
            _ => None,
        });
        assert_eq!(done.as_deref(), Some("hello"));
    }

    #[test]
    fn every_stream_starts_with_one_response_id() {
        let (events, _, notes) = notes_of(&[
            r#"{"type":"response.output_text.delta","delta":"x"}"#,
            r#"{"type":"response.completed","response":{"id":"resp_late"}}"#,
        ]);
        assert_eq!(events[0].event_type(), "response.created");
        let ids: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::ResponseCreated(r) | Event::ResponseCompleted(r) => r.response.id.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["", ""]);
        assert!(notes[0].contains("resp_late"), "{notes:?}");
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
        assert_eq!(error.code.as_deref(), Some("stream_truncated"));
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
        assert_eq!(done.len(), 2, "created, then completed");
        assert!(normalizer
            .push_json(r#"{"type":"response.output_text.delta","delta":"late"}"#)
            .is_empty());
        assert!(normalizer
            .fail(UpstreamFailure::new("transport_error", "late"))
            .is_empty());
        assert!(normalizer.finish().is_empty());
        assert_eq!(normalizer.ignored_after_terminal(), 1);
        assert_eq!(normalizer.emitted(), 2);
        // [DONE] and empty data are not events.
        assert!(normalizer.push_json(" [DONE] ").is_empty());
        assert_eq!(normalizer.ignored_after_terminal(), 1);
    }
}
