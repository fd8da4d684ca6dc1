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
/// The number of entries a path returns when the request does not say: every child of a
/// namespace of up to 20 tools, and of a cluster of up to 20 tools.
pub const DEFAULT_PAGE_SIZE: usize = 20;

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
    /// the node it addresses, a page at a time, or with the leaf's own card.
    Path {
        /// The path, such as `/github`.
        path: String,
        /// How many entries a page holds at most; [`DEFAULT_PAGE_SIZE`] when `None`.
        top_k: Option<usize>,
        /// Where the page starts: the `next_cursor` of the previous page
        /// ([`BrowseResponse::next_cursor`]); the first page when `None`.
        cursor: Option<String>,
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

    /// The first page of a path, with the default page size.
    pub fn path(path: impl Into<String>) -> Self {
        BrowseRequest::Path {
            path: path.into(),
            top_k: None,
            cursor: None,
        }
    }

    /// The same request with another `top_k`: the number of cards of a query, the page size
    /// of a path.
    #[must_use]
    pub fn with_top_k(self, k: usize) -> Self {
        match self {
            BrowseRequest::Query { query, .. } => BrowseRequest::Query {
                query,
                top_k: Some(k),
            },
            BrowseRequest::Path { path, cursor, .. } => BrowseRequest::Path {
                path,
                top_k: Some(k),
                cursor,
            },
        }
    }

    /// The same path request from `cursor` on (no effect on a query).
    #[must_use]
    pub fn with_cursor(self, cursor: impl Into<String>) -> Self {
        match self {
            BrowseRequest::Path { path, top_k, .. } => BrowseRequest::Path {
                path,
                top_k,
                cursor: Some(cursor.into()),
            },
            other => other,
        }
    }

    /// Reads the arguments object of an MCP `tool_browse` call.
    ///
    /// Exactly one of `query` (a string) and `path` (a string) must be present (`null` counts
    /// as absent); `top_k` (an integer from 1 to 50) may accompany either (the number of
    /// cards of a query, the page size of a path), and `cursor` (a string) a path. Anything
    /// else (both, neither, wrong types, unknown members) is `ARGS_INVALID`.
    ///
    /// ```
    /// use agentwire_toolcard::{BrowseRequest, ErrorCode};
    /// use serde_json::json;
    ///
    /// let request = BrowseRequest::from_arguments(&json!({"query": "open an issue", "top_k": 3}))?;
    /// assert_eq!(request, BrowseRequest::query("open an issue").with_top_k(3));
    ///
    /// let request = BrowseRequest::from_arguments(&json!({"path": "/github", "cursor": "20"}))?;
    /// assert_eq!(request, BrowseRequest::path("/github").with_cursor("20"));
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
            .find(|k| !matches!(k.as_str(), "query" | "path" | "top_k" | "cursor"))
        {
            return Err(args_invalid(
                Some(unknown),
                format!("tool_browse has no argument `{unknown}` (expected `query` or `path`, `top_k`, and `cursor` with a path)"),
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
        let cursor = string("cursor")?;
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
            (Some(_), None) if cursor.is_some() => Err(args_invalid(
                Some("cursor"),
                "`cursor` pages through a path; a query returns its `top_k` best at once",
            )),
            (Some(query), None) => Ok(BrowseRequest::Query { query, top_k }),
            (None, Some(path)) => Ok(BrowseRequest::Path {
                path,
                top_k,
                cursor,
            }),
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

/// Where a page of a path's children sits among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Page {
    /// The index of the first entry shown.
    offset: usize,
    /// The number of children of the node.
    total: usize,
    /// The index of the first entry of the next page, if any.
    next: Option<usize>,
}

/// What a request selects, before a session orders it.
struct Selection {
    mode: Mode,
    cards: Vec<ChoiceCard>,
    page: Option<Page>,
}

/// The answer to one `tool_browse` call: the cards, and the exact text an agent receives.
///
/// The text is a preamble line (at most 32 tokens) followed by each card's one-line
/// rendering ([`ChoiceCard::text`]); its token count is checked against `80 × n + 32`
/// (§2.3), where `n` counts every card line, including the cache-breakpoint marker. A query
/// returns at most `top_k` (at most 50) cards and a path at most a page of `top_k` (20 by
/// default) entries, so every response stays within `80 × 50 + 32` tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowseResponse {
    cards: Vec<ChoiceCard>,
    text: String,
    tokens: usize,
    page: Option<Page>,
    next_cursor: Option<String>,
}

impl BrowseResponse {
    fn new(selection: Selection, cache_stable: bool) -> Result<Self, Error> {
        let Selection { mode, cards, page } = selection;
        let tools = cards
            .iter()
            .filter(|c| c.id() != crate::card::CACHE_BREAKPOINT_ID)
            .count();
        let mut text = preamble(mode, cache_stable, tools, page);
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
            next_cursor: page.and_then(|p| p.next).map(|n| n.to_string()),
            page,
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

    /// For a path whose node has more children than one page holds: the `cursor` argument
    /// that returns the next page (the preamble says it too). `None` on the last page and
    /// for queries.
    pub fn next_cursor(&self) -> Option<&str> {
        self.next_cursor.as_deref()
    }

    /// For a path: how many children the node has (or 1 for a leaf); for a query, the
    /// number of cards returned.
    pub fn total(&self) -> usize {
        self.page.map_or(self.cards.len(), |p| p.total)
    }

    /// The JSON form, for programs: `{"cards": [...], "total": n, "next_cursor": "…" | null}`,
    /// the cards in their JSON form (with scores).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "cards": serde_json::to_value(&self.cards).unwrap_or(Value::Null),
            "total": self.total(),
            "next_cursor": self.next_cursor,
        })
    }

    /// Consumes the response, returning the cards.
    pub fn into_cards(self) -> Vec<ChoiceCard> {
        self.cards
    }
}

/// The first line of a response: at most 32 tokens, and never an echo of the request.
fn preamble(mode: Mode, cache_stable: bool, n: usize, page: Option<Page>) -> String {
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
    let order = match (cache_stable, mode) {
        (true, _) => "seen before first, then new, each by id",
        (false, Mode::Query) => "best match first",
        (false, Mode::Path) => "internal entries are paths to browse",
    };
    match page {
        Some(page) if n < page.total => {
            let first = page.offset + 1;
            let last = page.offset + n;
            let total = page.total;
            let next = page
                .next
                .map(|next| format!("; next page: cursor \"{next}\""))
                .unwrap_or_default();
            let line = format!("tool_browse: {plural} {first}-{last} of {total}, {order}{next}\n");
            // Long numbers could take the line past 32 tokens; then the order is left out.
            if count(&line) <= RESPONSE_PREAMBLE_TOKENS {
                line
            } else {
                format!("tool_browse: {plural} {first}-{last} of {total}{next}\n")
            }
        }
        _ => {
            let what = if n == 1 { noun } else { plural };
            format!("tool_browse: {n} {what}, {order}\n")
        }
    }
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
        BrowseResponse::new(self.select(request)?, false)
    }

    /// Answers a `tool_browse` call from its MCP arguments object; see
    /// [`BrowseRequest::from_arguments`].
    pub fn browse_arguments(&self, arguments: &Value) -> Result<BrowseResponse, Error> {
        self.browse(&BrowseRequest::from_arguments(arguments)?)
    }

    /// The cards a request selects, in §2.5 order.
    fn select(&self, request: &BrowseRequest) -> Result<Selection, Error> {
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
                Ok(Selection {
                    mode: Mode::Query,
                    cards,
                    page: None,
                })
            }
            BrowseRequest::Path {
                path,
                top_k,
                cursor,
            } => {
                let k = top_k.unwrap_or(DEFAULT_PAGE_SIZE);
                if !(1..=MAX_TOP_K).contains(&k) {
                    return Err(top_k_error());
                }
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
                let total = cards.len();
                let offset = match cursor {
                    None => 0,
                    Some(cursor) => parse_cursor(cursor, total)?,
                };
                let end = offset.saturating_add(k).min(total);
                cards.truncate(end);
                cards.drain(..offset);
                Ok(Selection {
                    mode: Mode::Path,
                    cards,
                    page: Some(Page {
                        offset,
                        total,
                        next: (end < total).then_some(end),
                    }),
                })
            }
        }
    }
}

/// A cursor is the decimal index of the first entry of a page, as `next_cursor` wrote it.
fn parse_cursor(cursor: &str, total: usize) -> Result<usize, Error> {
    let canonical = !cursor.is_empty()
        && cursor.len() <= 20
        && cursor.bytes().all(|b| b.is_ascii_digit())
        && (cursor == "0" || !cursor.starts_with('0'));
    let offset = cursor.parse::<usize>().ok().filter(|_| canonical);
    match offset {
        Some(offset) if offset < total || offset == 0 => Ok(offset),
        Some(offset) => Err(args_invalid(
            Some("cursor"),
            format!("`cursor` {offset} is past the last of the {total} entries at this path"),
        )),
        None => Err(args_invalid(
            Some("cursor"),
            "`cursor` must be a `next_cursor` from an earlier page (a decimal entry index)",
        )),
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
/// The selection itself is the ordinary one (the `top_k` best for a query, a page of the
/// children for a path), so a response never has more tool cards than the ordinary response. The cards
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
        let selection = self.catalog.select(request)?;
        if !self.cache_stable {
            return BrowseResponse::new(selection, false);
        }
        let mut old = Vec::new();
        let mut new = Vec::new();
        // Seen cards first shown without a score (by a path or a hydration) take the score of
        // the first query that ranks them (§5.2); the score is not rendered, so the text
        // stays byte-stable.
        let mut scored = Vec::new();
        for card in selection.cards {
            match self.seen.get(card.id()) {
                Some(frozen) if frozen.score().is_none() && card.score().is_some() => {
                    let filled = frozen.clone().with_score(card.score());
                    scored.push(filled.clone());
                    old.push(filled);
                }
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
        let response = BrowseResponse::new(
            Selection {
                mode: selection.mode,
                cards: out,
                page: selection.page,
            },
            true,
        )?;
        // Only what was actually returned enters the seen set, frozen as returned.
        for card in scored
            .into_iter()
            .chain(response.cards[first_new..].iter().cloned())
        {
            self.seen.insert(card.id().to_owned(), card);
        }
        Ok(response)
    }

    /// Moves the session to another catalog (the same upstreams after one of them changed
    /// its tools, see [`Catalog::with_server`]), keeping the cache-stable state: every card
    /// seen whose id is still in the new catalog (a tool_id, or the path of a namespace or
    /// cluster) stays frozen as first shown, score included; cards whose id is gone are
    /// forgotten.
    pub fn set_catalog(&mut self, catalog: C) {
        self.seen.retain(|id, _| {
            catalog.get(id).is_some()
                || parse_path(id).is_ok_and(|path| catalog.graph().resolve(&path).is_ok())
        });
        self.catalog = catalog;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preambles_stay_within_32_tokens() {
        for (offset, n, total) in [
            (0, 20, 230),
            (123_400, 50, 999_999),
            (9_999_950, 50, 99_999_999),
        ] {
            for mode in [Mode::Query, Mode::Path] {
                for cache_stable in [false, true] {
                    let next = (offset + n < total).then_some(offset + n);
                    let page = Page {
                        offset,
                        total,
                        next,
                    };
                    let line = preamble(mode, cache_stable, n, Some(page));
                    assert!(count(&line) <= RESPONSE_PREAMBLE_TOKENS, "{line}");
                    if let Some(next) = next {
                        assert!(line.contains(&format!("cursor \"{next}\"")), "{line}");
                    }
                }
            }
        }
    }
}
