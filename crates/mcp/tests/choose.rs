//! Whatever `auto` chooses reads back: arbitrary JSON objects and arrays, strings with the
//! bytes the formats escape or treat specially.

use agentwire_mcp::{decode, detect, EncodeOptions, Outcome, Reencoder};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        "[ -~]{0,12}",
        Just(String::new()),
        Just("GCF profile=generic".to_owned()),
        Just("GCX1 tool=t".to_owned()),
        Just("# comment".to_owned()),
        Just("a\tb\nc\r\nd".to_owned()),
        Just("[3]: x,y,z".to_owned()),
        Just(" leading and trailing ".to_owned()),
        Just("null".to_owned()),
        Just("42".to_owned()),
        Just("é ☃ \u{feff}".to_owned()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An object or an array, often of records with the same keys (the shape the formats win on).
fn container() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(value(), 0..5).prop_map(Value::Array),
        prop::collection::vec(("[a-z]{1,6}", value()), 0..5)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        (1usize..12, prop::collection::vec(scalar(), 3)).prop_map(|(n, cells)| {
            Value::Array(
                (0..n)
                    .map(|i| {
                        let mut row = Map::new();
                        row.insert("id".into(), Value::from(i));
                        for (k, cell) in ["a", "b", "c"].iter().zip(&cells) {
                            row.insert((*k).into(), cell.clone());
                        }
                        Value::Object(row)
                    })
                    .collect(),
            )
        }),
    ]
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_choice_reads_back(value in container()) {
        let reencoder = Reencoder::new(EncodeOptions::new().min_tokens(1)).unwrap();
        let compact = serde_json::to_string(&value).unwrap();
        let Ok(choice) = reencoder.choose(&value, "tool") else {
            // Only when not even compact JSON reads back: a float serde_json reads 1 ULP off,
            // in a build without its `float_roundtrip`.
            let back: Value = serde_json::from_str(&compact).unwrap();
            prop_assert!(!same(&value, &back), "{}", value);
            return Ok(());
        };
        prop_assert_eq!(detect(&choice.text), choice.encoding);
        let (encoding, back) = decode(&choice.text).unwrap();
        prop_assert_eq!(encoding, choice.encoding);
        prop_assert!(same(&value, &back), "{} -> {}", value, choice.text);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        match reencoder.reencode_text(&pretty, "tool") {
            Outcome::Replaced { before, choice } => {
                prop_assert!(choice.tokens < before);
                prop_assert!(same(&value, &decode(&choice.text).unwrap().1));
            }
            Outcome::Kept { .. } => {}
            Outcome::NotJson => prop_assert!(false, "a container is JSON"),
            other => prop_assert!(false, "{:?}", other),
        }
        // The fuzz target's oracle, on every format.
        if let Err(bug) = agentwire_testkit::mcp::reencode(&pretty, "tool") {
            prop_assert!(false, "{}", bug);
        }
    }

    #[test]
    fn the_fuzz_oracle_holds_for_any_text(text in "[\\[\\]{}\",:0-9a-z. \\n-]{0,40}") {
        // Mostly not JSON; sometimes a container. Either way the oracle holds.
        if let Err(bug) = agentwire_testkit::mcp::reencode(&text, "t") {
            prop_assert!(false, "{}", bug);
        }
    }
}
