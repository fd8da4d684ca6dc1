//! The value codec: any JSON value as a GCX1 payload, written the way that costs the fewest
//! tokens while reading back exactly ([`encode_any`]), and any GCX1 payload, ours or Gortex's,
//! read back into the JSON response it was made from ([`decode_any`]).
//!
//! docs/gcx1.md section 3 is the full description; in short:
//!
//! - a section's rows are an array of objects (one per row), a `fields=value` section's rows
//!   an array of scalars; one row without `rows=` meta is one object (or one scalar);
//! - an object holding arrays of objects (`{results: [...], total, truncated}`,
//!   `{nodes: [...], edges: [...]}`) is a *wrapper*: each array is a section `tool.key`,
//!   scalar members ride in the first header's meta, anything else in one row of a section
//!   named like the tool;
//! - cells and meta values without type letters read as what they look like (`42` a number,
//!   `true` a boolean, `[...]` JSON), or as the column's type where the crate knows the tool
//!   (Gortex's `line` is an integer, `sig` text); a `types=` meta, one letter per field, spells
//!   out the columns where that reading would be wrong.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::decoder::{Decoder, Limits, Row, SectionSource, StrDecoder};
use crate::encoder::{Cell, CellWriter, Encoder};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::escape::{
    escape_first_into, escape_first_marked, escape_into, escape_marked, push_bytes, unescape,
};
use crate::header::Header;
use crate::json::{
    arbitrary_precision, owned, parse_json, parse_json_cell, write_json_cell_text, write_number,
    write_string,
};
use crate::schema::{self, Holds, Kind, Tool};

/// The meta key carrying one type letter per field.
pub const TYPES_META: &str = "types";
/// The meta key naming a section's shape where the rest of the header leaves it ambiguous.
pub const SHAPE_META: &str = "shape";
/// The meta key counting the rows of an array.
pub const ROWS_META: &str = "rows";
/// The tool name payloads are written under when the options name none.
pub const DEFAULT_TOOL: &str = "response";

/// Arrays of scalars at least this long get a section of their own inside a wrapper;
/// shorter ones ride as a JSON cell (a section header costs about as much as a few items).
const LIST_SECTION_MIN: usize = 4;

// ---------------------------------------------------------------------------------------
// Options

/// Options of the serde and value layers, with a serde_json-like API: build once, then
/// [`to_string`](Options::to_string), [`from_str`](Options::from_str), ...
///
/// ```
/// use agentwire_gcx1::{Limits, Options};
/// use serde_json::json;
///
/// let options = Options::new().tool("search_symbols");
/// let response = json!({"results": [{"id": "a.go::F", "line": 3}, {"id": "b.go::G", "line": 9}],
///                       "total": 7, "truncated": true});
/// let text = options.to_string(&response)?;
/// assert_eq!(
///     text,
///     "GCX1 tool=search_symbols fields=id,line total=7 truncated=true\na.go::F\t3\nb.go::G\t9\n"
/// );
/// let back: serde_json::Value = options.limits(Limits::default()).from_str(&text)?;
/// assert_eq!(back, response);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    tool: Cow<'static, str>,
    limits: Limits,
    comments: bool,
    layout_columns: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tool: Cow::Borrowed(DEFAULT_TOOL),
            limits: Limits::default(),
            comments: false,
            layout_columns: false,
        }
    }
}

/// A decoded payload: the tool that wrote it and the value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Payload {
    /// The tool name (for a wrapper, the name its sections share: `get_callers` for
    /// `get_callers.nodes` and `get_callers.edges`).
    pub tool: String,
    /// The value.
    pub value: Value,
}

impl Options {
    /// The defaults: tool [`DEFAULT_TOOL`], default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool name payloads are written under. Tools the crate knows (Gortex's
    /// `search_symbols`, `get_callers`, ...) are written in Gortex's column order, and their
    /// columns' types need no type letters.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        self.tool = Cow::Owned(name.into());
        self
    }

    /// The limits: decoders enforce them, and encoders refuse to write what a decoder with
    /// the same limits would refuse (a line too long, too many fields or meta pairs).
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The tool name set by [`Options::tool`].
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The limits set by [`Options::limits`].
    pub fn get_limits(&self) -> Limits {
        self.limits
    }

    /// Tool layouts: Gortex's comments (`# N result(s)`) and every column of the tool's
    /// section, even where no row has a value.
    pub(crate) fn layout(mut self) -> Self {
        self.comments = true;
        self.layout_columns = true;
        self
    }

    // ---- encoding

    /// Encodes any JSON value (see the module documentation for how).
    pub fn encode_any(&self, value: &Value) -> Result<String> {
        let mut encoder = Encoder::in_memory(self.limits);
        Writer::new(self).write(&mut encoder, value)?;
        encoder.into_text()
    }

    /// [`Options::encode_any`] to a writer.
    pub fn encode_any_to_writer<W: Write>(&self, writer: W, value: &Value) -> Result<()> {
        encode_value(writer, self, value)
    }

    /// Serializes `value` (any `Serialize` type: it goes through a JSON value) as GCX1 text.
    /// NaN and infinities are an error (serde_json would write `null`).
    pub fn to_string<T: Serialize + ?Sized>(&self, value: &T) -> Result<String> {
        match as_value(value) {
            Some(value) => self.encode_any(value),
            None => self.encode_any(&crate::ser::to_value(value)?),
        }
    }

    /// [`Options::to_string`] as bytes.
    pub fn to_vec<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.to_writer(&mut out, value)?;
        Ok(out)
    }

    /// [`Options::to_string`] to a writer.
    pub fn to_writer<W: Write, T: Serialize + ?Sized>(&self, writer: W, value: &T) -> Result<()> {
        match as_value(value) {
            Some(value) => encode_value(writer, self, value),
            None => encode_value(writer, self, &crate::ser::to_value(value)?),
        }
    }

    // ---- decoding

    /// Decodes a payload into the JSON value it was written from.
    pub fn decode_any(&self, input: &str) -> Result<Value> {
        self.decode_payload(input).map(|p| p.value)
    }

    /// Decodes a payload: its tool name and value.
    pub fn decode_payload(&self, input: &str) -> Result<Payload> {
        let decoded = decode_source(
            &mut StrDecoder::with_limits(input, self.limits),
            Keep::Values,
        )?;
        Ok(Payload {
            tool: decoded.tool,
            value: decoded.value,
        })
    }

    /// Decodes a payload from a reader, one line in memory at a time (plus the value being
    /// built).
    pub fn read_payload<R: Read>(&self, reader: R) -> Result<Payload> {
        let mut decoder = Decoder::with_limits(BufReader::new(reader), self.limits);
        let decoded = decode_source(&mut decoder, Keep::Values)?;
        Ok(Payload {
            tool: decoded.tool,
            value: decoded.value,
        })
    }

    /// Checks that `reader` holds a payload [`Options::read_payload`] accepts, without
    /// building the value: memory stays bounded by the longest line.
    pub fn validate<R: Read>(&self, reader: R) -> Result<()> {
        let mut decoder = Decoder::with_limits(BufReader::new(reader), self.limits);
        decode_source(&mut decoder, Keep::Validate).map(drop)
    }

    /// Deserializes a payload into `T` (through the JSON value it decodes to). A row that `T`
    /// rejects is reported at its line.
    pub fn from_str<T: DeserializeOwned>(&self, input: &str) -> Result<T> {
        let decoded = decode_source(
            &mut StrDecoder::with_limits(input, self.limits),
            Keep::Values,
        )?;
        decoded.into_typed()
    }

    /// [`Options::from_str`] from bytes, which must be UTF-8.
    pub fn from_slice<T: DeserializeOwned>(&self, input: &[u8]) -> Result<T> {
        let text = std::str::from_utf8(input).map_err(|e| {
            let valid = &input[..e.valid_up_to()];
            let line = 1 + memchr::memchr_iter(b'\n', valid).count() as u64;
            let start = memchr::memrchr(b'\n', valid).map_or(0, |i| i + 1);
            let prefix = std::str::from_utf8(&valid[start..]).unwrap_or("");
            Error::new(
                ErrorKind::InvalidUtf8,
                Some(Position::in_line(line, prefix, prefix.len())),
            )
        })?;
        self.from_str(text)
    }

    /// [`Options::from_str`] from a reader, one line in memory at a time (plus the value).
    pub fn from_reader<R: Read, T: DeserializeOwned>(&self, reader: R) -> Result<T> {
        let mut decoder = Decoder::with_limits(BufReader::new(reader), self.limits);
        decode_source(&mut decoder, Keep::Values)?.into_typed()
    }

    /// [`Options::from_reader`] from a buffered reader, without another buffer.
    pub fn from_buf_reader<R: BufRead, T: DeserializeOwned>(&self, reader: R) -> Result<T> {
        let mut decoder = Decoder::with_limits(reader, self.limits);
        decode_source(&mut decoder, Keep::Values)?.into_typed()
    }
}

/// `value` as a `serde_json::Value`, if that is its type or a reference to it is (so that
/// `to_string(&value)` does not copy it).
#[allow(unsafe_code)]
pub(crate) fn as_value<T: ?Sized>(value: &T) -> Option<&Value> {
    if typeid::of::<T>() == typeid::of::<Value>() {
        // SAFETY: `T` is `serde_json::Value` (a type without lifetime parameters, so the
        // type ids, which ignore lifetimes, are equal only for it): the cast changes nothing.
        Some(unsafe { &*std::ptr::from_ref(value).cast::<Value>() })
    } else if typeid::of::<T>() == typeid::of::<&Value>() {
        // SAFETY: `T` is `&'a serde_json::Value` for some `'a` that outlives the borrow of
        // `value`; reading it as a reference of that shorter lifetime is allowed (covariance).
        Some(unsafe { *std::ptr::from_ref(value).cast::<&Value>() })
    } else {
        None
    }
}

/// A `serde_json::Value` as `T`, if that is `T`'s type (else the value back), so that
/// `from_str::<Value>` does not rebuild the value it decoded.
#[allow(unsafe_code)]
fn value_into<T>(value: Value) -> std::result::Result<T, Value> {
    if typeid::of::<T>() != typeid::of::<Value>() {
        return Err(value);
    }
    let value = std::mem::ManuallyDrop::new(value);
    // SAFETY: `T` is `serde_json::Value` (see `as_value`), so this reads the value as its own
    // type; `ManuallyDrop` keeps it from being dropped twice.
    Ok(unsafe { std::ptr::read(std::ptr::from_ref::<Value>(&value).cast::<T>()) })
}

// ---------------------------------------------------------------------------------------
// Free functions

/// Encodes any JSON value as GCX1 under `tool`, the way that reads back exactly and costs
/// the fewest tokens: the entry point for "this response, as GCX1". Same as
/// `Options::new().tool(tool).encode_any(value)`.
///
/// ```
/// use serde_json::json;
///
/// let value = json!([{"id": 1, "name": "Ada", "tags": ["x"]}, {"id": 2, "name": "Grace"}]);
/// let text = agentwire_gcx1::encode_any("people", &value)?;
/// assert_eq!(text, "GCX1 tool=people fields=id,name,tags\n1\tAda\t[\"x\"]\n2\tGrace\t\n");
/// assert_eq!(agentwire_gcx1::decode_any(&text)?, value);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn encode_any(tool: &str, value: &Value) -> Result<String> {
    Options::new().tool(tool).encode_any(value)
}

/// [`encode_any`] to a writer.
pub fn encode_any_to_writer<W: Write>(writer: W, tool: &str, value: &Value) -> Result<()> {
    Options::new()
        .tool(tool)
        .encode_any_to_writer(writer, value)
}

/// Decodes any GCX1 payload (ours or Gortex's) into the JSON value it was written from.
pub fn decode_any(input: &str) -> Result<Value> {
    Options::new().decode_any(input)
}

/// The tools the crate knows (Gortex's): their payloads are read with each column's type,
/// and [`Layout`](crate::Layout) types exist for the spec's.
///
/// ```
/// assert!(agentwire_gcx1::known_tools().any(|t| t == "get_callers"));
/// ```
pub fn known_tools() -> impl Iterator<Item = &'static str> {
    schema::TOOLS.iter().map(|t| t.name)
}

/// Serializes `value` as GCX1 under the tool [`DEFAULT_TOOL`]; use [`Options`] for another
/// tool name or other limits.
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Status { healthy: bool, uptime_s: u64, version: String }
///
/// let status = Status { healthy: true, uptime_s: 86400, version: "1.4.2".into() };
/// let text = agentwire_gcx1::to_string(&status)?;
/// assert_eq!(text, "GCX1 tool=response fields=healthy,uptime_s,version\ntrue\t86400\t1.4.2\n");
/// assert_eq!(agentwire_gcx1::from_str::<Status>(&text)?, status);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    Options::new().to_string(value)
}

/// [`to_string`] as bytes.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    Options::new().to_vec(value)
}

/// [`to_string`] to a writer.
pub fn to_writer<W: Write, T: Serialize + ?Sized>(writer: W, value: &T) -> Result<()> {
    Options::new().to_writer(writer, value)
}

/// Deserializes a GCX1 payload into `T`.
pub fn from_str<T: DeserializeOwned>(input: &str) -> Result<T> {
    Options::new().from_str(input)
}

/// Deserializes a GCX1 payload from UTF-8 bytes into `T`.
pub fn from_slice<T: DeserializeOwned>(input: &[u8]) -> Result<T> {
    Options::new().from_slice(input)
}

/// Deserializes a GCX1 payload read from `reader` into `T`, one line in memory at a time.
pub fn from_reader<R: Read, T: DeserializeOwned>(reader: R) -> Result<T> {
    Options::new().from_reader(reader)
}

// ---------------------------------------------------------------------------------------
// Reading cells and meta values

/// How one column's cells read: by the section's type letter, or (without `types=`) by the
/// column's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Letter(u8),
    Kind(Kind),
}

/// Why a text is not a number this codec can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not JSON number syntax.
    Syntax,
    /// A float beyond f64's range, or one that would round to zero (`1e400`, `1e-400`).
    Range,
    /// An integer beyond 64 bits while serde_json keeps no lexemes.
    Precision,
}

impl NumberError {
    pub(crate) fn message(self, text: &str) -> String {
        match self {
            NumberError::Syntax => format!("expected a JSON number, found {text:?}"),
            NumberError::Range => format!("the number {text} is out of range for a float"),
            NumberError::Precision => format!(
                "the integer {text} has more than 64 bits: it keeps its digits only when \
                 serde_json's `arbitrary_precision` feature is on"
            ),
        }
    }
}

/// The end of the JSON number at the start of `bytes`, and whether it is an integer; `None`
/// when `bytes` does not start with one.
pub(crate) fn number_syntax(bytes: &[u8]) -> Option<(usize, bool)> {
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let from = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - from
    };
    let start = i;
    let n = digits(&mut i);
    if n == 0 || (bytes[start] == b'0' && n > 1) {
        return None;
    }
    let mut integer = true;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        integer = false;
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        integer = false;
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    Some((i, integer))
}

/// The JSON number at the start of `bytes` when it is short and plain (most are): at most
/// 15 digits, no exponent, and serde_json's own number representation (not
/// `arbitrary_precision`). Its length and value in one pass, the value exact (integers
/// directly, decimals by Clinger's fast path: see [`crate::float::parse_short_decimal`]).
/// `None` for anything else, which [`number_syntax`] and the full parse read.
#[inline(always)]
pub(crate) fn short_number(bytes: &[u8]) -> Option<(usize, Number)> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    if arbitrary_precision() {
        return None;
    }
    let negative = bytes.first() == Some(&b'-');
    let start = usize::from(negative);
    let mut i = start;
    let mut mantissa = 0u64;
    while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
        mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        i += 1;
    }
    let whole = i - start;
    if whole == 0 || whole > 15 || (bytes[start] == b'0' && whole > 1) {
        return None;
    }
    let mut fraction = 0;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let from = i;
        while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            i += 1;
        }
        fraction = i - from;
        if fraction == 0 || whole + fraction > 15 {
            return None;
        }
    } else if !matches!(bytes.get(i), Some(b'e' | b'E')) {
        let number = match (negative, mantissa) {
            (false, n) => Number::from(n),
            (true, 0) => Number::from_f64(-0.0)?,
            (true, n) => Number::from(-(n as i64)),
        };
        return Some((i, number));
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        return None;
    }
    let magnitude = mantissa as f64 / POW10[fraction];
    let value = if negative { -magnitude } else { magnitude };
    Some((i, Number::from_f64(value)?))
}

/// A float lexeme's value, refusing overflow and underflow to zero.
fn checked_float(text: &str) -> std::result::Result<f64, NumberError> {
    if let Some(f) = crate::float::parse_short_decimal(text.as_bytes()) {
        return Ok(f);
    }
    let f: f64 = text.parse().map_err(|_| NumberError::Syntax)?;
    if !f.is_finite() {
        return Err(NumberError::Range);
    }
    if f == 0.0 {
        let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
        if mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')) {
            return Err(NumberError::Range);
        }
    }
    Ok(f)
}

/// `text` (the whole of it) as a JSON number, exactly: integers of any size with
/// serde_json's `arbitrary_precision` (and within 64 bits without it), floats within range
/// (their lexeme kept with `arbitrary_precision`), `-0` with its sign.
pub(crate) fn exact_number(text: &str) -> std::result::Result<Number, NumberError> {
    if let Some((end, number)) = short_number(text.as_bytes()) {
        if end == text.len() {
            return Ok(number);
        }
    }
    let Some((end, integer)) = number_syntax(text.as_bytes()) else {
        return Err(NumberError::Syntax);
    };
    if end != text.len() {
        return Err(NumberError::Syntax);
    }
    number_of_lexeme(text, integer)
}

/// [`exact_number`] of a lexeme [`number_syntax`] has read whole (`integer` as it said).
#[inline]
pub(crate) fn number_of_lexeme(
    text: &str,
    integer: bool,
) -> std::result::Result<Number, NumberError> {
    if integer && text.len() <= 18 && !arbitrary_precision() {
        // Up to 18 digits (17 with a sign) fit in 63 bits: no overflow to check.
        let (negative, digits) = match text.as_bytes() {
            [b'-', rest @ ..] => (true, rest),
            digits => (false, digits),
        };
        let magnitude = digits
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
        return Ok(match (negative, magnitude) {
            (false, n) => n.into(),
            (true, 0) => Number::from_f64(-0.0).ok_or(NumberError::Range)?,
            (true, n) => (-(n as i64)).into(),
        });
    }
    if arbitrary_precision() {
        if !integer {
            checked_float(text)?;
        }
        return text.parse::<Number>().map_err(|_| NumberError::Range);
    }
    if integer {
        if let Ok(u) = text.parse::<u64>() {
            return Ok(u.into());
        }
        if text == "-0" {
            return Number::from_f64(-0.0).ok_or(NumberError::Range);
        }
        return text
            .parse::<i64>()
            .map(Number::from)
            .map_err(|_| NumberError::Precision);
    }
    Number::from_f64(checked_float(text)?).ok_or(NumberError::Range)
}

/// `text` as a JSON number read as a float (`1` is `1.0`); the lexeme with
/// `arbitrary_precision`.
fn float_number(text: &str) -> std::result::Result<Number, NumberError> {
    match number_syntax(text.as_bytes()) {
        Some((end, _)) if end == text.len() => {}
        _ => return Err(NumberError::Syntax),
    }
    let f = checked_float(text)?;
    if arbitrary_precision() {
        return text.parse::<Number>().map_err(|_| NumberError::Range);
    }
    Number::from_f64(f).ok_or(NumberError::Range)
}

/// A cell's text as inference reads it: booleans, numbers and JSON arrays and objects are
/// what they look like; anything else (numbers the codec cannot carry included) is text.
fn infer(text: &str) -> Value {
    match text.as_bytes()[0] {
        b't' if text == "true" => Value::Bool(true),
        b'f' if text == "false" => Value::Bool(false),
        b'-' | b'0'..=b'9' => match exact_number(text) {
            Ok(n) => Value::Number(n),
            Err(_) => Value::String(text.to_owned()),
        },
        b'[' | b'{' => parse_json(text).unwrap_or_else(|_| Value::String(text.to_owned())),
        _ => Value::String(owned(text)),
    }
}

fn invalid(field: &str, message: String) -> Error {
    ErrorKind::InvalidValue {
        field: field.to_owned(),
        message,
    }
    .into()
}

/// A cell's value under `reading`; `None` for a missing member. `raw` is the cell as it
/// appears in the row (escapes included).
fn read_cell(reading: Reading, raw: &str, escaped: bool, field: &str) -> Result<Option<Value>> {
    if raw.is_empty() {
        return Ok(match reading {
            Reading::Letter(b's') => Some(Value::String(String::new())),
            Reading::Letter(b'n' | b'b' | b'j') => {
                return Err(invalid(field, "the cell is empty".into()))
            }
            _ => None,
        });
    }
    let text = if escaped {
        unescape(raw)
    } else {
        Cow::Borrowed(raw)
    };
    let text = text.as_ref();
    let value = match reading {
        Reading::Letter(b's' | b'S') | Reading::Kind(Kind::Str) => Value::String(owned(text)),
        Reading::Kind(Kind::Auto) => infer(text),
        Reading::Letter(b'n' | b'N') | Reading::Kind(Kind::Int) => {
            let n = exact_number(text).map_err(|e| invalid(field, e.message(text)))?;
            if reading == Reading::Kind(Kind::Int) && !is_integer_text(text) {
                return Err(invalid(
                    field,
                    format!("expected an integer, found {text:?}"),
                ));
            }
            Value::Number(n)
        }
        Reading::Kind(Kind::Float) => {
            Value::Number(float_number(text).map_err(|e| invalid(field, e.message(text)))?)
        }
        Reading::Letter(b'b' | b'B') | Reading::Kind(Kind::Bool) => match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => {
                return Err(invalid(
                    field,
                    format!("expected `true` or `false`, found {text:?}"),
                ))
            }
        },
        Reading::Letter(b'j' | b'J') => match parse_json(text) {
            Ok(value @ (Value::Array(_) | Value::Object(_))) => value,
            Ok(_) => {
                return Err(invalid(
                    field,
                    format!("expected a JSON array or object, found {text:?}"),
                ))
            }
            Err(e) => return Err(invalid(field, format!("expected JSON: {e}"))),
        },
        Reading::Kind(Kind::List) => {
            if text.starts_with('[') {
                match parse_json(text) {
                    Ok(value @ Value::Array(_)) => value,
                    _ => {
                        return Err(invalid(
                            field,
                            format!("expected a JSON array, found {text:?}"),
                        ))
                    }
                }
            } else {
                Value::Array(
                    text.split(',')
                        .map(|item| Value::String(item.to_owned()))
                        .collect(),
                )
            }
        }
        Reading::Letter(_) => {
            parse_json(text).map_err(|e| invalid(field, format!("expected JSON: {e}")))?
        }
    };
    Ok(Some(value))
}

/// The value of the cell at the start of `rest` (the row from the cell on) under `reading`,
/// and the cell's length, when it is JSON text (an array or an object, see
/// [`parse_json_cell`]), a short number ([`short_number`]) or a boolean read straight from
/// the row: the value [`read_cell`] gives the cell, without first scanning the row for the
/// cell's end. `None` for every other cell, which [`read_cell`] then reads.
#[inline(always)]
fn read_from_row(reading: Reading, rest: &str) -> Option<(Value, usize)> {
    let bytes = rest.as_bytes();
    // Whether the cell ends after `len` bytes.
    let ends = |len: usize| matches!(bytes.get(len), None | Some(b'\t'));
    match (reading, *bytes.first()?) {
        (Reading::Kind(Kind::Auto) | Reading::Letter(b'j' | b'J' | b'v'), b'[' | b'{') => {
            parse_json_cell(rest)
        }
        (Reading::Kind(Kind::Auto) | Reading::Letter(b'n' | b'N'), b'-' | b'0'..=b'9') => {
            let (len, number) = short_number(bytes)?;
            ends(len).then_some((Value::Number(number), len))
        }
        (Reading::Kind(Kind::Auto | Kind::Bool) | Reading::Letter(b'b' | b'B'), b't' | b'f') => {
            if bytes.starts_with(b"true") && ends(4) {
                Some((Value::Bool(true), 4))
            } else if bytes.starts_with(b"false") && ends(5) {
                Some((Value::Bool(false), 5))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn is_integer_text(text: &str) -> bool {
    !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// A meta value as it reads: by the tool's kind for the key where it fits, otherwise as
/// what it looks like (`null`, booleans, numbers, JSON strings, arrays and objects; any
/// other text, the empty text included, is itself).
fn read_meta(kind: Kind, text: &str) -> Value {
    let looks = || -> Value {
        match text.as_bytes().first() {
            None => Value::String(String::new()),
            Some(b'n') if text == "null" => Value::Null,
            Some(b't') if text == "true" => Value::Bool(true),
            Some(b'f') if text == "false" => Value::Bool(false),
            Some(b'-' | b'0'..=b'9') => {
                exact_number(text).map_or_else(|_| Value::String(text.to_owned()), Value::Number)
            }
            Some(b'"' | b'[' | b'{') => {
                parse_json(text).unwrap_or_else(|_| Value::String(text.to_owned()))
            }
            Some(_) => Value::String(text.to_owned()),
        }
    };
    match kind {
        Kind::Str => Value::String(text.to_owned()),
        Kind::Int if !text.is_empty() && is_integer_text(text) => looks(),
        Kind::Float => float_number(text).map_or_else(|_| looks(), Value::Number),
        Kind::Bool | Kind::Int | Kind::List | Kind::Auto => looks(),
    }
}

/// The kind of column or meta key `name` of `tool`: what the crate knows, else inferred.
fn kind_of(tool: Option<&Tool>, name: &str) -> Kind {
    tool.map_or(Kind::Auto, |t| t.kind(name))
}

// ---------------------------------------------------------------------------------------
// What a value needs to read back

/// Whether `value`, written without a type letter in a column of `kind`, reads back as
/// itself.
#[inline]
fn reads_back(kind: Kind, value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(_) => matches!(kind, Kind::Auto | Kind::Bool),
        Value::Number(n) => match kind {
            Kind::Auto => number_reads_back(n),
            Kind::Int => number_reads_back(n) && is_integer_number(n),
            Kind::Float => float_reads_back(n),
            _ => false,
        },
        Value::String(s) => match kind {
            Kind::Str => plain_text(s),
            Kind::Auto => plain_text(s) && !looks_typed(s),
            _ => false,
        },
        Value::Array(_) => matches!(kind, Kind::Auto | Kind::List),
        Value::Object(_) => kind == Kind::Auto,
    }
}

/// Text a cell carries unchanged: not empty (that is a missing member) and no CR before an
/// LF (CRLF reads back as LF).
fn plain_text(s: &str) -> bool {
    !s.is_empty() && !has_crlf(s)
}

/// Whether `s` holds a CR directly before an LF.
#[inline]
fn has_crlf(s: &str) -> bool {
    let bytes = s.as_bytes();
    has_cr(bytes) && bytes.windows(2).any(|w| w == b"\r\n")
}

/// Whether `bytes` holds a CR, eight bytes at a time (CRs are rare: this is the whole cost).
#[inline]
fn has_cr(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ (ONES * u64::from(b'\r'));
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return true;
        }
    }
    chunks.remainder().contains(&b'\r')
}

/// Whether inference would read `s` as something other than text.
#[inline]
fn looks_typed(s: &str) -> bool {
    match s.as_bytes()[0] {
        b't' => s == "true",
        b'f' => s == "false",
        b'-' | b'0'..=b'9' => exact_number(s).is_ok(),
        b'[' | b'{' => parse_json(s).is_ok(),
        _ => false,
    }
}

fn number_text(n: &Number) -> Cow<'_, str> {
    let mut out = Vec::new();
    // Text that does not read back fails the checks that use it.
    let _ = write_number(&mut out, n);
    Cow::Owned(String::from_utf8(out).unwrap_or_default())
}

/// Whether a number's written text reads back as the same number.
fn number_reads_back(n: &Number) -> bool {
    if !arbitrary_precision() {
        // Integers in decimal, floats with a fraction or exponent: always exact.
        return true;
    }
    exact_number(&number_text(n)).is_ok_and(|m| &m == n)
}

fn is_integer_number(n: &Number) -> bool {
    if arbitrary_precision() {
        is_integer_text(&number_text(n))
    } else {
        n.is_u64() || n.is_i64()
    }
}

fn float_reads_back(n: &Number) -> bool {
    if arbitrary_precision() {
        float_number(&number_text(n)).is_ok_and(|m| &m == n)
    } else {
        n.is_f64()
    }
}

/// What a column holds, for choosing between no type letter and which letter.
#[derive(Debug, Clone, Copy)]
struct Column {
    kind: Kind,
    /// Every value reads back without a type letter.
    plain: bool,
    seen: Option<u8>,
    missing: bool,
    empty_string: bool,
    /// Needs JSON text (`v`).
    json: bool,
    /// In how many rows the column has a value (counted while a [`Union`] is built).
    present: usize,
}

impl Column {
    fn new(kind: Kind) -> Self {
        Column {
            kind,
            plain: true,
            seen: None,
            missing: false,
            empty_string: false,
            json: false,
            present: 0,
        }
    }

    #[inline]
    fn add(&mut self, value: Option<&Value>) {
        match value {
            None => self.missing = true,
            Some(Value::String(s)) => self.add_str(s),
            Some(other) => self.add_other(other),
        }
    }

    /// The column before any value was added to it, but for which rows lack one.
    fn reset(&mut self) {
        *self = Column {
            missing: self.missing,
            ..Column::new(self.kind)
        };
    }

    /// [`Column::add`] of a present cell, a `Value` or a typed layout's field.
    #[inline]
    fn add_cell(&mut self, cell: CellValue<'_>) {
        match cell {
            CellValue::Value(value) => self.add(Some(value)),
            CellValue::Str(s) => self.add_str(s),
            // `add_other` of the integer's `Value`: it reads back in an `Int` or `Auto`
            // column, never in a `Str`, `Bool` or `List` one (a `Float` column depends on
            // `arbitrary_precision`: asked of the `Value`).
            CellValue::U64(_) if self.kind != Kind::Float => {
                if self.plain && !matches!(self.kind, Kind::Int | Kind::Auto) {
                    self.plain = false;
                }
                if !self.json {
                    self.see(b'n');
                }
            }
            other => self.add_other(&other.to_value()),
        }
    }

    #[inline]
    fn add_str(&mut self, s: &str) {
        // One look at the text serves both questions.
        self.add_text(s, has_crlf(s));
    }

    /// [`Column::add_str`] of text whose CRLF the caller has looked for.
    #[inline]
    fn add_text(&mut self, s: &str, crlf: bool) {
        if self.plain {
            self.plain = !s.is_empty()
                && !crlf
                && match self.kind {
                    Kind::Str => true,
                    Kind::Auto => !looks_typed(s),
                    _ => false,
                };
        }
        if self.json {
            return;
        }
        if crlf {
            self.json = true;
            return;
        }
        self.empty_string |= s.is_empty();
        self.see(b's');
    }

    /// A value other than a string.
    #[inline]
    fn add_other(&mut self, value: &Value) {
        if self.plain && !reads_back(self.kind, value) {
            self.plain = false;
        }
        if self.json {
            return;
        }
        let letter = match value {
            Value::Null => {
                self.json = true;
                return;
            }
            Value::Bool(_) => b'b',
            Value::Number(_) => b'n',
            _ => b'j',
        };
        self.see(letter);
    }

    #[inline]
    fn see(&mut self, letter: u8) {
        match self.seen {
            Some(seen) if seen != letter => self.json = true,
            _ => self.seen = Some(letter),
        }
    }

    /// The column's type letter (when the section carries `types=`).
    fn letter(&self, single_column: bool) -> u8 {
        if self.json {
            return b'v';
        }
        let letter = match self.seen {
            // No values at all: every cell is empty.
            None => return if self.missing { b'S' } else { b's' },
            Some(b's') if self.empty_string && (single_column || self.missing) => return b'v',
            Some(letter) => letter,
        };
        if self.missing {
            letter.to_ascii_uppercase()
        } else {
            letter
        }
    }
}

/// The columns a section was written with: what a streaming writer needs to add rows (the
/// fields are the section's header's).
#[derive(Debug, Clone)]
pub(crate) struct Columns {
    pub(crate) modes: Vec<Mode>,
    /// Rows are objects (a table), not the elements themselves (a `fields=value` section).
    pub(crate) objects: bool,
}

impl Columns {
    /// Whether `value` (an element `None` when missing) can be written in a column of `mode`
    /// and read back as itself.
    pub(crate) fn accepts(mode: Mode, value: Option<&Value>, single_column: bool) -> bool {
        let Some(value) = value else {
            return match mode {
                Mode::Plain(_) => !single_column,
                Mode::Letter(letter) => {
                    !single_column && matches!(letter, b'S' | b'N' | b'B' | b'J' | b'v')
                }
            };
        };
        let letter = match mode {
            Mode::Plain(kind) => return reads_back(kind, value),
            Mode::Letter(letter) => letter,
        };
        match value {
            Value::Null => letter == b'v',
            Value::Bool(_) => matches!(letter, b'b' | b'B' | b'v'),
            Value::Number(n) => matches!(letter, b'n' | b'N' | b'v') && number_reads_back(n),
            Value::String(s) if has_crlf(s) => letter == b'v',
            Value::String(s) if s.is_empty() => {
                letter == b'v' || (letter == b's' && !single_column)
            }
            Value::String(_) => matches!(letter, b's' | b'S' | b'v'),
            Value::Array(_) | Value::Object(_) => matches!(letter, b'j' | b'J' | b'v'),
        }
    }
}

/// How a column's cells are written: plainly (read by the column's kind) or under a letter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode {
    Plain(Kind),
    Letter(u8),
}

/// A cell's value as the Writer looks at it: a member of a `Value`, or a field of a typed
/// layout's row, read where it is (no `Value` built for the row).
#[derive(Debug, Clone, Copy)]
pub(crate) enum CellValue<'v> {
    Value(&'v Value),
    Str(&'v str),
    U64(u64),
    /// A finite float.
    F64(f64),
    List(&'v [String]),
}

impl<'v> CellValue<'v> {
    /// The `Value` a serializer would build for it (cheap but for lists, which are rare).
    fn to_value(self) -> Cow<'v, Value> {
        match self {
            CellValue::Value(value) => Cow::Borrowed(value),
            CellValue::Str(s) => Cow::Owned(Value::String(s.to_owned())),
            CellValue::U64(n) => Cow::Owned(Value::Number(n.into())),
            CellValue::F64(f) => Cow::Owned(Number::from_f64(f).map_or(Value::Null, Value::Number)),
            CellValue::List(items) => Cow::Owned(Value::Array(
                items.iter().map(|s| Value::String(s.clone())).collect(),
            )),
        }
    }
}

/// One cell of the value codec.
pub(crate) struct ValueCell<'v> {
    pub(crate) mode: Mode,
    pub(crate) value: Option<CellValue<'v>>,
}

impl Cell for ValueCell<'_> {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        match (self.mode, self.value) {
            (_, None) => Ok(()),
            (_, Some(CellValue::Value(value))) => write_value_cell(out, self.mode, value),
            (Mode::Letter(b's' | b'S') | Mode::Plain(_), Some(CellValue::Str(s))) => {
                out.write_str(s);
                Ok(())
            }
            // What `write_number` writes for an integer.
            (Mode::Letter(b'n' | b'N') | Mode::Plain(_), Some(CellValue::U64(n))) => {
                out.write_u64(n);
                Ok(())
            }
            // What `write_number` writes for a finite float (with `arbitrary_precision`,
            // the text of the float's `Number`, asked of the `Value`).
            (Mode::Letter(b'n' | b'N') | Mode::Plain(_), Some(CellValue::F64(f)))
                if !arbitrary_precision() =>
            {
                crate::float::write_go_json_f64(out.buffer(), f);
                out.raw(b"");
                Ok(())
            }
            (mode, Some(cell)) => write_value_cell(out, mode, &cell.to_value()),
        }
    }
}

#[inline]
fn write_value_cell(out: &mut CellWriter<'_>, mode: Mode, value: &Value) -> Result<()> {
    match (mode, value) {
        (Mode::Letter(b's' | b'S') | Mode::Plain(_), Value::String(s)) => out.write_str(s),
        (Mode::Letter(b'n' | b'N') | Mode::Plain(_), Value::Number(n)) => {
            write_number(out.buffer(), n)?;
            out.raw(b"");
        }
        (Mode::Letter(b'b' | b'B') | Mode::Plain(_), Value::Bool(b)) => out.write_bool(*b),
        (Mode::Plain(Kind::List), Value::Array(items)) if joinable(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.buffer().push(b',');
                }
                match item {
                    // The row's first cell: `#` or `GCX` at its start is escaped.
                    Value::String(s) if i == 0 => out.write_str(s),
                    Value::String(s) => escape_into(out.buffer(), s),
                    _ => {}
                }
            }
            out.raw(b"");
        }
        _ => write_json_cell(out, value)?,
    }
    Ok(())
}

/// Whether a list can be written comma-joined: strings, none empty or holding a comma, and
/// not starting with `[` (which reads as JSON).
fn joinable(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|item| matches!(item, Value::String(s) if !s.is_empty() && !s.contains(',') && !has_crlf(s)))
        && !matches!(&items[0], Value::String(s) if s.starts_with('['))
}

/// JSON text in a cell, escaped for the row. It starts with `[`, `{`, `"`, a digit, `-`,
/// `t`, `f` or `n`, never `#` or `GCX`.
fn write_json_cell(out: &mut CellWriter<'_>, value: &Value) -> Result<()> {
    write_json_cell_text(out.buffer(), value)?;
    out.raw(b"");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Encoding

/// Whether `key` can be a field name: the header splits on spaces and commas and is trimmed.
fn is_field_name(key: &str) -> bool {
    // Printable ASCII but `,` (most names) needs no look at each character.
    key.bytes().all(|b| b.is_ascii_graphic() && b != b',')
        || !key
            .chars()
            .any(|c| c.is_whitespace() || c == ',' || c == '\u{feff}')
}

/// Whether `key` can name a section `tool.key`.
fn is_section_key(key: &str) -> bool {
    !key.is_empty()
        && !key
            .chars()
            .any(|c| c.is_whitespace() || c == '.' || c == '\u{feff}')
}

/// Whether `key` can be a meta key of ours.
fn is_meta_key(key: &str) -> bool {
    !key.is_empty()
        && !matches!(key, "tool" | "fields" | TYPES_META | SHAPE_META | ROWS_META)
        && !key
            .chars()
            .any(|c| c.is_whitespace() || c == '=' || c == '\u{feff}')
}

/// Whether a header can carry `text` as a meta value.
fn is_meta_text(text: &str) -> bool {
    !text
        .chars()
        .any(|c| (c.is_whitespace() && c != '\t' && c != '\n') || c == '\u{feff}')
}

/// The sections of a bare value need `shape=` under a dotted tool name the crate does not
/// know (a lone dotted section is otherwise a wrapper's member).
pub(crate) fn needs_shape(name: &str) -> bool {
    name.contains('.') && schema::tool(name).is_none()
}

/// The shared context of one encoding.
pub(crate) struct Writer<'o> {
    pub(crate) options: &'o Options,
    pub(crate) name: &'o str,
    pub(crate) tool: Option<&'static Tool>,
}

/// An array of objects that can be rows: its objects and their union of keys.
pub(crate) struct Table<'v> {
    /// The number of rows.
    rows: usize,
    /// The union of the keys, in the order first seen.
    fields: Vec<&'v str>,
    /// What each field's column holds, in the order of `fields`.
    columns: Vec<Column>,
    /// The rows' cells.
    cells: TableCells<'v>,
}

/// Where a [`Table`]'s rows take their cells from.
enum TableCells<'v> {
    /// Every member of every row, in order (its field's index and its value), and where each
    /// row's entries end.
    Entries {
        entries: Vec<(u32, CellValue<'v>)>,
        ends: Vec<usize>,
    },
    /// A typed layout's rows, read again as they are written: the column of each named
    /// field (`u32::MAX` where no row has it) and of each other member, by key.
    Typed {
        rows: &'v (dyn TypedRows + 'v),
        named: Vec<u32>,
        others: Vec<(&'v str, u32)>,
        /// Room for one row's named cells.
        cells: Vec<Option<CellValue<'v>>>,
    },
}

/// A row type of a typed layout: its fields straight into cells, no `Value` built for it.
pub(crate) trait TypedRow {
    /// The named fields' member names, in the order the row's JSON form lists them (when
    /// the `Map` keeps insertion order).
    const NAMES: &'static [&'static str];

    /// The type [`schema::common_kind`] gives each name (found at compile time).
    const KINDS: &'static [Option<Kind>];

    /// Sets `cells[i]` to the cell of the field `NAMES[i]` (`None` where the JSON form
    /// leaves the member out) and returns the row's other members (any named like a field
    /// are not part of the row).
    fn cells<'a>(&'a self, cells: &mut [Option<CellValue<'a>>]) -> Result<&'a Map<String, Value>>;
}

/// The rows of a typed table, one row's cells at a time ([`TypedRow::cells`]).
pub(crate) trait TypedRows {
    fn row_cells<'a>(
        &'a self,
        row: usize,
        cells: &mut [Option<CellValue<'a>>],
    ) -> Result<&'a Map<String, Value>>;
}

impl<R: TypedRow> TypedRows for Vec<R> {
    #[inline]
    fn row_cells<'a>(
        &'a self,
        row: usize,
        cells: &mut [Option<CellValue<'a>>],
    ) -> Result<&'a Map<String, Value>> {
        self[row].cells(cells)
    }
}

/// The union of a table's keys (in the order first seen) and what each column holds.
struct Union<'v> {
    tool: Option<&'static Tool>,
    fields: Vec<&'v str>,
    /// Each with the number of rows that have a value in it (`Column::present`).
    columns: Vec<Column>,
}

impl<'v> Union<'v> {
    fn new(tool: Option<&'static Tool>, width: usize) -> Self {
        Union {
            tool,
            fields: Vec::with_capacity(width),
            columns: Vec::with_capacity(width),
        }
    }

    /// A new column for `key`.
    #[inline]
    fn push(&mut self, key: &'v str) -> u32 {
        self.push_kind(key, kind_of(self.tool, key))
    }

    /// A new column for `key`, of `kind`.
    #[inline]
    fn push_kind(&mut self, key: &'v str, kind: Kind) -> u32 {
        let column = self.fields.len() as u32;
        self.fields.push(key);
        self.columns.push(Column::new(kind));
        column
    }

    #[inline]
    fn add(&mut self, column: u32, value: CellValue<'_>) {
        let column = &mut self.columns[column as usize];
        column.add_cell(value);
        column.present += 1;
    }

    /// A value in `column`, not looked at (a typed table's, whose values the Writer adds
    /// to its columns as it writes them).
    #[inline]
    fn count(&mut self, column: u32) {
        self.columns[column as usize].present += 1;
    }

    /// The table of `rows` rows, if its keys can be fields (`all_single`: every row has
    /// one member).
    fn finish(
        mut self,
        rows: usize,
        max_fields: usize,
        all_single: bool,
        cells: TableCells<'v>,
    ) -> Option<Table<'v>> {
        for column in &mut self.columns {
            if column.present < rows {
                column.add(None);
            }
        }
        let fits = !self.fields.is_empty()
            && self.fields.len() <= max_fields
            && self.fields.iter().all(|k| is_field_name(k))
            // A one-column row cannot hold a missing cell (it would be a blank line).
            && (self.fields.len() > 1 || all_single);
        fits.then_some(Table {
            rows,
            fields: self.fields,
            columns: self.columns,
            cells,
        })
    }
}

/// The table a typed layout's rows form, as [`Writer::table`] finds it from their JSON
/// form (the same union of keys in the same order), without a key search: a row's named
/// fields have their columns by position. Its columns know which rows lack a value, not
/// yet what the values are: [`Writer::write_table`] looks at them as it writes them.
pub(crate) fn typed_table<'v, R: TypedRow>(
    writer: &Writer<'_>,
    rows: &'v Vec<R>,
) -> Result<Option<Table<'v>>> {
    let names = R::NAMES;
    let width = names.len();
    // The order of the named members in a row's JSON form; a sorting `Map` interleaves the
    // other members with them.
    let sorted = !map_keeps_order();
    let mut order: Vec<usize> = Vec::new();
    if sorted {
        order.extend(0..width);
        order.sort_unstable_by_key(|&i| names[i]);
    }
    let mut union = Union::new(writer.tool, width);
    let mut cells: Vec<Option<CellValue<'v>>> = vec![None; width];
    let mut named = vec![u32::MAX; width];
    let mut others: Vec<(&'v str, u32)> = Vec::new();
    let mut all_single = true;
    for row in rows {
        let extra = row.cells(&mut cells)?;
        let mut count = 0;
        let mut rest = extra
            .iter()
            .filter(|(key, _)| !names.iter().any(|name| same_text(name, key)))
            .peekable();
        let mut other = |union: &mut Union<'v>, key: &'v str| {
            let column = match others.iter().find(|(k, _)| same_text(k, key)) {
                Some(&(_, column)) => column,
                None => {
                    let column = union.push(key);
                    others.push((key, column));
                    column
                }
            };
            union.count(column);
        };
        for k in 0..width {
            // The `Map`'s order: sorted names, or the declared one.
            let i = order.get(k).copied().unwrap_or(k);
            if cells[i].is_none() {
                continue;
            }
            if sorted {
                while let Some((key, _)) = rest.next_if(|(key, _)| key.as_str() < names[i]) {
                    other(&mut union, key);
                    count += 1;
                }
            }
            if named[i] == u32::MAX {
                let common = R::KINDS.get(i).copied().flatten();
                let kind = writer
                    .tool
                    .map_or(Kind::Auto, |tool| tool.kind_known(names[i], common));
                named[i] = union.push_kind(names[i], kind);
            }
            union.count(named[i]);
            count += 1;
        }
        for (key, _) in rest {
            other(&mut union, key);
            count += 1;
        }
        all_single &= count == 1;
    }
    let cells = TableCells::Typed {
        rows,
        named,
        others,
        cells,
    };
    Ok(union.finish(
        rows.len(),
        writer.options.limits.max_fields,
        all_single,
        cells,
    ))
}

/// Builds a [`Table`] cell by cell: the union of the rows' keys (in the order first seen)
/// and what each column holds, in one walk over the rows. Rows usually list the same keys
/// in the same order, which is tried first: one comparison per key, no lookup.
pub(crate) struct TableBuilder<'v> {
    max_fields: usize,
    union: Union<'v>,
    index: std::collections::HashMap<&'v str, u32>,
    entries: Vec<(u32, CellValue<'v>)>,
    ends: Vec<usize>,
    /// The previous row's keys and their columns, to guess this one's.
    previous: Vec<(&'v str, u32)>,
    /// The position of the next cell in its row.
    at: usize,
    all_single: bool,
}

impl<'v> TableBuilder<'v> {
    /// A table of `rows` rows of about `per_row` members each, for `writer`'s tool.
    pub(crate) fn new(writer: &Writer<'_>, rows: usize, per_row: usize) -> Self {
        TableBuilder {
            max_fields: writer.options.limits.max_fields,
            union: Union::new(writer.tool, 0),
            index: std::collections::HashMap::new(),
            entries: Vec::with_capacity(rows * per_row),
            ends: Vec::with_capacity(rows),
            previous: Vec::new(),
            at: 0,
            all_single: true,
        }
    }

    /// The current row's member `key` (each key once in a row).
    #[inline]
    pub(crate) fn cell(&mut self, key: &'v str, value: CellValue<'v>) {
        let j = self.at;
        self.at += 1;
        let column = match self.previous.get(j) {
            Some(&(guess, column)) if same_text(guess, key) => column,
            _ => {
                let column = match self.column_of(key) {
                    Some(column) => column,
                    None => self.union.push(key),
                };
                if j < self.previous.len() {
                    self.previous[j] = (key, column);
                } else {
                    self.previous.push((key, column));
                }
                column
            }
        };
        self.union.add(column, value);
        self.entries.push((column, value));
    }

    /// The column of a key seen before: a look along a few fields, a lookup past them.
    #[inline]
    fn column_of(&mut self, key: &'v str) -> Option<u32> {
        const FEW: usize = 16;
        let fields = &self.union.fields;
        if fields.len() <= FEW {
            return fields
                .iter()
                .position(|f| same_text(f, key))
                .map(|i| i as u32);
        }
        if self.index.is_empty() {
            self.index = (0..).zip(fields).map(|(i, f)| (*f, i)).collect();
        }
        let next = fields.len() as u32;
        let column = *self.index.entry(key).or_insert(next);
        (column != next).then_some(column)
    }

    /// Ends the current row.
    #[inline]
    pub(crate) fn end_row(&mut self) {
        self.all_single &= self.at == 1;
        self.at = 0;
        self.ends.push(self.entries.len());
    }

    /// The table, if its keys can be fields.
    pub(crate) fn finish(self) -> Option<Table<'v>> {
        let rows = self.ends.len();
        let cells = TableCells::Entries {
            entries: self.entries,
            ends: self.ends,
        };
        self.union
            .finish(rows, self.max_fields, self.all_single, cells)
    }
}

impl Table<'_> {
    /// Whether the table is the lone column `value` (which needs `shape=`).
    pub(crate) fn is_values(&self) -> bool {
        self.fields == ["value"]
    }
}

/// Whether serde_json's `Map` keeps its members in insertion order (`preserve_order`, which
/// another crate may turn on) rather than sorting their keys.
fn map_keeps_order() -> bool {
    static KEEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS.get_or_init(|| {
        let mut map = Map::new();
        map.insert("b".into(), Value::Null);
        map.insert("a".into(), Value::Null);
        map.keys().next().is_some_and(|k| k == "b")
    })
}

/// A typed layout as the Writer takes it: the members of its JSON form (in the order it
/// serializes them; borrowed where they are `Value`s already), with each member of rows an
/// empty array, and those rows as tables.
pub(crate) struct Typed<'v> {
    pub(crate) members: Vec<(&'v str, Cow<'v, Value>)>,
    pub(crate) tables: Vec<(&'static str, Table<'v>)>,
    /// One-row members (an object in the JSON form, a `null` in `members`) as records.
    pub(crate) records: Vec<(&'static str, Record<'v>)>,
    /// Every member of rows is in `tables` (`false`: rows the value path writes otherwise).
    pub(crate) whole: bool,
}

/// A typed one-row member as [`Writer::write_record`] writes its JSON form: its fields in
/// their order and their cells (`None`: a seed column the row leaves empty).
pub(crate) struct Record<'v> {
    fields: Vec<&'v str>,
    values: Vec<Option<CellValue<'v>>>,
}

/// How an object is written as a wrapper.
struct Plan<'v> {
    /// Members written as sections, in member order.
    sections: Vec<(&'v str, Member<'v>)>,
    /// Scalar members as meta pairs.
    meta: Vec<(String, String)>,
    /// Members of the one row of the section named like the tool.
    rest: Vec<(&'v str, &'v Value)>,
}

enum Member<'v> {
    Table(Table<'v>),
    /// Rows for [`Writer::write_uniform_table`] (a [`Member::Table`] if it declines them).
    Uniform(&'v [Value]),
    Values(&'v [Value]),
    Single(&'v Map<String, Value>),
    /// A typed [`Member::Single`].
    Record(Record<'v>),
    Merge(&'v Value),
    /// An empty array of a section the layout declares: its header alone.
    Empty(&'static [&'static str]),
}

fn encode_value<W: Write>(writer: W, options: &Options, value: &Value) -> Result<()> {
    let w = Writer::new(options);
    let mut encoder = Encoder::with_limits(writer, options.limits);
    w.write(&mut encoder, value)?;
    encoder.finish().map(drop)
}

impl<'o> Writer<'o> {
    pub(crate) fn write<W: Write>(&self, encoder: &mut Encoder<W>, value: &Value) -> Result<()> {
        let shape = needs_shape(self.name);
        match value {
            Value::Object(map) => {
                if let Some(plan) = self.plan(
                    map.iter().map(|(k, v)| (k.as_str(), v)),
                    &mut Vec::new(),
                    &mut Vec::new(),
                ) {
                    return self.write_wrapper(encoder, plan);
                }
                let mut header = Header::new(self.name, Vec::<String>::new());
                if shape {
                    header.meta.insert(SHAPE_META.into(), "record".into());
                }
                if self.options.layout_columns && self.tool.is_some_and(|t| t.record) {
                    // Gortex's get_symbol_source repeats the row's etag in the header.
                    if let Some(Value::String(etag)) = map.get("etag") {
                        if is_meta_text(etag) && !etag.is_empty() {
                            header.meta.insert("etag".into(), etag.clone());
                        }
                    }
                }
                self.write_record(
                    encoder,
                    header,
                    "",
                    map.iter().map(|(k, v)| (k.as_str(), v)),
                )
            }
            Value::Array(items) => {
                let mut header = Header::new(self.name, Vec::<String>::new());
                if shape {
                    header.meta.insert(SHAPE_META.into(), "rows".into());
                }
                self.write_array(encoder, header, "", items, true)
            }
            scalar => {
                let mut header = Header::new(self.name, ["value"]);
                if shape {
                    header.meta.insert(SHAPE_META.into(), "scalar".into());
                }
                self.write_values(encoder, header, "", std::slice::from_ref(scalar), false)
                    .map(drop)
            }
        }
    }

    /// Writes a typed layout from its [`Typed`] form, as [`Writer::write`] writes the
    /// layout's JSON form; `false` (nothing written) where that takes the value path.
    pub(crate) fn write_typed<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        typed: Typed<'_>,
    ) -> Result<bool> {
        let Typed {
            mut members,
            mut tables,
            mut records,
            whole,
        } = typed;
        if !whole || self.tool.is_none() {
            return Ok(false);
        }
        if !map_keeps_order() {
            // The order of the JSON form's `Map`.
            members.sort_by(|a, b| a.0.cmp(b.0));
        }
        let members = members.iter().map(|(k, v)| (*k, &**v));
        match self.plan(members, &mut tables, &mut records) {
            Some(plan) if tables.is_empty() && records.is_empty() => {
                self.write_wrapper(encoder, plan).map(|()| true)
            }
            _ => Ok(false),
        }
    }

    /// Writes a typed record (one row under the tool's name, `get_symbol_source`) as
    /// [`Writer::write`] writes its JSON form: the tool's column order, the seed's columns
    /// even when empty, Gortex's `etag` in the header. `false` (nothing written) where that
    /// takes another path: an array member (which the plan may make a section of), fewer than
    /// two members, keys a header cannot carry, a named field outside the tool's order.
    pub(crate) fn write_typed_record<W: Write, R: TypedRow>(
        &self,
        encoder: &mut Encoder<W>,
        row: &R,
    ) -> Result<bool> {
        if !self
            .tool
            .is_some_and(|t| t.record && self.options.layout_columns && !needs_shape(self.name))
        {
            return Ok(false);
        }
        let Some(record) = self.typed_record("", row)? else {
            return Ok(false);
        };
        let mut header = Header::new(self.name, Vec::<String>::new());
        // Gortex's get_symbol_source repeats the row's etag in the header.
        let etag = record
            .fields
            .iter()
            .zip(&record.values)
            .find(|(key, _)| **key == "etag")
            .and_then(|(_, value)| match value {
                Some(CellValue::Str(s)) => Some(*s),
                Some(CellValue::Value(Value::String(s))) => Some(s.as_str()),
                _ => None,
            });
        if let Some(etag) = etag {
            if is_meta_text(etag) && !etag.is_empty() {
                header.meta.insert("etag".into(), etag.to_owned());
            }
        }
        self.write_typed_row(encoder, header, &record)?;
        Ok(true)
    }

    /// A typed row as [`Writer::write_record`] finds the fields of its JSON form under the
    /// section `key`: the tool's column order, the seed's columns even when empty, then the
    /// other members. `None` where that takes another path: an array member (which a plan
    /// may make a section of), fewer than two members, keys a header cannot carry, a named
    /// field outside the tool's order.
    pub(crate) fn typed_record<'v, R: TypedRow>(
        &self,
        key: &str,
        row: &'v R,
    ) -> Result<Option<Record<'v>>> {
        let Some(tool) = self.tool.filter(|_| self.options.layout_columns) else {
            return Ok(None);
        };
        let names = R::NAMES;
        let order = tool.order(key);
        if !names
            .iter()
            .all(|name| order.iter().any(|o| same_text(o, name)))
        {
            return Ok(None);
        }
        let mut cells = vec![None; names.len()];
        let extra = row.cells(&mut cells)?;
        // The JSON form's other members.
        let others = || {
            extra
                .iter()
                .filter(|(key, _)| !names.iter().any(|name| same_text(name, key)))
        };
        let count = cells.iter().flatten().count() + others().count();
        if others().any(|(_, value)| value.is_array())
            || count < 2
            || count > self.options.limits.max_fields
            || !others().all(|(key, _)| is_field_name(key))
        {
            return Ok(None);
        }
        // As `write_record` finds them: the tool's order, then the other members.
        let seed = tool.seed(key);
        let mut fields: Vec<&str> = Vec::with_capacity(count + seed.len());
        let mut values: Vec<Option<CellValue<'_>>> = Vec::with_capacity(count + seed.len());
        for name in order {
            let named = names
                .iter()
                .position(|n| same_text(n, name))
                .and_then(|i| cells[i]);
            match named {
                Some(cell) => {
                    fields.push(name);
                    values.push(Some(cell));
                }
                None => match others().find(|(key, _)| same_text(key, name)) {
                    Some((key, value)) => {
                        fields.push(key);
                        values.push(Some(CellValue::Value(value)));
                    }
                    None if seed.iter().any(|s| same_text(s, name)) => {
                        fields.push(name);
                        values.push(None);
                    }
                    None => {}
                },
            }
        }
        for (key, value) in others().filter(|(key, _)| !order.iter().any(|o| same_text(o, key))) {
            fields.push(key);
            values.push(Some(CellValue::Value(value)));
        }
        Ok(Some(Record { fields, values }))
    }

    /// Writes a [`Record`]'s section: its header (with the type letters its cells need) and
    /// its row, as [`Writer::write_record`] writes them.
    fn write_typed_row<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        mut header: Header,
        record: &Record<'_>,
    ) -> Result<()> {
        let Record { fields, values } = record;
        let columns: Vec<Column> = fields
            .iter()
            .zip(values)
            .map(|(key, value)| {
                let mut column = Column::new(kind_of(self.tool, key));
                match *value {
                    Some(cell) => column.add_cell(cell),
                    None => column.add(None),
                }
                column
            })
            .collect();
        let modes = modes(&columns, fields.len() == 1);
        add_types(&mut header, &modes);
        encoder.begin_named_section(&header, fields)?;
        encoder.write_row(values.iter().zip(&modes).map(|(value, &mode)| ValueCell {
            mode,
            value: *value,
        }))
    }

    /// The writer of a typed layout of `options`' tool (`options` from [`layout_options`]).
    pub(crate) fn layout(options: &'o Options) -> Self {
        Writer {
            options,
            name: &options.tool,
            tool: schema::tool(&options.tool),
        }
    }

    /// A writer of `options`' tool.
    pub(crate) fn new(options: &'o Options) -> Self {
        Writer {
            options,
            name: &options.tool,
            // As the decoder reads the payload's first section (`tool=` `options.tool`): a
            // dotted name the crate does not know reads by the tool before its last dot.
            tool: section_tool(&options.tool),
        }
    }

    /// Gortex's column order for a section, which layouts follow. Other payloads keep the
    /// value's own order (columns of short values first tokenize no worse, measured on
    /// Gortex's benchmark responses, than Gortex's order).
    fn order(&self, key: &str) -> &'static [&'static str] {
        match self.tool {
            Some(tool) if self.options.layout_columns => tool.order(key),
            _ => &[],
        }
    }

    /// The table `items` forms, if every item is an object and their keys can be fields:
    /// the union of their keys (in the order first seen) and what each column holds, found
    /// in one walk over the objects. Objects usually list the same keys in the same order,
    /// which is tried first: one comparison per key, no lookup.
    pub(crate) fn table<'v>(&self, items: &'v [Value]) -> Option<Table<'v>> {
        let per_row = items.first().and_then(Value::as_object).map_or(0, Map::len);
        let mut builder = TableBuilder::new(self, items.len(), per_row);
        for item in items {
            for (key, value) in item.as_object()? {
                builder.cell(key, CellValue::Value(value));
            }
            builder.end_row();
        }
        builder.finish()
    }

    /// `union` in the tool's column order, for layouts: the seed's columns even where no
    /// row has a value, then Gortex's later ones, then any others.
    fn ordered<'v>(&self, union: &[&'v str], order_key: &str) -> Option<Vec<&'v str>> {
        let order = self.order(order_key);
        if order.is_empty() {
            return None;
        }
        // `order`'s names are 'static; the union's borrow the value.
        let seed = self.tool.map_or(&[][..], |t| t.seed(order_key));
        let mut fields: Vec<&'v str> = Vec::with_capacity(union.len());
        for name in order {
            if let Some(&key) = union.iter().find(|k| same_text(k, name)) {
                fields.push(key);
            } else if seed.iter().any(|s| same_text(s, name)) {
                fields.push(name);
            }
        }
        fields.extend(
            union
                .iter()
                .filter(|k| !order.iter().any(|name| same_text(k, name))),
        );
        Some(fields)
    }

    /// Writes a section of rows (`header` has the name and any meta; its fields are set
    /// here). `bare`: the section is the whole payload, so one row needs `rows=1`.
    fn write_array<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        header: Header,
        order_key: &str,
        items: &[Value],
        bare: bool,
    ) -> Result<()> {
        if items.iter().all(Value::is_object) && !items.is_empty() {
            if self.write_uniform_table(encoder, &header, items, bare)? {
                return Ok(());
            }
            if let Some(table) = self.table(items) {
                return self
                    .write_table(encoder, header, order_key, table, bare)
                    .map(drop);
            }
        }
        // Scalars, or objects that cannot be rows: one value per row.
        self.write_values(encoder, header, order_key, items, bare)
            .map(drop)
    }

    /// Whether `items` are rows [`Writer::write_uniform_table`] may take: objects of two or
    /// more members whose keys are field names, all with the same keys in the same order,
    /// of a tool without column kinds.
    fn uniform(&self, items: &[Value]) -> bool {
        let Some(first) = items.first().and_then(Value::as_object) else {
            return false;
        };
        if self.tool.is_some()
            || first.len() < 2
            || first.len() > self.options.limits.max_fields
            || !first.keys().all(|k| is_field_name(k))
        {
            return false;
        }
        let fields: Vec<&str> = first.keys().map(String::as_str).collect();
        items[1..].iter().all(|item| {
            item.as_object().is_some_and(|o| {
                o.len() == fields.len() && o.keys().zip(&fields).all(|(a, b)| same_text(a, b))
            })
        })
    }

    /// The common table in one pass: objects with the same keys in the same order, of a
    /// tool without column kinds, every value a string, number, boolean, array or object.
    /// Each row is written as it is looked at (its cells read the same whatever type letters
    /// the columns get), under a header with the first row's types, rewritten at the end in
    /// the rare case later rows change them. `false` (nothing written) for any other table,
    /// which [`Writer::write_table`] writes: the same bytes, at the cost of a second walk over
    /// the rows.
    fn write_uniform_table<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        header: &Header,
        items: &[Value],
        bare: bool,
    ) -> Result<bool> {
        let Some(first) = items.first().and_then(Value::as_object) else {
            return Ok(false);
        };
        let width = first.len();
        let limits = &self.options.limits;
        if self.tool.is_some()
            || (self.options.comments && self.comment(items.len()).is_some())
            || width < 2
            || width > limits.max_fields
            || !first.keys().all(|k| is_field_name(k))
        {
            return Ok(false);
        }
        let fields: Vec<&str> = first.keys().map(String::as_str).collect();
        let mut columns = vec![Column::new(Kind::Auto); width];
        let mut row = Vec::new();
        if !uniform_row(
            &mut row,
            first,
            &fields,
            &mut columns,
            limits.max_line_length,
        ) {
            return Ok(false);
        }
        let mut header = header.clone();
        header.fields = fields.iter().map(|f| (*f).to_owned()).collect();
        if bare && items.len() == 1 && !header.meta.contains_key(SHAPE_META) {
            header.meta.insert(ROWS_META.into(), "1".into());
        }
        let typed = |columns: &[Column]| {
            let modes = modes(columns, false);
            let mut header = header.clone();
            add_types(&mut header, &modes);
            (!modes.iter().any(|m| matches!(m, Mode::Letter(b'v')))).then_some(header)
        };
        let Some(guess) = typed(&columns) else {
            return Ok(false);
        };
        let Ok(section) = encoder.begin_raw_section(&guess) else {
            return Ok(false);
        };
        let out = encoder.raw_rows();
        out.extend_from_slice(&row);
        // The other rows are likely about as long as the first.
        out.reserve(row.len().saturating_mul(items.len()).saturating_add(64));
        let mut fits = true;
        for item in &items[1..] {
            fits = item.as_object().is_some_and(|object| {
                object.len() == width
                    && uniform_row(out, object, &fields, &mut columns, limits.max_line_length)
            });
            if !fits {
                break;
            }
        }
        let last = if fits { typed(&columns) } else { None };
        let Some(header) = last else {
            encoder.undo_raw_section(&section);
            return Ok(false);
        };
        let rewrite = header.meta_value(TYPES_META) != guess.meta_value(TYPES_META);
        if encoder
            .finish_raw_section(&section, &header, rewrite, items.len() as u64)
            .is_err()
        {
            encoder.undo_raw_section(&section);
            return Ok(false);
        }
        Ok(true)
    }

    pub(crate) fn write_table<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        mut header: Header,
        order_key: &str,
        mut table: Table<'_>,
        bare: bool,
    ) -> Result<Columns> {
        // The union in the tool's order (`None`: the union's own order).
        let union = self
            .ordered(&table.fields, order_key)
            .map(|ordered| std::mem::replace(&mut table.fields, ordered));
        let width = table.fields.len();
        let single = width == 1;
        // Where each field of the union went (layouts reorder and add columns).
        let union = union.filter(|union| {
            table.fields.len() != union.len()
                || !table.fields.iter().zip(union).all(|(a, b)| same_text(a, b))
        });
        let reordered = union.is_some();
        let place: Vec<usize> = if let Some(union) = &union {
            union
                .iter()
                .map(|f| {
                    table
                        .fields
                        .iter()
                        .position(|g| same_text(g, f))
                        .unwrap_or(0)
                })
                .collect()
        } else {
            (0..width).collect()
        };
        let mut columns: Vec<Column> = if reordered {
            (0..width)
                .map(|j| match place.iter().position(|&at| at == j) {
                    Some(u) => table.columns[u],
                    None => {
                        // A column only the seed declares is empty in every row.
                        let mut column = Column::new(kind_of(self.tool, table.fields[j]));
                        column.add(None);
                        column
                    }
                })
                .collect()
        } else {
            table.columns
        };
        if single && table.fields == ["value"] {
            header.meta.insert(SHAPE_META.into(), "rows".into());
        } else if bare && table.rows == 1 && !header.meta.contains_key(SHAPE_META) {
            header.meta.insert(ROWS_META.into(), "1".into());
        }
        if let TableCells::Typed {
            rows,
            named,
            others,
            cells,
        } = &mut table.cells
        {
            // A typed table's values are looked at as they are written, in one pass; where
            // that pass declines, in a pass of their own.
            if let Some(modes) = self.write_typed_rows(
                encoder,
                &mut header,
                &table.fields,
                &mut columns,
                &place,
                (*rows, named, cells),
                table.rows,
                others.is_empty(),
            )? {
                return Ok(Columns {
                    modes,
                    objects: true,
                });
            }
            for r in 0..table.rows {
                let extra = rows.row_cells(r, cells)?;
                for (cell, &column) in cells.iter().zip(named.iter()) {
                    if let Some(value) = *cell {
                        columns[place[column as usize]].add_cell(value);
                    }
                }
                for (key, value) in extra {
                    if let Some(&(_, column)) = others.iter().find(|(k, _)| same_text(k, key)) {
                        columns[place[column as usize]].add_cell(CellValue::Value(value));
                    }
                }
            }
        }
        let modes = modes(&columns, single);
        add_types(&mut header, &modes);
        encoder.begin_named_section(&header, &table.fields)?;
        if self.options.comments {
            if let Some(comment) = self.comment(table.rows) {
                encoder.write_comment(&comment)?;
            }
        }
        // Each row's values in field order, in a buffer the size of one row.
        let mut row: Vec<Option<CellValue<'_>>> = vec![None; width];
        let direct = !arbitrary_precision();
        let write = |encoder: &mut Encoder<W>, row: &[Option<CellValue<'_>>]| {
            if direct && write_simple_row(encoder, row, &modes) {
                return encoder.end_raw_row();
            }
            encoder.write_row(row.iter().zip(&modes).map(|(value, &mode)| ValueCell {
                mode,
                value: *value,
            }))
        };
        match &mut table.cells {
            TableCells::Entries { entries, ends } => {
                let mut start = 0;
                for &end in ends.iter() {
                    row.fill(None);
                    for &(column, value) in &entries[start..end] {
                        row[place[column as usize]] = Some(value);
                    }
                    start = end;
                    write(encoder, &row)?;
                }
            }
            TableCells::Typed {
                rows,
                named,
                others,
                cells,
            } => {
                for r in 0..table.rows {
                    row.fill(None);
                    let extra = rows.row_cells(r, cells)?;
                    for (cell, &column) in cells.iter().zip(named.iter()) {
                        if let Some(value) = cell {
                            row[place[column as usize]] = Some(*value);
                        }
                    }
                    if !others.is_empty() {
                        for (key, value) in extra {
                            if let Some(&(_, column)) =
                                others.iter().find(|(k, _)| same_text(k, key))
                            {
                                row[place[column as usize]] = Some(CellValue::Value(value));
                            }
                        }
                    }
                    write(encoder, &row)?;
                }
            }
        }
        Ok(Columns {
            modes,
            objects: true,
        })
    }

    /// A typed table's rows in one pass (`columns` in field order, knowing which rows lack
    /// a value; `place`: the field of each column of the union; `named`: the union column of
    /// each named field): the header as it is if every column is plain, then each cell
    /// written as it reads under any type letter its column may get (text escaped, numbers
    /// as `write_number` writes them) and added to its column; the header is replaced at the
    /// end when the columns need type letters. The bytes of the two-pass path; `None`
    /// (nothing written) where they could differ:
    /// members other than the named fields, lists, a column that needs `v` (JSON text), a
    /// line over the limit, `arbitrary_precision` (numbers written from their `Number`), a
    /// table of one column, an encoder that flushes as it goes.
    #[allow(clippy::too_many_arguments)]
    fn write_typed_rows<'v, W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        header: &mut Header,
        fields: &[&str],
        columns: &mut [Column],
        place: &[usize],
        (rows, named, cells): (&'v dyn TypedRows, &[u32], &mut [Option<CellValue<'v>>]),
        count: usize,
        named_only: bool,
    ) -> Result<Option<Vec<Mode>>> {
        let width = fields.len();
        if width < 2 || !named_only || arbitrary_precision() {
            return Ok(None);
        }
        let comment = if self.options.comments {
            self.comment(count)
        } else {
            None
        };
        // The header the rows need if every column is plain (the common case); when they
        // need type letters, it is replaced at the end.
        let Some(section) = encoder.begin_rows(header, fields, comment.as_deref())? else {
            return Ok(None);
        };
        // The named field written in each field, if any.
        let mut by_field = vec![usize::MAX; width];
        for (i, &column) in named.iter().enumerate() {
            if let Some(&j) = place.get(column as usize) {
                by_field[j] = i;
            }
        }
        let max_line = self.options.limits.max_line_length;
        let out = encoder.raw_rows();
        let mut fits = true;
        'rows: for r in 0..count {
            let row_start = out.len();
            if let Err(e) = rows.row_cells(r, cells) {
                encoder.undo_rows(&section);
                return Err(e);
            }
            for (j, (&i, column)) in by_field.iter().zip(columns.iter_mut()).enumerate() {
                if j > 0 {
                    out.push(b'\t');
                }
                let Some(&Some(cell)) = cells.get(i) else {
                    continue;
                };
                match cell {
                    CellValue::Str(s) => {
                        let marked = if j == 0 {
                            escape_first_marked(out, s)
                        } else {
                            escape_marked(out, s)
                        };
                        column.add_text(s, marked && has_crlf(s));
                    }
                    CellValue::U64(n) => {
                        push_bytes(out, itoa::Buffer::new().format(n).as_bytes());
                        column.add_cell(cell);
                    }
                    CellValue::F64(f) => {
                        crate::float::write_go_json_f64(out, f);
                        column.add_cell(cell);
                    }
                    CellValue::Value(_) | CellValue::List(_) => {
                        fits = false;
                        break 'rows;
                    }
                }
            }
            if out.len() - row_start > max_line {
                fits = false;
                break;
            }
            out.push(b'\n');
            if r == 0 {
                // The other rows are likely about as long as the first.
                out.reserve((out.len() - row_start).saturating_mul(count));
            }
        }
        let modes = modes(columns, false);
        if !fits || modes.iter().any(|m| matches!(m, Mode::Letter(b'v'))) {
            encoder.undo_rows(&section);
            columns.iter_mut().for_each(Column::reset);
            return Ok(None);
        }
        let lettered = modes.iter().any(|m| matches!(m, Mode::Letter(_)));
        if lettered {
            add_types(header, &modes);
        }
        encoder.finish_rows(&section, lettered.then_some(&*header), fields, count as u64)?;
        Ok(Some(modes))
    }

    /// Gortex's comment before a tool's rows.
    fn comment(&self, rows: usize) -> Option<String> {
        match self.name {
            "search_symbols" | "winnow_symbols" => Some(format!("{rows} result(s)")),
            "contracts.list" => Some(format!("{rows} contract(s)")),
            _ => None,
        }
    }

    /// A `fields=value` section: one value per row.
    pub(crate) fn write_values<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        mut header: Header,
        _order_key: &str,
        items: &[Value],
        array: bool,
    ) -> Result<Columns> {
        let mut column = Column::new(kind_of(self.tool, "value"));
        items.iter().for_each(|v| column.add(Some(v)));
        let modes = modes(std::slice::from_ref(&column), true);
        header.fields = vec!["value".to_owned()];
        if header.meta_value(SHAPE_META) == Some("rows") {
            header.meta.insert(SHAPE_META.into(), "values".into());
        }
        if array && items.len() == 1 && !header.meta.contains_key(SHAPE_META) {
            header.meta.insert(ROWS_META.into(), "1".into());
        }
        add_types(&mut header, &modes);
        encoder.begin_owned_section(header)?;
        for item in items {
            encoder.write_row([ValueCell {
                mode: modes[0],
                value: Some(CellValue::Value(item)),
            }])?;
        }
        Ok(Columns {
            modes,
            objects: false,
        })
    }

    /// One object as one row (`header` has the name and meta), or, when its keys cannot be
    /// fields, as one JSON cell.
    fn write_record<'v, W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        mut header: Header,
        order_key: &str,
        members: impl Iterator<Item = (&'v str, &'v Value)> + Clone,
    ) -> Result<()> {
        let count = members.clone().count();
        if count == 0 {
            // The reference's bytes for `{}`: one empty field name and a blank line.
            header.fields = vec![String::new()];
            encoder.begin_owned_section(header)?;
            return encoder.write_blank_row();
        }
        if count == 1 && members.clone().all(|(k, _)| k == "value") {
            // `{"value": x}`: the one field `value`, marked as a record.
            header.meta.insert(SHAPE_META.into(), "record".into());
            let member = members
                .clone()
                .map(|(_, v)| v)
                .next()
                .unwrap_or(&Value::Null);
            return self.write_single_field(encoder, header, "value", member);
        }
        let fits = count <= self.options.limits.max_fields
            && members.clone().all(|(k, _)| is_field_name(k));
        if !fits {
            // Keys a header cannot carry: the object as one JSON cell.
            let object: Map<String, Value> =
                members.map(|(k, v)| (k.to_owned(), v.clone())).collect();
            if header.meta.contains_key(SHAPE_META) {
                header.meta.insert(SHAPE_META.into(), "scalar".into());
            }
            let value = Value::Object(object);
            return self
                .write_values(
                    encoder,
                    header,
                    order_key,
                    std::slice::from_ref(&value),
                    false,
                )
                .map(drop);
        }
        // The tool's column order first (layouts), then the object's.
        let order = self.order(order_key);
        let seed = self.tool.map_or(&[][..], |t| t.seed(order_key));
        let mut fields: Vec<(&str, Option<&Value>)> = Vec::with_capacity(count);
        for name in order {
            match members.clone().find(|(k, _)| k == name) {
                Some((k, v)) => fields.push((k, Some(v))),
                None if seed.contains(name) => fields.push((name, None)),
                None => {}
            }
        }
        fields.extend(
            members
                .filter(|(k, _)| !order.contains(k))
                .map(|(k, v)| (k, Some(v))),
        );
        let single = fields.len() == 1;
        let columns: Vec<Column> = fields
            .iter()
            .map(|(k, v)| {
                let mut column = Column::new(kind_of(self.tool, k));
                column.add(*v);
                column
            })
            .collect();
        let modes = modes(&columns, single);
        header.fields = fields.iter().map(|(k, _)| (*k).to_owned()).collect();
        add_types(&mut header, &modes);
        encoder.begin_owned_section(header)?;
        encoder.write_row(
            fields
                .iter()
                .zip(&modes)
                .map(|((_, value), &mode)| ValueCell {
                    mode,
                    value: value.map(CellValue::Value),
                }),
        )
    }

    /// A one-field record.
    fn write_single_field<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        mut header: Header,
        field: &str,
        value: &Value,
    ) -> Result<()> {
        let mut column = Column::new(kind_of(self.tool, field));
        column.add(Some(value));
        let modes = modes(std::slice::from_ref(&column), true);
        header.fields = vec![field.to_owned()];
        add_types(&mut header, &modes);
        encoder.begin_owned_section(header)?;
        encoder.write_row([ValueCell {
            mode: modes[0],
            value: Some(CellValue::Value(value)),
        }])
    }

    /// How to write `map` as a wrapper, or `None` when it is better (or only possible) as
    /// one record: it needs a member that is an array of objects.
    /// `typed`: the tables of a typed layout's rows, by member (their members in `map` are
    /// empty arrays); each is taken as the value path would take the rows, or the plan is
    /// `None`.
    fn plan<'v>(
        &self,
        members: impl Iterator<Item = (&'v str, &'v Value)> + Clone,
        typed: &mut Vec<(&str, Table<'v>)>,
        records: &mut Vec<(&str, Record<'v>)>,
    ) -> Option<Plan<'v>> {
        // A plan needs a section of rows: a table, or an empty array a layout declares.
        if typed.is_empty() && !members.clone().any(|(_, value)| value.is_array()) {
            return None;
        }
        let mut plan = Plan {
            sections: Vec::new(),
            meta: Vec::new(),
            rest: Vec::new(),
        };
        let meta_room = self.options.limits.max_meta.saturating_sub(3);
        let mut tables = 0;
        let layout = self.options.layout_columns;
        // Under a dotted name read by the tool before its last dot (`find_usages.x`), a section
        // `find_usages.x.key` would read by no tool: such a name gets one section.
        let by_prefix = self.tool.is_some() && schema::tool(self.name).is_none();
        for (key, value) in members {
            // A section `tool.key` must not be named like a tool of its own.
            let sectionable =
                !by_prefix && is_section_key(key) && schema::member_tool(self.name, key).is_none();
            let holds = self.tool.map_or(Holds::List, |t| t.holds(key));
            // The tool's main rows (under its wrapper key) have the seed's `""` columns.
            let seed = self.tool.map_or(&[][..], |t| match t.seed(key) {
                [] if t.wrapper == Some(key) => t.seed(""),
                seed => seed,
            });
            if let Some(at) = typed.iter().position(|(k, _)| *k == key) {
                let (_, table) = typed.swap_remove(at);
                if !(sectionable && holds == Holds::List) || table.is_values() {
                    return None;
                }
                tables += 1;
                plan.sections.push((key, Member::Table(table)));
                continue;
            }
            if let Some(at) = records.iter().position(|(k, _)| *k == key) {
                // As an object `Member::Single` takes (the record has at least two fields,
                // none named `value` alone, all of them names a header carries).
                let (_, record) = records.swap_remove(at);
                if !(sectionable && holds == Holds::Single) {
                    return None;
                }
                plan.sections.push((key, Member::Record(record)));
                continue;
            }
            match value {
                Value::Array(items)
                    if layout && sectionable && items.is_empty() && !seed.is_empty() =>
                {
                    tables += 1;
                    plan.sections.push((key, Member::Empty(seed)));
                }
                scalar
                    if layout
                        && sectionable
                        && holds == Holds::Merge
                        && !matches!(scalar, Value::Array(_) | Value::Object(_) | Value::Null)
                        && !matches!(scalar, Value::String(s) if s.is_empty()) =>
                {
                    plan.sections.push((key, Member::Merge(scalar)));
                }
                Value::Array(items)
                    if sectionable
                        && holds == Holds::List
                        && !items.is_empty()
                        && items.iter().all(Value::is_object) =>
                {
                    // A table of the lone column `value` needs `shape=`, which would make a
                    // lone section read as bare rows: such a member rides as JSON instead.
                    if self.uniform(items) {
                        tables += 1;
                        plan.sections.push((key, Member::Uniform(items)));
                        continue;
                    }
                    match self.table(items).filter(|t| !t.is_values()) {
                        Some(table) => {
                            tables += 1;
                            plan.sections.push((key, Member::Table(table)));
                        }
                        None => plan.rest.push((key, value)),
                    }
                }
                Value::Array(items)
                    if sectionable
                        && holds == Holds::List
                        && items.len() >= LIST_SECTION_MIN
                        && !items.iter().any(|v| v.is_array() || v.is_object()) =>
                {
                    plan.sections.push((key, Member::Values(items)));
                }
                Value::Object(object)
                    if sectionable
                        && holds == Holds::Single
                        && !object.is_empty()
                        && !(object.len() == 1 && object.contains_key("value"))
                        && object.keys().all(|k| is_field_name(k)) =>
                {
                    plan.sections.push((key, Member::Single(object)));
                }
                Value::Array(_) | Value::Object(_) => plan.rest.push((key, value)),
                scalar => match self.meta_text(key, scalar) {
                    Some(text) if plan.meta.len() < meta_room => {
                        plan.meta.push((key.to_owned(), text));
                    }
                    _ if sectionable
                        && holds == Holds::Merge
                        && !matches!(scalar, Value::String(s) if s.is_empty()) =>
                    {
                        plan.sections.push((key, Member::Merge(scalar)));
                    }
                    _ => plan.rest.push((key, value)),
                },
            }
        }
        let fits_rest = plan.rest.len() <= self.options.limits.max_fields
            && plan.rest.iter().all(|(k, _)| is_field_name(k))
            && !(plan.rest.len() == 1 && plan.rest[0].0 == "value");
        if tables == 0 || !fits_rest {
            return None;
        }
        Some(plan)
    }

    /// A scalar member's meta text: itself, or its JSON text, whichever the header can carry
    /// and reads back as the member.
    fn meta_text(&self, key: &str, value: &Value) -> Option<String> {
        if !is_meta_key(key) {
            return None;
        }
        let kind = kind_of(self.tool, key);
        let reads_back = |text: &str| is_meta_text(text) && read_meta(kind, text) == *value;
        match value {
            // A space stays a space in the JSON text too: neither text can be meta.
            Value::String(s) if s.contains(' ') => None,
            // The text itself, else its JSON text (made only when needed).
            Value::String(s) if reads_back(s) => Some(s.clone()),
            Value::String(s) => {
                let mut quoted = Vec::new();
                write_string(&mut quoted, s);
                String::from_utf8(quoted)
                    .ok()
                    .filter(|text| reads_back(text))
            }
            Value::Number(n) => Some(number_text(n).into_owned()).filter(|text| reads_back(text)),
            Value::Bool(b) => Some(b.to_string()).filter(|text| reads_back(text)),
            Value::Null => Some("null".to_owned()).filter(|text| reads_back(text)),
            Value::Array(_) | Value::Object(_) => None,
        }
    }

    fn write_wrapper<W: Write>(&self, encoder: &mut Encoder<W>, plan: Plan<'_>) -> Result<()> {
        let layout = self.options.layout_columns;
        let mut meta: std::collections::BTreeMap<String, String> = plan.meta.into_iter().collect();
        let wrapper = self.tool.and_then(|t| t.wrapper);
        let mut sections = plan.sections;
        if let Some(tool) = self.tool.filter(|_| layout) {
            // The seed's section order (`.nodes` before `.edges`), the others after.
            let rank = |key: &str| tool.seed.iter().position(|(k, _)| *k == key);
            sections.sort_by_key(|(key, _)| rank(key).unwrap_or(usize::MAX));
        }
        // Layouts write Gortex's meta where Gortex does: the row count `edges` of
        // find_usages, and `count` on a graph's `.edges`.
        let mut placed: Vec<(&str, String, String)> = Vec::new();
        if layout {
            if let Some(tool) = self.tool {
                for (key, section) in tool.meta_at {
                    if let Some(text) = meta.remove(*key) {
                        placed.push((section, (*key).to_owned(), text));
                    }
                }
            }
            if self.name == "find_usages" && !meta.contains_key("edges") {
                let rows = sections.iter().find_map(|(key, member)| match member {
                    Member::Table(table) if Some(*key) == wrapper => Some(table.rows),
                    Member::Empty(_) if Some(*key) == wrapper => Some(0),
                    _ => None,
                });
                if let Some(rows) = rows {
                    meta.insert("edges".into(), rows.to_string());
                }
            }
        }
        // The first section: the rest of the members as one row under the tool's own name,
        // or (Gortex's shape) the tool's main table under its name, carrying the meta.
        if !plan.rest.is_empty() {
            let mut header = Header::new(self.name, Vec::<String>::new());
            header.meta = std::mem::take(&mut meta);
            if wrapper.is_some() {
                header.meta.insert(SHAPE_META.into(), "record".into());
            }
            self.write_record(encoder, header, "", plan.rest.iter().copied())?;
        } else if let Some(at) = sections.iter().position(|(key, member)| {
            // A lone section under the tool's name reads as the wrapper's main table only
            // when it carries meta; a layout reads it either way.
            let base = match self.tool {
                Some(tool) if layout => !tool.seed("").is_empty(),
                _ => !meta.is_empty(),
            };
            Some(*key) == wrapper
                && matches!(
                    member,
                    Member::Table(_) | Member::Uniform(_) | Member::Empty(_)
                )
                && base
        }) {
            let (_, member) = sections.remove(at);
            let mut header = Header::new(self.name, Vec::<String>::new());
            header.meta = std::mem::take(&mut meta);
            // Without meta the section reads as bare rows: one row needs `rows=1`.
            let rows = match &member {
                Member::Table(table) => table.rows,
                Member::Uniform(items) => items.len(),
                _ => 0,
            };
            if header.meta.is_empty() && rows == 1 {
                header.meta.insert(ROWS_META.into(), "1".into());
            }
            self.write_member(encoder, header, "", member)?;
        }
        for (key, member) in sections {
            // `tool.key`, without `format!`'s machinery (a section of a small response).
            let mut name = String::with_capacity(self.name.len() + 1 + key.len());
            name.push_str(self.name);
            name.push('.');
            name.push_str(key);
            let mut header = Header::new(name, Vec::<String>::new());
            header.meta = std::mem::take(&mut meta);
            for (section, meta_key, text) in &placed {
                if *section == key {
                    header.meta.insert(meta_key.clone(), text.clone());
                }
            }
            self.write_member(encoder, header, key, member)?;
        }
        Ok(())
    }

    fn write_member<W: Write>(
        &self,
        encoder: &mut Encoder<W>,
        mut header: Header,
        key: &str,
        member: Member<'_>,
    ) -> Result<()> {
        match member {
            Member::Table(table) => self
                .write_table(encoder, header, key, table, false)
                .map(drop),
            Member::Uniform(items) => {
                if self.write_uniform_table(encoder, &header, items, false)? {
                    return Ok(());
                }
                match self.table(items) {
                    Some(table) => self.write_table(encoder, header, key, table, false),
                    None => self.write_values(encoder, header, key, items, false),
                }
                .map(drop)
            }
            Member::Values(items) => self
                .write_values(encoder, header, key, items, false)
                .map(drop),
            Member::Record(record) => self.write_typed_row(encoder, header, &record),
            Member::Single(object) => self.write_record(
                encoder,
                header,
                key,
                object.iter().map(|(k, v)| (k.as_str(), v)),
            ),
            Member::Merge(value) => self.write_single_field(encoder, header, key, value),
            Member::Empty(columns) => {
                header.fields = columns.iter().map(|c| (*c).to_owned()).collect();
                encoder.begin_owned_section(header)?;
                match self.comment(0) {
                    Some(comment) if self.options.comments => encoder.write_comment(&comment),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// Appends a row of text, numbers and booleans straight to the open section (each cell as
/// [`ValueCell`] writes it, without its checks); `false` (nothing written) for a row with
/// another cell, a line over the limit, or a one-column row without a value, which
/// [`Encoder::write_row`] writes (or refuses). The caller ends the row
/// ([`Encoder::end_raw_row`]). Not under `arbitrary_precision` (numbers are then checked).
#[inline]
fn write_simple_row<W: Write>(
    encoder: &mut Encoder<W>,
    row: &[Option<CellValue<'_>>],
    modes: &[Mode],
) -> bool {
    let max_line = encoder.max_line_length();
    let out = encoder.raw_rows();
    let start = out.len();
    for (j, (cell, &mode)) in row.iter().zip(modes).enumerate() {
        if j > 0 {
            out.push(b'\t');
        }
        let Some(cell) = *cell else { continue };
        let text = match cell {
            CellValue::Str(s) => Some(s),
            CellValue::Value(Value::String(s)) => Some(s.as_str()),
            _ => None,
        };
        let simple = match (mode, cell) {
            (Mode::Letter(b's' | b'S') | Mode::Plain(_), _) if text.is_some() => true,
            (
                Mode::Letter(b'n' | b'N') | Mode::Plain(_),
                CellValue::U64(_) | CellValue::F64(_) | CellValue::Value(Value::Number(_)),
            ) => true,
            (Mode::Letter(b'b' | b'B') | Mode::Plain(_), CellValue::Value(Value::Bool(_))) => true,
            _ => false,
        };
        if !simple {
            out.truncate(start);
            return false;
        }
        match (text, cell) {
            (Some(s), _) if j == 0 => escape_first_into(out, s),
            (Some(s), _) => escape_into(out, s),
            (None, CellValue::U64(n)) => push_bytes(out, itoa::Buffer::new().format(n).as_bytes()),
            (None, CellValue::F64(f)) => crate::float::write_go_json_f64(out, f),
            (None, CellValue::Value(Value::Number(n))) => {
                // Without `arbitrary_precision` it writes every number.
                let _ = write_number(out, n);
            }
            (None, CellValue::Value(Value::Bool(b))) => {
                out.extend_from_slice(if *b { b"true" } else { b"false" });
            }
            _ => {}
        }
    }
    let len = out.len() - start;
    if len > max_line || (row.len() == 1 && len == 0) {
        out.truncate(start);
        return false;
    }
    true
}

/// Appends one row of [`Writer::write_uniform_table`] (`object` has the table's width),
/// each cell as it reads under any type letter its column may get, and adds its values to
/// `columns`; `false` when the row is not one such a table can hold (other keys, a null, a
/// number or nesting the JSON writer refuses, a line over `max_line`).
#[inline]
fn uniform_row(
    out: &mut Vec<u8>,
    object: &Map<String, Value>,
    fields: &[&str],
    columns: &mut [Column],
    max_line: usize,
) -> bool {
    let start = out.len();
    for (j, ((key, value), column)) in object.iter().zip(columns.iter_mut()).enumerate() {
        if !same_text(fields[j], key) {
            return false;
        }
        column.add(Some(value));
        if j > 0 {
            out.push(b'\t');
        }
        let written = match value {
            Value::String(s) if j == 0 => {
                escape_first_into(out, s);
                Ok(())
            }
            Value::String(s) => {
                escape_into(out, s);
                Ok(())
            }
            Value::Number(n) => write_number(out, n),
            Value::Bool(b) => {
                out.extend_from_slice(if *b { b"true" } else { b"false" });
                Ok(())
            }
            Value::Null => return false,
            Value::Array(_) | Value::Object(_) => write_json_cell_text(out, value),
        };
        if written.is_err() {
            return false;
        }
    }
    if out.len() - start > max_line {
        return false;
    }
    out.push(b'\n');
    true
}

/// `a == b`, without a call for short text: two overlapping words compare up to 16 bytes.
#[inline(always)]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same_text`] of bytes.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    fn word(bytes: &[u8]) -> u64 {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[..8]);
        u64::from_le_bytes(word)
    }
    fn half(bytes: &[u8]) -> u32 {
        let mut half = [0u8; 4];
        half.copy_from_slice(&bytes[..4]);
        u32::from_le_bytes(half)
    }
    match len {
        0 => true,
        1..=3 => a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1],
        4..=7 => half(a) == half(b) && half(&a[len - 4..]) == half(&b[len - 4..]),
        8..=16 => word(a) == word(b) && word(&a[len - 8..]) == word(&b[len - 8..]),
        _ => a == b,
    }
}

/// Every column plain, or every column under its letter.
fn modes(columns: &[Column], single: bool) -> Vec<Mode> {
    if columns.iter().all(|c| c.plain) {
        columns.iter().map(|c| Mode::Plain(c.kind)).collect()
    } else {
        columns
            .iter()
            .map(|c| Mode::Letter(c.letter(single)))
            .collect()
    }
}

fn add_types(header: &mut Header, modes: &[Mode]) {
    if modes.iter().any(|m| matches!(m, Mode::Letter(_))) {
        let types = modes
            .iter()
            .map(|m| match m {
                Mode::Letter(l) => char::from(*l),
                Mode::Plain(_) => 's',
            })
            .collect();
        header.meta.insert(TYPES_META.into(), types);
    }
}

// ---------------------------------------------------------------------------------------
// Decoding

/// A section's shape, from `shape=` meta.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    Record,
    Rows,
    Values,
    Scalar,
}

/// One section as read: its header's facts, its rows' values (when kept) and their lines.
struct SectionData {
    name: String,
    value_field: bool,
    empty_fields: bool,
    shape: Option<Shape>,
    rows_meta: Option<u64>,
    meta: Vec<(String, String)>,
    header_line: u64,
    rows: Vec<Value>,
    /// The rows as cells instead of `rows` (a typed layout's decoding).
    cells: Option<CellTable>,
    lines: Vec<u64>,
    count: u64,
}

/// A section's rows as cells, for a typed layout's decoding: no map per row. The value's
/// member is an empty array, and [`Lines::Table`] carries the rows to the deserializer,
/// which hands each row out as the map [`RowBuilder::object`] would have built.
#[derive(Debug)]
pub(crate) struct CellTable {
    fields: Vec<String>,
    /// The fields (by index) in the order of a row map with every cell.
    order: Vec<usize>,
    /// `fields.len()` cells a row.
    /// (A `Mutex` only so that a `Lines` can be a `static`; it is taken once, uncontended.)
    cells: std::sync::Mutex<Vec<Option<Value>>>,
    lines: Vec<u64>,
}

impl CellTable {
    fn new(fields: &[String], cells: Vec<Option<Value>>) -> Self {
        // A map of the fields lists them in their order, or sorted.
        let mut order: Vec<usize> = (0..fields.len()).collect();
        if !map_keeps_order() {
            order.sort_by(|&a, &b| fields[a].cmp(&fields[b]));
        }
        CellTable {
            fields: fields.to_vec(),
            order,
            cells: std::sync::Mutex::new(cells),
            lines: Vec::new(),
        }
    }

    fn take_cells(&self) -> Vec<Option<Value>> {
        let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *cells)
    }

    /// The rows as the maps [`RowBuilder::object`] builds.
    fn into_rows(self) -> Vec<Value> {
        self.take_rows()
    }

    /// The rows, taken out of the table, as the maps [`RowBuilder::object`] builds.
    fn take_rows(&self) -> Vec<Value> {
        let cells = self.take_cells();
        let width = self.fields.len().max(1);
        let mut rows = Vec::with_capacity(cells.len() / width);
        let mut cells = cells.into_iter();
        while cells.len() > 0 {
            rows.push(Value::Object(self.row_map(cells.by_ref().take(width))));
        }
        rows
    }

    /// One row's map: every field, then those without a cell removed in field order (as
    /// [`RowBuilder::object`] does).
    fn row_map(&self, row: impl Iterator<Item = Option<Value>>) -> Map<String, Value> {
        let mut map: Map<String, Value> = self
            .fields
            .iter()
            .map(|f| (f.clone(), Value::Null))
            .collect();
        let mut missing = Vec::new();
        for (field, cell) in self.fields.iter().zip(row) {
            match cell {
                Some(value) => map[field.as_str()] = value,
                None => missing.push(field),
            }
        }
        for field in missing {
            map.remove(field.as_str());
        }
        map
    }

    /// The order a row's present cells take in its map (field indices): every field's
    /// order, with those without a cell removed in field order as `Map::remove` removes.
    fn row_order(&self, row: &[Option<Value>], order: &mut Vec<usize>) {
        order.clear();
        order.extend_from_slice(&self.order);
        if row.iter().all(Option::is_some) {
            return;
        }
        let swaps = map_remove_swaps();
        for (i, _) in row.iter().enumerate().filter(|(_, c)| c.is_none()) {
            if let Some(at) = order.iter().position(|&j| j == i) {
                if swaps {
                    order.swap_remove(at);
                } else {
                    order.remove(at);
                }
            }
        }
    }
}

/// Whether removing a key from serde_json's `Map` moves its last member into the gap
/// (`preserve_order`'s `swap_remove`) rather than keeping the others' order.
fn map_remove_swaps() -> bool {
    static SWAPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SWAPS.get_or_init(|| {
        let mut map = Map::new();
        for key in ["a", "b", "c"] {
            map.insert(key.into(), Value::Null);
        }
        map.remove("a");
        map.keys().next().is_some_and(|k| k == "c")
    })
}

/// Where the rows of the decoded value came from, for errors of typed decoding.
#[derive(Debug, Default)]
enum Lines {
    #[default]
    None,
    /// An array of rows, one line each.
    Array(Vec<u64>),
    /// One row.
    Record(u64),
    /// A wrapper: its members' lines.
    Object(Vec<(String, Lines)>),
    /// An array of rows kept as cells (the array in the value is empty).
    Table(Box<CellTable>),
}

/// A decoded payload.
pub(crate) struct Decoded {
    pub(crate) tool: String,
    pub(crate) value: Value,
    lines: Lines,
}

fn meta_error(key: &str, message: impl Into<String>) -> Error {
    ErrorKind::InvalidMeta {
        key: key.to_owned(),
        message: message.into(),
    }
    .into()
}

/// The tool whose knowledge reads section `name`: the section's own name, or the name its
/// dotted suffix hangs from.
fn section_tool(name: &str) -> Option<&'static Tool> {
    schema::tool(name).or_else(|| {
        name.rsplit_once('.')
            .and_then(|(base, _)| schema::tool(base))
    })
}

fn row_count_error(tool: &str, expected: String, found: u64) -> Error {
    ErrorKind::RowCount {
        tool: tool.to_owned(),
        expected,
        found,
    }
    .into()
}

/// How the rows of one section read: the state a section's header sets up, applied row by
/// row (by [`read_section`] and by the streaming [`RowReader`](crate::RowReader)).
#[derive(Debug)]
pub(crate) struct SectionReader {
    name: String,
    readings: Vec<Reading>,
    scalar_rows: bool,
    value_field: bool,
    empty_fields: bool,
    shape: Option<Shape>,
    rows_meta: Option<u64>,
    meta: Vec<(String, String)>,
    header_line: u64,
    count: u64,
    /// Built at the first row read as an object.
    rows: Option<RowBuilder>,
}

/// Builds a section's row objects: each row's map is a clone of one map holding every field
/// (keys in the map's order, values null) whose values are then set in that order. Cloning
/// copies the keys in order into a new node, without the comparisons, sort and temporary
/// `Vec` that inserting or collecting the members one by one costs.
#[derive(Debug, Default)]
struct RowBuilder {
    /// Every field with a null value.
    template: Map<String, Value>,
    /// The place of each field (in header order) among the map's members.
    place: Vec<usize>,
    /// One row's values, by place (null once moved into the row's map).
    values: Vec<Value>,
    /// The fields (in header order) whose cells the row is missing.
    missing: Vec<usize>,
}

/// Sets `slot`, which holds null unless a row before failed half-way, to `value`, without
/// the call that dropping a null would cost (the compiler does not inline `Value`'s drop).
#[inline(always)]
// Only a null, which owns nothing, is forgotten: nothing can leak.
#[allow(clippy::mem_forget)]
fn set_null(slot: &mut Value, value: Value) {
    let old = std::mem::replace(slot, value);
    if matches!(old, Value::Null) {
        // Nothing to drop.
        std::mem::forget(old);
    } else {
        drop(old);
    }
}

impl RowBuilder {
    fn new(fields: &[String]) -> Self {
        let template: Map<String, Value> =
            fields.iter().map(|f| (f.clone(), Value::Null)).collect();
        let places: std::collections::HashMap<&str, usize> = template
            .keys()
            .enumerate()
            .map(|(place, key)| (key.as_str(), place))
            .collect();
        let place = fields
            .iter()
            .map(|f| places.get(f.as_str()).copied().unwrap_or(0))
            .collect();
        RowBuilder {
            values: vec![Value::Null; template.len()],
            template,
            place,
            missing: Vec::new(),
        }
    }

    /// One row as an object, members in field order; missing cells leave their members out.
    fn object(
        &mut self,
        row: Row<'_>,
        fields: &[String],
        readings: &[Reading],
    ) -> Result<Map<String, Value>> {
        self.missing.clear();
        let (values, place, missing) = (&mut self.values, &self.place, &mut self.missing);
        read_cells(row, fields, readings, |i, value| match value {
            Some(value) => set_null(&mut values[place[i]], value),
            None => missing.push(i),
        })?;
        let mut map = self.template.clone();
        for (slot, value) in map.values_mut().zip(&mut self.values) {
            // The template's null goes back to `values`, ready for the next row.
            std::mem::swap(slot, value);
        }
        for &i in &self.missing {
            map.remove(&fields[i]);
        }
        Ok(map)
    }
}

/// Reads a row's cells by their readings, handing each (in field order) to `put`: its
/// value, or `None` when the row has no cell there.
#[inline(always)]
fn read_cells(
    row: Row<'_>,
    fields: &[String],
    readings: &[Reading],
    mut put: impl FnMut(usize, Option<Value>),
) -> Result<()> {
    let mut raw = row.raw_cells();
    for (i, (field, &reading)) in fields.iter().zip(readings).enumerate() {
        // JSON text, a short number or a boolean is read straight from the row, its end
        // found by reading it; any other cell, or one of those with an escape or an
        // error, is read the general way below.
        if let Some((rest, _)) = raw.rest() {
            if let Some((value, len)) = read_from_row(reading, rest) {
                put(i, Some(value));
                raw.skip_cell(len);
                continue;
            }
        }
        let (cell, offset, escaped) =
            raw.next_cell()
                .unwrap_or(("", row.as_raw_str().len(), false));
        match read_cell(reading, cell, escaped, field) {
            Ok(value) => put(i, value),
            Err(e) => return Err(e.or_position(row.position(offset))),
        }
    }
    Ok(())
}

impl SectionReader {
    /// Reads a section's header (at line `header_line`): its type letters or its tool's
    /// column types, its `rows=`, its `shape=`.
    pub(crate) fn begin(header: Header, header_line: u64) -> Result<Self> {
        let at_header = |e: Error| e.or_position(Position::new(header_line, 1));
        let width = header.fields.len();
        let tool = section_tool(&header.tool);
        let readings: Vec<Reading> = match header.meta_value(TYPES_META) {
            None => header
                .fields
                .iter()
                .map(|f| Reading::Kind(kind_of(tool, f)))
                .collect(),
            Some(types) => {
                if types.chars().count() != width {
                    return Err(at_header(meta_error(
                        TYPES_META,
                        format!("{} letters for {width} fields", types.chars().count()),
                    )));
                }
                if let Some(bad) = types.chars().find(|c| !"snbjvSNBJ".contains(*c)) {
                    return Err(at_header(meta_error(
                        TYPES_META,
                        format!("unknown type letter {bad:?}"),
                    )));
                }
                types.bytes().map(Reading::Letter).collect()
            }
        };
        let rows_meta = match header.meta_value(ROWS_META) {
            None => None,
            Some(text) => Some(text.parse::<u64>().map_err(|_| {
                at_header(meta_error(
                    ROWS_META,
                    format!("expected a row count, found {text:?}"),
                ))
            })?),
        };
        let shape = match header.meta_value(SHAPE_META) {
            None => None,
            Some("record") => Some(Shape::Record),
            Some("rows") => Some(Shape::Rows),
            Some("values") => Some(Shape::Values),
            Some("scalar") => Some(Shape::Scalar),
            Some(other) => {
                return Err(at_header(meta_error(
                    SHAPE_META,
                    format!("unknown shape {other:?}"),
                )))
            }
        };
        let value_field = header.fields == ["value"];
        if matches!(shape, Some(Shape::Values | Shape::Scalar)) && !value_field {
            return Err(at_header(meta_error(
                SHAPE_META,
                "an array of scalars or a scalar has the single field `value`",
            )));
        }
        Ok(SectionReader {
            scalar_rows: value_field && !matches!(shape, Some(Shape::Record | Shape::Rows)),
            empty_fields: header.fields == [""],
            value_field,
            shape,
            rows_meta,
            meta: header
                .meta
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), TYPES_META | SHAPE_META | ROWS_META))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            rows: None,
            name: header.tool,
            readings,
            header_line,
            count: 0,
        })
    }

    /// The section's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// One row's value: an object, or for a `fields=value` section the element; counted
    /// against the section's `rows=`.
    pub(crate) fn row(&mut self, row: Row<'_>, fields: &[String]) -> Result<Value> {
        self.counted(&row)?;
        if !self.scalar_rows {
            return self
                .rows
                .get_or_insert_with(|| RowBuilder::new(fields))
                .object(row, fields, &self.readings)
                .map(Value::Object);
        }
        let (raw, offset, escaped) = row.raw_cells().next_cell().unwrap_or(("", 0, false));
        match read_cell(self.readings[0], raw, escaped, "value") {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(Error::new(
                ErrorKind::InvalidValue {
                    field: "value".into(),
                    message: "an element cannot be missing".into(),
                },
                Some(row.position(offset)),
            )),
            Err(e) => Err(e.or_position(row.position(offset))),
        }
    }

    /// Counts a row against the section's `rows=`.
    #[inline]
    fn counted(&mut self, row: &Row<'_>) -> Result<()> {
        self.count += 1;
        match self.rows_meta {
            Some(expected) if self.count > expected => {
                Err(
                    row_count_error(&self.name, expected.to_string(), self.count)
                        .or_position(Position::new(row.line(), 1)),
                )
            }
            _ => Ok(()),
        }
    }

    /// One row of an object section as its cells, appended to `cells` (one per field),
    /// counted as [`SectionReader::row`] counts it.
    fn row_cells(
        &mut self,
        row: Row<'_>,
        fields: &[String],
        cells: &mut Vec<Option<Value>>,
    ) -> Result<()> {
        self.counted(&row)?;
        let start = cells.len();
        cells.resize_with(start + fields.len(), || None);
        let slots = &mut cells[start..];
        let result = read_cells(row, fields, &self.readings, |i, value| slots[i] = value);
        if result.is_err() {
            cells.truncate(start);
        }
        result
    }

    /// Checks, once the section's rows are read, that there were as many as `rows=` says.
    pub(crate) fn finish(&self) -> Result<()> {
        match self.rows_meta {
            Some(expected) if expected != self.count => {
                Err(
                    row_count_error(&self.name, expected.to_string(), self.count)
                        .or_position(Position::new(self.header_line, 1)),
                )
            }
            _ => Ok(()),
        }
    }
}

/// Reads the rows of the section just begun with `header`.
fn read_section<S: SectionSource>(
    source: &mut S,
    header: Header,
    header_line: u64,
    keep: Keep,
) -> Result<SectionData> {
    let mut reader = SectionReader::begin(header, header_line)?;
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    if keep == Keep::Cells && !reader.scalar_rows {
        let mut cells = Vec::new();
        let mut fields = Vec::new();
        while let Some(line) = source.with_next_row(|row, names| {
            if fields.is_empty() {
                fields = names.to_vec();
            }
            let line = row.line();
            reader.row_cells(row, names, &mut cells)?;
            Ok(line)
        })? {
            lines.push(line);
        }
        reader.finish()?;
        let table = (!fields.is_empty()).then(|| CellTable::new(&fields, cells));
        return Ok(reader.into_data(header_line, rows, table, lines));
    }
    let keep = keep != Keep::Validate;
    let mut several = false;
    while let Some((value, line)) =
        source.with_next_row(|row, fields| Ok((reader.row(row, fields)?, row.line())))?
    {
        // Without `keep` (validation), a section's first row is still kept while it is the
        // only one: a one-row section may be a record whose members merge into a wrapper,
        // and a member named twice is an error `validate` must find as `decode` does. One
        // row is bounded by the line limit.
        if keep || (rows.is_empty() && !several) {
            rows.push(value);
            lines.push(line);
        } else {
            rows.clear();
            lines.clear();
            several = true;
        }
    }
    reader.finish()?;
    Ok(reader.into_data(header_line, rows, None, lines))
}

/// What a decoding keeps of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Nothing past a section's first row (`validate`).
    Validate,
    /// Every row, as a `Value`.
    Values,
    /// Every row; a section of objects as cells (a typed layout's decoding).
    Cells,
}

impl SectionReader {
    fn into_data(
        self,
        header_line: u64,
        rows: Vec<Value>,
        cells: Option<CellTable>,
        lines: Vec<u64>,
    ) -> SectionData {
        SectionData {
            name: self.name,
            value_field: self.value_field,
            empty_fields: self.empty_fields,
            shape: self.shape,
            rows_meta: self.rows_meta,
            meta: self.meta,
            header_line,
            rows,
            cells,
            lines,
            count: self.count,
        }
    }
}

impl SectionData {
    /// The rows as `Value`s, where they were kept as cells.
    fn materialize(&mut self) {
        if let Some(table) = self.cells.take() {
            self.rows = table.into_rows();
        }
    }
}

/// Reads every section and assembles the value.
fn decode_source<S: SectionSource>(source: &mut S, keep: Keep) -> Result<Decoded> {
    let Some(header) = source.next_header()? else {
        return Err(Error::at(
            ErrorKind::EmptyPayload,
            source.line_no().max(1),
            1,
        ));
    };
    let line = source.line_no();
    let first = read_section(source, header, line, keep)?;
    let Some(header) = source.next_header()? else {
        return single(first);
    };
    let line = source.line_no();
    if header.tool == first.name {
        return continued(source, first, header, line, keep);
    }
    let second = read_section(source, header, line, keep)?;
    let base = match second.name.strip_prefix(first.name.as_str()) {
        Some(rest) if rest.starts_with('.') => first.name.clone(),
        _ => match first.name.rsplit_once('.') {
            Some((base, _)) => base.to_owned(),
            None => {
                return Err(Error::at(
                    ErrorKind::UnexpectedSection {
                        expected: "the end of the payload".into(),
                        found: format!("section `{}`", second.name),
                    },
                    second.header_line,
                    1,
                ))
            }
        },
    };
    let mut wrapper = Wrapper {
        tool: schema::tool(&base),
        base,
        object: Map::new(),
        meta: Map::new(),
        lines: Vec::new(),
    };
    wrapper.add(first)?;
    wrapper.add(second)?;
    while let Some(header) = source.next_header()? {
        let line = source.line_no();
        let section = read_section(source, header, line, keep)?;
        wrapper.add(section)?;
    }
    Ok(wrapper.finish())
}

/// A payload whose sections all have one name: one array written in several sections (as
/// [`RowWriter`](crate::RowWriter) does when a row does not fit the columns it chose). It
/// reads as the first section would with every section's rows.
fn continued<S: SectionSource>(
    source: &mut S,
    mut first: SectionData,
    header: Header,
    line: u64,
    keep: Keep,
) -> Result<Decoded> {
    first.materialize();
    let mut next = Some((header, line));
    while let Some((header, line)) = next {
        if header.tool != first.name {
            return Err(Error::at(
                ErrorKind::UnexpectedSection {
                    expected: format!("section `{}`", first.name),
                    found: format!("section `{}`", header.tool),
                },
                line,
                1,
            ));
        }
        let mut section = read_section(source, header, line, keep)?;
        section.materialize();
        first.rows.extend(section.rows);
        first.lines.extend(section.lines);
        first.count += section.count;
        next = source
            .next_header()?
            .map(|header| (header, source.line_no()));
    }
    // Several sections make an array, whatever the count.
    first.rows_meta = Some(first.count);
    single(first)
}

/// The value of a section read as a list: an array of its rows.
fn list(data: SectionData) -> (Value, Lines) {
    match data.cells {
        Some(mut table) => {
            table.lines = data.lines;
            (Value::Array(Vec::new()), Lines::Table(Box::new(table)))
        }
        None => (Value::Array(data.rows), Lines::Array(data.lines)),
    }
}

/// The one row of a section read as an object.
fn one_row(mut data: SectionData) -> Result<(Value, Lines)> {
    data.materialize();
    if data.count != 1 {
        if data.count == 0 && data.empty_fields {
            return Ok((Value::Object(Map::new()), Lines::None));
        }
        return Err(row_count_error(&data.name, "1".into(), data.count)
            .or_position(Position::new(data.header_line, 1)));
    }
    let line = data.lines.pop().unwrap_or(data.header_line);
    Ok((data.rows.pop().unwrap_or(Value::Null), Lines::Record(line)))
}

/// The value of a payload of one section.
fn single(mut data: SectionData) -> Result<Decoded> {
    let name = data.name.clone();
    if let Some(shape) = data.shape {
        let (value, lines) = bare(data, shape)?;
        return Ok(Decoded {
            tool: name,
            value,
            lines,
        });
    }
    let known = schema::tool(&name);
    if known.is_none() {
        if let Some((base, key)) = name.rsplit_once('.') {
            // A lone `tool.key` section: member `key` of a wrapper.
            let _ = key;
            let mut wrapper = Wrapper {
                tool: schema::tool(base),
                base: base.to_owned(),
                object: Map::new(),
                meta: Map::new(),
                lines: Vec::new(),
            };
            wrapper.add(data)?;
            return Ok(wrapper.finish());
        }
    }
    if !data.meta.is_empty() {
        let meta = std::mem::take(&mut data.meta);
        let mut object = Map::new();
        let lines;
        if known.is_some_and(|t| t.record) {
            let (value, record_lines) = one_row(data)?;
            if let Value::Object(row) = value {
                object = row;
            }
            lines = record_lines;
        } else {
            let key = known.and_then(|t| t.wrapper).unwrap_or_else(|| {
                schema::default_wrapper(&mut meta.iter().map(|(k, _)| k.as_str()))
            });
            let (value, member_lines) = list(data);
            object.insert(key.to_owned(), value);
            lines = Lines::Object(vec![(key.to_owned(), member_lines)]);
        }
        for (key, text) in &meta {
            if !object.contains_key(key) {
                object.insert(key.clone(), read_meta(kind_of(known, key), text));
            }
        }
        return Ok(Decoded {
            tool: name,
            value: Value::Object(object),
            lines,
        });
    }
    let shape = match (data.rows_meta.is_some(), data.value_field, data.count) {
        (true, true, _) => Shape::Values,
        (true, false, _) => Shape::Rows,
        (false, true, 1) => Shape::Scalar,
        (false, false, 1) => Shape::Record,
        (false, _, 0) if data.empty_fields => Shape::Record,
        (false, true, _) => Shape::Values,
        (false, false, _) => Shape::Rows,
    };
    let (value, lines) = bare(data, shape)?;
    Ok(Decoded {
        tool: name,
        value,
        lines,
    })
}

/// A section that is the whole value.
fn bare(data: SectionData, shape: Shape) -> Result<(Value, Lines)> {
    match shape {
        Shape::Rows | Shape::Values => Ok(list(data)),
        Shape::Record | Shape::Scalar => one_row(data),
    }
}

/// The object a payload of several sections assembles into.
struct Wrapper {
    base: String,
    tool: Option<&'static Tool>,
    object: Map<String, Value>,
    meta: Map<String, Value>,
    lines: Vec<(String, Lines)>,
}

impl Wrapper {
    fn duplicate(&self, key: &str, line: u64) -> Error {
        Error::at(
            ErrorKind::UnexpectedSection {
                expected: format!("one member `{key}` in `{}`", self.base),
                found: "a second one".into(),
            },
            line,
            1,
        )
    }

    fn insert(&mut self, key: String, value: Value, lines: Lines, line: u64) -> Result<()> {
        if self.object.contains_key(&key) {
            return Err(self.duplicate(&key, line));
        }
        self.object.insert(key.clone(), value);
        self.lines.push((key, lines));
        Ok(())
    }

    fn merge(&mut self, data: SectionData) -> Result<()> {
        let line = data.header_line;
        let (value, lines) = one_row(data)?;
        let record_line = match lines {
            Lines::Record(line) => line,
            _ => line,
        };
        if let Value::Object(members) = value {
            for (key, value) in members {
                self.insert(key, value, Lines::Record(record_line), line)?;
            }
        }
        Ok(())
    }

    fn add(&mut self, mut data: SectionData) -> Result<()> {
        let line = data.header_line;
        for (key, text) in std::mem::take(&mut data.meta) {
            if !self.meta.contains_key(&key) {
                let value = read_meta(kind_of(self.tool, &key), &text);
                self.meta.insert(key, value);
            }
        }
        if data.name == self.base {
            let wrapper = self.tool.and_then(|t| t.wrapper);
            return match wrapper {
                Some(key) if data.shape != Some(Shape::Record) => {
                    let (value, lines) = list(data);
                    self.insert(key.to_owned(), value, lines, line)
                }
                _ => self.merge(data),
            };
        }
        let key = match data
            .name
            .strip_prefix(self.base.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
        {
            Some(key) if !key.is_empty() => key.to_owned(),
            _ => {
                return Err(Error::at(
                    ErrorKind::UnexpectedSection {
                        expected: format!("a section of `{}`", self.base),
                        found: format!("section `{}`", data.name),
                    },
                    line,
                    1,
                ))
            }
        };
        let holds = match data.shape {
            Some(Shape::Record) => Holds::Single,
            Some(Shape::Scalar) => Holds::Single,
            Some(Shape::Rows | Shape::Values) => Holds::List,
            None => self.tool.map_or(Holds::List, |t| t.holds(&key)),
        };
        match holds {
            Holds::List => {
                let (value, lines) = list(data);
                self.insert(key, value, lines, line)
            }
            Holds::Single => {
                let (value, lines) = one_row(data)?;
                self.insert(key, value, lines, line)
            }
            Holds::Merge => self.merge(data),
        }
    }

    fn finish(mut self) -> Decoded {
        for (key, value) in std::mem::take(&mut self.meta) {
            if !self.object.contains_key(&key) {
                self.object.insert(key, value);
            }
        }
        Decoded {
            tool: self.base,
            value: Value::Object(self.object),
            lines: Lines::Object(self.lines),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Typed layouts

/// The options of tool `tool`'s layout (`crate::layouts`).
pub(crate) fn layout_options(tool: &'static str) -> Options {
    Options {
        tool: Cow::Borrowed(tool),
        ..Options::new()
    }
    .layout()
}

/// Writes `value` as tool `tool`'s layout (`crate::layouts`): Gortex's column order, the
/// seed's columns even when empty, Gortex's comments and meta placement.
pub(crate) fn encode_layout<W: Write>(
    encoder: &mut Encoder<W>,
    tool: &'static str,
    value: &Value,
) -> Result<()> {
    let options = layout_options(tool);
    Writer::layout(&options).write(encoder, value)
}

/// Reads a whole payload for a typed layout as [`decode_layout`] did before its rows were
/// kept as cells: every row a `Value` (the tests' reference).
#[cfg(test)]
pub(crate) fn decode_layout_values<S: SectionSource>(source: &mut S) -> Result<Decoded> {
    decode_source(source, Keep::Values)
}

/// Reads a whole payload for a typed layout.
pub(crate) fn decode_layout<S: SectionSource>(source: &mut S) -> Result<Decoded> {
    decode_source(source, Keep::Cells)
}

impl Decoded {
    /// A bare array (a layout's section without meta) as the member `key` of an object.
    pub(crate) fn wrapped(self, key: &str) -> Self {
        match self.value {
            Value::Array(items) => {
                let mut object = Map::new();
                object.insert(key.to_owned(), Value::Array(items));
                Decoded {
                    tool: self.tool,
                    value: Value::Object(object),
                    lines: Lines::Object(vec![(key.to_owned(), self.lines)]),
                }
            }
            value => Decoded { value, ..self },
        }
    }
}

// ---------------------------------------------------------------------------------------
// Typed decoding, with the line of the offending row

impl Decoded {
    /// The value as `T`; an error inside a row carries that row's line.
    pub(crate) fn into_typed<T: DeserializeOwned>(self) -> Result<T> {
        match value_into::<T>(self.value) {
            Ok(value) => Ok(value),
            Err(value) => {
                let result = T::deserialize(Lined {
                    value,
                    lines: &self.lines,
                });
                match (result, &self.lines) {
                    (Err(e), Lines::Record(line)) => Err(e.or_position(Position::new(*line, 1))),
                    (result, _) => result,
                }
            }
        }
    }
}

/// One row's value as `T`; an error carries the row's line.
pub(crate) fn typed_row<T: DeserializeOwned>(value: Value, line: u64) -> Result<T> {
    Decoded {
        tool: String::new(),
        value,
        lines: Lines::Record(line),
    }
    .into_typed()
}

/// A `serde_json::Error` met while deserializing the rows, as this crate's error.
fn from_json_error(e: &serde_json::Error) -> Error {
    crate::error::serde_message(e.to_string())
}

/// A value with the lines its rows came from: a deserializer over `serde_json::Value` that
/// reports errors at the row's line, and hands numbers out as `u64`, `i64` or `f64` (so that
/// `#[serde(flatten)]` works with serde_json's `arbitrary_precision`). It owns the value, so
/// that strings and keys move into the typed value instead of being copied.
struct Lined<'l> {
    value: Value,
    lines: &'l Lines,
}

static NO_LINES: Lines = Lines::None;

impl<'de> serde::Deserializer<'de> for Lined<'_> {
    type Error = Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else if let Some(f) = n.as_f64().filter(|f| f.is_finite()) {
                    visitor.visit_f64(f)
                } else {
                    serde::Deserializer::deserialize_any(Value::Number(n), visitor)
                        .map_err(|e| from_json_error(&e))
                }
            }
            Value::String(s) => visitor.visit_string(s),
            Value::Array(_) if matches!(self.lines, Lines::Table(_)) => match self.lines {
                Lines::Table(table) => visitor.visit_seq(TableSeq::new(table)),
                _ => unreachable!(),
            },
            Value::Array(items) => visitor.visit_seq(LinedSeq {
                items: items.into_iter(),
                lines: match self.lines {
                    Lines::Array(lines) => lines,
                    _ => &[],
                },
                index: 0,
            }),
            Value::Object(map) => visitor.visit_map(LinedMap {
                entries: map.into_iter(),
                members: match self.lines {
                    Lines::Object(members) => members,
                    _ => &[],
                },
                pending: None,
            }),
        }
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let value = match (self.value, self.lines) {
            (Value::Array(_), Lines::Table(table)) => Value::Array(table.take_rows()),
            (value, _) => value,
        };
        serde::Deserializer::deserialize_enum(value, name, variants, visitor)
            .map_err(|e| from_json_error(&e))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The rows of a [`CellTable`], as [`LinedSeq`] hands out rows: each row the map it would
/// have been, its errors at its line.
struct TableSeq<'l> {
    table: &'l CellTable,
    cells: std::vec::IntoIter<Option<Value>>,
    index: usize,
    order: Vec<usize>,
}

impl<'l> TableSeq<'l> {
    fn new(table: &'l CellTable) -> Self {
        TableSeq {
            cells: table.take_cells().into_iter(),
            table,
            index: 0,
            order: Vec::new(),
        }
    }
}

impl<'de> serde::de::SeqAccess<'de> for TableSeq<'_> {
    type Error = Error;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>> {
        if self.cells.len() == 0 {
            return Ok(None);
        }
        let width = self.table.fields.len().max(1);
        let row: Vec<Option<Value>> = self.cells.by_ref().take(width).collect();
        let line = self.table.lines.get(self.index).copied();
        self.index += 1;
        self.table.row_order(&row, &mut self.order);
        let result = seed.deserialize(TableRow {
            table: self.table,
            row,
            order: &self.order,
            line,
        });
        match (result, line) {
            (Err(e), Some(line)) => Err(e.or_position(Position::new(line, 1))),
            (result, _) => result.map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.cells.len() / self.table.fields.len().max(1))
    }
}

/// One row of a [`CellTable`], deserialized as [`Lined`] deserializes its map.
struct TableRow<'l> {
    table: &'l CellTable,
    row: Vec<Option<Value>>,
    order: &'l [usize],
    line: Option<u64>,
}

impl TableRow<'_> {
    /// The row as its map, for what only a `Value` can answer.
    fn into_lined(self, record: &Lines) -> Lined<'_> {
        Lined {
            value: Value::Object(self.table.row_map(self.row.into_iter())),
            lines: record,
        }
    }
}

impl<'de> serde::Deserializer<'de> for TableRow<'_> {
    type Error = Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let mut row = self.row;
        visitor.visit_map(RowMap {
            fields: &self.table.fields,
            order: self.order.iter(),
            remaining: self.order.len(),
            row: &mut row,
            pending: None,
        })
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let record = self.line.map_or(Lines::None, Lines::Record);
        self.into_lined(&record)
            .deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A row's members, in its map's order, as [`LinedMap`] hands out a map's.
struct RowMap<'r> {
    fields: &'r [String],
    order: std::slice::Iter<'r, usize>,
    remaining: usize,
    row: &'r mut [Option<Value>],
    pending: Option<Value>,
}

impl<'de> serde::de::MapAccess<'de> for RowMap<'_> {
    type Error = Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>> {
        let Some(&i) = self.order.next() else {
            return Ok(None);
        };
        self.remaining -= 1;
        self.pending = self.row[i].take();
        seed.deserialize(serde::de::value::StrDeserializer::<Error>::new(
            &self.fields[i],
        ))
        .map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let Some(value) = self.pending.take() else {
            return Err(ErrorKind::Custom("a map value without its key".into()).into());
        };
        seed.deserialize(Lined {
            value,
            lines: &NO_LINES,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.remaining)
    }
}

struct LinedSeq<'l> {
    items: std::vec::IntoIter<Value>,
    lines: &'l [u64],
    index: usize,
}

impl<'de> serde::de::SeqAccess<'de> for LinedSeq<'_> {
    type Error = Error;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let line = self.lines.get(self.index).copied();
        self.index += 1;
        let record = line.map_or(Lines::None, Lines::Record);
        let result = seed.deserialize(Lined {
            value: item,
            lines: &record,
        });
        match (result, line) {
            (Err(e), Some(line)) => Err(e.or_position(Position::new(line, 1))),
            (result, _) => result.map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct LinedMap<'l> {
    entries: serde_json::map::IntoIter,
    members: &'l [(String, Lines)],
    pending: Option<(Value, &'l Lines)>,
}

impl<'de> serde::de::MapAccess<'de> for LinedMap<'_> {
    type Error = Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let lines = self
            .members
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(&NO_LINES, |(_, lines)| lines);
        self.pending = Some((value, lines));
        seed.deserialize(serde::de::value::StringDeserializer::<Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let Some((value, lines)) = self.pending.take() else {
            return Err(ErrorKind::Custom("a map value without its key".into()).into());
        };
        seed.deserialize(Lined { value, lines })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_as(tool: &str, value: &Value) -> String {
        let options = Options::new().tool(tool);
        let text = options.encode_any(value).unwrap();
        let payload = options.decode_payload(&text).unwrap();
        assert_eq!(&payload.value, value, "{text}");
        assert_eq!(payload.tool, tool, "{text}");
        let streamed: Value = options.from_reader(text.as_bytes()).unwrap();
        assert_eq!(&streamed, value);
        options.validate(text.as_bytes()).unwrap();
        text
    }

    fn round(value: &Value) -> String {
        round_as("t", value)
    }

    #[test]
    fn bare_shapes() {
        assert_eq!(
            round(&json!({"a": "y", "b": "x"})),
            "GCX1 tool=t fields=a,b\ny\tx\n"
        );
        assert_eq!(
            round(&json!([{"a": "x"}, {"a": "y"}])),
            "GCX1 tool=t fields=a\nx\ny\n"
        );
        assert_eq!(
            round(&json!([{"a": "x"}])),
            "GCX1 tool=t fields=a rows=1\nx\n"
        );
        assert_eq!(
            round(&json!(["x", "y"])),
            "GCX1 tool=t fields=value\nx\ny\n"
        );
        assert_eq!(round(&json!(["x"])), "GCX1 tool=t fields=value rows=1\nx\n");
        assert_eq!(round(&json!("x")), "GCX1 tool=t fields=value\nx\n");
        assert_eq!(round(&json!({})), "GCX1 tool=t fields=\n\n");
        assert_eq!(round(&json!([])), "GCX1 tool=t fields=value\n");
        assert_eq!(round(&json!(1)), "GCX1 tool=t fields=value\n1\n");
        assert_eq!(round(&json!("1")), "GCX1 tool=t fields=value types=s\n1\n");
        assert_eq!(
            round(&json!(null)),
            "GCX1 tool=t fields=value types=v\nnull\n"
        );
        assert_eq!(
            round(&json!("")),
            "GCX1 tool=t fields=value types=v\n\"\"\n"
        );
        assert_eq!(
            round(&json!({"value": "x"})),
            "GCX1 tool=t fields=value shape=record\nx\n"
        );
        assert_eq!(
            round(&json!([{"value": 1}, {"value": 2}])),
            "GCX1 tool=t fields=value shape=rows\n1\n2\n"
        );
        round(&json!([{"a": 1}, {}]));
        round(&json!([{}]));
        round(&json!({"first name": "Ada"}));
        round(&json!([{"a,b": 1}]));
    }

    #[test]
    fn inference_and_type_letters() {
        assert_eq!(
            round(
                &json!([{"id": 1, "n": "x", "ok": true, "tags": ["a"]}, {"id": 2, "n": "y", "ok": false}])
            ),
            "GCX1 tool=t fields=id,n,ok,tags\n1\tx\ttrue\t[\"a\"]\n2\ty\tfalse\t\n"
        );
        // Strings that look like something else need letters.
        assert_eq!(
            round(&json!([{"a": "42", "b": 1}, {"a": "x", "b": 2}])),
            "GCX1 tool=t fields=a,b types=sn\n42\t1\nx\t2\n"
        );
        assert_eq!(
            round(&json!([{"a": "x", "b": true}, {"b": false}, {"a": "", "b": true}])),
            "GCX1 tool=t fields=a,b types=vb\n\"x\"\ttrue\n\tfalse\n\"\"\ttrue\n"
        );
        round(&json!({"s": "{\"a\":1}", "j": {"a": 1}, "c": "a\r\nb", "t": "true", "z": "[x"}));
        // A CRLF in an item of a comma-joined list (found by the `gcx1_decode` fuzz target:
        // the list was joined, and the CR lost); the list goes as JSON.
        round_as(
            "contracts.list",
            &json!([{"id": "y", "providers": ["ab\r\ns", "x"]}]),
        );
        // A joined list in a row's first cell whose first item starts like a header or a
        // comment (found by the `gcx1_decode` fuzz target: the row was read as a header).
        for first in ["GCX1 tool=t fields=a", "#x"] {
            let list = json!([{"consumers": [first, "b"], "id": "y"}, {"consumers": ["c"]}]);
            round_as("contracts.list", &list);
        }
        round(&json!({"#": "#x", "GCX1": "GCX1 y"}));
        round(&json!([["GCX1 tool=x fields=a"], "#comment", "\\", "\t\n"]));
        round(&json!({"": 1}));
        round(&json!({"": ""}));
        round(&json!([{"": ""}, {"": "x"}]));
    }

    #[test]
    fn wrappers() {
        let value = json!({"results": [{"id": "a", "line": 3}, {"id": "b", "line": 4}],
                           "total": 9, "truncated": true});
        assert_eq!(
            round(&value),
            "GCX1 tool=t.results fields=id,line total=9 truncated=true\na\t3\nb\t4\n"
        );
        assert_eq!(
            round_as("search_symbols", &value),
            "GCX1 tool=search_symbols fields=id,line total=9 truncated=true\na\t3\nb\t4\n"
        );
        // A scalar a header cannot carry goes to a record section named like the tool.
        let value = json!({"task": "find the bug", "symbols": [{"id": "a"}, {"id": "b"}], "n": 2});
        assert_eq!(
            round(&value),
            "GCX1 tool=t fields=task n=2\nfind the bug\nGCX1 tool=t.symbols fields=id\na\nb\n"
        );
        assert_eq!(
            round_as("smart_context", &value),
            "GCX1 tool=smart_context fields=id n=2\na\nb\nGCX1 tool=smart_context.task fields=task\nfind the bug\n"
        );
        // Meta values that would read as something else are JSON text.
        let value = json!({"rows": [{"a": 1}, {"a": 2}], "etag": "42", "empty": "", "none": null, "big": 1.5});
        assert_eq!(
            round(&value),
            "GCX1 tool=t.rows fields=a big=1.5 empty= etag=\"42\" none=null\n1\n2\n"
        );
        round(&json!({"rows": 3, "types": "x", "shape": [{"a": 1}, {"a": 2}], "tool": "me"}));
        let value =
            json!({"items": [{"a": 1}, {"a": 2}], "etag": "42", "none": null, "big": 1.5, "e": ""});
        assert_eq!(
            round(&value),
            "GCX1 tool=t.items fields=a big=1.5 e= etag=\"42\" none=null\n1\n2\n"
        );
        round(
            &json!({"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"from": "a", "to": "b"}],
                      "tags": ["x", "y", "z", "w"], "few": ["x"], "conf": {"a": 1}}),
        );
        round_as(
            "get_callers",
            &json!({"nodes": [{"id": "a", "line": 1}], "edges": []}),
        );
        round_as("analyze", &json!({"hotspots": [{"id": "a", "score": 1}]}));
        round_as("x.y", &json!({"a": [{"b": 1}]}));
        round_as("x.y", &json!([{"b": 1}]));
        round_as("x.y", &json!({"b": 1}));
        round_as("x.y", &json!([1]));
        round_as("x.y", &json!("s"));
        round_as("x.y", &json!({}));
    }

    #[test]
    fn reads_gortex_payloads() {
        // The wire-format harness's shapes: no type letters, rows= everywhere, meta totals.
        let text = "GCX1 tool=batch_symbols fields=end_line,error,id,source,start_line etag=ffee rows=2 total=2\n\
                    20\t\ta.go::Foo\tfunc Foo() {\\n}\t10\n\tnot found\tb.go::Bar\t\t\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!({"symbols": [{"end_line": 20, "id": "a.go::Foo", "source": "func Foo() {\n}", "start_line": 10},
                               {"error": "not found", "id": "b.go::Bar"}],
                   "etag": "ffee", "total": 2})
        );
        let text =
            "GCX1 tool=find_usages fields=confidence,from rows=2 total_edges=2\n1.0\ta\n0.95\tb\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!({"edges": [{"confidence": 1.0, "from": "a"}, {"confidence": 0.95, "from": "b"}], "total_edges": 2})
        );
        let text = "GCX1 tool=get_callers.nodes fields=id,start_line rows=1 total_nodes=1 truncated=false\n\
                    a\t3\nGCX1 tool=get_callers.edges fields=from,to rows=0\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!({"nodes": [{"id": "a", "start_line": 3}], "edges": [], "total_nodes": 1, "truncated": false})
        );
        let text = "GCX1 tool=get_repo_outline.entry_points fields=value rows=1\nmain.go::main\n\
                    GCX1 tool=get_repo_outline.languages fields=name,nodes rows=1\ngo\t35\n\
                    GCX1 tool=get_repo_outline.empty fields=value rows=0\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!({"entry_points": ["main.go::main"], "languages": [{"name": "go", "nodes": 35}], "empty": []})
        );
        // Gortex's production get_symbol_source: one row, the etag also in the header.
        let text = "GCX1 tool=get_symbol_source fields=id,start_line,etag,source etag=abc omissions=x\nf\t3\tabc\t{\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!({"id": "f", "start_line": 3, "etag": "abc", "source": "{", "omissions": "x"})
        );
        // Production graph payload with a notes section and no `total`.
        let text = "GCX1 tool=get_callers.nodes fields=id,kind,name,path,line,is_test\na\tfunction\ta\ta.go\t3\tfalse\n\
                    GCX1 tool=get_callers.edges fields=from,to,kind,confidence,tier,via count=0\n\
                    GCX1 tool=get_callers.notes fields=kind,class,message\ncaveat\tzero\tno callers found\n";
        let value = decode_any(text).unwrap();
        assert_eq!(value["nodes"][0]["line"], json!(3));
        assert_eq!(value["nodes"][0]["is_test"], json!(false));
        assert_eq!(value["count"], json!(0));
        assert_eq!(value["notes"][0]["message"], json!("no callers found"));
        assert!(value.get("total").is_none());
    }

    #[test]
    fn cells_read_from_the_row_read_as_read_cell_reads_them() {
        // Where a cell is read straight from the row, it is to what `read_cell` gives the
        // cell, and it ends at the cell's TAB; every reading, cells of every kind.
        let readings = [
            Reading::Kind(Kind::Auto),
            Reading::Kind(Kind::Int),
            Reading::Kind(Kind::Float),
            Reading::Kind(Kind::Bool),
            Reading::Kind(Kind::Str),
            Reading::Kind(Kind::List),
        ]
        .into_iter()
        .chain(b"snbjvSNBJ".iter().map(|&l| Reading::Letter(l)));
        let cells = [
            "1",
            "-0",
            "0.5",
            "-12.25",
            "1e5",
            "123456789012345",
            "1234567890123456",
            "12345678901234567890",
            "01",
            "1.",
            "-",
            "1x",
            "true",
            "false",
            "truex",
            "tru",
            "falsey",
            "[1]",
            "{\"a\":[1,2]}",
            "[1] ",
            "[1]x",
            "x",
            "",
            "t",
            "f",
        ];
        let mut read = 0;
        for reading in readings {
            for cell in cells {
                for after in ["", "\tnext", "\t"] {
                    let row = format!("{cell}{after}");
                    if let Some((value, len)) = read_from_row(reading, &row) {
                        read += 1;
                        assert_eq!(len, cell.len(), "{reading:?} {row:?}");
                        let expected = read_cell(reading, cell, false, "f").ok().flatten();
                        assert_eq!(Some(value), expected, "{reading:?} {row:?}");
                    }
                }
            }
        }
        assert!(read > 50, "{read}");
    }

    #[test]
    fn short_numbers_read_as_the_full_path_reads_them() {
        if arbitrary_precision() {
            // Numbers keep their lexeme: the full path reads every one.
            assert!(short_number(b"1").is_none());
            return;
        }
        let full = |text: &str| match number_syntax(text.as_bytes()) {
            Some((end, integer)) if end == text.len() => number_of_lexeme(text, integer).ok(),
            _ => None,
        };
        let check = |text: &str| {
            let short = short_number(text.as_bytes());
            if let Some((end, n)) = &short {
                let lexeme = &text[..*end];
                assert_eq!(Some(n), full(lexeme).as_ref(), "{text}");
                assert_eq!(
                    n.as_f64().map(f64::to_bits),
                    full(lexeme).and_then(|m| m.as_f64()).map(f64::to_bits),
                    "{text}"
                );
            }
            short.map(|(end, _)| end)
        };
        for (text, end) in [
            ("0", Some(1)),
            ("-0", Some(2)),
            ("-0.0", Some(4)),
            ("14.99,", Some(5)),
            ("123456789012345]", Some(15)),
            ("-12345678901234.5", Some(17)),
            ("1234567890123456", None),
            ("1e5", None),
            ("1.5E3", None),
            ("00", None),
            ("01", None),
            ("1.", None),
            ("-", None),
            (".5", None),
            ("", None),
        ] {
            assert_eq!(check(text), end, "{text}");
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let digits = seed % 10u64.pow(1 + (seed >> 59) as u32 % 16);
            let places = (seed >> 32) as usize % 17;
            let mut text = digits.to_string();
            if places > 0 {
                let padded = format!("{digits:0>width$}", width = places + 1);
                let (whole, fraction) = padded.split_at(padded.len() - places);
                text = format!("{whole}.{fraction}");
            }
            if seed & 1 == 1 {
                text.insert(0, '-');
            }
            assert!(check(&text).is_some() || text.len() > 15, "{text}");
        }
    }

    #[test]
    fn floats_beyond_range_are_refused_on_encode() {
        // Only serde_json's `arbitrary_precision` keeps such lexemes (its default parser
        // refuses `1e400` and reads `1e-400` as 0).
        if !arbitrary_precision() {
            return;
        }
        for json in [
            "[1e400]",
            "[{\"a\": 1, \"b\": 1e-400}, {\"a\": 2}]",
            "{\"a\": {\"deep\": [1, -1e999]}}",
            "{\"rows\": [{\"a\": 1}, {\"a\": 2}], \"total\": 1e400}",
        ] {
            let value: Value = serde_json::from_str(json).unwrap();
            let err = encode_any("t", &value).unwrap_err();
            assert_eq!(err.code(), "number_out_of_range", "{json}");
        }
    }

    #[test]
    fn exact_numbers() {
        let code = |text: &str| decode_any(text).unwrap_err().code();
        assert_eq!(
            code("GCX1 tool=t fields=a types=n\n1e400\n"),
            "invalid_value"
        );
        assert_eq!(
            code("GCX1 tool=t fields=a types=n\n1e-400\n"),
            "invalid_value"
        );
        assert_eq!(
            code("GCX1 tool=t fields=a types=j\n[1e400]\n"),
            "invalid_value"
        );
        // Inference leaves what it cannot carry as text.
        assert_eq!(
            decode_any("GCX1 tool=t fields=a\n1e400\n").unwrap(),
            json!({"a": "1e400"})
        );
        let minus_zero = decode_any("GCX1 tool=t fields=a types=n\n-0\n").unwrap();
        let n = &minus_zero["a"];
        if arbitrary_precision() {
            assert_eq!(n.to_string(), "-0");
        } else {
            assert!(
                n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()),
                "{n}"
            );
        }
        let big = "GCX1 tool=t fields=a types=n\n12345678901234567890123\n";
        if arbitrary_precision() {
            assert_eq!(
                decode_any(big).unwrap()["a"].to_string(),
                "12345678901234567890123"
            );
        } else {
            assert_eq!(code(big), "invalid_value");
        }
        round(&json!({"a": -0.0, "b": 1.0, "c": 1e21, "d": 5e-324, "e": u64::MAX, "f": i64::MIN}));
        round(&json!([0.1, -0.0, 1e300]));
    }

    #[test]
    fn same_text_compares_every_byte() {
        let texts = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "department",
            "é",
            "ée",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(same_text(a, b), a == b, "{a:?} {b:?}");
            }
            // One byte changed anywhere.
            for i in 0..a.len() {
                let mut changed = a.as_bytes().to_vec();
                changed[i] ^= 1;
                if let Ok(changed) = std::str::from_utf8(&changed) {
                    assert!(!same_text(a, changed), "{a:?} {changed:?}");
                }
            }
        }
    }

    /// The two-pass table writer's bytes for a bare array of objects.
    fn two_pass(items: &[Value]) -> String {
        let options = Options::new();
        let writer = Writer::new(&options);
        let mut encoder = Encoder::in_memory(options.limits);
        let table = writer.table(items).unwrap();
        let header = Header::new(DEFAULT_TOOL, Vec::<String>::new());
        writer
            .write_table(&mut encoder, header, "", table, true)
            .unwrap();
        encoder.into_text().unwrap()
    }

    #[test]
    fn uniform_tables_write_the_two_pass_bytes() {
        let cases = [
            // Plain columns.
            json!([{"a": "x", "b": 1}, {"a": "y", "b": 2.5}]),
            // A later row changes a column's letter: the header is rewritten.
            json!([{"a": "x", "b": 1}, {"a": "123", "b": 2}]),
            json!([{"a": "1", "b": true}, {"a": "x", "b": false}]),
            // Escapes, a first cell that reads as a comment or header, JSON cells, empty text.
            json!([{"a": "#x", "b": "t\tab\nline\\", "c": [1, {"k": "v\\"}]},
                   {"a": "GCX1", "b": "", "c": {"z": null}}]),
            // One row: `rows=1`.
            json!([{"a": "x", "b": 1}]),
            // Declined: a null, mixed types, keys out of order, a missing key.
            json!([{"a": null, "b": 1}, {"a": "x", "b": 2}]),
            json!([{"a": 1, "b": 1}, {"a": "x", "b": 2}]),
            json!([{"a": 1, "b": 1}, {"b": 2, "c": 3}]),
            json!([{"a": 1, "b": 1}, {"a": 2}]),
        ];
        for value in cases {
            let text = round_as(DEFAULT_TOOL, &value);
            let items = value.as_array().unwrap();
            assert_eq!(text, two_pass(items), "{value}");
        }
        // A rewritten header, exactly.
        assert_eq!(
            round_as(
                DEFAULT_TOOL,
                &json!([{"a": "x", "b": 1}, {"a": "123", "b": 2}])
            ),
            "GCX1 tool=response fields=a,b types=sn\nx\t1\n123\t2\n"
        );
        // Wrapper members take the same path.
        round_as(
            DEFAULT_TOOL,
            &json!({"total": 2, "items": [{"a": "x", "b": 1}, {"a": "123", "b": 2}]}),
        );
    }

    #[test]
    fn duplicate_fields_are_an_error() {
        let e = decode_any("GCX1 tool=t fields=a,b,a\n1\t2\t3\n").unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("duplicate_field", Some(1), Some(24))
        );
    }

    #[test]
    fn rejects_inconsistent_meta() {
        let code = |text: &str| decode_any(text).unwrap_err().code();
        assert_eq!(code("GCX1 tool=t fields=a types=nn\n1\n"), "invalid_meta");
        assert_eq!(code("GCX1 tool=t fields=a types=q\n1\n"), "invalid_meta");
        assert_eq!(code("GCX1 tool=t fields=a rows=3\n1\n"), "row_count");
        assert_eq!(code("GCX1 tool=t fields=a types=n\nx\n"), "invalid_value");
        assert_eq!(
            code("GCX1 tool=t fields=a\n1\nGCX1 tool=u fields=a\n"),
            "unexpected_section"
        );
        assert_eq!(code("GCX1 tool=t fields=a shape=blob\n1\n"), "invalid_meta");
        assert_eq!(
            code("GCX1 tool=t.a fields=x\n1\nGCX1 tool=t.b fields=x\n1\nGCX1 tool=t.a fields=x\n"),
            "unexpected_section"
        );
        assert_eq!(
            code("GCX1 tool=t fields=a shape=record\n1\n2\n"),
            "row_count"
        );
    }

    #[test]
    fn rows_beyond_the_count_stop_at_once() {
        let mut text = String::from("GCX1 tool=t fields=a rows=2\n");
        for i in 0..1000 {
            text.push_str(&format!("{i}\n"));
        }
        let e = decode_any(&text).unwrap_err();
        assert_eq!((e.code(), e.line()), ("row_count", Some(4)));
    }

    #[test]
    fn row_objects_from_unsorted_fields_and_missing_cells() {
        // Fields out of map order, a missing cell in the middle, a short row, a typed section
        // whose empty text cell is a member; each row's values land under their own keys.
        let text = "GCX1 tool=t fields=zeta,alpha,mid\n1\t\t3\n\t2\n4\t5\t6\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!([{"zeta": 1, "mid": 3}, {"alpha": 2}, {"zeta": 4, "alpha": 5, "mid": 6}])
        );
        let text = "GCX1 tool=t fields=b,a types=sn\n\t1\nx\t2\n";
        assert_eq!(
            decode_any(text).unwrap(),
            json!([{"b": "", "a": 1}, {"b": "x", "a": 2}])
        );
        // A bad cell after a good one is still an error.
        let text = "GCX1 tool=t fields=a,b types=nn\n1\tx\n";
        assert_eq!(decode_any(text).unwrap_err().code(), "invalid_value");
    }

    #[test]
    fn typed_errors_carry_the_row_line() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Hit {
            id: String,
            line: u32,
        }
        let text = "GCX1 tool=t fields=id,line\na\t1\nb\tx\nc\t3\n";
        let e = from_str::<Vec<Hit>>(text).unwrap_err();
        assert_eq!((e.code(), e.line()), ("type_mismatch", Some(3)));
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Results {
            results: Vec<Hit>,
            total: u32,
        }
        let text = "GCX1 tool=t.results fields=id,line total=2\na\t1\nb\t-1\n";
        let e = from_str::<Results>(text).unwrap_err();
        assert_eq!((e.code(), e.line()), ("type_mismatch", Some(3)));
        assert!(e.to_string().starts_with("type_mismatch at line 3"), "{e}");
    }

    #[test]
    fn serde_entry_points() {
        #[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
        struct Row {
            id: u32,
            name: String,
        }
        let rows = vec![
            Row {
                id: 1,
                name: "a".into(),
            },
            Row {
                id: 2,
                name: "b".into(),
            },
        ];
        let text = to_string(&rows).unwrap();
        assert_eq!(text, "GCX1 tool=response fields=id,name\n1\ta\n2\tb\n");
        assert_eq!(to_vec(&rows).unwrap(), text.as_bytes());
        assert_eq!(from_str::<Vec<Row>>(&text).unwrap(), rows);
        assert_eq!(from_slice::<Vec<Row>>(text.as_bytes()).unwrap(), rows);
        assert_eq!(from_reader::<_, Vec<Row>>(text.as_bytes()).unwrap(), rows);
        let e = from_slice::<Value>(b"GCX1 tool=t fields=a\nx\xff\n").unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("invalid_utf8", Some(2), Some(2))
        );
        assert_eq!(to_string(&f64::NAN).unwrap_err().code(), "non_finite_float");
    }

    #[test]
    fn encoder_limits_match_decoder_limits() {
        let limits = Limits::default().with_max_line_length(20);
        let options = Options::new().limits(limits);
        let e = options
            .encode_any(&json!({"a": "x".repeat(40)}))
            .unwrap_err();
        assert_eq!(e.code(), "line_too_long");
        let wide: Map<String, Value> = (0..5000).map(|i| (format!("k{i}"), json!(i))).collect();
        let text = encode_any("t", &Value::Object(wide.clone())).unwrap();
        assert!(text.starts_with("GCX1 tool=t fields=value\n"));
        assert_eq!(decode_any(&text).unwrap(), Value::Object(wide));
    }
}
