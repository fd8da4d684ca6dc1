//! The streaming generic encoder (spec §8): sections whose item count is not known up front
//! are written `[?]`, rows and items go to the writer as they arrive, and `finish` writes the
//! `##! summary counts=...` trailer. Memory per row is constant: each row is flattened into a
//! reused buffer, written, and forgotten.

use std::collections::HashSet;
use std::io;

use serde::Serialize;

use super::encode::{Encoder, Head};
use super::out::Out;
use super::plan::ArrayForm;
use super::tape::Tape;
use super::view::{Kind, Node};
use super::HEADER;
use crate::error::{Error, ErrorKind, Result};
use crate::lex::{self, Sink};
use crate::number;
use crate::options::EncoderOptions;

/// Writes a generic-profile payload incrementally to an [`io::Write`].
///
/// The root is an object: write members with [`member`](Self::member) (any value, encoded as
/// the buffered encoder would), open nested objects with [`begin_object`](Self::begin_object)
/// and [`end_object`](Self::end_object), and stream arrays whose length is unknown with
/// [`table`](Self::table) (rows of a declared field list, spec §8.3) or
/// [`list`](Self::list) (expanded items of any shape). A root array is streamed with
/// [`root_table`](Self::root_table) or [`root_list`](Self::root_list) instead.
/// [`finish`](Self::finish) writes the trailer and returns the writer.
///
/// Each call writes its lines with one `write_all`; wrap an unbuffered writer (a file, a
/// socket) in an [`io::BufWriter`]. The first error (I/O or encoding) is returned and the
/// encoder refuses further writes, so a broken stream is never silently continued.
///
/// ```
/// use agentwire_gcf::GenericStreamEncoder;
/// use serde::Serialize;
///
/// #[derive(Serialize)]
/// struct Employee { id: u32, name: &'static str, department: &'static str }
///
/// let mut out = Vec::new();
/// let mut encoder = GenericStreamEncoder::new(&mut out)?;
/// let mut table = encoder.table("employees", &["id", "name", "department"])?;
/// table.row(&Employee { id: 1, name: "Alice Smith", department: "Engineering" })?;
/// table.row(&Employee { id: 2, name: "Bob Jones", department: "Sales" })?;
/// encoder.finish()?;
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "GCF profile=generic\n## employees [?]{id,name,department}\n\
///      1|Alice Smith|Engineering\n2|Bob Jones|Sales\n##! summary counts=2\n"
/// );
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug)]
pub struct GenericStreamEncoder<W: io::Write> {
    writer: W,
    opts: EncoderOptions,
    buf: Out,
    tape: Tape<'static>,
    /// The open objects, outermost first (the root is `scopes[0]`).
    scopes: Vec<Scope>,
    /// The item count of each deferred section, in document order.
    counts: Vec<u64>,
    /// A root array is being streamed: nothing else may be written.
    root_array: bool,
    /// Nothing but the header has been written.
    empty: bool,
    /// A write failed; the stream is unusable.
    failed: bool,
}

#[derive(Debug, Default)]
struct Scope {
    keys: HashSet<String>,
    /// The last member written here was a deferred table, whose rows run until the next `##`
    /// line: a `key=value` line now would read as one more row.
    after_table: bool,
}

impl<W: io::Write> GenericStreamEncoder<W> {
    /// Starts a payload on `writer` with the default options, writing the header line.
    pub fn new(writer: W) -> Result<Self> {
        Self::with_options(writer, EncoderOptions::new())
    }

    /// Starts a payload with `options` (their schema settings apply to values written with
    /// [`member`](Self::member); streamed rows always use traditional attachments, since later
    /// rows are unknown).
    pub fn with_options(writer: W, options: EncoderOptions) -> Result<Self> {
        let mut encoder = GenericStreamEncoder {
            writer,
            opts: options,
            buf: Out::default(),
            tape: Tape::default(),
            scopes: vec![Scope::default()],
            counts: Vec::new(),
            root_array: false,
            empty: true,
            failed: false,
        };
        encoder.buf.push_str(HEADER);
        encoder.flush_buf()?;
        Ok(encoder)
    }

    fn depth(&self) -> usize {
        self.scopes.len() - 1
    }

    fn flush_buf(&mut self) -> Result<()> {
        let result = self.writer.write_all(self.buf.as_bytes());
        self.buf.clear();
        result.map_err(|e| {
            self.failed = true;
            Error::io(e)
        })
    }

    fn usable(&self) -> Result<()> {
        if self.failed {
            return Err(misuse(
                "a previous write failed; the stream cannot continue",
            ));
        }
        if self.root_array {
            return Err(misuse(
                "the root is a streamed array; nothing else can be written",
            ));
        }
        Ok(())
    }

    fn claim_key(&mut self, key: &str) -> Result<()> {
        let scope = self
            .scopes
            .last_mut()
            .ok_or_else(|| misuse("no open object"))?;
        if !scope.keys.insert(key.to_owned()) {
            return Err(Error::new(
                ErrorKind::DuplicateKey,
                format!("key {key:?} was already written in this object"),
            ));
        }
        Ok(())
    }

    /// Writes one member of the current object: `key=value`, a `## key` section, or an array
    /// in the form the buffered encoder would choose.
    pub fn member<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<()> {
        self.usable()?;
        self.tape.build(value, self.opts.max_depth)?;
        let root = self.tape.root();
        let line_form = match root.kind() {
            Kind::Object => false,
            // Only a non-empty array of scalars takes the `key[N]: ...` line form.
            Kind::Array => {
                Encoder::new(&self.opts, Out::default()).array_form(root) == ArrayForm::Inline
            }
            Kind::Scalar => true,
        };
        if line_form && self.scopes.last().is_some_and(|s| s.after_table) {
            return Err(misuse(
                "a scalar or inline-array member cannot follow a deferred [?] table at the \
                 same level (it would read as one more row): write it before the table",
            ));
        }
        if self.scopes.last().is_some_and(|s| s.keys.contains(key)) {
            return Err(Error::new(
                ErrorKind::DuplicateKey,
                format!("key {key:?} was already written in this object"),
            ));
        }
        let depth = self.depth();
        let mut encoder = Encoder::new(&self.opts, std::mem::take(&mut self.buf));
        let written = encoder.value(Head::Member(key), self.tape.root(), depth, depth);
        self.buf = encoder.out;
        if let Err(e) = written {
            self.buf.clear();
            return Err(e);
        }
        self.claim_key(key)?;
        if let Some(scope) = self.scopes.last_mut() {
            scope.after_table = false;
        }
        self.empty = false;
        self.flush_buf()
    }

    /// Opens a nested object `## key`; later members go inside it until
    /// [`end_object`](Self::end_object).
    pub fn begin_object(&mut self, key: &str) -> Result<()> {
        self.usable()?;
        self.claim_key(key)?;
        let mut line = String::new();
        push_indent(&mut line, self.depth());
        line.push_str("## ");
        lex::write_key(&mut line, key);
        line.push('\n');
        self.buf.push_str(&line);
        if let Some(scope) = self.scopes.last_mut() {
            scope.after_table = false;
        }
        self.scopes.push(Scope::default());
        self.empty = false;
        self.flush_buf()
    }

    /// Closes the object opened last by [`begin_object`](Self::begin_object).
    pub fn end_object(&mut self) -> Result<()> {
        self.usable()?;
        if self.scopes.len() <= 1 {
            return Err(misuse("end_object without an open object"));
        }
        self.scopes.pop();
        Ok(())
    }

    fn deferred_header(&mut self, key: Option<&str>, fields: Option<&[&str]>) -> Result<usize> {
        self.deferred_header_of(key, fields, None)
    }

    /// A deferred section's header; with `label`, a keyed map's `[?:]{label,fields}`.
    fn deferred_header_of(
        &mut self,
        key: Option<&str>,
        fields: Option<&[&str]>,
        label: Option<&str>,
    ) -> Result<usize> {
        let mut line = String::new();
        push_indent(&mut line, self.depth());
        line.push_str("## ");
        if let Some(key) = key {
            lex::write_key(&mut line, key);
            line.push(' ');
        }
        line.push_str(if label.is_some() { "[?:]" } else { "[?]" });
        if let Some(fields) = fields {
            line.push('{');
            if let Some(label) = label {
                lex::write_key(&mut line, label);
                line.push(',');
            }
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    line.push(',');
                }
                lex::write_key(&mut line, f);
            }
            line.push('}');
        }
        line.push('\n');
        self.buf.push_str(&line);
        self.counts.push(0);
        self.empty = false;
        self.flush_buf()?;
        Ok(self.counts.len() - 1)
    }

    /// Starts a deferred table member `## key [?]{fields}` of the current object; write its
    /// rows with [`TableWriter::row`]. Every row must be an object whose keys are among
    /// `fields` (absent ones are written `~`); nested values become traditional attachments.
    pub fn table<'e>(&'e mut self, key: &str, fields: &[&str]) -> Result<TableWriter<'e, W>> {
        self.usable()?;
        self.check_fields(fields)?;
        self.claim_key(key)?;
        let section = self.deferred_header(Some(key), Some(fields))?;
        if let Some(scope) = self.scopes.last_mut() {
            scope.after_table = true;
        }
        let depth = self.depth();
        Ok(TableWriter::new(self, fields, section, depth))
    }

    /// Starts a deferred keyed map member `## key [?:]{key,fields}` of the current object
    /// (spec §7.2a, §8): an object whose members are written one at a time with
    /// [`KeyedTableWriter::entry`], each a key and a value object whose keys are among
    /// `fields` (the value fields; the key column's label is `key`, or `_key`, `__key`, ...
    /// when a value field is named so). Under [`Spec::V3_1`](crate::Spec::V3_1), which has no
    /// keyed maps, refused (`unsupported_value`).
    ///
    /// ```
    /// use agentwire_gcf::GenericStreamEncoder;
    /// use serde_json::json;
    ///
    /// let mut out = Vec::new();
    /// let mut encoder = GenericStreamEncoder::new(&mut out)?;
    /// let mut servers = encoder.keyed_table("servers", &["cpu", "status"])?;
    /// servers.entry("web-01", &json!({"cpu": 23, "status": "ok"}))?;
    /// servers.entry("db-01", &json!({"cpu": 41, "status": "warn"}))?;
    /// encoder.finish()?;
    /// assert_eq!(
    ///     String::from_utf8(out).unwrap(),
    ///     "GCF profile=generic\n## servers [?:]{key,cpu,status}\n\
    ///      web-01|23|ok\ndb-01|41|warn\n##! summary counts=2\n"
    /// );
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn keyed_table<'e>(
        &'e mut self,
        key: &str,
        fields: &[&str],
    ) -> Result<KeyedTableWriter<'e, W>> {
        self.usable()?;
        self.check_keyed()?;
        self.check_fields(fields)?;
        self.claim_key(key)?;
        let label = key_label(fields);
        let section = self.deferred_header_of(Some(key), Some(fields), Some(&label))?;
        if let Some(scope) = self.scopes.last_mut() {
            scope.after_table = true;
        }
        let depth = self.depth();
        Ok(KeyedTableWriter::over(TableWriter::new(
            self, fields, section, depth,
        )))
    }

    /// Makes the root a deferred keyed map `## [?:]{key,fields}` (see
    /// [`keyed_table`](Self::keyed_table)); nothing else can be written but its entries.
    pub fn root_keyed_table<'e>(&'e mut self, fields: &[&str]) -> Result<KeyedTableWriter<'e, W>> {
        self.check_keyed()?;
        self.check_fields(fields)?;
        self.claim_root()?;
        let label = key_label(fields);
        let section = self.deferred_header_of(None, Some(fields), Some(&label))?;
        Ok(KeyedTableWriter::over(TableWriter::new(
            self, fields, section, 0,
        )))
    }

    /// Starts a deferred list member `## key [?]` of the current object: expanded items
    /// (`@N ...`) of any shape; write them with [`ListWriter::item`].
    pub fn list<'e>(&'e mut self, key: &str) -> Result<ListWriter<'e, W>> {
        self.usable()?;
        self.claim_key(key)?;
        let section = self.deferred_header(Some(key), None)?;
        if let Some(scope) = self.scopes.last_mut() {
            scope.after_table = false;
        }
        let depth = self.depth();
        Ok(ListWriter {
            enc: self,
            section,
            depth,
        })
    }

    fn claim_root(&mut self) -> Result<()> {
        self.usable()?;
        if !self.empty {
            return Err(misuse(
                "a root array must be the first and only thing written",
            ));
        }
        self.root_array = true;
        Ok(())
    }

    /// Makes the root a deferred table `## [?]{fields}`; nothing else can be written but its
    /// rows.
    pub fn root_table<'e>(&'e mut self, fields: &[&str]) -> Result<TableWriter<'e, W>> {
        self.check_fields(fields)?;
        self.claim_root()?;
        let section = self.deferred_header(None, Some(fields))?;
        Ok(TableWriter::new(self, fields, section, 0))
    }

    /// Makes the root a deferred list `## [?]`; nothing else can be written but its items.
    pub fn root_list(&mut self) -> Result<ListWriter<'_, W>> {
        self.claim_root()?;
        let section = self.deferred_header(None, None)?;
        Ok(ListWriter {
            enc: self,
            section,
            depth: 0,
        })
    }

    /// The number of deferred sections started so far.
    pub fn deferred_sections(&self) -> usize {
        self.counts.len()
    }

    /// Flushes the writer.
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush().map_err(|e| {
            self.failed = true;
            Error::io(e)
        })
    }

    /// Writes the `##! summary` trailer (with `counts=` listing every deferred section's
    /// items, in document order), flushes, and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        if self.failed {
            return Err(misuse(
                "a previous write failed; the stream cannot continue",
            ));
        }
        self.buf.push_str("##! summary");
        if !self.counts.is_empty() {
            self.buf.push_str(" counts=");
            for (i, count) in self.counts.iter().enumerate() {
                if i > 0 {
                    self.buf.push(',');
                }
                number::write_u64(&mut self.buf, *count);
            }
        }
        self.buf.push('\n');
        self.flush_buf()?;
        self.flush()?;
        Ok(self.writer)
    }
}

impl<W: io::Write> GenericStreamEncoder<W> {
    /// A table needs at least one field, all distinct; under the current spec, none holding
    /// `>` (it would read as a flattened path, v3.2 §7.4.6.1.4).
    fn check_fields(&self, fields: &[&str]) -> Result<()> {
        if self.opts.current() {
            if let Some(field) = fields.iter().find(|f| f.contains('>')) {
                return Err(misuse(&format!(
                    "field {field:?} holds `>`, which the current spec reads as a flattened \
                     path: it cannot be a column of a streamed table (encode with Spec::V3_1, \
                     or rename it)"
                )));
            }
        }
        check_fields(fields)
    }

    /// A keyed map `[?:]` is current-spec syntax (v3.5, §7.2a): v3.1 has none, and a v3.1
    /// decoder refuses its count (`invalid_count`).
    fn check_keyed(&self) -> Result<()> {
        if self.opts.current() {
            return Ok(());
        }
        Err(misuse(
            "a keyed map `[?:]` is current-spec syntax, which v3.1 does not read: stream a \
             table with the key as one of its fields, or encode by the current spec",
        ))
    }
}

/// A keyed map's key-column label: `key`, with `_` prepended until no value field is named so
/// (spec §7.2a.2).
fn key_label(fields: &[&str]) -> String {
    let mut label = String::from("key");
    while fields.contains(&label.as_str()) {
        label.insert(0, '_');
    }
    label
}

/// A table needs at least one field, all distinct.
fn check_fields(fields: &[&str]) -> Result<()> {
    if fields.is_empty() {
        return Err(misuse(
            "a table needs at least one field (use a list for empty objects)",
        ));
    }
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].contains(f) {
            return Err(Error::new(
                ErrorKind::DuplicateFieldName,
                format!("field {f:?} is declared twice"),
            ));
        }
    }
    Ok(())
}

fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cold]
fn misuse(message: &str) -> Error {
    Error::new(ErrorKind::UnsupportedValue, message)
}

/// Writes the rows of a deferred table; see [`GenericStreamEncoder::table`].
#[derive(Debug)]
pub struct TableWriter<'e, W: io::Write> {
    enc: &'e mut GenericStreamEncoder<W>,
    fields: Vec<String>,
    section: usize,
    depth: usize,
}

impl<'e, W: io::Write> TableWriter<'e, W> {
    fn new(
        enc: &'e mut GenericStreamEncoder<W>,
        fields: &[&str],
        section: usize,
        depth: usize,
    ) -> Self {
        TableWriter {
            enc,
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            section,
            depth,
        }
    }

    /// Writes one row (a struct or map whose keys are among the table's fields) and its
    /// attachments.
    pub fn row<T: ?Sized + Serialize>(&mut self, row: &T) -> Result<()> {
        self.write(None, row)
    }

    /// Writes one row, with `key` the entry of a keyed map.
    fn write<T: ?Sized + Serialize>(&mut self, key: Option<&str>, row: &T) -> Result<()> {
        let enc = &mut *self.enc;
        if enc.failed {
            return Err(misuse(
                "a previous write failed; the stream cannot continue",
            ));
        }
        enc.tape.build(row, enc.opts.max_depth)?;
        let names: Vec<&str> = self.fields.iter().map(String::as_str).collect();
        let r = enc.counts[self.section] as usize;
        let mut encoder = Encoder::new(&enc.opts, std::mem::take(&mut enc.buf));
        let written = encoder.stream_row(&names, r, key, enc.tape.root(), self.depth);
        enc.buf = encoder.out;
        if let Err(e) = written {
            enc.buf.clear();
            return Err(e);
        }
        enc.flush_buf()?;
        enc.counts[self.section] += 1;
        Ok(())
    }

    /// The rows written so far.
    pub fn len(&self) -> u64 {
        self.enc.counts[self.section]
    }

    /// Whether no row has been written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends the table, returning its row count (dropping the writer ends it too).
    pub fn finish(self) -> u64 {
        self.len()
    }
}

/// Writes the entries of a deferred keyed map; see [`GenericStreamEncoder::keyed_table`].
///
/// The keys written are kept, to refuse a repeated one (`duplicate_key`: a keyed map's keys
/// are unique, spec §7.2a.4): the one thing kept per entry.
#[derive(Debug)]
pub struct KeyedTableWriter<'e, W: io::Write> {
    table: TableWriter<'e, W>,
    keys: HashSet<String>,
}

impl<'e, W: io::Write> KeyedTableWriter<'e, W> {
    /// The entries of `table`, a keyed map's rows.
    fn over(table: TableWriter<'e, W>) -> Self {
        KeyedTableWriter {
            table,
            keys: HashSet::new(),
        }
    }

    /// Writes one entry: `key` and its value (a struct or map whose keys are among the value
    /// fields) and the value's attachments.
    pub fn entry<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<()> {
        if self.keys.contains(key) {
            return Err(Error::new(
                ErrorKind::DuplicateKey,
                format!("key {key:?} was written before: a keyed map's keys are unique"),
            ));
        }
        self.table.write(Some(key), value)?;
        self.keys.insert(key.to_owned());
        Ok(())
    }

    /// The entries written so far.
    pub fn len(&self) -> u64 {
        self.table.len()
    }

    /// Whether no entry has been written.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Ends the keyed map, returning its entry count (dropping the writer ends it too).
    pub fn finish(self) -> u64 {
        self.table.finish()
    }
}

/// Writes the items of a deferred list; see [`GenericStreamEncoder::list`].
#[derive(Debug)]
pub struct ListWriter<'e, W: io::Write> {
    enc: &'e mut GenericStreamEncoder<W>,
    section: usize,
    depth: usize,
}

impl<W: io::Write> ListWriter<'_, W> {
    /// Writes one item (any value) as `@N ...`.
    pub fn item<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        let enc = &mut *self.enc;
        if enc.failed {
            return Err(misuse(
                "a previous write failed; the stream cannot continue",
            ));
        }
        enc.tape.build(value, enc.opts.max_depth)?;
        let index = enc.counts[self.section] as usize;
        let mut encoder = Encoder::new(&enc.opts, std::mem::take(&mut enc.buf));
        let written = encoder.item(index, enc.tape.root(), self.depth);
        enc.buf = encoder.out;
        if let Err(e) = written {
            enc.buf.clear();
            return Err(e);
        }
        enc.flush_buf()?;
        enc.counts[self.section] += 1;
        Ok(())
    }

    /// The items written so far.
    pub fn len(&self) -> u64 {
        self.enc.counts[self.section]
    }

    /// Whether no item has been written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends the list, returning its item count (dropping the writer ends it too).
    pub fn finish(self) -> u64 {
        self.len()
    }
}
