//! `cargo xtask scorecard`: regenerates docs/scorecard.{md,json,svg} with the release build of
//! `agentwire scorecard`, then the README's headline numbers between
//! `<!-- scorecard:start -->` and `<!-- scorecard:end -->`.

use std::fs;

use serde_json::Value;

use crate::{cargo, root, run_checked, TaskError};

const START: &str = "<!-- scorecard:start -->";
const END: &str = "<!-- scorecard:end -->";

pub(crate) fn run(args: &[String]) -> Result<(), TaskError> {
    if !args.is_empty() {
        return Err(format!("usage: cargo xtask scorecard, not {args:?}").into());
    }
    let mut command = cargo();
    command.args([
        "run",
        "--release",
        "--quiet",
        "-p",
        "agentwire",
        "--",
        "scorecard",
        "--out",
        "docs",
    ]);
    command.stdout(std::process::Stdio::null());
    run_checked(&mut command)?;
    let json_path = root().join("docs/scorecard.json");
    let text = fs::read_to_string(&json_path)
        .map_err(|e| format!("cannot read {}: {e}", json_path.display()))?;
    let scorecard: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", json_path.display()))?;
    let block = headline(&scorecard)?;
    let readme_path = root().join("README.md");
    let readme = fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        return Err(format!("README.md has no `{START}` ... `{END}` block").into());
    };
    if end < start {
        return Err(format!("README.md: `{END}` comes before `{START}`").into());
    }
    let updated = format!("{}{START}\n{block}{}", &readme[..start], &readme[end..]);
    if updated != readme {
        fs::write(&readme_path, updated)
            .map_err(|e| format!("cannot write {}: {e}", readme_path.display()))?;
        eprintln!("updated the README's scorecard block");
    }
    eprintln!("wrote docs/scorecard.md, docs/scorecard.json, docs/scorecard.svg");
    Ok(())
}

/// The README block: one table of totals per format, the chart and a link to the details.
fn headline(scorecard: &Value) -> Result<String, TaskError> {
    let malformed = || TaskError::from("docs/scorecard.json lacks the summary it should have");
    let tokenizer = scorecard["tokenizer"].as_str().ok_or_else(malformed)?;
    let files = scorecard["files"].as_array().ok_or_else(malformed)?.len();
    let summary = scorecard["summary"].as_array().ok_or_else(malformed)?;
    let mut out = format!(
        "The token scorecard: the {files} tool responses of the corpus ([fixtures/](fixtures)) \
         in every format, counted in {tokenizer} tokens (each format on the files it applies to; \
         GCF graph on the graph payloads only).\n\n\
         | format | files | tokens | vs JSON compact | vs JSON pretty | median vs compact | round trip |\n\
         |---|--:|--:|--:|--:|--:|---|\n"
    );
    let tokens_key = if tokenizer == "o200k_base" {
        "o200k"
    } else {
        "cl100k"
    };
    let mut any_equivalent = false;
    for s in summary {
        let number = |key: &str| s[key].as_f64().ok_or_else(malformed);
        let count = |key: &str| s[key].as_u64().ok_or_else(malformed);
        let (exact, equivalent, failed) = (count("exact")?, count("equivalent")?, count("failed")?);
        let mut round_trip = format!("{exact}/{} exact", exact + equivalent + failed);
        if equivalent > 0 {
            any_equivalent = true;
            round_trip.push_str(&format!(", {equivalent} ≈"));
        }
        if failed > 0 {
            round_trip.push_str(&format!(", {failed} ✗"));
        }
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {round_trip} |\n",
            s["label"].as_str().ok_or_else(malformed)?,
            count("files")?,
            thousands(count(tokens_key)?),
            percent(number("vs_compact")?),
            percent(number("vs_pretty")?),
            percent(number("median_vs_compact")?),
        ));
    }
    if any_equivalent {
        out.push_str(
            "\n≈: equal as JSON, but a number changed form (`129.0` came back as `129`) or a \
             graph was reordered into its profile's order.\n",
        );
    }
    out.push_str(
        "\n![Tokens per format](docs/scorecard.svg)\n\n\
         Every file and format, bytes and both tokenizers: [docs/scorecard.md](docs/scorecard.md). \
         Regenerate with `cargo xtask scorecard`.\n",
    );
    Ok(out)
}

fn thousands(n: u64) -> String {
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

/// The same rendering as the scorecard's own tables: `−35.2 %`, `+4.0 %`, `±0.0 %`.
fn percent(ratio: f64) -> String {
    let value = (ratio * 1000.0).round() / 10.0;
    if value == 0.0 {
        "±0.0 %".to_owned()
    } else if value < 0.0 {
        format!("\u{2212}{:.1} %", -value)
    } else {
        format!("+{value:.1} %")
    }
}
