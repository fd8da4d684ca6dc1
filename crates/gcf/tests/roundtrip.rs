//! Property tests: arbitrary JSON values (with strings built to collide with GCF syntax) and
//! typed values survive `to_string` → `from_str` unchanged, and re-encoding is idempotent,
//! checked by the shared oracle in `agentwire-testkit`.

use std::collections::BTreeMap;

use agentwire_gcf::{EncoderOptions, Spec};
use agentwire_testkit::gcf::{check_value, check_value_with, json_equal};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The number of cases: `PROPTEST_CASES` when set (for long runs), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Strings that collide with GCF syntax in some context.
const NASTY: &[&str] = &[
    "",
    " ",
    "  ",
    "|",
    ",",
    "a|b",
    "a,b",
    "\n",
    "\r\n",
    "\r",
    " x",
    "x ",
    "-",
    "--",
    "~",
    "^",
    "^{a}",
    "^{a,b}",
    "^{}",
    "^{",
    "\"\"",
    "\"",
    "\\",
    "\\\\",
    "007",
    "01",
    "1e5",
    "1E5",
    "+1",
    ".5",
    "5.",
    "-0",
    "0",
    "-1",
    "-.5",
    "1.5e+3",
    "true",
    "false",
    "null",
    "NaN",
    "Infinity",
    "#x",
    "# x",
    "#",
    "##",
    "## x",
    "##! summary counts=1",
    "@1 x",
    "@x",
    "@0 {}",
    ".x",
    ".a {}",
    "=x",
    "==",
    "[1]: x",
    "ERR[404]: Not Found",
    "k=v",
    "a>b",
    "é",
    "日本語",
    "😀",
    "\u{300}",
    "\u{a0}",
    "nb\u{a0}sp",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "\u{85}",
    "\u{9f}",
    "\t",
    "x\ty",
    "\0",
    "\u{1f}",
    "\u{7f}",
    "\u{200b}",
    "\u{3000}",
    "\\u0041",
    "1.٥",
    "١٢٣",
    "{}",
    "[0]",
    "a b",
    "a=b",
    "a.b",
    "-abc",
    "123abc",
    "0x1f",
    "_private",
    "id",
    "name",
    "Abc_9",
];

/// A crude, fast token counter: a run of letters or digits is a token, every other character
/// one.
fn crude(text: &str) -> usize {
    let mut tokens = 0;
    let mut word = false;
    for c in text.chars() {
        let w = c.is_alphanumeric();
        if !(w && word) {
            tokens += 1;
        }
        word = w;
    }
    tokens
}

fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(NASTY).prop_map(str::to_owned),
        2 => "[a-z_][a-z0-9_]{0,6}",
        1 => "\\PC{0,10}",
        1 => any::<String>().prop_map(|s| s.chars().take(12).collect()),
        1 => (prop::sample::select(NASTY), prop::sample::select(NASTY))
            .prop_map(|(a, b)| format!("{a}{b}")),
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(
            &[
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.1,
                0.5,
                1e21,
                1e20,
                9.99e20,
                1e-6,
                9.99e-7,
                1e-7,
                4e-7,
                5e-324,
                f64::MAX,
                f64::MIN_POSITIVE,
                9007199254740993.0,
                1.7976931348623157e308,
                123456.789,
                1e16,
                2.5e-300,
            ][..]
        ),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64 / 100.0),
    ]
}

fn leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        2 => float().prop_map(|f| json!(f)),
        4 => nasty().prop_map(Value::String),
    ]
    .boxed()
}

fn object(inner: impl Strategy<Value = Value>, keys: usize) -> impl Strategy<Value = Value> {
    prop::collection::vec((nasty(), inner), 0..keys)
        .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>()))
}

/// Arrays of objects over a small key pool: tabular arrays with absent and null cells, late
/// keys, nested attachments; objects of three fixed keys for inline schemas; arrays of
/// objects with fixed keys for shared schemas.
fn table(inner: impl Strategy<Value = Value> + Clone + 'static) -> impl Strategy<Value = Value> {
    let keys = prop::collection::vec(nasty(), 1..5);
    // (The pieces are boxed: nested strategy types give `new_tree` stack frames large enough
    // to overflow a test thread's stack in debug builds.)
    let schema_object = (leaf(), leaf(), leaf())
        .prop_map(|(a, b, c)| json!({"x": a, "y": b, "z": c}))
        .boxed();
    // Mostly rows of the same keys in the same order; now and then one in another order or
    // with a key missing, which changes the field union.
    let shared_row = prop_oneof![
        6 => (leaf(), leaf()).prop_map(|(a, b)| json!({"p": a, "q": b})),
        1 => (leaf(), leaf()).prop_map(|(a, b)| json!({"q": b, "p": a})),
        1 => leaf().prop_map(|a| json!({"p": a})),
    ]
    .boxed();
    let shared_array = prop::collection::vec(shared_row, 1..3)
        .prop_map(Value::Array)
        .boxed();
    let cell = prop_oneof![
        4 => inner,
        2 => schema_object,
        2 => shared_array,
        1 => Just(Value::Null),
    ]
    .boxed();
    (
        keys,
        // Dense tables (every row has every key, in order) are the one-pass encoders' guess.
        any::<bool>(),
        prop::collection::vec(prop::collection::vec((any::<bool>(), cell), 5), 1..5),
    )
        .prop_map(|(keys, dense, rows)| {
            Value::Array(
                rows.into_iter()
                    .map(|cells| {
                        let mut row = Map::new();
                        for (key, (present, value)) in keys.iter().zip(cells) {
                            if present || dense {
                                row.insert(key.clone(), value);
                            }
                        }
                        Value::Object(row)
                    })
                    .collect(),
            )
        })
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            2 => prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            2 => object(inner.clone(), 6),
            3 => table(inner),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn json_values_round_trip(v in value()) {
        if let Err(bug) = check_value(&v) {
            prop_assert!(false, "{}", bug);
        }
    }

    #[test]
    fn json_values_round_trip_in_v3_1(v in value()) {
        if let Err(bug) = check_value_with(&v, &EncoderOptions::new().spec(Spec::V3_1)) {
            prop_assert!(false, "{}", bug);
        }
    }

    #[test]
    fn fewest_tokens_round_trip_and_never_cost_more(v in value()) {
        let fewest = EncoderOptions::new().fewest_tokens(crude);
        match check_value_with(&v, &fewest) {
            Err(bug) => prop_assert!(false, "{}", bug),
            Ok(text) if !text.is_empty() => {
                let canonical = agentwire_gcf::to_string(&v).unwrap();
                prop_assert!(crude(&text) <= crude(&canonical), "{}\n{}", text, canonical);
            }
            Ok(_) => {}
        }
    }

    #[test]
    fn json_values_round_trip_at_the_root_of_an_object(k in nasty(), v in value()) {
        let mut object = Map::new();
        object.insert(k, v);
        if let Err(bug) = check_value(&Value::Object(object)) {
            prop_assert!(false, "{}", bug);
        }
    }

    #[test]
    fn strings_round_trip_in_every_context(s in nasty()) {
        let v = json!({
            "kv": s,
            "inline": [s, s],
            "table": [{"a": s, "b": 1}, {"a": 2, "b": s}],
            "items": [s, [s], {"k": s}],
            "nested": {"schema": [{"o": {"x": s, "y": s, "z": s}}, {"o": {"x": 1, "y": s, "z": null}}]},
            s.clone(): s,
        });
        if let Err(bug) = check_value(&v) {
            prop_assert!(false, "{}", bug);
        }
        if let Err(bug) = check_value(&Value::String(s.clone())) {
            prop_assert!(false, "{}", bug);
        }
        if let Err(bug) = check_value(&json!([{ s.clone(): s }])) {
            prop_assert!(false, "{}", bug);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Point,
    Circle(f64),
    Rect { w: u32, h: u32 },
    Pair(i8, String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Item {
    sku: String,
    qty: u16,
    price: f64,
    note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: u64,
    big: i128,
    customer: BTreeMap<String, String>,
    items: Vec<Item>,
    tags: Vec<String>,
    shape: Shape,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    coupon: Option<String>,
    ratio: f32,
    flag: Option<bool>,
    raw: Vec<u8>,
    unit: (),
    pair: (u8, char),
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Point),
        float().prop_map(Shape::Circle),
        (any::<u32>(), any::<u32>()).prop_map(|(w, h)| Shape::Rect { w, h }),
        (any::<i8>(), nasty()).prop_map(|(a, b)| Shape::Pair(a, b)),
    ]
}

fn order() -> impl Strategy<Value = Order> {
    let item = (nasty(), any::<u16>(), float(), prop::option::of(nasty())).prop_map(
        |(sku, qty, price, note)| Item {
            sku,
            qty,
            price,
            note,
        },
    );
    (
        (
            any::<u64>(),
            any::<i128>(),
            prop::collection::btree_map(nasty(), nasty(), 0..4),
        ),
        prop::collection::vec(item, 0..4),
        prop::collection::vec(nasty(), 0..4),
        shape(),
        prop::option::of(nasty()),
        // Dyadic values: the same shortest digits as f32 and as f64 (serde_json widens f32).
        any::<i8>().prop_map(|i| f32::from(i) / 4.0),
        prop::option::of(any::<bool>()),
        prop::collection::vec(any::<u8>(), 0..4),
        (any::<u8>(), any::<char>()),
    )
        .prop_map(
            |((id, big, customer), items, tags, shape, coupon, ratio, flag, raw, pair)| Order {
                id,
                big,
                customer,
                items,
                tags,
                shape,
                coupon,
                ratio,
                flag,
                raw,
                unit: (),
                pair,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn typed_values_round_trip(orders in prop::collection::vec(order(), 0..4)) {
        // v3.1 writes integers of any size, read back by the same version.
        let encoder = EncoderOptions::new().spec(Spec::V3_1);
        let text = encoder.to_string(&orders).unwrap();
        let v31 = agentwire_gcf::DecoderOptions::new().spec(Spec::V3_1);
        let back: Vec<Order> = v31.from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &orders, "{}", text);
        // The struct path and the serde_json::Value path agree (when serde_json can hold the
        // i128 field: with arbitrary_precision, or when it fits 64 bits).
        if let Ok(value) = serde_json::to_value(&orders) {
            let via_value = encoder.to_string(&value).unwrap();
            let reparsed: Value = v31.from_str(&text).unwrap();
            prop_assert!(json_equal(&value, &reparsed), "{}", text);
            // Member order differs only when serde_json sorts keys (without preserve_order).
            prop_assert_eq!(via_value.len(), text.len());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Tables as every encoder writes them (root and member tables, the current spec and
    /// v3.1, inline and shared schemas on and off), read by the streaming readers: the same
    /// rows and values as the in-memory decoder (`agentwire_testkit::gcf::check_streaming`).
    #[test]
    fn tables_stream_as_they_decode(
        rows in table(leaf()),
        named in any::<bool>(),
        v31 in any::<bool>(),
        schemas in any::<bool>(),
    ) {
        let value = if named { json!({"t": rows}) } else { rows };
        let options = EncoderOptions::new()
            .spec(if v31 { Spec::V3_1 } else { Spec::V3_6 })
            .inline_schemas(schemas)
            .shared_schemas(schemas);
        if let Ok(text) = options.to_string(&value) {
            if let Err(bug) = agentwire_testkit::gcf::check_streaming(text.as_bytes()) {
                prop_assert!(false, "{}\n{}", bug, text);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Tables damaged by one edit (a line dropped, repeated or cut, a byte changed): the
    /// streaming readers reject what the in-memory decoder rejects, with the same code, and
    /// accept the same values.
    #[test]
    fn damaged_tables_stream_as_they_decode(
        rows in table(leaf()),
        named in any::<bool>(),
        edit in 0usize..4,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let value = if named { json!({"t": rows}) } else { rows };
        let Ok(text) = EncoderOptions::new().to_string(&value) else { return Ok(()) };
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let i = at.index(lines.len());
        match edit {
            0 => { lines.remove(i); }
            1 => { let l = lines[i].clone(); lines.insert(i, l); }
            2 => { let l = &mut lines[i]; let n = at.index(l.len() + 1); let mut b = l.as_bytes()[..n].to_vec(); b.retain(|&c| c < 0x80); *l = String::from_utf8(b).unwrap_or_default(); }
            _ => { let l = &mut lines[i]; if !l.is_empty() { let n = at.index(l.len()); let mut b = l.clone().into_bytes(); b[n] = byte; *l = String::from_utf8_lossy(&b).into_owned(); } }
        }
        let damaged = lines.join("\n") + "\n";
        if let Err(bug) = agentwire_testkit::gcf::check_streaming(damaged.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, damaged);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Root objects of several members (tables, sections, lists, scalars), as written and
    /// damaged by one edit (a line dropped, repeated or moved to the top level, a byte
    /// changed): `from_reader`, cut into units at every place it may cut, reads what the
    /// in-memory decoder reads, or fails with its error at its position.
    #[test]
    fn objects_stream_as_they_decode(
        members in prop::collection::vec((nasty(), value()), 1..6),
        v31 in any::<bool>(),
        edit in 0usize..5,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let value = Value::Object(members.into_iter().collect());
        let options = EncoderOptions::new().spec(if v31 { Spec::V3_1 } else { Spec::V3_6 });
        let Ok(text) = options.to_string(&value) else { return Ok(()) };
        if let Err(bug) = agentwire_testkit::gcf::check_from_reader(text.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, text);
        }
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let i = at.index(lines.len());
        match edit {
            0 => { lines.remove(i); }
            1 => { let l = lines[i].clone(); lines.insert(i, l); }
            2 => { let l = lines[i].trim_start().to_owned(); lines[i] = l; }
            3 => { let l = lines[i].clone(); lines.push(l); }
            _ => { let l = &mut lines[i]; if !l.is_empty() { let n = at.index(l.len()); let mut b = l.clone().into_bytes(); b[n] = byte; *l = String::from_utf8_lossy(&b).into_owned(); } }
        }
        let damaged = lines.join("\n") + "\n";
        if let Err(bug) = agentwire_testkit::gcf::check_from_reader(damaged.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, damaged);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    /// Value-grouped tables (and the same records damaged by one edit) read by the streaming
    /// readers as the in-memory decoder reads them.
    #[test]
    fn grouped_tables_stream_as_they_decode(
        records in prop::collection::vec((0u8..4, leaf(), any::<bool>()), 1..8),
        drop_line in any::<prop::sample::Index>(),
        damage in any::<bool>(),
    ) {
        let rows: Vec<Value> = records
            .iter()
            .enumerate()
            .map(|(i, (kind, v, dup))| {
                let id = if *dup && i > 0 { format!("r{}", i - 1) } else { format!("r{i}") };
                json!({"id": id, "kind": format!("k{kind}"), "v": v})
            })
            .collect();
        let options = EncoderOptions::new().value_grouping("id", "kind");
        if let Ok(text) = options.to_string(&Value::Array(rows)) {
            let text = if damage {
                let mut lines: Vec<&str> = text.lines().collect();
                lines.remove(drop_line.index(lines.len()));
                lines.join("\n") + "\n"
            } else {
                text
            };
            if let Err(bug) = agentwire_testkit::gcf::check_streaming(text.as_bytes()) {
                prop_assert!(false, "{}\n{}", bug, text);
            }
        }
    }
}

/// Found by `fewest_tokens_round_trip_and_never_cost_more` (and there before this session:
/// a build of the morning's code writes the same bytes): the fewest-tokens encoder gave the
/// first array of a shared array schema a constant column (`."" [2]{p=false,q}`), so the
/// later arrays' rows (`0.5|-9367.13`, every field a cell) were one cell too wide for the
/// schema the decoder reads them by. The first array of a shared schema has no constants.
#[test]
fn a_shared_schema_declares_no_constant_column() {
    let v = json!([{"": [{"p": false, "q": null}, {"p": false, "q": null}]}, {"": [{"p": 0.5, "q": -9367.13}]}]);
    let fewest = EncoderOptions::new().fewest_tokens(crude);
    if let Err(bug) = check_value_with(&v, &fewest) {
        panic!("{bug}");
    }
}
