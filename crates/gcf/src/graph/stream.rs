//! The streaming graph encoder (spec §8): symbols and edges are written as they arrive, edge
//! sections declare `[?]`, and `finish` writes the `##! summary` trailer.

use std::collections::HashMap;
use std::io;

use super::encode::{self, HeaderLine};
use super::model::{check_header_value, check_symbol, is_token, Edge, EdgeStatus, Kind, Symbol};
use crate::error::{Error, ErrorKind, Result};
use crate::options::Spec;

/// The header of a streamed graph payload: everything but the counts, which a stream does
/// not know up front (spec §8.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamHeader {
    /// `tool=`.
    pub tool: Option<String>,
    /// `budget=`.
    pub token_budget: Option<u64>,
    /// `tokens=`.
    pub tokens_used: Option<u64>,
    /// `pack_root=`.
    pub pack_root: Option<String>,
}

impl StreamHeader {
    /// A header with `tool=` only.
    pub fn new(tool: impl Into<String>) -> Self {
        StreamHeader {
            tool: Some(tool.into()),
            ..StreamHeader::default()
        }
    }

    /// Sets `budget=`.
    #[must_use]
    pub fn token_budget(mut self, budget: u64) -> Self {
        self.token_budget = Some(budget);
        self
    }

    /// Sets `tokens=`.
    #[must_use]
    pub fn tokens_used(mut self, tokens: u64) -> Self {
        self.tokens_used = Some(tokens);
        self
    }

    /// Sets `pack_root=`.
    #[must_use]
    pub fn pack_root(mut self, root: impl Into<String>) -> Self {
        self.pack_root = Some(root.into());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Current {
    Nothing,
    Group(u32),
    Edges,
}

/// Identity → id and name → id (or shared), when edges are given by name.
#[derive(Debug, Default)]
struct Names {
    ids: HashMap<(Kind, String), u64>,
    by_name: HashMap<String, Option<u64>>,
}

/// Writes a graph payload incrementally to an [`io::Write`] (spec §8), with constant memory
/// per symbol and edge: each line is formatted into one reused buffer, written, and
/// forgotten.
///
/// - The header carries no counts. [`symbol`](Self::symbol) writes a node line, under a new
///   group header whenever the distance differs from the previous line's (symbols are not
///   sorted: they go out as they arrive), and returns the symbol's id (`@0`, `@1`, ... in
///   arrival order).
/// - [`edge`](Self::edge) writes an edge line between two ids already returned, under
///   `## edges [?]`; symbols and edges may alternate (each run of edges is its own `[?]`
///   section).
/// - [`finish`](Self::finish) writes `##! summary symbols=N edges=M counts=...` and returns
///   the writer: by the current spec (§8.4, v3.4), one count per distance group in the order
///   the groups first appear (a group that recurs is summed), then the edge count, always
///   last; [`labeled_counts`](Self::labeled_counts) writes them `targets:2,...,edges:3`
///   (§8.4.1); [`spec`](Self::spec) `Spec::V3_1` writes v3.1's one count per `[?]` section. A
///   stream dropped without `finish` has no trailer, and decoders report it as truncated.
///
/// By default only ids are remembered (a counter), so memory stays flat however many symbols
/// pass; duplicate identities are then caught by the consumer's decoder
/// (`duplicate_symbol`). [`with_name_index`](Self::with_name_index) keeps a map of names
/// instead, which rejects duplicates at once and lets [`edge_named`](Self::edge_named) take
/// edges by qualified name, at the cost of memory proportional to the symbols.
///
/// Each call writes with one `write_all`: wrap an unbuffered writer (a file, a socket) in an
/// [`io::BufWriter`]. The first error (I/O or an invalid value) is returned; after an I/O
/// error the encoder refuses further writes, so a broken stream is never silently continued.
///
/// ```
/// use agentwire_gcf::{decode_graph, GraphStreamEncoder, StreamHeader, Symbol};
///
/// let mut out = Vec::new();
/// let mut stream = GraphStreamEncoder::new(&mut out, &StreamHeader::new("context_for_task").token_budget(5000))?;
/// let auth = stream.symbol(&Symbol::new("pkg.Auth", "function", 0.95, "lsp_resolved", 0))?;
/// let handler = stream.symbol(&Symbol::new("pkg.Handler", "function", 0.88, "lsp_resolved", 0))?;
/// let config = stream.symbol(&Symbol::new("pkg.Config", "type", 0.72, "ast_inferred", 1))?;
/// stream.edge(handler, auth, "calls", None)?;
/// stream.edge(auth, config, "references", None)?;
/// stream.edge(config, auth, "imports", None)?;
/// stream.finish()?;
/// let text = String::from_utf8(out).unwrap();
/// assert_eq!(
///     text,
///     concat!(
///         "GCF profile=graph tool=context_for_task budget=5000\n",
///         "## targets\n@0 fn pkg.Auth 0.95 lsp_resolved\n@1 fn pkg.Handler 0.88 lsp_resolved\n",
///         "## related\n@2 type pkg.Config 0.72 ast_inferred\n",
///         "## edges [?]\n@0<@1 calls\n@2<@0 references\n@0<@2 imports\n",
///         "##! summary symbols=3 edges=3 counts=2,1,3\n",
///     )
/// );
/// assert_eq!(decode_graph(&text)?.edges.len(), 3);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug)]
pub struct GraphStreamEncoder<W: io::Write> {
    writer: W,
    buf: String,
    symbols: u64,
    edges: u64,
    current: Current,
    /// The line count of each `[?]` edge section so far.
    sections: Vec<u64>,
    /// Each distance group's symbols, in the order the groups first appear.
    groups: Vec<(u32, u64)>,
    names: Option<Names>,
    failed: bool,
    spec: Spec,
    labeled: bool,
}

impl<W: io::Write> GraphStreamEncoder<W> {
    /// Starts a stream on `writer`, writing the header line; edges are given by id.
    pub fn new(writer: W, header: &StreamHeader) -> Result<Self> {
        Self::start(writer, header, None)
    }

    /// Starts a stream that also remembers every symbol's identity and name, so that
    /// duplicates are rejected as they arrive and [`edge_named`](Self::edge_named) works.
    pub fn with_name_index(writer: W, header: &StreamHeader) -> Result<Self> {
        Self::start(writer, header, Some(Names::default()))
    }

    fn start(writer: W, header: &StreamHeader, names: Option<Names>) -> Result<Self> {
        check_header_value("tool", header.tool.as_deref())?;
        check_header_value("pack_root", header.pack_root.as_deref())?;
        let mut encoder = GraphStreamEncoder {
            writer,
            buf: String::with_capacity(256),
            symbols: 0,
            edges: 0,
            current: Current::Nothing,
            sections: Vec::new(),
            groups: Vec::new(),
            names,
            failed: false,
            spec: Spec::LATEST,
            labeled: false,
        };
        HeaderLine {
            tool: header.tool.as_deref(),
            budget: header.token_budget,
            tokens: header.tokens_used,
            pack_root: header.pack_root.as_deref(),
            ..HeaderLine::default()
        }
        .write(&mut encoder.buf)?;
        encoder.flush_buf()?;
        Ok(encoder)
    }

    /// Writes the trailer by `spec` (default the current one): see the type's docs.
    #[must_use]
    pub fn spec(mut self, spec: Spec) -> Self {
        self.spec = spec;
        self
    }

    /// Writes the trailer's `counts` in the labeled form `targets:2,related:1,edges:3`
    /// (spec §8.4.1, current spec only; off by default).
    #[must_use]
    pub fn labeled_counts(mut self, on: bool) -> Self {
        self.labeled = on;
        self
    }

    fn usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                "the stream failed on an earlier write and cannot continue",
            ));
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<()> {
        let result = self.writer.write_all(self.buf.as_bytes());
        self.buf.clear();
        result.map_err(|e| {
            self.failed = true;
            Error::io(e)
        })
    }

    /// Writes one symbol and returns its id.
    ///
    /// Fails (writing nothing) for a symbol the node line cannot carry (see
    /// [`encode_graph`](crate::encode_graph)) and, with a name index, for a second symbol of
    /// one identity (`duplicate_symbol`).
    pub fn symbol(&mut self, symbol: &Symbol) -> Result<u64> {
        self.usable()?;
        check_symbol(self.symbols as usize, symbol)?;
        let id = self.symbols;
        if let Some(names) = &mut self.names {
            let key = (symbol.kind.clone(), symbol.qualified_name.clone());
            if let Some(first) = names.ids.get(&key) {
                return Err(Error::new(
                    ErrorKind::DuplicateSymbol,
                    format!(
                        "{} {} was already written as @{first}",
                        symbol.kind.abbreviation(),
                        symbol.qualified_name
                    ),
                ));
            }
            names.ids.insert(key, id);
            names
                .by_name
                .entry(symbol.qualified_name.clone())
                .and_modify(|slot| *slot = None)
                .or_insert(Some(id));
        }
        if self.current != Current::Group(symbol.distance) {
            encode::write_group(&mut self.buf, symbol.distance);
            self.current = Current::Group(symbol.distance);
        }
        encode::write_node(&mut self.buf, id, symbol);
        match self.groups.iter_mut().find(|(d, _)| *d == symbol.distance) {
            Some((_, n)) => *n += 1,
            None => self.groups.push((symbol.distance, 1)),
        }
        self.symbols += 1;
        self.flush_buf()?;
        Ok(id)
    }

    /// Writes the edge `source` → `target` (ids returned by [`symbol`](Self::symbol)) as
    /// `@target<@source edge_type [status]`.
    ///
    /// An id not yet written is `unknown_edge_reference`; an edge type that is not printable
    /// ASCII without spaces is `unsupported_value`. Nothing is written then.
    pub fn edge(
        &mut self,
        source: u64,
        target: u64,
        edge_type: &str,
        status: Option<&EdgeStatus>,
    ) -> Result<()> {
        self.usable()?;
        for id in [source, target] {
            if id >= self.symbols {
                return Err(Error::new(
                    ErrorKind::UnknownEdgeReference,
                    format!(
                        "edge endpoint @{id} has not been written (the stream has {} symbols)",
                        self.symbols
                    ),
                ));
            }
        }
        if !is_token(edge_type) {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                format!("edge type {edge_type:?} is not printable ASCII without spaces"),
            ));
        }
        if self.current != Current::Edges {
            self.buf.push_str("## edges [?]\n");
            self.current = Current::Edges;
            self.sections.push(0);
        }
        if let Some(status) = status {
            if !is_token(status.as_str()) {
                return Err(Error::new(
                    ErrorKind::UnsupportedValue,
                    format!(
                        "edge status {:?} is not a word without spaces",
                        status.as_str()
                    ),
                ));
            }
        }
        encode::write_edge(&mut self.buf, target, source, edge_type, status);
        if let Some(count) = self.sections.last_mut() {
            *count += 1;
        }
        self.edges += 1;
        self.flush_buf()
    }

    /// Writes an edge whose endpoints are named by qualified name (and kind, when a name is
    /// shared), as in a [`Graph`](crate::Graph). Needs
    /// [`with_name_index`](Self::with_name_index); otherwise `unsupported_value`.
    pub fn edge_named(&mut self, edge: &Edge) -> Result<()> {
        let Some(names) = &self.names else {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                "edges by name need a name index (GraphStreamEncoder::with_name_index)",
            ));
        };
        let resolve = |name: &str, kind: Option<&Kind>| {
            let found = match kind {
                Some(kind) => names.ids.get(&(kind.clone(), name.to_owned())).copied(),
                None => names.by_name.get(name).copied().flatten(),
            };
            found.ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownEdgeReference,
                    format!(
                        "edge {} -> {}: {name} is not a symbol written so far{}",
                        edge.source,
                        edge.target,
                        if kind.is_none() && names.by_name.contains_key(name) {
                            " (several share the name: give its kind)"
                        } else {
                            ""
                        }
                    ),
                )
            })
        };
        let source = resolve(&edge.source, edge.source_kind.as_ref())?;
        let target = resolve(&edge.target, edge.target_kind.as_ref())?;
        self.edge(source, target, &edge.edge_type, edge.status.as_ref())
    }

    /// The number of symbols written.
    pub fn symbols_written(&self) -> u64 {
        self.symbols
    }

    /// The number of edges written.
    pub fn edges_written(&self) -> u64 {
        self.edges
    }

    /// The writer.
    pub fn get_ref(&self) -> &W {
        &self.writer
    }

    /// Writes the `##! summary` trailer, flushes, and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.usable()?;
        let mut num = itoa::Buffer::new();
        self.buf.push_str("##! summary symbols=");
        self.buf.push_str(num.format(self.symbols));
        self.buf.push_str(" edges=");
        self.buf.push_str(num.format(self.edges));
        if self.spec.current() {
            self.buf.push_str(" counts=");
            for &(distance, n) in &self.groups {
                if self.labeled {
                    encode::write_group_name(&mut self.buf, distance);
                    self.buf.push(':');
                }
                self.buf.push_str(num.format(n));
                self.buf.push(',');
            }
            if self.labeled {
                self.buf.push_str("edges:");
            }
            self.buf.push_str(num.format(self.edges));
        } else if !self.sections.is_empty() {
            self.buf.push_str(" counts=");
            for (i, n) in self.sections.iter().enumerate() {
                if i > 0 {
                    self.buf.push(',');
                }
                self.buf.push_str(num.format(*n));
            }
        }
        self.buf.push('\n');
        self.flush_buf()?;
        self.writer.flush()?;
        Ok(self.writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::Graph;

    #[test]
    fn alternating_symbols_and_edges_make_several_deferred_sections() {
        let mut out = Vec::new();
        let mut s =
            GraphStreamEncoder::with_name_index(&mut out, &StreamHeader::default()).unwrap();
        s.symbol(&Symbol::new("a", "fn", 0.5, "p", 0)).unwrap();
        s.edge_named(&Edge::new("a", "a", "self")).unwrap();
        s.symbol(&Symbol::new("b", "fn", 0.5, "p", 0)).unwrap();
        s.symbol(&Symbol::new("b", "type", 0.5, "p", 0)).unwrap();
        assert_eq!(
            s.symbol(&Symbol::new("b", "fn", 0.1, "q", 3))
                .unwrap_err()
                .code(),
            "duplicate_symbol"
        );
        assert_eq!(
            s.edge_named(&Edge::new("a", "b", "x")).unwrap_err().code(),
            "unknown_edge_reference"
        );
        s.edge_named(&Edge::new("a", "b", "x").with_kinds("fn", "type"))
            .unwrap();
        s.edge(1, 0, "y", Some(&EdgeStatus::Added)).unwrap();
        assert_eq!(
            s.edge(0, 9, "y", None).unwrap_err().code(),
            "unknown_edge_reference"
        );
        assert_eq!(
            s.edge(0, 1, "a b", None).unwrap_err().code(),
            "unsupported_value"
        );
        s.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "GCF profile=graph\n## targets\n@0 fn a 0.50 p\n## edges [?]\n@0<@0 self\n\
             ## targets\n@1 fn b 0.50 p\n@2 type b 0.50 p\n## edges [?]\n@2<@0 x\n@0<@1 y added\n\
             ##! summary symbols=3 edges=3 counts=3,3\n"
        );
        // v3.1's trailer: one count per `[?]` section; the labeled form of the current one.
        for (spec, labeled, trailer) in [
            (Spec::V3_1, false, "counts=1,2"),
            (Spec::V3_6, true, "counts=targets:3,edges:3"),
        ] {
            let mut out = Vec::new();
            let mut s = GraphStreamEncoder::new(&mut out, &StreamHeader::default())
                .unwrap()
                .spec(spec)
                .labeled_counts(labeled);
            s.symbol(&Symbol::new("a", "fn", 0.5, "p", 0)).unwrap();
            s.edge(0, 0, "self", None).unwrap();
            s.symbol(&Symbol::new("b", "fn", 0.5, "p", 0)).unwrap();
            s.symbol(&Symbol::new("c", "fn", 0.5, "p", 0)).unwrap();
            s.edge(0, 1, "x", None).unwrap();
            s.edge(1, 2, "y", None).unwrap();
            s.finish().unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.ends_with(&format!("{trailer}\n")), "{text}");
        }
        let g: Graph = crate::decode_graph(&text).unwrap();
        assert_eq!(g.symbols.len(), 3);
        assert_eq!(
            g.edges[1],
            Edge {
                target_kind: Some(Kind::Type),
                ..Edge::new("a", "b", "x")
            }
        );
        // Cut anywhere after the header, the stream is reported as truncated.
        for cut in text.match_indices('\n').map(|(i, _)| i + 1) {
            if cut == text.len() {
                break;
            }
            let e = crate::decode_graph(&text[..cut]).unwrap_err();
            assert_eq!(e.code(), "truncated_input", "cut at {cut}");
        }
    }

    #[test]
    fn io_errors_are_returned_and_stop_the_stream() {
        struct Failing(usize);
        impl io::Write for Failing {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::new(io::ErrorKind::BrokenPipe, "gone"));
                }
                self.0 -= 1;
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut s = GraphStreamEncoder::new(Failing(1), &StreamHeader::new("t")).unwrap();
        let e = s.symbol(&Symbol::new("a", "fn", 0.5, "p", 0)).unwrap_err();
        assert!(e.is_io());
        assert_eq!(
            s.symbol(&Symbol::new("b", "fn", 0.5, "p", 0))
                .unwrap_err()
                .code(),
            "unsupported_value"
        );
        assert!(s.finish().is_err());
        assert!(GraphStreamEncoder::new(Failing(0), &StreamHeader::new("t")).is_err());
        assert!(GraphStreamEncoder::new(Vec::new(), &StreamHeader::new("a b")).is_err());
    }
}
