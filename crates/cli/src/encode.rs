//! `agentwire encode`: JSON to GCF, GCX1, TOON or JSON.

use std::path::PathBuf;

use crate::codec::{self, Format};
use crate::{input, output, CliError};

/// Arguments of `agentwire encode`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The input is JSON; the output is written to standard output. Key order is kept.

GCX1 (--tool NAME): the tool name the payload is written under (default `response`). An
object holding arrays of objects becomes one section per array (`NAME.key`) with its scalar
members in the header; cells need no type letters unless their text would read as something
else. Gortex's tools (search_symbols, get_symbol_source, batch_symbols, find_usages,
get_file_summary, get_callers, get_call_chain, get_dependencies, get_dependents,
find_implementations, walk_graph, get_editing_context, smart_context, winnow_symbols,
analyze.dead_code, analyze.hotspots, analyze.cycles, contracts.list, contracts.orphans) are
written the way Gortex writes them, each column typed by the tool. Every payload decodes back
to the input exactly; member order within rows follows the first row that has each member.

--graph reads a graph in the GCF graph model ({tool, tokenBudget, tokensUsed, packRoot,
symbols: [{qualifiedName, kind, score, provenance, distance}], edges: [{source, target,
edgeType}]}) and writes the graph profile; scores travel with two decimals.")]
pub(crate) struct Args {
    /// The output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    to: Format,
    /// GCX1: the tool name the payload is written under (Gortex's tools in their shape).
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
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
    if args.tool.is_some() && args.to != Format::Gcx1 {
        return Err(CliError::Usage("--tool applies to --to gcx1 only".into()));
    }
    if args.graph && args.to != Format::Gcf {
        return Err(CliError::Usage("--graph applies to --to gcf only".into()));
    }
    if args.pretty && args.to != Format::Json {
        return Err(CliError::Usage("--pretty applies to --to json only".into()));
    }
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
        Format::Gcf => output::print(&codec::encode_gcf(&value)?),
    }
}
