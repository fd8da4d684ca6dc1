//! The typed graph model (spec §3.2, §5, §6): [`Graph`], [`Symbol`], [`Edge`], [`Kind`],
//! [`EdgeStatus`] and [`SymbolKey`], with serde in the camelCase shape of the conformance
//! fixtures and of every reference implementation's JSON.
//!
//! Also the validated index over a graph ([`Index`]) that the encoders, the pack root and the
//! delta computation share: every string checked against the positional grammar, every
//! symbol identity unique, every edge endpoint resolved to one symbol.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, ErrorKind, Result};
use crate::header;
use crate::lex;

// ---------------------------------------------------------------------------------------------
// Kind

/// The kind of a symbol: one of the sixteen kinds of the spec's abbreviation table (§5), or
/// any other kind, passed through verbatim.
///
/// On the wire a kind is written abbreviated (`fn`, `iface`, `route`); in JSON and in
/// [`Kind::name`] it has its full form (`function`, `interface`, `route_handler`). Both forms
/// parse to the same kind, so `Kind::from("fn") == Kind::from("function")`. Kinds outside the
/// table are [`Kind::Other`]; equality, hashing and ordering compare the abbreviation, so an
/// `Other` that happens to hold a table name still equals the table's variant.
///
/// ```
/// use agentwire_gcf::Kind;
///
/// assert_eq!(Kind::from("iface"), Kind::Interface);
/// assert_eq!(Kind::Interface.abbreviation(), "iface");
/// assert_eq!(Kind::Interface.name(), "interface");
/// assert_eq!(Kind::from("widget"), Kind::Other("widget".to_owned()));
/// assert_eq!(Kind::from("widget").abbreviation(), "widget");
/// ```
#[derive(Debug, Clone)]
pub enum Kind {
    /// `fn`: `function`.
    Function,
    /// `type`.
    Type,
    /// `method`.
    Method,
    /// `iface`: `interface`.
    Interface,
    /// `var`.
    Var,
    /// `const`.
    Const,
    /// `resource`.
    Resource,
    /// `table`.
    Table,
    /// `class`.
    Class,
    /// `selector`.
    Selector,
    /// `field`.
    Field,
    /// `route`: `route_handler`.
    RouteHandler,
    /// `ext`: `external`.
    External,
    /// `file`.
    File,
    /// `pkg`: `package`.
    Package,
    /// `svc`: `service`.
    Service,
    /// Any other kind, written verbatim. On the wire a kind must be a bare key
    /// (`[A-Za-z_][A-Za-z0-9_]*`, the spec's `kind` grammar).
    Other(String),
}

/// The abbreviation table of spec §5: (abbreviation, full form, kind).
static TABLE: [(&str, &str, Kind); 16] = [
    ("fn", "function", Kind::Function),
    ("type", "type", Kind::Type),
    ("method", "method", Kind::Method),
    ("iface", "interface", Kind::Interface),
    ("var", "var", Kind::Var),
    ("const", "const", Kind::Const),
    ("resource", "resource", Kind::Resource),
    ("table", "table", Kind::Table),
    ("class", "class", Kind::Class),
    ("selector", "selector", Kind::Selector),
    ("field", "field", Kind::Field),
    ("route", "route_handler", Kind::RouteHandler),
    ("ext", "external", Kind::External),
    ("file", "file", Kind::File),
    ("pkg", "package", Kind::Package),
    ("svc", "service", Kind::Service),
];

/// The table entry whose abbreviation or full form is `s`.
fn lookup(s: &str) -> Option<usize> {
    TABLE
        .iter()
        .position(|(abbr, full, _)| *abbr == s || *full == s)
}

/// The abbreviation of the kind named `s` (either form), or `s` itself when it is not in the
/// table: what the encoder writes, and the kind's identity.
pub(crate) fn abbreviate(s: &str) -> &str {
    match lookup(s) {
        Some(i) => TABLE[i].0,
        None => s,
    }
}

impl Kind {
    /// The kind named `name`: a table kind for its abbreviation or full form, otherwise
    /// [`Kind::Other`].
    pub fn new(name: &str) -> Kind {
        match lookup(name) {
            Some(i) => TABLE[i].2.clone(),
            None => Kind::Other(name.to_owned()),
        }
    }

    fn table_index(&self) -> Option<usize> {
        let i = match self {
            Kind::Function => 0,
            Kind::Type => 1,
            Kind::Method => 2,
            Kind::Interface => 3,
            Kind::Var => 4,
            Kind::Const => 5,
            Kind::Resource => 6,
            Kind::Table => 7,
            Kind::Class => 8,
            Kind::Selector => 9,
            Kind::Field => 10,
            Kind::RouteHandler => 11,
            Kind::External => 12,
            Kind::File => 13,
            Kind::Package => 14,
            Kind::Service => 15,
            Kind::Other(s) => return lookup(s),
        };
        Some(i)
    }

    /// The wire form: the table's abbreviation (`fn`), or an other kind verbatim.
    pub fn abbreviation(&self) -> &str {
        match (self.table_index(), self) {
            (Some(i), _) => TABLE[i].0,
            (None, Kind::Other(s)) => s,
            (None, _) => "",
        }
    }

    /// The full form (`function`), or an other kind verbatim: the JSON form.
    pub fn name(&self) -> &str {
        match (self.table_index(), self) {
            (Some(i), _) => TABLE[i].1,
            (None, Kind::Other(s)) => s,
            (None, _) => "",
        }
    }

    /// Whether the kind is one of the spec's table (not [`Kind::Other`]).
    pub fn is_standard(&self) -> bool {
        self.table_index().is_some()
    }
}

impl Default for Kind {
    /// [`Kind::Function`].
    fn default() -> Self {
        Kind::Function
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Self) -> bool {
        self.abbreviation() == other.abbreviation()
    }
}

impl Eq for Kind {}

impl Hash for Kind {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.abbreviation().hash(state);
    }
}

impl PartialOrd for Kind {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kind {
    /// By abbreviation, byte order.
    fn cmp(&self, other: &Self) -> Ordering {
        self.abbreviation().cmp(other.abbreviation())
    }
}

impl fmt::Display for Kind {
    /// The full form ([`Kind::name`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<&str> for Kind {
    fn from(name: &str) -> Self {
        Kind::new(name)
    }
}

impl From<String> for Kind {
    fn from(name: String) -> Self {
        match lookup(&name) {
            Some(i) => TABLE[i].2.clone(),
            None => Kind::Other(name),
        }
    }
}

impl FromStr for Kind {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(Kind::new(s))
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(deserializer).map(Kind::from)
    }
}

// ---------------------------------------------------------------------------------------------
// Symbols and edges

/// One symbol of a graph: a node line `@id kind qualified_name score provenance` under the
/// group header of its distance (spec §5, §6a).
///
/// A symbol's identity is `(kind, qualified_name)` (spec §9.1): two symbols with the same name
/// and different kinds are different symbols with different ids.
///
/// The wire carries `score` with exactly two decimals (see [`encode_graph`]), so a decoded
/// score is the encoded one rounded half-to-even to two decimals.
///
/// [`encode_graph`]: crate::encode_graph
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Symbol {
    /// The fully qualified name: printable ASCII without spaces (spec §20).
    pub qualified_name: String,
    /// The kind; written abbreviated on the wire.
    pub kind: Kind,
    /// The relevance score, finite.
    pub score: f64,
    /// How the symbol was found (`lsp_resolved`, `ast_inferred`): printable ASCII without
    /// spaces.
    pub provenance: String,
    /// Hops from the query centre: 0 is `## targets`, 1 `## related`, 2 `## extended`, N ≥ 3
    /// `## distance_N`. Absent in JSON means 0.
    #[serde(default)]
    pub distance: u32,
}

impl Symbol {
    /// A symbol from its five fields.
    pub fn new(
        qualified_name: impl Into<String>,
        kind: impl Into<Kind>,
        score: f64,
        provenance: impl Into<String>,
        distance: u32,
    ) -> Self {
        Symbol {
            qualified_name: qualified_name.into(),
            kind: kind.into(),
            score,
            provenance: provenance.into(),
            distance,
        }
    }

    /// The symbol's identity, `(kind, qualified_name)`.
    pub fn key(&self) -> SymbolKey {
        SymbolKey {
            kind: self.kind.clone(),
            qualified_name: self.qualified_name.clone(),
        }
    }
}

/// A symbol's identity: its kind and qualified name (spec §9.1). Also the `kind qname` line
/// of a delta's `## removed` section.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SymbolKey {
    /// The kind.
    pub kind: Kind,
    /// The qualified name.
    pub qualified_name: String,
}

impl SymbolKey {
    /// A key from its parts.
    pub fn new(kind: impl Into<Kind>, qualified_name: impl Into<String>) -> Self {
        SymbolKey {
            kind: kind.into(),
            qualified_name: qualified_name.into(),
        }
    }
}

impl fmt::Display for SymbolKey {
    /// `abbreviation qualified_name`, the delta's `## removed` line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.abbreviation(), self.qualified_name)
    }
}

/// The optional status of an edge (spec §6): `added` or `removed` in diff payloads. The
/// current fleet writes other words too (`active`, in the v3.5.3 suite's
/// `graph-decode/004`), which the current spec reads as [`EdgeStatus::Other`]; v3.1 reads only
/// the two.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum EdgeStatus {
    /// `added`.
    Added,
    /// `removed`.
    Removed,
    /// Any other status word (a token of the graph grammar).
    Other(String),
}

impl EdgeStatus {
    /// The wire and JSON form: `added`, `removed`, or the word.
    pub fn as_str(&self) -> &str {
        match self {
            EdgeStatus::Added => "added",
            EdgeStatus::Removed => "removed",
            EdgeStatus::Other(word) => word,
        }
    }

    /// `added` or `removed`.
    pub(crate) fn parse(s: &str) -> Option<EdgeStatus> {
        match s {
            "added" => Some(EdgeStatus::Added),
            "removed" => Some(EdgeStatus::Removed),
            _ => None,
        }
    }

    /// Any status word: `added`, `removed`, or [`EdgeStatus::Other`].
    pub(crate) fn from_word(s: &str) -> EdgeStatus {
        EdgeStatus::parse(s).unwrap_or_else(|| EdgeStatus::Other(s.to_owned()))
    }
}

impl Serialize for EdgeStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EdgeStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if !is_token(&s) {
            return Err(serde::de::Error::invalid_value(
                serde::de::Unexpected::Str(&s),
                &"a status word (\"added\", \"removed\", ...)",
            ));
        }
        Ok(EdgeStatus::from_word(&s))
    }
}

impl fmt::Display for EdgeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One edge: `source` relates to `target` by `edge_type` (`calls`, `imports`, ...); on the
/// wire `@target<@source edge_type [status]` (spec §6).
///
/// The endpoints name symbols of the same graph by qualified name. When two symbols share a
/// qualified name (with different kinds), the name alone is ambiguous: set
/// [`source_kind`](Edge::source_kind) / [`target_kind`](Edge::target_kind) to say which one is
/// meant. The decoder sets them exactly in that case, and leaves them `None` otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    /// The qualified name of the source symbol.
    pub source: String,
    /// The qualified name of the target symbol.
    pub target: String,
    /// The relationship: printable ASCII without spaces.
    pub edge_type: String,
    /// `added` / `removed` in diff payloads. JSON `""` (the reference's "none") reads as
    /// `None`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "status_or_empty"
    )]
    pub status: Option<EdgeStatus>,
    /// The source's kind, when its qualified name alone is ambiguous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_kind: Option<Kind>,
    /// The target's kind, when its qualified name alone is ambiguous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<Kind>,
}

impl Edge {
    /// An edge from `source` to `target`, without status or kinds.
    pub fn new(
        source: impl Into<String>,
        target: impl Into<String>,
        edge_type: impl Into<String>,
    ) -> Self {
        Edge {
            source: source.into(),
            target: target.into(),
            edge_type: edge_type.into(),
            status: None,
            source_kind: None,
            target_kind: None,
        }
    }

    /// The same edge with a status.
    #[must_use]
    pub fn with_status(mut self, status: EdgeStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// The same edge with both endpoint kinds given.
    #[must_use]
    pub fn with_kinds(
        mut self,
        source_kind: impl Into<Kind>,
        target_kind: impl Into<Kind>,
    ) -> Self {
        self.source_kind = Some(source_kind.into());
        self.target_kind = Some(target_kind.into());
        self
    }
}

/// A graph payload: symbols grouped by distance and the edges between them, with the header's
/// metadata (spec §3.2).
///
/// The JSON form is the fixtures' camelCase object `{tool, tokenBudget, tokensUsed, packRoot,
/// symbols, edges}`. The reference writes "not given" as `""` and `0`; those read as `None`
/// here, and `None` is left out when serializing.
///
/// ```
/// use agentwire_gcf::{decode_graph, encode_graph, Edge, Graph, Symbol};
///
/// let graph = Graph {
///     tool: Some("context_for_task".into()),
///     token_budget: Some(5000),
///     tokens_used: Some(1847),
///     symbols: vec![
///         Symbol::new("pkg.Auth", "function", 0.78, "lsp_resolved", 0),
///         Symbol::new("pkg.Server", "function", 0.54, "lsp_resolved", 1),
///     ],
///     edges: vec![Edge::new("pkg.Server", "pkg.Auth", "calls")],
///     ..Graph::default()
/// };
/// let text = encode_graph(&graph)?;
/// assert_eq!(
///     text,
///     concat!(
///         "GCF profile=graph tool=context_for_task budget=5000 tokens=1847 symbols=2 edges=1\n",
///         "## targets\n@0 fn pkg.Auth 0.78 lsp_resolved\n",
///         "## related\n@1 fn pkg.Server 0.54 lsp_resolved\n",
///         "## edges [1]\n@0<@1 calls\n",
///     )
/// );
/// assert_eq!(decode_graph(&text)?, graph);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Graph {
    /// `tool=`: the producing tool (optional since v3.1). A header value: printable ASCII
    /// without spaces.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "string_or_empty"
    )]
    pub tool: Option<String>,
    /// `budget=`: the consumer's token budget.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count_or_zero"
    )]
    pub token_budget: Option<u64>,
    /// `tokens=`: the tokens this payload uses.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count_or_zero"
    )]
    pub tokens_used: Option<u64>,
    /// `pack_root=`: the snapshot's content address, written as given (compute it with
    /// [`pack_root`](crate::pack_root) or [`Graph::with_pack_root`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "string_or_empty"
    )]
    pub pack_root: Option<String>,
    /// The symbols, in any order (the encoder orders them).
    #[serde(default)]
    pub symbols: Vec<Symbol>,
    /// The edges, in any order (the encoder orders them). Duplicates are kept: a graph may be
    /// a multigraph.
    #[serde(default)]
    pub edges: Vec<Edge>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Graph::default()
    }

    /// The same graph with [`pack_root`](Graph::pack_root) set to its `gcf-pack-root-v1` root.
    pub fn with_pack_root(mut self) -> Result<Self> {
        self.pack_root = Some(super::pack_root::pack_root(&self)?);
        Ok(self)
    }

    /// Puts the symbols in the encoder's order (distance, then wire score descending, then
    /// qualified name and kind) and the edges in the order of their source, target, type,
    /// status and kinds. Two graphs with the same content in different orders become equal,
    /// and the symbols of a decoded buffered payload are already in this order.
    pub fn sort_canonical(&mut self) {
        let order = super::encode::symbol_order(self);
        let mut symbols: Vec<Option<Symbol>> = std::mem::take(&mut self.symbols)
            .into_iter()
            .map(Some)
            .collect();
        self.symbols = order.iter().filter_map(|&i| symbols[i].take()).collect();
        fn kind(k: &Option<Kind>) -> &str {
            k.as_ref().map_or("", Kind::abbreviation)
        }
        self.edges.sort_by(|a, b| {
            (
                &a.source,
                kind(&a.source_kind),
                &a.target,
                kind(&a.target_kind),
            )
                .cmp(&(
                    &b.source,
                    kind(&b.source_kind),
                    &b.target,
                    kind(&b.target_kind),
                ))
                .then_with(|| a.edge_type.cmp(&b.edge_type))
                .then(a.status.cmp(&b.status))
        });
    }

    /// Rounds every score to the two decimals the wire carries (half-to-even on the exact
    /// value, as the encoder does), so that the graph equals what a consumer decodes and the
    /// pack root a consumer recomputes matches. Non-finite scores are left alone (the
    /// encoder rejects them).
    pub fn round_scores(&mut self) {
        for symbol in &mut self.symbols {
            if symbol.score.is_finite() {
                symbol.score = wire_score(symbol.score);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// serde helpers for the reference's sentinels

pub(crate) fn string_or_empty<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()))
}

pub(crate) fn count_or_zero<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|&n| n != 0))
}

fn status_or_empty<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<EdgeStatus>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(s) if s.is_empty() => Ok(None),
        Some(s) if is_token(&s) => Ok(Some(EdgeStatus::from_word(&s))),
        Some(s) => Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Str(&s),
            &"a status word (\"added\", \"removed\", ...) or \"\"",
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Scores

/// Writes a score with exactly two decimals: the exact binary value rounded half-to-even (the
/// `%.2f` of C, Go and Python, which the reference implementations use; spec v3.5.1 pins
/// it). `-0.001` gives `-0.00`, as printf does.
pub(crate) fn write_score(out: &mut String, score: f64) {
    match cents(score) {
        Some(n) => {
            let mut buf = itoa::Buffer::new();
            let digits = buf.format(n.unsigned_abs());
            if n < 0 || (n == 0 && score.is_sign_negative()) {
                out.push('-');
            }
            match digits.len() {
                1 => {
                    out.push_str("0.0");
                    out.push_str(digits);
                }
                2 => {
                    out.push_str("0.");
                    out.push_str(digits);
                }
                len => {
                    out.push_str(&digits[..len - 2]);
                    out.push('.');
                    out.push_str(&digits[len - 2..]);
                }
            }
        }
        None => {
            use std::fmt::Write as _;
            let _ = write!(out, "{score:.2}");
        }
    }
}

/// The fast path: when `score` is the double nearest to a decimal with two fraction digits
/// `n / 100` (and small enough that its rounding error stays far below 0.005), its exact value
/// rounds to that decimal: returns `n`. Otherwise `None` (take the exact slow path).
fn cents(score: f64) -> Option<i64> {
    if score.is_nan() || score.abs() >= 1e13 {
        return None;
    }
    let n = (score * 100.0).round();
    // `n / 100.0` is correctly rounded, so equality means `score` is the double nearest to
    // the decimal `n / 100`.
    (n / 100.0 == score).then_some(n as i64)
}

/// The value a decoder reads back for `score`: `score` rounded to two decimals as
/// [`write_score`] writes it.
pub(crate) fn wire_score(score: f64) -> f64 {
    if cents(score).is_some() {
        return score;
    }
    let mut text = String::new();
    write_score(&mut text, score);
    text.parse().unwrap_or(score)
}

// ---------------------------------------------------------------------------------------------
// Validation

/// Whether `s` is a positional graph token: one or more printable ASCII characters other than
/// space (`%x21-7E`, spec §4 and §20).
pub(crate) fn is_token(s: &str) -> bool {
    // Branch-free over the bytes, so it vectorizes.
    !s.is_empty()
        && (s
            .bytes()
            .fold(true, |ok, b| ok & (b.wrapping_sub(0x21) < 0x5e))
            || is_unicode_token(s))
}

/// [`is_token`] beyond ASCII: the current fleet writes and reads names with any character
/// but whitespace and controls (the v3.5.3 suite's `graph-decode/004` has a name starting with
/// U+0BD7), though spec §20 still says printable ASCII. Fields are split on ASCII spaces and
/// tabs, which such names never contain.
#[cold]
#[inline(never)]
fn is_unicode_token(s: &str) -> bool {
    s.chars()
        .all(|c| !c.is_whitespace() && !c.is_control() && (c > ' ') && c != '\u{7f}')
}

/// Whether `s` is a token of v3.1's graph grammar: printable ASCII without spaces
/// (`%x21-7E`).
pub(crate) fn is_ascii_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

#[cold]
fn invalid(message: String) -> Error {
    Error::new(ErrorKind::UnsupportedValue, message)
}

/// Checks an optional header value (`tool`, `pack_root`).
pub(crate) fn check_header_value(key: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) if !header::is_header_value(v) => Err(invalid(format!(
            "{key} {v:?} cannot be written: header values are printable ASCII without spaces"
        ))),
        _ => Ok(()),
    }
}

/// Checks the fields of a symbol against the node-line grammar.
pub(crate) fn check_symbol(i: usize, s: &Symbol) -> Result<()> {
    let abbr = s.kind.abbreviation();
    if !lex::is_bare_key(abbr) {
        return Err(invalid(format!(
            "symbols[{i}] ({}): kind {abbr:?} is not a bare key ([A-Za-z_][A-Za-z0-9_]*)",
            s.qualified_name
        )));
    }
    if !is_token(&s.qualified_name) {
        return Err(invalid(format!(
            "symbols[{i}]: qualified name {:?} is not printable ASCII without spaces",
            s.qualified_name
        )));
    }
    if !is_token(&s.provenance) {
        return Err(invalid(format!(
            "symbols[{i}] ({}): provenance {:?} is not printable ASCII without spaces",
            s.qualified_name, s.provenance
        )));
    }
    if !s.score.is_finite() {
        return Err(Error::new(
            ErrorKind::InvalidNumber,
            format!(
                "symbols[{i}] ({}): score {} is not a finite number",
                s.qualified_name, s.score
            ),
        ));
    }
    Ok(())
}

/// The symbols with one qualified name: usually one, several when kinds share the name.
#[derive(Debug, Clone)]
enum NameSlot {
    One(usize),
    Many(Vec<usize>),
}

impl NameSlot {
    fn indices(&self) -> &[usize] {
        match self {
            NameSlot::One(i) => std::slice::from_ref(i),
            NameSlot::Many(v) => v,
        }
    }
}

/// A validated view of a graph: symbols checked and unique by identity, edge endpoints
/// resolved to symbol indices.
#[derive(Debug)]
pub(crate) struct Index<'g> {
    pub(crate) graph: &'g Graph,
    /// `(source, target)` symbol index of each edge.
    pub(crate) ends: Vec<(usize, usize)>,
    by_name: HashMap<&'g str, NameSlot>,
}

impl<'g> Index<'g> {
    /// Validates `graph` (header values, every symbol, identities, edges) and resolves its
    /// edges.
    pub(crate) fn build(graph: &'g Graph) -> Result<Self> {
        check_header_value("tool", graph.tool.as_deref())?;
        check_header_value("pack_root", graph.pack_root.as_deref())?;
        let symbols = &graph.symbols;
        let mut by_name: HashMap<&'g str, NameSlot> = HashMap::with_capacity(symbols.len());
        for (i, s) in symbols.iter().enumerate() {
            check_symbol(i, s)?;
            match by_name.entry(s.qualified_name.as_str()) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(NameSlot::One(i));
                }
                std::collections::hash_map::Entry::Occupied(mut slot) => {
                    let abbr = s.kind.abbreviation();
                    if let Some(&first) = slot
                        .get()
                        .indices()
                        .iter()
                        .find(|&&j| symbols[j].kind.abbreviation() == abbr)
                    {
                        return Err(Error::new(
                            ErrorKind::DuplicateSymbol,
                            format!(
                                "symbols[{first}] and symbols[{i}] are both {abbr} {} (a \
                                 symbol's identity is its kind and qualified name)",
                                s.qualified_name
                            ),
                        ));
                    }
                    let mut all = slot.get().indices().to_vec();
                    all.push(i);
                    slot.insert(NameSlot::Many(all));
                }
            }
        }
        let mut index = Index {
            graph,
            ends: Vec::with_capacity(graph.edges.len()),
            by_name,
        };
        for (i, e) in graph.edges.iter().enumerate() {
            if !is_token(&e.edge_type) {
                return Err(invalid(format!(
                    "edges[{i}]: edge type {:?} is not printable ASCII without spaces",
                    e.edge_type
                )));
            }
            let source = index
                .resolve(&e.source, e.source_kind.as_ref())
                .map_err(|m| {
                    Error::new(
                        ErrorKind::UnknownEdgeReference,
                        format!("edges[{i}] ({} -> {}): source {m}", e.source, e.target),
                    )
                })?;
            let target = index
                .resolve(&e.target, e.target_kind.as_ref())
                .map_err(|m| {
                    Error::new(
                        ErrorKind::UnknownEdgeReference,
                        format!("edges[{i}] ({} -> {}): target {m}", e.source, e.target),
                    )
                })?;
            index.ends.push((source, target));
        }
        Ok(index)
    }

    /// The symbol named `name` (of `kind`, when given).
    fn resolve(&self, name: &str, kind: Option<&Kind>) -> std::result::Result<usize, String> {
        match (kind, self.by_name.get(name)) {
            (Some(kind), slot) => {
                let abbr = kind.abbreviation();
                slot.and_then(|slot| {
                    slot.indices()
                        .iter()
                        .copied()
                        .find(|&i| self.graph.symbols[i].kind.abbreviation() == abbr)
                })
                .ok_or_else(|| format!("{abbr} {name} is not a symbol of the graph"))
            }
            (None, Some(NameSlot::One(i))) => Ok(*i),
            (None, Some(NameSlot::Many(_))) => Err(format!(
                "{name} names several symbols of different kinds; set the edge's kind to say \
                 which"
            )),
            (None, None) => Err(format!("{name} is not a symbol of the graph")),
        }
    }

    /// The symbol with identity `(abbreviation, name)`.
    pub(crate) fn find(&self, abbreviation: &str, name: &str) -> Option<usize> {
        self.by_name
            .get(name)?
            .indices()
            .iter()
            .copied()
            .find(|&i| self.graph.symbols[i].kind.abbreviation() == abbreviation)
    }

    /// The one symbol named `name`: `Ok(None)` if none, `Err` if several.
    pub(crate) fn find_name(&self, name: &str) -> std::result::Result<Option<usize>, ()> {
        match self.by_name.get(name) {
            Some(NameSlot::One(i)) => Ok(Some(*i)),
            Some(NameSlot::Many(_)) => Err(()),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(x: f64) -> String {
        let mut s = String::new();
        write_score(&mut s, x);
        s
    }

    #[test]
    fn scores_have_two_decimals_rounded_half_to_even() {
        for (x, text) in [
            (0.78, "0.78"),
            (0.9, "0.90"),
            (1.0, "1.00"),
            (0.0, "0.00"),
            (-0.0, "-0.00"),
            (12.0, "12.00"),
            (0.125, "0.12"),
            (0.375, "0.38"),
            (0.005, "0.01"),
            (0.015, "0.01"),
            (1.005, "1.00"),
            (-0.125, "-0.12"),
            (-0.001, "-0.00"),
            (0.777, "0.78"),
            (1e20, "100000000000000000000.00"),
            (123456.7, "123456.70"),
        ] {
            assert_eq!(score(x), text, "{x}");
            assert_eq!(wire_score(x), text.parse::<f64>().unwrap(), "{x}");
        }
        assert!(score(1e300).ends_with(".00"));
        assert_eq!(wire_score(1e300), 1e300);
    }

    #[test]
    fn kinds_abbreviate_both_ways() {
        for (abbr, full) in [
            ("fn", "function"),
            ("iface", "interface"),
            ("route", "route_handler"),
            ("ext", "external"),
            ("pkg", "package"),
            ("svc", "service"),
            ("type", "type"),
        ] {
            let k = Kind::from(abbr);
            assert!(k.is_standard());
            assert_eq!(k, Kind::from(full));
            assert_eq!((k.abbreviation(), k.name()), (abbr, full));
        }
        let w = Kind::from("widget");
        assert_eq!(w, Kind::Other("widget".into()));
        assert!(!w.is_standard());
        assert_eq!((w.abbreviation(), w.name()), ("widget", "widget"));
        // An `Other` holding a table name is that table kind.
        assert_eq!(Kind::Other("function".into()), Kind::Function);
        assert_eq!(Kind::Other("function".into()).abbreviation(), "fn");
        assert!(Kind::Function < Kind::Type);
        assert_eq!(abbreviate("interface"), "iface");
        assert_eq!(abbreviate("zzz"), "zzz");
    }

    #[test]
    fn serde_maps_the_reference_sentinels() {
        let g: Graph = serde_json::from_str(
            r#"{"tool":"","tokenBudget":0,"tokensUsed":12,"packRoot":"","symbols":[
                {"qualifiedName":"a","kind":"fn","score":1,"provenance":"p"}],
                "edges":[{"source":"a","target":"a","edgeType":"calls","status":""},
                         {"source":"a","target":"a","edgeType":"x","status":"added"}]}"#,
        )
        .unwrap();
        assert_eq!(g.tool, None);
        assert_eq!(g.token_budget, None);
        assert_eq!(g.tokens_used, Some(12));
        assert_eq!(g.pack_root, None);
        assert_eq!(g.symbols[0].kind, Kind::Function);
        assert_eq!(g.symbols[0].distance, 0);
        assert_eq!(g.edges[0].status, None);
        assert_eq!(g.edges[1].status, Some(EdgeStatus::Added));
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"tokensUsed":12,"symbols":[{"qualifiedName":"a","kind":"function",
                "score":1.0,"provenance":"p","distance":0}],
                "edges":[{"source":"a","target":"a","edgeType":"calls"},
                         {"source":"a","target":"a","edgeType":"x","status":"added"}]})
        );
        let other = serde_json::from_str::<Edge>(
            r#"{"source":"a","target":"a","edgeType":"x","status":"changed"}"#,
        )
        .unwrap();
        assert_eq!(other.status, Some(EdgeStatus::Other("changed".into())));
        let bad = serde_json::from_str::<Edge>(
            r#"{"source":"a","target":"a","edgeType":"x","status":"two words"}"#,
        );
        assert!(bad.is_err());
    }

    #[test]
    fn the_index_validates_and_resolves() {
        let mut g = Graph {
            symbols: vec![
                Symbol::new("a.X", "function", 0.5, "p", 0),
                Symbol::new("a.X", "type", 0.5, "p", 0),
                Symbol::new("b", "var", 0.5, "p", 1),
            ],
            edges: vec![Edge::new("b", "a.X", "uses").with_kinds("var", "type")],
            ..Graph::default()
        };
        let index = Index::build(&g).unwrap();
        assert_eq!(index.ends, [(2, 1)]);
        assert_eq!(index.find_name("a.X"), Err(()));
        assert_eq!(index.find_name("b"), Ok(Some(2)));
        g.edges.push(Edge::new("b", "a.X", "uses"));
        let e = Index::build(&g).unwrap_err();
        assert_eq!(e.code(), "unknown_edge_reference");
        assert!(e.message().contains("several symbols"), "{e}");
        g.edges.pop();
        g.edges.push(Edge::new("b", "nope", "uses"));
        assert_eq!(
            Index::build(&g).unwrap_err().code(),
            "unknown_edge_reference"
        );
        g.edges.pop();
        g.symbols.push(Symbol::new("a.X", "fn", 0.1, "q", 3));
        assert_eq!(Index::build(&g).unwrap_err().code(), "duplicate_symbol");
        g.symbols.pop();
        for bad in [
            Symbol::new("a b", "fn", 0.1, "p", 0),
            Symbol::new("", "fn", 0.1, "p", 0),
            Symbol::new("\u{85}", "fn", 0.1, "p", 0),
            Symbol::new("a\u{2028}b", "fn", 0.1, "p", 0),
            Symbol::new("x", "fn", 0.1, "p q", 0),
            Symbol::new("x", "a-b", 0.1, "p", 0),
            Symbol::new("x", "fn", f64::NAN, "p", 0),
            Symbol::new("x", "fn", f64::INFINITY, "p", 0),
        ] {
            let g = Graph {
                symbols: vec![bad.clone()],
                ..Graph::default()
            };
            assert!(Index::build(&g).is_err(), "{bad:?}");
        }
        let g = Graph {
            tool: Some("has space".into()),
            ..Graph::default()
        };
        assert_eq!(Index::build(&g).unwrap_err().code(), "unsupported_value");
    }
}
