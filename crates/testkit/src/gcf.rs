//! The round-trip oracle of the GCF generic profile (`agentwire-gcf`), shared by its property
//! tests, its conformance checks and the `gcf_decode` fuzz target.
//!
//! Invariants checked:
//!
//! - **lossless** (spec §1.1): `from_str(to_string(v)) == v` in the JSON data model — same
//!   types, members as sets, arrays in order, strings byte for byte, numbers by exact decimal
//!   value (`1.0` equals `1`, since GCF keeps the value, not the spelling; `-0` differs from
//!   `0`);
//! - **canonical**: encoding the decoded value gives the same bytes again (idempotence), and
//!   the three inputs of the encoder give the same bytes: `to_string` of a `Value` (read in
//!   place), `to_string` of anything else (through serde and the tape, checked here through a
//!   wrapper that hides the type) and `to_string_value` (a `Value` through the tape);
//! - **domain**: under the current spec, a value with a number outside its domain (an
//!   integer beyond int64) is refused with `out_of_range`, and `-0` comes back as `0`;
//! - **one decoder**: `from_str::<Value>` (which builds the value itself) and decoding through
//!   serde_json's own `Value` visitor (a wrapper again) give the same value, or the same error
//!   (code, line and column);
//! - **typed errors**: input the decoder rejects fails with an error code, never a panic.

use agentwire_gcf::{DecoderOptions, EncoderOptions, Spec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Bug, Roundtrip};

/// [`check_value_with`] the default options: the current spec.
pub fn check_value(value: &Value) -> Result<String, Bug> {
    check_value_with(value, &EncoderOptions::new())
}

/// Encodes `value` with `options`, decodes the text, and checks that the result equals
/// `value` and encodes to the same bytes. Returns the encoded text. Under the current spec, a
/// value holding a number outside its domain must be refused with `out_of_range` (and gives
/// an empty text); any other refusal is a `Bug`.
pub fn check_value_with(value: &Value, options: &EncoderOptions) -> Result<String, Bug> {
    let current = options.get_spec() != Spec::V3_1;
    let text = match options.to_string(value) {
        Ok(text) => text,
        Err(e) if current && e.code() == "out_of_range" && !in_domain(value) => {
            return Ok(String::new())
        }
        Err(e) => {
            return Err(Bug(format!(
                "encoding a JSON value failed: {e}\nvalue: {value}"
            )))
        }
    };
    if current && !in_domain(value) {
        return Err(Bug(format!(
            "a number outside the domain was encoded\nvalue: {value}\ntext:\n{text}"
        )));
    }
    let direct = options
        .to_string_value(value)
        .map_err(|e| Bug(format!("to_string_value failed: {e}\nvalue: {value}")))?;
    if direct != text {
        return Err(Bug(format!(
            "to_string_value and to_string disagree\nto_string:\n{text}\nto_string_value:\n{direct}"
        )));
    }
    let serde_path = options.to_string(&Opaque(value)).map_err(|e| {
        Bug(format!(
            "to_string of a wrapped value failed: {e}\nvalue: {value}"
        ))
    })?;
    if serde_path != text {
        return Err(Bug(format!(
            "to_string of a Value and of a wrapped Value disagree\nValue:\n{text}\nwrapped:\n{serde_path}"
        )));
    }
    // Read by the version it was written in: the current spec reads `-0` and integers beyond
    // i64 differently from v3.1 (docs/gcf.md, "Versions").
    let decoded: Value = DecoderOptions::new()
        .spec(options.get_spec())
        .from_str(&text)
        .map_err(|e| {
            Bug(format!(
                "decoding the encoder's own output failed: {e}\nvalue: {value}\ntext:\n{text}"
            ))
        })?;
    let changed = if current {
        difference_signless(value, &decoded)
    } else {
        difference(value, &decoded)
    };
    if let Some(difference) = changed {
        return Err(Bug(format!(
            "round trip changed the value: {difference}\nvalue:   {value}\ndecoded: {decoded}\ntext:\n{text}"
        )));
    }
    let again = options
        .to_string(&decoded)
        .map_err(|e| Bug(format!("re-encoding the decoded value failed: {e}")))?;
    if again != text {
        return Err(Bug(format!(
            "encoding is not idempotent\nfirst:\n{text}\nsecond:\n{again}"
        )));
    }
    Ok(text)
}

/// Decodes arbitrary bytes; rejected input must carry an error code, and accepted input must
/// pass [`check_value`] (decode → encode → decode gives the same value and the same bytes).
pub fn check_bytes(input: &[u8]) -> Result<Roundtrip, Bug> {
    match agentwire_gcf::from_slice::<Value>(input) {
        Err(e) => {
            if e.code().is_empty() {
                return Err(Bug(format!("an error without a code: {e}")));
            }
            // The direct build and serde_json's visitor reject alike: same code, same place.
            match agentwire_gcf::from_slice::<OpaqueOwned>(input) {
                Ok(OpaqueOwned(other)) => {
                    return Err(Bug(format!(
                        "from_str::<Value> rejected ({e}) what serde_json's visitor accepts: {other}"
                    )))
                }
                Err(other)
                    if (other.code(), other.position()) != (e.code(), e.position()) =>
                {
                    return Err(Bug(format!(
                        "from_str::<Value> and the serde_json visitor reject differently\nValue:   {e}\nvisitor: {other}"
                    )))
                }
                Err(_) => {}
            }
            Ok(Roundtrip::Rejected(e.code().to_owned()))
        }
        Ok(value) => {
            match agentwire_gcf::from_slice::<OpaqueOwned>(input) {
                Ok(OpaqueOwned(other)) if other == value => {}
                Ok(OpaqueOwned(other)) => {
                    return Err(Bug(format!(
                        "from_str::<Value> and the serde_json visitor disagree\nValue:   {value}\nvisitor: {other}"
                    )))
                }
                Err(e) => {
                    return Err(Bug(format!(
                        "accepted into a Value but rejected through serde_json's visitor: {e}"
                    )))
                }
            }
            // Every accepted document must also validate without building a value.
            if let Err(e) = agentwire_gcf::from_slice::<serde::de::IgnoredAny>(input) {
                return Err(Bug(format!(
                    "accepted into a Value but rejected when ignored: {e}"
                )));
            }
            check_value(&value).map(|_| Roundtrip::Ok)
        }
    }
}

/// Whether every number of `value` is in the current spec's domain: integers within int64,
/// and doubles (any non-integer lexeme serde_json holds is one, unless `arbitrary_precision`
/// keeps more digits than a double has).
fn in_domain(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            let lexeme = n.to_string();
            if lexeme.contains(['.', 'e', 'E']) {
                // A double: finite, not underflowing, with at most the 17 significant digits a
                // double needs.
                let (_, digits, _) = canonical(&lexeme);
                lexeme.parse::<f64>().is_ok_and(|f| {
                    f.is_finite() && (f != 0.0 || digits.is_empty()) && digits.len() <= 17
                })
            } else {
                lexeme.parse::<i64>().is_ok()
            }
        }
        Value::Array(items) => items.iter().all(in_domain),
        Value::Object(members) => members.values().all(in_domain),
        _ => true,
    }
}

/// [`difference`], with `-0` equal to `0` (the current spec writes both as `0`).
pub fn difference_signless(a: &Value, b: &Value) -> Option<String> {
    let mut path = String::from("$");
    diff_with(&mut path, a, b, false)
}

/// A `Value` behind a type the encoder does not recognize: serialized through serde.
struct Opaque<'a>(&'a Value);

impl Serialize for Opaque<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// A `Value` behind a type the decoder does not recognize: built by serde_json's visitor.
struct OpaqueOwned(Value);

impl<'de> Deserialize<'de> for OpaqueOwned {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(OpaqueOwned)
    }
}

/// Whether two values are equal in the JSON data model (see the module docs).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    difference(a, b).is_none()
}

/// The first difference between two values, with its path, or `None` when they are equal in
/// the JSON data model.
pub fn difference(a: &Value, b: &Value) -> Option<String> {
    let mut path = String::from("$");
    diff_with(&mut path, a, b, true)
}

fn diff_with(path: &mut String, a: &Value, b: &Value, signed_zero: bool) -> Option<String> {
    match (a, b) {
        (Value::Null, Value::Null) => None,
        (Value::Bool(x), Value::Bool(y)) if x == y => None,
        (Value::String(x), Value::String(y)) if x == y => None,
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.to_string(), y.to_string());
            let (mut cx, mut cy) = (canonical(&x), canonical(&y));
            if !signed_zero && cx.1.is_empty() && cy.1.is_empty() {
                (cx.0, cy.0) = (false, false);
            }
            (cx != cy).then(|| format!("{path}: number {x} != {y}"))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} elements != {}", x.len(), y.len()));
            }
            x.iter().zip(y).enumerate().find_map(|(i, (x, y))| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = diff_with(path, x, y, signed_zero);
                path.truncate(len);
                found
            })
        }
        (Value::Object(x), Value::Object(y)) => {
            if let Some(k) = x.keys().find(|k| !y.contains_key(*k)) {
                return Some(format!("{path}: member {k:?} lost"));
            }
            if let Some(k) = y.keys().find(|k| !x.contains_key(*k)) {
                return Some(format!("{path}: member {k:?} added"));
            }
            x.iter().find_map(|(k, v)| {
                let len = path.len();
                path.push_str(&format!(".{k:?}"));
                let found = diff_with(path, v, &y[k], signed_zero);
                path.truncate(len);
                found
            })
        }
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

/// A number lexeme reduced to its exact value: sign, significant digits and the exponent of
/// the first digit (`"-0"` keeps its sign; `"1.0"`, `"1"` and `"10e-1"` are equal).
fn canonical(lexeme: &str) -> (bool, String, i64) {
    let (negative, rest) = match lexeme.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lexeme),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap_or(0)),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int}{frac}");
    let Some(first) = digits.find(|c: char| c != '0') else {
        return (negative, String::new(), 0);
    };
    let significant = digits[first..].trim_end_matches('0').to_owned();
    let first_exponent = int.len() as i64 - 1 - first as i64 + exponent;
    (negative, significant, first_exponent)
}

/// Whether `input` holds serde_json's private key prefix.
fn has_private_key(input: &[u8]) -> bool {
    input
        .windows(b"$serde_json::private::".len())
        .any(|w| w == b"$serde_json::private::")
}

/// The streaming readers against the in-memory decoder, on arbitrary bytes:
///
/// - `from_reader` (a line at a time, through a one-byte-at-a-time buffer, with the default
///   unit size and cut at every place it may be cut) gives the value or the error (code and
///   position) `from_slice` gives, except for malformed UTF-8, which the in-memory decoder
///   finds before anything else and the reader where it reads it, and for serde_json's
///   private keys (which its visitor reads when its `arbitrary_precision` or `raw_value`
///   feature is on: the reader reads them as ordinary keys), into a `serde_json::Value` and
///   into typed targets: a map, a `Vec<Value>`, `IgnoredAny`, a [`Doc`] of nested structs and
///   a `Vec` of [`Row`]s (on most payloads a type error, whose code and position are compared
///   too: see [`check_from_reader_typed`]);
/// - the [`RowReader`](agentwire_gcf::RowReader), when the payload is a table (a root array,
///   or an object of one array member) or a keyed map (root or member), gives its rows in
///   order (a keyed map's entries as `[key, value]` pairs, compared by key), and rejects what the whole
///   decoder rejects; on other payloads it says `not_a_table`. Error codes are compared where
///   both readers see the error in the same order (not for `invalid_utf8` and
///   `invalid_surrogate`, which the in-memory decoder finds before anything else, nor for a
///   row-count limit, which the row reader checks as rows arrive).
///
/// Graph-profile payloads get the graph decoder's reader oracle,
/// [`crate::gcf_graph::check_reader`].
pub fn check_streaming(input: &[u8]) -> Result<(), Bug> {
    if input.starts_with(b"GCF profile=graph") {
        crate::gcf_graph::check_reader(input)?;
    }
    check_from_reader(input)?;
    check_row_reader(input)
}

/// `from_reader` against the in-memory decoder, on arbitrary bytes, into a `Value` and the
/// typed targets (the first half of [`check_streaming`]).
pub fn check_from_reader(input: &[u8]) -> Result<(), Bug> {
    check_from_reader_typed::<Value>(input)?;
    check_from_reader_typed::<serde_json::Map<String, Value>>(input)?;
    check_from_reader_typed::<Vec<Value>>(input)?;
    check_from_reader_typed::<Skip>(input)?;
    check_from_reader_typed::<Doc>(input)?;
    check_from_reader_typed::<Vec<Row>>(input)
}

/// A typed target of the `from_reader` oracle: a document of the shapes a user decodes
/// (nested structs, a table of rows, options, a map, enums, every number type). The
/// property tests generate values of it; on arbitrary payloads it is mostly a type error,
/// whose code and position are compared too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Doc {
    pub name: String,
    pub count: u64,
    #[serde(default)]
    pub offset: Option<i64>,
    pub ratio: f64,
    pub owner: Owner,
    pub rows: Vec<Row>,
    #[serde(default)]
    pub labels: std::collections::HashMap<String, String>,
    pub kind: Kind,
}

/// [`Doc`]'s nested struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Owner {
    pub id: i64,
    pub email: Option<String>,
    pub tags: Vec<String>,
}

/// A row of [`Doc`]'s table (also decoded alone, as a root table, by the oracle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Row {
    pub id: u64,
    pub label: String,
    pub weight: f64,
    pub note: Option<String>,
    pub state: State,
}

/// A unit or struct variant in a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum State {
    Open,
    Closed,
    Held { reason: String, until: i64 },
}

/// A unit or newtype variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum Kind {
    Plain,
    Tagged(String),
}

/// Any payload, validated and dropped (`IgnoredAny`), equal to any other.
#[derive(Debug, Deserialize)]
pub struct Skip(#[allow(dead_code)] serde::de::IgnoredAny);

impl PartialEq for Skip {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// `from_reader::<T>` against `from_slice::<T>` on arbitrary bytes, with the default unit
/// size and cut at every place the reader may cut: the same value, or the same error code
/// and position (type errors included), except where the in-memory decoder finds malformed
/// UTF-8 before anything else and for serde_json's private keys (see [`check_streaming`]).
pub fn check_from_reader_typed<T>(input: &[u8]) -> Result<(), Bug>
where
    T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let whole = agentwire_gcf::from_slice::<T>(input);
    // With the default unit size, and cut at every place the reader may cut.
    for unit in [None, Some(1)] {
        let mut opts = DecoderOptions::new();
        if let Some(unit) = unit {
            opts = opts.stream_unit_size(unit);
        }
        let reader = std::io::BufReader::with_capacity(1, input);
        let streamed = opts.from_reader::<_, T>(reader);
        match (&whole, &streamed) {
            (Ok(a), Ok(b)) if a == b => {}
            (Err(a), Err(b)) if (a.code(), a.position()) == (b.code(), b.position()) => {}
            // Malformed UTF-8 is found by the in-memory decoder before anything else, by the
            // reader where it is read.
            (Err(a), _) if matches!(a.code(), "invalid_utf8" | "invalid_surrogate") => {}
            // serde_json's private keys (with its `arbitrary_precision` or `raw_value` on)
            // are read by its visitor in memory, as ordinary keys by the reader.
            _ if has_private_key(input) => {}
            _ => {
                return Err(Bug(format!(
                    "from_reader::<{}> (unit {unit:?}) and from_slice differ\nfrom_slice:  \
                     {whole:?}\nfrom_reader: {streamed:?}",
                    std::any::type_name::<T>()
                )))
            }
        }
    }
    Ok(())
}

/// The [`RowReader`](agentwire_gcf::RowReader) against the in-memory decoder, on arbitrary
/// bytes (the second half of [`check_streaming`]).
pub fn check_row_reader(input: &[u8]) -> Result<(), Bug> {
    let whole = agentwire_gcf::from_slice::<Value>(input);
    let (rows, keyed, member) = match agentwire_gcf::RowReader::new(input) {
        Ok(mut r) => {
            let (keyed, member) = (r.is_keyed(), r.key().map(str::to_owned));
            let rows = r.values().collect::<agentwire_gcf::Result<Vec<Value>>>();
            (rows, keyed, member)
        }
        Err(e) => (Err(e), false, None),
    };
    // A keyed map's entries come as `[key, value]` pairs, compared by key (a `Map` may not
    // keep the input's order).
    let entries = |m: &serde_json::Map<String, Value>| {
        let mut pairs: Vec<Value> = m
            .iter()
            .map(|(k, v)| Value::Array(vec![Value::String(k.clone()), v.clone()]))
            .collect();
        pairs.sort_by(|a, b| a[0].as_str().cmp(&b[0].as_str()));
        pairs
    };
    let rows = rows.map(|mut rows| {
        if keyed {
            rows.sort_by(|a, b| a[0].as_str().cmp(&b[0].as_str()));
        }
        rows
    });
    let table = match &whole {
        Ok(Value::Array(items)) if !keyed => Some(items.clone()),
        Ok(Value::Object(m)) if keyed && member.is_none() => Some(entries(m)),
        Ok(Value::Object(m)) if m.len() == 1 => match m.values().next() {
            Some(Value::Array(items)) if !keyed => Some(items.clone()),
            Some(Value::Object(map)) if keyed => Some(entries(map)),
            _ => None,
        },
        _ => None,
    };
    match (&rows, &whole, table) {
        (Ok(rows), _, Some(table)) if *rows == table => Ok(()),
        // A table the row reader does not take row by row must be one it says so of.
        (Err(e), _, table) if e.code() == "not_a_table" && table.is_none() => Ok(()),
        // The same error, at the same line.
        (Err(e), Err(w), _) if e.code() == w.code() && e.line() == w.line() => Ok(()),
        (Err(e), Err(w), _)
            if matches!(w.code(), "invalid_utf8" | "invalid_surrogate")
                || e.code() == "limit_exceeded" =>
        {
            Ok(())
        }
        _ => Err(Bug(format!(
            "the row reader and the whole decoder differ\nrows:  {rows:?}\nwhole: {whole:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        assert_eq!(canonical("1.0"), canonical("1"));
        assert_eq!(canonical("10e-1"), canonical("1"));
        assert_eq!(canonical("0.001"), canonical("1e-3"));
        assert_ne!(canonical("-0"), canonical("0"));
        assert_eq!(canonical("-0.0"), canonical("-0"));
        assert_ne!(canonical("1.5"), canonical("15"));
    }

    #[test]
    fn the_oracle_accepts_round_trips_and_reports_rejections() {
        let text = check_value(&json!({"a": [1, "x", null], "b": {"c": 1.5}})).unwrap();
        assert!(text.starts_with("GCF profile=generic\n"));
        assert_eq!(check_bytes(text.as_bytes()), Ok(Roundtrip::Ok));
        assert_eq!(
            check_bytes(b"GCF profile=generic\nvalue=~\n"),
            Ok(Roundtrip::Rejected("invalid_missing".into()))
        );
        assert_eq!(
            check_bytes(b"\xff"),
            Ok(Roundtrip::Rejected("invalid_utf8".into()))
        );
    }
}
