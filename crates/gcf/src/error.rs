//! The crate's one error type: a kind that maps 1:1 to the spec's error codes, a message, and
//! the position (line and column) of the offending input.

use std::fmt;
use std::io;

/// A `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong. Each variant maps to one error code ([`ErrorKind::code`]): the codes of the
/// GCF v3.1 specification (§16.5) and of its `errors-v2` conformance fixtures, `out_of_range`
/// from spec v3.5.3, and a few of this crate's own for conditions the spec does not name.
///
/// The enum is `#[non_exhaustive]`: new codes may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    // --- Header (spec §3, §16.5) ---
    /// `missing_header`: the input is empty or its first line does not start with `GCF `.
    MissingHeader,
    /// `missing_profile`: the header has no `profile=` field, or it is not the first field.
    MissingProfile,
    /// `unknown_profile`: `profile` is neither `generic` nor `graph`.
    UnknownProfile,
    /// `missing_tool`: a graph header without `tool=`. Listed in the v3.1 strict-mode table but
    /// contradicted by §3.2 (where `tool` is optional); the v3.1 decoders never raise it.
    MissingTool,
    /// `malformed_header_field`: a header (or trailer) token that is not `key=value` with a
    /// bare key and a printable, non-space ASCII value.
    MalformedHeaderField,
    /// `duplicate_header_field`: a header (or trailer) key appears twice.
    DuplicateHeaderField,

    // --- Scalars (spec §2) ---
    /// `unterminated_quote`: a quoted string without its closing `"`.
    UnterminatedQuote,
    /// `invalid_escape`: an escape outside the JSON set, or a raw control character inside
    /// quotes.
    InvalidEscape,
    /// `trailing_characters`: characters after the closing quote of a quoted scalar or key.
    TrailingCharacters,
    /// `invalid_missing`: the missing marker `~` outside a tabular row cell.
    InvalidMissing,
    /// `invalid_attachment_marker`: `^` or `^{fields}` outside a tabular row cell, or a
    /// malformed inline field declaration.
    InvalidAttachmentMarker,
    /// `invalid_surrogate`: an isolated or malformed `\u` surrogate escape, or a literal
    /// surrogate in the input bytes.
    InvalidSurrogate,
    /// `invalid_utf8`: the input is not valid UTF-8.
    InvalidUtf8,

    // --- Structure (spec §2a, §4, §7, §13) ---
    /// `duplicate_key`: the same key twice in one object.
    DuplicateKey,
    /// `duplicate_field_name`: the same name twice in one field declaration.
    DuplicateFieldName,
    /// `row_width_mismatch`: a tabular row whose cell count differs from its field count.
    RowWidthMismatch,
    /// `count_mismatch`: a declared `[N]` (or a trailer's `counts` entry, or their number)
    /// differs from the actual number of items.
    CountMismatch,
    /// `invalid_count`: a count bracket that is not `0`, a decimal without leading zeros, or `?`.
    InvalidCount,
    /// `tab_indentation`: a tab character in leading whitespace.
    TabIndentation,
    /// `invalid_indent`: indentation that is not a multiple of two spaces, jumps by more than
    /// one level, or deepens where nothing opens a block.
    InvalidIndent,
    /// `invalid_item_id`: an `@N` that is not the item's zero-based index.
    InvalidItemId,
    /// `orphan_attachment`: a `.field` attachment without a row that owns a matching `^` cell.
    OrphanAttachment,
    /// `orphan_inline_attachment`: a positional inline body without an eligible marker cell.
    OrphanInlineAttachment,
    /// `missing_attachment`: an attachment marker cell without a body.
    MissingAttachment,
    /// `duplicate_attachment`: a second body for the same marker cell.
    DuplicateAttachment,
    /// `inline_width_mismatch`: a positional inline body whose value count differs from its
    /// inline schema.
    InlineWidthMismatch,

    // --- Keyed maps, constant columns, value-grouping (spec v3.5 §7.2a, v3.6) ---
    /// `invalid_keyed_map`: a keyed-map header `[N:]` with fewer than two fields, or a row
    /// whose member key is not a string. (A zero count `[0:]` is `invalid_count`, a repeated
    /// member key `duplicate_key`.)
    InvalidKeyedMap,
    /// `invalid_const_value`: a constant column (`name=value` in a field declaration) whose
    /// value is empty, `~` or an attachment marker.
    InvalidConstValue,
    /// `no_bare_column`: every field of a table is a constant column, so rows carry nothing.
    NoBareColumn,
    /// `invalid_group_header`: a malformed `group=` clause or group sub-header
    /// (`column=value [count]`), a group column that is undeclared, constant or the identity
    /// column, a grouped table without one identity column `@name`, or a grouped row with an
    /// attachment.
    InvalidGroupHeader,
    /// `duplicate_group`: two sub-headers of one grouped table name the same value.
    DuplicateGroup,

    // --- Graph profile (spec §5, §6, §10) ---
    /// `invalid_node_line`: a symbol line without exactly five positional fields.
    InvalidNodeLine,
    /// `invalid_symbol_id`: `@` followed by something other than a decimal integer.
    InvalidSymbolId,
    /// `invalid_score`: a score that does not match `[-]DIGITS.2DIGIT`.
    InvalidScore,
    /// `invalid_edge_syntax`: an edge line without the `<` separator.
    InvalidEdgeSyntax,
    /// `unknown_edge_reference`: an edge that references an undeclared symbol id.
    UnknownEdgeReference,
    /// `malformed_delta`: a delta payload with an unknown section or a line form invalid for
    /// its section.
    MalformedDelta,
    /// `root_mismatch`: a delta's `base_root` or recomputed `new_root` does not match.
    RootMismatch,
    /// `duplicate_symbol`: a graph payload declares one symbol id, or one symbol identity
    /// (kind and qualified name, spec §9.1), twice; or a session payload binds an id to another
    /// symbol than earlier payloads did.
    DuplicateSymbol,
    /// `unresolved_reference`: a bare session reference (`@N  # previously transmitted`) to an
    /// id that no earlier payload of the session declared (spec §9.4), or a reference in a
    /// payload decoded without a session.
    UnresolvedReference,

    // --- Numbers (spec §2.3.2; code from spec v3.5.3) ---
    /// `out_of_range`: a number that cannot be represented exactly in the decoder's numeric
    /// domain (and would otherwise be silently approximated), or an exponent too large to
    /// handle.
    OutOfRange,

    // --- This crate's own codes ---
    /// `invalid_number`: a value that is not a JSON number: NaN or an infinity on encode, or
    /// a number lexeme that does not match the JSON number grammar.
    InvalidNumber,
    /// `invalid_key`: a key that is neither a bare key (`[A-Za-z_][A-Za-z0-9_]*`) nor a quoted
    /// string, or (on encode) a map key that is not a string, integer, `bool` or `char`.
    InvalidKey,
    /// `invalid_line`: a line that is not valid where it appears (no production of the grammar
    /// starts like it).
    InvalidLine,
    /// `profile_mismatch`: a well-formed header of the other profile (for example a graph
    /// payload given to the generic decoder), or a graph delta or `unchanged=true` reply given
    /// to the full-graph decoder.
    ProfileMismatch,
    /// `truncated_input`: the input ends early: a deferred `[?]` section without its
    /// `##! summary` trailer (see [`DecoderOptions::require_trailer`]).
    ///
    /// [`DecoderOptions::require_trailer`]: crate::DecoderOptions::require_trailer
    TruncatedInput,
    /// `not_a_table` (ours): a [`RowReader`] was given a payload that is not a single table
    /// (another member beside it, a keyed map, an expanded list, a value-grouped table, a
    /// scalar or object root); read such payloads whole with `from_reader`.
    ///
    /// [`RowReader`]: crate::RowReader
    NotATable,
    /// `limit_exceeded`: the input exceeds one of the configured [`Limit`]s.
    LimitExceeded(Limit),
    /// `unsupported_value`: a value the encoder cannot represent, or an encoder API used out of
    /// order (for example a row written to a finished table).
    UnsupportedValue,
    /// `type_mismatch`: the input is valid GCF but does not fit the target type: serde's
    /// `invalid type: string "x", expected u32`, a value out of the type's range, a missing or
    /// unknown struct field, an object or array with more members than the type reads.
    TypeMismatch,
    /// `custom`: a message a `Serialize` or `Deserialize` implementation wrote itself
    /// (`serde::de::Error::custom`).
    Custom,
    /// `io`: reading or writing failed; [`std::error::Error::source`] holds the I/O error.
    Io,
}

/// The limit an input exceeded ([`ErrorKind::LimitExceeded`]); see [`Limits`].
///
/// [`Limits`]: crate::Limits
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Nesting depth of objects and arrays.
    Depth,
    /// Bytes in one line.
    LineLength,
    /// Items of one array or members of one object, declared or actual.
    Elements,
    /// Fields of one tabular field declaration or inline schema.
    Fields,
    /// Bytes of the whole input.
    InputSize,
}

impl Limit {
    /// A short name (`depth`, `line length`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Limit::Depth => "depth",
            Limit::LineLength => "line length",
            Limit::Elements => "elements",
            Limit::Fields => "fields",
            Limit::InputSize => "input size",
        }
    }
}

impl ErrorKind {
    /// The error code: the spec's snake_case name (`count_mismatch`), which fixture runners
    /// match on.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::MissingHeader => "missing_header",
            ErrorKind::MissingProfile => "missing_profile",
            ErrorKind::UnknownProfile => "unknown_profile",
            ErrorKind::MissingTool => "missing_tool",
            ErrorKind::MalformedHeaderField => "malformed_header_field",
            ErrorKind::DuplicateHeaderField => "duplicate_header_field",
            ErrorKind::UnterminatedQuote => "unterminated_quote",
            ErrorKind::InvalidEscape => "invalid_escape",
            ErrorKind::TrailingCharacters => "trailing_characters",
            ErrorKind::InvalidMissing => "invalid_missing",
            ErrorKind::InvalidAttachmentMarker => "invalid_attachment_marker",
            ErrorKind::InvalidSurrogate => "invalid_surrogate",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::DuplicateKey => "duplicate_key",
            ErrorKind::DuplicateFieldName => "duplicate_field_name",
            ErrorKind::RowWidthMismatch => "row_width_mismatch",
            ErrorKind::CountMismatch => "count_mismatch",
            ErrorKind::InvalidCount => "invalid_count",
            ErrorKind::TabIndentation => "tab_indentation",
            ErrorKind::InvalidIndent => "invalid_indent",
            ErrorKind::InvalidItemId => "invalid_item_id",
            ErrorKind::OrphanAttachment => "orphan_attachment",
            ErrorKind::OrphanInlineAttachment => "orphan_inline_attachment",
            ErrorKind::MissingAttachment => "missing_attachment",
            ErrorKind::DuplicateAttachment => "duplicate_attachment",
            ErrorKind::InlineWidthMismatch => "inline_width_mismatch",
            ErrorKind::InvalidKeyedMap => "invalid_keyed_map",
            ErrorKind::InvalidConstValue => "invalid_const_value",
            ErrorKind::NoBareColumn => "no_bare_column",
            ErrorKind::InvalidGroupHeader => "invalid_group_header",
            ErrorKind::DuplicateGroup => "duplicate_group",
            ErrorKind::InvalidNodeLine => "invalid_node_line",
            ErrorKind::InvalidSymbolId => "invalid_symbol_id",
            ErrorKind::InvalidScore => "invalid_score",
            ErrorKind::InvalidEdgeSyntax => "invalid_edge_syntax",
            ErrorKind::UnknownEdgeReference => "unknown_edge_reference",
            ErrorKind::MalformedDelta => "malformed_delta",
            ErrorKind::RootMismatch => "root_mismatch",
            ErrorKind::DuplicateSymbol => "duplicate_symbol",
            ErrorKind::UnresolvedReference => "unresolved_reference",
            ErrorKind::OutOfRange => "out_of_range",
            ErrorKind::InvalidNumber => "invalid_number",
            ErrorKind::InvalidKey => "invalid_key",
            ErrorKind::InvalidLine => "invalid_line",
            ErrorKind::ProfileMismatch => "profile_mismatch",
            ErrorKind::TruncatedInput => "truncated_input",
            ErrorKind::NotATable => "not_a_table",
            ErrorKind::LimitExceeded(_) => "limit_exceeded",
            ErrorKind::UnsupportedValue => "unsupported_value",
            ErrorKind::TypeMismatch => "type_mismatch",
            ErrorKind::Custom => "custom",
            ErrorKind::Io => "io",
        }
    }

    /// Every kind, for tables and tests (each [`Limit`] once).
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::MissingHeader,
        ErrorKind::MissingProfile,
        ErrorKind::UnknownProfile,
        ErrorKind::MissingTool,
        ErrorKind::MalformedHeaderField,
        ErrorKind::DuplicateHeaderField,
        ErrorKind::UnterminatedQuote,
        ErrorKind::InvalidEscape,
        ErrorKind::TrailingCharacters,
        ErrorKind::InvalidMissing,
        ErrorKind::InvalidAttachmentMarker,
        ErrorKind::InvalidSurrogate,
        ErrorKind::InvalidUtf8,
        ErrorKind::DuplicateKey,
        ErrorKind::DuplicateFieldName,
        ErrorKind::RowWidthMismatch,
        ErrorKind::CountMismatch,
        ErrorKind::InvalidCount,
        ErrorKind::TabIndentation,
        ErrorKind::InvalidIndent,
        ErrorKind::InvalidItemId,
        ErrorKind::OrphanAttachment,
        ErrorKind::OrphanInlineAttachment,
        ErrorKind::MissingAttachment,
        ErrorKind::DuplicateAttachment,
        ErrorKind::InlineWidthMismatch,
        ErrorKind::InvalidKeyedMap,
        ErrorKind::InvalidConstValue,
        ErrorKind::NoBareColumn,
        ErrorKind::InvalidGroupHeader,
        ErrorKind::DuplicateGroup,
        ErrorKind::InvalidNodeLine,
        ErrorKind::InvalidSymbolId,
        ErrorKind::InvalidScore,
        ErrorKind::InvalidEdgeSyntax,
        ErrorKind::UnknownEdgeReference,
        ErrorKind::MalformedDelta,
        ErrorKind::RootMismatch,
        ErrorKind::DuplicateSymbol,
        ErrorKind::UnresolvedReference,
        ErrorKind::OutOfRange,
        ErrorKind::InvalidNumber,
        ErrorKind::InvalidKey,
        ErrorKind::InvalidLine,
        ErrorKind::ProfileMismatch,
        ErrorKind::TruncatedInput,
        ErrorKind::NotATable,
        ErrorKind::LimitExceeded(Limit::Depth),
        ErrorKind::LimitExceeded(Limit::LineLength),
        ErrorKind::LimitExceeded(Limit::Elements),
        ErrorKind::LimitExceeded(Limit::Fields),
        ErrorKind::LimitExceeded(Limit::InputSize),
        ErrorKind::UnsupportedValue,
        ErrorKind::TypeMismatch,
        ErrorKind::Custom,
        ErrorKind::Io,
    ];

    /// The kind whose [`code`](ErrorKind::code) is `code` (`limit_exceeded` gives
    /// [`Limit::Depth`]).
    pub fn from_code(code: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.iter().copied().find(|k| k.code() == code)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A position in the input: 1-based line, and 1-based column counted in characters (Unicode
/// scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// The line, from 1 (the header line).
    pub line: u64,
    /// The column, from 1, in Unicode scalar values.
    pub column: u64,
}

impl Position {
    /// The position at `line` and `column` (both from 1), from the decoder's own counters.
    #[inline]
    pub(crate) fn new(line: usize, column: usize) -> Self {
        Position {
            line: line as u64,
            column: column as u64,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// An encoding or decoding error: its [`ErrorKind`] (and so its stable code), a message, and,
/// for decoding errors, the line and column in the input.
///
/// It displays as `code at line L, column C: message` (`code at line L: message` when only
/// the line is known, `code: message` without a position), the shape every agentwire library
/// shares (docs/errors.md). The error is one pointer wide.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<ErrorImpl>);

#[derive(Debug, thiserror::Error)]
#[error("{kind}{}: {message}", PositionText(*.line, *.column))]
struct ErrorImpl {
    kind: ErrorKind,
    message: String,
    line: Option<u64>,
    column: Option<u64>,
    #[source]
    source: Option<io::Error>,
}

/// ` at line L, column C`, ` at line L`, or nothing.
struct PositionText(Option<u64>, Option<u64>);

impl fmt::Display for PositionText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0, self.1) {
            (Some(line), Some(column)) => write!(f, " at line {line}, column {column}"),
            (Some(line), None) => write!(f, " at line {line}"),
            _ => Ok(()),
        }
    }
}

impl Error {
    /// An error without a position.
    #[cold]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(ErrorImpl {
            kind,
            message: message.into(),
            line: None,
            column: None,
            source: None,
        }))
    }

    /// An error at `line` and `column` (both from 1; the column in characters).
    #[cold]
    pub fn at(kind: ErrorKind, line: u64, column: u64, message: impl Into<String>) -> Self {
        Error::new(kind, message).with_position(Position { line, column })
    }

    /// An error at `line` and `column` as the decoder counts them.
    #[cold]
    pub(crate) fn at_line(
        kind: ErrorKind,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> Self {
        Error::new(kind, message).with_position(Position::new(line, column))
    }

    /// An I/O error.
    #[cold]
    pub fn io(error: io::Error) -> Self {
        Error(Box::new(ErrorImpl {
            kind: ErrorKind::Io,
            message: error.to_string(),
            line: None,
            column: None,
            source: Some(error),
        }))
    }

    /// Sets the position (replacing any).
    #[must_use]
    pub fn with_position(mut self, position: Position) -> Self {
        self.0.line = Some(position.line);
        self.0.column = Some(position.column);
        self
    }

    /// Sets the line only (replacing any position): for errors that know their line but not
    /// the column.
    #[must_use]
    pub fn with_line(mut self, line: u64) -> Self {
        self.0.line = Some(line);
        self.0.column = None;
        self
    }

    /// Sets the position unless the error has one already.
    #[must_use]
    #[allow(dead_code)]
    #[cold]
    #[inline(never)]
    pub(crate) fn or_position(self, position: impl FnOnce() -> Position) -> Self {
        if self.0.line.is_some() {
            self
        } else {
            let position = position();
            self.with_position(position)
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The error code, [`ErrorKind::code`] of [`Error::kind`].
    pub fn code(&self) -> &'static str {
        self.0.kind.code()
    }

    /// The message, without code or position.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Where in the input, when both the line and the column are known.
    pub fn position(&self) -> Option<Position> {
        match (self.0.line, self.0.column) {
            (Some(line), Some(column)) => Some(Position { line, column }),
            _ => None,
        }
    }

    /// The 1-based line of the offending input; `None` when the error has no position (I/O,
    /// options, an encoder refusing a value).
    pub fn line(&self) -> Option<u64> {
        self.0.line
    }

    /// The 1-based column (in Unicode scalar values) of the offending input; `None` when it is
    /// not known.
    pub fn column(&self) -> Option<u64> {
        self.0.column
    }

    /// Whether the error came from reading or writing.
    pub fn is_io(&self) -> bool {
        self.0.kind == ErrorKind::Io
    }
}

impl From<io::Error> for Error {
    fn from(error: io::Error) -> Self {
        Error::io(error)
    }
}

impl From<Error> for io::Error {
    fn from(error: Error) -> Self {
        if error.is_io() {
            if let Some(source) = error.0.source {
                return source;
            }
        }
        let kind = match error.kind() {
            ErrorKind::TruncatedInput => io::ErrorKind::UnexpectedEof,
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, error)
    }
}

impl serde::ser::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Custom, msg.to_string())
    }
}

/// serde's own errors (a value of the wrong type or out of a type's range, a missing or unknown
/// field, a wrong length) are `type_mismatch`; `custom` is left for the messages a
/// `Deserialize` implementation writes itself. The decoder adds the position of the value
/// being read.
impl serde::de::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Custom, msg.to_string())
    }

    #[cold]
    fn invalid_type(unexp: serde::de::Unexpected<'_>, exp: &dyn serde::de::Expected) -> Self {
        Error::new(
            ErrorKind::TypeMismatch,
            format!("invalid type: {unexp}, expected {exp}"),
        )
    }

    #[cold]
    fn invalid_value(unexp: serde::de::Unexpected<'_>, exp: &dyn serde::de::Expected) -> Self {
        Error::new(
            ErrorKind::TypeMismatch,
            format!("invalid value: {unexp}, expected {exp}"),
        )
    }

    #[cold]
    fn invalid_length(len: usize, exp: &dyn serde::de::Expected) -> Self {
        Error::new(
            ErrorKind::TypeMismatch,
            format!("invalid length {len}, expected {exp}"),
        )
    }

    #[cold]
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Error::new(
            ErrorKind::TypeMismatch,
            format!("unknown variant `{variant}`, expected one of {expected:?}"),
        )
    }

    #[cold]
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Error::new(
            ErrorKind::TypeMismatch,
            format!("unknown field `{field}`, expected one of {expected:?}"),
        )
    }

    #[cold]
    fn missing_field(field: &'static str) -> Self {
        Error::new(ErrorKind::TypeMismatch, format!("missing field `{field}`"))
    }

    #[cold]
    fn duplicate_field(field: &'static str) -> Self {
        Error::new(
            ErrorKind::TypeMismatch,
            format!("duplicate field `{field}`"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            let code = kind.code();
            assert!(code
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit()));
            if !matches!(kind, ErrorKind::LimitExceeded(_)) {
                assert!(seen.insert(code), "{code} twice");
                assert_eq!(ErrorKind::from_code(code), Some(*kind));
            }
        }
        assert_eq!(ErrorKind::from_code("nope"), None);
    }

    #[test]
    fn every_spec_code_has_a_kind() {
        // §16.5 of the v3.1 spec plus the codes of the errors-v2 fixtures.
        for code in [
            "missing_header",
            "missing_profile",
            "unknown_profile",
            "malformed_header_field",
            "duplicate_header_field",
            "unterminated_quote",
            "invalid_escape",
            "trailing_characters",
            "invalid_missing",
            "invalid_attachment_marker",
            "invalid_surrogate",
            "invalid_utf8",
            "duplicate_key",
            "duplicate_field_name",
            "row_width_mismatch",
            "count_mismatch",
            "invalid_count",
            "tab_indentation",
            "invalid_indent",
            "invalid_item_id",
            "orphan_attachment",
            "orphan_inline_attachment",
            "missing_attachment",
            "duplicate_attachment",
            "inline_width_mismatch",
            "invalid_node_line",
            "invalid_symbol_id",
            "invalid_score",
            "invalid_edge_syntax",
            "unknown_edge_reference",
            "malformed_delta",
            "root_mismatch",
        ] {
            assert!(ErrorKind::from_code(code).is_some(), "{code}");
        }
    }

    #[test]
    fn display_is_code_position_message() {
        let e = Error::at(ErrorKind::CountMismatch, 3, 7, "declared 3 rows, found 2");
        assert_eq!(
            e.to_string(),
            "count_mismatch at line 3, column 7: declared 3 rows, found 2"
        );
        assert_eq!((e.line(), e.column()), (Some(3), Some(7)));
        assert_eq!(e.position(), Some(Position { line: 3, column: 7 }));
        let e = Error::new(ErrorKind::TruncatedInput, "no trailer").with_line(9);
        assert_eq!(e.to_string(), "truncated_input at line 9: no trailer");
        assert_eq!((e.line(), e.column(), e.position()), (Some(9), None, None));
        let e = Error::new(ErrorKind::InvalidNumber, "NaN is not a JSON number");
        assert_eq!(e.to_string(), "invalid_number: NaN is not a JSON number");
        assert_eq!((e.line(), e.column(), e.position()), (None, None, None));
        assert_eq!(size_of::<Error>(), size_of::<usize>());
    }

    #[test]
    fn io_errors_keep_their_source() {
        let e = Error::io(io::Error::new(io::ErrorKind::BrokenPipe, "pipe"));
        assert!(e.is_io());
        assert!(std::error::Error::source(&e).is_some());
        let back: io::Error = e.into();
        assert_eq!(back.kind(), io::ErrorKind::BrokenPipe);
        let data: io::Error = Error::new(ErrorKind::InvalidLine, "x").into();
        assert_eq!(data.kind(), io::ErrorKind::InvalidData);
    }
}
