//! Reading GCF from `io::BufRead` a line at a time: the line source (`lines.rs`), the row
//! reader for tables (`rows.rs`), and the whole-payload readers built on the line source.

mod lines;
mod rows;
#[cfg(feature = "graph")]
mod source;

pub(crate) use lines::{is_significant, push_line, LineMap, LineReader};
pub use rows::{DeserializeRows, Entries, RowReader};
#[cfg(feature = "graph")]
pub(crate) use source::{header_line, LineSource, ReaderLines};
