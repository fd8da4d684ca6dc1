//! GCX1: a tab-delimited, line-oriented wire format for agent tool responses.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod any;
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
mod ser;
mod workspace;

pub use any::{
    decode_any, decode_any_reader, decode_any_with_limits, decode_any_with_tool, encode_any,
    encode_any_to_writer, from_reader, from_str, to_string, to_writer, ROWS_META, SHAPE_META,
    TYPES_META,
};
pub use de::{DeserializeRecords, DeserializeRows};
pub use decoder::{
    decode, decode_reader, decode_with_limits, Cells, Decoder, Limits, Row, Rows, Section,
    SectionRef, Sections, StrDecoder,
};
pub use encoder::{encode, encode_to_writer, Cell, CellWriter, Encoder};
pub use error::{Error, ErrorKind, HeaderPart, Position, Result};
pub use float::{format_f32, format_f64};
pub use format::{parse_format, Format};
pub use header::{Header, TAG, VERSION};
pub use layouts::{
    BatchSymbol, BatchSymbols, Contract, ContractOrphans, ContractsList, Cycle, Cycles, DeadCode,
    DeadCodeItem, EditTarget, EditingContext, FileSummary, FileSymbol, FindUsages, Graph,
    GraphEdge, GraphTool, Hotspot, Hotspots, Layout, Orphan, ScoredSymbol, SearchSymbols,
    SmartContext, SymbolMatch, SymbolRef, SymbolSource, Usage,
};
pub use workspace::{
    check_call, CallError, CallErrorCode, ErrorEnvelope, RepoTarget, Scope, ToolDefinition,
    ToolDefinitions, ToolRequest, ERR_CODE_MISSING_REPO, ERR_CODE_MISSING_REPO_LIST,
    ERR_CODE_REPO_NOT_ALLOWED, ERR_CODE_UNKNOWN_REPO, ERR_CODE_WRONG_REPO_SHAPE,
};
