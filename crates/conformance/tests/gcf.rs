//! Replays the upstream GCF suites (v3.1.0 by `Spec::V3_1`, v3.5.3 by the current spec) and
//! our own GCF suites against `agentwire-gcf`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test gcf -- numbers/`.

use agentwire_conformance::gcf::{
    self, DecodeOptions, EncodeOptions, GcfCodec, PackRoot, StreamOptions,
};
use agentwire_conformance::{find_workspace_root, CodecError, Suite};
use agentwire_gcf::{Profile, Spec};
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

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

/// The adapter from the runner's JSON world to `agentwire-gcf`, reading and writing by one
/// spec version (each suite pins its own).
struct AgentwireGcf {
    spec: Spec,
}

impl AgentwireGcf {
    /// The adapter for a suite's version: `3.1` (the v3.1.0 suite and ours), else the current
    /// spec.
    fn for_version(version: Option<&str>) -> Self {
        AgentwireGcf {
            spec: match version {
                Some("3.1") | None => Spec::V3_1,
                Some(other) => other.parse().unwrap_or(Spec::LATEST),
            },
        }
    }

    fn decoder(&self) -> agentwire_gcf::DecoderOptions {
        agentwire_gcf::DecoderOptions::new().spec(self.spec)
    }

    /// The decoder with a fixture's options.
    fn decoder_with(&self, options: &DecodeOptions) -> agentwire_gcf::DecoderOptions {
        let mut decoder = self.decoder();
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
        decoder
    }
}

/// A keyed set of a fixture: `{key, fields, rows, name?}`.
fn keyed_set(value: &Value) -> Result<agentwire_gcf::KeyedSet, CodecError> {
    let text = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let fields: Vec<String> =
        serde_json::from_value(value.get("fields").cloned().unwrap_or_default())
            .map_err(|e| CodecError::message(format!("keyed set fields: {e}")))?;
    let rows: Vec<Map<String, Value>> =
        serde_json::from_value(value.get("rows").cloned().unwrap_or_default())
            .map_err(|e| CodecError::message(format!("keyed set rows: {e}")))?;
    let mut set = agentwire_gcf::KeyedSet::new(text("name"), text("key"), fields);
    set.rows = rows;
    Ok(set)
}

/// A generic delta of a fixture (camelCase, with `deltaTokens` and `fullTokens`).
fn generic_delta(value: &Value) -> Result<agentwire_gcf::GenericDelta, CodecError> {
    let text = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let rows = |name: &str| -> Result<Vec<Map<String, Value>>, CodecError> {
        serde_json::from_value(value.get(name).cloned().unwrap_or(Value::Array(Vec::new())))
            .map_err(|e| CodecError::message(format!("delta {name}: {e}")))
    };
    let mut delta = agentwire_gcf::GenericDelta::default();
    delta.tool = Some(text("tool")).filter(|t| !t.is_empty());
    delta.key = text("key");
    delta.fields = serde_json::from_value(value.get("fields").cloned().unwrap_or_default())
        .map_err(|e| CodecError::message(format!("delta fields: {e}")))?;
    delta.base_root = text("baseRoot");
    delta.new_root = text("newRoot");
    delta.added = rows("added")?;
    delta.changed = rows("changed")?;
    delta.removed = value
        .get("removed")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let count = |name: &str| value.get(name).and_then(Value::as_u64);
    if let (Some(delta_tokens), Some(full_tokens)) = (count("deltaTokens"), count("fullTokens")) {
        delta.set_token_counts(delta_tokens, full_tokens);
    }
    Ok(delta)
}

impl GcfCodec for AgentwireGcf {
    fn encode(&self, value: &Value) -> Result<String, CodecError> {
        // Each suite pins its version's bytes.
        agentwire_gcf::EncoderOptions::new()
            .spec(self.spec)
            .to_string(value)
            .map_err(codec_error)
    }

    fn decode(&self, text: &str) -> Result<Value, CodecError> {
        self.decoder().from_str(text).map_err(codec_error)
    }

    fn encode_graph(&self, graph: &Value) -> Result<String, CodecError> {
        agentwire_gcf::encode_graph(&graph_of(graph)?).map_err(codec_error)
    }

    fn decode_graph(&self, text: &str) -> Result<Value, CodecError> {
        json_of(self.decoder().decode_graph(text).map_err(codec_error)?)
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
                Ok(text) => self
                    .decoder()
                    .decode_payload(text)
                    .map(drop)
                    .map_err(codec_error),
                // Not UTF-8: the decoder reports where.
                Err(_) => self
                    .decoder()
                    .decode_graph_slice(input)
                    .map(drop)
                    .map_err(codec_error),
            },
            Ok(Err(error)) => Err(codec_error(error)),
            // Generic, or a header that is not UTF-8 (the decoder reports where).
            _ => self
                .decoder()
                .from_slice::<IgnoredAny>(input)
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
        parsed.encode_with(self.spec).map_err(codec_error)
    }

    fn apply_delta(&self, wire: &str, base: &Value) -> Result<Value, CodecError> {
        let delta = self.decoder().decode_delta(wire).map_err(codec_error)?;
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
        // Every payload is read twice, from memory and a line at a time from a reader, by
        // two decoders that must agree on it (the graph, or the error code and position).
        let mut decoder = agentwire_gcf::SessionDecoder::with_options(self.decoder());
        let mut reader = agentwire_gcf::SessionDecoder::with_options(self.decoder());
        payloads
            .iter()
            .map(|text| {
                let whole = decoder.decode(text);
                let streamed =
                    reader.decode_reader(std::io::BufReader::with_capacity(1, text.as_bytes()));
                let agree = match (&whole, &streamed) {
                    (Ok(a), Ok(b)) => a == b,
                    (Err(a), Err(b)) => (a.code(), a.position()) == (b.code(), b.position()),
                    _ => false,
                };
                if !agree {
                    return Err(CodecError::message(format!(
                        "SessionDecoder::decode_reader differs from decode: {streamed:?} \
                         against {whole:?}"
                    )));
                }
                json_of(whole.map_err(codec_error)?)
            })
            .collect()
    }

    fn encode_delta_between(&self, base: &Value, new: &Value) -> Result<String, CodecError> {
        agentwire_gcf::Delta::between_with(&graph_of(base)?, &graph_of(new)?, self.spec)
            .and_then(|delta| delta.encode_with(self.spec))
            .map_err(codec_error)
    }

    fn encode_stream(&self, graph: &Value) -> Result<String, CodecError> {
        self.encode_stream_with(graph, &StreamOptions::default())
    }

    fn encode_stream_with(
        &self,
        graph: &Value,
        options: &StreamOptions,
    ) -> Result<String, CodecError> {
        let graph = graph_of(graph)?;
        let header = agentwire_gcf::StreamHeader {
            tool: graph.tool.clone(),
            token_budget: graph.token_budget,
            tokens_used: graph.tokens_used,
            pack_root: graph.pack_root.clone(),
        };
        let mut out = Vec::new();
        let mut stream = agentwire_gcf::GraphStreamEncoder::with_name_index(&mut out, &header)
            .map_err(codec_error)?
            .spec(self.spec)
            .labeled_counts(options.labeled_trailer_counts);
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
        let mut encoder = agentwire_gcf::EncoderOptions::new().spec(self.spec);
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
        self.decoder_with(options)
            .from_str(text)
            .map_err(codec_error)
    }

    fn decode_rows(&self, text: &str, options: &DecodeOptions) -> Result<Vec<Value>, CodecError> {
        let mut reader = self
            .decoder_with(options)
            .row_reader(text.as_bytes())
            .map_err(codec_error)?;
        reader
            .values()
            .collect::<Result<_, _>>()
            .map_err(codec_error)
    }

    fn generic_pack_root(&self, set: &Value) -> Result<String, CodecError> {
        keyed_set(set)?.pack_root().map_err(codec_error)
    }

    fn encode_generic_delta(&self, delta: &Value) -> Result<String, CodecError> {
        generic_delta(delta)?.encode().map_err(codec_error)
    }

    fn apply_generic_delta(
        &self,
        base: &Value,
        delta: &Value,
        expected_new_root: &str,
    ) -> Result<String, CodecError> {
        let mut delta = generic_delta(delta)?;
        delta.new_root = expected_new_root.to_owned();
        let set = delta.apply(&keyed_set(base)?).map_err(codec_error)?;
        set.pack_root().map_err(codec_error)
    }

    fn apply_generic_delta_wire(
        &self,
        wire: &str,
        base: &Value,
        expected_new_root: &str,
    ) -> Result<String, CodecError> {
        let delta = self
            .decoder()
            .decode_generic_delta(wire)
            .map_err(codec_error)?;
        let set = delta.apply(&keyed_set(base)?).map_err(codec_error)?;
        let root = set.pack_root().map_err(codec_error)?;
        if root != expected_new_root {
            return Err(CodecError::new(
                "root_mismatch",
                format!("the applied set hashes to {root}, expected {expected_new_root}"),
            ));
        }
        Ok(root)
    }

    fn generic_delta_session(
        &self,
        base: &Value,
        tool: &str,
        policy: &Value,
        updates: &[Value],
    ) -> Result<Value, CodecError> {
        let policy = match policy.get("mode").and_then(Value::as_str) {
            Some("fixedN") => {
                let n = policy.get("n").and_then(Value::as_u64).unwrap_or(0);
                agentwire_gcf::Reanchor::Every(usize::try_from(n).unwrap_or(usize::MAX))
            }
            Some("sizeGuard") => agentwire_gcf::Reanchor::SizeGuard,
            other => {
                return Err(CodecError::message(format!(
                    "unknown re-anchor policy {other:?}"
                )))
            }
        };
        let tool = Some(tool.to_owned()).filter(|t| !t.is_empty());
        let mut session = agentwire_gcf::GenericSession::new(keyed_set(base)?, tool, policy)
            .map_err(codec_error)?;
        let initial = session.full().map_err(codec_error)?;
        let mut emissions = Vec::new();
        for update in updates {
            let emission = session.next(keyed_set(update)?).map_err(codec_error)?;
            emissions.push(serde_json::json!({"isFull": emission.full, "wire": emission.text}));
        }
        Ok(serde_json::json!({"initialFull": initial, "emissions": emissions}))
    }
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    let mut harness = gcf::versioned_harness(|version| {
        Box::new(AgentwireGcf::for_version(version)) as Box<dyn GcfCodec>
    });
    for suite in gcf::upstream_suites(&root) {
        harness = harness.suite(suite);
    }
    harness
        // Our own suites: v3.1 (as written), and the current spec's additions.
        .suite(Suite::new("gcf", root.join("conformance/gcf")).version("3.1"))
        .suite(Suite::new("gcf-graph", root.join("conformance/gcf-graph")).version("3.1"))
        .run()
}
