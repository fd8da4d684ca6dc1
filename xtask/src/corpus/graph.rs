//! Graph payloads in the GCF graph profile's JSON model (`agentwire_gcf::Graph`: camelCase
//! `tool`, `tokenBudget`, `tokensUsed`, `symbols`, `edges`) with 10, 30 and 500 symbols.
//!
//! Symbols and edges are written in the order the graph profile defines (groups by distance,
//! then score descending, then qualified name; edges by source id, target id and type), so a
//! payload decodes back to exactly this JSON.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::gen::{obj, Rng};
use super::Entry;

const PACKAGES: &[&str] = &[
    "internal/auth",
    "internal/billing",
    "internal/catalog",
    "internal/httpapi",
    "internal/store",
    "internal/worker",
    "internal/config",
    "pkg/money",
    "pkg/retry",
    "pkg/telemetry",
];

const TYPES: &[&str] = &[
    "Server",
    "OrderRepo",
    "Signer",
    "Invoice",
    "Catalog",
    "RedisQueue",
    "Cache",
    "Limiter",
    "Client",
    "Pool",
    "Ledger",
    "Session",
];

const VERBS: &[&str] = &[
    "Create", "Get", "List", "Update", "Delete", "Validate", "Load", "Flush", "Charge", "Refund",
    "Parse", "Encode", "Retry", "Close", "Open", "Sync", "Resolve", "Publish",
];

const KINDS: &[(&str, u64)] = &[
    ("function", 30),
    ("method", 40),
    ("type", 12),
    ("interface", 4),
    ("field", 8),
    ("const", 3),
    ("var", 3),
];

const PROVENANCE: &[&str] = &[
    "lsp_resolved",
    "lsp_resolved",
    "lsp_dispatch",
    "ast_resolved",
    "ast_inferred",
    "text_matched",
];

const EDGE_TYPES: &[&str] = &[
    "calls",
    "calls",
    "calls",
    "references",
    "implements",
    "imports",
];

fn weighted_kind(rng: &mut Rng) -> &'static str {
    let total: u64 = KINDS.iter().map(|k| k.1).sum();
    let mut n = rng.below(total);
    for &(kind, weight) in KINDS {
        if n < weight {
            return kind;
        }
        n -= weight;
    }
    KINDS[0].0
}

struct Sym {
    name: String,
    kind: &'static str,
    score: f64,
    provenance: &'static str,
    distance: u64,
}

/// A graph of `n` symbols and about `edges_per_symbol * n` edges.
fn graph(seed: u64, n: usize, edges_per_symbol: f64, tool: &str, budget: Option<u64>) -> Value {
    let mut rng = Rng::new(seed);
    let mut names = BTreeSet::new();
    let mut syms = Vec::new();
    while syms.len() < n {
        let pkg = rng.pick(PACKAGES);
        let kind = weighted_kind(&mut rng);
        let ty = rng.pick(TYPES);
        let verb = rng.pick(VERBS);
        let module = "github.com/acme/shop";
        let name = match kind {
            "method" => format!("{module}/{pkg}.(*{ty}).{verb}"),
            "function" => format!("{module}/{pkg}.{verb}{ty}"),
            "field" => format!(
                "{module}/{pkg}.{ty}.{}",
                rng.pick(&["ID", "Name", "CreatedAt", "Status", "Amount"])
            ),
            "const" => format!("{module}/{pkg}.Default{ty}Timeout"),
            "var" => format!("{module}/{pkg}.Err{ty}{verb}"),
            _ => format!(
                "{module}/{pkg}.{ty}{}",
                if kind == "interface" { "er" } else { "" }
            ),
        };
        if !names.insert(name.clone()) {
            continue;
        }
        // Few targets, more related symbols, many further out.
        let distance = match rng.below(100) {
            0..=9 => 0,
            10..=39 => 1,
            40..=79 => 2,
            80..=94 => 3,
            _ => 4,
        };
        let top = [0.99, 0.85, 0.7, 0.55, 0.4][distance as usize];
        let score = rng.decimal(top - 0.3, top, 2);
        let provenance = *rng.pick(PROVENANCE);
        syms.push(Sym {
            name,
            kind,
            score,
            provenance,
            distance,
        });
    }
    if !syms.iter().any(|s| s.distance == 0) {
        syms[0].distance = 0;
        syms[0].score = 0.97;
    }
    // The graph profile's order: distance, score descending, qualified name.
    syms.sort_by(|a, b| {
        a.distance
            .cmp(&b.distance)
            .then(b.score.total_cmp(&a.score))
            .then(a.name.as_bytes().cmp(b.name.as_bytes()))
    });
    let edge_count = (n as f64 * edges_per_symbol).round() as usize;
    let mut edges = BTreeSet::new();
    let mut attempts = 0;
    while edges.len() < edge_count && attempts < edge_count * 20 {
        attempts += 1;
        // Edges mostly point inwards, from a farther symbol to a nearer one.
        let a = rng.below(n as u64) as usize;
        let b = rng.below(n as u64) as usize;
        if a == b {
            continue;
        }
        let (source, target) = if syms[a].distance >= syms[b].distance {
            (a, b)
        } else {
            (b, a)
        };
        edges.insert((source, target, *rng.pick(EDGE_TYPES)));
    }
    let symbols: Vec<Value> = syms
        .iter()
        .map(|s| {
            obj([
                ("qualifiedName", json!(s.name)),
                ("kind", json!(s.kind)),
                ("score", json!(s.score)),
                ("provenance", json!(s.provenance)),
                ("distance", json!(s.distance)),
            ])
        })
        .collect();
    let edges: Vec<Value> = edges
        .into_iter()
        .map(|(s, t, ty)| {
            obj([
                ("source", json!(syms[s].name)),
                ("target", json!(syms[t].name)),
                ("edgeType", json!(ty)),
            ])
        })
        .collect();
    let mut out = serde_json::Map::new();
    out.insert("tool".into(), json!(tool));
    if let Some(budget) = budget {
        out.insert("tokenBudget".into(), json!(budget));
        out.insert(
            "tokensUsed".into(),
            json!(budget * 7 / 10 + rng.below(budget / 5)),
        );
    }
    out.insert("symbols".into(), Value::Array(symbols));
    out.insert("edges".into(), Value::Array(edges));
    Value::Object(out)
}

pub(crate) fn entries() -> Vec<Entry> {
    vec![
        Entry::graph(
            "graph_10",
            "get_dependencies",
            "a 10-symbol dependency graph: a handful of targets and their direct neighbours",
            graph(0x6A_0010, 10, 1.2, "get_dependencies", None),
        ),
        Entry::graph(
            "graph_30",
            "context_for_task",
            "a 30-symbol task context under a token budget, grouped by distance",
            graph(0x6A_0030, 30, 1.5, "context_for_task", Some(4000)),
        ),
        Entry::graph(
            "graph_500",
            "impact_analysis",
            "a 500-symbol impact analysis: distances 0 to 4, about 900 edges",
            graph(0x6A_0500, 500, 1.8, "impact_analysis", Some(60_000)),
        ),
    ]
}
