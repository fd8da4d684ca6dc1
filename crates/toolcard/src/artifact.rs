//! The artifact store of the context firewall, and `tool_view` (spec §4.2, gateway #34):
//! results too large for the agent's context are kept here under a handle, and read back a
//! page at a time.

use std::collections::VecDeque;
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{args_invalid, clip, Error, ErrorKind};
use crate::firewall::{head_within, TokenCounter};

/// Limits of an [`ArtifactStore`]: the oldest artifacts are evicted past either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreLimits {
    /// The most artifacts kept (default 256).
    pub max_artifacts: usize,
    /// The most bytes kept, counted as the artifacts' JSON or text size (default 64 MiB). An
    /// artifact larger than this on its own is not kept.
    pub max_bytes: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits {
            max_artifacts: 256,
            max_bytes: 64 << 20,
        }
    }
}

impl StoreLimits {
    /// These limits with another artifact count.
    #[must_use]
    pub fn max_artifacts(mut self, n: usize) -> Self {
        self.max_artifacts = n;
        self
    }

    /// These limits with another byte budget.
    #[must_use]
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }
}

/// What an artifact holds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ArtifactContent {
    /// A JSON value: `structuredContent`, or a text item that is a JSON object or array.
    Json(Value),
    /// Text.
    Text(String),
    /// Binary content (an image, audio, a blob resource) as the base64 text the upstream
    /// sent, with its MIME type.
    Binary {
        /// The MIME type, when the upstream gave one.
        mime_type: Option<String>,
        /// The base64 data.
        base64: String,
    },
}

impl ArtifactContent {
    /// `json`, `text` or `binary`.
    pub fn kind(&self) -> &'static str {
        match self {
            ArtifactContent::Json(_) => "json",
            ArtifactContent::Text(_) => "text",
            ArtifactContent::Binary { .. } => "binary",
        }
    }

    /// The size in bytes: the compact JSON text, the text, or the base64 text.
    pub fn bytes(&self) -> usize {
        match self {
            ArtifactContent::Json(value) => json_len(value),
            ArtifactContent::Text(text) => text.len(),
            ArtifactContent::Binary { base64, .. } => base64.len(),
        }
    }
}

/// One stored result part.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    handle: String,
    source: String,
    tool_id: String,
    content: ArtifactContent,
    bytes: usize,
}

impl Artifact {
    /// The handle `tool_view` takes, such as `a3`.
    pub fn handle(&self) -> &str {
        &self.handle
    }

    /// Where in the upstream result it came from: `structuredContent`, `content/0`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The tool whose result it is.
    pub fn tool_id(&self) -> &str {
        &self.tool_id
    }

    /// The content.
    pub fn content(&self) -> &ArtifactContent {
        &self.content
    }

    /// The size in bytes (see [`ArtifactContent::bytes`]).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The artifacts of one gateway session, oldest first, within [`StoreLimits`].
///
/// Handles are `a1`, `a2`, ... in the order stored, never reused in one store. An evicted
/// handle is `VIEW_FAILED` like an unknown one.
#[derive(Debug, Clone, Default)]
pub struct ArtifactStore {
    limits: StoreLimits,
    items: VecDeque<Artifact>,
    bytes: usize,
    next: u64,
}

impl ArtifactStore {
    /// An empty store with these limits.
    pub fn new(limits: StoreLimits) -> Self {
        ArtifactStore {
            limits,
            ..ArtifactStore::default()
        }
    }

    /// The limits.
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// Stores a part and returns its handle, evicting the oldest artifacts past the limits;
    /// `None` (nothing stored) when the part alone is larger than the byte limit.
    pub fn insert(
        &mut self,
        tool_id: &str,
        source: &str,
        content: ArtifactContent,
    ) -> Option<&Artifact> {
        let bytes = content.bytes();
        if bytes > self.limits.max_bytes || self.limits.max_artifacts == 0 {
            return None;
        }
        while self.items.len() >= self.limits.max_artifacts
            || self.bytes + bytes > self.limits.max_bytes
        {
            let Some(old) = self.items.pop_front() else {
                break;
            };
            self.bytes -= old.bytes;
        }
        self.next += 1;
        self.bytes += bytes;
        self.items.push_back(Artifact {
            handle: format!("a{}", self.next),
            source: source.to_owned(),
            tool_id: tool_id.to_owned(),
            content,
            bytes,
        });
        self.items.back()
    }

    /// The artifact with this handle, if it is still stored.
    pub fn get(&self, handle: &str) -> Option<&Artifact> {
        self.items.iter().find(|a| a.handle == handle)
    }

    /// The number of artifacts stored.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The bytes stored.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Forgets every artifact (handles are still never reused).
    pub fn clear(&mut self) {
        self.items.clear();
        self.bytes = 0;
    }

    /// Answers `tool_view(handle, selector)`: one page of an artifact, or of the part a JSON
    /// pointer addresses, within `budget` tokens counted by `counter`.
    pub fn view(
        &self,
        handle: &str,
        selector: &Selector,
        budget: usize,
        counter: &dyn TokenCounter,
    ) -> Result<ViewPage, Error> {
        let fail = |field: Option<&str>, pointer: Option<&str>, reason: String| {
            Error::new(ErrorKind::ViewFailed {
                handle: clip(handle),
                field: field.map(str::to_owned),
                pointer: pointer.map(str::to_owned),
                reason,
            })
        };
        let artifact = self.get(handle).ok_or_else(|| {
            let reason = if self.known(handle) {
                "the artifact was evicted from the store (it keeps the most recent results)"
            } else {
                "no artifact with this handle"
            };
            fail(None, None, reason.into())
        })?;
        let pointer = selector.pointer.as_deref().unwrap_or("");
        let target: Target<'_> = match &artifact.content {
            ArtifactContent::Json(value) => {
                let part = value.pointer(pointer).ok_or_else(|| {
                    fail(
                        Some("pointer"),
                        Some(pointer),
                        format!("the pointer {pointer:?} addresses nothing in the artifact"),
                    )
                })?;
                match part {
                    Value::String(text) => Target::Chars(text, "string"),
                    other => Target::Json(other),
                }
            }
            ArtifactContent::Text(text) if pointer.is_empty() => Target::Chars(text, "text"),
            ArtifactContent::Binary { base64, .. } if pointer.is_empty() => {
                Target::Chars(base64, "binary")
            }
            _ => {
                return Err(fail(
                    Some("pointer"),
                    Some(pointer),
                    format!(
                        "a {} artifact has no JSON structure; leave the pointer out",
                        artifact.content.kind()
                    ),
                ))
            }
        };
        let offset = selector.offset.unwrap_or(0);
        let limit = selector.limit;
        let total = target.len();
        if offset > 0 && offset >= total {
            return Err(fail(
                Some("offset"),
                None,
                format!(
                    "offset {offset} is past the end ({total} {})",
                    target.unit()
                ),
            ));
        }
        let (content, count) = target.page(offset, limit, budget.max(1), counter, pointer);
        let end = offset + count;
        Ok(ViewPage {
            handle: artifact.handle.clone(),
            pointer: pointer.to_owned(),
            kind: target.kind(),
            unit: target.unit(),
            total,
            offset,
            count,
            next_offset: (end < total).then_some(end),
            content,
        })
    }

    fn known(&self, handle: &str) -> bool {
        handle
            .strip_prefix('a')
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= 1 && n <= self.next)
    }
}

/// What `tool_view` should show: a JSON pointer into the artifact (`""`, the whole, when
/// absent), the first element (array), member (object) or character (text) of the page, and
/// how many at most. `{}` is the first page of the whole artifact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Selector {
    /// An RFC 6901 JSON pointer (`/items/3/name`).
    pub pointer: Option<String>,
    /// The index of the first element, member or character.
    pub offset: Option<usize>,
    /// The most elements, members or characters (the page ends earlier at the view budget).
    pub limit: Option<usize>,
}

impl Selector {
    /// Reads `tool_view`'s `selector` argument: an object with optional `pointer` (a string,
    /// empty or starting with `/`), `offset` (an integer ≥ 0) and `limit` (an integer ≥ 1);
    /// `null` or absent is `{}`. Anything else is `ARGS_INVALID`.
    pub fn from_json(value: Option<&Value>) -> Result<Selector, Error> {
        let map = match value {
            None | Some(Value::Null) => return Ok(Selector::default()),
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(args_invalid(
                    Some("selector"),
                    "`selector` must be an object: {\"pointer\", \"offset\", \"limit\"}",
                ))
            }
        };
        if let Some(unknown) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "pointer" | "offset" | "limit"))
        {
            return Err(args_invalid(
                Some(&format!("selector/{unknown}")),
                format!(
                    "`selector` has no member `{unknown}` (expected `pointer`, `offset`, `limit`)"
                ),
            ));
        }
        let pointer = match map.get("pointer") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) if p.is_empty() || p.starts_with('/') => Some(p.clone()),
            Some(_) => {
                return Err(args_invalid(
                    Some("selector/pointer"),
                    "`selector.pointer` must be a JSON pointer: empty, or starting with `/`",
                ))
            }
        };
        let number = |field: &str, min: u64| -> Result<Option<usize>, Error> {
            match map.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => match n.as_u64() {
                    Some(k) if k >= min => Ok(Some(usize::try_from(k).unwrap_or(usize::MAX))),
                    _ => Err(args_invalid(
                        Some(&format!("selector/{field}")),
                        format!("`selector.{field}` must be an integer ≥ {min}"),
                    )),
                },
                Some(_) => Err(args_invalid(
                    Some(&format!("selector/{field}")),
                    format!("`selector.{field}` must be an integer ≥ {min}"),
                )),
            }
        };
        Ok(Selector {
            pointer,
            offset: number("offset", 0)?,
            limit: number("limit", 1)?,
        })
    }
}

/// One page of an artifact, as `tool_view` returns it.
///
/// Serializes as `{"handle", "pointer", "type", "unit", "total", "offset", "count",
/// "next_offset", "content"}`: `type` is the JSON type at the pointer (`array`, `object`,
/// `string`, `number`, `boolean`, `null`) or `text`; `unit` what `total`, `offset` and
/// `count` count (`elements`, `members`, `characters` or `value`); `content` the page
/// (a JSON array slice, an object with the page's members, a string, or the scalar).
/// Within an array page, an element too large for the budget on its own is replaced by
/// `{"$view": <its pointer>, "type": ..., "bytes": ...}`, to be viewed by itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ViewPage {
    /// The artifact's handle.
    pub handle: String,
    /// The JSON pointer viewed (`""` for the whole artifact).
    pub pointer: String,
    /// The type of what the pointer addresses.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// What `total`, `offset` and `count` count.
    pub unit: &'static str,
    /// How many there are in all.
    pub total: usize,
    /// The first one on this page.
    pub offset: usize,
    /// How many are on this page.
    pub count: usize,
    /// The `offset` of the next page, if any.
    pub next_offset: Option<usize>,
    /// The page.
    pub content: Value,
}

impl ViewPage {
    /// The page as compact JSON, members in the documented order.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

enum Target<'a> {
    /// A JSON value other than a string.
    Json(&'a Value),
    /// Text paged by characters, and its type (`string`, `text`, `binary`).
    Chars(&'a str, &'static str),
}

impl Target<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Target::Json(value) => json_type(value),
            Target::Chars(_, kind) => kind,
        }
    }

    fn unit(&self) -> &'static str {
        match self {
            Target::Json(Value::Array(_)) => "elements",
            Target::Json(Value::Object(_)) => "members",
            Target::Chars(..) => "characters",
            Target::Json(_) => "value",
        }
    }

    fn len(&self) -> usize {
        match self {
            Target::Json(Value::Array(items)) => items.len(),
            Target::Json(Value::Object(map)) => map.len(),
            Target::Chars(s, _) => s.chars().count(),
            Target::Json(_) => 1,
        }
    }

    /// The page from `offset`: at most `limit` units, ending before the page's text would go
    /// over `budget` tokens, but always at least one unit (so paging always advances).
    fn page(
        &self,
        offset: usize,
        limit: Option<usize>,
        budget: usize,
        counter: &dyn TokenCounter,
        pointer: &str,
    ) -> (Value, usize) {
        let limit = limit.unwrap_or(usize::MAX);
        match self {
            Target::Json(Value::Array(items)) => {
                let mut page = Vec::new();
                let mut used = 2; // `[` and `]`
                for (i, item) in items.iter().enumerate().skip(offset).take(limit) {
                    let tokens = tokens_of(item, budget, counter, |v| v.to_string());
                    if used + tokens > budget {
                        if page.is_empty() {
                            page.push(stub(&format!("{pointer}/{i}"), item));
                        }
                        break;
                    }
                    used += tokens + 1;
                    page.push(item.clone());
                }
                let n = page.len();
                (Value::Array(page), n)
            }
            Target::Json(Value::Object(map)) => {
                let mut page = Map::new();
                let mut used = 2;
                for (key, value) in map.iter().skip(offset).take(limit) {
                    let tokens = tokens_of(value, budget, counter, |v| {
                        format!("{}:{v}", Value::String(key.clone()))
                    });
                    if used + tokens > budget {
                        if page.is_empty() {
                            let escaped = key.replace('~', "~0").replace('/', "~1");
                            page.insert(key.clone(), stub(&format!("{pointer}/{escaped}"), value));
                        }
                        break;
                    }
                    used += tokens + 1;
                    page.insert(key.clone(), value.clone());
                }
                let n = page.len();
                (Value::Object(page), n)
            }
            Target::Chars(s, _) => {
                let start = s.char_indices().nth(offset).map_or(s.len(), |(i, _)| i);
                let rest = &s[start..];
                let capped = match rest.char_indices().nth(limit) {
                    Some((end, _)) => &rest[..end],
                    None => rest,
                };
                let mut piece = head_within(capped, budget, counter);
                if piece.is_empty() {
                    piece = capped
                        .chars()
                        .next()
                        .map_or("", |c| &capped[..c.len_utf8()]);
                }
                (Value::String(piece.to_owned()), piece.chars().count())
            }
            Target::Json(scalar) => ((*scalar).clone(), 1),
        }
    }
}

/// The token count of a value's page text (`render`), or `budget + 1` without rendering it
/// when its JSON is longer than `max(1 MiB, 128 × budget)` bytes: no cl100k_base token is
/// longer than 128 bytes, and a part of more than a MiB is over any page budget in use.
fn tokens_of(
    value: &Value,
    budget: usize,
    counter: &dyn TokenCounter,
    render: impl FnOnce(&Value) -> String,
) -> usize {
    if json_len(value) > (1usize << 20).max(budget.saturating_mul(128)) {
        budget + 1
    } else {
        counter.count(&render(value))
    }
}

fn stub(pointer: &str, value: &Value) -> Value {
    serde_json::json!({
        "$view": pointer,
        "type": json_type(value),
        "bytes": json_len(value),
    })
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The length of a value's compact JSON text, without building it.
pub(crate) fn json_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

impl fmt::Display for ViewPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json_string())
    }
}
