//! Tokens of GCF, canonical and fewest-tokens, against the `gcf` crate 3.1.0 and TOON, on the
//! TOON-style data sets (and, with `corpus`, on the scorecard corpus):
//!
//! ```sh
//! cargo run --release -p agentwire-benchmarks --features anchors --example gcf_tokens
//! cargo run --release -p agentwire-benchmarks --features anchors --example gcf_tokens -- corpus
//! cargo run --release -p agentwire-benchmarks --features anchors --example gcf_tokens -- write DIR
//! ```
//!
//! For each data set and tokenizer (o200k_base, cl100k_base) it prints the tokens of compact
//! JSON, TOON (toon-format 0.7), the `gcf` crate's `encode_generic`, our canonical encoding
//! and our fewest-tokens encoding for that tokenizer, checks that both of ours decode back to
//! the input (with our decoder and with the `gcf` crate's) and that the fewest-tokens encoding
//! never has more tokens than the canonical one or the `gcf` crate's. `write DIR` writes the
//! data sets as JSON files, the input of `agentwire scorecard DIR`.

use agentwire_gcf::EncoderOptions;
use agentwire_tokens::Tokenizer;
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("write") {
        let dir = std::path::PathBuf::from(args.get(2).expect("write DIR"));
        std::fs::create_dir_all(&dir).expect("the directory");
        for (name, value) in agentwire_benchmarks::toon_datasets() {
            let mut text = serde_json::to_string_pretty(&value).expect("JSON");
            text.push('\n');
            std::fs::write(dir.join(format!("{name}.json")), text).expect("write");
        }
        return;
    }
    let sets: Vec<(String, Value)> = if args.get(1).map(String::as_str) == Some("corpus") {
        agentwire_benchmarks::corpus()
            .into_iter()
            .map(|f| (f.name, f.response))
            .collect()
    } else {
        agentwire_benchmarks::toon_datasets()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect()
    };
    let mut failures = Vec::new();
    for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
        println!("\n{}\n", tokenizer.name());
        println!("| data set | JSON compact | TOON | gcf 3.1.0 | GCF canonical | GCF fewest | fewest vs canonical | fewest vs gcf |");
        println!("|---|--:|--:|--:|--:|--:|--:|--:|");
        let mut totals = [0usize; 5];
        for (name, value) in &sets {
            let count = |text: &str| tokenizer.count(text);
            let json = serde_json::to_string(value).expect("JSON");
            let toon = toon_format::encode_default(value).expect("TOON");
            let theirs = gcf::encode_generic(value).expect("gcf");
            let canonical = agentwire_gcf::to_string(value).expect("GCF");
            let fewest = EncoderOptions::new()
                .fewest_tokens(tokenizer)
                .to_string(value)
                .expect("GCF fewest");
            for (what, text) in [("canonical", &canonical), ("fewest", &fewest)] {
                if let Some(problem) = round_trip(value, text) {
                    failures.push(format!("{name} {what}: {problem}"));
                }
            }
            let counts = [
                count(&json),
                count(&toon),
                count(&theirs),
                count(&canonical),
                count(&fewest),
            ];
            if counts[4] > counts[3] || counts[4] > counts[2] {
                failures.push(format!(
                    "{name} ({}): fewest {} > canonical {} or gcf {}",
                    tokenizer.short_name(),
                    counts[4],
                    counts[3],
                    counts[2]
                ));
            }
            for (total, n) in totals.iter_mut().zip(counts) {
                *total += n;
            }
            println!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} |",
                group(counts[0]),
                group(counts[1]),
                group(counts[2]),
                group(counts[3]),
                group(counts[4]),
                percent(counts[4], counts[3]),
                percent(counts[4], counts[2]),
            );
        }
        println!(
            "| **total** | {} | {} | {} | {} | {} | {} | {} |",
            group(totals[0]),
            group(totals[1]),
            group(totals[2]),
            group(totals[3]),
            group(totals[4]),
            percent(totals[4], totals[3]),
            percent(totals[4], totals[2]),
        );
    }
    if !failures.is_empty() {
        eprintln!("\nFAILED:\n  {}", failures.join("\n  "));
        std::process::exit(1);
    }
}

/// Why `text` does not decode back to `value` (with our decoder and the `gcf` crate's), if
/// it does not: values compared in the JSON data model (numbers by value).
fn round_trip(value: &Value, text: &str) -> Option<String> {
    match agentwire_gcf::from_str::<Value>(text) {
        Ok(back) if same(value, &back) => {}
        Ok(_) => return Some("our decoder reads another value".into()),
        Err(e) => return Some(format!("our decoder: {e}")),
    }
    match gcf::decode_generic(text) {
        Ok(back) if same(value, &back) => None,
        Ok(_) => Some("the gcf crate reads another value".into()),
        Err(e) => Some(format!("the gcf crate: {e}")),
    }
}

/// Equality in the JSON data model: numbers by value, members as sets.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(a: usize, b: usize) -> String {
    if b == 0 {
        return "—".into();
    }
    let change = (a as f64 / b as f64 - 1.0) * 100.0;
    format!("{change:+.1} %")
}
