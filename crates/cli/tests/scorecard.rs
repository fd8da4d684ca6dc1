//! `agentwire scorecard`.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

const GRAPH: &str = r#"{"tool": "t", "symbols": [
  {"qualifiedName": "pkg.Serve", "kind": "function", "score": 0.9, "provenance": "lsp", "distance": 0},
  {"qualifiedName": "pkg.Handler", "kind": "interface", "score": 0.5, "provenance": "ast", "distance": 1}
], "edges": [{"source": "pkg.Serve", "target": "pkg.Handler", "edgeType": "implements"}]}"#;

const ROWS: &str =
    r#"[{"id": 1, "name": "Ada", "price": 1.5}, {"id": 2, "name": "Bob", "price": 2.0}]"#;

#[test]
fn the_embedded_corpus_works_from_any_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let out = cwd.path().join("out");
    let assert = agentwire()
        .current_dir(cwd.path())
        .args(["scorecard", "--out"])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.starts_with("# Token scorecard\n"), "{stdout}");
    assert!(stdout.contains("the 26 files embedded in `agentwire`"));
    for row in [
        "| JSON pretty | 26 |",
        "| JSON compact | 26 |",
        "| GCX1 | 26 |",
        "| GCF generic | 26 |",
        "| GCF graph | 3 |",
        "| TOON | 26 |",
    ] {
        assert!(stdout.contains(row), "{row}");
    }
    for file in ["`graph_500.json`", "`search_symbols.json`", "`orders.json`"] {
        assert!(stdout.contains(file), "{file}");
    }
    assert!(
        !stdout.contains("## Details"),
        "details go to scorecard.md only"
    );

    let md = std::fs::read_to_string(out.join("scorecard.md")).unwrap();
    assert!(md.starts_with(&stdout[..stdout.find("## Round trips").unwrap()]));
    assert!(md.contains("## Details"));

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("scorecard.json")).unwrap())
            .unwrap();
    assert_eq!(json["tokenizer"], "o200k_base");
    assert_eq!(json["files"].as_array().unwrap().len(), 26);
    let summary = json["summary"].as_array().unwrap();
    let compact = summary
        .iter()
        .find(|s| s["format"] == "json_compact")
        .unwrap();
    assert_eq!(compact["vs_compact"], 0.0);
    let pretty = summary
        .iter()
        .find(|s| s["format"] == "json_pretty")
        .unwrap();
    assert!(pretty["o200k"].as_u64() > compact["o200k"].as_u64());
    for s in summary {
        // Every format encodes every file it applies to, and no round trip fails.
        assert_eq!(s["failed"], 0, "{s}");
    }
    let svg = std::fs::read_to_string(out.join("scorecard.svg")).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains("GCF graph") && svg.ends_with("</svg>\n"));
}

#[test]
fn a_directory_of_plain_json_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("graph.json"), GRAPH).unwrap();
    std::fs::write(dir.path().join("rows.json"), ROWS).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not measured").unwrap();
    let out = dir.path().join("report");
    let assert = agentwire()
        .arg("scorecard")
        .arg(dir.path())
        .args(["--tokenizer", "cl100k", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stderr("");
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("the 2 `.json` files of"));
    assert!(stdout.contains("savings and medians in cl100k_base tokens"));
    assert!(stdout.contains("| GCF graph | 1 |"));
    assert!(stdout.contains("| `graph.json` |") && stdout.contains("| `rows.json` |"));
    // `2.0` comes back as `2` from TOON and GCF: shown, not hidden.
    assert!(
        stdout.contains("`rows.json`, TOON: ≈ numbers change form"),
        "{stdout}"
    );

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("scorecard.json")).unwrap())
            .unwrap();
    let files = json["files"].as_array().unwrap();
    assert_eq!(files[0]["file"], "graph.json");
    assert_eq!(files[0]["graph"], true);
    assert_eq!(files[1]["graph"], false);
    let formats: Vec<&str> = files[0]["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["format"].as_str().unwrap())
        .collect();
    assert_eq!(
        formats,
        [
            "json_pretty",
            "json_compact",
            "gcx1",
            "gcf_generic",
            "gcf_fewest",
            "gcf_crate",
            "gcf_graph",
            "toon"
        ]
    );
    // The fewest-tokens encoding never has more tokens than the canonical one.
    let cl100k = |i: usize| files[0]["formats"][i]["cl100k"].as_u64().unwrap();
    assert!(cl100k(4) <= cl100k(3));
    let gcf_graph = &files[0]["formats"][6];
    assert_eq!(gcf_graph["round_trip"]["result"], "exact");
    assert!(gcf_graph["bytes"].as_u64().unwrap() > 0);
    assert!(gcf_graph["vs_compact"].as_f64().unwrap() < 0.0);
}

#[test]
fn a_failed_round_trip_is_shown() {
    // The graph profile carries two decimals: 0.123 cannot come back.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.json"), GRAPH.replace("0.9", "0.123")).unwrap();
    agentwire()
        .arg("scorecard")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("0/1 exact, 1 ✗"))
        .stdout(predicate::str::contains(
            "`g.json`, GCF graph: ✗ /symbols/0/score: 0.123 became 0.12",
        ));
}

#[test]
fn bad_corpora_are_errors() {
    let empty = tempfile::tempdir().unwrap();
    agentwire()
        .arg("scorecard")
        .arg(empty.path())
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::ends_with(": no .json files to measure\n"));
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(bad.path().join("broken.json"), "{\"a\": ").unwrap();
    agentwire()
        .arg("scorecard")
        .arg(bad.path())
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("broken.json is not valid JSON: "))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    agentwire()
        .args(["scorecard", "/nonexistent/corpus"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "agentwire: cannot read /nonexistent/corpus",
        ));
}

#[test]
fn usage_errors_exit_with_2() {
    for args in [
        &["scorecard", "--tokenizer", "gpt2"][..],
        &["scorecard", "--out"],
        &["scorecard", "a", "b"],
    ] {
        agentwire()
            .args(args)
            .assert()
            .append_context("args", args.join(" "))
            .code(2)
            .stdout("");
    }
}
