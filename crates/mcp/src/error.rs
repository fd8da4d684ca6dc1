//! The crate's one error type, in the shape every agentwire library crate shares
//! (`docs/errors.md`): a stable code, an optional 1-based line and column, and a message.

use std::fmt;
use std::io;

/// Everything the runtime can fail with.
///
/// [`code`](Error::code) is stable; [`line`](Error::line) and [`column`](Error::column) point
/// into the configuration file or the payload being decoded when the error is about one of
/// them, and are `None` otherwise. `Display` is `code at line L, column C: message`,
/// `code at line L: message` or `code: message`.
///
/// ```
/// let err = agentwire_mcp::Config::from_toml("[servers.a]\ncommand = 1\n").unwrap_err();
/// assert_eq!((err.code(), err.line(), err.column()), ("config_invalid", Some(2), Some(11)));
/// assert!(err.to_string().starts_with("config_invalid at line 2, column 11: "));
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    line: Option<u64>,
    column: Option<u64>,
}

/// What went wrong; one variant per [`Error::code`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `config_invalid`: the configuration is not valid TOML, has a member the schema does not
    /// know, or describes a server that cannot be started (no `command` and no `url`, both,
    /// several servers where one is served).
    Config(String),
    /// `invalid_options`: options that contradict each other or need a cargo feature this
    /// build lacks (`Format::Toon` without `toon`, a URL without `http`).
    Options(String),
    /// `upstream_spawn`: the upstream command could not be started.
    Spawn {
        /// The command as the user wrote it.
        command: String,
        /// Why the operating system refused.
        source: io::Error,
    },
    /// `upstream_exited`: the upstream server exited or closed its connection.
    UpstreamExited {
        /// The upstream's name.
        upstream: String,
        /// How it ended: an exit status, a signal, or the transport's reason.
        reason: String,
    },
    /// `upstream_timeout`: the upstream stopped answering (requests pending, no message and no
    /// answer to a ping within the timeout).
    UpstreamTimeout {
        /// The upstream's name.
        upstream: String,
        /// The timeout, in seconds.
        seconds: f64,
    },
    /// `upstream_protocol`: the upstream broke the protocol beyond recovery (a message over the
    /// size limit, an `initialize` result that is not one).
    UpstreamProtocol {
        /// The upstream's name.
        upstream: String,
        /// What it sent.
        message: String,
    },
    /// `session_failed`: the session with the client could not start (its first message was
    /// not `initialize`, or the upstream refused the client's `initialize`).
    Session(String),
    /// `encode_failed`: a value could not be written in a format.
    Encode {
        /// The format's name (`gcf`, `gcx1`, `toon`, `json`).
        format: &'static str,
        /// The encoder's message.
        message: String,
    },
    /// `decode_failed`: a payload is not valid in the format its first line names.
    Decode {
        /// The format's name.
        format: &'static str,
        /// The decoder's message, with its own code.
        message: String,
    },
    /// `io`: reading or writing a stream, a file or a socket failed.
    Io {
        /// What was being read or written.
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error {
            kind,
            line: None,
            column: None,
        }
    }

    pub(crate) fn at(kind: ErrorKind, line: Option<u64>, column: Option<u64>) -> Self {
        Error { kind, line, column }
    }

    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::new(ErrorKind::Io {
            what: what.into(),
            source,
        })
    }

    pub(crate) fn options(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Options(message.into()))
    }

    /// The stable code: `config_invalid`, `invalid_options`, `upstream_spawn`,
    /// `upstream_exited`, `upstream_timeout`, `upstream_protocol`, `session_failed`, `encode_failed`,
    /// `decode_failed` or `io`.
    pub fn code(&self) -> &'static str {
        match &self.kind {
            ErrorKind::Config(_) => "config_invalid",
            ErrorKind::Options(_) => "invalid_options",
            ErrorKind::Spawn { .. } => "upstream_spawn",
            ErrorKind::UpstreamExited { .. } => "upstream_exited",
            ErrorKind::UpstreamTimeout { .. } => "upstream_timeout",
            ErrorKind::UpstreamProtocol { .. } => "upstream_protocol",
            ErrorKind::Session(_) => "session_failed",
            ErrorKind::Encode { .. } => "encode_failed",
            ErrorKind::Decode { .. } => "decode_failed",
            ErrorKind::Io { .. } => "io",
        }
    }

    /// The kind, for matching.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The 1-based line in the configuration or payload, when the error has one.
    pub fn line(&self) -> Option<u64> {
        self.line
    }

    /// The 1-based column (in characters), when the error has one.
    pub fn column(&self) -> Option<u64> {
        self.column
    }

    /// The human text, without code or position.
    pub fn message(&self) -> String {
        match &self.kind {
            ErrorKind::Config(message) | ErrorKind::Options(message) => message.clone(),
            ErrorKind::Session(message) => {
                format!("the MCP session with the client failed: {message}")
            }
            ErrorKind::Spawn { command, source } => {
                format!("cannot start the upstream server `{command}`: {source}")
            }
            ErrorKind::UpstreamExited { upstream, reason } => {
                format!("upstream `{upstream}` {reason}")
            }
            ErrorKind::UpstreamTimeout { upstream, seconds } => format!(
                "upstream `{upstream}` stopped answering: no message and no answer to a ping \
                 for {seconds} s while requests were pending"
            ),
            ErrorKind::UpstreamProtocol { upstream, message } => {
                format!("upstream `{upstream}` broke the protocol: {message}")
            }
            ErrorKind::Encode { format, message } => {
                format!("cannot encode as {format}: {message}")
            }
            ErrorKind::Decode { format, message } => format!("not valid {format}: {message}"),
            ErrorKind::Io { what, source } => format!("{what}: {source}"),
        }
    }

    /// Whether reading or writing failed, as opposed to bad data or a misbehaving upstream.
    pub fn is_io(&self) -> bool {
        matches!(self.kind, ErrorKind::Io { .. } | ErrorKind::Spawn { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())?;
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, " at line {line}, column {column}")?,
            (Some(line), None) => write!(f, " at line {line}")?,
            _ => {}
        }
        write!(f, ": {}", self.message())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Spawn { source, .. } | ErrorKind::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<Error> for io::Error {
    fn from(error: Error) -> Self {
        match error.kind {
            ErrorKind::Io { source, .. } | ErrorKind::Spawn { source, .. } => source,
            _ => io::Error::other(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_puts_the_code_first_and_the_position_when_known() {
        let both = Error::at(ErrorKind::Config("bad".into()), Some(3), Some(7));
        assert_eq!(both.to_string(), "config_invalid at line 3, column 7: bad");
        let line = Error::at(ErrorKind::Config("bad".into()), Some(3), None);
        assert_eq!(line.to_string(), "config_invalid at line 3: bad");
        let none = Error::new(ErrorKind::UpstreamExited {
            upstream: "memory".into(),
            reason: "exited with status 1".into(),
        });
        assert_eq!(
            none.to_string(),
            "upstream_exited: upstream `memory` exited with status 1"
        );
        assert_eq!(
            (none.line(), none.column(), none.is_io()),
            (None, None, false)
        );
        let io = Error::io("cannot write the stats file", io::Error::other("disk full"));
        assert!(io.is_io());
        assert_eq!(io.to_string(), "io: cannot write the stats file: disk full");
    }
}
