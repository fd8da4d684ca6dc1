//! JSON as the Go reference writes it inside cells: compact, object keys sorted byte-wise,
//! `<`, `>`, `&`, U+2028 and U+2029 escaped (`encoding/json`'s HTML-safe defaults).
//!
//! Numbers keep their lexeme when serde_json's `arbitrary_precision` feature is on (as Go's
//! `json.Number` does); otherwise integers are written in decimal and floats in Go's
//! `encoding/json` layout, with `.0` added where the text would read back as an integer.

use std::sync::OnceLock;

use serde_json::{Number, Value};

use crate::encoder::CellWriter;
use crate::error::{ErrorKind, Result};
use crate::escape::escape_into;
use crate::float::write_go_json_f64;

/// The deepest nesting a cell's JSON may have: serde_json refuses to parse deeper text, so
/// deeper values could not be read back.
pub(crate) const MAX_DEPTH: usize = 127;

/// Whether serde_json was built with `arbitrary_precision` (Cargo may unify it in from
/// another crate of the build). Detected once, at run time.
pub(crate) fn arbitrary_precision() -> bool {
    static DETECTED: OnceLock<bool> = OnceLock::new();
    *DETECTED.get_or_init(|| {
        serde_json::from_str::<Number>("1E2").is_ok_and(|n| n.to_string() == "1E2")
    })
}

/// Appends a JSON number.
pub(crate) fn write_number(out: &mut Vec<u8>, n: &Number) {
    if arbitrary_precision() {
        // The lexeme, verbatim (`-0`, `1E+2` and `0.50` included).
        out.extend_from_slice(n.to_string().as_bytes());
    } else if let Some(u) = n.as_u64() {
        out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes());
    } else if let Some(i) = n.as_i64() {
        out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
    } else {
        match n.as_f64() {
            Some(f) if f.is_finite() => write_go_json_f64(out, f),
            _ => out.extend_from_slice(n.to_string().as_bytes()),
        }
    }
}

/// Appends a JSON string literal with Go's escapes.
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'<' | b'>' | b'&' | 0x00..=0x1f => None,
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                None
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        match escape {
            Some(text) => {
                out.extend_from_slice(text);
                i += 1;
            }
            None if b == 0xe2 => {
                out.extend_from_slice(if bytes[i + 2] == 0xa8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                });
                i += 3;
            }
            None => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xf) as usize]);
                i += 1;
            }
        }
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends `value` as compact JSON with sorted keys; fails past [`MAX_DEPTH`] levels.
pub(crate) fn write_json(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    write_at(out, value, 0)
}

fn write_at(out: &mut Vec<u8>, value: &Value, depth: usize) -> Result<()> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(ErrorKind::DepthLimit { limit: MAX_DEPTH }.into());
            }
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_at(out, item, depth + 1)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(ErrorKind::DepthLimit { limit: MAX_DEPTH }.into());
            }
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(out, key);
                out.push(b':');
                write_at(out, item, depth + 1)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Compact JSON text of `value`.
pub(crate) fn to_json_string(value: &Value) -> Result<String> {
    let mut out = Vec::new();
    write_json(&mut out, value)?;
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// Writes a `serde_json::Value` as one cell: null empty, strings as text, numbers and
/// booleans as JSON, arrays and objects as compact JSON (escaped for the row).
pub(crate) fn write_value_cell(out: &mut CellWriter<'_>, value: &Value) -> Result<()> {
    match value {
        Value::Null => {}
        Value::String(s) => out.write_str(s),
        Value::Bool(b) => out.write_bool(*b),
        Value::Number(n) => {
            let mut text = Vec::new();
            write_number(&mut text, n);
            out.raw(&text);
        }
        Value::Array(_) | Value::Object(_) => {
            let mut text = Vec::new();
            write_json(&mut text, value)?;
            // JSON text starts with `[` or `{`, never `#` or `GCX`.
            let buffer = out.buffer();
            escape_into(buffer, std::str::from_utf8(&text).unwrap_or_default());
            out.raw(b"");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Value) -> String {
        to_json_string(v).unwrap()
    }

    #[test]
    fn go_escapes_and_sorted_keys() {
        assert_eq!(
            text(&json!({"b": 1, "a": "<x>&\u{2028}\u{2029}", "c": [true, null]})),
            r#"{"a":"\u003cx\u003e\u0026\u2028\u2029","b":1,"c":[true,null]}"#
        );
        assert_eq!(
            text(&json!("q\"\\\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é")),
            "\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é\""
        );
        assert_eq!(text(&json!({"é": 1, "z": 2, "Z": 3})), r#"{"Z":3,"z":2,"é":1}"#);
    }

    #[test]
    fn floats_stay_floats() {
        assert_eq!(text(&json!([1.0, 0.5, -0.0])), "[1.0,0.5,-0.0]");
        if !arbitrary_precision() {
            assert_eq!(text(&json!([1e21, 1e-7])), "[1e+21,1e-7]");
            assert_eq!(text(&json!(1e16)), "10000000000000000.0");
        }
        assert_eq!(text(&json!([u64::MAX, i64::MIN])), "[18446744073709551615,-9223372036854775808]");
    }

    #[test]
    fn depth_is_limited() {
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(to_json_string(&deep).is_ok());
        let deeper = json!([deep]);
        assert_eq!(to_json_string(&deeper).unwrap_err().code(), "depth_limit");
    }
}
