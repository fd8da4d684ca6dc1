//! GCX1's value codec against serde_json on the three data sets of issue 19, the two timed
//! call by call in alternation, so that a shared machine's slow phases hit both alike:
//!
//! ```sh
//! cargo run --release -p agentwire-benchmarks --example gcx1_vs_json -- [ROUNDS] [SET] [OP] [HELD]
//! ```
//!
//! For each data set (`rows_10k`, `orders_2k`, `deep_config`, or those containing `SET`) and
//! operation (`encode`: `encode_any` against `serde_json::to_string`, `decode`: `decode_any`
//! against `serde_json::from_str::<Value>`; or those containing `OP`), it prints the fastest
//! time of each side, the ratio GCX1 / serde_json of the fastest times and the median ratio
//! of the pairs (below 1.0: GCX1 is faster). `HELD` is how many calls each timing spans (by
//! default 20 for data sets under 100 kB of JSON, else 1), their outputs held until it ends,
//! as divan's samples hold them.
//!
//! With `ROUNDS` = 0 it runs each side of each pair once and nothing else, for counting
//! instructions with `valgrind --tool=callgrind` (`OP` then names one side: `gcx1-encode`,
//! `json-encode`, `gcx1-decode` or `json-decode`); `--toggle-collect='gcx1_vs_json::measured'`
//! counts that one call alone, without building the data sets. `HELD` then repeats each
//! call (one after the other, each output dropped before the next), so that the count
//! includes the steady state of the allocator, not only a first call on a fresh heap; `OP`
//! = `show` prints the GCX1 payloads instead.

use std::hint::black_box;

use serde_json::Value;

/// An operation's name, its GCX1 side and its serde_json side.
type Pair<'a> = (&'a str, &'a dyn Fn() -> Output, &'a dyn Fn() -> Output);

/// One operation's output, kept until its timing ends (held only to be dropped then).
#[allow(dead_code)]
enum Output {
    Text(String),
    Value(Value),
}

/// Runs `op` once and drops its output: a function of its own, so that callgrind can count
/// it alone (`--toggle-collect='gcx1_vs_json::measured'`).
#[inline(never)]
fn measured(op: &dyn Fn() -> Output) {
    drop(black_box(op()));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let sets = args.get(2).cloned().unwrap_or_default();
    let ops = args.get(3).cloned().unwrap_or_default();
    let held: Option<usize> = args.get(4).and_then(|s| s.parse().ok());
    let data = [
        ("rows_10k", agentwire_benchmarks::rows(10_000)),
        ("orders_2k", agentwire_benchmarks::orders(2_000)),
        ("deep_config", agentwire_benchmarks::deep_config()),
    ];
    for (name, value) in data.iter().filter(|(name, _)| name.contains(sets.as_str())) {
        let gcx = agentwire_gcx1::encode_any("response", value).expect("GCX1");
        assert_eq!(&agentwire_gcx1::decode_any(&gcx).expect("GCX1"), value);
        let json = serde_json::to_string(value).expect("JSON");
        // Short runs are repeated, so that each timing spans some tens of microseconds.
        let reps: usize = held
            .unwrap_or(if json.len() < 100_000 { 20 } else { 1 })
            .max(1);
        let encode_gcx = || {
            Output::Text(agentwire_gcx1::encode_any("response", black_box(value)).expect("GCX1"))
        };
        let encode_json = || Output::Text(serde_json::to_string(black_box(value)).expect("JSON"));
        let decode_gcx =
            || Output::Value(agentwire_gcx1::decode_any(black_box(&gcx)).expect("GCX1"));
        let decode_json =
            || Output::Value(serde_json::from_str::<Value>(black_box(&json)).expect("JSON"));
        let pairs: [Pair<'_>; 2] = [
            ("encode", &encode_gcx, &encode_json),
            ("decode", &decode_gcx, &decode_json),
        ];
        if rounds == 0 && ops == "show" {
            print!("{gcx}");
            continue;
        }
        if rounds == 0 {
            for (op, gcx_op, json_op) in pairs {
                for _ in 0..held.unwrap_or(1) {
                    if format!("gcx1-{op}").contains(ops.as_str()) {
                        measured(gcx_op);
                    }
                    if format!("json-{op}").contains(ops.as_str()) {
                        measured(json_op);
                    }
                }
            }
            continue;
        }
        for (op, gcx_op, json_op) in pairs
            .into_iter()
            .filter(|(op, ..)| op.contains(ops.as_str()))
        {
            let paired = agentwire_benchmarks::alternate(rounds, reps, gcx_op, json_op);
            let (g, j) = (paired.a, paired.b);
            println!(
                "{name:12} {op}: GCX1 {:9.1} µs, serde_json {:9.1} µs, fastest {:.3}, median pair {:.3}",
                g * 1e6,
                j * 1e6,
                g / j,
                paired.median_ratio
            );
        }
    }
}
