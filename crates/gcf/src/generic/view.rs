//! The one read-only view the planner and the writer read a value through: a [`Node`] is a
//! scalar, an array or an object, with its elements or members. A `serde_json::Value` is a
//! view of itself (read in place); any other `Serialize` value is first flattened into a
//! [`Tape`](super::tape::Tape), whose nodes are the same view. Everything that decides or
//! writes bytes is generic over [`Node`], so both inputs take the same code.

use serde_json::{Map, Number, Value};

/// A scalar, as the writer writes it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar<'v> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    F32(f32),
    /// A JSON number lexeme (serde_json's arbitrary precision through serde, 128-bit
    /// integers), validated.
    Lexeme(&'v str),
    /// A serde_json number read in place when serde_json has `arbitrary_precision` (its
    /// lexeme is written from its `Display`).
    Json(&'v Number),
    Str(&'v str),
}

/// [`Node::kind_bit`] of `null`.
pub(crate) const NULL: u8 = 1;
/// [`Node::kind_bit`] of a scalar other than `null`.
pub(crate) const SCALAR: u8 = 2;
/// [`Node::kind_bit`] of an object.
pub(crate) const OBJECT: u8 = 4;
/// [`Node::kind_bit`] of an array.
pub(crate) const ARRAY: u8 = 8;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Scalar,
    Array,
    Object,
}

/// A node of a value: its kind, its scalar, its elements or its members.
pub(crate) trait Node<'v>: Copy + 'v {
    /// The elements of an array, in order.
    type Elements: Iterator<Item = Self> + Clone;
    /// The members of an object, in order.
    type Members: Iterator<Item = (&'v str, Self)> + Clone;

    fn kind(self) -> Kind;
    /// The scalar, if the node is one.
    fn scalar(self) -> Option<Scalar<'v>>;
    fn is_null(self) -> bool;
    /// The elements of an array or members of an object (0 for scalars).
    fn len(self) -> usize;
    /// The elements (none unless an array).
    fn elements(self) -> Self::Elements;
    /// The members (none unless an object).
    fn members(self) -> Self::Members;
    /// The member named `key` of an object.
    fn get(self, key: &str) -> Option<Self>;
    /// An identity, unique among the nodes of one value for as long as it is borrowed.
    fn id(self) -> usize;

    /// The node's kind as one bit: [`NULL`], [`SCALAR`] (any other scalar), [`OBJECT`],
    /// [`ARRAY`].
    #[inline]
    fn kind_bit(self) -> u8 {
        match self.kind() {
            Kind::Object => OBJECT,
            Kind::Array => ARRAY,
            Kind::Scalar if self.is_null() => NULL,
            Kind::Scalar => SCALAR,
        }
    }

    #[inline]
    fn is_object(self) -> bool {
        self.kind() == Kind::Object
    }

    #[inline]
    fn is_array(self) -> bool {
        self.kind() == Kind::Array
    }

    #[inline]
    fn is_scalar(self) -> bool {
        self.kind() == Kind::Scalar
    }
}

/// The members of a `serde_json::Map` as `(&str, &Value)`.
#[derive(Debug, Clone)]
pub(crate) struct ValueMembers<'v>(Option<serde_json::map::Iter<'v>>);

impl<'v> Iterator for ValueMembers<'v> {
    type Item = (&'v str, &'v Value);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0
            .as_mut()?
            .next()
            .map(|(key, value)| (key.as_str(), value))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.as_ref().map_or((0, Some(0)), Iterator::size_hint)
    }
}

impl<'v> ValueMembers<'v> {
    fn of(map: &'v Map<String, Value>) -> Self {
        ValueMembers(Some(map.iter()))
    }
}

#[inline]
fn number(n: &Number) -> Scalar<'_> {
    if super::arbitrary_precision() {
        Scalar::Json(n)
    } else if let Some(v) = n.as_u64() {
        Scalar::U64(v)
    } else if let Some(v) = n.as_i64() {
        Scalar::I64(v)
    } else {
        Scalar::F64(n.as_f64().unwrap_or(f64::NAN))
    }
}

impl<'v> Node<'v> for &'v Value {
    type Elements = std::slice::Iter<'v, Value>;
    type Members = ValueMembers<'v>;

    #[inline(always)]
    fn kind(self) -> Kind {
        match self {
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
            _ => Kind::Scalar,
        }
    }

    #[inline(always)]
    fn scalar(self) -> Option<Scalar<'v>> {
        Some(match self {
            Value::String(s) => Scalar::Str(s),
            Value::Number(n) => number(n),
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Null => Scalar::Null,
            Value::Array(_) | Value::Object(_) => return None,
        })
    }

    #[inline(always)]
    fn is_null(self) -> bool {
        self.is_null()
    }

    #[inline(always)]
    fn kind_bit(self) -> u8 {
        match self {
            Value::Null => NULL,
            Value::Bool(_) | Value::Number(_) | Value::String(_) => SCALAR,
            Value::Object(_) => OBJECT,
            Value::Array(_) => ARRAY,
        }
    }

    #[inline]
    fn len(self) -> usize {
        match self {
            Value::Array(items) => items.len(),
            Value::Object(members) => members.len(),
            _ => 0,
        }
    }

    #[inline]
    fn elements(self) -> Self::Elements {
        match self {
            Value::Array(items) => items.iter(),
            _ => [].iter(),
        }
    }

    #[inline]
    fn members(self) -> Self::Members {
        match self {
            Value::Object(members) => ValueMembers::of(members),
            _ => ValueMembers(None),
        }
    }

    #[inline]
    fn get(self, key: &str) -> Option<Self> {
        match self {
            Value::Object(members) => members.get(key),
            _ => None,
        }
    }

    #[inline]
    fn id(self) -> usize {
        std::ptr::from_ref(self) as usize
    }
}
