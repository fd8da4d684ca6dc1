//! serde deserializers over rows: by field name into structs and maps, by position into
//! tuples, each cell parsed on demand into the type the target asks for.

use std::borrow::Cow;
use std::io::BufRead;
use std::marker::PhantomData;

use serde::de::value::{CowStrDeserializer, StrDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};
use serde::Deserialize;

use crate::decoder::{Decoder, RawCells, Row, StrDecoder};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::escape::unescape;

/// Deserializes one row; `fields` are its header's field names.
pub(crate) fn deserialize_row<'de, T: Deserialize<'de>>(
    fields: &[String],
    row: Row<'de>,
) -> Result<T> {
    T::deserialize(RowDeserializer { fields, row })
        .map_err(|e| e.or_position(Position::new(row.line(), 1)))
}

struct RowDeserializer<'de, 'h> {
    fields: &'h [String],
    row: Row<'de>,
}

impl<'de> RowDeserializer<'de, '_> {
    fn first_cell(&self) -> CellDeserializer<'de, '_> {
        let (raw, _, escaped) = self.row.raw_cells().next_cell().unwrap_or(("", 0, false));
        CellDeserializer {
            raw,
            field: self.fields.first().map_or("", String::as_str),
            escaped,
        }
    }

    fn cells(&self) -> RowCells<'de, '_> {
        RowCells {
            fields: self.fields,
            row: self.row,
            raw: self.row.raw_cells(),
            index: 0,
            value: None,
        }
    }
}

macro_rules! first_cell {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let row = self.row;
            self.first_cell().$method(visitor).map_err(|e| e.or_position(row.position(0)))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for RowDeserializer<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    first_cell!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_identifier
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_seq(self.cells())
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        visitor.visit_seq(self.cells())
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_seq(self.cells())
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_map(self.cells())
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_map(self.cells())
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let row = self.row;
        self.first_cell()
            .deserialize_enum(name, variants, visitor)
            .map_err(|e| e.or_position(row.position(0)))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

/// The cells of a row, as a map (field name → cell) or a sequence.
struct RowCells<'de, 'h> {
    fields: &'h [String],
    row: Row<'de>,
    raw: RawCells<'de>,
    index: usize,
    value: Option<(&'de str, usize, bool)>,
}

impl<'de> RowCells<'de, '_> {
    /// The next raw cell, its offset and whether it holds an escape (`""` past the cells
    /// present on the line).
    #[inline(always)]
    fn next_raw(&mut self) -> (&'de str, usize, bool) {
        self.raw
            .next_cell()
            .unwrap_or(("", self.row.as_raw_str().len(), false))
    }

    #[inline]
    fn cell<T: DeserializeSeed<'de>>(
        &self,
        seed: T,
        (raw, offset, escaped): (&'de str, usize, bool),
    ) -> Result<T::Value> {
        let field = self.fields.get(self.index - 1).map_or("", String::as_str);
        seed.deserialize(CellDeserializer {
            raw,
            field,
            escaped,
        })
        .map_err(|e| e.or_position(self.row.position(offset)))
    }
}

impl<'de> de::MapAccess<'de> for RowCells<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.index >= self.row.len() {
            return Ok(None);
        }
        let name = self.fields.get(self.index).map_or("", String::as_str);
        self.value = Some(self.next_raw());
        self.index += 1;
        seed.deserialize(StrDeserializer::<Error>::new(name))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let cell = self.value.take().unwrap_or(("", 0, false));
        self.cell(seed, cell)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.row.len() - self.index)
    }
}

impl<'de> de::SeqAccess<'de> for RowCells<'de, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.index >= self.row.len() {
            return Ok(None);
        }
        let cell = self.next_raw();
        self.index += 1;
        self.cell(seed, cell).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.row.len() - self.index)
    }
}

/// One cell: the escaped text, whether it holds an escape, and the field it belongs to.
struct CellDeserializer<'de, 'f> {
    raw: &'de str,
    field: &'f str,
    escaped: bool,
}

impl<'de> CellDeserializer<'de, '_> {
    #[inline]
    fn text(&self) -> Cow<'de, str> {
        if self.escaped {
            unescape(self.raw)
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    fn invalid(&self, message: String) -> Error {
        ErrorKind::InvalidValue {
            field: self.field.to_owned(),
            message,
        }
        .into()
    }

    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T> {
        let text = self.text();
        text.parse::<T>()
            .map_err(|_| self.invalid(format!("expected {what}, found {:?}", text.as_ref())))
    }

    /// The cell parsed as JSON (exactly; see `json::parse_json`).
    fn json(&self) -> Result<serde_json::Value> {
        crate::json::parse_json(&self.text())
            .map_err(|e| self.invalid(format!("expected JSON in the cell: {e}")))
    }

    fn json_error(&self, e: &serde_json::Error) -> Error {
        self.invalid(e.to_string())
    }
}

macro_rules! parsed {
    ($($method:ident => $visit:ident($t:ty, $what:literal)),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            visitor.$visit(self.parse::<$t>($what)?)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for CellDeserializer<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.text() {
            Cow::Borrowed(text) => visitor.visit_borrowed_str(text),
            Cow::Owned(text) => visitor.visit_string(text),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.text().as_ref() {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(self.invalid(format!("expected `true` or `false`, found {other:?}"))),
        }
    }

    parsed!(
        deserialize_i8 => visit_i8(i8, "an integer (i8)"),
        deserialize_i16 => visit_i16(i16, "an integer (i16)"),
        deserialize_i32 => visit_i32(i32, "an integer (i32)"),
        deserialize_i64 => visit_i64(i64, "an integer (i64)"),
        deserialize_i128 => visit_i128(i128, "an integer (i128)"),
        deserialize_u8 => visit_u8(u8, "an unsigned integer (u8)"),
        deserialize_u16 => visit_u16(u16, "an unsigned integer (u16)"),
        deserialize_u32 => visit_u32(u32, "an unsigned integer (u32)"),
        deserialize_u64 => visit_u64(u64, "an unsigned integer (u64)"),
        deserialize_u128 => visit_u128(u128, "an unsigned integer (u128)"),
        deserialize_f32 => visit_f32(f32, "a number"),
        deserialize_f64 => visit_f64(f64, "a number")
    );

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let text = self.text();
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => visitor.visit_char(c),
            _ => Err(self.invalid(format!("expected one character, found {:?}", text.as_ref()))),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.text() {
            Cow::Borrowed(text) => visitor.visit_borrowed_bytes(text.as_bytes()),
            Cow::Owned(text) => visitor.visit_byte_buf(text.into_bytes()),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.raw.is_empty() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.raw.is_empty() {
            visitor.visit_unit()
        } else {
            Err(self.invalid(format!(
                "expected an empty cell, found {:?}",
                self.text().as_ref()
            )))
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.json()?
            .deserialize_seq(visitor)
            .map_err(|e| self.json_error(&e))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        self.json()?
            .deserialize_tuple(len, visitor)
            .map_err(|e| self.json_error(&e))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.json()?
            .deserialize_tuple_struct(name, len, visitor)
            .map_err(|e| self.json_error(&e))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.json()?
            .deserialize_map(visitor)
            .map_err(|e| self.json_error(&e))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.json()?
            .deserialize_struct(name, fields, visitor)
            .map_err(|e| self.json_error(&e))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        // A unit variant is its name; other variants are JSON, as the encoder writes them.
        if self.raw.starts_with('{') || self.raw.starts_with('"') {
            return self
                .json()?
                .deserialize_enum(name, variants, visitor)
                .map_err(|e| self.json_error(&e));
        }
        visitor.visit_enum(CowStrDeserializer::<Error>::new(self.text()))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

/// Deserializes the rows of a [`StrDecoder`]'s current section; see
/// [`StrDecoder::deserialize`].
#[derive(Debug)]
pub struct DeserializeRows<'d, 'a, T> {
    decoder: &'d mut StrDecoder<'a>,
    target: PhantomData<fn() -> T>,
}

impl<'a, T: Deserialize<'a>> Iterator for DeserializeRows<'_, 'a, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        let row = match self.decoder.next_row() {
            Ok(Some(row)) => row,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let fields = self.decoder.header().map_or(&[][..], |h| &h.fields[..]);
        Some(deserialize_row(fields, row))
    }
}

/// Deserializes the rows of a [`Decoder`]'s current section; see [`Decoder::deserialize`].
#[derive(Debug)]
pub struct DeserializeRecords<'d, R, T> {
    decoder: &'d mut Decoder<R>,
    target: PhantomData<fn() -> T>,
}

impl<R: BufRead, T: DeserializeOwned> Iterator for DeserializeRecords<'_, R, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        match self.decoder.next_row_and_fields() {
            Ok(Some((row, fields))) => Some(deserialize_row(fields, row)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl<'a> StrDecoder<'a> {
    /// Deserializes the current section's remaining rows into `T`, like the csv crate: a
    /// struct or map takes cells by the header's field names (cells of fields it does not
    /// know are ignored), a tuple or sequence takes them by position. Reads the first header
    /// if none has been read yet.
    ///
    /// Cells are parsed into whatever each field asks for: integers, floats (Go's `1e+06`
    /// included), `true`/`false`, `Option` (an empty cell is `None`), unit enum variants by
    /// name, and sequences, maps and structs from JSON. `&'a str` and `Cow<'a, str>` fields
    /// borrow cells that hold no escapes.
    ///
    /// ```
    /// use agentwire_gcx1::StrDecoder;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, Debug, PartialEq)]
    /// struct Usage<'a> { from: &'a str, confidence: f64, line: Option<u32> }
    ///
    /// let text = "GCX1 tool=find_usages fields=from,to,confidence,line\na\tb\t0.5\t7\nc\td\t1e-05\t\n";
    /// let mut decoder = StrDecoder::new(text);
    /// let rows: Vec<Usage> = decoder.deserialize().collect::<Result<_, _>>()?;
    /// assert_eq!(rows[1], Usage { from: "c", confidence: 1e-5, line: None });
    /// # Ok::<(), agentwire_gcx1::Error>(())
    /// ```
    pub fn deserialize<T: Deserialize<'a>>(&mut self) -> DeserializeRows<'_, 'a, T> {
        DeserializeRows {
            decoder: self,
            target: PhantomData,
        }
    }
}

impl<R: BufRead> Decoder<R> {
    /// Deserializes the current section's remaining rows into `T`; see
    /// [`StrDecoder::deserialize`]. Rows are read one at a time, so `T` owns its data.
    pub fn deserialize<T: DeserializeOwned>(&mut self) -> DeserializeRecords<'_, R, T> {
        DeserializeRecords {
            decoder: self,
            target: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize, PartialEq)]
    enum Kind {
        #[serde(rename = "function")]
        Function,
        #[serde(rename = "method")]
        Method,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Symbol<'a> {
        #[serde(borrow)]
        id: Cow<'a, str>,
        kind: Kind,
        line: u32,
        tags: Vec<String>,
        score: Option<f64>,
    }

    const TEXT: &str = "GCX1 tool=t fields=id,extra,kind,line,tags,score\n\
                        a\\tb\tx\tfunction\t10\t[\"x\",\"y\"]\t0.5\n\
                        c\t\tmethod\t11\t[]\n";

    #[test]
    fn structs_by_name() {
        let mut decoder = StrDecoder::new(TEXT);
        let rows: Vec<Symbol<'_>> = decoder.deserialize().collect::<Result<_>>().unwrap();
        assert_eq!(rows[0].id, "a\tb");
        assert!(matches!(rows[1].id, Cow::Borrowed("c")));
        assert_eq!(rows[0].kind, Kind::Function);
        assert_eq!(rows[0].tags, ["x", "y"]);
        assert_eq!(rows[1].score, None);
        let mut streaming = Decoder::new(TEXT.as_bytes());
        let maps: Vec<BTreeMap<String, String>> =
            streaming.deserialize().collect::<Result<_>>().unwrap();
        assert_eq!(maps[1]["kind"], "method");
        assert_eq!(maps[1]["score"], "");
    }

    #[test]
    fn tuples_by_position() {
        let mut decoder = StrDecoder::new("GCX1 tool=t fields=a,b\nx\t1\n");
        let rows: Vec<(String, u8)> = decoder.deserialize().collect::<Result<_>>().unwrap();
        assert_eq!(rows, [("x".to_owned(), 1)]);
    }

    #[test]
    fn errors_point_at_the_cell() {
        let mut decoder = StrDecoder::new("GCX1 tool=t fields=id,line\nabc\tten\n");
        let e = decoder
            .deserialize::<(String, u32)>()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.code(), "invalid_value");
        assert_eq!(e.position(), Some(Position::new(2, 5)));
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Needs {
            missing: String,
        }
        let mut decoder = StrDecoder::new("GCX1 tool=t fields=id\nabc\n");
        let e = decoder.deserialize::<Needs>().next().unwrap().unwrap_err();
        assert_eq!(e.code(), "type_mismatch");
        assert_eq!(e.position(), Some(Position::new(2, 1)));
    }
}
