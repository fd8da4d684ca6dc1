//! `agentwire encode --to auto`: the cheapest encoding of every corpus response, which
//! `agentwire decode` reads back to the same JSON.

use std::path::PathBuf;

use agentwire_tokens::Tokenizer;
use assert_cmd::Command;
use serde_json::Value;

fn run(args: &[&str], input: &str) -> String {
    let out = Command::cargo_bin("agentwire")
        .unwrap()
        .args(args)
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// Tokens of an output as the proxy would send it: the command ends TOON and JSON with a
/// newline of its own, which the proxy's texts do not have; GCF and GCX1 end with theirs.
fn tokens(output: &str) -> usize {
    let text = if output.starts_with("GC") {
        output
    } else {
        output.strip_suffix('\n').unwrap_or(output)
    };
    Tokenizer::O200kBase.count(text)
}

/// Objects as sets of members, numbers by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[test]
fn auto_is_the_cheapest_that_decodes_back() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut chosen = std::collections::BTreeMap::<&str, usize>::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let input = serde_json::to_string(&file["response"]).unwrap();
        let auto = run(&["encode", "--to", "auto"], &input);
        let back: Value = serde_json::from_str(&run(&["decode"], &auto)).unwrap();
        assert!(same(&file["response"], &back), "{}: {auto}", path.display());
        let header = auto.lines().next().unwrap_or_default();
        let format = if header.starts_with("GCF") {
            "gcf"
        } else if header.starts_with("GCX") {
            "gcx1"
        } else if header.starts_with(['{', '[']) {
            "json"
        } else {
            "toon"
        };
        *chosen.entry(format).or_default() += 1;
        // No format that reads back is cheaper (checked on a few files, for time).
        let name = path.file_stem().unwrap().to_string_lossy();
        if !["employees", "symbol_source", "feature_flags", "analytics"].contains(&&*name) {
            continue;
        }
        let auto_tokens = tokens(&auto);
        for to in ["gcf", "gcx1", "toon", "json"] {
            let other = run(&["encode", "--to", to], &input);
            let other_back: Value = serde_json::from_str(&run(&["decode"], &other)).unwrap();
            if same(&file["response"], &other_back) {
                let other_tokens = tokens(&other);
                assert!(
                    auto_tokens <= other_tokens,
                    "{}: auto {auto_tokens}, {to} {other_tokens}",
                    path.display()
                );
            }
        }
    }
    // The corpus is varied enough that more than one format wins somewhere.
    assert!(chosen.len() > 1, "{chosen:?}");
}

#[test]
fn auto_takes_a_tool_name_and_a_tokenizer() {
    let rows: Vec<Value> = (0..20)
        .map(|i| serde_json::json!({"id": i, "name": format!("n{i}")}))
        .collect();
    let input = serde_json::to_string(&rows).unwrap();
    let out = run(
        &[
            "encode",
            "--to",
            "auto",
            "--tool",
            "list_rows",
            "--tokenizer",
            "cl100k",
        ],
        &input,
    );
    let back: Value = serde_json::from_str(&run(&["decode"], &out)).unwrap();
    assert!(same(&Value::Array(rows), &back), "{out}");
    Command::cargo_bin("agentwire")
        .unwrap()
        .args(["encode", "--to", "gcf", "--tokenizer", "cl100k"])
        .write_stdin("{}")
        .assert()
        .code(2);
}
