//! Replays the upstream GCF v3.1.0 suite and our own GCF suites against `agentwire-gcf`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test gcf -- numbers/`.

use agentwire_conformance::gcf::{self, GcfCodec, PackRoot};
use agentwire_conformance::{find_workspace_root, CodecError, Suite};
use agentwire_gcf::Profile;
use serde::de::IgnoredAny;
use serde_json::Value;

/// An `agentwire_gcf::Error` as the runner sees it: its spec code and its full message.
fn codec_error(error: agentwire_gcf::Error) -> CodecError {
    CodecError::new(error.code(), error.to_string())
}

/// The adapter from the runner's JSON world to `agentwire-gcf`.
struct AgentwireGcf;

impl GcfCodec for AgentwireGcf {
    fn encode(&self, value: &Value) -> Result<String, CodecError> {
        agentwire_gcf::to_string(value).map_err(codec_error)
    }

    fn decode(&self, text: &str) -> Result<Value, CodecError> {
        agentwire_gcf::from_str(text).map_err(codec_error)
    }

    fn encode_graph(&self, _graph: &Value) -> Result<String, CodecError> {
        Err(CodecError::unsupported("graph encode"))
    }

    fn decode_graph(&self, _text: &str) -> Result<Value, CodecError> {
        Err(CodecError::unsupported("graph decode"))
    }

    fn normalize_graph(&self, _graph: &Value) -> Result<Value, CodecError> {
        Err(CodecError::unsupported("graph model"))
    }

    fn validate(&self, input: &[u8]) -> Result<(), CodecError> {
        // Dispatch on the header's profile; header errors are the same for both profiles.
        let header_end = input
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(input.len());
        match std::str::from_utf8(&input[..header_end]).map(agentwire_gcf::profile) {
            Ok(Ok(Profile::Graph)) => Err(CodecError::unsupported("graph decode")),
            Ok(Err(error)) => Err(codec_error(error)),
            // Generic, or a header that is not UTF-8 (the decoder reports where).
            _ => agentwire_gcf::from_slice::<IgnoredAny>(input)
                .map(drop)
                .map_err(codec_error),
        }
    }

    fn encode_session(&self, _calls: &[Value]) -> Result<Vec<String>, CodecError> {
        Err(CodecError::unsupported("graph sessions"))
    }

    fn encode_delta(&self, _delta: &Value) -> Result<String, CodecError> {
        Err(CodecError::unsupported("delta encode"))
    }

    fn apply_delta(&self, _wire: &str, _base: &Value) -> Result<Value, CodecError> {
        Err(CodecError::unsupported("delta apply"))
    }

    fn pack_root(&self, _snapshot: &Value) -> Result<PackRoot, CodecError> {
        Err(CodecError::unsupported("pack root"))
    }
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    gcf::harness(AgentwireGcf)
        .suite(gcf::upstream_suite(&root))
        .suite(Suite::new("gcf", root.join("conformance/gcf")))
        .run()
}
