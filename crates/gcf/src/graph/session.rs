//! Session statefulness (spec §9): the producer's [`Session`], which sends bare references
//! for symbols already transmitted, and the consumer's [`SessionDecoder`], which resolves them
//! back to full symbols.

use std::collections::HashMap;
use std::io;

use super::decode::{self, GraphSink, Resolver};
use super::encode::{self, HeaderLine};
use super::model::{wire_score, Graph, Index, Kind, Symbol};
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::header;
use crate::lex::Lines;
use crate::options::DecoderOptions;
use crate::read::{self, LineSource, ReaderLines};

/// What the session last transmitted for a symbol.
#[derive(Debug, Clone)]
struct Sent {
    kind: Kind,
    id: u64,
    /// The score as the wire carried it.
    score: f64,
    provenance: String,
}

/// The transmitted symbols of one qualified name: usually one kind.
#[derive(Debug, Clone)]
enum Slot {
    One(Sent),
    Many(Vec<Sent>),
}

impl Slot {
    fn as_slice(&self) -> &[Sent] {
        match self {
            Slot::One(s) => std::slice::from_ref(s),
            Slot::Many(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [Sent] {
        match self {
            Slot::One(s) => std::slice::from_mut(s),
            Slot::Many(v) => v,
        }
    }

    fn push(&mut self, sent: Sent) {
        let mut all = match std::mem::replace(self, Slot::Many(Vec::new())) {
            Slot::One(first) => vec![first],
            Slot::Many(all) => all,
        };
        all.push(sent);
        *self = Slot::Many(all);
    }
}

/// The producer side of a GCF session (spec §9): one per conversation, owned by it, never
/// shared (it is used through `&mut self` and holds no locks).
///
/// Each [`encode`](Session::encode) writes a `session=true` payload in which:
///
/// - every symbol keeps the id it first received in the session (ids are stable across
///   calls, never reused, and allocated monotonically; new symbols take the next ids in the
///   payload's output order);
/// - a symbol already transmitted with the same score (as the wire carries it) and provenance
///   is sent as the bare reference `@N  # previously transmitted`; one whose score or
///   provenance changed is declared again in full under its id, so the consumer's copy is
///   updated (a symbol's distance is its group in each payload, so it needs no redeclaration);
/// - identity is `(kind, qualified_name)`, so two symbols that share a name keep two ids.
///
/// Otherwise the payload is exactly [`encode_graph`](crate::encode_graph)'s (header order,
/// grouping, ordering, `## edges [N]` by id), with `session=true` after the counts.
///
/// **Size bound and recovery.** The session retains at most
/// [`max_symbols`](Session::with_max_symbols) symbols (default 100 000, about 10 MB). When a
/// call would exceed it, the session clears its state and that call is encoded as a full,
/// non-session payload (spec §9.5); a [`SessionDecoder`] that reads a non-session payload
/// clears its state too, and the next call starts a new session from `@0`. The same happens
/// after [`reset`](Session::reset): call it when the consumer may have lost context or a
/// payload may not have been delivered (spec §9.4: a producer that cannot confirm delivery
/// must not rely on it). Expiry by idle time or lifetime is the caller's: drop the session or
/// reset it.
///
/// An error (an invalid graph) leaves the session unchanged.
///
/// ```
/// use agentwire_gcf::{Graph, Session, SessionDecoder, Symbol};
///
/// let call = |symbols: Vec<Symbol>| Graph { tool: Some("test".into()), symbols, ..Graph::default() };
/// let auth = Symbol::new("pkg.Auth", "function", 0.9, "lsp", 0);
/// let server = Symbol::new("pkg.Server", "function", 0.7, "lsp", 1);
///
/// let mut session = Session::new();
/// let mut consumer = SessionDecoder::new();
/// let first = call(vec![auth.clone(), server.clone()]);
/// let text = session.encode(&first)?;
/// assert_eq!(
///     text,
///     concat!(
///         "GCF profile=graph tool=test symbols=2 session=true\n",
///         "## targets\n@0 fn pkg.Auth 0.90 lsp\n",
///         "## related\n@1 fn pkg.Server 0.70 lsp\n",
///     )
/// );
/// assert_eq!(consumer.decode(&text)?, first);
///
/// let second = call(vec![Symbol { distance: 0, ..server }, Symbol::new("pkg.Handler", "function", 0.6, "ast", 0)]);
/// let text = session.encode(&second)?;
/// assert_eq!(
///     text,
///     concat!(
///         "GCF profile=graph tool=test symbols=2 session=true\n",
///         "## targets\n@1  # previously transmitted\n@2 fn pkg.Handler 0.60 ast\n",
///     )
/// );
/// // The consumer rebuilds the full graph of the call.
/// assert_eq!(consumer.decode(&text)?, second);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Session {
    /// Qualified name → what was sent for each kind with that name.
    sent: HashMap<String, Slot>,
    len: usize,
    next_id: u64,
    max_symbols: usize,
    /// The state was cleared: the next payload is a non-session payload.
    restart: bool,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    /// The default bound on retained symbols.
    pub const DEFAULT_MAX_SYMBOLS: usize = 100_000;

    /// A new, empty session retaining at most [`Session::DEFAULT_MAX_SYMBOLS`] symbols.
    pub fn new() -> Self {
        Session::with_max_symbols(Session::DEFAULT_MAX_SYMBOLS)
    }

    /// A new, empty session retaining at most `max_symbols` symbols (see the type's docs for
    /// what happens past it).
    pub fn with_max_symbols(max_symbols: usize) -> Self {
        Session {
            sent: HashMap::new(),
            len: 0,
            next_id: 0,
            max_symbols,
            restart: false,
        }
    }

    /// The bound on retained symbols.
    pub fn max_symbols(&self) -> usize {
        self.max_symbols
    }

    /// The number of symbols transmitted in this session.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no symbol has been transmitted yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The session id of the symbol `(kind, qualified_name)`, if it was transmitted.
    pub fn id_of(&self, kind: &Kind, qualified_name: &str) -> Option<u64> {
        self.find(kind.abbreviation(), qualified_name).map(|s| s.id)
    }

    /// Forgets everything: the next payload is a full non-session payload (so the consumer
    /// clears its state too), and the one after it starts a new session from `@0`.
    pub fn reset(&mut self) {
        self.sent.clear();
        self.len = 0;
        self.next_id = 0;
        self.restart = true;
    }

    fn find(&self, abbreviation: &str, qualified_name: &str) -> Option<&Sent> {
        self.sent
            .get(qualified_name)?
            .as_slice()
            .iter()
            .find(|s| s.kind.abbreviation() == abbreviation)
    }

    /// Encodes one call's graph within the session (see the type's docs).
    pub fn encode(&mut self, graph: &Graph) -> Result<String> {
        let index = Index::build(graph)?;
        if self.restart {
            let text = encode::encode(graph)?;
            self.restart = false;
            return Ok(text);
        }
        let order = encode::symbol_order(graph);
        let n = graph.symbols.len();
        let mut ids = vec![0u64; n];
        let mut reference = vec![false; n];
        let mut next = self.next_id;
        for &i in &order {
            let s = &graph.symbols[i];
            match self.find(s.kind.abbreviation(), &s.qualified_name) {
                Some(sent) => {
                    ids[i] = sent.id;
                    reference[i] = sent.score.to_bits() == wire_score(s.score).to_bits()
                        && sent.provenance == s.provenance;
                }
                None => {
                    ids[i] = next;
                    next += 1;
                }
            }
        }
        let new = (next - self.next_id) as usize;
        if self.len.saturating_add(new) > self.max_symbols {
            // Spec §9.5: past the limit, fall back to a full non-session payload; the
            // consumer clears its state on reading it, and the next call starts afresh.
            let text = encode::encode(graph)?;
            self.sent.clear();
            self.len = 0;
            self.next_id = 0;
            return Ok(text);
        }
        let mut out = String::with_capacity(encode::size_hint(graph));
        HeaderLine {
            symbols: Some(n as u64),
            edges: Some(graph.edges.len() as u64),
            session: true,
            ..HeaderLine::of(graph)
        }
        .write(&mut out)?;
        encode::write_body(&mut out, &index, &order, &ids, Some(&reference));
        // Commit.
        for &i in &order {
            if reference[i] {
                continue;
            }
            let s = &graph.symbols[i];
            let score = wire_score(s.score);
            let sent = Sent {
                kind: s.kind.clone(),
                id: ids[i],
                score,
                provenance: s.provenance.clone(),
            };
            match self.sent.get_mut(s.qualified_name.as_str()) {
                None => {
                    self.sent.insert(s.qualified_name.clone(), Slot::One(sent));
                    self.len += 1;
                }
                Some(slot) => match slot
                    .as_mut_slice()
                    .iter_mut()
                    .find(|e| e.kind.abbreviation() == s.kind.abbreviation())
                {
                    // A redeclaration: the id stays.
                    Some(e) => {
                        e.score = sent.score;
                        e.provenance = sent.provenance;
                    }
                    None => {
                        slot.push(sent);
                        self.len += 1;
                    }
                },
            }
        }
        self.next_id = next;
        Ok(out)
    }
}

/// The symbols a consumer's session holds, by id and by identity.
#[derive(Debug, Clone, Default)]
struct Table {
    by_id: HashMap<u64, Symbol>,
    by_name: HashMap<String, Vec<(Kind, u64)>>,
}

impl Resolver for Table {
    fn lookup(&self, id: u64) -> Option<&Symbol> {
        self.by_id.get(&id)
    }

    fn id_of(&self, abbreviation: &str, qname: &str) -> Option<u64> {
        self.by_name
            .get(qname)?
            .iter()
            .find(|(k, _)| k.abbreviation() == abbreviation)
            .map(|(_, id)| *id)
    }
}

/// The consumer side of a GCF session: decodes each payload of a session in turn, keeping
/// the symbols earlier payloads declared, so that bare references (`@N  # previously
/// transmitted`) resolve to full symbols and every call's complete graph is rebuilt.
///
/// - A reference takes the symbol's kind, name, score and provenance from its latest
///   declaration, and its distance from the group it appears in.
/// - A reference to an id no earlier payload declared is `unresolved_reference` (spec §9.4:
///   the consumer rejects the response and asks for a full payload); a declaration that
///   rebinds an id, or gives a known symbol another id, is `duplicate_symbol`.
/// - A payload without `session=true` (a fallback, spec §9.4–§9.5) is decoded on its own and
///   clears the session: the producer has started over.
/// - Decoding is atomic: a payload that fails leaves the session as it was.
/// - The session holds at most [`Limits::max_elements`](crate::Limits::max_elements) symbols
///   (default 1 000 000); a payload that would exceed it fails with `limit_exceeded`.
///
/// See [`Session`] for an example.
#[derive(Debug, Clone, Default)]
pub struct SessionDecoder {
    options: DecoderOptions,
    table: Table,
}

impl SessionDecoder {
    /// A decoder with the default [`DecoderOptions`] and an empty session.
    pub fn new() -> Self {
        SessionDecoder::default()
    }

    /// A decoder with `options` and an empty session.
    pub fn with_options(options: DecoderOptions) -> Self {
        SessionDecoder {
            options,
            table: Table::default(),
        }
    }

    /// The number of symbols the session holds.
    pub fn len(&self) -> usize {
        self.table.by_id.len()
    }

    /// Whether the session holds no symbol.
    pub fn is_empty(&self) -> bool {
        self.table.by_id.is_empty()
    }

    /// The symbol bound to session id `id` (its `distance` is that of its last declaration).
    pub fn symbol(&self, id: u64) -> Option<&Symbol> {
        self.table.by_id.get(&id)
    }

    /// Forgets every symbol.
    pub fn reset(&mut self) {
        self.table = Table::default();
    }

    /// Decodes the next payload of the session into its full graph.
    pub fn decode(&mut self, text: &str) -> Result<Graph> {
        self.options.check_size(text.len())?;
        let mut lines = Lines::new(text, self.options.limits.max_line_length);
        let head = decode::read_graph_header(&mut lines)?;
        self.decode_body(&mut lines, &head, Some(text.len()))
    }

    /// Reads the next payload of the session from `reader` a line at a time and decodes it
    /// into its full graph: what [`SessionDecoder::decode`] gives for the same text (the same
    /// graph and session, or the same error code, line and column), in the memory of the
    /// line being read, the graph being built and the session, never the input (see
    /// [`DecoderOptions::decode_graph_reader`] for the limits and the encoding check). A
    /// payload that fails, an I/O error of `reader` (`io`) included, leaves the session as
    /// it was.
    ///
    /// ```
    /// use agentwire_gcf::SessionDecoder;
    ///
    /// let mut decoder = SessionDecoder::new();
    /// let first = "GCF profile=graph symbols=1 session=true\n## targets\n@0 fn pkg.A 0.90 lsp\n";
    /// decoder.decode_reader(first.as_bytes())?;
    /// let again = "GCF profile=graph symbols=1 session=true\n## targets\n@0  # previously transmitted\n";
    /// let graph = decoder.decode_reader(again.as_bytes())?;
    /// assert_eq!(graph.symbols[0].qualified_name, "pkg.A");
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn decode_reader<R: io::Read>(&mut self, reader: R) -> Result<Graph> {
        let mut lines = ReaderLines::new(io::BufReader::new(reader), &self.options.limits);
        let Some(first) = lines.first_line()? else {
            return Err(header::empty_input());
        };
        let head = decode::graph_header(&header::parse_header(read::header_line(&first))?)?;
        self.decode_body(&mut lines, &head, None)
    }

    /// Decodes the body after `head` from `lines`; `input_len`, when known, caps what the
    /// header's counts may reserve.
    fn decode_body<S: LineSource>(
        &mut self,
        lines: &mut S,
        head: &decode::GraphHeader<'_>,
        input_len: Option<usize>,
    ) -> Result<Graph> {
        let opts = &self.options;
        if head.delta || head.unchanged {
            return Err(head.line.error(
                ErrorKind::ProfileMismatch,
                "a delta or unchanged reply is not a session payload; read it with \
                 decode_payload",
            ));
        }
        if !head.session {
            let mut sink = GraphSink::new(head, None);
            decode::parse_body(lines, head, opts, &mut sink)?;
            self.reset();
            return Ok(sink.finish().0);
        }
        let mut sink = GraphSink::new(head, Some(&self.table));
        if let Some(len) = input_len {
            sink.reserve(head, len);
        }
        decode::parse_body(lines, head, opts, &mut sink)?;
        let (graph, declared) = sink.finish();
        let new = declared
            .iter()
            .filter(|(id, full)| *full && !self.table.by_id.contains_key(id))
            .count();
        let max = opts.limits.max_elements;
        if self.table.by_id.len() + new > max {
            return Err(Error::new(
                ErrorKind::LimitExceeded(Limit::Elements),
                format!("the session would hold more than {max} symbols (the elements limit)"),
            ));
        }
        for (symbol, &(id, full)) in graph.symbols.iter().zip(&declared) {
            if !full {
                continue;
            }
            if self.table.by_id.insert(id, symbol.clone()).is_none() {
                self.table
                    .by_name
                    .entry(symbol.qualified_name.clone())
                    .or_default()
                    .push((symbol.kind.clone(), id));
            }
        }
        Ok(graph)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::Edge;

    fn call(symbols: Vec<Symbol>, edges: Vec<Edge>) -> Graph {
        Graph {
            tool: Some("test".into()),
            symbols,
            edges,
            ..Graph::default()
        }
    }

    #[test]
    fn changed_scores_are_redeclared_under_the_same_id() {
        let mut s = Session::new();
        let mut d = SessionDecoder::new();
        let a = Symbol::new("a", "fn", 0.5, "p", 0);
        let b = Symbol::new("b", "fn", 0.4, "p", 1);
        let g1 = call(
            vec![a.clone(), b.clone()],
            vec![Edge::new("b", "a", "calls")],
        );
        assert_eq!(d.decode(&s.encode(&g1).unwrap()).unwrap(), g1);
        let g2 = call(
            vec![
                Symbol {
                    score: 0.6,
                    ..a.clone()
                },
                b.clone(),
            ],
            vec![Edge::new("a", "b", "calls")],
        );
        let text = s.encode(&g2).unwrap();
        assert_eq!(
            text,
            "GCF profile=graph tool=test symbols=2 edges=1 session=true\n## targets\n\
             @0 fn a 0.60 p\n## related\n@1  # previously transmitted\n## edges [1]\n@1<@0 calls\n"
        );
        assert_eq!(d.decode(&text).unwrap(), g2);
        assert_eq!(d.symbol(0).unwrap().score, 0.6);
        assert_eq!(s.id_of(&Kind::Function, "b"), Some(1));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn overflow_and_reset_fall_back_to_non_session_payloads() {
        let mut s = Session::with_max_symbols(2);
        let mut d = SessionDecoder::new();
        let sym = |n: &str| Symbol::new(n, "fn", 0.5, "p", 0);
        let g1 = call(vec![sym("a"), sym("b")], vec![]);
        let text = s.encode(&g1).unwrap();
        assert!(text.contains("session=true"));
        d.decode(&text).unwrap();
        assert_eq!(d.len(), 2);
        // A third symbol exceeds the bound: a full payload without session=true.
        let g2 = call(vec![sym("a"), sym("c")], vec![]);
        let text = s.encode(&g2).unwrap();
        assert_eq!(
            text,
            "GCF profile=graph tool=test symbols=2\n## targets\n@0 fn a 0.50 p\n@1 fn c 0.50 p\n"
        );
        assert_eq!(d.decode(&text).unwrap(), g2);
        assert!(d.is_empty() && s.is_empty());
        // The next call starts a new session from @0.
        let text = s.encode(&g2).unwrap();
        assert!(text.contains("session=true") && text.contains("@1 fn c"));
        assert_eq!(d.decode(&text).unwrap(), g2);
        // After a reset, one non-session payload, then a new session.
        s.reset();
        assert!(!s.encode(&g1).unwrap().contains("session"));
        assert!(s.encode(&g1).unwrap().contains("@0 fn a 0.50 p"));
    }

    #[test]
    fn the_decoder_rejects_unresolvable_and_rebound_ids_atomically() {
        let mut d = SessionDecoder::new();
        d.decode("GCF profile=graph symbols=1 session=true\n## targets\n@4 fn a 0.50 p\n")
            .unwrap();
        let e = d
            .decode("GCF profile=graph symbols=2 session=true\n## targets\n@5 fn b 0.50 p\n@7  # previously transmitted\n")
            .unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("unresolved_reference", Some(4), Some(1))
        );
        // The failed payload declared @5; it must not have been kept.
        assert!(d.symbol(5).is_none());
        let e = d
            .decode("GCF profile=graph symbols=1 session=true\n## targets\n@4 type a 0.50 p\n")
            .unwrap_err();
        assert_eq!(e.code(), "duplicate_symbol");
        let e = d
            .decode("GCF profile=graph symbols=1 session=true\n## targets\n@9 fn a 0.50 p\n")
            .unwrap_err();
        assert_eq!(e.code(), "duplicate_symbol");
        let e = d
            .decode("GCF profile=graph symbols=2 session=true\n## targets\n@4  # previously transmitted\n@4  # previously transmitted\n")
            .unwrap_err();
        assert_eq!(e.code(), "duplicate_symbol");
        let g = d
            .decode("GCF profile=graph symbols=2 edges=1 session=true\n## related\n@4  # previously transmitted\n@6 type a 0.10 q\n## edges [1]\n@6<@4 wraps\n")
            .unwrap();
        assert_eq!(g.symbols[0], Symbol::new("a", "fn", 0.5, "p", 1));
        assert_eq!(
            g.edges,
            [Edge::new("a", "a", "wraps").with_kinds("fn", "type")]
        );
        // Edges may only use ids of this payload.
        let e = d
            .decode("GCF profile=graph symbols=1 edges=1 session=true\n## targets\n@6  # x\n## edges [1]\n@6<@4 calls\n")
            .unwrap_err();
        assert_eq!(e.code(), "unknown_edge_reference");
        // The session bound.
        let mut small = SessionDecoder::with_options(DecoderOptions::new().max_elements(1));
        let e = small
            .decode("GCF profile=graph symbols=2 session=true\n## targets\n@0 fn a 0.50 p\n@1 fn b 0.50 p\n")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded(Limit::Elements));
    }

    #[test]
    fn a_stateless_decoder_cannot_resolve_references() {
        let e = crate::decode_graph(
            "GCF profile=graph symbols=1 session=true\n## targets\n@0  # previously transmitted\n",
        )
        .unwrap_err();
        assert_eq!(e.code(), "unresolved_reference");
    }
}
