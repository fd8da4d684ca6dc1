//! Reading JSON input exactly: every number keeps its digits (the command builds serde_json
//! with `arbitrary_precision`), and an object that names a member twice is an error at the
//! line and column where the second name ends, where serde_json's `Value` would silently keep
//! the last.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::CliError;

/// Reads one JSON document from `reader` (named `what` in messages): numbers exact, duplicate
/// member names refused.
pub(crate) fn read<R: Read>(mut reader: R, what: &str) -> Result<Value, CliError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|source| CliError::ReadInput {
            what: what.to_owned(),
            source,
        })?;
    from_slice(&bytes, what)
}

/// [`read`] over bytes already in memory.
pub(crate) fn from_slice(bytes: &[u8], what: &str) -> Result<Value, CliError> {
    let invalid = |source| CliError::InvalidJson {
        what: what.to_owned(),
        source,
    };
    // First pass: only member names are looked at, so it allocates for escaped names alone.
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    NoDuplicates
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end())
        .map_err(invalid)?;
    serde_json::from_slice(bytes).map_err(invalid)
}

/// Walks a JSON value, failing at the first object that names a member twice.
struct NoDuplicates;

impl<'de> DeserializeSeed<'de> for NoDuplicates {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicates {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoDuplicates)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(Key(key)) = map.next_key()? {
            if seen.contains(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate member name {:?} in an object (JSON allows it, but which value is \
                     meant is ambiguous)",
                    key.as_ref()
                )));
            }
            // An exact number arrives as a one-member map of serde_json's private token, whose
            // value is the number's text: nothing to check inside.
            if seen.is_empty() && key.starts_with("$serde_json::private::") {
                map.next_value::<IgnoredAny>()?;
            } else {
                map.next_value_seed(NoDuplicates)?;
            }
            seen.insert(key);
        }
        Ok(())
    }
}

/// A member name, borrowed from the input unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Value, String> {
        from_slice(text.as_bytes(), "input").map_err(|e| e.to_string())
    }

    #[test]
    fn numbers_keep_every_digit() {
        let value =
            read_str(r#"{"big": 12345678901234567890123, "tiny": 1e-400, "z": -0, "f": 1.50}"#)
                .unwrap();
        assert_eq!(
            value.to_string(),
            r#"{"big":12345678901234567890123,"tiny":1e-400,"z":-0,"f":1.50}"#
        );
    }

    #[test]
    fn a_repeated_member_name_is_an_error_with_its_position() {
        let err =
            read_str("{\n  \"a\": 1,\n  \"b\": {\"x\": [1, {\"y\": 2, \"y\": 3}]}\n}").unwrap_err();
        assert!(err.contains("duplicate member name \"y\""), "{err}");
        // serde_json points at the last character it read: the closing quote of the second name.
        assert!(err.contains("line 3 column 29"), "{err}");
        // An escaped spelling of the same name is the same name.
        let err = read_str(r#"{"a": 1, "\u0061": 2}"#).unwrap_err();
        assert!(err.contains("duplicate member name \"a\""), "{err}");
        // The same name in sibling objects is fine.
        assert!(read_str(r#"[{"a": 1}, {"a": 2}]"#).is_ok());
    }

    #[test]
    fn trailing_text_and_bad_json_are_errors() {
        assert!(read_str("{} {}").is_err());
        assert!(read_str("{\"a\": }").is_err());
        assert!(read_str("").is_err());
    }
}
