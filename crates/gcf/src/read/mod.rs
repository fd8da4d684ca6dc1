//! Reading GCF from `io::BufRead` a line at a time: the line source (`lines.rs`), the row
//! reader for tables (`rows.rs`), and the whole-payload readers built on the line source.

mod lines;
mod rows;

pub(crate) use lines::{is_significant, read_content, LineMap, LineReader};
pub use rows::{DeserializeRows, RowReader};
