//! One row at a time: [`RowReader`] reads a payload's rows as JSON values while it reads the
//! input, and [`RowWriter`] writes a stream of values as one array while they arrive. Memory
//! stays bounded by the longest line (and, for the writer, a window of rows it looks at to
//! choose the columns), never by the payload.

use std::io::{BufRead, Write};
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::decoder::{Decoder, Limits};
use crate::encoder::Encoder;
use crate::error::Result;
use crate::header::Header;
use crate::value::{needs_shape, CellValue, Columns, Options, SectionReader, ValueCell, Writer};

/// One row read by a [`RowReader`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RowValue {
    /// The name of the row's section.
    pub section: String,
    /// The row: an object, or for a `fields=value` section the element itself, typed as the
    /// value codec types it (type letters, or the tool's column types, or inference).
    pub value: Value,
    /// The row's 1-based line.
    pub line: u64,
}

/// Reads a payload's rows one at a time, like `csv::Reader`: each row is a JSON value typed
/// as [`decode_any`](crate::decode_any) types it; a section's declared `rows=` count is
/// checked as its rows arrive and when it ends. Only one line of the input is in memory.
///
/// A `RowReader` reads rows, not the shape around them: a wrapper's scalar meta is in
/// [`RowReader::header`], and it does not check how sections fit together (that is
/// [`decode_any`](crate::decode_any)'s job).
///
/// ```
/// use agentwire_gcx1::RowReader;
/// use serde_json::json;
///
/// let input = "GCX1 tool=people fields=id,name rows=2\n1\tAda\n2\tGrace\n";
/// let mut reader = RowReader::new(input.as_bytes());
/// let first = reader.next_row()?.expect("a row");
/// assert_eq!((first.section.as_str(), first.value, first.line), ("people", json!({"id": 1, "name": "Ada"}), 2));
///
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Person { id: u32, name: String }
/// let people: Vec<Person> = RowReader::new(input.as_bytes()).deserialize().collect::<Result<_, _>>()?;
/// assert_eq!(people[1], Person { id: 2, name: "Grace".into() });
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug)]
pub struct RowReader<R> {
    decoder: Decoder<R>,
    section: Option<SectionReader>,
}

impl<R: BufRead> RowReader<R> {
    /// A reader over `reader` with the default [`Limits`].
    pub fn new(reader: R) -> Self {
        Self::with_limits(reader, Limits::default())
    }

    /// A reader over `reader` with the given limits.
    pub fn with_limits(reader: R, limits: Limits) -> Self {
        RowReader {
            decoder: Decoder::with_limits(reader, limits),
            section: None,
        }
    }

    /// The current section's header, once one has been read.
    pub fn header(&self) -> Option<&Header> {
        self.decoder.header()
    }

    /// The next row, from whichever section it is in; `None` at the end of the input.
    pub fn next_row(&mut self) -> Result<Option<RowValue>> {
        loop {
            if self.section.is_none() {
                let Some(header) = self.decoder.next_section()? else {
                    return Ok(None);
                };
                let header = header.clone();
                self.section = Some(SectionReader::begin(header, self.decoder.line())?);
            }
            let Some(section) = self.section.as_mut() else {
                continue;
            };
            match self.decoder.next_row_and_fields()? {
                Some((row, fields)) => {
                    let line = row.line();
                    let value = section.row(row, fields)?;
                    return Ok(Some(RowValue {
                        section: section.name().to_owned(),
                        value,
                        line,
                    }));
                }
                None => {
                    section.finish()?;
                    self.section = None;
                }
            }
        }
    }

    /// The rows as `T`, one at a time. An error stops the iteration.
    pub fn deserialize<T: DeserializeOwned>(self) -> DeserializeValues<R, T> {
        DeserializeValues {
            reader: self,
            done: false,
            _row: PhantomData,
        }
    }
}

impl<R: BufRead> Iterator for RowReader<R> {
    type Item = Result<RowValue>;

    fn next(&mut self) -> Option<Result<RowValue>> {
        self.next_row().transpose()
    }
}

/// The rows of a [`RowReader`] as `T`; see [`RowReader::deserialize`].
#[derive(Debug)]
pub struct DeserializeValues<R, T> {
    reader: RowReader<R>,
    done: bool,
    _row: PhantomData<fn() -> T>,
}

impl<R: BufRead, T: DeserializeOwned> Iterator for DeserializeValues<R, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        let row = match self.reader.next_row() {
            Ok(Some(row)) => row,
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let result = crate::value::typed_row(row.value, row.line);
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

/// Writes a stream of JSON values as one array, while they arrive: rows in, payload out.
///
/// The writer looks at a window of rows (1024 by default) to choose the columns and their
/// type letters, then writes them; a later row that does not fit those columns (a new
/// member, another type) starts a new section of the same name, which decoders read as more
/// of the same array. Memory stays bounded by the window.
///
/// ```
/// use agentwire_gcx1::{Options, RowWriter};
/// use serde_json::json;
///
/// let options = Options::new().tool("events");
/// let mut writer = RowWriter::new(Vec::new(), &options).window(2);
/// for value in [json!({"id": 1, "ok": true}), json!({"id": 2, "ok": false}), json!({"id": 3, "note": "late"})] {
///     writer.write(&value)?;
/// }
/// let text = String::from_utf8(writer.finish()?).unwrap();
/// assert_eq!(
///     text,
///     "GCX1 tool=events fields=id,ok\n1\ttrue\n2\tfalse\nGCX1 tool=events fields=id,note\n3\tlate\n"
/// );
/// assert_eq!(
///     agentwire_gcx1::decode_any(&text)?,
///     json!([{"id": 1, "ok": true}, {"id": 2, "ok": false}, {"id": 3, "note": "late"}])
/// );
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug)]
pub struct RowWriter<W: Write> {
    encoder: Encoder<W>,
    options: Options,
    window: Vec<Value>,
    window_size: usize,
    columns: Option<Columns>,
    /// Sections written so far.
    sections: u64,
}

impl<W: Write> RowWriter<W> {
    /// A writer of `options`' tool name and limits.
    pub fn new(writer: W, options: &Options) -> Self {
        RowWriter {
            encoder: Encoder::with_limits(writer, options.get_limits()),
            options: options.clone(),
            window: Vec::new(),
            window_size: 1024,
            columns: None,
            sections: 0,
        }
    }

    /// How many rows the writer looks at before it chooses the columns (at least 2: a
    /// section of one row could read as that row alone).
    #[must_use]
    pub fn window(mut self, rows: usize) -> Self {
        self.window_size = rows.max(2);
        self
    }

    /// Writes one element of the array.
    pub fn write(&mut self, value: &Value) -> Result<()> {
        if let Some(columns) = &self.columns {
            let fields = self.encoder.header().map_or(&[][..], |h| &h.fields[..]);
            if let Some(row) = fit(columns, fields, value) {
                return self.encoder.write_row(row);
            }
            self.columns = None;
        }
        self.window.push(value.clone());
        if self.window.len() >= self.window_size {
            self.flush_window()?;
        }
        Ok(())
    }

    /// Writes the rows waiting in the window as a section and keeps its columns.
    fn flush_window(&mut self) -> Result<()> {
        let rows = std::mem::take(&mut self.window);
        let writer = Writer::new(&self.options);
        let mut header = Header::new(self.options.tool_name(), Vec::<String>::new());
        if needs_shape(self.options.tool_name()) {
            header.meta.insert(crate::SHAPE_META.into(), "rows".into());
        }
        // No `rows=`: rows that fit are added to the section later. The first section holds
        // at least a full window (two rows or more), and any later one continues the array.
        let columns = match writer.table(&rows) {
            Some(table) => writer.write_table(&mut self.encoder, header, "", table, false)?,
            None => writer.write_values(&mut self.encoder, header, "", &rows, false)?,
        };
        self.sections += 1;
        self.columns = Some(columns);
        Ok(())
    }

    /// Writes what is left and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        if !self.window.is_empty() || self.sections == 0 {
            if self.sections == 0 {
                // The whole stream is in the window: written as the array it is.
                let rows = Value::Array(std::mem::take(&mut self.window));
                Writer::new(&self.options).write(&mut self.encoder, &rows)?;
            } else {
                self.flush_window()?;
            }
        }
        self.encoder.finish()
    }
}

/// `value` as a row of `columns`, if it fits them.
fn fit<'v>(columns: &Columns, fields: &[String], value: &'v Value) -> Option<Vec<ValueCell<'v>>> {
    let single = fields.len() == 1;
    if !columns.objects {
        let mode = columns.modes[0];
        return Columns::accepts(mode, Some(value), true).then(|| {
            vec![ValueCell {
                mode,
                value: Some(CellValue::Value(value)),
            }]
        });
    }
    let object = value.as_object()?;
    if object.keys().any(|k| !fields.contains(k)) {
        return None;
    }
    let mut cells = Vec::with_capacity(fields.len());
    for (field, &mode) in fields.iter().zip(&columns.modes) {
        let member = object.get(field);
        if !Columns::accepts(mode, member, single) {
            return None;
        }
        cells.push(ValueCell {
            mode,
            value: member.map(CellValue::Value),
        });
    }
    Some(cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stream(values: &[Value], window: usize, tool: &str) -> String {
        let options = Options::new().tool(tool);
        let mut writer = RowWriter::new(Vec::new(), &options).window(window);
        for value in values {
            writer.write(value).unwrap();
        }
        String::from_utf8(writer.finish().unwrap()).unwrap()
    }

    #[test]
    fn writer_round_trips_any_stream() {
        let values = vec![
            json!({"id": 1, "name": "a"}),
            json!({"id": 2}),
            json!({"id": "3"}),
            json!(7),
            json!("text"),
            json!({"value": 1}),
            json!(null),
            json!({"id": 4, "name": "d", "tags": ["x"]}),
            json!([1, 2]),
            json!({}),
        ];
        for window in [1, 2, 3, 5, 100] {
            for tool in ["t", "a.b"] {
                for n in 0..=values.len() {
                    let text = stream(&values[..n], window, tool);
                    let back = crate::decode_any(&text).unwrap();
                    assert_eq!(
                        back,
                        Value::Array(values[..n].to_vec()),
                        "{window} {tool}\n{text}"
                    );
                    let rows: Vec<Value> = RowReader::new(text.as_bytes())
                        .map(|r| r.unwrap().value)
                        .collect();
                    if tool == "t" {
                        assert_eq!(rows, values[..n], "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn reader_checks_counts_as_rows_arrive_and_at_the_end() {
        let mut reader = RowReader::new("GCX1 tool=t fields=a rows=1\n1\n2\n".as_bytes());
        assert!(reader.next_row().unwrap().is_some());
        let e = reader.next_row().unwrap_err();
        assert_eq!((e.code(), e.line()), ("row_count", Some(3)));
        let mut reader = RowReader::new("GCX1 tool=t fields=a rows=3\n1\n2\n".as_bytes());
        assert_eq!(reader.by_ref().take(2).count(), 2);
        let e = reader.next_row().unwrap_err();
        assert_eq!((e.code(), e.line()), ("row_count", Some(1)));
    }

    #[test]
    fn typed_rows_carry_their_line() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Row {
            id: u32,
        }
        let input = "GCX1 tool=t fields=id\n1\n-2\n";
        let rows: Vec<Result<Row>> = RowReader::new(input.as_bytes()).deserialize().collect();
        assert!(rows[0].is_ok());
        let e = rows[1].as_ref().unwrap_err();
        assert_eq!((e.code(), e.line()), ("type_mismatch", Some(3)));
        assert_eq!(rows.len(), 2);
    }
}
