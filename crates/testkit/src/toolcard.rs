//! The round-trip oracle for `agentwire-toolcard`'s parsers: tool ids, MCP names, browse
//! paths, `tools/list` catalogs, and the gateway's argument and result handling.

use std::sync::Arc;

use agentwire_toolcard::{
    format_tool_id, is_mcp_tool_name, parse_path, parse_tool_id, BrowseRequest, Catalog,
    CatalogBuilder, Dispatch, FirewallOptions, Gateway, GatewayOptions, Mode, ToolId,
    CARD_HARD_CAP_TOKENS, MAX_MCP_NAME_LEN, RESPONSE_PREAMBLE_TOKENS,
};
use serde_json::{json, Value};

use crate::{Bug, Roundtrip};

/// Checks `text` as a tool id: a parsed id formats back to exactly `text`, and a rejection
/// is a typed error.
pub fn tool_id(text: &str) -> Result<Roundtrip, Bug> {
    let parts = match parse_tool_id(text) {
        Ok(parts) => parts,
        Err(e) => return Ok(Roundtrip::Rejected(e.to_string())),
    };
    let formatted = format_tool_id(&parts)
        .map_err(|e| Bug(format!("parsed tool id {text:?} does not format: {e}")))?;
    if formatted != text {
        return Err(Bug(format!(
            "tool id {text:?} formats back as {formatted:?}"
        )));
    }
    Ok(Roundtrip::Ok)
}

/// Checks `text` as a browse path: a parsed path displays as exactly `text`.
pub fn path(text: &str) -> Result<Roundtrip, Bug> {
    match parse_path(text) {
        Ok(path) if path.to_string() == text => Ok(Roundtrip::Ok),
        Ok(path) => Err(Bug(format!("path {text:?} displays as {path}"))),
        Err(e) => Ok(Roundtrip::Rejected(e.to_string())),
    }
}

/// Checks `text` as a `tools/list` result: if it builds a catalog, every tool's id
/// round-trips, its card is within the hard cap, and it is reachable by a browse path that
/// parses.
pub fn catalog(text: &str) -> Result<Roundtrip, Bug> {
    let catalog = match Catalog::from_tools_list_str(text) {
        Ok(catalog) => catalog,
        Err(e) => return Ok(Roundtrip::Rejected(e.to_string())),
    };
    for tool in catalog.tools() {
        let id = tool.id().as_str();
        if tool_id(id)? != Roundtrip::Ok {
            return Err(Bug(format!("catalog id {id:?} does not parse")));
        }
        if tool.card().tokens() > CARD_HARD_CAP_TOKENS {
            return Err(Bug(format!(
                "card of {id:?} has {} tokens, over the hard cap",
                tool.card().tokens()
            )));
        }
        let path = catalog
            .path_of(id)
            .ok_or_else(|| Bug(format!("{id:?} has no browse path")))?;
        if path_ok(path).is_none() {
            return Err(Bug(format!(
                "browse path {path:?} of {id:?} does not parse"
            )));
        }
    }
    Ok(Roundtrip::Ok)
}

/// Checks `text` as an MCP tool name: a name that decodes is exactly the encoding of its
/// id; an id (when `text` is one) encodes to a valid MCP name that decodes back to it unless
/// it was shortened.
pub fn mcp_name(text: &str) -> Result<Roundtrip, Bug> {
    if let Ok(id) = ToolId::parse(text) {
        let name = id.to_mcp_name();
        if !is_mcp_tool_name(&name) {
            return Err(Bug(format!(
                "{text:?} encodes to {name:?}, not an MCP tool name"
            )));
        }
        match ToolId::from_mcp_name(&name) {
            Ok(back) if back == id => {}
            Err(_) if name.len() == MAX_MCP_NAME_LEN => {}
            other => {
                return Err(Bug(format!(
                    "{text:?} encodes to {name:?}, which decodes to {other:?}"
                )))
            }
        }
    }
    match ToolId::from_mcp_name(text) {
        Ok(id) if id.to_mcp_name() == text => Ok(Roundtrip::Ok),
        Ok(id) => Err(Bug(format!(
            "{text:?} decodes to {id}, whose name is {:?}",
            id.to_mcp_name()
        ))),
        Err(e) => Ok(Roundtrip::Rejected(e.to_string())),
    }
}

/// Checks `text` as JSON driven through a gateway of each mode: as `tool_browse`,
/// `tool_execute`, `tool_hydrate` and `tool_view` arguments (no panic, every answer a
/// `CallToolResult`, browse answers within the §2.3 cap), and as an upstream result
/// (completed into an envelope whose artifacts can all be paged to the end with
/// `tool_view`).
pub fn gateway(text: &str) -> Result<Roundtrip, Bug> {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return Ok(Roundtrip::Rejected(e.to_string())),
    };
    let mut builder = CatalogBuilder::new();
    builder
        .add_tools_list(
            Some("fs"),
            &json!([{"name": "read", "description": "Read a file.",
                     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
                    {"name": "list", "description": "List a directory.", "_meta": {"version": "1"}}]),
        )
        .map_err(|e| Bug(format!("fixed catalog: {e}")))?;
    let catalog = Arc::new(
        builder
            .build()
            .map_err(|e| Bug(format!("fixed catalog: {e}")))?,
    );
    if let Ok(request) = BrowseRequest::from_arguments(&value) {
        if let Ok(response) = catalog.browse(&request) {
            let cap = CARD_HARD_CAP_TOKENS * response.cards().len() + RESPONSE_PREAMBLE_TOKENS;
            if response.tokens() > cap {
                return Err(Bug(format!(
                    "browse {value} is {} tokens",
                    response.tokens()
                )));
            }
        }
    }
    for mode in [Mode::Gateway, Mode::Proxy] {
        let options = GatewayOptions::new(mode).firewall(
            FirewallOptions::default()
                .budget(40)
                .summary_budget(10)
                .view_budget(30),
        );
        let mut gateway = Gateway::new(Arc::clone(&catalog), options);
        for tool in [
            "tool_browse",
            "tool_execute",
            "tool_hydrate",
            "tool_view",
            "fs.read.h0",
        ] {
            if let Dispatch::Reply(reply) = gateway.call(tool, &value) {
                check_reply(&reply)?;
            }
        }
        let call = match gateway.call("tool_execute", &json!({"tool_id": "fs:list@1", "args": {}}))
        {
            Dispatch::Upstream(call) => call,
            other => return Err(Bug(format!("fs:list@1 should go upstream: {other:?}"))),
        };
        let reply = gateway.complete(&call, &value);
        // The proxy passes the upstream's result through as it came.
        if mode == Mode::Gateway || !value.is_object() {
            check_reply(&reply)?;
        }
        for handle in 1..=gateway.store().len() {
            page_to_the_end(&mut gateway, &format!("a{handle}"))?;
        }
    }
    Ok(Roundtrip::Ok)
}

fn check_reply(reply: &Value) -> Result<(), Bug> {
    if reply.get("isError").and_then(Value::as_bool).is_some() && reply["content"].is_array() {
        Ok(())
    } else {
        Err(Bug(format!("not a CallToolResult: {reply}")))
    }
}

/// Pages through an artifact with `tool_view` until no `next_offset` is left; every page
/// must advance.
fn page_to_the_end(gateway: &mut Gateway, handle: &str) -> Result<(), Bug> {
    let mut offset = 0u64;
    for _ in 0..100_000 {
        let Dispatch::Reply(reply) = gateway.call(
            "tool_view",
            &json!({"handle": handle, "selector": {"offset": offset}}),
        ) else {
            return Err(Bug("tool_view went upstream".into()));
        };
        let text = reply["content"][0]["text"].as_str().unwrap_or_default();
        let page: Value = serde_json::from_str(text)
            .map_err(|e| Bug(format!("tool_view answered {text:?}: {e}")))?;
        if reply["isError"] == true {
            return Err(Bug(format!("tool_view {handle} at {offset}: {text}")));
        }
        match page["next_offset"].as_u64() {
            Some(next) if next > offset => offset = next,
            Some(next) => return Err(Bug(format!("tool_view {handle}: {offset} -> {next}"))),
            None => return Ok(()),
        }
    }
    Err(Bug(format!("tool_view {handle} never ends")))
}

fn path_ok(text: &str) -> Option<()> {
    matches!(path(text), Ok(Roundtrip::Ok)).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_rejects() {
        assert_eq!(tool_id("github:create_issue#0a1b2c3d"), Ok(Roundtrip::Ok));
        assert!(matches!(tool_id("Not An Id"), Ok(Roundtrip::Rejected(_))));
        assert_eq!(path("/github/*"), Ok(Roundtrip::Ok));
        assert!(matches!(path("github"), Ok(Roundtrip::Rejected(_))));
        let list = r#"{"tools": [{"name": "github.create_issue", "description": "Open an issue.",
            "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}}}]}"#;
        assert_eq!(catalog(list), Ok(Roundtrip::Ok));
        assert!(matches!(catalog("{"), Ok(Roundtrip::Rejected(_))));
        assert_eq!(mcp_name("fs.a..b.v1"), Ok(Roundtrip::Ok));
        assert!(matches!(mcp_name("fs:a.b@1"), Ok(Roundtrip::Rejected(_))));
        assert!(matches!(mcp_name("fs.a.b"), Ok(Roundtrip::Rejected(_))));
        let rows: Vec<Value> = (0..60)
            .map(|i| json!({"id": i, "text": "x".repeat(i)}))
            .collect();
        let result = json!({"content": [{"type": "text", "text": json!(rows).to_string()},
                                        {"type": "text", "text": "plain ".repeat(80)},
                                        {"type": "image", "data": "AAAA".repeat(100), "mimeType": "image/png"}]});
        assert_eq!(gateway(&result.to_string()), Ok(Roundtrip::Ok));
        assert_eq!(
            gateway(r#"{"query": "read", "top_k": 1}"#),
            Ok(Roundtrip::Ok)
        );
        assert!(matches!(gateway("{"), Ok(Roundtrip::Rejected(_))));
    }
}
