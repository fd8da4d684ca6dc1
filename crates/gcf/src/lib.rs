//! GCF v3.1, the Graph Compact Format: graph and generic profiles, sessions, deltas and streaming.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace.
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
mod graph;
// The lexical layer, numbers and the header are shared by both profiles; not every item is
// used by each yet.
#[allow(dead_code)]
mod header;
#[allow(dead_code)]
mod lex;
#[allow(dead_code)]
mod number;
mod options;

pub use error::{Error, ErrorKind, Limit, Position, Result};
pub use generic::{
    from_reader, from_slice, from_str, to_string, to_string_value, to_writer, GenericStreamEncoder,
    ListWriter,
    TableWriter,
};
pub use graph::{
    decode_graph, decode_graph_reader, decode_graph_slice, decode_payload, encode_graph,
    encode_graph_to_writer, pack_root, pack_root_bytes, Delta, DeltaSymbol, Edge, EdgeStatus,
    Graph, GraphStreamEncoder, Kind, Payload, Session, SessionDecoder, StreamHeader, Symbol,
    SymbolKey, Unchanged,
};
pub use header::{profile, Profile};
pub use options::{DecoderOptions, EncoderOptions, Limits};
