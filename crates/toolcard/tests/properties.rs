//! Property tests: tool_id round trips, total parsing, truncation within budget, path parsing.

use agentwire_tokens::Tokenizer;
use agentwire_toolcard::{
    format_tool_id, parse_path, parse_tool_id, truncate_description, ErrorCode, ToolId, ToolIdParts,
};
use proptest::prelude::*;

/// Valid tool_ids, generated from the grammar of spec §1.1 (with §1.2's version-or-hash rule).
fn valid_id() -> impl Strategy<Value = String> {
    let namespace = "[a-z][a-z0-9_-]{0,63}";
    let name = "[A-Za-z_][A-Za-z0-9_.-]{0,127}";
    let version = proptest::option::of("[A-Za-z0-9._-]{1,32}");
    let hash = proptest::option::of("[0-9a-f]{8}");
    (namespace, name, version, hash)
        .prop_filter("a version or a hash", |(_, _, v, h)| {
            v.is_some() || h.is_some()
        })
        .prop_map(|(ns, name, version, hash)| {
            let mut id = format!("{ns}:{name}");
            if let Some(v) = version {
                id.push('@');
                id.push_str(&v);
            }
            if let Some(h) = hash {
                id.push('#');
                id.push_str(&h);
            }
            id
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn format_inverts_parse(id in valid_id()) {
        let parts = parse_tool_id(&id).unwrap();
        prop_assert_eq!(format_tool_id(&parts).unwrap(), id.clone());
        prop_assert!(id.len() <= 240);
        let parsed = ToolId::parse(&id).unwrap();
        prop_assert_eq!(parsed.parts(), parts);
        prop_assert_eq!(ToolId::from_percent_encoded(&parsed.to_percent_encoded()).unwrap(), parsed);
    }

    #[test]
    fn parse_inverts_format(
        namespace in "[a-z][a-z0-9_-]{0,63}",
        name in "[A-Za-z_][A-Za-z0-9_.-]{0,127}",
        version in proptest::option::of("[A-Za-z0-9._-]{1,32}"),
        hash8 in "[0-9a-f]{8}",
    ) {
        let parts = ToolIdParts { namespace, name, version, hash8: Some(hash8) };
        let text = format_tool_id(&parts).unwrap();
        prop_assert_eq!(parse_tool_id(&text).unwrap(), parts);
    }

    /// Any string either parses to an id that formats back to itself or is a typed
    /// CATALOG_ERROR whose offset lies within the input; never a panic.
    #[test]
    fn parsing_is_total(s in "[a-zA-Z0-9:@#._/ é-]{0,80}") {
        match parse_tool_id(&s) {
            Ok(parts) => prop_assert_eq!(format_tool_id(&parts).unwrap(), s),
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::Catalog);
                let json = e.to_json();
                let offset = json["details"]["offset"].as_u64().unwrap() as usize;
                prop_assert!(offset <= s.len());
            }
        }
    }

    #[test]
    fn paths_parse_or_fail_with_an_offset(s in "[a-z0-9/*_.A-]{0,24}") {
        match parse_path(&s) {
            Ok(path) => {
                let rebuilt = format!(
                    "/{}{}",
                    path.segments().collect::<Vec<_>>().join("/"),
                    if path.has_wildcard() {
                        if path.segments().len() == 0 { "*" } else { "/*" }
                    } else { "" }
                );
                prop_assert_eq!(rebuilt, s);
            }
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::PathInvalid);
                let offset = e.to_json()["details"]["offset"].as_u64().unwrap() as usize;
                prop_assert!(offset <= s.len());
            }
        }
    }
}

proptest! {
    // Token counting in debug builds is slow; a few dozen cases cover the shapes.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn truncation_fits_and_is_a_prefix(
        text in "([a-zA-Z]{1,9}[ .!?,\n]{1,2}|[日本😀é]){0,60}",
        budget in 1usize..24,
    ) {
        let cut = truncate_description(&text, budget);
        prop_assert!(Tokenizer::Cl100kBase.count(&cut) <= budget, "{:?}", cut);
        let stem = cut.strip_suffix('\u{2026}').unwrap_or(&cut);
        prop_assert!(text.starts_with(stem));
        prop_assert_eq!(truncate_description(&text, budget), cut.clone());
    }
}
