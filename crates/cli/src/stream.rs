//! Streaming in the CLI: `decode --stream` (a table to JSON Lines, one row at a time),
//! `encode --stream` (JSON Lines to a streaming GCF or GCX1 payload), and the decoder limit
//! flags `decode` and `validate` share.

use std::io::{self, BufRead, Read, Write};

use serde_json::Value;

use crate::codec::Format;
use crate::{output, CliError};

/// The decoder limits, each the library's default unless set.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct LimitArgs {
    /// GCF and GCX1: the longest line, in bytes (GCF default 1 MiB, GCX1 4 MiB).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_line_length: Option<usize>,
    /// GCF: the deepest nesting (default 128).
    #[arg(long, value_name = "LEVELS")]
    pub(crate) max_depth: Option<usize>,
    /// GCF: the most items per array or members per object, declared or actual, and the most
    /// rows `--stream` reads (default: unlimited in the CLI; counts never size an allocation).
    #[arg(long, value_name = "N")]
    pub(crate) max_elements: Option<usize>,
    /// GCF and GCX1: the most fields one table header declares (default: unlimited in the
    /// CLI, whose header lines are bounded by the line limit; the libraries' are 10000 and
    /// 4096).
    #[arg(long, value_name = "N")]
    pub(crate) max_fields: Option<usize>,
    /// GCF: the most bytes read (default unlimited).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_input_size: Option<usize>,
    /// GCX1: the most meta pairs one header may carry (default 1024).
    #[arg(long, value_name = "N")]
    pub(crate) max_meta: Option<usize>,
    /// GCX1: the most trailing cells rows may omit, in total (default 1048576).
    #[arg(long, value_name = "CELLS")]
    pub(crate) max_padding: Option<u64>,
}

impl LimitArgs {
    /// The GCF decoder options of these flags and `spec`.
    pub(crate) fn gcf(&self, spec: agentwire_gcf::Spec) -> agentwire_gcf::DecoderOptions {
        let mut o = agentwire_gcf::DecoderOptions::new()
            .spec(spec)
            .max_elements(self.max_elements.unwrap_or(usize::MAX));
        if let Some(n) = self.max_line_length {
            o = o.max_line_length(n);
        }
        if let Some(n) = self.max_depth {
            o = o.max_depth(n);
        }
        o = o.max_fields(self.max_fields.unwrap_or(usize::MAX));
        if self.max_input_size.is_some() {
            o = o.max_input_size(self.max_input_size);
        }
        o
    }

    /// The GCX1 limits of these flags.
    pub(crate) fn gcx1(&self) -> agentwire_gcx1::Limits {
        let mut l = agentwire_gcx1::Limits::default();
        if let Some(n) = self.max_line_length {
            l = l.with_max_line_length(n);
        }
        l = l.with_max_fields(self.max_fields.unwrap_or(usize::MAX));
        if let Some(n) = self.max_meta {
            l = l.with_max_meta(n);
        }
        if let Some(n) = self.max_padding {
            l = l.with_max_padding(n);
        }
        l
    }
}

/// Writes each row of the table `reader` holds as one line of JSON, as it is read (each
/// entry of a keyed map as `{"key": ..., "value": ...}`).
pub(crate) fn decode_rows<R: BufRead>(
    format: Format,
    first_line: &[u8],
    reader: R,
    what: &str,
    gcf: &agentwire_gcf::DecoderOptions,
    gcx1: agentwire_gcx1::Limits,
) -> Result<(), CliError> {
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let failed = |format: &'static str, message: String| CliError::Decode {
        what: what.to_owned(),
        format,
        message,
    };
    let result = match format {
        Format::Gcf => {
            let header = String::from_utf8_lossy(first_line);
            if agentwire_gcf::profile(&header).ok() == Some(agentwire_gcf::Profile::Graph) {
                return Err(CliError::Usage(
                    "--stream reads a GCF table (generic profile); a graph payload is decoded \
                     whole without --stream"
                        .into(),
                ));
            }
            let mut rows = gcf
                .row_reader(reader)
                .map_err(|e| failed("GCF", e.to_string()))?;
            let mut result = Ok(());
            if rows.is_keyed() {
                // A keyed map: one `{"key": ..., "value": ...}` line per entry (the shape of
                // jq's `to_entries`: `jq -s from_entries` gives the map back).
                for entry in rows.entries::<Value>() {
                    let (key, value) = entry.map_err(|e| failed("GCF", e.to_string()))?;
                    let line = serde_json::json!({ "key": key, "value": value });
                    if let Err(e) = write_row(&mut out, &line) {
                        result = Err(e);
                        break;
                    }
                }
                return output::written(result.and_then(|()| out.flush()));
            }
            for row in rows.values() {
                let row = row.map_err(|e| failed("GCF", e.to_string()))?;
                if let Err(e) = write_row(&mut out, &row) {
                    result = Err(e);
                    break;
                }
            }
            result
        }
        Format::Gcx1 => {
            let rows = agentwire_gcx1::RowReader::with_limits(reader, gcx1);
            let mut result = Ok(());
            for row in rows {
                let row = row.map_err(|e| failed("GCX1", e.to_string()))?;
                if let Err(e) = write_row(&mut out, &row.value) {
                    result = Err(e);
                    break;
                }
            }
            result
        }
        Format::Json | Format::Toon => {
            return Err(CliError::Usage(format!(
                "--stream reads GCF and GCX1 tables, not {}",
                format.name()
            )))
        }
    };
    output::written(result.and_then(|()| out.flush()))
}

fn write_row<W: Write>(out: &mut W, row: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, row).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The format `encode --stream` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A GCF root table `## [?]{fields}`, written by this spec version.
    Gcf(agentwire_gcf::Spec),
    /// A GCF keyed map, from `{"key": ..., "value": ...}` lines.
    GcfKeyed,
    Gcx1,
}

/// A GCF row that did not encode, at input line `number`.
fn row_error(e: &agentwire_gcf::Error, number: u64) -> CliError {
    let hint = if e.kind() == agentwire_gcf::ErrorKind::UnsupportedValue {
        " (name every field up front with --fields)"
    } else {
        ""
    };
    CliError::Encode {
        format: "GCF",
        message: format!("line {number}: {e}{hint}"),
    }
}

/// An entry line `{"key": KEY, "value": {...}}` as its key and value.
fn entry(line: Value, number: u64, what: &str) -> Result<(String, Value), CliError> {
    if let Value::Object(mut m) = line {
        if m.len() == 2 {
            if let (Some(Value::String(key)), Some(value @ Value::Object(_))) =
                (m.remove("key"), m.remove("value"))
            {
                return Ok((key, value));
            }
        }
    }
    Err(CliError::Shape {
        target: "a stream of keyed-map entries".into(),
        message: format!(
            "line {number} of {what} is not an entry {{\"key\": string, \"value\": object}}"
        ),
    })
}

/// Reads JSON Lines (one row object per line) from `reader` and writes a streaming payload:
/// GCF `## [?]{fields}` rows and the `##! summary` trailer, or GCX1 through its row writer.
/// Memory holds one row.
pub(crate) fn encode_rows<R: BufRead>(
    target: Target,
    mut reader: R,
    what: &str,
    fields: Option<&[String]>,
    tool: Option<&str>,
    max_line_length: usize,
) -> Result<(), CliError> {
    let out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut rows = JsonLines {
        reader: &mut reader,
        line: Vec::new(),
        number: 0,
        what,
        max_line_length,
    };
    let encode_error = |format: &'static str, message: String| CliError::Encode { format, message };
    match target {
        Target::Gcf(spec) => {
            let first = rows.next()?;
            let names: Vec<String> = match (fields, &first) {
                (Some(f), _) => f.to_vec(),
                (None, Some(Value::Object(m))) => m.keys().cloned().collect(),
                _ => Vec::new(),
            };
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let options = agentwire_gcf::EncoderOptions::new().spec(spec);
            let mut enc = agentwire_gcf::GenericStreamEncoder::with_options(out, options)
                .map_err(|e| encode_error("GCF", e.to_string()))?;
            {
                let mut table = enc
                    .root_table(&names)
                    .map_err(|e| encode_error("GCF", e.to_string()))?;
                let mut row = first;
                while let Some(value) = row {
                    table.row(&value).map_err(|e| row_error(&e, rows.number))?;
                    row = rows.next()?;
                }
                table.finish();
            }
            let mut out = enc
                .finish()
                .map_err(|e| encode_error("GCF", e.to_string()))?;
            output::written(out.flush())
        }
        Target::GcfKeyed => {
            let first = match rows.next()? {
                Some(line) => Some(entry(line, rows.number, what)?),
                None => None,
            };
            let names: Vec<String> = match (fields, &first) {
                (Some(f), _) => f.to_vec(),
                (None, Some((_, Value::Object(m)))) => m.keys().cloned().collect(),
                _ => Vec::new(),
            };
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut enc = agentwire_gcf::GenericStreamEncoder::new(out)
                .map_err(|e| encode_error("GCF", e.to_string()))?;
            {
                let mut map = enc
                    .root_keyed_table(&names)
                    .map_err(|e| encode_error("GCF", e.to_string()))?;
                let mut next = first;
                while let Some((key, value)) = next {
                    map.entry(&key, &value)
                        .map_err(|e| row_error(&e, rows.number))?;
                    next = match rows.next()? {
                        Some(line) => Some(entry(line, rows.number, what)?),
                        None => None,
                    };
                }
                map.finish();
            }
            let mut out = enc
                .finish()
                .map_err(|e| encode_error("GCF", e.to_string()))?;
            output::written(out.flush())
        }
        Target::Gcx1 => {
            let options =
                agentwire_gcx1::Options::new().tool(tool.unwrap_or(crate::codec::DEFAULT_TOOL));
            let mut writer = agentwire_gcx1::RowWriter::new(out, &options);
            while let Some(value) = rows.next()? {
                writer
                    .write(&value)
                    .map_err(|e| encode_error("GCX1", format!("line {}: {e}", rows.number)))?;
            }
            let mut out = writer
                .finish()
                .map_err(|e| encode_error("GCX1", e.to_string()))?;
            output::written(out.flush())
        }
    }
}

/// JSON Lines: one row object per line, blank lines skipped.
struct JsonLines<'a, R> {
    reader: R,
    line: Vec<u8>,
    number: u64,
    what: &'a str,
    max_line_length: usize,
}

impl<R: BufRead> JsonLines<'_, R> {
    /// The next row object; `None` at the end of the input.
    fn next(&mut self) -> Result<Option<Value>, CliError> {
        let what = self.what;
        loop {
            self.line.clear();
            let n = Read::by_ref(&mut self.reader)
                .take(self.max_line_length as u64 + 2)
                .read_until(b'\n', &mut self.line)
                .map_err(|source| CliError::ReadInput {
                    what: what.to_owned(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.number += 1;
            let number = self.number;
            if self.line.len() > self.max_line_length + 1 && !self.line.ends_with(b"\n") {
                return Err(CliError::Shape {
                    target: "a stream of rows".into(),
                    message: format!(
                        "line {number} of {what} is longer than {} bytes (--max-line-length)",
                        self.max_line_length
                    ),
                });
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let value = crate::json::from_slice(&self.line, &format!("{what}, line {number},"))?;
            if !value.is_object() {
                return Err(CliError::Shape {
                    target: "a stream of rows".into(),
                    message: format!("line {number} of {what} is not a JSON object"),
                });
            }
            return Ok(Some(value));
        }
    }
}
