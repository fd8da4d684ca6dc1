//! Delta payloads (spec §10): what changed between two snapshots, and its atomic, verified
//! application.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::decode::{self, GraphHeader, Node, Sink};
use super::encode;
use super::model::{
    abbreviate, check_header_value, check_symbol, is_token, string_or_empty, wire_score, Edge,
    Graph, Index, Kind, Symbol, SymbolKey,
};
use super::pack_root::root_of_index;
use crate::error::{Error, ErrorKind, Result};
use crate::header;
use crate::lex::{self, Line, Lines};
use crate::options::{DecoderOptions, Spec};
use crate::root::savings;

/// A symbol of a delta's `## added` section: a full node line, with the distance when the
/// line carries one.
///
/// The v3.1 `## added` line has five fields and no distance (fixture `graph-delta/001`); the
/// six-field form `@id kind qname score provenance distance` of the current spec (v3.4.1)
/// carries it. When `distance` is `None`, [`Delta::apply`] infers it: one more than the
/// smallest distance of the symbol's neighbours (by the resulting snapshot's edges, either
/// direction) that the base already had, or 0 without such a neighbour.
/// [`Delta::between_with`] `Spec::V3_1` leaves the distance out exactly when that inference
/// gives it back; [`Delta::between`] always gives it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaSymbol {
    /// The qualified name.
    pub qualified_name: String,
    /// The kind.
    pub kind: Kind,
    /// The score (two decimals on the wire).
    pub score: f64,
    /// The provenance.
    pub provenance: String,
    /// The distance, when written (see the type's docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
}

impl DeltaSymbol {
    /// The symbol at `distance` (for a `None` distance, [`Delta::apply`] infers one).
    pub fn to_symbol(&self, distance: u32) -> Symbol {
        Symbol {
            qualified_name: self.qualified_name.clone(),
            kind: self.kind.clone(),
            score: self.score,
            provenance: self.provenance.clone(),
            distance,
        }
    }

    fn of(symbol: &Symbol, distance: Option<u32>) -> Self {
        DeltaSymbol {
            qualified_name: symbol.qualified_name.clone(),
            kind: symbol.kind.clone(),
            score: symbol.score,
            provenance: symbol.provenance.clone(),
            distance,
        }
    }
}

/// A delta payload (spec §10): the symbols and edges removed from, and added to, the base
/// snapshot named by `base_root`, giving the snapshot named by `new_root`.
///
/// Wire form, sections in this order and each left out when empty:
///
/// ```text
/// GCF profile=graph tool=T delta=true base_root=R1 new_root=R2 tokens=N savings=P%
/// ## removed
/// fn pkg.OldFunc
/// ## added
/// @0 fn pkg.NewFunc 0.85 rwr 0
/// ## edges_removed
/// pkg.Router -> pkg.OldFunc calls
/// ## edges_added
/// pkg.Router -> pkg.NewFunc calls
/// ```
///
/// A symbol whose score, provenance or distance changed is removed and added again (its
/// identity, `(kind, qualified_name)`, stays). Edges form a multiset: each line removes or
/// adds one occurrence. Edge lines name symbols by qualified name only, so a delta cannot
/// name an edge endpoint whose name several symbols share; [`Delta::between`] refuses such a
/// change (send the full graph). Edge status is not part of a snapshot.
///
/// The JSON form is the fixtures' (`baseRoot`, `newRoot`, `removed`, `added`, `removedEdges`,
/// `addedEdges`, `deltaTokens`, `savings`).
///
/// ```
/// use agentwire_gcf::{Delta, Edge, Graph, Symbol};
///
/// let base = Graph {
///     symbols: vec![
///         Symbol::new("pkg.Auth", "function", 0.78, "lsp_resolved", 0),
///         Symbol::new("pkg.Server", "function", 0.54, "lsp_resolved", 1),
///     ],
///     edges: vec![Edge::new("pkg.Server", "pkg.Auth", "calls")],
///     ..Graph::default()
/// };
/// let mut new = base.clone();
/// new.symbols[1] = Symbol::new("pkg.Handler", "function", 0.85, "lsp_resolved", 1);
/// new.edges[0] = Edge::new("pkg.Handler", "pkg.Auth", "calls");
///
/// let mut delta = Delta::between(&base, &new)?;
/// delta.tool = Some("test".into());
/// let text = delta.encode()?;
/// assert_eq!(
///     text,
///     concat!(
///         "GCF profile=graph tool=test delta=true ",
///         "base_root=sha256:8e6d32973b4005c604399a14faa32799d54f427800008312a3357c349d41e572 ",
///         "new_root=sha256:209fa026484529cc94ab00667a30bfa2951cb66e4bfeb237bbd528a9c640513d\n",
///         "## removed\nfn pkg.Server\n",
///         "## added\n@0 fn pkg.Handler 0.85 lsp_resolved 1\n",
///         "## edges_removed\npkg.Server -> pkg.Auth calls\n",
///         "## edges_added\npkg.Handler -> pkg.Auth calls\n",
///     )
/// );
/// // The consumer applies it to its copy of the base and checks both roots.
/// let applied = Delta::decode(&text)?.apply(&base)?;
/// assert_eq!(applied.symbols, new.symbols);
/// assert_eq!(applied.edges, new.edges);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    /// `tool=`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "string_or_empty"
    )]
    pub tool: Option<String>,
    /// `base_root=`: the snapshot the delta applies to.
    pub base_root: String,
    /// `new_root=`: the snapshot it produces.
    pub new_root: String,
    /// `tokens=`: the delta payload's tokens.
    #[serde(
        default,
        rename = "deltaTokens",
        skip_serializing_if = "Option::is_none"
    )]
    pub tokens: Option<u64>,
    /// `savings=P%`: the saving over the full payload, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub savings: Option<i64>,
    /// `## removed`: symbols of the base that the new snapshot does not have (as they were).
    #[serde(default)]
    pub removed: Vec<SymbolKey>,
    /// `## added`: symbols of the new snapshot that the base does not have (as they are).
    #[serde(default)]
    pub added: Vec<DeltaSymbol>,
    /// `## edges_removed`: edge occurrences to remove (no status or kinds).
    #[serde(default, rename = "removedEdges")]
    pub edges_removed: Vec<Edge>,
    /// `## edges_added`: edge occurrences to add (no status or kinds).
    #[serde(default, rename = "addedEdges")]
    pub edges_added: Vec<Edge>,
}

/// An edge's identity in a snapshot: source identity, target identity, type.
type EdgeKey<'g> = (&'g str, &'g str, &'g str, &'g str, &'g str);

fn edge_key<'g>(index: &Index<'g>, e: usize) -> EdgeKey<'g> {
    let graph = index.graph;
    let (s, t) = index.ends[e];
    let (s, t) = (&graph.symbols[s], &graph.symbols[t]);
    (
        s.kind.abbreviation(),
        s.qualified_name.as_str(),
        t.kind.abbreviation(),
        t.qualified_name.as_str(),
        graph.edges[e].edge_type.as_str(),
    )
}

/// For each symbol of a snapshot: the inferred distance from its retained neighbours (see
/// [`DeltaSymbol`]), given each symbol's retained distance (`Some`) or not.
fn infer(n: usize, retained: &[Option<u32>], ends: &[(usize, usize)]) -> Vec<u32> {
    let mut best: Vec<Option<u32>> = vec![None; n];
    for &(s, t) in ends {
        for (from, to) in [(s, t), (t, s)] {
            if let Some(d) = retained[from] {
                let d = d.saturating_add(1);
                if best[to].is_none_or(|b| d < b) {
                    best[to] = Some(d);
                }
            }
        }
    }
    best.into_iter().map(|b| b.unwrap_or(0)).collect()
}

#[cold]
fn unsupported(message: String) -> Error {
    Error::new(ErrorKind::UnsupportedValue, message)
}

#[cold]
fn malformed(message: String) -> Error {
    Error::new(ErrorKind::MalformedDelta, message)
}

/// Whether a qualified name at the start of a line would read as a comment or a header.
fn starts_like_structure(name: &str) -> bool {
    name == "#" || name.starts_with("##")
}

impl Delta {
    /// The delta that turns `base` into `new`, with both roots computed ([`pack_root`]); its
    /// `tool` is `new`'s. Removed symbols and edges are sorted by name; added symbols in the
    /// encoder's order (distance, score descending, name).
    ///
    /// Fails with `unsupported_value` when the delta cannot carry the change exactly, so the
    /// caller sends the full graph instead (spec §17: "fallback to full payload"):
    /// an added symbol whose score has more than two decimals (the consumer could not
    /// reproduce `new_root`; round with [`Graph::round_scores`]), or a changed edge whose
    /// endpoint name is shared by several symbols, or is `#` or starts with `##` (the line
    /// would read as a comment or a section header).
    ///
    /// Every added symbol carries its distance, as the current spec's six-field `## added`
    /// lines do (v3.4.1); [`Delta::between_with`] `Spec::V3_1` leaves out the distances a
    /// consumer can infer, for v3.1's five-field lines.
    ///
    /// [`pack_root`]: crate::pack_root
    pub fn between(base: &Graph, new: &Graph) -> Result<Delta> {
        Delta::between_with(base, new, Spec::LATEST)
    }

    /// [`Delta::between`] for the lines of `spec`: in v3.1 an added symbol's distance is left
    /// out (`None`) where [`Delta::apply`] infers it.
    pub fn between_with(base: &Graph, new: &Graph, spec: Spec) -> Result<Delta> {
        let ib = Index::build(base)?;
        let inew = Index::build(new)?;
        let mut retained: Vec<Option<u32>> = vec![None; new.symbols.len()];
        let mut kept = vec![false; base.symbols.len()];
        for (i, s) in new.symbols.iter().enumerate() {
            if let Some(b) = ib.find(s.kind.abbreviation(), &s.qualified_name) {
                let old = &base.symbols[b];
                if old.score.to_bits() == s.score.to_bits()
                    && old.provenance == s.provenance
                    && old.distance == s.distance
                {
                    retained[i] = Some(s.distance);
                    kept[b] = true;
                }
            }
        }
        let mut removed: Vec<SymbolKey> = base
            .symbols
            .iter()
            .zip(&kept)
            .filter(|(_, k)| !**k)
            .map(|(s, _)| s.key())
            .collect();
        removed.sort_unstable_by(|a, b| {
            a.qualified_name
                .cmp(&b.qualified_name)
                .then_with(|| a.kind.cmp(&b.kind))
        });
        let inferred = infer(new.symbols.len(), &retained, &inew.ends);
        let mut added = Vec::new();
        for i in encode::symbol_order(new) {
            if retained[i].is_some() {
                continue;
            }
            let s = &new.symbols[i];
            if wire_score(s.score).to_bits() != s.score.to_bits() {
                return Err(unsupported(format!(
                    "{} {}: score {} has more than two decimals, so a consumer could not \
                     reproduce new_root from the delta (round scores first)",
                    s.kind.abbreviation(),
                    s.qualified_name,
                    s.score
                )));
            }
            let distance = (spec.current() || inferred[i] != s.distance).then_some(s.distance);
            added.push(DeltaSymbol::of(s, distance));
        }
        // Edges as multisets of (source, target, type).
        let mut counts: HashMap<EdgeKey<'_>, (u32, u32)> = HashMap::new();
        for e in 0..base.edges.len() {
            counts.entry(edge_key(&ib, e)).or_default().0 += 1;
        }
        for e in 0..new.edges.len() {
            counts.entry(edge_key(&inew, e)).or_default().1 += 1;
        }
        let mut changed: Vec<(EdgeKey<'_>, u32, u32)> = counts
            .into_iter()
            .filter(|(_, (b, n))| b != n)
            .map(|(k, (b, n))| (k, b, n))
            .collect();
        changed.sort_unstable_by(|a, b| {
            (a.0 .1, a.0 .3, a.0 .4, a.0 .0, a.0 .2).cmp(&(b.0 .1, b.0 .3, b.0 .4, b.0 .0, b.0 .2))
        });
        let mut edges_removed = Vec::new();
        let mut edges_added = Vec::new();
        for ((_, source, _, target, edge_type), b, n) in changed {
            let (snapshot, list, times, which) = if b > n {
                (&ib, &mut edges_removed, b - n, "removed")
            } else {
                (&inew, &mut edges_added, n - b, "added")
            };
            for name in [source, target] {
                if snapshot.find_name(name).is_err() {
                    return Err(unsupported(format!(
                        "the {which} edge {source} -> {target} {edge_type} names {name}, \
                         which several symbols share: delta edge lines carry no kinds"
                    )));
                }
            }
            if starts_like_structure(source) {
                return Err(unsupported(format!(
                    "the {which} edge {source} -> {target} {edge_type} cannot be written: a \
                     delta edge line starting with {source:?} reads as a comment or header"
                )));
            }
            for _ in 0..times {
                list.push(Edge::new(source, target, edge_type));
            }
        }
        Ok(Delta {
            tool: new.tool.clone(),
            base_root: root_of_index(&ib),
            new_root: root_of_index(&inew),
            tokens: None,
            savings: None,
            removed,
            added,
            edges_removed,
            edges_added,
        })
    }

    /// Whether the delta changes nothing (then reply with [`Unchanged`](crate::Unchanged)).
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.added.is_empty()
            && self.edges_removed.is_empty()
            && self.edges_added.is_empty()
    }

    /// Sets `tokens=` to `delta_tokens` and `savings=` to the saving over a full payload of
    /// `full_tokens`: `100 × (1 − delta/full)` rounded half-to-even to an integer, as the
    /// reference does (0 when `full_tokens` is 0).
    ///
    /// ```
    /// let mut delta = agentwire_gcf::Delta::default();
    /// delta.set_token_counts(30, 200);
    /// assert_eq!((delta.tokens, delta.savings), (Some(30), Some(85)));
    /// ```
    pub fn set_token_counts(&mut self, delta_tokens: u64, full_tokens: u64) {
        self.tokens = Some(delta_tokens);
        self.savings = Some(savings(delta_tokens, full_tokens));
    }

    /// Encodes the delta payload (see the type's docs for the form).
    ///
    /// Fails with `unsupported_value` for values the line forms cannot carry: roots or tool
    /// with spaces or non-ASCII, names and types that are not printable ASCII without spaces,
    /// kinds that are not bare keys, edges with a status or kinds, an edge source `#` or
    /// `##...`; `invalid_number` for a non-finite score.
    ///
    /// The `## added` lines are those of the current spec (v3.4.1): six fields, the distance
    /// last (0 for a symbol without one); [`Delta::encode_with`] `Spec::V3_1` writes v3.1's
    /// five fields, and the distance only where it is given.
    pub fn encode(&self) -> Result<String> {
        self.encode_with(Spec::LATEST)
    }

    /// [`Delta::encode`] in the line forms of `spec`.
    pub fn encode_with(&self, spec: Spec) -> Result<String> {
        check_header_value("tool", self.tool.as_deref())?;
        let mut out = String::with_capacity(
            160 + 48 * (self.removed.len() + self.added.len())
                + 64 * (self.edges_removed.len() + self.edges_added.len()),
        );
        out.push_str("GCF profile=graph");
        if let Some(tool) = &self.tool {
            header::write_field(&mut out, "tool", tool)?;
        }
        out.push_str(" delta=true");
        header::write_field(&mut out, "base_root", &self.base_root)?;
        header::write_field(&mut out, "new_root", &self.new_root)?;
        if let Some(tokens) = self.tokens {
            header::write_field(&mut out, "tokens", itoa::Buffer::new().format(tokens))?;
        }
        if let Some(savings) = self.savings {
            let mut text = itoa::Buffer::new().format(savings).to_owned();
            text.push('%');
            header::write_field(&mut out, "savings", &text)?;
        }
        out.push('\n');
        if !self.removed.is_empty() {
            out.push_str("## removed\n");
            for (i, k) in self.removed.iter().enumerate() {
                let abbr = k.kind.abbreviation();
                if !lex::is_bare_key(abbr) || !is_token(&k.qualified_name) {
                    return Err(unsupported(format!(
                        "removed[{i}] ({abbr} {}): kinds are bare keys and names printable \
                         ASCII without spaces",
                        k.qualified_name
                    )));
                }
                out.push_str(abbr);
                out.push(' ');
                out.push_str(&k.qualified_name);
                out.push('\n');
            }
        }
        if !self.added.is_empty() {
            out.push_str("## added\n");
            for (i, a) in self.added.iter().enumerate() {
                let symbol = a.to_symbol(a.distance.unwrap_or(0));
                check_symbol(i, &symbol)?;
                encode::write_node(&mut out, i as u64, &symbol);
                let distance = if spec.current() {
                    Some(a.distance.unwrap_or(0))
                } else {
                    a.distance
                };
                if let Some(d) = distance {
                    out.pop();
                    out.push(' ');
                    out.push_str(itoa::Buffer::new().format(d));
                    out.push('\n');
                }
            }
        }
        for (name, edges) in [
            ("## edges_removed\n", &self.edges_removed),
            ("## edges_added\n", &self.edges_added),
        ] {
            if edges.is_empty() {
                continue;
            }
            out.push_str(name);
            for e in edges {
                if e.status.is_some() || e.source_kind.is_some() || e.target_kind.is_some() {
                    return Err(unsupported(format!(
                        "delta edge {} -> {} {}: delta edge lines carry no status or kinds",
                        e.source, e.target, e.edge_type
                    )));
                }
                if !is_token(&e.source)
                    || !is_token(&e.target)
                    || !is_token(&e.edge_type)
                    || starts_like_structure(&e.source)
                {
                    return Err(unsupported(format!(
                        "delta edge {:?} -> {:?} {:?} cannot be written: names and types are \
                         printable ASCII without spaces, and a line cannot start with `#`",
                        e.source, e.target, e.edge_type
                    )));
                }
                out.push_str(&e.source);
                out.push_str(" -> ");
                out.push_str(&e.target);
                out.push(' ');
                out.push_str(&e.edge_type);
                out.push('\n');
            }
        }
        Ok(out)
    }

    /// Decodes a delta payload (the header must say `delta=true`), with the default
    /// [`DecoderOptions`]. Five- and six-field `## added` lines are both accepted; an unknown
    /// section, or a line form wrong for its section, is `malformed_delta`; removing or adding
    /// one symbol twice is `malformed_delta`.
    pub fn decode(text: &str) -> Result<Delta> {
        DecoderOptions::new().decode_delta(text)
    }

    /// Applies the delta to `base`, atomically (spec §10.4): checks that `base`'s root is
    /// `base_root` (`root_mismatch` otherwise); validates every operation against the base
    /// (`malformed_delta` for removing what the base lacks, adding what remains, removing an
    /// edge occurrence the base does not have, an edge whose endpoint is missing or whose
    /// name is ambiguous, or leaving an edge whose symbol was removed); builds the result on
    /// a copy; infers the distance of added symbols without one (see [`DeltaSymbol`]); and
    /// checks that the result's root is `new_root` (`root_mismatch`). `base` is never
    /// modified; on success the result keeps `base`'s metadata, with `pack_root` set to
    /// `new_root`.
    ///
    /// The result lists the base's remaining symbols in their order, then the added ones; the
    /// base's remaining edges, then the added ones.
    pub fn apply(&self, base: &Graph) -> Result<Graph> {
        let ib = Index::build(base)?;
        let root = root_of_index(&ib);
        if root != self.base_root {
            return Err(Error::new(
                ErrorKind::RootMismatch,
                format!(
                    "the delta applies to base_root {}, but the snapshot's root is {root}",
                    self.base_root
                ),
            ));
        }
        // Symbols.
        let mut removed = vec![false; base.symbols.len()];
        for k in &self.removed {
            let abbr = k.kind.abbreviation();
            let Some(i) = ib.find(abbr, &k.qualified_name) else {
                return Err(malformed(format!(
                    "the delta removes {abbr} {}, which the base does not have",
                    k.qualified_name
                )));
            };
            if std::mem::replace(&mut removed[i], true) {
                return Err(malformed(format!(
                    "the delta removes {abbr} {} twice",
                    k.qualified_name
                )));
            }
        }
        // Base index → result index, for the base's remaining symbols.
        let mut map: Vec<Option<usize>> = vec![None; base.symbols.len()];
        let mut symbols: Vec<Symbol> = Vec::with_capacity(base.symbols.len() + self.added.len());
        let mut keys: HashMap<(&str, &str), usize> = HashMap::with_capacity(symbols.capacity());
        for (i, s) in base.symbols.iter().enumerate() {
            if !removed[i] {
                map[i] = Some(symbols.len());
                keys.insert((s.kind.abbreviation(), &s.qualified_name), symbols.len());
                symbols.push(s.clone());
            }
        }
        let retained_len = symbols.len();
        for (i, a) in self.added.iter().enumerate() {
            let symbol = a.to_symbol(a.distance.unwrap_or(0));
            check_symbol(i, &symbol).map_err(|e| malformed(format!("added: {}", e.message())))?;
            let key = (a.kind.abbreviation(), a.qualified_name.as_str());
            if keys.insert(key, symbols.len()).is_some() {
                return Err(malformed(format!(
                    "the delta adds {} {}, which the snapshot already has",
                    key.0, key.1
                )));
            }
            symbols.push(symbol);
        }
        // Result names: qualified name → the one result symbol, or none if shared.
        let mut names: HashMap<&str, Option<usize>> = HashMap::with_capacity(symbols.len());
        for (i, s) in symbols.iter().enumerate() {
            names
                .entry(s.qualified_name.as_str())
                .and_modify(|slot| *slot = None)
                .or_insert(Some(i));
        }
        // Edges: remove occurrences from the base.
        let mut occurrences: HashMap<(usize, usize, &str), Vec<usize>> = HashMap::new();
        for (e, &(s, t)) in ib.ends.iter().enumerate() {
            occurrences
                .entry((s, t, base.edges[e].edge_type.as_str()))
                .or_default()
                .push(e);
        }
        let mut edge_removed = vec![false; base.edges.len()];
        for e in &self.edges_removed {
            let resolve = |name: &str| match ib.find_name(name) {
                Ok(Some(i)) => Ok(i),
                Ok(None) => Err(malformed(format!(
                    "the removed edge {} -> {} {} names {name}, which the base does not have",
                    e.source, e.target, e.edge_type
                ))),
                Err(()) => Err(malformed(format!(
                    "the removed edge {} -> {} {} names {name}, which several symbols of the \
                     base share",
                    e.source, e.target, e.edge_type
                ))),
            };
            let (s, t) = (resolve(&e.source)?, resolve(&e.target)?);
            let Some(e_index) = occurrences
                .get_mut(&(s, t, e.edge_type.as_str()))
                .and_then(Vec::pop)
            else {
                return Err(malformed(format!(
                    "the delta removes the edge {} -> {} {}, which the base does not have",
                    e.source, e.target, e.edge_type
                )));
            };
            edge_removed[e_index] = true;
        }
        let mut ends: Vec<(usize, usize)> = Vec::new();
        let mut edge_types: Vec<&str> = Vec::new();
        for (e, &(s, t)) in ib.ends.iter().enumerate() {
            if edge_removed[e] {
                continue;
            }
            // An endpoint removed and not added back leaves the edge dangling.
            let remap = |i: usize| {
                map[i].or_else(|| {
                    let s = &base.symbols[i];
                    keys.get(&(s.kind.abbreviation(), s.qualified_name.as_str()))
                        .copied()
                })
            };
            match (remap(s), remap(t)) {
                (Some(s), Some(t)) => {
                    ends.push((s, t));
                    edge_types.push(&base.edges[e].edge_type);
                }
                _ => {
                    let edge = &base.edges[e];
                    return Err(malformed(format!(
                        "the edge {} -> {} {} of the base still references a removed symbol",
                        edge.source, edge.target, edge.edge_type
                    )));
                }
            }
        }
        for e in &self.edges_added {
            let resolve = |name: &str| match names.get(name) {
                Some(Some(i)) => Ok(*i),
                Some(None) => Err(malformed(format!(
                    "the added edge {} -> {} {} names {name}, which several symbols share",
                    e.source, e.target, e.edge_type
                ))),
                None => Err(malformed(format!(
                    "the added edge {} -> {} {} names {name}, which is not a symbol of the \
                     resulting snapshot",
                    e.source, e.target, e.edge_type
                ))),
            };
            if !is_token(&e.edge_type) {
                return Err(malformed(format!(
                    "edge type {:?} is not printable ASCII without spaces",
                    e.edge_type
                )));
            }
            ends.push((resolve(&e.source)?, resolve(&e.target)?));
            edge_types.push(&e.edge_type);
        }
        // Distances of added symbols without one.
        let retained: Vec<Option<u32>> = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (i < retained_len).then_some(s.distance))
            .collect();
        let inferred = infer(symbols.len(), &retained, &ends);
        let shared: Vec<bool> = symbols
            .iter()
            .map(|s| names.get(s.qualified_name.as_str()) == Some(&None))
            .collect();
        for (k, a) in self.added.iter().enumerate() {
            if a.distance.is_none() {
                let i = retained_len + k;
                symbols[i].distance = inferred[i];
            }
        }
        // The result, with edge kinds exactly where names are shared.
        let edges: Vec<Edge> = ends
            .iter()
            .zip(&edge_types)
            .map(|(&(s, t), &edge_type)| Edge {
                source: symbols[s].qualified_name.clone(),
                target: symbols[t].qualified_name.clone(),
                edge_type: edge_type.to_owned(),
                status: None,
                source_kind: shared[s].then(|| symbols[s].kind.clone()),
                target_kind: shared[t].then(|| symbols[t].kind.clone()),
            })
            .collect();
        let mut result = Graph {
            tool: base.tool.clone(),
            token_budget: base.token_budget,
            tokens_used: base.tokens_used,
            pack_root: None,
            symbols,
            edges,
        };
        let root = root_of_index(&Index::build(&result)?);
        if root != self.new_root {
            return Err(Error::new(
                ErrorKind::RootMismatch,
                format!(
                    "the delta promises new_root {}, but applying it gives {root}",
                    self.new_root
                ),
            ));
        }
        result.pack_root = Some(root);
        Ok(result)
    }
}

impl DecoderOptions {
    /// Decodes a delta payload with these options (see [`Delta::decode`]).
    pub fn decode_delta(&self, text: &str) -> Result<Delta> {
        self.check_size(text.len())?;
        let mut lines = Lines::new(text, self.limits.max_line_length);
        let head = decode::read_graph_header(&mut lines)?;
        if !head.delta {
            return Err(head.line.error(
                ErrorKind::ProfileMismatch,
                "the payload is not a delta (no delta=true in the header)",
            ));
        }
        decode_with(&mut lines, &head, self)
    }
}

/// Decodes the body of a delta payload whose header was read.
pub(crate) fn decode_with<S: crate::read::LineSource>(
    lines: &mut S,
    head: &GraphHeader<'_>,
    opts: &DecoderOptions,
) -> Result<Delta> {
    let mut sink = DeltaSink {
        delta: Delta {
            tool: head.tool.map(str::to_owned),
            base_root: head.base_root.unwrap_or_default().to_owned(),
            new_root: head.new_root.unwrap_or_default().to_owned(),
            tokens: head.tokens,
            savings: head.savings,
            ..Delta::default()
        },
        removed: HashMap::new(),
        added: HashMap::new(),
        ids: HashMap::new(),
    };
    decode::parse_body(lines, head, opts, &mut sink)?;
    Ok(sink.delta)
}

/// Builds a [`Delta`]. The identities seen are keyed by owned copies (the lines are gone
/// once read from a reader); deltas are small next to the graphs they change.
struct DeltaSink {
    delta: Delta,
    removed: HashMap<(String, String), usize>,
    added: HashMap<(String, String), usize>,
    ids: HashMap<u64, usize>,
}

/// An identity `(kind abbreviation, qualified name)` as a map key.
fn identity(kind: &str, qname: &str) -> (String, String) {
    (abbreviate(kind).to_owned(), qname.to_owned())
}

impl Sink for DeltaSink {
    fn node(&mut self, line: &Line<'_>, _: Node<'_>, _: u32) -> Result<()> {
        Err(line.error(ErrorKind::MalformedDelta, "a node line outside `## added`"))
    }

    fn reference(&mut self, line: &Line<'_>, _: u64, _: &str, _: u32) -> Result<()> {
        Err(line.error(ErrorKind::MalformedDelta, "a session reference in a delta"))
    }

    fn edge(&mut self, line: &Line<'_>, _: decode::EdgeLine<'_>) -> Result<()> {
        Err(line.error(ErrorKind::MalformedDelta, "an id edge line in a delta"))
    }

    fn removed(&mut self, line: &Line<'_>, kind: &str, qname: &str) -> Result<()> {
        if let Some(first) = self.removed.insert(identity(kind, qname), line.number) {
            return Err(line.error(
                ErrorKind::MalformedDelta,
                format!("{kind} {qname} is removed twice (first on line {first})"),
            ));
        }
        self.delta.removed.push(SymbolKey::new(kind, qname));
        Ok(())
    }

    fn added(&mut self, line: &Line<'_>, node: Node<'_>, distance: Option<u32>) -> Result<()> {
        if self.ids.insert(node.id, line.number).is_some() {
            return Err(line.error_at(
                ErrorKind::MalformedDelta,
                node.id_text,
                format!("id {} appears twice in `## added`", node.id_text),
            ));
        }
        if let Some(first) = self
            .added
            .insert(identity(node.kind, node.qname), line.number)
        {
            return Err(line.error(
                ErrorKind::MalformedDelta,
                format!(
                    "{} {} is added twice (first on line {first})",
                    node.kind, node.qname
                ),
            ));
        }
        self.delta.added.push(DeltaSymbol {
            qualified_name: node.qname.to_owned(),
            kind: Kind::new(node.kind),
            score: node.score,
            provenance: node.provenance.to_owned(),
            distance,
        });
        Ok(())
    }

    fn delta_edge(
        &mut self,
        _line: &Line<'_>,
        removed: bool,
        source: &str,
        target: &str,
        edge_type: &str,
    ) -> Result<()> {
        let edge = Edge::new(source, target, edge_type);
        if removed {
            self.delta.edges_removed.push(edge);
        } else {
            self.delta.edges_added.push(edge);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(symbols: Vec<Symbol>, edges: Vec<Edge>) -> Graph {
        Graph {
            symbols,
            edges,
            ..Graph::default()
        }
    }

    #[test]
    fn between_refuses_what_the_lines_cannot_carry() {
        let base = g(
            vec![
                Symbol::new("a.X", "fn", 0.5, "p", 0),
                Symbol::new("a.X", "type", 0.5, "p", 0),
                Symbol::new("b", "fn", 0.5, "p", 0),
            ],
            vec![],
        );
        let mut new = base.clone();
        new.edges
            .push(Edge::new("b", "a.X", "calls").with_kinds("fn", "type"));
        let e = Delta::between(&base, &new).unwrap_err();
        assert_eq!(e.code(), "unsupported_value");
        // Changes that do not touch the shared name are fine.
        let mut new = base.clone();
        new.edges.push(Edge::new("b", "b", "calls"));
        assert_eq!(Delta::between(&base, &new).unwrap().edges_added.len(), 1);
        // Off-grid scores of added symbols.
        let mut new = base.clone();
        new.symbols.push(Symbol::new("c", "fn", 0.125, "p", 0));
        assert_eq!(
            Delta::between(&base, &new).unwrap_err().code(),
            "unsupported_value"
        );
        // Comment-like edge sources.
        let base = g(vec![Symbol::new("#", "fn", 0.5, "p", 0)], vec![]);
        let mut new = base.clone();
        new.edges.push(Edge::new("#", "#", "calls"));
        assert_eq!(
            Delta::between(&base, &new).unwrap_err().code(),
            "unsupported_value"
        );
    }

    #[test]
    fn encode_rejects_unwritable_values() {
        let ok = Delta {
            base_root: "a".into(),
            new_root: "b".into(),
            ..Delta::default()
        };
        assert_eq!(
            ok.encode().unwrap(),
            "GCF profile=graph delta=true base_root=a new_root=b\n"
        );
        for bad in [
            Delta {
                base_root: "has space".into(),
                ..ok.clone()
            },
            Delta {
                removed: vec![SymbolKey::new("a-b", "x")],
                ..ok.clone()
            },
            Delta {
                edges_added: vec![Edge::new("a", "b", "c").with_status(crate::EdgeStatus::Added)],
                ..ok.clone()
            },
            Delta {
                edges_removed: vec![Edge::new("##x", "b", "c")],
                ..ok.clone()
            },
            Delta {
                added: vec![DeltaSymbol {
                    qualified_name: "a b".into(),
                    ..DeltaSymbol::default()
                }],
                ..ok.clone()
            },
        ] {
            assert!(bad.encode().is_err(), "{bad:?}");
        }
        let mut d = ok.clone();
        d.set_token_counts(300, 200);
        assert_eq!(d.savings, Some(-50));
        assert!(d.encode().unwrap().ends_with("tokens=300 savings=-50%\n"));
        assert_eq!(Delta::decode(&d.encode().unwrap()).unwrap(), d);
        d.set_token_counts(5, 0);
        assert_eq!(d.savings, Some(0));
    }
}
