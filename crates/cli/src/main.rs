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
mod gcf;
mod gcx1_limits;
mod input;
mod json;
mod json_cmp;
mod mcp;
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
    /// Tool ids, ChoiceCards, tool_browse, hydration and argument checks over MCP tools/list
    /// results.
    Tools(tools::Args),
    /// Run an MCP proxy that re-encodes JSON tool results into fewer tokens.
    Mcp(mcp::Args),
    /// GCF pack roots, deltas and sessions, for graph and generic payloads alike.
    Gcf(gcf::Args),
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
    // A bug (ours or a dependency's) is one line on stderr and status 1, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "agentwire: internal error: {}{location}",
            message.replace('\n', " ")
        );
    }));
    let result = std::panic::catch_unwind(move || match cli.command {
        Command::Encode(args) => encode::run(&args),
        Command::Decode(args) => decode::run(&args),
        Command::Count(args) => count::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Scorecard(args) => scorecard::run(&args),
        Command::Exec(args) => exec::run(&args),
        Command::Tools(args) => tools::run(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Gcf(args) => gcf::run(&args),
    });
    let Ok(result) = result else {
        return ExitCode::FAILURE;
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !matches!(e, CliError::Reported(_)) {
                eprintln!("agentwire: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}
