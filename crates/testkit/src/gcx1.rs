//! The GCX1 round-trip oracle, shared by `agentwire-gcx1`'s property tests and the
//! `gcx1_decode` fuzz target.
//!
//! Invariants checked:
//!
//! - the streaming decoder (`io::BufRead`) and the borrowed decoder (`&str`) agree on every
//!   input: the same sections, or the same error code at the same position;
//! - whatever decodes re-encodes, unless the encoder refuses a header the decoder accepted
//!   (whitespace in a name, a duplicate field), and the re-encoded text decodes to the same
//!   sections, with the one normalisation the spec mandates (CRs before an LF inside a cell
//!   are dropped);
//! - encoding is a fixpoint after one round;
//! - `decode_any` output survives `encode_any` → `decode_any` unchanged, and `encode_any`
//!   input survives `decode_any` unchanged;
//! - the streaming row reader reads the same rows whatever its buffer, and what
//!   `decode_any` reads as one array it reads row by row; rows written back by the
//!   streaming writer decode to the same array;
//! - any JSON value survives `encode_any` → `decode_any` under any tool name;
//! - nothing panics.

use std::io::BufReader;

use agentwire_gcx1::{
    decode, decode_reader, encode, encode_any, Header, Options, RowReader, RowWriter, Section,
};
use serde_json::Value;

use crate::{Bug, Roundtrip};

/// The CRLF normalisation the encoder applies to cells (spec: "CR is stripped on encode"):
/// CRs directly before an LF are dropped; other CRs stay.
pub fn normalize_cell(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len());
    let mut pending_cr = 0;
    for c in cell.chars() {
        match c {
            '\r' => pending_cr += 1,
            '\n' => {
                pending_cr = 0;
                out.push('\n');
            }
            other => {
                out.extend(std::iter::repeat_n('\r', pending_cr));
                pending_cr = 0;
                out.push(other);
            }
        }
    }
    out.extend(std::iter::repeat_n('\r', pending_cr));
    out
}

fn normalized(sections: &[Section]) -> Vec<Section> {
    sections
        .iter()
        .map(|s| Section {
            header: s.header.clone(),
            rows: s
                .rows
                .iter()
                .map(|row| row.iter().map(|c| normalize_cell(c)).collect())
                .collect(),
        })
        .collect()
}

/// Encoder refusals that are not bugs when the input came from the decoder: header text the
/// reference decoders accept but that cannot be written back unambiguously.
fn acceptable_refusal(code: &str) -> bool {
    matches!(code, "invalid_header" | "duplicate_field")
}

/// Runs every decoder over `input` and, when it decodes, re-encodes and decodes again.
pub fn decode_roundtrip(input: &[u8]) -> Result<Roundtrip, Bug> {
    // Small buffer capacities exercise lines that span refills.
    let streamed = decode_reader(BufReader::with_capacity(7, input));
    let sections = match std::str::from_utf8(input) {
        Ok(text) => {
            let borrowed = decode(text);
            match (&streamed, &borrowed) {
                (Ok(a), Ok(b)) if a == b => {}
                (Err(a), Err(b)) if a.code() == b.code() && a.position() == b.position() => {}
                _ => {
                    return Err(Bug(format!(
                        "the decoders disagree on {text:?}: streaming {streamed:?}, borrowed {borrowed:?}"
                    )))
                }
            }
            any_roundtrip(text)?;
            borrowed
        }
        Err(_) => {
            if streamed.is_ok() {
                return Err(Bug("the streaming decoder accepted invalid UTF-8".into()));
            }
            streamed
        }
    };
    let sections = match sections {
        Ok(sections) => sections,
        Err(e) => return Ok(Roundtrip::Rejected(e.code().to_owned())),
    };
    let first = match encode(&sections) {
        Ok(text) => text,
        Err(e) if acceptable_refusal(e.code()) => {
            return Ok(Roundtrip::Rejected(format!("re-encode: {}", e.code())))
        }
        Err(e) => return Err(Bug(format!("re-encoding decoded sections failed: {e}"))),
    };
    let again = decode(&first).map_err(|e| {
        Bug(format!(
            "the encoder's output does not decode: {e}\n{first:?}"
        ))
    })?;
    if again != normalized(&sections) {
        return Err(Bug(format!(
            "decode → encode → decode changed the sections\nfirst: {sections:?}\nthen: {again:?}\ntext: {first:?}"
        )));
    }
    let second = encode(&again).map_err(|e| Bug(format!("second encode failed: {e}")))?;
    if second != first {
        return Err(Bug(format!(
            "encoding is not a fixpoint:\n{first:?}\n{second:?}"
        )));
    }
    Ok(Roundtrip::Ok)
}

/// If `text` decodes as a generic-fallback payload, its value must survive another round.
fn any_roundtrip(text: &str) -> Result<(), Bug> {
    let Ok(payload) = Options::new().decode_payload(text) else {
        return Ok(());
    };
    // Whatever decodes must also pass the bounded-memory check, and the reader must agree.
    if let Err(e) = Options::new().validate(text.as_bytes()) {
        return Err(Bug(format!(
            "decode_any accepts what validate rejects ({e}): {text:?}"
        )));
    }
    match value_roundtrip(&payload.tool, &payload.value)? {
        Roundtrip::Ok | Roundtrip::Rejected(_) => Ok(()),
    }
}

/// Encodes one section with `fields` and `rows`, decodes it with both decoders, and
/// compares (cells CRLF-normalised). Headers the encoder refuses are `Rejected`.
pub fn cells_roundtrip(
    tool: &str,
    fields: &[String],
    rows: &[Vec<String>],
) -> Result<Roundtrip, Bug> {
    let section = Section {
        header: Header::new(tool, fields.iter().cloned()),
        rows: rows.to_vec(),
    };
    let text = match encode(std::slice::from_ref(&section)) {
        Ok(text) => text,
        Err(e)
            if acceptable_refusal(e.code())
                || matches!(
                    e.code(),
                    "empty_row" | "empty_field_list" | "too_many_values"
                ) =>
        {
            return Ok(Roundtrip::Rejected(e.code().to_owned()))
        }
        Err(e) => return Err(Bug(format!("encode failed: {e}"))),
    };
    let padded: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut row: Vec<String> = row.iter().map(|c| normalize_cell(c)).collect();
            row.resize(fields.len(), String::new());
            row
        })
        .collect();
    let expected = vec![Section {
        header: section.header.clone(),
        rows: padded,
    }];
    let borrowed = decode(&text).map_err(|e| Bug(format!("decode failed: {e}\n{text:?}")))?;
    let streamed = decode_reader(BufReader::with_capacity(5, text.as_bytes()))
        .map_err(|e| Bug(format!("streaming decode failed: {e}\n{text:?}")))?;
    if borrowed != expected || streamed != expected {
        return Err(Bug(format!(
            "cells did not survive\nexpected: {expected:?}\nborrowed: {borrowed:?}\nstreamed: {streamed:?}\ntext: {text:?}"
        )));
    }
    Ok(Roundtrip::Ok)
}

/// `encode_any` then `decode_any` (both decoders) must give `value` back exactly.
pub fn value_roundtrip(tool: &str, value: &Value) -> Result<Roundtrip, Bug> {
    let text = match encode_any(tool, value) {
        Ok(text) => text,
        Err(e) if matches!(e.code(), "invalid_header" | "depth_limit" | "line_too_long") => {
            return Ok(Roundtrip::Rejected(e.code().to_owned()))
        }
        Err(e) => return Err(Bug(format!("encode_any failed on {value}: {e}"))),
    };
    let options = Options::new().tool(tool);
    let payload = options.decode_payload(&text).map_err(|e| {
        Bug(format!(
            "decode_any failed: {e}\nvalue: {value}\ntext: {text:?}"
        ))
    })?;
    let (decoded_tool, decoded) = (payload.tool, payload.value);
    if decoded_tool != tool || &decoded != value {
        return Err(Bug(format!(
            "encode_any → decode_any changed the value\nvalue:   {value}\ndecoded: {decoded}\ntext: {text:?}"
        )));
    }
    let streamed: Value = options
        .from_buf_reader(BufReader::with_capacity(5, text.as_bytes()))
        .map_err(|e| Bug(format!("streaming decode_any failed: {e}\n{text:?}")))?;
    options.validate(text.as_bytes()).map_err(|e| {
        Bug(format!(
            "validate rejects what decode_any accepts: {e}\n{text:?}"
        ))
    })?;
    if &streamed != value {
        return Err(Bug(format!(
            "the streaming decode_any differs\nvalue:    {value}\nstreamed: {streamed}"
        )));
    }
    Ok(Roundtrip::Ok)
}

/// Where a row reader stopped: the error code and its (line, column), if any.
type Stop = (String, Option<(u64, u64)>);

/// The rows a [`RowReader`] reads from `input` through a buffer of `capacity` bytes, or the
/// error code and position it stops at.
fn stream_rows(input: &[u8], capacity: usize) -> Result<Vec<Value>, Stop> {
    let mut rows = Vec::new();
    for row in RowReader::new(BufReader::with_capacity(capacity, input)) {
        match row {
            Ok(row) => rows.push(row.value),
            Err(e) => {
                return Err((
                    e.code().to_owned(),
                    e.position().map(|p| (p.line, p.column)),
                ))
            }
        }
    }
    Ok(rows)
}

/// Reads `input` row by row: the row reader must agree with itself across buffer sizes and
/// with `decode_any` where that reads one array, and the streaming writer must write the
/// rows back as that array.
pub fn stream_roundtrip(input: &[u8]) -> Result<Roundtrip, Bug> {
    let small = stream_rows(input, 3);
    let large = stream_rows(input, 1 << 16);
    if small != large {
        return Err(Bug(format!(
            "the row reader depends on its buffer: {small:?} vs {large:?}"
        )));
    }
    let rows = match small {
        Ok(rows) => rows,
        Err((code, _)) => {
            // Whatever the row reader refuses, decode_any refuses too.
            if let Ok(text) = std::str::from_utf8(input) {
                if let Ok(value) = Options::new().decode_any(text) {
                    return Err(Bug(format!(
                        "the row reader refuses ({code}) what decode_any reads as {value}: {text:?}"
                    )));
                }
            }
            return Ok(Roundtrip::Rejected(code));
        }
    };
    if let Ok(text) = std::str::from_utf8(input) {
        if let Ok(Value::Array(items)) = Options::new().decode_any(text) {
            let single_name = decode(text)
                .map(|s| s.windows(2).all(|w| w[0].header.tool == w[1].header.tool))
                .unwrap_or(false);
            // One row without `rows=` is the response's own shape (the bare value of a
            // `value` column may itself be an array): decode_any gives the row, not a list.
            let bare = rows.len() == 1 && rows[0] == Value::Array(items.clone());
            if single_name && items != rows && !bare {
                return Err(Bug(format!(
                    "decode_any and the row reader disagree on {text:?}: {items:?} vs {rows:?}"
                )));
            }
        }
    }
    for (window, tool) in [(2, "stream"), (5, "a.b"), (1024, "get_callers")] {
        let options = Options::new().tool(tool);
        let mut writer = RowWriter::new(Vec::new(), &options).window(window);
        for row in &rows {
            match writer.write(row) {
                Ok(()) => {}
                Err(e) if matches!(e.code(), "depth_limit" | "line_too_long") => {
                    return Ok(Roundtrip::Rejected(e.code().to_owned()))
                }
                Err(e) => return Err(Bug(format!("the row writer refused {row}: {e}"))),
            }
        }
        let bytes = writer
            .finish()
            .map_err(|e| Bug(format!("the row writer failed to finish: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|e| Bug(e.to_string()))?;
        let back = Options::new().decode_any(&text).map_err(|e| {
            Bug(format!(
                "the row writer's payload does not decode: {e}\n{text:?}"
            ))
        })?;
        if back != Value::Array(rows.clone()) {
            return Err(Bug(format!(
                "rows written by the row writer came back changed\nrows: {rows:?}\nback: {back}\ntext: {text:?}"
            )));
        }
    }
    Ok(Roundtrip::Ok)
}

/// `input` as JSON, if it is: it must survive `encode_any` → `decode_any` under plain,
/// dotted and Gortex tool names.
pub fn json_roundtrip(input: &[u8]) -> Result<Roundtrip, Bug> {
    let Ok(value) = serde_json::from_slice::<Value>(input) else {
        return Ok(Roundtrip::Rejected("not JSON".into()));
    };
    for tool in [
        "response",
        "a.b",
        "search_symbols",
        "get_callers",
        "smart_context",
    ] {
        value_roundtrip(tool, &value)?;
    }
    Ok(Roundtrip::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalisation_drops_cr_runs_before_lf() {
        assert_eq!(normalize_cell("a\r\r\nb\rc\r"), "a\nb\rc\r");
    }

    #[test]
    fn oracle_accepts_good_and_rejects_bad_input() {
        assert_eq!(
            decode_roundtrip(b"GCX1 tool=t fields=a,b\nx\ty\r\n#c\n\\#z\n").unwrap(),
            Roundtrip::Ok
        );
        // Found by fuzzing: raw CRs before an escaped LF must not shrink by one per round.
        assert_eq!(
            decode_roundtrip(b"GCX1 tool=t fields=a,b\nx\ty\r\r\\n\n").unwrap(),
            Roundtrip::Ok
        );
        assert_eq!(
            decode_roundtrip(b"GCX2 tool=t fields=a\n").unwrap(),
            Roundtrip::Rejected("unsupported_version".into())
        );
        assert_eq!(
            decode_roundtrip(b"GCX1 tool=t fields=a,a\nx\n").unwrap(),
            Roundtrip::Rejected("duplicate_field".into())
        );
        assert_eq!(
            cells_roundtrip("t", &["a".into()], &[vec!["".into()]]).unwrap(),
            Roundtrip::Rejected("empty_row".into())
        );
        assert_eq!(
            value_roundtrip("t", &json!([{"a": null}, {"b": "1"}, 3])).unwrap(),
            Roundtrip::Ok
        );
        assert_eq!(
            stream_roundtrip(b"GCX1 tool=t fields=a,b\n1\tx\n2\ny\n").unwrap(),
            Roundtrip::Ok
        );
        // Found by the `gcx1_stream` fuzz target: one row without `rows=` is the bare value,
        // here an array; the row reader hands out that one row.
        assert_eq!(
            stream_roundtrip(b"GCX1 tool=t fields=value\n[]\n").unwrap(),
            Roundtrip::Ok
        );
        assert_eq!(
            stream_roundtrip(b"GCX1 tool=t fields=a rows=1\n1\n2\n").unwrap(),
            Roundtrip::Rejected("row_count".into())
        );
        assert_eq!(
            json_roundtrip(br#"{"results": [{"id": 1}, {"id": "1"}], "total": 2}"#).unwrap(),
            Roundtrip::Ok
        );
    }
}
