//! Replays the upstream GCF v3.1.0 suite and our own GCF suites against `agentwire-gcf`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test gcf -- numbers/`.

use agentwire_conformance::gcf::{self, DecodeOptions, EncodeOptions, GcfCodec, PackRoot};
use agentwire_conformance::{find_workspace_root, CodecError, Suite};
use agentwire_gcf::Profile;
use serde::de::IgnoredAny;
use serde_json::Value;

/// An `agentwire_gcf::Error` as the runner sees it: its spec code and its full message.
#[allow(clippy::needless_pass_by_value)] // the shape `map_err` wants
fn codec_error(error: agentwire_gcf::Error) -> CodecError {
    CodecError::new(error.code(), error.to_string())
}

/// A fixture's camelCase graph object, read into the typed model.
fn graph_of(value: &Value) -> Result<agentwire_gcf::Graph, CodecError> {
    serde_json::from_value(value.clone())
        .map_err(|e| CodecError::message(format!("not a graph object: {e}")))
}

/// The typed model back as JSON, in normal form: symbols and edges in canonical order (a
/// graph's order carries no meaning).
fn json_of(mut graph: agentwire_gcf::Graph) -> Result<Value, CodecError> {
    graph.sort_canonical();
    serde_json::to_value(&graph).map_err(|e| CodecError::message(format!("graph to JSON: {e}")))
}

/// The adapter from the runner's JSON world to `agentwire-gcf`.
struct AgentwireGcf;

impl GcfCodec for AgentwireGcf {
    fn encode(&self, value: &Value) -> Result<String, CodecError> {
        // These suites pin the v3.1 bytes.
        agentwire_gcf::EncoderOptions::new()
            .spec(agentwire_gcf::Spec::V3_1)
            .to_string(value)
            .map_err(codec_error)
    }

    fn decode(&self, text: &str) -> Result<Value, CodecError> {
        agentwire_gcf::DecoderOptions::new()
            .spec(agentwire_gcf::Spec::V3_1)
            .from_str(text)
            .map_err(codec_error)
    }

    fn encode_graph(&self, graph: &Value) -> Result<String, CodecError> {
        agentwire_gcf::encode_graph(&graph_of(graph)?).map_err(codec_error)
    }

    fn decode_graph(&self, text: &str) -> Result<Value, CodecError> {
        json_of(agentwire_gcf::decode_graph(text).map_err(codec_error)?)
    }

    fn normalize_graph(&self, graph: &Value) -> Result<Value, CodecError> {
        json_of(graph_of(graph)?)
    }

    fn validate(&self, input: &[u8]) -> Result<(), CodecError> {
        // Dispatch on the header's profile; header errors are the same for both profiles.
        let header_end = input
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(input.len());
        match std::str::from_utf8(&input[..header_end]).map(agentwire_gcf::profile) {
            Ok(Ok(Profile::Graph)) => match std::str::from_utf8(input) {
                Ok(text) => agentwire_gcf::decode_payload(text)
                    .map(drop)
                    .map_err(codec_error),
                // Not UTF-8: the decoder reports where.
                Err(_) => agentwire_gcf::decode_graph_slice(input)
                    .map(drop)
                    .map_err(codec_error),
            },
            Ok(Err(error)) => Err(codec_error(error)),
            // Generic, or a header that is not UTF-8 (the decoder reports where).
            _ => agentwire_gcf::from_slice::<IgnoredAny>(input)
                .map(drop)
                .map_err(codec_error),
        }
    }

    fn encode_session(&self, calls: &[Value]) -> Result<Vec<String>, CodecError> {
        let mut session = agentwire_gcf::Session::new();
        calls
            .iter()
            .map(|call| session.encode(&graph_of(call)?).map_err(codec_error))
            .collect()
    }

    fn encode_delta(&self, delta: &Value) -> Result<String, CodecError> {
        let mut parsed: agentwire_gcf::Delta = serde_json::from_value(delta.clone())
            .map_err(|e| CodecError::message(format!("not a delta object: {e}")))?;
        // The fixtures give the token counts; the header carries tokens= and savings=.
        if let (Some(tokens), Some(full)) = (parsed.tokens, delta.get("fullTokens")) {
            let full: u64 = serde_json::from_value(full.clone())
                .map_err(|e| CodecError::message(format!("fullTokens: {e}")))?;
            parsed.set_token_counts(tokens, full);
        }
        parsed.encode().map_err(codec_error)
    }

    fn apply_delta(&self, wire: &str, base: &Value) -> Result<Value, CodecError> {
        let delta = agentwire_gcf::Delta::decode(wire).map_err(codec_error)?;
        let applied = delta.apply(&graph_of(base)?).map_err(codec_error)?;
        // A snapshot is its symbols and edges.
        json_of(agentwire_gcf::Graph {
            symbols: applied.symbols,
            edges: applied.edges,
            ..agentwire_gcf::Graph::default()
        })
    }

    fn pack_root(&self, snapshot: &Value) -> Result<PackRoot, CodecError> {
        let graph = graph_of(snapshot)?;
        let bytes = agentwire_gcf::pack_root_bytes(&graph).map_err(codec_error)?;
        Ok(PackRoot {
            canonical_bytes: String::from_utf8(bytes)
                .map_err(|e| CodecError::message(format!("canonical bytes: {e}")))?,
            root: agentwire_gcf::pack_root(&graph).map_err(codec_error)?,
        })
    }

    fn decode_session(&self, payloads: &[String]) -> Vec<Result<Value, CodecError>> {
        let mut decoder = agentwire_gcf::SessionDecoder::new();
        payloads
            .iter()
            .map(|text| json_of(decoder.decode(text).map_err(codec_error)?))
            .collect()
    }

    fn encode_delta_between(&self, base: &Value, new: &Value) -> Result<String, CodecError> {
        agentwire_gcf::Delta::between(&graph_of(base)?, &graph_of(new)?)
            .and_then(|delta| delta.encode())
            .map_err(codec_error)
    }

    fn encode_stream(&self, graph: &Value) -> Result<String, CodecError> {
        let graph = graph_of(graph)?;
        let header = agentwire_gcf::StreamHeader {
            tool: graph.tool.clone(),
            token_budget: graph.token_budget,
            tokens_used: graph.tokens_used,
            pack_root: graph.pack_root.clone(),
        };
        let mut out = Vec::new();
        let mut stream = agentwire_gcf::GraphStreamEncoder::with_name_index(&mut out, &header)
            .map_err(codec_error)?;
        for symbol in &graph.symbols {
            stream.symbol(symbol).map_err(codec_error)?;
        }
        for edge in &graph.edges {
            stream.edge_named(edge).map_err(codec_error)?;
        }
        stream.finish().map_err(codec_error)?;
        String::from_utf8(out).map_err(|e| CodecError::message(format!("stream output: {e}")))
    }

    fn encode_with_options(
        &self,
        value: &Value,
        options: &EncodeOptions,
    ) -> Result<String, CodecError> {
        let mut encoder = agentwire_gcf::EncoderOptions::new().spec(agentwire_gcf::Spec::V3_1);
        if let Some(depth) = options.max_depth {
            encoder = encoder.max_depth(depth);
        }
        encoder.to_string(value).map_err(codec_error)
    }

    fn decode_with_options(
        &self,
        text: &str,
        options: &DecodeOptions,
    ) -> Result<Value, CodecError> {
        let mut decoder = agentwire_gcf::DecoderOptions::new().spec(agentwire_gcf::Spec::V3_1);
        if let Some(depth) = options.max_depth {
            decoder = decoder.max_depth(depth);
        }
        if let Some(elements) = options.max_elements {
            decoder = decoder.max_elements(elements);
        }
        if let Some(bytes) = options.max_line_length {
            decoder = decoder.max_line_length(bytes);
        }
        if let Some(fields) = options.max_fields {
            decoder = decoder.max_fields(fields);
        }
        if let Some(bytes) = options.max_input_size {
            decoder = decoder.max_input_size(Some(bytes));
        }
        if let Some(required) = options.require_trailer {
            decoder = decoder.require_trailer(required);
        }
        decoder.from_str(text).map_err(codec_error)
    }
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    gcf::harness(AgentwireGcf)
        .suite(gcf::upstream_suite(&root))
        .suite(Suite::new("gcf", root.join("conformance/gcf")))
        .suite(Suite::new("gcf-graph", root.join("conformance/gcf-graph")))
        .run()
}
