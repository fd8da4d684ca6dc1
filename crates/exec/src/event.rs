//! The event types: one per Responses-API streaming event this protocol names, plus
//! [`OtherEvent`] for every other type.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::wire::{wire_object, FieldError, FromJson};
use crate::{Error, ErrorKind};

/// The `type` of each event this crate models.
pub(crate) mod types {
    pub(crate) const CREATED: &str = "response.created";
    pub(crate) const IN_PROGRESS: &str = "response.in_progress";
    pub(crate) const COMPLETED: &str = "response.completed";
    pub(crate) const FAILED: &str = "response.failed";
    pub(crate) const INCOMPLETE: &str = "response.incomplete";
    pub(crate) const OUTPUT_ITEM_ADDED: &str = "response.output_item.added";
    pub(crate) const OUTPUT_ITEM_DONE: &str = "response.output_item.done";
    pub(crate) const CONTENT_PART_ADDED: &str = "response.content_part.added";
    pub(crate) const CONTENT_PART_DONE: &str = "response.content_part.done";
    pub(crate) const OUTPUT_TEXT_DELTA: &str = "response.output_text.delta";
    pub(crate) const OUTPUT_TEXT_DONE: &str = "response.output_text.done";
    pub(crate) const ARGUMENTS_DELTA: &str = "response.function_call_arguments.delta";
    pub(crate) const ARGUMENTS_DONE: &str = "response.function_call_arguments.done";
    pub(crate) const ERROR: &str = "error";
}

/// One line of the protocol: a Responses-API streaming event.
///
/// The fourteen modelled types have a variant each; every other type is kept whole in
/// [`Event::Other`]. Members a type does not model are kept in its `extra` map, so reading an
/// event and writing it again gives the same JSON value (member order aside).
///
/// ```
/// use agentwire_exec::Event;
///
/// let event = agentwire_exec::from_str(
///     r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":"Hi","obfuscation":"x"}"#,
/// )?;
/// let Event::OutputTextDelta(delta) = &event else { unreachable!() };
/// assert_eq!(delta.delta, "Hi");
/// assert_eq!(delta.extra["obfuscation"], "x");
/// assert_eq!(event.event_type(), "response.output_text.delta");
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// `response.created`: the response exists.
    ResponseCreated(ResponseEvent),
    /// `response.in_progress`: the response is being generated.
    ResponseInProgress(ResponseEvent),
    /// `response.completed`: terminal, success.
    ResponseCompleted(ResponseEvent),
    /// `response.failed`: terminal, failure.
    ResponseFailed(ResponseEvent),
    /// `response.incomplete`: terminal, the output was cut short (for example by a token limit).
    ResponseIncomplete(ResponseEvent),
    /// `response.output_item.added`: an output item (message, function call, ...) starts.
    OutputItemAdded(OutputItemEvent),
    /// `response.output_item.done`: an output item is final.
    OutputItemDone(OutputItemEvent),
    /// `response.content_part.added`: a content part of a message starts.
    ContentPartAdded(ContentPartEvent),
    /// `response.content_part.done`: a content part is final.
    ContentPartDone(ContentPartEvent),
    /// `response.output_text.delta`: a piece of output text.
    OutputTextDelta(OutputTextDelta),
    /// `response.output_text.done`: the whole text of a content part.
    OutputTextDone(OutputTextDone),
    /// `response.function_call_arguments.delta`: a piece of a function call's arguments.
    FunctionCallArgumentsDelta(FunctionCallArgumentsDelta),
    /// `response.function_call_arguments.done`: a function call's whole arguments.
    FunctionCallArgumentsDone(FunctionCallArgumentsDone),
    /// `error`: something went wrong; a terminal `response.failed` follows in streams this
    /// crate writes.
    Error(ErrorEvent),
    /// Any other type, kept whole.
    Other(OtherEvent),
}

impl Event {
    /// The event's `type`.
    pub fn event_type(&self) -> &str {
        match self {
            Event::ResponseCreated(_) => types::CREATED,
            Event::ResponseInProgress(_) => types::IN_PROGRESS,
            Event::ResponseCompleted(_) => types::COMPLETED,
            Event::ResponseFailed(_) => types::FAILED,
            Event::ResponseIncomplete(_) => types::INCOMPLETE,
            Event::OutputItemAdded(_) => types::OUTPUT_ITEM_ADDED,
            Event::OutputItemDone(_) => types::OUTPUT_ITEM_DONE,
            Event::ContentPartAdded(_) => types::CONTENT_PART_ADDED,
            Event::ContentPartDone(_) => types::CONTENT_PART_DONE,
            Event::OutputTextDelta(_) => types::OUTPUT_TEXT_DELTA,
            Event::OutputTextDone(_) => types::OUTPUT_TEXT_DONE,
            Event::FunctionCallArgumentsDelta(_) => types::ARGUMENTS_DELTA,
            Event::FunctionCallArgumentsDone(_) => types::ARGUMENTS_DONE,
            Event::Error(_) => types::ERROR,
            Event::Other(other) => &other.event_type,
        }
    }

    /// Whether this is one of the three terminal events: `response.completed`,
    /// `response.failed`, `response.incomplete`.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Event::ResponseCompleted(_) | Event::ResponseFailed(_) | Event::ResponseIncomplete(_)
        )
    }

    /// The event's `sequence_number`, when it has one.
    pub fn sequence_number(&self) -> Option<u64> {
        match self {
            Event::ResponseCreated(e)
            | Event::ResponseInProgress(e)
            | Event::ResponseCompleted(e)
            | Event::ResponseFailed(e)
            | Event::ResponseIncomplete(e) => e.sequence_number,
            Event::OutputItemAdded(e) | Event::OutputItemDone(e) => e.sequence_number,
            Event::ContentPartAdded(e) | Event::ContentPartDone(e) => e.sequence_number,
            Event::OutputTextDelta(e) => e.sequence_number,
            Event::OutputTextDone(e) => e.sequence_number,
            Event::FunctionCallArgumentsDelta(e) => e.sequence_number,
            Event::FunctionCallArgumentsDone(e) => e.sequence_number,
            Event::Error(e) => e.sequence_number,
            Event::Other(e) => e.fields.get("sequence_number").and_then(Value::as_u64),
        }
    }

    /// Sets the event's `sequence_number`.
    pub fn set_sequence_number(&mut self, n: u64) {
        match self {
            Event::ResponseCreated(e)
            | Event::ResponseInProgress(e)
            | Event::ResponseCompleted(e)
            | Event::ResponseFailed(e)
            | Event::ResponseIncomplete(e) => e.sequence_number = Some(n),
            Event::OutputItemAdded(e) | Event::OutputItemDone(e) => e.sequence_number = Some(n),
            Event::ContentPartAdded(e) | Event::ContentPartDone(e) => e.sequence_number = Some(n),
            Event::OutputTextDelta(e) => e.sequence_number = Some(n),
            Event::OutputTextDone(e) => e.sequence_number = Some(n),
            Event::FunctionCallArgumentsDelta(e) => e.sequence_number = Some(n),
            Event::FunctionCallArgumentsDone(e) => e.sequence_number = Some(n),
            Event::Error(e) => e.sequence_number = Some(n),
            Event::Other(e) => {
                e.fields
                    .insert("sequence_number".to_owned(), Value::from(n));
            }
        }
    }

    /// Reads an event from a JSON value.
    ///
    /// Fails when the value is not an object, has no string `type`, or a member this crate
    /// models is missing or has the wrong JSON type. Unknown types and unknown members are not
    /// errors.
    pub fn from_value(value: Value) -> Result<Event, Error> {
        let Value::Object(map) = value else {
            return Err(Error::new(ErrorKind::NotAnObject));
        };
        Event::from_map(map)
    }

    /// Reads an event from a JSON object.
    pub(crate) fn from_map(mut map: Map<String, Value>) -> Result<Event, Error> {
        let event_type = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => return Err(Error::new(ErrorKind::MissingType)),
        };
        type Reader = fn(Map<String, Value>) -> Result<Event, FieldError>;
        let known = |t: &str| -> Option<Reader> {
            Some(match t {
                types::CREATED => |m| ResponseEvent::from_map(m).map(Event::ResponseCreated),
                types::IN_PROGRESS => |m| ResponseEvent::from_map(m).map(Event::ResponseInProgress),
                types::COMPLETED => |m| ResponseEvent::from_map(m).map(Event::ResponseCompleted),
                types::FAILED => |m| ResponseEvent::from_map(m).map(Event::ResponseFailed),
                types::INCOMPLETE => |m| ResponseEvent::from_map(m).map(Event::ResponseIncomplete),
                types::OUTPUT_ITEM_ADDED => {
                    |m| OutputItemEvent::from_map(m).map(Event::OutputItemAdded)
                }
                types::OUTPUT_ITEM_DONE => {
                    |m| OutputItemEvent::from_map(m).map(Event::OutputItemDone)
                }
                types::CONTENT_PART_ADDED => {
                    |m| ContentPartEvent::from_map(m).map(Event::ContentPartAdded)
                }
                types::CONTENT_PART_DONE => {
                    |m| ContentPartEvent::from_map(m).map(Event::ContentPartDone)
                }
                types::OUTPUT_TEXT_DELTA => {
                    |m| OutputTextDelta::from_map(m).map(Event::OutputTextDelta)
                }
                types::OUTPUT_TEXT_DONE => {
                    |m| OutputTextDone::from_map(m).map(Event::OutputTextDone)
                }
                types::ARGUMENTS_DELTA => |m| {
                    FunctionCallArgumentsDelta::from_map(m).map(Event::FunctionCallArgumentsDelta)
                },
                types::ARGUMENTS_DONE => {
                    |m| FunctionCallArgumentsDone::from_map(m).map(Event::FunctionCallArgumentsDone)
                }
                types::ERROR => |m| ErrorEvent::from_map(m).map(Event::Error),
                _ => return None,
            })
        };
        match known(&event_type) {
            Some(read) => {
                crate::wire::remove(&mut map, "type");
                read(map).map_err(|e| e.into_error(&event_type))
            }
            None => {
                crate::wire::remove(&mut map, "type");
                Ok(Event::Other(OtherEvent {
                    event_type,
                    fields: map,
                }))
            }
        }
    }

    /// The event as a JSON value.
    pub fn to_value(&self) -> Value {
        // Serializing these types cannot fail: every key is a string and every value is JSON.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.event_type())?;
        match self {
            Event::ResponseCreated(e)
            | Event::ResponseInProgress(e)
            | Event::ResponseCompleted(e)
            | Event::ResponseFailed(e)
            | Event::ResponseIncomplete(e) => e.write_fields(&mut map)?,
            Event::OutputItemAdded(e) | Event::OutputItemDone(e) => e.write_fields(&mut map)?,
            Event::ContentPartAdded(e) | Event::ContentPartDone(e) => e.write_fields(&mut map)?,
            Event::OutputTextDelta(e) => e.write_fields(&mut map)?,
            Event::OutputTextDone(e) => e.write_fields(&mut map)?,
            Event::FunctionCallArgumentsDelta(e) => e.write_fields(&mut map)?,
            Event::FunctionCallArgumentsDone(e) => e.write_fields(&mut map)?,
            Event::Error(e) => e.write_fields(&mut map)?,
            Event::Other(e) => {
                for (key, value) in &e.fields {
                    if key != "type" {
                        map.serialize_entry(key, value)?;
                    }
                }
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Event::from_value(value).map_err(serde::de::Error::custom)
    }
}

/// An event of a type this crate does not model: its `type` and every other member.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OtherEvent {
    /// The event's `type`.
    pub event_type: String,
    /// Every member but `type`.
    pub fields: Map<String, Value>,
}

impl OtherEvent {
    /// An event of type `event_type` with these members (a `type` member among them is
    /// ignored).
    pub fn new(event_type: impl Into<String>, fields: Map<String, Value>) -> Self {
        OtherEvent {
            event_type: event_type.into(),
            fields,
        }
    }
}

wire_object! {
    /// The payload of `response.created`, `response.in_progress`, `response.completed`,
    /// `response.failed` and `response.incomplete`.
    pub struct ResponseEvent {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The response as of this event.
        response: req Response,
    }
}

impl ResponseEvent {
    /// An event carrying `response`.
    pub fn new(response: Response) -> Self {
        ResponseEvent {
            sequence_number: None,
            response,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// A Responses-API response object.
    pub struct Response {
        /// The response id, `resp_...`.
        id: opt String,
        /// Always `response`.
        object: opt String,
        /// Creation time, Unix seconds.
        created_at: opt Number,
        /// `in_progress`, `completed`, `failed`, `incomplete`, ...
        status: opt String,
        /// Why the response failed.
        error: opt ResponseError,
        /// Why the response is incomplete: `{"reason": "max_output_tokens"}`.
        incomplete_details: opt Value,
        /// The system instructions of the request.
        instructions: opt Value,
        /// The model.
        model: opt String,
        /// The output items so far.
        output: opt Vec<OutputItem>,
        /// Whether the model may call several tools at once.
        parallel_tool_calls: opt bool,
        /// The request's tool choice.
        tool_choice: opt Value,
        /// The request's tools.
        tools: opt Vec<Value>,
        /// Token usage (on terminal events).
        usage: opt Usage,
    }
}

impl Default for Response {
    fn default() -> Self {
        Response {
            id: None,
            object: None,
            created_at: None,
            status: None,
            error: None,
            incomplete_details: None,
            instructions: None,
            model: None,
            output: None,
            parallel_tool_calls: None,
            tool_choice: None,
            tools: None,
            usage: None,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The `error` member of a failed response.
    pub struct ResponseError {
        /// A machine-readable code, such as `server_error`, `invalid_api_key` or `cancelled`.
        code: opt String,
        /// What went wrong.
        message: req String,
        /// The request parameter at fault, when known.
        param: opt String,
    }
}

impl ResponseError {
    /// An error with a message and optionally a code.
    pub fn new(code: Option<String>, message: impl Into<String>) -> Self {
        ResponseError {
            code,
            message: message.into(),
            param: None,
            extra: Map::new(),
        }
    }

    /// The provider's error type (`invalid_request_error`, ...), kept as the member `type`.
    pub fn error_type(&self) -> Option<&str> {
        self.extra.get("type").and_then(Value::as_str)
    }
}

wire_object! {
    /// Token usage of a response.
    ///
    /// The Responses API reports cached input tokens in
    /// `input_tokens_details.cached_tokens`; the v0 exec protocol put them at the top level as
    /// `cached_tokens`. Streams this crate writes carry both.
    pub struct Usage {
        /// Input tokens.
        input_tokens: req u64,
        /// Details of the input tokens.
        input_tokens_details: opt InputTokensDetails,
        /// Output tokens.
        output_tokens: req u64,
        /// Details of the output tokens.
        output_tokens_details: opt OutputTokensDetails,
        /// Input plus output tokens.
        total_tokens: opt u64,
        /// Cached input tokens, where the v0 protocol put them.
        cached_tokens: opt u64,
    }
}

impl Usage {
    /// Usage with these counts and every detail filled in (cached tokens in both places).
    pub fn new(input_tokens: u64, output_tokens: u64, cached_tokens: u64) -> Self {
        let mut usage = Usage {
            input_tokens,
            input_tokens_details: None,
            output_tokens,
            output_tokens_details: None,
            total_tokens: None,
            cached_tokens: Some(cached_tokens),
            extra: Map::new(),
        };
        usage.fill();
        usage
    }

    /// Cached input tokens, from `input_tokens_details.cached_tokens` or else the top-level
    /// `cached_tokens`.
    pub fn cached(&self) -> Option<u64> {
        self.input_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(self.cached_tokens)
    }

    /// Fills in what the Responses API and the v0 protocol require and may be missing:
    /// cached tokens in both places (0 when neither is known), cache writes (0), reasoning
    /// tokens (0) and the total.
    pub fn fill(&mut self) {
        let cached = self.cached().unwrap_or(0);
        self.cached_tokens.get_or_insert(cached);
        crate::wire::remove(&mut self.extra, "cached_tokens");
        let input = self
            .input_tokens_details
            .get_or_insert_with(|| InputTokensDetails {
                cache_write_tokens: None,
                cached_tokens: None,
                extra: Map::new(),
            });
        input.cache_write_tokens.get_or_insert(0);
        crate::wire::remove(&mut input.extra, "cache_write_tokens");
        input.cached_tokens.get_or_insert(cached);
        crate::wire::remove(&mut input.extra, "cached_tokens");
        crate::wire::remove(&mut self.extra, "input_tokens_details");
        let output = self
            .output_tokens_details
            .get_or_insert_with(|| OutputTokensDetails {
                reasoning_tokens: None,
                extra: Map::new(),
            });
        output.reasoning_tokens.get_or_insert(0);
        crate::wire::remove(&mut output.extra, "reasoning_tokens");
        crate::wire::remove(&mut self.extra, "output_tokens_details");
        self.total_tokens
            .get_or_insert(self.input_tokens.saturating_add(self.output_tokens));
        crate::wire::remove(&mut self.extra, "total_tokens");
    }
}

wire_object! {
    /// Details of the input tokens.
    pub struct InputTokensDetails {
        /// Input tokens written to the prompt cache.
        cache_write_tokens: opt u64,
        /// Input tokens served from the prompt cache.
        cached_tokens: opt u64,
    }
}

wire_object! {
    /// Details of the output tokens.
    pub struct OutputTokensDetails {
        /// Tokens spent on reasoning.
        reasoning_tokens: opt u64,
    }
}

/// An output item of a response.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OutputItem {
    /// `function_call`: the model asks the caller to run a tool.
    FunctionCall(FunctionCallItem),
    /// `message`: assistant text.
    Message(MessageItem),
    /// Any other item type (`reasoning`, `web_search_call`, ...), kept whole, `type` included.
    Other(Map<String, Value>),
}

impl OutputItem {
    /// The item's `type`.
    pub fn item_type(&self) -> &str {
        match self {
            OutputItem::FunctionCall(_) => "function_call",
            OutputItem::Message(_) => "message",
            OutputItem::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The item's `id`, when it has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            OutputItem::FunctionCall(item) => item.id.as_deref(),
            OutputItem::Message(item) => item.id.as_deref(),
            OutputItem::Other(map) => map.get("id").and_then(Value::as_str),
        }
    }
}

impl FromJson for OutputItem {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let Value::Object(mut map) = value else {
            return Err(FieldError::wrong("an object", &value));
        };
        match map.get("type") {
            Some(Value::String(t)) if t == "function_call" => {
                crate::wire::remove(&mut map, "type");
                FunctionCallItem::from_map(map).map(OutputItem::FunctionCall)
            }
            Some(Value::String(t)) if t == "message" => {
                crate::wire::remove(&mut map, "type");
                MessageItem::from_map(map).map(OutputItem::Message)
            }
            Some(Value::String(_)) => Ok(OutputItem::Other(map)),
            Some(other) => Err(FieldError::wrong("a string", other).in_key("type")),
            None => Err(FieldError {
                path: vec![crate::wire::Seg::Key("type".to_owned())],
                problem: crate::wire::Problem::Missing,
            }),
        }
    }
}

impl Serialize for OutputItem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            OutputItem::FunctionCall(item) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "function_call")?;
                item.write_fields(&mut map)?;
                map.end()
            }
            OutputItem::Message(item) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "message")?;
                item.write_fields(&mut map)?;
                map.end()
            }
            OutputItem::Other(map) => map.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for OutputItem {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        OutputItem::from_json(Value::deserialize(deserializer)?)
            .map_err(|e| serde::de::Error::custom(crate::wire::describe(&e)))
    }
}

wire_object! {
    /// A `function_call` output item.
    pub struct FunctionCallItem {
        /// The item id (`fc_...`); events refer to the item by it.
        id: opt String,
        /// The id the caller echoes back in its `function_call_output` (`call_...`).
        call_id: req String,
        /// The tool's name.
        name: req String,
        /// The arguments, a JSON text (empty while they stream).
        arguments: opt String,
        /// `in_progress`, `completed` or `incomplete`.
        status: opt String,
    }
}

impl FunctionCallItem {
    /// A call of `name` with id `call_id`.
    pub fn new(call_id: impl Into<String>, name: impl Into<String>) -> Self {
        FunctionCallItem {
            id: None,
            call_id: call_id.into(),
            name: name.into(),
            arguments: None,
            status: None,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// A `message` output item.
    pub struct MessageItem {
        /// The item id (`msg_...`).
        id: opt String,
        /// The speaker, `assistant`.
        role: opt String,
        /// `in_progress`, `completed` or `incomplete`.
        status: opt String,
        /// The content parts.
        content: opt Vec<ContentPart>,
    }
}

impl MessageItem {
    /// An assistant message with no content yet.
    pub fn new() -> Self {
        MessageItem {
            id: None,
            role: Some("assistant".to_owned()),
            status: None,
            content: None,
            extra: Map::new(),
        }
    }

    /// The concatenated text of the `output_text` parts.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .flatten()
            .filter_map(|part| match part {
                ContentPart::OutputText(p) => Some(p.text.as_str()),
                ContentPart::Other(_) => None,
            })
            .collect()
    }
}

impl Default for MessageItem {
    fn default() -> Self {
        MessageItem::new()
    }
}

/// A content part of a message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentPart {
    /// `output_text`.
    OutputText(OutputTextPart),
    /// Any other part type (`refusal`, ...), kept whole, `type` included.
    Other(Map<String, Value>),
}

impl FromJson for ContentPart {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let Value::Object(mut map) = value else {
            return Err(FieldError::wrong("an object", &value));
        };
        match map.get("type") {
            Some(Value::String(t)) if t == "output_text" => {
                crate::wire::remove(&mut map, "type");
                OutputTextPart::from_map(map).map(ContentPart::OutputText)
            }
            Some(Value::String(_)) => Ok(ContentPart::Other(map)),
            Some(other) => Err(FieldError::wrong("a string", other).in_key("type")),
            None => Err(FieldError {
                path: vec![crate::wire::Seg::Key("type".to_owned())],
                problem: crate::wire::Problem::Missing,
            }),
        }
    }
}

impl Serialize for ContentPart {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentPart::OutputText(part) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "output_text")?;
                part.write_fields(&mut map)?;
                map.end()
            }
            ContentPart::Other(map) => map.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ContentPart::from_json(Value::deserialize(deserializer)?)
            .map_err(|e| serde::de::Error::custom(crate::wire::describe(&e)))
    }
}

wire_object! {
    /// An `output_text` content part.
    pub struct OutputTextPart {
        /// The text (empty in `content_part.added`; the text arrives as deltas).
        text: req String,
        /// Citations and other annotations.
        annotations: opt Vec<Value>,
        /// Token log probabilities, when requested.
        logprobs: opt Vec<Value>,
    }
}

impl OutputTextPart {
    /// A part holding `text`, with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        OutputTextPart {
            text: text.into(),
            annotations: Some(Vec::new()),
            logprobs: None,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `response.output_item.added` and `response.output_item.done`.
    pub struct OutputItemEvent {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The item's position in the response's output.
        output_index: opt u64,
        /// The item.
        item: req OutputItem,
    }
}

impl OutputItemEvent {
    /// An event carrying `item`.
    pub fn new(item: OutputItem) -> Self {
        OutputItemEvent {
            sequence_number: None,
            output_index: None,
            item,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `response.content_part.added` and `response.content_part.done`.
    pub struct ContentPartEvent {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The message item.
        item_id: opt String,
        /// The item's position in the response's output.
        output_index: opt u64,
        /// The part's position in the item's content.
        content_index: opt u64,
        /// The part.
        part: req ContentPart,
    }
}

impl ContentPartEvent {
    /// An event carrying `part`.
    pub fn new(part: ContentPart) -> Self {
        ContentPartEvent {
            sequence_number: None,
            item_id: None,
            output_index: None,
            content_index: None,
            part,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `response.output_text.delta`.
    pub struct OutputTextDelta {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The message item.
        item_id: opt String,
        /// The item's position in the response's output.
        output_index: opt u64,
        /// The part's position in the item's content.
        content_index: opt u64,
        /// The piece of text.
        delta: req String,
        /// Token log probabilities (empty unless requested).
        logprobs: opt Vec<Value>,
    }
}

impl OutputTextDelta {
    /// A delta of `delta`.
    pub fn new(delta: impl Into<String>) -> Self {
        OutputTextDelta {
            sequence_number: None,
            item_id: None,
            output_index: None,
            content_index: None,
            delta: delta.into(),
            logprobs: None,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `response.output_text.done`.
    pub struct OutputTextDone {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The message item.
        item_id: opt String,
        /// The item's position in the response's output.
        output_index: opt u64,
        /// The part's position in the item's content.
        content_index: opt u64,
        /// The part's whole text: the concatenation of its deltas.
        text: req String,
        /// Token log probabilities (empty unless requested).
        logprobs: opt Vec<Value>,
    }
}

impl OutputTextDone {
    /// The final `text`.
    pub fn new(text: impl Into<String>) -> Self {
        OutputTextDone {
            sequence_number: None,
            item_id: None,
            output_index: None,
            content_index: None,
            text: text.into(),
            logprobs: None,
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `response.function_call_arguments.delta`.
    pub struct FunctionCallArgumentsDelta {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The function call item.
        item_id: req String,
        /// The item's position in the response's output.
        output_index: opt u64,
        /// The piece of the arguments.
        delta: req String,
    }
}

impl FunctionCallArgumentsDelta {
    /// A delta of `delta` for item `item_id`.
    pub fn new(item_id: impl Into<String>, delta: impl Into<String>) -> Self {
        FunctionCallArgumentsDelta {
            sequence_number: None,
            item_id: item_id.into(),
            output_index: None,
            delta: delta.into(),
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `response.function_call_arguments.done`.
    pub struct FunctionCallArgumentsDone {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// The function call item.
        item_id: req String,
        /// The item's position in the response's output.
        output_index: opt u64,
        /// The whole arguments: the concatenation of the deltas.
        arguments: req String,
    }
}

impl FunctionCallArgumentsDone {
    /// The final `arguments` of item `item_id`.
    pub fn new(item_id: impl Into<String>, arguments: impl Into<String>) -> Self {
        FunctionCallArgumentsDone {
            sequence_number: None,
            item_id: item_id.into(),
            output_index: None,
            arguments: arguments.into(),
            extra: Map::new(),
        }
    }
}

wire_object! {
    /// The payload of `error`.
    pub struct ErrorEvent {
        /// The event's position in the stream, from 0.
        sequence_number: opt u64,
        /// A machine-readable code, when known.
        code: opt String,
        /// What went wrong. Some upstreams nest it as `error.message`; see
        /// [`ErrorEvent::text`].
        message: opt String,
        /// The request parameter at fault, when known.
        param: opt String,
    }
}

impl ErrorEvent {
    /// An error with a message and optionally a code.
    pub fn new(code: Option<String>, message: impl Into<String>) -> Self {
        ErrorEvent {
            sequence_number: None,
            code,
            message: Some(message.into()),
            param: None,
            extra: Map::new(),
        }
    }

    /// The message: `message`, else a nested `error.message`.
    pub fn text(&self) -> Option<&str> {
        self.message.as_deref().or_else(|| self.nested("message"))
    }

    /// The code: `code`, else a nested `error.code` or `error.type`.
    pub fn code_text(&self) -> Option<&str> {
        self.code
            .as_deref()
            .or_else(|| self.nested("code"))
            .or_else(|| self.nested("type"))
    }

    pub(crate) fn nested(&self, key: &str) -> Option<&str> {
        self.extra.get("error")?.get(key)?.as_str()
    }
}
