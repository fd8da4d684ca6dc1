//! The GCF generic profile against serde_json on the same values, in the same run:
//! `rows(10_000)` (a flat table of six fields), `orders(2_000)` (nested customers and line
//! items: flattened columns and shared array schemas; inline schemas in v3.1), `deep_config()` (objects nested up to 14
//! levels).
//!
//! Every figure is compact-JSON bytes per second: the value's compact JSON size divided by the
//! time, so that GCF (fewer bytes) and JSON compare fairly.
//!
//! - `encode/*`: `agentwire_gcf::to_string` (the current spec; `gcf_value_v3_1`: v3.1) against
//!   `serde_json::to_string`, from a `serde_json::Value` (also through `to_string_value`, the
//!   tape) and, for the rows, from typed structs;
//! - `decode/*`: `agentwire_gcf::from_str` against `serde_json::from_str`, into a
//!   `serde_json::Value` and, for the rows, into typed structs (owned and borrowed).
//!
//! Run with `cargo xtask bench gcf_generic`.

use std::sync::LazyLock;

use agentwire_benchmarks::{compact_json_len, deep_config, orders, rows, Person, PersonRef};
use divan::counter::BytesCount;
use divan::Bencher;
use serde_json::Value;

/// The data sets, by name.
const SETS: [&str; 3] = ["rows_10k", "orders_2k", "deep_config"];

struct Set {
    value: Value,
    json: String,
    gcf: String,
    json_len: usize,
}

struct Data {
    sets: Vec<Set>,
    people: Vec<Person>,
}

static DATA: LazyLock<Data> = LazyLock::new(|| {
    let sets = [rows(10_000), orders(2_000), deep_config()]
        .into_iter()
        .map(|value| {
            let json = serde_json::to_string(&value).expect("JSON");
            let gcf = agentwire_gcf::to_string(&value).expect("GCF");
            // The payloads measured must be correct ones.
            let back: Value = agentwire_gcf::from_str(&gcf).expect("GCF decodes");
            assert!(same(&back, &value), "GCF round trip");
            let json_len = compact_json_len(&value);
            Set {
                value,
                json,
                gcf,
                json_len,
            }
        })
        .collect();
    let people: Vec<Person> = serde_json::from_value(rows(10_000)).expect("rows are people");
    Data { sets, people }
});

/// Equality in the JSON data model: numbers by value (GCF writes `249.0` as `249`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn set(name: &str) -> &'static Set {
    let i = SETS.iter().position(|s| *s == name).expect("a data set");
    &DATA.sets[i]
}

fn main() {
    for (name, set) in SETS.iter().zip(&DATA.sets) {
        eprintln!(
            "{name}: compact JSON {} bytes, GCF {} bytes ({:.0}%)",
            set.json_len,
            set.gcf.len(),
            100.0 * set.gcf.len() as f64 / set.json_len as f64
        );
    }
    divan::main();
}

mod encode {
    use super::*;

    #[divan::bench(args = SETS)]
    fn gcf_value(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcf::to_string(&set.value).expect("GCF"));
    }

    /// The v3.1 bytes (no flattening, keyed maps or constant columns).
    #[divan::bench(args = SETS)]
    fn gcf_value_v3_1(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        let v31 = agentwire_gcf::EncoderOptions::new().spec(agentwire_gcf::Spec::V3_1);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| v31.to_string(&set.value).expect("GCF"));
    }

    #[divan::bench(args = SETS)]
    fn gcf_value_in_place(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcf::to_string_value(&set.value).expect("GCF"));
    }

    #[divan::bench(args = SETS)]
    fn serde_json_value(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| serde_json::to_string(&set.value).expect("JSON"));
    }

    #[divan::bench]
    fn gcf_typed_rows(bencher: Bencher<'_, '_>) {
        let people = &DATA.people;
        bencher
            .counter(BytesCount::new(set("rows_10k").json_len))
            .bench(|| agentwire_gcf::to_string(people).expect("GCF"));
    }

    #[divan::bench]
    fn serde_json_typed_rows(bencher: Bencher<'_, '_>) {
        let people = &DATA.people;
        bencher
            .counter(BytesCount::new(set("rows_10k").json_len))
            .bench(|| serde_json::to_string(people).expect("JSON"));
    }
}

mod decode {
    use super::*;

    #[divan::bench(args = SETS)]
    fn gcf_value(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcf::from_str::<Value>(&set.gcf).expect("GCF"));
    }

    #[divan::bench(args = SETS)]
    fn serde_json_value(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| serde_json::from_str::<Value>(&set.json).expect("JSON"));
    }

    #[divan::bench]
    fn gcf_typed_rows(bencher: Bencher<'_, '_>) {
        let set = set("rows_10k");
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcf::from_str::<Vec<Person>>(&set.gcf).expect("GCF"));
    }

    #[divan::bench]
    fn serde_json_typed_rows(bencher: Bencher<'_, '_>) {
        let set = set("rows_10k");
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| serde_json::from_str::<Vec<Person>>(&set.json).expect("JSON"));
    }

    #[divan::bench]
    fn gcf_typed_rows_borrowed(bencher: Bencher<'_, '_>) {
        let set = set("rows_10k");
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcf::from_str::<Vec<PersonRef<'_>>>(&set.gcf).expect("GCF"));
    }

    #[divan::bench]
    fn serde_json_typed_rows_borrowed(bencher: Bencher<'_, '_>) {
        let set = set("rows_10k");
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| serde_json::from_str::<Vec<PersonRef<'_>>>(&set.json).expect("JSON"));
    }
}
