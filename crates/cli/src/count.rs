//! `agentwire count`: the token count of a text.

use std::io::Write;
use std::path::PathBuf;

use agentwire_tokens::Tokenizer;

use crate::{input, CliError};

/// Arguments of `agentwire count`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The tokenizer: cl100k (cl100k_base) or o200k (o200k_base).
    #[arg(long, default_value = "cl100k", value_parser = parse_tokenizer)]
    tokenizer: Tokenizer,
    /// The text to count; standard input when omitted or `-`.
    file: Option<PathBuf>,
}

pub(crate) fn parse_tokenizer(s: &str) -> Result<Tokenizer, String> {
    s.parse()
        .map_err(|e: agentwire_tokens::Error| e.to_string())
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let text = input::read_text(args.file.as_deref())?;
    let count = args.tokenizer.count(&text);
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{count}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Write(e)),
        _ => Ok(()),
    }
}
