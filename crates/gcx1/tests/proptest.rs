//! Property tests: arbitrary cells, headers, JSON values, typed rows and layouts survive a
//! round trip, through the shared oracle in `agentwire-testkit`.

use std::collections::BTreeMap;

use agentwire_gcx1::{
    decode, encode, format_f32, format_f64, Encoder, Graph, GraphEdge, GraphTool, Header, Layout,
    SearchSymbols, Section, StrDecoder, SymbolMatch, SymbolRef,
};
use agentwire_testkit::gcx1::{cells_roundtrip, decode_roundtrip, value_roundtrip};
use agentwire_testkit::Roundtrip;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// Text that stresses the format: the escape alphabet, CR, comment and header prefixes,
/// spaces, and any other character.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z]{1,3}",
        1 => Just("\t".to_owned()),
        1 => Just("\n".to_owned()),
        1 => Just("\r".to_owned()),
        1 => Just("\r\n".to_owned()),
        1 => Just("\\".to_owned()),
        1 => Just("#".to_owned()),
        1 => Just("GCX1 ".to_owned()),
        1 => Just("GCX2".to_owned()),
        1 => Just(" ".to_owned()),
        1 => Just(",".to_owned()),
        1 => Just("=".to_owned()),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|parts| parts.concat())
}

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z_]{1,6}",
        1 => tricky_text(),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        any::<u64>().prop_map(|n| Value::Number(n.into())),
        any::<f64>()
            .prop_filter_map("finite", Number::from_f64)
            .prop_map(Value::Number),
        tricky_text().prop_map(Value::String),
        "(true|false|null|1|-0|1e6|\\{\\}|\\[\\]|\"x\")".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(field_name(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Arrays of objects drawn from a small key pool, so that keys are shared, missing, or the
/// lone `value`: the shapes where the fallback has to mark types.
fn object_rows() -> impl Strategy<Value = Value> {
    let key = prop_oneof![Just("value"), Just("a"), Just("b"), Just(""), Just("#c")];
    let object = prop::collection::btree_map(key, json_leaf(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
    prop::collection::vec(object, 0..5).prop_map(Value::Array)
}

/// Wrapped responses: arrays of objects (the rows) beside scalars and other members, under
/// keys that stress the wrapper rules (reserved meta keys, dots, spaces, `value`).
fn wrapped() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        4 => "[a-z]{1,4}",
        1 => Just("rows".to_owned()),
        1 => Just("types".to_owned()),
        1 => Just("tool".to_owned()),
        1 => Just("value".to_owned()),
        1 => Just("a.b".to_owned()),
        1 => Just("x y".to_owned()),
        1 => Just("results".to_owned()),
        1 => Just("symbols".to_owned()),
        1 => Just("task".to_owned()),
        1 => Just("nodes".to_owned()),
        1 => Just("target".to_owned()),
    ];
    let member = prop_oneof![
        3 => object_rows(),
        2 => json_leaf(),
        1 => json_value(),
    ];
    prop::collection::btree_map(key, member, 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

fn tool_name() -> impl Strategy<Value = String> {
    // Every tool the crate knows (Gortex's), Gortex's tools without a layout, and others.
    let mut names: Vec<String> = agentwire_gcx1::known_tools().map(str::to_owned).collect();
    names.extend(
        [
            "response",
            "a.b",
            "analyze",
            "get_repo_outline",
            "get_test_targets",
            "graph_stats",
            "contracts",
        ]
        .map(str::to_owned),
    );
    prop::sample::select(names)
}

proptest! {
    #[test]
    fn wrapped_shapes_round_trip(tool in tool_name(), value in wrapped()) {
        prop_assert_eq!(value_roundtrip(&tool, &value), Ok(Roundtrip::Ok));
    }

    #[test]
    fn any_value_under_any_known_tool_round_trips(tool in tool_name(), value in json_value()) {
        prop_assert_eq!(value_roundtrip(&tool, &value), Ok(Roundtrip::Ok));
    }

    #[test]
    fn arbitrary_cells_round_trip(
        fields in prop::collection::vec(field_name(), 1..5),
        rows in prop::collection::vec(prop::collection::vec(tricky_text(), 0..6), 0..6),
    ) {
        let verdict = cells_roundtrip("tool", &fields, &rows);
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }

    #[test]
    fn plain_cells_are_never_refused(
        width in 2..6usize,
        rows in prop::collection::vec(prop::collection::vec(tricky_text(), 0..2), 0..6),
    ) {
        let fields: Vec<String> = (0..width).map(|i| format!("f{i}")).collect();
        let verdict = cells_roundtrip("tool", &fields, &rows);
        prop_assert_eq!(verdict, Ok(Roundtrip::Ok));
    }

    #[test]
    fn headers_round_trip_or_are_refused(
        tool in field_name(),
        fields in prop::collection::vec(field_name(), 1..4),
        meta in prop::collection::btree_map(field_name(), tricky_text(), 0..4),
    ) {
        let header = Header { tool, fields, meta };
        let section = Section { header, rows: Vec::new() };
        match encode(std::slice::from_ref(&section)) {
            Ok(text) => prop_assert_eq!(decode(&text).unwrap(), vec![section]),
            Err(e) => prop_assert!(
                matches!(e.code(), "invalid_header" | "duplicate_field" | "reserved_meta_key"),
                "{e}"
            ),
        }
    }

    #[test]
    fn arbitrary_json_round_trips_through_encode_any(value in json_value()) {
        prop_assert_eq!(value_roundtrip("any_tool", &value), Ok(Roundtrip::Ok));
    }

    #[test]
    fn arrays_of_objects_round_trip(value in object_rows()) {
        prop_assert_eq!(value_roundtrip("rows_tool", &value), Ok(Roundtrip::Ok));
    }

    #[test]
    fn arbitrary_bytes_never_break_the_decoders(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut input = b"GCX1 tool=t fields=a,b\n".to_vec();
        input.extend_from_slice(&bytes);
        prop_assert!(decode_roundtrip(&input).is_ok());
        prop_assert!(decode_roundtrip(&bytes).is_ok());
    }

    #[test]
    fn go_floats_read_back_exactly(bits in any::<u64>(), bits32 in any::<u32>()) {
        let value = f64::from_bits(bits);
        if value.is_finite() {
            let text = format_f64(value).unwrap();
            prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), bits, "{}", text);
        } else {
            prop_assert!(format_f64(value).is_err());
        }
        let value = f32::from_bits(bits32);
        if value.is_finite() {
            let text = format_f32(value).unwrap();
            prop_assert_eq!(text.parse::<f32>().unwrap().to_bits(), bits32, "{}", text);
        }
    }

    #[test]
    fn typed_rows_round_trip(rows in prop::collection::vec(any_row(), 0..5)) {
        let mut encoder = Encoder::new(Vec::new());
        encoder.begin_section(&Header::named("typed")).unwrap();
        if rows.is_empty() {
            // Nothing gives the header its fields; that is an error, not a silent drop.
            prop_assert_eq!(encoder.finish().unwrap_err().code(), "empty_field_list");
            return Ok(());
        }
        for row in &rows {
            encoder.serialize_row(row).unwrap();
        }
        let text = String::from_utf8(encoder.finish().unwrap()).unwrap();
        let mut decoder = StrDecoder::new(&text);
        let back: Vec<TypedRow> = decoder.deserialize().collect::<Result<_, _>>().unwrap();
        let expected: Vec<TypedRow> = rows.iter().map(TypedRow::normalized).collect();
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn layouts_round_trip(
        results in prop::collection::vec(symbol_match(), 0..4),
        total in any::<u64>(),
        truncated in any::<bool>(),
        confidence in any::<f64>().prop_filter("finite", |f| f.is_finite()),
    ) {
        let search = SearchSymbols {
            total: Some(total),
            truncated: Some(truncated),
            results: results.clone(),
            ..SearchSymbols::default()
        };
        prop_assert_eq!(SearchSymbols::from_gcx(&search.to_gcx().unwrap()).unwrap(), search);
        let graph = Graph {
            tool: GraphTool::GetDependents,
            total: Some(total),
            truncated: (total % 2 == 0).then_some(truncated),
            nodes: results
                .iter()
                .map(|r| SymbolRef { id: r.id.clone(), kind: r.kind.clone(), name: r.name.clone(), path: r.path.clone(), line: r.line, ..SymbolRef::default() })
                .collect(),
            edges: results
                .iter()
                .map(|r| GraphEdge { from: r.id.clone(), to: r.sig.clone(), kind: "calls".into(), origin: r.path.clone(), confidence, label: r.name.clone(), ..GraphEdge::default() })
                .collect(),
            ..Graph::default()
        };
        let back = Graph::from_gcx(&graph.to_gcx().unwrap()).unwrap();
        prop_assert_eq!(back.edges.iter().map(|e| e.confidence.to_bits()).collect::<Vec<_>>(),
                        graph.edges.iter().map(|e| e.confidence.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(back, graph);
    }
}

/// A text cell that survives unchanged (no CR before an LF, which the spec normalises away).
fn clean_text() -> impl Strategy<Value = String> {
    tricky_text().prop_map(|s| agentwire_testkit::gcx1::normalize_cell(&s))
}

fn symbol_match() -> impl Strategy<Value = SymbolMatch> {
    (
        clean_text(),
        clean_text(),
        clean_text(),
        clean_text(),
        any::<u64>(),
        clean_text(),
    )
        .prop_map(|(id, kind, name, path, line, sig)| SymbolMatch {
            id,
            kind,
            name,
            path,
            line,
            sig,
            ..SymbolMatch::default()
        })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Color {
    Red,
    Green,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TypedRow {
    text: String,
    number: i64,
    big: u128,
    ratio: f64,
    small: f32,
    flag: bool,
    maybe: Option<u32>,
    color: Color,
    tags: Vec<String>,
    nested: BTreeMap<String, i32>,
    letter: char,
}

impl TypedRow {
    /// What decoding gives back: CRLF normalised in text cells (nested JSON keeps it).
    fn normalized(&self) -> Self {
        let mut row = self.clone();
        row.text = agentwire_testkit::gcx1::normalize_cell(&row.text);
        row
    }
}

fn any_row() -> impl Strategy<Value = TypedRow> {
    (
        (
            tricky_text(),
            any::<i64>(),
            any::<u128>(),
            any::<f64>().prop_filter("finite", |f| f.is_finite()),
        ),
        (
            any::<f32>().prop_filter("finite", |f| f.is_finite()),
            any::<bool>(),
            any::<Option<u32>>(),
        ),
        (
            prop_oneof![Just(Color::Red), Just(Color::Green)],
            prop::collection::vec(tricky_text(), 0..3),
            prop::collection::btree_map(tricky_text(), any::<i32>(), 0..3),
            any::<char>(),
        ),
    )
        .prop_map(
            |((text, number, big, ratio), (small, flag, maybe), (color, tags, nested, letter))| {
                TypedRow {
                    text,
                    number,
                    big,
                    ratio,
                    small,
                    flag,
                    maybe,
                    color,
                    tags,
                    nested,
                    letter,
                }
            },
        )
}

/// Payload lines that exercise the value codec's rules: wrappers and their sections, type
/// letters, counts, shapes, JSON cells, numbers out of range, duplicate fields, comments.
fn payload_line() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "GCX1 tool=t fields=a,b",
        "GCX1 tool=t fields=a,b rows=2",
        "GCX1 tool=t fields=a,b rows=0",
        "GCX1 tool=t fields=a total=3 truncated=false",
        "GCX1 tool=t.x fields=a types=n",
        "GCX1 tool=t.x fields=a,b types=sj",
        "GCX1 tool=t.y fields=value rows=1",
        "GCX1 tool=t fields=a,a",
        "GCX1 tool=t fields=a shape=object",
        "GCX1 tool=t fields=a types=nn",
        "GCX1 tool=u fields=a",
        "GCX1 tool=search_symbols fields=id,line total=2",
        "GCX1 tool=get_callers.nodes fields=id,line total=1",
        "GCX1 tool=get_callers.edges fields=from,to count=1",
        "GCX1 tool=t.a fields=x rows=1",
        "GCX2 tool=t fields=a",
        "1\t2",
        "x",
        "",
        "# a comment",
        "[1,2]",
        "{\"a\":1}",
        "1e400",
        "-0",
        "12345678901234567890123",
        "\\q\tb",
        "a\tb\tc",
        "true\tnull",
        "{\"a\":",
    ])
}

proptest! {
    /// `validate` (which reads a line at a time without building the value) accepts exactly
    /// what `decode_any` and `read_payload` accept, and fails with the same error.
    #[test]
    fn validate_accepts_exactly_what_decode_accepts(
        lines in prop::collection::vec(payload_line(), 0..8),
        final_newline in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if final_newline {
            text.push('\n');
        }
        let options = agentwire_gcx1::Options::new();
        let code = |r: Result<(), agentwire_gcx1::Error>| r.map_err(|e| (e.code(), e.line()));
        let decoded = code(agentwire_gcx1::decode_any(&text).map(drop));
        let read = code(options.read_payload(text.as_bytes()).map(drop));
        let validated = code(options.validate(text.as_bytes()));
        prop_assert_eq!(decoded, validated, "{:?}", text);
        prop_assert_eq!(read, validated, "{:?}", text);
    }
}

/// Found by the `gcx1_decode` fuzz target: under a dotted tool name the crate does not know
/// (`find_usages.x`), the decoder reads columns by the tool before the last dot, the encoder
/// by none; a string in a column that tool types (`total_nodes`) was written without its
/// letter and did not read back. The encoder resolves the name as the decoder does now.
#[test]
fn a_dotted_unknown_tool_name_reads_back() {
    let input = "GCX1 %tool=finasdu_ges.nodes fields=file_pa \
                 tool=find_usages.no,kinm,#name,startternal/search/search_1.go: total_nodes=GCXna";
    if let Err(bug) = decode_roundtrip(input.as_bytes()) {
        panic!("{bug}");
    }
    for tool in ["find_usages.x", "get_callers.extra", "find_usages.no,kinm"] {
        let value = serde_json::json!({
            "total_nodes": "GCXna",
            "symbols": [{"name": "a", "line": "x"}],
            "edges": [{"from": "a", "to": "b"}],
            "note": "n",
        });
        if let Err(bug) = value_roundtrip(tool, &value) {
            panic!("{tool}: {bug}");
        }
    }
}
