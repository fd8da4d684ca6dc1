//! `agentwire scorecard`: every format on a corpus of tool responses — bytes, cl100k and
//! o200k tokens, savings against compact and pretty JSON, and a round-trip check.
//!
//! Without a directory it runs on the corpus compiled into the binary (`embedded.rs`, byte
//! copies of the repository's `fixtures/` written by `cargo xtask corpus`), so it works from
//! any directory and from an installed binary.

mod chart;
mod corpus;
mod embedded;
mod measure;
mod progress;
mod render;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use agentwire_tokens::Tokenizer;

use crate::{output, CliError};
use measure::ItemResult;

/// Arguments of `agentwire scorecard`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Every file is measured as JSON pretty (2-space), JSON compact, GCX1 (its per-tool layout when \
the file fits one, else the generic fallback), GCF generic (canonical, current spec), GCF fewest \
(the encoding with the fewest tokens for --tokenizer), gcf 3.1.0 (the gcf crate's generic \
encoder, what today's producers write), GCF graph (graph-shaped files) and TOON (the \
toon-format crate). A corpus file is either our envelope {\"fixture\": {...}, \
\"response\": ...} (see fixtures/README.md) or any JSON value, whose GCX1 layout and graph \
shape are then detected.")]
pub(crate) struct Args {
    /// A directory of `.json` files to measure; the embedded corpus when omitted.
    dir: Option<PathBuf>,
    /// The tokenizer that savings, medians and the chart use (both are always counted).
    #[arg(long, default_value = "o200k", value_parser = parse_tokenizer)]
    tokenizer: Tokenizer,
    /// Also write scorecard.md, scorecard.json and scorecard.svg into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

fn parse_tokenizer(s: &str) -> Result<Tokenizer, String> {
    s.parse()
        .map_err(|e: agentwire_tokens::Error| e.to_string())
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let (items, corpus) = match &args.dir {
        None => {
            let items = corpus::embedded()?;
            let label = format!(
                "the {} files embedded in `agentwire` (a copy of the repository's `fixtures/`)",
                items.len()
            );
            (items, label)
        }
        Some(dir) => {
            let items = corpus::directory(dir)?;
            let label = format!("the {} `.json` files of `{}`", items.len(), dir.display());
            (items, label)
        }
    };
    let results = measure_all(&items, args.tokenizer);
    let context = render::Context {
        corpus: &corpus,
        tokenizer: args.tokenizer,
    };
    let all: Vec<&ItemResult> = results.iter().collect();
    let summary = summary::summarize(&all, args.tokenizer);
    if let Some(out) = &args.out {
        write_files(out, &context, &results, &summary)?;
    }
    output::print(&render::markdown(&context, &results, &summary, false))
}

/// Measures every item, on as many threads as there are cores, in item order.
fn measure_all(items: &[corpus::Item], tokenizer: Tokenizer) -> Vec<ItemResult> {
    let total = items.len();
    let mut progress = progress::Progress::new(total);
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, total.max(1));
    let mut slots: Vec<Option<ItemResult>> = vec![None; total];
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        for _ in 0..threads {
            let sender = sender.clone();
            let next = &next;
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if sender
                    .send((i, measure::measure(item.clone(), tokenizer)))
                    .is_err()
                {
                    break;
                }
            });
        }
        drop(sender);
        loop {
            match receiver.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok((i, result)) => {
                    progress.advance(&result.item.file);
                    slots[i] = Some(result);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => progress.tick(),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    progress.finish();
    slots.into_iter().flatten().collect()
}

fn write_files(
    dir: &Path,
    context: &render::Context<'_>,
    results: &[ItemResult],
    summary: &[summary::FormatSummary],
) -> Result<(), CliError> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| CliError::WriteFile { path, source })
    };
    std::fs::create_dir_all(dir).map_err(|source| CliError::WriteFile {
        path: dir.to_owned(),
        source,
    })?;
    write(
        "scorecard.md",
        &render::markdown(context, results, summary, true),
    )?;
    let mut json = serde_json::to_string_pretty(&render::json(context, results, summary))
        .map_err(|e| CliError::Write(e.into()))?;
    json.push('\n');
    write("scorecard.json", &json)?;
    let groups = chart_groups(results, context.tokenizer);
    let groups: Vec<chart::Group<'_>> = groups
        .iter()
        .map(|(title, summary)| chart::Group {
            title: title.clone(),
            summary,
        })
        .collect();
    write("scorecard.svg", &chart::svg(&groups, context.tokenizer))?;
    Ok(())
}

/// All files (without the formats that apply to only some), then one group per category.
fn chart_groups(
    results: &[ItemResult],
    tokenizer: Tokenizer,
) -> Vec<(String, Vec<summary::FormatSummary>)> {
    let all: Vec<&ItemResult> = results.iter().collect();
    let everywhere: Vec<summary::FormatSummary> = summary::summarize(&all, tokenizer)
        .into_iter()
        .filter(|s| s.files == results.len())
        .collect();
    let mut groups = vec![(format!("All {} files", results.len()), everywhere)];
    let mut categories: Vec<&str> = results.iter().map(|r| r.item.category.as_str()).collect();
    categories.sort_by_key(|c| (category_rank(c), *c));
    categories.dedup();
    if categories.len() > 1 {
        for category in categories {
            let members: Vec<&ItemResult> = results
                .iter()
                .filter(|r| r.item.category == category)
                .collect();
            let title = format!(
                "{} ({} file{})",
                category_title(category),
                members.len(),
                if members.len() == 1 { "" } else { "s" }
            );
            groups.push((title, summary::summarize(&members, tokenizer)));
        }
    }
    groups
}

fn category_rank(category: &str) -> u8 {
    match category {
        "code-intelligence" => 0,
        "graph" => 1,
        "api" => 2,
        _ => 3,
    }
}

fn category_title(category: &str) -> String {
    match category {
        "code-intelligence" => "Code intelligence".to_owned(),
        "graph" => "Graph payloads".to_owned(),
        "api" => "API payloads".to_owned(),
        other => other.to_owned(),
    }
}
