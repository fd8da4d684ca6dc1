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
//! | [`Mode`] | passthrough, or one catalog of several upstreams as the gateway surface spec's proxy or gateway (`gateway` feature) |
//! | [`ServerSpec`], [`Endpoint`], [`Config`] | the upstream: a command, a URL, or `[servers.<name>]` in a TOML file |
//! | [`Reencoder`], [`EncodeOptions`], [`Format`] | the re-encoding on its own: the cheapest encoding of a value |
//! | [`detect`], [`decode`], [`Encoding`] | reading back whatever the proxy wrote |
//! | [`CallRecord`], [`Summary`] | per-call statistics (`--stats` JSON Lines) and the totals |
//! | [`Error`], [`ErrorKind`] | the one error type, in the shape of every agentwire crate |
//!
//! # Example
//!
//! A proxy in front of a (very small) server, driven over an in-memory pipe; a real client
//! spawns `agentwire mcp -- <server command>` and speaks to its stdin and stdout.
//!
//! ```
//! use agentwire_mcp::{Proxy, ProxyOptions, ServerSpec};
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The server: answers `initialize`, then one `tools/call` with a pretty-printed JSON array.
//! let rows: Vec<_> = (0..20)
//!     .map(|i| serde_json::json!({"id": i, "name": format!("row {i}"), "done": i % 3 == 0}))
//!     .collect();
//! let text = serde_json::to_string_pretty(&rows)?;
//! let result = serde_json::json!({"content": [{"type": "text", "text": text}]});
//! let script = format!(
//!     "read l; printf '%s\\n' '{}'; read l; read l; printf '%s\\n' '{}'; cat >/dev/null",
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"rows","version":"1"}}}"#,
//!     serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": result}),
//! );
//! let proxy = Proxy::new(ServerSpec::command("rows", "sh", ["-c", &script]), ProxyOptions::new())?;
//!
//! let (client, proxy_side) = tokio::io::duplex(1 << 20);
//! let (proxy_in, proxy_out) = tokio::io::split(proxy_side);
//! let serving = proxy.serve(proxy_in, proxy_out, std::future::pending());
//! let talking = async {
//!     let (reader, mut writer) = tokio::io::split(client);
//!     let mut lines = BufReader::new(reader).lines();
//!     writer.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_rows","arguments":{}}}
//! "#).await?;
//!     let _initialized = lines.next_line().await?;
//!     let answer: serde_json::Value = serde_json::from_str(&lines.next_line().await?.unwrap())?;
//!     drop(writer); // the client leaves: the session and the server end
//!     Ok::<_, Box<dyn std::error::Error>>(answer)
//! };
//! let (served, answer) = tokio::join!(serving, talking);
//! served?;
//! let text = answer?["result"]["content"][0]["text"].as_str().unwrap().to_owned();
//! // The same rows, in fewer tokens: whatever format won reads back to the JSON.
//! assert_eq!(agentwire_mcp::decode(&text)?.1, serde_json::json!(rows));
//! let summary = proxy.summary();
//! assert_eq!((summary.calls, summary.reencoded), (1, 1));
//! assert!(summary.tokens_after < summary.tokens_before);
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
//! - `cl100k` (default): cl100k_base as a tokenizer to count with; o200k_base, the default
//!   one, is always there.
//! - `http`: upstreams by URL and `Proxy::serve_http` (streamable HTTP; reqwest with
//!   rustls and ring, hyper).
//! - `gateway`: [`Mode::Proxy`] and [`Mode::Gateway`], through agentwire-toolcard with its
//!   argument validation (the jsonschema crate, which turns on serde_json's `float_roundtrip`
//!   for the whole build, which is why it is opt-in).
//! - `toon`: TOON as a format, through the reference `toon-format` crate. That crate turns on
//!   serde_json's `preserve_order` and `float_roundtrip` for the whole build (Cargo unifies
//!   features), which a library should not impose, so it is opt-in. The `agentwire` command
//!   turns every feature on.
//!
//! Without `preserve_order` in the build, JSON texts are parsed into sorted maps, so an
//! encoding lists object members in key order; with it (as in the `agentwire` command), in
//! the server's order. The values are the same either way.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

#[cfg(feature = "gateway")]
mod catalog;
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
pub use proxy::{Mode, Proxy, ProxyOptions};
pub use stats::{CallRecord, CallStatus, Summary};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
