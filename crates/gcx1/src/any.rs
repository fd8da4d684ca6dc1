//! The generic fallback: any JSON value as one section ([`encode_any`]), and back
//! ([`decode_any`]) to an equal value, with the types carried in header meta.
//!
//! # Shapes (the spec's table)
//!
//! | value | section |
//! |---|---|
//! | object | fields = keys sorted byte-wise, one row |
//! | array of objects | fields = union of keys sorted, one row per element, meta `rows=N` |
//! | other array | field `value`, one row per element, meta `rows=N` |
//! | scalar | field `value`, one row |
//!
//! # Types
//!
//! Cells are text, so the encoder adds a `types=` meta, one letter per field in field order,
//! whenever a column is not plain text:
//!
//! | letter | cells |
//! |---|---|
//! | `s` | strings, as text (the default: no `types=` when every column is `s`) |
//! | `n` | numbers, as their JSON text |
//! | `b` | booleans, `true` / `false` |
//! | `j` | arrays or objects, as compact JSON |
//! | `S`, `N`, `B`, `J` | as the lower-case letter, but an empty cell means the key is missing |
//! | `v` | each cell is the JSON text of its value (`"1"`, `1`, `null`, `""`); empty means missing |
//!
//! A column is written plainly when its values share one type, none is `null`, no string
//! holds a CR (CRLF would be normalised) and, in a one-column section, no string is empty (an
//! empty line would be skipped); otherwise it uses `v`. Two more cases need marking:
//!
//! - `shape=record` or `shape=rows` when an object or an array of objects has the single key
//!   `value`, which would otherwise read as a scalar or an array of scalars;
//! - an array of objects whose single key is missing from some element, or whose elements
//!   have no keys at all, is written as an array of JSON objects (`fields=value`, `types=j`),
//!   because a one-column row cannot hold a missing cell;
//! - keys that cannot be field names (whitespace, `,`, U+FEFF) put the value in JSON cells:
//!   an object becomes one `value` cell, an array of objects one cell per element.
//!
//! The reference decoders parse the extra meta like any other pair and see the same cells
//! as before, except in `v` columns (JSON text instead of bare text).

use std::collections::BTreeSet;
use std::io::{BufRead, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::decoder::{Decoder, Limits, Row, SectionSource, StrDecoder};
use crate::encoder::{into_string, Cell, CellWriter, Encoder};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::escape::{escape_into, unescape};
use crate::header::{write_header, Header};
use crate::json::{write_json, write_number};

/// The meta key carrying one type letter per field.
pub const TYPES_META: &str = "types";
/// The meta key naming the shape where the field list leaves it ambiguous.
pub const SHAPE_META: &str = "shape";
/// The meta key counting the rows of an array.
pub const ROWS_META: &str = "rows";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Num,
    Bool,
    Nested,
    Null,
}

fn kind(value: &Value) -> Kind {
    match value {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(_) => Kind::Num,
        Value::String(_) => Kind::Str,
        Value::Array(_) | Value::Object(_) => Kind::Nested,
    }
}

/// What a column holds so far, for choosing its type letter.
#[derive(Clone, Copy, Default)]
struct Column {
    seen: Option<Kind>,
    missing: bool,
    empty_string: bool,
    /// Already known to need JSON text (`v`).
    json: bool,
}

impl Column {
    #[inline]
    fn add(&mut self, value: Option<&Value>) {
        if self.json {
            return;
        }
        let Some(value) = value else {
            self.missing = true;
            return;
        };
        let k = kind(value);
        if k == Kind::Null || self.seen.is_some_and(|s| s != k) {
            self.json = true;
            return;
        }
        self.seen = Some(k);
        if let Value::String(s) = value {
            if s.contains('\r') {
                self.json = true;
            }
            self.empty_string |= s.is_empty();
        }
    }

    fn letter(&self, single_column: bool) -> u8 {
        if self.json {
            return b'v';
        }
        let letter = match self.seen {
            // No values at all (an empty array): the default.
            None => return b's',
            Some(Kind::Str) if self.empty_string && (single_column || self.missing) => return b'v',
            Some(Kind::Str) => b's',
            Some(Kind::Num) => b'n',
            Some(Kind::Bool) => b'b',
            Some(Kind::Nested) => b'j',
            Some(Kind::Null) => b'v',
        };
        if self.missing {
            letter.to_ascii_uppercase()
        } else {
            letter
        }
    }
}

/// The type letter of a column holding `values` (`None` for a missing key).
fn column_letter<'v>(values: impl Iterator<Item = Option<&'v Value>>, single_column: bool) -> u8 {
    let mut column = Column::default();
    values.for_each(|v| column.add(v));
    column.letter(single_column)
}

/// The union of the objects' keys, sorted byte-wise. Objects with the same keys as the one
/// before (the usual case) cost one comparison per key.
fn union_of_keys<'v>(objects: &[&'v Map<String, Value>]) -> Vec<&'v str> {
    let mut union: BTreeSet<&'v str> = BTreeSet::new();
    let mut previous: Vec<&'v str> = Vec::new();
    for object in objects {
        let same =
            object.len() == previous.len() && object.keys().zip(&previous).all(|(k, p)| k == p);
        if !same {
            previous.clear();
            previous.extend(object.keys().map(String::as_str));
            union.extend(previous.iter().copied());
        }
    }
    union.into_iter().collect()
}

/// Lines `object`'s values up with `keys` (sorted, a superset of the object's keys) into
/// `slots`, without a lookup per key: `order` remembers where the previous object's entries
/// went, which is where this object's go when objects share a key order.
fn align<'v>(
    object: &'v Map<String, Value>,
    keys: &[&str],
    order: &mut Vec<usize>,
    slots: &mut [Option<&'v Value>],
) {
    slots.fill(None);
    for (j, (key, value)) in object.iter().enumerate() {
        let guess = order
            .get(j)
            .copied()
            .filter(|&i| keys.get(i) == Some(&key.as_str()));
        let index = guess.unwrap_or_else(|| {
            keys.binary_search_by(|k| k.as_bytes().cmp(key.as_bytes()))
                .unwrap_or(0)
        });
        if j < order.len() {
            order[j] = index;
        } else {
            order.push(index);
        }
        slots[index] = Some(value);
    }
}

/// One cell of the fallback: a value (or a missing key) written under its column's letter.
struct AnyCell<'v> {
    letter: u8,
    value: Option<&'v Value>,
}

impl Cell for AnyCell<'_> {
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        let Some(value) = self.value else {
            return Ok(());
        };
        match (self.letter.to_ascii_lowercase(), value) {
            (b's', Value::String(s)) => out.write_str(s),
            (b'n', Value::Number(n)) => {
                write_number(out.buffer(), n);
                out.raw(b"");
            }
            (b'b', Value::Bool(b)) => out.write_bool(*b),
            _ => {
                // `j` and `v`: JSON text, escaped for the row. It starts with `[`, `{`, `"`,
                // a digit, `-`, `t`, `f` or `n`, never `#` or `GCX`.
                let buffer = out.buffer();
                let start = buffer.len();
                write_json(buffer, value)?;
                if buffer[start..]
                    .iter()
                    .any(|&b| b == b'\\' || b == b'\t' || b == b'\n' || b == b'\r')
                {
                    let text = buffer.split_off(start);
                    escape_into(buffer, std::str::from_utf8(&text).unwrap_or_default());
                }
                out.raw(b"");
            }
        }
        Ok(())
    }
}

/// Encodes any JSON value as one GCX1 section for `tool`, following the spec's generic
/// fallback and adding type meta so that [`decode_any`] returns an equal value.
///
/// Output is byte-identical to the Go reference's `EncodeAny` for inputs whose columns are
/// all non-empty strings, and differs only by the added meta otherwise; see the module
/// documentation for the rules. Fails on a tool name the header cannot carry and on values
/// nesting deeper than 127 levels inside a cell.
///
/// ```
/// use serde_json::json;
///
/// let value = json!([{"id": 1, "name": "Ada", "tags": ["x"]}, {"id": 2, "name": "Grace"}]);
/// let text = agentwire_gcx1::encode_any("people", &value)?;
/// assert_eq!(
///     text,
///     "GCX1 tool=people fields=id,name,tags rows=2 types=nsJ\n1\tAda\t[\"x\"]\n2\tGrace\t\n"
/// );
/// assert_eq!(agentwire_gcx1::decode_any(&text)?, value);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn encode_any(tool: &str, value: &Value) -> Result<String> {
    let mut out = Vec::new();
    encode_any_to_writer(&mut out, tool, value)?;
    into_string(out)
}

/// [`encode_any`] to a writer.
pub fn encode_any_to_writer<W: Write>(writer: W, tool: &str, value: &Value) -> Result<()> {
    match value {
        Value::Object(map) if map.is_empty() => {
            // The reference's bytes for `{}`: one empty field name and a blank line.
            let mut out = Vec::new();
            write_header(&mut out, &Header::new(tool, [""]), 1)?;
            out.push(b'\n');
            let mut writer = writer;
            writer.write_all(&out)?;
            writer.flush()?;
            Ok(())
        }
        Value::Object(map) if !map.keys().all(|k| is_field_name(k)) => {
            // Keys a header cannot carry: the whole object goes into one JSON cell.
            encode_single(writer, tool, value)
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            let single = keys.len() == 1;
            let letters: Vec<u8> = keys
                .iter()
                .map(|k| column_letter(std::iter::once(map.get(*k)), single))
                .collect();
            let mut header = Header::new(tool, keys.iter().map(|k| k.as_str()));
            if header.fields == ["value"] {
                header.meta.insert(SHAPE_META.into(), "record".into());
            }
            add_types(&mut header, &letters);
            let mut encoder = Encoder::with_header(writer, &header)?;
            encoder.write_row(keys.iter().zip(&letters).map(|(k, &letter)| AnyCell {
                letter,
                value: map.get(*k),
            }))?;
            encoder.finish().map(drop)
        }
        Value::Array(items) => encode_array(writer, tool, items),
        scalar => encode_single(writer, tool, scalar),
    }
}

/// Whether `key` can be a field name: the header splits on spaces and commas and is trimmed.
fn is_field_name(key: &str) -> bool {
    !key.chars()
        .any(|c| c.is_whitespace() || c == ',' || c == '\u{feff}')
}

/// One `value` field, one row: a scalar, or any value as a JSON cell.
fn encode_single<W: Write>(writer: W, tool: &str, value: &Value) -> Result<()> {
    let letters = [column_letter(std::iter::once(Some(value)), true)];
    let mut header = Header::new(tool, ["value"]);
    add_types(&mut header, &letters);
    let mut encoder = Encoder::with_header(writer, &header)?;
    encoder.write_row([AnyCell {
        letter: letters[0],
        value: Some(value),
    }])?;
    encoder.finish().map(drop)
}

fn add_types(header: &mut Header, letters: &[u8]) {
    if letters.iter().any(|&l| l != b's') {
        let types = letters.iter().map(|&l| char::from(l)).collect();
        header.meta.insert(TYPES_META.into(), types);
    }
}

fn encode_array<W: Write>(writer: W, tool: &str, items: &[Value]) -> Result<()> {
    let objects: Option<Vec<&Map<String, Value>>> = items.iter().map(Value::as_object).collect();
    let as_rows = objects
        .filter(|objects| !objects.is_empty())
        .and_then(|objects| {
            let keys = union_of_keys(&objects);
            // A one-column row cannot hold a missing cell, and a row needs a column.
            let fits = keys.iter().all(|k| is_field_name(k))
                && match keys.len() {
                    0 => false,
                    1 => objects.iter().all(|o| o.len() == 1),
                    _ => true,
                };
            fits.then_some((objects, keys))
        });
    let mut header;
    if let Some((objects, keys)) = as_rows {
        let width = keys.len();
        let single = width == 1;
        // Every row's values in field order, found once and used twice.
        let mut slots: Vec<Option<&Value>> = vec![None; objects.len() * width];
        let mut order = Vec::with_capacity(width);
        for (object, row) in objects.iter().zip(slots.chunks_mut(width)) {
            align(object, &keys, &mut order, row);
        }
        let mut columns = vec![Column::default(); width];
        for row in slots.chunks(width) {
            for (column, value) in columns.iter_mut().zip(row) {
                column.add(*value);
            }
        }
        let letters: Vec<u8> = columns.iter().map(|c| c.letter(single)).collect();
        header = Header::new(tool, keys.iter().copied());
        header
            .meta
            .insert(ROWS_META.into(), items.len().to_string());
        if header.fields == ["value"] {
            header.meta.insert(SHAPE_META.into(), "rows".into());
        }
        add_types(&mut header, &letters);
        let mut encoder = Encoder::with_header(writer, &header)?;
        for row in slots.chunks(width) {
            encoder.write_row(row.iter().zip(&letters).map(|(value, &letter)| AnyCell {
                letter,
                value: *value,
            }))?;
        }
        return encoder.finish().map(drop);
    }
    let letter = column_letter(items.iter().map(Some), true);
    header = Header::new(tool, ["value"]);
    header
        .meta
        .insert(ROWS_META.into(), items.len().to_string());
    add_types(&mut header, &[letter]);
    let mut encoder = Encoder::with_header(writer, &header)?;
    for item in items {
        encoder.write_row([AnyCell {
            letter,
            value: Some(item),
        }])?;
    }
    encoder.finish().map(drop)
}

/// Decodes a section written by [`encode_any`] back into the JSON value it came from.
///
/// Payloads without `types=` meta (those of the Go reference, for instance) decode with
/// every cell a string, since there is no type information to recover. The payload must
/// hold exactly one section; `rows=` must match the rows present.
pub fn decode_any(input: &str) -> Result<Value> {
    decode_any_with_tool(input).map(|(_, value)| value)
}

/// [`decode_any`], also returning the section's tool name.
pub fn decode_any_with_tool(input: &str) -> Result<(String, Value)> {
    decode_any_from(&mut StrDecoder::new(input))
}

/// [`decode_any_with_tool`] with the given decoder limits.
pub fn decode_any_with_limits(input: &str, limits: Limits) -> Result<(String, Value)> {
    decode_any_from(&mut StrDecoder::with_limits(input, limits))
}

/// [`decode_any_with_tool`] from a reader: the tool name and the value.
pub fn decode_any_reader<R: BufRead>(reader: R) -> Result<(String, Value)> {
    decode_any_from(&mut Decoder::new(reader))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    Record,
    Rows,
    Values,
    Scalar,
}

fn meta_error(key: &str, message: impl Into<String>) -> Error {
    ErrorKind::InvalidMeta {
        key: key.to_owned(),
        message: message.into(),
    }
    .into()
}

fn decode_any_from<S: SectionSource>(source: &mut S) -> Result<(String, Value)> {
    let Some(header) = source.next_header()? else {
        return Err(ErrorKind::EmptyPayload.into());
    };
    // Errors about the section as a whole (its meta, its row count) point at its header.
    let line = source.line_no();
    decode_section(source, header).map_err(|e| e.or_position(Position::new(line, 1)))
}

fn decode_section<S: SectionSource>(source: &mut S, header: Header) -> Result<(String, Value)> {
    let letters: Vec<u8> = match header.meta_value(TYPES_META) {
        None => vec![b's'; header.fields.len()],
        Some(types) => {
            if types.len() != header.fields.len() {
                return Err(meta_error(
                    TYPES_META,
                    format!(
                        "{} letters for {} fields",
                        types.chars().count(),
                        header.fields.len()
                    ),
                ));
            }
            if let Some(bad) = types.chars().find(|c| !"snbjvSNBJ".contains(*c)) {
                return Err(meta_error(
                    TYPES_META,
                    format!("unknown type letter {bad:?}"),
                ));
            }
            types.bytes().collect()
        }
    };
    let rows_meta =
        match header.meta_value(ROWS_META) {
            None => None,
            Some(text) => Some(text.parse::<u64>().map_err(|_| {
                meta_error(ROWS_META, format!("expected a row count, found {text:?}"))
            })?),
        };
    let value_field = header.fields == ["value"];
    let shape = match header.meta_value(SHAPE_META) {
        None if rows_meta.is_some() && value_field => Shape::Values,
        None if rows_meta.is_some() => Shape::Rows,
        None if value_field => Shape::Scalar,
        None => Shape::Record,
        Some("record") => Shape::Record,
        Some("rows") => Shape::Rows,
        Some("values") => Shape::Values,
        Some("scalar") => Shape::Scalar,
        Some(other) => return Err(meta_error(SHAPE_META, format!("unknown shape {other:?}"))),
    };
    if matches!(shape, Shape::Values | Shape::Scalar) && !value_field {
        return Err(meta_error(
            SHAPE_META,
            "an array of scalars or a scalar has the single field `value`",
        ));
    }
    let mut values = Vec::new();
    loop {
        let converted = source.with_next_row(|row, fields| match shape {
            Shape::Record | Shape::Rows => object_of(row, fields, &letters).map(Value::Object),
            Shape::Values | Shape::Scalar => {
                let (raw, offset, escaped) = row.raw_cells().next_cell().unwrap_or(("", 0, false));
                match cell_value(letters[0], raw, escaped, "value") {
                    Ok(Some(value)) => Ok(value),
                    Ok(None) => Err(ErrorKind::InvalidValue {
                        field: "value".into(),
                        message: "an element cannot be missing".into(),
                    }
                    .into()),
                    Err(e) => Err(e.or_position(row.position(offset))),
                }
            }
        })?;
        match converted {
            Some(value) => values.push(value),
            None => break,
        }
    }
    let found = values.len() as u64;
    if let Some(expected) = rows_meta {
        if expected != found {
            return Err(ErrorKind::RowCount {
                tool: header.tool.clone(),
                expected: expected.to_string(),
                found,
            }
            .into());
        }
    }
    let value = match shape {
        Shape::Rows | Shape::Values => Value::Array(values),
        Shape::Record if found == 0 && header.fields == [""] => Value::Object(Map::new()),
        Shape::Record | Shape::Scalar => {
            if found != 1 {
                return Err(ErrorKind::RowCount {
                    tool: header.tool.clone(),
                    expected: "1".into(),
                    found,
                }
                .into());
            }
            values.pop().unwrap_or(Value::Null)
        }
    };
    if let Some(next) = source.next_header()? {
        return Err(Error::new(
            ErrorKind::UnexpectedSection {
                expected: "the end of the payload".into(),
                found: format!("section `{}`", next.tool),
            },
            Some(Position::new(source.line_no(), 1)),
        ));
    }
    Ok((header.tool, value))
}

/// One row as an object, keys in field order; missing cells leave their keys out.
fn object_of(row: Row<'_>, fields: &[String], letters: &[u8]) -> Result<Map<String, Value>> {
    let mut object = Map::with_capacity(fields.len());
    let mut raw = row.raw_cells();
    for (field, &letter) in fields.iter().zip(letters) {
        let (cell, offset, escaped) =
            raw.next_cell()
                .unwrap_or(("", row.as_raw_str().len(), false));
        match cell_value(letter, cell, escaped, field) {
            Ok(Some(value)) => {
                object.insert(field.clone(), value);
            }
            Ok(None) => {}
            Err(e) => return Err(e.or_position(row.position(offset))),
        }
    }
    Ok(object)
}

/// The value of a cell under `letter`; `None` for a missing key.
fn cell_value(letter: u8, raw: &str, escaped: bool, field: &str) -> Result<Option<Value>> {
    let invalid = |message: String| -> Error {
        ErrorKind::InvalidValue {
            field: field.to_owned(),
            message,
        }
        .into()
    };
    if raw.is_empty() && matches!(letter, b'S' | b'N' | b'B' | b'J' | b'v') {
        return Ok(None);
    }
    let text = if escaped {
        unescape(raw)
    } else {
        std::borrow::Cow::Borrowed(raw)
    };
    let text = text.as_ref();
    Ok(Some(match letter.to_ascii_lowercase() {
        b's' => Value::String(text.to_owned()),
        b'n' => Value::Number(
            crate::json::parse_number(text)
                .map_err(|_| invalid(format!("expected a JSON number, found {text:?}")))?,
        ),
        b'b' => match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => {
                return Err(invalid(format!(
                    "expected `true` or `false`, found {text:?}"
                )))
            }
        },
        b'j' => match crate::json::parse_json(text) {
            Ok(value @ (Value::Array(_) | Value::Object(_))) => value,
            Ok(_) => {
                return Err(invalid(format!(
                    "expected a JSON array or object, found {text:?}"
                )))
            }
            Err(e) => return Err(invalid(format!("expected JSON: {e}"))),
        },
        _ => crate::json::parse_json(text).map_err(|e| invalid(format!("expected JSON: {e}")))?,
    }))
}

/// Serializes any `T` as one GCX1 section for `tool`: `T` becomes a JSON value, which
/// [`encode_any`] writes. NaN and infinities are an error (serde_json would make them
/// `null`).
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Status { healthy: bool, version: String, uptime_s: u64 }
///
/// let status = Status { healthy: true, version: "1.4.2".into(), uptime_s: 86400 };
/// let text = agentwire_gcx1::to_string("status", &status)?;
/// assert_eq!(text, "GCX1 tool=status fields=healthy,uptime_s,version types=bns\ntrue\t86400\t1.4.2\n");
/// assert_eq!(agentwire_gcx1::from_str::<Status>(&text)?, status);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn to_string<T: Serialize + ?Sized>(tool: &str, value: &T) -> Result<String> {
    encode_any(tool, &crate::ser::to_value(value)?)
}

/// [`to_string`] to a writer.
pub fn to_writer<W: Write, T: Serialize + ?Sized>(writer: W, tool: &str, value: &T) -> Result<()> {
    encode_any_to_writer(writer, tool, &crate::ser::to_value(value)?)
}

/// Deserializes a section written by [`to_string`] (or [`encode_any`]): [`decode_any`], then
/// `T` from the JSON value.
pub fn from_str<T: DeserializeOwned>(input: &str) -> Result<T> {
    from_value(decode_any(input)?)
}

/// [`from_str`] from a reader.
pub fn from_reader<R: BufRead, T: DeserializeOwned>(reader: R) -> Result<T> {
    from_value(decode_any_reader(reader)?.1)
}

fn from_value<T: DeserializeOwned>(value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| ErrorKind::Deserialize(e.to_string()).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round(value: &Value) -> String {
        let text = encode_any("t", value).unwrap();
        assert_eq!(&decode_any(&text).unwrap(), value, "{text}");
        text
    }

    #[test]
    fn reference_bytes_for_plain_strings() {
        assert_eq!(
            round(&json!({"b": "x", "a": "y"})),
            "GCX1 tool=t fields=a,b\ny\tx\n"
        );
        assert_eq!(
            round(&json!([{"a": "1"}, {"a": "2"}])),
            "GCX1 tool=t fields=a rows=2\n1\n2\n"
        );
        assert_eq!(
            round(&json!(["x", "y"])),
            "GCX1 tool=t fields=value rows=2\nx\ny\n"
        );
        assert_eq!(round(&json!("x")), "GCX1 tool=t fields=value\nx\n");
        assert_eq!(round(&json!({})), "GCX1 tool=t fields=\n\n");
        assert_eq!(round(&json!([])), "GCX1 tool=t fields=value rows=0\n");
    }

    #[test]
    fn types_survive() {
        assert_eq!(round(&json!(1)), "GCX1 tool=t fields=value types=n\n1\n");
        assert_eq!(round(&json!("1")), "GCX1 tool=t fields=value\n1\n");
        assert_eq!(
            round(&json!(null)),
            "GCX1 tool=t fields=value types=v\nnull\n"
        );
        assert_eq!(
            round(&json!("")),
            "GCX1 tool=t fields=value types=v\n\"\"\n"
        );
        assert_eq!(
            round(&json!(["a", null, ""])),
            "GCX1 tool=t fields=value rows=3 types=v\n\"a\"\nnull\n\"\"\n"
        );
        assert_eq!(
            round(&json!({"value": "x"})),
            "GCX1 tool=t fields=value shape=record\nx\n"
        );
        assert_eq!(
            round(&json!([{"value": 1}])),
            "GCX1 tool=t fields=value rows=1 shape=rows types=n\n1\n"
        );
        assert_eq!(
            round(&json!([{"a": 1}, {}])),
            "GCX1 tool=t fields=value rows=2 types=j\n{\"a\":1}\n{}\n"
        );
        assert_eq!(
            round(&json!([{}])),
            "GCX1 tool=t fields=value rows=1 types=j\n{}\n"
        );
        assert_eq!(
            round(&json!([{"a": "x", "b": true}, {"b": false}, {"a": "", "b": true}])),
            "GCX1 tool=t fields=a,b rows=3 types=vb\n\"x\"\ttrue\n\tfalse\n\"\"\ttrue\n"
        );
        assert_eq!(
            round(&json!({"s": "{\"a\":1}", "j": {"a": 1}, "c": "a\r\nb"})),
            "GCX1 tool=t fields=c,j,s types=vjs\n\"a\\\\r\\\\nb\"\t{\"a\":1}\t{\"a\":1}\n"
        );
        round(&json!({"#": "#x", "GCX1": "GCX1 y"}));
        round(&json!([["GCX1 tool=x fields=a"], "#comment", "\\", "\t\n"]));
        round(&json!({"": 1}));
        round(&json!({"": ""}));
        assert_eq!(
            round(&json!({"first name": "Ada"})),
            "GCX1 tool=t fields=value types=j\n{\"first name\":\"Ada\"}\n"
        );
        assert_eq!(
            round(&json!([{"a,b": 1}])),
            "GCX1 tool=t fields=value rows=1 types=j\n{\"a,b\":1}\n"
        );
        round(&json!([{"": ""}, {"": "x"}]));
    }

    #[test]
    fn rejects_inconsistent_meta() {
        let code = |text: &str| decode_any(text).unwrap_err().code();
        assert_eq!(code("GCX1 tool=t fields=a types=nn\n1\n"), "invalid_meta");
        assert_eq!(code("GCX1 tool=t fields=a types=q\n1\n"), "invalid_meta");
        assert_eq!(code("GCX1 tool=t fields=a rows=3\n1\n"), "row_count");
        assert_eq!(code("GCX1 tool=t fields=a types=n\nx\n"), "invalid_value");
        assert_eq!(code("GCX1 tool=t fields=a\n1\n2\n"), "row_count");
        assert_eq!(
            code("GCX1 tool=t fields=a\n1\nGCX1 tool=u fields=a\n"),
            "unexpected_section"
        );
        assert_eq!(code("GCX1 tool=t fields=a shape=blob\n1\n"), "invalid_meta");
    }
}
