//! The upstream servers: one from the command line, or several from a TOML file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, ErrorKind};

/// How to reach an upstream MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// A command started as a child process, spoken to over its stdin and stdout. It inherits
    /// the proxy's environment, with `env` added on top.
    Command {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it (added to the inherited ones).
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP server (needs the `http` feature).
    Url(String),
}

/// One upstream server: its name and how to reach it.
///
/// ```
/// use agentwire_mcp::{Endpoint, ServerSpec};
///
/// let spec = ServerSpec::command("memory", "npx", ["-y", "@modelcontextprotocol/server-memory"])
///     .env("MEMORY_FILE_PATH", "/tmp/memory.jsonl");
/// assert_eq!(spec.to_string(), "npx -y @modelcontextprotocol/server-memory");
/// assert!(matches!(spec.endpoint, Endpoint::Command { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerSpec {
    /// The name: the `[servers.<name>]` table, or the program's file name for a command given
    /// on the command line. Messages about the upstream use it.
    pub name: String,
    /// How to reach it.
    pub endpoint: Endpoint,
}

impl ServerSpec {
    /// A server started as `command args…`.
    pub fn command<I, S>(name: impl Into<String>, command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ServerSpec {
            name: name.into(),
            endpoint: Endpoint::Command {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
            },
        }
    }

    /// A server reached over streamable HTTP at `url`.
    pub fn url(name: impl Into<String>, url: impl Into<String>) -> Self {
        ServerSpec {
            name: name.into(),
            endpoint: Endpoint::Url(url.into()),
        }
    }

    /// Adds an environment variable for a command (ignored for a URL).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Endpoint::Command { env, .. } = &mut self.endpoint {
            env.insert(key.into(), value.into());
        }
        self
    }
}

impl fmt::Display for ServerSpec {
    /// The command line (arguments with spaces quoted) or the URL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.endpoint {
            Endpoint::Command { command, args, .. } => {
                f.write_str(command)?;
                for arg in args {
                    if arg.is_empty() || arg.contains(char::is_whitespace) {
                        write!(f, " {arg:?}")?;
                    } else {
                        write!(f, " {arg}")?;
                    }
                }
                Ok(())
            }
            Endpoint::Url(url) => f.write_str(url),
        }
    }
}

/// The configuration file: `[servers.<name>]` tables, each with `command` (and optional `args`
/// and `env`) or `url`.
///
/// ```
/// let config = agentwire_mcp::Config::from_toml(r#"
/// [servers.memory]
/// command = "npx"
/// args = ["-y", "@modelcontextprotocol/server-memory"]
/// env = { MEMORY_FILE_PATH = "/tmp/memory.jsonl" }
///
/// [servers.remote]
/// url = "http://127.0.0.1:3001/mcp"
/// "#)?;
/// let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
/// assert_eq!(names, ["memory", "remote"]);
/// # Ok::<(), agentwire_mcp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Config {
    /// The servers, ordered by name.
    pub servers: Vec<ServerSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    servers: BTreeMap<String, Spanned<RawServer>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
}

impl Config {
    /// Reads a configuration file.
    pub fn from_path(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        Config::from_toml(&text)
    }

    /// Parses a configuration from TOML text. Errors carry the line and column of the
    /// offending key or table.
    pub fn from_toml(text: &str) -> Result<Self, Error> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map_or((None, None), |span| line_column(text, span.start));
            Error::at(
                ErrorKind::Config(e.message().trim().to_owned()),
                line,
                column,
            )
        })?;
        if raw.servers.is_empty() {
            return Err(Error::new(ErrorKind::Config(
                "no servers: add a [servers.<name>] table with `command` or `url`".into(),
            )));
        }
        let mut servers = Vec::with_capacity(raw.servers.len());
        for (name, spanned) in raw.servers {
            let (line, column) = line_column(text, spanned.span().start);
            let invalid =
                |message: String| Err(Error::at(ErrorKind::Config(message), line, column));
            let server = spanned.into_inner();
            let endpoint = match (server.command, server.url) {
                (Some(command), None) => {
                    if command.is_empty() {
                        return invalid(format!("servers.{name}: `command` is empty"));
                    }
                    Endpoint::Command {
                        command,
                        args: server.args,
                        env: server.env,
                    }
                }
                (None, Some(url)) => {
                    if !server.args.is_empty() || !server.env.is_empty() {
                        return invalid(format!(
                            "servers.{name}: `args` and `env` apply to a `command`, not a `url`"
                        ));
                    }
                    Endpoint::Url(url)
                }
                (Some(_), Some(_)) => {
                    return invalid(format!("servers.{name}: give `command` or `url`, not both"))
                }
                (None, None) => {
                    return invalid(format!("servers.{name}: needs `command` or `url`"))
                }
            };
            servers.push(ServerSpec { name, endpoint });
        }
        Ok(Config { servers })
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (Option<u64>, Option<u64>) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() as u64 + 1;
    (Some(line), Some(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_commands_and_urls() {
        let config = Config::from_toml(
            "[servers.b]\nurl = \"http://x/mcp\"\n\n[servers.a]\ncommand = \"node\"\nargs = [\"s.js\", \"a b\"]\nenv = { K = \"v\" }\n",
        )
        .unwrap();
        assert_eq!(config.servers.len(), 2);
        assert_eq!(
            config.servers[0],
            ServerSpec::command("a", "node", ["s.js", "a b"]).env("K", "v")
        );
        assert_eq!(config.servers[0].to_string(), "node s.js \"a b\"");
        assert_eq!(config.servers[1], ServerSpec::url("b", "http://x/mcp"));
    }

    #[test]
    fn errors_point_at_the_problem() {
        let cases = [
            (
                "[servers.a]\ncommand = \"x\"\nport = 3\n",
                (3, 1),
                "unknown field `port`",
            ),
            (
                "[servers.a]\nargs = [\"x\"]\n",
                (1, 1),
                "needs `command` or `url`",
            ),
            (
                "\n[servers.a]\ncommand = \"x\"\nurl = \"y\"\n",
                (2, 1),
                "not both",
            ),
            (
                "[servers.a]\nurl = \"y\"\nenv = { A = \"b\" }\n",
                (1, 1),
                "apply to a `command`",
            ),
            ("[servers.a]\ncommand = \"\"\n", (1, 1), "is empty"),
            ("[servers.a\n", (1, 11), ""),
            ("[proxy]\n", (1, 2), "unknown field `proxy`"),
        ];
        for (text, (line, column), message) in cases {
            let err = Config::from_toml(text).unwrap_err();
            assert_eq!(err.code(), "config_invalid", "{text}");
            assert_eq!(
                (err.line(), err.column()),
                (Some(line), Some(column)),
                "{text}: {err}"
            );
            assert!(err.message().contains(message), "{text}: {err}");
        }
        let empty = Config::from_toml("").unwrap_err();
        assert_eq!((empty.code(), empty.line()), ("config_invalid", None));
    }
}
