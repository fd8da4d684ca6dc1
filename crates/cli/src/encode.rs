//! `agentwire encode`: JSON to GCF, GCX1, TOON or JSON.

use std::path::PathBuf;

use crate::codec::{self, Format};
use crate::{input, output, CliError};

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

GCF (generic profile) is written canonically by the current spec (3.6: v3.5.3 with constant
columns, as gcf-python 2.8.0 and the gcf crate 3.1.0 write it) unless --spec 3.1 asks for the
v3.1 bytes. Integers beyond the signed 64-bit range are an error in the current spec (model
them as strings, or use --spec 3.1). --fewest-tokens chooses, per table and section, among the
encodings the current grammar allows the one with the fewest tokens for --tokenizer (o200k by
default); any current decoder reads it, and it never has more tokens than the canonical one.")]
pub(crate) struct Args {
    /// The output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    to: Format,
    /// GCX1: the tool whose per-tool layout to use, or the generic fallback's tool name.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// GCF: encode a graph-shaped input with the graph profile.
    #[arg(long)]
    graph: bool,
    /// JSON: pretty-print with two-space indentation.
    #[arg(long)]
    pretty: bool,
    /// GCF: the spec version to write, `3.6` (the current spec) or `3.1`.
    #[arg(long, value_name = "VERSION", value_parser = parse_spec)]
    spec: Option<agentwire_gcf::Spec>,
    /// GCF: the encoding with the fewest tokens the current grammar allows.
    #[arg(long)]
    fewest_tokens: bool,
    /// GCF with --fewest-tokens: the tokenizer to count with, `o200k` or `cl100k`.
    #[arg(long, value_name = "NAME", value_parser = parse_tokenizer)]
    tokenizer: Option<agentwire_tokens::Tokenizer>,
    /// The JSON to encode; standard input when omitted or `-`.
    file: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    if args.tool.is_some() && args.to != Format::Gcx1 {
        return Err(CliError::Usage("--tool applies to --to gcx1 only".into()));
    }
    if args.graph && args.to != Format::Gcf {
        return Err(CliError::Usage("--graph applies to --to gcf only".into()));
    }
    if args.pretty && args.to != Format::Json {
        return Err(CliError::Usage("--pretty applies to --to json only".into()));
    }
    let options = gcf_options(args)?;
    let (reader, what) = input::open(args.file.as_deref())?;
    let value = codec::read_json(reader, &what)?;
    match args.to {
        Format::Json => output::print_json(&value, args.pretty),
        Format::Gcx1 => output::print(&codec::encode_gcx1(args.tool.as_deref(), &value)?),
        Format::Toon => {
            let mut text = codec::encode_toon(&value)?;
            // The reference encoder ends without a newline; a line of output should end in one.
            text.push('\n');
            output::print(&text)
        }
        Format::Gcf if args.graph => {
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
        Format::Gcf => output::print(&codec::encode_gcf_with(&value, &options)?),
    }
}

/// The generic-profile encoder options of `--spec`, `--fewest-tokens` and `--tokenizer`.
fn gcf_options(args: &Args) -> Result<agentwire_gcf::EncoderOptions, CliError> {
    let generic = args.to == Format::Gcf && !args.graph;
    for (set, flag) in [
        (args.spec.is_some(), "--spec"),
        (args.fewest_tokens, "--fewest-tokens"),
    ] {
        if set && !generic {
            return Err(CliError::Usage(format!(
                "{flag} applies to --to gcf (the generic profile) only"
            )));
        }
    }
    if args.tokenizer.is_some() && !args.fewest_tokens {
        return Err(CliError::Usage(
            "--tokenizer applies to --fewest-tokens only".into(),
        ));
    }
    let spec = args.spec.unwrap_or(agentwire_gcf::Spec::LATEST);
    let mut options = agentwire_gcf::EncoderOptions::new().spec(spec);
    if args.fewest_tokens {
        if spec == agentwire_gcf::Spec::V3_1 {
            return Err(CliError::Usage(
                "--fewest-tokens chooses among the current spec's encodings: not with --spec 3.1"
                    .into(),
            ));
        }
        let tokenizer = args
            .tokenizer
            .unwrap_or(agentwire_tokens::Tokenizer::O200kBase);
        options = options.fewest_tokens(tokenizer);
    }
    Ok(options)
}

fn parse_spec(s: &str) -> Result<agentwire_gcf::Spec, String> {
    s.parse()
        .map_err(|e: agentwire_gcf::Error| e.message().to_owned())
}

fn parse_tokenizer(s: &str) -> Result<agentwire_tokens::Tokenizer, String> {
    s.parse()
        .map_err(|e: agentwire_tokens::UnknownTokenizer| e.to_string())
}
