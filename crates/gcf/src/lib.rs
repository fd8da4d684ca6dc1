//! GCF, the Graph Compact Format, from v3.1 to the current spec: graph and generic profiles,
//! sessions, deltas and streaming.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace. GCF cuts the
//! tokens structured data costs an LLM: field names are declared once per table, nesting
//! becomes indentation, and every byte is specified, so an encoded payload decodes back to
//! exactly the value it came from.
//!
//! # The generic profile
//!
//! Any value that implements `Serialize` or `Deserialize` (`serde_json::Value` included),
//! like serde_json: [`to_string`], [`to_writer`], [`from_str`], [`from_slice`],
//! [`from_reader`]; [`EncoderOptions`] and [`DecoderOptions`] for the settings and [`Limits`];
//! [`to_string_value`] for a `serde_json::Value` through the tape; [`GenericStreamEncoder`]
//! for rows that arrive one at a time. The encoder writes the current spec canonically (the
//! bytes of the v3.5.3 fixtures, with v3.6's constant columns, as gcf-python 2.8.0 and the
//! `gcf` crate 3.1.0 write them), v3.1 exactly with [`EncoderOptions::spec`], or the encoding
//! with the fewest tokens for a [`TokenCounter`] with [`EncoderOptions::fewest_tokens`]. The
//! decoder reads every version from v3.1 to the current spec (flattened `a>b` columns, keyed
//! maps `[N:]`, constant columns, value-grouping, the int64 domain), and
//! [`DecoderOptions::spec`] with [`Spec::V3_1`] reads v3.1 where the versions read the same
//! bytes differently. See docs/gcf.md for the rules, the versions, the numeric domain and the
//! decisions where the spec is silent.
//!
//! ```
//! use serde_json::{json, Value};
//!
//! // What today's producers write: a flattened column, a constant column, a keyed map.
//! let text = concat!(
//!     "GCF profile=generic\n",
//!     "## orders [2]{id,\"customer>name\",env=prod}\n",
//!     "1|Ann\n",
//!     "2|Bo\n",
//!     "## hosts [2:]{key,cpu}\n",
//!     "web|23\n",
//!     "db|41\n",
//! );
//! let value: Value = agentwire_gcf::from_str(text)?;
//! assert_eq!(value, json!({
//!     "orders": [
//!         {"id": 1, "customer": {"name": "Ann"}, "env": "prod"},
//!         {"id": 2, "customer": {"name": "Bo"}, "env": "prod"},
//!     ],
//!     "hosts": {"web": {"cpu": 23}, "db": {"cpu": 41}},
//! }));
//! # Ok::<(), agentwire_gcf::Error>(())
//! ```
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! struct Order {
//!     id: u64,
//!     status: String,
//!     tags: Vec<String>,
//!     note: Option<String>,
//! }
//!
//! let orders = vec![
//!     Order { id: 1001, status: "shipped".into(), tags: vec!["gift".into()], note: None },
//!     Order { id: 1002, status: "true".into(), tags: vec![], note: Some("a|b".into()) },
//! ];
//! let text = agentwire_gcf::to_string(&orders)?;
//! assert_eq!(
//!     text,
//!     concat!(
//!         "GCF profile=generic\n",
//!         "## [2]{id,status,tags,note}\n",
//!         "@0 1001|shipped|^|-\n",
//!         ".tags [1]: gift\n",
//!         "@1 1002|\"true\"|^|\"a|b\"\n",
//!         ".tags [0]\n",
//!     )
//! );
//! let back: Vec<Order> = agentwire_gcf::from_str(&text)?;
//! assert_eq!(back, orders);
//! # Ok::<(), agentwire_gcf::Error>(())
//! ```
//!
//! Errors carry the spec's error code ([`Error::code`], one [`ErrorKind`] per code) and the
//! line and column of the offending input; decoders enforce [`Limits`] (depth, elements, line
//! length, fields, input size) with a typed error and never allocate by a declared count.
//!
//! # Keyed sets and generic deltas
//!
//! A [`KeyedSet`] (rows identified by one column) has a [`pack_root`](KeyedSet::pack_root);
//! a [`GenericDelta`] carries what changed between two sets and is applied atomically,
//! verifying both roots; a [`GenericSession`] sends a producer's successive sets as deltas
//! with re-anchoring ([`Reanchor`]), and a [`GenericSessionDecoder`] rebuilds them (spec
//! §10a).
//!
//! # The graph profile
//!
//! Code-graph payloads (spec §3.2, §5–§6a): a typed [`Graph`] of [`Symbol`]s grouped by
//! distance and the [`Edge`]s between them, encoded with [`encode_graph`] and read back with
//! [`decode_graph`]; a [`Session`] sends bare references for symbols a consumer already has
//! and a [`SessionDecoder`] rebuilds each call's full graph; [`Delta`] carries what changed
//! between two snapshots named by their [`pack_root`]; [`GraphStreamEncoder`] writes symbols
//! and edges as they arrive. See docs/gcf-graph.md for the bytes, ordering, rounding, session
//! and delta rules.
//!
//! ```
//! use agentwire_gcf::{decode_graph, encode_graph, Edge, Graph, Session, SessionDecoder, Symbol};
//!
//! let graph = Graph {
//!     tool: Some("context_for_task".into()),
//!     symbols: vec![
//!         Symbol::new("pkg.Auth", "function", 0.78, "lsp_resolved", 0),
//!         Symbol::new("pkg.Server", "function", 0.54, "lsp_resolved", 1),
//!     ],
//!     edges: vec![Edge::new("pkg.Server", "pkg.Auth", "calls")],
//!     ..Graph::default()
//! };
//! let text = encode_graph(&graph)?;
//! assert_eq!(
//!     text,
//!     concat!(
//!         "GCF profile=graph tool=context_for_task symbols=2 edges=1\n",
//!         "## targets\n@0 fn pkg.Auth 0.78 lsp_resolved\n",
//!         "## related\n@1 fn pkg.Server 0.54 lsp_resolved\n",
//!         "## edges [1]\n@0<@1 calls\n",
//!     )
//! );
//! assert_eq!(decode_graph(&text)?, graph);
//!
//! // In a session, the second call refers to pkg.Auth by id; the consumer rebuilds it.
//! let mut session = Session::new();
//! let mut consumer = SessionDecoder::new();
//! consumer.decode(&session.encode(&graph)?)?;
//! let again = session.encode(&graph)?;
//! assert!(again.contains("@0  # previously transmitted"));
//! assert_eq!(consumer.decode(&again)?, graph);
//! # Ok::<(), agentwire_gcf::Error>(())
//! ```
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod error;
mod generic;
#[cfg(feature = "graph")]
mod graph;
#[cfg(feature = "generic-delta")]
mod keyed;
// The lexical layer, numbers and the header are shared by both profiles; not every item is
// used by each yet.
#[allow(dead_code)]
mod header;
#[allow(dead_code)]
mod lex;
#[allow(dead_code)]
mod number;
mod options;
mod read;
#[cfg(any(feature = "graph", feature = "generic-delta"))]
mod root;

pub use error::{Error, ErrorKind, Limit, Position, Result};
pub use generic::{
    from_reader, from_slice, from_str, to_string, to_string_value, to_writer, GenericStreamEncoder,
    KeyedTableWriter, ListWriter, TableWriter,
};
#[cfg(feature = "graph")]
pub use graph::{
    decode_graph, decode_graph_reader, decode_graph_slice, decode_payload, encode_graph,
    encode_graph_to_writer, pack_root, pack_root_bytes, Delta, DeltaSymbol, Edge, EdgeStatus,
    Graph, GraphStreamEncoder, Kind, Payload, Session, SessionDecoder, StreamHeader, Symbol,
    SymbolKey, Unchanged,
};
pub use header::{profile, Profile};
#[cfg(feature = "generic-delta")]
pub use keyed::{
    Emission, GenericDelta, GenericPayload, GenericSession, GenericSessionDecoder, KeyedSet,
    Reanchor,
};
pub use options::{DecoderOptions, EncoderOptions, Limits, Spec, TokenCounter};
pub use read::{DeserializeRows, Entries, RowReader};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
