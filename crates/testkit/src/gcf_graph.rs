//! The round-trip oracle of the GCF graph profile (`agentwire-gcf`), shared by its property
//! tests and the `gcf_graph_decode` fuzz target.
//!
//! Invariants checked, on graphs whose scores are on the two-decimal grid the wire carries
//! (other scores are rounded by design; see `Graph::round_scores`):
//!
//! - **buffered**: `decode_graph(encode_graph(g))` is `g` up to order (both in canonical
//!   order), re-encoding gives the same bytes, and the pack root survives;
//! - **streamed**: writing `g`'s symbols then its edges with `GraphStreamEncoder` decodes to
//!   `g`, and cutting the stream before its trailer is reported as `truncated_input`;
//! - **session**: one `Session` encodes a sequence of calls and one `SessionDecoder` rebuilds
//!   every call's full graph from the payloads;
//! - **delta**: `Delta::between(base, new)` encodes, decodes to itself, and applied to `base`
//!   gives `new`'s symbols and edges (edge status is not part of a snapshot), with both roots
//!   verified; a delta that cannot carry the change fails with `unsupported_value` only;
//! - **typed errors**: input the decoders reject fails with an error code, never a panic, and
//!   whatever they accept passes the checks above;
//! - **streaming**: reading the bytes a line at a time (`decode_payload_reader`,
//!   `decode_graph_reader`) gives what the in-memory decoder gives: the same payload, or the
//!   same error code, line and column ([`check_reader`]).

use agentwire_gcf::{
    decode_graph, decode_graph_slice, encode_graph, pack_root, DecoderOptions, Delta, Edge,
    ErrorKind, Graph, GraphStreamEncoder, Session, SessionDecoder, Spec, StreamHeader,
};

use crate::{Bug, Roundtrip};

/// `graph` in normal form: symbols and edges in canonical order, and edge endpoint kinds set
/// exactly where a qualified name is shared (as the decoder sets them).
pub fn normal_form(graph: &Graph) -> Graph {
    let mut g = graph.clone();
    let shared = |name: &str| {
        g.symbols
            .iter()
            .filter(|s| s.qualified_name == name)
            .nth(1)
            .is_some()
    };
    let kind_of = |name: &str| {
        g.symbols
            .iter()
            .find(|s| s.qualified_name == name)
            .map(|s| s.kind.clone())
    };
    let edges: Vec<Edge> = g
        .edges
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if shared(&e.source) {
                e.source_kind = e.source_kind.or_else(|| kind_of(&e.source));
            } else {
                e.source_kind = None;
            }
            if shared(&e.target) {
                e.target_kind = e.target_kind.or_else(|| kind_of(&e.target));
            } else {
                e.target_kind = None;
            }
            e
        })
        .collect();
    g.edges = edges;
    g.sort_canonical();
    g
}

/// The snapshot part of `graph` in normal form: symbols and edges (without status) only.
pub fn snapshot(graph: &Graph) -> Graph {
    let mut g = Graph {
        symbols: graph.symbols.clone(),
        edges: graph.edges.clone(),
        ..Graph::default()
    };
    for e in &mut g.edges {
        e.status = None;
    }
    normal_form(&g)
}

fn differ(what: &str, expected: &Graph, actual: &Graph, text: &str) -> Bug {
    Bug(format!(
        "{what}: the graph changed\nexpected: {expected:?}\nactual:   {actual:?}\ntext:\n{text}"
    ))
}

/// Checks the buffered form of `graph` (see the module docs) and returns the encoded text.
/// `graph` must be valid and on the score grid.
pub fn check_graph(graph: &Graph) -> Result<String, Bug> {
    let text = encode_graph(graph).map_err(|e| Bug(format!("encoding failed: {e}\n{graph:?}")))?;
    let decoded = decode_graph(&text)
        .map_err(|e| Bug(format!("decoding the encoder's output failed: {e}\n{text}")))?;
    let expected = normal_form(graph);
    if normal_form(&decoded) != expected {
        return Err(differ("buffered round trip", &expected, &decoded, &text));
    }
    let again = encode_graph(&decoded).map_err(|e| Bug(format!("re-encoding failed: {e}")))?;
    if again != text {
        return Err(Bug(format!(
            "encoding is not idempotent\nfirst:\n{text}\nsecond:\n{again}"
        )));
    }
    let roots = (pack_root(graph), pack_root(&decoded));
    match roots {
        (Ok(a), Ok(b)) if a == b => {}
        other => return Err(Bug(format!("pack roots differ: {other:?}\n{text}"))),
    }
    let mut written = Vec::new();
    agentwire_gcf::encode_graph_to_writer(&mut written, graph)
        .map_err(|e| Bug(format!("encode_graph_to_writer failed: {e}")))?;
    if written != text.as_bytes() {
        return Err(Bug("encode_graph_to_writer wrote other bytes".into()));
    }
    Ok(text)
}

/// Streams `graph` (symbols in order, then edges by name), checks that it decodes back, and
/// that every cut before the trailer is `truncated_input` (or another typed error for a cut
/// inside a line). Returns the stream's text.
pub fn check_stream(graph: &Graph) -> Result<String, Bug> {
    let header = StreamHeader {
        tool: graph.tool.clone(),
        token_budget: graph.token_budget,
        tokens_used: graph.tokens_used,
        pack_root: graph.pack_root.clone(),
    };
    let mut out = Vec::new();
    let mut stream = GraphStreamEncoder::with_name_index(&mut out, &header)
        .map_err(|e| Bug(format!("starting a stream failed: {e}")))?;
    for s in &graph.symbols {
        stream
            .symbol(s)
            .map_err(|e| Bug(format!("streaming {s:?} failed: {e}")))?;
    }
    for e in &graph.edges {
        stream
            .edge_named(e)
            .map_err(|err| Bug(format!("streaming {e:?} failed: {err}")))?;
    }
    stream
        .finish()
        .map_err(|e| Bug(format!("finishing the stream failed: {e}")))?;
    let text = String::from_utf8(out).map_err(|e| Bug(format!("stream is not UTF-8: {e}")))?;
    let decoded =
        decode_graph(&text).map_err(|e| Bug(format!("decoding the stream failed: {e}\n{text}")))?;
    let expected = normal_form(graph);
    if normal_form(&decoded) != expected {
        return Err(differ("stream round trip", &expected, &decoded, &text));
    }
    // Every cut at a line end before the trailer is a truncation.
    let trailer = text.rfind("##! summary").unwrap_or(text.len());
    for (i, _) in text[..trailer].match_indices('\n') {
        match decode_graph(&text[..=i]) {
            Err(e) if e.kind() == ErrorKind::TruncatedInput => {}
            other => {
                return Err(Bug(format!(
                    "a stream cut after byte {i} was not reported as truncated: {other:?}\n{text}"
                )))
            }
        }
    }
    // Cuts inside a line fail with some typed error, or (a cut inside the last field of a
    // line) as truncated.
    for cut in (1..trailer).step_by(7) {
        if let Ok(g) = decode_graph(&text[..cut]) {
            return Err(Bug(format!(
                "a stream cut at byte {cut} decoded as complete: {g:?}\n{text}"
            )));
        }
    }
    Ok(text)
}

/// Encodes `calls` with one session and decodes them with one session decoder; every call's
/// full graph must come back. `max_symbols` bounds the session (overflow falls back to a
/// full non-session payload, which the decoder must follow).
pub fn check_session(calls: &[Graph], max_symbols: usize) -> Result<Vec<String>, Bug> {
    let mut session = Session::with_max_symbols(max_symbols);
    let mut decoder = SessionDecoder::new();
    let mut reader = SessionDecoder::new();
    let mut texts = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let text = session
            .encode(call)
            .map_err(|e| Bug(format!("session encode of call {i} failed: {e}\n{call:?}")))?;
        let decoded = session_decode(&mut decoder, &mut reader, text.as_bytes())?.map_err(|e| {
            Bug(format!(
                "session decode of call {i} failed: {e}\n{text}\nearlier:\n{}",
                texts.join("\n")
            ))
        })?;
        let expected = normal_form(call);
        if normal_form(&decoded) != expected {
            return Err(differ(
                &format!("session call {i}"),
                &expected,
                &decoded,
                &text,
            ));
        }
        if session.len() > max_symbols {
            return Err(Bug(format!(
                "the session holds {} symbols, over its bound {max_symbols}",
                session.len()
            )));
        }
        texts.push(text);
    }
    Ok(texts)
}

/// The next payload of a session, `input`, decoded by `memory` (`SessionDecoder::decode`)
/// and by `reader` (`SessionDecoder::decode_reader`, through a one-byte buffer), two decoders
/// that have read the same payloads before: both must give the same graph, or the same error
/// code and position, and hold the same session after it. On input that is not UTF-8, the
/// reader must fail and leave its session as it was.
pub fn session_decode(
    memory: &mut SessionDecoder,
    reader: &mut SessionDecoder,
    input: &[u8],
) -> Result<agentwire_gcf::Result<Graph>, Bug> {
    let streamed = reader.decode_reader(std::io::BufReader::with_capacity(1, input));
    let Ok(text) = std::str::from_utf8(input) else {
        if streamed.is_ok() {
            return Err(Bug(format!(
                "SessionDecoder::decode_reader accepted bytes that are not UTF-8: {streamed:?}"
            )));
        }
        return Ok(streamed);
    };
    let whole = memory.decode(text);
    same(
        "SessionDecoder::decode_reader",
        &streamed,
        "SessionDecoder::decode",
        &whole,
    )?;
    let held = |d: &SessionDecoder| {
        (0..d.len() as u64 + 64)
            .filter_map(|id| d.symbol(id).map(|s| (id, s.clone())))
            .collect::<Vec<_>>()
    };
    if memory.len() != reader.len() || held(memory) != held(reader) {
        return Err(Bug(format!(
            "after {text:?}, the session decoders hold different symbols\n\
             decode:        {:?}\ndecode_reader: {:?}",
            held(memory),
            held(reader)
        )));
    }
    Ok(whole)
}

/// Checks the delta from `base` to `new` (see the module docs). Returns the delta's text, or
/// `None` when the delta cannot carry the change (`unsupported_value`).
pub fn check_delta(base: &Graph, new: &Graph) -> Result<Option<String>, Bug> {
    let delta = match Delta::between(base, new) {
        Ok(delta) => delta,
        Err(e) if e.kind() == ErrorKind::UnsupportedValue => return Ok(None),
        Err(e) => return Err(Bug(format!("Delta::between failed: {e}"))),
    };
    let text = delta
        .encode()
        .map_err(|e| Bug(format!("delta encode failed: {e}\n{delta:?}")))?;
    let decoded =
        Delta::decode(&text).map_err(|e| Bug(format!("delta decode failed: {e}\n{text}")))?;
    if decoded != delta {
        return Err(Bug(format!(
            "delta round trip changed it\nbefore: {delta:?}\nafter:  {decoded:?}\n{text}"
        )));
    }
    let applied = decoded
        .apply(base)
        .map_err(|e| Bug(format!("applying the delta failed: {e}\n{text}")))?;
    let expected = snapshot(new);
    let actual = snapshot(&applied);
    if actual != expected {
        return Err(differ("delta apply", &expected, &actual, &text));
    }
    if applied.pack_root.as_deref() != Some(delta.new_root.as_str()) {
        return Err(Bug("the applied snapshot does not carry new_root".into()));
    }
    // Applying to anything else than the base is a root mismatch, never a silent success.
    if delta.base_root != delta.new_root {
        match decoded.apply(new) {
            Err(e) if e.kind() == ErrorKind::RootMismatch => {}
            other => {
                return Err(Bug(format!(
                    "applying a delta to the wrong snapshot gave {other:?}"
                )))
            }
        }
    }
    Ok(Some(text))
}

/// Decodes arbitrary bytes as a graph payload (full, delta, session); rejected input must
/// carry an error code, and accepted input must pass the round-trip checks.
pub fn check_bytes(input: &[u8]) -> Result<Roundtrip, Bug> {
    // A session decoder over the input split at its first blank line: two payloads.
    if let Ok(text) = std::str::from_utf8(input) {
        let options = DecoderOptions::new().max_elements(4096);
        let mut decoder = SessionDecoder::with_options(options.clone());
        let mut reader = SessionDecoder::with_options(options);
        for part in text.splitn(3, "\n\n") {
            if let Ok(g) = session_decode(&mut decoder, &mut reader, part.as_bytes())? {
                check_graph(&g)?;
            }
        }
        match Delta::decode(text) {
            Ok(delta) => {
                // v3.1 keeps an added symbol's distance as written (absent stays absent); the
                // current spec always writes one, 0 for an absent distance.
                let mut written = delta.clone();
                for added in &mut written.added {
                    added.distance.get_or_insert(0);
                }
                for (spec, expected) in [(Spec::V3_1, &delta), (Spec::LATEST, &written)] {
                    let again = delta.encode_with(spec).map_err(|e| {
                        Bug(format!(
                            "re-encoding a decoded delta ({spec:?}) failed: {e}"
                        ))
                    })?;
                    let back = Delta::decode(&again)
                        .map_err(|e| Bug(format!("re-decoding a delta failed: {e}\n{again}")))?;
                    if back != *expected {
                        return Err(Bug(format!(
                            "delta round trip ({spec:?}) changed it\nbefore: {expected:?}\n\
                             after:  {back:?}\n{again}"
                        )));
                    }
                }
            }
            Err(e) if e.code().is_empty() => {
                return Err(Bug(format!("an error without a code: {e}")))
            }
            Err(_) => {}
        }
    }
    check_reader(input)?;
    match decode_graph_slice(input) {
        Err(e) => {
            if e.code().is_empty() {
                return Err(Bug(format!("an error without a code: {e}")));
            }
            Ok(Roundtrip::Rejected(e.code().to_owned()))
        }
        Ok(graph) => {
            check_graph(&graph)?;
            Ok(Roundtrip::Ok)
        }
    }
}

/// The graph decoder reading `input` a line at a time (through a one-byte buffer, so that
/// every line arrives in pieces) against the in-memory decoder, with the default options and
/// with small limits: see [`check_reader_with`].
pub fn check_reader(input: &[u8]) -> Result<(), Bug> {
    check_reader_with(input, &DecoderOptions::new())?;
    check_reader_with(
        input,
        &DecoderOptions::new().max_line_length(48).max_elements(6),
    )
}

/// The graph decoder reading `input` a line at a time against the in-memory decoder, with
/// `options`:
///
/// - on UTF-8 input, `decode_payload_reader` gives what `decode_payload` gives (the same
///   payload, or the same error code, line and column), and `decode_graph_reader` what
///   `decode_graph` gives;
/// - on other input, the in-memory decoder reports the encoding error before anything else,
///   and the reader the first error in input order: it fails too, with that error, or with
///   one on an earlier line, or with the line-length limit on that line (checked before the
///   line's encoding).
///
/// The input-size limit is left out (counted as bytes arrive by the reader, checked first
/// by the in-memory decoder).
pub fn check_reader_with(input: &[u8], options: &DecoderOptions) -> Result<(), Bug> {
    let reader = || std::io::BufReader::with_capacity(1, input);
    let streamed = options.decode_payload_reader(reader());
    let Ok(text) = std::str::from_utf8(input) else {
        let whole = options.decode_graph_slice(input);
        let Err(w) = &whole else {
            return Err(Bug(format!(
                "decode_graph_slice accepted bytes that are not UTF-8: {whole:?}"
            )));
        };
        let earlier = match (&streamed, w.line()) {
            (Err(e), Some(line)) => {
                (e.code(), e.position()) == (w.code(), w.position())
                    || e.line().is_some_and(|l| l < line)
                    || (e.line() == Some(line) && e.code() == "limit_exceeded")
            }
            _ => false,
        };
        if !earlier {
            return Err(Bug(format!(
                "the graph reader and the in-memory decoder differ on bytes that are not \
                 UTF-8\nreader:    {streamed:?}\nin memory: {whole:?}"
            )));
        }
        return Ok(());
    };
    let whole = options.decode_payload(text);
    same("decode_payload_reader", &streamed, "decode_payload", &whole)?;
    let streamed = options.decode_graph_reader(reader());
    let whole = options.decode_graph(text);
    same("decode_graph_reader", &streamed, "decode_graph", &whole)
}

/// The same value, or errors with the same code and position.
fn same<T: PartialEq + std::fmt::Debug>(
    a_name: &str,
    a: &agentwire_gcf::Result<T>,
    b_name: &str,
    b: &agentwire_gcf::Result<T>,
) -> Result<(), Bug> {
    let agree = match (a, b) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => (a.code(), a.position()) == (b.code(), b.position()),
        _ => false,
    };
    if agree {
        Ok(())
    } else {
        Err(Bug(format!(
            "{a_name} and {b_name} differ\n{a_name}: {a:?}\n{b_name}: {b:?}"
        )))
    }
}
