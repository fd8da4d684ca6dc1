//! The crate's error type: a kind (one per error code) and the position it applies to.

use std::fmt;
use std::io;

/// A `Result` whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A position in GCX1 text: a 1-based line and a 1-based column.
///
/// Columns count Unicode scalar values (characters), not bytes, so they match what an editor
/// shows. For decode errors the position is in the input; for encode errors it is where the
/// offending text would have appeared in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// The line, starting at 1.
    pub line: u64,
    /// The column, starting at 1, in characters.
    pub column: u64,
}

impl Position {
    /// A position from a 1-based line and column.
    pub const fn new(line: u64, column: u64) -> Self {
        Self { line, column }
    }

    /// The position of the byte at `offset` within `line_text`, which is line `line`.
    pub(crate) fn in_line(line: u64, line_text: &str, offset: usize) -> Self {
        let mut offset = offset.min(line_text.len());
        while !line_text.is_char_boundary(offset) {
            offset -= 1;
        }
        let prefix = &line_text[..offset];
        Self::new(line, prefix.chars().count() as u64 + 1)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Which part of a header an [`ErrorKind::InvalidHeader`] error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HeaderPart {
    /// The `tool=` value.
    Tool,
    /// A field name in `fields=`.
    Field,
    /// A meta key.
    MetaKey,
    /// A meta value.
    MetaValue,
}

impl fmt::Display for HeaderPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeaderPart::Tool => "tool name",
            HeaderPart::Field => "field name",
            HeaderPart::MetaKey => "meta key",
            HeaderPart::MetaValue => "meta value",
        })
    }
}

/// What went wrong. Each variant has a stable snake_case code ([`ErrorKind::code`]), which is
/// what the conformance fixtures under `conformance/gcx1/` match on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing failed (`io`).
    #[error("I/O error: {0}")]
    Io(#[source] io::Error),

    // ---- decoding: the payload's structure ----
    /// The input holds no header at all (`empty_payload`).
    #[error("the input is empty: a GCX1 payload starts with a `GCX1` header line")]
    EmptyPayload,
    /// A data row appears before any header (`missing_header`).
    #[error("expected a `GCX1` header line, found a data row")]
    MissingHeader,
    /// The payload starts with a header tag other than `GCX1`, such as `GCX2`
    /// (`unsupported_version`). Callers can fall back to JSON.
    #[error("unsupported version `{tag}`: this decoder reads GCX1")]
    UnsupportedVersion {
        /// The tag found, for example `GCX2`.
        tag: String,
    },
    /// A header token is not `key=value` (`malformed_header`).
    #[error("malformed header: `{token}` is not a key=value pair")]
    MalformedHeader {
        /// The offending token.
        token: String,
    },
    /// The header has no `tool=`, or an empty one (`missing_tool`).
    #[error("the header has no tool name (`tool=` is missing or empty)")]
    MissingTool,
    /// The header has no `fields=` (`missing_fields`).
    #[error("the header has no `fields=`")]
    MissingFields,
    /// The header declares more fields than the decoder's limit (`too_many_fields`).
    #[error("the header declares {count} fields, more than the limit of {limit}")]
    TooManyFields {
        /// Fields declared.
        count: usize,
        /// The limit ([`Limits::max_fields`](crate::Limits::max_fields)).
        limit: usize,
    },
    /// The header carries more meta pairs than the decoder's limit (`too_many_meta`).
    #[error("the header carries {count} meta pairs, more than the limit of {limit}")]
    TooManyMeta {
        /// Meta pairs present.
        count: usize,
        /// The limit ([`Limits::max_meta`](crate::Limits::max_meta)).
        limit: usize,
    },
    /// A line is longer than the decoder's limit (`line_too_long`).
    #[error("the line is longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The limit in bytes ([`Limits::max_line_length`](crate::Limits::max_line_length)).
        limit: usize,
    },
    /// Rows with missing trailing cells add up to more padding than the decoder's limit
    /// (`padding_limit`).
    #[error("rows omit more than {limit} trailing cells in total")]
    PaddingLimit {
        /// The limit ([`Limits::max_padding`](crate::Limits::max_padding)).
        limit: u64,
    },
    /// The input is not UTF-8 (`invalid_utf8`).
    #[error("the input is not valid UTF-8")]
    InvalidUtf8,
    /// A row has more cells than its header declares fields (`too_many_values`); also returned
    /// by the encoder for a row with more values than fields.
    #[error("the row has {found} values but the header declares {expected} fields")]
    TooManyValues {
        /// Fields declared.
        expected: usize,
        /// Values found.
        found: usize,
    },

    // ---- encoding ----
    /// A header name or value cannot be written so that decoders read it back
    /// (`invalid_header`).
    #[error("invalid {part} {value:?}: {reason}")]
    InvalidHeader {
        /// The part of the header.
        part: HeaderPart,
        /// The offending text.
        value: String,
        /// Why it cannot be written.
        reason: &'static str,
    },
    /// A header with no fields (`empty_field_list`).
    #[error("the header declares no fields")]
    EmptyFieldList,
    /// The same field name twice in one header (`duplicate_field`).
    #[error("field `{name}` is declared twice")]
    DuplicateField {
        /// The field name.
        name: String,
    },
    /// A meta key that would shadow `tool` or `fields` (`reserved_meta_key`), or a key a
    /// tool layout writes itself.
    #[error("meta key `{key}` is reserved")]
    ReservedMetaKey {
        /// The key.
        key: String,
    },
    /// A one-column row whose only value is empty: it would be a blank line, which every
    /// decoder skips (`empty_row`).
    #[error(
        "a one-column row cannot hold an empty value: it would be a blank line, which decoders skip"
    )]
    EmptyRow,
    /// NaN or an infinity (`non_finite_float`).
    #[error("{value} has no GCX1 form: NaN and infinities cannot be encoded")]
    NonFiniteFloat {
        /// The value.
        value: f64,
    },
    /// A number beyond what a float carries, which would read back as infinity or zero:
    /// `1e400`, `1e-400` (serde_json keeps such lexemes with `arbitrary_precision`)
    /// (`number_out_of_range`).
    #[error("the number {number} is out of range for a float: it would not read back")]
    NumberOutOfRange {
        /// The number's text.
        number: String,
    },
    /// A row or comment written while no section is open (`no_section`).
    #[error("no section is open: begin one with a header first")]
    NoSection,
    /// A serialized row's field names do not match the section's header (`field_mismatch`).
    #[error("the row's field `{found}` does not match the header's field `{expected}`")]
    FieldMismatch {
        /// The header's field at this position (empty when the row is longer).
        expected: String,
        /// The row's field.
        found: String,
    },
    /// A value nests deeper than the limit (`depth_limit`).
    #[error("the value nests deeper than {limit} levels")]
    DepthLimit {
        /// The limit.
        limit: usize,
    },

    // ---- typed decoding ----
    /// A cell does not hold what its field needs (`invalid_value`).
    #[error("field `{field}`: {message}")]
    InvalidValue {
        /// The field's name.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A header meta value is missing or malformed (`invalid_meta`).
    #[error("meta `{key}`: {message}")]
    InvalidMeta {
        /// The meta key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The payload holds a section other than the one expected (`unexpected_section`).
    #[error("expected {expected}, found {found}")]
    UnexpectedSection {
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// A section has the wrong number of rows (`row_count`).
    #[error("section `{tool}` must have {expected} row(s), found {found}")]
    RowCount {
        /// The section's tool name.
        tool: String,
        /// The expected count, for example `1` or `0 or 1`.
        expected: String,
        /// The rows found.
        found: u64,
    },
    /// A value breaks a workspace-shape rule of the spec, such as an unknown `scope`
    /// (`schema`).
    #[error("schema error: {0}")]
    Schema(String),

    // ---- serde ----
    /// A `Serialize` implementation failed or produced an unsupported shape (`serialize`).
    #[error("serialize: {0}")]
    Serialize(String),
    /// The data does not have the type or shape the target type asks for: serde's invalid
    /// type, invalid value, invalid length, missing or unknown field (`type_mismatch`).
    #[error("{0}")]
    TypeMismatch(String),
    /// A message of a `Serialize` or `Deserialize` implementation (`custom`).
    #[error("{0}")]
    Custom(String),
}

impl ErrorKind {
    /// The stable error code, such as `unsupported_version` or `too_many_values`.
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::Io(_) => "io",
            ErrorKind::EmptyPayload => "empty_payload",
            ErrorKind::MissingHeader => "missing_header",
            ErrorKind::UnsupportedVersion { .. } => "unsupported_version",
            ErrorKind::MalformedHeader { .. } => "malformed_header",
            ErrorKind::MissingTool => "missing_tool",
            ErrorKind::MissingFields => "missing_fields",
            ErrorKind::TooManyFields { .. } => "too_many_fields",
            ErrorKind::TooManyMeta { .. } => "too_many_meta",
            ErrorKind::LineTooLong { .. } => "line_too_long",
            ErrorKind::PaddingLimit { .. } => "padding_limit",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::TooManyValues { .. } => "too_many_values",
            ErrorKind::InvalidHeader { .. } => "invalid_header",
            ErrorKind::EmptyFieldList => "empty_field_list",
            ErrorKind::DuplicateField { .. } => "duplicate_field",
            ErrorKind::ReservedMetaKey { .. } => "reserved_meta_key",
            ErrorKind::EmptyRow => "empty_row",
            ErrorKind::NonFiniteFloat { .. } => "non_finite_float",
            ErrorKind::NumberOutOfRange { .. } => "number_out_of_range",
            ErrorKind::NoSection => "no_section",
            ErrorKind::FieldMismatch { .. } => "field_mismatch",
            ErrorKind::DepthLimit { .. } => "depth_limit",
            ErrorKind::InvalidValue { .. } => "invalid_value",
            ErrorKind::InvalidMeta { .. } => "invalid_meta",
            ErrorKind::UnexpectedSection { .. } => "unexpected_section",
            ErrorKind::RowCount { .. } => "row_count",
            ErrorKind::Schema(_) => "schema",
            ErrorKind::Serialize(_) => "serialize",
            ErrorKind::TypeMismatch(_) => "type_mismatch",
            ErrorKind::Custom(_) => "custom",
        }
    }
}

/// An error from encoding or decoding GCX1: an [`ErrorKind`] and, almost always, the
/// [`Position`] it applies to.
///
/// The error is one pointer wide, so `Result<T, Error>` stays small.
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    position: Option<Position>,
}

impl Error {
    /// An error of `kind` at `position`.
    pub fn new(kind: ErrorKind, position: Option<Position>) -> Self {
        Error(Box::new(Inner { kind, position }))
    }

    pub(crate) fn at(kind: ErrorKind, line: u64, column: u64) -> Self {
        Self::new(kind, Some(Position::new(line, column)))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Consumes the error, returning its kind.
    pub fn into_kind(self) -> ErrorKind {
        self.0.kind
    }

    /// The stable error code of the kind, such as `unsupported_version`.
    pub fn code(&self) -> &'static str {
        self.0.kind.code()
    }

    /// Where the error applies, when known.
    pub fn position(&self) -> Option<Position> {
        self.0.position
    }

    /// The line of [`Error::position`].
    pub fn line(&self) -> Option<u64> {
        self.0.position.map(|p| p.line)
    }

    /// The column of [`Error::position`].
    pub fn column(&self) -> Option<u64> {
        self.0.position.map(|p| p.column)
    }

    /// The human text of the error, without its code or position.
    pub fn message(&self) -> String {
        self.0.kind.to_string()
    }

    /// Whether reading or writing failed, as opposed to bad data.
    pub fn is_io(&self) -> bool {
        matches!(self.0.kind, ErrorKind::Io(_))
    }

    /// Whether the payload is GCX but of another version (`GCX2`, ...), the cue to fall back
    /// to JSON.
    pub fn is_unsupported_version(&self) -> bool {
        matches!(self.0.kind, ErrorKind::UnsupportedVersion { .. })
    }

    /// Sets the position if the error has none yet.
    pub(crate) fn or_position(mut self, position: Position) -> Self {
        if self.0.position.is_none() {
            self.0.position = Some(position);
        }
        self
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("position", &self.0.position)
            .finish()
    }
}

/// `code at line L, column C: message` (docs/errors.md): the code first, then the position
/// when known, then the message.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())?;
        if let Some(position) = self.0.position {
            write!(f, " at {position}")?;
        }
        write!(f, ": {}", self.0.kind)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind, None)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::new(ErrorKind::Io(e), None)
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> Self {
        match e.0.kind {
            ErrorKind::Io(io) => io,
            _ => io::Error::new(io::ErrorKind::InvalidData, e),
        }
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ErrorKind::Custom(msg.to_string()).into()
    }
}

/// Whether a serde message reports a type or shape mismatch (serde's own wording).
fn is_mismatch(message: &str) -> bool {
    [
        "invalid type",
        "invalid value",
        "invalid length",
        "missing field",
        "unknown field",
        "unknown variant",
        "duplicate field",
    ]
    .iter()
    .any(|prefix| message.starts_with(prefix))
}

/// A message from serde or a `Deserialize` implementation: `type_mismatch` when it is serde's
/// report of a type or shape mismatch, `custom` otherwise.
pub(crate) fn serde_message(message: String) -> Error {
    if is_mismatch(&message) {
        ErrorKind::TypeMismatch(message).into()
    } else {
        ErrorKind::Custom(message).into()
    }
}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        serde_message(msg.to_string())
    }

    fn invalid_type(
        unexpected: serde::de::Unexpected<'_>,
        expected: &dyn serde::de::Expected,
    ) -> Self {
        ErrorKind::TypeMismatch(format!("invalid type: {unexpected}, expected {expected}")).into()
    }

    fn invalid_value(
        unexpected: serde::de::Unexpected<'_>,
        expected: &dyn serde::de::Expected,
    ) -> Self {
        ErrorKind::TypeMismatch(format!("invalid value: {unexpected}, expected {expected}")).into()
    }

    fn invalid_length(len: usize, expected: &dyn serde::de::Expected) -> Self {
        ErrorKind::TypeMismatch(format!("invalid length {len}, expected {expected}")).into()
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        ErrorKind::TypeMismatch(format!(
            "unknown variant `{variant}`, expected one of {expected:?}"
        ))
        .into()
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        ErrorKind::TypeMismatch(format!(
            "unknown field `{field}`, expected one of {expected:?}"
        ))
        .into()
    }

    fn missing_field(field: &'static str) -> Self {
        ErrorKind::TypeMismatch(format!("missing field `{field}`")).into()
    }

    fn duplicate_field(field: &'static str) -> Self {
        ErrorKind::TypeMismatch(format!("duplicate field `{field}`")).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer() {
        assert_eq!(size_of::<Error>(), size_of::<usize>());
    }

    #[test]
    fn display_and_code() {
        let e = Error::at(ErrorKind::UnsupportedVersion { tag: "GCX2".into() }, 1, 1);
        assert_eq!(e.code(), "unsupported_version");
        assert!(e.is_unsupported_version());
        assert_eq!(
            e.to_string(),
            "unsupported_version at line 1, column 1: unsupported version `GCX2`: this decoder reads GCX1"
        );
        let e = Error::new(ErrorKind::EmptyRow, None);
        assert!(e.to_string().starts_with("empty_row: a one-column row"));
        assert_eq!(e.message(), ErrorKind::EmptyRow.to_string());
    }

    #[test]
    fn column_counts_characters() {
        assert_eq!(Position::in_line(3, "héllo\tx", 7), Position::new(3, 7));
        assert_eq!(Position::in_line(3, "abc", 0), Position::new(3, 1));
    }
}
