//! Decoding: every form the spec allows and the reference encoder writes, typed targets, and
//! one test per generic error code with its position.

use std::borrow::Cow;
use std::collections::HashMap;

use agentwire_gcf::{from_reader, from_slice, from_str, DecoderOptions, ErrorKind, Spec};
use serde::Deserialize;
use serde_json::{json, Value};

fn value(text: &str) -> Value {
    match from_str(text) {
        Ok(v) => v,
        Err(e) => panic!("{e}\n{text}"),
    }
}

/// The error code, line and column of decoding `text` into a `Value`.
fn error(text: &str) -> (&'static str, u64, u64) {
    match from_str::<Value>(text) {
        Ok(v) => panic!("decoded {v} from\n{text}"),
        Err(e) => (e.code(), e.line().unwrap_or(0), e.column().unwrap_or(0)),
    }
}

/// Whether serde_json was built with `arbitrary_precision` (unified in from the conformance
/// crate in workspace builds).
fn arbitrary_precision() -> bool {
    // Without the feature, 2^64 parses as a float.
    matches!(
        serde_json::from_str::<Value>("18446744073709551616"),
        Ok(v) if v.is_number() && !v.is_f64()
    )
}

#[test]
fn roots() {
    assert_eq!(value("GCF profile=generic\n"), json!({}));
    assert_eq!(value("GCF profile=generic"), json!({}));
    assert_eq!(value("GCF profile=generic\n=42\n"), json!(42));
    assert_eq!(value("GCF profile=generic\n=-\n"), json!(null));
    assert_eq!(value("GCF profile=generic\n=\"true\"\n"), json!("true"));
    assert_eq!(
        value("GCF profile=generic\n= spaced out \n"),
        json!("spaced out")
    );
    assert_eq!(value("GCF profile=generic\n==x\n"), json!("=x"));
    assert_eq!(value("GCF profile=generic\n## [0]\n"), json!([]));
    assert_eq!(
        value("GCF profile=generic\n## [2]: a,b\n"),
        json!(["a", "b"])
    );
    assert_eq!(
        value("GCF profile=generic\n## [2]{id}\n1\n2\n"),
        json!([{"id": 1}, {"id": 2}])
    );
    assert_eq!(
        value("GCF profile=generic\n## [2]\n@0 =x\n@1 {}\n  a=1\n"),
        json!(["x", {"a": 1}])
    );
    assert_eq!(
        value("GCF profile=generic tool=t tokens=12\na=1\n"),
        json!({"a": 1})
    );
}

#[test]
fn whitespace_comments_and_line_ends() {
    let text = "GCF profile=generic\r\n\r\n# comment\r\n## rows [2]{a,b}\r\n# between rows\r\n  # indented comment\r\n1 | x \r\n\t\r\n2|\" y \"\r\nz=  spaced  \r\n";
    assert_eq!(
        value(text),
        json!({"rows": [{"a": 1, "b": "x"}, {"a": 2, "b": " y "}], "z": "spaced"})
    );
    assert_eq!(
        value("GCF profile=generic\ntags[3]:  a , b ,c\n"),
        json!({"tags": ["a", "b", "c"]})
    );
    assert_eq!(value("GCF profile=generic\nempty=\n"), json!({"empty": ""}));
    assert_eq!(value("GCF profile=generic\ne[0]:\n"), json!({"e": []}));
    assert_eq!(
        value("GCF profile=generic\n## s   \n  a=1\n"),
        json!({"s": {"a": 1}})
    );
}

#[test]
fn scalars_and_keys() {
    let v = value(concat!(
        "GCF profile=generic\n",
        "\"display name\"=Alice\n",
        "\"\"=empty key\n",
        "\"a\\nb\"=\"line\\u000aend\"\n",
        "n=-0\n",
        "e=6.022E+23\n",
        "s=01\n",
        "t=true\n",
        "u=\"\\uD83D\\uDE00\"\n",
        "bare=a\"b\n",
    ));
    assert_eq!(v["display name"], "Alice");
    assert_eq!(v[""], "empty key");
    assert_eq!(v["a\nb"], "line\nend");
    // `-0` is the integer zero (spec v3.5); negative zero with Spec::V3_1.
    assert_eq!(v["n"], json!(0));
    assert_eq!(v["e"].as_f64(), Some(6.022e23));
    assert_eq!(v["s"], "01");
    assert_eq!(v["t"], true);
    assert_eq!(v["u"], "😀");
    assert_eq!(v["bare"], "a\"b");
}

#[test]
fn attachments_in_every_form() {
    // `.field` at the row's level (reference) and one level below (spec text), bodies at +4.
    let text = "GCF profile=generic\n## rows [2]{id,meta,tags}\n@0 1|^|^\n.meta {}\n    a=1\n.tags [2]: x,y\n@1 2|^|~\n  .meta {}\n    b=2\n";
    assert_eq!(
        value(text),
        json!({"rows": [{"id": 1, "meta": {"a": 1}, "tags": ["x", "y"]}, {"id": 2, "meta": {"b": 2}}]})
    );
    // Attachments out of field order.
    let text = "GCF profile=generic\n## rows [1]{a,b}\n@0 ^|^\n.b [1]: 2\n.a {}\n    x=1\n";
    assert_eq!(value(text), json!({"rows": [{"a": {"x": 1}, "b": [2]}]}));
    // Nested tabular and expanded attachments, with their own attachments.
    let text = concat!(
        "GCF profile=generic\n",
        "## o [1]{id,items,mixed}\n",
        "@0 1|^|^\n",
        ".items [2]{sku,opts}\n",
        "    A|-\n",
        "    @1 B|^\n",
        "    .opts {}\n",
        "        gift=true\n",
        ".mixed [3]\n",
        "    @0 =x\n",
        "    @1 {}\n",
        "      k=v\n",
        "    @2 [0]\n",
    );
    assert_eq!(
        value(text),
        json!({"o": [{"id": 1,
            "items": [{"sku": "A", "opts": null}, {"sku": "B", "opts": {"gift": true}}],
            "mixed": ["x", {"k": "v"}, []]}]})
    );
}

#[test]
fn inline_and_shared_schemas() {
    // An inline schema declared on row 0 and reused; a body one level deeper; a null row.
    let text = concat!(
        "GCF profile=generic\n",
        "## o [4]{id,c}\n",
        "@0 1|^{\"n a\",e,t}\n",
        "Ann|a@x|\"1\"\n",
        "@1 2|^\n",
        "  Bo|b@x|-\n",
        "3|-\n",
        "4|~\n",
    );
    assert_eq!(
        value(text),
        json!({"o": [
            {"id": 1, "c": {"n a": "Ann", "e": "a@x", "t": "1"}},
            {"id": 2, "c": {"n a": "Bo", "e": "b@x", "t": null}},
            {"id": 3, "c": null},
            {"id": 4},
        ]})
    );
    // A bare `^` with a reusable schema may still take a traditional body.
    let text = "GCF profile=generic\n## o [2]{c}\n@0 ^{a,b,c}\n1|2|3\n@1 ^\n.c {}\n    z=9\n";
    assert_eq!(
        value(text),
        json!({"o": [{"c": {"a": 1, "b": 2, "c": 3}}, {"c": {"z": 9}}]})
    );
    // A shared array schema; an explicit different declaration applies to its row only; an
    // expanded array after it keeps its `@N` items.
    let text = concat!(
        "GCF profile=generic\n",
        "## o [4]{i}\n",
        "@0 ^\n.i [1]{s,p}\n    A|1\n",
        "@1 ^\n.i [1]{q}\n    x\n",
        "@2 ^\n.i [2]\n    B|2\n    C|3\n",
        "@3 ^\n.i [1]\n    @0 =lone\n",
    );
    assert_eq!(
        value(text),
        json!({"o": [
            {"i": [{"s": "A", "p": 1}]},
            {"i": [{"q": "x"}]},
            {"i": [{"s": "B", "p": 2}, {"s": "C", "p": 3}]},
            {"i": ["lone"]},
        ]})
    );
}

#[test]
fn deferred_sections() {
    let text = concat!(
        "GCF profile=generic\n",
        "## a [?]{x}\n1\n2\n",
        "## b [?]\n@0 =p\n",
        "## c\n  t[?]: 1,2,3\n",
        "##! summary counts=2,1,3\n",
    );
    assert_eq!(
        value(text),
        json!({"a": [{"x": 1}, {"x": 2}], "b": ["p"], "c": {"t": [1, 2, 3]}})
    );
    // Deferred sections inside out-of-order attachments count in document order.
    let text = "GCF profile=generic\n## r [1]{a,b}\n@0 ^|^\n.b [?]: 1\n.a [?]: 1,2\n##! summary counts=1,2\n";
    assert_eq!(value(text), json!({"r": [{"a": [1, 2], "b": [1]}]}));
    // A trailer in buffered mode is informational.
    assert_eq!(
        value("GCF profile=generic\nt[1]: x\n##! summary counts=9\n"),
        json!({"t": ["x"]})
    );
    // Missing trailer: truncated input, unless the caller opts into the spec's leniency.
    let cut = "GCF profile=generic\n## a [?]{x}\n1\n2\n";
    assert_eq!(error(cut), ("truncated_input", 4, 1));
    let lenient: Value = DecoderOptions::new()
        .require_trailer(false)
        .from_str(cut)
        .unwrap();
    assert_eq!(lenient, json!({"a": [{"x": 1}, {"x": 2}]}));
    assert_eq!(
        error("GCF profile=generic\n## a [?]{x}\n1\n##! summary\n").0,
        "count_mismatch"
    );
    assert_eq!(
        error("GCF profile=generic\n## a [?]{x}\n1\n##! summary counts=1\nx=1\n"),
        ("invalid_line", 5, 1)
    );
}

#[derive(Debug, PartialEq, Deserialize)]
enum Shape {
    Point,
    Circle(f64),
    Rect { w: u32, h: u32 },
    Pair(u8, String),
}

#[derive(Debug, PartialEq, Deserialize)]
struct Row<'a> {
    name: &'a str,
    #[serde(borrow)]
    note: Cow<'a, str>,
    missing: Option<u8>,
    null: Option<u8>,
    shape: Shape,
}

#[test]
fn typed_targets() {
    let text = concat!(
        "GCF profile=generic\n",
        "## [4]{name,note,null,shape}\n",
        "a|plain|-|Point\n",
        "@1 b|\"esc\\taped\"|1|^\n",
        ".shape {}\n    Circle=1.5\n",
        "@2 c|x|-|^\n",
        ".shape {}\n    ## Rect\n      w=2\n      h=3\n",
        "@3 d|y|-|^\n",
        ".shape {}\n    Pair[2]: 7,seven\n",
    );
    let rows: Vec<Row<'_>> = from_str(text).unwrap();
    assert_eq!(rows[0].name, "a");
    assert!(matches!(rows[0].note, Cow::Borrowed("plain")));
    assert_eq!(rows[1].note, "esc\taped");
    assert_eq!(
        (rows[0].missing, rows[0].null, rows[1].null),
        (None, None, Some(1))
    );
    assert_eq!(rows[0].shape, Shape::Point);
    assert_eq!(rows[1].shape, Shape::Circle(1.5));
    assert_eq!(rows[2].shape, Shape::Rect { w: 2, h: 3 });
    assert_eq!(rows[3].shape, Shape::Pair(7, "seven".into()));

    let map: HashMap<u32, String> =
        from_str("GCF profile=generic\n\"1\"=one\n\"22\"=two\n").unwrap();
    assert_eq!(map[&22], "two");
    // The v3.1 domain: integers of any size a target holds.
    let ints: (i8, u128, i128, u64) = DecoderOptions::new()
        .spec(Spec::V3_1)
        .from_str(
            "GCF profile=generic\n## [4]: -0,340282366920938463463374607431768211455,-1e+21,1.5e1\n",
        )
        .unwrap();
    assert_eq!(ints, (0, u128::MAX, -(10i128.pow(21)), 15));
    // The current one: an integer token is an i64; a double that is an integer fits an integer
    // target.
    let ints: (i8, i128, i128, u64) =
        from_str("GCF profile=generic\n## [4]: -0,-9223372036854775808,-1e+21,1.5e1\n").unwrap();
    assert_eq!(ints, (0, i128::from(i64::MIN), -(10i128.pow(21)), 15));
    let e = from_str::<u128>("GCF profile=generic\n=340282366920938463463374607431768211455\n")
        .unwrap_err();
    assert_eq!(e.code(), "out_of_range");
    let e = from_str::<u64>("GCF profile=generic\n=9223372036854775808\n").unwrap_err();
    assert_eq!(e.code(), "out_of_range");
    let e = from_str::<u8>("GCF profile=generic\n=300\n").unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        ("type_mismatch", Some(2), Some(2))
    );
    let e = from_str::<String>("GCF profile=generic\n=42\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    let floats: Vec<f64> =
        from_str("GCF profile=generic\n## [3]: 1e-400,0.1000000000000000055511151231257827,7\n")
            .unwrap();
    assert_eq!(floats, [0.0, 0.1, 7.0]);
    let e = from_str::<f64>("GCF profile=generic\n=1e400\n").unwrap_err();
    assert_eq!(e.code(), "out_of_range");
    // A struct with too few fields for the object: serde's own error, positioned.
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        a: u8,
    }
    let e = from_str::<Strict>("GCF profile=generic\na=1\nb=2\n").unwrap_err();
    assert_eq!((e.code(), e.line()), ("type_mismatch", Some(3)));
    // A tuple shorter than the array.
    let e = from_str::<(u8, u8)>("GCF profile=generic\n## [3]: 1,2,3\n").unwrap_err();
    assert_eq!(e.code(), "type_mismatch");
}

#[test]
fn numbers_outside_the_native_domain() {
    // v3.1: every number exactly, or out_of_range.
    let v31 = DecoderOptions::new().spec(Spec::V3_1);
    let value = |text: &str| v31.from_str::<Value>(text).unwrap();
    let error = |text: &str| {
        let e = v31.from_str::<Value>(text).unwrap_err();
        (e.code(), e.line().unwrap_or(0), e.column().unwrap_or(0))
    };
    let text = "GCF profile=generic\nbig=123456789012345678901234567890123456789012\nfine=100000000000000000000\nexp=1.2345678901234567890123456789e+29\n";
    if arbitrary_precision() {
        let v = value(text);
        assert_eq!(
            v["big"].to_string(),
            "123456789012345678901234567890123456789012"
        );
        assert_eq!(v["exp"].to_string(), "1.2345678901234567890123456789e+29");
        assert_eq!(v["fine"].to_string(), "100000000000000000000");
    } else {
        assert_eq!(error(text), ("out_of_range", 2, 5));
        let v = value("GCF profile=generic\nfine=100000000000000000000\n");
        assert_eq!(v["fine"].as_f64(), Some(1e20));
        assert_eq!(
            error("GCF profile=generic\nx=18446744073709551616\n").0,
            "out_of_range"
        );
        assert_eq!(error("GCF profile=generic\nx=1e400\n").0, "out_of_range");
        assert_eq!(
            error("GCF profile=generic\nx=0.1000000000000000055511151231257827\n").0,
            "out_of_range"
        );
    }
    assert!(value("GCF profile=generic\nx=-0\n")["x"]
        .as_f64()
        .is_some_and(|z| z == 0.0 && z.is_sign_negative()));
    let v = value("GCF profile=generic\nx=18446744073709551615\n");
    assert_eq!(v["x"].as_u64(), Some(u64::MAX));

    // Current spec (§2.3.2): an integer token is a signed 64-bit integer; other tokens are
    // doubles.
    let current = |text: &str| from_str::<Value>(text);
    for (token, column) in [
        ("9223372036854775808", 3),
        ("-9223372036854775809", 3),
        ("18446744073709551615", 3),
        ("100000000000000000000", 3),
        ("123456789012345678901234567890123456789012", 3),
    ] {
        let e = current(&format!("GCF profile=generic\nx={token}\n")).unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("out_of_range", Some(2), Some(column)),
            "{token}"
        );
        // In every position, and through serde as well.
        let e =
            from_str::<Vec<i128>>(&format!("GCF profile=generic\n## [1]: {token}\n")).unwrap_err();
        assert_eq!(e.code(), "out_of_range", "{token}");
        let e = current(&format!("GCF profile=generic\n## [1]{{a}}\n{token}\n")).unwrap_err();
        assert_eq!(e.code(), "out_of_range", "{token}");
    }
    let v = current(
        "GCF profile=generic\na=9223372036854775807\nb=-9223372036854775808\nz=-0\nd=1e20\n",
    )
    .unwrap();
    assert_eq!(v["a"].as_i64(), Some(i64::MAX));
    assert_eq!(v["b"].as_i64(), Some(i64::MIN));
    assert_eq!(v["z"], json!(0));
    assert!(v["z"].is_u64());
    assert_eq!(v["d"].as_f64(), Some(1e20));
    assert_eq!(
        current("GCF profile=generic\nx=1e400\n")
            .unwrap_err()
            .code(),
        "out_of_range"
    );
    if !arbitrary_precision() {
        // A double token with more digits than a double holds is that double.
        let v = current("GCF profile=generic\nx=0.1000000000000000055511151231257827\n").unwrap();
        assert_eq!(v["x"].as_f64(), Some(0.1));
    }
    // Ignored values are validated, and by the current spec range-checked: whether a payload
    // is valid does not depend on what reads it. v3.1 has no domain to check.
    #[derive(Deserialize)]
    struct Nothing {}
    for text in ["x=1e400", "x=9223372036854775808"] {
        let text = format!("GCF profile=generic\n{text}\n");
        assert_eq!(
            from_str::<Nothing>(&text).err().map(|e| e.code()),
            Some("out_of_range")
        );
        let _: Nothing = v31.from_str(&text).unwrap();
    }
}

#[test]
fn readers_and_slices() {
    let bytes = b"GCF profile=generic\na=1\n";
    assert_eq!(from_slice::<Value>(bytes).unwrap(), json!({"a": 1}));
    assert_eq!(
        from_reader::<_, Value>(&bytes[..]).unwrap(),
        json!({"a": 1})
    );
    let e = DecoderOptions::new()
        .max_input_size(Some(10))
        .from_reader::<_, Value>(&bytes[..])
        .unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::LimitExceeded(agentwire_gcf::Limit::InputSize)
    );
    let e = from_slice::<Value>(b"GCF profile=generic\nvalue=\xff\n").unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        ("invalid_utf8", Some(2), Some(7))
    );
    let e = from_slice::<Value>(b"GCF profile=generic\nv=\"\xed\xa0\x80\"\n").unwrap_err();
    assert_eq!(e.code(), "invalid_surrogate");
}

#[test]
fn every_generic_error_code_with_its_position() {
    let cases: &[(&str, (&str, u64, u64))] = &[
        ("", ("missing_header", 1, 1)),
        ("value=1\n", ("missing_header", 1, 1)),
        ("GCF2 profile=generic\n", ("missing_header", 1, 1)),
        ("GCF tool=x\n", ("missing_profile", 1, 1)),
        ("GCF profile=custom\n", ("unknown_profile", 1, 13)),
        (
            "GCF profile=generic broken\n",
            ("malformed_header_field", 1, 21),
        ),
        (
            "GCF profile=generic tokens=many\n",
            ("malformed_header_field", 1, 28),
        ),
        (
            "GCF profile=generic tool=a tool=b\n",
            ("duplicate_header_field", 1, 28),
        ),
        ("GCF profile=graph tool=t\n", ("profile_mismatch", 1, 1)),
        (
            "GCF profile=generic\nv=\"open\n",
            ("unterminated_quote", 2, 3),
        ),
        (
            "GCF profile=generic\nv=\"a\\qb\"\n",
            ("invalid_escape", 2, 5),
        ),
        (
            "GCF profile=generic\nv=\"a\tb\"\n",
            ("invalid_escape", 2, 5),
        ),
        (
            "GCF profile=generic\nv=\"a\"b\n",
            ("trailing_characters", 2, 6),
        ),
        (
            "GCF profile=generic\n\"k\"x=1\n",
            ("trailing_characters", 2, 4),
        ),
        ("GCF profile=generic\nv=~\n", ("invalid_missing", 2, 3)),
        (
            "GCF profile=generic\nt[2]: a,~\n",
            ("invalid_missing", 2, 9),
        ),
        ("GCF profile=generic\n=~\n", ("invalid_missing", 2, 2)),
        (
            "GCF profile=generic\n## o [1]{c}\n@0 ^{a}\n~\n",
            ("invalid_missing", 4, 1),
        ),
        (
            "GCF profile=generic\nv=^\n",
            ("invalid_attachment_marker", 2, 3),
        ),
        (
            "GCF profile=generic\nv=^{a}\n",
            ("invalid_attachment_marker", 2, 3),
        ),
        (
            "GCF profile=generic\n## [1]\n@0 =^\n",
            ("invalid_attachment_marker", 3, 5),
        ),
        (
            "GCF profile=generic\n## o [1]{c}\n@0 ^{a,}\n1\n",
            ("invalid_attachment_marker", 3, 8),
        ),
        (
            "GCF profile=generic\nv=\"\\uDC00\"\n",
            ("invalid_surrogate", 2, 4),
        ),
        ("GCF profile=generic\na=1\na=2\n", ("duplicate_key", 3, 1)),
        // A repeated key after a plain inline array, before one, and with a value that
        // is not plain (read the general way) after a plain one.
        (
            "GCF profile=generic\na[1]: x\na=2\n",
            ("duplicate_key", 3, 1),
        ),
        (
            "GCF profile=generic\na=1\na[2]: x,y\n",
            ("duplicate_key", 3, 1),
        ),
        (
            "GCF profile=generic\na=1\na=\"x\"\n",
            ("duplicate_key", 3, 1),
        ),
        // The repeated key comes first, before the error in its value.
        ("GCF profile=generic\na=1\na=\"x\n", ("duplicate_key", 3, 1)),
        (
            "GCF profile=generic\n## s\n  a=1\n  ## a\n",
            ("duplicate_key", 4, 3),
        ),
        (
            "GCF profile=generic\n## r [1]{a,a}\n1|2\n",
            ("duplicate_field_name", 2, 12),
        ),
        (
            "GCF profile=generic\n## r [1]{a,b}\n1\n",
            ("row_width_mismatch", 3, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n1|2\n",
            ("row_width_mismatch", 3, 1),
        ),
        (
            "GCF profile=generic\n## r [2]{a}\n1\n",
            ("count_mismatch", 2, 6),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n1\n2\n",
            ("count_mismatch", 4, 1),
        ),
        (
            "GCF profile=generic\n## [1]{a}\n1\nx=2\n",
            ("count_mismatch", 4, 1),
        ),
        (
            "GCF profile=generic\n## r [1]\n@0 =a\n@1 =b\n",
            ("count_mismatch", 4, 1),
        ),
        ("GCF profile=generic\nt[1]: a,b\n", ("count_mismatch", 2, 2)),
        ("GCF profile=generic\nt[1]:\n", ("count_mismatch", 2, 2)),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^\n.a [2]: x\n",
            ("count_mismatch", 4, 4),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^\n.a [1]{b}\n    1\n    2\n",
            ("count_mismatch", 6, 5),
        ),
        (
            "GCF profile=generic\n## r [03]{a}\n",
            ("invalid_count", 2, 6),
        ),
        (
            "GCF profile=generic\n## r [+2]{a}\n",
            ("invalid_count", 2, 6),
        ),
        ("GCF profile=generic\nt[x]: a\n", ("invalid_count", 2, 2)),
        (
            "GCF profile=generic\n## s\n\ta=1\n",
            ("tab_indentation", 3, 1),
        ),
        (
            "GCF profile=generic\n## s\n  \ta=1\n",
            ("tab_indentation", 3, 3),
        ),
        (
            "GCF profile=generic\n## s\n      a=1\n",
            ("invalid_indent", 3, 7),
        ),
        (
            "GCF profile=generic\n## s\n   a=1\n",
            ("invalid_indent", 3, 1),
        ),
        (
            "GCF profile=generic\na=1\n  b=2\n",
            ("invalid_indent", 3, 3),
        ),
        ("GCF profile=generic\n  a=1\n", ("invalid_indent", 2, 3)),
        (
            "GCF profile=generic\n## r [2]\n@0 =a\n@5 =b\n",
            ("invalid_item_id", 4, 1),
        ),
        (
            "GCF profile=generic\n## r [1]\n@x =a\n",
            ("invalid_item_id", 3, 1),
        ),
        (
            "GCF profile=generic\n## r [2]{a}\n@1 ^\n",
            ("invalid_item_id", 3, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 1\n.a {}\n",
            ("orphan_attachment", 4, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n^\n.a {}\n",
            ("orphan_attachment", 4, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a,b}\n@0 ^{x}|^\n.a {}\n",
            ("orphan_attachment", 4, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 1\n  x|y\n",
            ("orphan_inline_attachment", 4, 3),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^\n",
            ("missing_attachment", 3, 4),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n^\n",
            ("missing_attachment", 3, 1),
        ),
        (
            "GCF profile=generic\n## r [2]{a}\n@0 ^{x}\n@1 ^\n1\n",
            ("missing_attachment", 3, 4),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^\n.a {}\n.a {}\n",
            ("duplicate_attachment", 5, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^{x,y}\n1\n",
            ("inline_width_mismatch", 4, 1),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^{x,y}\n1|2|3\n",
            ("inline_width_mismatch", 4, 1),
        ),
        ("GCF profile=generic\na-b=1\n", ("invalid_key", 2, 1)),
        ("GCF profile=generic\n## a b\n", ("invalid_key", 2, 4)),
        (
            "GCF profile=generic\n## r [1]{a-b}\n1\n",
            ("invalid_key", 2, 10),
        ),
        (
            "GCF profile=generic\n## r [1]{a\n1\n",
            ("invalid_line", 2, 11),
        ),
        ("GCF profile=generic\n#x\n", ("invalid_line", 2, 1)),
        ("GCF profile=generic\njust text\n", ("invalid_key", 2, 1)),
        ("GCF profile=generic\nk[2]\n", ("invalid_line", 2, 2)),
        (
            "GCF profile=generic\n## k [2]: a,b\n",
            ("invalid_line", 2, 6),
        ),
        (
            "GCF profile=generic\n## s\n  ## [1]: a\n",
            ("invalid_line", 3, 3),
        ),
        ("GCF profile=generic\n=1\n=2\n", ("invalid_line", 3, 1)),
        (
            "GCF profile=generic\n## s\n  ##! summary\n",
            ("invalid_line", 3, 3),
        ),
        ("GCF profile=generic\n##! meta\n", ("invalid_line", 2, 1)),
        (
            "GCF profile=generic\n## r [1]\n@0 ?\n",
            ("invalid_line", 3, 4),
        ),
        (
            "GCF profile=generic\n## r [1]{a}\n@0 ^\n.a =1\n",
            ("invalid_line", 4, 4),
        ),
        ("GCF profile=generic\nx=1e400\n", ("out_of_range", 2, 3)),
    ];
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        if expected.0 == "out_of_range" && arbitrary_precision() {
            continue;
        }
        let got = match from_str::<Value>(text) {
            Ok(_) => ("decoded", 0, 0),
            Err(e) => (e.code(), e.line().unwrap_or(0), e.column().unwrap_or(0)),
        };
        if &got != expected {
            wrong.push(format!("{text:?}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A `Value` behind a type the decoder does not recognize: built by serde_json's visitor.
#[derive(Debug, PartialEq)]
struct Visited(Value);

impl<'de> Deserialize<'de> for Visited {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Visited)
    }
}

/// `from_str::<Value>` builds the value itself; through serde_json's own visitor every payload
/// of our fixtures gives the same value, or the same error at the same place.
#[test]
fn values_built_directly_match_serde_jsons_visitor() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/gcf");
    let mut inputs = Vec::new();
    for group in std::fs::read_dir(&root).unwrap() {
        for file in std::fs::read_dir(group.unwrap().path()).unwrap() {
            // (A fixture with numbers past f64 reads only with `arbitrary_precision`, which
            // workspace builds have.)
            let text = std::fs::read(file.unwrap().path()).unwrap();
            let Ok(fixture) = serde_json::from_slice::<Value>(&text) else {
                continue;
            };
            if let Some(Value::String(input)) = fixture.get("input") {
                inputs.push(input.clone());
            }
        }
    }
    inputs.extend(
        [
            "GCF profile=generic\na=1\na=2\n",
            "GCF profile=generic\n## o\n  x=1\n  ## x\n",
            "GCF profile=generic\n## t [2]{a,b}\n1|2\n3\n",
            "GCF profile=generic\n## t [3]{a,b}\n1|2\n",
            "GCF profile=generic\nk[2]: 1,2,3\n",
            "GCF profile=generic\nk[3]: 1,2\n",
            "GCF profile=generic\nbig=123456789012345678901234567890\nf=1.5\nn=-0\n",
            "GCF profile=generic\n\"$serde_json::private::Number\"=1\n",
            // A plain row followed by what would be its attachment (found by fuzzing: the row
            // was read again and again).
            "GCF profile=generic\n## u [?]{a,b}\n1|x\n  l[1]: web\n",
            "GCF profile=generic\n## u [2]{a,b}\n1|x\n.a {}\n  y=1\n2|z\n",
            "GCF profile=generic\n## u [1]{a,b}\n1|~\n## v [1]{a}\n-\n",
            "GCF profile=generic\nk[2]: 1,\"2\"\nl[0]:\nm[1]: ~\nn[01]: 1\n",
            // `.field` bodies read as they come (the `Value` builder), in another order than
            // the columns', each with an error: the first column's is reported.
            "GCF profile=generic\n## t [1]{a,b}\n@0 ^|^\n.b [2]{x}\n    1\n.a [1]{y}\n    1\n    2\n",
            "GCF profile=generic\n## t [1]{a,b}\n@0 ^|^\n.b {}\n    x=\"\n.a {}\n    y=1\n    y=2\n",
            // An error three attachments deep, and a row after it that reads well.
            "GCF profile=generic\n## t [2]{a}\n@0 ^\n.a [1]{b}\n    @0 ^\n    .b [1]{c}\n        @0 ^\n        .c [1]{d}\n            1|2\n@1 ^\n.a [0]\n",
            "GCF profile=generic\n## t [2]{a}\n@0 ^\n.a [1]{b}\n    @0 ^\n    .b [1]{c}\n        @0 ^\n        .c [1]{d}\n            1\n@1 ^\n.a [0]\n",
            // A body that runs past its attachment, and a quoted cell in a plain row.
            "GCF profile=generic\n## t [1]{a}\n@0 ^\n.a {}\n    x=1\n      y=2\n",
            "GCF profile=generic\n## t [2]{a,b}\n\"x|y\"|1\n\"q\\\"\"|\"\\u0041\"\n",
            "GCF profile=generic\n## t [1]{a,b}\n\"x\"y|1\n",
        ]
        .map(str::to_owned),
    );
    assert!(inputs.len() > 50, "{} inputs", inputs.len());
    for input in &inputs {
        let direct = from_str::<Value>(input).map_err(|e| (e.code(), e.line(), e.column()));
        let visited = from_str::<Visited>(input)
            .map(|v| v.0)
            .map_err(|e| (e.code(), e.line(), e.column()));
        assert_eq!(direct, visited, "{input}");
    }
}
