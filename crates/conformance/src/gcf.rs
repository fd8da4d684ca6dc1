//! The GCF codec family: the fixture model of the upstream GCF suites (v3.1.0 and v3.5.3) and
//! its checks.
//!
//! The model is exactly the upstream one (see the suite's `SOURCE.md`), so that suite replays
//! unchanged:
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `encode` | `input` (JSON, or a camelCase graph object), `expected` (text) | bytes equal; for the generic profile, decoding `expected` also gives `input` back |
//! | `decode` | `input` (text), `expected` (JSON or graph object) | structural equality |
//! | `roundtrip` | `input`, `expected` | encode gives `expected`, decode gives `input` |
//! | `error` | `input` or `inputBase64`, `expectedError` | the decoder fails with that code |
//! | `session` | `calls: [{input, expected}]` | one session encodes every call's bytes |
//! | `delta` | `input` delta object, `expected` text | delta encoding gives the bytes |
//! | `delta` | `input` wire, `base_snapshot`, `base_root`, `new_root`, `expected_snapshot` | applying gives the snapshot; roots verify |
//! | `delta-verify` | `input` wire, `expectedError` | applying to the base fails with that code |
//! | `pack-root` | `input {symbols, edges}`, `canonicalBytes`, `expected` | canonical bytes and hash equal |
//!
//! Operations the v3.5.3 suite adds:
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `encode-error` | `input`, `expectedError` | generic encoding fails with that code |
//! | `roundtrip-wire` | `input` (text), `expected` (text) | decoding then encoding gives the bytes |
//! | `graph-stream-encode` | `input` graph, optional `options {labeledTrailerCounts}`, `expected` | streaming the graph gives the bytes |
//! | `generic-pack-root` | `input {key, fields, rows}`, `expected` | the keyed set's pack root |
//! | `generic-delta` | `input` delta object, `expected` | the delta's bytes |
//! | `generic-delta-verify` | `input {base, delta, expectedNewRoot}`, `expected` or `expectedError` | applying the delta gives that root, or fails |
//! | `generic-delta-decode` | `input {wire, base, expectedNewRoot}`, `expected` or `expectedError` | decoding and applying the wire gives that root, or fails |
//! | `generic-delta-session` | `input {base, tool, policy, updates}`, `expected {initialFull, emissions}` | one session emits those payloads |
//!
//! An `expectedError` matches the codec's error code, or (as the upstream runners match) a
//! part of its message: the keyed-map and generic-delta fixtures name phrases such as
//! `duplicate member key` and `already exists`. A suite declares the spec version it pins
//! ([`Suite::version`]): the runner asks the codec for that version, and from `3.6` on treats
//! `-0` and `0` as one number (spec v3.5.0).
//!
//! Operations of this project's own suites (`conformance/gcf-graph/`), beyond the upstream
//! model:
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `session-roundtrip` | `calls: [{input, expected}]` | one session encodes every call's bytes, and one session decoder rebuilds every call's graph from them |
//! | `session-decode` | `calls: [{input, expected? , expectedError?}]` | one session decoder reads the payloads in turn: each gives its graph or fails with its code (and the session goes on) |
//! | `delta-between` | `base`, `new`, `expected` | the delta from `base` to `new` has these bytes, and decoding and applying it to `base` gives `new` |
//! | `delta-apply-error` | `input` wire, `base_snapshot`, `expectedError` | applying to the base fails with that code |
//! | `stream-encode` | `input` graph, `expected` | streaming the symbols in order, then the edges, gives these bytes, which decode to `input` |
//!
//! and of `conformance/gcf/` (the generic profile):
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `encode-error` | `input` (JSON), optional `options` ([`EncodeOptions`]), `expectedError` | generic encoding fails with that code |
//! | `decode-options` | `input` (text), `options` ([`DecodeOptions`]), `expected` or `expectedError` | decoding with those options gives the value, or fails with that code |
//! | `decode-rows` | `input` (text), optional `options` ([`DecodeOptions`]), `expected` (the rows) or `expectedError` | reading the array a row at a time (the streaming row reader) gives those rows, or fails with that code |
//!
//! The profile of `encode`, `decode` and `roundtrip` cases is read from the GCF text's header
//! (`profile=graph` or not). Graph objects are compared after both sides pass through the
//! codec's typed graph model ([`GcfCodec::normalize_graph`]), since fixtures spell absent
//! optional fields in different ways (`"packRoot": ""` or no member at all).
//!
//! A `delta-verify` fixture names its base only by root; the base snapshot is looked up among
//! the suite's other fixtures (delta `base_snapshot`/`expected_snapshot` and pack-root inputs).

use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use crate::{same_json, same_text, Case, CodecError, Failure, Fixture, Harness, Suite};

/// One GCF fixture's operation and fields.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub enum GcfCase {
    /// Encode `input` and compare the bytes.
    #[serde(rename = "encode")]
    Encode {
        /// A JSON value, or a graph object for the graph profile.
        input: Value,
        /// The exact GCF text.
        expected: String,
    },
    /// Decode `input` and compare the value.
    #[serde(rename = "decode")]
    Decode {
        /// GCF text.
        input: String,
        /// A JSON value, or a graph object for the graph profile.
        expected: Value,
    },
    /// Encode must give `expected` and decoding it must give `input`.
    #[serde(rename = "roundtrip")]
    Roundtrip {
        /// A JSON value, or a graph object.
        input: Value,
        /// The exact GCF text.
        expected: String,
    },
    /// Decoding must fail with `expected_error`.
    #[serde(rename = "error")]
    Error {
        /// The input as text.
        #[serde(default)]
        input: Option<String>,
        /// The input as base64 bytes, for input that is not UTF-8.
        #[serde(default, rename = "inputBase64")]
        input_base64: Option<String>,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
    },
    /// One session encodes every call.
    #[serde(rename = "session")]
    Session {
        /// The calls, in order.
        calls: Vec<SessionCall>,
    },
    /// Delta encoding, or delta application.
    #[serde(rename = "delta")]
    Delta(DeltaCase),
    /// Applying the delta to its base must fail with `expected_error`.
    #[serde(rename = "delta-verify")]
    DeltaVerify {
        /// The delta payload.
        input: String,
        /// The base snapshot (v3.5.3); without it, the snapshot whose root is the payload's
        /// `base_root` among the suite's other fixtures.
        #[serde(default)]
        base_snapshot: Option<Value>,
        /// The error code, `root_mismatch`.
        #[serde(rename = "expectedError")]
        expected_error: String,
    },
    /// Canonical pack-root bytes and hash.
    #[serde(rename = "pack-root")]
    PackRoot {
        /// `{symbols, edges}`.
        input: Value,
        /// The canonical bytes before hashing.
        #[serde(rename = "canonicalBytes")]
        canonical_bytes: String,
        /// `sha256:<hex>`.
        expected: String,
    },
    /// One session encodes every call, and one session decoder rebuilds every call's graph.
    #[serde(rename = "session-roundtrip")]
    SessionRoundtrip {
        /// The calls, in order.
        calls: Vec<SessionCall>,
    },
    /// One session decoder reads every payload in turn.
    #[serde(rename = "session-decode")]
    SessionDecode {
        /// The payloads, in order, with what each gives.
        calls: Vec<SessionDecodeCall>,
    },
    /// The delta between two snapshots: its bytes, and applying it.
    #[serde(rename = "delta-between")]
    DeltaBetween {
        /// The base graph.
        base: Value,
        /// The new graph.
        new: Value,
        /// The exact delta payload.
        expected: String,
    },
    /// Applying a delta payload to a base snapshot must fail with `expected_error`.
    #[serde(rename = "delta-apply-error")]
    DeltaApplyError {
        /// The delta payload.
        input: String,
        /// `{symbols, edges}` the delta is applied to.
        base_snapshot: Value,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
    },
    /// Streaming a graph (symbols in order, then edges) gives the bytes, which decode back.
    #[serde(rename = "stream-encode")]
    StreamEncode {
        /// The graph object.
        input: Value,
        /// The exact GCF text.
        expected: String,
    },
    /// Generic encoding (with default or given options) must fail with `expected_error`.
    #[serde(rename = "encode-error")]
    EncodeError {
        /// A JSON value the encoder must reject.
        input: Value,
        /// Encoder options; the defaults when absent.
        #[serde(default)]
        options: Option<EncodeOptions>,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
    },
    /// Decoding the text then encoding the value gives `expected` (wire idempotence).
    #[serde(rename = "roundtrip-wire")]
    RoundtripWire {
        /// GCF text.
        input: String,
        /// The exact GCF text.
        expected: String,
    },
    /// Streaming a graph with options gives the bytes.
    #[serde(rename = "graph-stream-encode")]
    GraphStreamEncode {
        /// The graph object.
        input: Value,
        /// Stream options.
        #[serde(default)]
        options: Option<StreamOptions>,
        /// The exact GCF text.
        expected: String,
    },
    /// The pack root of a keyed set (spec §10a.3).
    #[serde(rename = "generic-pack-root")]
    GenericPackRoot {
        /// `{key, fields, rows}`.
        input: Value,
        /// `sha256:<hex>`.
        expected: String,
    },
    /// Encoding a generic delta object.
    #[serde(rename = "generic-delta")]
    GenericDelta {
        /// `{tool, key, fields, baseRoot, newRoot, added, changed, removed, deltaTokens, fullTokens}`.
        input: Value,
        /// The exact GCF text.
        expected: String,
    },
    /// Applying a generic delta object to a base set.
    #[serde(rename = "generic-delta-verify")]
    GenericDeltaVerify {
        /// `{base, delta, expectedNewRoot}`.
        input: Value,
        /// The applied set's pack root.
        #[serde(default)]
        expected: Option<String>,
        /// The error code or message part applying fails with.
        #[serde(default, rename = "expectedError")]
        expected_error: Option<String>,
    },
    /// Decoding a generic delta payload and applying it to a base set.
    #[serde(rename = "generic-delta-decode")]
    GenericDeltaDecode {
        /// `{wire, base, expectedNewRoot}`.
        input: Value,
        /// The applied set's pack root.
        #[serde(default)]
        expected: Option<String>,
        /// The error code or message part decoding or applying fails with.
        #[serde(default, rename = "expectedError")]
        expected_error: Option<String>,
    },
    /// A generic delta session's emissions.
    #[serde(rename = "generic-delta-session")]
    GenericDeltaSession {
        /// `{base, tool, policy, updates}`.
        input: Value,
        /// `{initialFull, emissions: [{isFull, wire}]}`.
        expected: Value,
    },
    /// Generic decoding with non-default options: exactly one of `expected` and
    /// `expected_error`.
    #[serde(rename = "decode-options")]
    DecodeWithOptions {
        /// GCF text.
        input: String,
        /// The decoder options.
        options: DecodeOptions,
        /// The value decoding gives.
        #[serde(default)]
        expected: Option<Value>,
        /// The error code decoding fails with.
        #[serde(default, rename = "expectedError")]
        expected_error: Option<String>,
    },
    /// Reading an array a row at a time: exactly one of `expected` and `expected_error`.
    #[serde(rename = "decode-rows")]
    DecodeRows {
        /// GCF text.
        input: String,
        /// The decoder options.
        #[serde(default)]
        options: DecodeOptions,
        /// The rows, in order.
        #[serde(default)]
        expected: Option<Vec<Value>>,
        /// The error code reading fails with (after any rows before it).
        #[serde(default, rename = "expectedError")]
        expected_error: Option<String>,
    },
}

/// Encoder options of an `encode-error` fixture; absent fields keep the codec's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct EncodeOptions {
    /// Maximum nesting depth.
    pub max_depth: Option<usize>,
}

/// Options of a `graph-stream-encode` fixture.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamOptions {
    /// The trailer's `counts` in the labeled form (`targets:2,edges:1`, spec §8.4.1).
    #[serde(default)]
    pub labeled_trailer_counts: bool,
}

/// Decoder options of a `decode-options` fixture; absent fields keep the codec's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[non_exhaustive]
pub struct DecodeOptions {
    /// Maximum nesting depth.
    pub max_depth: Option<usize>,
    /// Maximum items per array or members per object.
    pub max_elements: Option<usize>,
    /// Maximum bytes per line.
    pub max_line_length: Option<usize>,
    /// Maximum fields per field declaration.
    pub max_fields: Option<usize>,
    /// Maximum bytes of input.
    pub max_input_size: Option<usize>,
    /// Whether deferred `[?]` sections require the `##! summary` trailer.
    pub require_trailer: Option<bool>,
}

/// One payload of a `session-decode` fixture: exactly one of `expected` and
/// `expected_error`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionDecodeCall {
    /// The payload text.
    pub input: String,
    /// The full graph the payload stands for.
    #[serde(default)]
    pub expected: Option<Value>,
    /// The error code decoding it must fail with.
    #[serde(default, rename = "expectedError")]
    pub expected_error: Option<String>,
}

/// One call of a `session` fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionCall {
    /// The graph object of this call.
    pub input: Value,
    /// The exact GCF text of this call.
    pub expected: String,
}

/// The two forms of a `delta` fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "DeltaFields")]
#[non_exhaustive]
pub enum DeltaCase {
    /// Encode a delta object.
    Encode {
        /// The delta object (`baseRoot`, `newRoot`, `removed`, `added`, ...).
        input: Value,
        /// The exact GCF text.
        expected: String,
    },
    /// Apply a delta payload to a base snapshot.
    Apply {
        /// The delta payload.
        input: String,
        /// `{symbols, edges}` before the delta.
        base_snapshot: Value,
        /// The pack root of `base_snapshot`.
        base_root: String,
        /// The pack root after the delta.
        new_root: String,
        /// `{symbols, edges}` after the delta.
        expected_snapshot: Value,
    },
}

/// Every field either form of a `delta` fixture may have; [`DeltaCase`] is read through it so
/// that the form is chosen by the fields present and unknown fields are rejected.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeltaFields {
    input: Value,
    expected: Option<String>,
    base_snapshot: Option<Value>,
    base_root: Option<String>,
    new_root: Option<String>,
    expected_snapshot: Option<Value>,
}

impl TryFrom<DeltaFields> for DeltaCase {
    type Error = String;

    fn try_from(f: DeltaFields) -> Result<Self, String> {
        match (
            f.input,
            f.expected,
            f.base_snapshot,
            f.base_root,
            f.new_root,
            f.expected_snapshot,
        ) {
            (input, Some(expected), None, None, None, None) => {
                Ok(DeltaCase::Encode { input, expected })
            }
            (
                Value::String(input),
                None,
                Some(base_snapshot),
                Some(base_root),
                Some(new_root),
                Some(expected_snapshot),
            ) => Ok(DeltaCase::Apply {
                input,
                base_snapshot,
                base_root,
                new_root,
                expected_snapshot,
            }),
            _ => Err(
                "a delta fixture has either `input` (object) and `expected`, or `input` \
                 (text), `base_snapshot`, `base_root`, `new_root` and `expected_snapshot`"
                    .to_owned(),
            ),
        }
    }
}

impl Case for GcfCase {
    fn operation(&self) -> &'static str {
        match self {
            GcfCase::Encode { .. } => "encode",
            GcfCase::Decode { .. } => "decode",
            GcfCase::Roundtrip { .. } => "roundtrip",
            GcfCase::Error { .. } => "error",
            GcfCase::Session { .. } => "session",
            GcfCase::Delta(_) => "delta",
            GcfCase::DeltaVerify { .. } => "delta-verify",
            GcfCase::PackRoot { .. } => "pack-root",
            GcfCase::SessionRoundtrip { .. } => "session-roundtrip",
            GcfCase::SessionDecode { .. } => "session-decode",
            GcfCase::DeltaBetween { .. } => "delta-between",
            GcfCase::DeltaApplyError { .. } => "delta-apply-error",
            GcfCase::StreamEncode { .. } => "stream-encode",
            GcfCase::EncodeError { .. } => "encode-error",
            GcfCase::DecodeWithOptions { .. } => "decode-options",
            GcfCase::DecodeRows { .. } => "decode-rows",
            GcfCase::RoundtripWire { .. } => "roundtrip-wire",
            GcfCase::GraphStreamEncode { .. } => "graph-stream-encode",
            GcfCase::GenericPackRoot { .. } => "generic-pack-root",
            GcfCase::GenericDelta { .. } => "generic-delta",
            GcfCase::GenericDeltaVerify { .. } => "generic-delta-verify",
            GcfCase::GenericDeltaDecode { .. } => "generic-delta-decode",
            GcfCase::GenericDeltaSession { .. } => "generic-delta-session",
        }
    }
}

/// The canonical bytes and hash of a graph snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackRoot {
    /// The `gcf-pack-root-v1` canonical records, as text.
    pub canonical_bytes: String,
    /// `sha256:<64 lowercase hex>`.
    pub root: String,
}

/// What a GCF implementation must offer the runner. Graph objects are the fixtures' camelCase
/// JSON (`{tool, tokenBudget, tokensUsed, packRoot, symbols, edges}`).
pub trait GcfCodec: Send + Sync {
    /// Encodes a JSON value with the generic profile.
    fn encode(&self, value: &Value) -> Result<String, CodecError>;
    /// Decodes generic-profile text into a JSON value.
    fn decode(&self, text: &str) -> Result<Value, CodecError>;
    /// Encodes a graph object with the graph profile.
    fn encode_graph(&self, graph: &Value) -> Result<String, CodecError>;
    /// Decodes graph-profile text into a graph object in normal form.
    fn decode_graph(&self, text: &str) -> Result<Value, CodecError>;
    /// Passes a graph object through the typed graph model, giving its normal form.
    fn normalize_graph(&self, graph: &Value) -> Result<Value, CodecError>;
    /// Decodes arbitrary bytes of either profile, for error fixtures.
    fn validate(&self, input: &[u8]) -> Result<(), CodecError>;
    /// Encodes each graph object in turn with one session.
    fn encode_session(&self, calls: &[Value]) -> Result<Vec<String>, CodecError>;
    /// Encodes a delta object.
    fn encode_delta(&self, delta: &Value) -> Result<String, CodecError>;
    /// Applies a delta payload to a base snapshot, verifying both roots, and returns the new
    /// snapshot.
    fn apply_delta(&self, wire: &str, base: &Value) -> Result<Value, CodecError>;
    /// Computes the canonical bytes and pack root of a snapshot.
    fn pack_root(&self, snapshot: &Value) -> Result<PackRoot, CodecError>;
    /// Decodes each payload in turn with one session decoder; a failed payload leaves the
    /// session as it was, and the next one is decoded. One result per payload.
    fn decode_session(&self, payloads: &[String]) -> Vec<Result<Value, CodecError>> {
        payloads
            .iter()
            .map(|_| Err(CodecError::unsupported("session decode")))
            .collect()
    }
    /// Encodes the delta from graph `base` to graph `new`.
    fn encode_delta_between(&self, base: &Value, new: &Value) -> Result<String, CodecError> {
        let _ = (base, new);
        Err(CodecError::unsupported("delta between"))
    }
    /// Encodes a graph with the streaming encoder: its symbols in order, then its edges.
    fn encode_stream(&self, graph: &Value) -> Result<String, CodecError> {
        let _ = graph;
        Err(CodecError::unsupported("stream encode"))
    }
    /// Encodes a JSON value with the generic profile and non-default options (`encode-error`
    /// fixtures with `options`).
    fn encode_with_options(
        &self,
        value: &Value,
        options: &EncodeOptions,
    ) -> Result<String, CodecError> {
        let _ = (value, options);
        Err(CodecError::unsupported("encoding with options"))
    }
    /// Decodes generic-profile text with non-default options (`decode-options` fixtures).
    fn decode_with_options(
        &self,
        text: &str,
        options: &DecodeOptions,
    ) -> Result<Value, CodecError> {
        let _ = (text, options);
        Err(CodecError::unsupported("decoding with options"))
    }
    /// Reads the array of generic-profile text a row at a time with these options
    /// (`decode-rows` fixtures): the rows, or the first error.
    fn decode_rows(&self, text: &str, options: &DecodeOptions) -> Result<Vec<Value>, CodecError> {
        let _ = (text, options);
        Err(CodecError::unsupported("decoding rows"))
    }
    /// Encodes a graph with the streaming encoder and these options.
    fn encode_stream_with(
        &self,
        graph: &Value,
        options: &StreamOptions,
    ) -> Result<String, CodecError> {
        if options.labeled_trailer_counts {
            return Err(CodecError::unsupported("labeled trailer counts"));
        }
        self.encode_stream(graph)
    }
    /// The pack root of a keyed set `{key, fields, rows}` (spec §10a.3).
    fn generic_pack_root(&self, set: &Value) -> Result<String, CodecError> {
        let _ = set;
        Err(CodecError::unsupported("generic pack root"))
    }
    /// Encodes a generic delta object.
    fn encode_generic_delta(&self, delta: &Value) -> Result<String, CodecError> {
        let _ = delta;
        Err(CodecError::unsupported("generic delta encode"))
    }
    /// Applies a generic delta object to a base set, verifying that the result's root is
    /// `expected_new_root`; returns that root.
    fn apply_generic_delta(
        &self,
        base: &Value,
        delta: &Value,
        expected_new_root: &str,
    ) -> Result<String, CodecError> {
        let _ = (base, delta, expected_new_root);
        Err(CodecError::unsupported("generic delta apply"))
    }
    /// Decodes a generic delta payload and applies it to a base set, verifying that the
    /// result's root is `expected_new_root`; returns that root.
    fn apply_generic_delta_wire(
        &self,
        wire: &str,
        base: &Value,
        expected_new_root: &str,
    ) -> Result<String, CodecError> {
        let _ = (wire, base, expected_new_root);
        Err(CodecError::unsupported("generic delta decode"))
    }
    /// Runs a generic delta session: its initial full payload, then one emission per update,
    /// as `{initialFull, emissions: [{isFull, wire}]}`.
    fn generic_delta_session(
        &self,
        base: &Value,
        tool: &str,
        policy: &Value,
        updates: &[Value],
    ) -> Result<Value, CodecError> {
        let _ = (base, tool, policy, updates);
        Err(CodecError::unsupported("generic delta session"))
    }
}

/// A harness that checks GCF fixtures against `codec`; add suites with [`Harness::suite`].
pub fn harness(codec: impl GcfCodec + 'static) -> Harness<GcfCase> {
    Harness::new(move |fixture, suite| check(&codec, fixture, suite))
}

/// A harness that checks each suite's fixtures against the codec `make` gives for the suite's
/// [`Suite::version`] (`None` when the suite declares none).
pub fn versioned_harness(
    make: impl Fn(Option<&str>) -> Box<dyn GcfCodec> + Send + Sync + 'static,
) -> Harness<GcfCase> {
    Harness::with_suite_check(move |fixture, fixtures, suite| {
        let codec = make(suite.spec_version());
        check_version(&*codec, fixture, fixtures, suite.spec_version())
    })
}

/// The environment variable that points the runner at another copy of the upstream v3.1.0
/// suite (the name `cargo xtask conformance --suite DIR` sets).
pub const UPSTREAM_SUITE_ENV: &str = "AGENTWIRE_GCF_SUITE";

/// The upstream suites: their names, the spec version each pins, and the environment
/// variable that points the runner at a copy.
pub const UPSTREAM_SUITES: &[(&str, &str, &str)] = &[
    ("gcf-v3.1.0", "3.1", "AGENTWIRE_GCF_SUITE_V3_1_0"),
    ("gcf-v3.5.3", "3.6", "AGENTWIRE_GCF_SUITE_V3_5_3"),
];

/// The upstream GCF v3.1.0 suite (see [`upstream_suites`]).
pub fn upstream_suite(workspace_root: &Path) -> Suite {
    upstream_suites(workspace_root).remove(0)
}

/// The upstream suites, v3.1.0 and v3.5.3 (read by spec versions `3.1` and `3.6`): each at
/// its environment variable's directory when set ([`UPSTREAM_SUITES`]; `AGENTWIRE_GCF_SUITE`
/// also names the v3.1.0 one), otherwise at `../shared/conformance/<name>` beside the
/// workspace, with the expected-failures file `conformance/<name>.expected-failures`. A
/// missing suite fails the run with how to provide it, unless [`crate::allow_missing`].
pub fn upstream_suites(workspace_root: &Path) -> Vec<Suite> {
    UPSTREAM_SUITES
        .iter()
        .map(|&(name, version, env)| {
            let from_env = std::env::var_os(env).or_else(|| {
                (name == "gcf-v3.1.0")
                    .then(|| std::env::var_os(UPSTREAM_SUITE_ENV))
                    .flatten()
            });
            let dir = from_env
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| workspace_root.join("../shared/conformance").join(name));
            Suite::new(name, dir)
                .version(version)
                .expected_failures(
                    workspace_root.join(format!("conformance/{name}.expected-failures")),
                )
                .optional(crate::allow_missing())
                .when_missing(format!(
                    "the upstream suite `{name}` lives outside this repository; put a copy \
                     at ../shared/conformance/{name} beside the checkout, or point \
                     `cargo xtask conformance --suite {name}=DIR` (or {env}=DIR) at one, or \
                     run `cargo xtask conformance --allow-missing` to skip it"
                ))
        })
        .collect()
}

/// Checks one GCF fixture. `suite` holds every parsed fixture of the same suite.
pub fn check(
    codec: &dyn GcfCodec,
    fixture: &Fixture<GcfCase>,
    suite: &[Fixture<GcfCase>],
) -> Result<(), Failure> {
    check_version(codec, fixture, suite, None)
}

/// Whether a spec version treats `-0` and `0` as one number (v3.5.0 on).
fn unsigned_zero(version: Option<&str>) -> bool {
    version.is_some_and(|v| v != "3.1")
}

/// [`same_json`] under the version's number rules.
fn same_value(
    version: Option<&str>,
    what: &str,
    expected: &Value,
    actual: &Value,
) -> Result<(), Failure> {
    if unsigned_zero(version) {
        match crate::json_difference_unsigned_zero(expected, actual) {
            None => Ok(()),
            Some(_) => Err(Failure::json_mismatch(what, expected, actual)),
        }
    } else {
        same_json(what, expected, actual)
    }
}

/// [`check`] by a suite's spec version.
fn check_version(
    codec: &dyn GcfCodec,
    fixture: &Fixture<GcfCase>,
    suite: &[Fixture<GcfCase>],
    version: Option<&str>,
) -> Result<(), Failure> {
    let same_json =
        |what: &str, expected: &Value, actual: &Value| same_value(version, what, expected, actual);
    match &fixture.case {
        GcfCase::Encode { input, expected } => check_encode(codec, input, expected, false, version),
        GcfCase::Roundtrip { input, expected } => {
            check_encode(codec, input, expected, true, version)
        }
        GcfCase::Decode { input, expected } => {
            if is_graph(input) {
                let actual = codec
                    .decode_graph(input)
                    .map_err(|e| Failure::codec("graph decode", &e))?;
                let expected = codec
                    .normalize_graph(expected)
                    .map_err(|e| Failure::codec("normalizing the expected graph", &e))?;
                same_json("graph decode", &expected, &actual)
            } else {
                let actual = codec
                    .decode(input)
                    .map_err(|e| Failure::codec("decode", &e))?;
                same_json("decode", expected, &actual)
            }
        }
        GcfCase::Error {
            input,
            input_base64,
            expected_error,
        } => {
            let bytes = match (input, input_base64) {
                (Some(text), None) => text.clone().into_bytes(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| Failure::new(format!("fixture: bad inputBase64: {e}")))?,
                _ => {
                    return Err(Failure::new(
                        "fixture: an error case needs exactly one of `input` and `inputBase64`",
                    ))
                }
            };
            expect_error("decode", expected_error, codec.validate(&bytes))
        }
        GcfCase::Session { calls } => {
            let inputs: Vec<Value> = calls.iter().map(|c| c.input.clone()).collect();
            let actual = codec
                .encode_session(&inputs)
                .map_err(|e| Failure::codec("session encode", &e))?;
            if actual.len() != calls.len() {
                return Err(Failure::new(format!(
                    "session encode returned {} payloads for {} calls",
                    actual.len(),
                    calls.len()
                )));
            }
            for (i, (call, actual)) in calls.iter().zip(&actual).enumerate() {
                same_text(&format!("session call {}", i + 1), &call.expected, actual)?;
            }
            Ok(())
        }
        GcfCase::Delta(DeltaCase::Encode { input, expected }) => {
            let actual = codec
                .encode_delta(input)
                .map_err(|e| Failure::codec("delta encode", &e))?;
            same_text("delta encode", expected, &actual)
        }
        GcfCase::Delta(DeltaCase::Apply {
            input,
            base_snapshot,
            base_root,
            new_root,
            expected_snapshot,
        }) => {
            let base = codec
                .pack_root(base_snapshot)
                .map_err(|e| Failure::codec("pack root of base_snapshot", &e))?;
            same_text("pack root of base_snapshot", base_root, &base.root)?;
            let result = codec
                .apply_delta(input, base_snapshot)
                .map_err(|e| Failure::codec("delta apply", &e))?;
            let expected = codec
                .normalize_graph(expected_snapshot)
                .map_err(|e| Failure::codec("normalizing expected_snapshot", &e))?;
            let actual = codec
                .normalize_graph(&result)
                .map_err(|e| Failure::codec("normalizing the applied snapshot", &e))?;
            same_json("delta apply", &expected, &actual)?;
            let root = codec
                .pack_root(&result)
                .map_err(|e| Failure::codec("pack root of the applied snapshot", &e))?;
            same_text("pack root of the applied snapshot", new_root, &root.root)
        }
        GcfCase::DeltaVerify {
            input,
            base_snapshot,
            expected_error,
        } => {
            let root = header_value(input, "base_root").ok_or_else(|| {
                Failure::new("fixture: the delta payload's header has no base_root")
            })?;
            let base = match base_snapshot {
                Some(base) => base,
                None => known_snapshot(suite, root).ok_or_else(|| {
                    Failure::new(format!(
                        "fixture: no fixture of this suite provides the base snapshot {root}"
                    ))
                })?,
            };
            expect_error(
                "delta apply",
                expected_error,
                codec.apply_delta(input, base).map(drop),
            )
        }
        GcfCase::PackRoot {
            input,
            canonical_bytes,
            expected,
        } => {
            let actual = codec
                .pack_root(input)
                .map_err(|e| Failure::codec("pack root", &e))?;
            same_text("canonical bytes", canonical_bytes, &actual.canonical_bytes)?;
            same_text("pack root", expected, &actual.root)
        }
        GcfCase::SessionRoundtrip { calls } => {
            let inputs: Vec<Value> = calls.iter().map(|c| c.input.clone()).collect();
            let texts = codec
                .encode_session(&inputs)
                .map_err(|e| Failure::codec("session encode", &e))?;
            if texts.len() != calls.len() {
                return Err(Failure::new(format!(
                    "session encode returned {} payloads for {} calls",
                    texts.len(),
                    calls.len()
                )));
            }
            for (i, (call, actual)) in calls.iter().zip(&texts).enumerate() {
                same_text(&format!("session call {}", i + 1), &call.expected, actual)?;
            }
            let decoded = codec.decode_session(&texts);
            for (i, (call, result)) in calls.iter().zip(decoded).enumerate() {
                let what = format!("session decode of call {}", i + 1);
                let actual = result.map_err(|e| Failure::codec(&what, &e))?;
                let expected = codec
                    .normalize_graph(&call.input)
                    .map_err(|e| Failure::codec("normalizing the input graph", &e))?;
                same_json(&what, &expected, &actual)?;
            }
            Ok(())
        }
        GcfCase::SessionDecode { calls } => {
            let texts: Vec<String> = calls.iter().map(|c| c.input.clone()).collect();
            let results = codec.decode_session(&texts);
            if results.len() != calls.len() {
                return Err(Failure::new(format!(
                    "session decode returned {} results for {} payloads",
                    results.len(),
                    calls.len()
                )));
            }
            for (i, (call, result)) in calls.iter().zip(results).enumerate() {
                let what = format!("session decode of payload {}", i + 1);
                match (&call.expected, &call.expected_error) {
                    (Some(expected), None) => {
                        let actual = result.map_err(|e| Failure::codec(&what, &e))?;
                        let expected = codec
                            .normalize_graph(expected)
                            .map_err(|e| Failure::codec("normalizing the expected graph", &e))?;
                        same_json(&what, &expected, &actual)?;
                    }
                    (None, Some(code)) => expect_error(&what, code, result.map(drop))?,
                    _ => {
                        return Err(Failure::new(
                            "fixture: each session-decode call needs exactly one of `expected` \
                             and `expectedError`",
                        ))
                    }
                }
            }
            Ok(())
        }
        GcfCase::DeltaBetween {
            base,
            new,
            expected,
        } => {
            let text = codec
                .encode_delta_between(base, new)
                .map_err(|e| Failure::codec("delta between", &e))?;
            same_text("delta between", expected, &text)?;
            let applied = codec
                .apply_delta(&text, base)
                .map_err(|e| Failure::codec("delta apply", &e))?;
            let expected = codec
                .normalize_graph(&snapshot_of(new))
                .map_err(|e| Failure::codec("normalizing the new graph", &e))?;
            let actual = codec
                .normalize_graph(&applied)
                .map_err(|e| Failure::codec("normalizing the applied snapshot", &e))?;
            same_json("delta apply", &expected, &actual)
        }
        GcfCase::DeltaApplyError {
            input,
            base_snapshot,
            expected_error,
        } => expect_error(
            "delta apply",
            expected_error,
            codec.apply_delta(input, base_snapshot).map(drop),
        ),
        GcfCase::EncodeError {
            input,
            options,
            expected_error,
        } => {
            let result = match options {
                Some(options) => codec.encode_with_options(input, options),
                None => codec.encode(input),
            };
            expect_error("encode", expected_error, result.map(drop))
        }
        GcfCase::DecodeWithOptions {
            input,
            options,
            expected,
            expected_error,
        } => match (expected, expected_error) {
            (Some(expected), None) => {
                let actual = codec
                    .decode_with_options(input, options)
                    .map_err(|e| Failure::codec("decode with options", &e))?;
                same_json("decode with options", expected, &actual)
            }
            (None, Some(code)) => expect_error(
                "decode with options",
                code,
                codec.decode_with_options(input, options).map(drop),
            ),
            _ => Err(Failure::new(
                "fixture: a decode-options case needs exactly one of `expected` and \
                 `expectedError`",
            )),
        },
        GcfCase::DecodeRows {
            input,
            options,
            expected,
            expected_error,
        } => match (expected, expected_error) {
            (Some(expected), None) => {
                let actual = codec
                    .decode_rows(input, options)
                    .map_err(|e| Failure::codec("decode rows", &e))?;
                same_json(
                    "decode rows",
                    &Value::Array(expected.clone()),
                    &Value::Array(actual),
                )
            }
            (None, Some(code)) => expect_error(
                "decode rows",
                code,
                codec.decode_rows(input, options).map(drop),
            ),
            _ => Err(Failure::new(
                "fixture: a decode-rows case needs exactly one of `expected` and `expectedError`",
            )),
        },
        GcfCase::RoundtripWire { input, expected } => {
            let value = codec
                .decode(input)
                .map_err(|e| Failure::codec("decode", &e))?;
            let text = codec
                .encode(&value)
                .map_err(|e| Failure::codec("encode of the decoded value", &e))?;
            same_text("encode of the decoded value", expected, &text)
        }
        GcfCase::GraphStreamEncode {
            input,
            options,
            expected,
        } => {
            let text = codec
                .encode_stream_with(input, &options.clone().unwrap_or_default())
                .map_err(|e| Failure::codec("stream encode", &e))?;
            same_text("stream encode", expected, &text)?;
            let decoded = codec
                .decode_graph(&text)
                .map_err(|e| Failure::codec("graph decode of the stream", &e))?;
            let input = codec
                .normalize_graph(input)
                .map_err(|e| Failure::codec("normalizing the input graph", &e))?;
            same_json("graph decode of the stream", &input, &decoded)
        }
        GcfCase::GenericPackRoot { input, expected } => {
            let root = codec
                .generic_pack_root(input)
                .map_err(|e| Failure::codec("generic pack root", &e))?;
            same_text("generic pack root", expected, &root)
        }
        GcfCase::GenericDelta { input, expected } => {
            let text = codec
                .encode_generic_delta(input)
                .map_err(|e| Failure::codec("generic delta encode", &e))?;
            same_text("generic delta encode", expected, &text)
        }
        GcfCase::GenericDeltaVerify {
            input,
            expected,
            expected_error,
        } => {
            let new_root = field_str(input, "expectedNewRoot")?;
            let result =
                codec.apply_generic_delta(field(input, "base")?, field(input, "delta")?, new_root);
            expect_root_or_error("generic delta apply", expected, expected_error, result)
        }
        GcfCase::GenericDeltaDecode {
            input,
            expected,
            expected_error,
        } => {
            let result = codec.apply_generic_delta_wire(
                field_str(input, "wire")?,
                field(input, "base")?,
                field_str(input, "expectedNewRoot")?,
            );
            expect_root_or_error("generic delta decode", expected, expected_error, result)
        }
        GcfCase::GenericDeltaSession { input, expected } => {
            let updates = field(input, "updates")?
                .as_array()
                .ok_or_else(|| Failure::new("fixture: `updates` is not an array"))?;
            let actual = codec
                .generic_delta_session(
                    field(input, "base")?,
                    input.get("tool").and_then(Value::as_str).unwrap_or(""),
                    field(input, "policy")?,
                    updates,
                )
                .map_err(|e| Failure::codec("generic delta session", &e))?;
            let text_of = |v: &Value, what: &str| -> Result<String, Failure> {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Failure::new(format!("{what} is not text")))
            };
            same_text(
                "the initial full payload",
                &text_of(field(expected, "initialFull")?, "fixture: initialFull")?,
                &text_of(field(&actual, "initialFull")?, "the codec's initialFull")?,
            )?;
            let want = field(expected, "emissions")?
                .as_array()
                .cloned()
                .unwrap_or_default();
            let got = field(&actual, "emissions")?
                .as_array()
                .cloned()
                .unwrap_or_default();
            if want.len() != got.len() {
                return Err(Failure::new(format!(
                    "the session emitted {} payloads for {} expected",
                    got.len(),
                    want.len()
                )));
            }
            for (i, (want, got)) in want.iter().zip(&got).enumerate() {
                let what = format!("emission {}", i + 1);
                same_text(
                    &what,
                    &text_of(field(want, "wire")?, "fixture: wire")?,
                    &text_of(field(got, "wire")?, "the codec's wire")?,
                )?;
                if want.get("isFull") != got.get("isFull") {
                    return Err(Failure::new(format!(
                        "{what}: isFull is {}, expected {}",
                        got.get("isFull").unwrap_or(&Value::Null),
                        want.get("isFull").unwrap_or(&Value::Null)
                    )));
                }
            }
            Ok(())
        }
        GcfCase::StreamEncode { input, expected } => {
            let text = codec
                .encode_stream(input)
                .map_err(|e| Failure::codec("stream encode", &e))?;
            same_text("stream encode", expected, &text)?;
            let decoded = codec
                .decode_graph(&text)
                .map_err(|e| Failure::codec("graph decode of the stream", &e))?;
            let input = codec
                .normalize_graph(input)
                .map_err(|e| Failure::codec("normalizing the input graph", &e))?;
            same_json("graph decode of the stream", &input, &decoded)
        }
    }
}

/// The snapshot part of a graph object: its `symbols` and `edges`.
fn snapshot_of(graph: &Value) -> Value {
    let mut snapshot = serde_json::Map::new();
    for key in ["symbols", "edges"] {
        if let Some(v) = graph.get(key) {
            snapshot.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(snapshot)
}

/// Member `name` of a fixture object.
fn field<'a>(object: &'a Value, name: &str) -> Result<&'a Value, Failure> {
    object
        .get(name)
        .ok_or_else(|| Failure::new(format!("fixture: no `{name}`")))
}

/// Text member `name` of a fixture object.
fn field_str<'a>(object: &'a Value, name: &str) -> Result<&'a str, Failure> {
    field(object, name)?
        .as_str()
        .ok_or_else(|| Failure::new(format!("fixture: `{name}` is not text")))
}

/// A pack root the fixture expects, or an error it expects: exactly one of the two.
fn expect_root_or_error(
    what: &str,
    expected: &Option<String>,
    expected_error: &Option<String>,
    result: Result<String, CodecError>,
) -> Result<(), Failure> {
    match (expected, expected_error) {
        (Some(root), None) => {
            let actual = result.map_err(|e| Failure::codec(what, &e))?;
            same_text(what, root, &actual)
        }
        (None, Some(code)) => expect_error(what, code, result.map(drop)),
        _ => Err(Failure::new(
            "fixture: exactly one of `expected` and `expectedError`",
        )),
    }
}

fn check_encode(
    codec: &dyn GcfCodec,
    input: &Value,
    expected: &str,
    roundtrip: bool,
    version: Option<&str>,
) -> Result<(), Failure> {
    if is_graph(expected) {
        let actual = codec
            .encode_graph(input)
            .map_err(|e| Failure::codec("graph encode", &e))?;
        same_text("graph encode", expected, &actual)?;
        if roundtrip {
            let decoded = codec
                .decode_graph(expected)
                .map_err(|e| Failure::codec("graph decode of the expected text", &e))?;
            let input = codec
                .normalize_graph(input)
                .map_err(|e| Failure::codec("normalizing the input graph", &e))?;
            same_json("graph decode of the expected text", &input, &decoded)?;
        }
        return Ok(());
    }
    let actual = codec
        .encode(input)
        .map_err(|e| Failure::codec("encode", &e))?;
    same_text("encode", expected, &actual)?;
    // GCF's lossless round-trip invariant (spec §1.1): the expected text decodes to the input.
    let decoded = codec
        .decode(expected)
        .map_err(|e| Failure::codec("decode of the expected text", &e))?;
    same_value(version, "decode of the expected text", input, &decoded)
}

fn expect_error(what: &str, code: &str, result: Result<(), CodecError>) -> Result<(), Failure> {
    match result {
        Ok(()) => Err(Failure::new(format!(
            "{what} succeeded, but the fixture expects error `{code}`"
        ))),
        // The code, or (as the upstream runners match) a part of the message.
        Err(e) if e.code() == Some(code) || e.text().contains(code) => Ok(()),
        Err(e) => Err(Failure::new(format!(
            "{what} failed with the wrong error: expected `{code}`, got {e}"
        ))),
    }
}

/// Whether GCF text declares the graph profile in its header line.
fn is_graph(text: &str) -> bool {
    header_value(text, "profile") == Some("graph")
}

/// The value of `key=` in the header line of GCF text.
fn header_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let header = text.lines().next()?;
    header
        .split(' ')
        .filter_map(|token| token.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// A snapshot with pack root `root` declared by some fixture of the suite.
fn known_snapshot<'a>(suite: &'a [Fixture<GcfCase>], root: &str) -> Option<&'a Value> {
    suite.iter().find_map(|fixture| match &fixture.case {
        GcfCase::Delta(DeltaCase::Apply {
            base_snapshot,
            base_root,
            new_root,
            expected_snapshot,
            ..
        }) => {
            if base_root == root {
                Some(base_snapshot)
            } else if new_root == root {
                Some(expected_snapshot)
            } else {
                None
            }
        }
        GcfCase::PackRoot {
            input, expected, ..
        } if expected == root => Some(input),
        _ => None,
    })
}
