//! Replays the upstream GCF v3.1.0 suite and our own GCF suites against `agentwire-gcf`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test gcf -- numbers/`.

use agentwire_conformance::gcf::{self, GcfCodec, PackRoot};
use agentwire_conformance::{find_workspace_root, CodecError};
use serde_json::Value;

/// The adapter from the runner's JSON world to `agentwire-gcf`.
struct AgentwireGcf;

impl GcfCodec for AgentwireGcf {
    fn encode(&self, _value: &Value) -> Result<String, CodecError> {
        Err(CodecError::unsupported("generic encode"))
    }

    fn decode(&self, _text: &str) -> Result<Value, CodecError> {
        Err(CodecError::unsupported("generic decode"))
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

    fn validate(&self, _input: &[u8]) -> Result<(), CodecError> {
        Err(CodecError::unsupported("decode"))
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
        .run()
}
