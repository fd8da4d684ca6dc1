//! serde serializers: a row ([`serialize_row`]), one cell, and a `serde_json::Value` built
//! without losing NaN to `null` ([`to_value`]).

use serde::ser::{self, Impossible, Serialize};
use serde_json::{Map, Number, Value};

use crate::encoder::CellWriter;
use crate::error::{Error, ErrorKind, Result};

/// serde_json's private struct name for a `Number` under `arbitrary_precision`.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
/// serde_json's private struct name for a `RawValue`.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

fn unsupported(what: &str) -> Error {
    ErrorKind::Serialize(format!("{what} cannot be serialized here")).into()
}

/// How a serialized row relates to the section's header.
pub(crate) enum Fields<'a> {
    /// The header has no fields yet: collect the row's field names.
    Collect(&'a mut Vec<String>),
    /// Check the row's field names against the header's; `seen` caches the `&'static str`
    /// names of earlier rows for a pointer comparison.
    Check {
        fields: &'a [String],
        seen: &'a mut [Option<&'static str>],
    },
}

/// Serializes `row` as the cells of one row into `out` (without the line ending) and returns
/// the number of cells written.
pub(crate) fn serialize_row<T: Serialize + ?Sized>(
    row: &T,
    out: &mut Vec<u8>,
    fields: Fields<'_>,
) -> Result<usize> {
    let mut serializer = RowSerializer {
        out,
        fields,
        count: 0,
        key: None,
        private: Private::No,
    };
    row.serialize(&mut serializer)?;
    Ok(serializer.count)
}

#[derive(Clone, Copy)]
enum Name<'n> {
    Static(&'static str),
    Dynamic(&'n str),
    Positional,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Private {
    No,
    Number,
    Raw,
}

struct RowSerializer<'a> {
    out: &'a mut Vec<u8>,
    fields: Fields<'a>,
    count: usize,
    key: Option<String>,
    private: Private,
}

impl RowSerializer<'_> {
    /// Checks or records the name of the next cell and writes the separator.
    ///
    /// Inlined for the usual case, a struct field whose `&'static str` name an earlier row
    /// already matched against the header: one pointer comparison.
    #[inline(always)]
    fn begin_cell(&mut self, name: Name<'_>) -> Result<()> {
        let known = match (&self.fields, name) {
            (Fields::Check { seen, .. }, Name::Static(s)) => seen
                .get(self.count)
                .is_some_and(|p| p.is_some_and(|p| std::ptr::eq(p, s))),
            (Fields::Check { fields, .. }, Name::Positional) => self.count < fields.len(),
            _ => false,
        };
        if !known {
            self.check_name(name)?;
        }
        if self.count > 0 {
            self.out.push(b'\t');
        }
        Ok(())
    }

    /// Checks or records the name of the next cell, the general case of [`Self::begin_cell`].
    #[inline(never)]
    fn check_name(&mut self, name: Name<'_>) -> Result<()> {
        match &mut self.fields {
            Fields::Collect(names) => match name {
                Name::Static(s) => names.push(s.to_owned()),
                Name::Dynamic(s) => names.push(s.to_owned()),
                Name::Positional => return Err(ErrorKind::EmptyFieldList.into()),
            },
            Fields::Check { fields, seen } => {
                let Some(expected) = fields.get(self.count) else {
                    return Err(ErrorKind::TooManyValues {
                        expected: fields.len(),
                        found: self.count + 1,
                    }
                    .into());
                };
                let matches = match name {
                    Name::Static(s) => {
                        if expected == s {
                            seen[self.count] = Some(s);
                            true
                        } else {
                            false
                        }
                    }
                    Name::Dynamic(s) => expected == s,
                    Name::Positional => true,
                };
                if !matches {
                    let found = match name {
                        Name::Static(s) => s.to_owned(),
                        Name::Dynamic(s) => s.to_owned(),
                        Name::Positional => String::new(),
                    };
                    return Err(ErrorKind::FieldMismatch {
                        expected: expected.clone(),
                        found,
                    }
                    .into());
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn cell<T: Serialize + ?Sized>(&mut self, name: Name<'_>, value: &T) -> Result<()> {
        self.begin_cell(name)?;
        let first = self.count == 0;
        self.count += 1;
        value.serialize(CellSerializer {
            out: CellWriter::new(self.out, first),
        })
    }
}

macro_rules! scalar_row {
    ($($method:ident($t:ty)),*) => {$(
        #[inline]
        fn $method(self, value: $t) -> Result<()> {
            self.cell(Name::Positional, &value)
        }
    )*};
}

impl<'r, 'a> ser::Serializer for &'r mut RowSerializer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    scalar_row!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str)
    );

    fn serialize_bytes(self, value: &[u8]) -> Result<()> {
        self.cell(Name::Positional, &Bytes(value))
    }

    fn serialize_none(self) -> Result<()> {
        Err(ErrorKind::Serialize("`None` cannot be a row".into()).into())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.cell(Name::Positional, variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self> {
        Ok(self)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self> {
        Ok(self)
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self> {
        Ok(self)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self> {
        Ok(self)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self> {
        Ok(self)
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Self> {
        self.private = match name {
            NUMBER_TOKEN => Private::Number,
            RAW_TOKEN => Private::Raw,
            _ => Private::No,
        };
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self> {
        Ok(self)
    }
}

impl ser::SerializeSeq for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.cell(Name::Positional, value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeTuple for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.cell(Name::Positional, value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.cell(Name::Positional, value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.cell(Name::Positional, value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeMap for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self.key.take().unwrap_or_default();
        self.cell(Name::Dynamic(&key), value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeStruct for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        match self.private {
            Private::No => self.cell(Name::Static(key), value),
            // A serde_json `Number` or `RawValue` serialized as a whole row: one cell.
            Private::Number | Private::Raw => {
                let value = private_value(self.private, value)?;
                self.cell(Name::Positional, &value)
            }
        }
    }

    #[inline]
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        self.begin_cell(Name::Static(key))?;
        self.count += 1;
        Ok(())
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for &mut RowSerializer<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.cell(Name::Static(key), value)
    }

    #[inline]
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        self.begin_cell(Name::Static(key))?;
        self.count += 1;
        Ok(())
    }

    #[inline]
    fn end(self) -> Result<()> {
        Ok(())
    }
}

/// The `Number` or `Value` behind serde_json's private struct field `value`.
fn private_value<T: Serialize + ?Sized>(kind: Private, value: &T) -> Result<Value> {
    let Value::String(text) = value.serialize(ValueSerializer)? else {
        return Err(unsupported("a malformed serde_json private value"));
    };
    let parsed = if kind == Private::Number {
        serde_json::from_str::<Number>(&text).map(Value::Number)
    } else {
        serde_json::from_str::<Value>(&text)
    };
    parsed.map_err(|e| ErrorKind::Serialize(e.to_string()).into())
}

/// Bytes that serialize as bytes (a `&[u8]` serializes as a sequence).
struct Bytes<'b>(&'b [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

/// Serializes one value into one cell.
struct CellSerializer<'c> {
    out: CellWriter<'c>,
}

macro_rules! integer_cell {
    ($($method:ident($t:ty)),*) => {$(
        #[inline]
        fn $method(mut self, value: $t) -> Result<()> {
            self.out.raw(itoa::Buffer::new().format(value).as_bytes());
            Ok(())
        }
    )*};
}

impl<'c> ser::Serializer for CellSerializer<'c> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = NestedCell<'c>;
    type SerializeTuple = NestedCell<'c>;
    type SerializeTupleStruct = NestedCell<'c>;
    type SerializeTupleVariant = NestedCell<'c>;
    type SerializeMap = NestedCell<'c>;
    type SerializeStruct = NestedCell<'c>;
    type SerializeStructVariant = NestedCell<'c>;

    #[inline]
    fn serialize_bool(mut self, value: bool) -> Result<()> {
        self.out.write_bool(value);
        Ok(())
    }

    integer_cell!(
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128)
    );

    #[inline]
    fn serialize_f32(mut self, value: f32) -> Result<()> {
        self.out.write_f32(value)
    }

    #[inline]
    fn serialize_f64(mut self, value: f64) -> Result<()> {
        self.out.write_f64(value)
    }

    fn serialize_char(mut self, value: char) -> Result<()> {
        self.out.write_str(value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    #[inline(always)]
    fn serialize_str(mut self, value: &str) -> Result<()> {
        self.out.write_str(value);
        Ok(())
    }

    fn serialize_bytes(mut self, value: &[u8]) -> Result<()> {
        let text = std::str::from_utf8(value).map_err(|_| {
            ErrorKind::Serialize("bytes that are not UTF-8 cannot be a cell".into())
        })?;
        self.out.write_str(text);
        Ok(())
    }

    #[inline]
    fn serialize_none(self) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Ok(())
    }

    fn serialize_unit_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.out.write_str(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        let value = ValueSerializer.serialize_newtype_variant(name, index, variant, value)?;
        crate::json::write_value_cell(&mut self.out, &value)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<NestedCell<'c>> {
        Ok(NestedCell {
            out: self.out,
            builder: ValueSerializer.serialize_seq(len)?,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<NestedCell<'c>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<NestedCell<'c>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<NestedCell<'c>> {
        Ok(NestedCell {
            out: self.out,
            builder: ValueSerializer.serialize_tuple_variant(name, index, variant, len)?,
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<NestedCell<'c>> {
        Ok(NestedCell {
            out: self.out,
            builder: ValueSerializer.serialize_map(len)?,
        })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<NestedCell<'c>> {
        Ok(NestedCell {
            out: self.out,
            builder: ValueSerializer.serialize_struct(name, len)?,
        })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<NestedCell<'c>> {
        Ok(NestedCell {
            out: self.out,
            builder: ValueSerializer.serialize_struct_variant(name, index, variant, len)?,
        })
    }
}

/// A nested value inside a cell: built as a `Value`, then written as compact JSON.
struct NestedCell<'c> {
    out: CellWriter<'c>,
    builder: ValueBuilder,
}

macro_rules! nested_cell {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for NestedCell<'_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                ser::$trait::$method(&mut self.builder, value)
            }

            fn end(self) -> Result<()> {
                let mut out = self.out;
                let value = ser::$trait::end(self.builder)?;
                crate::json::write_value_cell(&mut out, &value)
            }
        }
    )*};
}

nested_cell!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for NestedCell<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        ser::SerializeMap::serialize_key(&mut self.builder, key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeMap::serialize_value(&mut self.builder, value)
    }

    fn end(self) -> Result<()> {
        let mut out = self.out;
        let value = ser::SerializeMap::end(self.builder)?;
        crate::json::write_value_cell(&mut out, &value)
    }
}

impl ser::SerializeStruct for NestedCell<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(&mut self.builder, key, value)
    }

    fn end(self) -> Result<()> {
        let mut out = self.out;
        let value = ser::SerializeStruct::end(self.builder)?;
        crate::json::write_value_cell(&mut out, &value)
    }
}

impl ser::SerializeStructVariant for NestedCell<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStructVariant::serialize_field(&mut self.builder, key, value)
    }

    fn end(self) -> Result<()> {
        let mut out = self.out;
        let value = ser::SerializeStructVariant::end(self.builder)?;
        crate::json::write_value_cell(&mut out, &value)
    }
}

/// Serializes any value into a `serde_json::Value`, like `serde_json::to_value`, except that
/// NaN and infinities are a `non_finite_float` error instead of `null`, and `f32` values keep
/// their shortest decimal form (`0.1f32` becomes `0.1`).
pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    value.serialize(ValueSerializer)
}

/// A member or element as a `serde_json::Value`: a `Value` (a layout's `extra` members) is
/// cloned, which builds the same value as serializing it, without hashing its keys again.
fn element_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    match crate::value::as_value(value) {
        Some(value) => Ok(value.clone()),
        None => value.serialize(ValueSerializer),
    }
}

struct ValueSerializer;

fn integer_value(value: i128) -> Result<Value> {
    if let Ok(v) = u64::try_from(value) {
        return Ok(Value::Number(v.into()));
    }
    if let Ok(v) = i64::try_from(value) {
        return Ok(Value::Number(v.into()));
    }
    // Beyond 64 bits: representable only when serde_json keeps lexemes.
    serde_json::from_str::<Number>(&value.to_string())
        .ok()
        .filter(|_| crate::json::arbitrary_precision())
        .map(Value::Number)
        .ok_or_else(|| ErrorKind::Serialize(format!("integer {value} is out of range")).into())
}

fn float_value(value: f64) -> Result<Value> {
    Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| ErrorKind::NonFiniteFloat { value }.into())
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = ValueBuilder;
    type SerializeTuple = ValueBuilder;
    type SerializeTupleStruct = ValueBuilder;
    type SerializeTupleVariant = ValueBuilder;
    type SerializeMap = ValueBuilder;
    type SerializeStruct = ValueBuilder;
    type SerializeStructVariant = ValueBuilder;

    fn serialize_bool(self, value: bool) -> Result<Value> {
        Ok(Value::Bool(value))
    }

    fn serialize_i8(self, value: i8) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_i16(self, value: i16) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_i32(self, value: i32) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_i64(self, value: i64) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_i128(self, value: i128) -> Result<Value> {
        integer_value(value)
    }

    fn serialize_u8(self, value: u8) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_u16(self, value: u16) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_u32(self, value: u32) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_u64(self, value: u64) -> Result<Value> {
        Ok(Value::Number(value.into()))
    }

    fn serialize_u128(self, value: u128) -> Result<Value> {
        match u64::try_from(value) {
            Ok(v) => Ok(Value::Number(v.into())),
            Err(_) => serde_json::from_str::<Number>(&value.to_string())
                .ok()
                .filter(|_| crate::json::arbitrary_precision())
                .map(Value::Number)
                .ok_or_else(|| {
                    ErrorKind::Serialize(format!("integer {value} is out of range")).into()
                }),
        }
    }

    fn serialize_f32(self, value: f32) -> Result<Value> {
        if !value.is_finite() {
            return Err(ErrorKind::NonFiniteFloat {
                value: f64::from(value),
            }
            .into());
        }
        // The f32's shortest decimal, read as an f64: 0.1f32 is 0.1, not 0.10000000149011612.
        let shortest = ryu::Buffer::new()
            .format_finite(value)
            .parse::<f64>()
            .unwrap_or(f64::from(value));
        float_value(shortest)
    }

    fn serialize_f64(self, value: f64) -> Result<Value> {
        float_value(value)
    }

    fn serialize_char(self, value: char) -> Result<Value> {
        Ok(Value::String(value.to_string()))
    }

    fn serialize_str(self, value: &str) -> Result<Value> {
        Ok(Value::String(value.to_owned()))
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<Value> {
        Ok(Value::Array(
            value.iter().map(|&b| Value::Number(b.into())).collect(),
        ))
    }

    fn serialize_none(self) -> Result<Value> {
        Ok(Value::Null)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Value> {
        Ok(Value::Null)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value> {
        Ok(Value::Null)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value> {
        Ok(Value::String(variant.to_owned()))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value> {
        let mut map = Map::new();
        map.insert(variant.to_owned(), value.serialize(self)?);
        Ok(Value::Object(map))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<ValueBuilder> {
        Ok(ValueBuilder::Array(Vec::with_capacity(
            len.unwrap_or(0).min(4096),
        )))
    }

    fn serialize_tuple(self, len: usize) -> Result<ValueBuilder> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<ValueBuilder> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<ValueBuilder> {
        Ok(ValueBuilder::TupleVariant {
            variant,
            items: Vec::with_capacity(len.min(4096)),
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<ValueBuilder> {
        Ok(ValueBuilder::Object {
            map: Map::with_capacity(len.unwrap_or(0).min(4096)),
            key: None,
        })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<ValueBuilder> {
        Ok(match name {
            NUMBER_TOKEN => ValueBuilder::Private(Private::Number, None),
            RAW_TOKEN => ValueBuilder::Private(Private::Raw, None),
            _ => ValueBuilder::Object {
                map: Map::with_capacity(len),
                key: None,
            },
        })
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<ValueBuilder> {
        Ok(ValueBuilder::StructVariant {
            variant,
            map: Map::new(),
        })
    }
}

/// A compound value under construction.
enum ValueBuilder {
    Array(Vec<Value>),
    TupleVariant {
        variant: &'static str,
        items: Vec<Value>,
    },
    Object {
        map: Map<String, Value>,
        key: Option<String>,
    },
    StructVariant {
        variant: &'static str,
        map: Map<String, Value>,
    },
    Private(Private, Option<Value>),
}

impl ValueBuilder {
    fn push(&mut self, value: Value) {
        match self {
            ValueBuilder::Array(items) | ValueBuilder::TupleVariant { items, .. } => {
                items.push(value);
            }
            _ => {}
        }
    }

    fn insert(&mut self, key: String, value: Value) {
        match self {
            ValueBuilder::Object { map, .. } | ValueBuilder::StructVariant { map, .. } => {
                map.insert(key, value);
            }
            _ => {}
        }
    }

    fn finish(self) -> Result<Value> {
        Ok(match self {
            ValueBuilder::Array(items) => Value::Array(items),
            ValueBuilder::TupleVariant { variant, items } => {
                let mut map = Map::new();
                map.insert(variant.to_owned(), Value::Array(items));
                Value::Object(map)
            }
            ValueBuilder::Object { map, .. } => Value::Object(map),
            ValueBuilder::StructVariant { variant, map } => {
                let mut outer = Map::new();
                outer.insert(variant.to_owned(), Value::Object(map));
                Value::Object(outer)
            }
            ValueBuilder::Private(_, value) => {
                value.ok_or_else(|| unsupported("an empty serde_json private value"))?
            }
        })
    }
}

macro_rules! builder_elements {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for ValueBuilder {
            type Ok = Value;
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                let value = element_value(value)?;
                self.push(value);
                Ok(())
            }

            fn end(self) -> Result<Value> {
                self.finish()
            }
        }
    )*};
}

builder_elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ValueBuilder {
    fn map_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        if let ValueBuilder::Object { key: slot, .. } = self {
            *slot = Some(key.serialize(KeySerializer)?);
        }
        Ok(())
    }

    fn map_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = match self {
            ValueBuilder::Object { key, .. } => key.take().unwrap_or_default(),
            _ => String::new(),
        };
        let value = element_value(value)?;
        self.insert(key, value);
        Ok(())
    }

    fn struct_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
        if let ValueBuilder::Private(kind, slot) = self {
            *slot = Some(private_value(*kind, value)?);
            return Ok(());
        }
        let value = element_value(value)?;
        self.insert(key.to_owned(), value);
        Ok(())
    }
}

impl ser::SerializeMap for ValueBuilder {
    type Ok = Value;
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.map_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.map_value(value)
    }

    fn end(self) -> Result<Value> {
        self.finish()
    }
}

impl ser::SerializeStruct for ValueBuilder {
    type Ok = Value;
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.struct_field(key, value)
    }

    fn end(self) -> Result<Value> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for ValueBuilder {
    type Ok = Value;
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.struct_field(key, value)
    }

    fn end(self) -> Result<Value> {
        self.finish()
    }
}

/// Serializes a map key into a string.
struct KeySerializer;

fn key_error() -> Error {
    ErrorKind::Serialize("map keys must be strings, numbers, booleans or unit variants".into())
        .into()
}

macro_rules! display_key {
    ($($method:ident($t:ty)),*) => {$(
        fn $method(self, value: $t) -> Result<String> {
            Ok(value.to_string())
        }
    )*};
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    display_key!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str)
    );

    fn serialize_f32(self, _value: f32) -> Result<String> {
        Err(key_error())
    }

    fn serialize_f64(self, _value: f64) -> Result<String> {
        Err(key_error())
    }

    fn serialize_bytes(self, _value: &[u8]) -> Result<String> {
        Err(key_error())
    }

    fn serialize_none(self) -> Result<String> {
        Err(key_error())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<String> {
        Err(key_error())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<String> {
        Err(key_error())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String> {
        Ok(variant.to_owned())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String> {
        Err(key_error())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_error())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_error())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_error())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_error())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_error())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_error())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn to_value_rejects_nan_and_keeps_f32_short() {
        assert_eq!(to_value(&f64::NAN).unwrap_err().code(), "non_finite_float");
        assert_eq!(
            to_value(&vec![1.0, f64::INFINITY]).unwrap_err().code(),
            "non_finite_float"
        );
        assert_eq!(to_value(&0.1f32).unwrap(), json!(0.1));
        let value = json!({"a": [1, "x", null, {"b": 2.5}], "c": true});
        assert_eq!(to_value(&value).unwrap(), value);
    }

    #[test]
    fn rows_from_tuples_structs_and_maps() {
        let mut out = Vec::new();
        let fields = vec!["a".to_owned(), "b".to_owned()];
        let mut seen = vec![None; 2];
        let n = serialize_row(
            &("x", 1.5),
            &mut out,
            Fields::Check {
                fields: &fields,
                seen: &mut seen,
            },
        )
        .unwrap();
        assert_eq!((n, out.as_slice()), (2, &b"x\t1.5"[..]));

        let mut out = Vec::new();
        let mut names = Vec::new();
        let row = json!({"k": [1, {"a": null, "z": "<"}], "n": null});
        serialize_row(&row, &mut out, Fields::Collect(&mut names)).unwrap();
        assert_eq!(names, ["k", "n"]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[1,{\"a\":null,\"z\":\"\\\\u003c\"}]\t"
        );
    }
}
