//! The round-trip oracle for `agentwire-toolcard`'s parsers: tool ids, browse paths and
//! `tools/list` catalogs.

use agentwire_toolcard::{
    format_tool_id, parse_path, parse_tool_id, Catalog, CARD_HARD_CAP_TOKENS,
};

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
    }
}
