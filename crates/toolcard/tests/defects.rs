//! Regression tests for the catalog defects of issue 21: each failed before the fix.

use std::sync::Arc;

use agentwire_toolcard::{
    is_mcp_tool_name, BrowseRequest, Catalog, CatalogBuilder, ErrorKind, NameEncoding, Session,
    ToolId, CARD_HARD_CAP_TOKENS, RESPONSE_PREAMBLE_TOKENS,
};
use serde_json::{json, Value};

fn ids(catalog: &Catalog) -> Vec<&str> {
    catalog.tools().map(|t| t.id().as_str()).collect()
}

/// One invalid name used to fail the whole catalog: `tools ids` printed no id at all.
#[test]
fn an_invalid_name_skips_that_tool_only() {
    let catalog = Catalog::from_tools_list(&json!({"tools": [
        {"name": "fs.read", "_meta": {"version": "1"}},
        {"name": "do something"},
        {"name": "café.latte"},
        {"name": 7},
        "not a tool",
        {"name": "fs.write", "_meta": {"version": "1"}}
    ]}))
    .unwrap();
    assert_eq!(ids(&catalog), ["fs:read@1", "fs:write@1"]);
    let pointers: Vec<&str> = catalog
        .skipped()
        .iter()
        .map(|s| s.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/tools/1", "/tools/2", "/tools/3", "/tools/4"]);
    for skipped in catalog.skipped() {
        assert_eq!(skipped.error.code(), "CATALOG_ERROR");
        assert!(matches!(
            skipped.error.kind(),
            ErrorKind::InvalidTool { .. }
        ));
    }
    assert_eq!(
        catalog.skipped()[0].upstream_name.as_deref(),
        Some("do something")
    );
    assert_eq!(catalog.skipped()[2].upstream_name, None);
    let report = catalog.skipped()[0].to_json();
    assert_eq!(report["error"]["error"], "CATALOG_ERROR");
    assert_eq!(report["error"]["details"]["pointer"], "/tools/1/name");
}

/// A legal 128-character name whose card is over the 80-token hard cap used to fail the
/// whole catalog.
#[test]
fn an_over_budget_card_skips_that_tool_only() {
    let long = format!("ok.{}", "_1".repeat(63));
    let name_part = &long[3..];
    assert!(name_part.len() <= 128);
    let catalog = Catalog::from_tools_list(&json!([
        {"name": long, "description": "Anything.",
         "annotations": {"openWorldHint": true, "destructiveHint": true, "idempotentHint": true}},
        {"name": "ok.fine", "_meta": {"version": "1"}}
    ]))
    .unwrap();
    assert_eq!(ids(&catalog), ["ok:fine@1"]);
    let [skipped] = catalog.skipped() else {
        panic!("{:?}", catalog.skipped())
    };
    assert!(
        matches!(
            skipped.error.kind(),
            ErrorKind::CardOverBudget { cap: 80, .. }
        ),
        "{skipped}"
    );
    assert!(skipped.tool_id.as_deref().unwrap().starts_with("ok:_1_1"));
}

/// A duplicate used to fail the whole catalog; the first registered now keeps the id.
#[test]
fn a_duplicate_skips_the_second_tool_only() {
    let catalog = Catalog::from_tools_list(&json!([
        {"name": "fs.read", "description": "first", "_meta": {"version": "1"}},
        {"name": "fs.list", "_meta": {"version": "1"}},
        {"name": "fs.read", "description": "second", "_meta": {"version": "1"}}
    ]))
    .unwrap();
    assert_eq!(ids(&catalog), ["fs:list@1", "fs:read@1"]);
    assert_eq!(
        catalog.get("fs:read@1").unwrap().card().description(),
        "first"
    );
    let [skipped] = catalog.skipped() else {
        panic!("{:?}", catalog.skipped())
    };
    assert_eq!(skipped.pointer, "/2");
    assert!(matches!(skipped.error.kind(), ErrorKind::Collision { .. }));
}

/// Canonical ids (`:`, `#`, `@`) and their percent form (`%`) are outside MCP's tool-name
/// characters; the stripped `tools/list` now uses MCP-safe names that map back to the id.
#[test]
fn discovery_names_are_mcp_tool_names_and_map_back() {
    // 57 + 1 + 66 characters: an encoding of 135, shortened to 128.
    let namespace = "integration_server_for_the_analytics_warehouse_of_company";
    let long_name = "customer.records.export.to.warehouse.daily.snapshot.with.history";
    let mut builder = CatalogBuilder::new();
    builder
        .add_tools_list(
            Some(namespace),
            &json!([{"name": long_name, "_meta": {"version": "1"}}]),
        )
        .unwrap();
    let long = builder.build().unwrap();
    let long = long.tools().next().unwrap();
    assert_eq!(long.mcp_name().len(), 128);
    assert!(ToolId::from_mcp_name(long.mcp_name()).is_err(), "shortened");
    let catalog = Catalog::from_tools_list(&json!([
        {"name": "github.create_issue", "_meta": {"version": "1.4.0"}},
        {"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {}}}},
        {"name": "a.b.c", "_meta": {"version": "2024-05.1"}},
        {"name": format!("n.{long_name}"), "_meta": {"version": "1"}}
    ]))
    .unwrap();
    assert!(catalog.skipped().is_empty(), "{:?}", catalog.skipped());
    let entries = catalog.discovery(NameEncoding::default());
    assert_eq!(entries.len(), 4);
    for (entry, tool) in entries.iter().zip(catalog.tools()) {
        assert!(is_mcp_tool_name(&entry.name), "{}", entry.name);
        assert_eq!(catalog.resolve(&entry.name).unwrap().id(), tool.id());
        assert_eq!(catalog.hydrate(&entry.name).unwrap().tool_id, tool.id());
        if entry.name.len() < 128 {
            assert_eq!(&ToolId::from_mcp_name(&entry.name).unwrap(), tool.id());
        }
    }
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a.b..c.v2024-05.1",
            "github.create_issue.v1.4.0",
            "mcp.read_file.he197f027",
            "n.customer..records..export..to..warehouse..daily..snapshot..with..history.v1"
        ]
    );
}

/// Path browsing had no bound: one cluster returned 250 cards (6,747 tokens).
#[test]
fn a_large_cluster_is_paged_within_the_budget() {
    // 230 tools share the keyword `record`, 20 others `invoice`: two clusters.
    let tools: Vec<Value> = (0..250)
        .map(|i| {
            let name = if i < 230 {
                format!("big.fetch_record_{i:03}")
            } else {
                format!("big.sync_invoice_{i:03}")
            };
            json!({"name": name, "description": format!("Fetch item number {i} of the big table."),
                   "_meta": {"version": "1"}})
        })
        .collect();
    let catalog = Catalog::from_tools_list(&Value::Array(tools)).unwrap();
    let mut seen = Vec::new();
    let mut request = BrowseRequest::path("/big/records");
    let mut pages = 0;
    loop {
        let response = catalog.browse(&request).unwrap();
        pages += 1;
        assert!(response.cards().len() <= 20);
        assert!(
            response.tokens()
                <= CARD_HARD_CAP_TOKENS * response.cards().len() + RESPONSE_PREAMBLE_TOKENS
        );
        assert_eq!(response.total(), 230);
        seen.extend(response.ids().map(str::to_owned));
        match response.next_cursor() {
            Some(cursor) => {
                assert!(response.text().lines().next().unwrap().contains(cursor));
                request = BrowseRequest::path("/big/records").with_cursor(cursor);
            }
            None => break,
        }
    }
    assert_eq!(pages, 12);
    let all: Vec<String> = catalog
        .tools()
        .take(230)
        .map(|t| t.id().to_string())
        .collect();
    assert_eq!(seen, all);
    let first = catalog
        .browse(&BrowseRequest::path("/big/records"))
        .unwrap();
    assert_eq!(
        first.text().lines().next().unwrap(),
        "tool_browse: entries 1-20 of 230, internal entries are paths to browse; next page: cursor \"20\""
    );
    let wide = catalog
        .browse(&BrowseRequest::path("/big/records").with_top_k(50))
        .unwrap();
    assert_eq!(wide.cards().len(), 50);
    assert!(wide.tokens() <= 80 * 50 + 32);
}

/// §5.2: a tool first seen through hydrate was later shown with no score.
#[test]
fn a_tool_first_hydrated_keeps_its_query_score() {
    let catalog = Arc::new(
        Catalog::from_tools_list(&json!([
            {"name": "fs.read_file", "description": "Read a file.", "_meta": {"version": "1"}},
            {"name": "fs.write_file", "description": "Write a file.", "_meta": {"version": "1"}}
        ]))
        .unwrap(),
    );
    let mut session = Session::new(Arc::clone(&catalog)).cache_stable(true);
    session.hydrate("fs:read_file@1").unwrap();
    // Also a card first seen by a path, which carries no score.
    session
        .browse(&BrowseRequest::path("/fs/write_file"))
        .unwrap();
    let response = session
        .browse(&BrowseRequest::query("read a file"))
        .unwrap();
    let scores: Vec<Option<f64>> = response.cards().iter().map(|c| c.score()).collect();
    assert_eq!(
        response.ids().collect::<Vec<_>>(),
        ["fs:read_file@1", "fs:write_file@1"]
    );
    assert!(scores.iter().all(Option::is_some), "{scores:?}");
    // Frozen from then on: a later query with other scores re-emits the first ones.
    let again = session.browse(&BrowseRequest::query("write")).unwrap();
    let first: Vec<Option<f64>> = again.cards().iter().map(|c| c.score()).collect();
    assert_eq!(again.ids().collect::<Vec<_>>(), ["fs:write_file@1"]);
    assert_eq!(first, [scores[1]]);
    assert_eq!(again.text(), {
        let mut plain = Session::new(Arc::clone(&catalog)).cache_stable(true);
        plain
            .browse(&BrowseRequest::query("write"))
            .unwrap()
            .text()
            .to_owned()
    });
}

/// A catalog fed by several upstreams can be refreshed when one changes its tools; a
/// cache-stable session keeps its frozen cards (and their scores) across the refresh.
#[test]
fn refresh_keeps_cache_stable_order_and_scores() {
    let mut builder = CatalogBuilder::new();
    builder
        .add_tools_list(
            Some("fs"),
            &json!([{"name": "read", "description": "Read a file.", "_meta": {"version": "1"}}]),
        )
        .unwrap()
        .add_tools_list(
            Some("web"),
            &json!([{"name": "fetch", "description": "Fetch a page.", "_meta": {"version": "1"}}]),
        )
        .unwrap();
    let catalog = Arc::new(builder.build().unwrap());
    let mut session = Session::new(Arc::clone(&catalog)).cache_stable(true);
    let before = session
        .browse(&BrowseRequest::query("read a file"))
        .unwrap();
    let score = before.cards()[0].score();
    let changed = Arc::new(
        catalog
            .with_server(
                "fs",
                &json!({"tools": [
                    {"name": "read", "description": "Read a file, now better.", "_meta": {"version": "1"}},
                    {"name": "stat", "description": "Stat a file.", "_meta": {"version": "1"}}
                ]}),
            )
            .unwrap(),
    );
    assert_eq!(ids(&changed), ["fs:read@1", "fs:stat@1", "web:fetch@1"]);
    assert_eq!(changed.servers(), ["fs", "web"]);
    session.set_catalog(Arc::clone(&changed));
    let after = session.browse(&BrowseRequest::query("file")).unwrap();
    assert_eq!(
        after.ids().collect::<Vec<_>>(),
        ["fs:read@1", "__cache_breakpoint__", "fs:stat@1"]
    );
    assert_eq!(
        after.cards()[0],
        before.cards()[0],
        "frozen, score included"
    );
    assert_eq!(after.cards()[0].score(), score);
    // Removing a server forgets its cards.
    let without = Arc::new(changed.with_server("fs", &json!([])).unwrap());
    session.set_catalog(without);
    assert_eq!(session.seen().collect::<Vec<_>>(), Vec::<&str>::new());
}
