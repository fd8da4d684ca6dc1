//! Typed responses of Gortex's tools, encoded and decoded in one call.
//!
//! Each response type implements [`Layout`] and is written by the value codec's rules with the
//! tool's knowledge (`schema.rs`): the spec's columns (the seed's tables) in Gortex's order,
//! Gortex's meta and comments. Its rows are written from their fields (`TypedRow`: no
//! `serde_json::Value` per row), the rest of the response through the Writer's plan; where
//! that would differ from writing the response's JSON form (`get_symbol_source`'s record, a
//! table the typed rows cannot form as the value path would), the JSON form is written.
//! Reading, a section's rows are kept as cells and handed to the row types as the maps they
//! would have been (`value::CellTable`), so no `Value` is built for a row there either. Decoding reads whatever Gortex writes: the seed's layouts and
//! today's (more columns, `tier`/`via` on edges, `betweenness`, `.notes` sections); columns
//! and members a type does not name are kept in its `extra` map; meta Gortex may leave out
//! (`total`, `truncated`) is an `Option`.
//!
//! A response's JSON form (its serde representation) is the JSON the value codec reads the
//! payload into (`decode_any`): rows under their wrapper key, meta as typed members.

use std::borrow::Cow;
use std::io::{BufRead, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::de::deserialize_row;
use crate::decoder::Limits;
use crate::decoder::{Decoder, SectionSource, StrDecoder};
use crate::encoder::Encoder;
use crate::error::{Error, ErrorKind, Position, Result};
use crate::header::Header;
use crate::schema::{common_kind, Kind};
use crate::value::{layout_options, typed_table, CellValue, Typed, TypedRow, Writer};

/// A whole tool response with a GCX1 layout: one call to encode, one to decode.
///
/// ```
/// use agentwire_gcx1::{Layout, SearchSymbols, SymbolMatch};
///
/// let response = SearchSymbols {
///     total: Some(7),
///     truncated: Some(true),
///     results: vec![SymbolMatch {
///         id: "internal/mcp/server.go::NewServer".into(),
///         kind: "function".into(),
///         name: "NewServer".into(),
///         path: "internal/mcp/server.go".into(),
///         line: 62,
///         sig: "func NewServer(cfg Config) *Server".into(),
///         ..SymbolMatch::default()
///     }],
///     ..SearchSymbols::default()
/// };
/// let text = response.to_gcx()?;
/// assert_eq!(
///     text,
///     "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=7 truncated=true\n\
///      ## 1 result(s)\n\
///      internal/mcp/server.go::NewServer\tfunction\tNewServer\tinternal/mcp/server.go\t62\t\
///      func NewServer(cfg Config) *Server\n"
/// );
/// assert_eq!(SearchSymbols::from_gcx(&text)?, response);
///
/// // What Gortex writes today: more columns (kept in `extra`), no `total`.
/// let later = "GCX1 tool=search_symbols fields=id,kind,name,path,path_abs,line,sig,is_test truncated=false\n\
///              a.go::F\tfunction\tF\ta.go\t/src/a.go\t3\t\tfalse\n";
/// let decoded = SearchSymbols::from_gcx(later)?;
/// assert_eq!(decoded.total, None);
/// assert_eq!(decoded.results[0].extra["is_test"], false);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub trait Layout: Sized {
    /// Writes the response's sections.
    fn encode<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()>;

    /// Reads the response's sections from a streaming decoder.
    fn decode<R: BufRead>(decoder: &mut Decoder<R>) -> Result<Self>;

    /// Reads the response's sections from a borrowed decoder.
    fn decode_str(decoder: &mut StrDecoder<'_>) -> Result<Self>;

    /// The response as GCX1 text.
    fn to_gcx(&self) -> Result<String> {
        // In memory: the text is the encoder's buffer, not a copy of it.
        let mut encoder =
            Encoder::in_memory_sized(Limits::default(), crate::encoder::RESPONSE_START);
        self.encode(&mut encoder)?;
        encoder.into_text()
    }

    /// Writes the response to `writer` and returns it.
    fn write_gcx<W: Write>(&self, writer: W) -> Result<W> {
        let mut encoder = Encoder::new(writer);
        self.encode(&mut encoder)?;
        encoder.finish()
    }

    /// Decodes a payload holding exactly this response.
    fn from_gcx(input: &str) -> Result<Self> {
        let mut decoder = StrDecoder::new(input);
        let value = Self::decode_str(&mut decoder)?;
        expect_end(&mut decoder)?;
        Ok(value)
    }

    /// Decodes a payload holding exactly this response from `reader`.
    fn read_gcx<R: BufRead>(reader: R) -> Result<Self> {
        let mut decoder = Decoder::new(reader);
        let value = Self::decode(&mut decoder)?;
        expect_end(&mut decoder)?;
        Ok(value)
    }
}

/// A layout of a Gortex tool, written and read by the value codec.
trait ToolLayout: Serialize + DeserializeOwned + Shell {
    /// The tool (section) name it writes.
    fn tool(&self) -> &'static str;
    /// Whether it reads a payload of `tool`.
    fn accepts(tool: &str) -> bool;
    /// The member a payload that is a bare array (its section without meta) reads into.
    const ROWS: Option<&'static str>;
    /// Takes what the payload says beyond the JSON form (the graph tool's name).
    fn decoded(&mut self, _tool: &str) {}
}

fn write_tool<T: ToolLayout, W: Write>(value: &T, encoder: &mut Encoder<W>) -> Result<()> {
    if write_typed(value, encoder)? {
        return Ok(());
    }
    write_value(value, encoder)
}

/// The typed path: the rows' fields straight into cells, no `Value` built for a row; `false`
/// (nothing written) where the value path writes the response.
fn write_typed<T: ToolLayout, W: Write>(value: &T, encoder: &mut Encoder<W>) -> Result<bool> {
    let options = layout_options(value.tool());
    let writer = Writer::layout(&options);
    let written = match value.typed(&writer)? {
        Some(typed) => writer.write_typed(encoder, typed),
        None => value.record(&writer, encoder),
    };
    written.map_err(|e| e.or_position(Position::new(encoder.lines() + 1, 1)))
}

/// The value path: the same bytes, through the layout's JSON form.
fn write_value<T: ToolLayout, W: Write>(value: &T, encoder: &mut Encoder<W>) -> Result<()> {
    let json = crate::ser::to_value(value)?;
    crate::value::encode_layout(encoder, value.tool(), &json)
        .map_err(|e| e.or_position(Position::new(encoder.lines() + 1, 1)))
}

fn read_tool<T: ToolLayout, S: SectionSource>(source: &mut S) -> Result<T> {
    read_decoded(crate::value::decode_layout(source)?)
}

/// The response from the decoded payload (its rows kept as cells, or as `Value`s).
fn read_decoded<T: ToolLayout>(decoded: crate::value::Decoded) -> Result<T> {
    if !T::accepts(&decoded.tool) {
        return Err(unexpected(
            1,
            "a section of this layout's tool".into(),
            Some(&decoded.tool),
        ));
    }
    let tool = decoded.tool.clone();
    let decoded = match T::ROWS {
        Some(key) => decoded.wrapped(key),
        None => decoded,
    };
    let mut value: T = decoded.into_typed()?;
    value.decoded(&tool);
    Ok(value)
}

/// A layout's response as the value codec's Writer takes it without building its JSON form
/// (`Writer::write_typed`), or `None` where the value path writes it.
trait Shell {
    fn typed<'a>(&'a self, writer: &Writer<'_>) -> Result<Option<Typed<'a>>>;

    /// Writes a record layout (one row) from its fields, as the value path writes its JSON
    /// form; `false` (nothing written) where the value path writes it.
    fn record<W: Write>(&self, _writer: &Writer<'_>, _encoder: &mut Encoder<W>) -> Result<bool> {
        Ok(false)
    }
}

/// A record: one row, its fields straight into cells.
impl Shell for SymbolSource {
    fn typed<'a>(&'a self, _writer: &Writer<'_>) -> Result<Option<Typed<'a>>> {
        Ok(None)
    }

    fn record<W: Write>(&self, writer: &Writer<'_>, encoder: &mut Encoder<W>) -> Result<bool> {
        writer.write_typed_record(encoder, self)
    }
}

/// A field of a row as a cell: `None` where the JSON form leaves the member out.
trait WireCell {
    fn cell(&self) -> Result<Option<CellValue<'_>>>;
}

impl WireCell for String {
    fn cell(&self) -> Result<Option<CellValue<'_>>> {
        Ok((!self.is_empty()).then_some(CellValue::Str(self)))
    }
}

impl WireCell for u64 {
    fn cell(&self) -> Result<Option<CellValue<'_>>> {
        Ok(Some(CellValue::U64(*self)))
    }
}

impl WireCell for Option<u64> {
    fn cell(&self) -> Result<Option<CellValue<'_>>> {
        Ok(self.map(CellValue::U64))
    }
}

impl WireCell for f64 {
    fn cell(&self) -> Result<Option<CellValue<'_>>> {
        if self.is_finite() {
            Ok(Some(CellValue::F64(*self)))
        } else {
            // The error serializing the JSON form gives.
            Err(ErrorKind::NonFiniteFloat { value: *self }.into())
        }
    }
}

impl WireCell for Vec<String> {
    fn cell(&self) -> Result<Option<CellValue<'_>>> {
        Ok(Some(CellValue::List(self)))
    }
}

/// A member of a layout's response, added to its [`Typed`] form: rows as a table (an empty
/// array in the JSON form), anything else as its JSON form's member.
trait ShellMember {
    fn shell<'a>(
        &'a self,
        key: &'static str,
        writer: &Writer<'_>,
        typed: &mut Typed<'a>,
    ) -> Result<()>;
}

impl<R: TypedRow> ShellMember for Vec<R> {
    fn shell<'a>(
        &'a self,
        key: &'static str,
        writer: &Writer<'_>,
        typed: &mut Typed<'a>,
    ) -> Result<()> {
        if !self.is_empty() && typed.whole {
            match typed_table(writer, self)? {
                Some(table) => typed.tables.push((key, table)),
                None => typed.whole = false,
            }
        }
        typed
            .members
            .push((key, Cow::Owned(Value::Array(Vec::new()))));
        Ok(())
    }
}

macro_rules! plain_members {
    ($($t:ty),*) => {$(
        impl ShellMember for $t {
            fn shell<'a>(
                &'a self,
                key: &'static str,
                _writer: &Writer<'_>,
                typed: &mut Typed<'a>,
            ) -> Result<()> {
                if !WireField::omit(self) {
                    typed
                        .members
                        .push((key, Cow::Owned(crate::ser::to_value(self)?)));
                }
                Ok(())
            }
        }
    )*};
}

plain_members!(String, u64, Option<u64>, Option<bool>, Option<String>);

/// `get_editing_context`'s `target`: a record from its fields where the Writer takes one
/// (else its JSON form, as before).
impl ShellMember for EditTarget {
    fn shell<'a>(
        &'a self,
        key: &'static str,
        writer: &Writer<'_>,
        typed: &mut Typed<'a>,
    ) -> Result<()> {
        if WireField::omit(self) {
            return Ok(());
        }
        if typed.whole {
            if let Some(record) = writer.typed_record(key, self)? {
                typed.records.push((key, record));
                typed.members.push((key, Cow::Owned(Value::Null)));
                return Ok(());
            }
        }
        typed
            .members
            .push((key, Cow::Owned(crate::ser::to_value(self)?)));
        Ok(())
    }
}

macro_rules! tool_layouts {
    ($($t:ty),* $(,)?) => {$(
        impl Layout for $t {
            fn encode<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
                write_tool(self, encoder)
            }

            fn decode<R: BufRead>(decoder: &mut Decoder<R>) -> Result<Self> {
                read_tool(decoder)
            }

            fn decode_str(decoder: &mut StrDecoder<'_>) -> Result<Self> {
                read_tool(decoder)
            }
        }
    )*};
}

tool_layouts!(
    SearchSymbols,
    SymbolSource,
    BatchSymbols,
    FindUsages,
    FileSummary,
    Graph,
    EditingContext,
    SmartContext,
    DeadCode,
    Hotspots,
    Cycles,
    ContractsList,
    ContractOrphans,
);

fn expect_end<S: SectionSource>(source: &mut S) -> Result<()> {
    match source.peek_tool()? {
        None => Ok(()),
        Some(tool) => Err(unexpected(
            source.line_no(),
            "the end of the payload".into(),
            Some(&tool),
        )),
    }
}

pub(crate) fn unexpected(line: u64, expected: String, found: Option<&str>) -> Error {
    let found = match found {
        Some(tool) => format!("section `{tool}`"),
        None => "the end of the payload".to_owned(),
    };
    Error::at(
        ErrorKind::UnexpectedSection { expected, found },
        line.max(1),
        1,
    )
}

/// Reads the next section, which must be `tool`, and checks that it declares `fields`.
pub(crate) fn expect_section<S: SectionSource>(
    source: &mut S,
    tool: &str,
    fields: &[&str],
) -> Result<(Header, u64)> {
    let header = source.next_header()?;
    let line = source.line_no();
    let header = match header {
        Some(header) if header.tool == tool => header,
        other => {
            return Err(unexpected(
                line,
                format!("section `{tool}`"),
                other.as_ref().map(|h| h.tool.as_str()),
            ))
        }
    };
    if let Some(missing) = fields
        .iter()
        .find(|f| !header.fields.iter().any(|h| h == *f))
    {
        return Err(Error::at(
            ErrorKind::InvalidMeta {
                key: "fields".into(),
                message: format!("section `{tool}` lacks field `{missing}`"),
            },
            line,
            1,
        ));
    }
    Ok((header, line))
}

pub(crate) fn read_rows<S: SectionSource, T: DeserializeOwned>(source: &mut S) -> Result<Vec<T>> {
    let mut rows = Vec::new();
    while let Some(row) = source.with_next_row(|row, fields| deserialize_row(fields, row))? {
        rows.push(row);
    }
    Ok(rows)
}

/// Members a layout's type does not name: later columns, meta and sections.
pub type Extra = Map<String, Value>;

/// How a member of a layout type's JSON form reads when absent, and when it is left out:
/// text is left out when empty (Gortex writes an empty cell for "none"), options when none;
/// line numbers and scores must be present.
trait WireField: Sized {
    /// The value of an absent member; `None` when the member is required.
    fn absent() -> Option<Self>;

    /// Whether the member is left out of the JSON form.
    fn omit(&self) -> bool {
        false
    }
}

impl WireField for String {
    fn absent() -> Option<Self> {
        Some(String::new())
    }

    fn omit(&self) -> bool {
        self.is_empty()
    }
}

impl WireField for u64 {
    fn absent() -> Option<Self> {
        None
    }
}

impl WireField for f64 {
    fn absent() -> Option<Self> {
        None
    }
}

impl<T> WireField for Option<T> {
    fn absent() -> Option<Self> {
        Some(None)
    }

    fn omit(&self) -> bool {
        self.is_none()
    }
}

impl<T> WireField for Vec<T> {
    fn absent() -> Option<Self> {
        Some(Vec::new())
    }
}

impl WireField for EditTarget {
    fn absent() -> Option<Self> {
        Some(EditTarget::default())
    }
}

/// A member name of a layout type's JSON form: one of its named members (no `String` made
/// for it), or another.
enum Key {
    Named(&'static str),
    Other(String),
}

/// Reads a member name as a [`Key`] of the type whose named members are `.0`.
struct WireKey(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for WireKey {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_string(self)
    }
}

impl serde::de::Visitor<'_> for WireKey {
    type Value = Key;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // What `String` expects, as the key was read before.
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(match self.0.iter().find(|name| **name == key) {
            Some(name) => Key::Named(name),
            None => Key::Other(key.to_owned()),
        })
    }

    fn visit_string<E: serde::de::Error>(self, key: String) -> Result<Key, E> {
        Ok(match self.0.iter().find(|name| **name == key) {
            Some(name) => Key::Named(name),
            None => Key::Other(key),
        })
    }
}

/// serde for a layout type: the named members, and every other member in `extra`. (Not
/// `#[serde(flatten)]`, which breaks numbers when serde_json's `arbitrary_precision` is on,
/// and would lose the row lines of errors.)
macro_rules! wire_struct {
    (row $name:ident { $($field:ident = $wire:literal),* $(,)? }) => {
        impl TypedRow for $name {
            const NAMES: &'static [&'static str] = &[$($wire),*];
            const KINDS: &'static [Option<Kind>] = &[$(common_kind($wire)),*];

            #[inline]
            fn cells<'a>(&'a self, cells: &mut [Option<CellValue<'a>>]) -> Result<&'a Extra> {
                let mut slots = cells.iter_mut();
                $( if let Some(slot) = slots.next() {
                    *slot = WireCell::cell(&self.$field)?;
                } )*
                Ok(&self.extra)
            }
        }

        wire_struct!($name { $($field = $wire),* });
    };
    (layout $name:ident { $($field:ident = $wire:literal $(via $via:ident)?),* $(,)? } $(skip { $($skip:ident),* })?) => {
        impl Shell for $name {
            fn typed<'a>(&'a self, writer: &Writer<'_>) -> Result<Option<Typed<'a>>> {
                let mut typed = Typed {
                    members: Vec::new(),
                    tables: Vec::new(),
                    records: Vec::new(),
                    whole: true,
                };
                $( wire_struct!(@shell typed, writer, self.$field, $wire $(, $via)?); )*
                for (key, value) in &self.extra {
                    if ![$($wire),*].contains(&key.as_str()) {
                        typed.members.push((key, Cow::Borrowed(value)));
                    }
                }
                Ok(Some(typed))
            }
        }

        wire_struct!($name { $($field = $wire $(via $via)?),* } $(skip { $($skip),* })?);
    };
    ($name:ident { $($field:ident = $wire:literal $(via $via:ident)?),* $(,)? } $(skip { $($skip:ident),* })?) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                // The exact number of entries, so that a map serializer can size its map.
                let len = 0 $( + usize::from(wire_struct!(@written self.$field $(, $via)?)) )*
                    + self.extra.keys().filter(|key| ![$($wire),*].contains(&key.as_str())).count();
                let mut map = serializer.serialize_map(Some(len))?;
                $( wire_struct!(@write map, self.$field, $wire $(, $via)?); )*
                for (key, value) in &self.extra {
                    if ![$($wire),*].contains(&key.as_str()) {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Fields;

                impl<'de> serde::de::Visitor<'de> for Fields {
                    type Value = $name;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a `", stringify!($name), "` object"))
                    }

                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut access: A,
                    ) -> Result<$name, A::Error> {
                        use serde::de::Error as _;
                        $( let mut $field = None; )*
                        let mut extra = Map::new();
                        while let Some(key) = access.next_key_seed(WireKey(&[$($wire),*]))? {
                            match key {
                                $( Key::Named($wire) => $field = Some(wire_struct!(@next access $(, $via)?)), )*
                                Key::Named(key) => {
                                    extra.insert(key.to_owned(), access.next_value::<Value>()?);
                                }
                                Key::Other(key) => {
                                    extra.insert(key, access.next_value::<Value>()?);
                                }
                            }
                        }
                        Ok($name {
                            $( $field: match $field {
                                Some(value) => value,
                                None => WireField::absent()
                                    .ok_or_else(|| A::Error::missing_field($wire))?,
                            }, )*
                            $($( $skip: Default::default(), )*)?
                            extra,
                        })
                    }
                }

                deserializer.deserialize_map(Fields)
            }
        }
    };
    (@write $map:ident, $value:expr, $wire:literal) => {
        if !WireField::omit(&$value) {
            $map.serialize_entry($wire, &$value)?;
        }
    };
    (@write $map:ident, $value:expr, $wire:literal, $via:ident) => {
        $map.serialize_entry($wire, &$via::Write(&$value))?;
    };
    (@written $value:expr) => {
        !WireField::omit(&$value)
    };
    (@written $value:expr, $via:ident) => {
        true
    };
    (@shell $typed:ident, $writer:ident, $value:expr, $wire:literal) => {
        ShellMember::shell(&$value, $wire, $writer, &mut $typed)?;
    };
    (@shell $typed:ident, $writer:ident, $value:expr, $wire:literal, $via:ident) => {
        $via::shell(&$value, $wire, $writer, &mut $typed)?;
    };
    (@next $access:ident) => {
        $access.next_value()?
    };
    (@next $access:ident, $via:ident) => {
        $access.next_value::<$via::Read>()?.0
    };
}

// ---------------------------------------------------------------------------------------
// search_symbols

/// One `search_symbols` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SymbolMatch {
    /// The node ID.
    pub id: String,
    /// `function`, `method`, `type`, `interface`, `variable`, `contract`, ...
    pub kind: String,
    /// The short name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The start line.
    pub line: u64,
    /// The extracted signature; may be empty.
    pub sig: String,
    /// Later columns (`path_abs`, `enclosing`, `is_test`, `test_role`, ...).
    pub extra: Extra,
}

wire_struct!(row SymbolMatch { id = "id", kind = "kind", name = "name", path = "path", line = "line", sig = "sig" });

/// A `search_symbols` response: header meta `total` and `truncated`, a `# N result(s)`
/// comment, one row per hit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchSymbols {
    /// The hits.
    pub results: Vec<SymbolMatch>,
    /// Hits before the limit was applied.
    pub total: Option<u64>,
    /// Whether hits were cut by the limit.
    pub truncated: Option<bool>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout SearchSymbols { results = "results", total = "total", truncated = "truncated" });

impl ToolLayout for SearchSymbols {
    const ROWS: Option<&'static str> = Some("results");
    fn tool(&self) -> &'static str {
        "search_symbols"
    }
    fn accepts(tool: &str) -> bool {
        tool == "search_symbols"
    }
}

// ---------------------------------------------------------------------------------------
// get_symbol_source

/// A `get_symbol_source` response: one row; Gortex repeats the etag in the header.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SymbolSource {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The symbol's first line.
    pub start_line: u64,
    /// The symbol's last line.
    pub end_line: u64,
    /// The first line of `source` (may precede `start_line` by the context lines).
    pub from_line: u64,
    /// The signature.
    pub sig: String,
    /// The content hash for `if_none_match` caching.
    pub etag: String,
    /// The source text.
    pub source: String,
    /// Further columns and meta (`omissions`).
    pub extra: Extra,
}

wire_struct!(row SymbolSource { id = "id", kind = "kind", name = "name", path = "path", start_line = "start_line", end_line = "end_line", from_line = "from_line", sig = "sig", etag = "etag", source = "source" });

impl ToolLayout for SymbolSource {
    const ROWS: Option<&'static str> = None;
    fn tool(&self) -> &'static str {
        "get_symbol_source"
    }
    fn accepts(tool: &str) -> bool {
        tool == "get_symbol_source"
    }
}

// ---------------------------------------------------------------------------------------
// batch_symbols

/// One `batch_symbols` row: a resolved symbol, or the ID that could not be resolved with
/// `error` set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchSymbol {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The first line; none when unresolved.
    pub start_line: Option<u64>,
    /// The last line; none when unresolved.
    pub end_line: Option<u64>,
    /// The signature.
    pub sig: String,
    /// The source text (the column is written when some symbol has source, as Gortex writes
    /// it when the call asked for source).
    pub source: String,
    /// Non-empty when the symbol could not be resolved.
    pub error: String,
    /// Further columns.
    pub extra: Extra,
}

wire_struct!(row BatchSymbol { id = "id", kind = "kind", name = "name", path = "path", start_line = "start_line", end_line = "end_line", sig = "sig", source = "source", error = "error" });

/// A `batch_symbols` response: meta `count`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchSymbols {
    /// The symbols, in request order.
    pub symbols: Vec<BatchSymbol>,
    /// The number of symbols (Gortex writes it).
    pub count: Option<u64>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout BatchSymbols { symbols = "symbols", count = "count" });

impl ToolLayout for BatchSymbols {
    const ROWS: Option<&'static str> = Some("symbols");
    fn tool(&self) -> &'static str {
        "batch_symbols"
    }
    fn accepts(tool: &str) -> bool {
        tool == "batch_symbols"
    }
}

// ---------------------------------------------------------------------------------------
// find_usages

/// One `find_usages` row: an edge into the queried symbol.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// The caller's ID.
    pub from: String,
    /// The called symbol's ID (the query subject).
    pub to: String,
    /// `calls`, `references`, `implements`, ...
    pub edge_kind: String,
    /// The resolution tier: `lsp_resolved`, `lsp_dispatch`, `ast_resolved`, `ast_inferred`,
    /// `text_matched`.
    pub origin: String,
    /// 0 to 1.
    pub confidence: f64,
    /// The caller's short name.
    pub from_name: String,
    /// The caller's file path.
    pub from_path: String,
    /// The caller's start line (or the call site's).
    pub from_line: u64,
    /// Later columns (`context`, `tier`, `from_is_test`, ...).
    pub extra: Extra,
}

wire_struct!(row Usage { from = "from", to = "to", edge_kind = "edge_kind", origin = "origin", confidence = "confidence", from_name = "from_name", from_path = "from_path", from_line = "from_line" });

/// A `find_usages` response: the usages under `edges` (Gortex's JSON member; the header's
/// `edges` meta counts them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FindUsages {
    /// The usages.
    pub edges: Vec<Usage>,
    /// Further meta (`truncated`, `total_edges`, `caveat`, ...) and sections (`notes`).
    pub extra: Extra,
}

wire_struct!(layout FindUsages { edges = "edges" });

impl ToolLayout for FindUsages {
    const ROWS: Option<&'static str> = Some("edges");
    fn tool(&self) -> &'static str {
        "find_usages"
    }
    fn accepts(tool: &str) -> bool {
        tool == "find_usages"
    }
}

// ---------------------------------------------------------------------------------------
// get_file_summary

/// One `get_file_summary` row: a symbol of the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileSymbol {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The short name.
    pub name: String,
    /// The start line.
    pub line: u64,
    /// The signature.
    pub sig: String,
    /// Further columns.
    pub extra: Extra,
}

wire_struct!(row FileSymbol { id = "id", kind = "kind", name = "name", line = "line", sig = "sig" });

/// A `get_file_summary` response: meta `total_nodes`, `total_edges`, `truncated`, `etag`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileSummary {
    /// The symbols.
    pub symbols: Vec<FileSymbol>,
    /// Nodes in the file.
    pub total_nodes: Option<u64>,
    /// Edges touching the file.
    pub total_edges: Option<u64>,
    /// Whether rows were cut.
    pub truncated: Option<bool>,
    /// The file's content hash.
    pub etag: Option<String>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout FileSummary { symbols = "symbols", total_nodes = "total_nodes", total_edges = "total_edges", truncated = "truncated", etag = "etag" });

impl ToolLayout for FileSummary {
    const ROWS: Option<&'static str> = Some("symbols");
    fn tool(&self) -> &'static str {
        "get_file_summary"
    }
    fn accepts(tool: &str) -> bool {
        tool == "get_file_summary"
    }
}

// ---------------------------------------------------------------------------------------
// get_callers / get_call_chain / get_dependencies / get_dependents / find_implementations

/// The traversal tools that answer with a `.nodes` and an `.edges` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GraphTool {
    /// `get_callers`.
    #[default]
    GetCallers,
    /// `get_call_chain`.
    GetCallChain,
    /// `get_dependencies`.
    GetDependencies,
    /// `get_dependents`.
    GetDependents,
    /// `find_implementations`.
    FindImplementations,
    /// `walk_graph`.
    WalkGraph,
}

impl GraphTool {
    /// Every graph tool.
    pub const ALL: [GraphTool; 6] = [
        GraphTool::GetCallers,
        GraphTool::GetCallChain,
        GraphTool::GetDependencies,
        GraphTool::GetDependents,
        GraphTool::FindImplementations,
        GraphTool::WalkGraph,
    ];

    /// The tool name.
    pub fn as_str(self) -> &'static str {
        match self {
            GraphTool::GetCallers => "get_callers",
            GraphTool::GetCallChain => "get_call_chain",
            GraphTool::GetDependencies => "get_dependencies",
            GraphTool::GetDependents => "get_dependents",
            GraphTool::FindImplementations => "find_implementations",
            GraphTool::WalkGraph => "walk_graph",
        }
    }

    /// The graph tool named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// A symbol row: `.nodes` of the graph tools, and `.callers` / `.dependencies` of
/// `get_editing_context`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SymbolRef {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The short name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The start line.
    pub line: u64,
    /// Later columns (`path_abs`, `is_test`, `test_role`, `test_runner`).
    pub extra: Extra,
}

wire_struct!(row SymbolRef { id = "id", kind = "kind", name = "name", path = "path", line = "line" });

/// One `.edges` row of the graph tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphEdge {
    /// The source node ID.
    pub from: String,
    /// The target node ID.
    pub to: String,
    /// The edge kind.
    pub kind: String,
    /// The resolution tier.
    pub origin: String,
    /// 0 to 1.
    pub confidence: f64,
    /// A human label for the confidence.
    pub label: String,
    /// Later columns (`tier`, `via`, `line`, `file_path`).
    pub extra: Extra,
}

wire_struct!(row GraphEdge { from = "from", to = "to", kind = "kind", origin = "origin", confidence = "confidence", label = "label" });

/// A graph tool's response: `<tool>.nodes` (meta `total`, `truncated`) then `<tool>.edges`
/// (meta `count`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// Which tool answered: the sections' name (not a member of the JSON form).
    pub tool: GraphTool,
    /// The nodes.
    pub nodes: Vec<SymbolRef>,
    /// The edges.
    pub edges: Vec<GraphEdge>,
    /// Nodes before truncation.
    pub total: Option<u64>,
    /// Whether nodes were cut.
    pub truncated: Option<bool>,
    /// The number of edges (meta of `.edges`).
    pub count: Option<u64>,
    /// Further meta and sections (`notes`, `caller_notes`, `boundaries`).
    pub extra: Extra,
}

wire_struct!(layout Graph { nodes = "nodes", edges = "edges", total = "total", truncated = "truncated", count = "count" } skip { tool });

impl ToolLayout for Graph {
    const ROWS: Option<&'static str> = None;
    fn tool(&self) -> &'static str {
        self.tool.as_str()
    }
    fn accepts(tool: &str) -> bool {
        GraphTool::from_name(tool).is_some()
    }
    fn decoded(&mut self, tool: &str) {
        self.tool = GraphTool::from_name(tool).unwrap_or_default();
    }
}

// ---------------------------------------------------------------------------------------
// get_editing_context

/// The `.target` row of `get_editing_context`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EditTarget {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The first line.
    pub start_line: u64,
    /// The last line.
    pub end_line: u64,
    /// The signature.
    pub sig: String,
    /// The content hash.
    pub etag: String,
    /// Further columns.
    pub extra: Extra,
}

wire_struct!(row EditTarget { id = "id", kind = "kind", name = "name", path = "path", start_line = "start_line", end_line = "end_line", sig = "sig", etag = "etag" });

/// A `get_editing_context` response as the spec lays it out: `.target` (one row),
/// `.callers`, `.dependencies` and `.tests` (one `path` per row). Gortex's own sections
/// (`.defines`, `.imports`, `.called_by`, `.calls`) land in `extra`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EditingContext {
    /// The symbol being edited.
    pub target: EditTarget,
    /// Its callers.
    pub callers: Vec<SymbolRef>,
    /// What it depends on.
    pub dependencies: Vec<SymbolRef>,
    /// Test files covering it.
    pub tests: Vec<String>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout EditingContext { target = "target", callers = "callers", dependencies = "dependencies", tests = "tests" via path_rows });

/// `tests` travel as rows of one `path` column: `[{"path": ...}]` in the JSON form, which
/// also reads the plain list of paths (`["a_test.go"]`) a response may hold.
mod path_rows {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct PathRow {
        path: String,
    }

    /// A row, or a bare path.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum PathItem {
        Row(PathRow),
        Path(String),
    }

    pub(super) struct Write<'a>(pub(super) &'a [String]);

    /// The paths as a typed table of `path` rows (the JSON form's rows, without building
    /// them).
    pub(super) fn shell<'a>(
        paths: &'a Vec<String>,
        key: &'static str,
        writer: &Writer<'_>,
        typed: &mut Typed<'a>,
    ) -> Result<()> {
        ShellMember::shell(paths, key, writer, typed)
    }

    /// A path as its row `{"path": ...}` (the text kept even when empty, as [`PathRow`]
    /// serializes it).
    impl TypedRow for String {
        const NAMES: &'static [&'static str] = &["path"];
        const KINDS: &'static [Option<Kind>] = &[common_kind("path")];

        #[inline]
        fn cells<'a>(&'a self, cells: &mut [Option<CellValue<'a>>]) -> Result<&'a Extra> {
            if let Some(slot) = cells.first_mut() {
                *slot = Some(CellValue::Str(self));
            }
            static NO_MEMBERS: std::sync::OnceLock<Extra> = std::sync::OnceLock::new();
            Ok(NO_MEMBERS.get_or_init(Map::new))
        }
    }

    impl Serialize for Write<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(|path| PathRow { path: path.clone() }))
        }
    }

    pub(super) struct Read(pub(super) Vec<String>);

    impl<'de> Deserialize<'de> for Read {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let rows = Vec::<PathItem>::deserialize(d)?;
            Ok(Read(
                rows.into_iter()
                    .map(|item| match item {
                        PathItem::Row(row) => row.path,
                        PathItem::Path(path) => path,
                    })
                    .collect(),
            ))
        }
    }
}

impl ToolLayout for EditingContext {
    const ROWS: Option<&'static str> = None;
    fn tool(&self) -> &'static str {
        "get_editing_context"
    }
    fn accepts(tool: &str) -> bool {
        tool == "get_editing_context"
    }
}

// ---------------------------------------------------------------------------------------
// smart_context

/// One `.symbols` row of `smart_context`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoredSymbol {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The short name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The start line.
    pub line: u64,
    /// The relevance score.
    pub score: f64,
    /// Why it was picked.
    pub reason: String,
    /// Further columns (Gortex's `sig`, `source`).
    pub extra: Extra,
}

wire_struct!(row ScoredSymbol { id = "id", kind = "kind", name = "name", path = "path", line = "line", score = "score", reason = "reason" });

/// A `smart_context` response: `.task` (field `task`, one row; none when the task is
/// empty) and `.symbols`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SmartContext {
    /// The task the context was built for.
    pub task: String,
    /// The symbols, most relevant first.
    pub symbols: Vec<ScoredSymbol>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout SmartContext { task = "task", symbols = "symbols" });

impl ToolLayout for SmartContext {
    const ROWS: Option<&'static str> = Some("symbols");
    fn tool(&self) -> &'static str {
        "smart_context"
    }
    fn accepts(tool: &str) -> bool {
        tool == "smart_context"
    }
}

// ---------------------------------------------------------------------------------------
// analyze.dead_code / analyze.hotspots / analyze.cycles

/// One `analyze.dead_code` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeadCodeItem {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The short name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The start line.
    pub line: u64,
    /// Why it is considered dead.
    pub reason: String,
    /// Further columns.
    pub extra: Extra,
}

wire_struct!(row DeadCodeItem { id = "id", kind = "kind", name = "name", path = "path", line = "line", reason = "reason" });

/// An `analyze` response of kind `dead_code` (section `analyze.dead_code`, meta `count`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeadCode {
    /// The findings.
    pub items: Vec<DeadCodeItem>,
    /// The number of findings (Gortex writes it).
    pub count: Option<u64>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout DeadCode { items = "items", count = "count" });

/// One `analyze.hotspots` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hotspot {
    /// The node ID.
    pub id: String,
    /// The short name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The start line.
    pub line: u64,
    /// Incoming edges.
    pub fan_in: u64,
    /// Outgoing edges.
    pub fan_out: u64,
    /// Communities crossed.
    pub cross_cut: u64,
    /// The hotspot score.
    pub score: f64,
    /// Further columns (Gortex's `betweenness`).
    pub extra: Extra,
}

wire_struct!(row Hotspot { id = "id", name = "name", path = "path", line = "line", fan_in = "fan_in", fan_out = "fan_out", cross_cut = "cross_cut", score = "score" });

/// An `analyze` response of kind `hotspots` (section `analyze.hotspots`, meta `count`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hotspots {
    /// The findings.
    pub items: Vec<Hotspot>,
    /// The number of findings (Gortex writes it).
    pub count: Option<u64>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout Hotspots { items = "items", count = "count" });

/// One `analyze.cycles` row; `nodes` travels comma-joined (as a JSON array when an ID holds
/// a comma or is empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cycle {
    /// The number of nodes in the cycle.
    pub size: u64,
    /// The severity.
    pub severity: String,
    /// The node IDs.
    pub nodes: Vec<String>,
    /// Further columns.
    pub extra: Extra,
}

wire_struct!(row Cycle { size = "size", severity = "severity", nodes = "nodes" });

/// An `analyze` response of kind `cycles` (section `analyze.cycles`, meta `count`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cycles {
    /// The findings.
    pub items: Vec<Cycle>,
    /// The number of findings (Gortex writes it).
    pub count: Option<u64>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout Cycles { items = "items", count = "count" });

macro_rules! analyze {
    ($($t:ty => $tool:literal),*) => {$(
        impl ToolLayout for $t {
            const ROWS: Option<&'static str> = Some("items");
            fn tool(&self) -> &'static str {
                $tool
            }
            fn accepts(tool: &str) -> bool {
                tool == $tool
            }
        }
    )*};
}

analyze!(DeadCode => "analyze.dead_code", Hotspots => "analyze.hotspots", Cycles => "analyze.cycles");

// ---------------------------------------------------------------------------------------
// contracts.list / contracts.orphans

/// One `contracts.list` row; `providers` and `consumers` travel comma-joined.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contract {
    /// The contract ID.
    pub id: String,
    /// `http`, `grpc`, `topic`, ...
    pub contract_type: String,
    /// The method, where the type has one.
    pub method: String,
    /// The path, topic or name.
    pub path: String,
    /// The owning service.
    pub service: String,
    /// The symbols providing it.
    pub providers: Vec<String>,
    /// The symbols consuming it.
    pub consumers: Vec<String>,
    /// Gortex's later columns (`role`, `repo`, `file`, `line`, `symbol_id`, ...).
    pub extra: Extra,
}

wire_struct!(row Contract { id = "id", contract_type = "type", method = "method", path = "path", service = "service", providers = "providers", consumers = "consumers" });

/// A `contracts` response, action `list`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContractsList {
    /// The contracts.
    pub contracts: Vec<Contract>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout ContractsList { contracts = "contracts" });

impl ToolLayout for ContractsList {
    const ROWS: Option<&'static str> = Some("contracts");
    fn tool(&self) -> &'static str {
        "contracts.list"
    }
    fn accepts(tool: &str) -> bool {
        tool == "contracts.list"
    }
}

/// One `contracts.orphans` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Orphan {
    /// The contract.
    pub contract_id: String,
    /// `provider` or `consumer`.
    pub side: String,
    /// The repository.
    pub repo: String,
    /// The symbol.
    pub symbol: String,
    /// Further columns.
    pub extra: Extra,
}

wire_struct!(row Orphan { contract_id = "contract_id", side = "side", repo = "repo", symbol = "symbol" });

/// A `contracts` response, action `check`: the orphans.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContractOrphans {
    /// The orphans.
    pub orphans: Vec<Orphan>,
    /// Further meta and sections.
    pub extra: Extra,
}

wire_struct!(layout ContractOrphans { orphans = "orphans" });

impl ToolLayout for ContractOrphans {
    const ROWS: Option<&'static str> = Some("orphans");
    fn tool(&self) -> &'static str {
        "contracts.orphans"
    }
    fn accepts(tool: &str) -> bool {
        tool == "contracts.orphans"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn symbol_ref(id: &str, line: u64) -> SymbolRef {
        SymbolRef {
            id: id.into(),
            kind: "function".into(),
            name: id.into(),
            path: "a.go".into(),
            line,
            ..SymbolRef::default()
        }
    }

    /// A response's `tests` as rows (`[{"path": ...}]`, the layout's JSON form) or as a
    /// plain list of paths: the same layout, the same payload.
    #[test]
    fn editing_context_tests_read_as_rows_or_paths() {
        let target = json!({"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go",
            "start_line": 1, "end_line": 2, "sig": "func F()", "etag": "e"});
        let rows: EditingContext = serde_json::from_value(json!({"target": target,
            "callers": [], "dependencies": [], "tests": [{"path": "a_test.go"}]}))
        .unwrap();
        let paths: EditingContext = serde_json::from_value(json!({"target": target,
            "callers": [], "dependencies": [], "tests": ["a_test.go"]}))
        .unwrap();
        assert_eq!(rows.tests, ["a_test.go"]);
        assert_eq!(rows.to_gcx().unwrap(), paths.to_gcx().unwrap());
        assert!(
            serde_json::from_value::<EditingContext>(json!({"target": target,
            "tests": [1]}))
            .is_err()
        );
    }

    #[test]
    fn graph_round_trip_and_bytes() {
        let graph = Graph {
            tool: GraphTool::GetCallers,
            total: Some(2),
            truncated: Some(false),
            nodes: vec![symbol_ref("F", 3)],
            edges: vec![GraphEdge {
                from: "F".into(),
                to: "G".into(),
                kind: "calls".into(),
                origin: "ast_resolved".into(),
                confidence: 0.9,
                label: "high".into(),
                ..GraphEdge::default()
            }],
            count: Some(1),
            ..Graph::default()
        };
        let text = graph.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=get_callers.nodes fields=id,kind,name,path,line total=2 truncated=false\n\
             F\tfunction\tF\ta.go\t3\n\
             GCX1 tool=get_callers.edges fields=from,to,kind,origin,confidence,label count=1\n\
             F\tG\tcalls\tast_resolved\t0.9\thigh\n"
        );
        assert_eq!(Graph::from_gcx(&text).unwrap(), graph);
        assert_eq!(Graph::read_gcx(text.as_bytes()).unwrap(), graph);
        let mut later = text.clone();
        later.push_str(
            "GCX1 tool=get_callers.caller_notes fields=id,sync_guarded count=1\nF\ttrue\n",
        );
        let read = Graph::from_gcx(&later).unwrap();
        assert_eq!(
            read.extra["caller_notes"],
            json!([{"id": "F", "sync_guarded": true}])
        );
        later.push_str("GCX1 tool=other fields=id\n");
        assert_eq!(
            Graph::from_gcx(&later).unwrap_err().code(),
            "unexpected_section"
        );
    }

    #[test]
    fn gortex_graph_without_total_and_with_later_columns() {
        // Gortex's golden get_callers (v0.9.0) has no `total`; today's edges carry tier, via.
        let text = "GCX1 tool=get_dependents.nodes fields=id,kind,name,path,path_abs,line,is_test truncated=false\n\
                    a\ttype\tA\ta.go\t/r/a.go\t4\tfalse\n\
                    GCX1 tool=get_dependents.edges fields=from,to,kind,origin,tier,via,confidence,label,line,file_path count=1\n\
                    b\ta\treferences\tast_resolved\tast\t\t1\thigh\t9\tb.go\n";
        let graph = Graph::from_gcx(text).unwrap();
        assert_eq!(graph.tool, GraphTool::GetDependents);
        assert_eq!(
            (graph.total, graph.truncated, graph.count),
            (None, Some(false), Some(1))
        );
        assert_eq!(graph.nodes[0].extra["path_abs"], json!("/r/a.go"));
        assert_eq!(graph.nodes[0].extra["is_test"], json!(false));
        assert_eq!(graph.edges[0].confidence, 1.0);
        assert_eq!(graph.edges[0].extra["tier"], json!("ast"));
        assert!(graph.edges[0].extra.get("via").is_none());
        assert_eq!(graph.edges[0].extra["line"], json!(9));
        // Written back, the later columns follow Gortex's order.
        let again = graph.to_gcx().unwrap();
        assert!(
            again.contains("fields=id,kind,name,path,path_abs,line,is_test "),
            "{again}"
        );
        assert!(
            again.contains(
                "fields=from,to,kind,origin,tier,confidence,label,line,file_path count=1"
            ),
            "{again}"
        );
        assert_eq!(Graph::from_gcx(&again).unwrap(), graph);
    }

    #[test]
    fn smart_context_with_and_without_task() {
        let context = SmartContext::default();
        let text = context.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=smart_context.symbols fields=id,kind,name,path,line,score,reason\n"
        );
        assert_eq!(SmartContext::from_gcx(&text).unwrap(), context);
        let context = SmartContext {
            task: "fix the parser".into(),
            symbols: vec![ScoredSymbol {
                id: "p".into(),
                line: 1,
                score: 0.5,
                ..ScoredSymbol::default()
            }],
            ..SmartContext::default()
        };
        let text = context.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=smart_context.task fields=task\nfix the parser\n\
             GCX1 tool=smart_context.symbols fields=id,kind,name,path,line,score,reason\np\t\t\t\t1\t0.5\t\n"
        );
        assert_eq!(SmartContext::from_gcx(&text).unwrap(), context);
    }

    #[test]
    fn extra_columns_are_kept_missing_ones_are_errors() {
        let text =
            "GCX1 tool=analyze.dead_code fields=id,kind,name,path,line,reason,extra count=1\n\
                    a\tfunction\tA\ta.go\t1\tunused\tx\n";
        let dead = DeadCode::from_gcx(text).unwrap();
        assert_eq!(dead.items[0].reason, "unused");
        assert_eq!(dead.items[0].extra["extra"], json!("x"));
        assert_eq!(dead.count, Some(1));
        let text = "GCX1 tool=analyze.dead_code fields=id,kind count=1\na\tfunction\n";
        let e = DeadCode::from_gcx(text).unwrap_err();
        assert_eq!((e.code(), e.line()), ("type_mismatch", Some(2)));
        let text = "GCX1 tool=analyze.dead_code fields=id,line\na\tx\n";
        let e = DeadCode::from_gcx(text).unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("invalid_value", Some(2), Some(3))
        );
        // A bare section without meta is the layout's rows.
        let text = "GCX1 tool=analyze.dead_code fields=id,line\na\t1\nb\t2\n";
        assert_eq!(DeadCode::from_gcx(text).unwrap().items.len(), 2);
    }

    #[test]
    fn comma_lists() {
        let cycles = Cycles {
            items: vec![Cycle {
                size: 2,
                severity: "high".into(),
                nodes: vec!["a".into(), "b".into()],
                ..Cycle::default()
            }],
            count: Some(1),
            ..Cycles::default()
        };
        let text = cycles.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=analyze.cycles fields=size,severity,nodes count=1\n2\thigh\ta,b\n"
        );
        assert_eq!(Cycles::from_gcx(&text).unwrap(), cycles);
        // Items a comma list cannot carry travel as a JSON array.
        let odd = Cycles {
            items: vec![Cycle {
                size: 1,
                severity: "low".into(),
                nodes: vec!["a,b".into(), String::new()],
                ..Cycle::default()
            }],
            ..Cycles::default()
        };
        let text = odd.to_gcx().unwrap();
        assert!(text.contains("[\"a,b\",\"\"]"), "{text}");
        assert_eq!(Cycles::from_gcx(&text).unwrap(), odd);
    }

    #[test]
    fn wrong_tool_is_an_error() {
        let text = SearchSymbols::default().to_gcx().unwrap();
        assert_eq!(
            FileSummary::from_gcx(&text).unwrap_err().code(),
            "unexpected_section"
        );
    }

    /// `value` written by the typed path (`to_gcx`) and by the value path: the same bytes,
    /// or the same error. Returns whether the typed path wrote it.
    fn same_as_value_path<T: ToolLayout + Layout>(value: &T) -> bool {
        let typed = value.to_gcx();
        let mut encoder = Encoder::in_memory(Limits::default());
        let via_value = write_value(value, &mut encoder).and_then(|()| encoder.into_text());
        // A streaming encoder takes the typed tables' two-pass path (an in-memory one their
        // one-pass path where it can).
        let streamed = value
            .write_gcx(Vec::new())
            .map(|bytes| String::from_utf8(bytes).unwrap());
        for other in [&via_value, &streamed] {
            match (&typed, other) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(
                    (a.code(), a.line(), a.column(), a.to_string()),
                    (b.code(), b.line(), b.column(), b.to_string())
                ),
                _ => panic!("typed {typed:?}, value path {via_value:?}, streamed {streamed:?}"),
            }
        }
        let mut probe = Encoder::in_memory(Limits::default());
        write_typed(value, &mut probe).unwrap_or(false)
    }

    /// `text` read by the typed path (`from_gcx`) and by the value path (every row a
    /// `Value`): the same response, or the same error.
    fn same_read_as_value_path<T: ToolLayout + Layout + PartialEq + std::fmt::Debug>(text: &str) {
        let typed = T::from_gcx(text);
        let mut decoder = StrDecoder::new(text);
        let via_value = crate::value::decode_layout_values(&mut decoder)
            .and_then(read_decoded::<T>)
            .and_then(|value| expect_end(&mut decoder).map(|()| value));
        match (&typed, &via_value) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
            (Err(a), Err(b)) => assert_eq!(
                (a.code(), a.line(), a.column(), a.to_string()),
                (b.code(), b.line(), b.column(), b.to_string()),
                "{text}"
            ),
            _ => panic!("typed {typed:?}, value path {via_value:?}: {text}"),
        }
    }

    fn check_file<T: ToolLayout + Layout + PartialEq + std::fmt::Debug>(
        name: &str,
        response: &Value,
    ) -> bool {
        let value: T = serde_json::from_value(response.clone())
            .unwrap_or_else(|e| panic!("{name}: not the layout's shape: {e}"));
        let typed = same_as_value_path(&value);
        same_read_as_value_path::<T>(&value.to_gcx().unwrap());
        // The value codec's own encoding of the response: another shape to read (or refuse).
        same_read_as_value_path::<T>(&crate::value::encode_any(value.tool(), response).unwrap());
        typed
    }

    /// Every code-intelligence file of the corpus (`fixtures/`): the typed path writes what
    /// the value path writes, and takes every layout (get_symbol_source's record too).
    #[test]
    fn typed_path_matches_value_path_on_the_corpus() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("the workspace's fixtures") {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
                .expect("a JSON fixture");
            let Some(tool) = file["fixture"]["gcx1_layout"].as_str() else {
                continue;
            };
            let name = path.display().to_string();
            let response = &file["response"];
            let typed = match tool {
                "search_symbols" => check_file::<SearchSymbols>(&name, response),
                "get_symbol_source" => check_file::<SymbolSource>(&name, response),
                "batch_symbols" => check_file::<BatchSymbols>(&name, response),
                "find_usages" => check_file::<FindUsages>(&name, response),
                "get_file_summary" => check_file::<FileSummary>(&name, response),
                "get_callers"
                | "get_call_chain"
                | "get_dependencies"
                | "get_dependents"
                | "find_implementations" => check_file::<Graph>(&name, response),
                "get_editing_context" => check_file::<EditingContext>(&name, response),
                "smart_context" => check_file::<SmartContext>(&name, response),
                "analyze.dead_code" => check_file::<DeadCode>(&name, response),
                "analyze.hotspots" => check_file::<Hotspots>(&name, response),
                "analyze.cycles" => check_file::<Cycles>(&name, response),
                "contracts.list" => check_file::<ContractsList>(&name, response),
                "contracts.orphans" => check_file::<ContractOrphans>(&name, response),
                other => panic!("{name}: no layout {other}"),
            };
            assert!(typed, "{name}");
            checked += 1;
        }
        assert!(checked >= 9, "{checked} code-intelligence files");
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        /// Text the column rules tell apart: empty, typed-looking, lists, CRLF, escapes.
        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                4 => "[a-z/._:]{1,8}",
                1 => Just(String::new()),
                1 => prop::sample::select(vec![
                    "1", "-0", "1e400", "true", "null", "[1]", "{}", "\"x\"", "a,b", "[a",
                    "a\r\nb", "a\nb", "\t", "\\", "#c", "GCX1 x", "x y", "é", "a=b",
                ])
                .prop_map(str::to_owned),
            ]
        }

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(|n| Value::Number(n.into())),
                text().prop_map(Value::String),
                prop::collection::vec(text(), 0..3).prop_map(|v| json!(v)),
                Just(json!({"k": [1, "a"]})),
            ]
        }

        /// Members beyond the named ones: later columns or meta, some under a named key
        /// (which the named field wins), some no header can carry, some in no column order
        /// (`aa`, `m`: where they fall among the named members decides their column).
        fn extra() -> impl Strategy<Value = Extra> {
            let key = prop::sample::select(vec![
                "path_abs", "is_test", "tier", "value", "id", "line", "a b", "x,y", "total",
                "notes", "aa", "m",
            ]);
            prop::collection::vec((key, leaf()), 0..3)
                .prop_map(|pairs| pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        }

        fn float() -> impl Strategy<Value = f64> {
            prop_oneof![
                4 => any::<f64>().prop_filter("finite", |f| f.is_finite()),
                2 => prop::sample::select(vec![0.0, -0.0, 0.5, 1.0, 1e300]),
                1 => prop::sample::select(vec![f64::NAN, f64::INFINITY]),
            ]
        }

        fn symbol_match() -> impl Strategy<Value = SymbolMatch> {
            (
                (text(), text(), text(), text()),
                any::<u64>(),
                text(),
                extra(),
            )
                .prop_map(|((id, kind, name, path), line, sig, extra)| SymbolMatch {
                    id,
                    kind,
                    name,
                    path,
                    line,
                    sig,
                    extra,
                })
        }

        fn edge() -> impl Strategy<Value = GraphEdge> {
            ((text(), text(), text()), float(), text(), extra()).prop_map(
                |((from, to, kind), confidence, label, extra)| GraphEdge {
                    from,
                    to,
                    kind,
                    confidence,
                    label,
                    extra,
                    ..GraphEdge::default()
                },
            )
        }

        fn cycle() -> impl Strategy<Value = Cycle> {
            (
                any::<u64>(),
                text(),
                prop::collection::vec(text(), 0..3),
                extra(),
            )
                .prop_map(|(size, severity, nodes, extra)| Cycle {
                    size,
                    severity,
                    nodes,
                    extra,
                })
        }

        fn orphan() -> impl Strategy<Value = Orphan> {
            ((text(), text()), (text(), text()), extra()).prop_map(
                |((contract_id, side), (repo, symbol), extra)| Orphan {
                    contract_id,
                    side,
                    repo,
                    symbol,
                    extra,
                },
            )
        }

        proptest! {
            #[test]
            fn typed_path_matches_value_path(
                results in prop::collection::vec(symbol_match(), 0..4),
                edges in prop::collection::vec(edge(), 0..3),
                cycles in prop::collection::vec(cycle(), 0..3),
                orphans in prop::collection::vec(orphan(), 0..3),
                total in any::<Option<u64>>(),
                truncated in any::<Option<bool>>(),
                outer in extra(),
            ) {
                same_as_value_path(&SearchSymbols {
                    results: results.clone(),
                    total,
                    truncated,
                    extra: outer.clone(),
                });
                same_as_value_path(&Graph {
                    tool: GraphTool::GetCallers,
                    nodes: results
                        .iter()
                        .map(|r| SymbolRef {
                            id: r.id.clone(),
                            line: r.line,
                            extra: r.extra.clone(),
                            ..SymbolRef::default()
                        })
                        .collect(),
                    edges,
                    total,
                    truncated,
                    count: total,
                    extra: outer.clone(),
                });
                same_as_value_path(&Cycles { items: cycles, count: total, extra: outer.clone() });
                same_as_value_path(&ContractOrphans { orphans, extra: outer });
            }

            /// get_symbol_source's record: odd text, empty fields (the seed's columns stay),
            /// members beyond the named ones (arrays among them, which the value path may
            /// make sections of).
            #[test]
            fn typed_record_matches_value_path(
                (id, kind, name, path) in (text(), text(), text(), text()),
                (start_line, end_line, from_line) in (any::<u64>(), any::<u64>(), any::<u64>()),
                (sig, etag, source) in (text(), text(), text()),
                extra in extra(),
            ) {
                same_as_value_path(&SymbolSource {
                    id,
                    kind,
                    name,
                    path,
                    start_line,
                    end_line,
                    from_line,
                    sig,
                    etag,
                    source,
                    extra,
                });
            }

            /// Payloads the layouts wrote, and the same with one edit (a character replaced,
            /// removed or added, a line repeated or dropped): the typed decode path reads what
            /// the value path reads, and refuses what it refuses, at the same place.
            #[test]
            fn typed_read_matches_value_path(
                results in prop::collection::vec(symbol_match(), 0..4),
                edges in prop::collection::vec(edge(), 0..3),
                cycles in prop::collection::vec(cycle(), 0..3),
                total in any::<Option<u64>>(),
                outer in extra(),
                edit in (any::<prop::sample::Index>(), 0..6u8, prop::sample::select(vec![
                    "\t", "\t\t", "x", "1", "\\", "\n", "\r", "[", "{", "\"", ",", "=", " ", "#",
                ])),
            ) {
                let search = SearchSymbols { results: results.clone(), total, truncated: None, extra: outer.clone() };
                let graph = Graph {
                    tool: GraphTool::GetCallers,
                    nodes: results.iter().map(|r| SymbolRef { id: r.id.clone(), line: r.line, extra: r.extra.clone(), ..SymbolRef::default() }).collect(),
                    edges: edges.into_iter().filter(|e| e.confidence.is_finite()).collect(),
                    total,
                    ..Graph::default()
                };
                let cycles = Cycles { items: cycles, count: total, extra: outer };
                let texts = [search.to_gcx(), graph.to_gcx(), cycles.to_gcx()];
                for (i, text) in texts.into_iter().enumerate() {
                    let Ok(text) = text else { continue };
                    let (at, how, piece) = &edit;
                    let mut edited = text.clone();
                    let mut at = at.index(text.len() + 1);
                    while !edited.is_char_boundary(at) {
                        at -= 1;
                    }
                    let lines: Vec<&str> = text.split_inclusive('\n').collect();
                    let line = at % lines.len().max(1);
                    match how {
                        0 => edited.insert_str(at, piece),
                        1 if at < edited.len() => {
                            edited.remove(at);
                        }
                        2 if at < edited.len() => {
                            edited.remove(at);
                            edited.insert_str(at, piece);
                        }
                        3 if !lines.is_empty() => {
                            let mut l = lines.clone();
                            l.insert(line, lines[line]);
                            edited = l.concat();
                        }
                        4 if !lines.is_empty() => {
                            let mut l = lines.clone();
                            l.remove(line);
                            edited = l.concat();
                        }
                        _ => {}
                    }
                    for text in [&text, &edited] {
                        match i {
                            0 => same_read_as_value_path::<SearchSymbols>(text),
                            1 => same_read_as_value_path::<Graph>(text),
                            _ => same_read_as_value_path::<Cycles>(text),
                        }
                    }
                }
            }
        }
    }
}
