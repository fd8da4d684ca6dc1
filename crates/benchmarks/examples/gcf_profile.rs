//! One GCF or serde_json operation on one data set, in a loop, for instruction counts:
//!
//! ```sh
//! cargo build --release -p agentwire-benchmarks --example gcf_profile
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='gcf_profile::measured' \
//!     target/release/examples/gcf_profile encode deep 20
//! ```
//!
//! Operations: `encode` (the current spec), `encode-v3.1`, `encode-tape` (`to_string_value`), `encode-typed` (the rows as
//! `Vec<Person>`, through serde; data set `rows` only), `decode` (into `Value`), `decode-v3.1` (the data set written and read as v3.1),
//! `decode-typed` (into `Vec<Person>`; `rows` only), `ignore`
//! (decode into `IgnoredAny`: the parser alone), and the same with a `json-` prefix for
//! serde_json; `show` prints the data set's GCF. Data sets: `rows`, `orders`, `deep`.
//! Callgrind counts instructions, which the noise of a shared machine does not change.
//!
//! Equal instruction counts can still take unequal times. Adding `--cache-sim=yes
//! --I1=32768,8,64 --D1=32768,8,64 --LL=33554432,16,64` simulates the benchmark machine's
//! caches (a 32 KiB, 8-way instruction cache); `--I1=32768,512,64` makes that cache fully
//! associative, which separates misses for lack of room from misses of code that happens to
//! share cache sets (the latter change with every build's layout).

use std::hint::black_box;

use agentwire_benchmarks::Person;
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
    if op == "show" {
        print!("{gcf}");
        return;
    }
    let people: Vec<Person> = if op.ends_with("-typed") {
        serde_json::from_value(value.clone()).expect("the rows data set")
    } else {
        Vec::new()
    };
    let gcf_v31 = agentwire_gcf::EncoderOptions::new()
        .spec(agentwire_gcf::Spec::V3_1)
        .to_string(&value)
        .expect("GCF");
    let input = Input {
        value: &value,
        people: &people,
        gcf: &gcf,
        gcf_v31: &gcf_v31,
        json: &json,
    };
    println!("{}", work(op, &input, n));
}

/// What the operations read.
struct Input<'a> {
    value: &'a Value,
    people: &'a [Person],
    gcf: &'a str,
    /// The data set written in v3.1.
    gcf_v31: &'a str,
    json: &'a str,
}

/// One operation's output.
enum Output {
    Text(String),
    Value(Value),
    People(Vec<Person>),
    Nothing,
}

/// The loop: each output is dropped after its measured call, outside the count, as divan
/// drops a sample's outputs after timing it; returns a checksum.
fn work(op: &str, input: &Input<'_>, n: usize) -> usize {
    (0..n).map(|_| checksum(&measured(op, input))).sum()
}

/// One operation: callgrind's `--toggle-collect` target, so that freeing the output (and
/// the previous one) is not counted.
#[inline(never)]
fn measured(op: &str, input: &Input<'_>) -> Output {
    let Input {
        value,
        people,
        gcf,
        gcf_v31,
        json,
    } = *input;
    black_box(match op {
        "encode" => Output::Text(agentwire_gcf::to_string(value).expect("GCF")),
        "encode-v3.1" => Output::Text(
            agentwire_gcf::EncoderOptions::new()
                .spec(agentwire_gcf::Spec::V3_1)
                .to_string(value)
                .expect("GCF"),
        ),
        "encode-tape" => Output::Text(agentwire_gcf::to_string_value(value).expect("GCF")),
        "encode-typed" => Output::Text(agentwire_gcf::to_string(people).expect("GCF")),
        "decode" => Output::Value(agentwire_gcf::from_str::<Value>(gcf).expect("GCF")),
        "decode-v3.1" => Output::Value(
            agentwire_gcf::DecoderOptions::new()
                .spec(agentwire_gcf::Spec::V3_1)
                .from_str::<Value>(gcf_v31)
                .expect("GCF"),
        ),
        "decode-typed" => Output::People(agentwire_gcf::from_str(gcf).expect("GCF")),
        "ignore" => {
            agentwire_gcf::from_str::<IgnoredAny>(gcf).expect("GCF");
            Output::Nothing
        }
        "json-encode" => Output::Text(serde_json::to_string(value).expect("JSON")),
        "json-encode-typed" => Output::Text(serde_json::to_string(people).expect("JSON")),
        "json-decode" => Output::Value(serde_json::from_str::<Value>(json).expect("JSON")),
        "json-decode-typed" => Output::People(serde_json::from_str(json).expect("JSON")),
        "json-ignore" => {
            serde_json::from_str::<IgnoredAny>(json).expect("JSON");
            Output::Nothing
        }
        other => panic!("unknown operation {other}"),
    })
}

/// A checksum of an output, so that none is optimized away.
fn checksum(output: &Output) -> usize {
    match output {
        Output::Text(text) => text.len(),
        Output::Value(value) => usize::from(value.is_object()),
        Output::People(people) => people.len(),
        Output::Nothing => 1,
    }
}
