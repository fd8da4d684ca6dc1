//! GCF against serde_json on the three `gcf_generic` data sets, the two timed call by call in
//! alternation, so that a shared machine's slow phases hit both alike:
//!
//! ```sh
//! cargo run --release -p agentwire-benchmarks --example gcf_vs_json -- [ROUNDS] [SET] [OP] [HELD]
//! ```
//!
//! For each data set (`rows_10k`, `orders_2k`, `deep_config`, or those containing `SET`) and
//! operation (`encode`: the current spec, canonical, with flattened `a>b` columns where the
//! data has nested objects; `encode-noflat`: the same without flattening; `encode-v3.1`;
//! `decode` into `Value` of the canonical current-spec output; `decode-noflat` and
//! `decode-v3.1` of the other two; `ignore`: decode into `IgnoredAny`, the parser alone; or
//! those containing `OP`), it prints the fastest time of each side and the ratio
//! GCF / serde_json of the fastest times and the median ratio of the pairs. Outputs are
//! dropped after the clock stops, as divan drops them.
//!
//! `HELD` is how many calls each timing spans, their outputs all held until it ends (by
//! default 20 for data sets under 100 kB of JSON, else 1). Holding outputs is what divan's
//! samples do; with glibc's allocator it makes each timing's later outputs land in fresh
//! pages (the heap is trimmed when the held outputs are freed), so it measures page faults
//! as well as the encoder. `HELD` = 1 measures one call at a time.
//!
//! `ROUNDS` = 0 runs one side of each selected operation once, untimed, for an instruction
//! count: `OP` is then `gcf-` or `json-` and the operation, e.g.
//! `valgrind --tool=callgrind target/release/examples/gcf_vs_json 0 deep gcf-encode`
//! `--toggle-collect=gcf_vs_json::run_once` to count that call alone.

use std::cell::LazyCell;
use std::hint::black_box;
use std::time::Instant;

use serde::de::IgnoredAny;
use serde_json::Value;

/// A data set's name and how it is built (only when it is selected).
type DataSet = (&'static str, fn() -> Value);

/// An operation's name, its GCF side and its serde_json side.
type Pair<'a> = (&'a str, &'a dyn Fn() -> Output, &'a dyn Fn() -> Output);

/// One operation's output, kept until its timing ends (held only to be dropped then).
#[allow(dead_code)]
enum Output {
    Text(String),
    Value(Value),
    Nothing,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let sets = args.get(2).cloned().unwrap_or_default();
    let ops = args.get(3).cloned().unwrap_or_default();
    // `ROUNDS` = 0: one side (`gcf-OP` or `json-OP`) once.
    let once = (rounds == 0).then(|| match ops.split_once('-') {
        Some(("json", op)) => (false, op.to_owned()),
        Some(("gcf", op)) => (true, op.to_owned()),
        _ => (true, ops.clone()),
    });
    let ops = once.as_ref().map_or(ops.clone(), |(_, op)| op.clone());
    let held: Option<usize> = args.get(4).and_then(|s| s.parse().ok());
    let data: [DataSet; 3] = [
        ("rows_10k", || agentwire_benchmarks::rows(10_000)),
        ("orders_2k", || agentwire_benchmarks::orders(2_000)),
        ("deep_config", agentwire_benchmarks::deep_config),
    ];
    for (name, build) in data.iter().filter(|(name, _)| name.contains(sets.as_str())) {
        let value = &build();
        let noflat = agentwire_gcf::EncoderOptions::new().flatten(false);
        let v31 = agentwire_gcf::EncoderOptions::new().spec(agentwire_gcf::Spec::V3_1);
        // The decoders' inputs, built when first needed (not in an encoder's count).
        let gcf = LazyCell::new(|| agentwire_gcf::to_string(value).expect("GCF"));
        let gcf_noflat = LazyCell::new(|| noflat.to_string(value).expect("GCF"));
        let gcf_v31 = LazyCell::new(|| v31.to_string(value).expect("GCF"));
        let json = serde_json::to_string(value).expect("JSON");
        // Short runs are repeated, so that each timing spans some tens of microseconds.
        let reps: usize = held
            .unwrap_or(if json.len() < 100_000 { 20 } else { 1 })
            .max(1);
        let encode_gcf = || Output::Text(agentwire_gcf::to_string(black_box(value)).expect("GCF"));
        let encode_noflat = || Output::Text(noflat.to_string(black_box(value)).expect("GCF"));
        let encode_v31 = || Output::Text(v31.to_string(black_box(value)).expect("GCF"));
        let encode_json = || Output::Text(serde_json::to_string(black_box(value)).expect("JSON"));
        let decode_gcf =
            || Output::Value(agentwire_gcf::from_str::<Value>(black_box(&*gcf)).expect("GCF"));
        let decode_noflat = || {
            Output::Value(agentwire_gcf::from_str::<Value>(black_box(&*gcf_noflat)).expect("GCF"))
        };
        let v31_decoder = agentwire_gcf::DecoderOptions::new().spec(agentwire_gcf::Spec::V3_1);
        let decode_v31 = || {
            Output::Value(
                v31_decoder
                    .from_str::<Value>(black_box(&*gcf_v31))
                    .expect("GCF"),
            )
        };
        let decode_json =
            || Output::Value(serde_json::from_str::<Value>(black_box(&json)).expect("JSON"));
        let ignore_gcf = || {
            agentwire_gcf::from_str::<IgnoredAny>(black_box(&*gcf)).expect("GCF");
            Output::Nothing
        };
        let ignore_json = || {
            serde_json::from_str::<IgnoredAny>(black_box(&json)).expect("JSON");
            Output::Nothing
        };
        let pairs: [Pair<'_>; 7] = [
            ("encode", &encode_gcf, &encode_json),
            ("encode-noflat", &encode_noflat, &encode_json),
            ("encode-v3.1", &encode_v31, &encode_json),
            ("decode", &decode_gcf, &decode_json),
            ("decode-noflat", &decode_noflat, &decode_json),
            ("decode-v3.1", &decode_v31, &decode_json),
            ("ignore", &ignore_gcf, &ignore_json),
        ];
        for (op, gcf_op, json_op) in pairs.into_iter().filter(|(op, ..)| match once {
            Some(_) => *op == ops,
            None => op.contains(ops.as_str()),
        }) {
            if let Some((gcf_side, _)) = &once {
                run_once(if *gcf_side { gcf_op } else { json_op });
                println!("{name:12} {op}: ran once");
                continue;
            }
            // The outputs are dropped after the clock stops, as divan drops them.
            let time = |f: &dyn Fn() -> Output| {
                let mut outputs = Vec::with_capacity(reps);
                let start = Instant::now();
                for _ in 0..reps {
                    outputs.push(f());
                }
                let elapsed = start.elapsed().as_secs_f64();
                drop(black_box(outputs));
                elapsed / reps as f64
            };
            let (mut gcf_times, mut json_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..rounds {
                // Alternate which side goes first.
                let (g, j) = if round % 2 == 0 {
                    let g = time(gcf_op);
                    (g, time(json_op))
                } else {
                    let j = time(json_op);
                    (time(gcf_op), j)
                };
                gcf_times.push(g);
                json_times.push(j);
                ratios.push(g / j);
            }
            let fastest = |times: &[f64]| times.iter().copied().fold(f64::INFINITY, f64::min);
            ratios.sort_by(f64::total_cmp);
            let (g, j) = (fastest(&gcf_times), fastest(&json_times));
            println!(
                "{name:12} {op}: GCF {:9.1} µs, serde_json {:9.1} µs, fastest {:.3}, median pair {:.3}",
                g * 1e6,
                j * 1e6,
                g / j,
                ratios[rounds / 2]
            );
        }
    }
}

/// Runs `op` once (`ROUNDS` = 0), in a function of its own for callgrind's
/// `--toggle-collect`.
#[inline(never)]
fn run_once(op: &dyn Fn() -> Output) {
    drop(black_box(op()));
}
