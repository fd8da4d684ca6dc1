//! A `Serialize` value flattened into a tape: one 16-byte token per scalar, key and container,
//! with every string copied once into a single text arena. The buffered encoder needs to look
//! ahead (tabular field unions, inline and shared schemas span all rows) and serde offers a
//! value only once, for the duration of a call; the tape is the cheapest form that can be
//! revisited — two allocations for the whole value instead of one per node, and no
//! `serde_json::Value` in between.
//!
//! Two serde_json conventions are recognised: with its `arbitrary_precision` feature a
//! `Number` serializes as the struct `$serde_json::private::Number` holding the lexeme, which
//! becomes a number token with every digit kept; and a `RawValue` (feature `raw_value`)
//! serializes as `$serde_json::private::RawValue` holding JSON text, which is parsed and
//! stored as the value it denotes.

use serde::ser::{self, Serialize};

use super::key::{text_of, KeyText};
use super::view::{Kind, Node, Scalar};

use crate::error::{Error, ErrorKind, Limit, Result};
use crate::number;

/// serde_json's name for an arbitrary-precision number.
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";
/// serde_json's name for a raw JSON value.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A span of the text arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    len: u32,
}

/// One token. Containers know how many children they have and where their subtree ends;
/// an object's children alternate key (`Str` or `Ref`) and value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tok {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    F32(f32),
    /// A JSON number lexeme in the arena, validated.
    Num(Span),
    Str(Span),
    /// A string borrowed from the value (a struct field or variant name, or a string of a
    /// `serde_json::Value` flattened directly), by index into the tape's references.
    Ref(u32),
    Array {
        len: u32,
        end: u32,
    },
    Object {
        len: u32,
        end: u32,
    },
}

/// The flattened value; `'s` is the lifetime of the strings it borrows instead of copying.
#[derive(Debug, Default)]
pub(crate) struct Tape<'s> {
    pub(crate) toks: Vec<Tok>,
    text: String,
    refs: Vec<&'s str>,
}

/// Tapes larger than this are freed after use rather than kept for the next call.
const KEEP_BYTES: usize = 8 << 20;

thread_local! {
    /// Tapes kept for reuse, so that encoding many values on one thread does not allocate
    /// (and fault in) a fresh tape each time. A stack, for values whose `Serialize` encodes
    /// other values.
    static POOL: std::cell::RefCell<Vec<Tape<'static>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with a cleared tape from this thread's pool, returning the tape afterwards. The
/// tape may borrow strings for `'s` (the pool keeps only its allocations).
pub(crate) fn with_tape<'s, R>(f: impl FnOnce(&mut Tape<'s>) -> R) -> R {
    let pooled = POOL
        .try_with(|pool| pool.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut tape = Tape {
        toks: pooled.toks,
        text: pooled.text,
        refs: relabel(pooled.refs),
    };
    let result = f(&mut tape);
    let bytes = tape.toks.capacity() * size_of::<Tok>()
        + tape.text.capacity()
        + tape.refs.capacity() * size_of::<&str>();
    if bytes <= KEEP_BYTES {
        tape.clear();
        let tape = Tape {
            toks: tape.toks,
            text: tape.text,
            refs: relabel(tape.refs),
        };
        let _ = POOL.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < 4 {
                pool.push(tape);
            }
        });
    }
    result
}

/// An empty vector of references with another lifetime, keeping the allocation where the
/// standard library reuses it in place (it does for a map over `vec::IntoIter` of same-layout
/// items); otherwise a new, empty vector. The vector is cleared first, so no reference
/// changes lifetime.
fn relabel<'b>(mut refs: Vec<&str>) -> Vec<&'b str> {
    refs.clear();
    refs.into_iter().map(|_| "").collect()
}

impl Tape<'static> {
    /// Flattens `value`, nesting at most `max_depth` containers.
    pub(crate) fn build<T: ?Sized + Serialize>(
        &mut self,
        value: &T,
        max_depth: usize,
    ) -> Result<()> {
        self.clear();
        value.serialize(&mut Builder {
            tape: self,
            depth: 0,
            max_depth,
        })
    }
}

impl<'s> Tape<'s> {
    /// A guess at the encoded size: the strings plus a few bytes per token.
    pub(crate) fn size_hint(&self) -> usize {
        self.text.len() + self.toks.len() * 8
    }

    /// Clears the tape for reuse, keeping its allocations.
    pub(crate) fn clear(&mut self) {
        self.toks.clear();
        self.text.clear();
        self.refs.clear();
    }

    /// Flattens a `serde_json::Value` directly, borrowing its strings: the fast path of
    /// `to_string_value`, with the same tokens the serde path gives.
    pub(crate) fn build_value(
        &mut self,
        value: &'s serde_json::Value,
        max_depth: usize,
    ) -> Result<()> {
        self.clear();
        self.value(value, 0, max_depth)
    }

    fn value(
        &mut self,
        value: &'s serde_json::Value,
        depth: usize,
        max_depth: usize,
    ) -> Result<()> {
        use serde_json::Value;
        match value {
            Value::Null => self.toks.push(Tok::Null),
            Value::Bool(b) => self.toks.push(Tok::Bool(*b)),
            Value::Number(n) => {
                if crate::generic::arbitrary_precision() {
                    // The lexeme, every digit of it and the sign of `-0` (`Display` writes
                    // it), as the serde path has it.
                    use std::fmt::Write as _;
                    let start = self.text.len();
                    let _ = write!(self.text, "{n}");
                    let span = self.span_from(start)?;
                    self.toks.push(Tok::Num(span));
                } else if let Some(v) = n.as_u64() {
                    self.toks.push(Tok::U64(v));
                } else if let Some(v) = n.as_i64() {
                    self.toks.push(Tok::I64(v));
                } else {
                    self.toks.push(Tok::F64(n.as_f64().unwrap_or(f64::NAN)));
                }
            }
            Value::String(s) => self.push_ref(s)?,
            Value::Array(items) => {
                let at = self.open(false, depth, max_depth)?;
                for item in items {
                    self.value(item, depth + 1, max_depth)?;
                }
                self.close(at, items.len())?;
            }
            Value::Object(members) => {
                let at = self.open(true, depth, max_depth)?;
                for (key, item) in members {
                    self.push_ref(key)?;
                    self.value(item, depth + 1, max_depth)?;
                }
                self.close(at, members.len())?;
            }
        }
        Ok(())
    }

    fn open(&mut self, object: bool, depth: usize, max_depth: usize) -> Result<usize> {
        if depth >= max_depth {
            return Err(too_deep(max_depth));
        }
        let at = self.toks.len();
        self.toks.push(if object {
            Tok::Object { len: 0, end: 0 }
        } else {
            Tok::Array { len: 0, end: 0 }
        });
        Ok(at)
    }

    fn close(&mut self, at: usize, children: usize) -> Result<()> {
        let end = u32::try_from(self.toks.len()).map_err(|_| too_big())?;
        let len = u32::try_from(children).map_err(|_| too_big())?;
        self.toks[at] = match self.toks[at] {
            Tok::Object { .. } => Tok::Object { len, end },
            _ => Tok::Array { len, end },
        };
        Ok(())
    }

    fn push_ref(&mut self, s: &'s str) -> Result<()> {
        let index = u32::try_from(self.refs.len()).map_err(|_| too_big())?;
        self.refs.push(s);
        self.toks.push(Tok::Ref(index));
        Ok(())
    }

    fn span_from(&self, start: usize) -> Result<Span> {
        let start32 = u32::try_from(start).map_err(|_| too_big())?;
        let len32 = u32::try_from(self.text.len() - start).map_err(|_| too_big())?;
        Ok(Span {
            start: start32,
            len: len32,
        })
    }

    /// The index just past the subtree at `i`.
    #[inline]
    pub(crate) fn next(&self, i: usize) -> usize {
        match self.toks[i] {
            Tok::Array { end, .. } | Tok::Object { end, .. } => end as usize,
            _ => i + 1,
        }
    }

    /// The text of a span.
    #[inline]
    pub(crate) fn span(&self, span: Span) -> &str {
        &self.text[span.start as usize..(span.start + span.len) as usize]
    }

    /// The string of a `Str` or `Ref` token (an object key).
    #[inline]
    pub(crate) fn key(&self, i: usize) -> &str {
        match self.toks[i] {
            Tok::Str(span) => self.span(span),
            Tok::Ref(index) => self.refs[index as usize],
            _ => "",
        }
    }

    /// The borrowed string of a `Ref` token.
    #[inline]
    pub(crate) fn reference(&self, index: u32) -> &str {
        self.refs[index as usize]
    }

    /// The elements of the array at `i`.
    pub(crate) fn elements(&'s self, i: usize) -> Elements<'s> {
        let end = match self.toks[i] {
            Tok::Array { end, .. } => end as usize,
            _ => i + 1,
        };
        Elements {
            tape: self,
            at: i + 1,
            end,
        }
    }

    /// The members (key, value node) of the object at `i`.
    pub(crate) fn members(&'s self, i: usize) -> Members<'s> {
        let end = match self.toks[i] {
            Tok::Object { end, .. } => end as usize,
            _ => i + 1,
        };
        Members {
            tape: self,
            at: i + 1,
            end,
        }
    }

    /// The number of children of the container at `i` (0 for scalars).
    pub(crate) fn len(&self, i: usize) -> usize {
        match self.toks[i] {
            Tok::Array { len, .. } | Tok::Object { len, .. } => len as usize,
            _ => 0,
        }
    }

    fn push_text(&mut self, s: &str) -> Result<Span> {
        let start = self.text.len();
        let start32 = u32::try_from(start).map_err(|_| too_big())?;
        let len32 = u32::try_from(s.len()).map_err(|_| too_big())?;
        start32.checked_add(len32).ok_or_else(too_big)?;
        self.text.push_str(s);
        Ok(Span {
            start: start32,
            len: len32,
        })
    }

    fn push_str(&mut self, s: &str) -> Result<()> {
        let span = self.push_text(s)?;
        self.toks.push(Tok::Str(span));
        Ok(())
    }
}

impl Tape<'static> {
    fn push_static(&mut self, s: &'static str) -> Result<()> {
        self.push_ref(s)
    }
}

/// A node of a tape: the view the planner and the writer read (see [`super::view`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TapeNode<'t> {
    tape: &'t Tape<'t>,
    at: usize,
}

impl<'t> Tape<'t> {
    /// The root node (the tape must hold a value).
    pub(crate) fn root(&'t self) -> TapeNode<'t> {
        TapeNode { tape: self, at: 0 }
    }
}

impl<'t> Node<'t> for TapeNode<'t> {
    type Elements = Elements<'t>;
    type Members = Members<'t>;

    #[inline]
    fn kind(self) -> Kind {
        match self.tape.toks[self.at] {
            Tok::Array { .. } => Kind::Array,
            Tok::Object { .. } => Kind::Object,
            _ => Kind::Scalar,
        }
    }

    #[inline]
    fn scalar(self) -> Option<Scalar<'t>> {
        let tape = self.tape;
        Some(match tape.toks[self.at] {
            Tok::Null => Scalar::Null,
            Tok::Bool(b) => Scalar::Bool(b),
            Tok::U64(v) => Scalar::U64(v),
            Tok::I64(v) => Scalar::I64(v),
            Tok::F64(v) => Scalar::F64(v),
            Tok::F32(v) => Scalar::F32(v),
            Tok::Num(span) => Scalar::Lexeme(tape.span(span)),
            Tok::Str(span) => Scalar::Str(tape.span(span)),
            Tok::Ref(index) => Scalar::Str(tape.reference(index)),
            Tok::Array { .. } | Tok::Object { .. } => return None,
        })
    }

    #[inline]
    fn is_null(self) -> bool {
        matches!(self.tape.toks[self.at], Tok::Null)
    }

    #[inline]
    fn len(self) -> usize {
        self.tape.len(self.at)
    }

    #[inline]
    fn elements(self) -> Elements<'t> {
        self.tape.elements(self.at)
    }

    #[inline]
    fn members(self) -> Members<'t> {
        self.tape.members(self.at)
    }

    fn get(self, key: &str) -> Option<Self> {
        self.members().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    #[inline]
    fn id(self) -> usize {
        self.at
    }
}

#[cold]
fn too_big() -> Error {
    Error::new(
        ErrorKind::UnsupportedValue,
        "the value exceeds the encoder's 4 GiB / 4 G-node limit",
    )
}

#[cold]
fn too_deep(max_depth: usize) -> Error {
    Error::new(
        ErrorKind::LimitExceeded(Limit::Depth),
        format!("the value nests deeper than {max_depth} levels (EncoderOptions::max_depth)"),
    )
}

/// The iterator of [`Tape::elements`]: their nodes.
#[derive(Debug, Clone)]
pub(crate) struct Elements<'t> {
    tape: &'t Tape<'t>,
    at: usize,
    end: usize,
}

impl<'t> Iterator for Elements<'t> {
    type Item = TapeNode<'t>;

    #[inline]
    fn next(&mut self) -> Option<TapeNode<'t>> {
        if self.at >= self.end {
            return None;
        }
        let i = self.at;
        self.at = self.tape.next(i);
        Some(TapeNode {
            tape: self.tape,
            at: i,
        })
    }
}

/// The iterator of [`Tape::members`]: (key, value node).
#[derive(Debug, Clone)]
pub(crate) struct Members<'t> {
    tape: &'t Tape<'t>,
    at: usize,
    end: usize,
}

impl<'t> Iterator for Members<'t> {
    type Item = (&'t str, TapeNode<'t>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let key = self.at;
        let value = key + 1;
        self.at = self.tape.next(value);
        Some((
            self.tape.key(key),
            TapeNode {
                tape: self.tape,
                at: value,
            },
        ))
    }
}

pub(super) struct Builder<'t> {
    tape: &'t mut Tape<'static>,
    depth: usize,
    max_depth: usize,
}

impl Builder<'_> {
    fn open(&mut self, object: bool) -> Result<usize> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(too_deep(self.max_depth));
        }
        let at = self.tape.toks.len();
        self.tape.toks.push(if object {
            Tok::Object { len: 0, end: 0 }
        } else {
            Tok::Array { len: 0, end: 0 }
        });
        Ok(at)
    }

    fn close(&mut self, at: usize, children: usize) -> Result<()> {
        self.depth -= 1;
        let end = u32::try_from(self.tape.toks.len())
            .map_err(|_| Error::new(ErrorKind::UnsupportedValue, "the value has too many nodes"))?;
        let len = children as u32;
        self.tape.toks[at] = match self.tape.toks[at] {
            Tok::Object { .. } => Tok::Object { len, end },
            _ => Tok::Array { len, end },
        };
        if children > 1 && matches!(self.tape.toks[at], Tok::Object { .. }) {
            check_unique(self.tape, at)?;
        }
        Ok(())
    }
}

/// A container being built: its token index and child count.
pub(super) struct Compound<'b, 't> {
    b: &'b mut Builder<'t>,
    at: usize,
    children: usize,
    /// For a variant wrapper: close the outer object too.
    variant: Option<usize>,
}

impl Compound<'_, '_> {
    fn end_compound(self) -> Result<()> {
        self.b.close(self.at, self.children)?;
        if let Some(outer) = self.variant {
            self.b.close(outer, 1)?;
        }
        Ok(())
    }
}

impl<'b, 't> ser::Serializer for &'b mut Builder<'t> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'b, 't>;
    type SerializeTuple = Compound<'b, 't>;
    type SerializeTupleStruct = Compound<'b, 't>;
    type SerializeTupleVariant = Compound<'b, 't>;
    type SerializeMap = Compound<'b, 't>;
    type SerializeStruct = StructState<'b, 't>;
    type SerializeStructVariant = Compound<'b, 't>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.tape.toks.push(Tok::Bool(v));
        Ok(())
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
        self.tape.toks.push(Tok::I64(v));
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        if let Ok(v) = i64::try_from(v) {
            return self.serialize_i64(v);
        }
        let mut buf = itoa::Buffer::new();
        let span = self.tape.push_text(buf.format(v))?;
        self.tape.toks.push(Tok::Num(span));
        Ok(())
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
        self.tape.toks.push(Tok::U64(v));
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        if let Ok(v) = u64::try_from(v) {
            return self.serialize_u64(v);
        }
        let mut buf = itoa::Buffer::new();
        let span = self.tape.push_text(buf.format(v))?;
        self.tape.toks.push(Tok::Num(span));
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return Err(non_finite(f64::from(v)));
        }
        self.tape.toks.push(Tok::F32(v));
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(non_finite(v));
        }
        self.tape.toks.push(Tok::F64(v));
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.tape.push_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        self.tape.push_str(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        // As serde_json: an array of numbers.
        let at = self.open(false)?;
        self.tape
            .toks
            .extend(v.iter().map(|&b| Tok::U64(u64::from(b))));
        self.close(at, v.len())
    }

    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.tape.toks.push(Tok::Null);
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.tape.push_static(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        // As serde_json: {"Variant": value}.
        let at = self.open(true)?;
        self.tape.push_static(variant)?;
        value.serialize(&mut *self)?;
        self.close(at, 1)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'b, 't>> {
        let at = self.open(false)?;
        Ok(Compound {
            b: self,
            at,
            children: 0,
            variant: None,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'b, 't>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'b, 't>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'b, 't>> {
        let outer = self.open(true)?;
        self.tape.push_static(variant)?;
        let at = self.open(false)?;
        Ok(Compound {
            b: self,
            at,
            children: 0,
            variant: Some(outer),
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'b, 't>> {
        let at = self.open(true)?;
        Ok(Compound {
            b: self,
            at,
            children: 0,
            variant: None,
        })
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<StructState<'b, 't>> {
        if name == NUMBER_TOKEN {
            return Ok(StructState::Number(self));
        }
        if name == RAW_VALUE_TOKEN {
            return Ok(StructState::Raw(self));
        }
        let at = self.open(true)?;
        Ok(StructState::Object(Compound {
            b: self,
            at,
            children: 0,
            variant: None,
        }))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'b, 't>> {
        let outer = self.open(true)?;
        self.tape.push_static(variant)?;
        let at = self.open(true)?;
        Ok(Compound {
            b: self,
            at,
            children: 0,
            variant: Some(outer),
        })
    }

    fn collect_str<T: ?Sized + std::fmt::Display>(self, value: &T) -> Result<()> {
        self.serialize_str(&value.to_string())
    }
}

/// Rejects an object with a repeated key (spec §2a.2: encoders must not emit one). A
/// `serde_json::Map` cannot repeat a key, so only values built through serde are checked.
fn check_unique(tape: &Tape<'_>, obj: usize) -> Result<()> {
    let n = tape.len(obj);
    let duplicate = if n <= 16 {
        // Small objects: pairwise, without allocating.
        let mut keys: [&str; 16] = [""; 16];
        let mut found = None;
        for (i, (key, _)) in tape.members(obj).enumerate() {
            if keys[..i]
                .iter()
                .any(|seen| super::encode::key_eq(seen, key))
            {
                found = Some(key);
                break;
            }
            keys[i] = key;
        }
        found
    } else {
        let mut seen = std::collections::HashSet::with_capacity(n);
        tape.members(obj)
            .map(|(key, _)| key)
            .find(|key| !seen.insert(*key))
    };
    match duplicate {
        Some(key) => Err(Error::new(
            ErrorKind::DuplicateKey,
            format!("key {key:?} appears twice in one object"),
        )),
        None => Ok(()),
    }
}

#[cold]
fn non_finite(value: f64) -> Error {
    Error::new(
        ErrorKind::InvalidNumber,
        format!("{value} is not a JSON number (GCF has no NaN or infinities)"),
    )
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.children += 1;
        value.serialize(&mut *self.b)
    }

    fn end(self) -> Result<()> {
        self.end_compound()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        self.end_compound()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        self.end_compound()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        self.end_compound()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.children += 1;
        let tape = &mut *self.b.tape;
        key.serialize(KeyText {
            take: |text: &str| tape.push_str(text),
        })
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.b)
    }

    fn end(self) -> Result<()> {
        self.end_compound()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.children += 1;
        self.b.tape.push_static(key)?;
        value.serialize(&mut *self.b)
    }

    fn end(self) -> Result<()> {
        self.end_compound()
    }
}

/// A struct being serialized: an ordinary object, or one of serde_json's private structs.
pub(super) enum StructState<'b, 't> {
    Object(Compound<'b, 't>),
    Number(&'b mut Builder<'t>),
    Raw(&'b mut Builder<'t>),
}

impl ser::SerializeStruct for StructState<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        match self {
            StructState::Object(c) => {
                c.children += 1;
                c.b.tape.push_static(key)?;
                value.serialize(&mut *c.b)
            }
            StructState::Number(b) => {
                let lexeme = text_of(value).ok_or_else(not_a_string)?;
                if !number::is_json_number(&lexeme) {
                    return Err(Error::new(
                        ErrorKind::InvalidNumber,
                        format!("{lexeme:?} is not a JSON number"),
                    ));
                }
                let span = b.tape.push_text(&lexeme)?;
                b.tape.toks.push(Tok::Num(span));
                Ok(())
            }
            StructState::Raw(b) => {
                let json = text_of(value).ok_or_else(not_a_string)?;
                let parsed: serde_json::Value = serde_json::from_str(&json).map_err(|e| {
                    Error::new(ErrorKind::Custom, format!("invalid raw JSON value: {e}"))
                })?;
                parsed.serialize(&mut **b)
            }
        }
    }

    fn skip_field(&mut self, _key: &'static str) -> Result<()> {
        Ok(())
    }

    fn end(self) -> Result<()> {
        match self {
            StructState::Object(c) => c.end_compound(),
            StructState::Number(_) | StructState::Raw(_) => Ok(()),
        }
    }
}

#[cold]
fn not_a_string() -> Error {
    Error::new(
        ErrorKind::UnsupportedValue,
        "serde_json's private number or raw-value struct must hold a string",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flattens_values_with_subtree_ends() {
        let mut tape = Tape::default();
        tape.build(&json!({"a": [1, "x", null], "b": {"c": true}}), 128)
            .unwrap();
        assert_eq!(tape.len(0), 2);
        let members: Vec<_> = tape.members(0).map(|(k, v)| (k.to_owned(), v)).collect();
        assert_eq!(members[0].0, "a");
        assert_eq!(members[1].0, "b");
        let elements: Vec<_> = members[0].1.elements().collect();
        assert_eq!(elements.len(), 3);
        // With serde_json's arbitrary_precision, a Number arrives as its lexeme.
        assert!(matches!(
            elements[0].scalar(),
            Some(Scalar::U64(1) | Scalar::Lexeme(_))
        ));
        assert!(elements[2].is_null());
        assert_eq!(tape.next(0), tape.toks.len());
    }

    #[test]
    fn depth_is_limited_without_recursing_further() {
        let mut v = json!(1);
        for _ in 0..200 {
            v = json!([v]);
        }
        let mut tape = Tape::default();
        let err = tape.build(&v, 128).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded(Limit::Depth));
        assert!(tape.build(&v, 300).is_ok());
    }

    #[test]
    fn non_finite_and_bad_keys_are_rejected() {
        let mut tape = Tape::default();
        assert_eq!(
            tape.build(&f64::NAN, 8).unwrap_err().kind(),
            ErrorKind::InvalidNumber
        );
        let mut map = std::collections::BTreeMap::new();
        map.insert(vec![1u8], 1);
        assert_eq!(
            tape.build(&map, 8).unwrap_err().kind(),
            ErrorKind::InvalidKey
        );
        let mut map = std::collections::BTreeMap::new();
        map.insert(7u32, 1);
        tape.build(&map, 8).unwrap();
        assert_eq!(tape.key(1), "7");
    }
}
