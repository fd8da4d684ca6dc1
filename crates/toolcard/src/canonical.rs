//! The canonical schema shape of spec §1.3 and the `hash8` computed over it.
//!
//! The shape must be byte-identical to what the spec's Python produces,
//! `json.dumps({"properties": sorted(keys), "required": sorted(required)}, sort_keys=True,
//! separators=(",", ":"))`, so that every implementation derives the same ids. That means
//! Python's defaults: ASCII output with `\uXXXX` escapes in lower-case hex (surrogate pairs
//! above U+FFFF), keys and strings sorted by code point, integers in plain decimal and floats
//! in Python's shortest `repr` (`1.0`, `1e-05`, `1e+16`).

use std::cell::Cell;
use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Why a schema has no canonical shape; the pointer is relative to the input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShapeError {
    pub(crate) pointer: &'static str,
    pub(crate) reason: String,
}

/// The canonical shape JSON of an input schema (§1.3).
///
/// `properties` and `required` that are absent, `null` or otherwise false in Python's sense
/// (`false`, `0`, `""`, `[]`, `{}`) count as empty, as `x or {}` does in the spec's code. A
/// schema that Python's code would reject with an exception (a `properties` that is not an
/// object, a `required` that cannot be sorted) is an error here too.
pub(crate) fn canonical_shape(schema: &Value) -> Result<String, ShapeError> {
    let empty = Map::new();
    let schema = match schema {
        Value::Object(map) => map,
        other if !truthy(other) => &empty,
        _ => {
            return Err(ShapeError {
                pointer: "",
                reason: "the input schema is not an object".into(),
            })
        }
    };
    let mut properties: Vec<&str> = match schema.get("properties") {
        Some(Value::Object(map)) => map.keys().map(String::as_str).collect(),
        Some(v) if truthy(v) => {
            return Err(ShapeError {
                pointer: "/properties",
                reason: "`properties` is not an object".into(),
            })
        }
        _ => Vec::new(),
    };
    properties.sort_unstable();
    let mut required: Vec<Value> = match schema.get("required") {
        None => Vec::new(),
        Some(v) if !truthy(v) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        // Python iterates a string as its characters and a dict as its keys.
        Some(Value::String(s)) => s.chars().map(|c| Value::String(c.to_string())).collect(),
        Some(Value::Object(map)) => map.keys().map(|k| Value::String(k.clone())).collect(),
        Some(_) => {
            return Err(ShapeError {
                pointer: "/required",
                reason: "`required` is not a list".into(),
            })
        }
    };
    py_sort(&mut required).map_err(|reason| ShapeError {
        pointer: "/required",
        reason,
    })?;

    let mut out = String::with_capacity(32 + properties.iter().map(|p| p.len() + 3).sum::<usize>());
    out.push_str("{\"properties\":[");
    for (i, p) in properties.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_py_string(p, &mut out);
    }
    out.push_str("],\"required\":[");
    for (i, r) in required.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_py_json(r, &mut out).map_err(|reason| ShapeError {
            pointer: "/required",
            reason,
        })?;
    }
    out.push_str("]}");
    Ok(out)
}

/// The first 8 hex digits of `sha256(upstream_name + "\n" + shape)`.
pub(crate) fn hash8_of(upstream_name: &str, shape: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(upstream_name.as_bytes());
    hasher.update(b"\n");
    hasher.update(shape.as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(8);
    for byte in &digest[..4] {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Python's truth value of a JSON value.
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => match py_number(n) {
            Some(PyNum::Int(i)) => i != 0,
            Some(PyNum::Float(f)) => f != 0.0,
            None => true,
        },
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A JSON number as Python's `json.loads` reads it: an `int` when the lexeme has no fraction
/// or exponent, otherwise a `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyNum {
    Int(i128),
    Float(f64),
}

/// `None` for integers beyond 128 bits, which only `arbitrary_precision` can hold.
pub(crate) fn py_number(n: &serde_json::Number) -> Option<PyNum> {
    if let Some(i) = n.as_i64() {
        return Some(PyNum::Int(i.into()));
    }
    if let Some(u) = n.as_u64() {
        return Some(PyNum::Int(u.into()));
    }
    let lexeme = n.to_string();
    if lexeme.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return lexeme.parse::<i128>().ok().map(PyNum::Int);
    }
    n.as_f64().map(PyNum::Float)
}

/// Python's `str()` of a JSON scalar that may serve as a version: `str` as is, `int` in
/// decimal, `float` in `repr`, `True` for `true`.
pub(crate) fn py_str_scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(true) => Some("True".into()),
        Value::Bool(false) => Some("False".into()),
        Value::Number(n) => match py_number(n)? {
            PyNum::Int(i) => Some(i.to_string()),
            PyNum::Float(f) => Some(py_float_repr(f)),
        },
        _ => None,
    }
}

/// Sorts like Python's `sorted` (stable, by `<`), failing where Python raises `TypeError`.
fn py_sort(items: &mut [Value]) -> Result<(), String> {
    let failure: Cell<Option<String>> = Cell::new(None);
    items.sort_by(|a, b| match py_cmp(a, b) {
        Ok(o) => o,
        Err(e) => {
            failure.set(Some(e));
            Ordering::Equal
        }
    });
    match failure.into_inner() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(n) => match py_number(n) {
            Some(PyNum::Float(_)) => "float",
            _ => "int",
        },
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn as_py_num(v: &Value) -> Option<Result<PyNum, String>> {
    match v {
        Value::Bool(b) => Some(Ok(PyNum::Int((*b).into()))),
        Value::Number(n) => Some(
            py_number(n)
                .ok_or_else(|| format!("the integer {n} is too large to sort like Python does")),
        ),
        _ => None,
    }
}

fn py_cmp(a: &Value, b: &Value) -> Result<Ordering, String> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !py_eq(p, q)? {
                    return py_cmp(p, q);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => match (as_py_num(a), as_py_num(b)) {
            (Some(x), Some(y)) => Ok(num_cmp(x?, y?)),
            _ => Err(format!(
                "Python cannot order {} and {} ('<' not supported)",
                type_name(a),
                type_name(b)
            )),
        },
    }
}

fn py_eq(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (p, q) in x.iter().zip(y) {
                if !py_eq(p, q)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (k, p) in x {
                match y.get(k) {
                    Some(q) if py_eq(p, q)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        _ => match (as_py_num(a), as_py_num(b)) {
            (Some(x), Some(y)) => num_cmp(x?, y?) == Ordering::Equal,
            _ => false,
        },
    })
}

/// Exact comparison of Python numbers (ints are never rounded to floats).
fn num_cmp(a: PyNum, b: PyNum) -> Ordering {
    match (a, b) {
        (PyNum::Int(x), PyNum::Int(y)) => x.cmp(&y),
        (PyNum::Float(x), PyNum::Float(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (PyNum::Int(x), PyNum::Float(y)) => int_float_cmp(x, y),
        (PyNum::Float(x), PyNum::Int(y)) => int_float_cmp(y, x).reverse(),
    }
}

fn int_float_cmp(i: i128, f: f64) -> Ordering {
    const LIMIT: f64 = 1.7014118346046923e38; // 2^127
    if f.is_nan() {
        return Ordering::Equal;
    }
    if f >= LIMIT {
        return Ordering::Less;
    }
    if f < -LIMIT {
        return Ordering::Greater;
    }
    let floor = f.floor();
    // In range, so the cast is exact.
    let fi = floor as i128;
    match i.cmp(&fi) {
        Ordering::Equal if f > floor => Ordering::Less,
        other => other,
    }
}

/// Writes `value` as Python's `json.dumps(value, sort_keys=True, separators=(",", ":"))`.
pub(crate) fn write_py_json(value: &Value, out: &mut String) -> Result<(), String> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => match py_number(n) {
            Some(PyNum::Int(i)) => {
                let _ = write!(out, "{i}");
            }
            Some(PyNum::Float(f)) => out.push_str(&py_float_json(f)),
            None => {
                // An integer beyond 128 bits: Python prints every digit, as the lexeme has.
                out.push_str(n.to_string().trim_start_matches('+'));
            }
        },
        Value::String(s) => write_py_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_py_json(item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_py_string(key, out);
                out.push(':');
                write_py_json(&map[key], out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A string as Python's `json.dumps` writes it with `ensure_ascii=True`.
pub(crate) fn write_py_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn py_float_json(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        py_float_repr(f)
    }
}

/// Python's `repr(float)`: the shortest round-tripping digits, in fixed notation when the
/// decimal exponent is in `-4 ..= 15` (with `.0` added to integral values), else in exponent
/// notation with a signed exponent of at least two digits.
pub(crate) fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's `{:e}` prints the shortest round-tripping digits as `d.ddde<exp>`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let decpt = exp + 1;
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let n = digits.len() as i32;
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(out, "e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    } else if decpt <= 0 {
        out.push_str("0.");
        for _ in 0..-decpt {
            out.push('0');
        }
        out.push_str(&digits);
    } else if decpt < n {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    } else {
        out.push_str(&digits);
        for _ in 0..decpt - n {
            out.push('0');
        }
        out.push_str(".0");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_matches_python() {
        // Values and repr() from CPython 3.11.
        for (f, repr) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000123, "0.000123"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e22, "1e+22"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (-2.5e-7, "-2.5e-07"),
            (123.456, "123.456"),
        ] {
            assert_eq!(py_float_repr(f), repr, "{f}");
        }
    }

    #[test]
    fn strings_escape_like_python() {
        let mut out = String::new();
        write_py_string("a\"b\\c\n\t\u{1}\u{7f}é€😀", &mut out);
        assert_eq!(out, r#""a\"b\\c\n\t\u0001\u007f\u00e9\u20ac\ud83d\ude00""#);
    }

    #[test]
    fn shape_of_realistic_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "channel": {"type": "string"}},
            "required": ["text", "channel"]
        });
        let shape = canonical_shape(&schema).unwrap();
        assert_eq!(
            shape,
            r#"{"properties":["channel","text"],"required":["channel","text"]}"#
        );
        assert_eq!(hash8_of("slack_send_message", &shape), "283a5dcf");
        let shape =
            canonical_shape(&json!({"properties": {"path": {}}, "required": ["path"]})).unwrap();
        assert_eq!(hash8_of("read_file", &shape), "85b56782");
        let empty = canonical_shape(&Value::Null).unwrap();
        assert_eq!(empty, r#"{"properties":[],"required":[]}"#);
        assert_eq!(hash8_of("slack_send_message", &empty), "2fae1fd2");
        assert_eq!(hash8_of("read_file", &empty), "559d82ea");
    }

    #[test]
    fn python_quirks() {
        let shape = |v: Value| canonical_shape(&v);
        assert_eq!(
            shape(json!({"properties": [], "required": ""})).unwrap(),
            r#"{"properties":[],"required":[]}"#
        );
        assert_eq!(
            shape(json!({"required": "ba"})).unwrap(),
            r#"{"properties":[],"required":["a","b"]}"#
        );
        assert_eq!(
            shape(json!({"required": [2, 1.5, true, 0]})).unwrap(),
            r#"{"properties":[],"required":[0,true,1.5,2]}"#
        );
        assert_eq!(
            shape(json!({"required": [{"b": 1, "a": [1.0]}]})).unwrap(),
            r#"{"properties":[],"required":[{"a":[1.0],"b":1}]}"#
        );
        assert!(shape(json!({"required": ["a", 1]})).is_err());
        assert!(shape(json!({"required": [null, null]})).is_err());
        assert!(shape(json!({"required": 5})).is_err());
        assert!(shape(json!({"properties": [1]})).is_err());
        assert!(shape(json!("schema")).is_err());
    }
}
