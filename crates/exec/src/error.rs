//! The crate's error type: a kind with a stable code, and a position.

use std::fmt;
use std::io;

/// Everything this crate can fail with.
///
/// The error follows the workspace's one error shape (`docs/errors.md`): the
/// [`kind`](Error::kind) says what went wrong and carries the details; [`code`](Error::code) is
/// its stable snake_case name (the codes are listed in `docs/exec.md` and used by the
/// conformance fixtures); [`line`](Error::line) and [`column`](Error::column) (1-based, the
/// column counted in characters) locate the problem in a JSONL or SSE input when there is one;
/// [`message`](Error::message) is the text without code or position. Request errors locate
/// themselves by input item index inside the kind.
///
/// `Display` is `code at line L, column C: message`, `code at line L: message` or
/// `code: message`.
///
/// ```
/// let err = agentwire_exec::from_str(r#"{"type":"response.output_text.delta","delta":7}"#)
///     .unwrap_err();
/// assert_eq!(err.code(), "invalid_field");
/// assert_eq!((err.line(), err.column()), (Some(1), None));
/// assert_eq!(
///     err.to_string(),
///     "invalid_field at line 1: response.output_text.delta: field `delta` must be a string, found a number"
/// );
/// let err = agentwire_exec::from_str("{\"type\":\"é\",}").unwrap_err();
/// assert_eq!((err.code(), err.column()), ("invalid_json", Some(13)));
/// ```
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    line: Option<u64>,
    column: Option<u64>,
}

/// What went wrong. Each variant has a stable [`code`](ErrorKind::code).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing failed (`io`).
    #[error("I/O error: {0}")]
    Io(#[source] io::Error),
    /// The input is not UTF-8 (`invalid_utf8`); `offset` is the byte offset of the first bad
    /// byte within the line.
    #[error("not valid UTF-8 (invalid byte at offset {offset})")]
    InvalidUtf8 {
        /// Byte offset within the line.
        offset: usize,
    },
    /// A line is not JSON (`invalid_json`).
    #[error("not JSON: {message}")]
    InvalidJson {
        /// serde_json's description, without its position (see [`Error::column`]).
        message: String,
    },
    /// A line is JSON but not an object (`not_an_object`).
    #[error("an event must be a JSON object")]
    NotAnObject,
    /// An event has no string `type` member (`missing_type`).
    #[error("the event has no string `type` member")]
    MissingType,
    /// A member this crate models is absent from an event of a known type
    /// (`missing_field`).
    #[error("{event_type}: missing field `{field}`")]
    MissingField {
        /// The event's `type`.
        event_type: String,
        /// The member's path, such as `item.call_id`.
        field: String,
    },
    /// A member this crate models has the wrong JSON type (`invalid_field`).
    #[error("{event_type}: field `{field}` must be {expected}, found {found}")]
    InvalidField {
        /// The event's `type`.
        event_type: String,
        /// The member's path, such as `response.usage.input_tokens`.
        field: String,
        /// What the member must be, such as `a string`.
        expected: &'static str,
        /// What it is, such as `a number`.
        found: &'static str,
    },
    /// A JSONL line is longer than the reader's limit (`line_too_long`).
    #[error("the line is longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// One server-sent event is larger than the decoder's limit (`event_too_large`).
    #[error("a server-sent event is larger than the limit of {limit} bytes")]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// One server-sent-event comment line is longer than the decoder's limit
    /// (`comment_too_large`).
    #[error("a server-sent-event comment line is longer than the limit of {limit} bytes")]
    CommentTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The output a stream builds up (text, arguments, items) is over the assembler's limit
    /// (`output_too_large`).
    #[error("the stream's output is larger than the limit of {limit} bytes")]
    OutputTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// `function_call_arguments.done` or `output_item.done` carries arguments that differ from
    /// the concatenated argument deltas of the call (`arguments_mismatch`).
    #[error(
        "the final arguments of function call `{item_id}` differ from its concatenated deltas"
    )]
    ArgumentsMismatch {
        /// The function call item.
        item_id: String,
    },
    /// `output_text.done` carries text that differs from the concatenated text deltas
    /// (`text_mismatch`).
    #[error("the final text of item `{item_id}` differs from its concatenated deltas")]
    TextMismatch {
        /// The message item.
        item_id: String,
    },
    /// An argument delta names an item no `output_item.added` announced (`unknown_item`).
    #[error("no output_item.added announced item `{item_id}`")]
    UnknownItem {
        /// The unknown item id.
        item_id: String,
    },
    /// An event refers to an item by an id that another kind of item has: text for a function
    /// call, a final message for a call's id (`item_kind_mismatch`).
    #[error("item `{item_id}` is used as two different kinds of item")]
    ItemKindMismatch {
        /// The item id.
        item_id: String,
    },
    /// An event follows the terminal event (`event_after_terminal`): a stream has exactly one
    /// of `response.completed`, `response.failed` and `response.incomplete`, and it is last.
    #[error("{event_type} follows the terminal event; the terminal event must be last")]
    EventAfterTerminal {
        /// The type of the event after the terminal one.
        event_type: String,
    },
    /// `sequence_number` did not increase (`sequence_not_increasing`).
    #[error("sequence_number {found} does not increase (the previous event had {previous})")]
    SequenceNotIncreasing {
        /// The previous event's sequence number.
        previous: u64,
        /// This event's sequence number.
        found: u64,
    },
    /// A `--tool` value is not `name:json=PATH` (`invalid_tool_spec`).
    #[error("invalid tool `{spec}`: expected name:json=PATH (use --web-search for web search)")]
    InvalidToolSpec {
        /// The value as given.
        spec: String,
    },
    /// A tool name does not match `^[A-Za-z0-9_-]{1,64}$` (`invalid_tool_name`).
    #[error("invalid tool name `{name}`: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`")]
    InvalidToolName {
        /// The name as given.
        name: String,
    },
    /// Two tools have the same name (`duplicate_tool`).
    #[error("tool `{name}` is declared twice")]
    DuplicateTool {
        /// The name.
        name: String,
    },
    /// A tool's parameter schema is not a JSON object (`schema_not_object`).
    #[error("the schema of tool `{name}` must be a JSON object, found {found}")]
    SchemaNotObject {
        /// The tool.
        name: String,
        /// What the schema is instead, such as `an array`.
        found: &'static str,
    },
    /// A tool choice is not `auto`, `required`, `none` or `function:<name>`
    /// (`invalid_tool_choice`).
    #[error("invalid tool choice `{value}`: expected auto, required, none or function:<name>")]
    InvalidToolChoice {
        /// The value as given.
        value: String,
    },
    /// An option's value is not one of those it takes (`invalid_option`), such as a reasoning
    /// effort other than `minimal`, `low`, `medium` and `high`.
    #[error("invalid value `{value}`: expected {expected}")]
    InvalidOption {
        /// The value as given.
        value: String,
        /// The values the option takes.
        expected: &'static str,
    },
    /// `function:<name>` names no declared function tool (`unknown_tool_choice_function`).
    #[error("tool choice function:{name} names no declared function tool")]
    UnknownToolChoiceFunction {
        /// The name.
        name: String,
    },
    /// `required` or `function:<name>` without any tool (`tool_choice_without_tools`).
    #[error("tool choice `{choice}` needs at least one tool")]
    ToolChoiceWithoutTools {
        /// The choice as given.
        choice: String,
    },
    /// The prompt is empty or only whitespace (`empty_prompt`).
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// Neither a prompt nor input items were given, or the input item list is empty
    /// (`no_input`).
    #[error("no input: give a prompt or a non-empty list of input items")]
    NoInput,
    /// An input item does not follow the Responses input grammar (`invalid_input_item`).
    #[error("input item {index}: {reason}")]
    InvalidInputItem {
        /// The item's index in the input list.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A `function_call_output` has no earlier `function_call` with its `call_id`
    /// (`orphan_function_call_output`).
    #[error("input item {index}: function_call_output `{call_id}` has no earlier function_call with that call_id")]
    OrphanFunctionCallOutput {
        /// The output item's index.
        index: usize,
        /// Its `call_id`.
        call_id: String,
    },
    /// A `function_call` has no `function_call_output` (`missing_function_call_output`).
    #[error("input item {index}: function_call `{call_id}` has no function_call_output")]
    MissingFunctionCallOutput {
        /// The call item's index.
        index: usize,
        /// Its `call_id`.
        call_id: String,
    },
    /// Two `function_call` items share a `call_id` (`duplicate_call_id`).
    #[error("input item {index}: another function_call already uses call_id `{call_id}`")]
    DuplicateCallId {
        /// The second call's index.
        index: usize,
        /// The `call_id`.
        call_id: String,
    },
    /// A request body does not have the shape this crate builds (`invalid_request`).
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// What is wrong with it.
        reason: String,
    },
    /// A request holds something a Chat Completions server cannot take (`unsupported_for_chat`):
    /// a hosted tool, `store`, `previous_response_id`, an input item or part of another kind.
    #[error("not possible with a Chat Completions upstream (--api chat): {what}")]
    UnsupportedForChat {
        /// What it is.
        what: String,
    },
    /// A mock mode other than `echo`, `text`, `tool-call` and `tool-loop`
    /// (`unknown_mock_mode`).
    #[error("unknown mock mode `{mode}`: expected echo, text, tool-call or tool-loop")]
    UnknownMockMode {
        /// The mode as given.
        mode: String,
    },
    /// The `tool-call` mock needs a function tool to call (`mock_needs_tool`).
    #[error("the tool-call mock needs a function tool (--tool name:json=PATH)")]
    MockNeedsTool,
}

impl ErrorKind {
    /// The stable snake_case code of this kind.
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::Io(_) => "io",
            ErrorKind::InvalidUtf8 { .. } => "invalid_utf8",
            ErrorKind::InvalidJson { .. } => "invalid_json",
            ErrorKind::NotAnObject => "not_an_object",
            ErrorKind::MissingType => "missing_type",
            ErrorKind::MissingField { .. } => "missing_field",
            ErrorKind::InvalidField { .. } => "invalid_field",
            ErrorKind::LineTooLong { .. } => "line_too_long",
            ErrorKind::EventTooLarge { .. } => "event_too_large",
            ErrorKind::CommentTooLarge { .. } => "comment_too_large",
            ErrorKind::OutputTooLarge { .. } => "output_too_large",
            ErrorKind::ArgumentsMismatch { .. } => "arguments_mismatch",
            ErrorKind::TextMismatch { .. } => "text_mismatch",
            ErrorKind::UnknownItem { .. } => "unknown_item",
            ErrorKind::ItemKindMismatch { .. } => "item_kind_mismatch",
            ErrorKind::EventAfterTerminal { .. } => "event_after_terminal",
            ErrorKind::SequenceNotIncreasing { .. } => "sequence_not_increasing",
            ErrorKind::InvalidToolSpec { .. } => "invalid_tool_spec",
            ErrorKind::InvalidToolName { .. } => "invalid_tool_name",
            ErrorKind::DuplicateTool { .. } => "duplicate_tool",
            ErrorKind::SchemaNotObject { .. } => "schema_not_object",
            ErrorKind::InvalidToolChoice { .. } => "invalid_tool_choice",
            ErrorKind::InvalidOption { .. } => "invalid_option",
            ErrorKind::UnknownToolChoiceFunction { .. } => "unknown_tool_choice_function",
            ErrorKind::ToolChoiceWithoutTools { .. } => "tool_choice_without_tools",
            ErrorKind::EmptyPrompt => "empty_prompt",
            ErrorKind::NoInput => "no_input",
            ErrorKind::InvalidInputItem { .. } => "invalid_input_item",
            ErrorKind::OrphanFunctionCallOutput { .. } => "orphan_function_call_output",
            ErrorKind::MissingFunctionCallOutput { .. } => "missing_function_call_output",
            ErrorKind::DuplicateCallId { .. } => "duplicate_call_id",
            ErrorKind::InvalidRequest { .. } => "invalid_request",
            ErrorKind::UnsupportedForChat { .. } => "unsupported_for_chat",
            ErrorKind::UnknownMockMode { .. } => "unknown_mock_mode",
            ErrorKind::MockNeedsTool => "mock_needs_tool",
        }
    }
}

impl Error {
    /// An error of this kind with no position.
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error(Box::new(Inner {
            kind,
            line: None,
            column: None,
        }))
    }

    /// Sets the 1-based line.
    pub(crate) fn at_line(mut self, line: u64) -> Self {
        self.0.line = Some(line);
        self
    }

    /// Sets the 1-based column.
    pub(crate) fn at_column(mut self, column: u64) -> Self {
        self.0.column = Some(column);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Consumes the error, returning its kind.
    pub fn into_kind(self) -> ErrorKind {
        self.0.kind
    }

    /// The kind's stable code, such as `invalid_json`.
    pub fn code(&self) -> &'static str {
        self.0.kind.code()
    }

    /// The 1-based line of the input where the problem is, when the input has lines.
    pub fn line(&self) -> Option<u64> {
        self.0.line
    }

    /// The 1-based column within [`line`](Error::line), counted in characters (Unicode scalar
    /// values), when known.
    pub fn column(&self) -> Option<u64> {
        self.0.column
    }

    /// The human text, without code or position.
    pub fn message(&self) -> String {
        self.0.kind.to_string()
    }

    /// Whether this is an I/O error of the underlying reader or writer.
    pub fn is_io(&self) -> bool {
        matches!(self.0.kind, ErrorKind::Io(_))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("line", &self.0.line)
            .field("column", &self.0.column)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())?;
        match (self.0.line, self.0.column) {
            (Some(line), Some(column)) => write!(f, " at line {line}, column {column}")?,
            (Some(line), None) => write!(f, " at line {line}")?,
            _ => {}
        }
        f.write_str(": ")?;
        fmt::Display::fmt(&self.0.kind, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0.kind)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::new(ErrorKind::Io(e))
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
