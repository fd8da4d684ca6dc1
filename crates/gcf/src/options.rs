//! Encoder and decoder configuration: [`EncoderOptions`], [`DecoderOptions`], the decoder's
//! [`Limits`], and the [`Spec`] version a payload is read by.

/// The version of the GCF specification a payload is read by.
///
/// Every version from v3.1 on is *additive* on paper, but a few byte sequences read
/// differently before and after a change: a tabular field literally named `"a>b"` is a key in
/// v3.1 and a flattened path (`{"a":{"b":…}}`) from v3.2 on; `-0` is negative zero in v3.1 and
/// the integer zero from v3.5; an integer beyond the signed 64-bit range is a number in v3.1 and
/// `out_of_range` from v3.5.3. [`DecoderOptions::spec`] chooses; the default is
/// [`Spec::V3_6`], the current specification, which reads everything any version from v3.1 on
/// writes except where the two disagree (docs/gcf.md, "Versions", has the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum Spec {
    /// GCF v3.1 (tag v3.1.0, the 157-fixture suite): no flattening, keyed maps, constant
    /// columns, value-grouping or identity columns; `-0` is negative zero; integers of any size.
    V3_1,
    /// The current specification: v3.5.3 (flattened `a>b` columns, keyed maps `[N:]`, the
    /// generic delta's identity column, the int64 numeric domain, per-group graph trailers)
    /// plus v3.6's constant columns (`name=value` in a field list) and value-grouping
    /// (`group=`), as gcf-python 2.8.0 and the `gcf` crate 3.1.0 write them.
    #[default]
    V3_6,
}

impl Spec {
    /// The newest version this crate implements, the default.
    pub const LATEST: Spec = Spec::V3_6;

    /// The version's name: `3.1` or `3.6`.
    pub fn name(self) -> &'static str {
        match self {
            Spec::V3_1 => "3.1",
            Spec::V3_6 => "3.6",
        }
    }

    /// Whether this version reads the additions after v3.1 (flattening and the rest).
    #[inline]
    pub(crate) fn current(self) -> bool {
        self != Spec::V3_1
    }
}

impl std::fmt::Display for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Spec {
    type Err = crate::Error;

    /// `3.1` (or `v3.1`, `3.1.0`) and `3.6` (or `v3.6`, `3.5.3`, `current`, `latest`).
    fn from_str(s: &str) -> crate::Result<Spec> {
        let s = s.strip_prefix('v').unwrap_or(s);
        match s {
            "3.1" | "3.1.0" | "3.1.1" => Ok(Spec::V3_1),
            "3.6" | "3.6.0" | "3.5" | "3.5.3" | "current" | "latest" => Ok(Spec::V3_6),
            other => Err(crate::Error::new(
                crate::ErrorKind::UnsupportedValue,
                format!("unknown GCF spec version {other:?} (expected 3.1 or 3.6)"),
            )),
        }
    }
}

/// Resource limits a decoder enforces (spec §12). Past any of them decoding fails with
/// [`ErrorKind::LimitExceeded`], never with a crash, a stack overflow or a truncated value.
///
/// The defaults are well above the spec's minimums (32 levels, 10 000 elements, 64 KiB lines,
/// 1 000 fields) so ordinary payloads never meet them, while keeping memory and stack bounded;
/// [`Limits::SPEC_MINIMUM`] is exactly the minimums, for the most hostile environments.
///
/// | limit | default | spec minimum |
/// |---|---|---|
/// | [`max_depth`](Limits::max_depth) | 128 | 32 |
/// | [`max_elements`](Limits::max_elements) | 1 000 000 per container | 10 000 |
/// | [`max_line_length`](Limits::max_line_length) | 1 MiB | 64 KiB |
/// | [`max_fields`](Limits::max_fields) | 10 000 | 1 000 |
/// | [`max_input_size`](Limits::max_input_size) | unlimited | implementation-defined |
///
/// Declared counts are only compared with these limits, never used to reserve memory.
///
/// [`ErrorKind::LimitExceeded`]: crate::ErrorKind::LimitExceeded
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nesting depth of objects and arrays (the root container is level 1). Each level costs
    /// some stack; above a few thousand, decode on a thread with a larger stack.
    pub max_depth: usize,
    /// Items per array and members per object, declared or actual.
    pub max_elements: usize,
    /// Bytes per line, excluding the line terminator.
    pub max_line_length: usize,
    /// Fields per tabular field declaration or inline object schema.
    pub max_fields: usize,
    /// Bytes of the whole input; `None` for no limit. [`DecoderOptions::from_reader`] stops
    /// reading past it.
    pub max_input_size: Option<usize>,
}

impl Limits {
    /// The defaults described on [`Limits`].
    pub const DEFAULT: Limits = Limits {
        max_depth: 128,
        max_elements: 1_000_000,
        max_line_length: 1 << 20,
        max_fields: 10_000,
        max_input_size: None,
    };

    /// Exactly the minimums of spec §12: 32 levels, 10 000 elements, 64 KiB lines, 1 000
    /// fields.
    pub const SPEC_MINIMUM: Limits = Limits {
        max_depth: 32,
        max_elements: 10_000,
        max_line_length: 65_536,
        max_fields: 1_000,
        max_input_size: None,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Counts the tokens of a text for [`EncoderOptions::fewest_tokens`]: any closure
/// `Fn(&str) -> usize`, or (with the `tokens` feature) an `agentwire_tokens::Tokenizer`.
///
/// The encoder counts each line of a candidate encoding, with its line feed, on its own and
/// adds the counts up: exact for byte-pair tokenizers whose pre-tokenizer never joins two
/// lines, as cl100k_base and o200k_base (a line feed ends every piece it is in).
pub trait TokenCounter: Send + Sync {
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> usize;
}

impl<F: Fn(&str) -> usize + Send + Sync> TokenCounter for F {
    fn count(&self, text: &str) -> usize {
        self(text)
    }
}

#[cfg(feature = "tokens")]
impl TokenCounter for agentwire_tokens::Tokenizer {
    fn count(&self, text: &str) -> usize {
        agentwire_tokens::Tokenizer::count(*self, text)
    }
}

/// The token counter of a fewest-tokens encoder (compared by identity).
#[derive(Clone)]
pub(crate) struct Counter(pub(crate) std::sync::Arc<dyn TokenCounter>);

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCounter")
    }
}

impl PartialEq for Counter {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Counter {}

/// The two columns of a value-grouped root table (spec v3.6 §7.4.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grouping {
    pub(crate) key: String,
    pub(crate) group: String,
}

/// How values are encoded; build with chained setters, then encode with
/// [`to_string`](EncoderOptions::to_string), [`to_string_value`](EncoderOptions::to_string_value)
/// or [`to_writer`](EncoderOptions::to_writer).
///
/// The defaults write the current specification ([`Spec::V3_6`]) canonically: the bytes of
/// the upstream v3.5.3 fixtures, and of gcf-python 2.8.0 and the `gcf` crate 3.1.0 wherever
/// they follow the spec. [`spec(Spec::V3_1)`](EncoderOptions::spec) writes v3.1 exactly;
/// [`fewest_tokens`](EncoderOptions::fewest_tokens) chooses, per table and section, among the
/// encodings the current grammar allows the one a tokenizer counts the fewest tokens for.
///
/// ```
/// use agentwire_gcf::{EncoderOptions, Spec};
/// use serde_json::json;
///
/// let orders = json!({"orders": [
///     {"customer": {"name": "Ann", "tier": "gold"}, "env": "prod", "id": 1},
///     {"customer": {"name": "Bo", "tier": "free"}, "env": "prod", "id": 2},
/// ]});
/// // The current spec: nested objects flattened into path columns, a constant column.
/// assert_eq!(
///     EncoderOptions::new().to_string(&orders)?,
///     concat!(
///         "GCF profile=generic\n",
///         "## orders [2]{\"customer>name\",\"customer>tier\",env=prod,id}\n",
///         "Ann|gold|1\n",
///         "Bo|free|2\n",
///     )
/// );
/// // v3.1: an attachment per nested object.
/// assert_eq!(
///     EncoderOptions::new().spec(Spec::V3_1).to_string(&orders)?,
///     concat!(
///         "GCF profile=generic\n",
///         "## orders [2]{customer,env,id}\n",
///         "@0 ^|prod|1\n",
///         ".customer {}\n",
///         "    name=Ann\n",
///         "    tier=gold\n",
///         "@1 ^|prod|2\n",
///         ".customer {}\n",
///         "    name=Bo\n",
///         "    tier=free\n",
///     )
/// );
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncoderOptions {
    pub(crate) spec: Spec,
    pub(crate) inline_schemas: bool,
    pub(crate) shared_schemas: bool,
    pub(crate) flatten: bool,
    pub(crate) keyed_maps: bool,
    pub(crate) constant_columns: bool,
    pub(crate) grouping: Option<Grouping>,
    pub(crate) fewest: Option<Counter>,
    pub(crate) max_depth: usize,
}

impl EncoderOptions {
    /// The defaults: the current spec, with every one of its encodings on (flattening, keyed
    /// maps, constant columns, inline object schemas, shared array schemas), no value
    /// grouping, no token counting, nesting up to 128 levels.
    pub fn new() -> Self {
        EncoderOptions {
            spec: Spec::LATEST,
            inline_schemas: true,
            shared_schemas: true,
            flatten: true,
            keyed_maps: true,
            constant_columns: true,
            grouping: None,
            fewest: None,
            max_depth: Limits::DEFAULT.max_depth,
        }
    }

    /// The specification version to write (default [`Spec::V3_6`], the current one). With
    /// [`Spec::V3_1`], the encodings added after v3.1 (flattening, keyed maps, constant
    /// columns, value grouping, fewest tokens) are off whatever their setting.
    #[must_use]
    pub fn spec(mut self, spec: Spec) -> Self {
        self.spec = spec;
        self
    }

    /// The version written.
    pub fn get_spec(&self) -> Spec {
        self.spec
    }

    /// Whether flat objects of at least three scalar members that repeat with the same keys
    /// down a tabular column become positional `^{fields}` bodies (spec §7.4.5.1), where
    /// they are not flattened. On by default; off gives traditional `.field {}` attachments.
    #[must_use]
    pub fn inline_schemas(mut self, on: bool) -> Self {
        self.inline_schemas = on;
        self
    }

    /// Whether array attachments that repeat one tabular field list down a column omit it
    /// after the first row (spec §7.4.5.3). On by default.
    #[must_use]
    pub fn shared_schemas(mut self, on: bool) -> Self {
        self.shared_schemas = on;
        self
    }

    /// Whether a nested object with the same keys, in the same order, in every row of a
    /// table becomes path columns `"a>b"` (spec v3.2 §7.4.6; the oracles' `no_flatten`
    /// turns it off). On by default; current spec only.
    #[must_use]
    pub fn flatten(mut self, on: bool) -> Self {
        self.flatten = on;
        self
    }

    /// Whether an object of at least two members, all objects, is written as a keyed table
    /// `## name [N:]{key,...}` (spec v3.5 §7.2a). On by default (the spec makes it canonical);
    /// off gives `## member` sections. Current spec only.
    #[must_use]
    pub fn keyed_maps(mut self, on: bool) -> Self {
        self.keyed_maps = on;
        self
    }

    /// Whether a scalar column holding one value in every row of a root or member table
    /// moves into the header as `name=value` (spec v3.6 §7.4.7, canonical in gcf-python and
    /// the `gcf` crate). On by default; current spec only. Off gives the v3.5.3 bytes.
    #[must_use]
    pub fn constant_columns(mut self, on: bool) -> Self {
        self.constant_columns = on;
        self
    }

    /// Writes a root array of records as a value-grouped keyed set (spec v3.6 §7.4.8, the
    /// oracles' `encode_generic_grouped`): `## [N]{@key,group,...} group=group`, then one
    /// `group=value [M]` line per value of the `group` column and its records, without that
    /// column; other constant columns are factored. Records are clustered by group in order
    /// of first appearance, so the decoded array keeps its order only if records of one group
    /// were already adjacent. The root must be an array of objects of scalars whose `key`
    /// column is present, not null and unique, and whose `group` column is present in every
    /// record; otherwise encoding fails with `unsupported_value`. Current spec only.
    #[must_use]
    pub fn value_grouping(mut self, key: impl Into<String>, group: impl Into<String>) -> Self {
        self.grouping = Some(Grouping {
            key: key.into(),
            group: group.into(),
        });
        self
    }

    /// Chooses, per table and section, among the encodings the current grammar allows
    /// (flattened columns or attachments, keyed tables or sections, constant columns,
    /// inline and shared schemas, tables or expanded items, value grouping of a sorted root
    /// table) the one `counter` counts the fewest tokens for. Any current decoder reads the
    /// result, and it never has more tokens than the canonical encoding. Current spec only.
    ///
    /// ```
    /// use agentwire_gcf::EncoderOptions;
    /// use serde_json::json;
    ///
    /// // A crude counter for the example: one token per run of letters or digits, one per
    /// // other character.
    /// let count = |text: &str| {
    ///     let mut tokens = 0;
    ///     let mut word = false;
    ///     for c in text.chars() {
    ///         let w = c.is_alphanumeric();
    ///         if !(w && word) {
    ///             tokens += 1;
    ///         }
    ///         word = w;
    ///     }
    ///     tokens
    /// };
    /// let value = json!({"users": [
    ///     {"id": 1, "name": "Ann", "role": "admin"},
    ///     {"id": 2, "name": "Bo"},
    ///     {"id": 3, "name": "Cy", "tags": ["a"]},
    /// ]});
    /// let fewest = EncoderOptions::new().fewest_tokens(count).to_string(&value)?;
    /// let canonical = EncoderOptions::new().to_string(&value)?;
    /// assert!(count(&fewest) <= count(&canonical));
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    #[must_use]
    pub fn fewest_tokens(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.fewest = Some(Counter(std::sync::Arc::new(counter)));
        self
    }

    /// The deepest nesting the encoder accepts (default 128, the decoder's default limit);
    /// deeper values fail with `limit_exceeded` instead of overflowing the stack.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Whether the current spec's encodings apply.
    pub(crate) fn current(&self) -> bool {
        self.spec != Spec::V3_1
    }
}

impl Default for EncoderOptions {
    fn default() -> Self {
        EncoderOptions::new()
    }
}

/// How input is decoded; build with chained setters, then decode with
/// [`from_str`](DecoderOptions::from_str), [`from_slice`](DecoderOptions::from_slice) or
/// [`from_reader`](DecoderOptions::from_reader).
///
/// ```
/// use agentwire_gcf::{DecoderOptions, ErrorKind, Limit};
/// use serde_json::Value;
///
/// let deep = "GCF profile=generic\n## a\n  ## b\n    ## c\n      x=1\n";
/// let err = DecoderOptions::new().max_depth(3).from_str::<Value>(deep).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::LimitExceeded(Limit::Depth));
/// assert_eq!((err.line(), err.column()), (Some(4), Some(5)));
/// assert!(DecoderOptions::new().max_depth(4).from_str::<Value>(deep).is_ok());
/// ```
///
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecoderOptions {
    pub(crate) limits: Limits,
    pub(crate) require_trailer: bool,
    pub(crate) spec: Spec,
    /// The text `from_reader` gathers before it decodes a unit (see `generic/units.rs`).
    pub(crate) unit_size: usize,
}

impl DecoderOptions {
    /// The defaults: [`Limits::DEFAULT`], the current spec ([`Spec::V3_6`]), and a deferred
    /// `[?]` section without a trailer is an error.
    pub fn new() -> Self {
        DecoderOptions {
            limits: Limits::DEFAULT,
            require_trailer: true,
            spec: Spec::LATEST,
            unit_size: 64 * 1024,
        }
    }

    /// The bytes of text [`from_reader`](crate::from_reader) gathers before it decodes them
    /// (default 64 KiB): tests set it to 1 to make every place a payload may be cut a cut.
    /// The value decoded is the same whatever it is.
    #[doc(hidden)]
    #[must_use]
    pub fn stream_unit_size(mut self, bytes: usize) -> Self {
        self.unit_size = bytes;
        self
    }

    /// Reads payloads by `spec` (default [`Spec::V3_6`], the current specification). The one
    /// reason to choose [`Spec::V3_1`] is a v3.1 producer whose bytes later versions read
    /// differently (a field literally named `a>b`, `-0`, integers beyond 64 bits); it also
    /// rejects what v3.1 does not define (keyed maps, constant columns and the rest).
    ///
    /// ```
    /// use agentwire_gcf::{DecoderOptions, Spec};
    /// use serde_json::{json, Value};
    ///
    /// let text = "GCF profile=generic\n## [1]{id,\"a>b\"}\n1|x\n";
    /// let current: Value = DecoderOptions::new().from_str(text)?;
    /// assert_eq!(current, json!([{"id": 1, "a": {"b": "x"}}]));
    /// let v31: Value = DecoderOptions::new().spec(Spec::V3_1).from_str(text)?;
    /// assert_eq!(v31, json!([{"id": 1, "a>b": "x"}]));
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    #[must_use]
    pub fn spec(mut self, spec: Spec) -> Self {
        self.spec = spec;
        self
    }

    /// The version payloads are read by.
    pub fn get_spec(&self) -> Spec {
        self.spec
    }

    /// Replaces all limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The configured limits.
    pub fn get_limits(&self) -> &Limits {
        &self.limits
    }

    /// Sets [`Limits::max_depth`].
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.limits.max_depth = depth;
        self
    }

    /// Sets [`Limits::max_elements`].
    #[must_use]
    pub fn max_elements(mut self, elements: usize) -> Self {
        self.limits.max_elements = elements;
        self
    }

    /// Sets [`Limits::max_line_length`].
    #[must_use]
    pub fn max_line_length(mut self, bytes: usize) -> Self {
        self.limits.max_line_length = bytes;
        self
    }

    /// Sets [`Limits::max_fields`].
    #[must_use]
    pub fn max_fields(mut self, fields: usize) -> Self {
        self.limits.max_fields = fields;
        self
    }

    /// Sets [`Limits::max_input_size`].
    #[must_use]
    pub fn max_input_size(mut self, bytes: Option<usize>) -> Self {
        self.limits.max_input_size = bytes;
        self
    }

    /// Whether a payload with deferred `[?]` sections must end with its `##! summary` trailer
    /// (default `true`). A stream cut short loses its trailer, so without this check a
    /// truncated payload would decode as complete data; with it, decoding fails with
    /// `truncated_input`. Set it to `false` for the spec's §8.6 behaviour (accept and use the
    /// actual counts). For the graph profile, a full-graph header without `symbols=` also marks
    /// a stream, which needs its trailer (see `decode_graph`).
    #[must_use]
    pub fn require_trailer(mut self, on: bool) -> Self {
        self.require_trailer = on;
        self
    }
}

impl Default for DecoderOptions {
    fn default() -> Self {
        DecoderOptions::new()
    }
}
