//! Choosing the cheapest encoding of a JSON value, detecting it again, and decoding it.
//!
//! # The candidate encoders
//!
//! [`CANDIDATES`] is the one list of encoders `Format::Auto` chooses among, each with the
//! function that writes it: GCF at the current spec with the fewest tokens for the counting
//! tokenizer, GCX1's shape-aware value codec, TOON (feature `toon`) and compact JSON. Each
//! function gets the tool's name and the tokenizer ([`Context`]); switching a format to
//! another encoder is a change to that list's entry and nothing else.
//!
//! # The rule that keeps `auto` decodable
//!
//! A candidate's text is only ever chosen when [`detect`] names its own format from the text's
//! first line **and** [`decode`] gives back the input value (objects compared as sets of
//! members, numbers by value). A text that fails either check is dropped and the next cheapest
//! candidate is tried; when none passes (compact JSON always does, except for a float that
//! serde_json reads 1 ULP off in a build without its `float_roundtrip`), the text is kept as
//! the server wrote it. So whatever `auto` chose, `decode` (and `agentwire decode`) reads it
//! back to the same JSON.

use serde_json::Value;

use agentwire_tokens::Tokenizer;

use crate::error::{Error, ErrorKind};

/// The format tool results are written in: one format, or the cheapest per result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Format {
    /// Per result, the cheapest in tokens of every candidate (GCF, GCX1, TOON when the `toon`
    /// feature is on, compact JSON) that decodes back to the same value.
    #[default]
    Auto,
    /// GCF at the current spec, the encoding with the fewest tokens for the tokenizer.
    Gcf,
    /// GCX1, generic encoding under the tool's name.
    Gcx1,
    /// TOON (needs the `toon` feature).
    Toon,
    /// JSON: results are left exactly as the server wrote them.
    Json,
}

impl Format {
    /// The name used on command lines and in statistics: `auto`, `gcf`, `gcx1`, `toon`, `json`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Gcf => "gcf",
            Format::Gcx1 => "gcx1",
            Format::Toon => "toon",
            Format::Json => "json",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        [
            Format::Auto,
            Format::Gcf,
            Format::Gcx1,
            Format::Toon,
            Format::Json,
        ]
        .into_iter()
        .find(|f| f.name() == s)
        .ok_or_else(|| {
            Error::options(format!(
                "unknown format `{s}` (expected auto, gcf, gcx1, toon or json)"
            ))
        })
    }
}

/// One concrete encoding of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Encoding {
    /// GCF (its first line is `GCF ...`).
    Gcf,
    /// GCX1 (its first line is `GCX1 ...`).
    Gcx1,
    /// TOON (no header; neither of the others and not JSON).
    Toon,
    /// Compact JSON.
    Json,
}

impl Encoding {
    /// The lower-case name: `gcf`, `gcx1`, `toon`, `json`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Gcf => "gcf",
            Encoding::Gcx1 => "gcx1",
            Encoding::Toon => "toon",
            Encoding::Json => "json",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Encoding::Gcf => "GCF",
            Encoding::Gcx1 => "GCX1",
            Encoding::Toon => "TOON",
            Encoding::Json => "JSON",
        }
    }
}

/// What a candidate encoder is given besides the value: the tool's name (GCX1 carries it in
/// its header) and the tokenizer that counts (GCF's fewest-tokens encoder chooses, per table
/// and section, the encoding this tokenizer counts the fewest tokens for).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) tool: &'a str,
    pub(crate) tokenizer: Tokenizer,
}

/// One encoder `auto` can choose: its encoding and the function that writes a value in it.
pub(crate) struct Candidate {
    pub(crate) encoding: Encoding,
    pub(crate) encode: fn(&Value, Context<'_>) -> Result<String, String>,
}

/// The candidates in order of preference: on a tie in tokens the earlier one wins, so compact
/// JSON is kept when nothing else is cheaper.
///
/// **The one place to switch an encoder**: each entry calls its codec's best encoder for
/// tool results: GCF at the current spec with the fewest tokens for the counting tokenizer,
/// GCX1's shape-aware value codec, TOON's reference encoder.
pub(crate) const CANDIDATES: &[Candidate] = &[
    Candidate {
        encoding: Encoding::Json,
        encode: |value, _| serde_json::to_string(value).map_err(|e| e.to_string()),
    },
    Candidate {
        encoding: Encoding::Gcf,
        encode: |value, context| {
            agentwire_gcf::EncoderOptions::new()
                .fewest_tokens(context.tokenizer)
                .to_string(value)
                .map_err(|e| e.to_string())
        },
    },
    Candidate {
        encoding: Encoding::Gcx1,
        // The value codec: wrappers, sections and column types chosen from the value's shape.
        encode: |value, context| {
            agentwire_gcx1::encode_any(gcx1_tool(context.tool), value).map_err(|e| e.to_string())
        },
    },
    #[cfg(feature = "toon")]
    Candidate {
        encoding: Encoding::Toon,
        encode: |value, _| toon_format::encode_default(value).map_err(|e| e.to_string()),
    },
];

/// The GCX1 header's tool name: the tool's own when the header can carry it (no whitespace,
/// not empty), else `response`.
fn gcx1_tool(tool: &str) -> &str {
    if tool.is_empty() || tool.chars().any(|c| c.is_whitespace() || c == '\u{feff}') {
        "response"
    } else {
        tool
    }
}

/// The encoding of `text`, told from its first line: `GCF` headers are GCF, `GCX` headers
/// GCX1; text starting with `{`, `"` or a `[` that is not a TOON array header (`[3]:`,
/// `[2]{a,b}:`) is JSON; anything else is TOON (TOON has no header). A UTF-8 byte order mark
/// and leading whitespace before JSON are skipped.
///
/// ```
/// use agentwire_mcp::{detect, Encoding};
///
/// assert_eq!(detect("GCF profile=generic\nid=1\n"), Encoding::Gcf);
/// assert_eq!(detect("GCX1 tool=t fields=id\n1\n"), Encoding::Gcx1);
/// assert_eq!(detect("[{\"id\":1}]"), Encoding::Json);
/// assert_eq!(detect("[1]{id}:\n  1"), Encoding::Toon);
/// assert_eq!(detect("id: 1"), Encoding::Toon);
/// ```
pub fn detect(text: &str) -> Encoding {
    let line = text.split('\n').next().unwrap_or_default();
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    if line.starts_with("GCF ") || line.trim_end() == "GCF" {
        return Encoding::Gcf;
    }
    if line.starts_with("GCX") {
        return Encoding::Gcx1;
    }
    let trimmed = line.trim_start();
    match trimmed.as_bytes().first() {
        Some(b'{' | b'"') => Encoding::Json,
        Some(b'[') if !is_toon_array_header(trimmed.as_bytes()) => Encoding::Json,
        _ => Encoding::Toon,
    }
}

/// `[N]`, `[N|]` or `[N<TAB>]`, optionally `{fields}`, then `:`.
fn is_toon_array_header(line: &[u8]) -> bool {
    let rest = &line[1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    let mut rest = &rest[digits..];
    if let Some(r) = rest.strip_prefix(b"|").or_else(|| rest.strip_prefix(b"\t")) {
        rest = r;
    }
    let Some(mut rest) = rest.strip_prefix(b"]") else {
        return false;
    };
    if rest.first() == Some(&b'{') {
        match rest.iter().position(|&b| b == b'}') {
            Some(end) => rest = &rest[end + 1..],
            None => return false,
        }
    }
    rest.first() == Some(&b':')
}

/// Line and column of a codec error, whichever type its accessors return (`usize` with 0 for
/// none, or `Option<u64>`), so that this crate follows the codecs through their migration to
/// the shared error shape.
trait Position {
    fn position(self) -> Option<u64>;
}

impl Position for usize {
    fn position(self) -> Option<u64> {
        (self > 0).then_some(self as u64)
    }
}

impl Position for Option<u64> {
    fn position(self) -> Option<u64> {
        self
    }
}

fn decode_error(
    encoding: Encoding,
    message: String,
    line: Option<u64>,
    column: Option<u64>,
) -> Error {
    Error::at(
        ErrorKind::Decode {
            format: encoding.title(),
            message,
        },
        line,
        column,
    )
}

/// Decodes `text` in the encoding [`detect`] names: GCF (either profile), GCX1 (the generic
/// fallback), TOON (with the `toon` feature) or JSON.
///
/// ```
/// use agentwire_mcp::{decode, Encoding};
/// use serde_json::json;
///
/// let (encoding, value) = decode("GCF profile=generic\nid=1\nname=Ada\n")?;
/// assert_eq!((encoding, value), (Encoding::Gcf, json!({"id": 1, "name": "Ada"})));
/// # Ok::<(), agentwire_mcp::Error>(())
/// ```
pub fn decode(text: &str) -> Result<(Encoding, Value), Error> {
    let encoding = detect(text);
    let value = match encoding {
        Encoding::Gcf => {
            let failed = |e: agentwire_gcf::Error| {
                let (line, column) = (e.line().position(), e.column().position());
                decode_error(encoding, e.to_string(), line, column)
            };
            match agentwire_gcf::profile(text).map_err(failed)? {
                agentwire_gcf::Profile::Graph => {
                    let graph = agentwire_gcf::decode_graph(text).map_err(failed)?;
                    serde_json::to_value(&graph)
                        .map_err(|e| decode_error(encoding, e.to_string(), None, None))?
                }
                _ => agentwire_gcf::from_str::<Value>(text).map_err(failed)?,
            }
        }
        Encoding::Gcx1 => agentwire_gcx1::decode_any(text).map_err(|e| {
            let (line, column) = (e.line().position(), e.column().position());
            decode_error(encoding, e.to_string(), line, column)
        })?,
        Encoding::Json => serde_json::from_str(text).map_err(|e| {
            decode_error(
                encoding,
                e.to_string(),
                Some(e.line() as u64),
                Some(e.column() as u64),
            )
        })?,
        Encoding::Toon => decode_toon(text)?,
    };
    Ok((encoding, value))
}

#[cfg(feature = "toon")]
fn decode_toon(text: &str) -> Result<Value, Error> {
    toon_format::decode_default(text)
        .map_err(|e| decode_error(Encoding::Toon, e.to_string(), None, None))
}

#[cfg(not(feature = "toon"))]
fn decode_toon(_: &str) -> Result<Value, Error> {
    Err(decode_error(
        Encoding::Toon,
        "this build reads TOON only with the `toon` feature of agentwire-mcp".into(),
        None,
        None,
    ))
}

/// Options of a [`Reencoder`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncodeOptions {
    /// The format to write (default [`Format::Auto`]).
    pub format: Format,
    /// Replace a result only when that saves at least this many tokens (default 32; a result
    /// is never replaced by one that is not at least one token cheaper).
    pub min_tokens: usize,
    /// The tokenizer that counts (default `o200k_base`, the encoding of current models).
    pub tokenizer: Tokenizer,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            format: Format::Auto,
            min_tokens: 32,
            tokenizer: Tokenizer::O200kBase,
        }
    }
}

impl EncodeOptions {
    /// The default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`format`](Self::format).
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Sets [`min_tokens`](Self::min_tokens).
    pub fn min_tokens(mut self, min_tokens: usize) -> Self {
        self.min_tokens = min_tokens;
        self
    }

    /// Sets [`tokenizer`](Self::tokenizer).
    pub fn tokenizer(mut self, tokenizer: Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }
}

/// An encoding of a value: which, the text, and its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Choice {
    /// The encoding.
    pub encoding: Encoding,
    /// The encoded text.
    pub text: String,
    /// Its tokens, counted with the options' tokenizer.
    pub tokens: usize,
}

/// What [`Reencoder::reencode_text`] did with one text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The text is not a JSON object or array: left alone, not counted.
    NotJson,
    /// The text is JSON but stays as it is (the format is `json`, or no encoding saves
    /// `min_tokens`).
    Kept {
        /// Its tokens.
        tokens: usize,
    },
    /// The text is replaced.
    Replaced {
        /// Tokens of the original text.
        before: usize,
        /// The replacement.
        choice: Choice,
    },
}

impl Outcome {
    /// Tokens before and after, `(0, 0)` for a text that is not JSON.
    pub fn tokens(&self) -> (usize, usize) {
        match self {
            Outcome::NotJson => (0, 0),
            Outcome::Kept { tokens } => (*tokens, *tokens),
            Outcome::Replaced { before, choice } => (*before, choice.tokens),
        }
    }
}

/// Re-encodes JSON texts into the cheapest format.
///
/// ```
/// use agentwire_mcp::{EncodeOptions, Encoding, Format, Outcome, Reencoder};
///
/// let reencoder = Reencoder::new(EncodeOptions::new().format(Format::Gcf).min_tokens(1))?;
/// let rows: Vec<_> = (0..20)
///     .map(|i| serde_json::json!({"id": i, "name": format!("entity {i}"), "kind": "person"}))
///     .collect();
/// let pretty = serde_json::to_string_pretty(&rows).unwrap();
/// match reencoder.reencode_text(&pretty, "list_people") {
///     Outcome::Replaced { before, choice } => {
///         assert_eq!(choice.encoding, Encoding::Gcf);
///         assert!(choice.tokens < before);
///         assert_eq!(agentwire_mcp::decode(&choice.text)?.1, serde_json::json!(rows));
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), agentwire_mcp::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Reencoder {
    options: EncodeOptions,
    candidates: Vec<&'static Candidate>,
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.encoding.name())
    }
}

impl Reencoder {
    /// A re-encoder for `options`; fails on [`Format::Toon`] without the `toon` feature.
    pub fn new(options: EncodeOptions) -> Result<Self, Error> {
        let wanted = |encoding: Encoding| match options.format {
            Format::Auto => true,
            Format::Gcf => encoding == Encoding::Gcf,
            Format::Gcx1 => encoding == Encoding::Gcx1,
            Format::Toon => encoding == Encoding::Toon,
            Format::Json => false,
        };
        let candidates: Vec<_> = CANDIDATES.iter().filter(|c| wanted(c.encoding)).collect();
        if options.format == Format::Toon && candidates.is_empty() {
            return Err(Error::options(
                "the TOON format needs the `toon` feature of agentwire-mcp",
            ));
        }
        Ok(Reencoder {
            options,
            candidates,
        })
    }

    /// The options.
    pub fn options(&self) -> &EncodeOptions {
        &self.options
    }

    /// The cheapest encoding of `value` the format allows that reads back to `value` (see the
    /// rule in the crate docs), whatever it saves; compact JSON for [`Format::Json`]. `tool`
    /// names the GCX1 section. Fails when no allowed encoding reads the value back: the one
    /// format asked for cannot encode it, or (without serde_json's `float_roundtrip`) a float
    /// does not survive any of them.
    pub fn choose(&self, value: &Value, tool: &str) -> Result<Choice, Error> {
        if self.options.format == Format::Json {
            let text = serde_json::to_string(value).map_err(|e| {
                Error::new(ErrorKind::Encode {
                    format: "json",
                    message: e.to_string(),
                })
            })?;
            let tokens = self.options.tokenizer.count(&text);
            return Ok(Choice {
                encoding: Encoding::Json,
                text,
                tokens,
            });
        }
        self.cheapest(value, tool, None).0
    }

    /// [`choose`](Self::choose) for the formats other than `json`, and the tokens of
    /// `original` (the text as the server wrote it), counted with the candidates.
    fn cheapest(
        &self,
        value: &Value,
        tool: &str,
        original: Option<&str>,
    ) -> (Result<Choice, Error>, Option<usize>) {
        let mut texts = Vec::with_capacity(self.candidates.len());
        let mut last_error = None;
        let context = Context {
            tool,
            tokenizer: self.options.tokenizer,
        };
        for candidate in &self.candidates {
            match (candidate.encode)(value, context) {
                Ok(text) => texts.push((candidate.encoding, text)),
                Err(message) => {
                    last_error = Some(Error::new(ErrorKind::Encode {
                        format: candidate.encoding.name(),
                        message,
                    }));
                }
            }
        }
        let mut all: Vec<&str> = texts.iter().map(|(_, text)| text.as_str()).collect();
        all.extend(original);
        let mut tokens = self.count_all(&all);
        let original_tokens = original.and_then(|_| tokens.pop());
        let mut encoded: Vec<Choice> = texts
            .into_iter()
            .zip(tokens)
            .map(|((encoding, text), tokens)| Choice {
                encoding,
                text,
                tokens,
            })
            .collect();
        // Cheapest first; a stable sort keeps the candidates' order on ties.
        encoded.sort_by_key(|choice| choice.tokens);
        for choice in encoded {
            match reads_back(&choice, value) {
                Ok(()) => return (Ok(choice), original_tokens),
                Err(error) => last_error = Some(error),
            }
        }
        let error = last_error.unwrap_or_else(|| Error::options("no candidate encoder"));
        (Err(error), original_tokens)
    }

    /// The tokens of each text. Counting is most of the cost of choosing (a 100 KB text takes
    /// milliseconds), so large texts are counted on threads of their own, and a text equal to
    /// an earlier one (a server that wrote compact JSON) takes its count.
    fn count_all(&self, texts: &[&str]) -> Vec<usize> {
        const PARALLEL_FROM: usize = 16 << 10;
        let tokenizer = self.options.tokenizer;
        let first = |i: usize| texts[..i].iter().position(|t| *t == texts[i]);
        let unique: Vec<usize> = (0..texts.len()).filter(|&i| first(i).is_none()).collect();
        let counted: Vec<usize> = if unique.len() < 2
            || unique.iter().all(|&i| texts[i].len() < PARALLEL_FROM)
        {
            unique.iter().map(|&i| tokenizer.count(texts[i])).collect()
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = unique
                    .iter()
                    .map(|&i| scope.spawn(move || tokenizer.count(texts[i])))
                    .collect();
                handles
                    .into_iter()
                    .zip(&unique)
                    .map(|(handle, &i)| handle.join().unwrap_or_else(|_| tokenizer.count(texts[i])))
                    .collect()
            })
        };
        (0..texts.len())
            .map(|i| {
                let source = first(i).unwrap_or(i);
                counted[unique.iter().position(|&u| u == source).unwrap_or(0)]
            })
            .collect()
    }

    /// `text` as it should reach the agent: replaced when it is a JSON object or array and the
    /// cheapest encoding saves at least `min_tokens` tokens, otherwise kept.
    pub fn reencode_text(&self, text: &str, tool: &str) -> Outcome {
        let Some(value) = json_container(text) else {
            return Outcome::NotJson;
        };
        let count = || self.options.tokenizer.count(text);
        if self.options.format == Format::Json {
            return Outcome::Kept { tokens: count() };
        }
        // A token is at least one byte: a text shorter than `min_tokens` bytes cannot save
        // that many, so it is not worth counting the candidates.
        let floor = self.options.min_tokens.max(1);
        if text.len() < floor {
            return Outcome::Kept { tokens: count() };
        }
        if !floats_read_exactly(text, &value) {
            // serde_json read a float of this text 1 ULP off (a build without its
            // `float_roundtrip`): any encoding of the value would change that number.
            return Outcome::Kept { tokens: count() };
        }
        let (choice, before) = self.cheapest(&value, tool, Some(text));
        let before = before.unwrap_or_else(count);
        match choice {
            Ok(choice) if choice.tokens + floor <= before => Outcome::Replaced { before, choice },
            _ => Outcome::Kept { tokens: before },
        }
    }
}

/// The value of `text` when it is a JSON object or array (whitespace around it allowed).
fn json_container(text: &str) -> Option<Value> {
    let start = text.trim_start().as_bytes().first()?;
    if !matches!(start, b'{' | b'[') {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => Some(value),
        _ => None,
    }
}

/// Whether every float of `value` is the correctly rounded reading of its number in `text`
/// (the JSON `value` was parsed from): the floats of both, as sets of bit patterns, agree.
/// Integers that fit 64 bits are read exactly and are not looked at.
fn floats_read_exactly(text: &str, value: &Value) -> bool {
    fn walk(value: &Value, out: &mut Vec<u64>) {
        match value {
            Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
                out.push(n.as_f64().unwrap_or(f64::NAN).to_bits());
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(members) => members.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut parsed = Vec::new();
    walk(value, &mut parsed);
    if parsed.is_empty() {
        return true;
    }
    let bytes = text.as_bytes();
    let mut exact = Vec::with_capacity(parsed.len());
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
        } else if b == b'"' {
            in_string = true;
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
            {
                i += 1;
            }
            let lexeme = &text[start..i];
            if lexeme.parse::<i64>().is_err() && lexeme.parse::<u64>().is_err() {
                // The standard library reads decimals correctly rounded.
                exact.push(lexeme.parse::<f64>().map_or(u64::MAX, f64::to_bits));
            }
        } else {
            i += 1;
        }
    }
    parsed.sort_unstable();
    exact.sort_unstable();
    parsed == exact
}

/// Checks the rule: `detect` names the choice's own encoding and `decode` gives `value` back.
fn reads_back(choice: &Choice, value: &Value) -> Result<(), Error> {
    // Compact JSON is checked too: without serde_json's `float_roundtrip` in the build, a float
    // with 17 significant digits may not read back to the same `f64`.
    let mismatch = |message: String| {
        Err(Error::new(ErrorKind::Encode {
            format: choice.encoding.name(),
            message,
        }))
    };
    let detected = detect(&choice.text);
    if detected != choice.encoding {
        return mismatch(format!(
            "the output reads as {} by its first line",
            detected.title()
        ));
    }
    let (_, back) = decode(&choice.text)?;
    if same_json(value, &back) {
        Ok(())
    } else {
        mismatch("the output does not decode to the input".into())
    }
}

/// Whether two values are the same JSON: objects as sets of members, arrays in order, numbers
/// by value (`1` and `1.0` agree; integers exactly, others as `f64`).
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| same_json(value, other)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Number(x), Value::Number(y)) => {
            if x == y {
                return true;
            }
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x.as_f64().is_some() && x.as_f64() == y.as_f64(),
            }
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn people(n: usize) -> Value {
        json!((0..n)
            .map(|i| json!({"id": i, "name": format!("person {i}"), "active": i % 2 == 0}))
            .collect::<Vec<_>>())
    }

    #[test]
    fn detection_agrees_with_every_candidate_it_may_choose() {
        let reencoder = Reencoder::new(EncodeOptions::new()).unwrap();
        for value in [
            people(10),
            json!({"a": 1, "b": [1, 2, 3], "c": {"d": "x"}}),
            json!([1, "two", null, true]),
            json!({"GCXfoo": 1}),
            json!({"GCF": 1}),
            json!([]),
            json!({}),
        ] {
            for candidate in CANDIDATES {
                let context = Context {
                    tool: "t",
                    tokenizer: Tokenizer::O200kBase,
                };
                let Ok(text) = (candidate.encode)(&value, context) else {
                    continue;
                };
                let choice = Choice {
                    encoding: candidate.encoding,
                    text,
                    tokens: 0,
                };
                // Either the candidate reads back, or `choose` must not pick it.
                if reads_back(&choice, &value).is_err() {
                    let chosen = reencoder.choose(&value, "t").unwrap();
                    assert_ne!(chosen.encoding, candidate.encoding, "{value}");
                }
            }
            let chosen = reencoder.choose(&value, "t").unwrap();
            let (encoding, back) = decode(&chosen.text).unwrap();
            assert_eq!(encoding, chosen.encoding);
            assert!(same_json(&value, &back), "{value} -> {}", chosen.text);
        }
    }

    #[test]
    fn gcf_is_the_current_specs_fewest_tokens_encoding_for_the_chosen_tokenizer() {
        let value = json!({"orders": (0..12).map(|i| json!({
            "customer": {"name": format!("c{i}"), "tier": if i % 3 == 0 { "gold" } else { "free" }},
            "env": "prod", "id": i, "tags": if i % 2 == 0 { json!(["a"]) } else { json!([]) },
        })).collect::<Vec<_>>()});
        let mut tokenizers = vec![Tokenizer::O200kBase];
        if cfg!(feature = "cl100k") {
            tokenizers.push(Tokenizer::Cl100kBase);
        }
        for tokenizer in tokenizers {
            let reencoder = Reencoder::new(
                EncodeOptions::new()
                    .format(Format::Gcf)
                    .tokenizer(tokenizer),
            )
            .unwrap();
            let chosen = reencoder.choose(&value, "orders").unwrap();
            let fewest = agentwire_gcf::EncoderOptions::new()
                .fewest_tokens(tokenizer)
                .to_string(&value)
                .unwrap();
            assert_eq!(chosen.text, fewest);
            let canonical = agentwire_gcf::to_string(&value).unwrap();
            assert!(chosen.tokens <= tokenizer.count(&canonical));
        }
    }

    #[test]
    fn auto_picks_the_fewest_tokens() {
        let reencoder = Reencoder::new(EncodeOptions::new()).unwrap();
        let value = people(30);
        let chosen = reencoder.choose(&value, "people").unwrap();
        for candidate in CANDIDATES {
            let context = Context {
                tool: "people",
                tokenizer: Tokenizer::O200kBase,
            };
            let text = (candidate.encode)(&value, context).unwrap();
            assert!(chosen.tokens <= Tokenizer::O200kBase.count(&text));
        }
        assert_ne!(chosen.encoding, Encoding::Json, "{}", chosen.text);
    }

    #[test]
    fn keeps_texts_that_are_not_json_or_do_not_save_enough() {
        let reencoder = Reencoder::new(EncodeOptions::new()).unwrap();
        assert_eq!(reencoder.reencode_text("hello", "t"), Outcome::NotJson);
        assert_eq!(
            reencoder.reencode_text("\"a string\"", "t"),
            Outcome::NotJson
        );
        assert_eq!(reencoder.reencode_text("42", "t"), Outcome::NotJson);
        assert_eq!(reencoder.reencode_text("{not json", "t"), Outcome::NotJson);
        assert!(matches!(
            reencoder.reencode_text("{\"a\":1}", "t"),
            Outcome::Kept { .. }
        ));
        let big = serde_json::to_string_pretty(&people(40)).unwrap();
        let Outcome::Replaced { before, choice } = reencoder.reencode_text(&big, "t") else {
            panic!("a pretty array of 40 records is re-encoded");
        };
        assert!(choice.tokens + 32 <= before);
        let json = Reencoder::new(EncodeOptions::new().format(Format::Json)).unwrap();
        assert!(matches!(
            json.reencode_text(&big, "t"),
            Outcome::Kept { .. }
        ));
        let never = Reencoder::new(EncodeOptions::new().min_tokens(1_000_000)).unwrap();
        assert!(matches!(
            never.reencode_text(&big, "t"),
            Outcome::Kept { .. }
        ));
    }

    #[test]
    fn one_format_is_used_when_asked_for() {
        let value = people(5);
        for (format, encoding) in [(Format::Gcf, Encoding::Gcf), (Format::Gcx1, Encoding::Gcx1)] {
            let reencoder = Reencoder::new(EncodeOptions::new().format(format)).unwrap();
            assert_eq!(reencoder.choose(&value, "t").unwrap().encoding, encoding);
        }
        let gcx1 = Reencoder::new(EncodeOptions::new().format(Format::Gcx1)).unwrap();
        let text = gcx1.choose(&value, "my tool").unwrap().text;
        assert!(text.starts_with("GCX1 tool=response "), "{text}");
    }

    #[cfg(not(feature = "toon"))]
    #[test]
    fn toon_needs_its_feature() {
        let err = Reencoder::new(EncodeOptions::new().format(Format::Toon)).unwrap_err();
        assert_eq!(err.code(), "invalid_options");
    }

    #[test]
    fn counts_large_texts_in_parallel_and_equal_texts_once() {
        let reencoder = Reencoder::new(EncodeOptions::new()).unwrap();
        let big = serde_json::to_string(&people(600)).unwrap();
        let other = serde_json::to_string_pretty(&people(300)).unwrap();
        assert!(big.len() > 16 << 10);
        let texts = [big.as_str(), "small", other.as_str(), big.as_str()];
        let expected: Vec<usize> = texts
            .iter()
            .map(|t| Tokenizer::O200kBase.count(t))
            .collect();
        assert_eq!(reencoder.count_all(&texts), expected);
        assert_eq!(reencoder.count_all(&["a b", "a b"]), [2, 2]);
        assert!(reencoder.count_all(&[]).is_empty());
    }

    #[test]
    fn floats_are_checked_against_their_text() {
        let text = r#"{"a": [1.5, -2e3, 7, "3.25", 18446744073709551615], "b": {"c": 0.1}}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        assert!(floats_read_exactly(text, &value));
        // A float read 1 ULP off, as serde_json without `float_roundtrip` may.
        let mut off = value.clone();
        off["b"]["c"] = json!(f64::from_bits(0.1f64.to_bits() + 1));
        assert!(!floats_read_exactly(text, &off));
    }

    #[test]
    fn same_json_compares_numbers_by_value_and_members_as_sets() {
        assert!(same_json(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1.0})
        ));
        assert!(!same_json(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same_json(&json!([1, 2]), &json!([2, 1])));
        assert!(!same_json(&json!(1), &json!("1")));
        assert!(same_json(&json!(u64::MAX), &json!(u64::MAX)));
        assert!(!same_json(&json!(u64::MAX), &json!(u64::MAX - 1)));
    }

    #[test]
    fn decode_errors_carry_positions() {
        let err = decode("GCX1 tool=t fields=a,b\n1\t2\t3\n").unwrap_err();
        assert_eq!(err.code(), "decode_failed");
        assert_eq!(err.line(), Some(2));
        let err = decode("{\"a\": }").unwrap_err();
        assert_eq!((err.line(), err.column()), (Some(1), Some(7)));
    }
}
