//! Property tests of the graph profile: random graphs (names that collide across kinds and
//! with the line syntax, multigraph edges, every group form) round-trip through the buffered,
//! streamed, session and delta forms, checked by the shared oracle in `agentwire-testkit`.

use agentwire_gcf::{Edge, EdgeStatus, Graph, Kind, Symbol};
use agentwire_testkit::gcf_graph::{
    check_delta, check_graph, check_reader, check_session, check_stream,
};
use proptest::prelude::*;

/// The number of cases: `PROPTEST_CASES` when set (for long runs), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Names that collide: with each other across kinds, and with the line syntax (`#`, `@`,
/// `<`, `->`, digits, the section and comment markers).
const NAMES: &[&str] = &[
    "a",
    "b",
    "pkg.Auth",
    "pkg.Server",
    "github.com/org/repo/pkg.(*T).M",
    "#",
    "#x",
    "##",
    "##!",
    "@0",
    "@1<@0",
    "->",
    "<",
    "0.50",
    "true",
    "-",
    "~",
    "\"q\"",
    "a=b",
    "x|y,z",
];

const KINDS: &[&str] = &[
    "function",
    "fn",
    "type",
    "method",
    "interface",
    "iface",
    "var",
    "const",
    "resource",
    "table",
    "class",
    "selector",
    "field",
    "route_handler",
    "route",
    "external",
    "file",
    "package",
    "service",
    "svc",
    "widget",
    "constant",
    "_k9",
];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(NAMES).prop_map(str::to_owned),
        1 => "[!-~]{1,12}",
    ]
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::sample::select(&["lsp", "ast", "rwr", "lsp_resolved", "calls", "added", "removed", "#"][..])
            .prop_map(str::to_owned),
        1 => "[!-~]{1,10}",
    ]
}

fn symbol() -> impl Strategy<Value = Symbol> {
    (
        name(),
        prop::sample::select(KINDS),
        -300i64..=300,
        token(),
        prop_oneof![6 => 0u32..4, 1 => 4u32..12, 1 => Just(u32::MAX)],
    )
        .prop_map(|(name, kind, cents, provenance, distance)| Symbol {
            qualified_name: name,
            kind: Kind::from(kind),
            // On the two-decimal grid the wire carries.
            score: cents as f64 / 100.0,
            provenance,
            distance,
        })
}

/// A valid graph: unique identities, edges between its symbols (kinds given exactly where a
/// name is shared), optional metadata.
fn graph(max_symbols: usize, max_edges: usize) -> impl Strategy<Value = Graph> {
    (
        prop::collection::vec(symbol(), 0..=max_symbols),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                token(),
                prop::option::weighted(0.2, prop::bool::ANY),
            ),
            0..=max_edges,
        ),
        prop::option::of("[!-~]{1,8}"),
        prop::option::of(0u64..100_000),
        prop::option::of(0u64..100_000),
        prop::option::weighted(0.2, "sha256:[0-9a-f]{8}"),
    )
        .prop_map(|(symbols, edges, tool, budget, tokens, root)| {
            let mut unique: Vec<Symbol> = Vec::new();
            for s in symbols {
                if !unique
                    .iter()
                    .any(|u| u.qualified_name == s.qualified_name && u.kind == s.kind)
                {
                    unique.push(s);
                }
            }
            let edges = if unique.is_empty() {
                Vec::new()
            } else {
                edges
                    .into_iter()
                    .map(|(s, t, edge_type, status)| {
                        edge_between(
                            &unique,
                            s.index(unique.len()),
                            t.index(unique.len()),
                            edge_type,
                            status,
                        )
                    })
                    .collect()
            };
            Graph {
                tool,
                token_budget: budget,
                tokens_used: tokens,
                pack_root: root,
                symbols: unique,
                edges,
            }
        })
}

fn edge_between(
    symbols: &[Symbol],
    s: usize,
    t: usize,
    edge_type: String,
    status: Option<bool>,
) -> Edge {
    let shared = |i: usize| {
        symbols
            .iter()
            .filter(|x| x.qualified_name == symbols[i].qualified_name)
            .count()
            > 1
    };
    Edge {
        source: symbols[s].qualified_name.clone(),
        target: symbols[t].qualified_name.clone(),
        edge_type,
        status: status.map(|added| {
            if added {
                EdgeStatus::Added
            } else {
                EdgeStatus::Removed
            }
        }),
        source_kind: shared(s).then(|| symbols[s].kind.clone()),
        target_kind: shared(t).then(|| symbols[t].kind.clone()),
    }
}

/// A tiny deterministic generator for deriving related graphs from one pool.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A graph over a random subset of `pool`'s symbols, some with changed scores, provenance
/// or distance, and random edges among them.
fn variant(pool: &Graph, seed: u64) -> Graph {
    let mut rng = Rng(seed | 1);
    let mut symbols = Vec::new();
    for s in &pool.symbols {
        if rng.below(4) == 0 {
            continue;
        }
        let mut s = s.clone();
        match rng.below(6) {
            0 => s.score = (rng.below(200) as f64 - 50.0) / 100.0,
            1 => s.distance = rng.below(5) as u32,
            2 => s.provenance = "changed".into(),
            _ => {}
        }
        symbols.push(s);
    }
    let n = symbols.len() as u64;
    let edges = (0..if n == 0 { 0 } else { rng.below(2 * n + 2) })
        .map(|_| {
            let (s, t) = (rng.below(n) as usize, rng.below(n) as usize);
            let edge_type = ["calls", "uses", "implements"][rng.below(3) as usize].to_owned();
            edge_between(&symbols, s, t, edge_type, None)
        })
        .collect();
    Graph {
        tool: pool.tool.clone(),
        symbols,
        edges,
        ..Graph::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn buffered_graphs_round_trip(g in graph(14, 20)) {
        match check_graph(&g) {
            Err(bug) => panic!("{bug}"),
            // Read a line at a time too: the same graph.
            Ok(text) => if let Err(bug) = check_reader(text.as_bytes()) {
                panic!("{bug}");
            },
        }
    }

    #[test]
    fn streamed_graphs_round_trip(g in graph(10, 12)) {
        match check_stream(&g) {
            Err(bug) => panic!("{bug}"),
            Ok(text) => if let Err(bug) = check_reader(text.as_bytes()) {
                panic!("{bug}");
            },
        }
    }

    #[test]
    fn sessions_rebuild_every_call(
        pool in graph(14, 0),
        seeds in prop::collection::vec(any::<u64>(), 1..6),
        max in prop_oneof![3 => Just(100_000usize), 1 => 1usize..10],
    ) {
        let calls: Vec<Graph> = seeds.iter().map(|&seed| variant(&pool, seed)).collect();
        if let Err(bug) = check_session(&calls, max) {
            panic!("{bug}");
        }
    }

    #[test]
    fn deltas_rebuild_the_new_snapshot(
        mut pool in graph(14, 0),
        seeds in (any::<u64>(), any::<u64>()),
        unique_names in any::<bool>(),
    ) {
        if unique_names {
            // Names a delta's edge lines can always carry.
            for (i, s) in pool.symbols.iter_mut().enumerate() {
                s.qualified_name = format!("n{i}.{}", s.qualified_name);
            }
        }
        let base = variant(&pool, seeds.0);
        let new = variant(&pool, seeds.1);
        match check_delta(&base, &new) {
            Err(bug) => panic!("{bug}"),
            // A delta may refuse only edges whose names are shared or start like a comment.
            Ok(None) => prop_assert!(
                base.symbols.iter().chain(&new.symbols).any(|s| s.qualified_name.starts_with('#')
                    || base.symbols.iter().chain(&new.symbols)
                        .filter(|o| o.qualified_name == s.qualified_name && o.kind != s.kind)
                        .count() > 0),
                "Delta::between refused a representable change"
            ),
            Ok(Some(text)) => if let Err(bug) = check_reader(text.as_bytes()) {
                panic!("{bug}");
            },
        }
        // The unchanged case is an empty delta.
        match check_delta(&new, &new) {
            Ok(Some(text)) => prop_assert!(!text.contains("\n## "), "{}", text),
            other => prop_assert!(other.is_ok(), "{:?}", other),
        }
    }
}

/// Found by the `gcf_graph_decode` fuzz target on its seed corpus: a v3.1 delta whose added
/// symbol has no distance decodes, and re-encoded at the current spec gets distance 0; the
/// oracle compares each spec's round trip with what that spec writes.
#[test]
fn a_v3_1_delta_without_distances_round_trips_at_each_spec() {
    let text = "GCF profile=graph tool=context_for_task delta=true base_root=aaa111 \
                new_root=bbb222 tokens=30 savings=85%\n## removed\nfn pkg.OldFunc\n\
                ## added\n@0 fn pkg.NewFunc 0.85 rwr\n";
    if let Err(bug) = agentwire_testkit::gcf_graph::check_bytes(text.as_bytes()) {
        panic!("{bug}");
    }
}

/// Every graph payload of our conformance suite and of the upstream suites (where they are
/// provided beside the project), and damaged forms of each (cut at every byte, each line left
/// out, each line doubled), read a line at a time give what the in-memory decoder gives:
/// the same payload, or the same error code, line and column.
#[test]
fn the_reader_agrees_with_the_in_memory_decoder_on_the_suites() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut dirs = vec![root.join("conformance/gcf-graph")];
    for suite in ["gcf-v3.5.3", "gcf-v3.1.0"] {
        let path = root.join("../shared/conformance").join(suite);
        if path.is_dir() {
            dirs.push(path);
        }
    }
    let mut inputs = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(v) = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()) {
                collect_graph_inputs(&v, &mut inputs);
            }
        }
    }
    let mut checked = 0usize;
    for input in &inputs {
        let lines: Vec<&str> = input.split_inclusive('\n').collect();
        let mut variants = vec![input.clone()];
        variants.extend((0..input.len()).filter_map(|i| input.get(..i).map(str::to_owned)));
        for i in 0..lines.len() {
            let mut without = lines.clone();
            without.remove(i);
            variants.push(without.concat());
            let mut doubled = lines.clone();
            doubled.insert(i, lines[i]);
            variants.push(doubled.concat());
        }
        for variant in variants {
            if let Err(bug) = check_reader(variant.as_bytes()) {
                panic!("{bug}\ninput:\n{variant}");
            }
            checked += 1;
        }
    }
    eprintln!("{} payloads, {checked} inputs checked", inputs.len());
    assert!(
        inputs.len() > 40,
        "only {} graph payloads found",
        inputs.len()
    );
}

fn collect_graph_inputs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) if s.starts_with("GCF profile=graph") => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect_graph_inputs(v, out)),
        serde_json::Value::Object(m) => m.values().for_each(|v| collect_graph_inputs(v, out)),
        _ => {}
    }
}
