//! The graph profile (spec §3.2, §5–§6a, §8–§10): code-graph payloads of symbols grouped by
//! distance and the edges between them; session references, deltas, pack roots, and streams.
//!
//! See docs/gcf-graph.md for the profile as implemented: byte order, rounding, the session
//! policy and the delta semantics.

mod decode;
mod delta;
mod encode;
mod model;
mod pack_root;
mod session;
mod stream;

use std::io;

pub use delta::{Delta, DeltaSymbol};
pub use model::{Edge, EdgeStatus, Graph, Kind, Symbol, SymbolKey};
pub use pack_root::{pack_root, pack_root_bytes};
pub use session::{Session, SessionDecoder};
pub use stream::{GraphStreamEncoder, StreamHeader};

use crate::error::{Error, ErrorKind, Limit, Result};
use crate::header;
use crate::lex::{self, Lines};
use crate::options::DecoderOptions;
use crate::read::{self, LineSource, ReaderLines};
use decode::GraphSink;

/// Encodes `graph` as a buffered graph-profile payload (spec §3.2, §5, §6, §16.1).
///
/// - The header is `GCF profile=graph` then, in this order and each only when given, `tool=`,
///   `budget=`, `tokens=`, then `symbols=N`, `edges=N` (left out when 0) and `pack_root=`:
///   the order of the v3.1 reference encoders and fixtures.
/// - Symbols are grouped by distance (`## targets` 0, `## related` 1, `## extended` 2,
///   `## distance_N` above), groups in ascending distance; within a group by score
///   descending, ties broken by qualified name then kind in byte order. Ids `@0, @1, ...`
///   follow that order.
/// - Scores have exactly two decimals: the exact binary value rounded half-to-even (`%.2f`),
///   so `0.125` is `0.12` and `0.005` (slightly above in binary) is `0.01`.
/// - Kinds are abbreviated (`fn`, `iface`, ...); other kinds are written verbatim.
/// - `## edges [N]` lists the edges as `@target<@source type [status]`, ordered by source id,
///   then target id, type and status.
///
/// Errors, never silent loss: an edge endpoint that names no symbol (or, without its kind,
/// several) is `unknown_edge_reference`; two symbols with one identity `duplicate_symbol`; a
/// non-finite score `invalid_number`; a qualified name, provenance or edge type that is not
/// printable ASCII without spaces, a kind that is not a bare key, or a header value (`tool`,
/// `pack_root`) with spaces or non-ASCII characters `unsupported_value` (the graph profile
/// has no quoting).
///
/// ```
/// use agentwire_gcf::{encode_graph, Graph, Symbol};
///
/// let graph = Graph {
///     tool: Some("test".into()),
///     symbols: vec![
///         Symbol::new("pkg.Low", "widget", 0.4, "x", 0),
///         Symbol::new("pkg.High", "function", 0.9, "x", 0),
///         Symbol::new("pkg.Far", "type", 0.7, "x", 3),
///     ],
///     ..Graph::default()
/// };
/// assert_eq!(
///     encode_graph(&graph)?,
///     "GCF profile=graph tool=test symbols=3\n## targets\n@0 fn pkg.High 0.90 x\n\
///      @1 widget pkg.Low 0.40 x\n## distance_3\n@2 type pkg.Far 0.70 x\n"
/// );
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn encode_graph(graph: &Graph) -> Result<String> {
    encode::encode(graph)
}

/// Encodes `graph` (see [`encode_graph`]) into `writer`. The payload is built in memory and
/// written at once; to write symbols as they arrive, use [`GraphStreamEncoder`].
pub fn encode_graph_to_writer<W: io::Write>(mut writer: W, graph: &Graph) -> Result<()> {
    let text = encode::encode(graph)?;
    writer.write_all(text.as_bytes())?;
    writer.flush()?;
    Ok(())
}

/// Decodes a graph-profile payload, buffered or streamed, with the default
/// [`DecoderOptions`].
///
/// Checks everything spec §16.3 and §16.5 list, each failure a typed error with its line and
/// column: the header (`profile=graph`, well-formed and unique fields), node lines (exactly
/// five fields: `invalid_node_line`; `@` and an integer: `invalid_symbol_id`; a two-decimal
/// score: `invalid_score`), edge lines (`<`: `invalid_edge_syntax`; endpoints declared
/// earlier: `unknown_edge_reference`), counts (`[N]`, `symbols=`, `edges=` and the
/// `##! summary` trailer: `count_mismatch`), unique ids and identities (`duplicate_symbol`).
/// Comments (`# `) and blank lines are skipped, a trailing `\r` is tolerated, kinds are
/// expanded (`fn` is [`Kind::Function`]) and unknown kinds kept.
///
/// A streamed payload (a `[?]` section, or a header without `symbols=`) that ends without its
/// trailer was cut short: `truncated_input` (see [`DecoderOptions::require_trailer`]).
/// Session references (`@N  # previously transmitted`) need the session's earlier payloads:
/// decode those with a [`SessionDecoder`]. Deltas and `unchanged=true` replies are
/// `profile_mismatch` here; read them with [`decode_payload`] or [`Delta::decode`].
///
/// ```
/// use agentwire_gcf::{decode_graph, Kind};
///
/// let graph = decode_graph(
///     "GCF profile=graph tool=test symbols=2\r\n# comment\r\n## targets\r\n\
///      @0 iface pkg.Handler 0.90 lsp\r\n@1 widget pkg.Custom 0.80 ast\r\n",
/// )?;
/// assert_eq!(graph.tool.as_deref(), Some("test"));
/// assert_eq!(graph.symbols[0].kind, Kind::Interface);
/// assert_eq!(graph.symbols[1].kind, Kind::Other("widget".into()));
///
/// let error = decode_graph("GCF profile=graph symbols=1\n## targets\n@0 fn pkg.Foo nope lsp\n")
///     .unwrap_err();
/// assert_eq!((error.code(), error.line(), error.column()), ("invalid_score", Some(3), Some(15)));
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn decode_graph(text: &str) -> Result<Graph> {
    DecoderOptions::new().decode_graph(text)
}

/// Decodes a graph payload from bytes (validated as UTF-8 first: `invalid_utf8`).
pub fn decode_graph_slice(bytes: &[u8]) -> Result<Graph> {
    DecoderOptions::new().decode_graph_slice(bytes)
}

/// Decodes a graph payload read from `reader` a line at a time (see
/// [`DecoderOptions::decode_graph_reader`]).
pub fn decode_graph_reader<R: io::Read>(reader: R) -> Result<Graph> {
    DecoderOptions::new().decode_graph_reader(reader)
}

/// Decodes any self-contained graph-profile payload: a full graph, a delta, or an
/// `unchanged=true` reply (spec §10.3).
///
/// ```
/// use agentwire_gcf::{decode_payload, Payload};
///
/// let reply = "GCF profile=graph tool=t unchanged=true pack_root=sha256:0123 symbols=10\n";
/// match decode_payload(reply)? {
///     Payload::Unchanged(u) => assert_eq!((u.pack_root.as_str(), u.symbols), ("sha256:0123", Some(10))),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn decode_payload(text: &str) -> Result<Payload> {
    DecoderOptions::new().decode_payload(text)
}

impl DecoderOptions {
    /// Decodes a graph payload with these options (see [`decode_graph`]).
    pub fn decode_graph(&self, text: &str) -> Result<Graph> {
        only_graph(self.decode_payload(text)?, text)
    }

    /// Decodes a graph payload from bytes with these options.
    pub fn decode_graph_slice(&self, bytes: &[u8]) -> Result<Graph> {
        self.check_size(bytes.len())?;
        self.decode_graph(lex::utf8(bytes)?)
    }

    /// Reads `reader` a line at a time and decodes a graph payload with these options (see
    /// [`decode_graph`]).
    ///
    /// Memory is the line being read and the graph being built, never the input: each line
    /// is parsed as it arrives and dropped, a line past [`Limits::max_line_length`] fails
    /// before more of it is kept, and [`Limits::max_input_size`] is counted as bytes arrive.
    /// Each line is checked as UTF-8 when it is read. Errors are those [`decode_graph`] gives
    /// for the same text, with the same codes, lines and columns; the first in input order is
    /// reported (an invalid UTF-8 byte after a bad line is not reached, where
    /// [`decode_graph_slice`] checks the whole input's encoding first). An I/O error of
    /// `reader` is `io`.
    ///
    /// [`Limits::max_line_length`]: crate::Limits::max_line_length
    /// [`Limits::max_input_size`]: crate::Limits::max_input_size
    ///
    /// ```
    /// use agentwire_gcf::DecoderOptions;
    ///
    /// let payload = "GCF profile=graph tool=t\n## targets [?]\n\
    ///                @0 fn pkg.A 0.90 lsp\n##! summary symbols=1\n";
    /// let graph = DecoderOptions::new().decode_graph_reader(payload.as_bytes())?;
    /// assert_eq!(graph.symbols[0].qualified_name, "pkg.A");
    ///
    /// // The same error, line and column as the in-memory decoder.
    /// let cut = "GCF profile=graph tool=t\n## targets [?]\n@0 fn pkg.A 0.90 lsp\n";
    /// let error = DecoderOptions::new().decode_graph_reader(cut.as_bytes()).unwrap_err();
    /// assert_eq!((error.code(), error.line()), ("truncated_input", Some(3)));
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn decode_graph_reader<R: io::Read>(&self, reader: R) -> Result<Graph> {
        let (payload, header) = self.read_payload(io::BufReader::new(reader))?;
        only_graph(payload, &header)
    }

    /// Reads any self-contained graph payload (a full graph, a delta, or an `unchanged=true`
    /// reply: see [`decode_payload`]) from `reader` a line at a time, in the memory of the
    /// line being read and the value being built (see [`DecoderOptions::decode_graph_reader`]).
    ///
    /// ```
    /// use agentwire_gcf::{DecoderOptions, Payload};
    ///
    /// let reply = "GCF profile=graph unchanged=true pack_root=sha256:01 symbols=3\n";
    /// let payload = DecoderOptions::new().decode_payload_reader(reply.as_bytes())?;
    /// assert!(matches!(payload, Payload::Unchanged(_)));
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn decode_payload_reader<R: io::Read>(&self, reader: R) -> Result<Payload> {
        self.read_payload(io::BufReader::new(reader))
            .map(|(payload, _)| payload)
    }

    /// Decodes a payload from `reader`: the payload and its header line.
    fn read_payload<R: io::BufRead>(&self, reader: R) -> Result<(Payload, String)> {
        let mut lines = ReaderLines::new(reader, &self.limits);
        let Some(first) = lines.first_line()? else {
            return Err(header::empty_input());
        };
        let head = decode::graph_header(&header::parse_header(read::header_line(&first))?)?;
        let payload = self.decode_body(&mut lines, &head, None)?;
        Ok((payload, first))
    }

    /// Decodes any self-contained graph payload with these options (see
    /// [`decode_payload`]).
    pub fn decode_payload(&self, text: &str) -> Result<Payload> {
        self.check_size(text.len())?;
        let mut lines = Lines::new(text, self.limits.max_line_length);
        let head = decode::read_graph_header(&mut lines)?;
        self.decode_body(&mut lines, &head, Some(text.len()))
    }

    /// Decodes the body after `head` from `lines`; `input_len`, when known, caps what the
    /// header's counts may reserve.
    fn decode_body<S: LineSource>(
        &self,
        lines: &mut S,
        head: &decode::GraphHeader<'_>,
        input_len: Option<usize>,
    ) -> Result<Payload> {
        if head.delta {
            return delta::decode_with(lines, head, self).map(Payload::Delta);
        }
        if head.unchanged {
            decode::parse_body(lines, head, self, &mut NoBody)?;
            return Ok(Payload::Unchanged(Unchanged {
                tool: head.tool.map(str::to_owned),
                pack_root: head.pack_root.unwrap_or_default().to_owned(),
                symbols: head.symbols.map(|s| s.0),
            }));
        }
        let mut sink = GraphSink::new(head, None);
        if let Some(len) = input_len {
            sink.reserve(head, len);
        }
        decode::parse_body(lines, head, self, &mut sink)?;
        Ok(Payload::Graph(sink.finish().0))
    }

    pub(crate) fn check_size(&self, len: usize) -> Result<()> {
        match self.limits.max_input_size {
            Some(max) if len > max => Err(Error::new(
                ErrorKind::LimitExceeded(Limit::InputSize),
                format!("the input exceeds the limit of {max} bytes"),
            )),
            _ => Ok(()),
        }
    }
}

/// `payload` if it is a full graph; else `profile_mismatch` at the header (`text`'s first
/// line) field that makes it something else.
fn only_graph(payload: Payload, text: &str) -> Result<Graph> {
    match payload {
        Payload::Graph(graph) => Ok(graph),
        Payload::Delta(_) => Err(not_a_graph(text, "a delta (delta=true)")),
        Payload::Unchanged(_) => Err(not_a_graph(text, "an unchanged=true reply")),
    }
}

#[cold]
fn not_a_graph(text: &str, what: &str) -> Error {
    let header = text.split('\n').next().unwrap_or(text);
    let column = 1 + header
        .find(" delta=")
        .or_else(|| header.find(" unchanged="))
        .unwrap_or(0);
    Error::at_line(
        ErrorKind::ProfileMismatch,
        1,
        column,
        format!("the payload is {what}, not a full graph; read it with decode_payload"),
    )
}

/// A sink for bodies that must be empty (an unchanged reply's): the parser rejects any line
/// before reporting it.
struct NoBody;

impl decode::Sink for NoBody {
    fn node(&mut self, _: &lex::Line<'_>, _: decode::Node<'_>, _: u32) -> Result<()> {
        Ok(())
    }
    fn reference(&mut self, _: &lex::Line<'_>, _: u64, _: &str, _: u32) -> Result<()> {
        Ok(())
    }
    fn edge(&mut self, _: &lex::Line<'_>, _: decode::EdgeLine<'_>) -> Result<()> {
        Ok(())
    }
}

/// Any self-contained graph-profile payload: what a producer sends in reply to a request that
/// may carry the consumer's `pack_root` (spec §10.3).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Payload {
    /// A full graph (buffered or streamed).
    Graph(Graph),
    /// A delta against the consumer's snapshot.
    Delta(Delta),
    /// The consumer's snapshot is still current.
    Unchanged(Unchanged),
}

impl Payload {
    /// The three-outcome reply of spec §10.3 to a consumer that holds `base` (or nothing):
    ///
    /// - no base: the full graph, with its `pack_root` set;
    /// - the base's root equals the current root: [`Payload::Unchanged`];
    /// - otherwise a [`Delta`] (its `tool` the current graph's), when its encoding is smaller
    ///   than 60% of the full payload's (the threshold spec §10.1 recommends) and it can carry
    ///   the change ([`Delta::between`]); else the full graph.
    ///
    /// ```
    /// use agentwire_gcf::{Payload, Graph, Symbol};
    ///
    /// let base = Graph {
    ///     symbols: (0..20).map(|i| Symbol::new(format!("pkg.F{i}"), "fn", 0.5, "lsp", 1)).collect(),
    ///     ..Graph::default()
    /// };
    /// let mut current = base.clone();
    /// current.symbols[3].score = 0.75;
    /// assert!(matches!(Payload::respond(Some(&base), &base)?, Payload::Unchanged(_)));
    /// let Payload::Delta(delta) = Payload::respond(Some(&base), &current)? else { panic!() };
    /// assert_eq!(delta.apply(&base)?.symbols.len(), 20);
    /// assert!(matches!(Payload::respond(None, &current)?, Payload::Graph(_)));
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn respond(base: Option<&Graph>, current: &Graph) -> Result<Payload> {
        let full = current.clone().with_pack_root()?;
        let Some(base) = base else {
            return Ok(Payload::Graph(full));
        };
        let root = full.pack_root.clone().unwrap_or_default();
        if pack_root(base)? == root {
            return Ok(Payload::Unchanged(Unchanged {
                tool: current.tool.clone(),
                pack_root: root,
                symbols: Some(current.symbols.len() as u64),
            }));
        }
        let mut delta = match Delta::between(base, current) {
            Ok(delta) => delta,
            Err(e) if e.kind() == ErrorKind::UnsupportedValue => return Ok(Payload::Graph(full)),
            Err(e) => return Err(e),
        };
        delta.tool = current.tool.clone();
        let delta_len = delta.encode()?.len();
        let full_len = encode_graph(&full)?.len();
        if delta_len * 10 < full_len * 6 {
            Ok(Payload::Delta(delta))
        } else {
            Ok(Payload::Graph(full))
        }
    }

    /// Encodes the payload ([`encode_graph`], [`Delta::encode`] or [`Unchanged::encode`]).
    pub fn encode(&self) -> Result<String> {
        match self {
            Payload::Graph(graph) => encode_graph(graph),
            Payload::Delta(delta) => delta.encode(),
            Payload::Unchanged(unchanged) => unchanged.encode(),
        }
    }
}

/// The reply that the consumer's snapshot is still current (spec §10.3): a header line
/// `GCF profile=graph tool=T unchanged=true pack_root=R symbols=N` and nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unchanged {
    /// `tool=`.
    pub tool: Option<String>,
    /// `pack_root=`: the root the consumer holds.
    pub pack_root: String,
    /// `symbols=`: the snapshot's symbol count.
    pub symbols: Option<u64>,
}

impl Unchanged {
    /// Encodes the reply.
    ///
    /// ```
    /// use agentwire_gcf::Unchanged;
    ///
    /// let reply = Unchanged { tool: Some("ctx".into()), pack_root: "sha256:ab".into(), symbols: Some(10) };
    /// assert_eq!(reply.encode()?, "GCF profile=graph tool=ctx unchanged=true pack_root=sha256:ab symbols=10\n");
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn encode(&self) -> Result<String> {
        let mut out = String::from("GCF profile=graph");
        if let Some(tool) = &self.tool {
            header::write_field(&mut out, "tool", tool)?;
        }
        out.push_str(" unchanged=true");
        header::write_field(&mut out, "pack_root", &self.pack_root)?;
        if let Some(n) = self.symbols {
            header::write_field(&mut out, "symbols", itoa::Buffer::new().format(n))?;
        }
        out.push('\n');
        Ok(out)
    }
}
