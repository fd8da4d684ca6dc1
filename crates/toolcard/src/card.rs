//! ChoiceCard (spec §2): the permitted fields, the prompt-facing rendering and its budget.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::error::{Error, ErrorKind};
use crate::tool_id::ToolId;
use crate::truncate::{count, single_line, truncate_description, MAX_TOKEN_BYTES};

/// A single card's target size in cl100k_base tokens (§2.3).
pub const CARD_TARGET_TOKENS: usize = 60;
/// A single card's hard cap in cl100k_base tokens (§2.3).
pub const CARD_HARD_CAP_TOKENS: usize = 80;
/// The preamble allowance of a browse response (§2.3): a response of `n` cards may take
/// `80 × n + 32` tokens.
pub const RESPONSE_PREAMBLE_TOKENS: usize = 32;
/// The most tags a card carries (§2.1).
pub const MAX_TAGS: usize = 5;
/// The longest tag, in characters (§2.1).
pub const MAX_TAG_CHARS: usize = 24;
/// The longest display name, in characters (§2.1).
pub const MAX_NAME_CHARS: usize = 64;
/// The id of the internal card that marks the cache breakpoint (§5.1).
pub const CACHE_BREAKPOINT_ID: &str = "__cache_breakpoint__";

/// What a card stands for (§2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CardKind {
    /// An upstream tool, callable through `tool_execute`.
    Tool,
    /// An agent.
    Agent,
    /// A skill.
    Skill,
    /// A navigation node of the choice graph, or the cache-breakpoint marker.
    Internal,
}

impl CardKind {
    /// The kind as rendered and serialized: `tool`, `agent`, `skill` or `internal`.
    pub fn as_str(self) -> &'static str {
        match self {
            CardKind::Tool => "tool",
            CardKind::Agent => "agent",
            CardKind::Skill => "skill",
            CardKind::Internal => "internal",
        }
    }
}

impl fmt::Display for CardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A ChoiceCard: the compact, schema-free description of one choice an agent can make.
///
/// It holds exactly the fields of spec §2.1, and nothing else can be put on it: there is no
/// field for a schema, an example, annotations or any other map (§2.2). A card exists only
/// through [`ChoiceCardBuilder::build`], which normalises the fields, truncates the
/// description (§2.4) and checks the rendered size against the hard cap (§2.3), so every card
/// renders in at most 80 tokens.
///
/// Two forms:
///
/// - [`ChoiceCard::text`], the **prompt-facing rendering** that the token budget measures and
///   that a gateway sends to the agent: one line, ended by `\n`,
///
///   ```text
///   <id> (<kind>[: <name>]) — <description>[ [<tag>, <tag>]][ cost=<cost_hint>][ side-effects]
///   ```
///
///   The name appears only when it differs from the default name, the short name the id
///   already shows (a tool_id's name or a path's last segment, cut to 63 characters and `…`
///   when longer than 64); ` — <description>` only when the
///   description is not empty; tags only when there are any; `cost=` only when `cost_hint`
///   is above 0; `side-effects` only when `side_effects` is true. The score, the namespace
///   (always visible in the id) and `has_schema` are never rendered.
/// - The **JSON form** (`serde::Serialize`): every field, in the order of §2.1, with `score`
///   omitted when absent.
///
/// ```
/// use agentwire_toolcard::{CardKind, ChoiceCard};
///
/// let card = ChoiceCard::builder("github:create_issue@1.4.0", CardKind::Tool)
///     .name("Create issue")
///     .namespace("github")
///     .description("Creates an issue in a repository.\nLabels are optional.")
///     .tags(["write", "destructive", "write"])
///     .has_schema(true)
///     .side_effects(true)
///     .build()?;
/// assert_eq!(
///     card.text(),
///     "github:create_issue@1.4.0 (tool: Create issue) — Creates an issue in a repository. \
///      Labels are optional. [destructive, write] side-effects\n"
/// );
/// assert_eq!(card.tokens(), 36);
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceCard {
    id: String,
    name: String,
    description: String,
    tags: Vec<String>,
    kind: CardKind,
    namespace: String,
    has_schema: bool,
    score: Option<f64>,
    cost_hint: f64,
    side_effects: bool,
    text: String,
    tokens: usize,
}

impl ChoiceCard {
    /// Starts a card with its id and kind; every other field has an empty default.
    pub fn builder(id: impl Into<String>, kind: CardKind) -> ChoiceCardBuilder {
        ChoiceCardBuilder {
            id: id.into(),
            kind,
            name: None,
            description: String::new(),
            tags: Vec::new(),
            namespace: String::new(),
            has_schema: false,
            score: None,
            cost_hint: 0.0,
            side_effects: false,
        }
    }

    /// The id: a tool_id for tool cards, a path (`/github`) for navigation cards.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The display name, at most 64 characters.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description: one line, truncated to the card budget.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The tags: sorted, distinct, at most 5, each at most 24 characters.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// The kind.
    pub fn kind(&self) -> CardKind {
        self.kind
    }

    /// The namespace (empty for the root's marker card).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Whether a schema can be hydrated for this card. The schema itself is never on a card.
    pub fn has_schema(&self) -> bool {
        self.has_schema
    }

    /// The ranking score, if the card came from a ranked query.
    pub fn score(&self) -> Option<f64> {
        self.score
    }

    /// The cost hint; 0 when unknown.
    pub fn cost_hint(&self) -> f64 {
        self.cost_hint
    }

    /// Whether calling the tool may change state.
    pub fn side_effects(&self) -> bool {
        self.side_effects
    }

    /// The prompt-facing rendering: one line ended by `\n` (see the type's docs).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The size of [`ChoiceCard::text`] in cl100k_base tokens; at most 80.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// The same card with another score. The score is never rendered, so the text and its
    /// token count do not change.
    #[must_use]
    pub fn with_score(mut self, score: Option<f64>) -> Self {
        self.score = score.filter(|s| s.is_finite());
        self
    }

    /// The internal card that marks the cache breakpoint (§5.1).
    pub fn cache_breakpoint() -> ChoiceCard {
        ChoiceCard::builder(CACHE_BREAKPOINT_ID, CardKind::Internal)
            .name(CACHE_BREAKPOINT_ID)
            .description("cards above were shown before; new cards follow")
            .build()
            .expect("the marker card is valid")
    }
}

impl Serialize for ChoiceCard {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let fields = if self.score.is_some() { 10 } else { 9 };
        let mut s = serializer.serialize_struct("ChoiceCard", fields)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("description", &self.description)?;
        s.serialize_field("tags", &self.tags)?;
        s.serialize_field("kind", &self.kind)?;
        s.serialize_field("namespace", &self.namespace)?;
        s.serialize_field("has_schema", &self.has_schema)?;
        if let Some(score) = self.score {
            s.serialize_field("score", &score)?;
        }
        s.serialize_field("cost_hint", &self.cost_hint)?;
        s.serialize_field("side_effects", &self.side_effects)?;
        s.end()
    }
}

/// Builds a [`ChoiceCard`]; see [`ChoiceCard::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ChoiceCardBuilder {
    id: String,
    kind: CardKind,
    name: Option<String>,
    description: String,
    tags: Vec<String>,
    namespace: String,
    has_schema: bool,
    score: Option<f64>,
    cost_hint: f64,
    side_effects: bool,
}

impl ChoiceCardBuilder {
    /// The display name (at most 64 characters; whitespace runs become one space). Defaults to
    /// the short name shown by the id (a tool_id's name, a path's last segment), cut to 63
    /// characters and `…` when longer than 64.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The description. Whitespace runs, newlines included, become one space; then the
    /// description is truncated (§2.4) when the card is over its 60-token target.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The tags. They are normalised as §2.1 requires: whitespace runs become one space, empty
    /// tags are dropped, each is cut to 24 characters, duplicates are removed, the rest is
    /// sorted and the first 5 are kept.
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.tags = tags.into_iter().map(|t| t.as_ref().to_owned()).collect();
        self
    }

    /// The namespace.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Whether a schema can be hydrated.
    pub fn has_schema(mut self, has_schema: bool) -> Self {
        self.has_schema = has_schema;
        self
    }

    /// The ranking score (finite).
    pub fn score(mut self, score: f64) -> Self {
        self.score = Some(score);
        self
    }

    /// The cost hint (finite, at least 0).
    pub fn cost_hint(mut self, cost_hint: f64) -> Self {
        self.cost_hint = cost_hint;
        self
    }

    /// Whether calling the tool may change state.
    pub fn side_effects(mut self, side_effects: bool) -> Self {
        self.side_effects = side_effects;
        self
    }

    /// Validates and normalises the fields, renders the card, truncates the description if
    /// the card is over its 60-token target, and checks the 80-token hard cap.
    ///
    /// Truncation touches only the description (§2.3): the description's budget is 60 minus
    /// the tokens of the card rendered with an empty description (at least 1), and the
    /// description is cut to it by [`truncate_description`]. A card still over 80 tokens is
    /// [`ErrorKind::CardOverBudget`].
    pub fn build(self) -> Result<ChoiceCard, Error> {
        let invalid = |field: &'static str, reason: String| {
            Error::new(ErrorKind::InvalidCard { field, reason })
        };
        if self.id.is_empty() || self.id.chars().any(char::is_whitespace) {
            return Err(invalid(
                "id",
                "must be non-empty and contain no whitespace".into(),
            ));
        }
        let name = match &self.name {
            Some(name) => single_line(name).into_owned(),
            None => default_name(&self.id),
        };
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(invalid(
                "name",
                format!("{name:?} is longer than {MAX_NAME_CHARS} characters"),
            ));
        }
        if !(self.cost_hint.is_finite() && self.cost_hint >= 0.0) {
            return Err(invalid(
                "cost_hint",
                format!("{} is not a finite number ≥ 0", self.cost_hint),
            ));
        }
        if let Some(score) = self.score {
            if !score.is_finite() {
                return Err(invalid("score", format!("{score} is not finite")));
            }
        }
        let mut card = ChoiceCard {
            tags: normalize_tags(&self.tags),
            description: single_line(&self.description).into_owned(),
            id: self.id,
            name,
            kind: self.kind,
            namespace: self.namespace,
            has_schema: self.has_schema,
            score: self.score,
            // `-0.0` would serialize as `-0.0`; it means no cost.
            cost_hint: if self.cost_hint == 0.0 {
                0.0
            } else {
                self.cost_hint
            },
            side_effects: self.side_effects,
            text: String::new(),
            tokens: 0,
        };
        card.text = render(&card, &card.description, false);
        // A line longer than `128 × 60` bytes is over the target whatever its count; it is not
        // encoded, so a huge upstream description costs no more than a long one.
        card.tokens = if card.text.len() > CARD_TARGET_TOKENS * MAX_TOKEN_BYTES {
            usize::MAX
        } else {
            count(&card.text)
        };
        if card.tokens > CARD_TARGET_TOKENS && !card.description.is_empty() {
            let overhead = count(&render(&card, "", true));
            let budget = CARD_TARGET_TOKENS.saturating_sub(overhead).max(1);
            card.description = truncate_description(&card.description, budget).into_owned();
            card.text = render(&card, &card.description, false);
            card.tokens = count(&card.text);
        }
        if card.tokens == usize::MAX {
            card.tokens = count(&card.text);
        }
        if card.tokens > CARD_HARD_CAP_TOKENS {
            return Err(Error::new(ErrorKind::CardOverBudget {
                id: card.id,
                tokens: card.tokens,
                cap: CARD_HARD_CAP_TOKENS,
            }));
        }
        Ok(card)
    }
}

/// The name an id already shows: a tool_id's name, a path's last segment, or the id itself.
fn short_name(id: &str) -> &str {
    if let Ok(tool_id) = ToolId::parse(id) {
        let start = tool_id.namespace().len() + 1;
        return &id[start..start + tool_id.name().len()];
    }
    if id.starts_with('/') {
        return id.rsplit('/').next().unwrap_or("");
    }
    id
}

/// The default display name: the short name, cut to 63 characters plus `…` when longer than
/// 64. The rendering shows the name only when it differs from this.
fn default_name(id: &str) -> String {
    let short = short_name(id);
    match short.char_indices().nth(MAX_NAME_CHARS) {
        Some(_) => {
            let (cut, _) = short
                .char_indices()
                .nth(MAX_NAME_CHARS - 1)
                .unwrap_or((short.len(), ' '));
            format!("{}\u{2026}", &short[..cut])
        }
        None => short.to_owned(),
    }
}

fn render(card: &ChoiceCard, description: &str, force_separator: bool) -> String {
    let mut line = String::with_capacity(card.id.len() + description.len() + 64);
    line.push_str(&card.id);
    line.push_str(" (");
    line.push_str(card.kind.as_str());
    if card.name != default_name(&card.id) {
        line.push_str(": ");
        line.push_str(&card.name);
    }
    line.push(')');
    if !description.is_empty() || force_separator {
        line.push_str(" \u{2014} ");
        line.push_str(description);
    }
    if !card.tags.is_empty() {
        line.push_str(" [");
        line.push_str(&card.tags.join(", "));
        line.push(']');
    }
    if card.cost_hint > 0.0 {
        line.push_str(" cost=");
        line.push_str(&card.cost_hint.to_string());
    }
    if card.side_effects {
        line.push_str(" side-effects");
    }
    line.push('\n');
    line
}

/// §2.1's tag rules: one line, non-empty, at most 24 characters, distinct, sorted, at most 5.
pub(crate) fn normalize_tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = tags
        .iter()
        .map(|t| {
            let line = single_line(t);
            match line.char_indices().nth(MAX_TAG_CHARS) {
                Some((cut, _)) => line[..cut].trim_end().to_owned(),
                None => line.into_owned(),
            }
        })
        .filter(|t| !t.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out.truncate(MAX_TAGS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(id: &str) -> ChoiceCardBuilder {
        ChoiceCard::builder(id, CardKind::Tool)
    }

    #[test]
    fn optional_parts_render_only_when_set() {
        let card = tool("mcp:read_file#85b56782").build().unwrap();
        assert_eq!(card.text(), "mcp:read_file#85b56782 (tool)\n");
        let card = tool("mcp:read_file#85b56782")
            .description("Read a file.")
            .cost_hint(0.25)
            .score(0.9)
            .build()
            .unwrap();
        assert_eq!(
            card.text(),
            "mcp:read_file#85b56782 (tool) — Read a file. cost=0.25\n"
        );
        let card = tool("mcp:read_file#85b56782")
            .name("read_file")
            .cost_hint(0.0)
            .side_effects(true)
            .build()
            .unwrap();
        assert_eq!(card.text(), "mcp:read_file#85b56782 (tool) side-effects\n");
        let card = ChoiceCard::builder("/github/issue", CardKind::Internal)
            .name("issue")
            .description("3 tools")
            .build()
            .unwrap();
        assert_eq!(card.text(), "/github/issue (internal) — 3 tools\n");
    }

    #[test]
    fn json_form_has_spec_fields_in_order() {
        let card = tool("a:b@1").namespace("a").score(0.5).build().unwrap();
        assert_eq!(
            serde_json::to_string(&card).unwrap(),
            r#"{"id":"a:b@1","name":"b","description":"","tags":[],"kind":"tool","namespace":"a","has_schema":false,"score":0.5,"cost_hint":0.0,"side_effects":false}"#
        );
        let card = card.with_score(None);
        assert!(!serde_json::to_string(&card).unwrap().contains("score"));
    }

    #[test]
    fn tags_are_normalised() {
        let tags = normalize_tags(&[
            "zeta".into(),
            "alpha".into(),
            "  ".into(),
            "alpha".into(),
            "a very long tag that goes on and on".into(),
            "b".into(),
            "c".into(),
            "d".into(),
        ]);
        assert_eq!(tags, ["a very long tag that goe", "alpha", "b", "c", "d"]);
    }

    #[test]
    fn long_descriptions_are_truncated_to_the_target() {
        let description = "Search issues. ".repeat(40);
        let card = tool("github:search_issues@2")
            .description(description)
            .build()
            .unwrap();
        assert!(card.tokens() <= CARD_TARGET_TOKENS, "{}", card.tokens());
        assert!(card.description().ends_with("issues."));
        let card = tool("github:search_issues@2")
            .description("word ".repeat(200))
            .build()
            .unwrap();
        assert!(card.description().ends_with('…'));
        assert!(card.tokens() <= CARD_TARGET_TOKENS);
    }

    #[test]
    fn huge_descriptions_build_quickly() {
        let card = tool("a:b@1")
            .description("word ".repeat(500_000))
            .build()
            .unwrap();
        assert!(card.tokens() <= CARD_TARGET_TOKENS);
        assert!(card.description().ends_with('…'));
    }

    #[test]
    fn over_the_hard_cap_is_an_error() {
        let name = "a_b".repeat(40);
        let id = format!("ok:{}@1", &name[..120]);
        let err = tool(&id)
            .tags(["x1", "x2", "x3", "x4", "x5"])
            .build()
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::CardOverBudget { cap: 80, .. }),
            "{err}"
        );
    }

    #[test]
    fn invalid_fields() {
        assert!(tool("").build().is_err());
        assert!(tool("a:b@1").name("n".repeat(65)).build().is_err());
        assert!(tool("a:b@1").cost_hint(-1.0).build().is_err());
        assert!(tool("a:b@1").score(f64::NAN).build().is_err());
    }
}
