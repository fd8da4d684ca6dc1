//! The machinery behind the event types: reading typed members out of a JSON object while
//! keeping every other member, and writing them back in a fixed order.
//!
//! The types are converted by hand rather than with `#[serde(flatten)]`: flattening buffers
//! values in serde's private content form, which cannot hold serde_json's
//! `arbitrary_precision` numbers, and Cargo may unify that feature into this crate.

use serde::ser::SerializeMap;
use serde_json::{Map, Number, Value};

/// One step of the path to a bad member.
#[derive(Debug, Clone)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// What is wrong with a member.
#[derive(Debug, Clone)]
pub(crate) enum Problem {
    Missing,
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
}

/// A bad member: its path (innermost step first, filled in while unwinding) and the problem.
#[derive(Debug, Clone)]
pub(crate) struct FieldError {
    pub(crate) path: Vec<Seg>,
    pub(crate) problem: Problem,
}

impl FieldError {
    pub(crate) fn wrong(expected: &'static str, value: &Value) -> Self {
        FieldError {
            path: Vec::new(),
            problem: Problem::WrongType {
                expected,
                found: kind_of(value),
            },
        }
    }

    fn missing(key: &str) -> Self {
        FieldError {
            path: vec![Seg::Key(key.to_owned())],
            problem: Problem::Missing,
        }
    }

    pub(crate) fn in_key(mut self, key: &str) -> Self {
        self.path.push(Seg::Key(key.to_owned()));
        self
    }

    fn in_index(mut self, index: usize) -> Self {
        self.path.push(Seg::Index(index));
        self
    }

    /// The path as written in messages: `item.content[0].text`.
    pub(crate) fn path_string(&self) -> String {
        let mut out = String::new();
        for seg in self.path.iter().rev() {
            match seg {
                Seg::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// This error as the crate's error, for an event of `event_type`.
    pub(crate) fn into_error(self, event_type: &str) -> crate::Error {
        let field = self.path_string();
        let event_type = event_type.to_owned();
        crate::Error::new(match self.problem {
            Problem::Missing => crate::ErrorKind::MissingField { event_type, field },
            Problem::WrongType { expected, found } => crate::ErrorKind::InvalidField {
                event_type,
                field,
                expected,
                found,
            },
        })
    }
}

/// `a string`, `a number`, ... for messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A member type: how to read it from a JSON value.
pub(crate) trait FromJson: Sized {
    fn from_json(value: Value) -> Result<Self, FieldError>;
}

impl FromJson for String {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(FieldError::wrong("a string", &other)),
        }
    }
}

impl FromJson for u64 {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        value
            .as_u64()
            .ok_or_else(|| FieldError::wrong("a non-negative integer", &value))
    }
}

impl FromJson for bool {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(FieldError::wrong("a boolean", &other)),
        }
    }
}

impl FromJson for Number {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Number(n) => Ok(n),
            other => Err(FieldError::wrong("a number", &other)),
        }
    }
}

impl FromJson for Value {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        Ok(value)
    }
}

impl FromJson for Map<String, Value> {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(FieldError::wrong("an object", &other)),
        }
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| T::from_json(item).map_err(|e| e.in_index(i)))
                .collect(),
            other => Err(FieldError::wrong("an array", &other)),
        }
    }
}

/// Removes a member, keeping the order of the others whether or not serde_json's
/// `preserve_order` is enabled (its `remove` would then move the last member into the gap).
pub(crate) fn remove(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if !map.contains_key(key) {
        return None;
    }
    let mut taken = None;
    map.retain(|k, v| {
        if k == key {
            taken = Some(std::mem::take(v));
            false
        } else {
            true
        }
    });
    taken
}

/// Removes and converts a required member.
pub(crate) fn take_required<T: FromJson>(
    map: &mut Map<String, Value>,
    key: &str,
) -> Result<T, FieldError> {
    match remove(map, key) {
        None => Err(FieldError::missing(key)),
        Some(value) => T::from_json(value).map_err(|e| e.in_key(key)),
    }
}

/// Removes and converts an optional member. An explicit `null` stays in the map, so that it is
/// written back as read.
pub(crate) fn take_optional<T: FromJson>(
    map: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<T>, FieldError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => {
            let value = remove(map, key).unwrap_or(Value::Null);
            T::from_json(value).map(Some).map_err(|e| e.in_key(key))
        }
    }
}

/// Writes the members of `extra`, skipping those that a typed member already wrote.
pub(crate) fn write_extra<M: SerializeMap>(
    map: &mut M,
    extra: &Map<String, Value>,
    written: &[(&str, bool)],
) -> Result<(), M::Error> {
    for (key, value) in extra {
        if written.iter().any(|(k, present)| *present && k == key) {
            continue;
        }
        map.serialize_entry(key, value)?;
    }
    Ok(())
}

/// Declares a JSON object type: public typed members plus `extra`, the members it does not
/// model. Members are `req` (must be present) or `opt` (may be absent or null); they are
/// written in declaration order, followed by `extra`.
macro_rules! wire_object {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $mode:ident $ty:ty,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: wire_object!(@ty $mode $ty),
            )*
            /// The members this type does not model, kept as read and written after the others.
            /// An explicit `null` for an optional member is kept here too.
            pub extra: serde_json::Map<String, serde_json::Value>,
        }

        impl $name {
            #[allow(unused_mut)]
            pub(crate) fn from_map(
                mut map: serde_json::Map<String, serde_json::Value>,
            ) -> Result<Self, $crate::wire::FieldError> {
                $(
                    let $field = wire_object!(@take $mode $ty, map, stringify!($field))?;
                )*
                Ok($name { $($field,)* extra: map })
            }

            pub(crate) fn write_fields<M: serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> Result<(), M::Error> {
                $(
                    wire_object!(@write $mode, map, stringify!($field), &self.$field);
                )*
                $crate::wire::write_extra(
                    map,
                    &self.extra,
                    &[$((stringify!($field), wire_object!(@present $mode &self.$field)),)*],
                )
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                self.write_fields(&mut map)?;
                map.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let map = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
                $name::from_map(map).map_err(|e| {
                    serde::de::Error::custom($crate::wire::describe(&e))
                })
            }
        }

        impl $crate::wire::FromJson for $name {
            fn from_json(value: serde_json::Value) -> Result<Self, $crate::wire::FieldError> {
                match value {
                    serde_json::Value::Object(map) => $name::from_map(map),
                    other => Err($crate::wire::FieldError::wrong("an object", &other)),
                }
            }
        }
    };
    (@ty req $ty:ty) => { $ty };
    (@ty opt $ty:ty) => { Option<$ty> };
    (@take req $ty:ty, $map:ident, $key:expr) => {
        $crate::wire::take_required::<$ty>(&mut $map, $key)
    };
    (@take opt $ty:ty, $map:ident, $key:expr) => {
        $crate::wire::take_optional::<$ty>(&mut $map, $key)
    };
    (@write req, $map:ident, $key:expr, $value:expr) => {
        $map.serialize_entry($key, $value)?;
    };
    (@write opt, $map:ident, $key:expr, $value:expr) => {
        if let Some(value) = $value {
            $map.serialize_entry($key, value)?;
        }
    };
    (@present req $value:expr) => { true };
    (@present opt $value:expr) => { $value.is_some() };
}

pub(crate) use wire_object;

/// A field error as a one-line message (for serde's `Deserialize` impls).
pub(crate) fn describe(error: &FieldError) -> String {
    let path = error.path_string();
    match &error.problem {
        Problem::Missing => format!("missing field `{path}`"),
        Problem::WrongType { expected, found } => {
            format!("field `{path}` must be {expected}, found {found}")
        }
    }
}
