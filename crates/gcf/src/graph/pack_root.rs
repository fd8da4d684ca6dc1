//! The canonical pack root, algorithm `gcf-pack-root-v1` (spec §10.2).

use super::model::{Graph, Index};
use crate::error::Result;
use crate::number;
use crate::root::root_of;

/// The canonical bytes of `gcf-pack-root-v1` for `graph` (spec §10.2): one record per symbol,
/// `S⇥kind⇥qualified_name⇥score⇥provenance⇥distance␊`, and one per edge,
/// `E⇥source_kind⇥source⇥target_kind⇥target⇥edge_type␊`; symbol records sorted by byte order,
/// then edge records sorted by byte order.
///
/// Kinds are abbreviated (`fn`); the score is in the canonical number form of spec §2.3.1
/// (`0.78`, `1`, `0.9`), not the two-decimal wire form. Edge status and the header's metadata
/// are not part of the snapshot. The graph is validated first, as for encoding (every field
/// a tab- and newline-free token, every edge endpoint a symbol of the graph), so the records
/// are unambiguous.
///
/// ```
/// use agentwire_gcf::{pack_root_bytes, Graph, Symbol};
///
/// let graph = Graph {
///     symbols: vec![Symbol::new("pkg.Main", "function", 1.0, "lsp_resolved", 0)],
///     ..Graph::default()
/// };
/// assert_eq!(pack_root_bytes(&graph)?, b"S\tfn\tpkg.Main\t1\tlsp_resolved\t0\n");
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn pack_root_bytes(graph: &Graph) -> Result<Vec<u8>> {
    let index = Index::build(graph)?;
    Ok(canonical(&index))
}

/// The pack root of `graph`: `sha256:` and the lowercase hex SHA-256 of its canonical bytes
/// ([`pack_root_bytes`]). Two graphs with the same symbols and edges, in any order, have the
/// same root.
///
/// A consumer recomputes roots from decoded payloads, whose scores have two decimals: round a
/// producer's scores first ([`Graph::round_scores`]) when the consumer must be able to verify
/// them (deltas do this).
///
/// ```
/// use agentwire_gcf::{pack_root, Graph};
///
/// assert_eq!(
///     pack_root(&Graph::default())?,
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn pack_root(graph: &Graph) -> Result<String> {
    let index = Index::build(graph)?;
    Ok(root_of(&canonical(&index)))
}

/// The root of an already validated graph.
pub(crate) fn root_of_index(index: &Index<'_>) -> String {
    root_of(&canonical(index))
}

fn canonical(index: &Index<'_>) -> Vec<u8> {
    let graph = index.graph;
    let mut records: Vec<String> = Vec::with_capacity(graph.symbols.len());
    let mut num = itoa::Buffer::new();
    for s in &graph.symbols {
        let mut r = String::with_capacity(s.qualified_name.len() + s.provenance.len() + 24);
        r.push_str("S\t");
        r.push_str(s.kind.abbreviation());
        r.push('\t');
        r.push_str(&s.qualified_name);
        r.push('\t');
        // The index checked that the score is finite.
        let _ = number::write_f64(&mut r, s.score);
        r.push('\t');
        r.push_str(&s.provenance);
        r.push('\t');
        r.push_str(num.format(s.distance));
        r.push('\n');
        records.push(r);
    }
    records.sort_unstable();
    let mut edges: Vec<String> = Vec::with_capacity(graph.edges.len());
    for (e, &(source, target)) in graph.edges.iter().zip(&index.ends) {
        let (s, t) = (&graph.symbols[source], &graph.symbols[target]);
        let mut r = String::with_capacity(
            s.qualified_name.len() + t.qualified_name.len() + e.edge_type.len() + 20,
        );
        r.push_str("E\t");
        r.push_str(s.kind.abbreviation());
        r.push('\t');
        r.push_str(&s.qualified_name);
        r.push('\t');
        r.push_str(t.kind.abbreviation());
        r.push('\t');
        r.push_str(&t.qualified_name);
        r.push('\t');
        r.push_str(&e.edge_type);
        r.push('\n');
        edges.push(r);
    }
    edges.sort_unstable();
    let len = records.iter().chain(&edges).map(String::len).sum();
    let mut bytes = Vec::with_capacity(len);
    for r in records.iter().chain(&edges) {
        bytes.extend_from_slice(r.as_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::{Edge, Symbol};

    #[test]
    fn fixture_graph_pack_root_basic() {
        let g = Graph {
            symbols: vec![
                Symbol::new("pkg.Server", "function", 0.54, "lsp_resolved", 1),
                Symbol::new("pkg.Auth", "function", 0.78, "lsp_resolved", 0),
            ],
            edges: vec![Edge::new("pkg.Server", "pkg.Auth", "calls")],
            ..Graph::default()
        };
        assert_eq!(
            String::from_utf8(pack_root_bytes(&g).unwrap()).unwrap(),
            "S\tfn\tpkg.Auth\t0.78\tlsp_resolved\t0\nS\tfn\tpkg.Server\t0.54\tlsp_resolved\t1\n\
             E\tfn\tpkg.Server\tfn\tpkg.Auth\tcalls\n"
        );
        assert_eq!(
            pack_root(&g).unwrap(),
            "sha256:8e6d32973b4005c604399a14faa32799d54f427800008312a3357c349d41e572"
        );
    }

    #[test]
    fn invalid_graphs_have_no_root() {
        let g = Graph {
            symbols: vec![Symbol::new("a\tb", "fn", 0.5, "p", 0)],
            ..Graph::default()
        };
        assert!(pack_root(&g).is_err());
        let g = Graph {
            symbols: vec![Symbol::new("a", "fn", 0.5, "p", 0)],
            edges: vec![Edge::new("a", "b", "calls")],
            ..Graph::default()
        };
        assert_eq!(pack_root(&g).unwrap_err().code(), "unknown_edge_reference");
    }
}
