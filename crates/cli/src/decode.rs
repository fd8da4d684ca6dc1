//! `agentwire decode`: GCF, GCX1 or TOON to JSON.

use std::io::Read;
use std::path::PathBuf;

use crate::codec::{self, Format};
use crate::gcx1_limits::Gcx1Limits;
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
    #[command(flatten)]
    gcx1_limits: Gcx1Limits,
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
    if args.gcx1_limits.any() && format != Format::Gcx1 {
        return Err(CliError::Usage(format!(
            "the --gcx1-max-* flags apply to GCX1 payloads; {what} is {}",
            format.name()
        )));
    }
    let value = match format {
        Format::Gcf => codec::decode_gcf(&first_line, reader, &what, args.spec)?,
        Format::Gcx1 => codec::decode_gcx1(reader, &what, args.gcx1_limits.limits())?,
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
