//! A deserializer whose input lives shorter than the target's `'de`, made one for any `'de`.
//!
//! `from_reader` decodes a payload a unit at a time: each unit's text lives while it is read,
//! and the value being built outlives it. The in-memory deserializer over a unit lends its
//! strings for the unit's lifetime, so [`Owned`] hands every string and byte slice it lends
//! to the target's visitors as a transient one (`visit_str`, never `visit_borrowed_str`):
//! nothing the visitors keep can point into a unit (not even serde's buffered content, which
//! `#[serde(flatten)]` and untagged enums hold across members). Every other call is passed
//! through unchanged, so values and errors are the inner deserializer's.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};

/// `D`, a deserializer over text that lives for the unit only (its `'static` is nominal: see
/// the module docs), as a deserializer for any `'de`.
pub(crate) struct Owned<D>(pub(crate) D);

/// A visitor for any `'de` as one for the unit's deserializer.
struct Wrap<'de, V>(V, PhantomData<fn(&'de ())>);

/// A seed for any `'de` as one for the unit's deserializer.
pub(crate) struct Seed<'de, S>(pub(crate) S, PhantomData<fn(&'de ())>);

impl<S> Seed<'_, S> {
    pub(crate) fn new(seed: S) -> Self {
        Seed(seed, PhantomData)
    }
}

struct Access<A>(A);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'static> for Seed<'de, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'static>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Owned(d))
    }
}

macro_rules! forward_deserialize {
    ($($method:ident,)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(Wrap(visitor, PhantomData))
            }
        )*
    };
}

impl<'de, D: Deserializer<'static>> Deserializer<'de> for Owned<D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any, deserialize_bool, deserialize_i8, deserialize_i16, deserialize_i32,
        deserialize_i64, deserialize_i128, deserialize_u8, deserialize_u16, deserialize_u32,
        deserialize_u64, deserialize_u128, deserialize_f32, deserialize_f64, deserialize_char,
        deserialize_str, deserialize_string, deserialize_bytes, deserialize_byte_buf,
        deserialize_option, deserialize_unit, deserialize_seq, deserialize_map,
        deserialize_identifier, deserialize_ignored_any,
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_unit_struct(name, Wrap(visitor, PhantomData))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_newtype_struct(name, Wrap(visitor, PhantomData))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(visitor, PhantomData))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_tuple_struct(name, len, Wrap(visitor, PhantomData))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_struct(name, fields, Wrap(visitor, PhantomData))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_enum(name, variants, Wrap(visitor, PhantomData))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident($ty:ty),)*) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.0.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'static> for Wrap<'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool(bool), visit_i8(i8), visit_i16(i16), visit_i32(i32), visit_i64(i64),
        visit_i128(i128), visit_u8(u8), visit_u16(u16), visit_u32(u32), visit_u64(u64),
        visit_u128(u128), visit_f32(f32), visit_f64(f64), visit_char(char), visit_str(&str),
        visit_string(String), visit_bytes(&[u8]), visit_byte_buf(Vec<u8>),
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'static str) -> Result<V::Value, E> {
        self.0.visit_str(v)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'static [u8]) -> Result<V::Value, E> {
        self.0.visit_bytes(v)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'static>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Owned(d))
    }

    fn visit_newtype_struct<D: Deserializer<'static>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Owned(d))
    }

    fn visit_seq<A: de::SeqAccess<'static>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Access(seq))
    }

    fn visit_map<A: de::MapAccess<'static>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Access(map))
    }

    fn visit_enum<A: de::EnumAccess<'static>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Access(data))
    }
}

impl<'de, A: de::SeqAccess<'static>> de::SeqAccess<'de> for Access<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed::new(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: de::MapAccess<'static>> de::MapAccess<'de> for Access<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Seed::new(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed::new(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: de::EnumAccess<'static>> de::EnumAccess<'de> for Access<A> {
    type Error = A::Error;
    type Variant = Access<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        self.0
            .variant_seed(Seed::new(seed))
            .map(|(value, variant)| (value, Access(variant)))
    }
}

impl<'de, A: de::VariantAccess<'static>> de::VariantAccess<'de> for Access<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed::new(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor, PhantomData))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Wrap(visitor, PhantomData))
    }
}
