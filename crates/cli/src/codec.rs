//! The formats the command converts between, behind one interface: detection by header,
//! and JSON values in and out.

use std::io::{self, BufRead, Read};

use serde_json::Value;

use crate::json_cmp::first_loss;
use crate::CliError;

/// A wire format the command reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// GCF v3.1 (generic profile; graph profile with `--graph`).
    Gcf,
    /// GCX1 (a per-tool layout with `--tool`, otherwise the generic fallback).
    Gcx1,
    /// TOON, through the reference `toon-format` crate.
    Toon,
    /// JSON.
    Json,
}

impl Format {
    /// The name used in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Gcf => "GCF",
            Format::Gcx1 => "GCX1",
            Format::Toon => "TOON",
            Format::Json => "JSON",
        }
    }
}

/// The format of a payload, told from its first line: `GCF` and `GCX...` headers; JSON when
/// the text starts with `{`, `"` or a `[` that is not a TOON array header (`[3]:`,
/// `[2]{a,b}:`); TOON otherwise (TOON has no header). The rule is agentwire-mcp's, so that
/// `decode` reads whatever `agentwire mcp` and `encode --to auto` chose.
pub(crate) fn detect(first_line: &[u8]) -> Format {
    match agentwire_mcp::detect(&String::from_utf8_lossy(first_line)) {
        agentwire_mcp::Encoding::Gcf => Format::Gcf,
        agentwire_mcp::Encoding::Gcx1 => Format::Gcx1,
        agentwire_mcp::Encoding::Json => Format::Json,
        _ => Format::Toon,
    }
}

/// The whole input again: the first line read for detection, then the rest.
pub(crate) type Replay<R> = io::Chain<io::Cursor<Vec<u8>>, R>;

/// Reads the first line of `reader` (at most 1 MiB of it) and returns it together with a
/// reader that yields the whole input again, so that detection does not consume anything.
pub(crate) fn peek_first_line<R: BufRead>(mut reader: R) -> io::Result<(Vec<u8>, Replay<R>)> {
    let mut first = Vec::new();
    (&mut reader).take(1 << 20).read_until(b'\n', &mut first)?;
    let head = first.clone();
    Ok((head, io::Cursor::new(first).chain(reader)))
}

/// The one-line message of a GCX1 error: its code, position and text.
pub(crate) fn gcx1_message(e: &agentwire_gcx1::Error) -> String {
    e.to_string()
}

// ---------------------------------------------------------------------------------------
// GCX1

/// The GCX1 tool name when `--tool` is not given.
pub(crate) const DEFAULT_TOOL: &str = agentwire_gcx1::DEFAULT_TOOL;

/// `value` as GCX1 under `tool` (default [`DEFAULT_TOOL`]): for the tools the crate knows
/// (Gortex's), in the shape of their layouts; for any other, the shape-aware encoding.
/// Nothing is written that a decoder with `limits` would refuse.
pub(crate) fn encode_gcx1(
    tool: Option<&str>,
    value: &Value,
    limits: agentwire_gcx1::Limits,
) -> Result<String, CliError> {
    agentwire_gcx1::Options::new()
        .tool(tool.unwrap_or(DEFAULT_TOOL))
        .limits(limits)
        .encode_any(value)
        .map_err(|e| CliError::Encode {
            format: "GCX1",
            message: gcx1_message(&e),
        })
}

/// `value` as a GCF generic-profile payload (the current spec, canonical).
pub(crate) fn encode_gcf(value: &Value) -> Result<String, CliError> {
    encode_gcf_with(value, &agentwire_gcf::EncoderOptions::new())
}

/// `value` as a GCF generic-profile payload written with `options`.
pub(crate) fn encode_gcf_with(
    value: &Value,
    options: &agentwire_gcf::EncoderOptions,
) -> Result<String, CliError> {
    options.to_string(value).map_err(|e| CliError::Encode {
        format: "GCF",
        message: e.to_string(),
    })
}

/// `value` in the GCF graph model, and how many scores the wire's two decimals will round.
///
/// Fails when the value is not a graph (`{tool, tokenBudget, tokensUsed, packRoot, symbols,
/// edges}` in camelCase, symbols `{qualifiedName, kind, score, provenance, distance}`, edges
/// `{source, target, edgeType}`) or has members the model has no place for.
pub(crate) fn graph_of(value: &Value) -> Result<(agentwire_gcf::Graph, usize), CliError> {
    let misfit = |message: String| CliError::Shape {
        target: "the GCF graph model".to_owned(),
        message,
    };
    if value.get("symbols").and_then(Value::as_array).is_none() {
        return Err(misfit(
            "/symbols: missing (a graph has an array of symbols)".into(),
        ));
    }
    let graph: agentwire_gcf::Graph =
        serde_json::from_value(value.clone()).map_err(|e| misfit(e.to_string()))?;
    let back = serde_json::to_value(&graph).map_err(|e| misfit(e.to_string()))?;
    if let Some(loss) = first_loss(&without_sentinels(value), &back) {
        return Err(misfit(loss));
    }
    let mut rounded = graph.clone();
    rounded.round_scores();
    let changed = graph
        .symbols
        .iter()
        .zip(&rounded.symbols)
        .filter(|(a, b)| a.score != b.score)
        .count();
    Ok((graph, changed))
}

/// The graph without the reference implementations' "not given" values (`""` for `tool`,
/// `packRoot` and an edge's `status`, `0` for `tokenBudget` and `tokensUsed`), which the
/// model reads as absent: leaving them out loses nothing.
fn without_sentinels(value: &Value) -> Value {
    let mut value = value.clone();
    let empty = |v: Option<&Value>, zero: bool| match v {
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Number(n)) => zero && n.as_u64() == Some(0),
        _ => false,
    };
    if let Value::Object(map) = &mut value {
        for (key, zero) in [
            ("tool", false),
            ("packRoot", false),
            ("tokenBudget", true),
            ("tokensUsed", true),
        ] {
            if empty(map.get(key), zero) {
                map.remove(key);
            }
        }
        if let Some(Value::Array(edges)) = map.get_mut("edges") {
            for edge in edges {
                if let Value::Object(edge) = edge {
                    if empty(edge.get("status"), false) {
                        edge.remove("status");
                    }
                }
            }
        }
    }
    value
}

/// A graph as a GCF graph-profile payload.
pub(crate) fn encode_gcf_graph(graph: &agentwire_gcf::Graph) -> Result<String, CliError> {
    agentwire_gcf::encode_graph(graph).map_err(|e| CliError::Encode {
        format: "GCF (graph profile)",
        message: e.to_string(),
    })
}

/// `value` as TOON, with the reference crate's default options.
pub(crate) fn encode_toon(value: &Value) -> Result<String, CliError> {
    toon_format::encode_default(value).map_err(|e| CliError::Encode {
        format: "TOON",
        message: e.to_string(),
    })
}

/// A GCF decoding error as the command reports it: a delta or an `unchanged` reply given where
/// a value or a snapshot is read (the header line `header` says which) is a change to a
/// snapshot, and the library's message names its API where the command's names the command
/// that reads it; any other error as the library gives it (code, line, column, message).
pub(crate) fn gcf_error(header: &str, e: &agentwire_gcf::Error) -> String {
    let header = header.lines().next().unwrap_or("");
    let change = ["delta", "unchanged"]
        .into_iter()
        .find(|field| header.split(' ').any(|f| f == format!("{field}=true")));
    match change {
        Some(field) if e.kind() == agentwire_gcf::ErrorKind::ProfileMismatch => {
            let hint = agentwire_gcf::Error::new(
                e.kind(),
                format!(
                    "this is a {field}=true payload, a change to a snapshot rather than a value: \
                     apply it to its base with `agentwire gcf apply BASE DELTA`"
                ),
            );
            match e.position() {
                Some(at) => hint.with_position(at),
                None => hint,
            }
            .to_string()
        }
        _ => e.to_string(),
    }
}

/// Decodes a GCF payload (either profile, by its header) with `decoder`'s options (spec and
/// limits), reading `reader` a line at a time.
pub(crate) fn decode_gcf_with<R: Read>(
    first_line: &[u8],
    reader: R,
    what: &str,
    decoder: &agentwire_gcf::DecoderOptions,
) -> Result<Value, CliError> {
    let failed = |message: String| CliError::Decode {
        what: what.to_owned(),
        format: "GCF",
        message,
    };
    let header = String::from_utf8_lossy(first_line);
    let message = |e: agentwire_gcf::Error| gcf_error(&header, &e);
    match agentwire_gcf::profile(&header).map_err(|e| failed(e.to_string()))? {
        agentwire_gcf::Profile::Graph => {
            let graph = decode_graph_with(first_line, reader, what, decoder)?;
            serde_json::to_value(&graph).map_err(|e| failed(e.to_string()))
        }
        _ => decoder.from_reader(reader).map_err(|e| failed(message(e))),
    }
}

/// Whether the GCF payload whose first line is `first_line` is a graph payload.
pub(crate) fn is_graph(first_line: &[u8]) -> bool {
    agentwire_gcf::profile(&String::from_utf8_lossy(first_line)).ok()
        == Some(agentwire_gcf::Profile::Graph)
}

/// Decodes a GCF graph payload with `decoder`'s options, parsing `reader` a line at a time
/// (memory: the line and the graph).
pub(crate) fn decode_graph_with<R: Read>(
    first_line: &[u8],
    reader: R,
    what: &str,
    decoder: &agentwire_gcf::DecoderOptions,
) -> Result<agentwire_gcf::Graph, CliError> {
    decoder
        .decode_graph_reader(reader)
        .map_err(|e| CliError::Decode {
            what: what.to_owned(),
            format: "GCF",
            message: gcf_error(&String::from_utf8_lossy(first_line), &e),
        })
}

/// Decodes a GCX1 payload (ours, or any Gortex writes) into the JSON value it was written
/// from, streaming from `reader`, with `limits`.
pub(crate) fn decode_gcx1_with<R: Read>(
    reader: R,
    what: &str,
    limits: agentwire_gcx1::Limits,
) -> Result<Value, CliError> {
    agentwire_gcx1::Options::new()
        .limits(limits)
        .read_payload(reader)
        .map(|payload| payload.value)
        .map_err(|e| CliError::Decode {
            what: what.to_owned(),
            format: "GCX1",
            message: gcx1_message(&e),
        })
}

/// Decodes TOON text (strict, as the reference decoder's defaults).
pub(crate) fn decode_toon(text: &str, what: &str) -> Result<Value, CliError> {
    toon_format::decode_default(text).map_err(|e| CliError::Decode {
        what: what.to_owned(),
        format: "TOON",
        message: e.to_string(),
    })
}

/// Reads JSON from `reader`: numbers exact, duplicate member names an error (see
/// [`crate::json`]).
pub(crate) fn read_json<R: Read>(reader: R, what: &str) -> Result<Value, CliError> {
    crate::json::read(reader, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats_by_their_first_line() {
        assert_eq!(detect(b"GCF profile=generic\n"), Format::Gcf);
        assert_eq!(detect(b"GCF\n"), Format::Gcf);
        assert_eq!(detect(b"GCX1 tool=t fields=a\n"), Format::Gcx1);
        assert_eq!(detect(b"GCX2 tool=t fields=a\n"), Format::Gcx1);
        assert_eq!(detect(b"{\"a\": 1}"), Format::Json);
        assert_eq!(detect(b"  [1, 2]\n"), Format::Json);
        assert_eq!(detect(b"[]"), Format::Json);
        assert_eq!(detect(b"\"text\""), Format::Json);
        assert_eq!(detect(b"[3]: a,b,c\n"), Format::Toon);
        assert_eq!(detect(b"[2]{id,name}:\n"), Format::Toon);
        assert_eq!(detect(b"[2|]: a|b\n"), Format::Toon);
        assert_eq!(detect(b"name: Ada\n"), Format::Toon);
        assert_eq!(detect(b""), Format::Toon);
    }

    #[test]
    fn graphs_may_use_the_reference_sentinels_for_absent_values() {
        let graph = serde_json::json!({
            "tool": "", "tokenBudget": 0, "tokensUsed": 0, "packRoot": "",
            "symbols": [
                {"qualifiedName": "p.A", "kind": "function", "score": 0.5, "provenance": "lsp"},
                {"qualifiedName": "p.B", "kind": "function", "score": 0.125, "provenance": "lsp"}
            ],
            "edges": [{"source": "p.A", "target": "p.B", "edgeType": "calls", "status": ""}]
        });
        let (typed, rounded) = graph_of(&graph).expect("fits");
        assert_eq!((typed.tool, typed.symbols.len(), rounded), (None, 2, 1));
        let lossy = serde_json::json!({"symbols": [], "note": "dropped"});
        assert!(graph_of(&lossy).is_err());
    }

    #[test]
    fn gcx1_uses_the_tool_name() {
        let value = serde_json::json!({"results": [{"id": "a"}, {"id": "b"}], "total": 2});
        let text = encode_gcx1(Some("search_symbols"), &value, Default::default()).unwrap();
        assert!(
            text.starts_with("GCX1 tool=search_symbols fields=id total=2\n"),
            "{text}"
        );
        let back =
            decode_gcx1_with(text.as_bytes(), "-", agentwire_gcx1::Limits::default()).unwrap();
        assert_eq!(back, value);
        assert!(encode_gcx1(None, &value, Default::default())
            .unwrap()
            .starts_with("GCX1 tool=response.results "));
    }
}
