//! The graph decoder (spec §3.2, §5, §6, §6a, §8, §9, §10, §13, §16.3, §16.5).
//!
//! One line parser reads every graph payload form (buffered, streamed, session, delta,
//! unchanged) and reports what it reads to a [`Sink`]; the sinks build a [`Graph`] (with or
//! without a session to resolve references) or a [`Delta`](crate::Delta). The parser checks
//! the grammar, the section structure, declared counts (`[N]`, `symbols=`, `edges=`) and the
//! `##! summary` trailer; the sinks check identities and references.
//!
//! Memory is bounded by the input: no allocation is sized by a declared count beyond what the
//! input's length can hold, and the number of symbols, edges, delta entries and sections are
//! each capped by
//! [`Limits::max_elements`](crate::Limits::max_elements).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use super::model::{abbreviate, is_ascii_token, is_token, Edge, EdgeStatus, Graph, Kind, Symbol};
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::header::{self, Profile};
use crate::lex::{self, Count, Line, Lines};
use crate::options::{DecoderOptions, Spec};
use crate::read::LineSource;
use crate::root::parse_savings;

// ---------------------------------------------------------------------------------------------
// Header

/// A validated graph header (spec §3.2). Unknown keys are accepted and ignored (§16.5 allows
/// a warning, never a rejection).
#[derive(Debug, Clone)]
pub(crate) struct GraphHeader<'a> {
    pub(crate) line: Line<'a>,
    pub(crate) tool: Option<&'a str>,
    pub(crate) budget: Option<u64>,
    pub(crate) tokens: Option<u64>,
    /// `symbols=`, with its text for positions.
    pub(crate) symbols: Option<(u64, &'a str)>,
    pub(crate) edges: Option<(u64, &'a str)>,
    pub(crate) pack_root: Option<&'a str>,
    pub(crate) session: bool,
    pub(crate) delta: bool,
    pub(crate) unchanged: bool,
    pub(crate) base_root: Option<&'a str>,
    pub(crate) new_root: Option<&'a str>,
    pub(crate) savings: Option<i64>,
}

/// A count in a header or trailer: `0` or a decimal without leading zeros.
fn parse_count(value: &str) -> Option<u64> {
    let b = value.as_bytes();
    let valid = match b.first() {
        Some(b'0') => b.len() == 1,
        Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if valid {
        value.parse().ok()
    } else {
        None
    }
}

fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Reads the header line and checks that it declares the graph profile.
pub(crate) fn read_graph_header<'a>(lines: &mut Lines<'a>) -> Result<GraphHeader<'a>> {
    graph_header(&header::read_header(lines)?)
}

/// Checks that a header declares the graph profile, and validates its fields.
pub(crate) fn graph_header<'a>(raw: &header::Header<'a>) -> Result<GraphHeader<'a>> {
    if raw.profile != Profile::Graph {
        return Err(raw.line.error(
            ErrorKind::ProfileMismatch,
            "this is a generic-profile payload; decode it with `from_str`",
        ));
    }
    let line = raw.line;
    let mut h = GraphHeader {
        line,
        tool: None,
        budget: None,
        tokens: None,
        symbols: None,
        edges: None,
        pack_root: None,
        session: false,
        delta: false,
        unchanged: false,
        base_root: None,
        new_root: None,
        savings: None,
    };
    for field in &raw.fields {
        let value = field.value;
        let bad = |what: &str| {
            line.error_at(
                ErrorKind::MalformedHeaderField,
                value,
                format!("header field {}={value}: expected {what}", field.key),
            )
        };
        let count = || parse_count(value).ok_or_else(|| bad("a count"));
        let flag = || parse_bool(value).ok_or_else(|| bad("true or false"));
        match field.key {
            "tool" => h.tool = Some(value),
            "budget" => h.budget = Some(count()?),
            "tokens" => h.tokens = Some(count()?),
            "symbols" => h.symbols = Some((count()?, value)),
            "edges" => h.edges = Some((count()?, value)),
            "pack_root" => h.pack_root = Some(value),
            "session" => h.session = flag()?,
            "delta" => h.delta = flag()?,
            "unchanged" => h.unchanged = flag()?,
            "base_root" => h.base_root = Some(value),
            "new_root" => h.new_root = Some(value),
            "savings" => h.savings = Some(parse_savings(value).ok_or_else(|| bad("N%"))?),
            // Unknown keys: forward compatibility.
            _ => {}
        }
    }
    if h.delta && h.unchanged {
        return Err(line.error(
            ErrorKind::MalformedHeaderField,
            "a payload cannot be both delta=true and unchanged=true",
        ));
    }
    if h.unchanged && h.pack_root.is_none() {
        return Err(line.error(
            ErrorKind::MalformedHeaderField,
            "an unchanged=true reply must carry the pack_root it confirms",
        ));
    }
    if h.delta {
        for (key, value) in [("base_root", h.base_root), ("new_root", h.new_root)] {
            if value.is_none() {
                return Err(line.error(
                    ErrorKind::MalformedDelta,
                    format!("a delta=true payload must declare {key}"),
                ));
            }
        }
    }
    Ok(h)
}

// ---------------------------------------------------------------------------------------------
// Events

/// A full node line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    pub(crate) id: u64,
    /// The `@N` token, for positions.
    pub(crate) id_text: &'a str,
    /// The kind token as written.
    pub(crate) kind: &'a str,
    pub(crate) qname: &'a str,
    pub(crate) score: f64,
    pub(crate) provenance: &'a str,
}

impl Node<'_> {
    pub(crate) fn symbol(&self, distance: u32) -> Symbol {
        Symbol {
            qualified_name: self.qname.to_owned(),
            kind: Kind::new(self.kind),
            score: self.score,
            provenance: self.provenance.to_owned(),
            distance,
        }
    }
}

/// An edge line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgeLine<'a> {
    pub(crate) target: u64,
    pub(crate) target_text: &'a str,
    pub(crate) source: u64,
    pub(crate) source_text: &'a str,
    pub(crate) edge_type: &'a str,
    /// The status word, if any.
    pub(crate) status: Option<&'a str>,
}

/// What a payload body contains, reported line by line. Errors returned by a sink carry their
/// own position (use the line given). The line and what was parsed from it live only for the
/// call (a reader holds one line at a time): a sink keeps owned copies.
pub(crate) trait Sink {
    /// A node line in a symbol group.
    fn node(&mut self, line: &Line<'_>, node: Node<'_>, distance: u32) -> Result<()>;
    /// A session reference line `@N  # ...` in a symbol group.
    fn reference(&mut self, line: &Line<'_>, id: u64, id_text: &str, distance: u32) -> Result<()>;
    /// An edge line.
    fn edge(&mut self, line: &Line<'_>, edge: EdgeLine<'_>) -> Result<()>;
    /// A delta `## removed` line `kind qname`.
    fn removed(&mut self, _line: &Line<'_>, _kind: &str, _qname: &str) -> Result<()> {
        Ok(())
    }
    /// A delta `## added` node line, with its explicit distance (6-field form) if any.
    fn added(&mut self, _line: &Line<'_>, _node: Node<'_>, _distance: Option<u32>) -> Result<()> {
        Ok(())
    }
    /// A delta edge line `source -> target type`, in `## edges_added` (or
    /// `## edges_removed` when `removed`).
    fn delta_edge(
        &mut self,
        _line: &Line<'_>,
        _removed: bool,
        _source: &str,
        _target: &str,
        _edge_type: &str,
    ) -> Result<()> {
        Ok(())
    }
}

/// What the parser saw, beyond the events.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct BodyStats {
    /// Node and reference lines.
    pub(crate) symbols: u64,
    /// Edge lines.
    pub(crate) edges: u64,
    /// A `##! summary` trailer was present.
    pub(crate) trailer: bool,
}

// ---------------------------------------------------------------------------------------------
// Body

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Group(u32),
    Edges,
    Removed,
    Added,
    EdgesRemoved,
    EdgesAdded,
}

/// A section header and what its section held: owned, since the line it came from is gone
/// once the next one is read (from a reader).
#[derive(Debug, Clone)]
struct Section {
    name: String,
    kind: SectionKind,
    count: Option<Count>,
    /// The header's line number.
    line: usize,
    /// The column of the count bracket (or of the name), for positions.
    count_column: usize,
    actual: u64,
}

impl Section {
    /// An error at the section's count (or its name).
    #[cold]
    fn error_at_count(&self, kind: ErrorKind, message: String) -> Error {
        Error::at_line(kind, self.line, self.count_column, message)
    }
}

/// Splits a line into whitespace-separated tokens (runs of spaces and tabs), scanning bytes:
/// the separators are ASCII, so every token boundary is a character boundary.
fn tokens(text: &str) -> Tokens<'_> {
    Tokens { text, pos: 0 }
}

struct Tokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let mut i = self.pos;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i == b.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < b.len() && b[i] != b' ' && b[i] != b'\t' {
            i += 1;
        }
        self.pos = i;
        self.text.get(start..i)
    }
}

/// Parses `@N` (`text` starts with `@`): the id, or `invalid_symbol_id`.
fn symbol_id<'a>(line: &Line<'a>, token: &'a str) -> Result<u64> {
    let digits = token.strip_prefix('@').unwrap_or(token);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(line.error_at(
            ErrorKind::InvalidSymbolId,
            token,
            format!("symbol id {token:?} is not `@` followed by a decimal integer"),
        ));
    }
    digits.parse().map_err(|_| {
        line.error_at(
            ErrorKind::InvalidSymbolId,
            token,
            format!("symbol id {token:?} is too large"),
        )
    })
}

/// Parses a score: `[-]DIGITS.2DIGIT` (spec §4), or `invalid_score`.
fn score<'a>(line: &Line<'a>, token: &'a str) -> Result<f64> {
    let b = token.as_bytes();
    let body = b.strip_prefix(b"-").unwrap_or(b);
    let valid = body.len() >= 4
        && body[body.len() - 3] == b'.'
        && body[..body.len() - 3].iter().all(u8::is_ascii_digit)
        && body[body.len() - 2..].iter().all(u8::is_ascii_digit);
    if !valid {
        return Err(line.error_at(
            ErrorKind::InvalidScore,
            token,
            format!("score {token:?} is not a decimal with exactly two fraction digits"),
        ));
    }
    match token.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(line.error_at(
            ErrorKind::OutOfRange,
            token,
            format!("score {token:?} is beyond the range of a 64-bit float"),
        )),
    }
}

/// Whether `token` is a positional token (qname, provenance, edge type) of `spec`: printable
/// ASCII in v3.1 (`%x21-7E`); in the current spec any characters but whitespace and controls,
/// as the current fleet reads them (suite v3.5.3, `graph-decode/004`).
fn name_token(spec: Spec, token: &str) -> bool {
    if spec.current() {
        is_token(token)
    } else {
        is_ascii_token(token)
    }
}

/// Checks a positional token (qname, provenance, edge type), see [`name_token`].
fn check_token<'a>(
    spec: Spec,
    line: &Line<'a>,
    token: &'a str,
    what: &str,
    kind: ErrorKind,
) -> Result<()> {
    if name_token(spec, token) {
        Ok(())
    } else {
        Err(line.error_at(
            kind,
            token,
            if spec.current() {
                format!("{what} {token:?} holds a control character")
            } else {
                format!("{what} {token:?} is not printable ASCII (graph fields are %x21-7E)")
            },
        ))
    }
}

/// Parses the five (or, with `allow_distance`, six) fields of a node line. `shape` is the code
/// for a wrong number of fields or a bad kind.
fn node_line<'a>(
    spec: Spec,
    line: &Line<'a>,
    shape: ErrorKind,
    allow_distance: bool,
) -> Result<(Node<'a>, Option<u32>)> {
    let mut t = tokens(line.text);
    let mut fields: [&'a str; 6] = [""; 6];
    let mut n = 0;
    for token in t.by_ref() {
        if n == 6 {
            n += 1;
            break;
        }
        fields[n] = token;
        n += 1;
    }
    let max = if allow_distance { 6 } else { 5 };
    if n < 5 || n > max {
        return Err(line.error(
            shape,
            format!(
                "a symbol line has {} positional fields (`@id kind qualified_name score \
                 provenance`), found {}",
                if allow_distance {
                    "5 or 6"
                } else {
                    "exactly 5"
                },
                if n > max {
                    format!("more than {max}")
                } else {
                    n.to_string()
                }
            ),
        ));
    }
    let [id_text, kind, qname, score_text, provenance, distance] = fields;
    if !id_text.starts_with('@') {
        return Err(line.error_at(shape, id_text, "a symbol line starts with its id `@N`"));
    }
    let id = symbol_id(line, id_text)?;
    if !lex::is_bare_key(kind) {
        return Err(line.error_at(
            shape,
            kind,
            format!("kind {kind:?} is not a bare key ([A-Za-z_][A-Za-z0-9_]*)"),
        ));
    }
    check_token(spec, line, qname, "qualified name", shape)?;
    let score = score(line, score_text)?;
    check_token(spec, line, provenance, "provenance", shape)?;
    let distance = if n == 6 {
        Some(
            parse_count(distance)
                .and_then(|d| u32::try_from(d).ok())
                .ok_or_else(|| {
                    line.error_at(
                        ErrorKind::MalformedDelta,
                        distance,
                        format!("distance {distance:?} is not a decimal integer"),
                    )
                })?,
        )
    } else {
        None
    };
    Ok((
        Node {
            id,
            id_text,
            kind,
            qname,
            score,
            provenance,
        },
        distance,
    ))
}

/// Parses `@target<@source type [status]`: in v3.1 the status is `added` or `removed`, in the
/// current spec any word (the current fleet writes others, such as `active`).
fn edge_line<'a>(spec: Spec, line: &Line<'a>) -> Result<EdgeLine<'a>> {
    let mut t = tokens(line.text);
    let ends = t.next().unwrap_or("");
    let Some(lt) = ends.find('<') else {
        return Err(line.error(
            ErrorKind::InvalidEdgeSyntax,
            "an edge line is `@target<@source type` (no `<` found)",
        ));
    };
    let (target_text, source_text) = (&ends[..lt], &ends[lt + 1..]);
    if !target_text.starts_with('@') || !source_text.starts_with('@') {
        return Err(line.error_at(
            ErrorKind::InvalidEdgeSyntax,
            ends,
            "an edge line is `@target<@source type`: both ends are `@N` ids",
        ));
    }
    let target = symbol_id(line, target_text)?;
    let source = symbol_id(line, source_text)?;
    let Some(edge_type) = t.next() else {
        return Err(line.error(
            ErrorKind::InvalidEdgeSyntax,
            "an edge line needs an edge type after `@target<@source`",
        ));
    };
    check_token(
        spec,
        line,
        edge_type,
        "edge type",
        ErrorKind::InvalidEdgeSyntax,
    )?;
    let status = match t.next() {
        None => None,
        Some(s) if spec.current() => {
            check_token(spec, line, s, "edge status", ErrorKind::InvalidEdgeSyntax)?;
            Some(s)
        }
        Some(s) => Some(EdgeStatus::parse(s).map(|_| s).ok_or_else(|| {
            line.error_at(
                ErrorKind::InvalidEdgeSyntax,
                s,
                format!("edge status {s:?} is neither `added` nor `removed`"),
            )
        })?),
    };
    if let Some(extra) = t.next() {
        return Err(line.error_at(
            ErrorKind::InvalidEdgeSyntax,
            extra,
            "unexpected text after the edge status",
        ));
    }
    Ok(EdgeLine {
        target,
        target_text,
        source,
        source_text,
        edge_type,
        status,
    })
}

/// Parses a section header `## name [count]` into its kind (by the payload's mode).
fn section(line: &Line<'_>, delta: bool) -> Result<Section> {
    let rest = line.text.strip_prefix("##").unwrap_or("");
    let Some(rest) = rest.strip_prefix(' ') else {
        return Err(line.error(
            ErrorKind::InvalidLine,
            "a section header is `## name` (one space after `##`)",
        ));
    };
    let name_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let name = &rest[..name_len];
    if !lex::is_bare_key(name) {
        return Err(line.error_at(
            ErrorKind::InvalidLine,
            rest,
            "a section name is a bare key (`targets`, `related`, `distance_3`, `edges`, ...)",
        ));
    }
    let after = &rest[name_len..];
    let (count, count_text) = if after.is_empty() {
        (None, name)
    } else {
        let Some(bracket) = after.strip_prefix(' ').filter(|b| b.starts_with('[')) else {
            return Err(line.error_at(
                ErrorKind::InvalidLine,
                after,
                "a section header is `## name` or `## name [N]`",
            ));
        };
        let (count, tail) = lex::count(line, bracket)?;
        if !tail.is_empty() {
            return Err(line.error_at(
                ErrorKind::InvalidLine,
                tail,
                "unexpected text after the section count (graph sections have no field list)",
            ));
        }
        (Some(count), bracket)
    };
    let kind = match (delta, name) {
        (false, "targets") => SectionKind::Group(0),
        (false, "related") => SectionKind::Group(1),
        (false, "extended") => SectionKind::Group(2),
        (false, "edges") => SectionKind::Edges,
        (false, "removed" | "added" | "edges_removed" | "edges_added") => {
            return Err(line.error_at(
                ErrorKind::MalformedDelta,
                name,
                format!("`## {name}` is a delta section, but the header has no delta=true"),
            ))
        }
        (false, other) => match other.strip_prefix("distance_").map(str::parse::<u32>) {
            Some(Ok(d)) if other.len() > "distance_".len() => SectionKind::Group(d),
            _ => {
                return Err(line.error_at(
                    ErrorKind::InvalidLine,
                    name,
                    format!(
                        "unknown graph section `## {other}` (expected targets, related, \
                         extended, distance_N or edges)"
                    ),
                ))
            }
        },
        (true, "removed") => SectionKind::Removed,
        (true, "added") => SectionKind::Added,
        (true, "edges_removed") => SectionKind::EdgesRemoved,
        (true, "edges_added") => SectionKind::EdgesAdded,
        (true, other) => {
            return Err(line.error_at(
                ErrorKind::MalformedDelta,
                name,
                format!(
                    "unknown delta section `## {other}` (a delta has removed, added, \
                     edges_removed and edges_added)"
                ),
            ))
        }
    };
    Ok(Section {
        name: name.to_owned(),
        kind,
        count,
        line: line.number,
        count_column: line.column_of(count_text),
        actual: 0,
    })
}

/// Parses the body after the header, reporting to `sink`. Checks section counts, the header's
/// `symbols=`/`edges=`, the trailer, and truncation.
///
/// `lines` is the payload in memory ([`Lines`]) or a reader holding one line: the trailer line
/// is the one line kept past its turn (nothing may follow it, which the next line checks).
pub(crate) fn parse_body<S: LineSource>(
    lines: &mut S,
    head: &GraphHeader<'_>,
    opts: &DecoderOptions,
    sink: &mut dyn Sink,
) -> Result<BodyStats> {
    let max = opts.limits.max_elements;
    let spec = opts.spec;
    let mut sections: Vec<Section> = Vec::new();
    let mut stats = BodyStats::default();
    // The trailer line (validated when read, parsed again at the end): (text, indent, number).
    let mut summary: Option<(String, usize, usize)> = None;
    while let Some(line) = lines.next_line()? {
        if summary.is_some() {
            return Err(line.error(
                ErrorKind::InvalidLine,
                "nothing may follow the `##! summary` trailer",
            ));
        }
        if line.indent != 0 {
            return Err(Error::at_line(
                ErrorKind::InvalidIndent,
                line.number,
                1,
                "graph payloads are flat: lines are not indented",
            ));
        }
        if head.unchanged {
            return Err(line.error(
                ErrorKind::InvalidLine,
                "an unchanged=true reply is the header line alone",
            ));
        }
        if header::is_metadata(&line) {
            header::parse_summary(line)?;
            summary = Some((line.text.to_owned(), line.indent, line.number));
            continue;
        }
        if line.text.starts_with("##") {
            close(sections.last())?;
            if sections.len() >= max {
                return Err(too_many(&line, "sections", max));
            }
            let s = section(&line, head.delta)?;
            if let Some(Count::Known(n)) = s.count {
                if n > max as u64 {
                    return Err(s.error_at_count(
                        ErrorKind::LimitExceeded(Limit::Elements),
                        format!("declared count {n} exceeds the limit of {max} elements"),
                    ));
                }
            }
            sections.push(s);
            continue;
        }
        let Some(current) = sections.last_mut() else {
            return Err(line.error(
                ErrorKind::InvalidLine,
                if line.text.starts_with('#') {
                    "not a comment (`# ` with a space), a section header or data"
                } else {
                    "data before the first section header (`## targets`, ...)"
                },
            ));
        };
        current.actual += 1;
        match current.kind {
            SectionKind::Group(distance) => {
                stats.symbols += 1;
                if stats.symbols > max as u64 {
                    return Err(too_many(&line, "symbols", max));
                }
                if !line.text.starts_with('@') {
                    return Err(line.error(
                        ErrorKind::InvalidNodeLine,
                        "a symbol line is `@id kind qualified_name score provenance`",
                    ));
                }
                if let Some(id_text) = reference_line(line.text) {
                    let id = symbol_id(&line, id_text)?;
                    sink.reference(&line, id, id_text, distance)?;
                } else {
                    let (node, _) = node_line(spec, &line, ErrorKind::InvalidNodeLine, false)?;
                    sink.node(&line, node, distance)?;
                }
            }
            SectionKind::Edges => {
                stats.edges += 1;
                if stats.edges > max as u64 {
                    return Err(too_many(&line, "edges", max));
                }
                if !line.text.starts_with('@') {
                    return Err(line.error(
                        ErrorKind::InvalidEdgeSyntax,
                        "an edge line is `@target<@source type`",
                    ));
                }
                sink.edge(&line, edge_line(spec, &line)?)?;
            }
            SectionKind::Removed => {
                count_delta(&mut stats, &line, max)?;
                let mut t = tokens(line.text);
                match (t.next(), t.next(), t.next()) {
                    (Some(kind), Some(qname), None)
                        if lex::is_bare_key(kind) && name_token(spec, qname) =>
                    {
                        sink.removed(&line, kind, qname)?;
                    }
                    _ => {
                        return Err(line.error(
                            ErrorKind::MalformedDelta,
                            "a `## removed` line is `kind qualified_name`",
                        ))
                    }
                }
            }
            SectionKind::Added => {
                count_delta(&mut stats, &line, max)?;
                if !line.text.starts_with('@') || reference_line(line.text).is_some() {
                    return Err(line.error(
                        ErrorKind::MalformedDelta,
                        "an `## added` line is a full node line `@id kind qualified_name score \
                         provenance` (never a session reference)",
                    ));
                }
                let (node, distance) = node_line(spec, &line, ErrorKind::MalformedDelta, true)?;
                sink.added(&line, node, distance)?;
            }
            SectionKind::EdgesRemoved | SectionKind::EdgesAdded => {
                count_delta(&mut stats, &line, max)?;
                let removed = current.kind == SectionKind::EdgesRemoved;
                let mut t = tokens(line.text);
                match (t.next(), t.next(), t.next(), t.next(), t.next()) {
                    (Some(source), Some("->"), Some(target), Some(edge_type), None)
                        if name_token(spec, source)
                            && name_token(spec, target)
                            && name_token(spec, edge_type) =>
                    {
                        sink.delta_edge(&line, removed, source, target, edge_type)?;
                    }
                    _ => {
                        return Err(line.error(
                            ErrorKind::MalformedDelta,
                            "a delta edge line is `source -> target type`",
                        ))
                    }
                }
            }
        }
    }
    close(sections.last())?;
    let end_line = lines.end_line();
    // The header's counts (buffered mode). An unchanged reply's `symbols=` counts the
    // snapshot it confirms, not lines.
    if !head.unchanged && !head.delta {
        for (declared, actual, what) in [
            (head.symbols, stats.symbols, "symbols"),
            (head.edges, stats.edges, "edges"),
        ] {
            if let Some((n, text)) = declared {
                if n != actual {
                    return Err(head.line.error_at(
                        ErrorKind::CountMismatch,
                        text,
                        format!("the header declares {what}={n}, the payload has {actual}"),
                    ));
                }
            }
        }
    }
    match summary {
        Some((text, indent, number)) => {
            stats.trailer = true;
            let line = Line {
                text: &text,
                indent,
                number,
            };
            check_summary(spec, &header::parse_summary(line)?, &sections, &stats)?;
        }
        None => {
            let deferred = sections.iter().find(|s| s.count == Some(Count::Deferred));
            let streamed = !head.delta && !head.unchanged && head.symbols.is_none();
            if let Some(s) = deferred {
                if opts.require_trailer {
                    return Err(Error::at_line(
                        ErrorKind::TruncatedInput,
                        end_line,
                        1,
                        format!(
                            "the payload ends without its `##! summary` trailer, which the \
                             deferred section `## {} [?]` (line {}) requires: the stream was \
                             cut short",
                            s.name, s.line
                        ),
                    ));
                }
            } else if streamed && opts.require_trailer {
                return Err(Error::at_line(
                    ErrorKind::TruncatedInput,
                    end_line,
                    1,
                    "the header has no `symbols=` count (a streamed payload) and the payload \
                     ends without its `##! summary` trailer: the stream was cut short",
                ));
            }
        }
    }
    Ok(stats)
}

fn count_delta(stats: &mut BodyStats, line: &Line<'_>, max: usize) -> Result<()> {
    stats.symbols += 1;
    if stats.symbols > max as u64 {
        return Err(too_many(line, "delta entries", max));
    }
    Ok(())
}

#[cold]
fn too_many(line: &Line<'_>, what: &str, max: usize) -> Error {
    line.error(
        ErrorKind::LimitExceeded(Limit::Elements),
        format!("more than {max} {what} (the elements limit)"),
    )
}

/// The id token of a session reference line `@N  # previously transmitted`, if `text` is one.
fn reference_line(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let end = b.iter().position(|&c| c == b' ' || c == b'\t')?;
    let rest = b[end..].iter().position(|&c| c != b' ' && c != b'\t')?;
    (b[end + rest] == b'#').then(|| text.get(..end)).flatten()
}

/// Checks a closed section's declared count.
fn close(section: Option<&Section>) -> Result<()> {
    if let Some(s) = section {
        if let Some(Count::Known(n)) = s.count {
            if n != s.actual {
                return Err(s.error_at_count(
                    ErrorKind::CountMismatch,
                    format!(
                        "`## {}` declares {n} lines, the section has {}",
                        s.name, s.actual
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Validates a `##! summary` trailer (spec §8.4, §8.6, §13.2): `symbols=` and `edges=` against
/// the totals. In v3.1 also `counts=`, with one entry per deferred `[?]` section in document
/// order (the v3.1 form), or one per symbol group then the edge total (the form of later
/// encoders), or as `label:count` entries; the paper's `sections=label:count` likewise. The
/// current spec makes a graph trailer's `counts` informational (§8.4.1: a decoder must not
/// reject it, however it is written: gcf-python and gcf-proxy sum a group that recurs), so it
/// is not checked.
fn check_summary(
    spec: Spec,
    summary: &header::Summary<'_>,
    sections: &[Section],
    stats: &BodyStats,
) -> Result<()> {
    let line = &summary.line;
    let number = |text: &str| {
        parse_count(text).ok_or_else(|| {
            line.error_at(
                ErrorKind::InvalidCount,
                text,
                format!("invalid trailer count {text:?}"),
            )
        })
    };
    for (key, actual) in [("symbols", stats.symbols), ("edges", stats.edges)] {
        if let Some(text) = summary.get(key) {
            let n = number(text)?;
            if n != actual {
                return Err(line.error_at(
                    ErrorKind::CountMismatch,
                    text,
                    format!("the trailer declares {key}={n}, the payload has {actual}"),
                ));
            }
        }
    }
    for key in ["counts", "sections"] {
        let Some(value) = summary.get(key).filter(|_| !spec.current()) else {
            continue;
        };
        let mismatch =
            |text: &str, message: String| line.error_at(ErrorKind::CountMismatch, text, message);
        let entries: Vec<&str> = value.split(',').collect();
        if entries.iter().any(|e| e.contains(':')) {
            // Labeled: `targets:2,related:1,edges:3`, per section name.
            if let Some(plain) = entries.iter().find(|e| !e.contains(':')) {
                return Err(line.error_at(
                    ErrorKind::InvalidCount,
                    plain,
                    "mixed labeled and unlabeled trailer counts",
                ));
            }
            let mut seen: Vec<&str> = Vec::new();
            for entry in entries {
                let (label, count) = entry.split_once(':').ok_or_else(|| {
                    line.error_at(
                        ErrorKind::InvalidCount,
                        entry,
                        "mixed labeled and unlabeled trailer counts",
                    )
                })?;
                let n = number(count)?;
                if seen.contains(&label) {
                    return Err(mismatch(entry, format!("label {label:?} appears twice")));
                }
                seen.push(label);
                let actual: u64 = sections
                    .iter()
                    .filter(|s| s.name == *label)
                    .map(|s| s.actual)
                    .sum();
                if n != actual {
                    return Err(mismatch(
                        entry,
                        format!("the trailer counts {n} for `{label}`, the payload has {actual}"),
                    ));
                }
            }
            continue;
        }
        if key == "sections" {
            return Err(line.error_at(
                ErrorKind::InvalidCount,
                value,
                "`sections=` entries are `label:count`",
            ));
        }
        let counts = entries
            .iter()
            .map(|e| number(e).map(|n| (n, *e)))
            .collect::<Result<Vec<_>>>()?;
        let deferred: Vec<&Section> = sections
            .iter()
            .filter(|s| s.count == Some(Count::Deferred))
            .collect();
        if counts.len() == deferred.len() {
            for ((n, text), s) in counts.iter().zip(&deferred) {
                if *n != s.actual {
                    return Err(mismatch(
                        text,
                        format!(
                            "the trailer counts {n} for the deferred section `## {}` (line \
                             {}), which has {}",
                            s.name, s.line, s.actual
                        ),
                    ));
                }
            }
            continue;
        }
        // Per symbol group in order, then the edge total (encoders after v3.4).
        let groups: Vec<&Section> = sections
            .iter()
            .filter(|s| matches!(s.kind, SectionKind::Group(_)))
            .collect();
        if counts.len() == groups.len() + 1 {
            let expected = groups
                .iter()
                .map(|s| s.actual)
                .chain(std::iter::once(stats.edges));
            if counts.iter().map(|c| c.0).eq(expected) {
                continue;
            }
        }
        return Err(mismatch(
            value,
            format!(
                "the trailer has {} counts for {} deferred sections",
                counts.len(),
                deferred.len()
            ),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Building a graph

/// What a session knows: the symbols declared by earlier payloads, by id.
pub(crate) trait Resolver {
    /// The symbol bound to `id` (its distance is ignored).
    fn lookup(&self, id: u64) -> Option<&Symbol>;
    /// The id bound to `(abbreviation, qname)`, if any.
    fn id_of(&self, abbreviation: &str, qname: &str) -> Option<u64>;
}

/// Wire ids → symbol indices: no map while the ids are `0, 1, 2, ...` (what every encoder
/// writes outside sessions), a hash map from the first other id on.
#[derive(Debug, Default)]
struct Ids {
    /// Ids seen so far are exactly `0..count`.
    sequential: bool,
    count: usize,
    map: HashMap<u64, usize>,
}

impl Ids {
    fn new() -> Self {
        Ids {
            sequential: true,
            ..Ids::default()
        }
    }

    /// Records `id` for the next index; `false` if the id was seen before.
    fn insert(&mut self, id: u64) -> bool {
        let index = self.count;
        if self.sequential {
            if id == index as u64 {
                self.count += 1;
                return true;
            }
            if id < index as u64 {
                return false;
            }
            self.sequential = false;
            self.map = (0..index).map(|i| (i as u64, i)).collect();
        }
        match self.map.entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(index);
                self.count += 1;
                true
            }
        }
    }

    fn get(&self, id: u64) -> Option<usize> {
        if self.sequential {
            (id < self.count as u64).then_some(id as usize)
        } else {
            self.map.get(&id).copied()
        }
    }
}

/// The symbols whose qualified names hash alike in a payload (almost always: the symbols of
/// one qualified name; the names are compared where it matters).
#[derive(Debug)]
enum Names {
    One(usize),
    Many(Vec<usize>),
}

impl Names {
    fn indices(&self) -> &[usize] {
        match self {
            Names::One(i) => std::slice::from_ref(i),
            Names::Many(v) => v,
        }
    }
}

/// A hasher for keys that are already hashes: passes a `u64` through.
#[derive(Debug, Default, Clone, Copy)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed with this hasher; fold anything else all the same.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Builds a [`Graph`] from a full (buffered, streamed or session) payload.
pub(crate) struct GraphSink<'r> {
    pub(crate) graph: Graph,
    ids: Ids,
    /// The hash of a qualified name (of declared symbols) → the indices of the symbols whose
    /// names hash so. Keyed by hash rather than by name, so that the names live once, in
    /// `graph.symbols`, whether the payload is in memory or read a line at a time.
    names: HashMap<u64, Names, BuildHasherDefault<PassThrough>>,
    /// Hashes the qualified names (SipHash with random keys, as `HashMap`'s default).
    hasher: RandomState,
    /// Whether any symbol came from a session reference (its name is not in `names`).
    references: bool,
    /// Per edge: (source, target) symbol indices.
    ends: Vec<(usize, usize)>,
    /// The session's earlier declarations, to resolve references.
    resolver: Option<&'r dyn Resolver>,
    /// Per symbol: its wire id, and whether it was a full declaration (for the session).
    pub(crate) declared: Vec<(u64, bool)>,
}

impl<'r> GraphSink<'r> {
    pub(crate) fn new(head: &GraphHeader<'_>, resolver: Option<&'r dyn Resolver>) -> Self {
        GraphSink {
            graph: Graph {
                tool: head.tool.map(str::to_owned),
                token_budget: head.budget,
                tokens_used: head.tokens,
                pack_root: head.pack_root.map(str::to_owned),
                symbols: Vec::new(),
                edges: Vec::new(),
            },
            ids: Ids::new(),
            names: HashMap::default(),
            hasher: RandomState::new(),
            references: false,
            ends: Vec::new(),
            resolver,
            declared: Vec::new(),
        }
    }

    /// Reserves room for the counts the header declares, capped by what `input_len` bytes can
    /// hold (a node line takes at least 14 bytes, an edge line 8), so a lying count cannot
    /// make the decoder allocate more than the input justifies.
    pub(crate) fn reserve(&mut self, head: &GraphHeader<'_>, input_len: usize) {
        let cap = |declared: Option<(u64, &str)>, min_line: usize| {
            declared.map_or(0, |(n, _)| {
                usize::try_from(n)
                    .unwrap_or(usize::MAX)
                    .min(input_len / min_line)
            })
        };
        let symbols = cap(head.symbols, 14);
        let edges = cap(head.edges, 8);
        self.graph.symbols.reserve(symbols);
        self.declared.reserve(symbols);
        self.names.reserve(symbols);
        self.graph.edges.reserve(edges);
        self.ends.reserve(edges);
    }

    fn add_id(&mut self, line: &Line<'_>, id: u64, id_text: &str) -> Result<()> {
        if self.ids.insert(id) {
            Ok(())
        } else {
            Err(line.error_at(
                ErrorKind::DuplicateSymbol,
                id_text,
                format!("symbol id {id_text} appears twice in this payload"),
            ))
        }
    }

    fn add(
        &mut self,
        line: &Line<'_>,
        id: u64,
        id_text: &str,
        symbol: Symbol,
        key: (&str, &str),
    ) -> Result<()> {
        let index = self.graph.symbols.len();
        let symbols = &self.graph.symbols;
        match self.names.entry(self.hasher.hash_one(key.1)) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(Names::One(index));
            }
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                if let Some(&first) = slot.get().indices().iter().find(|&&j| {
                    symbols[j].kind.abbreviation() == key.0 && symbols[j].qualified_name == key.1
                }) {
                    return Err(line.error_at(
                        ErrorKind::DuplicateSymbol,
                        id_text,
                        format!(
                            "{} {} is listed twice in this payload (as @{} and {id_text})",
                            key.0, key.1, self.declared[first].0
                        ),
                    ));
                }
                let mut all = slot.get().indices().to_vec();
                all.push(index);
                slot.insert(Names::Many(all));
            }
        }
        self.add_id(line, id, id_text)?;
        self.graph.symbols.push(symbol);
        self.declared.push((id, true));
        Ok(())
    }

    /// Finishes the graph: sets endpoint kinds where a qualified name is shared.
    pub(crate) fn finish(mut self) -> (Graph, Vec<(u64, bool)>) {
        if self.graph.edges.is_empty() {
            return (self.graph, self.declared);
        }
        let symbols = &self.graph.symbols;
        let shared: Vec<bool> = if self.references {
            // Referenced names are not in `names`: count every symbol's name.
            let mut count: HashMap<&str, u32> = HashMap::with_capacity(symbols.len());
            for s in symbols {
                *count.entry(s.qualified_name.as_str()).or_insert(0) += 1;
            }
            symbols
                .iter()
                .map(|s| count.get(s.qualified_name.as_str()) > Some(&1))
                .collect()
        } else {
            let mut shared = vec![false; symbols.len()];
            for names in self.names.values() {
                if let Names::Many(v) = names {
                    let name = |i: usize| symbols[i].qualified_name.as_str();
                    for &i in v {
                        // Another symbol of the bucket with the same name (a bucket with two
                        // names is a hash collision).
                        shared[i] = v.iter().any(|&j| j != i && name(j) == name(i));
                    }
                }
            }
            shared
        };
        for (edge, &(s, t)) in self.graph.edges.iter_mut().zip(&self.ends) {
            if shared[s] {
                edge.source_kind = Some(symbols[s].kind.clone());
            }
            if shared[t] {
                edge.target_kind = Some(symbols[t].kind.clone());
            }
        }
        (self.graph, self.declared)
    }
}

impl Sink for GraphSink<'_> {
    fn node(&mut self, line: &Line<'_>, node: Node<'_>, distance: u32) -> Result<()> {
        let key = (abbreviate(node.kind), node.qname);
        if let Some(session) = self.resolver {
            // A re-declaration must keep the binding of earlier payloads (spec §9.2).
            if let Some(bound) = session.lookup(node.id) {
                if bound.kind.abbreviation() != key.0 || bound.qualified_name != key.1 {
                    return Err(line.error_at(
                        ErrorKind::DuplicateSymbol,
                        node.id_text,
                        format!(
                            "{} is bound to {} {} in this session, not to {} {}",
                            node.id_text,
                            bound.kind.abbreviation(),
                            bound.qualified_name,
                            key.0,
                            key.1
                        ),
                    ));
                }
            } else if let Some(other) = session.id_of(key.0, key.1) {
                return Err(line.error_at(
                    ErrorKind::DuplicateSymbol,
                    node.id_text,
                    format!(
                        "{} {} already has id @{other} in this session, not {}",
                        key.0, key.1, node.id_text
                    ),
                ));
            }
        }
        self.add(line, node.id, node.id_text, node.symbol(distance), key)
    }

    fn reference(&mut self, line: &Line<'_>, id: u64, id_text: &str, distance: u32) -> Result<()> {
        let Some(bound) = self.resolver.and_then(|s| s.lookup(id)) else {
            return Err(line.error_at(
                ErrorKind::UnresolvedReference,
                id_text,
                if self.resolver.is_some() {
                    format!(
                        "{id_text} refers to a symbol no earlier payload of this session declared"
                    )
                } else {
                    format!(
                        "{id_text} refers to a symbol of an earlier session payload; decode \
                         session payloads with a SessionDecoder"
                    )
                },
            ));
        };
        let mut symbol = bound.clone();
        symbol.distance = distance;
        // No identity check is needed: the session binds each identity to one id, and
        // `node` rejects a declaration whose identity the session binds to another id.
        self.add_id(line, id, id_text)?;
        self.references = true;
        self.graph.symbols.push(symbol);
        self.declared.push((id, false));
        Ok(())
    }

    fn edge(&mut self, line: &Line<'_>, edge: EdgeLine<'_>) -> Result<()> {
        let find = |id: u64, text: &str| {
            self.ids.get(id).ok_or_else(|| {
                line.error_at(
                    ErrorKind::UnknownEdgeReference,
                    text,
                    format!("edge endpoint {text} is not a symbol declared earlier in the payload"),
                )
            })
        };
        let target = find(edge.target, edge.target_text)?;
        let source = find(edge.source, edge.source_text)?;
        let symbols = &self.graph.symbols;
        self.graph.edges.push(Edge {
            source: symbols[source].qualified_name.clone(),
            target: symbols[target].qualified_name.clone(),
            edge_type: edge.edge_type.to_owned(),
            status: edge.status.map(EdgeStatus::from_word),
            source_kind: None,
            target_kind: None,
        });
        self.ends.push((source, target));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{decode_graph, decode_payload, DecoderOptions, ErrorKind, Limit, Payload};

    /// The code, line and column of decoding `text`'s error.
    fn error(text: &str) -> (&'static str, u64, u64) {
        let e = decode_graph(text).unwrap_err();
        (e.code(), e.line().unwrap_or(0), e.column().unwrap_or(0))
    }

    const H: &str = "GCF profile=graph tool=t symbols=1\n## targets\n";

    #[test]
    fn errors_point_at_the_offending_token() {
        let cases: &[(&str, (&str, u64, u64))] = &[
            ("@0 fn pkg.Foo 0.90\n", ("invalid_node_line", 3, 1)),
            ("@x fn pkg.Foo 0.90 lsp\n", ("invalid_symbol_id", 3, 1)),
            ("@0 fn pkg.Foo nope lsp\n", ("invalid_score", 3, 15)),
            ("@0 fn pkg.Foo 1e400 lsp\n", ("invalid_score", 3, 15)),
            ("@0 f-n pkg.Foo 0.90 lsp\n", ("invalid_node_line", 3, 4)),
            ("@0 fn pkg.\u{7}x 0.90 lsp\n", ("invalid_node_line", 3, 7)),
            (
                "@0 fn a 0.90 lsp\n## edges [1]\n@0 @0 calls\n",
                ("invalid_edge_syntax", 5, 1),
            ),
            (
                "@0 fn a 0.90 lsp\n## edges [1]\n@0<@1 calls\n",
                ("unknown_edge_reference", 5, 4),
            ),
            (
                "@0 fn a 0.90 lsp\n## edges [1]\n@0<@0 calls x y\n",
                ("invalid_edge_syntax", 5, 15),
            ),
            (
                "@0 fn a 0.90 lsp\n## edges [2]\n@0<@0 calls\n",
                ("count_mismatch", 4, 10),
            ),
            (
                "@0 fn a 0.90 lsp\n@0 fn b 0.90 lsp\n",
                ("duplicate_symbol", 4, 1),
            ),
            ("  @0 fn a 0.90 lsp\n", ("invalid_indent", 3, 1)),
        ];
        for (body, expected) in cases {
            assert_eq!(error(&format!("{H}{body}")), *expected, "{body:?}");
        }
        // Non-ASCII names: v3.1 reads printable ASCII only; the current spec reads them (as
        // the fleet writes them: suite v3.5.3, graph-decode/004).
        let text = format!("{H}@0 fn pkg.é 0.90 lsp\n");
        let e = DecoderOptions::new()
            .spec(crate::Spec::V3_1)
            .decode_graph(&text)
            .unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("invalid_node_line", Some(3), Some(7))
        );
        assert_eq!(
            decode_graph(&text).unwrap().symbols[0].qualified_name,
            "pkg.é"
        );
        // An edge status other than `added` and `removed`: v3.1 rejects it.
        let text = format!("{H}@0 fn a 0.90 lsp\n## edges [1]\n@0<@0 calls x\n");
        let e = DecoderOptions::new()
            .spec(crate::Spec::V3_1)
            .decode_graph(&text)
            .unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("invalid_edge_syntax", Some(5), Some(13))
        );
        assert_eq!(
            decode_graph(&text).unwrap().edges[0].status,
            Some(crate::EdgeStatus::Other("x".into()))
        );
        // Header counts point at the value.
        assert_eq!(
            error("GCF profile=graph tool=t symbols=2\n## targets\n@0 fn a 0.90 lsp\n"),
            ("count_mismatch", 1, 34)
        );
        // A truncated stream points at the end of the input.
        assert_eq!(
            error("GCF profile=graph tool=t\n## targets\n@0 fn a 0.90 lsp\n"),
            ("truncated_input", 3, 1)
        );
    }

    #[test]
    fn ids_switch_from_sequential_to_a_map() {
        let mut ids = super::Ids::new();
        assert!(ids.insert(0) && ids.insert(1));
        assert_eq!((ids.get(1), ids.get(2)), (Some(1), None));
        assert!(!ids.insert(0));
        assert!(ids.insert(7) && ids.insert(2));
        assert!(!ids.insert(7) && !ids.insert(1));
        assert_eq!(
            (ids.get(0), ids.get(7), ids.get(2), ids.get(3)),
            (Some(0), Some(2), Some(3), None)
        );
        assert_eq!(
            error("GCF profile=graph symbols=2\n## targets\n@5 fn a 0.50 p\n@5 fn b 0.50 p\n"),
            ("duplicate_symbol", 4, 1)
        );
    }

    #[test]
    fn trailer_rules() {
        let body = "## targets\n@0 fn a 0.50 p\n## edges [?]\n@0<@0 x\n@0<@0 y\n";
        // The current spec makes `counts` informational (§8.4.1); totals are still checked.
        let current =
            |trailer: &str| decode_graph(&format!("GCF profile=graph\n{body}{trailer}\n"));
        for lenient in [
            "##! summary counts=3",
            "##! summary counts=1,1",
            "##! summary counts=x",
            "##! summary counts=a:1,2",
            "##! summary counts=targets:9,edges:9",
            "##! summary symbols=1 edges=2 counts=2,1,2",
        ] {
            assert!(current(lenient).is_ok(), "{lenient}");
        }
        assert_eq!(
            current("##! summary edges=1").unwrap_err().code(),
            "count_mismatch"
        );
        // v3.1 checks them, in any of the forms encoders have written.
        let v31 = DecoderOptions::new().spec(crate::Spec::V3_1);
        let ok = |trailer: &str| v31.decode_graph(&format!("GCF profile=graph\n{body}{trailer}\n"));
        assert!(ok("##! summary symbols=1 edges=2 counts=2").is_ok());
        assert!(ok("##! summary counts=1,2").is_ok());
        assert!(ok("##! summary counts=targets:1,edges:2").is_ok());
        assert!(ok("##! summary sections=edges:2,targets:1").is_ok());
        assert!(ok("##! summary future=1").is_ok());
        for bad in [
            "##! summary counts=3",
            "##! summary counts=1,1",
            "##! summary counts=2,1,2",
            "##! summary edges=1",
            "##! summary counts=targets:1,edges:1",
            "##! summary counts=targets:1,targets:1",
            "##! summary sections=2",
        ] {
            let e = ok(bad).unwrap_err();
            assert!(
                matches!(e.code(), "count_mismatch" | "invalid_count"),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            ok("##! summary counts=x").unwrap_err().code(),
            "invalid_count"
        );
        assert_eq!(
            ok("##! summary counts=a:1,2").unwrap_err().code(),
            "invalid_count"
        );
        // Without the trailer: truncated, unless the caller accepts it.
        let text = format!("GCF profile=graph\n{body}");
        assert_eq!(decode_graph(&text).unwrap_err().code(), "truncated_input");
        let g = DecoderOptions::new()
            .require_trailer(false)
            .decode_graph(&text)
            .unwrap();
        assert_eq!(g.edges.len(), 2);
    }

    #[test]
    fn limits_are_enforced_before_allocation() {
        let opts = DecoderOptions::new().max_elements(2);
        let e = opts
            .decode_graph("GCF profile=graph symbols=3\n## targets\n@0 fn a 0.50 p\n@1 fn b 0.50 p\n@2 fn c 0.50 p\n")
            .unwrap_err();
        assert_eq!(
            (e.kind(), e.line()),
            (ErrorKind::LimitExceeded(Limit::Elements), Some(5))
        );
        let e = opts
            .decode_graph("GCF profile=graph symbols=0\n## edges [3]\n")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded(Limit::Elements));
        let e = DecoderOptions::new()
            .max_line_length(10)
            .decode_graph("GCF profile=graph\n")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded(Limit::LineLength));
        let e = DecoderOptions::new()
            .max_input_size(Some(5))
            .decode_graph_slice(b"GCF profile=graph\n")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded(Limit::InputSize));
        let e = DecoderOptions::new()
            .max_input_size(Some(5))
            .decode_graph_reader(&b"GCF profile=graph symbols=0\n"[..])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded(Limit::InputSize));
    }

    #[test]
    fn payload_kinds() {
        let e = decode_graph("GCF profile=generic\na=1\n").unwrap_err();
        assert_eq!(e.code(), "profile_mismatch");
        let delta = "GCF profile=graph delta=true base_root=a new_root=b\n## removed\nfn x\n";
        assert_eq!(decode_graph(delta).unwrap_err().code(), "profile_mismatch");
        assert!(matches!(decode_payload(delta).unwrap(), Payload::Delta(_)));
        let unchanged = "GCF profile=graph unchanged=true pack_root=r symbols=3\n";
        assert_eq!(
            decode_graph(unchanged).unwrap_err().code(),
            "profile_mismatch"
        );
        let g = crate::decode_graph_reader(&b"GCF profile=graph symbols=0\n"[..]).unwrap();
        assert!(g.symbols.is_empty());
        assert_eq!(
            crate::decode_graph_slice(b"GCF profile=graph symbols=0\n\xff\n")
                .unwrap_err()
                .code(),
            "invalid_utf8"
        );
    }
}
