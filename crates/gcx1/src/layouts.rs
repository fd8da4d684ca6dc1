//! The per-tool layouts of the spec, as typed responses encoded and decoded in one call.
//!
//! Each response type implements [`Layout`]. Encoding writes exactly the spec's fields in
//! the spec's order, with the header meta the Go reference server writes (`total`,
//! `truncated`, `count`, ...). Decoding maps cells by field name, so a payload with more
//! columns (later server versions grew several layouts) still decodes; a missing column is
//! an error. Sub-sections of the same tool that the layout does not know (`.notes`,
//! `.caller_notes`, ...) are skipped when they follow the layout's sections.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::de::deserialize_row;
use crate::decoder::{Decoder, SectionSource, StrDecoder};
use crate::encoder::{into_string, Cell, Encoder};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::header::Header;

/// A whole tool response with a fixed GCX1 layout: one call to encode, one to decode.
///
/// ```
/// use agentwire_gcx1::{Layout, SearchSymbols, SymbolMatch};
///
/// let response = SearchSymbols {
///     total: 7,
///     truncated: true,
///     results: vec![SymbolMatch {
///         id: "internal/mcp/server.go::NewServer".into(),
///         kind: "function".into(),
///         name: "NewServer".into(),
///         path: "internal/mcp/server.go".into(),
///         line: 62,
///         sig: "func NewServer(cfg Config) *Server".into(),
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
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub trait Layout: Sized {
    /// The fields the response's first section must declare (it may declare more, such as
    /// `batch_symbols`' optional `source`). A payload whose first section lacks one of them is
    /// not this layout's; tools use this to recognise a layout from a header line.
    const FIELDS: &'static [&'static str];

    /// Writes the response's sections.
    fn encode<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()>;

    /// Reads the response's sections from a streaming decoder, leaving any following
    /// section of another tool unread.
    fn decode<R: BufRead>(decoder: &mut Decoder<R>) -> Result<Self>;

    /// Reads the response's sections from a borrowed decoder, leaving any following section
    /// of another tool unread.
    fn decode_str(decoder: &mut StrDecoder<'_>) -> Result<Self>;

    /// The response as GCX1 text.
    fn to_gcx(&self) -> Result<String> {
        let mut encoder = Encoder::new(Vec::new());
        self.encode(&mut encoder)?;
        into_string(encoder.finish()?)
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

/// The generic reading and writing of one layout.
trait Sections: Sized {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()>;
    fn read<S: SectionSource>(source: &mut S) -> Result<Self>;
}

macro_rules! layout {
    ($($t:ty => $fields:expr),* $(,)?) => {$(
        impl Layout for $t {
            const FIELDS: &'static [&'static str] = $fields;

            fn encode<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
                let result = Sections::write(self, encoder);
                result.map_err(|e| e.or_position(Position::new(encoder.lines() + 1, 1)))
            }

            fn decode<R: BufRead>(decoder: &mut Decoder<R>) -> Result<Self> {
                Sections::read(decoder)
            }

            fn decode_str(decoder: &mut StrDecoder<'_>) -> Result<Self> {
                Sections::read(decoder)
            }
        }
    )*};
}

layout!(
    SearchSymbols => SymbolMatch::FIELDS,
    SymbolSource => SOURCE_FIELDS,
    BatchSymbols => BATCH_REQUIRED_FIELDS,
    FindUsages => Usage::FIELDS,
    FileSummary => FileSymbol::FIELDS,
    Graph => SymbolRef::FIELDS,
    EditingContext => EditTarget::FIELDS,
    SmartContext => SMART_CONTEXT_FIELDS,
    DeadCode => DeadCodeItem::FIELDS,
    Hotspots => Hotspot::FIELDS,
    Cycles => CYCLE_FIELDS,
    ContractsList => CONTRACT_FIELDS,
    ContractOrphans => Orphan::FIELDS,
);

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

/// Skips following sections named `<base>.<something>` that the layout does not read.
fn skip_subsections<S: SectionSource>(source: &mut S, base: &str) -> Result<()> {
    while let Some(tool) = source.peek_tool()? {
        let unknown = tool
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('.'));
        if !unknown {
            break;
        }
        source.next_header()?;
    }
    Ok(())
}

pub(crate) fn read_rows<S: SectionSource, T: DeserializeOwned>(source: &mut S) -> Result<Vec<T>> {
    let mut rows = Vec::new();
    while let Some(row) = source.with_next_row(|row, fields| deserialize_row(fields, row))? {
        rows.push(row);
    }
    Ok(rows)
}

fn meta_error(key: &str, line: u64, message: String) -> Error {
    Error::at(
        ErrorKind::InvalidMeta {
            key: key.to_owned(),
            message,
        },
        line,
        1,
    )
}

fn meta_text<'h>(header: &'h Header, key: &str, line: u64) -> Result<&'h str> {
    header
        .meta_value(key)
        .ok_or_else(|| meta_error(key, line, format!("section `{}` lacks it", header.tool)))
}

fn meta_u64(header: &Header, key: &str, line: u64) -> Result<u64> {
    let text = meta_text(header, key, line)?;
    text.parse()
        .map_err(|_| meta_error(key, line, format!("expected a count, found {text:?}")))
}

fn meta_bool(header: &Header, key: &str, line: u64) -> Result<bool> {
    match meta_text(header, key, line)? {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(meta_error(
            key,
            line,
            format!("expected `true` or `false`, found {other:?}"),
        )),
    }
}

/// The meta pairs of `header` other than `known`.
fn extra_meta(header: &Header, known: &[&str]) -> BTreeMap<String, String> {
    header
        .meta
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A header with the layout's own meta pairs and the caller's extra ones.
fn header(
    tool: &str,
    fields: &[&str],
    own: &[(&str, String)],
    extra: &BTreeMap<String, String>,
) -> Result<Header> {
    let mut header = Header::new(tool, fields.iter().copied());
    for (key, value) in extra {
        if own.iter().any(|(k, _)| k == key) {
            return Err(ErrorKind::ReservedMetaKey { key: key.clone() }.into());
        }
        header.meta.insert(key.clone(), value.clone());
    }
    for (key, value) in own {
        header.meta.insert((*key).to_owned(), value.clone());
    }
    Ok(header)
}

fn write_rows<W: Write, T: Serialize>(encoder: &mut Encoder<W>, rows: &[T]) -> Result<()> {
    rows.iter().try_for_each(|row| encoder.serialize_row(row))
}

fn is_empty(map: &BTreeMap<String, String>) -> bool {
    map.is_empty()
}

/// Comma-joined lists in one cell, as `analyze.cycles` and `contracts.list` write them.
mod comma {
    use serde::{de, ser, Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(items: &[String], s: S) -> Result<S::Ok, S::Error> {
        if let Some(bad) = items.iter().find(|i| i.is_empty() || i.contains(',')) {
            return Err(ser::Error::custom(format!(
                "list item {bad:?} cannot be written in a comma-separated cell"
            )));
        }
        s.serialize_str(&items.join(","))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        let text = String::deserialize(d)?;
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let items: Vec<String> = text.split(',').map(str::to_owned).collect();
        if items.iter().any(String::is_empty) {
            return Err(de::Error::custom("empty item in a comma-separated list"));
        }
        Ok(items)
    }
}

// ---------------------------------------------------------------------------------------
// search_symbols

/// One `search_symbols` row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl SymbolMatch {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &["id", "kind", "name", "path", "line", "sig"];
}

/// A `search_symbols` response: header meta `total` and `truncated`, a `# N result(s)`
/// comment, one row per hit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchSymbols {
    /// Hits before the limit was applied.
    pub total: u64,
    /// Whether hits were cut by the limit.
    pub truncated: bool,
    /// The hits.
    pub results: Vec<SymbolMatch>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

impl Sections for SearchSymbols {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let own = [
            ("total", self.total.to_string()),
            ("truncated", self.truncated.to_string()),
        ];
        encoder.begin_section(&header(
            "search_symbols",
            SymbolMatch::FIELDS,
            &own,
            &self.meta,
        )?)?;
        encoder.write_comment(&format!("{} result(s)", self.results.len()))?;
        write_rows(encoder, &self.results)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, line) = expect_section(source, "search_symbols", SymbolMatch::FIELDS)?;
        let value = SearchSymbols {
            total: meta_u64(&header, "total", line)?,
            truncated: meta_bool(&header, "truncated", line)?,
            results: read_rows(source)?,
            meta: extra_meta(&header, &["total", "truncated"]),
        };
        skip_subsections(source, "search_symbols")?;
        Ok(value)
    }
}

// ---------------------------------------------------------------------------------------
// get_symbol_source

/// A `get_symbol_source` response: exactly one row; the etag is also header meta.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
struct SourceRow {
    id: String,
    kind: String,
    name: String,
    path: String,
    start_line: u64,
    end_line: u64,
    from_line: u64,
    sig: String,
    etag: String,
    source: String,
}

const SOURCE_FIELDS: &[&str] = &[
    "id",
    "kind",
    "name",
    "path",
    "start_line",
    "end_line",
    "from_line",
    "sig",
    "etag",
    "source",
];

fn single_row<S: SectionSource, T: DeserializeOwned>(
    source: &mut S,
    tool: &str,
    line: u64,
) -> Result<T> {
    let mut rows = read_rows::<S, T>(source)?;
    if rows.len() != 1 {
        return Err(Error::at(
            ErrorKind::RowCount {
                tool: tool.to_owned(),
                expected: "1".into(),
                found: rows.len() as u64,
            },
            line,
            1,
        ));
    }
    rows.pop()
        .ok_or_else(|| ErrorKind::Custom("no row".into()).into())
}

impl Sections for SymbolSource {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let own = [("etag", self.etag.clone())];
        encoder.begin_section(&header(
            "get_symbol_source",
            SOURCE_FIELDS,
            &own,
            &self.meta,
        )?)?;
        encoder.serialize_row(&SourceRow {
            id: self.id.clone(),
            kind: self.kind.clone(),
            name: self.name.clone(),
            path: self.path.clone(),
            start_line: self.start_line,
            end_line: self.end_line,
            from_line: self.from_line,
            sig: self.sig.clone(),
            etag: self.etag.clone(),
            source: self.source.clone(),
        })
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, line) = expect_section(source, "get_symbol_source", SOURCE_FIELDS)?;
        let row: SourceRow = single_row(source, "get_symbol_source", line)?;
        skip_subsections(source, "get_symbol_source")?;
        Ok(SymbolSource {
            id: row.id,
            kind: row.kind,
            name: row.name,
            path: row.path,
            start_line: row.start_line,
            end_line: row.end_line,
            from_line: row.from_line,
            sig: row.sig,
            etag: row.etag,
            source: row.source,
            meta: extra_meta(&header, &["etag"]),
        })
    }
}

// ---------------------------------------------------------------------------------------
// batch_symbols

/// One `batch_symbols` row: a resolved symbol, or the ID that could not be resolved with
/// `error` set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSymbol {
    /// The node ID.
    pub id: String,
    /// The node kind.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The file path.
    pub path: String,
    /// The first line; empty when unresolved.
    pub start_line: Option<u64>,
    /// The last line; empty when unresolved.
    pub end_line: Option<u64>,
    /// The signature.
    pub sig: String,
    /// The source text (a column only when the response includes source).
    #[serde(default)]
    pub source: String,
    /// Non-empty when the symbol could not be resolved.
    pub error: String,
}

/// A `batch_symbols` response: meta `count`; the `source` column only when
/// `include_source`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSymbols {
    /// Whether rows carry a `source` column.
    pub include_source: bool,
    /// The symbols, in request order.
    pub symbols: Vec<BatchSymbol>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

/// The fields of `batch_symbols` besides the optional `source` (which comes before `error`).
const BATCH_REQUIRED_FIELDS: &[&str] = &[
    "id",
    "kind",
    "name",
    "path",
    "start_line",
    "end_line",
    "sig",
    "error",
];

impl Sections for BatchSymbols {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let (error, leading) = BATCH_REQUIRED_FIELDS
            .split_last()
            .expect("the batch field list is not empty");
        let mut fields = leading.to_vec();
        if self.include_source {
            fields.push("source");
        }
        fields.push(error);
        let own = [("count", self.symbols.len().to_string())];
        encoder.begin_section(&header("batch_symbols", &fields, &own, &self.meta)?)?;
        for s in &self.symbols {
            if !self.include_source && !s.source.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidValue {
                        field: "source".into(),
                        message: format!(
                            "symbol {:?} has source, but the response does not include source",
                            s.id
                        ),
                    },
                    None,
                ));
            }
            let mut cells: Vec<&dyn Cell> = vec![
                &s.id,
                &s.kind,
                &s.name,
                &s.path,
                &s.start_line,
                &s.end_line,
                &s.sig,
            ];
            if self.include_source {
                cells.push(&s.source);
            }
            cells.push(&s.error);
            encoder.write_row(cells)?;
        }
        Ok(())
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, _) = expect_section(source, "batch_symbols", BATCH_REQUIRED_FIELDS)?;
        let value = BatchSymbols {
            include_source: header.field_index("source").is_some(),
            symbols: read_rows(source)?,
            meta: extra_meta(&header, &["count"]),
        };
        skip_subsections(source, "batch_symbols")?;
        Ok(value)
    }
}

// ---------------------------------------------------------------------------------------
// find_usages

/// One `find_usages` row: an edge into the queried symbol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// The caller's start line.
    pub from_line: u64,
}

impl Usage {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &[
        "from",
        "to",
        "edge_kind",
        "origin",
        "confidence",
        "from_name",
        "from_path",
        "from_line",
    ];
}

/// A `find_usages` response: meta `edges` (the row count).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FindUsages {
    /// The usages.
    pub usages: Vec<Usage>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

impl Sections for FindUsages {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let own = [("edges", self.usages.len().to_string())];
        encoder.begin_section(&header("find_usages", Usage::FIELDS, &own, &self.meta)?)?;
        write_rows(encoder, &self.usages)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, _) = expect_section(source, "find_usages", Usage::FIELDS)?;
        let value = FindUsages {
            usages: read_rows(source)?,
            meta: extra_meta(&header, &["edges"]),
        };
        skip_subsections(source, "find_usages")?;
        Ok(value)
    }
}

// ---------------------------------------------------------------------------------------
// get_file_summary

/// One `get_file_summary` row: a symbol of the file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl FileSymbol {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &["id", "kind", "name", "line", "sig"];
}

/// A `get_file_summary` response: meta `total_nodes`, `total_edges`, `truncated`, `etag`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSummary {
    /// Nodes in the file.
    pub total_nodes: u64,
    /// Edges touching the file.
    pub total_edges: u64,
    /// Whether rows were cut.
    pub truncated: bool,
    /// The file's content hash.
    pub etag: String,
    /// The symbols.
    pub symbols: Vec<FileSymbol>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

impl Sections for FileSummary {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let own = [
            ("total_nodes", self.total_nodes.to_string()),
            ("total_edges", self.total_edges.to_string()),
            ("truncated", self.truncated.to_string()),
            ("etag", self.etag.clone()),
        ];
        encoder.begin_section(&header(
            "get_file_summary",
            FileSymbol::FIELDS,
            &own,
            &self.meta,
        )?)?;
        write_rows(encoder, &self.symbols)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, line) = expect_section(source, "get_file_summary", FileSymbol::FIELDS)?;
        let value = FileSummary {
            total_nodes: meta_u64(&header, "total_nodes", line)?,
            total_edges: meta_u64(&header, "total_edges", line)?,
            truncated: meta_bool(&header, "truncated", line)?,
            etag: meta_text(&header, "etag", line)?.to_owned(),
            symbols: read_rows(source)?,
            meta: extra_meta(
                &header,
                &["total_nodes", "total_edges", "truncated", "etag"],
            ),
        };
        skip_subsections(source, "get_file_summary")?;
        Ok(value)
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
}

impl GraphTool {
    /// Every graph tool.
    pub const ALL: [GraphTool; 5] = [
        GraphTool::GetCallers,
        GraphTool::GetCallChain,
        GraphTool::GetDependencies,
        GraphTool::GetDependents,
        GraphTool::FindImplementations,
    ];

    /// The tool name.
    pub fn as_str(self) -> &'static str {
        match self {
            GraphTool::GetCallers => "get_callers",
            GraphTool::GetCallChain => "get_call_chain",
            GraphTool::GetDependencies => "get_dependencies",
            GraphTool::GetDependents => "get_dependents",
            GraphTool::FindImplementations => "find_implementations",
        }
    }
}

/// A symbol row: `.nodes` of the graph tools, and `.callers` / `.dependencies` of
/// `get_editing_context`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl SymbolRef {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &["id", "kind", "name", "path", "line"];
}

/// One `.edges` row of the graph tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
}

impl GraphEdge {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] =
        &["from", "to", "kind", "origin", "confidence", "label"];
}

/// A graph tool's response: `<tool>.nodes` (meta `total`, `truncated`) then `<tool>.edges`
/// (meta `count`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// Which tool answered.
    pub tool: GraphTool,
    /// Nodes before truncation.
    pub total: u64,
    /// Whether nodes were cut.
    pub truncated: bool,
    /// The nodes.
    pub nodes: Vec<SymbolRef>,
    /// The edges.
    pub edges: Vec<GraphEdge>,
    /// Further meta pairs of the `.nodes` header.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub nodes_meta: BTreeMap<String, String>,
    /// Further meta pairs of the `.edges` header.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub edges_meta: BTreeMap<String, String>,
}

impl Sections for Graph {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let tool = self.tool.as_str();
        let own = [
            ("total", self.total.to_string()),
            ("truncated", self.truncated.to_string()),
        ];
        let nodes = header(
            &format!("{tool}.nodes"),
            SymbolRef::FIELDS,
            &own,
            &self.nodes_meta,
        )?;
        encoder.begin_section(&nodes)?;
        write_rows(encoder, &self.nodes)?;
        let own = [("count", self.edges.len().to_string())];
        let edges = header(
            &format!("{tool}.edges"),
            GraphEdge::FIELDS,
            &own,
            &self.edges_meta,
        )?;
        encoder.begin_section(&edges)?;
        write_rows(encoder, &self.edges)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let next = source.peek_tool()?;
        let tool = GraphTool::ALL
            .into_iter()
            .find(|t| next.as_deref().and_then(|n| n.strip_suffix(".nodes")) == Some(t.as_str()))
            .ok_or_else(|| {
                unexpected(
                    source.line_no(),
                    "a graph tool's `.nodes` section".into(),
                    next.as_deref(),
                )
            })?;
        let name = tool.as_str();
        let (nodes_header, line) =
            expect_section(source, &format!("{name}.nodes"), SymbolRef::FIELDS)?;
        let total = meta_u64(&nodes_header, "total", line)?;
        let truncated = meta_bool(&nodes_header, "truncated", line)?;
        let nodes = read_rows(source)?;
        let (edges_header, _) =
            expect_section(source, &format!("{name}.edges"), GraphEdge::FIELDS)?;
        let edges = read_rows(source)?;
        skip_subsections(source, name)?;
        Ok(Graph {
            tool,
            total,
            truncated,
            nodes,
            edges,
            nodes_meta: extra_meta(&nodes_header, &["total", "truncated"]),
            edges_meta: extra_meta(&edges_header, &["count"]),
        })
    }
}

// ---------------------------------------------------------------------------------------
// get_editing_context

/// The `.target` row of `get_editing_context`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl EditTarget {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &[
        "id",
        "kind",
        "name",
        "path",
        "start_line",
        "end_line",
        "sig",
        "etag",
    ];
}

#[derive(Serialize, Deserialize)]
struct TestPath {
    path: String,
}

/// A `get_editing_context` response: `.target` (one row), `.callers`, `.dependencies` and
/// `.tests` (one `path` per row; an empty path cannot be written).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditingContext {
    /// The symbol being edited.
    pub target: EditTarget,
    /// Its callers.
    pub callers: Vec<SymbolRef>,
    /// What it depends on.
    pub dependencies: Vec<SymbolRef>,
    /// Test files covering it.
    pub tests: Vec<String>,
}

impl Sections for EditingContext {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let none = BTreeMap::new();
        let section = |name: &str, fields: &[&str]| {
            header(&format!("get_editing_context.{name}"), fields, &[], &none)
        };
        encoder.begin_section(&section("target", EditTarget::FIELDS)?)?;
        encoder.serialize_row(&self.target)?;
        encoder.begin_section(&section("callers", SymbolRef::FIELDS)?)?;
        write_rows(encoder, &self.callers)?;
        encoder.begin_section(&section("dependencies", SymbolRef::FIELDS)?)?;
        write_rows(encoder, &self.dependencies)?;
        encoder.begin_section(&section("tests", &["path"])?)?;
        self.tests
            .iter()
            .try_for_each(|path| encoder.write_row([path]))
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (_, line) = expect_section(source, "get_editing_context.target", EditTarget::FIELDS)?;
        let target = single_row(source, "get_editing_context.target", line)?;
        expect_section(source, "get_editing_context.callers", SymbolRef::FIELDS)?;
        let callers = read_rows(source)?;
        expect_section(
            source,
            "get_editing_context.dependencies",
            SymbolRef::FIELDS,
        )?;
        let dependencies = read_rows(source)?;
        expect_section(source, "get_editing_context.tests", &["path"])?;
        let tests = read_rows::<S, TestPath>(source)?
            .into_iter()
            .map(|t| t.path)
            .collect();
        skip_subsections(source, "get_editing_context")?;
        Ok(EditingContext {
            target,
            callers,
            dependencies,
            tests,
        })
    }
}

// ---------------------------------------------------------------------------------------
// smart_context

/// One `.symbols` row of `smart_context`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
}

impl ScoredSymbol {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] =
        &["id", "kind", "name", "path", "line", "score", "reason"];
}

#[derive(Serialize, Deserialize)]
struct TaskRow {
    task: String,
}

/// A `smart_context` response: `.task` (field `task`; one row, or none when the task is
/// empty, since a one-column row cannot be empty) and `.symbols`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmartContext {
    /// The task the context was built for.
    pub task: String,
    /// The symbols, most relevant first.
    pub symbols: Vec<ScoredSymbol>,
}

/// The one field of `smart_context.task`.
const SMART_CONTEXT_FIELDS: &[&str] = &["task"];

impl Sections for SmartContext {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        encoder.begin_section(&Header::new(
            "smart_context.task",
            SMART_CONTEXT_FIELDS.iter().copied(),
        ))?;
        if !self.task.is_empty() {
            encoder.write_row([&self.task])?;
        }
        encoder.begin_section(&Header::new(
            "smart_context.symbols",
            ScoredSymbol::FIELDS.iter().copied(),
        ))?;
        write_rows(encoder, &self.symbols)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (_, line) = expect_section(source, "smart_context.task", SMART_CONTEXT_FIELDS)?;
        let mut tasks = read_rows::<S, TaskRow>(source)?;
        if tasks.len() > 1 {
            return Err(Error::at(
                ErrorKind::RowCount {
                    tool: "smart_context.task".into(),
                    expected: "0 or 1".into(),
                    found: tasks.len() as u64,
                },
                line,
                1,
            ));
        }
        let task = tasks.pop().map(|t| t.task).unwrap_or_default();
        expect_section(source, "smart_context.symbols", ScoredSymbol::FIELDS)?;
        let symbols = read_rows(source)?;
        skip_subsections(source, "smart_context")?;
        Ok(SmartContext { task, symbols })
    }
}

// ---------------------------------------------------------------------------------------
// analyze.dead_code / analyze.hotspots / analyze.cycles

/// One `analyze.dead_code` row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl DeadCodeItem {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &["id", "kind", "name", "path", "line", "reason"];
}

/// An `analyze` response of kind `dead_code` (section `analyze.dead_code`, meta `count`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadCode {
    /// The findings.
    pub items: Vec<DeadCodeItem>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

/// One `analyze.hotspots` row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
}

impl Hotspot {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &[
        "id",
        "name",
        "path",
        "line",
        "fan_in",
        "fan_out",
        "cross_cut",
        "score",
    ];
}

/// An `analyze` response of kind `hotspots` (section `analyze.hotspots`, meta `count`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hotspots {
    /// The findings.
    pub items: Vec<Hotspot>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

/// One `analyze.cycles` row; `nodes` travels comma-joined, so node IDs must be non-empty
/// and free of commas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cycle {
    /// The number of nodes in the cycle.
    pub size: u64,
    /// The severity.
    pub severity: String,
    /// The node IDs.
    pub nodes: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct CycleRow {
    size: u64,
    severity: String,
    #[serde(with = "comma")]
    nodes: Vec<String>,
}

/// An `analyze` response of kind `cycles` (section `analyze.cycles`, meta `count`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cycles {
    /// The findings.
    pub items: Vec<Cycle>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

fn write_counted<W: Write, T: Serialize>(
    encoder: &mut Encoder<W>,
    tool: &str,
    fields: &[&str],
    rows: &[T],
    meta: &BTreeMap<String, String>,
) -> Result<()> {
    let own = [("count", rows.len().to_string())];
    encoder.begin_section(&header(tool, fields, &own, meta)?)?;
    write_rows(encoder, rows)
}

fn read_counted<S: SectionSource, T: DeserializeOwned>(
    source: &mut S,
    tool: &str,
    fields: &[&str],
) -> Result<(Vec<T>, BTreeMap<String, String>)> {
    let (header, _) = expect_section(source, tool, fields)?;
    let rows = read_rows(source)?;
    skip_subsections(source, tool)?;
    Ok((rows, extra_meta(&header, &["count"])))
}

impl Sections for DeadCode {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        write_counted(
            encoder,
            "analyze.dead_code",
            DeadCodeItem::FIELDS,
            &self.items,
            &self.meta,
        )
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (items, meta) = read_counted(source, "analyze.dead_code", DeadCodeItem::FIELDS)?;
        Ok(DeadCode { items, meta })
    }
}

impl Sections for Hotspots {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        write_counted(
            encoder,
            "analyze.hotspots",
            Hotspot::FIELDS,
            &self.items,
            &self.meta,
        )
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (items, meta) = read_counted(source, "analyze.hotspots", Hotspot::FIELDS)?;
        Ok(Hotspots { items, meta })
    }
}

const CYCLE_FIELDS: &[&str] = &["size", "severity", "nodes"];

impl Sections for Cycles {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let rows: Vec<CycleRow> = self
            .items
            .iter()
            .map(|c| CycleRow {
                size: c.size,
                severity: c.severity.clone(),
                nodes: c.nodes.clone(),
            })
            .collect();
        write_counted(encoder, "analyze.cycles", CYCLE_FIELDS, &rows, &self.meta)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (rows, meta) = read_counted::<S, CycleRow>(source, "analyze.cycles", CYCLE_FIELDS)?;
        let items = rows
            .into_iter()
            .map(|r| Cycle {
                size: r.size,
                severity: r.severity,
                nodes: r.nodes,
            })
            .collect();
        Ok(Cycles { items, meta })
    }
}

// ---------------------------------------------------------------------------------------
// contracts.list / contracts.orphans

/// One `contracts.list` row; `providers` and `consumers` travel comma-joined, so their items
/// must be non-empty and free of commas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contract {
    /// The contract ID.
    pub id: String,
    /// The contract type (field `type`).
    #[serde(rename = "type")]
    pub contract_type: String,
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// The service.
    pub service: String,
    /// Symbols providing it.
    pub providers: Vec<String>,
    /// Symbols consuming it.
    pub consumers: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct ContractRow {
    id: String,
    #[serde(rename = "type")]
    contract_type: String,
    method: String,
    path: String,
    service: String,
    #[serde(with = "comma")]
    providers: Vec<String>,
    #[serde(with = "comma")]
    consumers: Vec<String>,
}

const CONTRACT_FIELDS: &[&str] = &[
    "id",
    "type",
    "method",
    "path",
    "service",
    "providers",
    "consumers",
];

/// A `contracts` response of action `list` (section `contracts.list`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractsList {
    /// The contracts.
    pub contracts: Vec<Contract>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

impl Sections for ContractsList {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        encoder.begin_section(&header("contracts.list", CONTRACT_FIELDS, &[], &self.meta)?)?;
        for c in &self.contracts {
            encoder.serialize_row(&ContractRow {
                id: c.id.clone(),
                contract_type: c.contract_type.clone(),
                method: c.method.clone(),
                path: c.path.clone(),
                service: c.service.clone(),
                providers: c.providers.clone(),
                consumers: c.consumers.clone(),
            })?;
        }
        Ok(())
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, _) = expect_section(source, "contracts.list", CONTRACT_FIELDS)?;
        let rows: Vec<ContractRow> = read_rows(source)?;
        skip_subsections(source, "contracts.list")?;
        Ok(ContractsList {
            contracts: rows
                .into_iter()
                .map(|r| Contract {
                    id: r.id,
                    contract_type: r.contract_type,
                    method: r.method,
                    path: r.path,
                    service: r.service,
                    providers: r.providers,
                    consumers: r.consumers,
                })
                .collect(),
            meta: extra_meta(&header, &[]),
        })
    }
}

/// One `contracts.orphans` row: a contract side without a counterpart.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orphan {
    /// The contract ID.
    pub contract_id: String,
    /// `provider` or `consumer`.
    pub side: String,
    /// The repository.
    pub repo: String,
    /// The symbol.
    pub symbol: String,
}

impl Orphan {
    /// The section's fields.
    pub const FIELDS: &'static [&'static str] = &["contract_id", "side", "repo", "symbol"];
}

/// A `contracts` response of action `check` (section `contracts.orphans`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractOrphans {
    /// The orphans.
    pub orphans: Vec<Orphan>,
    /// Further header meta pairs.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub meta: BTreeMap<String, String>,
}

impl Sections for ContractOrphans {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        encoder.begin_section(&header(
            "contracts.orphans",
            Orphan::FIELDS,
            &[],
            &self.meta,
        )?)?;
        write_rows(encoder, &self.orphans)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (header, _) = expect_section(source, "contracts.orphans", Orphan::FIELDS)?;
        let orphans = read_rows(source)?;
        skip_subsections(source, "contracts.orphans")?;
        Ok(ContractOrphans {
            orphans,
            meta: extra_meta(&header, &[]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Layout::FIELDS` is what each layout's first header really declares.
    #[test]
    fn fields_are_declared_by_the_first_header() {
        fn check<L: Layout + Default>() {
            let text = L::default().to_gcx().unwrap();
            let first = text.lines().next().unwrap();
            let declared: Vec<&str> = first
                .split(' ')
                .find_map(|token| token.strip_prefix("fields="))
                .unwrap()
                .split(',')
                .collect();
            for field in L::FIELDS {
                assert!(declared.contains(field), "{field} missing from {first}");
            }
        }
        check::<SearchSymbols>();
        check::<SymbolSource>();
        check::<BatchSymbols>();
        check::<FindUsages>();
        check::<FileSummary>();
        check::<Graph>();
        check::<EditingContext>();
        check::<SmartContext>();
        check::<DeadCode>();
        check::<Hotspots>();
        check::<Cycles>();
        check::<ContractsList>();
        check::<ContractOrphans>();
    }

    #[test]
    fn graph_round_trip_and_bytes() {
        let graph = Graph {
            tool: GraphTool::GetCallers,
            total: 2,
            truncated: false,
            nodes: vec![SymbolRef {
                id: "a.go::F".into(),
                kind: "function".into(),
                name: "F".into(),
                path: "a.go".into(),
                line: 3,
            }],
            edges: vec![GraphEdge {
                from: "a.go::F".into(),
                to: "b.go::G".into(),
                kind: "calls".into(),
                origin: "ast_resolved".into(),
                confidence: 0.9,
                label: "high".into(),
            }],
            ..Graph::default()
        };
        let text = graph.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=get_callers.nodes fields=id,kind,name,path,line total=2 truncated=false\n\
             a.go::F\tfunction\tF\ta.go\t3\n\
             GCX1 tool=get_callers.edges fields=from,to,kind,origin,confidence,label count=1\n\
             a.go::F\tb.go::G\tcalls\tast_resolved\t0.9\thigh\n"
        );
        assert_eq!(Graph::from_gcx(&text).unwrap(), graph);
        let mut later = text.clone();
        later.push_str("GCX1 tool=get_callers.caller_notes fields=id count=0\n");
        assert_eq!(Graph::from_gcx(&later).unwrap(), graph);
        later.push_str("GCX1 tool=other fields=id\n");
        assert_eq!(
            Graph::from_gcx(&later).unwrap_err().code(),
            "unexpected_section"
        );
    }

    #[test]
    fn smart_context_with_empty_task() {
        let context = SmartContext::default();
        let text = context.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=smart_context.task fields=task\n\
             GCX1 tool=smart_context.symbols fields=id,kind,name,path,line,score,reason\n"
        );
        assert_eq!(SmartContext::from_gcx(&text).unwrap(), context);
    }

    #[test]
    fn extra_columns_are_ignored_missing_ones_are_errors() {
        let text =
            "GCX1 tool=analyze.dead_code fields=id,kind,name,path,line,reason,extra count=1\n\
                    a\tfunction\tA\ta.go\t1\tunused\tx\n";
        let dead = DeadCode::from_gcx(text).unwrap();
        assert_eq!(dead.items[0].reason, "unused");
        let text = "GCX1 tool=analyze.dead_code fields=id,kind count=0\n";
        let e = DeadCode::from_gcx(text).unwrap_err();
        assert_eq!(e.code(), "invalid_meta");
    }

    #[test]
    fn comma_lists() {
        let cycles = Cycles {
            items: vec![Cycle {
                size: 2,
                severity: "high".into(),
                nodes: vec!["a".into(), "b".into()],
            }],
            ..Cycles::default()
        };
        let text = cycles.to_gcx().unwrap();
        assert_eq!(
            text,
            "GCX1 tool=analyze.cycles fields=size,severity,nodes count=1\n2\thigh\ta,b\n"
        );
        assert_eq!(Cycles::from_gcx(&text).unwrap(), cycles);
        let bad = Cycles {
            items: vec![Cycle {
                size: 1,
                severity: "low".into(),
                nodes: vec!["a,b".into()],
            }],
            ..Cycles::default()
        };
        assert_eq!(bad.to_gcx().unwrap_err().code(), "custom");
    }
}
