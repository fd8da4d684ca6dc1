//! Catalog-level behaviour: reachability of every tool, several servers, sessions.

use std::sync::Arc;

use agentwire_toolcard::{
    BrowseRequest, Catalog, CatalogBuilder, ErrorCode, ErrorKind, Session, ToolDefinition,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Every tool's path resolves to exactly that tool's card, and walking the graph from the root
/// reaches every tool exactly once.
fn check_reachability(catalog: &Catalog) {
    let mut reached = Vec::new();
    let mut pending = vec![BrowseRequest::path("/")];
    while let Some(request) = pending.pop() {
        let response = catalog.browse(&request).unwrap();
        assert!(response.cards().len() <= agentwire_toolcard::DEFAULT_PAGE_SIZE);
        for card in response.cards() {
            if card.id().starts_with('/') {
                pending.push(BrowseRequest::path(card.id()));
            } else {
                reached.push(card.id().to_owned());
            }
        }
        if let (Some(cursor), BrowseRequest::Path { path, .. }) = (response.next_cursor(), &request)
        {
            pending.push(BrowseRequest::path(path.clone()).with_cursor(cursor));
        }
    }
    reached.sort();
    let ids: Vec<String> = catalog.tools().map(|t| t.id().to_string()).collect();
    assert_eq!(reached, ids, "walking the graph reaches every tool once");
    for tool in catalog.tools() {
        let path = catalog.path_of(tool.id().as_str()).unwrap();
        let response = catalog.browse(&BrowseRequest::path(path)).unwrap();
        let found: Vec<&str> = response.ids().collect();
        assert_eq!(found, [tool.id().as_str()], "{path}");
        assert!(response.tokens() <= 80 + 32);
    }
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("Does {name}."), "_meta": {"version": "1"}})
}

#[test]
fn a_large_namespace_is_clustered_and_fully_reachable() {
    let verbs = ["get", "list", "create", "delete", "update", "archive"];
    let nouns = [
        "issue",
        "repo",
        "branch",
        "commit",
        "label",
        "milestone",
        "team",
    ];
    let mut tools: Vec<Value> = Vec::new();
    for verb in verbs {
        for noun in nouns {
            tools.push(tool(&format!("big.{verb}_{noun}")));
        }
    }
    // Names that collide once made into path segments.
    tools.push(tool("big.Get_Issue"));
    tools.push(tool("big._get_issue"));
    tools.push(tool("big.get-issue"));
    tools.push(json!({"name": "big.get_issue", "_meta": {"version": "2"}}));
    tools.push(tool("small.ping"));
    let catalog = Catalog::from_tools_list(&Value::Array(tools)).unwrap();
    check_reachability(&catalog);
    let clusters = catalog.browse(&BrowseRequest::path("/big")).unwrap();
    let ids: Vec<&str> = clusters.ids().collect();
    assert_eq!(
        ids,
        [
            "/big/archives",
            "/big/branches",
            "/big/commits",
            "/big/issues",
            "/big/labels",
            "/big/milestones",
            "/big/repos",
            "/big/teams"
        ]
    );
    let issues = catalog.browse(&BrowseRequest::path("/big/issues")).unwrap();
    assert_eq!(issues.cards().len(), 10, "{}", issues.text());
}

#[test]
fn several_servers_keep_their_namespaces() {
    let mut builder = CatalogBuilder::new();
    builder
        .add_tools_list(Some("alpha"), &json!([{"name": "search"}]))
        .unwrap()
        .add_tools_list(Some("beta"), &json!({"tools": [{"name": "search"}]}))
        .unwrap()
        .add_tool(
            None,
            ToolDefinition::from_json(&json!({"name": "gamma.search"})).unwrap(),
        );
    let catalog = builder.build().unwrap();
    let ids: Vec<String> = catalog.tools().map(|t| t.id().to_string()).collect();
    // The same upstream name and shape give the same hash in every namespace.
    assert_eq!(
        ids,
        [
            "alpha:search#6f6573d7",
            "beta:search#6f6573d7",
            "gamma:search#60c95f19"
        ]
    );
    assert_eq!(
        catalog.get("beta:search#6f6573d7").unwrap().server(),
        Some("beta")
    );
    check_reachability(&catalog);
}

#[test]
fn collisions_across_servers_are_loud() {
    let mut builder = CatalogBuilder::new();
    builder
        .add_tools_list(Some("Alpha"), &json!([{"name": "search"}]))
        .unwrap()
        .add_tools_list(
            Some("alpha"),
            &json!([{"name": "search"}, {"name": "find"}]),
        )
        .unwrap();
    let catalog = builder.build().unwrap();
    // The first registered keeps the id; the second is skipped and reported, loudly.
    let ids: Vec<&str> = catalog.tools().map(|t| t.id().as_str()).collect();
    assert_eq!(ids, ["alpha:find#96960e00", "alpha:search#6f6573d7"]);
    assert_eq!(
        catalog.get("alpha:search#6f6573d7").unwrap().server(),
        Some("Alpha")
    );
    let [skipped] = catalog.skipped() else {
        panic!("{:?}", catalog.skipped())
    };
    assert!(
        matches!(skipped.error.kind(), ErrorKind::Collision { .. }),
        "{skipped}"
    );
    assert_eq!(skipped.error.code(), ErrorCode::Catalog);
    assert_eq!(skipped.server.as_deref(), Some("alpha"));
    assert_eq!(skipped.pointer, "/0");
    assert_eq!(skipped.tool_id.as_deref(), Some("alpha:search#6f6573d7"));
}

#[test]
fn invalid_json_text_has_a_position() {
    let error = Catalog::from_tools_list_str("{\"tools\": [\n  {\"name\": }]}").unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::InvalidJson {
                line: 2,
                column: 12,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!((error.line(), error.column()), (Some(2), Some(12)));
    assert!(
        error
            .to_string()
            .starts_with("CATALOG_ERROR at line 2, column 12: invalid JSON: "),
        "{error}"
    );
    // Columns count characters, not bytes.
    let error = Catalog::from_tools_list_str("[\"é\", }").unwrap_err();
    assert_eq!(
        (error.line(), error.column()),
        (Some(1), Some(7)),
        "{error}"
    );
}

#[test]
fn sessions_over_borrowed_and_shared_catalogs() {
    let catalog = Catalog::from_tools_list(&json!([tool("a.one"), tool("a.two")])).unwrap();
    let mut borrowed = Session::new(&catalog).cache_stable(true);
    borrowed.browse(&BrowseRequest::path("/a/one")).unwrap();
    assert_eq!(borrowed.seen().collect::<Vec<_>>(), ["a:one@1"]);
    let response = borrowed.browse(&BrowseRequest::path("/a")).unwrap();
    assert_eq!(
        response.ids().collect::<Vec<_>>(),
        ["a:one@1", "__cache_breakpoint__", "a:two@1"]
    );
    // A failed hydration changes nothing.
    assert_eq!(
        borrowed.hydrate("a:three@1").unwrap_err().code(),
        ErrorCode::HydrateFailed
    );
    assert_eq!(borrowed.seen().count(), 2);
    borrowed.reset();
    assert_eq!(borrowed.seen().count(), 0);

    let shared = Arc::new(catalog);
    let mut plain = Session::new(Arc::clone(&shared));
    plain.hydrate("a:one@1").unwrap();
    assert_eq!(plain.seen().count(), 0, "only cache-stable sessions track");
    let args = json!({"query": "one", "top_k": 1});
    assert_eq!(plain.browse_arguments(&args).unwrap().cards().len(), 1);
}

fn name_strategy() -> impl Strategy<Value = String> {
    // Names drawn from a small vocabulary so that keywords repeat and segments collide.
    let word = prop::sample::select(vec![
        "get", "list", "issue", "issues", "Issue", "repo", "x", "a1", "file", "files", "run",
        "sync", "data", "user", "users",
    ]);
    let sep = prop::sample::select(vec!["_", "-", ".", ""]);
    (
        prop::collection::vec((word, sep), 1..4),
        prop::option::of("[0-9]{1,2}"),
    )
        .prop_map(|(parts, suffix)| {
            let mut name = String::from("ns.");
            for (w, s) in parts {
                name.push_str(w);
                name.push_str(s);
            }
            let mut name = name.trim_end_matches(['_', '-', '.']).to_owned();
            if let Some(n) = suffix {
                name.push_str(&n);
            }
            name
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_tool_is_reachable(names in prop::collection::btree_set(name_strategy(), 1..60)) {
        let tools: Vec<Value> = names
            .iter()
            .filter(|n| n.len() > 3)
            .map(|n| json!({"name": n, "description": "d."}))
            .collect();
        let count = tools.len();
        let catalog = Catalog::from_tools_list(&Value::Array(tools)).unwrap();
        check_reachability(&catalog);
        // Names such as `ns.1` cannot form an id: skipped and reported, never dropped.
        prop_assert_eq!(catalog.len() + catalog.skipped().len(), count);
        for skipped in catalog.skipped() {
            prop_assert_eq!(skipped.error.code(), ErrorCode::Catalog);
        }
    }
}
