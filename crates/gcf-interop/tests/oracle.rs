//! `agentwire-gcf` against the `gcf` crate 3.1.0 (spec v3.6: flattening, keyed maps, constant
//! columns) as an oracle, on arbitrary JSON within the int64 domain and on the corpus of tool
//! responses:
//!
//! - **we read theirs**: `agentwire_gcf::from_str(gcf::encode_generic(v)) == v`;
//! - **they read ours**: `gcf::decode_generic(agentwire_gcf::to_string(v)) == v`.
//!
//! Equality is the JSON data model's (`agentwire_testkit::gcf::json_equal`: numbers by value,
//! members as sets). Where the oracle has a bug, the test follows the spec and says so.

use agentwire_testkit::gcf::json_equal;
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// The number of cases: `PROPTEST_CASES` when set (for long runs), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Strings that collide with GCF syntax somewhere.
const NASTY: &[&str] = &[
    "",
    " ",
    "a b",
    " x",
    "x ",
    "|",
    ",",
    "a|b",
    "a,b",
    "\n",
    "\r",
    "\t",
    "-",
    "--",
    "~",
    "^",
    "^{a}",
    "^{",
    "\"",
    "\\",
    "007",
    "01",
    "1e5",
    "+1",
    ".5",
    "5.",
    "-0",
    "0",
    "-1",
    "1.5e+3",
    "true",
    "false",
    "null",
    "#x",
    "# c",
    "@1 x",
    ".x",
    "k=v",
    "## x",
    "##! summary",
    "a>b",
    ">",
    "x>",
    "é",
    "日本語",
    "😀",
    "\u{a0}",
    "\u{2028}",
    "\u{feff}",
    "\u{85}",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "ERR[404]: Not Found",
    "[1]: x",
    "1.٥",
    "a\"b",
    "}",
    "{x}",
    "ௗP",
];

/// Keys: bare ones (most), quoted ones, and with `with_gt` keys holding `>` (a v3.1 writer's
/// `"a>b"` column is a flattened path to a current reader: see `they_read_ours`).
fn key(with_gt: bool) -> BoxedStrategy<String> {
    let bare = prop::sample::select(vec!["id", "name", "a", "b", "kind", "key", "_x", "v2"])
        .prop_map(String::from);
    let quoted = prop::sample::select(vec!["", "a b", "a,b", "a|b", "1", "true", "-", "é", "k=v"])
        .prop_map(String::from);
    let gt = prop::sample::select(vec!["a>b", ">", "x>y>z"]).prop_map(String::from);
    if with_gt {
        prop_oneof![6 => bare, 2 => quoted, 1 => gt].boxed()
    } else {
        prop_oneof![6 => bare, 2 => quoted].boxed()
    }
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(NASTY).prop_map(String::from),
        2 => "[a-z]{1,8}",
        1 => any::<String>(),
    ]
}

/// A finite double, never negative zero (the current spec writes it `0`, so it comes back as
/// the integer zero), with the values the spec's layout rules split on. With `v31`, none in
/// `[2^53, 1e21)`: v3.1 writes those as plain digits, an integer token the current spec reads
/// as out of range (docs/gcf.md, "Versions"), and our encoder writes v3.1 today.
fn double(v31: bool) -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            0.5,
            1.5,
            0.25,
            1e-7,
            1e20,
            1.25e21,
            9007199254740992.0,
            1e300,
            0.1
        ]),
        (-1e6f64..1e6).prop_map(|x| (x * 100.0).round() / 100.0),
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
    ]
    .prop_map(|x| if x == 0.0 { 0.0 } else { x })
    .prop_filter("v3.1 writes it as an integer", move |x| {
        !(v31 && (9007199254740992.0..1e21).contains(&x.abs()))
    })
}

fn scalar(v31: bool) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        (-1000i64..1000).prop_map(|n| Value::Number(n.into())),
        double(v31).prop_map(|x| Number::from_f64(x).map_or(Value::Null, Value::Number)),
        string().prop_map(Value::String),
    ]
}

/// Arbitrary JSON, with the shapes the current spec's layouts apply to made likely: arrays of
/// objects sharing keys (tables, with nested objects to flatten and columns that are constant),
/// and objects of objects (keyed maps). `v31`: only what v3.1 and the current spec read alike
/// (no keys with `>`, no doubles v3.1 writes as integers).
fn json(v31: bool) -> impl Strategy<Value = Value> {
    let with_gt = !v31;
    scalar(v31).prop_recursive(4, 48, 6, move |inner| {
        let object = prop::collection::vec((key(with_gt), inner.clone()), 0..5)
            .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>()));
        let row = prop::collection::vec(
            (
                key(with_gt),
                prop_oneof![3 => scalar(v31), 1 => inner.clone()],
            ),
            1..4,
        );
        // Rows drawn from one small set of keys: tables, often with shared nested shapes.
        let table = (row.clone(), prop::collection::vec(row, 1..5)).prop_map(|(first, rest)| {
            let first: Map<String, Value> = first.into_iter().collect();
            let mut rows = vec![Value::Object(first.clone())];
            for (i, other) in rest.into_iter().enumerate() {
                let mut row = first.clone();
                for (k, v) in other.into_iter().take(i % 3) {
                    row.insert(k, v);
                }
                rows.push(Value::Object(row));
            }
            Value::Array(rows)
        });
        let map = prop::collection::vec((key(with_gt), object.clone()), 2..4)
            .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>()));
        prop_oneof![
            2 => prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            2 => object,
            3 => table,
            1 => map,
        ]
    })
}

/// Whether `a` and `b` are equal with their non-integer numbers compared as doubles: `gcf`
/// may spell a double with other digits than its shortest ones (the double
/// 1418446132931932.25 as `1418446132931932.3`, serde_json as `…932.2`), which a reader
/// keeping the digits (serde_json's `arbitrary_precision`, on in a workspace build through the
/// `agentwire` command) keeps.
fn same_doubles(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if !(x.is_i64() || x.is_u64()) => {
            x.as_f64().is_some() && x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_doubles(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_doubles(v, w)))
        }
        _ => json_equal(a, b),
    }
}

/// Decodes `text` with `agentwire-gcf` and compares.
fn we_read(value: &Value, text: &str) -> Result<(), TestCaseError> {
    let back: Value = agentwire_gcf::from_str(text)
        .map_err(|e| TestCaseError::fail(format!("{e}\nvalue: {value}\ntext:\n{text}")))?;
    prop_assert!(
        json_equal(value, &back),
        "read back differently\nvalue: {}\nback:  {}\ntext:\n{}",
        value,
        back,
        text
    );
    Ok(())
}

/// Decodes `text` with the `gcf` crate and compares.
fn they_read(value: &Value, text: &str) -> Result<(), TestCaseError> {
    let back = gcf::decode_generic(text)
        .map_err(|e| TestCaseError::fail(format!("gcf: {e}\nvalue: {value}\ntext:\n{text}")))?;
    prop_assert!(
        json_equal(value, &back),
        "gcf read back differently\nvalue: {}\nback:  {}\ntext:\n{}",
        value,
        back,
        text
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    /// What the `gcf` crate writes (flattened columns, keyed maps, constant columns), we read
    /// to the same value.
    #[test]
    fn we_read_theirs(value in json(false)) {
        let text = gcf::encode_generic(&value).map_err(TestCaseError::fail)?;
        // The oracle's bug: a nested table under a shared schema (`.f [N]` without a field
        // list) whose rows hold a `>`-named member is written wider than the schema it
        // shares, and `gcf` cannot read it back either (`row_width_mismatch`). Such text is
        // not GCF; we reject it too (`oracle_bug_shared_schema_with_gt_key` below).
        prop_assume!(gcf::decode_generic(&text).is_ok());
        let back: Value = agentwire_gcf::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\nvalue: {value}\ntext:\n{text}")))?;
        prop_assert!(
            same_doubles(&value, &back),
            "read back differently\nvalue: {}\nback:  {}\ntext:\n{}",
            value,
            back,
            text
        );
    }

    /// What we write, the `gcf` crate reads to the same value. Our encoder writes v3.1 today:
    /// a field literally named `a>b` is a column there, which a current reader takes for a
    /// flattened path, and a double from 2^53 to 1e21 is plain digits, which it takes for an
    /// out-of-range integer (docs/gcf.md, "Versions"); those are left out of this direction
    /// until the current-spec encoder lands.
    #[test]
    fn they_read_ours(value in json(true)) {
        let text = agentwire_gcf::to_string(&value)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        they_read(&value, &text)?;
    }
}

/// The corpus of tool responses (the scorecard's), both ways.
#[test]
fn the_corpus_both_ways() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() > 5, "the corpus at {}", dir.display());
    for path in files {
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let value = file.get("response").cloned().unwrap_or(file);
        let theirs = gcf::encode_generic(&value).unwrap();
        we_read(&value, &theirs).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ours = agentwire_gcf::to_string(&value).unwrap();
        they_read(&value, &ours).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// The oracle's bug kept out of `we_read_theirs`: `gcf` 3.1.0 writes the second nested table
/// under the shared schema `{id}` with two cells a row (the `"a>b"` member as a column it never
/// declared). Neither `gcf` nor we read that text; we say where.
#[test]
fn oracle_bug_shared_schema_with_gt_key() {
    let value: Value = serde_json::from_str(
        r#"[{"id":[{"id":null},{"id":null},{"id":null,"a>b":null}]},
            {"id":[{"id":null},{"id":null},{"id":null,"a>b":null}]}]"#,
    )
    .unwrap();
    let text = gcf::encode_generic(&value).unwrap();
    assert!(gcf::decode_generic(&text).is_err(), "{text}");
    let err = agentwire_gcf::from_str::<Value>(&text).unwrap_err();
    assert_eq!(err.code(), "row_width_mismatch", "{err}");
    assert_eq!((err.line(), err.column()), (Some(11), Some(5)), "{err}");
}
