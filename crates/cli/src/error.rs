//! The command's error type and its exit codes.

use std::io;
use std::path::PathBuf;

/// Everything a subcommand can fail with; `Display` is the one line printed on stderr.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// An input file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    /// Standard input could not be read.
    #[error("cannot read standard input: {0}")]
    Stdin(io::Error),
    /// The input is not UTF-8 text.
    #[error("{what} is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 { what: String, offset: usize },
    /// Standard output could not be written (other than a closed pipe).
    #[error("cannot write output: {0}")]
    Write(io::Error),
    /// A usage error found after argument parsing (for example two flags that conflict in a
    /// way clap cannot express); exits with status 2 like clap's own usage errors.
    #[allow(dead_code)] // used by subcommands that validate their arguments themselves
    #[error("{0}")]
    Usage(String),
    /// An `exec` turn failed after it started (the events say how).
    #[error(transparent)]
    Exec(#[from] crate::exec::ExecError),
    /// A tool catalog, tool_id or browse request was rejected by `agentwire-toolcard`;
    /// printed as `CODE: message` on one line.
    #[error("{}: {}", .0.code(), one_line(&.0.to_string()))]
    Toolcard(#[from] agentwire_toolcard::Error),
}

/// Error text on a single line: line breaks become spaces.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

impl CliError {
    /// The process exit status for this error: 2 for usage errors, 1 for bad input and
    /// failures. (clap reports its own usage errors, also with 2, before a subcommand runs.)
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }
}
