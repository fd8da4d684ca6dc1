//! GCX1: the tab-delimited, line-oriented wire format for agent tool responses.
//!
//! GCX1 (the Gortex compact wire format) carries MCP tool responses in fewer tokens than
//! JSON: a header line declares the tool and the column order, then every row is one line of
//! TAB-separated cells.
//!
//! ```text
//! GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=7 truncated=false
//! # 2 result(s)
//! a.go::NewServer<TAB>function<TAB>NewServer<TAB>a.go<TAB>62<TAB>func NewServer() *Server
//! a.go::Server.Start<TAB>method<TAB>Start<TAB>a.go<TAB>118<TAB>
//! ```
//!
//! This crate writes any JSON value (or `Serialize` type) as GCX1 in fewer tokens than
//! compact JSON and reads it back exactly, and reads every payload Gortex (the format's
//! origin) writes back into the JSON response it was made from. Every bad input is a typed
//! [`Error`] with a line and column, and every decoder enforces [`Limits`], which the
//! encoders respect too. `docs/gcx1.md` in the repository describes the shapes, the Gortex
//! layouts and each decision.
//!
//! # The layers
//!
//! | layer | types | for |
//! |---|---|---|
//! | any value, serde_json-style | [`to_string`], [`to_vec`], [`to_writer`], [`from_str`], [`from_slice`], [`from_reader`], [`Options`], [`encode_any`], [`decode_any`] | any JSON value or serde type: wrapped responses as sections, cells typed by what they look like, exact round trips |
//! | tool layouts | [`Layout`]: [`SearchSymbols`], [`SymbolSource`], [`Graph`], [`DeadCode`], ... | Gortex's tools as typed responses in one call |
//! | sections and rows | [`Header`], [`Encoder`], [`Decoder`] (over `io::BufRead`), [`StrDecoder`] (over `&str`), [`Row`] | streaming any layout, borrowed cells without allocation |
//! | serde rows | [`Encoder::serialize_row`], [`StrDecoder::deserialize`], [`Decoder::deserialize`] | your own row structs, csv-style |
//! | workspace shapes | [`ToolDefinitions`], [`ToolRequest`], [`ErrorEnvelope`], [`check_call`] | the scope registry, call envelope and protocol errors |
//! | format selection | [`Format`], [`parse_format`] | the `format` argument of a tool call |
//!
//! # Any value
//!
//! An object holding arrays of objects is written one section per array, its other scalar
//! members in the header; cells carry no type letters unless their text would read as
//! something else (`"42"` the string needs one, `42` the number does not):
//!
//! ```
//! use serde_json::json;
//!
//! let value = json!({
//!     "edges": [{"from": "b.go::G", "to": "a.go::F"}],
//!     "nodes": [{"id": "a.go::F", "line": 3}, {"id": "b.go::G", "line": 9}],
//!     "truncated": false
//! });
//! let text = agentwire_gcx1::encode_any("get_callers", &value)?;
//! assert_eq!(
//!     text,
//!     "GCX1 tool=get_callers.edges fields=from,to truncated=false\nb.go::G\ta.go::F\n\
//!      GCX1 tool=get_callers.nodes fields=id,line\na.go::F\t3\nb.go::G\t9\n"
//! );
//! assert_eq!(agentwire_gcx1::decode_any(&text)?, value);
//!
//! let value = json!({"count": 42, "id": "42", "note": null, "ok": true, "tags": ["a"]});
//! let text = agentwire_gcx1::encode_any("status", &value)?;
//! assert_eq!(
//!     text,
//!     "GCX1 tool=status fields=count,id,note,ok,tags types=nsvbj\n42\t42\tnull\ttrue\t[\"a\"]\n"
//! );
//! assert_eq!(agentwire_gcx1::decode_any(&text)?, value);
//! # Ok::<(), agentwire_gcx1::Error>(())
//! ```
//!
//! # Writing and reading rows
//!
//! ```
//! use agentwire_gcx1::{Cell, Encoder, Header, StrDecoder};
//!
//! let mut encoder = Encoder::new(Vec::new());
//! encoder.begin_section(&Header::new("find_usages", ["from", "confidence", "line"]).with_meta("edges", 2))?;
//! encoder.write_row([&"#main" as &dyn Cell, &0.95, &12])?;
//! encoder.write_row([&"tab\there" as &dyn Cell, &1e6, &None::<u32>])?;
//! let text = String::from_utf8(encoder.finish()?).unwrap();
//! assert_eq!(
//!     text,
//!     "GCX1 tool=find_usages fields=from,confidence,line edges=2\n\\#main\t0.95\t12\ntab\\there\t1e+06\t\n"
//! );
//!
//! let mut decoder = StrDecoder::new(&text);
//! let header = decoder.next_section()?.expect("a section");
//! assert_eq!(header.meta_value("edges"), Some("2"));
//! let row = decoder.next_row()?.expect("a row");
//! assert_eq!(row.get(0).unwrap(), "#main");
//! assert_eq!(row.get(1).unwrap(), "0.95");
//! # Ok::<(), agentwire_gcx1::Error>(())
//! ```
//!
//! # Errors
//!
//! Every error has a stable code ([`Error::code`]), a 1-based [`Error::line`] and
//! [`Error::column`] when known, and displays as `code at line L, column C: message`. A
//! payload of another version is [`ErrorKind::UnsupportedVersion`], so callers can fall back
//! to JSON:
//!
//! ```
//! let err = agentwire_gcx1::decode("GCX2 tool=t fields=a\n").unwrap_err();
//! assert!(err.is_unsupported_version());
//! assert_eq!((err.code(), err.line(), err.column()), ("unsupported_version", Some(1), Some(1)));
//! assert_eq!(
//!     err.to_string(),
//!     "unsupported_version at line 1, column 1: unsupported version `GCX2`: this decoder reads GCX1"
//! );
//! ```
//!
//! # Features of serde_json
//!
//! The crate uses serde_json with default features and works the same when another crate of
//! the build turns on `arbitrary_precision` (numbers then keep their exact lexeme, integers of
//! any size included) or `preserve_order` (columns and JSON cells then follow the input's
//! member order instead of the sorted one).
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod de;
mod decoder;
mod encoder;
mod error;
mod escape;
mod float;
mod format;
mod header;
mod json;
mod layouts;
mod schema;
mod ser;
mod stream;
mod value;
mod workspace;

pub use de::{DeserializeRecords, DeserializeRows};
pub use decoder::{
    decode, decode_reader, Cells, Decoder, Limits, ReadSections, Row, Rows, Section, SectionRef,
    Sections, StrDecoder,
};
pub use encoder::{encode, encode_to_writer, Cell, CellWriter, Encoder};
pub use error::{Error, ErrorKind, HeaderPart, Position, Result};
pub use float::{format_f32, format_f64};
pub use format::{parse_format, Format};
pub use header::{Header, TAG, VERSION};
pub use layouts::{
    BatchSymbol, BatchSymbols, Contract, ContractOrphans, ContractsList, Cycle, Cycles, DeadCode,
    DeadCodeItem, EditTarget, EditingContext, Extra, FileSummary, FileSymbol, FindUsages, Graph,
    GraphEdge, GraphTool, Hotspot, Hotspots, Layout, Orphan, ScoredSymbol, SearchSymbols,
    SmartContext, SymbolMatch, SymbolRef, SymbolSource, Usage,
};
pub use stream::{DeserializeValues, RowReader, RowValue, RowWriter};
pub use value::{
    decode_any, encode_any, encode_any_to_writer, from_reader, from_slice, from_str, known_tools,
    to_string, to_vec, to_writer, Options, Payload, DEFAULT_TOOL, ROWS_META, SHAPE_META,
    TYPES_META,
};
pub use workspace::{
    check_call, CallError, CallErrorCode, ErrorEnvelope, RepoTarget, Scope, ToolDefinition,
    ToolDefinitions, ToolRequest, ERR_CODE_MISSING_REPO, ERR_CODE_MISSING_REPO_LIST,
    ERR_CODE_REPO_NOT_ALLOWED, ERR_CODE_UNKNOWN_REPO, ERR_CODE_WRONG_REPO_SHAPE,
};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
