//! The fewest-tokens encoder's targets (issue 18), checked on the scorecard corpus
//! (`fixtures/`) and on the TOON-style data sets (`agentwire_benchmarks::toon_datasets`, the
//! eight of TOON's benchmark), for o200k_base and cl100k_base alike:
//!
//! - on every file, `--fewest-tokens` for a tokenizer never has more of its tokens than the
//!   canonical encoding (`agentwire_gcf::to_string`) nor than the `gcf` crate 3.1.0's
//!   `encode_generic`;
//! - over each collection, it has fewer in total than either;
//! - and what it writes reads back to the input.
//!
//! The totals are printed (`cargo test -p agentwire-gcf-interop --test fewest -- --nocapture`);
//! docs/gcf.md records them.

use std::path::Path;

use agentwire_gcf::EncoderOptions;
use agentwire_tokens::Tokenizer;
use serde_json::Value;

/// The corpus files' values: a file's `response` in the `{"fixture", "response"}` envelope
/// (what the scorecard measures), else the file.
fn corpus() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() > 5, "the corpus at {}", dir.display());
    files
        .into_iter()
        .map(|path| {
            let mut file: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let value = match file.as_object_mut() {
                Some(map)
                    if map.len() == 2
                        && map.contains_key("fixture")
                        && map.contains_key("response") =>
                {
                    map.remove("response").unwrap_or_default()
                }
                _ => file,
            };
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, value)
        })
        .collect()
}

fn toon() -> Vec<(String, Value)> {
    agentwire_benchmarks::toon_datasets()
        .into_iter()
        .map(|(name, value)| (format!("{name}.json"), value))
        .collect()
}

/// Equality in the JSON data model (numbers by value: `1.0` is written `1`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Checks one collection for one tokenizer; returns the totals (fewest, canonical, `gcf`).
fn check(what: &str, files: &[(String, Value)], tokenizer: Tokenizer) -> [usize; 3] {
    let fewest = EncoderOptions::new().fewest_tokens(tokenizer);
    let mut totals = [0; 3];
    let mut worse = Vec::new();
    for (name, value) in files {
        let ours = fewest.to_string(value).unwrap();
        let back: Value = agentwire_gcf::from_str(&ours)
            .unwrap_or_else(|e| panic!("{what} {name}: the fewest-tokens output: {e}\n{ours}"));
        assert!(same(&back, value), "{what} {name}: round trip");
        let canonical = agentwire_gcf::to_string(value).unwrap();
        let theirs = gcf::encode_generic(value).unwrap();
        let counts = [&ours, &canonical, &theirs].map(|text| tokenizer.count(text));
        for (total, count) in totals.iter_mut().zip(counts) {
            *total += count;
        }
        if counts[0] > counts[1] || counts[0] > counts[2] {
            worse.push(format!(
                "{name}: fewest {} > canonical {} or gcf 3.1.0 {}",
                counts[0], counts[1], counts[2]
            ));
        }
    }
    let name = tokenizer.name();
    println!(
        "{what}, {name}: fewest {}, canonical {}, gcf 3.1.0 {}",
        totals[0], totals[1], totals[2]
    );
    assert!(
        worse.is_empty(),
        "{what}, {name}: more tokens than the canonical encoding or gcf 3.1.0 on:\n{}",
        worse.join("\n")
    );
    assert!(
        totals[0] < totals[1] && totals[0] < totals[2],
        "{what}, {name}: fewest {} is not below canonical {} and gcf 3.1.0 {} in total",
        totals[0],
        totals[1],
        totals[2]
    );
    totals
}

#[test]
fn fewest_tokens_on_the_corpus() {
    let files = corpus();
    for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
        check("corpus", &files, tokenizer);
    }
}

#[test]
fn fewest_tokens_on_the_toon_datasets() {
    let files = toon();
    for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
        check("TOON-style data sets", &files, tokenizer);
    }
}
