//! GCF v3.1, the Graph Compact Format: graph and generic profiles, sessions, deltas and streaming.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace.
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
    from_reader, from_slice, from_str, to_string, to_writer, GenericStreamEncoder, ListWriter,
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
