//! GCX1: a tab-delimited, line-oriented wire format for agent tool responses.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod de;
mod decoder;
mod encoder;
mod error;
mod escape;
mod float;
mod header;
mod json;
mod ser;

pub use de::{DeserializeRecords, DeserializeRows};
pub use decoder::{
    decode, decode_reader, decode_with_limits, Cells, Decoder, Limits, Row, Rows, Section,
    SectionRef, Sections, StrDecoder,
};
pub use encoder::{encode, encode_to_writer, Cell, CellWriter, Encoder};
pub use error::{Error, ErrorKind, HeaderPart, Position, Result};
pub use header::{Header, TAG, VERSION};
