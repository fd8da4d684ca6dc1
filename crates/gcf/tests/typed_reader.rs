//! `from_reader` into typed targets: a unit at a time, with `from_str`'s value and errors
//! (`agentwire_testkit::gcf::check_from_reader_typed` is the oracle).

use std::collections::HashMap;

use agentwire_gcf::{DecoderOptions, EncoderOptions, Spec};
use agentwire_testkit::gcf::{
    check_from_reader, check_from_reader_typed, Doc, Kind, Owner, Row, State,
};
use proptest::prelude::*;

fn doc(rows: usize) -> Doc {
    Doc {
        name: "inventory".into(),
        count: i64::MAX as u64,
        offset: Some(i64::MIN),
        ratio: 0.1,
        owner: Owner {
            id: -7,
            email: None,
            tags: vec!["a|b".into(), "x y".into()],
        },
        rows: (0..rows as u64)
            .map(|i| Row {
                id: i,
                label: format!("item {i}"),
                weight: i as f64 / 3.0,
                note: (i % 3 == 0).then(|| format!("note, {i}")),
                state: match i % 4 {
                    0 => State::Open,
                    1 => State::Closed,
                    _ => State::Held {
                        reason: format!("r{i}"),
                        until: -(i as i64),
                    },
                },
            })
            .collect(),
        labels: HashMap::from([("k".to_owned(), "v".to_owned())]),
        kind: Kind::Tagged("t".into()),
    }
}

fn units() -> [DecoderOptions; 3] {
    [
        DecoderOptions::new(),
        DecoderOptions::new().stream_unit_size(1),
        DecoderOptions::new().stream_unit_size(300),
    ]
}

#[test]
fn a_document_streams_into_its_struct() {
    let doc = doc(400);
    for spec in [Spec::LATEST, Spec::V3_1] {
        let text = EncoderOptions::new().spec(spec).to_string(&doc).unwrap();
        let opts = DecoderOptions::new().spec(spec);
        for opts in units().map(|u| u.spec(spec)) {
            let back: Doc = opts.from_reader(text.as_bytes()).unwrap();
            assert_eq!(back, doc);
        }
        let rows: Vec<Row> = opts
            .from_reader(
                EncoderOptions::new()
                    .spec(spec)
                    .to_string(&doc.rows)
                    .unwrap()
                    .as_bytes(),
            )
            .unwrap();
        assert_eq!(rows, doc.rows);
    }
    let text = agentwire_gcf::to_string(&doc).unwrap();
    check_from_reader(text.as_bytes()).unwrap();
}

#[test]
fn type_errors_carry_the_inputs_position() {
    let text = agentwire_gcf::to_string(&doc(200)).unwrap();
    // Comment lines in front move every line; a bad cell, member and row late in the input.
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.insert(1, "# a comment".into());
    lines.insert(2, String::new());
    let n = lines.len();
    for (at, from, to) in [
        (n - 40, "|", "|x"),
        (n - 3, "=", "=\"not a number\""),
        (5, "inventory", "\"unclosed"),
    ] {
        let mut damaged = lines.clone();
        damaged[at] = damaged[at].replacen(from, to, 1);
        let input = damaged.join("\n") + "\n";
        for opts in units() {
            let whole = opts.from_str::<Doc>(&input);
            let streamed = opts.from_reader::<_, Doc>(input.as_bytes());
            match (&whole, &streamed) {
                (Err(a), Err(b)) => assert_eq!(
                    (a.code(), a.line(), a.column()),
                    (b.code(), b.line(), b.column()),
                    "{a} / {b}"
                ),
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                _ => panic!("{whole:?}\n{streamed:?}"),
            }
        }
        check_from_reader_typed::<Doc>(input.as_bytes()).unwrap();
    }
    // A missing field is reported at the header line, as in memory.
    let e =
        agentwire_gcf::from_reader::<_, Doc>(&b"GCF profile=generic\nname=x\n"[..]).unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        ("type_mismatch", Some(1), Some(1))
    );
}

#[test]
fn the_fixtures_stream_as_they_decode() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(value) =
            serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&path).unwrap())
        else {
            continue;
        };
        for spec in [Spec::LATEST, Spec::V3_1] {
            let Ok(text) = EncoderOptions::new().spec(spec).to_string(&value) else {
                continue;
            };
            if let Err(bug) = check_from_reader(text.as_bytes()) {
                panic!("{}: {bug}\n{text}", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked} fixtures");
}

/// How a property test damages a payload: a line (by index) removed, repeated, indented,
/// or one of its bytes (by index) replaced.
type Damage = (prop::sample::Index, prop::sample::Index, u8, u8);

/// `text` damaged as `damage` says.
fn damaged(text: &str, (line, at, how, byte): Damage) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let i = line.index(lines.len());
    match how {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => lines[i].insert(0, ' '),
        _ => {
            let l = &mut lines[i];
            if !l.is_empty() {
                let n = at.index(l.len());
                let mut b = l.clone().into_bytes();
                b[n] = byte;
                *l = String::from_utf8_lossy(&b).into_owned();
            }
        }
    }
    lines.join("\n") + "\n"
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,8}",
        "[ -~]{0,12}",
        Just("a|b".to_owned()),
        Just("-".to_owned()),
        Just("~".to_owned()),
        Just(String::new()),
        "\\PC{0,6}",
    ]
}

fn row() -> impl Strategy<Value = Row> {
    (
        0..=i64::MAX as u64,
        text(),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        proptest::option::of(text()),
        prop_oneof![
            Just(State::Open),
            Just(State::Closed),
            (text(), any::<i64>()).prop_map(|(reason, until)| State::Held { reason, until }),
        ],
    )
        .prop_map(|(id, label, weight, note, state)| Row {
            id,
            label,
            weight,
            note,
            state,
        })
}

fn docs() -> impl Strategy<Value = Doc> {
    (
        text(),
        0..=i64::MAX as u64,
        proptest::option::of(any::<i64>()),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (
            any::<i64>(),
            proptest::option::of(text()),
            proptest::collection::vec(text(), 0..4),
        ),
        proptest::collection::vec(row(), 0..12),
        proptest::collection::hash_map("[a-z]{1,4}", text(), 0..3),
        prop_oneof![Just(Kind::Plain), text().prop_map(Kind::Tagged)],
    )
        .prop_map(
            |(name, count, offset, ratio, (id, email, tags), rows, labels, kind)| Doc {
                name,
                count,
                offset,
                ratio,
                owner: Owner { id, email, tags },
                rows,
                labels,
                kind,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Documents as every encoder setting writes them come back from the reader whole, and
    /// damaged they fail as `from_str` fails (code, line and column).
    #[test]
    fn documents_stream_as_they_decode(
        doc in docs(),
        v31 in any::<bool>(),
        schemas in any::<bool>(),
        damage in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0u8..4, prop::sample::select(vec![b'|', b'x', b'"', b' ', b'@', b'#', b'{', b'.', b'1'])),
    ) {
        let spec = if v31 { Spec::V3_1 } else { Spec::LATEST };
        let options = EncoderOptions::new().spec(spec).inline_schemas(schemas).shared_schemas(schemas);
        let Ok(text) = options.to_string(&doc) else { return Ok(()) };
        // Whatever the encoder wrote reads back, an enum's struct variant in a row's path
        // columns (`state>Held>reason`) included.
        let whole = DecoderOptions::new().spec(spec).from_str::<Doc>(&text);
        prop_assert_eq!(whole.as_ref().ok(), Some(&doc), "{:?}\n{}", whole, text);
        for opts in units().map(|u| u.spec(spec)) {
            let back = opts.from_reader::<_, Doc>(text.as_bytes());
            prop_assert_eq!(back.as_ref().ok(), whole.as_ref().ok(), "{:?}\n{}", back, text);
        }
        let bad = |input: &str| check_from_reader_typed::<Doc>(input.as_bytes())
            .and_then(|()| check_from_reader_typed::<Vec<Row>>(input.as_bytes()));
        if let Err(bug) = bad(&text) {
            prop_assert!(false, "{}\n{}", bug, text);
        }
        let damaged = damaged(&text, damage);
        if let Err(bug) = bad(&damaged) {
            prop_assert!(false, "{}\n{}", bug, damaged);
        }
    }

    /// Tables of rows at the root, cut into pieces anywhere.
    #[test]
    fn root_tables_stream_as_they_decode(rows in proptest::collection::vec(row(), 0..16), v31 in any::<bool>()) {
        let spec = if v31 { Spec::V3_1 } else { Spec::LATEST };
        let Ok(text) = EncoderOptions::new().spec(spec).to_string(&rows) else { return Ok(()) };
        let whole = DecoderOptions::new().spec(spec).from_str::<Vec<Row>>(&text);
        prop_assert_eq!(whole.as_ref().ok(), Some(&rows), "{:?}\n{}", whole, text);
        for opts in units().map(|u| u.spec(spec)) {
            let back = opts.from_reader::<_, Vec<Row>>(text.as_bytes());
            prop_assert_eq!(back.as_ref().ok(), whole.as_ref().ok(), "{:?}\n{}", back, text);
        }
        if let Err(bug) = check_from_reader(text.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, text);
        }
    }
}

fn item() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        any::<i64>().prop_map(|n| json!(n)),
        text().prop_map(|s| json!(s)),
        (text(), any::<i32>()).prop_map(|(s, n)| json!({"s": s, "n": n})),
        (text(), any::<bool>()).prop_map(|(s, b)| json!({"deep": {"s": s, "list": [b, null]}})),
        proptest::collection::vec(any::<u8>(), 0..3).prop_map(|v| json!(v)),
        (any::<u8>(), text()).prop_map(|(n, s)| json!([{"a": n, "b": s}, {"a": 1, "b": "x"}])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Root lists of `@N` items (mixed values), cut before any item, whole and damaged.
    #[test]
    fn root_lists_stream_as_they_decode(
        items in proptest::collection::vec(item(), 2..10),
        v31 in any::<bool>(),
        damage in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0u8..4, prop::sample::select(vec![b'@', b'x', b'"', b' ', b'#', b'{', b'1', b'='])),
    ) {
        let spec = if v31 { Spec::V3_1 } else { Spec::LATEST };
        let Ok(text) = EncoderOptions::new().spec(spec).to_string(&items) else { return Ok(()) };
        if let Err(bug) = check_from_reader(text.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, text);
        }
        let damaged = damaged(&text, damage);
        if let Err(bug) = check_from_reader(damaged.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, damaged);
        }
    }
}

/// Targets that buffer what they read across members (`#[serde(flatten)]`, untagged enums)
/// keep owned copies: the units they came from are gone by the time they are read.
#[test]
fn buffering_targets_own_what_they_keep() {
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(untagged)]
    enum Cell {
        Number(i64),
        Text(String),
        Rows(Vec<HashMap<String, Cell>>),
    }
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Flat {
        name: String,
        #[serde(flatten)]
        rest: HashMap<String, Cell>,
        rows: Vec<HashMap<String, Cell>>,
    }
    let mut text = String::from("GCF profile=generic\nname=flat\n");
    for i in 0..50 {
        text.push_str(&format!(
            "k{i}=value number {i}\n## s{i} [2]{{a,b}}\n{i}|x{i}\ny|{i}\n"
        ));
    }
    text.push_str("## rows [3]{a,b}\n1|one\n2|two\n3|three\nlast=9\n");
    let whole: Flat = agentwire_gcf::from_str(&text).unwrap();
    assert_eq!(whole.rest["k7"], Cell::Text("value number 7".into()));
    assert!(
        matches!(&whole.rest["s7"], Cell::Rows(rows) if rows[0]["b"] == Cell::Text("x7".into()))
    );
    for opts in units() {
        let streamed: Flat = opts.from_reader(text.as_bytes()).unwrap();
        assert_eq!(streamed, whole);
    }
    check_from_reader_typed::<Flat>(text.as_bytes()).unwrap();
}

/// A section holding tables and lists (a member of a root section, and deeper), read into a
/// `Value` a piece at a time.
fn nested() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    (
        proptest::collection::vec(row(), 0..8),
        proptest::collection::vec(item(), 0..6),
        proptest::collection::vec(row(), 0..5),
        any::<u8>(),
        text(),
    )
        .prop_map(|(rows, items, inner, n, s)| {
            json!({
                "a": n,
                "data": {
                    "total": n,
                    "items": rows,
                    "list": items,
                    "meta": {"s": s, "deep": {"rows": inner, "after": n}, "x": 1},
                    "z": s,
                },
                "ok": true,
                "tail": {"rows": inner},
            })
        })
}

/// [`nested`] as structs (a typed target reading sections across units).
#[derive(Debug, PartialEq, serde::Deserialize)]
struct Nested {
    a: u8,
    data: NestedData,
    ok: bool,
    tail: NestedTail,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct NestedData {
    total: u8,
    items: Vec<Row>,
    list: Vec<serde_json::Value>,
    meta: NestedMeta,
    z: String,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct NestedMeta {
    s: String,
    deep: NestedTail,
    x: u8,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct NestedTail {
    rows: Vec<Row>,
    #[serde(default)]
    after: Option<u8>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Sections holding tables and lists, cut between their rows and items (and before
    /// their `##` members), whole and damaged (short counts, repeated keys after a cut, bad
    /// rows late in a piece, deferred counts and trailers).
    #[test]
    fn nested_sections_stream_as_they_decode(
        value in nested(),
        v31 in any::<bool>(),
        damage in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0u8..4, prop::sample::select(vec![b'@', b'x', b'"', b' ', b'#', b'{', b'1', b'=', b'|', b'?'])),
        deferred in any::<bool>(),
    ) {
        let spec = if v31 { Spec::V3_1 } else { Spec::LATEST };
        let Ok(mut text) = EncoderOptions::new().spec(spec).to_string(&value) else { return Ok(()) };
        if deferred {
            // Deferred counts, checked against a trailer at the end.
            text = text.replace(" [", " [?");
            text = text.replace("[?0", "[?").replace("[?1", "[?").replace("[?2", "[?").replace("[?3", "[?")
                .replace("[?4", "[?").replace("[?5", "[?").replace("[?6", "[?").replace("[?7", "[?");
        }
        let check = |input: &str| check_from_reader(input.as_bytes())
            .and_then(|()| check_from_reader_typed::<Nested>(input.as_bytes()));
        if let Err(bug) = check(&text) {
            prop_assert!(false, "{}\n{}", bug, text);
        }
        let damaged = damaged(&text, damage);
        if let Err(bug) = check(&damaged) {
            prop_assert!(false, "{}\n{}", bug, damaged);
        }
    }
}

/// The example, and its damaged forms, cut everywhere.
#[test]
fn a_section_holding_a_table_streams() {
    let text = "GCF profile=generic\n## data\n  total=2\n  ## items [3]{id,n}\n  1|a\n  2|b\n  3|c\n  ## meta\n    x=1\n    ## t [2]{a}\n    1\n    2\nok=true\n";
    check_from_reader(text.as_bytes()).unwrap();
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Example {
        data: ExampleData,
        ok: bool,
    }
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct ExampleData {
        total: u64,
        items: Vec<ExampleItem>,
        meta: HashMap<String, serde_json::Value>,
    }
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct ExampleItem {
        id: u64,
        n: String,
    }
    let typed: Example = DecoderOptions::new()
        .stream_unit_size(1)
        .from_reader(text.as_bytes())
        .unwrap();
    assert_eq!(
        (typed.data.items[2].id, typed.data.items[2].n.as_str()),
        (3, "c")
    );
    assert_eq!(
        typed.data.meta["t"],
        serde_json::json!([{"a": 1}, {"a": 2}])
    );
    assert!(typed.ok && typed.data.total == 2);
    for bad in [
        text.replace("[3]", "[4]"),
        text.replace("[3]", "[2]"),
        text.replace("  3|c\n", "  3|c\n  total=1\n"),
        text.replace("  ## meta\n", "  ## items\n"),
        text.replace("  ## meta\n", "  total=9\n  ## meta\n"),
        text.replace("  3|c", "  3|c|d"),
        text.replace("    2\n", "    x\n    2\n"),
        text.replace("[3]", "[?]") + "##! count items=3\n",
        text.replace("[3]", "[?]") + "##! items=2\n",
    ] {
        check_from_reader(bad.as_bytes())
            .and_then(|()| check_from_reader_typed::<Example>(bad.as_bytes()))
            .unwrap_or_else(|bug| panic!("{bug}\n{bad}"));
    }
}

/// A payload of sections one in the other holding members, tables and lists, built from
/// `ops` (mostly well formed: a count off by one, a repeated key, a stray line now and then).
fn sections_payload(ops: &[(u8, u8)], deferred: bool) -> String {
    use std::fmt::Write;
    let mut out = String::from("GCF profile=generic\n");
    let mut depth = 0usize;
    let mut counts = Vec::new();
    for (i, &(op, arg)) in ops.iter().enumerate() {
        let pad = "  ".repeat(depth);
        // Mostly a new key, now and then a repeated one.
        let key = if arg % 13 == 0 { 0 } else { i };
        let n = usize::from(arg % 5);
        // A declared count, now and then off by one.
        let declared = if arg % 11 == 0 { n + 1 } else { n };
        let count = if deferred {
            "?".to_owned()
        } else {
            declared.to_string()
        };
        let _ = match op % 9 {
            0 | 1 => {
                depth += 1;
                writeln!(out, "{pad}## s{key}")
            }
            2 => {
                depth = depth.saturating_sub(1 + usize::from(arg % 2));
                Ok(())
            }
            3 => writeln!(out, "{pad}k{key}={i}"),
            4 | 5 => {
                counts.push(n);
                let _ = writeln!(out, "{pad}## t{key} [{count}]{{a,b}}");
                (0..n).try_for_each(|r| writeln!(out, "{pad}{r}|\"v{i}\""))
            }
            6 => {
                counts.push(n);
                let _ = writeln!(out, "{pad}## l{key} [{count}]");
                (0..n).try_for_each(|r| match r % 3 {
                    0 => writeln!(out, "{pad}@{r} {{}}\n{pad}  x={r}"),
                    1 => writeln!(out, "{pad}@{r} [1]{{a}}\n{pad}  {r}"),
                    _ => writeln!(out, "{pad}@{r} ={r}"),
                })
            }
            7 => writeln!(out, "{pad}## s{key}\n{pad}  k=1"),
            8 if arg % 8 != 0 => writeln!(out, "{pad}## s{key}"),
            _ => match arg / 8 % 4 {
                0 => writeln!(out, "{pad} k=1"),
                1 => writeln!(out, "{pad}5|6"),
                2 => writeln!(out, "{pad}@0 =1"),
                _ => writeln!(out, "##! count t0=1"),
            },
        };
    }
    if deferred {
        let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
        let _ = writeln!(out, "##! summary counts={}", counts.join(","));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Payloads of sections at any depth with tables and lists in them (well formed or not),
    /// cut everywhere the reader may cut.
    #[test]
    fn section_payloads_stream_as_they_decode(
        ops in proptest::collection::vec((0u8..12, any::<u8>()), 1..40),
        deferred in any::<bool>(),
    ) {
        let text = sections_payload(&ops, deferred);
        if let Err(bug) = check_from_reader(text.as_bytes()) {
            prop_assert!(false, "{}\n{}", bug, text);
        }
    }
}

/// Rows whose enum holds a struct variant in every row are written with the variant's path
/// columns (`state>Held>reason`); `from_str` and `from_reader` read them back into the enum,
/// and a flattened object of two variants is a type error at its row.
#[test]
fn struct_variants_read_back_from_path_columns() {
    let rows: Vec<Row> = (0..3)
        .map(|i| Row {
            id: i,
            label: format!("item {i}"),
            weight: 0.5,
            note: None,
            state: State::Held {
                reason: format!("r{i}"),
                until: -(i as i64),
            },
        })
        .collect();
    let text = agentwire_gcf::to_string(&rows).unwrap();
    assert!(text.contains("state>Held>reason"), "{text}");
    assert_eq!(agentwire_gcf::from_str::<Vec<Row>>(&text).unwrap(), rows);
    for opts in units() {
        assert_eq!(
            opts.from_reader::<_, Vec<Row>>(text.as_bytes()).unwrap(),
            rows
        );
    }
    let two = text.replacen("state>Held>until", "state>Open>until", 1);
    let e = agentwire_gcf::from_str::<Vec<Row>>(&two).unwrap_err();
    assert_eq!(
        (e.code(), e.line()),
        ("type_mismatch", Some(3)),
        "{e}\n{two}"
    );
    if let Err(bug) = check_from_reader_typed::<Vec<Row>>(two.as_bytes()) {
        panic!("{bug}");
    }
}
