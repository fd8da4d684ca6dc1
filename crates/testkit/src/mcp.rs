//! The round-trip oracle for `agentwire-mcp`'s re-encoding of tool results: whatever the
//! re-encoder puts in place of a JSON text must be detected as what it is, decode back to the
//! same JSON, and cost fewer tokens than the text it replaces.

use agentwire_mcp::{decode, detect, EncodeOptions, Format, Outcome, Reencoder};
use serde_json::Value;

use crate::{Bug, Roundtrip};

/// The formats the oracle re-encodes with: `auto` and every single format it chooses among
/// (TOON too when agentwire-mcp has its `toon` feature).
fn formats() -> Vec<Format> {
    let mut formats = vec![Format::Auto, Format::Gcf, Format::Gcx1];
    if Reencoder::new(EncodeOptions::new().format(Format::Toon)).is_ok() {
        formats.push(Format::Toon);
    }
    formats
}

/// Checks `text` as the text of a tool result item: for `auto` and each single format, with
/// `min_tokens` 1, the re-encoder either leaves it (not a JSON object or array, or nothing
/// cheaper that reads back) or replaces it with a text that [`detect`] names correctly,
/// [`decode`] reads back to the JSON of `text` (objects as sets of members, numbers by value)
/// and that has fewer tokens. `tool` is the tool name (GCX1 writes it in its header).
pub fn reencode(text: &str, tool: &str) -> Result<Roundtrip, Bug> {
    let container = match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => Some(value),
        _ => None,
    };
    for format in formats() {
        let reencoder = Reencoder::new(EncodeOptions::new().format(format).min_tokens(1))
            .map_err(|e| Bug(format!("{}: no re-encoder: {e}", format.name())))?;
        let outcome = reencoder.reencode_text(text, tool);
        let Some(value) = &container else {
            return match outcome {
                Outcome::NotJson => Ok(Roundtrip::Rejected("not a JSON object or array".into())),
                other => Err(Bug(format!(
                    "{}: {text:?} is not a JSON container, yet the outcome is {other:?}",
                    format.name()
                ))),
            };
        };
        match outcome {
            Outcome::NotJson => {
                return Err(Bug(format!(
                    "{}: {text:?} is a JSON container, yet left as not JSON",
                    format.name()
                )))
            }
            Outcome::Kept { .. } => {}
            Outcome::Replaced { before, choice } => {
                let name = format.name();
                if choice.tokens >= before {
                    return Err(Bug(format!(
                        "{name}: replaced {before} tokens by {} in {}",
                        choice.tokens,
                        choice.encoding.name()
                    )));
                }
                if detect(&choice.text) != choice.encoding {
                    return Err(Bug(format!(
                        "{name}: chose {} but its text reads as {}: {:?}",
                        choice.encoding.name(),
                        detect(&choice.text).name(),
                        choice.text
                    )));
                }
                let (_, back) = decode(&choice.text).map_err(|e| {
                    Bug(format!(
                        "{name}: the chosen text does not decode: {e}: {:?}",
                        choice.text
                    ))
                })?;
                if !same_json(value, &back) {
                    return Err(Bug(format!(
                        "{name}: {text:?} came back as {back} through {:?}",
                        choice.text
                    )));
                }
            }
            other => return Err(Bug(format!("{}: unknown outcome {other:?}", format.name()))),
        }
    }
    Ok(Roundtrip::Ok)
}

/// Whether two values are the same JSON as the re-encoder promises it: objects as sets of
/// members, arrays in order, numbers by value (integers exactly, others as `f64`).
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| same_json(value, other)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Number(x), Value::Number(y)) => {
            if x == y {
                return true;
            }
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x.as_f64().is_some() && x.as_f64() == y.as_f64(),
            }
        }
        _ => a == b,
    }
}
