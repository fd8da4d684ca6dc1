//! The generic profile (spec §7): any serde value to and from GCF.
//!
//! Encoding (see `encode.rs` for the data flow): a `serde_json::Value` is read in place, any
//! other `Serialize` value through a tape; both are one view (`view.rs`) for the planner
//! (`plan.rs`, `fewest.rs`, `group.rs`), and the writer (`encode.rs`) writes what it decided.

mod build;
mod de;
mod encode;
mod fewest;
mod group;
mod key;
mod out;
mod owned;
mod plan;
mod shape;
mod stream;
pub(crate) mod tape;
mod units;
mod view;

use std::io;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Limit, Result};
use crate::options::{DecoderOptions, EncoderOptions};

pub use stream::{GenericStreamEncoder, KeyedTableWriter, ListWriter, TableWriter};

pub(crate) use de::check_header;
#[cfg(feature = "generic-delta")]
pub(crate) use de::scalar_value;
pub(crate) use de::zero_keyed_count;

/// Whether serde_json is built with `arbitrary_precision` (Cargo may unify the feature in from
/// anywhere in the build): then a `Number` serializes as its private struct.
#[inline]
pub(crate) fn arbitrary_precision() -> bool {
    static AP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if let Some(&ap) = AP.get() {
        return ap;
    }
    *AP.get_or_init(|| {
        let mut tape = tape::Tape::default();
        tape.build(&serde_json::Number::from(1u8), 4).is_ok()
            && matches!(tape.toks.first(), Some(tape::Tok::Num(_)))
    })
}

/// Whether serde_json is built with `raw_value`: then its `Value` visitor reads a map whose
/// first key is its private raw-value token as a raw JSON value.
fn raw_value() -> bool {
    static RAW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RAW.get_or_init(|| {
        serde_json::from_str::<serde_json::Value>(r#"{"$serde_json::private::RawValue":"1"}"#)
            .is_ok_and(|v| v.is_number())
    })
}

/// Whether `input` may hold a key serde_json's `Value` visitor reads specially (its private
/// number and raw-value tokens, with `arbitrary_precision` or `raw_value` on): such input is
/// decoded through that visitor, so that the value is exactly serde_json's.
fn private_keys(input: &str) -> bool {
    (arbitrary_precision() || raw_value())
        && memchr::memmem::find(input.as_bytes(), b"$serde_json::private::").is_some()
}

/// The header line every generic payload starts with.
pub(crate) const HEADER: &str = "GCF profile=generic\n";

/// Encodes `value` as a generic-profile GCF payload with the default [`EncoderOptions`].
///
/// Object members keep the order the value yields them (a struct's field order, a map's
/// iteration order). Integers of any `i64`/`u64`/`i128`/`u128` value are written exactly,
/// floats with their shortest round-trip digits; NaN and infinities are an error
/// (`invalid_number`). A `serde_json::Value` (or a reference to one) is read in place, without
/// serde in between.
///
/// ```
/// use serde::Serialize;
///
/// #[derive(Serialize)]
/// struct Employee<'a> {
///     id: u32,
///     name: &'a str,
///     tags: Vec<&'a str>,
/// }
///
/// let staff = [
///     Employee { id: 1, name: "Alice", tags: vec!["admin"] },
///     Employee { id: 2, name: "Bob", tags: vec![] },
/// ];
/// assert_eq!(
///     agentwire_gcf::to_string(&staff)?,
///     "GCF profile=generic\n## [2]{id,name,tags}\n@0 1|Alice|^\n.tags [1]: admin\n@1 2|Bob|^\n.tags [0]\n"
/// );
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> Result<String> {
    EncoderOptions::new().to_string(value)
}

/// Encodes a `serde_json::Value` through the buffered look-ahead (tape) encoder, reading the
/// value's strings in place: the same bytes as [`to_string`], which is faster (given a
/// `Value`, it reads it in place and writes each table in one pass when its first row tells
/// the table's layout). Kept as the independent implementation the tests compare against.
///
/// ```
/// let value = serde_json::json!({"rows": [{"id": 1, "tag": "a|b"}, {"id": 2}]});
/// let text = agentwire_gcf::to_string_value(&value)?;
/// assert_eq!(text, agentwire_gcf::to_string(&value)?);
/// assert_eq!(text, "GCF profile=generic\n## rows [2]{id,tag}\n1|\"a|b\"\n2|~\n");
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn to_string_value(value: &serde_json::Value) -> Result<String> {
    EncoderOptions::new().to_string_value(value)
}

/// Encodes `value` into `writer` (see [`to_string`]). The payload is built in memory and then
/// written; for data that arrives incrementally use [`GenericStreamEncoder`].
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(writer: W, value: &T) -> Result<()> {
    EncoderOptions::new().to_writer(writer, value)
}

/// Decodes a generic-profile payload into any `T: Deserialize`, with the default
/// [`DecoderOptions`]. Strings without escapes are borrowed from `input` when `T` allows. A
/// `serde_json::Value` is built directly, its arrays and objects sized by the counts the
/// payload declares.
///
/// ```
/// use serde_json::{json, Value};
///
/// let text = "GCF profile=generic\n## rows [2]{id,note,tag}\n1|-|active\n2|hello|~\n";
/// let value: Value = agentwire_gcf::from_str(text)?;
/// assert_eq!(
///     value,
///     json!({"rows": [{"id": 1, "note": null, "tag": "active"}, {"id": 2, "note": "hello"}]})
/// );
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn from_str<'a, T: Deserialize<'a>>(input: &'a str) -> Result<T> {
    DecoderOptions::new().from_str(input)
}

/// Decodes a generic-profile payload from bytes (validated as UTF-8 first: `invalid_utf8`).
pub fn from_slice<'a, T: Deserialize<'a>>(input: &'a [u8]) -> Result<T> {
    DecoderOptions::new().from_slice(input)
}

/// Decodes a generic-profile payload read from `reader` a line at a time, into any
/// `T: DeserializeOwned`.
///
/// The payload is read a unit at a time and never held whole: memory holds the value being
/// built, the current line (a line longer than [`Limits::max_line_length`] fails as soon as
/// its limit is passed, nothing past it kept) and one unit of text: a run of the root object's
/// members of about 64 KiB, cut before its `## key` section lines, or a piece of about 64 KiB
/// of a large table (a root table, or a root member that is a table, cut between rows: plain
/// columns, flattened `a>b` columns and constant columns alike) or of a list of `@N` items
/// (the root, or a root member, cut between items). A `## key` section of the root is cut
/// inside too, at any depth: before the `## ...` member lines of its sections, and a table or
/// list that is a member of one is cut between rows or items the same way (each unit
/// re-enters the open sections, whose members are carried). What is not cut is one unit: a
/// table whose layout is checked across its rows (a keyed map, an identity column, value
/// groups), the rest of a table once a row declares an inline or shared schema, and a
/// section whose key is quoted (with everything nested in it). Blank and comment
/// lines are never kept, and [`Limits::max_input_size`] is counted as the bytes arrive.
///
/// A `serde_json::Value` is built from each unit as it is read. Any other `T` is read by the
/// in-memory deserializer as its visitors ask: the root object's members (and a section's)
/// one unit after another, a table's rows (a list's items) across its pieces, each string handed over as an owned one (no
/// `serde_json::Value` is built beside `T`, and `T` never borrows from the input).
///
/// The value and the errors are [`from_str`]'s, at the input's positions (type errors
/// included), except that malformed UTF-8 is reported where it is read (`from_str` checks it
/// before anything else), and that serde_json's private keys (read by its visitor when its
/// `arbitrary_precision` or `raw_value` feature is on) are ordinary keys into a `Value` here.
/// A table read a row at a time, without building the whole, is
/// [`RowReader`](crate::RowReader).
///
/// ```
/// use serde::Deserialize;
///
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct Row {
///     id: u64,
///     tag: Option<String>,
/// }
///
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct Doc {
///     name: String,
///     rows: Vec<Row>,
/// }
///
/// let text = "GCF profile=generic\n# a comment\nname=x\n## rows [2]{id,tag}\n1|a\n2|~\n";
/// let doc: Doc = agentwire_gcf::from_reader(text.as_bytes())?;
/// assert_eq!(doc.rows[1], Row { id: 2, tag: None });
///
/// // A type error carries the input's position, as `from_str`'s does.
/// let bad = "GCF profile=generic\n# a comment\nname=x\n## rows [2]{id,tag}\n1|a\nx|b\n";
/// let error = agentwire_gcf::from_reader::<_, Doc>(bad.as_bytes()).unwrap_err();
/// assert_eq!((error.code(), error.line()), ("type_mismatch", Some(6)));
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
///
/// [`Limits::max_line_length`]: crate::Limits::max_line_length
/// [`Limits::max_input_size`]: crate::Limits::max_input_size
pub fn from_reader<R: io::Read, T: DeserializeOwned>(reader: R) -> Result<T> {
    DecoderOptions::new().from_reader(reader)
}

impl EncoderOptions {
    /// Encodes `value` with these options (see [`to_string`]).
    pub fn to_string<T: ?Sized + Serialize>(&self, value: &T) -> Result<String> {
        if let Some(value) = as_value(value) {
            // A `serde_json::Value` is read in place.
            return self.encode_root(value, 1024);
        }
        tape::with_tape(|tape| {
            tape.build(value, self.max_depth)?;
            self.encode_tape(tape)
        })
    }

    /// Encodes a `serde_json::Value` with these options through the tape (see
    /// [`to_string_value`]).
    pub fn to_string_value(&self, value: &serde_json::Value) -> Result<String> {
        tape::with_tape(|tape| {
            tape.build_value(value, self.max_depth)?;
            self.encode_tape(tape)
        })
    }

    fn encode_tape(&self, tape: &tape::Tape<'_>) -> Result<String> {
        if tape.toks.is_empty() {
            return Ok(HEADER.to_owned());
        }
        self.encode_root(tape.root(), HEADER.len() + tape.size_hint())
    }

    /// The payload of the value at `root`; with a token counter, the fewer-token one of the
    /// searched and the canonical encoding.
    fn encode_root<'v, N: view::Node<'v>>(&self, root: N, capacity: usize) -> Result<String> {
        let mut out = String::with_capacity(capacity);
        out.push_str(HEADER);
        encode::encode(root, self, &mut out)?;
        if let (Some(counter), true) = (&self.fewest, self.current()) {
            let mut canonical = self.clone();
            canonical.fewest = None;
            let mut plain = String::with_capacity(out.len());
            plain.push_str(HEADER);
            encode::encode(root, &canonical, &mut plain)?;
            if counter.0.count(&plain) < counter.0.count(&out) {
                return Ok(plain);
            }
        }
        Ok(out)
    }

    /// Encodes `value` into `writer` with these options (see [`to_writer`]).
    pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(
        &self,
        mut writer: W,
        value: &T,
    ) -> Result<()> {
        let text = self.to_string(value)?;
        writer.write_all(text.as_bytes())?;
        writer.flush()?;
        Ok(())
    }
}

impl DecoderOptions {
    /// Decodes with these options (see [`from_str`]).
    pub fn from_str<'a, T: Deserialize<'a>>(&self, input: &'a str) -> Result<T> {
        self.decode_counted_str(input, &mut Vec::new())
    }

    /// [`DecoderOptions::from_str`], also handing out the item counts of the payload's
    /// deferred `[?]` sections in document order (see `de::decode_counted`).
    pub(crate) fn decode_counted_str<'a, T: Deserialize<'a>>(
        &self,
        input: &'a str,
        deferred: &mut Vec<(crate::Position, u64)>,
    ) -> Result<T> {
        if let Some(max) = self.limits.max_input_size {
            if input.len() > max {
                return Err(too_large(max));
            }
        }
        if is_value::<T>() && !private_keys(input) {
            // A `serde_json::Value` is built sized by the counts the payload declares.
            let value = de::decode_value_counted(input, self, deferred)?;
            if let Ok(value) = value_into::<T>(value) {
                return Ok(value);
            }
        }
        de::decode_counted(input, self, deferred)
    }

    /// Decodes bytes with these options (see [`from_slice`]).
    pub fn from_slice<'a, T: Deserialize<'a>>(&self, input: &'a [u8]) -> Result<T> {
        if let Some(max) = self.limits.max_input_size {
            if input.len() > max {
                return Err(too_large(max));
            }
        }
        self.from_str(crate::lex::utf8(input)?)
    }

    /// Reads `reader` a line at a time and decodes the payload with these options (see
    /// [`from_reader`]).
    pub fn from_reader<R: io::Read, T: DeserializeOwned>(&self, reader: R) -> Result<T> {
        if is_value::<T>() {
            let value = units::value_from_reader(io::BufReader::new(reader), self)?;
            return value_into::<T>(value)
                .map_err(|_| Error::new(ErrorKind::TypeMismatch, "not a serde_json::Value"));
        }
        units::from_reader(io::BufReader::new(reader), self)
    }
}

/// Whether `T` is `serde_json::Value`.
fn is_value<T: ?Sized>() -> bool {
    typeid::of::<T>() == typeid::of::<serde_json::Value>()
}

/// `value` as a `serde_json::Value`, if that is its type or a reference to it is.
#[allow(unsafe_code)]
fn as_value<T: ?Sized>(value: &T) -> Option<&serde_json::Value> {
    if is_value::<T>() {
        // SAFETY: `T` is `serde_json::Value` (a type without lifetime parameters, so the
        // type ids, which ignore lifetimes, are equal only for it): the cast changes nothing.
        Some(unsafe { &*std::ptr::from_ref(value).cast::<serde_json::Value>() })
    } else if typeid::of::<T>() == typeid::of::<&serde_json::Value>() {
        // SAFETY: `T` is `&'a serde_json::Value` for some `'a` that outlives the borrow of
        // `value`; reading it as a reference of that shorter lifetime is allowed (covariance).
        Some(unsafe { *std::ptr::from_ref(value).cast::<&serde_json::Value>() })
    } else {
        None
    }
}

/// A `serde_json::Value` as `T`, if that is `T`'s type (else the value back).
#[allow(unsafe_code)]
fn value_into<T>(value: serde_json::Value) -> std::result::Result<T, serde_json::Value> {
    if !is_value::<T>() {
        return Err(value);
    }
    let value = std::mem::ManuallyDrop::new(value);
    // SAFETY: `T` is `serde_json::Value` (see `as_value`), so this reads the value as its own
    // type; `ManuallyDrop` keeps it from being dropped twice.
    Ok(unsafe { std::ptr::read(std::ptr::from_ref::<serde_json::Value>(&value).cast::<T>()) })
}

#[cold]
fn too_large(max: usize) -> Error {
    Error::new(
        ErrorKind::LimitExceeded(Limit::InputSize),
        format!("the input exceeds the limit of {max} bytes"),
    )
}
