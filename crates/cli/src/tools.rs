//! `agentwire tools`: tool ids, ChoiceCards and tool_browse over an MCP `tools/list` result.

use std::io::Write;
use std::path::PathBuf;

use agentwire_toolcard::{parse_tool_id, BrowseRequest, Catalog, CatalogBuilder, MAX_TOP_K};
use clap::Subcommand;
use serde::Serialize;

use crate::{input, CliError};

/// Arguments of `agentwire tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: ToolsCommand,
}

#[derive(Debug, Subcommand)]
enum ToolsCommand {
    /// One JSON line per tool: upstream_name, tool_id, namespace, name, version, hash8.
    Ids(Input),
    /// One JSON line per tool: id, the rendered card text, its cl100k_base token count, and
    /// the card's description.
    Cards(Input),
    /// The exact text an agent receives from tool_browse.
    Browse(Browse),
    /// The parts of a tool_id as JSON: namespace, name, version, hash8.
    ParseId {
        /// The tool_id, such as `github:create_issue@1.4.0`.
        id: String,
    },
}

/// Where the `tools/list` result comes from.
#[derive(Debug, clap::Args)]
struct Input {
    /// An MCP `tools/list` result (`{"tools": [...]}`, a JSON-RPC response holding one, or an
    /// array of tools); standard input when omitted or `-`.
    file: Option<PathBuf>,
    /// The upstream server's name: the namespace of every tool (otherwise inferred from each
    /// tool name).
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("mode").required(true).args(["query", "path"]))]
struct Browse {
    /// A free-form query; answered with the best-ranked tools.
    #[arg(long, value_name = "Q")]
    query: Option<String>,
    /// A browse path, such as `/` or `/github/issues`; answered with the node's children.
    #[arg(long, value_name = "P")]
    path: Option<String>,
    /// How many tools a query returns at most (1 to 50; default 8).
    #[arg(long, value_name = "N", conflicts_with = "path",
          value_parser = clap::value_parser!(u16).range(1..=MAX_TOP_K as i64))]
    top_k: Option<u16>,
    #[command(flatten)]
    input: Input,
}

#[derive(Serialize)]
struct IdLine<'a> {
    upstream_name: &'a str,
    tool_id: &'a str,
    namespace: &'a str,
    name: &'a str,
    version: Option<&'a str>,
    hash8: Option<&'a str>,
}

#[derive(Serialize)]
struct CardLine<'a> {
    id: &'a str,
    text: &'a str,
    tokens: usize,
    description: &'a str,
}

#[derive(Serialize)]
struct Parts<'a> {
    namespace: &'a str,
    name: &'a str,
    version: Option<&'a str>,
    hash8: Option<&'a str>,
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let mut out = Vec::new();
    match &args.command {
        ToolsCommand::Ids(input) => {
            let catalog = load(input)?;
            for tool in catalog.tools() {
                let id = tool.id();
                json_line(
                    &mut out,
                    &IdLine {
                        upstream_name: tool.upstream_name(),
                        tool_id: id.as_str(),
                        namespace: id.namespace(),
                        name: id.name(),
                        version: id.version(),
                        hash8: id.hash8(),
                    },
                );
            }
        }
        ToolsCommand::Cards(input) => {
            let catalog = load(input)?;
            for tool in catalog.tools() {
                let card = tool.card();
                json_line(
                    &mut out,
                    &CardLine {
                        id: card.id(),
                        text: card.text(),
                        tokens: card.tokens(),
                        description: card.description(),
                    },
                );
            }
        }
        ToolsCommand::Browse(browse) => {
            let catalog = load(&browse.input)?;
            let request = match (&browse.query, &browse.path) {
                (Some(query), None) => {
                    let request = BrowseRequest::query(query.clone());
                    match browse.top_k {
                        Some(k) => request.with_top_k(k.into()),
                        None => request,
                    }
                }
                (None, Some(path)) => BrowseRequest::path(path.clone()),
                _ => {
                    return Err(CliError::Usage(
                        "give exactly one of --query and --path".into(),
                    ))
                }
            };
            let response = catalog.browse(&request)?;
            out.extend_from_slice(response.text().as_bytes());
        }
        ToolsCommand::ParseId { id } => {
            let parts = parse_tool_id(id)?;
            json_line(
                &mut out,
                &Parts {
                    namespace: &parts.namespace,
                    name: &parts.name,
                    version: parts.version.as_deref(),
                    hash8: parts.hash8.as_deref(),
                },
            );
        }
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Write(e)),
        _ => Ok(()),
    }
}

fn load(input: &Input) -> Result<Catalog, CliError> {
    let text = input::read_text(input.file.as_deref())?;
    let mut builder = CatalogBuilder::new();
    builder.add_tools_list_str(input.server.as_deref(), &text)?;
    Ok(builder.build()?)
}

fn json_line(out: &mut Vec<u8>, value: &impl Serialize) {
    // Serializing these plain structs cannot fail.
    if serde_json::to_writer(&mut *out, value).is_ok() {
        out.push(b'\n');
    }
}
