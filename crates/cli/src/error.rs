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
    /// An input (named by `what`: a file or standard input) failed while being read.
    #[error("cannot read {what}: {source}")]
    ReadInput { what: String, source: io::Error },
    /// The input is empty, so there is no format to detect.
    #[error("{what} is empty: there is no payload to detect the format of (use --from)")]
    Empty { what: String },
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteFile { path: PathBuf, source: io::Error },
    /// The input is not the JSON a command expects.
    #[error("{what} is not valid JSON: {source}")]
    InvalidJson {
        what: String,
        source: serde_json::Error,
    },
    /// A payload could not be decoded; the message carries the codec's code and position.
    #[error("{what} is not valid {format}: {message}")]
    Decode {
        what: String,
        format: &'static str,
        message: String,
    },
    /// A value could not be encoded.
    #[error("cannot encode as {format}: {message}")]
    Encode {
        format: &'static str,
        message: String,
    },
    /// The input does not have the shape a GCX1 layout or the GCF graph model needs.
    #[error("the input does not fit {target}: {message}")]
    Shape { target: String, message: String },
    /// A GCF operation failed on valid input (`agentwire gcf`): a root that does not verify, a
    /// value the wire cannot carry; the message carries the codec's code.
    #[error("{what}: {message}")]
    Gcf { what: String, message: String },
    /// `agentwire validate` found an error: the message, then the offending line with a caret.
    #[error("{0}")]
    Invalid(String),
    /// A scorecard corpus could not be read.
    #[error("{0}")]
    Corpus(String),
    /// An `exec` turn failed after it started (the events say how).
    #[error(transparent)]
    Exec(#[from] crate::exec::ExecError),
    /// `agentwire mcp` failed: its configuration, its upstream, its session.
    #[error("{0}")]
    Mcp(Box<agentwire_mcp::Error>),
    /// The async runtime of `agentwire mcp` could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    /// `agentwire mcp --listen` could not bind its address.
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: String, source: io::Error },
    /// A tool catalog, tool_id or browse request was rejected by `agentwire-toolcard`;
    /// printed as `CODE: message` (or `CODE at line L, column C: message`) on one line.
    #[error("{}", one_line(&.0.to_string()))]
    Toolcard(#[from] agentwire_toolcard::Error),
    /// A `tools/list` input of `agentwire tools` is not one; printed as
    /// `<input>: CODE at line L, column C: message`.
    #[error("{what}: {}", one_line(&.error.to_string()))]
    ToolsInput {
        what: String,
        error: agentwire_toolcard::Error,
    },
    /// The subcommand already reported the error on standard error (as JSON); exit with
    /// this status without printing more.
    #[error("")]
    Reported(u8),
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
            CliError::Reported(code) => *code,
            CliError::Exec(e) => e.exit_code(),
            _ => 1,
        }
    }
}
