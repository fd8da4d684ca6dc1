//! `agentwire`: convert, inspect and measure the wire formats AI agents read and write.
//!
//! Exit codes: 0 success, 1 bad input or failure, 2 usage error. Errors are one line on
//! standard error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod codec;
mod count;
mod decode;
mod encode;
mod error;
mod exec;
mod input;
mod json_cmp;
mod output;
mod scorecard;
mod tools;
mod validate;

use error::CliError;

/// Convert, inspect and measure agent wire formats.
#[derive(Debug, Parser)]
#[command(name = "agentwire", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert JSON to GCF, GCX1, TOON or JSON.
    Encode(encode::Args),
    /// Convert GCF, GCX1 or TOON (detected by header) to JSON.
    Decode(decode::Args),
    /// Count the tokens of a text.
    Count(count::Args),
    /// Check a GCF, GCX1, TOON or JSON payload; print `ok` or the error with its position.
    Validate(validate::Args),
    /// Measure every format on a corpus of tool responses: bytes, tokens, round trips.
    Scorecard(scorecard::Args),
    /// Send one turn to a model with JSON-Schema tools; print its events as JSONL.
    Exec(Box<exec::Args>),
    /// Tool ids, ChoiceCards and tool_browse over an MCP tools/list result.
    Tools(tools::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors exit with 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Encode(args) => encode::run(&args),
        Command::Decode(args) => decode::run(&args),
        Command::Count(args) => count::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Scorecard(args) => scorecard::run(&args),
        Command::Exec(args) => exec::run(&args),
        Command::Tools(args) => tools::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentwire: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
