//! One GCF or serde_json operation on one data set, in a loop, for instruction counts:
//!
//! ```sh
//! cargo build --release -p agentwire-benchmarks --example gcf_profile
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='gcf_profile::work' \
//!     target/release/examples/gcf_profile encode deep 20
//! ```
//!
//! Operations: `encode`, `encode-tape` (`to_string_value`), `decode` (into `Value`), `ignore`
//! (decode into `IgnoredAny`: the parser alone), and the same with a `json-` prefix for
//! serde_json. Data sets: `rows`, `orders`, `deep`. Callgrind counts instructions, which the
//! noise of a shared machine does not change.
//!
//! Equal instruction counts can still take unequal times. Adding `--cache-sim=yes
//! --I1=32768,8,64 --D1=32768,8,64 --LL=33554432,16,64` simulates the benchmark machine's
//! caches (a 32 KiB, 8-way instruction cache); `--I1=32768,512,64` makes that cache fully
//! associative, which separates misses for lack of room from misses of code that happens to
//! share cache sets (the latter change with every build's layout).

use std::hint::black_box;

use serde::de::IgnoredAny;
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(op), Some(set)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: gcf_profile OPERATION rows|orders|deep [ITERATIONS]");
        std::process::exit(2);
    };
    let value = match set.as_str() {
        "rows" => agentwire_benchmarks::rows(10_000),
        "orders" => agentwire_benchmarks::orders(2_000),
        _ => agentwire_benchmarks::deep_config(),
    };
    let n = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let gcf = agentwire_gcf::to_string(&value).expect("GCF");
    let json = serde_json::to_string(&value).expect("JSON");
    println!("{}", work(op, &value, &gcf, &json, n));
}

/// The measured loop (callgrind's `--toggle-collect` target); returns a checksum.
#[inline(never)]
fn work(op: &str, value: &Value, gcf: &str, json: &str, n: usize) -> usize {
    let mut total = 0;
    for _ in 0..n {
        total += match op {
            "encode" => black_box(agentwire_gcf::to_string(value).expect("GCF")).len(),
            "encode-tape" => black_box(agentwire_gcf::to_string_value(value).expect("GCF")).len(),
            "decode" => usize::from(
                black_box(agentwire_gcf::from_str::<Value>(gcf).expect("GCF")).is_object(),
            ),
            "ignore" => {
                black_box(agentwire_gcf::from_str::<IgnoredAny>(gcf).expect("GCF"));
                1
            }
            "json-encode" => black_box(serde_json::to_string(value).expect("JSON")).len(),
            "json-decode" => usize::from(
                black_box(serde_json::from_str::<Value>(json).expect("JSON")).is_object(),
            ),
            "json-ignore" => {
                black_box(serde_json::from_str::<IgnoredAny>(json).expect("JSON"));
                1
            }
            other => panic!("unknown operation {other}"),
        };
    }
    total
}
