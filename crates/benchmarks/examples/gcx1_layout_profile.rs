//! The GCX1 layouts (and serde_json, `encode_any`, `decode_any`) on the code-intelligence
//! files, in a loop, for instruction counts:
//!
//! ```sh
//! cargo build --release -p agentwire-benchmarks --features anchors --example gcx1_layout_profile
//! valgrind --tool=callgrind --collect-atstart=no \
//!     --toggle-collect='gcx1_layout_profile::measured' \
//!     target/release/examples/gcx1_layout_profile layout-encode 20
//! ```
//!
//! `GCX1_PROFILE_ONLY=<layout>` (say `find_usages`) keeps that layout's files alone.
//!
//! Operations: `layout-encode`, `layout-decode`, `any-encode`, `any-decode`, `json-encode`,
//! `json-decode`. Built with `anchors` (serde_json's `preserve_order`), as the `formats` bench.

use std::hint::black_box;

use agentwire_benchmarks::corpus;
use agentwire_gcx1 as g;
use agentwire_gcx1::Layout;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One file, typed as its layout, with its encodings.
struct File {
    text: String,
    gcx1: String,
    json: String,
    value: Value,
    encode: Box<dyn Fn() -> String>,
    decode: fn(&str),
}

fn typed<L: Layout + DeserializeOwned + 'static>(value: &Value) -> File {
    let typed: L = serde_json::from_value(value.clone()).expect("the layout's shape");
    File {
        text: typed.to_gcx().expect("GCX1 layout"),
        gcx1: g::encode_any("bench", value).expect("GCX1"),
        json: serde_json::to_string(value).expect("JSON"),
        value: value.clone(),
        encode: Box::new(move || typed.to_gcx().expect("GCX1 layout")),
        decode: |text| {
            black_box(L::from_gcx(text).expect("GCX1 layout"));
        },
    }
}

fn file(tool: &str, value: &Value) -> File {
    match tool {
        "search_symbols" => typed::<g::SearchSymbols>(value),
        "get_symbol_source" => typed::<g::SymbolSource>(value),
        "batch_symbols" => typed::<g::BatchSymbols>(value),
        "find_usages" => typed::<g::FindUsages>(value),
        "get_file_summary" => typed::<g::FileSummary>(value),
        "get_callers"
        | "get_call_chain"
        | "get_dependencies"
        | "get_dependents"
        | "find_implementations" => typed::<g::Graph>(value),
        "get_editing_context" => typed::<g::EditingContext>(value),
        "smart_context" => typed::<g::SmartContext>(value),
        "analyze.dead_code" => typed::<g::DeadCode>(value),
        "analyze.hotspots" => typed::<g::Hotspots>(value),
        "analyze.cycles" => typed::<g::Cycles>(value),
        "contracts.list" => typed::<g::ContractsList>(value),
        "contracts.orphans" => typed::<g::ContractOrphans>(value),
        other => panic!("no GCX1 layout {other}"),
    }
}

#[inline(never)]
fn measured(op: &str, files: &[File], rounds: usize) {
    for _ in 0..rounds {
        for f in files {
            match op {
                "layout-encode" => drop(black_box((f.encode)())),
                "layout-decode" => (f.decode)(black_box(&f.text)),
                "any-encode" => drop(black_box(g::encode_any("bench", &f.value).unwrap())),
                "any-decode" => drop(black_box(g::decode_any(&f.gcx1).unwrap())),
                "json-encode" => drop(black_box(serde_json::to_string(&f.value).unwrap())),
                "json-decode" => drop(black_box(serde_json::from_str::<Value>(&f.json).unwrap())),
                other => panic!("no operation {other}"),
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = args.get(1).map_or("layout-encode", String::as_str);
    let rounds = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(20);
    // `GCX1_PROFILE_ONLY=<layout>`: that layout's files alone.
    let only = std::env::var("GCX1_PROFILE_ONLY").ok();
    let files: Vec<File> = corpus()
        .into_iter()
        .filter(|f| only.is_none() || f.gcx1_layout == only)
        .filter_map(|f| Some(file(f.gcx1_layout.as_deref()?, &f.response)))
        .collect();
    let start = std::time::Instant::now();
    measured(op, &files, rounds);
    let bytes: usize = files.iter().map(|f| f.json.len()).sum::<usize>() * rounds;
    eprintln!(
        "{op}: {} files, {:.0} MB/s",
        files.len(),
        bytes as f64 / start.elapsed().as_secs_f64() / 1e6
    );
}
