//! Replays our GCX1 suite (`conformance/gcx1/`) against `agentwire-gcx1`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test gcx1 -- any/`.

use std::io::BufReader;

use agentwire_conformance::gcx1::{
    self, DecodedSection, ErrorAt, Gcx1Codec, LimitsSpec, RowSpec, SectionSpec,
};
use agentwire_conformance::{find_workspace_root, CodecError};
use agentwire_gcx1 as gcx;
use agentwire_gcx1::{Cell, CellWriter, Layout};
use serde_json::{json, Number, Value};

/// The adapter from the runner's JSON world to `agentwire-gcx1`.
struct AgentwireGcx1;

fn error_at(e: &gcx::Error) -> ErrorAt {
    ErrorAt {
        error: CodecError::new(e.code(), e.to_string()),
        position: e.position().map(|p| (p.line, p.column)),
    }
}

fn fixture_error(message: impl Into<String>) -> ErrorAt {
    CodecError::message(message).into()
}

/// A fixture cell: what JSON can spell, plus the floats it cannot.
enum FixtureCell {
    Text(String),
    Integer(i128),
    Float(f64),
    Float32(f32),
    Bool(bool),
    Empty,
}

impl Cell for FixtureCell {
    fn write_cell(&self, out: &mut CellWriter<'_>) -> gcx::Result<()> {
        match self {
            FixtureCell::Text(text) => text.write_cell(out),
            FixtureCell::Integer(n) => n.write_cell(out),
            FixtureCell::Float(f) => out.write_f64(*f),
            FixtureCell::Float32(f) => out.write_f32(*f),
            FixtureCell::Bool(b) => b.write_cell(out),
            FixtureCell::Empty => Ok(()),
        }
    }
}

fn special_float(text: &str) -> Option<f64> {
    match text {
        "NaN" => Some(f64::NAN),
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn fixture_cell(value: &Value) -> Result<FixtureCell, ErrorAt> {
    Ok(match value {
        Value::String(s) => FixtureCell::Text(s.clone()),
        Value::Bool(b) => FixtureCell::Bool(*b),
        Value::Null => FixtureCell::Empty,
        Value::Number(n) => {
            let lexeme = n.to_string();
            if lexeme.contains(['.', 'e', 'E']) {
                FixtureCell::Float(
                    lexeme
                        .parse()
                        .map_err(|_| fixture_error(format!("bad float {lexeme}")))?,
                )
            } else {
                FixtureCell::Integer(
                    lexeme
                        .parse()
                        .map_err(|_| fixture_error(format!("bad integer {lexeme}")))?,
                )
            }
        }
        Value::Object(map) if map.len() == 1 => match (map.get("f32"), map.get("f64")) {
            (Some(Value::Number(n)), None) => FixtureCell::Float32(
                n.to_string()
                    .parse()
                    .map_err(|_| fixture_error(format!("bad f32 {n}")))?,
            ),
            (Some(Value::String(s)), None) => FixtureCell::Float32(
                special_float(s).ok_or_else(|| fixture_error(format!("bad f32 {s}")))? as f32,
            ),
            (None, Some(Value::String(s))) => FixtureCell::Float(
                special_float(s).ok_or_else(|| fixture_error(format!("bad f64 {s}")))?,
            ),
            _ => return Err(fixture_error(format!("unknown cell form {value}"))),
        },
        other => return Err(fixture_error(format!("unknown cell form {other}"))),
    })
}

fn limits(spec: &LimitsSpec) -> gcx::Limits {
    let mut limits = gcx::Limits::default();
    if let Some(n) = spec.max_line_length {
        limits = limits.with_max_line_length(n);
    }
    if let Some(n) = spec.max_fields {
        limits = limits.with_max_fields(n);
    }
    if let Some(n) = spec.max_meta {
        limits = limits.with_max_meta(n);
    }
    if let Some(n) = spec.max_padding {
        limits = limits.with_max_padding(n);
    }
    limits
}

fn decode_streaming(input: &[u8], limits: gcx::Limits) -> gcx::Result<Vec<gcx::Section>> {
    let mut decoder = gcx::Decoder::with_limits(BufReader::with_capacity(16, input), limits);
    let mut sections = Vec::new();
    while let Some(section) = decoder.read_section()? {
        sections.push(section);
    }
    Ok(sections)
}

fn from_json<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, ErrorAt> {
    serde_json::from_value(value.clone())
        .map_err(|e| fixture_error(format!("the input is not this layout's JSON form: {e}")))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, ErrorAt> {
    serde_json::to_value(value).map_err(|e| fixture_error(e.to_string()))
}

macro_rules! layouts {
    ($name:expr, $input:expr, $encode:ident, $($layout:literal => $t:ty),*) => {
        match $name {
            $($layout => layouts!(@one $t, $input, $encode),)*
            other => Err(fixture_error(format!("unknown layout `{other}`"))),
        }
    };
    (@one $t:ty, $input:expr, encode) => {{
        let value: $t = from_json($input)?;
        value.to_gcx().map_err(|e| error_at(&e))
    }};

    (@one $t:ty, $input:expr, decode) => {{
        let value = <$t>::from_gcx($input).map_err(|e| error_at(&e))?;
        to_json(&value).map(|v| v.to_string())
    }};
}

fn layout(name: &str, input: &Value, text: &str, encode: bool) -> Result<String, ErrorAt> {
    // The graph tools share one type; the layout's name is the tool.
    if let Some(tool) = gcx::GraphTool::from_name(name) {
        if encode {
            let mut graph: gcx::Graph = from_json(input)?;
            graph.tool = tool;
            return graph.to_gcx().map_err(|e| error_at(&e));
        }
        let graph = gcx::Graph::from_gcx(text).map_err(|e| error_at(&e))?;
        if graph.tool != tool {
            return Err(fixture_error(format!(
                "read a `{}` payload, not `{name}`",
                graph.tool.as_str()
            )));
        }
        return to_json(&graph).map(|v| v.to_string());
    }
    if encode {
        layouts!(name, input, encode,
            "search_symbols" => gcx::SearchSymbols,
            "get_symbol_source" => gcx::SymbolSource,
            "batch_symbols" => gcx::BatchSymbols,
            "find_usages" => gcx::FindUsages,
            "get_file_summary" => gcx::FileSummary,
            "get_editing_context" => gcx::EditingContext,
            "smart_context" => gcx::SmartContext,
            "analyze.dead_code" => gcx::DeadCode,
            "analyze.hotspots" => gcx::Hotspots,
            "analyze.cycles" => gcx::Cycles,
            "contracts.list" => gcx::ContractsList,
            "contracts.orphans" => gcx::ContractOrphans,
            "tool_definitions" => gcx::ToolDefinitions,
            "tool_request" => gcx::ToolRequest,
            "error" => gcx::ErrorEnvelope
        )
    } else {
        layouts!(name, text, decode,
            "search_symbols" => gcx::SearchSymbols,
            "get_symbol_source" => gcx::SymbolSource,
            "batch_symbols" => gcx::BatchSymbols,
            "find_usages" => gcx::FindUsages,
            "get_file_summary" => gcx::FileSummary,
            "get_editing_context" => gcx::EditingContext,
            "smart_context" => gcx::SmartContext,
            "analyze.dead_code" => gcx::DeadCode,
            "analyze.hotspots" => gcx::Hotspots,
            "analyze.cycles" => gcx::Cycles,
            "contracts.list" => gcx::ContractsList,
            "contracts.orphans" => gcx::ContractOrphans,
            "tool_definitions" => gcx::ToolDefinitions,
            "tool_request" => gcx::ToolRequest,
            "error" => gcx::ErrorEnvelope
        )
    }
}

impl Gcx1Codec for AgentwireGcx1 {
    fn encode(&self, sections: &[SectionSpec]) -> Result<String, ErrorAt> {
        let mut encoder = gcx::Encoder::new(Vec::new());
        for section in sections {
            let mut header = gcx::Header::new(&section.tool, section.fields.iter().cloned());
            header.meta = section.meta.clone();
            encoder.begin_section(&header).map_err(|e| error_at(&e))?;
            for row in &section.rows {
                match row {
                    RowSpec::Comment { comment } => encoder.write_comment(comment),
                    RowSpec::Cells(cells) => {
                        let cells = cells
                            .iter()
                            .map(fixture_cell)
                            .collect::<Result<Vec<_>, _>>()?;
                        encoder.write_row(&cells)
                    }
                }
                .map_err(|e| error_at(&e))?;
            }
        }
        let bytes = encoder.finish().map_err(|e| error_at(&e))?;
        String::from_utf8(bytes).map_err(|e| fixture_error(e.to_string()))
    }

    fn decode(&self, input: &[u8], spec: &LimitsSpec) -> Result<Vec<DecodedSection>, ErrorAt> {
        let limits = limits(spec);
        let streamed = decode_streaming(input, limits);
        let sections = match std::str::from_utf8(input) {
            Ok(text) => {
                let borrowed: gcx::Result<Vec<gcx::Section>> =
                    gcx::StrDecoder::with_limits(text, limits)
                        .sections()
                        .map(|s| s.map(|s| s.to_owned_section()))
                        .collect();
                match (&borrowed, &streamed) {
                    (Ok(a), Ok(b)) if a == b => {}
                    (Err(a), Err(b)) if a.code() == b.code() && a.position() == b.position() => {}
                    _ => {
                        return Err(fixture_error(format!(
                            "the streaming and borrowed decoders disagree: {streamed:?} vs {borrowed:?}"
                        )))
                    }
                }
                borrowed
            }
            Err(_) => streamed,
        };
        let sections = sections.map_err(|e| error_at(&e))?;
        Ok(sections
            .into_iter()
            .map(|s| DecodedSection {
                tool: s.header.tool,
                fields: s.header.fields,
                meta: s.header.meta,
                rows: s.rows,
            })
            .collect())
    }

    fn encode_any(&self, tool: &str, value: &Value) -> Result<String, ErrorAt> {
        gcx::encode_any(tool, value).map_err(|e| error_at(&e))
    }

    fn encode_any_limited(
        &self,
        tool: &str,
        value: &Value,
        spec: &LimitsSpec,
    ) -> Result<String, ErrorAt> {
        gcx::Options::new()
            .tool(tool)
            .limits(limits(spec))
            .encode_any(value)
            .map_err(|e| error_at(&e))
    }

    fn decode_any(&self, input: &str) -> Result<(String, Value), ErrorAt> {
        let options = gcx::Options::new();
        let borrowed = options.decode_payload(input);
        let streamed: gcx::Result<Value> =
            options.from_buf_reader(BufReader::with_capacity(16, input.as_bytes()));
        let validated = options.validate(input.as_bytes());
        match (&borrowed, &streamed, &validated) {
            (Ok(payload), Ok(value), Ok(())) if &payload.value == value => {}
            (Err(a), Err(b), Err(c))
                if a.code() == b.code()
                    && a.code() == c.code()
                    && a.position() == b.position()
                    && a.position() == c.position() => {}
            _ => {
                return Err(fixture_error(format!(
                    "the borrowed and streaming decoders and validate disagree: {borrowed:?}, \
                     {streamed:?}, {validated:?}"
                )))
            }
        }
        let payload = borrowed.map_err(|e| error_at(&e))?;
        Ok((payload.tool, payload.value))
    }

    fn encode_layout(&self, name: &str, value: &Value) -> Result<String, ErrorAt> {
        layout(name, value, "", true)
    }

    fn decode_layout(&self, name: &str, input: &str) -> Result<Value, ErrorAt> {
        let text = layout(name, &Value::Null, input, false)?;
        serde_json::from_str(&text).map_err(|e| fixture_error(e.to_string()))
    }

    fn check_call(
        &self,
        scope: &str,
        repo: Option<&Value>,
        workspace: &[String],
    ) -> Result<Value, ErrorAt> {
        let scope: gcx::Scope = scope.parse().map_err(|e: gcx::Error| error_at(&e))?;
        match gcx::check_call(scope, repo, workspace) {
            Ok(target) => {
                let mut value = json!({"scope": target.scope().as_str()});
                if let Some(repo) = target.to_argument() {
                    value["repo"] = repo;
                }
                Ok(value)
            }
            Err(e) => Err(ErrorAt {
                error: CodecError::new(e.code.as_str(), e.to_string()),
                position: None,
            }),
        }
    }

    fn parse_format(&self, input: &str) -> String {
        gcx::parse_format(input).as_str().to_owned()
    }

    fn format_float(&self, value: &Number, bits: u32) -> Result<String, ErrorAt> {
        let lexeme = value.to_string();
        let result = match bits {
            32 => gcx::format_f32(lexeme.parse().map_err(|_| fixture_error("bad f32"))?),
            64 => gcx::format_f64(lexeme.parse().map_err(|_| fixture_error("bad f64"))?),
            other => return Err(fixture_error(format!("bits must be 32 or 64, not {other}"))),
        };
        result.map_err(|e| error_at(&e))
    }
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    gcx1::harness(AgentwireGcx1).suite(gcx1::suite(&root)).run()
}
