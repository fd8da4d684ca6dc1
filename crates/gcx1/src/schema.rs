//! What the crate knows about Gortex's tools: the wrapper key their rows travel under, which
//! sections hold one object, the type of each column and meta key, and the column order
//! Gortex writes. The value codec ([`crate::value`]) reads untyped payloads (those without a
//! `types=` meta, as Gortex writes them) with this knowledge, and writes payloads for these
//! tools in Gortex's column order.
//!
//! Two sources, documented in docs/gcx1.md section 4: the spec's field tables (the seed) and
//! what Gortex's encoders write today (`internal/mcp/gcx.go`, and the wrapper shapes of its
//! `bench/wire-format` harness). Where they differ, both are listed: a column either writes is
//! known, and its type is the same in both.

/// How a column's (or a meta value's) text reads when the payload carries no type letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Text, as is.
    Str,
    /// An integer.
    Int,
    /// A number read as a float (`1` is `1.0`).
    Float,
    /// `true` or `false`.
    Bool,
    /// A list of strings: comma-joined (Gortex's `analyze.cycles` and `contracts.list`), or
    /// a JSON array.
    List,
    /// Inferred from the text: booleans, JSON numbers and JSON arrays and objects are what
    /// they look like, anything else is text.
    Auto,
}

/// What a section other than the first of a tool holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    /// Rows: an array of objects (the default).
    List,
    /// One row: an object under the section's key.
    Single,
    /// One row whose members belong to the response itself.
    Merge,
}

/// One tool's knowledge.
#[derive(Debug)]
pub(crate) struct Tool {
    /// The tool (or, for `analyze.*` and `contracts.*`, the section) name.
    pub(crate) name: &'static str,
    /// The member the rows of a section named exactly like the tool travel under, when the
    /// section carries meta (Gortex's `{results: [...], total, truncated}`).
    pub(crate) wrapper: Option<&'static str>,
    /// The section named like the tool is one object, its meta merged into it
    /// (`get_symbol_source`).
    pub(crate) record: bool,
    /// Sections `<tool>.<key>` that do not hold a list.
    pub(crate) sections: &'static [(&'static str, Holds)],
    /// Column and meta types beyond the common ones.
    pub(crate) kinds: &'static [(&'static str, Kind)],
    /// The column order Gortex writes, per section key (`""` for the section named like the
    /// tool): the seed's columns and the later ones, in Gortex's order.
    pub(crate) order: &'static [(&'static str, &'static [&'static str])],
    /// The seed's columns per section, which the typed layouts always write.
    pub(crate) seed: &'static [(&'static str, &'static [&'static str])],
    /// Meta keys Gortex writes on a section other than the first (`count` on `.edges`).
    pub(crate) meta_at: &'static [(&'static str, &'static str)],
}

impl Tool {
    /// The type of column or meta key `name` in this tool's payloads.
    pub(crate) fn kind(&self, name: &str) -> Kind {
        if let Some((_, kind)) = self.kinds.iter().find(|(n, _)| same_text(n, name)) {
            return *kind;
        }
        COMMON
            .iter()
            .find(|(n, _)| same_text(n, name))
            .map_or(Kind::Auto, |(_, kind)| *kind)
    }

    /// [`Tool::kind`] of a name whose [`common_kind`] is known.
    #[inline]
    pub(crate) fn kind_known(&self, name: &str, common: Option<Kind>) -> Kind {
        if let Some((_, kind)) = self.kinds.iter().find(|(n, _)| same_text(n, name)) {
            return *kind;
        }
        common.unwrap_or(Kind::Auto)
    }
}

/// The type [`COMMON`] gives `name`, at compile time for a constant name.
pub(crate) const fn common_kind(name: &str) -> Option<Kind> {
    const fn same(a: &[u8], b: &[u8]) -> bool {
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    let mut i = 0;
    while i < COMMON.len() {
        if same(COMMON[i].0.as_bytes(), name.as_bytes()) {
            return Some(COMMON[i].1);
        }
        i += 1;
    }
    None
}

impl Tool {
    /// What section `<tool>.<key>` holds.
    pub(crate) fn holds(&self, key: &str) -> Holds {
        self.sections
            .iter()
            .find(|(k, _)| same_text(k, key))
            .map_or(Holds::List, |(_, holds)| *holds)
    }

    /// Gortex's column order for the section with `key` (`""`: the section named like the
    /// tool).
    pub(crate) fn order(&self, key: &str) -> &'static [&'static str] {
        lookup(self.order, key)
    }

    /// The seed's columns for the section with `key`.
    pub(crate) fn seed(&self, key: &str) -> &'static [&'static str] {
        lookup(self.seed, key)
    }
}

fn lookup(
    table: &'static [(&'static str, &'static [&'static str])],
    key: &str,
) -> &'static [&'static str] {
    table
        .iter()
        .find(|(k, _)| same_text(k, key))
        .map_or(&[], |(_, columns)| columns)
}

use crate::value::{same_bytes, same_text};
use Kind::{Bool, Float, Int, List, Str};

/// Columns and meta keys every Gortex tool writes with the same type.
const COMMON: &[(&str, Kind)] = &[
    // Text.
    ("id", Str),
    ("kind", Str),
    ("name", Str),
    ("path", Str),
    ("path_abs", Str),
    ("file_path", Str),
    ("file", Str),
    ("sig", Str),
    ("signature", Str),
    ("source", Str),
    ("etag", Str),
    ("error", Str),
    ("reason", Str),
    ("label", Str),
    ("origin", Str),
    ("tier", Str),
    ("via", Str),
    ("edge_kind", Str),
    ("context", Str),
    ("return_usage", Str),
    ("from", Str),
    ("to", Str),
    ("from_name", Str),
    ("from_path", Str),
    ("enclosing", Str),
    ("test_role", Str),
    ("test_runner", Str),
    ("type_flavor", Str),
    ("ui_component", Str),
    ("from_test_role", Str),
    ("from_test_runner", Str),
    ("from_type_flavor", Str),
    ("from_ui_component", Str),
    ("severity", Str),
    ("type", Str),
    ("method", Str),
    ("service", Str),
    ("role", Str),
    ("repo", Str),
    ("symbol", Str),
    ("symbol_id", Str),
    ("contract_id", Str),
    ("side", Str),
    ("message", Str),
    ("class", Str),
    ("task", Str),
    ("seed_id", Str),
    ("direction", Str),
    ("omissions", Str),
    ("caveat", Str),
    ("weights", Str),
    ("contributions", Str),
    ("sync_guarded_why", Str),
    ("cross_concurrent_why", Str),
    ("max_available_tier", Str),
    ("tier_filtered", Str),
    // Integers.
    ("line", Int),
    ("start_line", Int),
    ("end_line", Int),
    ("from_line", Int),
    ("fan_in", Int),
    ("fan_out", Int),
    ("cross_cut", Int),
    ("cross_community", Int),
    ("total", Int),
    ("count", Int),
    ("total_nodes", Int),
    ("total_edges", Int),
    ("n_refs", Int),
    ("n_files", Int),
    ("n_test_refs", Int),
    ("text_matched_suppressed", Int),
    ("edges_below_min_tier", Int),
    ("stopped_at_depth", Int),
    // Floats.
    ("confidence", Float),
    ("score", Float),
    ("betweenness", Float),
    // Booleans.
    ("truncated", Bool),
    ("is_test", Bool),
    ("from_is_test", Bool),
    ("external", Bool),
    ("budget_hit", Bool),
    ("lower_bound", Bool),
    ("sync_guarded", Bool),
    ("cross_concurrent", Bool),
];

const NODE_ORDER: &[&str] = &[
    "id",
    "kind",
    "name",
    "path",
    "path_abs",
    "line",
    "is_test",
    "test_role",
    "test_runner",
];
const EDGE_ORDER: &[&str] = &[
    "from",
    "to",
    "kind",
    "origin",
    "tier",
    "via",
    "confidence",
    "label",
    "line",
    "file_path",
];
const NOTES_ORDER: &[&str] = &["kind", "class", "message"];
const GRAPH_ORDER: &[(&str, &[&str])] = &[
    ("nodes", NODE_ORDER),
    ("edges", EDGE_ORDER),
    ("notes", NOTES_ORDER),
    (
        "caller_notes",
        &[
            "id",
            "sync_guarded",
            "sync_guarded_why",
            "cross_concurrent",
            "cross_concurrent_why",
        ],
    ),
    (
        "boundaries",
        &["seed_id", "target", "edge_kind", "reason", "direction"],
    ),
];
const SYMBOL_REF_ORDER: &[&str] = &["id", "kind", "name", "path", "line"];

const GRAPH_SEED: &[(&str, &[&str])] = &[
    ("nodes", SYMBOL_REF_ORDER),
    (
        "edges",
        &["from", "to", "kind", "origin", "confidence", "label"],
    ),
];

const fn graph(name: &'static str, wrapper: Option<&'static str>) -> Tool {
    Tool {
        name,
        wrapper,
        record: false,
        sections: &[],
        kinds: &[],
        order: GRAPH_ORDER,
        seed: GRAPH_SEED,
        meta_at: &[("count", "edges")],
    }
}

/// Every tool the crate knows, by name.
pub(crate) static TOOLS: &[Tool] = &[
    Tool {
        meta_at: &[],
        name: "search_symbols",
        wrapper: Some("results"),
        record: false,
        sections: &[],
        kinds: &[],
        order: &[(
            "",
            &[
                "id",
                "kind",
                "name",
                "path",
                "path_abs",
                "line",
                "sig",
                "enclosing",
                "is_test",
                "test_role",
                "test_runner",
                "type_flavor",
                "ui_component",
            ],
        )],
        seed: &[("", &["id", "kind", "name", "path", "line", "sig"])],
    },
    Tool {
        meta_at: &[],
        name: "winnow_symbols",
        wrapper: Some("results"),
        record: false,
        sections: &[],
        kinds: &[("churn", Int)],
        order: &[(
            "",
            &[
                "id",
                "kind",
                "name",
                "path",
                "line",
                "sig",
                "score",
                "fan_in",
                "fan_out",
                "churn",
                "community",
                "contributions",
                "is_test",
                "test_role",
                "test_runner",
            ],
        )],
        seed: &[],
    },
    Tool {
        meta_at: &[],
        name: "get_symbol_source",
        wrapper: None,
        record: true,
        sections: &[],
        kinds: &[],
        order: &[(
            "",
            &[
                "id",
                "kind",
                "name",
                "path",
                "start_line",
                "end_line",
                "from_line",
                "sig",
                "etag",
                "source",
            ],
        )],
        seed: &[(
            "",
            &[
                "id",
                "kind",
                "name",
                "path",
                "start_line",
                "end_line",
                "from_line",
                "sig",
                "etag",
                "source",
            ],
        )],
    },
    Tool {
        meta_at: &[],
        name: "batch_symbols",
        wrapper: Some("symbols"),
        record: false,
        sections: &[],
        kinds: &[],
        order: &[(
            "",
            &[
                "id",
                "kind",
                "name",
                "path",
                "start_line",
                "end_line",
                "sig",
                "source",
                "error",
            ],
        )],
        seed: &[(
            "",
            &[
                "id",
                "kind",
                "name",
                "path",
                "start_line",
                "end_line",
                "sig",
                "error",
            ],
        )],
    },
    Tool {
        meta_at: &[],
        name: "find_usages",
        wrapper: Some("edges"),
        record: false,
        sections: &[],
        kinds: &[("edges", Int)],
        order: &[
            (
                "",
                &[
                    "from",
                    "to",
                    "edge_kind",
                    "context",
                    "return_usage",
                    "origin",
                    "tier",
                    "confidence",
                    "from_name",
                    "from_path",
                    "from_line",
                    "from_is_test",
                    "from_test_role",
                    "from_test_runner",
                    "from_type_flavor",
                    "from_ui_component",
                ],
            ),
            ("nodes", NODE_ORDER),
            ("edges", EDGE_ORDER),
            ("notes", NOTES_ORDER),
        ],
        seed: &[(
            "",
            &[
                "from",
                "to",
                "edge_kind",
                "origin",
                "confidence",
                "from_name",
                "from_path",
                "from_line",
            ],
        )],
    },
    Tool {
        meta_at: &[],
        name: "get_file_summary",
        wrapper: Some("symbols"),
        record: false,
        sections: &[],
        kinds: &[],
        order: &[("", &["id", "kind", "name", "line", "sig"])],
        seed: &[("", &["id", "kind", "name", "line", "sig"])],
    },
    graph("get_callers", None),
    graph("get_call_chain", None),
    graph("get_dependencies", None),
    graph("get_dependents", None),
    graph("walk_graph", None),
    graph("find_implementations", Some("implementations")),
    Tool {
        meta_at: &[],
        name: "get_editing_context",
        wrapper: None,
        record: false,
        sections: &[("target", Holds::Single)],
        kinds: &[],
        order: &[
            (
                "target",
                &[
                    "id",
                    "kind",
                    "name",
                    "path",
                    "start_line",
                    "end_line",
                    "sig",
                    "etag",
                ],
            ),
            ("callers", SYMBOL_REF_ORDER),
            ("dependencies", SYMBOL_REF_ORDER),
            ("tests", &["path"]),
            ("defines", &["id", "kind", "name", "line", "sig"]),
            ("imports", &["id", "external"]),
            ("called_by", &["id", "name", "path", "line"]),
            ("calls", &["id", "name", "path", "line"]),
        ],
        seed: &[
            (
                "target",
                &[
                    "id",
                    "kind",
                    "name",
                    "path",
                    "start_line",
                    "end_line",
                    "sig",
                    "etag",
                ],
            ),
            ("callers", SYMBOL_REF_ORDER),
            ("dependencies", SYMBOL_REF_ORDER),
            ("tests", &["path"]),
        ],
    },
    Tool {
        meta_at: &[],
        name: "smart_context",
        wrapper: Some("symbols"),
        record: false,
        sections: &[("task", Holds::Merge)],
        kinds: &[],
        order: &[
            ("task", &["task"]),
            (
                "symbols",
                &["id", "kind", "name", "path", "line", "score", "reason"],
            ),
        ],
        seed: &[
            ("task", &["task"]),
            (
                "symbols",
                &["id", "kind", "name", "path", "line", "score", "reason"],
            ),
        ],
    },
    Tool {
        meta_at: &[],
        name: "analyze.dead_code",
        wrapper: Some("items"),
        record: false,
        sections: &[],
        kinds: &[],
        order: &[("", &["id", "kind", "name", "path", "line", "reason"])],
        seed: &[("", &["id", "kind", "name", "path", "line", "reason"])],
    },
    Tool {
        meta_at: &[],
        name: "analyze.hotspots",
        wrapper: Some("items"),
        record: false,
        sections: &[],
        kinds: &[],
        order: &[(
            "",
            &[
                "id",
                "name",
                "path",
                "line",
                "fan_in",
                "fan_out",
                "cross_cut",
                "betweenness",
                "score",
            ],
        )],
        seed: &[(
            "",
            &[
                "id",
                "name",
                "path",
                "line",
                "fan_in",
                "fan_out",
                "cross_cut",
                "score",
            ],
        )],
    },
    Tool {
        meta_at: &[],
        name: "analyze.cycles",
        wrapper: Some("items"),
        record: false,
        sections: &[],
        kinds: &[("size", Int), ("nodes", List)],
        order: &[("", &["size", "severity", "nodes"])],
        seed: &[("", &["size", "severity", "nodes"])],
    },
    Tool {
        meta_at: &[],
        name: "contracts.list",
        wrapper: Some("contracts"),
        record: false,
        sections: &[],
        kinds: &[("providers", List), ("consumers", List), ("meta", Str)],
        order: &[(
            "",
            &[
                "id",
                "type",
                "role",
                "repo",
                "method",
                "path",
                "file",
                "line",
                "service",
                "providers",
                "consumers",
                "symbol_id",
                "confidence",
                "meta",
            ],
        )],
        seed: &[(
            "",
            &[
                "id",
                "type",
                "method",
                "path",
                "service",
                "providers",
                "consumers",
            ],
        )],
    },
    Tool {
        meta_at: &[],
        name: "contracts.orphans",
        wrapper: Some("orphans"),
        record: false,
        sections: &[],
        kinds: &[],
        order: &[("", &["contract_id", "side", "repo", "symbol"])],
        seed: &[("", &["contract_id", "side", "repo", "symbol"])],
    },
];

/// The knowledge about tool `name`, if any.
pub(crate) fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| same_text(t.name, name))
}

/// The tool named `{name}.{key}`, without building the name.
pub(crate) fn member_tool(name: &str, key: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| {
        let bytes = t.name.as_bytes();
        bytes.len() == name.len() + 1 + key.len()
            && bytes[name.len()] == b'.'
            && same_bytes(&bytes[..name.len()], name.as_bytes())
            && same_bytes(&bytes[name.len() + 1..], key.as_bytes())
    })
}

/// The member the rows of a lone section with meta travel under, for a tool the crate does
/// not know: the rules of Gortex's wire-format harness (`total_edges` → `edges`, `etag` →
/// `symbols`, otherwise `results`).
pub(crate) fn default_wrapper(meta_keys: &mut dyn Iterator<Item = &str>) -> &'static str {
    let mut wrapper = "results";
    for key in meta_keys {
        match key {
            "total_edges" => return "edges",
            "etag" => wrapper = "symbols",
            _ => {}
        }
    }
    wrapper
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        let search = tool("search_symbols").unwrap();
        assert_eq!(search.kind("line"), Int);
        assert_eq!(search.kind("is_test"), Bool);
        assert_eq!(search.kind("unknown"), Kind::Auto);
        assert_eq!(search.order("")[4], "path_abs");
        assert_eq!(tool("analyze.cycles").unwrap().kind("nodes"), List);
        assert_eq!(tool("get_callers").unwrap().kind("nodes"), Kind::Auto);
        assert_eq!(
            tool("get_editing_context").unwrap().holds("target"),
            Holds::Single
        );
        assert!(tool("response").is_none());
        let keys = ["rows", "total_edges"];
        assert_eq!(default_wrapper(&mut keys.into_iter()), "edges");
        let keys = ["etag", "total"];
        assert_eq!(default_wrapper(&mut keys.into_iter()), "symbols");
        assert_eq!(default_wrapper(&mut ["total"].into_iter()), "results");
    }

    #[test]
    fn names_are_unique() {
        for (i, t) in TOOLS.iter().enumerate() {
            assert!(TOOLS[..i].iter().all(|o| o.name != t.name), "{}", t.name);
            for (j, (name, _)) in t.kinds.iter().enumerate() {
                assert!(t.kinds[..j].iter().all(|(n, _)| n != name));
            }
        }
        for (name, kind) in COMMON {
            assert_eq!(common_kind(name), Some(*kind), "{name}");
        }
        for name in ["", "x", "ids", "kind\u{0}"] {
            assert_eq!(common_kind(name), None, "{name:?}");
        }
        for (i, (name, _)) in COMMON.iter().enumerate() {
            assert!(COMMON[..i].iter().all(|(n, _)| n != name), "{name}");
        }
    }
}
