//! `agentwire encode`: JSON to GCF, GCX1, TOON or JSON, or the cheapest of them.

use std::path::PathBuf;

use agentwire_tokens::Tokenizer;
use serde_json::Value;

use crate::codec::{self, Format};
use crate::{input, json_cmp, output, CliError};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum To {
    /// The fewest tokens of GCF, GCX1, TOON and compact JSON that decodes back to the input:
    /// the choice `agentwire mcp` makes for each tool result.
    Auto,
    /// GCF, the current spec (generic profile; graph profile with `--graph`).
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
The input is JSON, read exactly: numbers keep every digit, and an object that names a member
twice is an error (with its line and column). The output is written to standard output.

What is kept: every member, string, literal and number. Before anything is written the output
is decoded again and compared with the input; a value the format cannot carry (an integer
beyond 2^53 or `1e-400` in TOON, say) is an error, never a silent change. Member order is kept
for objects; the rows of a table (GCF and GCX1 tables, TOON's tabular arrays) share the table's
columns, the members of all its rows in order of first appearance, so a row whose members came
in another order is written, and decodes, in column order.

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
edgeType}]}) and writes the graph profile; scores travel with two decimals.

GCF (generic profile) is written canonically by the current spec (3.6: v3.5.3 with constant
columns, as gcf-python 2.8.0 and the gcf crate 3.1.0 write it) unless --spec 3.1 asks for the
v3.1 bytes. Integers beyond the signed 64-bit range are an error in the current spec (model
them as strings, or use --spec 3.1). --fewest-tokens chooses, per table and section, among the
encodings the current grammar allows the one with the fewest tokens for --tokenizer (o200k by
default); any current decoder reads it, and it never has more tokens than the canonical one.

--to auto writes whichever of GCF, GCX1 (generic, under --tool or `response`), TOON and compact
JSON has the fewest --tokenizer tokens and decodes back to the same JSON; `agentwire decode`
tells which from the first line and reads it back.")]
pub(crate) struct Args {
    /// The output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    to: To,
    /// GCX1: the tool whose per-tool layout to use, or the generic fallback's tool name (with
    /// auto, the name in a GCX1 header). With --to gcx1, members are written in the input's
    /// order or sorted (as Gortex writes them), whichever costs fewer tokens.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// auto and GCF --fewest-tokens: the tokenizer that counts, o200k (o200k_base, the
    /// default) or cl100k (cl100k_base); GCX1 --tool counts with both unless it is given.
    #[arg(long, value_parser = crate::count::parse_tokenizer, value_name = "TOKENIZER")]
    tokenizer: Option<Tokenizer>,
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
    /// GCF and GCX1: read JSON Lines (one row object per line) and write a streaming
    /// payload as they arrive, one row in memory: GCF a root table `## [?]{fields}` and its
    /// `##! summary counts=N` trailer (the fields are --fields, or the first row's members; a
    /// later row with another member is an error; v3.1 with --spec 3.1); GCX1 through its row writer (sections as
    /// the rows' shapes change). `decode --stream` reads it back a row at a time. On an error
    /// the output stops there, without a GCF trailer, so a decoder reports it truncated.
    #[arg(long)]
    stream: bool,
    /// --stream to GCF: the table's fields, comma-separated (default: the first row's).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    fields: Option<Vec<String>>,
    /// --stream to GCF: read a map's entries, one `{"key": KEY, "value": {...}}` per line
    /// (what `decode --stream` writes for a keyed map, jq's `to_entries` shape), and write a
    /// keyed map `## [?:]{key,fields}` (the value fields are --fields, or the first value's
    /// members); a repeated key is an error. Current spec only (v3.1 has no keyed maps).
    #[arg(long)]
    keyed: bool,
    /// GCF and GCX1: write lines up to this many bytes; past it encoding fails, since the
    /// decoders' default limit (GCF 1 MiB, GCX1 4 MiB) would refuse them. Decode such output
    /// with the same --max-line-length.
    #[arg(long, value_name = "BYTES")]
    max_line_length: Option<usize>,
    /// The JSON to encode; standard input when omitted or `-`.
    file: Option<PathBuf>,
}

/// The decoders' default line limit for `format`, or --max-line-length.
fn line_limit(args: &Args, format: Format) -> usize {
    args.max_line_length.unwrap_or(match format {
        Format::Gcx1 => agentwire_gcx1::Limits::default().max_line_length,
        _ => agentwire_gcf::Limits::DEFAULT.max_line_length,
    })
}

/// Fails when `text` has a line its decoder would refuse by length.
fn check_line_lengths(args: &Args, format: Format, text: &str) -> Result<(), CliError> {
    let limit = line_limit(args, format);
    for (i, line) in text.split('\n').enumerate() {
        let len = line.strip_suffix('\r').unwrap_or(line).len();
        if len > limit {
            return Err(CliError::Encode {
                format: format.name(),
                message: format!(
                    "line {} of the output is {len} bytes, beyond the decoders' line limit of \
                     {limit} bytes: pass --max-line-length {len} (to decode as well) to write it",
                    i + 1
                ),
            });
        }
    }
    Ok(())
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    if args.tool.is_some() && !matches!(args.to, To::Gcx1 | To::Auto) {
        return Err(CliError::Usage(
            "--tool applies to --to gcx1 and --to auto only".into(),
        ));
    }
    if args.graph && args.to != To::Gcf {
        return Err(CliError::Usage("--graph applies to --to gcf only".into()));
    }
    if args.pretty && args.to != To::Json {
        return Err(CliError::Usage("--pretty applies to --to json only".into()));
    }
    let options = gcf_options(args)?;
    let spec = args.spec.unwrap_or(agentwire_gcf::Spec::LATEST);
    let (reader, what) = input::open(args.file.as_deref())?;
    if args.fields.is_some() && !(args.stream && args.to == To::Gcf) {
        return Err(CliError::Usage(
            "--fields applies to --stream --to gcf only".into(),
        ));
    }
    if args.keyed && !(args.stream && args.to == To::Gcf) {
        return Err(CliError::Usage(
            "--keyed applies to --stream --to gcf only".into(),
        ));
    }
    if args.stream {
        let target = match args.to {
            To::Gcf if args.graph => {
                return Err(CliError::Usage(
                    "--stream writes the generic profile: not with --graph".into(),
                ))
            }
            To::Gcf if args.fewest_tokens => {
                return Err(CliError::Usage(
                    "--fewest-tokens chooses among a whole payload's encodings: not with --stream"
                        .into(),
                ))
            }
            To::Gcf if args.keyed && spec == agentwire_gcf::Spec::V3_1 => {
                return Err(CliError::Usage(
                    "--keyed writes a keyed map `[?:]`, current-spec syntax that v3.1 does not \
                     read: not with --spec 3.1"
                        .into(),
                ))
            }
            To::Gcf if args.keyed => crate::stream::Target::GcfKeyed,
            To::Gcf => crate::stream::Target::Gcf(spec),
            To::Gcx1 => crate::stream::Target::Gcx1,
            _ => {
                return Err(CliError::Usage(
                    "--stream writes --to gcf (the generic profile) or --to gcx1".into(),
                ))
            }
        };
        let format = match target {
            crate::stream::Target::Gcf(_) | crate::stream::Target::GcfKeyed => Format::Gcf,
            crate::stream::Target::Gcx1 => Format::Gcx1,
        };
        return crate::stream::encode_rows(
            target,
            reader,
            &what,
            args.fields.as_deref(),
            args.tool.as_deref(),
            line_limit(args, format),
        );
    }
    let value = codec::read_json(reader, &what)?;
    // The decoders' limits the output must stay within (and is read back with).
    let limits = crate::stream::LimitArgs {
        max_line_length: args.max_line_length,
        ..Default::default()
    };
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
        To::Gcx1 => {
            let text = match args.tool.as_deref() {
                Some(tool) => gcx1_fewest_tokens(tool, &value, args.tokenizer, limits.gcx1())?,
                None => codec::encode_gcx1(None, &value, limits.gcx1())?,
            };
            check_line_lengths(args, Format::Gcx1, &text)?;
            check_lossless(Format::Gcx1, &text, &value, spec, &limits)?;
            output::print(&text)
        }
        To::Toon => {
            let mut text = codec::encode_toon(&value)?;
            check_lossless(Format::Toon, &text, &value, spec, &limits)?;
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
        To::Gcf => {
            let text = codec::encode_gcf_with(&value, &options)?;
            check_line_lengths(args, Format::Gcf, &text)?;
            check_lossless(Format::Gcf, &text, &value, spec, &limits)?;
            output::print(&text)
        }
    }
}

/// `value` as GCX1 under `tool`, its members in the input's order or sorted (as Go's
/// `encoding/json` and Gortex's encoder write them), whichever costs fewer tokens: with
/// `--tokenizer`, its count; otherwise cl100k_base's and o200k_base's together (a tie keeps
/// the input's order). The column order is the only difference: both read back as `value`.
fn gcx1_fewest_tokens(
    tool: &str,
    value: &Value,
    tokenizer: Option<Tokenizer>,
    limits: agentwire_gcx1::Limits,
) -> Result<String, CliError> {
    let as_given = codec::encode_gcx1(Some(tool), value, limits)?;
    let mut sorted_value = value.clone();
    sorted_value.sort_all_objects();
    let Ok(sorted) = codec::encode_gcx1(Some(tool), &sorted_value, limits) else {
        return Ok(as_given);
    };
    if sorted == as_given {
        return Ok(as_given);
    }
    let cost = |text: &str| match tokenizer {
        Some(tokenizer) => tokenizer.count(text),
        None => Tokenizer::Cl100kBase.count(text) + Tokenizer::O200kBase.count(text),
    };
    Ok(if cost(&sorted) < cost(&as_given) {
        sorted
    } else {
        as_given
    })
}

/// Fails unless `text`, the `format` encoding of `value`, decodes to `value` again: the same
/// members (in any order), strings and literals, and numbers that keep their value (see
/// [`json_cmp::numbers_equal`]). A value the format cannot carry (TOON rounds an integer
/// beyond 2^53 and `1e-400` to a double, for example) is an error, never a silent change.
fn check_lossless(
    format: Format,
    text: &str,
    value: &Value,
    spec: agentwire_gcf::Spec,
    limits: &crate::stream::LimitArgs,
) -> Result<(), CliError> {
    let what = format!("the {} output", format.name());
    let first_line = text.split_inclusive('\n').next().unwrap_or("").as_bytes();
    let decoded = match format {
        Format::Gcf => {
            codec::decode_gcf_with(first_line, text.as_bytes(), &what, &limits.gcf(spec))?
        }
        Format::Gcx1 => codec::decode_gcx1_with(text.as_bytes(), &what, limits.gcx1())?,
        Format::Toon => codec::decode_toon(text, &what)?,
        Format::Json => return Ok(()),
    };
    match json_cmp::first_difference(value, &decoded, json_cmp::Numbers::Value) {
        None => Ok(()),
        Some(difference) => Err(CliError::Encode {
            format: format.name(),
            message: format!("it cannot carry this input losslessly: {difference}"),
        }),
    }
}

/// The generic-profile encoder options of `--spec`, `--fewest-tokens` and `--tokenizer`.
fn gcf_options(args: &Args) -> Result<agentwire_gcf::EncoderOptions, CliError> {
    let generic = args.to == To::Gcf && !args.graph;
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
    if args.tokenizer.is_some() && !args.fewest_tokens && args.to != To::Auto {
        return Err(CliError::Usage(
            "--tokenizer applies to --to auto and --fewest-tokens only".into(),
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
        let tokenizer = args.tokenizer.unwrap_or(Tokenizer::O200kBase);
        options = options.fewest_tokens(tokenizer);
    }
    Ok(options)
}

fn parse_spec(s: &str) -> Result<agentwire_gcf::Spec, String> {
    s.parse()
        .map_err(|e: agentwire_gcf::Error| e.message().to_owned())
}
