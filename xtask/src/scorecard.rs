//! `cargo xtask scorecard`: regenerates docs/scorecard.{md,json,svg} with the release build of
//! `agentwire scorecard`, then the README's headline numbers between
//! `<!-- scorecard:start -->` and `<!-- scorecard:end -->`; and
//! docs/scorecard-toon/scorecard.{md,json,svg}, the same measurements on the TOON-style data
//! sets (`agentwire_benchmarks::toon_datasets`, written to `target/toon-datasets`).

use std::fs;

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
    toon_datasets()?;
    let details_path = root().join("docs/scorecard.md");
    let details = fs::read_to_string(&details_path)
        .map_err(|e| format!("cannot read {}: {e}", details_path.display()))?;
    let block = headline(&details)?;
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

/// Writes the TOON-style data sets to `target/toon-datasets` and their scorecard to
/// `docs/scorecard-toon/`.
fn toon_datasets() -> Result<(), TaskError> {
    let dir = root().join("target/toon-datasets");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, value) in agentwire_benchmarks::toon_datasets() {
        let mut text =
            serde_json::to_string_pretty(&value).map_err(|e| format!("data set {name}: {e}"))?;
        text.push('\n');
        let path = dir.join(format!("{name}.json"));
        fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
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
    ]);
    command.arg(&dir).args(["--out", "docs/scorecard-toon"]);
    command.stdout(std::process::Stdio::null());
    run_checked(&mut command)?;
    eprintln!("wrote docs/scorecard-toon/scorecard.{{md,json,svg}}");
    Ok(())
}

/// The README block: the totals section of docs/scorecard.md as the command rendered it (so
/// the README and the details page can never disagree), the chart and a link to the details.
fn headline(details: &str) -> Result<String, TaskError> {
    const TOTALS: &str = "## Totals per format\n";
    let start = details
        .find(TOTALS)
        .ok_or("docs/scorecard.md has no `## Totals per format` section")?
        + TOTALS.len();
    let end = details[start..]
        .find("\n## ")
        .map_or(details.len(), |i| start + i + 1);
    let totals = details[start..end].trim();
    Ok(format!(
        "The token scorecard of the tool responses in [fixtures/](fixtures), in every format.\n\n\
         {totals}\n\n\
         ![Tokens per format](docs/scorecard.svg)\n\n\
         Every file and format, bytes and both tokenizers: [docs/scorecard.md](docs/scorecard.md). \
         Regenerate with `cargo xtask scorecard`.\n"
    ))
}
