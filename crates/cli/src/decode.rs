//! `agentwire decode`: GCF, GCX1 or TOON to JSON.

use std::io::Read;
use std::path::PathBuf;

use crate::codec::{self, Format};
use crate::{input, output, CliError};

/// The format `decode` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum From {
    /// Detect by header: `GCF ...` is GCF, `GCX...` is GCX1, JSON is passed through, anything
    /// else is TOON.
    Auto,
    /// GCF, either profile, any version from v3.1 (see --spec).
    Gcf,
    /// GCX1: every payload, ours or Gortex's, back to the JSON it was written from.
    Gcx1,
    /// TOON.
    Toon,
}

/// Arguments of `agentwire decode`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
GCF and GCX1 are read a line at a time: a line past the limit fails before it is kept, and
comment lines are never kept; GCX1 and GCF graph payloads hold one line and the value being
built, the GCF generic profile the payload's other lines until the value is built.

--stream writes one JSON value per line (JSON Lines) as the rows are read, holding one row:
  GCF   the payload must be one array: a table `## [N]{fields}` / `## [?]{fields}`, or an
        object whose first member is one (`## key [N]{fields}`, what `encode --stream`
        writes); a list of `@N` items (`## [N]`) gives one item per line, an inline array
        (`## [N]: a,b`) one value per line. A keyed map (`## [N:]{key,fields}`,
        `## name [?:]{key,fields}`, root or first member) gives one line per entry,
        {\"key\": KEY, \"value\": VALUE} (jq's to_entries shape: `jq -s from_entries` rebuilds
        the map); its keys are kept to report a repeated one. Anything else (another member
        after it, an object, a graph payload) is an error (not_a_table): decode it without
        --stream. The declared count, or a `[?]` count against the `##! summary` trailer, is
        checked at the end; rows before an error have been written by then, and the exit
        status is 1.
  GCX1  every data row of every section, in order, each as the object the row decoder gives.

Limits: every decoder limit has a flag (--max-line-length, --max-depth, --max-elements,
--max-fields, --max-input-size); unset, each is the library's default, except that the CLI
reads any number of elements and fields (declared counts never size an allocation, and a
field list is bounded by its line). `agentwire encode`
refuses a payload with a line longer than the decoders' default line limit unless given the
same --max-line-length, so with default settings decode reads everything encode writes.")]
pub(crate) struct Args {
    /// The input format.
    #[arg(long, value_enum, default_value = "auto")]
    from: From,
    /// Pretty-print the JSON with two-space indentation.
    #[arg(long)]
    pretty: bool,
    /// GCF: the spec version to read by where versions read the same bytes differently (a
    /// field named `a>b`, `-0`, integers beyond 64 bits); `3.6`, the current spec, reads what
    /// every version writes.
    #[arg(long, default_value = "3.6", value_parser = parse_spec)]
    spec: agentwire_gcf::Spec,
    /// GCF and GCX1 tables: write one JSON row per line as the rows are read (see below).
    #[arg(long)]
    stream: bool,
    #[command(flatten)]
    limits: crate::stream::LimitArgs,
    /// The payload to decode; standard input when omitted or `-`.
    file: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let (reader, what) = input::open(args.file.as_deref())?;
    let (first_line, mut reader) =
        codec::peek_first_line(reader).map_err(|e| read_error(args, e))?;
    if args.from == From::Auto && first_line.is_empty() {
        // Empty text is an empty TOON document, `{}`; but nothing to detect is more likely a
        // producer that failed. `--from toon` reads it as TOON.
        return Err(CliError::Empty { what });
    }
    let format = match args.from {
        From::Auto => codec::detect(&first_line),
        From::Gcf => Format::Gcf,
        From::Gcx1 => Format::Gcx1,
        From::Toon => Format::Toon,
    };
    if args.stream {
        if args.pretty {
            return Err(CliError::Usage(
                "--pretty does not apply to --stream".into(),
            ));
        }
        return crate::stream::decode_rows(
            format,
            &first_line,
            reader,
            &what,
            &args.limits.gcf(args.spec),
            args.limits.gcx1(),
        );
    }
    if format == Format::Gcf && codec::is_graph(&first_line) {
        // Written as it is serialized: no JSON tree of the graph is built beside it.
        let opts = args.limits.gcf(args.spec);
        let graph = codec::decode_graph_with(&first_line, reader, &what, &opts)?;
        return output::print_json(&graph, args.pretty);
    }
    let value = match format {
        Format::Gcf => {
            codec::decode_gcf_with(&first_line, reader, &what, &args.limits.gcf(args.spec))?
        }
        Format::Gcx1 => codec::decode_gcx1_with(reader, &what, args.limits.gcx1())?,
        Format::Json => codec::read_json(reader, &what)?,
        Format::Toon => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| read_error(args, e))?;
            let text = String::from_utf8(bytes).map_err(|e| CliError::NotUtf8 {
                what: what.clone(),
                offset: e.utf8_error().valid_up_to(),
            })?;
            codec::decode_toon(&text, &what)?
        }
    };
    output::print_json(&value, args.pretty)
}

fn parse_spec(s: &str) -> Result<agentwire_gcf::Spec, String> {
    s.parse()
        .map_err(|e: agentwire_gcf::Error| e.message().to_owned())
}

fn read_error(args: &Args, source: std::io::Error) -> CliError {
    match &args.file {
        Some(path) if path.as_os_str() != "-" => CliError::Read {
            path: path.clone(),
            source,
        },
        _ => CliError::Stdin(source),
    }
}
