//! GCX1 against serde_json on the same 100,000 rows (`agentwire_benchmarks::rows`).
//!
//! Every figure is compact-JSON bytes per second: the rows' compact JSON size divided by the
//! time, so that GCX1 (about half the bytes) and JSON compare fairly.
//!
//! - `encode/*`: typed rows (`Encoder::serialize_row` vs `serde_json::to_vec`), plain cells
//!   (`Encoder::write_row`), and the generic fallback from a `serde_json::Value`
//!   (`encode_any` vs `serde_json::to_vec`).
//! - `decode/*`: every cell of every row through the borrowed decoder, typed rows borrowed
//!   (`StrDecoder::deserialize` vs `serde_json::from_str`) and owned (the streaming
//!   `Decoder` vs `serde_json::from_slice`), and the generic fallback into a
//!   `serde_json::Value` (`decode_any` vs `serde_json::from_slice`).
//!
//! The 100,000-row payload (12.7 MB of JSON, its strings scattered over the heap) does not
//! fit in cache, so it measures memory as much as code; the 10,000-row payload (1.3 MB) is the
//! cache-resident rate.
//!
//! - `generic/*`: the value codec on the bench sets of its speed targets, `rows_10k`
//!   (`rows(10_000)`), `orders_2k` (`orders(2_000)`: nested customers and line items) and
//!   `deep_config` (`deep_config()`: objects nested up to 14 levels): `encode_any` against
//!   `serde_json::to_string` from the same `serde_json::Value`, `decode_any` against
//!   `serde_json::from_str::<Value>` into one (the targets: at least 1.0× each).
//!
//! Run with `cargo xtask bench gcx1`.

use std::sync::LazyLock;

use agentwire_benchmarks::{compact_json_len, deep_config, orders, rows, Person, PersonRef};
use agentwire_gcx1::{Cell, Decoder, Encoder, Header, StrDecoder};
use divan::counter::BytesCount;
use divan::Bencher;
use serde_json::Value;

/// The payload sizes: the 100,000 rows the targets are set for, and a cache-resident 10,000.
const SIZES: [usize; 2] = [100_000, 10_000];

struct Data {
    value: Value,
    people: Vec<Person>,
    json: String,
    gcx_rows: String,
    gcx_any: String,
    json_len: usize,
}

static LARGE: LazyLock<Data> = LazyLock::new(|| data(SIZES[0]));
static SMALL: LazyLock<Data> = LazyLock::new(|| data(SIZES[1]));

fn get(rows: usize) -> &'static Data {
    if rows == SIZES[0] {
        &LARGE
    } else {
        &SMALL
    }
}

fn data(n: usize) -> Data {
    let value = rows(n);
    let people: Vec<Person> = serde_json::from_value(value.clone()).expect("rows are people");
    let json = serde_json::to_string(&people).expect("JSON");
    let gcx_rows = encode_typed(&people);
    let gcx_any = agentwire_gcx1::encode_any("people", &value).expect("encode_any");
    let json_len = compact_json_len(&value);
    assert_eq!(json_len, json.len());
    // The payloads measured must be correct ones.
    let back: Vec<Person> = Decoder::new(gcx_rows.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .expect("rows decode");
    assert_eq!(back, people);
    assert_eq!(
        agentwire_gcx1::decode_any(&gcx_any).expect("decode_any"),
        value
    );
    Data {
        value,
        people,
        json,
        gcx_rows,
        gcx_any,
        json_len,
    }
}

fn encode_typed(people: &[Person]) -> String {
    let mut encoder = Encoder::new(Vec::with_capacity(people.len() * 64));
    encoder
        .begin_section(&Header::named("people"))
        .expect("header");
    for person in people {
        encoder.serialize_row(person).expect("row");
    }
    String::from_utf8(encoder.finish().expect("finish")).expect("UTF-8")
}

fn main() {
    for n in SIZES {
        let data = get(n);
        eprintln!(
            "{n} rows: compact JSON {} bytes, GCX1 typed rows {} bytes, GCX1 encode_any {} bytes",
            data.json_len,
            data.gcx_rows.len(),
            data.gcx_any.len()
        );
    }
    divan::main();
}

mod encode {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn gcx1_typed_rows(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let people = &data.people;
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| encode_typed(people));
    }

    #[divan::bench(args = SIZES)]
    fn gcx1_write_row_cells(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let people = &data.people;
        let header = Header::new(
            "people",
            ["id", "name", "email", "department", "salary", "active"],
        );
        bencher.counter(BytesCount::new(data.json_len)).bench(|| {
            let mut encoder = Encoder::new(Vec::with_capacity(people.len() * 64));
            encoder.begin_section(&header).expect("header");
            for p in people {
                let cells: [&dyn Cell; 6] = [
                    &p.id,
                    &p.name,
                    &p.email,
                    &p.department,
                    &p.salary,
                    &p.active,
                ];
                encoder.write_row(cells).expect("row");
            }
            encoder.finish().expect("finish")
        });
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_typed_rows(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let people = &data.people;
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| serde_json::to_vec(people).expect("JSON"));
    }

    #[divan::bench(args = SIZES)]
    fn gcx1_encode_any_value(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let value = &data.value;
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| agentwire_gcx1::encode_any("people", value).expect("encode_any"));
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_value(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let value = &data.value;
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| serde_json::to_vec(value).expect("JSON"));
    }
}

mod decode {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn gcx1_borrowed_cells(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let text = data.gcx_rows.as_str();
        bencher.counter(BytesCount::new(data.json_len)).bench(|| {
            let mut decoder = StrDecoder::new(text);
            let mut total = 0usize;
            while let Some(row) = decoder.next_row().expect("row") {
                for cell in row.iter() {
                    total += cell.len();
                }
            }
            total
        });
    }

    #[divan::bench(args = SIZES)]
    fn gcx1_typed_borrowed(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let text = data.gcx_rows.as_str();
        bencher.counter(BytesCount::new(data.json_len)).bench(|| {
            StrDecoder::new(text)
                .deserialize::<PersonRef<'_>>()
                .collect::<Result<Vec<_>, _>>()
                .expect("rows")
        });
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_typed_borrowed(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let json = data.json.as_str();
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| serde_json::from_str::<Vec<PersonRef<'_>>>(json).expect("JSON"));
    }

    #[divan::bench(args = SIZES)]
    fn gcx1_typed_owned_streaming(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let text = data.gcx_rows.as_bytes();
        bencher.counter(BytesCount::new(data.json_len)).bench(|| {
            Decoder::new(text)
                .deserialize::<Person>()
                .collect::<Result<Vec<_>, _>>()
                .expect("rows")
        });
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_typed_owned(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let json = data.json.as_bytes();
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| serde_json::from_slice::<Vec<Person>>(json).expect("JSON"));
    }

    #[divan::bench(args = SIZES)]
    fn gcx1_decode_any_value(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let text = data.gcx_any.as_str();
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| agentwire_gcx1::decode_any(text).expect("decode_any"));
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_value(bencher: Bencher<'_, '_>, rows: usize) {
        let data = get(rows);
        let json = data.json.as_bytes();
        bencher
            .counter(BytesCount::new(data.json_len))
            .bench(|| serde_json::from_slice::<Value>(json).expect("JSON"));
    }
}

mod generic {
    use super::*;

    /// The bench sets of the value codec's speed targets.
    const SETS: [&str; 3] = ["rows_10k", "orders_2k", "deep_config"];

    struct Set {
        value: Value,
        json: String,
        gcx: String,
        json_len: usize,
    }

    static SETS_DATA: LazyLock<Vec<Set>> = LazyLock::new(|| {
        [rows(10_000), orders(2_000), deep_config()]
            .into_iter()
            .map(|value| {
                let json = serde_json::to_string(&value).expect("JSON");
                let gcx = agentwire_gcx1::encode_any("bench", &value).expect("encode_any");
                // The payloads measured must be correct ones.
                assert_eq!(agentwire_gcx1::decode_any(&gcx).expect("decode_any"), value);
                Set {
                    json_len: compact_json_len(&value),
                    value,
                    json,
                    gcx,
                }
            })
            .collect()
    });

    fn set(name: &str) -> &'static Set {
        let at = SETS.iter().position(|s| *s == name).expect("a bench set");
        &SETS_DATA[at]
    }

    #[divan::bench(args = SETS)]
    fn encode_gcx1_encode_any(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcx1::encode_any("bench", &set.value).expect("encode_any"));
    }

    #[divan::bench(args = SETS)]
    fn encode_serde_json_to_string(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| serde_json::to_string(&set.value).expect("JSON"));
    }

    #[divan::bench(args = SETS)]
    fn decode_gcx1_decode_any(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| agentwire_gcx1::decode_any(&set.gcx).expect("decode_any"));
    }

    #[divan::bench(args = SETS)]
    fn decode_serde_json_from_str(bencher: Bencher<'_, '_>, name: &str) {
        let set = set(name);
        bencher
            .counter(BytesCount::new(set.json_len))
            .bench(|| serde_json::from_str::<Value>(&set.json).expect("JSON"));
    }
}
