//! `agentwire tools`: tool ids, ChoiceCards, tool_browse, hydration and argument validation
//! over the `tools/list` results of one or more MCP servers.

use std::io::Write;
use std::path::PathBuf;

use agentwire_toolcard::{
    BrowseRequest, Catalog, CatalogBuilder, NameEncoding, ToolId, DEFAULT_PAGE_SIZE, MAX_TOP_K,
};
use clap::Subcommand;
use serde::Serialize;
use serde_json::{json, Value};

use crate::{input, CliError};

/// Arguments of `agentwire tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Machine-readable output: browse answers as JSON, `validate` as `{"ok": true}`, and on
    /// standard error every skipped tool and every error as one JSON object per line (errors
    /// in the gateway spec's §3.4 shape).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: ToolsCommand,
}

#[derive(Debug, Subcommand)]
enum ToolsCommand {
    /// One JSON line per tool: upstream_name, server, tool_id, mcp_name, namespace, name,
    /// version, hash8.
    Ids(Input),
    /// One JSON line per tool: id, the rendered card text, its cl100k_base token count, and
    /// the card's description.
    Cards(Input),
    /// The transparent proxy's stripped tools/list (§4.1) as JSON: `{"tools": [...]}`.
    Discovery(Discovery),
    /// The exact text an agent receives from tool_browse (with --json, the cards as JSON).
    Browse(Browse),
    /// The hydration of one tool (§4.3) as JSON: tool_id, upstream_name, server, input_schema.
    Hydrate(Hydrate),
    /// Check arguments against a tool's input schema (§4.4): prints `ok`, or the
    /// ARGS_INVALID error on standard error with status 1.
    Validate(Validate),
    /// The parts of a tool_id as JSON: namespace, name, version, hash8 and its MCP name. Takes
    /// a canonical id, an MCP name or a percent-encoded id.
    ParseId {
        /// The tool_id, such as `github:create_issue@1.4.0` or `github.create_issue.v1.4.0`.
        id: String,
    },
}

/// Where the `tools/list` results come from.
#[derive(Debug, clap::Args)]
struct Input {
    /// An MCP `tools/list` result (`{"tools": [...]}`, a JSON-RPC response holding one, or an
    /// array of tools); standard input when omitted or `-`, unless every input is given with
    /// `--server NAME=FILE`.
    file: Option<PathBuf>,
    /// `NAME=FILE`: the tools/list result of upstream server NAME (its tools' namespace), from
    /// FILE (`-` for standard input); repeat for several servers. A bare `NAME` names the
    /// server of FILE (or standard input); otherwise namespaces are inferred from tool names.
    #[arg(long, value_name = "NAME[=FILE]")]
    server: Vec<String>,
    /// Exit with status 1 when a tool was skipped (after printing everything else).
    #[arg(long)]
    strict: bool,
}

#[derive(Debug, clap::Args)]
struct Discovery {
    /// How entries are named: `mcp` (MCP's tool-name characters only), `canonical` (the
    /// tool_id) or `percent` (the tool_id percent-encoded).
    #[arg(long, value_name = "STYLE", default_value = "mcp",
          value_parser = ["mcp", "canonical", "percent"])]
    names: String,
    #[command(flatten)]
    input: Input,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("mode").required(true).args(["query", "path"]))]
struct Browse {
    /// A free-form query; answered with the best-ranked tools.
    #[arg(long, value_name = "Q")]
    query: Option<String>,
    /// A browse path, such as `/` or `/github/issues`; answered with a page of the node's
    /// children.
    #[arg(long, value_name = "P")]
    path: Option<String>,
    /// How many tools a query returns (default 8), or how many entries a page of a path
    /// holds (default 20); 1 to 50.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=MAX_TOP_K as i64))]
    top_k: Option<u16>,
    /// With --path: the page that starts at this cursor (the one a previous page named).
    #[arg(long, value_name = "C", conflicts_with = "query")]
    cursor: Option<String>,
    #[command(flatten)]
    input: Input,
}

#[derive(Debug, clap::Args)]
struct Hydrate {
    /// The tool: its tool_id, MCP name or percent-encoded id.
    tool_id: String,
    #[command(flatten)]
    input: Input,
}

#[derive(Debug, clap::Args)]
struct Validate {
    /// The tool: its tool_id, MCP name or percent-encoded id.
    tool_id: String,
    /// The arguments, a JSON object (default `{}`).
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    #[command(flatten)]
    input: Input,
}

#[derive(Serialize)]
struct IdLine<'a> {
    upstream_name: &'a str,
    server: Option<&'a str>,
    tool_id: &'a str,
    mcp_name: &'a str,
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
    tool_id: &'a str,
    mcp_name: String,
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let json = args.json;
    match run_command(args) {
        Ok(()) => Ok(()),
        Err(e) if json => {
            eprintln!("{}", error_json(&e));
            Err(CliError::Reported(e.exit_code()))
        }
        Err(e) => Err(e),
    }
}

fn run_command(args: &Args) -> Result<(), CliError> {
    let mut out = Vec::new();
    let mut strict_failure = None;
    let mut check = |catalog: &Catalog, input: &Input| {
        report_skipped(catalog, args.json);
        if input.strict && !catalog.skipped().is_empty() {
            strict_failure = Some(catalog.skipped().len());
        }
    };
    match &args.command {
        ToolsCommand::Ids(input) => {
            let catalog = load(input)?;
            check(&catalog, input);
            for tool in catalog.tools() {
                let id = tool.id();
                json_line(
                    &mut out,
                    &IdLine {
                        upstream_name: tool.upstream_name(),
                        server: tool.server(),
                        tool_id: id.as_str(),
                        mcp_name: tool.mcp_name(),
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
            check(&catalog, input);
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
        ToolsCommand::Discovery(discovery) => {
            let catalog = load(&discovery.input)?;
            check(&catalog, &discovery.input);
            let names = match discovery.names.as_str() {
                "canonical" => NameEncoding::Canonical,
                "percent" => NameEncoding::PercentEncoded,
                _ => NameEncoding::Mcp,
            };
            json_line(&mut out, &json!({ "tools": catalog.discovery(names) }));
        }
        ToolsCommand::Browse(browse) => {
            let catalog = load(&browse.input)?;
            check(&catalog, &browse.input);
            let mut request = match (&browse.query, &browse.path) {
                (Some(query), None) => BrowseRequest::query(query.clone()),
                (None, Some(path)) => BrowseRequest::path(path.clone()),
                _ => {
                    return Err(CliError::Usage(
                        "give exactly one of --query and --path".into(),
                    ))
                }
            };
            if let Some(k) = browse.top_k {
                request = request.with_top_k(k.into());
            }
            if let Some(cursor) = &browse.cursor {
                request = request.with_cursor(cursor.clone());
            }
            let response = catalog.browse(&request)?;
            if args.json {
                json_line(&mut out, &response.to_json());
            } else {
                out.extend_from_slice(response.text().as_bytes());
            }
        }
        ToolsCommand::Hydrate(hydrate) => {
            let catalog = load(&hydrate.input)?;
            check(&catalog, &hydrate.input);
            json_line(&mut out, &catalog.hydrate(&hydrate.tool_id)?);
        }
        ToolsCommand::Validate(validate) => {
            let arguments: Value =
                serde_json::from_str(&validate.args).map_err(|source| CliError::InvalidJson {
                    what: "--args".into(),
                    source,
                })?;
            let catalog = load(&validate.input)?;
            check(&catalog, &validate.input);
            catalog.validate_args(&validate.tool_id, &arguments)?;
            if args.json {
                json_line(&mut out, &json!({ "ok": true }));
            } else {
                out.extend_from_slice(b"ok\n");
            }
        }
        ToolsCommand::ParseId { id } => {
            let parsed = ToolId::parse(id)
                .or_else(|e| ToolId::from_mcp_name(id).map_err(|_| e))
                .or_else(|e| {
                    if id.contains('%') {
                        ToolId::from_percent_encoded(id)
                    } else {
                        Err(e)
                    }
                })?;
            json_line(
                &mut out,
                &Parts {
                    namespace: parsed.namespace(),
                    name: parsed.name(),
                    version: parsed.version(),
                    hash8: parsed.hash8(),
                    tool_id: parsed.as_str(),
                    mcp_name: parsed.to_mcp_name(),
                },
            );
        }
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(CliError::Write(e)),
        _ => {}
    }
    match strict_failure {
        Some(n) => Err(CliError::Invalid(format!(
            "--strict: {n} tool{} skipped",
            if n == 1 { " was" } else { "s were" }
        ))),
        None => Ok(()),
    }
}

/// Reads every input into one catalog: the `--server NAME=FILE` inputs in the order given,
/// then FILE (or standard input) unless only `NAME=FILE` inputs were given.
fn load(input: &Input) -> Result<Catalog, CliError> {
    let mut named = Vec::new();
    let mut bare: Option<&str> = None;
    for server in &input.server {
        match server.split_once('=') {
            Some((name, file)) if !name.is_empty() && !file.is_empty() => {
                named.push((name, PathBuf::from(file)));
            }
            Some(_) => {
                return Err(CliError::Usage(format!(
                    "--server {server:?}: expected NAME=FILE or NAME"
                )))
            }
            None if bare.is_some() => {
                return Err(CliError::Usage(
                    "--server NAME (without =FILE) may be given once: it names the server of FILE or standard input".into(),
                ))
            }
            None => bare = Some(server),
        }
    }
    let stdin_uses = named.iter().filter(|(_, f)| f.as_os_str() == "-").count()
        + usize::from(
            (input.file.is_none() || input.file.as_deref() == Some("-".as_ref()))
                && (named.is_empty() || input.file.is_some() || bare.is_some()),
        );
    if stdin_uses > 1 {
        return Err(CliError::Usage(
            "standard input can be read once: give the other inputs as files".into(),
        ));
    }
    let mut builder = CatalogBuilder::new();
    for (name, file) in &named {
        add(&mut builder, Some(name), Some(file))?;
    }
    if named.is_empty() || input.file.is_some() || bare.is_some() {
        add(&mut builder, bare, input.file.as_deref())?;
    }
    Ok(builder.build()?)
}

fn add(
    builder: &mut CatalogBuilder,
    server: Option<&str>,
    file: Option<&std::path::Path>,
) -> Result<(), CliError> {
    let text = input::read_text(file)?;
    builder
        .add_tools_list_str(server, &text)
        .map_err(|error| CliError::ToolsInput {
            what: input::name(file),
            error,
        })?;
    Ok(())
}

/// Prints each skipped tool on standard error: one line of text, or its JSON report.
fn report_skipped(catalog: &Catalog, json: bool) {
    let mut stderr = std::io::stderr().lock();
    for skipped in catalog.skipped() {
        let line = if json {
            json!({ "skipped": skipped.to_json() }).to_string()
        } else {
            format!("agentwire: {}", one_line(&skipped.to_string()))
        };
        let _ = writeln!(stderr, "{line}");
    }
}

/// An error as one JSON line: a toolcard error in its §3.4 shape (with the input it came
/// from in `details.input`), any other error in the same shape with a code of the command's
/// own (`USAGE`, `READ_FAILED`, `INPUT_INVALID`).
fn error_json(error: &CliError) -> String {
    match error {
        CliError::Toolcard(e) => e.to_json_string(),
        CliError::ToolsInput { what, error } => {
            let mut value = error.to_json();
            if let Some(details) = value.get_mut("details").and_then(Value::as_object_mut) {
                details.insert("input".into(), Value::String(what.clone()));
            }
            // `error`, `message`, `path`, `details`, whatever the map's order.
            format!(
                "{{\"error\":{},\"message\":{},\"path\":{},\"details\":{}}}",
                value["error"], value["message"], value["path"], value["details"]
            )
        }
        other => {
            let code = match other {
                CliError::Usage(_) => "USAGE",
                CliError::Read { .. } | CliError::Stdin(_) | CliError::ReadInput { .. } => {
                    "READ_FAILED"
                }
                _ => "INPUT_INVALID",
            };
            format!(
                "{{\"error\":\"{code}\",\"message\":{},\"path\":\"\",\"details\":{{}}}}",
                Value::String(one_line(&other.to_string()))
            )
        }
    }
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn json_line(out: &mut Vec<u8>, value: &impl Serialize) {
    // Serializing these plain values cannot fail.
    if serde_json::to_writer(&mut *out, value).is_ok() {
        out.push(b'\n');
    }
}

// The default page size is part of the help text above; keep them in step.
const _: () = assert!(DEFAULT_PAGE_SIZE == 20);
