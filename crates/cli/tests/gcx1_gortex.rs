//! GCX1 as a Gortex user meets it (issue 19), through the `agentwire` command:
//!
//! - the twenty responses of Gortex's wire-format benchmark (conformance/gcx1/gortex/1NN_bench_*,
//!   written by conformance/gcx1/tools/gortex_bench.py) and the payloads Gortex's benchmark
//!   encoder writes for them: `agentwire decode` gives back each response, `encode --to gcx1
//!   --tool T` writes each one and reads it back, and costs no more tokens than Gortex's payload
//!   for each response (cl100k_base and o200k_base);
//! - the token targets on the corpus: `encode --to gcx1` without `--tool` saves at least 20 %
//!   (median, cl100k_base and o200k_base) against compact JSON on the code-intelligence
//!   responses, and no corpus file, with or without `--tool`, costs more than 3 % above
//!   compact JSON.
//!
//! docs/gcx1.md ("Token savings") lists the figures these tests check.

use std::path::{Path, PathBuf};

use agentwire_tokens::Tokenizer;
use assert_cmd::Command;
use serde_json::Value;

const TOKENIZERS: [Tokenizer; 2] = [Tokenizer::Cl100kBase, Tokenizer::O200kBase];

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

fn run(args: &[&str], input: &str) -> String {
    let out = agentwire()
        .args(args)
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The benchmark cases: (name, tool, Gortex's payload, the response).
fn bench_cases() -> Vec<(String, String, String, Value)> {
    let dir = root().join("conformance/gcx1/gortex");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains("_bench_"))
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|path| {
            let case: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            (
                case["name"].as_str().unwrap().to_owned(),
                case["tool"].as_str().unwrap().to_owned(),
                case["input"].as_str().unwrap().to_owned(),
                case["expected"].clone(),
            )
        })
        .collect()
}

/// Saving against `json` in percent (negative: fewer tokens).
fn change(tokens: usize, json: usize) -> f64 {
    (tokens as f64 - json as f64) / json as f64 * 100.0
}

/// The upper median, as Gortex's scorecard takes it.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[test]
fn the_twenty_benchmark_payloads_decode_into_their_responses() {
    let cases = bench_cases();
    assert_eq!(cases.len(), 20);
    for (name, _, payload, response) in &cases {
        let decoded: Value = serde_json::from_str(&run(&["decode"], payload)).unwrap();
        assert_eq!(&decoded, response, "{name}");
        run(&["validate"], payload);
    }
}

#[test]
fn the_twenty_benchmark_responses_encode_under_their_tools_and_save_what_gortex_saves() {
    let cases = bench_cases();
    for (name, tool, payload, response) in &cases {
        let json = serde_json::to_string(response).unwrap();
        let text = run(&["encode", "--to", "gcx1", "--tool", tool], &json);
        let back: Value = serde_json::from_str(&run(&["decode"], &text)).unwrap();
        assert_eq!(&back, response, "{name}: {text}");
        // Every response, in both tokenizers: at most the tokens of Gortex's payload.
        for tokenizer in TOKENIZERS {
            let (ours, gortex) = (tokenizer.count(&text), tokenizer.count(payload));
            assert!(
                ours <= gortex,
                "{name}: {ours} tokens with --tool, Gortex's payload {gortex} ({})\n{text}",
                tokenizer.name()
            );
        }
    }
}

/// The corpus files: (name, category, tool, the response as compact JSON).
fn corpus() -> Vec<(String, String, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let file: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let fixture = &file["fixture"];
            let tool = fixture["gcx1_layout"]
                .as_str()
                .or(fixture["tool"].as_str())
                .unwrap()
                .to_owned();
            (
                path.file_stem().unwrap().to_str().unwrap().to_owned(),
                fixture["category"].as_str().unwrap().to_owned(),
                tool,
                serde_json::to_string(&file["response"]).unwrap(),
            )
        })
        .collect()
}

#[test]
fn gcx1_meets_its_token_targets_on_the_corpus() {
    let files = corpus();
    assert_eq!(files.len(), 26);
    let mut code_intelligence = vec![Vec::new(); TOKENIZERS.len()];
    for (name, category, tool, json) in &files {
        let generic = run(&["encode", "--to", "gcx1"], json);
        let with_tool = run(&["encode", "--to", "gcx1", "--tool", tool], json);
        for (i, tokenizer) in TOKENIZERS.iter().enumerate() {
            let base = tokenizer.count(json);
            for (how, text) in [("without --tool", &generic), ("with --tool", &with_tool)] {
                let delta = change(tokenizer.count(text), base);
                assert!(
                    delta <= 3.0,
                    "{name} {how}: {delta:+.1} % against compact JSON ({})",
                    tokenizer.name()
                );
            }
            if category == "code-intelligence" {
                code_intelligence[i].push(change(tokenizer.count(&generic), base));
            }
        }
    }
    for (i, tokenizer) in TOKENIZERS.iter().enumerate() {
        assert_eq!(code_intelligence[i].len(), 9);
        let median = median(code_intelligence[i].clone());
        assert!(
            median <= -20.0,
            "code intelligence without --tool: median {median:.1} % ({})",
            tokenizer.name()
        );
    }
}

#[test]
fn decode_keeps_the_payloads_member_order() {
    // The command is built with serde_json's `preserve_order`: members come in column order
    // (never sorted), then the sections in payload order, then the header's meta.
    let out = run(
        &["decode"],
        "GCX1 tool=t fields=zeta,alpha,mid total=2\nz\ta\tm\n\
         GCX1 tool=t.rows fields=b,a\n1\t2\n3\t4\n",
    );
    assert_eq!(
        out.trim_end(),
        r#"{"zeta":"z","alpha":"a","mid":"m","rows":[{"b":1,"a":2},{"b":3,"a":4}],"total":2}"#
    );
    let out = run(
        &["decode"],
        "GCX1 tool=t fields=zeta,alpha,mid rows=2\nz\ta\tm\n1\t2\t3\n",
    );
    assert_eq!(
        out.trim_end(),
        r#"[{"zeta":"z","alpha":"a","mid":"m"},{"zeta":1,"alpha":2,"mid":3}]"#
    );
    // And encode keeps the input's member order in columns and wrapper members.
    let input = r#"{"zeta":1,"rows":[{"b":1,"a":2},{"b":3,"a":4}],"alpha":{"z":1,"a":2}}"#;
    let text = run(&["encode", "--to", "gcx1"], input);
    assert!(text.contains("fields=b,a"), "{text}");
    assert!(text.contains(r#"{"z":1,"a":2}"#), "{text}");
}

#[test]
fn gcx1_limit_flags_apply_to_encode_decode_and_validate_alike() {
    let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(3000));
    // The default limits read what the default encoder writes.
    let text = run(&["encode", "--to", "gcx1"], &long);
    run(&["validate"], &text);
    // A lower line limit: the encoder refuses what a decoder with it would refuse, and
    // decode and validate refuse the same line.
    let flag = ["--max-line-length", "1000"];
    agentwire()
        .args(["encode", "--to", "gcx1"])
        .args(flag)
        .write_stdin(long.as_str())
        .assert()
        .code(1)
        .stderr(predicates::str::contains("line_too_long at line 2"));
    for command in ["decode", "validate"] {
        agentwire()
            .arg(command)
            .args(flag)
            .write_stdin(text.as_str())
            .assert()
            .code(1)
            .stderr(predicates::str::contains(
                "longer than the limit of 1000 bytes",
            ));
    }
    // A field limit: the command reads any number of fields by default (its header lines
    // are bounded by the line limit), and refuses past --max-fields.
    let wide: String = (0..5000)
        .map(|i| format!("f{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let payload = format!("GCX1 tool=t fields={wide}\n1\n");
    let value: Value = serde_json::from_str(&run(&["decode"], &payload)).unwrap();
    assert_eq!(value["f0"], 1);
    run(&["validate"], &payload);
    for command in ["decode", "validate"] {
        agentwire()
            .args([command, "--max-fields", "4999"])
            .write_stdin(payload.as_str())
            .assert()
            .code(1)
            .stderr(predicates::str::contains("more than the limit of 4999"));
    }
    // encode takes only the line limit.
    agentwire()
        .args(["encode", "--to", "gcf", "--max-fields", "3"])
        .write_stdin("{}")
        .assert()
        .code(2);
}
