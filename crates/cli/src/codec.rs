//! The formats the command converts between, behind one interface: detection by header,
//! JSON values in and out, and the GCX1 per-tool layouts by tool name.

use std::io::{self, BufRead, Read};

use agentwire_gcx1::Layout;
use serde::de::DeserializeOwned;
use serde::Serialize;
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
/// `[2]{a,b}:`); TOON otherwise (TOON has no header).
pub(crate) fn detect(first_line: &[u8]) -> Format {
    let line = first_line
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(first_line);
    if line.starts_with(b"GCF ") || line.trim_ascii_end() == b"GCF" {
        return Format::Gcf;
    }
    if line.starts_with(b"GCX") {
        return Format::Gcx1;
    }
    let trimmed = line.trim_ascii_start();
    match trimmed.first() {
        Some(b'{' | b'"') => Format::Json,
        Some(b'[') if !is_toon_array_header(trimmed) => Format::Json,
        _ => Format::Toon,
    }
}

/// `[N]`, `[N|]` or `[N<TAB>]`, optionally `{fields}`, then `:`.
fn is_toon_array_header(line: &[u8]) -> bool {
    let rest = &line[1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    let mut rest = &rest[digits..];
    if let Some(r) = rest.strip_prefix(b"|").or_else(|| rest.strip_prefix(b"\t")) {
        rest = r;
    }
    let Some(mut rest) = rest.strip_prefix(b"]") else {
        return false;
    };
    if rest.first() == Some(&b'{') {
        match rest.iter().position(|&b| b == b'}') {
            Some(end) => rest = &rest[end + 1..],
            None => return false,
        }
    }
    rest.first() == Some(&b':')
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

/// The one-line message of a codec error, without the codec's own `gcx1: ` prefix.
pub(crate) fn gcx1_message(e: &agentwire_gcx1::Error) -> String {
    let text = e.to_string();
    text.strip_prefix("gcx1: ").unwrap_or(&text).to_owned()
}

// ---------------------------------------------------------------------------------------
// GCX1 per-tool layouts

/// The tool (or section) names with a GCX1 per-tool layout, as `--tool` accepts them.
pub(crate) const LAYOUT_TOOLS: &[&str] = &[
    "search_symbols",
    "get_symbol_source",
    "batch_symbols",
    "find_usages",
    "get_file_summary",
    "get_callers",
    "get_call_chain",
    "get_dependencies",
    "get_dependents",
    "find_implementations",
    "get_editing_context",
    "smart_context",
    "analyze.dead_code",
    "analyze.hotspots",
    "analyze.cycles",
    "contracts.list",
    "contracts.orphans",
];

const GRAPH_TOOLS: &[&str] = &[
    "get_callers",
    "get_call_chain",
    "get_dependencies",
    "get_dependents",
    "find_implementations",
];

/// Encoding and decoding with one layout, type-erased.
#[derive(Clone, Copy)]
pub(crate) struct LayoutCodec {
    /// The section names the payload starts with and the fields that section must declare.
    first_section: fn(&str) -> bool,
    required_fields: &'static [&'static str],
    encode: fn(&str, &Value) -> Result<String, CliError>,
    decode_str: fn(&str) -> agentwire_gcx1::Result<Value>,
    decode_reader: fn(&mut dyn BufRead) -> agentwire_gcx1::Result<Value>,
}

fn codec<L: Layout + Serialize + DeserializeOwned>(first_section: fn(&str) -> bool) -> LayoutCodec {
    LayoutCodec {
        first_section,
        required_fields: L::FIELDS,
        encode: encode_as::<L>,
        decode_str: |text| to_json(&L::from_gcx(text)?),
        decode_reader: |reader| to_json(&L::read_gcx(reader)?),
    }
}

fn to_json<T: Serialize>(value: &T) -> agentwire_gcx1::Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| agentwire_gcx1::ErrorKind::Serialize(e.to_string()).into())
}

/// The layout of `tool` (a name of [`LAYOUT_TOOLS`]).
pub(crate) fn layout(tool: &str) -> Option<LayoutCodec> {
    use agentwire_gcx1 as g;
    Some(match tool {
        "search_symbols" => codec::<g::SearchSymbols>(|s| s == "search_symbols"),
        "get_symbol_source" => codec::<g::SymbolSource>(|s| s == "get_symbol_source"),
        "batch_symbols" => codec::<g::BatchSymbols>(|s| s == "batch_symbols"),
        "find_usages" => codec::<g::FindUsages>(|s| s == "find_usages"),
        "get_file_summary" => codec::<g::FileSummary>(|s| s == "get_file_summary"),
        "get_callers"
        | "get_call_chain"
        | "get_dependencies"
        | "get_dependents"
        | "find_implementations" => codec::<g::Graph>(|s| {
            s.strip_suffix(".nodes")
                .is_some_and(|tool| GRAPH_TOOLS.contains(&tool))
        }),
        "get_editing_context" => codec::<g::EditingContext>(|s| s == "get_editing_context.target"),
        "smart_context" => codec::<g::SmartContext>(|s| s == "smart_context.task"),
        "analyze.dead_code" => codec::<g::DeadCode>(|s| s == "analyze.dead_code"),
        "analyze.hotspots" => codec::<g::Hotspots>(|s| s == "analyze.hotspots"),
        "analyze.cycles" => codec::<g::Cycles>(|s| s == "analyze.cycles"),
        "contracts.list" => codec::<g::ContractsList>(|s| s == "contracts.list"),
        "contracts.orphans" => codec::<g::ContractOrphans>(|s| s == "contracts.orphans"),
        _ => return None,
    })
}

/// The layout that reads a payload whose first header line is `header`: its section name
/// must be a layout's and it must declare that layout's fields. Anything else (a generic
/// fallback payload, say, even for a layout's tool name) is read by the generic fallback.
pub(crate) fn layout_of_header(header: &str) -> Option<LayoutCodec> {
    let mut section = None;
    let mut fields: Vec<&str> = Vec::new();
    for token in header.trim_end_matches(['\n', '\r']).split(' ').skip(1) {
        if let Some(tool) = token.strip_prefix("tool=") {
            section = Some(tool);
        } else if let Some(list) = token.strip_prefix("fields=") {
            fields = list.split(',').collect();
        }
    }
    let section = section?;
    let tool = section.strip_suffix(".nodes").unwrap_or(section);
    let tool = match tool {
        "get_editing_context.target" => "get_editing_context",
        "smart_context.task" => "smart_context",
        other => other,
    };
    let codec = layout(tool)?;
    let fits =
        (codec.first_section)(section) && codec.required_fields.iter().all(|f| fields.contains(f));
    fits.then_some(codec)
}

impl LayoutCodec {
    /// Encodes `value` (which must fit the layout exactly) for `tool`.
    pub(crate) fn encode(&self, tool: &str, value: &Value) -> Result<String, CliError> {
        (self.encode)(tool, value)
    }

    /// Decodes a whole payload of this layout to its JSON.
    pub(crate) fn decode_str(&self, text: &str) -> agentwire_gcx1::Result<Value> {
        (self.decode_str)(text)
    }

    /// Decodes a whole payload of this layout, streamed.
    pub(crate) fn decode_reader(&self, reader: &mut dyn BufRead) -> agentwire_gcx1::Result<Value> {
        (self.decode_reader)(reader)
    }
}

/// `value` as the typed response of the layout `L`, or why it does not fit: a member the
/// layout has no place for, a missing or mistyped member, or a value the layout would change.
fn encode_as<L: Layout + Serialize + DeserializeOwned>(
    tool: &str,
    value: &Value,
) -> Result<String, CliError> {
    let misfit = |message: String| CliError::Shape {
        target: format!("the GCX1 `{tool}` layout"),
        message,
    };
    let typed: L = serde_json::from_value(value.clone()).map_err(|e| misfit(e.to_string()))?;
    let back = serde_json::to_value(&typed).map_err(|e| misfit(e.to_string()))?;
    if let Some(loss) = first_loss(value, &back) {
        return Err(misfit(loss));
    }
    if GRAPH_TOOLS.contains(&tool) && value.get("tool").and_then(Value::as_str) != Some(tool) {
        return Err(misfit(format!(
            "/tool: the response says {}, not {tool:?}",
            value.get("tool").unwrap_or(&Value::Null)
        )));
    }
    typed.to_gcx().map_err(|e| CliError::Encode {
        format: "GCX1",
        message: gcx1_message(&e),
    })
}

// ---------------------------------------------------------------------------------------
// Encoding and decoding JSON values

/// The GCX1 tool name of the generic fallback when `--tool` is not given.
pub(crate) const DEFAULT_TOOL: &str = "response";

/// `value` as GCX1: the layout of `tool` when it has one, otherwise the generic fallback
/// under `tool` (default [`DEFAULT_TOOL`]).
pub(crate) fn encode_gcx1(tool: Option<&str>, value: &Value) -> Result<String, CliError> {
    let tool = tool.unwrap_or(DEFAULT_TOOL);
    match layout(tool) {
        Some(codec) => codec.encode(tool, value),
        None => agentwire_gcx1::encode_any(tool, value).map_err(|e| CliError::Encode {
            format: "GCX1",
            message: gcx1_message(&e),
        }),
    }
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

/// Decodes a GCF payload (either profile) whose first line is `first_line`, from `reader`
/// (which yields the whole payload, first line included).
pub(crate) fn decode_gcf<R: Read>(
    first_line: &[u8],
    reader: R,
    what: &str,
    spec: agentwire_gcf::Spec,
) -> Result<Value, CliError> {
    let decoder = agentwire_gcf::DecoderOptions::new().spec(spec);
    let failed = |message: String| CliError::Decode {
        what: what.to_owned(),
        format: "GCF",
        message,
    };
    let header = String::from_utf8_lossy(first_line);
    match agentwire_gcf::profile(&header).map_err(|e| failed(e.to_string()))? {
        agentwire_gcf::Profile::Graph => {
            let graph = decoder
                .decode_graph_reader(reader)
                .map_err(|e| failed(e.to_string()))?;
            serde_json::to_value(&graph).map_err(|e| failed(e.to_string()))
        }
        _ => decoder
            .from_reader(reader)
            .map_err(|e| failed(e.to_string())),
    }
}

/// Decodes a GCX1 payload whose first line is `first_line`: by its layout when the first
/// section is a layout's, otherwise by the generic fallback. Streams from `reader`.
pub(crate) fn decode_gcx1<R: BufRead>(
    first_line: &[u8],
    mut reader: R,
    what: &str,
) -> Result<Value, CliError> {
    let failed = |e: agentwire_gcx1::Error| CliError::Decode {
        what: what.to_owned(),
        format: "GCX1",
        message: gcx1_message(&e),
    };
    match layout_of_header(&String::from_utf8_lossy(first_line)) {
        Some(codec) => codec.decode_reader(&mut reader).map_err(failed),
        None => agentwire_gcx1::decode_any_reader(reader)
            .map(|(_, value)| value)
            .map_err(failed),
    }
}

/// Decodes TOON text (strict, as the reference decoder's defaults).
pub(crate) fn decode_toon(text: &str, what: &str) -> Result<Value, CliError> {
    toon_format::decode_default(text).map_err(|e| CliError::Decode {
        what: what.to_owned(),
        format: "TOON",
        message: e.to_string(),
    })
}

/// Reads JSON from `reader` without first reading it into a string.
pub(crate) fn read_json<R: Read>(reader: R, what: &str) -> Result<Value, CliError> {
    serde_json::from_reader(reader).map_err(|source| match source.io_error_kind() {
        Some(_) => CliError::ReadInput {
            what: what.to_owned(),
            source: source.into(),
        },
        None => CliError::InvalidJson {
            what: what.to_owned(),
            source,
        },
    })
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
    fn every_layout_tool_has_a_layout_that_reads_its_own_header() {
        for tool in LAYOUT_TOOLS {
            assert!(layout(tool).is_some(), "{tool}");
        }
        assert!(layout("list_issues").is_none());
        let header = "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=1\n";
        assert!(layout_of_header(header).is_some());
        let fallback = "GCX1 tool=search_symbols fields=results,total,truncated types=jnb\n";
        assert!(layout_of_header(fallback).is_none());
        let graph = "GCX1 tool=get_dependents.nodes fields=id,kind,name,path,line total=0\n";
        assert!(layout_of_header(graph).is_some());
    }
}
