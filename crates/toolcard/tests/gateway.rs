//! The proxy and gateway surfaces of spec §4, driven as an MCP runtime would drive them:
//! tools/list, tools/call, upstream results and failures, tool_view, refreshes. (Executing a
//! tool with a schema needs the `schema` feature; `no_schema.rs` covers the build without.)
#![cfg(feature = "schema")]

use std::sync::Arc;
use std::time::Duration;

use agentwire_toolcard::{
    is_mcp_tool_name, CatalogBuilder, Dispatch, FirewallOptions, Gateway, GatewayOptions, Mode,
    StoreLimits, UpstreamCall, UpstreamFailure,
};
use serde_json::{json, Value};

fn upstreams() -> CatalogBuilder {
    let mut builder = CatalogBuilder::new();
    builder
        .add_tools_list(
            Some("fs"),
            &json!({"tools": [
                {"name": "read_file", "description": "Read a file from disk.",
                 "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                                 "required": ["path"]},
                 "annotations": {"readOnlyHint": true}},
                {"name": "list_directory", "description": "List the entries of a directory.",
                 "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                                 "required": ["path"]},
                 "annotations": {"readOnlyHint": true}}
            ]}),
        )
        .unwrap()
        .add_tools_list(
            Some("memory"),
            &json!({"tools": [
                {"name": "create_entities", "description": "Create entities in the knowledge graph.",
                 "inputSchema": {"type": "object",
                                 "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
                                 "required": ["entities"]}},
                {"name": "bad name"}
            ]}),
        )
        .unwrap();
    builder
}

fn gateway(mode: Mode) -> Gateway {
    let catalog = Arc::new(upstreams().build().unwrap());
    Gateway::new(catalog, GatewayOptions::new(mode))
}

fn reply(dispatch: Dispatch) -> Value {
    match dispatch {
        Dispatch::Reply(value) => value,
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn upstream(dispatch: Dispatch) -> UpstreamCall {
    match dispatch {
        Dispatch::Upstream(call) => call,
        other => panic!("expected an upstream call, got {other:?}"),
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

fn json_text(result: &Value) -> Value {
    serde_json::from_str(text(result)).unwrap()
}

#[test]
fn gateway_lists_exactly_three_tools() {
    let gateway = gateway(Mode::Gateway);
    let list = gateway.tools_list();
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tool_browse", "tool_execute", "tool_view"]);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["inputSchema"]["additionalProperties"], false);
    }
    assert_eq!(tools[1]["inputSchema"]["required"], json!(["tool_id"]));
    assert_eq!(tools[2]["inputSchema"]["required"], json!(["handle"]));
}

#[test]
fn proxy_lists_stripped_entries_with_mcp_safe_names() {
    let gateway = gateway(Mode::Proxy);
    let list = gateway.tools_list();
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "fs.list_directory.h4b5aeefe",
            "fs.read_file.h85b56782",
            "memory.create_entities.h97196fbf",
            "tool_hydrate",
            "tool_execute"
        ]
    );
    for tool in &tools[..3] {
        assert!(is_mcp_tool_name(tool["name"].as_str().unwrap()));
        assert_eq!(
            tool["inputSchema"],
            json!({"type": "object"}),
            "sentinel schema"
        );
        assert_eq!(tool.as_object().unwrap().len(), 3);
    }
    assert_eq!(tools[1]["description"], "Read a file from disk.");
    // The bad tool is skipped and reported, not fatal.
    assert_eq!(gateway.catalog().skipped().len(), 1);
}

#[test]
fn browse_by_query_and_by_path() {
    let mut gateway = gateway(Mode::Gateway);
    let result = reply(gateway.call("tool_browse", &json!({"query": "read a file"})));
    assert_eq!(result["isError"], false);
    assert!(text(&result).starts_with("tool_browse: "));
    assert!(text(&result).contains("fs:read_file#85b56782 (tool) — Read a file from disk."));
    let result = reply(gateway.call("tool_browse", &json!({"path": "/"})));
    assert_eq!(
        text(&result),
        "tool_browse: 2 entries, internal entries are paths to browse\n\
         /fs (internal) — 2 tools: list_directory, read_file\n\
         /memory (internal) — 1 tool: create_entities\n"
    );
    let result = reply(gateway.call("tool_browse", &json!({"path": "/fs", "top_k": 1})));
    assert!(
        text(&result).contains("next page: cursor \"1\""),
        "{}",
        text(&result)
    );
    let result = reply(gateway.call(
        "tool_browse",
        &json!({"path": "/fs", "top_k": 1, "cursor": "1"}),
    ));
    assert!(text(&result).contains("fs:read_file#85b56782"));
}

#[test]
fn errors_are_envelopes_in_the_gateway_and_bare_objects_in_the_proxy() {
    let mut gateway_mode = gateway(Mode::Gateway);
    let result = reply(gateway_mode.call("tool_browse", &json!({"path": "/nope"})));
    assert_eq!(result["isError"], true);
    let envelope = json_text(&result);
    assert_eq!(envelope["status"], "error");
    assert_eq!(envelope["error"]["error"], "PATH_NOT_FOUND");
    assert_eq!(envelope["error"]["path"], "/nope");

    let mut proxy = gateway(Mode::Proxy);
    let result = reply(proxy.call("tool_hydrate", &json!({"tool_id": "fs:nope#00000000"})));
    assert_eq!(result["isError"], true);
    let error = json_text(&result);
    assert_eq!(error["error"], "HYDRATE_FAILED");
    // The text's member order is fixed whatever serde_json's map order is.
    assert!(text(&result).starts_with(r#"{"error":"HYDRATE_FAILED","message":"#));
    let mut members: Vec<&String> = error.as_object().unwrap().keys().collect();
    members.sort();
    assert_eq!(members, ["details", "error", "message", "path"]);
}

#[test]
fn invalid_arguments_never_reach_upstream() {
    for mode in [Mode::Gateway, Mode::Proxy] {
        let mut gateway = gateway(mode);
        for arguments in [
            json!({"tool_id": "fs:read_file#85b56782", "args": {}}),
            json!({"tool_id": "fs:read_file#85b56782", "args": {"path": 7}}),
            json!({"tool_id": "fs:read_file#85b56782", "args": [1]}),
            json!({"tool_id": "fs:read_file#85b56782", "extra": 1}),
            json!({"args": {"path": "/"}}),
            json!("fs:read_file#85b56782"),
        ] {
            let result = reply(gateway.call("tool_execute", &arguments));
            assert_eq!(result["isError"], true, "{arguments}");
            let body = json_text(&result);
            let code = match mode {
                Mode::Gateway => &body["error"]["error"],
                _ => &body["error"],
            };
            assert_eq!(code, "ARGS_INVALID", "{arguments}: {body}");
        }
        let result = reply(gateway.call("tool_execute", &json!({"tool_id": "fs:gone#00000000"})));
        assert!(text(&result).contains("HYDRATE_FAILED"));
    }
}

#[test]
fn execute_calls_upstream_by_any_name_of_the_tool() {
    let mut gateway = gateway(Mode::Proxy);
    for name in [
        "fs:read_file#85b56782",
        "fs.read_file.h85b56782",
        "fs%3Aread_file%2385b56782",
    ] {
        let call = upstream(gateway.call(
            "tool_execute",
            &json!({"tool_id": name, "args": {"path": "/tmp/x"}}),
        ));
        assert_eq!(call.tool_id.as_str(), "fs:read_file#85b56782");
        assert_eq!(call.server.as_deref(), Some("fs"));
        assert_eq!(
            call.params(),
            json!({"name": "read_file", "arguments": {"path": "/tmp/x"}})
        );
    }
    // Proxy results pass through unchanged.
    let call = upstream(gateway.call(
        "tool_execute",
        &json!({"tool_id": "fs.read_file.h85b56782", "args": {"path": "/tmp/x"}}),
    ));
    let result = json!({"content": [{"type": "text", "text": "hello"}], "isError": false});
    assert_eq!(gateway.complete(&call, &result), result);
    // Hydrate by MCP name.
    let result = reply(gateway.call(
        "tool_hydrate",
        &json!({"tool_id": "fs.read_file.h85b56782"}),
    ));
    let hydration = json_text(&result);
    assert_eq!(hydration["tool_id"], "fs:read_file#85b56782");
    assert_eq!(hydration["input_schema"]["required"], json!(["path"]));
}

#[test]
fn a_stripped_tool_called_directly_is_unknown_with_a_hint() {
    let mut gateway = gateway(Mode::Proxy);
    let result = reply(gateway.call("fs.read_file.h85b56782", &json!({"path": "/"})));
    let error = json_text(&result);
    assert_eq!(error["error"], "UNKNOWN_TOOL");
    assert_eq!(error["details"]["tool_id"], "fs:read_file#85b56782");
    assert!(error["message"].as_str().unwrap().contains("tool_execute"));
    let result = reply(gateway.call("tool_browse", &json!({"query": "x"})));
    assert_eq!(
        json_text(&result)["error"],
        "UNKNOWN_TOOL",
        "no tool_browse in the proxy"
    );
    let mut gateway = self::gateway(Mode::Gateway);
    let result = reply(gateway.call("tool_hydrate", &json!({"tool_id": "x"})));
    assert_eq!(
        json_text(&result)["error"]["error"],
        "UNKNOWN_TOOL",
        "no tool_hydrate in the gateway"
    );
}

fn rows(n: usize) -> Value {
    let rows: Vec<Value> = (0..n)
        .map(|i| json!({"id": i, "name": format!("entity {i}"), "tags": ["a", "b"]}))
        .collect();
    // Members in sorted order, so that the facts (in map order) are the same with and
    // without serde_json's `preserve_order`.
    json!({"rows": rows, "total": n})
}

#[test]
fn small_results_are_inline_large_ones_stored_and_paged_with_tool_view() {
    let mut gateway = gateway(Mode::Gateway);
    let call = upstream(gateway.call(
        "tool_execute",
        &json!({"tool_id": "memory:create_entities#97196fbf", "args": {"entities": []}}),
    ));
    let small = gateway.complete(
        &call,
        &json!({"content": [{"type": "text", "text": "created 0"}]}),
    );
    let envelope = json_text(&small);
    assert_eq!(envelope["status"], "ok");
    assert_eq!(envelope["summary"], "created 0");
    assert_eq!(envelope["artifacts"], json!([]));
    assert_eq!(envelope["firewall"]["triggered"], false);
    assert_eq!(
        envelope["provenance"],
        json!({"tool_id": "memory:create_entities#97196fbf", "server": "memory",
               "upstream_name": "create_entities", "protocol": "mcp"})
    );
    let members: Vec<&String> = envelope.as_object().unwrap().keys().collect();
    assert_eq!(members.len(), 7);

    let data = rows(500);
    let large =
        json!({"content": [{"type": "text", "text": data.to_string()}], "structuredContent": data});
    let result = gateway.complete(&call, &large);
    let body = text(&result);
    let envelope = json_text(&result);
    assert_eq!(envelope["firewall"]["triggered"], true);
    assert!(envelope["firewall"]["result_tokens"].as_u64().unwrap() > 1000);
    assert!(
        agentwire_tokens::Tokenizer::Cl100kBase.count(body) < 500,
        "{body}"
    );
    assert_eq!(envelope["artifacts"][0]["handle"], "a1");
    assert_eq!(envelope["artifacts"][0]["kind"], "json");
    assert_eq!(
        envelope["artifacts"].as_array().unwrap().len(),
        1,
        "text carries the result"
    );
    assert_eq!(
        envelope["facts"],
        json!([
            "a1: object of 2 members: rows, total",
            "a1/rows: array of 500 objects"
        ])
    );
    assert!(envelope["summary"].as_str().unwrap().ends_with('…'));

    // `{}` is the first page of the whole artifact.
    let page = json_text(&reply(
        gateway.call("tool_view", &json!({"handle": "a1", "selector": {}})),
    ));
    assert_eq!(
        (page["type"].as_str(), page["total"].as_u64()),
        (Some("object"), Some(2))
    );
    // The rows, a page at a time, each within the view budget, all of them in order.
    let mut collected = Vec::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let result = reply(gateway.call(
            "tool_view",
            &json!({"handle": "a1", "selector": {"pointer": "/rows", "offset": offset}}),
        ));
        assert_eq!(result["isError"], false);
        assert!(agentwire_tokens::Tokenizer::Cl100kBase.count(text(&result)) <= 1100);
        let page = json_text(&result);
        assert_eq!(page["unit"], "elements");
        collected.extend(page["content"].as_array().unwrap().iter().cloned());
        pages += 1;
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert!(pages > 5, "{pages}");
    assert_eq!(Value::Array(collected), data["rows"]);
    // Drill into one element, and a limit.
    let page = json_text(&reply(gateway.call(
        "tool_view",
        &json!({"handle": "a1", "selector": {"pointer": "/rows/7/name"}}),
    )));
    assert_eq!(page["content"], "entity 7");
    let page = json_text(&reply(gateway.call(
        "tool_view",
        &json!({"handle": "a1", "selector": {"pointer": "/rows", "offset": 10, "limit": 2}}),
    )));
    assert_eq!(page["content"], json!([data["rows"][10], data["rows"][11]]));
    assert_eq!(page["next_offset"], 12);
}

#[test]
fn tool_view_errors() {
    let mut gateway = gateway(Mode::Gateway);
    let call = upstream(gateway.call(
        "tool_execute",
        &json!({"tool_id": "fs:read_file#85b56782", "args": {"path": "/big.log"}}),
    ));
    let log = "line of a log file\n".repeat(2000);
    let result = gateway.complete(&call, &json!({"content": [{"type": "text", "text": log}]}));
    let envelope = json_text(&result);
    assert_eq!(envelope["artifacts"][0]["kind"], "text");
    assert_eq!(
        envelope["facts"],
        json!(["a1: text of 38000 characters in 2000 lines"])
    );
    let page = json_text(&reply(gateway.call("tool_view", &json!({"handle": "a1"}))));
    assert_eq!(page["unit"], "characters");
    assert!(page["next_offset"].as_u64().unwrap() > 100);
    let code = |args: Value, gateway: &mut Gateway| {
        json_text(&reply(gateway.call("tool_view", &args)))["error"]["error"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(code(json!({"handle": "a9"}), &mut gateway), "VIEW_FAILED");
    assert_eq!(
        code(
            json!({"handle": "a1", "selector": {"pointer": "/x"}}),
            &mut gateway
        ),
        "VIEW_FAILED"
    );
    assert_eq!(
        code(
            json!({"handle": "a1", "selector": {"offset": 38000}}),
            &mut gateway
        ),
        "VIEW_FAILED"
    );
    assert_eq!(
        code(
            json!({"handle": "a1", "selector": {"pointer": "x"}}),
            &mut gateway
        ),
        "ARGS_INVALID"
    );
    assert_eq!(
        code(
            json!({"handle": "a1", "selector": {"limit": 0}}),
            &mut gateway
        ),
        "ARGS_INVALID"
    );
    assert_eq!(
        code(
            json!({"handle": "a1", "selector": {"page": 2}}),
            &mut gateway
        ),
        "ARGS_INVALID"
    );
    assert_eq!(
        code(json!({"handle": "a1", "selector": []}), &mut gateway),
        "ARGS_INVALID"
    );
    assert_eq!(code(json!({"selector": {}}), &mut gateway), "ARGS_INVALID");
}

#[test]
fn the_store_evicts_the_oldest_artifacts() {
    let catalog = Arc::new(upstreams().build().unwrap());
    let options = GatewayOptions::new(Mode::Gateway)
        .firewall(FirewallOptions::default().budget(10))
        .store(StoreLimits::default().max_artifacts(2));
    let mut gateway = Gateway::new(catalog, options);
    let call = upstream(gateway.call(
        "tool_execute",
        &json!({"tool_id": "fs:read_file#85b56782", "args": {"path": "/x"}}),
    ));
    for _ in 0..3 {
        gateway.complete(
            &call,
            &json!({"content": [{"type": "text", "text": "word ".repeat(50)}]}),
        );
    }
    assert_eq!(gateway.store().len(), 2);
    let error = json_text(&reply(gateway.call("tool_view", &json!({"handle": "a1"}))));
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("evicted"));
    let page = json_text(&reply(gateway.call("tool_view", &json!({"handle": "a3"}))));
    assert_eq!(page["total"], 250);
}

#[test]
fn upstream_failures_have_their_codes() {
    let mut gateway = gateway(Mode::Gateway);
    let call = upstream(gateway.call(
        "tool_execute",
        &json!({"tool_id": "fs:read_file#85b56782", "args": {"path": "/x"}}),
    ));
    let cases = [
        (
            UpstreamFailure::Error {
                code: Some(-32603),
                message: "boom".into(),
            },
            "UPSTREAM_ERROR",
            false,
        ),
        (
            UpstreamFailure::Timeout {
                after: Some(Duration::from_secs(30)),
            },
            "UPSTREAM_TIMEOUT",
            true,
        ),
        (
            UpstreamFailure::Unavailable {
                message: "the server exited".into(),
            },
            "UPSTREAM_UNAVAILABLE",
            true,
        ),
    ];
    for (failure, code, retryable) in cases {
        let result = gateway.fail(&call, failure);
        assert_eq!(result["isError"], true);
        let envelope = json_text(&result);
        assert_eq!(envelope["status"], "error");
        assert_eq!(envelope["error"]["error"], code);
        assert_eq!(
            envelope["error"]["details"]["tool_id"],
            "fs:read_file#85b56782"
        );
        assert_eq!(envelope["error"]["details"]["server"], "fs");
        assert_eq!(
            envelope["error"]["details"].get("retryable").is_some(),
            retryable
        );
        assert_eq!(envelope["provenance"]["upstream_name"], "read_file");
    }
    let result = gateway.fail(
        &call,
        UpstreamFailure::Timeout {
            after: Some(Duration::from_millis(1500)),
        },
    );
    assert_eq!(json_text(&result)["error"]["details"]["after_ms"], 1500);
    // An upstream result that is not a CallToolResult.
    let result = gateway.complete(&call, &json!([1, 2]));
    assert_eq!(json_text(&result)["error"]["error"], "UPSTREAM_ERROR");
    // An upstream tool error is an envelope with status error, its text kept.
    let result = gateway.complete(
        &call,
        &json!({"content": [{"type": "text", "text": "ENOENT"}], "isError": true}),
    );
    assert_eq!(result["isError"], true);
    assert_eq!(json_text(&result)["summary"], "ENOENT");
    assert_eq!(json_text(&result)["error"]["error"], "UPSTREAM_ERROR");
}

#[test]
fn a_changed_tool_list_refreshes_the_catalog() {
    let catalog = Arc::new(upstreams().build().unwrap());
    let mut proxy = Gateway::new(Arc::clone(&catalog), GatewayOptions::new(Mode::Proxy));
    let refresh = proxy
        .refresh(
            "memory",
            &json!({"tools": [
                {"name": "create_entities", "description": "Create entities in the knowledge graph.",
                 "inputSchema": {"type": "object",
                                 "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
                                 "required": ["entities"]}},
                {"name": "read_graph", "description": "Read the whole graph."},
                {"name": "also bad"}
            ]}),
        )
        .unwrap();
    assert!(refresh.list_changed);
    assert_eq!(refresh.skipped.len(), 1);
    assert_eq!(
        refresh.skipped[0].upstream_name.as_deref(),
        Some("also bad")
    );
    assert_eq!(proxy.catalog().len(), 4);
    // The same list again changes nothing.
    let again = proxy
        .refresh("memory", &json!([{"name": "create_entities", "description": "Create entities in the knowledge graph.",
                 "inputSchema": {"type": "object",
                                 "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
                                 "required": ["entities"]}},
                {"name": "read_graph", "description": "Read the whole graph."}]))
        .unwrap();
    assert!(!again.list_changed);

    let mut gateway = Gateway::new(
        catalog,
        GatewayOptions::new(Mode::Gateway).cache_stable(true),
    );
    let first = text(&reply(
        gateway.call("tool_browse", &json!({"query": "read a file"})),
    ))
    .to_owned();
    let refresh = gateway.refresh("fs", &json!([
        {"name": "read_file", "description": "Read a file from disk (now faster).",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
         "annotations": {"readOnlyHint": true}}
    ])).unwrap();
    assert!(
        !refresh.list_changed,
        "the gateway's three tools never change"
    );
    let second = text(&reply(
        gateway.call("tool_browse", &json!({"query": "read a file"})),
    ))
    .to_owned();
    assert!(
        second.contains("Read a file from disk."),
        "frozen card: {second}"
    );
    assert!(first.contains("fs:read_file#85b56782"));
    // The removed tool is gone.
    let gone = reply(gateway.call(
        "tool_execute",
        &json!({"tool_id": "fs:list_directory#4b5aeefe", "args": {"path": "/"}}),
    ));
    assert!(text(&gone).contains("HYDRATE_FAILED"));
}
