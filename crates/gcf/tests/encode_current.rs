//! Encoding under the current spec (the default): exact bytes of the encodings added after
//! v3.1, each checked against gcf-python 2.8.0's output for the same value (keys are in
//! alphabetical order, so the bytes are the same with and without serde_json's
//! `preserve_order`), the options that turn them off, the numeric domain, value grouping and
//! the fewest-tokens mode.

use agentwire_gcf::{from_str, to_string, EncoderOptions, ErrorKind, Spec};
use serde::Serialize;
use serde_json::{json, Value};

fn gcf(body: &str) -> String {
    format!("GCF profile=generic\n{body}")
}

#[test]
fn nested_objects_flatten_and_columns_with_one_value_move_into_the_header() {
    let v = json!({"orders": [
        {"a>b": 1, "customer": {"name": "Ann", "tier": "gold"}, "env": "prod", "id": 1},
        {"customer": null, "env": "prod", "id": 2},
        {"a>b": {"x": 1}, "env": "prod", "id": 3},
    ]});
    // A field named with `>` is never a column: an attachment in each row that has it.
    assert_eq!(
        to_string(&v).unwrap(),
        gcf(concat!(
            "## orders [3]{\"customer>name\",\"customer>tier\",env=prod,id}\n",
            "@0 Ann|gold|1\n",
            ".\"a>b\" =1\n",
            "-|-|2\n",
            "@2 ~|~|3\n",
            ".\"a>b\" {}\n",
            "    x=1\n",
        ))
    );
    // Multi-level paths; a missing object is `~` in every leaf.
    let v = json!([
        {"a": {"b": {"c": 1, "d": null}}, "e": 1},
        {"a": {"b": {"c": 2, "d": 3}}, "e": 2},
        {"e": 3},
    ]);
    assert_eq!(
        to_string(&v).unwrap(),
        gcf("## [3]{\"a>b>c\",\"a>b>d\",e}\n1|-|1\n2|3|2\n~|~|3\n")
    );
    // The options that turn the additions off give the v3.5.3 and older bytes.
    let v = json!({"rows": [
        {"c": {"x": 1, "y": 2}, "env": "prod"},
        {"c": {"x": 3, "y": 4}, "env": "prod"},
    ]});
    assert_eq!(
        EncoderOptions::new()
            .flatten(false)
            .constant_columns(false)
            .to_string(&v)
            .unwrap(),
        gcf(concat!(
            "## rows [2]{c,env}\n",
            "@0 ^|prod\n.c {}\n    x=1\n    y=2\n",
            "@1 ^|prod\n.c {}\n    x=3\n    y=4\n",
        ))
    );
}

#[test]
fn a_shared_array_schema_never_holds_a_column_the_table_has_not() {
    // The inner tables' `>`-named member is an attachment, not a column: the schema the
    // oracles share (`{id}` plus a cell for `a>b`, which no decoder reads) is not written.
    let v: Value = serde_json::from_str(
        r#"[{"id":[{"id":null},{"id":null,"a>b":null}]},
            {"id":[{"id":null},{"id":null,"a>b":null}]}]"#,
    )
    .unwrap();
    let text = to_string(&v).unwrap();
    assert_eq!(
        text,
        gcf(concat!(
            "## [2]{id}
",
            "@0 ^
.id [2]{id}
    -
    @1 -
    .\"a>b\" =-
",
            "@1 ^
.id [2]{id}
    -
    @1 -
    .\"a>b\" =-
",
        ))
    );
    assert_eq!(from_str::<Value>(&text).unwrap(), v);
}

#[test]
fn a_shared_schema_needs_tables_in_every_row() {
    // Row 1's arrays hold arrays: no shared schema, and row 1's attachment is expanded.
    let v = json!([{"a": [{"name": null}], "b": 1}, {"a": [[{"key": 1}], [{"k": 2}]], "b": 2}]);
    let text = to_string(&v).unwrap();
    assert_eq!(
        text,
        gcf(concat!(
            "## [2]{a,b}
",
            "@0 ^|1
.a [1]{name}
    -
",
            "@1 ^|2
.a [2]
    @0 [1]{key}
      1
    @1 [1]{k}
      2
",
        ))
    );
    assert_eq!(from_str::<Value>(&text).unwrap(), v);
}

#[test]
fn objects_of_objects_become_keyed_tables() {
    let v =
        json!({"users": {"u1": {"key": 1, "name": "Ann"}, "u2": {"name": "Bo", "tags": ["x"]}}});
    assert_eq!(
        to_string(&v).unwrap(),
        gcf("## users [2:]{_key,key,name,tags}\nu1|1|Ann|~\n@1 u2|~|Bo|^\n.tags [1]: x\n")
    );
    let v = json!({"x": {"a": {}, "b": {}}, "y": {"a": {"p": 1}, "b": {"q": 2}}});
    assert_eq!(
        to_string(&v).unwrap(),
        gcf(concat!(
            "## [2:]{key,a,b}\n",
            "@0 x|^|^\n.a {}\n.b {}\n",
            "@1 y|^|^\n.a {}\n    p=1\n.b {}\n    q=2\n",
        ))
    );
    // One member, or a member that is not an object: sections.
    let v = json!({"mixed": {"a": {"p": 1}, "b": 2}, "n": 1, "only": {"a": {"p": 1}}});
    let text = to_string(&v).unwrap();
    assert!(!text.contains(":]"), "{text}");
    assert_eq!(
        EncoderOptions::new()
            .keyed_maps(false)
            .to_string(&json!({"m": {"a": {"p": 1}, "b": {"p": 2}}}))
            .unwrap(),
        gcf("## m\n  ## a\n    p=1\n  ## b\n    p=2\n")
    );
}

#[test]
fn strings_are_quoted_as_the_current_spec_asks() {
    let v = json!({"r": [{"v": "a}b", "w": 1}, {"v": "a}b", "w": 2}], "s": ["ERR[404]: x", "^{a}", "^{a", "a}b"]});
    assert_eq!(
        to_string(&v).unwrap(),
        gcf("## r [2]{v=\"a}b\",w}\n1\n2\ns[4]: \"ERR[404]: x\",\"^{a}\",^{a,a}b\n")
    );
    // v3.1 quotes every `^{` start and not the inline-array pattern.
    assert_eq!(
        EncoderOptions::new()
            .spec(Spec::V3_1)
            .to_string(&json!(["ERR[404]: x", "^{a"]))
            .unwrap(),
        gcf("## [2]: ERR[404]: x,\"^{a\"\n")
    );
}

#[test]
fn numbers_follow_the_int64_and_double_domain() {
    let v = json!([
        -0.0,
        1e20,
        9007199254740993.0,
        5e-7,
        0.000001,
        123.456,
        9007199254740992u64
    ]);
    assert_eq!(
        to_string(&v).unwrap(),
        gcf("## [7]: 0,1e+20,9.007199254740992e+15,5e-7,0.000001,123.456,9007199254740992\n")
    );
    #[derive(Serialize)]
    struct Big {
        a: u64,
    }
    let e = to_string(&Big { a: u64::MAX }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfRange);
    assert!(e.to_string().contains("18446744073709551615"), "{e}");
    assert_eq!(
        to_string(&i128::MAX).unwrap_err().kind(),
        ErrorKind::OutOfRange
    );
    assert_eq!(
        to_string(&i64::MIN).unwrap(),
        gcf("=-9223372036854775808\n")
    );
    assert_eq!(to_string(&-0.0f32).unwrap(), gcf("=0\n"));
    assert_eq!(to_string(&1e20f32).unwrap(), gcf("=1e+20\n"));
    // v3.1 writes integers of any size and `-0`.
    let v31 = EncoderOptions::new().spec(Spec::V3_1);
    assert_eq!(
        v31.to_string(&u64::MAX).unwrap(),
        gcf("=18446744073709551615\n")
    );
    assert_eq!(v31.to_string(&-0.0).unwrap(), gcf("=-0\n"));
}

#[test]
fn value_grouping_writes_the_oracles_bytes() {
    let v = json!([
        {"a_id": 1, "env": "prod", "kind": "a", "line": 10},
        {"a_id": 2, "env": "prod", "kind": "b", "line": 20},
        {"a_id": 3, "env": "prod", "kind": "a", "line": 30},
    ]);
    let opts = EncoderOptions::new().value_grouping("a_id", "kind");
    let text = opts.to_string(&v).unwrap();
    assert_eq!(
        text,
        gcf(concat!(
            "## [3]{@a_id,env=prod,kind,line} group=kind\n",
            "kind=a [2]\n1|10\n3|30\n",
            "kind=b [1]\n2|20\n",
        ))
    );
    // Records of a group come back together (the oracle's clustering).
    let back: Value = from_str(&text).unwrap();
    assert_eq!(back[1]["a_id"], 3);
    for (bad, why) in [
        (json!({"a": 1}), "array"),
        (
            json!([{"a_id": 1, "kind": "a"}, {"a_id": 1, "kind": "b"}]),
            "unique",
        ),
        (json!([{"a_id": 1, "kind": {"x": 1}}]), "nested"),
        (json!([{"a_id": 1}]), "group column"),
    ] {
        let e = opts.to_string(&bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsupportedValue);
        assert!(e.to_string().contains(why), "{e}");
    }
}

/// A crude, fast token counter for the tests: a run of letters or digits is a token, every
/// other character one.
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

#[test]
fn fewest_tokens_chooses_among_the_grammars_encodings() {
    let fewest = EncoderOptions::new().fewest_tokens(crude);
    // A sparse table: member lines beat a row of `~`.
    let sparse = json!({"rows": [
        {"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}, {"e": 5},
    ]});
    let text = fewest.to_string(&sparse).unwrap();
    assert!(crude(&text) < crude(&to_string(&sparse).unwrap()), "{text}");
    assert!(text.contains("@0 {}"), "{text}");
    // Sorted records: grouped by the repeated column, keyed by a unique one.
    let records: Vec<Value> = (0..12)
        .map(|i| json!({"f": format!("src/{}.rs", i / 6), "id": i, "n": i % 5}))
        .collect();
    let sorted = json!({ "s": records });
    let text = fewest.to_string(&sorted).unwrap();
    assert!(text.contains("group=f"), "{text}");
    // Strings quoted only where their context needs it.
    let quoted = json!({"t": [{"d": "a, b", "k": 1}, {"d": "c, d", "k": 2}]});
    let text = fewest.to_string(&quoted).unwrap();
    assert!(text.contains("a, b|1"), "{text}");
    // Every one reads back, and never has more tokens than the canonical encoding.
    for v in [sparse, sorted, quoted] {
        let text = fewest.to_string(&v).unwrap();
        let back: Value = from_str(&text).unwrap();
        assert_eq!(back, v, "{text}");
        assert!(crude(&text) <= crude(&to_string(&v).unwrap()));
        assert_eq!(fewest.to_string_value(&v).unwrap(), text);
    }
    // v3.1 has none of it.
    let v31 = EncoderOptions::new().spec(Spec::V3_1).fewest_tokens(crude);
    assert_eq!(
        v31.to_string(&json!({"a": [{"b": 1}]})).unwrap(),
        gcf("## a [1]{b}\n1\n")
    );
}
