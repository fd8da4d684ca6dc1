//! `tool_browse` (spec §3), its rendered response (§2.3, §2.5) and cache-stable sessions (§5).

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::Value;

use crate::card::{ChoiceCard, CARD_HARD_CAP_TOKENS, RESPONSE_PREAMBLE_TOKENS};
use crate::catalog::{Catalog, Hydration};
use crate::error::{args_invalid, Error, ErrorKind};
use crate::graph::NodeKind;
use crate::path::parse_path;
use crate::rank::query_words;
use crate::truncate::count;

/// The number of cards a query returns when the request does not say.
pub const DEFAULT_TOP_K: usize = 8;
/// The largest `top_k` accepted.
pub const MAX_TOP_K: usize = 50;
/// The longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;

/// The arguments of one `tool_browse` call: a query or a path (§3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrowseRequest {
    /// A free-form query, answered with the `top_k` best-ranked tools.
    Query {
        /// The query.
        query: String,
        /// How many cards at most; [`DEFAULT_TOP_K`] when `None`.
        top_k: Option<usize>,
    },
    /// A path through the [`ChoiceGraph`](crate::ChoiceGraph), answered with the children of
    /// the node it addresses (all of them), or with the leaf's own card.
    Path {
        /// The path, such as `/github`.
        path: String,
    },
}

impl BrowseRequest {
    /// A query with the default `top_k`.
    pub fn query(query: impl Into<String>) -> Self {
        BrowseRequest::Query {
            query: query.into(),
            top_k: None,
        }
    }

    /// A path.
    pub fn path(path: impl Into<String>) -> Self {
        BrowseRequest::Path { path: path.into() }
    }

    /// The same query with another `top_k` (no effect on a path request).
    #[must_use]
    pub fn with_top_k(self, k: usize) -> Self {
        match self {
            BrowseRequest::Query { query, .. } => BrowseRequest::Query {
                query,
                top_k: Some(k),
            },
            other => other,
        }
    }

    /// Reads the arguments object of an MCP `tool_browse` call.
    ///
    /// Exactly one of `query` (a string) and `path` (a string) must be present (`null` counts
    /// as absent); `top_k` (an integer from 1 to 50) may accompany a query only. Anything else
    /// (both, neither, wrong types, unknown members) is `ARGS_INVALID`.
    ///
    /// ```
    /// use agentwire_toolcard::{BrowseRequest, ErrorCode};
    /// use serde_json::json;
    ///
    /// let request = BrowseRequest::from_arguments(&json!({"query": "open an issue", "top_k": 3}))?;
    /// assert_eq!(request, BrowseRequest::query("open an issue").with_top_k(3));
    ///
    /// let error = BrowseRequest::from_arguments(&json!({"query": "x", "path": "/"})).unwrap_err();
    /// assert_eq!(error.code(), ErrorCode::ArgsInvalid);
    /// assert_eq!(
    ///     error.to_json_string(),
    ///     r#"{"error":"ARGS_INVALID","message":"tool_browse takes exactly one of `query` and `path`, not both","path":"","details":{}}"#
    /// );
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn from_arguments(arguments: &Value) -> Result<BrowseRequest, Error> {
        let Some(map) = arguments.as_object() else {
            return Err(args_invalid(
                None,
                "tool_browse arguments must be a JSON object",
            ));
        };
        if let Some(unknown) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "query" | "path" | "top_k"))
        {
            return Err(args_invalid(
                Some(unknown),
                format!("tool_browse has no argument `{unknown}` (expected `query` or `path`, and `top_k`)"),
            ));
        }
        let string = |field: &str| -> Result<Option<String>, Error> {
            match map.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(args_invalid(
                    Some(field),
                    format!("`{field}` must be a string"),
                )),
            }
        };
        let query = string("query")?;
        let path = string("path")?;
        let top_k = match map.get("top_k") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(k) => Some(usize::try_from(k).unwrap_or(usize::MAX)),
                None => return Err(top_k_error()),
            },
            Some(_) => return Err(top_k_error()),
        };
        match (query, path) {
            (Some(_), Some(_)) => Err(args_invalid(
                None,
                "tool_browse takes exactly one of `query` and `path`, not both",
            )),
            (None, None) => Err(args_invalid(
                None,
                "tool_browse takes exactly one of `query` and `path`; neither was given",
            )),
            (None, Some(_)) if top_k.is_some() => Err(args_invalid(
                Some("top_k"),
                "`top_k` applies to `query` only; a path lists every child",
            )),
            (Some(query), None) => Ok(BrowseRequest::Query { query, top_k }),
            (None, Some(path)) => Ok(BrowseRequest::Path { path }),
        }
    }
}

fn top_k_error() -> Error {
    args_invalid(
        Some("top_k"),
        format!("`top_k` must be an integer from 1 to {MAX_TOP_K}"),
    )
}

/// What kind of request a response answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Query,
    Path,
}

/// The answer to one `tool_browse` call: the cards, and the exact text an agent receives.
///
/// The text is a preamble line (at most 32 tokens) followed by each card's one-line
/// rendering ([`ChoiceCard::text`]); its token count is checked against `80 × n + 32`
/// (§2.3), where `n` counts every card line, including the cache-breakpoint marker.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowseResponse {
    cards: Vec<ChoiceCard>,
    text: String,
    tokens: usize,
}

impl BrowseResponse {
    fn new(mode: Mode, cache_stable: bool, cards: Vec<ChoiceCard>) -> Result<Self, Error> {
        let tools = cards
            .iter()
            .filter(|c| c.id() != crate::card::CACHE_BREAKPOINT_ID)
            .count();
        let mut text = preamble(mode, cache_stable, tools);
        for card in &cards {
            text.push_str(card.text());
        }
        let tokens = count(&text);
        let cap = CARD_HARD_CAP_TOKENS * cards.len() + RESPONSE_PREAMBLE_TOKENS;
        if tokens > cap {
            return Err(Error::new(ErrorKind::ResponseOverBudget {
                tokens,
                cap,
                cards: cards.len(),
            }));
        }
        Ok(BrowseResponse {
            cards,
            text,
            tokens,
        })
    }

    /// The cards, in response order.
    pub fn cards(&self) -> &[ChoiceCard] {
        &self.cards
    }

    /// The ids of the cards, in response order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.cards.iter().map(ChoiceCard::id)
    }

    /// The prompt-facing text: what a gateway puts in the tool result for the agent.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The size of [`BrowseResponse::text`] in cl100k_base tokens.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// The JSON form: an array of the cards' JSON forms (with scores), for programs.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.cards).unwrap_or(Value::Null)
    }

    /// Consumes the response, returning the cards.
    pub fn into_cards(self) -> Vec<ChoiceCard> {
        self.cards
    }
}

/// The first line of a response: at most 32 tokens, and never an echo of the request.
fn preamble(mode: Mode, cache_stable: bool, n: usize) -> String {
    let (noun, plural) = match mode {
        Mode::Query => ("tool", "tools"),
        Mode::Path => ("entry", "entries"),
    };
    if n == 0 {
        return match mode {
            Mode::Query => "tool_browse: no tool matches the query\n".into(),
            Mode::Path => "tool_browse: nothing at this path\n".into(),
        };
    }
    let what = if n == 1 { noun } else { plural };
    let order = match (cache_stable, mode) {
        (true, _) => "seen before first, then new, each by id",
        (false, Mode::Query) => "best match first",
        (false, Mode::Path) => "internal entries are paths to browse",
    };
    format!("tool_browse: {n} {what}, {order}\n")
}

impl Catalog {
    /// Answers a `tool_browse` call without session state, in the order of §2.5: descending
    /// score, then ascending id (path results have no score, so they are in id order).
    ///
    /// ```
    /// use agentwire_toolcard::{BrowseRequest, Catalog};
    /// use serde_json::json;
    ///
    /// let catalog = Catalog::from_tools_list(&json!([
    ///     {"name": "github.create_issue", "description": "Create an issue in a repository.",
    ///      "_meta": {"version": "1.4.0"}},
    ///     {"name": "github.list_issues", "description": "List the issues of a repository.",
    ///      "annotations": {"readOnlyHint": true}, "_meta": {"version": "1.4.0"}},
    ///     {"name": "weather.get", "description": "Current weather for a city.",
    ///      "annotations": {"readOnlyHint": true}, "_meta": {"version": "2024-05"}}
    /// ]))?;
    ///
    /// let response = catalog.browse(&BrowseRequest::query("open a new issue").with_top_k(5))?;
    /// assert_eq!(response.text(), "\
    /// tool_browse: 2 tools, best match first
    /// github:create_issue@1.4.0 (tool) — Create an issue in a repository. side-effects
    /// github:list_issues@1.4.0 (tool) — List the issues of a repository. [read-only]
    /// ");
    ///
    /// let response = catalog.browse(&BrowseRequest::path("/"))?;
    /// assert_eq!(response.text(), "\
    /// tool_browse: 2 entries, internal entries are paths to browse
    /// /github (internal) — 2 tools: create_issue, list_issues
    /// /weather (internal) — 1 tool: get
    /// ");
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn browse(&self, request: &BrowseRequest) -> Result<BrowseResponse, Error> {
        let (mode, cards) = self.select(request)?;
        BrowseResponse::new(mode, false, cards)
    }

    /// Answers a `tool_browse` call from its MCP arguments object; see
    /// [`BrowseRequest::from_arguments`].
    pub fn browse_arguments(&self, arguments: &Value) -> Result<BrowseResponse, Error> {
        self.browse(&BrowseRequest::from_arguments(arguments)?)
    }

    /// The cards a request selects, in §2.5 order.
    fn select(&self, request: &BrowseRequest) -> Result<(Mode, Vec<ChoiceCard>), Error> {
        match request {
            BrowseRequest::Query { query, top_k } => {
                let k = top_k.unwrap_or(DEFAULT_TOP_K);
                if !(1..=MAX_TOP_K).contains(&k) {
                    return Err(top_k_error());
                }
                if query.len() > MAX_QUERY_BYTES {
                    return Err(args_invalid(
                        Some("query"),
                        format!("`query` is longer than {MAX_QUERY_BYTES} bytes"),
                    ));
                }
                let words = query_words(query);
                if words.is_empty() {
                    return Err(args_invalid(
                        Some("query"),
                        "`query` has no words to search for",
                    ));
                }
                let mut scored = self.index().score(&words);
                scored.sort_by(|a, b| {
                    b.1.total_cmp(&a.1)
                        .then_with(|| self.tool_at(a.0).id().cmp(self.tool_at(b.0).id()))
                });
                scored.truncate(k);
                let cards = scored
                    .into_iter()
                    .map(|(i, score)| self.tool_at(i).card().clone().with_score(Some(score)))
                    .collect();
                Ok((Mode::Query, cards))
            }
            BrowseRequest::Path { path } => {
                let path = parse_path(path)?;
                let graph = self.graph();
                let node = graph.resolve(&path)?;
                // Leaves show their tool's card, namespaces and clusters their internal card.
                let card_of = |node: &crate::graph::GraphNode| -> Option<ChoiceCard> {
                    match graph.tool_of(node) {
                        Some(tool) => Some(self.tool_at(tool).card().clone()),
                        None => node.card().cloned(),
                    }
                };
                let mut cards: Vec<ChoiceCard> = if node.kind() == NodeKind::Leaf {
                    card_of(node).into_iter().collect()
                } else {
                    graph.children(node).filter_map(card_of).collect()
                };
                cards.sort_by(|a, b| a.id().cmp(b.id()));
                Ok((Mode::Path, cards))
            }
        }
    }
}

/// A gateway session: browses, hydrations and argument checks against one catalog, with the
/// optional cache-stable ordering of spec §5.
///
/// The session owns its state (the seen set and the frozen cards) and changes it only
/// through `&mut self`; share a session between tasks by wrapping it in a `Mutex` yourself.
/// `C` is anything that dereferences to a [`Catalog`]: `Arc<Catalog>` (the default), `&Catalog`,
/// `Box<Catalog>`.
///
/// # Cache-stable order (§5)
///
/// With [`Session::cache_stable`], every browse answers with:
///
/// 1. the selected cards already seen in this session, by ascending id, each re-emitted
///    exactly as it was first shown (score included);
/// 2. the internal card `__cache_breakpoint__`, only when both parts are non-empty;
/// 3. the newly seen cards, by ascending id.
///
/// The selection itself is the ordinary one (the `top_k` best for a query, the children for
/// a path), so a response never has more tool cards than the ordinary response. The cards
/// returned, and the tools successfully hydrated, enter the seen set; nothing else does
/// (failed hydrations and argument checks leave it unchanged).
///
/// ```
/// use std::sync::Arc;
/// use agentwire_toolcard::{BrowseRequest, Catalog, Session};
/// use serde_json::json;
///
/// let catalog = Arc::new(Catalog::from_tools_list(&json!([
///     {"name": "fs.read_file", "description": "Read a file.", "_meta": {"version": "1"}},
///     {"name": "fs.write_file", "description": "Write a file.", "_meta": {"version": "1"}},
///     {"name": "fs.list_dir", "description": "List a directory of files.", "_meta": {"version": "1"}}
/// ]))?);
/// let mut session = Session::new(catalog).cache_stable(true);
///
/// let first = session.browse(&BrowseRequest::query("read file"))?;
/// let ids: Vec<&str> = first.ids().collect();
/// assert_eq!(ids, ["fs:list_dir@1", "fs:read_file@1", "fs:write_file@1"]);
///
/// session.hydrate("fs:read_file@1")?;
/// let second = session.browse(&BrowseRequest::path("/fs/read_file"))?;
/// assert_eq!(second.ids().collect::<Vec<_>>(), ["fs:read_file@1"]);
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
#[derive(Debug)]
pub struct Session<C = Arc<Catalog>> {
    catalog: C,
    cache_stable: bool,
    seen: BTreeMap<String, ChoiceCard>,
}

impl<C: Deref<Target = Catalog>> Session<C> {
    /// A session in the ordinary (§2.5) order.
    pub fn new(catalog: C) -> Self {
        Session {
            catalog,
            cache_stable: false,
            seen: BTreeMap::new(),
        }
    }

    /// Turns the cache-stable order of §5 on or off (only before the first call matters:
    /// turning it off forgets the seen set).
    #[must_use]
    pub fn cache_stable(mut self, on: bool) -> Self {
        self.cache_stable = on;
        if !on {
            self.seen.clear();
        }
        self
    }

    /// Whether the session is cache-stable.
    pub fn is_cache_stable(&self) -> bool {
        self.cache_stable
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The ids seen so far, ascending (always empty unless cache-stable).
    pub fn seen(&self) -> impl Iterator<Item = &str> {
        self.seen.keys().map(String::as_str)
    }

    /// Forgets every card seen so far.
    pub fn reset(&mut self) {
        self.seen.clear();
    }

    /// Answers a `tool_browse` call.
    pub fn browse(&mut self, request: &BrowseRequest) -> Result<BrowseResponse, Error> {
        let (mode, cards) = self.catalog.select(request)?;
        if !self.cache_stable {
            return BrowseResponse::new(mode, false, cards);
        }
        let mut old = Vec::new();
        let mut new = Vec::new();
        for card in cards {
            match self.seen.get(card.id()) {
                Some(frozen) => old.push(frozen.clone()),
                None => new.push(card),
            }
        }
        old.sort_by(|a, b| a.id().cmp(b.id()));
        new.sort_by(|a, b| a.id().cmp(b.id()));
        let marker = !old.is_empty() && !new.is_empty();
        let mut out = old;
        if marker {
            out.push(ChoiceCard::cache_breakpoint());
        }
        let first_new = out.len();
        out.extend(new);
        let response = BrowseResponse::new(mode, true, out)?;
        // Only what was actually returned enters the seen set, frozen as returned.
        for card in &response.cards[first_new..] {
            self.seen.insert(card.id().to_owned(), card.clone());
        }
        Ok(response)
    }

    /// Answers a `tool_browse` call from its MCP arguments object.
    pub fn browse_arguments(&mut self, arguments: &Value) -> Result<BrowseResponse, Error> {
        let request = BrowseRequest::from_arguments(arguments)?;
        self.browse(&request)
    }

    /// Hydrates a tool (§4.3). On success a cache-stable session records the tool as seen
    /// (its card frozen as it is now, unless it was seen before); a failure records nothing
    /// (§5.5).
    pub fn hydrate(&mut self, tool_id: &str) -> Result<Hydration<'_>, Error> {
        let position = self.catalog.lookup(tool_id)?;
        if self.cache_stable {
            let card = self.catalog.tool_at(position).card();
            self.seen
                .entry(card.id().to_owned())
                .or_insert_with(|| card.clone());
        }
        self.catalog.hydrate(tool_id)
    }

    /// Checks arguments before `tool_execute` calls upstream (§4.4); see
    /// [`Catalog::validate_args`]. Does not change the session.
    pub fn validate_args(&self, tool_id: &str, args: &Value) -> Result<(), Error> {
        self.catalog.validate_args(tool_id, args)
    }
}
