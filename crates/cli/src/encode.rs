//! `agentwire encode`: JSON to GCF, GCX1, TOON or JSON, or the cheapest of them.

use std::path::PathBuf;

use agentwire_tokens::Tokenizer;

use crate::codec;
use crate::{input, output, CliError};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum To {
    /// The fewest tokens of GCF, GCX1, TOON and compact JSON that decodes back to the input:
    /// the choice `agentwire mcp` makes for each tool result.
    Auto,
    /// GCF v3.1 (generic profile; graph profile with `--graph`).
    Gcf,
    /// GCX1 (a per-tool layout with `--tool`, otherwise the generic fallback).
    Gcx1,
    /// TOON, through the reference `toon-format` crate.
    Toon,
    /// JSON.
    Json,
}

/// Arguments of `agentwire encode`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The input is JSON; the output is written to standard output. Key order is kept.

GCX1 layouts (--tool): search_symbols, get_symbol_source, batch_symbols, find_usages,
get_file_summary, get_callers, get_call_chain, get_dependencies, get_dependents,
find_implementations, get_editing_context, smart_context, analyze.dead_code,
analyze.hotspots, analyze.cycles, contracts.list, contracts.orphans. The input must then have
exactly the layout's JSON shape. Any other NAME selects the generic fallback under that tool
name; without --tool the fallback's tool name is `response`.

--graph reads a graph in the GCF graph model ({tool, tokenBudget, tokensUsed, packRoot,
symbols: [{qualifiedName, kind, score, provenance, distance}], edges: [{source, target,
edgeType}]}) and writes the graph profile; scores travel with two decimals.

--to auto writes whichever of GCF, GCX1 (generic, under --tool or `response`), TOON and compact
JSON has the fewest --tokenizer tokens and decodes back to the same JSON; `agentwire decode`
tells which from the first line and reads it back.")]
pub(crate) struct Args {
    /// The output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    to: To,
    /// GCX1: the tool whose per-tool layout to use, or the generic fallback's tool name (with
    /// auto, the name in a GCX1 header).
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// auto: the tokenizer that counts, o200k (o200k_base) or cl100k (cl100k_base).
    #[arg(long, value_parser = crate::count::parse_tokenizer, value_name = "TOKENIZER")]
    tokenizer: Option<Tokenizer>,
    /// GCF: encode a graph-shaped input with the graph profile.
    #[arg(long)]
    graph: bool,
    /// JSON: pretty-print with two-space indentation.
    #[arg(long)]
    pretty: bool,
    /// The JSON to encode; standard input when omitted or `-`.
    file: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    if args.tool.is_some() && !matches!(args.to, To::Gcx1 | To::Auto) {
        return Err(CliError::Usage(
            "--tool applies to --to gcx1 and --to auto only".into(),
        ));
    }
    if args.tokenizer.is_some() && args.to != To::Auto {
        return Err(CliError::Usage(
            "--tokenizer applies to --to auto only".into(),
        ));
    }
    if args.graph && args.to != To::Gcf {
        return Err(CliError::Usage("--graph applies to --to gcf only".into()));
    }
    if args.pretty && args.to != To::Json {
        return Err(CliError::Usage("--pretty applies to --to json only".into()));
    }
    let (reader, what) = input::open(args.file.as_deref())?;
    let value = codec::read_json(reader, &what)?;
    match args.to {
        To::Auto => {
            let options = agentwire_mcp::EncodeOptions::new()
                .tokenizer(args.tokenizer.unwrap_or(Tokenizer::O200kBase));
            let choice = agentwire_mcp::Reencoder::new(options)
                .and_then(|r| r.choose(&value, args.tool.as_deref().unwrap_or(codec::DEFAULT_TOOL)))
                .map_err(|e| CliError::Encode {
                    format: "any format",
                    message: e.to_string(),
                })?;
            let mut text = choice.text;
            if !text.ends_with('\n') {
                text.push('\n');
            }
            output::print(&text)
        }
        To::Json => output::print_json(&value, args.pretty),
        To::Gcx1 => output::print(&codec::encode_gcx1(args.tool.as_deref(), &value)?),
        To::Toon => {
            let mut text = codec::encode_toon(&value)?;
            // The reference encoder ends without a newline; a line of output should end in one.
            text.push('\n');
            output::print(&text)
        }
        To::Gcf if args.graph => {
            let (graph, rounded) = codec::graph_of(&value)?;
            let text = codec::encode_gcf_graph(&graph)?;
            if rounded > 0 {
                eprintln!(
                    "agentwire: warning: {rounded} score(s) rounded to the two decimals the \
                     graph profile carries"
                );
            }
            output::print(&text)
        }
        To::Gcf => output::print(&codec::encode_gcf(&value)?),
    }
}
