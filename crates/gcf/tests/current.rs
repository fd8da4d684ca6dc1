//! Decoding by the current spec (v3.5.3 and v3.6's additions): flattened columns, `>`-named
//! attachments, keyed maps, identity columns, constant columns, value-grouping; every new
//! error code with its position; and the differences from v3.1. Every input also goes through
//! the shared oracle, which checks that both decoders (the `Value` builder and serde's
//! visitors) accept it alike or reject it with the same code at the same place.

use agentwire_gcf::{from_str, DecoderOptions, Spec};
use agentwire_testkit::gcf::check_bytes;
use agentwire_testkit::Roundtrip;
use serde::Deserialize;
use serde_json::{json, Value};

/// The value of `text` (which the oracle accepts).
fn value(text: &str) -> Value {
    match check_bytes(text.as_bytes()) {
        Ok(Roundtrip::Ok) => {}
        other => panic!("oracle: {other:?}\n{text}"),
    }
    from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The code, line and column of `text`'s error (which the oracle agrees with).
fn error(text: &str) -> (&'static str, u64, u64) {
    match check_bytes(text.as_bytes()) {
        Ok(Roundtrip::Rejected(_)) => {}
        other => panic!("oracle: {other:?}\n{text}"),
    }
    let e = from_str::<Value>(text).unwrap_err();
    (e.code(), e.line().unwrap_or(0), e.column().unwrap_or(0))
}

const H: &str = "GCF profile=generic\n";

#[test]
fn flattened_columns() {
    assert_eq!(
        value(&format!(
            "{H}## orders [3]{{id,\"customer>name\",\"customer>email\",total}}\n\
             1|Ann|a@x.io|9.5\n2|~|~|3\n3|-|-|4\n"
        )),
        json!({"orders": [
            {"id": 1, "customer": {"name": "Ann", "email": "a@x.io"}, "total": 9.5},
            {"id": 2, "total": 3},
            {"id": 3, "customer": null, "total": 4},
        ]})
    );
    // Deeper paths, leaves absent or null one by one, columns apart.
    assert_eq!(
        value(&format!(
            "{H}## [3]{{\"b>a>c\",x,\"b>a>d\",\"b>e\"}}\n1|x|2|3\n~|y|-|4\n-|z|~|~\n"
        )),
        json!([
            {"b": {"a": {"c": 1, "d": 2}, "e": 3}, "x": "x"},
            {"b": {"a": {"d": null}, "e": 4}, "x": "y"},
            {"b": {"a": {"c": null}}, "x": "z"},
        ])
    );
    // An empty part makes a literal key (the empty-key fix); quoted cells are strings.
    assert_eq!(
        value(&format!(
            "{H}## [1]{{\">\",\"a>\",\">b\",\"c>d\"}}\n0|1|2|\"-\"\n"
        )),
        json!([{">": 0, "a>": 1, ">b": 2, "c": {"d": "-"}}])
    );
    // In attachments, keyed maps and expanded items too.
    assert_eq!(
        value(&format!(
            "{H}## [1]{{id,items}}\n@0 1|^\n.items [2]{{sku,\"p>q\"}}\n    a|1\n    b|2\n"
        )),
        json!([{"id": 1, "items": [{"sku": "a", "p": {"q": 1}}, {"sku": "b", "p": {"q": 2}}]}])
    );
    // Two fields for one member.
    assert_eq!(
        error(&format!("{H}## [1]{{a,\"a>b\"}}\n1|2\n")),
        ("duplicate_field_name", 2, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1]{{\"a>b\",\"a>b>c\"}}\n1|2\n")),
        ("duplicate_field_name", 2, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1]{{id,\"a>b\"}}\n@0 1|^\n.\"a>b\" {{}}\n")),
        ("invalid_attachment_marker", 3, 6)
    );
}

#[test]
fn gt_named_members() {
    // flatten/016: a `>`-named member is an attachment of an `@N` row without a marker.
    assert_eq!(
        value(&format!(
            "{H}## [2]{{id,name}}\n@0 1|Alice\n.\"a>b\" =hello\n@1 2|Bob\n.\"a>b\" {{}}\n    x=1\n"
        )),
        json!([
            {"id": 1, "name": "Alice", "a>b": "hello"},
            {"id": 2, "name": "Bob", "a>b": {"x": 1}},
        ])
    );
    // scalar/027: in a keyed map, whose value field is named "".
    assert_eq!(
        value(&format!(
            "{H}## [2:]{{key,\"\"}}\n@0 a>b|z\n.\"a>>b\" =ௗP\n@1 x>b|~\n.\"a>b\" =w\n"
        )),
        json!({"a>b": {"a>>b": "ௗP", "": "z"}, "x>b": {"a>b": "w"}})
    );
    // Beside a flattened column of the same spelling: the path is the column, the
    // attachment the member (found by the `gcf` oracle).
    assert_eq!(
        value(&format!(
            "{H}## [2:]{{key,\"a>b\"}}\n@0 id|false\n.\"a>b\" =-\nname|~\n"
        )),
        json!({"id": {"a": {"b": false}, "a>b": null}, "name": {}})
    );
    // Their array attachments share a schema by name, like a column's (what the `gcf` crate
    // writes; spec §7.4.5.3).
    assert_eq!(
        value(&format!(
            "{H}## [2]{{id}}\n@0 1\n.\"a>b\" [1]{{x}}\n    1\n@1 2\n.\"a>b\" [2]\n    2\n    3\n"
        )),
        json!([
            {"id": 1, "a>b": [{"x": 1}]},
            {"id": 2, "a>b": [{"x": 2}, {"x": 3}]},
        ])
    );
    // Not `>`-named, twice, `=` for a marker, `~` as a value: errors.
    assert_eq!(
        error(&format!("{H}## [1]{{id}}\n@0 1\n.extra {{}}\n")),
        ("orphan_attachment", 4, 1)
    );
    assert_eq!(
        error(&format!(
            "{H}## [1]{{id}}\n@0 1\n.\"a>b\" =1\n.\"a>b\" =2\n"
        )),
        ("duplicate_attachment", 5, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1]{{id,x}}\n@0 1|^\n.x =1\n")),
        ("invalid_line", 4, 4)
    );
    assert_eq!(
        error(&format!("{H}## [1]{{id}}\n@0 1\n.\"a>b\" =~\n")),
        ("invalid_missing", 4, 9)
    );
    // v3.1: an orphan.
    let e = DecoderOptions::new()
        .spec(Spec::V3_1)
        .from_str::<Value>(&format!("{H}## [1]{{id}}\n@0 1\n.\"a>b\" =1\n"))
        .unwrap_err();
    assert_eq!(e.code(), "orphan_attachment");
}

#[test]
fn keyed_maps() {
    assert_eq!(
        value(&format!(
            "{H}title=prod\n## servers [2:]{{key,cpu,\"loc>city\",tags}}\n\
             web|23|SEA|~\n@1 db|41|~|^\n.tags [2]: a,b\n"
        )),
        json!({"title": "prod", "servers": {
            "web": {"cpu": 23, "loc": {"city": "SEA"}},
            "db": {"cpu": 41, "tags": ["a", "b"]},
        }})
    );
    // Nested: an attachment and an expanded item; a deferred count with its trailer.
    assert_eq!(
        value(&format!(
            "{H}## [1:]{{key,members}}\n@0 g|^\n.members [2:]{{key,role}}\n    m1|admin\n    m2|user\n"
        )),
        json!({"g": {"members": {"m1": {"role": "admin"}, "m2": {"role": "user"}}}})
    );
    assert_eq!(
        value(&format!("{H}## l [1]\n@0 [1:]{{_key,key}}\n  \"1\"|x\n")),
        json!({"l": [{"1": {"key": "x"}}]})
    );
    assert_eq!(
        value(&format!(
            "{H}## m [?:]{{key,\"a,b\"}}\nk1|99\nk2|-\n##! summary counts=2\n"
        )),
        json!({"m": {"k1": {"a,b": 99}, "k2": {"a,b": null}}})
    );
    // A keyed map under a row establishes no shared array schema (spec §7.4.5.3 speaks of
    // tabular arrays): a later `.key [0]` is an empty array (found by the `gcf` oracle).
    assert_eq!(
        value(&format!(
            "{H}## [2:]{{_key,key}}\n@0 id|^\n.key [2:]{{key,id}}\n    id|~\n    name|-\n\
             @1 name|^\n.key [0]\n"
        )),
        json!({"id": {"key": {"id": {}, "name": {"id": null}}}, "name": {"key": []}})
    );
    // Into typed maps.
    #[derive(Debug, Deserialize, PartialEq)]
    struct Host {
        cpu: u8,
    }
    let hosts: std::collections::BTreeMap<String, Host> =
        from_str(&format!("{H}## [2:]{{key,cpu}}\nweb|23\ndb|41\n")).unwrap();
    assert_eq!(hosts["db"], Host { cpu: 41 });
    // Errors (keyed-map/022–025, 031, 032 of the v3.5.3 suite, and ours).
    assert_eq!(
        error(&format!("{H}## [2:]{{key,x}}\na|1\na|2\n")),
        ("duplicate_key", 4, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1:]{{key}}\na\n")),
        ("invalid_keyed_map", 2, 1)
    );
    assert_eq!(
        error(&format!("{H}## [0:]{{key,x}}\n")),
        ("invalid_count", 2, 4)
    );
    assert_eq!(
        error(&format!("{H}## [2:]: a,b\n")),
        ("invalid_keyed_map", 2, 4)
    );
    assert_eq!(
        error(&format!("{H}## [1:]{{key,x}}\n-|1\n")),
        ("invalid_keyed_map", 3, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1:]{{key,x}}\n12|1\n")),
        ("invalid_keyed_map", 3, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1:]{{key,x}}\n~|1\n")),
        ("invalid_keyed_map", 3, 1)
    );
    assert_eq!(
        error(&format!("{H}## [2:]{{key,x}}\na|1|extra\nb|2\n")),
        ("row_width_mismatch", 3, 1)
    );
    assert_eq!(
        error(&format!("{H}## [2:]{{key,a,b}}\nk1|1|2\nk2|3|4\nk3|5|6\n")),
        ("count_mismatch", 5, 1)
    );
    assert_eq!(
        error(&format!("{H}## [3:]{{key,a,b}}\nk1|1|2\nk2|3|4\n")),
        ("count_mismatch", 2, 4)
    );
    let messages = [
        (
            format!("{H}## [2:]{{key,x}}\na|1\na|2\n"),
            "duplicate member key",
        ),
        (format!("{H}## [1:]{{key}}\na\n"), "at least two fields"),
        (format!("{H}## [0:]{{key,x}}\n"), "zero count"),
    ];
    for (text, phrase) in messages {
        let e = from_str::<Value>(&text).unwrap_err();
        assert!(e.message().contains(phrase), "{e}");
    }
}

#[test]
fn constant_columns() {
    assert_eq!(
        value(&format!(
            "{H}## rows [2]{{id,env=prod,ok=true,n=-,q=\"a,b}}\",z=-1.5}}\n1\n2\n"
        )),
        json!({"rows": [
            {"id": 1, "env": "prod", "ok": true, "n": null, "q": "a,b}", "z": -1.5},
            {"id": 2, "env": "prod", "ok": true, "n": null, "q": "a,b}", "z": -1.5},
        ]})
    );
    // With flattening, in keyed maps, quoted names.
    assert_eq!(
        value(&format!("{H}## [2:]{{key,\"a b\"=1,\"c>d\"}}\nx|2\ny|3\n")),
        json!({"x": {"a b": 1, "c": {"d": 2}}, "y": {"a b": 1, "c": {"d": 3}}})
    );
    // Typed rows see every member.
    #[derive(Debug, Deserialize, PartialEq)]
    struct Row {
        id: u8,
        env: String,
    }
    let rows: Vec<Row> = from_str(&format!("{H}## [1]{{id,env=prod}}\n7\n")).unwrap();
    // A `^{` without its `}` is a string (as the encoders leave it bare).
    assert_eq!(
        value(&format!("{H}## [1]{{id,x=^{{a}}\n7\n")),
        json!([{"id": 7, "x": "^{a"}])
    );
    assert_eq!(
        rows,
        [Row {
            id: 7,
            env: "prod".into()
        }]
    );
    for (decl, expected) in [
        ("{id,x=}", ("invalid_const_value", 2, 13)),
        ("{id,x=~}", ("invalid_const_value", 2, 13)),
        ("{id,x=^}", ("invalid_const_value", 2, 13)),
        ("{x=1,y=2}", ("no_bare_column", 2, 1)),
        ("{id,x=\"open}", ("unterminated_quote", 2, 13)),
        ("{id,x=1,x=2}", ("duplicate_field_name", 2, 15)),
        ("{id,@x=1}", ("invalid_key", 2, 12)),
        ("{id,x=99999999999999999999}", ("out_of_range", 2, 13)),
    ] {
        assert_eq!(error(&format!("{H}## [1]{decl}\n1\n")), expected, "{decl}");
    }
}

/// Member tables whose declaration adds constant columns to plain fields, which the `Value`
/// builder reads on its plain-table path (the constants as more template values): the same
/// values and errors as the layout reading, for plain and general rows, a declaration seen
/// again, and every token the plain path leaves to the general reading.
#[test]
fn constant_columns_of_member_tables() {
    let text = format!(
        "{H}## s\n  ## limits [2]{{name,unit=cpu,value,on=true,n=-,z=-1.5}}\n  limit-0|0.51\n  \
         limit-1|~\n  ## again [3]{{name,unit=cpu,value,on=true,n=-,z=-1.5}}\n  a|1\n  \
         @1 b|^\n  .value [2]: 1,2\n  \"c\"|\"x\"\n  k=v\n"
    );
    let row = |name: &str, value: Value| {
        let mut row = json!({"name": name, "unit": "cpu", "on": true, "n": null, "z": -1.5});
        if !value.is_null() {
            row["value"] = value;
        }
        row
    };
    assert_eq!(
        value(&text),
        json!({"s": {
            "limits": [row("limit-0", json!(0.51)), row("limit-1", Value::Null)],
            "again": [row("a", json!(1)), row("b", json!([1, 2])), row("c", json!("x"))],
            "k": "v",
        }})
    );
    // Constants the plain path leaves to the general reading (quoted, past the domain, `-0`,
    // long integers, exponents), and fields named twice or all constant.
    for decl in [
        "{id,x=\"a,b}\"}",
        "{id,x=1e999}",
        "{id,x=-0}",
        "{id,x=1e5}",
        "{id,x=123456789012345678901}",
        "{id,x= 1}",
        "{id,x=1 }",
        "{id,x=a b}",
    ] {
        let text = format!("{H}## t [1]{decl}\n7\n");
        let _ = check_bytes(text.as_bytes());
        let in_section = format!("{H}## s\n  ## t [1]{decl}\n  7\n");
        match check_bytes(in_section.as_bytes()) {
            Ok(Roundtrip::Ok | Roundtrip::Rejected(_)) => {}
            other => panic!("oracle: {other:?}\n{in_section}"),
        }
    }
    for (decl, expected) in [
        ("{id,x=}", ("invalid_const_value", 2, 15)),
        ("{id,x=~}", ("invalid_const_value", 2, 15)),
        ("{x=1,y=2}", ("no_bare_column", 2, 1)),
        ("{id,x=1,x=2}", ("duplicate_field_name", 2, 17)),
        ("{id,x=1,id}", ("duplicate_field_name", 2, 17)),
    ] {
        assert_eq!(
            error(&format!("{H}## t [1]{decl}\n1\n")),
            expected,
            "{decl}"
        );
    }
    // Row errors: too many cells, an attachment naming a constant, a marker without its body.
    for rows in ["1|2|3", "@0 1|^\n.unit=x\n.x=1", "1|^"] {
        let text = format!("{H}## s\n  ## t [1]{{id,unit=cpu,x}}\n  {rows}\n");
        let text = text.replace("\n.", "\n  .");
        match check_bytes(text.as_bytes()) {
            Ok(Roundtrip::Rejected(_)) => {}
            other => panic!("oracle: {other:?}\n{text}"),
        }
    }
}

#[test]
fn value_grouping() {
    let text = format!(
        "{H}## symbols [4]{{@id,kind,line,file=a.go}} group=kind\n\
         kind=function [2]\nf1|10\nf2|20\nkind=\"method\" [1]\nm1|30\nkind=- [1]\nx|~\n"
    );
    assert_eq!(
        value(&text),
        json!({"symbols": [
            {"id": "f1", "kind": "function", "line": 10, "file": "a.go"},
            {"id": "f2", "kind": "function", "line": 20, "file": "a.go"},
            {"id": "m1", "kind": "method", "line": 30, "file": "a.go"},
            {"id": "x", "kind": null, "file": "a.go"},
        ]})
    );
    // A deferred count ends where the sub-headers do.
    assert_eq!(
        value(&format!(
            "{H}## r [?]{{@id,k}} group=k\nk=1 [1]\na\n## next\n##! summary counts=1\n"
        )),
        json!({"r": [{"id": "a", "k": 1}], "next": {}})
    );
    let bad = |decl: &str, body: &str| error(&format!("{H}## [2]{decl}\n{body}"));
    assert_eq!(
        bad("{@id,k} group=k", "k=a [1]\nx\nk=a [1]\ny\n"),
        ("duplicate_group", 5, 3)
    );
    assert_eq!(
        bad("{@id,k} group=k", "k=a [1]\nx\nk=b [1]\nx\n"),
        ("duplicate_key", 6, 1)
    );
    assert_eq!(
        bad("{@id,k} group=k", "k=a [3]\nx\ny\n"),
        ("count_mismatch", 3, 3)
    );
    assert_eq!(
        bad("{@id,k} group=k", "k=a [1]\nx\ny\n"),
        ("invalid_group_header", 5, 1)
    );
    assert_eq!(
        bad("{@id,k} group=k", "j=a [2]\nx\ny\n"),
        ("invalid_group_header", 3, 1)
    );
    assert_eq!(bad("{@id,k} group=k", "k=a [0]\n"), ("invalid_count", 3, 5));
    assert_eq!(
        bad("{@id,k} group=k", "k=~ [2]\nx\ny\n"),
        ("invalid_const_value", 3, 3)
    );
    assert_eq!(
        bad("{@id,k} group=k", "k=a [2]\n@0 x\ny\n"),
        ("invalid_group_header", 4, 1)
    );
    // Errors in the clause point at the group column's name.
    assert_eq!(
        bad("{id,k} group=k", "k=a [2]\nx\ny\n"),
        ("invalid_group_header", 2, 20)
    );
    assert_eq!(
        bad("{@id,k} group=z", "k=a [2]\nx\ny\n"),
        ("invalid_group_header", 2, 21)
    );
    assert_eq!(
        bad("{@id,k} group=id", "id=a [2]\nx\ny\n"),
        ("invalid_group_header", 2, 21)
    );
    assert_eq!(
        bad("{@id,k=1} group=k", "k=a [2]\nx\ny\n"),
        ("invalid_group_header", 2, 23)
    );
    assert_eq!(
        bad("{@id,k} grouped=k", "k=a [2]\nx\ny\n"),
        ("invalid_line", 2, 14)
    );
}

#[test]
fn identity_columns() {
    // A delta-participating full payload (spec §10a.1) reads as its value.
    let text =
        "GCF profile=generic pack_root=sha256:x key=id\n## orders [2]{@id,total}\n1|9.5\n2|3\n";
    assert_eq!(
        value(text),
        json!({"orders": [{"id": 1, "total": 9.5}, {"id": 2, "total": 3}]})
    );
    assert_eq!(
        error("GCF profile=generic key=id\n## [2]{@id,total}\n1|9.5\n1|3\n"),
        ("duplicate_key", 4, 1)
    );
    assert_eq!(
        error("GCF profile=generic key=sku\n## [1]{@id,total}\n1|9.5\n"),
        ("invalid_key", 2, 1)
    );
    assert_eq!(
        error(&format!("{H}## [1]{{@id,@x}}\n1|2\n")),
        ("invalid_key", 2, 1)
    );
    // A delta is not a value.
    assert_eq!(
        error("GCF profile=generic delta=true base_root=a new_root=b key=id\n## removed [1]{@id}\n1\n"),
        ("profile_mismatch", 1, 27)
    );
}

#[test]
fn numbers_by_the_current_domain() {
    assert_eq!(
        value(&format!("{H}a=-0\nb=-0.0\nc=9223372036854775807\nd=1e20\n")),
        json!({"a": 0, "b": -0.0, "c": i64::MAX, "d": 1e20})
    );
    assert_eq!(
        error(&format!("{H}## [1]{{a}}\n9223372036854775808\n")),
        ("out_of_range", 3, 1)
    );
    assert_eq!(
        error(&format!("{H}x[2]: 1,-9223372036854775809\n")),
        ("out_of_range", 2, 9)
    );
}

#[test]
fn versions_differ_where_the_table_says() {
    let v31 = DecoderOptions::new().spec(Spec::V3_1);
    let both = |text: &str| {
        (
            from_str::<Value>(text).map_err(|e| e.code()),
            v31.from_str::<Value>(text).map_err(|e| e.code()),
        )
    };
    assert_eq!(
        both(&format!("{H}## [1]{{\"a>b\"}}\n1\n")),
        (Ok(json!([{"a": {"b": 1}}])), Ok(json!([{"a>b": 1}])))
    );
    assert_eq!(
        both(&format!("{H}## [1:]{{key,a}}\nk|1\n")),
        (Ok(json!({"k": {"a": 1}})), Err("invalid_count"))
    );
    assert_eq!(
        both(&format!("{H}## [1]{{id,x=1}}\n1\n")),
        (Ok(json!([{"id": 1, "x": 1}])), Err("invalid_key"))
    );
    assert_eq!(
        both(&format!("{H}## [1]{{@id,k}} group=k\nk=1 [1]\na\n")),
        (Ok(json!([{"id": "a", "k": 1}])), Err("invalid_line"))
    );
    assert_eq!(
        both(&format!("{H}x=18446744073709551615\n")),
        (Err("out_of_range"), Ok(json!({"x": u64::MAX})))
    );
    let (current, old) = both(&format!("{H}x=-0\n"));
    assert_eq!(current, Ok(json!({"x": 0})));
    assert!(old.unwrap()["x"]
        .as_f64()
        .is_some_and(f64::is_sign_negative));
    // The oracle holds for v3.1 bytes read by the current spec, too: the encoder's own output.
    for text in [
        format!("{H}## [1]{{\"a>b\"}}\n1\n"),
        format!("{H}## [2]{{a,b}}\n1|-\n2|~\n"),
    ] {
        assert!(
            matches!(check_bytes(text.as_bytes()), Ok(Roundtrip::Ok)),
            "{text}"
        );
    }
}

/// Declarations wider than the shape builder's scanned names (16 top-level members, then an
/// index): repeats and path conflicts past that point are found, paths still nest.
#[test]
fn wide_declarations() {
    let fields: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    let fields = fields.join(",");
    let cells = vec!["1"; 20].join("|");
    for (extra, expected) in [
        ("f3=1", ("duplicate_field_name", 2, 1)),
        ("f18=1", ("duplicate_field_name", 2, 1)),
        ("\"f19>x\"", ("duplicate_field_name", 2, 1)),
    ] {
        let got = error(&format!("{H}## [1]{{{fields},{extra}}}\n{cells}|2\n"));
        assert_eq!((got.0, got.1), (expected.0, expected.1), "{extra}");
    }
    let text = format!("{H}## [1]{{{fields},\"p>x\",\"p>y\",f20}}\n{cells}|1|2|3\n");
    let mut row: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("f{i}"), json!(1))).collect();
    row.insert("p".into(), json!({"x": 1, "y": 2}));
    row.insert("f20".into(), json!(3));
    assert_eq!(value(&text), json!([row]));
}

/// Found by the `gcf_decode` fuzz target: an integer token of 101 digits in an attachment's
/// member was read by the `Value` builder's plain path as the double 1e101 (the serde path
/// said `out_of_range`); an integer token is never a double.
#[test]
fn a_long_integer_is_never_read_as_a_double() {
    let text = "GCF profile=generic\n## items [2]{id,data,extra}\n@0 1|^|a\n.data {}\n    x=1"
        .to_owned()
        + &"0".repeat(100)
        + "\n@1 2|^|~\n.data {}\n    x=2\n";
    let error = from_str::<Value>(&text).unwrap_err();
    assert_eq!((error.code(), error.line()), ("out_of_range", Some(5)));
    if let Err(bug) = check_bytes(text.as_bytes()) {
        panic!("{bug}");
    }
}

/// Found by the `gcf_layouts` fuzz target: with flattened columns a row is visited by the serde
/// path in member order (`loc` with both its leaves first), by the `Value` builder in column
/// order, so two bad cells were reported at different columns (11 and 5). Both report the
/// first in column order now, as they do for rows without a layout.
#[test]
fn the_first_bad_cell_in_column_order_is_reported_under_flattened_columns() {
    for (text, column) in [
        (
            "GCF profile=generic\n## items [1]{\"loc>zip\",id,\"a>b>c\",\"loc>city\"}\n1|x|1e400|1e400\n",
            5,
        ),
        (
            "GCF profile=generic\n## items [1]{\"loc>zip\",id,\"a>b>c\",\"loc>city\"}\n1|x|2|1e400\n",
            7,
        ),
        (
            "GCF profile=generic\n## items [1]{\"loc>zip\",id,\"a>b>c\",\"loc>city\"}\n1e400|x|2|1e400\n",
            1,
        ),
    ] {
        let error = from_str::<Value>(text).unwrap_err();
        assert_eq!(
            (error.code(), error.line(), error.column()),
            ("out_of_range", Some(3), Some(column)),
            "{text}"
        );
        if let Err(bug) = check_bytes(text.as_bytes()) {
            panic!("{bug}");
        }
    }
}

/// Found by the `gcf_layouts` fuzz target: a row with flattened columns whose inline-schema
/// marker (column 2) comes before a bad flattened cell (column 3), the marker's body bad too.
/// The `Value` builder read the body at the marker's column (line 4), the serde path the
/// flattened cell first (line 3). A row with a layout reports its scalar cells first, in
/// column order, then its attachments, in both decoders.
#[test]
fn a_row_with_a_layout_reports_its_cells_before_its_attachments() {
    let head = "GCF profile=generic\n## \"a b\" [1]{\"a>b\",id,\"a>c\"}\n";
    for (rows, code, line, column) in [
        // The finding: a bad cell after the marker, a bad body.
        ("@0 1|^{a,b}|\"open\n  -|~\n", "unterminated_quote", 3, 13),
        // A good cell: the body's error.
        ("@0 1|^{a,b}|2\n  -|~\n", "invalid_missing", 4, 5),
        // A `.field` body, and a bad cell before the marker.
        ("@0 1e400|^|2\n.id 1|\"open\n", "out_of_range", 3, 4),
        ("@0 1|^|1e400\n.id [1]: \"open\n", "out_of_range", 3, 8),
        ("@0 1|^|2\n.id [1]: \"open\n", "unterminated_quote", 4, 10),
    ] {
        let text = format!("{head}{rows}");
        let error = from_str::<Value>(&text).unwrap_err();
        assert_eq!(
            (error.code(), error.line(), error.column()),
            (code, Some(line), Some(column)),
            "{text}"
        );
        if let Err(bug) = check_bytes(text.as_bytes()) {
            panic!("{bug}");
        }
    }
}

/// Found by the `gcf_decode` fuzz target: a flattened column's path builds objects below the
/// row, which did not count against the depth limit, so a header with a 130-segment path
/// decoded into a value deeper than the limit (which the encoder then refused). They count
/// now: a row's objects as deep as the limit read, one more is `limit_exceeded` at the row.
#[test]
fn flattened_paths_count_against_the_depth_limit() {
    let path = |n: usize| vec!["k"; n].join(">");
    // The root array and the row are two levels: a path of 127 segments builds 126 more.
    for (segments, ok) in [(127, true), (128, false)] {
        let text = format!(
            "GCF profile=generic\n## [2]{{id,\"{}\"}}\n1|a\n2|b\n",
            path(segments)
        );
        let decoded = from_str::<Value>(&text);
        match (ok, &decoded) {
            (true, Ok(value)) => {
                let again = agentwire_gcf::to_string(value).unwrap();
                assert_eq!(from_str::<Value>(&again).unwrap(), *value);
            }
            (false, Err(e)) => {
                assert_eq!((e.code(), e.line()), ("limit_exceeded", Some(3)), "{e}");
            }
            _ => panic!("{segments} segments: {decoded:?}"),
        }
        if let Err(bug) = check_bytes(text.as_bytes()) {
            panic!("{bug}");
        }
    }
}
