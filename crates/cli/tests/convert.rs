//! `agentwire encode` and `agentwire decode`.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

/// The `response` member of a corpus file, as compact JSON.
fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/{name}.json"));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    serde_json::to_string(&file["response"]).unwrap()
}

fn one_line_error(code: i32, starts_with: &'static str) -> impl Fn(assert_cmd::assert::Assert) {
    move |assert| {
        assert
            .code(code)
            .stdout("")
            .stderr(predicate::str::starts_with(starts_with))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
}

fn encode(args: &[&str], input: &str) -> String {
    let out = agentwire()
        .arg("encode")
        .args(args)
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn decode(args: &[&str], input: &str) -> Value {
    let out = agentwire()
        .arg("decode")
        .args(args)
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

const RECORD: &str = r#"{"id":1,"name":"Ada","tags":["x","y"],"ok":true}"#;

#[test]
fn encodes_json_in_every_format() {
    assert_eq!(
        encode(&["--to", "gcf"], RECORD),
        "GCF profile=generic\nid=1\nname=Ada\ntags[2]: x,y\nok=true\n"
    );
    assert_eq!(
        encode(&["--to", "gcx1"], RECORD),
        "GCX1 tool=response fields=id,name,tags,ok\n1\tAda\t[\"x\",\"y\"]\ttrue\n"
    );
    // With --tool the members come in the input's order or sorted, whichever costs fewer
    // tokens (here sorted).
    assert_eq!(
        encode(&["--to", "gcx1", "--tool", "people"], RECORD)
            .lines()
            .next(),
        Some("GCX1 tool=people fields=id,name,ok,tags")
    );
    assert_eq!(
        encode(&["--to", "toon"], RECORD),
        "id: 1\nname: Ada\ntags[2]: x,y\nok: true\n"
    );
    assert_eq!(encode(&["--to", "json"], RECORD), format!("{RECORD}\n"));
    assert_eq!(
        encode(&["--to", "json", "--pretty"], r#"{"b":1,"a":[2]}"#),
        "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}\n"
    );
}

#[test]
fn key_order_of_the_input_is_kept() {
    let input = r#"{"zeta":1,"alpha":{"y":2,"x":3}}"#;
    assert_eq!(encode(&["--to", "json"], input), format!("{input}\n"));
    assert_eq!(
        encode(&["--to", "gcf"], input),
        "GCF profile=generic\nzeta=1\n## alpha\n  y=2\n  x=3\n"
    );
}

#[test]
fn gcf_is_written_by_the_current_spec_by_v3_1_or_for_the_fewest_tokens() {
    let input =
        r#"{"rows":[{"id":1,"c":{"n":"a, b"},"env":"x"},{"id":2,"c":{"n":"c"},"env":"x"}]}"#;
    assert_eq!(
        encode(&["--to", "gcf"], input),
        "GCF profile=generic\n## rows [2]{id,\"c>n\",env=x}\n1|\"a, b\"\n2|c\n"
    );
    assert_eq!(
        encode(&["--to", "gcf", "--spec", "3.1"], input),
        "GCF profile=generic\n## rows [2]{id,c,env}\n\
         @0 1|^|x\n.c {}\n    n=\"a, b\"\n@1 2|^|x\n.c {}\n    n=c\n"
    );
    for tokenizer in [
        &[][..],
        &["--tokenizer", "o200k"],
        &["--tokenizer", "cl100k"],
    ] {
        let mut args = vec!["--to", "gcf", "--fewest-tokens"];
        args.extend_from_slice(tokenizer);
        let text = encode(&args, input);
        assert_eq!(
            text,
            "GCF profile=generic\n## rows [2]{id,\"c>n\",env=x}\n1|a, b\n2|c\n"
        );
        let back = decode(&[], &text);
        assert_eq!(back, serde_json::from_str::<Value>(input).unwrap());
    }
    // Beyond int64: the current spec refuses, v3.1 writes the digits.
    agentwire()
        .args(["encode", "--to", "gcf"])
        .write_stdin(r#"{"n":18446744073709551615}"#)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("out_of_range"));
    assert_eq!(
        encode(
            &["--to", "gcf", "--spec", "3.1"],
            r#"{"n":18446744073709551615}"#
        ),
        "GCF profile=generic\nn=18446744073709551615\n"
    );
}

#[test]
fn every_format_decodes_back_to_the_input() {
    for input in [
        RECORD.to_owned(),
        fixture("orders"),
        fixture("event_logs"),
        fixture("nested_config"),
    ] {
        let expected: Value = serde_json::from_str(&input).unwrap();
        for format in ["gcf", "gcx1", "toon", "json"] {
            let text = encode(&["--to", format], &input);
            let back = decode(&[], &text);
            // TOON and GCF write integral floats (`129.0`) as integers: compare as numbers.
            assert!(
                json_eq(&expected, &back),
                "{format}: {expected} became {back}"
            );
            assert_eq!(
                decode(
                    &["--from", if format == "json" { "auto" } else { format }],
                    &text
                ),
                back
            );
        }
    }
}

/// Equal as JSON: numbers by value, members as sets.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        (x, y) => x == y,
    }
}

#[test]
fn gcx1_layouts_by_tool_name() {
    for (name, tool) in [
        ("search_symbols", "search_symbols"),
        ("find_usages", "find_usages"),
        ("callers", "get_callers"),
        ("file_summary", "get_file_summary"),
        ("symbol_source", "get_symbol_source"),
        ("batch_symbols", "batch_symbols"),
        ("editing_context", "get_editing_context"),
        ("smart_context", "smart_context"),
        ("analyze_hotspots", "analyze.hotspots"),
    ] {
        let input = fixture(name);
        let text = encode(&["--to", "gcx1", "--tool", tool], &input);
        let section = text.split(' ').nth(1).unwrap();
        assert!(
            section.starts_with(&format!("tool={tool}")),
            "{name}: {section}"
        );
        // Exactly the input back: numbers with their digits, members and types.
        let expected: Value = serde_json::from_str(&input).unwrap();
        assert_eq!(decode(&[], &text), expected, "{name}");
    }
}

#[test]
fn gcx1_reads_what_gortex_writes() {
    // The shapes of Gortex's wire-format harness: rows under a wrapper key, header totals,
    // a payload of several sections.
    assert_eq!(
        decode(
            &[],
            "GCX1 tool=get_callers.nodes fields=file_path,id,start_line rows=1 total_nodes=1 truncated=false\n\
             a.go\ta.go::F\t3\n\
             GCX1 tool=get_callers.edges fields=confidence,from,to rows=1\n1.0\ta.go::F\tb.go::G\n"
        ),
        serde_json::json!({
            "nodes": [{"file_path": "a.go", "id": "a.go::F", "start_line": 3}],
            "edges": [{"confidence": 1.0, "from": "a.go::F", "to": "b.go::G"}],
            "total_nodes": 1,
            "truncated": false
        })
    );
    // Gortex's production layout, a later column and no `total`.
    assert_eq!(
        decode(
            &[],
            "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig,is_test truncated=false\n\
             a.go::F\tfunction\tF\ta.go\t3\tfunc F()\tfalse\n"
        ),
        serde_json::json!({
            "results": [{"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go",
                         "line": 3, "sig": "func F()", "is_test": false}],
            "truncated": false
        })
    );
}

#[test]
fn any_input_encodes_under_a_known_tool() {
    for (tool, name) in [
        ("search_symbols", "employees"),
        ("get_dependents", "callers"),
        ("analyze.cycles", "orders"),
    ] {
        let input = fixture(name);
        let text = encode(&["--to", "gcx1", "--tool", tool], &input);
        let expected: Value = serde_json::from_str(&input).unwrap();
        assert_eq!(decode(&[], &text), expected, "{tool} {name}");
    }
}

#[test]
fn gcx1_keeps_numbers_exactly() {
    let input = r#"{"big":12345678901234567890123,"minus_zero":-0,"price":0.50,"tiny":5e-324,"list":[1.0,-0.0]}"#;
    let text = encode(&["--to", "gcx1"], input);
    let out = agentwire()
        .arg("decode")
        .write_stdin(text)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(out).unwrap(), format!("{input}\n"));
    for cell in ["1e400", "1e-400", "-1e999"] {
        one_line_error(
            1,
            "agentwire: standard input is not valid GCX1: invalid_value at line 2",
        )(
            agentwire()
                .arg("decode")
                .write_stdin(format!("GCX1 tool=t fields=a types=n\n{cell}\n"))
                .assert(),
        );
    }
    // The command keeps number lexemes (serde_json's `arbitrary_precision`); a float beyond
    // a float's range is refused by every format that cannot carry it, rather than written as
    // infinity, null or zero. JSON carries the lexeme.
    for number in ["1e400", "-1E999", "1e-400"] {
        let input = format!("{{\"a\":[1,{number}]}}");
        one_line_error(
            1,
            "agentwire: cannot encode as GCX1: number_out_of_range at line 2",
        )(
            agentwire()
                .args(["encode", "--to", "gcx1"])
                .write_stdin(input.clone())
                .assert(),
        );
        one_line_error(
            1,
            "agentwire: cannot encode as TOON: it cannot carry this input",
        )(
            agentwire()
                .args(["encode", "--to", "toon"])
                .write_stdin(input.clone())
                .assert(),
        );
        let json: Value = serde_json::from_str(&encode(&["--to", "json"], &input)).unwrap();
        assert_eq!(json, serde_json::from_str::<Value>(&input).unwrap());
    }
    assert_eq!(
        encode(&["--to", "gcx1"], "[0e-400]"),
        "GCX1 tool=response fields=value rows=1\n0e-400\n"
    );
}

#[test]
fn a_bad_escape_before_a_multibyte_character_is_an_error_not_a_panic() {
    one_line_error(
        1,
        "agentwire: standard input is not valid GCX1: invalid_value at line 2, column 1: field `a`: expected JSON: invalid escape at character 2",
    )(
        agentwire()
            .arg("decode")
            .write_stdin("GCX1 tool=t fields=a types=j\n\"\\\\é\"\n")
            .assert(),
    );
}

#[test]
fn duplicate_fields_are_refused_with_their_position() {
    one_line_error(
        1,
        "agentwire: standard input is not valid GCX1: duplicate_field at line 1, column 24: field `a` is declared twice",
    )(
        agentwire()
            .arg("decode")
            .write_stdin("GCX1 tool=t fields=a,b,a\n1\t2\t3\n")
            .assert(),
    );
}

#[test]
fn graphs_with_the_graph_profile() {
    let input = fixture("graph_30");
    let text = encode(&["--to", "gcf", "--graph"], &input);
    assert!(text.starts_with("GCF profile=graph tool=context_for_task budget=4000 tokens="));
    assert!(text.contains("\n## targets\n@0 "));
    assert!(text.contains("\n## edges [45]\n"));
    let expected: Value = serde_json::from_str(&input).unwrap();
    assert_eq!(decode(&[], &text), expected);

    // Scores travel with two decimals: the command says so.
    agentwire()
        .args(["encode", "--to", "gcf", "--graph"])
        .write_stdin(
            r#"{"symbols": [{"qualifiedName": "p.F", "kind": "function", "score": 0.123, "provenance": "lsp", "distance": 0}]}"#,
        )
        .assert()
        .success()
        .stdout("GCF profile=graph symbols=1\n## targets\n@0 fn p.F 0.12 lsp\n")
        .stderr("agentwire: warning: 1 score(s) rounded to the two decimals the graph profile carries\n");

    one_line_error(
        1,
        "agentwire: the input does not fit the GCF graph model: /symbols: missing",
    )(
        agentwire()
            .args(["encode", "--to", "gcf", "--graph"])
            .write_stdin(RECORD)
            .assert(),
    );
    one_line_error(1, "agentwire: the input does not fit the GCF graph model: /symbols/0/note")(
        agentwire()
            .args(["encode", "--to", "gcf", "--graph"])
            .write_stdin(
                r#"{"symbols": [{"qualifiedName": "p.F", "kind": "function", "score": 0.5, "provenance": "lsp", "distance": 0, "note": "x"}]}"#,
            )
            .assert(),
    );
    one_line_error(1, "agentwire: cannot encode as GCF (graph profile): unsupported_value")(
        agentwire()
            .args(["encode", "--to", "gcf", "--graph"])
            .write_stdin(
                r#"{"symbols": [{"qualifiedName": "has space", "kind": "function", "score": 0.5, "provenance": "lsp", "distance": 0}]}"#,
            )
            .assert(),
    );
}

#[test]
fn encode_reads_a_file_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.json");
    std::fs::write(&path, RECORD).unwrap();
    agentwire()
        .args(["encode", "--to", "gcf"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("GCF profile=generic\n"));
    one_line_error(
        1,
        "agentwire: standard input is not valid JSON: EOF while parsing",
    )(
        agentwire()
            .args(["encode", "--to", "gcf"])
            .write_stdin(r#"{"a":"#)
            .assert(),
    );
    one_line_error(
        1,
        "agentwire: standard input is not valid JSON: trailing characters",
    )(
        agentwire()
            .args(["encode", "--to", "toon"])
            .write_stdin("{} {}")
            .assert(),
    );
    one_line_error(1, "agentwire: cannot read /nonexistent/in.json")(
        agentwire()
            .args(["encode", "--to", "gcf", "/nonexistent/in.json"])
            .assert(),
    );
    one_line_error(1, "agentwire: cannot encode as GCX1: ")(
        agentwire()
            .args(["encode", "--to", "gcx1", "--tool", "has space"])
            .write_stdin(RECORD)
            .assert(),
    );
}

#[test]
fn encode_usage_errors_exit_with_2() {
    for args in [
        &["encode"][..],
        &["encode", "--to", "xml"],
        &["encode", "--to", "gcf", "--tool", "x"],
        &["encode", "--to", "toon", "--graph"],
        &["encode", "--to", "gcf", "--pretty"],
        &["encode", "--to", "gcf", "a.json", "b.json"],
        &["encode", "--to", "gcf", "--spec", "2.0"],
        &["encode", "--to", "gcf", "--spec", "3.1", "--fewest-tokens"],
        &["encode", "--to", "gcf", "--tokenizer", "o200k"],
        &[
            "encode",
            "--to",
            "gcf",
            "--fewest-tokens",
            "--tokenizer",
            "p50k",
        ],
        &["encode", "--to", "gcf", "--graph", "--fewest-tokens"],
        &["encode", "--to", "toon", "--spec", "3.1"],
    ] {
        agentwire()
            .args(args)
            .write_stdin(RECORD)
            .assert()
            .append_context("args", args.join(" "))
            .code(2)
            .stdout("");
    }
}

#[test]
fn decode_detects_the_format_by_header() {
    let expected: Value = serde_json::from_str(RECORD).unwrap();
    assert_eq!(
        decode(
            &[],
            "GCF profile=generic\nid=1\nname=Ada\ntags[2]: x,y\nok=true\n"
        ),
        expected
    );
    assert_eq!(
        decode(
            &[],
            "GCX1 tool=t fields=id,name,ok,tags types=nsbj\n1\tAda\ttrue\t[\"x\",\"y\"]\n"
        ),
        expected
    );
    assert_eq!(
        decode(&[], "id: 1\nname: Ada\ntags[2]: x,y\nok: true\n"),
        expected
    );
    assert_eq!(decode(&[], RECORD), expected);
    assert_eq!(decode(&[], "[2]: a,b\n"), serde_json::json!(["a", "b"]));
    // A GCX1 payload of the Go reference server, without type meta: cells read as what they
    // look like.
    assert_eq!(
        decode(
            &[],
            "GCX1 tool=status fields=repo,state,ready\nacme/shop\tready\ttrue\n"
        ),
        serde_json::json!({"repo": "acme/shop", "state": "ready", "ready": true})
    );
    agentwire()
        .args(["decode", "--pretty"])
        .write_stdin("GCF profile=generic\na=1\n")
        .assert()
        .success()
        .stdout("{\n  \"a\": 1\n}\n");
}

#[test]
fn decode_errors_carry_the_codec_code_and_position() {
    one_line_error(
        1,
        "agentwire: standard input is not valid GCF: count_mismatch at line 2, column 4: declared [2] but found 1 items",
    )(
        agentwire()
            .arg("decode")
            .write_stdin("GCF profile=generic\n## [2]{id,name}\n1|a\n")
            .assert(),
    );
    one_line_error(1, "agentwire: standard input is not valid GCX1: ")(
        agentwire()
            .arg("decode")
            .write_stdin("GCX1 tool=t fields=a,b\nx\ty\tz\n")
            .assert(),
    );
    one_line_error(1, "agentwire: standard input is not valid GCX1: ")(
        agentwire()
            .arg("decode")
            .write_stdin("GCX2 tool=t fields=a\nx\n")
            .assert(),
    );
    one_line_error(1, "agentwire: standard input is not valid TOON: ")(
        agentwire()
            .arg("decode")
            .write_stdin("items[3]: a,b\n")
            .assert(),
    );
    one_line_error(1, "agentwire: standard input is not valid GCF: ")(
        agentwire()
            .args(["decode", "--from", "gcf"])
            .write_stdin("GCX1 tool=t fields=a\nx\n")
            .assert(),
    );
    one_line_error(1, "agentwire: standard input is not valid JSON: ")(
        agentwire().arg("decode").write_stdin("{\"a\": }").assert(),
    );
    one_line_error(1, "agentwire: standard input is empty: ")(
        agentwire().arg("decode").write_stdin("").assert(),
    );
    // TOON reads empty text as an empty object.
    assert_eq!(decode(&["--from", "toon"], ""), serde_json::json!({}));
    one_line_error(1, "agentwire: standard input is not valid UTF-8")(
        agentwire()
            .arg("decode")
            .write_stdin(&b"a: \xff\n"[..])
            .assert(),
    );
}

#[test]
fn decode_usage_errors_exit_with_2() {
    for args in [&["decode", "--from", "xml"][..], &["decode", "--to", "gcf"]] {
        agentwire()
            .args(args)
            .write_stdin(RECORD)
            .assert()
            .append_context("args", args.join(" "))
            .code(2)
            .stdout("");
    }
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // 50,000 rows decoded to JSON (more than a pipe buffer) into a reader that stops after the first bytes.
    let mut text = String::from("GCX1 tool=t fields=n rows=50000 types=n\n");
    for i in 0..50_000 {
        text.push_str(&format!("{i}\n"));
    }
    let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("agentwire"))
        .arg("decode")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::{Read, Write};
            child.stdin.take().unwrap().write_all(text.as_bytes())?;
            let mut first = [0u8; 8];
            child.stdout.take().unwrap().read_exact(&mut first)?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
}

#[test]
fn json_input_keeps_every_digit_and_refuses_repeated_names() {
    let input = r#"{"big":12345678901234567890123,"tiny":1e-400,"z":-0,"f":1.50}"#;
    // JSON carries these numbers exactly; GCX1 every one but the float beyond a double's range.
    assert_eq!(encode(&["--to", "json"], input).trim_end(), input);
    let input = r#"{"big":12345678901234567890123,"z":-0,"f":1.50}"#;
    let gcx1 = encode(&["--to", "gcx1"], input);
    let back = agentwire()
        .arg("decode")
        .write_stdin(gcx1)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let back: Value = serde_json::from_slice(&back).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(input).unwrap());
    assert_eq!(back["big"].to_string(), "12345678901234567890123");
    // An object naming a member twice is ambiguous: an error at the second name.
    agentwire()
        .args(["encode", "--to", "gcf"])
        .write_stdin("{\"a\": 1,\n \"a\": 2}")
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("duplicate member name \"a\""))
        .stderr(predicate::str::contains("line 2 column 4"));
}

#[test]
fn a_number_a_format_cannot_carry_is_an_error_not_a_silent_change() {
    // TOON's reference encoder rounds through a double.
    one_line_error(
        1,
        "agentwire: cannot encode as TOON: it cannot carry this input losslessly",
    )(
        agentwire()
            .args(["encode", "--to", "toon"])
            .write_stdin(r#"{"big":12345678901234567890123}"#)
            .assert(),
    );
    one_line_error(1, "agentwire: cannot encode as TOON")(
        agentwire()
            .args(["encode", "--to", "toon"])
            .write_stdin(r#"[1e-400]"#)
            .assert(),
    );
}
