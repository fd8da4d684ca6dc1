//! The crate's error type: one [`Error`], a [`#[non_exhaustive]`](ErrorKind) kind per failure,
//! and the gateway spec's error code for each ([`ErrorCode`]).

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

/// Every failure of this crate. The details are boxed, so `Result<T, Error>` stays small.
///
/// [`Error::code`] gives the gateway spec's error code and [`Error::to_json`] the error object
/// of spec §3.4 that a gateway returns to the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(Box<ErrorKind>);

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error(Box::new(kind))
    }

    /// What went wrong, with its position.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// Unwraps the kind.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    /// The stable code: the gateway spec's error code (`PATH_INVALID`, `ARGS_INVALID`, ...),
    /// the `error` member of the §3.4 error object. Codes never change between minor
    /// versions; [`ErrorCode`] lists them.
    pub fn code(&self) -> &'static str {
        self.0.code()
    }

    /// The code as an [`ErrorCode`], for matching.
    pub fn error_code(&self) -> ErrorCode {
        self.0.error_code()
    }

    /// The 1-based line of the offending input, for errors in JSON text
    /// ([`ErrorKind::InvalidJson`]); `None` otherwise (ids and paths carry a byte offset,
    /// tool definitions a JSON pointer, in [`Error::to_json`]'s `details`).
    pub fn line(&self) -> Option<u64> {
        match &*self.0 {
            ErrorKind::InvalidJson { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The 1-based column (in characters) of the offending input, with [`Error::line`].
    pub fn column(&self) -> Option<u64> {
        match &*self.0 {
            ErrorKind::InvalidJson { column, .. } => Some(*column),
            _ => None,
        }
    }

    /// The human text, without the code or the line and column.
    pub fn message(&self) -> String {
        self.0.to_string()
    }

    /// Whether reading or writing failed, as opposed to bad data. This crate does no I/O, so
    /// always `false`; the accessor exists so that callers handle every agentwire error alike.
    pub fn is_io(&self) -> bool {
        false
    }

    /// Whether the same call may succeed later (`UPSTREAM_TIMEOUT`, `UPSTREAM_UNAVAILABLE`).
    pub fn is_retryable(&self) -> bool {
        self.error_code().is_retryable()
    }

    /// The error object of spec §3.4: `{"error", "message", "path", "details"}`.
    ///
    /// `error` is [`Error::code`] and `message` is [`Error::message`]; `path` is the
    /// offending browse path, or empty; `details` is always an object, holding the
    /// machine-readable position and, for `ARGS_INVALID` from schema validation, one entry
    /// per violation (`retryable: true` for the retryable codes). The member order of the
    /// returned value follows serde_json's map (sorted unless `preserve_order` is on);
    /// [`Error::to_json_string`] always writes the order above.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        let (path, details) = self.path_and_details();
        object.insert("error".into(), json!(self.code()));
        object.insert("message".into(), json!(self.message()));
        object.insert("path".into(), json!(path));
        object.insert(
            "details".into(),
            Value::Object(
                details
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            ),
        );
        Value::Object(object)
    }

    /// The error object of spec §3.4 as compact JSON, members in the order `error`,
    /// `message`, `path`, `details` (and a fixed order inside `details`): the bytes a gateway
    /// puts in the tool result. `Serialize` writes the same object in the same order.
    ///
    /// ```
    /// use agentwire_toolcard::parse_path;
    ///
    /// let error = parse_path("/github//issues").unwrap_err();
    /// assert_eq!(
    ///     error.to_json_string(),
    ///     r#"{"error":"PATH_INVALID","message":"invalid path \"/github//issues\": empty segment at byte 8","path":"/github//issues","details":{"offset":8}}"#
    /// );
    /// ```
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    fn path_and_details(&self) -> (String, Vec<(&'static str, Value)>) {
        let mut details: Vec<(&'static str, Value)> = Vec::new();
        let mut path = String::new();
        match &*self.0 {
            ErrorKind::InvalidToolId { offset, .. } => {
                details.push(("offset", json!(offset)));
            }
            ErrorKind::InvalidTool { pointer, .. } => {
                details.push(("pointer", json!(pointer)));
            }
            ErrorKind::InvalidJson { line, column, .. } => {
                details.push(("line", json!(line)));
                details.push(("column", json!(column)));
            }
            ErrorKind::Collision {
                tool_id,
                first,
                second,
            } => {
                details.push(("tool_id", json!(tool_id)));
                details.push(("upstream", json!([first, second])));
            }
            ErrorKind::CardOverBudget { id, tokens, cap } => {
                details.push(("id", json!(id)));
                details.push(("tokens", json!(tokens)));
                details.push(("cap", json!(cap)));
            }
            ErrorKind::ResponseOverBudget { tokens, cap, cards } => {
                details.push(("tokens", json!(tokens)));
                details.push(("cap", json!(cap)));
                details.push(("cards", json!(cards)));
            }
            ErrorKind::InvalidCard { field, .. } => {
                details.push(("field", json!(field)));
            }
            ErrorKind::PathInvalid {
                path: p, offset, ..
            } => {
                path.clone_from(p);
                details.push(("offset", json!(offset)));
            }
            ErrorKind::PathNotFound { path: p, resolved } => {
                path.clone_from(p);
                details.push(("resolved", json!(resolved)));
            }
            ErrorKind::ArgsInvalid {
                field, violations, ..
            } => {
                if let Some(field) = field {
                    details.push(("field", json!(field)));
                }
                if !violations.is_empty() {
                    let list: Vec<Value> = violations
                        .iter()
                        .map(|v| {
                            json!({
                                "instance_path": v.instance_path,
                                "schema_path": v.schema_path,
                                "message": v.message,
                            })
                        })
                        .collect();
                    details.push(("violations", Value::Array(list)));
                }
            }
            ErrorKind::HydrateFailed { tool_id, .. }
            | ErrorKind::SchemaInvalid { tool_id, .. }
            | ErrorKind::ValidationUnavailable { tool_id } => {
                details.push(("tool_id", json!(tool_id)));
            }
            ErrorKind::NameCollision {
                name,
                first,
                second,
            } => {
                details.push(("name", json!(name)));
                details.push(("tool_ids", json!([first, second])));
            }
            ErrorKind::UpstreamError {
                tool_id,
                server,
                upstream_code,
                ..
            } => {
                push_upstream(&mut details, tool_id, server.as_deref());
                if let Some(code) = upstream_code {
                    details.push(("upstream_code", json!(code)));
                }
            }
            ErrorKind::UpstreamTimeout {
                tool_id,
                server,
                after_ms,
            } => {
                push_upstream(&mut details, tool_id, server.as_deref());
                if let Some(ms) = after_ms {
                    details.push(("after_ms", json!(ms)));
                }
                details.push(("retryable", json!(true)));
            }
            ErrorKind::UpstreamUnavailable {
                tool_id, server, ..
            } => {
                push_upstream(&mut details, tool_id, server.as_deref());
                details.push(("retryable", json!(true)));
            }
            ErrorKind::ViewFailed {
                handle,
                field,
                pointer,
                ..
            } => {
                details.push(("handle", json!(handle)));
                if let Some(field) = field {
                    details.push(("field", json!(field)));
                }
                if let Some(pointer) = pointer {
                    details.push(("pointer", json!(pointer)));
                }
            }
            ErrorKind::UnknownTool { name, tool_id } => {
                details.push(("name", json!(name)));
                if let Some(tool_id) = tool_id {
                    details.push(("tool_id", json!(tool_id)));
                }
            }
        }
        (path, details)
    }
}

/// The `tool_id` and `server` details of an upstream failure.
fn push_upstream(details: &mut Vec<(&'static str, Value)>, tool_id: &str, server: Option<&str>) {
    details.push(("tool_id", json!(tool_id)));
    if let Some(server) = server {
        details.push(("server", json!(server)));
    }
}

impl Serialize for Error {
    /// The error object of spec §3.4, in the order of [`Error::to_json_string`].
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (path, details) = self.path_and_details();
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("error", self.code())?;
        map.serialize_entry("message", &self.message())?;
        map.serialize_entry("path", &path)?;
        map.serialize_entry("details", &Details(&details))?;
        map.end()
    }
}

/// The `details` object, members in the order given.
struct Details<'a>(&'a [(&'static str, Value)]);

impl Serialize for Details<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, &Ordered(value))?;
        }
        map.end()
    }
}

/// A detail value with object members in a fixed order: `instance_path`, `schema_path`,
/// `message`, then any others sorted (whatever serde_json's map order is).
struct Ordered<'a>(&'a Value);

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => serializer.collect_seq(items.iter().map(Ordered)),
            Value::Object(object) => {
                let rank = |k: &str| match k {
                    "instance_path" => 0,
                    "schema_path" => 1,
                    "message" => 2,
                    _ => 3,
                };
                let mut keys: Vec<&String> = object.keys().collect();
                keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
                let mut map = serializer.serialize_map(Some(keys.len()))?;
                for key in keys {
                    map.serialize_entry(key, &Ordered(&object[key]))?;
                }
                map.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

impl fmt::Display for Error {
    /// `CODE at line L, column C: message`, `CODE at line L: message` or `CODE: message`
    /// (docs/errors.md).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())?;
        match (self.line(), self.column()) {
            (Some(line), Some(column)) => write!(f, " at line {line}, column {column}")?,
            (Some(line), None) => write!(f, " at line {line}")?,
            _ => {}
        }
        write!(f, ": {}", self.0)
    }
}

impl std::error::Error for Error {}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind)
    }
}

/// The error codes, as an enum for matching; [`ErrorCode::as_str`] is the code itself
/// (what [`Error::code`] returns). Several [`ErrorKind`]s share `CATALOG_ERROR`, the spec's
/// `CatalogError`: malformed ids, collisions, cards over the hard cap, bad tool definitions.
///
/// A code compares equal to its string, so `error.code() == ErrorCode::ArgsInvalid` works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `CATALOG_ERROR`: the spec's `CatalogError` (§1.5, §1.6, §2.3).
    Catalog,
    /// `PATH_INVALID`: a browse path that breaks the grammar of §3.2.
    PathInvalid,
    /// `PATH_NOT_FOUND`: a well-formed path that addresses no node (§3.4).
    PathNotFound,
    /// `ARGS_INVALID`: bad meta-tool arguments (§3.1) or tool arguments that fail the
    /// tool's schema (§4.4).
    ArgsInvalid,
    /// `HYDRATE_FAILED`: no tool with that id (§5.5).
    HydrateFailed,
    /// `SCHEMA_INVALID`: the upstream tool's input schema cannot be compiled, so arguments
    /// cannot be validated.
    SchemaInvalid,
    /// `VALIDATION_UNAVAILABLE`: the tool has an input schema, but this build has no schema
    /// validator (the crate's `schema` feature is off).
    ValidationUnavailable,
    /// `UPSTREAM_ERROR`: the upstream server answered the call with an error.
    UpstreamError,
    /// `UPSTREAM_TIMEOUT`: the upstream server did not answer in time (retryable).
    UpstreamTimeout,
    /// `UPSTREAM_UNAVAILABLE`: the upstream server cannot be reached (retryable).
    UpstreamUnavailable,
    /// `VIEW_FAILED`: `tool_view` cannot show what was asked (unknown handle, bad selector).
    ViewFailed,
    /// `UNKNOWN_TOOL`: a `tools/call` for a name the gateway does not expose as a tool.
    UnknownTool,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::Catalog,
        ErrorCode::PathInvalid,
        ErrorCode::PathNotFound,
        ErrorCode::ArgsInvalid,
        ErrorCode::HydrateFailed,
        ErrorCode::SchemaInvalid,
        ErrorCode::ValidationUnavailable,
        ErrorCode::UpstreamError,
        ErrorCode::UpstreamTimeout,
        ErrorCode::UpstreamUnavailable,
        ErrorCode::ViewFailed,
        ErrorCode::UnknownTool,
    ];

    /// The code as it appears in the `error` member of §3.4's error object.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Catalog => "CATALOG_ERROR",
            ErrorCode::PathInvalid => "PATH_INVALID",
            ErrorCode::PathNotFound => "PATH_NOT_FOUND",
            ErrorCode::ArgsInvalid => "ARGS_INVALID",
            ErrorCode::HydrateFailed => "HYDRATE_FAILED",
            ErrorCode::SchemaInvalid => "SCHEMA_INVALID",
            ErrorCode::ValidationUnavailable => "VALIDATION_UNAVAILABLE",
            ErrorCode::UpstreamError => "UPSTREAM_ERROR",
            ErrorCode::UpstreamTimeout => "UPSTREAM_TIMEOUT",
            ErrorCode::UpstreamUnavailable => "UPSTREAM_UNAVAILABLE",
            ErrorCode::ViewFailed => "VIEW_FAILED",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
        }
    }

    /// Whether the same call may succeed later: `UPSTREAM_TIMEOUT` and
    /// `UPSTREAM_UNAVAILABLE`.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::UpstreamTimeout | ErrorCode::UpstreamUnavailable
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<ErrorCode> for &str {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Which rule of the tool_id grammar (§1.1) an input breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IdProblem {
    /// Longer than 240 bytes.
    TooLong,
    /// No `:` between namespace and name.
    MissingColon,
    /// The namespace breaks `[a-z][a-z0-9_-]{0,63}`.
    Namespace,
    /// The name breaks `[A-Za-z_][A-Za-z0-9_.-]{0,127}`.
    Name,
    /// The version breaks `[A-Za-z0-9._-]{1,32}`.
    Version,
    /// The hash breaks `[0-9a-f]{8}`.
    Hash8,
    /// Neither `@version` nor `#hash8`: §1.2 requires the hash when the version is absent.
    Unversioned,
    /// Characters after the id (for example a second `#`).
    Trailing,
    /// Not an MCP name that [`ToolId::to_mcp_name`](crate::ToolId::to_mcp_name) writes.
    McpName,
}

impl fmt::Display for IdProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdProblem::TooLong => "longer than 240 characters",
            IdProblem::MissingColon => "expected `:` after the namespace",
            IdProblem::Namespace => "the namespace must match [a-z][a-z0-9_-]{0,63}",
            IdProblem::Name => "the name must match [A-Za-z_][A-Za-z0-9_.-]{0,127}",
            IdProblem::Version => "the version must match [A-Za-z0-9._-]{1,32}",
            IdProblem::Hash8 => "the hash must be 8 lowercase hex digits",
            IdProblem::Unversioned => "expected `@version` or `#hash8` after the name",
            IdProblem::Trailing => "unexpected characters after the id",
            IdProblem::McpName => {
                "not an MCP tool name of a tool_id (namespace.name[.hHASH8][.vVERSION])"
            }
        })
    }
}

/// One violation of a tool's input schema, from [`Catalog::validate_args`](crate::Catalog::validate_args).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending part of the arguments (`""` for the whole object).
    pub instance_path: String,
    /// JSON pointer to the schema keyword that failed, such as `/required`.
    pub schema_path: String,
    /// The validator's message, such as `"path" is a required property`.
    pub message: String,
}

/// What went wrong. Each variant carries its position: a byte offset into an id or a path, a
/// JSON pointer into a tool definition, a line and column in JSON text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A string is not a tool_id (§1.1). Code `CATALOG_ERROR`.
    #[error("invalid tool_id {input:?}: {problem} (at byte {offset})")]
    InvalidToolId {
        /// The input, cut to its first 256 bytes.
        input: String,
        /// Byte offset of the first offending character.
        offset: usize,
        /// The rule broken.
        problem: IdProblem,
    },
    /// A tool definition cannot become a catalog entry. Code `CATALOG_ERROR`.
    #[error("invalid tool at {pointer}: {reason}")]
    InvalidTool {
        /// JSON pointer to the offending member, such as `/tools/3/name`.
        pointer: String,
        /// The upstream tool name, when it could be read.
        upstream_name: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// Text that should be a JSON document is not. Code `CATALOG_ERROR`; the position is
    /// in [`Error::line`] and [`Error::column`].
    #[error("invalid JSON: {message}")]
    InvalidJson {
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// The parser's message.
        message: String,
    },
    /// Two upstream tools map to one tool_id (§1.5). Code `CATALOG_ERROR`.
    #[error("tool_id collision: {first:?} and {second:?} both map to {tool_id}")]
    Collision {
        /// The shared id.
        tool_id: String,
        /// The upstream name registered first.
        first: String,
        /// The upstream name registered second.
        second: String,
    },
    /// A card is over the hard cap of 80 tokens after truncation (§2.3). Code `CATALOG_ERROR`.
    #[error("card {id} is {tokens} tokens after truncation, over the hard cap of {cap}")]
    CardOverBudget {
        /// The card's id.
        id: String,
        /// Its rendered size in cl100k_base tokens.
        tokens: usize,
        /// The hard cap.
        cap: usize,
    },
    /// A browse response is over `80 × n + 32` tokens (§2.3). Code `CATALOG_ERROR`.
    #[error("browse response of {cards} cards is {tokens} tokens, over the cap of {cap}")]
    ResponseOverBudget {
        /// The rendered response's size in cl100k_base tokens.
        tokens: usize,
        /// `80 × cards + 32`.
        cap: usize,
        /// The number of cards.
        cards: usize,
    },
    /// A card field breaks §2.1 (a name over 64 characters, an empty id). Code
    /// `CATALOG_ERROR`.
    #[error("invalid card field `{field}`: {reason}")]
    InvalidCard {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A browse path breaks the grammar of §3.2. Code `PATH_INVALID`.
    #[error("invalid path {path:?}: {reason} at byte {offset}")]
    PathInvalid {
        /// The path, cut to its first 256 bytes.
        path: String,
        /// Byte offset of the offending character or segment.
        offset: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// A well-formed path addresses no node. Code `PATH_NOT_FOUND`.
    #[error("path {path:?} not found: {resolved:?} has no child {missing:?}", missing = missing_segment(path, resolved))]
    PathNotFound {
        /// The path, cut to its first 256 bytes.
        path: String,
        /// The longest prefix of the path that does resolve (`/` at least).
        resolved: String,
    },
    /// Bad arguments: `tool_browse` arguments (§3.1), or tool arguments that fail the tool's
    /// input schema (§4.4). Code `ARGS_INVALID`.
    #[error("{message}")]
    ArgsInvalid {
        /// A one-line summary.
        message: String,
        /// The argument at fault, for `tool_browse` arguments.
        field: Option<String>,
        /// Schema violations, in the validator's order.
        violations: Vec<Violation>,
    },
    /// No tool with this id. Code `HYDRATE_FAILED`.
    #[error("cannot hydrate {tool_id:?}: {reason}")]
    HydrateFailed {
        /// The requested id, cut to its first 256 bytes.
        tool_id: String,
        /// Why.
        reason: String,
    },
    /// The tool's input schema is not a valid JSON Schema. Code `SCHEMA_INVALID`.
    #[error("the input schema of {tool_id} is invalid: {message}")]
    SchemaInvalid {
        /// The tool.
        tool_id: String,
        /// The compiler's message.
        message: String,
    },
    /// The tool has an input schema but this build cannot validate against it (the crate's
    /// `schema` feature is off). Code `VALIDATION_UNAVAILABLE`.
    #[error("cannot validate the arguments of {tool_id}: this build has no JSON Schema validator (feature `schema`)")]
    ValidationUnavailable {
        /// The tool.
        tool_id: String,
    },
    /// Two tools of a catalog would have the same MCP tool name. Code `CATALOG_ERROR`.
    #[error("MCP name collision: {first} and {second} both map to {name:?}")]
    NameCollision {
        /// The shared wire name.
        name: String,
        /// The tool_id registered first.
        first: String,
        /// The tool_id registered second.
        second: String,
    },
    /// The upstream server answered the call with an error (a JSON-RPC error, or a result
    /// that cannot be read). Code `UPSTREAM_ERROR`.
    #[error("the upstream call of {tool_id} failed: {message}")]
    UpstreamError {
        /// The tool called.
        tool_id: String,
        /// The upstream server, when known.
        server: Option<String>,
        /// The JSON-RPC error code the upstream sent, if any.
        upstream_code: Option<i64>,
        /// The upstream's message.
        message: String,
    },
    /// The upstream server did not answer in time. Code `UPSTREAM_TIMEOUT`.
    #[error("the upstream call of {tool_id} timed out{}", after_ms.map(|ms| format!(" after {ms} ms")).unwrap_or_default())]
    UpstreamTimeout {
        /// The tool called.
        tool_id: String,
        /// The upstream server, when known.
        server: Option<String>,
        /// How long the runtime waited, in milliseconds.
        after_ms: Option<u64>,
    },
    /// The upstream server cannot be reached (it exited, or never started). Code
    /// `UPSTREAM_UNAVAILABLE`.
    #[error("the upstream server of {tool_id} is unavailable: {message}")]
    UpstreamUnavailable {
        /// The tool called.
        tool_id: String,
        /// The upstream server, when known.
        server: Option<String>,
        /// What happened.
        message: String,
    },
    /// `tool_view` cannot show what was asked: an unknown or evicted handle, a bad selector,
    /// a pointer that addresses nothing. Code `VIEW_FAILED`.
    #[error("cannot view {handle:?}: {reason}")]
    ViewFailed {
        /// The handle asked for, cut to its first 256 bytes.
        handle: String,
        /// The selector member at fault (`pointer`, `offset`, `limit`), if any.
        field: Option<String>,
        /// The JSON pointer that addresses nothing, if that is the problem.
        pointer: Option<String>,
        /// Why.
        reason: String,
    },
    /// A `tools/call` names no tool the gateway exposes (a proxy's stripped entries are for
    /// discovery only, §4.1). Code `UNKNOWN_TOOL`.
    #[error("no tool named {name:?}{}", tool_id.as_ref().map(|id| format!(": {id} is listed for discovery only; call tool_execute with {{\"tool_id\": \"{id}\", \"args\": {{...}}}}")).unwrap_or_default())]
    UnknownTool {
        /// The name called, cut to its first 256 bytes.
        name: String,
        /// The tool the name stands for, when it is a stripped discovery entry.
        tool_id: Option<String>,
    },
}

impl ErrorKind {
    /// The stable code of this kind (see [`Error::code`]).
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// The code of this kind as an [`ErrorCode`].
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ErrorKind::InvalidToolId { .. }
            | ErrorKind::InvalidTool { .. }
            | ErrorKind::InvalidJson { .. }
            | ErrorKind::Collision { .. }
            | ErrorKind::NameCollision { .. }
            | ErrorKind::CardOverBudget { .. }
            | ErrorKind::ResponseOverBudget { .. }
            | ErrorKind::InvalidCard { .. } => ErrorCode::Catalog,
            ErrorKind::PathInvalid { .. } => ErrorCode::PathInvalid,
            ErrorKind::PathNotFound { .. } => ErrorCode::PathNotFound,
            ErrorKind::ArgsInvalid { .. } => ErrorCode::ArgsInvalid,
            ErrorKind::HydrateFailed { .. } => ErrorCode::HydrateFailed,
            ErrorKind::SchemaInvalid { .. } => ErrorCode::SchemaInvalid,
            ErrorKind::ValidationUnavailable { .. } => ErrorCode::ValidationUnavailable,
            ErrorKind::UpstreamError { .. } => ErrorCode::UpstreamError,
            ErrorKind::UpstreamTimeout { .. } => ErrorCode::UpstreamTimeout,
            ErrorKind::UpstreamUnavailable { .. } => ErrorCode::UpstreamUnavailable,
            ErrorKind::ViewFailed { .. } => ErrorCode::ViewFailed,
            ErrorKind::UnknownTool { .. } => ErrorCode::UnknownTool,
        }
    }
}

fn missing_segment<'a>(path: &'a str, resolved: &str) -> &'a str {
    let rest = path.get(resolved.len()..).unwrap_or("");
    let rest = rest.trim_start_matches('/');
    rest.split('/').next().unwrap_or("")
}

/// Cuts untrusted text kept in an error to at most 256 bytes, on a character boundary.
pub(crate) fn clip(text: &str) -> String {
    const MAX: usize = 256;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

pub(crate) fn args_invalid(field: Option<&str>, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::ArgsInvalid {
        message: message.into(),
        field: field.map(str::to_owned),
        violations: Vec::new(),
    })
}

pub(crate) fn invalid_tool(pointer: String, upstream_name: Option<&str>, reason: String) -> Error {
    Error::new(ErrorKind::InvalidTool {
        pointer,
        upstream_name: upstream_name.map(str::to_owned),
        reason,
    })
}

/// The error of JSON text that does not parse, with serde_json's line and its byte column
/// turned into a column in characters.
pub(crate) fn invalid_json(text: &str, error: &serde_json::Error) -> Error {
    let message = error.to_string();
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    };
    let line = error.line();
    let column = text
        .split('\n')
        .nth(line.saturating_sub(1))
        .map_or(error.column(), |l| {
            let mut end = error.column().min(l.len());
            while !l.is_char_boundary(end) {
                end -= 1;
            }
            let chars = l[..end].chars().count();
            // A column inside a multi-byte character counts that character.
            if end < error.column().min(l.len()) {
                chars + 1
            } else {
                chars
            }
        });
    Error::new(ErrorKind::InvalidJson {
        // serde_json reports line 0 / column 0 for some errors at the very start or at an
        // end of input after a newline; positions are 1-based.
        line: line.max(1) as u64,
        column: column.max(1) as u64,
        message,
    })
}
