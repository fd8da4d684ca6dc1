//! Map keys as text: the one serializer the tape reads map keys (and serde_json's private
//! number and raw-value strings) with.

use serde::ser::{self, Impossible, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::number;

/// Serializes a map key to text and hands it to `take`: strings, chars, integers, floats,
/// booleans and unit variants become strings (as serde_json makes them); anything else is
/// `invalid_key`.
pub(crate) struct KeyText<F> {
    /// Takes the text.
    pub(crate) take: F,
}

#[cold]
fn key_must_be_a_string(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidKey,
        format!("a map key must be a string, integer, float, bool or char, not {what}"),
    )
}

impl<F: FnOnce(&str) -> Result<()>> ser::Serializer for KeyText<F> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<()> {
        (self.take)(v)
    }
    fn serialize_char(self, v: char) -> Result<()> {
        (self.take)(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_bool(self, v: bool) -> Result<()> {
        (self.take)(if v { "true" } else { "false" })
    }
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        (self.take)(itoa::Buffer::new().format(v))
    }
    fn serialize_i128(self, v: i128) -> Result<()> {
        (self.take)(itoa::Buffer::new().format(v))
    }
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        (self.take)(itoa::Buffer::new().format(v))
    }
    fn serialize_u128(self, v: u128) -> Result<()> {
        (self.take)(itoa::Buffer::new().format(v))
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        let mut text = String::new();
        number::write_f32(&mut text, v)?;
        (self.take)(&text)
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        let mut text = String::new();
        number::write_f64(&mut text, v)?;
        (self.take)(&text)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        (self.take)(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(key_must_be_a_string("bytes"))
    }
    fn serialize_none(self) -> Result<()> {
        Err(key_must_be_a_string("null"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<()> {
        Err(key_must_be_a_string("an option"))
    }
    fn serialize_unit(self) -> Result<()> {
        Err(key_must_be_a_string("null"))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(key_must_be_a_string("a unit struct"))
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string("an enum variant with data"))
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string("a sequence"))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string("an enum variant with data"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string("a map"))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string("a struct"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string("an enum variant with data"))
    }
}

/// The string a value serializes as (serde_json's private number and raw-value structs hold
/// one); `None` for anything that does not serialize as text.
pub(crate) fn text_of<T: ?Sized + Serialize>(value: &T) -> Option<String> {
    let mut text = None;
    value
        .serialize(KeyText {
            take: |s: &str| {
                text = Some(s.to_owned());
                Ok(())
            },
        })
        .ok()?;
    text
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn keys_become_text_as_serde_json_makes_them() {
        assert_eq!(text_of("k").as_deref(), Some("k"));
        assert_eq!(text_of(&'é').as_deref(), Some("é"));
        assert_eq!(text_of(&true).as_deref(), Some("true"));
        assert_eq!(text_of(&-7i8).as_deref(), Some("-7"));
        assert_eq!(
            text_of(&u128::MAX).as_deref(),
            Some(u128::MAX.to_string().as_str())
        );
        assert_eq!(text_of(&0.5f64).as_deref(), Some("0.5"));
        assert_eq!(text_of(&()), None);
        assert_eq!(text_of(&[1]), None);
        assert_eq!(text_of(&f64::NAN), None);
    }

    #[test]
    fn non_string_keys_are_written_as_strings() {
        let map: BTreeMap<char, u8> = [('b', 1), ('a', 2)].into();
        assert_eq!(
            crate::to_string(&map).unwrap(),
            "GCF profile=generic\na=2\nb=1\n"
        );
        let map: BTreeMap<i32, u8> = [(-1, 1), (7, 2)].into();
        assert_eq!(
            crate::to_string(&map).unwrap(),
            "GCF profile=generic\n\"-1\"=1\n\"7\"=2\n"
        );
        let bad: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        assert_eq!(
            crate::to_string(&bad).unwrap_err().kind(),
            ErrorKind::InvalidKey
        );
    }
}
