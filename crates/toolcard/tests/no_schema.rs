//! Without the `schema` feature there is no validator: a tool with an input schema cannot be
//! checked, `validate_args` says so with its own code, and `tool_execute` refuses to call
//! upstream unchecked (§4.4). Run with `cargo test -p agentwire-toolcard --no-default-features`.
#![cfg(not(feature = "schema"))]

use std::sync::Arc;

use agentwire_toolcard::{Catalog, Dispatch, ErrorCode, Gateway, GatewayOptions, Mode};
use serde_json::{json, Value};

fn catalog() -> Catalog {
    Catalog::from_tools_list(&json!([
        {"name": "fs.read", "inputSchema": {"type": "object", "required": ["path"]},
         "_meta": {"version": "1"}},
        {"name": "fs.ping", "_meta": {"version": "1"}}
    ]))
    .unwrap()
}

#[test]
fn validation_is_reported_unavailable() {
    let catalog = catalog();
    let error = catalog.validate_args("fs:read@1", &json!({})).unwrap_err();
    assert_eq!(error.code(), ErrorCode::ValidationUnavailable);
    assert_eq!(error.code(), "VALIDATION_UNAVAILABLE");
    assert!(error.to_string().contains("feature `schema`"), "{error}");
    // Nothing to validate without a schema; arguments must still be an object.
    catalog
        .validate_args("fs:ping@1", &json!({"x": 1}))
        .unwrap();
    assert_eq!(
        catalog
            .validate_args("fs:ping@1", &json!([]))
            .unwrap_err()
            .code(),
        "ARGS_INVALID"
    );
}

#[test]
fn execute_does_not_call_upstream_unchecked() {
    let mut gateway = Gateway::new(Arc::new(catalog()), GatewayOptions::new(Mode::Gateway));
    let Dispatch::Reply(reply) = gateway.call(
        "tool_execute",
        &json!({"tool_id": "fs:read@1", "args": {"path": "/"}}),
    ) else {
        panic!("must not reach upstream");
    };
    let envelope: Value =
        serde_json::from_str(reply["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope["error"]["error"], "VALIDATION_UNAVAILABLE");
    assert!(matches!(
        gateway.call("tool_execute", &json!({"tool_id": "fs:ping@1"})),
        Dispatch::Upstream(_)
    ));
}
