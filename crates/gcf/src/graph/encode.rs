//! The buffered graph encoder (spec §3.2, §5, §6, §6a, §16.1) and the line writers it shares
//! with the session, delta and stream encoders.

use super::model::{wire_score, write_score, EdgeStatus, Graph, Index, Symbol};
use crate::error::Result;
use crate::header;

/// The header line's fields, in the canonical order of the v3.1 reference encoders:
/// `tool budget tokens symbols edges session pack_root` (buffered and session payloads), with
/// the counts left out for streams.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct HeaderLine<'a> {
    pub(crate) tool: Option<&'a str>,
    pub(crate) budget: Option<u64>,
    pub(crate) tokens: Option<u64>,
    pub(crate) symbols: Option<u64>,
    pub(crate) edges: Option<u64>,
    pub(crate) session: bool,
    pub(crate) pack_root: Option<&'a str>,
}

impl<'a> HeaderLine<'a> {
    pub(crate) fn of(graph: &'a Graph) -> Self {
        HeaderLine {
            tool: graph.tool.as_deref(),
            budget: graph.token_budget,
            tokens: graph.tokens_used,
            pack_root: graph.pack_root.as_deref(),
            ..HeaderLine::default()
        }
    }

    /// Writes the line, with its `\n`. `edges=` is left out when zero, as the reference does.
    pub(crate) fn write(&self, out: &mut String) -> Result<()> {
        out.push_str("GCF profile=graph");
        if let Some(tool) = self.tool {
            header::write_field(out, "tool", tool)?;
        }
        let mut num = itoa::Buffer::new();
        if let Some(n) = self.budget {
            header::write_field(out, "budget", num.format(n))?;
        }
        if let Some(n) = self.tokens {
            header::write_field(out, "tokens", num.format(n))?;
        }
        if let Some(n) = self.symbols {
            header::write_field(out, "symbols", num.format(n))?;
        }
        if let Some(n) = self.edges.filter(|&n| n > 0) {
            header::write_field(out, "edges", num.format(n))?;
        }
        if self.session {
            out.push_str(" session=true");
        }
        if let Some(root) = self.pack_root {
            header::write_field(out, "pack_root", root)?;
        }
        out.push('\n');
        Ok(())
    }
}

/// Writes the group header of `distance`: `## targets`, `## related`, `## extended` or
/// `## distance_N` (spec §6a).
pub(crate) fn write_group(out: &mut String, distance: u32) {
    out.push_str("## ");
    write_group_name(out, distance);
    out.push('\n');
}

/// Writes a distance group's name: `targets`, `related`, `extended`, `distance_N`.
pub(crate) fn write_group_name(out: &mut String, distance: u32) {
    match distance {
        0 => out.push_str("targets"),
        1 => out.push_str("related"),
        2 => out.push_str("extended"),
        n => {
            out.push_str("distance_");
            out.push_str(itoa::Buffer::new().format(n));
        }
    }
}

/// Writes `@id kind qname score provenance\n` (the symbol is validated by the caller).
pub(crate) fn write_node(out: &mut String, id: u64, symbol: &Symbol) {
    out.push('@');
    out.push_str(itoa::Buffer::new().format(id));
    out.push(' ');
    out.push_str(symbol.kind.abbreviation());
    out.push(' ');
    out.push_str(&symbol.qualified_name);
    out.push(' ');
    write_score(out, symbol.score);
    out.push(' ');
    out.push_str(&symbol.provenance);
    out.push('\n');
}

/// Writes the session reference line `@id  # previously transmitted\n` (spec §9).
pub(crate) fn write_reference(out: &mut String, id: u64) {
    out.push('@');
    out.push_str(itoa::Buffer::new().format(id));
    out.push_str("  # previously transmitted\n");
}

/// Writes `@target<@source type[ status]\n`.
pub(crate) fn write_edge(
    out: &mut String,
    target: u64,
    source: u64,
    edge_type: &str,
    status: Option<&EdgeStatus>,
) {
    let mut num = itoa::Buffer::new();
    out.push('@');
    out.push_str(num.format(target));
    out.push_str("<@");
    out.push_str(num.format(source));
    out.push(' ');
    out.push_str(edge_type);
    if let Some(status) = status {
        out.push(' ');
        out.push_str(status.as_str());
    }
    out.push('\n');
}

/// The canonical output order of a graph's symbols: distance ascending, then the score the
/// wire carries descending, then qualified name and kind abbreviation in byte order (so the
/// bytes depend only on the logical graph, never on input order). Returns symbol indices.
pub(crate) fn symbol_order(graph: &Graph) -> Vec<usize> {
    let symbols = &graph.symbols;
    // First by the compact (distance, score) key, then each run of equal keys by name: names
    // are compared only within runs.
    let mut keys: Vec<(u32, u64, usize)> = symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.distance, descending(wire_score(s.score)), i))
        .collect();
    keys.sort_unstable_by_key(|k| (k.0, k.1));
    let by_name = |a: &(u32, u64, usize), b: &(u32, u64, usize)| {
        let (sa, sb) = (&symbols[a.2], &symbols[b.2]);
        sa.qualified_name
            .cmp(&sb.qualified_name)
            .then_with(|| sa.kind.abbreviation().cmp(sb.kind.abbreviation()))
    };
    for run in keys.chunk_by_mut(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if run.len() > 1 {
            run.sort_unstable_by(by_name);
        }
    }
    keys.into_iter().map(|k| k.2).collect()
}

/// A key that sorts `f64`s in descending [`f64::total_cmp`] order.
fn descending(x: f64) -> u64 {
    let bits = x.to_bits();
    let ascending = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    !ascending
}

/// Writes the body of a graph payload: one group header per distance present, the symbols in
/// `order` (each a full node line, or a reference line where `reference[i]`), then
/// `## edges [N]` with the edges ordered by source id, target id, type and status. `ids[i]` is
/// the wire id of symbol `i`.
pub(crate) fn write_body(
    out: &mut String,
    index: &Index<'_>,
    order: &[usize],
    ids: &[u64],
    reference: Option<&[bool]>,
) {
    let graph = index.graph;
    let mut group = None;
    for &i in order {
        let symbol = &graph.symbols[i];
        if group != Some(symbol.distance) {
            write_group(out, symbol.distance);
            group = Some(symbol.distance);
        }
        if reference.is_some_and(|r| r[i]) {
            write_reference(out, ids[i]);
        } else {
            write_node(out, ids[i], symbol);
        }
    }
    if graph.edges.is_empty() {
        return;
    }
    // (source id, target id, edge index), then type and status on ties.
    let mut edges: Vec<(u64, u64, usize)> = index
        .ends
        .iter()
        .enumerate()
        .map(|(e, &(s, t))| (ids[s], ids[t], e))
        .collect();
    edges.sort_unstable_by(|a, b| {
        (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| {
            let (ea, eb) = (&graph.edges[a.2], &graph.edges[b.2]);
            ea.edge_type
                .cmp(&eb.edge_type)
                .then(ea.status.cmp(&eb.status))
        })
    });
    out.push_str("## edges [");
    out.push_str(itoa::Buffer::new().format(edges.len()));
    out.push_str("]\n");
    for (source, target, e) in edges {
        let edge = &graph.edges[e];
        write_edge(out, target, source, &edge.edge_type, edge.status.as_ref());
    }
}

/// A rough size of the encoded graph, to reserve the output once.
pub(crate) fn size_hint(graph: &Graph) -> usize {
    let symbols: usize = graph
        .symbols
        .iter()
        .map(|s| s.qualified_name.len() + s.provenance.len() + 20)
        .sum();
    let edges: usize = graph.edges.iter().map(|e| e.edge_type.len() + 16).sum();
    128 + symbols + edges
}

/// Encodes a graph as a buffered payload.
pub(crate) fn encode(graph: &Graph) -> Result<String> {
    let index = Index::build(graph)?;
    let order = symbol_order(graph);
    let mut ids = vec![0u64; graph.symbols.len()];
    for (id, &i) in order.iter().enumerate() {
        ids[i] = id as u64;
    }
    let mut out = String::with_capacity(size_hint(graph));
    HeaderLine {
        symbols: Some(graph.symbols.len() as u64),
        edges: Some(graph.edges.len() as u64),
        ..HeaderLine::of(graph)
    }
    .write(&mut out)?;
    write_body(&mut out, &index, &order, &ids, None);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::{Edge, Symbol};

    #[test]
    fn equal_names_with_different_kinds_keep_distinct_ids() {
        let g = Graph {
            tool: Some("t".into()),
            symbols: vec![
                Symbol::new("a.X", "type", 0.5, "p", 0),
                Symbol::new("a.X", "function", 0.5, "p", 0),
            ],
            edges: vec![Edge::new("a.X", "a.X", "wraps").with_kinds("function", "type")],
            ..Graph::default()
        };
        assert_eq!(
            encode(&g).unwrap(),
            "GCF profile=graph tool=t symbols=2 edges=1\n## targets\n\
             @0 fn a.X 0.50 p\n@1 type a.X 0.50 p\n## edges [1]\n@1<@0 wraps\n"
        );
    }

    #[test]
    fn order_is_distance_score_name_kind_and_edges_by_ids() {
        let g = Graph {
            symbols: vec![
                Symbol::new("c", "fn", 0.5, "p", 4),
                Symbol::new("b", "fn", 0.5, "p", 0),
                Symbol::new("a", "fn", 0.5, "p", 0),
                Symbol::new("z", "fn", 0.501, "p", 0),
                Symbol::new("y", "fn", 0.9, "p", 2),
            ],
            edges: vec![
                Edge::new("c", "a", "x").with_status(EdgeStatus::Removed),
                Edge::new("a", "c", "y"),
                Edge::new("a", "b", "x"),
                Edge::new("a", "b", "x"),
            ],
            ..Graph::default()
        };
        // 0.501 and 0.5 both travel as 0.50: the name decides.
        assert_eq!(
            encode(&g).unwrap(),
            "GCF profile=graph symbols=5 edges=4\n## targets\n@0 fn a 0.50 p\n@1 fn b 0.50 p\n\
             @2 fn z 0.50 p\n## extended\n@3 fn y 0.90 p\n## distance_4\n@4 fn c 0.50 p\n\
             ## edges [4]\n@1<@0 x\n@1<@0 x\n@4<@0 y\n@0<@4 x removed\n"
        );
    }

    #[test]
    fn unrepresentable_values_are_errors() {
        let mut g = Graph {
            symbols: vec![Symbol::new("a", "fn", 0.5, "p", 0)],
            edges: vec![Edge::new("a", "missing", "calls")],
            ..Graph::default()
        };
        assert_eq!(encode(&g).unwrap_err().code(), "unknown_edge_reference");
        g.edges.clear();
        g.tool = Some(String::new());
        assert_eq!(encode(&g).unwrap_err().code(), "unsupported_value");
        g.tool = None;
        g.pack_root = Some("a b".into());
        assert_eq!(encode(&g).unwrap_err().code(), "unsupported_value");
        g.pack_root = None;
        g.edges.push(Edge::new("a", "a", "two words"));
        assert_eq!(encode(&g).unwrap_err().code(), "unsupported_value");
        g.edges.clear();
        g.symbols[0].score = f64::NAN;
        assert_eq!(encode(&g).unwrap_err().code(), "invalid_number");
    }

    #[test]
    fn empty_graph() {
        assert_eq!(
            encode(&Graph::default()).unwrap(),
            "GCF profile=graph symbols=0\n"
        );
    }
}
