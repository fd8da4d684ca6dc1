//! The context firewall and the ResultEnvelope of `tool_execute` (spec §4.2): a tool result
//! within the token budget is passed to the agent inline; a larger one is stored as
//! artifacts, and the agent gets a summary, facts about the shape of the data and the handles
//! to read it with `tool_view`.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::artifact::{json_len, json_type, ArtifactContent, ArtifactStore};
use crate::error::Error;
use crate::truncate::ELLIPSIS;

/// Counts tokens for the firewall's budgets. Any `Fn(&str) -> usize + Send + Sync` is one;
/// [`Cl100k`] (the default) counts cl100k_base tokens through `agentwire-tokens`, the
/// tokenizer the card budgets of §2.3 use.
pub trait TokenCounter: Send + Sync {
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> usize;
}

impl<F: Fn(&str) -> usize + Send + Sync> TokenCounter for F {
    fn count(&self, text: &str) -> usize {
        self(text)
    }
}

/// The cl100k_base token counter (exact, offline).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cl100k;

impl TokenCounter for Cl100k {
    fn count(&self, text: &str) -> usize {
        crate::truncate::count(text)
    }
}

/// The firewall's budgets and token counter.
#[derive(Clone)]
#[non_exhaustive]
pub struct FirewallOptions {
    /// A result of at most this many tokens is passed inline (default 1000).
    pub budget: usize,
    /// The most tokens of the summary of a stored result (default 250).
    pub summary_budget: usize,
    /// The most tokens of one `tool_view` page (default 1000).
    pub view_budget: usize,
    /// A result part longer than this many bytes is stored without being counted (default
    /// 4 MiB): counting it would cost more than it tells.
    pub max_count_bytes: usize,
    /// The token counter (default [`Cl100k`]).
    pub counter: Arc<dyn TokenCounter>,
}

impl Default for FirewallOptions {
    fn default() -> Self {
        FirewallOptions {
            budget: 1000,
            summary_budget: 250,
            view_budget: 1000,
            max_count_bytes: 4 << 20,
            counter: Arc::new(Cl100k),
        }
    }
}

impl fmt::Debug for FirewallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FirewallOptions")
            .field("budget", &self.budget)
            .field("summary_budget", &self.summary_budget)
            .field("view_budget", &self.view_budget)
            .field("max_count_bytes", &self.max_count_bytes)
            .finish_non_exhaustive()
    }
}

impl FirewallOptions {
    /// These options with another inline budget.
    #[must_use]
    pub fn budget(mut self, tokens: usize) -> Self {
        self.budget = tokens;
        self
    }

    /// These options with another summary budget.
    #[must_use]
    pub fn summary_budget(mut self, tokens: usize) -> Self {
        self.summary_budget = tokens;
        self
    }

    /// These options with another `tool_view` page budget.
    #[must_use]
    pub fn view_budget(mut self, tokens: usize) -> Self {
        self.view_budget = tokens;
        self
    }

    /// These options with another token counter, such as
    /// `|text: &str| Tokenizer::O200kBase.count(text)`.
    #[must_use]
    pub fn counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    fn count(&self, text: &str) -> Option<usize> {
        (text.len() <= self.max_count_bytes).then(|| self.counter.count(text))
    }
}

/// Where a result came from: `{"tool_id", "server", "upstream_name", "protocol": "mcp"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// The canonical tool_id (the correlation key, §1.6).
    pub tool_id: String,
    /// The upstream server, when known.
    pub server: Option<String>,
    /// The tool's name upstream.
    pub upstream_name: String,
    /// Always `mcp`.
    pub protocol: &'static str,
}

/// An artifact as the envelope lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArtifactRef {
    /// The handle for `tool_view`; `null` when the part was too large to keep.
    pub handle: Option<String>,
    /// `json`, `text` or `binary`.
    pub kind: &'static str,
    /// The JSON type of a `json` artifact (`object`, `array`), the MIME type of a binary one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
    /// Where in the result it came from: `structuredContent`, `content/0`.
    pub source: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Its size in tokens, when it was counted.
    pub tokens: Option<usize>,
}

/// What the firewall did: `{"triggered", "budget", "result_tokens", "result_bytes",
/// "summary_tokens"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirewallStats {
    /// Whether the result was over the budget and stored as artifacts.
    pub triggered: bool,
    /// The inline budget, in tokens.
    pub budget: usize,
    /// The size of the result the agent would otherwise have received, in tokens (`null`
    /// when a part was too long to count).
    pub result_tokens: Option<usize>,
    /// The same in bytes.
    pub result_bytes: usize,
    /// The size of the summary, in tokens.
    pub summary_tokens: usize,
}

/// The answer of the gateway's `tool_execute` (§4.2): `{"status", "summary", "facts",
/// "artifacts", "provenance", "firewall", "error"}`.
///
/// - `status`: `ok`, or `error` when the upstream reported `isError` or the call failed.
/// - `summary`: the result's text when it is within the budget; otherwise its beginning, cut
///   to the summary budget and ended with `…`.
/// - `facts`: short statements about a stored result's shape (`/items: array of 250`) that
///   say where to look with `tool_view`; empty when nothing was stored.
/// - `artifacts`: the stored parts, each with its handle.
/// - `provenance`, `firewall`: see [`Provenance`], [`FirewallStats`].
/// - `error`: the §3.4 error object, only when the call failed (`null` otherwise).
///
/// [`ResultEnvelope::to_json_string`] is the text the agent receives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultEnvelope {
    /// `ok` or `error`.
    pub status: &'static str,
    /// The inline result or its summary.
    pub summary: String,
    /// Facts about the stored parts.
    pub facts: Vec<String>,
    /// The stored parts.
    pub artifacts: Vec<ArtifactRef>,
    /// Where the result came from.
    pub provenance: Option<Provenance>,
    /// What the firewall did (`null` for a call that failed before a result came back).
    pub firewall: Option<FirewallStats>,
    /// The error of a failed call, serialized as its §3.4 object.
    pub error: Option<Error>,
}

impl ResultEnvelope {
    /// The envelope of a call that failed (§3.4 error inside, no result).
    pub fn failure(error: &Error, provenance: Option<Provenance>) -> Self {
        ResultEnvelope {
            status: "error",
            summary: error.message(),
            facts: Vec::new(),
            artifacts: Vec::new(),
            provenance,
            firewall: None,
            error: Some(error.clone()),
        }
    }

    /// Passes an upstream `CallToolResult` (`{"content": [...], "structuredContent"?,
    /// "isError"?}`) through the firewall: inline when its text is within
    /// `options.budget` tokens, otherwise stored in `store` part by part (text items that
    /// are JSON objects or arrays as JSON, `structuredContent` as JSON, images, audio and
    /// blobs as binary) with a summary and facts.
    ///
    /// The inline text is the result's text items joined by newlines; a result with only
    /// `structuredContent` is its compact JSON. Resource links and embedded text resources
    /// count as text (their URI and text).
    ///
    /// ```
    /// use agentwire_toolcard::{ArtifactStore, FirewallOptions, ResultEnvelope, StoreLimits};
    /// use serde_json::json;
    ///
    /// let mut store = ArtifactStore::new(StoreLimits::default());
    /// let options = FirewallOptions::default().budget(50);
    /// let small = json!({"content": [{"type": "text", "text": "3 files"}]});
    /// let envelope = ResultEnvelope::from_result(&small, None, &options, &mut store);
    /// assert_eq!((envelope.status, envelope.summary.as_str()), ("ok", "3 files"));
    /// assert!(envelope.artifacts.is_empty());
    ///
    /// let rows: Vec<_> = (0..100).map(|i| json!({"id": i, "name": format!("row {i}")})).collect();
    /// let large = json!({"content": [{"type": "text", "text": json!({"rows": rows}).to_string()}]});
    /// let envelope = ResultEnvelope::from_result(&large, None, &options, &mut store);
    /// assert!(envelope.firewall.as_ref().unwrap().triggered);
    /// assert_eq!(envelope.artifacts[0].handle.as_deref(), Some("a1"));
    /// assert_eq!(envelope.facts, ["a1: object of 1 member: rows", "a1/rows: array of 100 objects"]);
    /// ```
    pub fn from_result(
        result: &Value,
        provenance: Option<Provenance>,
        options: &FirewallOptions,
        store: &mut ArtifactStore,
    ) -> Self {
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        let parts = parts_of(result);
        let text = inline_text(&parts);
        let result_bytes = text.len();
        let result_tokens = options.count(&text);
        let status = if is_error { "error" } else { "ok" };
        let within = result_tokens.is_some_and(|t| t <= options.budget)
            && parts
                .iter()
                .all(|p| !matches!(p.content, PartContent::Binary { .. }));
        if within {
            let summary_tokens = result_tokens.unwrap_or(0);
            return ResultEnvelope {
                status,
                summary: text,
                facts: Vec::new(),
                artifacts: Vec::new(),
                provenance,
                firewall: Some(FirewallStats {
                    triggered: false,
                    budget: options.budget,
                    result_tokens,
                    result_bytes,
                    summary_tokens,
                }),
                error: None,
            };
        }
        let tool_id = provenance.as_ref().map_or("", |p| p.tool_id.as_str());
        let summary = summarize(&text, options);
        let summary_tokens = options.counter.count(&summary);
        let mut artifacts = Vec::new();
        let mut facts = Vec::new();
        for part in parts {
            let (content, media) = match part.content {
                PartContent::Text(text) => match parse_structured(&text) {
                    Some(value) => {
                        let media = json_type(&value).to_owned();
                        (ArtifactContent::Json(value), Some(media))
                    }
                    None => (ArtifactContent::Text(text), None),
                },
                PartContent::Json(value) => {
                    let media = json_type(&value).to_owned();
                    (ArtifactContent::Json(value), Some(media))
                }
                PartContent::Binary { mime_type, base64 } => (
                    ArtifactContent::Binary {
                        mime_type: mime_type.clone(),
                        base64,
                    },
                    mime_type,
                ),
            };
            let bytes = content.bytes();
            let tokens = match &content {
                ArtifactContent::Json(value) if bytes <= options.max_count_bytes => {
                    Some(options.counter.count(&value.to_string()))
                }
                ArtifactContent::Text(text) => options.count(text),
                _ => None,
            };
            let kind = content.kind();
            let stored = store.insert(tool_id, &part.source, content);
            let handle = stored.map(|a| a.handle().to_owned());
            if let Some(artifact) = stored {
                facts.extend(shape_facts(artifact.handle(), artifact.content()));
            }
            artifacts.push(ArtifactRef {
                handle,
                kind,
                media,
                source: part.source,
                bytes,
                tokens,
            });
        }
        facts.truncate(MAX_FACTS);
        ResultEnvelope {
            status,
            summary,
            facts,
            artifacts,
            provenance,
            firewall: Some(FirewallStats {
                triggered: true,
                budget: options.budget,
                result_tokens,
                result_bytes,
                summary_tokens,
            }),
            error: None,
        }
    }

    /// The envelope as compact JSON, members in the documented order: the text the agent
    /// receives.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The MCP `CallToolResult` carrying this envelope:
    /// `{"content": [{"type": "text", "text": <envelope JSON>}], "isError": <status is error>}`.
    pub fn to_call_tool_result(&self) -> Value {
        call_tool_result(self.to_json_string(), self.status == "error")
    }
}

/// A `CallToolResult` of one text item.
pub(crate) fn call_tool_result(text: String, is_error: bool) -> Value {
    let mut item = serde_json::Map::new();
    item.insert("type".into(), Value::String("text".into()));
    item.insert("text".into(), Value::String(text));
    serde_json::json!({
        "content": [Value::Object(item)],
        "isError": is_error,
    })
}

/// The most facts an envelope lists.
const MAX_FACTS: usize = 16;

struct Part {
    source: String,
    content: PartContent,
}

enum PartContent {
    Text(String),
    Json(Value),
    Binary {
        mime_type: Option<String>,
        base64: String,
    },
}

/// The parts of a `CallToolResult`, in order: each content item, then `structuredContent`
/// (only when no text item carries the result already).
fn parts_of(result: &Value) -> Vec<Part> {
    let mut parts = Vec::new();
    let items = result
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (i, item) in items.iter().enumerate() {
        let source = format!("content/{i}");
        let str_of = |key: &str| item.get(key).and_then(Value::as_str);
        let content = match str_of("type") {
            Some("text") => PartContent::Text(str_of("text").unwrap_or_default().to_owned()),
            Some("image") | Some("audio") => PartContent::Binary {
                mime_type: str_of("mimeType").map(str::to_owned),
                base64: str_of("data").unwrap_or_default().to_owned(),
            },
            Some("resource") => {
                let resource = item.get("resource");
                let field = |key: &str| resource.and_then(|r| r.get(key)).and_then(Value::as_str);
                match (field("text"), field("blob")) {
                    (Some(text), _) => PartContent::Text(text.to_owned()),
                    (None, Some(blob)) => PartContent::Binary {
                        mime_type: field("mimeType").map(str::to_owned),
                        base64: blob.to_owned(),
                    },
                    (None, None) => PartContent::Json(item.clone()),
                }
            }
            Some("resource_link") => PartContent::Text(format!(
                "resource {}{}",
                str_of("uri").unwrap_or_default(),
                str_of("name")
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            )),
            _ => PartContent::Json(item.clone()),
        };
        parts.push(Part { source, content });
    }
    let has_text = parts
        .iter()
        .any(|p| matches!(p.content, PartContent::Text(_)));
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        if !has_text {
            parts.push(Part {
                source: "structuredContent".into(),
                content: PartContent::Json(structured.clone()),
            });
        }
    }
    parts
}

/// What the agent would read inline: text items and JSON parts, joined by newlines; binary
/// parts as a one-line mention.
fn inline_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for part in parts {
        if !out.is_empty() {
            out.push('\n');
        }
        match &part.content {
            PartContent::Text(text) => out.push_str(text),
            PartContent::Json(value) => out.push_str(&value.to_string()),
            PartContent::Binary { mime_type, base64 } => out.push_str(&format!(
                "[{} of {} base64 bytes]",
                mime_type.as_deref().unwrap_or("binary data"),
                base64.len()
            )),
        }
    }
    out
}

/// A text item that is a JSON object or array, parsed.
fn parse_structured(text: &str) -> Option<Value> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
}

/// The summary of a stored result: its beginning within the summary budget, ended with `…`.
fn summarize(text: &str, options: &FirewallOptions) -> String {
    let budget = options.summary_budget.max(1);
    let head = head_within(text, budget - 1, options.counter.as_ref());
    let mut summary = head.trim_end().to_owned();
    summary.push(ELLIPSIS);
    summary
}

/// The longest prefix of `text` (on a character boundary) of at most `budget` tokens, found
/// by binary search over character offsets; only the first `budget × 32` bytes are
/// considered, so a huge text costs no more than a long one.
pub(crate) fn head_within<'a>(text: &'a str, budget: usize, counter: &dyn TokenCounter) -> &'a str {
    let mut window = text.len().min(budget.saturating_mul(32).max(64));
    while !text.is_char_boundary(window) {
        window -= 1;
    }
    let window_text = &text[..window];
    if counter.count(window_text) <= budget {
        return window_text;
    }
    let offsets: Vec<usize> = window_text.char_indices().map(|(i, _)| i).collect();
    let (mut lo, mut hi) = (0usize, offsets.len());
    // Invariant: the prefix of `lo` characters fits; the prefix of `hi + 1` does not.
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let end = offsets.get(mid).copied().unwrap_or(window);
        if counter.count(&window_text[..end]) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let end = offsets.get(lo).copied().unwrap_or(window);
    &window_text[..end]
}

/// Facts about a stored artifact's shape: its type and size, and for an object its members
/// that are arrays or objects (one level down), so the agent knows where to point
/// `tool_view`.
fn shape_facts(handle: &str, content: &ArtifactContent) -> Vec<String> {
    let mut facts = Vec::new();
    match content {
        ArtifactContent::Json(value) => {
            facts.push(format!("{handle}: {}", describe(value)));
            if let Value::Object(map) = value {
                for (key, member) in map.iter().filter(|(_, v)| v.is_array() || v.is_object()) {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    facts.push(format!(
                        "{handle}/{}: {}",
                        clip_chars(&key, 40),
                        describe(member)
                    ));
                }
            }
        }
        ArtifactContent::Text(text) => {
            let lines = text.lines().count();
            facts.push(format!(
                "{handle}: text of {} characters in {lines} line{}",
                text.chars().count(),
                if lines == 1 { "" } else { "s" }
            ));
        }
        ArtifactContent::Binary { mime_type, base64 } => facts.push(format!(
            "{handle}: {} of {} base64 characters",
            mime_type.as_deref().unwrap_or("binary data"),
            base64.len()
        )),
    }
    facts
}

/// `array of 250 objects`, `object of 3 members: id, name, tags`, `string of 12 characters`.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let first = items.first().map(json_type);
            let same = first.filter(|t| items.iter().all(|i| json_type(i) == *t));
            match same {
                Some(t) => format!("array of {} {t}{}", items.len(), plural_s(t, items.len())),
                None if items.is_empty() => "empty array".into(),
                None => format!("array of {} values", items.len()),
            }
        }
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().take(8).map(|k| clip_chars(k, 24)).collect();
            let more = if map.len() > 8 { ", …" } else { "" };
            format!(
                "object of {} member{}: {}{more}",
                map.len(),
                if map.len() == 1 { "" } else { "s" },
                keys.join(", ")
            )
        }
        Value::String(s) => format!("string of {} characters", s.chars().count()),
        other => format!("{} ({} bytes)", json_type(other), json_len(other)),
    }
}

fn plural_s(noun: &str, n: usize) -> &'static str {
    match (noun, n) {
        (_, 1) | ("null", _) => "",
        ("boolean" | "number" | "string" | "array" | "object", _) => "s",
        _ => "",
    }
}

fn clip_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}{ELLIPSIS}", &text[..cut]),
        None => text.to_owned(),
    }
}
