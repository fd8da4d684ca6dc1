//! An MCP proxy that puts agentwire's codecs in the agent's path.
//!
//! `agentwire-mcp` sits between an MCP client (the agent) and an MCP server and passes
//! everything through unchanged in both directions — `initialize` and capabilities, tool,
//! resource and prompt lists and calls, notifications, the server's requests to the client,
//! errors — except tool results: a text item whose text is a JSON object or array is replaced
//! by its encoding in a cheaper format (GCF, GCX1, TOON or compact JSON; the cheapest per
//! result by default) when that saves enough tokens. It is built on
//! [`rmcp`](https://docs.rs/rmcp), the official Rust MCP SDK, and tokio; the `agentwire mcp`
//! command is this crate behind a command line.
//!
//! | type | for |
//! |---|---|
//! | [`Proxy`], [`ProxyOptions`] | serving a client over stdio, any byte stream, or streamable HTTP (`http` feature) |
//! | [`ServerSpec`], [`Endpoint`], [`Config`] | the upstream: a command, a URL, or `[servers.<name>]` in a TOML file |
//! | [`Reencoder`], [`EncodeOptions`], [`Format`] | the re-encoding on its own: the cheapest encoding of a value |
//! | [`detect`], [`decode`], [`Encoding`] | reading back whatever the proxy wrote |
//! | [`CallRecord`], [`Summary`] | per-call statistics (`--stats` JSON Lines) and the totals |
//! | [`Error`], [`ErrorKind`] | the one error type, in the shape of every agentwire crate |
//!
//! # Example
//!
//! A proxy in front of a server, driven over an in-memory pipe (a real client would spawn
//! `agentwire mcp -- <server command>` and speak to its stdin and stdout):
//!
//! ```no_run
//! use agentwire_mcp::{EncodeOptions, Format, Proxy, ProxyOptions, ServerSpec};
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ServerSpec::command("memory", "npx", ["-y", "@modelcontextprotocol/server-memory"]);
//! let options = ProxyOptions::new().encode(EncodeOptions::new().format(Format::Auto));
//! let proxy = Proxy::new(server, options)?;
//!
//! let (client, proxy_side) = tokio::io::duplex(1 << 20);
//! let (proxy_in, proxy_out) = tokio::io::split(proxy_side);
//! let serving = proxy.serve(proxy_in, proxy_out, std::future::pending());
//! let talking = async {
//!     let (reader, mut writer) = tokio::io::split(client);
//!     writer.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}
//! "#).await?;
//!     let mut lines = BufReader::new(reader).lines();
//!     println!("{}", lines.next_line().await?.unwrap_or_default());
//!     drop(writer); // closing the client's side ends the session and the server
//!     Ok::<_, std::io::Error>(())
//! };
//! let (served, talked) = tokio::join!(serving, talking);
//! talked?;
//! served?;
//! eprintln!("{}", proxy.summary());
//! # Ok(())
//! # }
//! ```
//!
//! The re-encoding alone, without a server:
//!
//! ```
//! use agentwire_mcp::{EncodeOptions, Outcome, Reencoder};
//!
//! let reencoder = Reencoder::new(EncodeOptions::new())?;
//! let entities: Vec<_> = (0..25)
//!     .map(|i| serde_json::json!({"name": format!("entity-{i}"), "entityType": "person", "observations": ["likes tea"]}))
//!     .collect();
//! let text = serde_json::to_string_pretty(&serde_json::json!({"entities": entities, "relations": []})).unwrap();
//! let Outcome::Replaced { before, choice } = reencoder.reencode_text(&text, "read_graph") else {
//!     unreachable!("a pretty-printed graph of 25 entities always saves tokens")
//! };
//! assert!(choice.tokens < before);
//! let (encoding, value) = agentwire_mcp::decode(&choice.text)?;
//! assert_eq!(encoding, choice.encoding);
//! assert_eq!(value, serde_json::from_str::<serde_json::Value>(&text).unwrap());
//! # Ok::<(), agentwire_mcp::Error>(())
//! ```
//!
//! # Cargo features
//!
//! - `http`: upstreams by URL and [`Proxy::serve_http`] (streamable HTTP; reqwest with
//!   rustls and ring, hyper).
//! - `toon`: TOON as a format, through the reference `toon-format` crate. That crate turns on
//!   serde_json's `preserve_order` and `float_roundtrip` for the whole build (Cargo unifies
//!   features), which a library should not impose, so it is opt-in. The `agentwire` command
//!   turns both features on.
//!
//! Without `preserve_order` in the build, JSON texts are parsed into sorted maps, so an
//! encoding lists object members in key order; with it (as in the `agentwire` command), in
//! the server's order. The values are the same either way.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod config;
mod encoding;
mod error;
#[cfg(feature = "http")]
mod http;
mod jsonrpc;
mod proxy;
mod route;
mod stats;
mod stdio;
mod upstream;

pub use config::{Config, Endpoint, ServerSpec};
pub use encoding::{decode, detect, Choice, EncodeOptions, Encoding, Format, Outcome, Reencoder};
pub use error::{Error, ErrorKind};
pub use proxy::{Proxy, ProxyOptions};
pub use stats::{CallRecord, CallStatus, Summary};
