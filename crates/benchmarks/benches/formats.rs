//! Every format on the same values in the same run: encode and decode throughput of the
//! agentwire codecs (GCF generic, GCF graph, GCX1's generic fallback and per-tool layouts)
//! next to serde_json, the `gcf` 3.1.0 crate and the `toon-format` crate (TOON's reference
//! Rust implementation).
//!
//! Data sets (`agentwire_benchmarks`): `corpus` (every response of the scorecard corpus,
//! `fixtures/`, encoded or decoded one after the other; the graph benches use its graph
//! payloads), `code_intel` (the corpus files with a GCX1 per-tool layout), `rows_10k`
//! (`rows(10_000)`), `orders_2k` (`orders(2_000)`) and `graph_500` (`graph(500, 200)`).
//!
//! Every figure is compact-JSON bytes per second: the data's compact JSON size divided by the
//! time, so that formats with different output sizes compare fairly. Encoders start from a
//! `serde_json::Value` (the graph encoders and the GCX1 layouts from their typed values, built
//! beforehand), decoders end in one (or in the typed value). `cargo xtask bench` runs this target and writes docs/benchmarks.md.
//!
//! Note: `gcf` 3.1.0 and `toon-format` turn on serde_json's `preserve_order` (and
//! `float_roundtrip`) for the whole build, so every codec here, serde_json included, works
//! with insertion-ordered maps, as in the `agentwire` command.

use std::sync::LazyLock;

use agentwire_benchmarks::{compact_json_len, corpus, graph, orders, rows};
use agentwire_gcx1::Layout;
use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use serde::de::DeserializeOwned;
use serde_json::Value;

fn main() {
    divan::main();
}

/// One value of a data set, with its encodings prepared for the decoders.
struct Item {
    value: Value,
    json: String,
    gcf: String,
    gcx1: String,
    toon: String,
    old_gcf: String,
    graph: Option<GraphItem>,
    layout: Option<LayoutItem>,
}

/// A response typed as its GCX1 layout, with its payload.
struct LayoutItem {
    text: String,
    encode: Box<dyn Fn() -> String + Send + Sync>,
    decode: fn(&str),
}

fn layout_item<L>(value: &Value) -> LayoutItem
where
    L: Layout + DeserializeOwned + Send + Sync + 'static,
{
    let typed: L = serde_json::from_value(value.clone()).expect("the layout's shape");
    LayoutItem {
        text: typed.to_gcx().expect("GCX1 layout"),
        encode: Box::new(move || typed.to_gcx().expect("GCX1 layout")),
        decode: |text| {
            black_box(L::from_gcx(text).expect("GCX1 layout"));
        },
    }
}

fn layout(tool: &str, value: &Value) -> LayoutItem {
    use agentwire_gcx1 as g;
    match tool {
        "search_symbols" => layout_item::<g::SearchSymbols>(value),
        "get_symbol_source" => layout_item::<g::SymbolSource>(value),
        "batch_symbols" => layout_item::<g::BatchSymbols>(value),
        "find_usages" => layout_item::<g::FindUsages>(value),
        "get_file_summary" => layout_item::<g::FileSummary>(value),
        "get_callers"
        | "get_call_chain"
        | "get_dependencies"
        | "get_dependents"
        | "find_implementations" => layout_item::<g::Graph>(value),
        "get_editing_context" => layout_item::<g::EditingContext>(value),
        "smart_context" => layout_item::<g::SmartContext>(value),
        "analyze.dead_code" => layout_item::<g::DeadCode>(value),
        "analyze.hotspots" => layout_item::<g::Hotspots>(value),
        "analyze.cycles" => layout_item::<g::Cycles>(value),
        "contracts.list" => layout_item::<g::ContractsList>(value),
        "contracts.orphans" => layout_item::<g::ContractOrphans>(value),
        other => panic!("no GCX1 layout {other}"),
    }
}

struct GraphItem {
    typed: agentwire_gcf::Graph,
    gcf: String,
    old_typed: gcf::Payload,
    old_gcf: String,
}

struct Set {
    items: Vec<Item>,
    /// Compact JSON bytes of every item.
    bytes: usize,
    /// Compact JSON bytes of the graph items.
    graph_bytes: usize,
}

fn item(value: Value, is_graph: bool, gcx1_layout: Option<&str>) -> Item {
    let graph = is_graph.then(|| {
        let typed: agentwire_gcf::Graph =
            serde_json::from_value(value.clone()).expect("a graph in the GCF model");
        let old_typed = old_payload(&typed);
        GraphItem {
            gcf: agentwire_gcf::encode_graph(&typed).expect("GCF graph"),
            old_gcf: gcf::encode(&old_typed),
            typed,
            old_typed,
        }
    });
    Item {
        json: serde_json::to_string(&value).expect("JSON"),
        gcf: agentwire_gcf::to_string(&value).expect("GCF"),
        gcx1: agentwire_gcx1::encode_any("bench", &value).expect("GCX1"),
        toon: toon_format::encode_default(&value).expect("TOON"),
        old_gcf: gcf::encode_generic(&value).expect("gcf 3.1.0"),
        graph,
        layout: gcx1_layout.map(|tool| layout(tool, &value)),
        value,
    }
}

/// The same graph in the `gcf` 3.1.0 crate's model.
fn old_payload(graph: &agentwire_gcf::Graph) -> gcf::Payload {
    gcf::Payload {
        tool: graph.tool.clone().unwrap_or_default(),
        tokens_used: graph.tokens_used.map_or(0, |n| n as i64),
        token_budget: graph.token_budget.map_or(0, |n| n as i64),
        pack_root: String::new(),
        symbols: graph
            .symbols
            .iter()
            .map(|s| gcf::Symbol {
                qualified_name: s.qualified_name.clone(),
                kind: s.kind.name().to_owned(),
                score: s.score,
                provenance: s.provenance.clone(),
                distance: s.distance as i32,
                signature: String::new(),
                components: gcf::Components::default(),
            })
            .collect(),
        edges: graph
            .edges
            .iter()
            .map(|e| gcf::Edge {
                source: e.source.clone(),
                target: e.target.clone(),
                edge_type: e.edge_type.clone(),
                status: String::new(),
            })
            .collect(),
    }
}

fn set(items: Vec<Item>) -> Set {
    let bytes = items.iter().map(|i| compact_json_len(&i.value)).sum();
    let graph_bytes = items
        .iter()
        .filter(|i| i.graph.is_some())
        .map(|i| compact_json_len(&i.value))
        .sum();
    Set {
        items,
        bytes,
        graph_bytes,
    }
}

static CORPUS: LazyLock<Set> = LazyLock::new(|| {
    set(corpus()
        .into_iter()
        .map(|f| item(f.response, f.graph, None))
        .collect())
});
static CODE_INTEL: LazyLock<Set> = LazyLock::new(|| {
    set(corpus()
        .into_iter()
        .filter_map(|f| {
            let tool = f.gcx1_layout?;
            Some(item(f.response, f.graph, Some(&tool)))
        })
        .collect())
});
static ROWS: LazyLock<Set> = LazyLock::new(|| set(vec![item(rows(10_000), false, None)]));
static ORDERS: LazyLock<Set> = LazyLock::new(|| set(vec![item(orders(2_000), false, None)]));
static GRAPH: LazyLock<Set> = LazyLock::new(|| set(vec![item(graph(500, 200), true, None)]));

const SETS: &[&str] = &["corpus", "code_intel", "rows_10k", "orders_2k", "graph_500"];
const GRAPH_SETS: &[&str] = &["corpus", "graph_500"];
const LAYOUT_SETS: &[&str] = &["code_intel"];

fn data(name: &str) -> &'static Set {
    match name {
        "corpus" => &CORPUS,
        "code_intel" => &CODE_INTEL,
        "rows_10k" => &ROWS,
        "orders_2k" => &ORDERS,
        "graph_500" => &GRAPH,
        other => panic!("no data set {other}"),
    }
}

/// Runs `f` on every item of the set, counting its compact JSON bytes.
fn each(bencher: Bencher<'_, '_>, name: &str, f: impl Fn(&Item) + Sync) {
    let set = data(name);
    bencher
        .counter(BytesCount::new(set.bytes))
        .bench(|| set.items.iter().for_each(&f));
}

/// Runs `f` on every graph item of the set.
fn each_graph(bencher: Bencher<'_, '_>, name: &str, f: impl Fn(&GraphItem) + Sync) {
    let set = data(name);
    bencher.counter(BytesCount::new(set.graph_bytes)).bench(|| {
        set.items
            .iter()
            .filter_map(|i| i.graph.as_ref())
            .for_each(&f);
    });
}

/// Runs `f` on every item of the set that has a GCX1 layout (all of `code_intel`).
fn each_layout(bencher: Bencher<'_, '_>, name: &str, f: impl Fn(&LayoutItem) + Sync) {
    let set = data(name);
    bencher.counter(BytesCount::new(set.bytes)).bench(|| {
        set.items
            .iter()
            .filter_map(|i| i.layout.as_ref())
            .for_each(&f);
    });
}

mod encode {
    use super::*;

    #[divan::bench(args = LAYOUT_SETS)]
    fn gcx1_layout(bencher: Bencher<'_, '_>, set: &str) {
        each_layout(bencher, set, |l| {
            black_box((l.encode)());
        });
    }

    #[divan::bench(args = SETS)]
    fn serde_json(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(serde_json::to_string(black_box(&i.value)).expect("JSON"));
        });
    }

    #[divan::bench(args = SETS)]
    fn gcf_generic(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(agentwire_gcf::to_string(black_box(&i.value)).expect("GCF"));
        });
    }

    #[divan::bench(args = GRAPH_SETS)]
    fn gcf_graph(bencher: Bencher<'_, '_>, set: &str) {
        each_graph(bencher, set, |g| {
            black_box(agentwire_gcf::encode_graph(black_box(&g.typed)).expect("GCF graph"));
        });
    }

    #[divan::bench(args = SETS)]
    fn gcx1(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(agentwire_gcx1::encode_any("bench", black_box(&i.value)).expect("GCX1"));
        });
    }

    #[divan::bench(args = SETS)]
    fn gcf_3_1_0(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(gcf::encode_generic(black_box(&i.value)).expect("gcf 3.1.0"));
        });
    }

    #[divan::bench(args = GRAPH_SETS)]
    fn gcf_3_1_0_graph(bencher: Bencher<'_, '_>, set: &str) {
        each_graph(bencher, set, |g| {
            black_box(gcf::encode(black_box(&g.old_typed)));
        });
    }

    #[divan::bench(args = SETS)]
    fn toon_format(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(toon_format::encode_default(black_box(&i.value)).expect("TOON"));
        });
    }
}

mod decode {
    use super::*;

    #[divan::bench(args = LAYOUT_SETS)]
    fn gcx1_layout(bencher: Bencher<'_, '_>, set: &str) {
        each_layout(bencher, set, |l| (l.decode)(black_box(&l.text)));
    }

    #[divan::bench(args = SETS)]
    fn serde_json(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(serde_json::from_str::<Value>(black_box(&i.json)).expect("JSON"));
        });
    }

    #[divan::bench(args = SETS)]
    fn gcf_generic(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(agentwire_gcf::from_str::<Value>(black_box(&i.gcf)).expect("GCF"));
        });
    }

    #[divan::bench(args = GRAPH_SETS)]
    fn gcf_graph(bencher: Bencher<'_, '_>, set: &str) {
        each_graph(bencher, set, |g| {
            black_box(agentwire_gcf::decode_graph(black_box(&g.gcf)).expect("GCF graph"));
        });
    }

    #[divan::bench(args = SETS)]
    fn gcx1(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(agentwire_gcx1::decode_any(black_box(&i.gcx1)).expect("GCX1"));
        });
    }

    #[divan::bench(args = SETS)]
    fn gcf_3_1_0(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(gcf::decode_generic(black_box(&i.old_gcf)).expect("gcf 3.1.0"));
        });
    }

    #[divan::bench(args = GRAPH_SETS)]
    fn gcf_3_1_0_graph(bencher: Bencher<'_, '_>, set: &str) {
        each_graph(bencher, set, |g| {
            black_box(gcf::decode(black_box(&g.old_gcf)).expect("gcf 3.1.0 graph"));
        });
    }

    #[divan::bench(args = SETS)]
    fn toon_format(bencher: Bencher<'_, '_>, set: &str) {
        each(bencher, set, |i| {
            black_box(toon_format::decode_default::<Value>(black_box(&i.toon)).expect("TOON"));
        });
    }
}
