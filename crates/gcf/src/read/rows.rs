//! [`RowReader`]: a GCF table read one row at a time from an `io::BufRead`.
//!
//! The reader keeps the payload's header line, the table's header line and the lines of the
//! current row (with a value-grouped table, its group's sub-header; with an identity column,
//! the identity values seen, to find a repeated one). It finds where a row ends by the spec's rule (§7.4.4: a row owns
//! the indented lines under it, its `.field` attachments and as many same-level positional
//! bodies as it has inline-schema markers), then decodes that row with the in-memory decoder
//! as a one-row table (the inline schemas earlier rows declared carried into it), so a row
//! reads exactly as the whole payload would. Positions are the input's.

use std::collections::HashSet;
use std::io::BufRead;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::lines::{is_significant, push_line, LineReader};
use crate::error::{Error, ErrorKind, Limit, Position, Result};
use crate::header;
use crate::lex::{self, Count, Line};
use crate::options::DecoderOptions;

/// What a payload that is no array is told.
const NOT_AN_ARRAY: &str = "the payload's root is not a table or a list (an array starts \
                            `## [N]{fields}`, `## key [N]{fields}`, `## [N]` or `key[N]: ...`)";

/// The prefix a row's one-row table starts with.
const ONE_ROW: &str = "## [1]";

/// What `not_a_table` says of a payload that goes on past its table.
const MORE_THAN_THE_TABLE: &str =
    "the payload holds more than the table (read it with from_reader)";

/// The prefix a keyed map entry's one-entry map starts with.
const ONE_ENTRY: &str = "## [1:]";

/// Reads the rows of a GCF table one at a time, like `csv::Reader`: memory holds the current
/// row (its lines and the value built from it), never the table.
///
/// The payload is an array: a root array (`## [N]{fields}`, `## [?]{fields}`, as
/// [`GenericStreamEncoder::root_table`](crate::GenericStreamEncoder::root_table) writes it) or
/// an object whose first member is one (`## key [N]{fields}`, as
/// [`GenericStreamEncoder::table`](crate::GenericStreamEncoder::table) writes it). Rows may
/// carry every form a table row has (attachments, inline and shared schemas, flattened and
/// constant columns, deferred sections of their own), value-grouped tables included. A list of expanded `@N` items
/// (`## [N]`, [`ListWriter`](crate::ListWriter)'s) is read an item at a time the same way; an
/// inline array (`## [N]: a,b`, `key[N]: a,b`) is one line, handed out an item at a time.
/// Anything else (another member after the array, a keyed map, an object or scalar root) is
/// `not_a_table`: [`from_reader`](crate::from_reader) reads it.
///
/// The declared count is checked when the rows end, a deferred `[?]` count against the
/// `##! summary` trailer (which must follow unless [`DecoderOptions::require_trailer`] is
/// off), and the trailer must have one entry per deferred section, those inside rows
/// included, each checked against the items found. Every error carries the
/// input's line and column, and is the error the in-memory decoder reports for the same input
/// (the testkit oracle checks it), except that the row reader reports the first error in
/// reading order (invalid UTF-8 late in the input comes after an earlier row's error). The
/// [`Limits`](crate::Limits) apply as in the in-memory decoder, the row count included
/// (`max_elements`: raise it for longer streams). A table with an identity column (`@id`)
/// keeps its identity values, the one thing it keeps per row, to report a repeated one
/// (`duplicate_key`).
///
/// ```
/// use serde::Deserialize;
///
/// #[derive(Debug, PartialEq, Deserialize)]
/// struct Order { id: u64, status: String }
///
/// let text = "GCF profile=generic\n## [?]{id,status}\n1|shipped\n2|pending\n##! summary counts=2\n";
/// let mut reader = agentwire_gcf::RowReader::new(text.as_bytes())?;
/// assert_eq!(reader.fields(), ["id", "status"]);
/// let mut ids = Vec::new();
/// for order in reader.deserialize::<Order>() {
///     ids.push(order?.id);
/// }
/// assert_eq!(ids, [1, 2]);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug)]
pub struct RowReader<R> {
    lines: LineReader<R>,
    /// Options for the one-row tables (depth one less for a member table).
    opts: DecoderOptions,
    require_trailer: bool,
    max_rows: usize,
    /// The payload's header line.
    header: String,
    /// The table's header line with its count replaced by `[1]`, at the root.
    table: String,
    /// The table header's line number, its count bracket's column, and the columns the
    /// one-row header moved the rest of the line by.
    table_line: usize,
    count_column: usize,
    table_shift: i64,
    key: Option<String>,
    fields: Vec<String>,
    /// The name of each row cell's field (constant columns have no cell).
    cells: Vec<String>,
    count: Count,
    /// Inline schemas (`{a,b,c}`) earlier rows declared, by cell.
    schemas: Vec<Option<String>>,
    found: u64,
    /// Whether the current line of `lines` is a significant line not yet taken.
    held: bool,
    /// Whether the last row had an `@N` prefix.
    last_had_id: bool,
    done: bool,
    /// The one-row payload of the current row, and the input line of each of its lines
    /// from the third on.
    mini: String,
    mini_lines: Vec<usize>,
    /// `(first column, columns added)` on the row line of `mini`, ascending.
    shifts: Vec<(u64, i64)>,
    /// `(line of mini, first column, columns added)` on the row's other lines.
    line_shifts: Vec<(u64, u64, i64)>,
    /// Deferred `[?]` sections inside the rows read so far, in document order: each one's
    /// input line and item count, as the one-row decodes found them (the trailer has an
    /// entry for each, checked when the rows end). No more are kept than a trailer line
    /// within the line limit can list; past that only their number grows, and a trailer
    /// cannot match it.
    nested: Vec<(u64, u64)>,
    nested_deferred: u64,
    /// A value-grouped table's state (spec v3.6).
    group: Option<Grouping>,
    /// The identity column's cell, and the identity values seen (they must be unique: the
    /// one thing this reader keeps per row).
    identity: Option<usize>,
    ids: HashSet<String>,
    /// The current row's identity value and its position, checked once the row decodes.
    pending_id: Option<(String, u64, u64)>,
    /// The line of `mini` the row line is (3, or 4 after a group's sub-header).
    row_mini_line: u64,
    /// Whether the array is a list of expanded `@N` items rather than a table.
    list: bool,
    /// Whether the table is a keyed map (`[N:]`, `[?:]`): its rows are entries, cell 0 the
    /// member key.
    keyed: bool,
    /// An inline array's items still to hand out, and the one handed out next.
    inline: Option<std::collections::VecDeque<Value>>,
    /// An inline member's line (`key[N]: a,b`), which the whole decoder has read when it
    /// reads the next member (a repeated key is its error).
    inline_member: Option<String>,
    item: Option<Value>,
    /// Shared array schemas (`{a,b}`) earlier rows' attachments declared, by field name
    /// (spec §7.4.5.3: the first declaration holds).
    array_schemas: Vec<(String, String)>,
}

impl<R: BufRead> RowReader<R> {
    /// Opens the table of the payload `reader` holds, with the default [`DecoderOptions`]:
    /// reads the header line and the table's header line.
    pub fn new(reader: R) -> Result<Self> {
        RowReader::with_options(reader, &DecoderOptions::new())
    }

    /// [`RowReader::new`] with `opts` (see also [`DecoderOptions::row_reader`]).
    pub fn with_options(reader: R, opts: &DecoderOptions) -> Result<Self> {
        let mut r = RowReader {
            lines: LineReader::new(reader, &opts.limits),
            // A row's own deferred sections are counted here, against the payload's trailer.
            opts: opts.clone().require_trailer(false),
            require_trailer: opts.require_trailer,
            max_rows: opts.limits.max_elements,
            header: String::new(),
            table: String::new(),
            table_line: 0,
            count_column: 1,
            table_shift: 0,
            key: None,
            fields: Vec::new(),
            cells: Vec::new(),
            count: Count::Deferred,
            schemas: Vec::new(),
            found: 0,
            held: false,
            last_had_id: false,
            done: false,
            mini: String::new(),
            mini_lines: Vec::new(),
            shifts: Vec::new(),
            line_shifts: Vec::new(),
            nested: Vec::new(),
            nested_deferred: 0,
            group: None,
            identity: None,
            ids: HashSet::new(),
            pending_id: None,
            row_mini_line: 3,
            list: false,
            keyed: false,
            inline: None,
            inline_member: None,
            item: None,
            array_schemas: Vec::new(),
        };
        r.open()?;
        Ok(r)
    }

    /// The table's field names in declaration order (constant columns included). For a keyed
    /// map, the first is the key column's label (`key`), which names no value field.
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    /// The table's member name when the payload is an object holding it; `None` for a root
    /// table.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Whether the table is a keyed map (`## [N:]{key,fields}`, `## key [?:]{key,fields}`):
    /// an object whose members are the rows, each keyed by its first cell. Read its entries
    /// with [`RowReader::entries`] (or as rows deserialized as `(String, T)`).
    pub fn is_keyed(&self) -> bool {
        self.keyed
    }

    /// The declared row count (entries of a keyed map); `None` for a deferred `[?]` count.
    pub fn declared_count(&self) -> Option<u64> {
        match self.count {
            Count::Known(n) => Some(n),
            Count::Deferred => None,
        }
    }

    /// The number of rows read so far.
    pub fn rows_read(&self) -> u64 {
        self.found
    }

    /// The number of the last line read.
    pub fn line(&self) -> u64 {
        self.lines.number() as u64
    }

    /// An iterator over the rows, each deserialized as a `T` (see [`RowReader::read_row`]).
    pub fn deserialize<T: DeserializeOwned>(&mut self) -> DeserializeRows<'_, R, T> {
        DeserializeRows {
            reader: self,
            marker: PhantomData,
        }
    }

    /// The rows as `serde_json::Value`s (objects; a keyed map's entries as `[key, value]`
    /// arrays).
    pub fn values(&mut self) -> DeserializeRows<'_, R, Value> {
        self.deserialize()
    }

    /// An iterator over a keyed map's entries, each `(key, value)` with the value
    /// deserialized as a `T` (see [`RowReader::read_entry`]).
    ///
    /// ```
    /// use serde::Deserialize;
    ///
    /// #[derive(Debug, PartialEq, Deserialize)]
    /// struct Server { cpu: u32, status: String }
    ///
    /// let text = "GCF profile=generic\n## servers [?:]{key,cpu,status}\n\
    ///             web-01|23|ok\ndb-01|41|warn\n##! summary counts=2\n";
    /// let mut reader = agentwire_gcf::RowReader::new(text.as_bytes())?;
    /// assert!(reader.is_keyed());
    /// assert_eq!(reader.key(), Some("servers"));
    /// let mut names = Vec::new();
    /// for entry in reader.entries::<Server>() {
    ///     let (name, server) = entry?;
    ///     names.push(format!("{name}:{}", server.cpu));
    /// }
    /// assert_eq!(names, ["web-01:23", "db-01:41"]);
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn entries<T: DeserializeOwned>(&mut self) -> Entries<'_, R, T> {
        Entries {
            reader: self,
            marker: PhantomData,
        }
    }

    /// The next entry of a keyed map: its key and its value as a `T`; `None` after the last
    /// one, once the count (or the trailer) has been checked. A repeated key is
    /// `duplicate_key` at the second one's key cell. On a table that is not a keyed map,
    /// `not_a_table`. After an error the reader is finished.
    pub fn read_entry<T: DeserializeOwned>(&mut self) -> Result<Option<(String, T)>> {
        if !self.keyed {
            self.done = true;
            return Err(not_a_table(
                None,
                "the table is not a keyed map `[N:]`: read its rows with read_row",
            ));
        }
        let Some(entry) = self.read_decoded::<OneEntry<T>>()? else {
            return Ok(None);
        };
        Ok(Some((entry.key, entry.value)))
    }

    /// The next row as a `T`; `None` after the last row, once the count (or the trailer) has
    /// been checked. After an error the reader is finished.
    ///
    /// A keyed map's entry is handed to `T` as the pair `[key, value]`: read it as a
    /// `(String, V)` (or with [`RowReader::read_entry`]).
    pub fn read_row<T: DeserializeOwned>(&mut self) -> Result<Option<T>> {
        if !self.keyed {
            return self.read_decoded();
        }
        let Some(entry) = self.read_decoded::<OneEntry<Value>>()? else {
            return Ok(None);
        };
        let pair = Value::Array(vec![Value::String(entry.key), entry.value]);
        T::deserialize(pair).map(Some).map_err(|e| {
            self.done = true;
            let line = self.mini_lines.first().copied().unwrap_or(self.table_line);
            Error::new(ErrorKind::TypeMismatch, e.to_string()).with_line(line as u64)
        })
    }

    /// The next row decoded as a `T` from its one-row table (a keyed map's: its one-entry
    /// map).
    fn read_decoded<T: DeserializeOwned>(&mut self) -> Result<Option<T>> {
        if self.done {
            return Ok(None);
        }
        match self.next_row() {
            Ok(true) => {}
            Ok(false) => {
                self.done = true;
                return Ok(None);
            }
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        }
        if let Some(item) = self.item.take() {
            return T::deserialize(item).map(Some).map_err(|e| {
                self.done = true;
                Error::new(ErrorKind::TypeMismatch, e.to_string()).with_line(self.table_line as u64)
            });
        }
        let mut deferred = Vec::new();
        let decoded: Result<Vec<T>> = if self.keyed {
            self.opts
                .decode_counted_str::<T>(&self.mini, &mut deferred)
                .map(|entry| vec![entry])
        } else {
            self.opts.decode_counted_str(&self.mini, &mut deferred)
        };
        let decoded = decoded.map_err(|e| self.row_error(e));
        if decoded.is_ok() {
            self.count_nested(&deferred);
        }
        if let Some((id, line, column)) = self.pending_id.take() {
            // The decoders check a row's member key or identity value right after the row
            // line's shape, before its cells and attachments: a repeat is the error unless the
            // row's own error comes before that check.
            let checked = match &decoded {
                Ok(_) => true,
                Err(e) => !before_identity(e, line, column),
            };
            if checked && !self.ids.insert(id) {
                self.done = true;
                return Err(Error::at(
                    ErrorKind::DuplicateKey,
                    line,
                    column,
                    "a second row with this identity value",
                ));
            }
        }
        match decoded {
            Ok(mut rows) if rows.len() == 1 => Ok(rows.pop()),
            Ok(_) => {
                self.done = true;
                Err(self.row_error(Error::new(
                    ErrorKind::TypeMismatch,
                    "a row did not read as one value",
                )))
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    // -----------------------------------------------------------------------------------------

    /// Makes the next significant line the held one; `false` at the end of input.
    fn peek(&mut self) -> Result<bool> {
        if self.held {
            return Ok(true);
        }
        while self.lines.advance()? {
            if is_significant(&self.lines.line()?) {
                self.held = true;
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn open(&mut self) -> Result<()> {
        if !self.lines.advance()? {
            return Err(Error::at_line(
                ErrorKind::MissingHeader,
                1,
                1,
                "empty input (expected a `GCF profile=...` header line)",
            ));
        }
        {
            let line = self.lines.line()?;
            let head = header::parse_header(line)?;
            // The whole decoder's header checks, so that both report the same first error.
            crate::generic::check_header(&head, self.opts.spec)?;
            self.header = format!("{}{}", " ".repeat(line.indent), line.text);
        }
        if !self.peek()? {
            return Err(not_a_table(None, "the payload is an empty object"));
        }
        self.held = false;
        // The table's header line, owned: the reader reads on.
        let (number, indent, text) = {
            let line = self.lines.line()?;
            (line.number, line.indent, line.text.to_owned())
        };
        let line = Line {
            text: &text,
            indent,
            number,
        };
        let (key, after_key) = match line.text.strip_prefix("## ") {
            Some(rest) if line.indent == 0 && rest.starts_with('[') => (None, rest),
            Some(rest) if line.indent == 0 && !rest.starts_with('!') => {
                let Ok((key, rest)) = lex::key(&line, rest, b" ") else {
                    // A key a table's section line cannot have (`## name\t` is an object
                    // section to the whole decoder): its error, or `not_a_table`.
                    return Err(self.whole_error(&line));
                };
                if !rest.is_empty() && !rest.starts_with(" [") {
                    // `## "name"[N]`, `## name  [N]`: not a table's section line; the whole
                    // decoder's error (or `not_a_table` for an object section).
                    return Err(self.whole_error(&line));
                }
                match rest.strip_prefix(' ') {
                    Some(bracket) => (Some(key.into_owned()), bracket),
                    None => {
                        return Err(not_a_table(
                            Some(&line),
                            "the payload's first member is an object, not a table",
                        ))
                    }
                }
            }
            None if line.indent == 0 => {
                // `key[N]: a,b`, an inline array member.
                let (key, rest) = lex::key(&line, line.text, b"[=")
                    .map_err(|_| not_a_table(Some(&line), NOT_AN_ARRAY))?;
                if !rest.starts_with('[') {
                    return Err(not_a_table(Some(&line), NOT_AN_ARRAY));
                }
                return self.open_inline_member(&line, key.into_owned(), rest);
            }
            _ => return Err(not_a_table(Some(&line), NOT_AN_ARRAY)),
        };
        let (count, keyed, rest) = lex::table_count(&line, after_key, self.opts.spec.current())?;
        if keyed && !rest.starts_with('{') {
            // No field list: what the in-memory decoder says of the header.
            self.opts
                .from_str::<Value>(&self.alone(&line))
                .map_err(|e| moved_to(e, &line))?;
            return Err(not_a_table(Some(&line), "a keyed map without a field list"));
        }
        if !rest.starts_with('{') {
            return self.open_list(&line, key, count, after_key, rest);
        }
        // The count is checked before the field declaration, as the whole decoder does.
        self.check_declared(&line, after_key, count)?;
        if keyed && count == Count::Known(0) {
            return Err(crate::generic::zero_keyed_count(&line, after_key));
        }
        self.keyed = keyed;
        let mut names = Vec::new();
        let mut extras = Vec::new();
        let current = self.opts.spec.current();
        let after = lex::field_decl_ext(
            &line,
            rest,
            self.opts.limits.max_fields,
            ErrorKind::InvalidKey,
            ErrorKind::InvalidLine,
            &mut names,
            current.then_some(&mut extras),
        )?;
        // The group column (validated with the header below, by the whole decoder).
        let group_column = after
            .split(' ')
            .find_map(|t| t.strip_prefix("group="))
            .map(|g| {
                lex::key(&line, g, b"")
                    .map(|(k, _)| k.into_owned())
                    .unwrap_or_else(|_| g.to_owned())
            });
        self.fields = names.iter().map(|n| n.clone().into_owned()).collect();
        self.cells = names
            .iter()
            .enumerate()
            .filter(|(i, _)| !extras.iter().any(|x| x.index == *i && x.value.is_some()))
            .filter(|(_, n)| group_column.as_deref() != Some(&**n))
            .map(|(_, n)| n.clone().into_owned())
            .collect();
        if let Some(x) = extras.iter().find(|x| x.identity) {
            let name = &names[x.index];
            self.identity = self.cells.iter().position(|c| *c == **name);
        }
        if keyed {
            // The member key, cell 0, is unique as an identity value is.
            self.identity = Some(0);
        }
        self.group = group_column.map(|column| Grouping {
            column,
            ..Grouping::default()
        });
        self.schemas = vec![None; self.cells.len()];
        self.count = count;
        self.key = key;
        self.table_line = line.number;
        self.count_column = line.column_of(after_key);
        let bracket_end = after_key.len() - rest.len();
        let real_prefix = line.column_of(&after_key[bracket_end..]) - 1;
        self.table_shift = real_prefix as i64 - self.one_row().len() as i64;
        self.table = format!("{}{rest}", self.one_row());
        if self.key.is_some() {
            self.opts.limits.max_depth = self.opts.limits.max_depth.saturating_sub(1).max(1);
        }
        // The header as a table of no rows (a keyed map of one row the header alone cannot
        // fail, no map being empty): what the in-memory decoder says of it.
        let empty = if keyed && count == Count::Known(0) {
            format!("{}\n## [0:]{rest}\n", self.header)
        } else if keyed {
            format!("{}\n## [?:]{rest}\n", self.header)
        } else {
            format!("{}\n## [0]{rest}\n", self.header)
        };
        match self.opts.from_str::<Value>(&empty) {
            Err(e) if !keyed || e.line() == Some(2) => Err(self.header_error(e)),
            _ => Ok(()),
        }
    }

    /// Opens an array that is not a table: expanded `@N` items (read one at a time like
    /// rows) or an inline `[N]: a,b` line (its items handed out one at a time).
    fn open_list(
        &mut self,
        line: &Line<'_>,
        key: Option<String>,
        count: Count,
        after_key: &str,
        rest: &str,
    ) -> Result<()> {
        self.count = count;
        self.key = key;
        self.table_line = line.number;
        self.count_column = line.column_of(after_key);
        if self.key.is_some() {
            self.opts.limits.max_depth = self.opts.limits.max_depth.saturating_sub(1).max(1);
        }
        self.check_declared(line, after_key, count)?;
        // The one-item header moves the rest of the line as the one-row header does.
        let bracket_end = after_key.len() - rest.len();
        let real_prefix = line.column_of(&after_key[bracket_end..]) - 1;
        self.table_shift = real_prefix as i64 - ONE_ROW.len() as i64;
        if rest.trim_matches(' ').is_empty() {
            self.list = true;
            self.table = ONE_ROW.to_owned();
            return Ok(());
        }
        if !rest.starts_with(':') {
            return Err(not_a_table(
                Some(line),
                "the payload's root is not a table or a list",
            ));
        }
        // Inline items: one line, already bounded by the line limit, read as the whole
        // decoder reads it (`## key [N]: ...` is its error).
        self.open_inline(line)
    }

    /// Decodes the one line of an inline array (the table's header line) and keeps its items
    /// to hand out.
    fn open_inline(&mut self, line: &Line<'_>) -> Result<()> {
        let value: Value = self
            .opts
            .from_str(&self.alone(line))
            .map_err(|e| moved_to(e, line))?;
        let items = match (value, &self.key) {
            (Value::Array(items), None) => items,
            (Value::Object(mut m), Some(key)) => match m.remove(key) {
                Some(Value::Array(items)) => items,
                _ => return Err(not_a_table(Some(line), NOT_AN_ARRAY)),
            },
            _ => return Err(not_a_table(Some(line), NOT_AN_ARRAY)),
        };
        self.inline = Some(items.into());
        Ok(())
    }

    /// A declared count past `max_elements` is refused at its bracket.
    fn check_declared(&self, line: &Line<'_>, bracket: &str, count: Count) -> Result<()> {
        match count {
            Count::Known(n) if n > self.max_rows as u64 => Err(line.error_at(
                ErrorKind::LimitExceeded(Limit::Elements),
                bracket,
                format!(
                    "declared count {n} exceeds the limit of {} elements",
                    self.max_rows
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Opens a `key[N]: a,b` member: its items handed out one at a time.
    fn open_inline_member(&mut self, line: &Line<'_>, key: String, bracket: &str) -> Result<()> {
        let (count, _, _) = lex::table_count(line, bracket, self.opts.spec.current())?;
        self.check_declared(line, bracket, count)?;
        self.count = count;
        self.table_line = line.number;
        self.count_column = line.column_of(bracket);
        self.key = Some(key);
        self.inline_member = Some(line.text.to_owned());
        self.open_inline(line)
    }

    /// Reads the next row's lines into `mini`; `false` when the table has ended (after the
    /// end checks).
    fn next_row(&mut self) -> Result<bool> {
        if let Some(items) = &mut self.inline {
            if let Some(item) = items.pop_front() {
                self.item = Some(item);
                self.found += 1;
                return Ok(true);
            }
            self.finish()?;
            return Ok(false);
        }
        if let Count::Known(n) = self.count {
            if self.found >= n {
                self.finish()?;
                return Ok(false);
            }
        }
        if !self.peek()? {
            self.finish()?;
            return Ok(false);
        }
        let (is_member, is_trailer) = {
            let line = self.lines.line()?;
            (
                // Any `##` line ends the rows: a section, or one the whole decoder refuses
                // as a section line (it never reads one as a row).
                line.indent == 0 && line.text.starts_with("##"),
                line.indent == 0 && header::is_metadata(&line),
            )
        };
        if is_trailer || is_member || self.ends_the_list()? {
            self.finish()?;
            return Ok(false);
        }
        if self.group.as_ref().is_some_and(|g| g.left == 0) {
            if !self.group_header()? {
                self.finish()?;
                return Ok(false);
            }
            // The group's first row follows its sub-header.
            return self.next_row();
        }
        if self.found >= self.max_rows as u64 {
            let line = self.lines.line()?;
            return Err(line.error(
                ErrorKind::LimitExceeded(Limit::Elements),
                format!("the table has more than {} rows", self.max_rows),
            ));
        }
        self.take_row()?;
        self.found += 1;
        if let Some(g) = &mut self.group {
            g.left -= 1;
        }
        Ok(true)
    }

    /// Whether the held line ends a list: a line at the list's level that is no `@N` item
    /// (a tab-indented line is the row's, where the whole decoder refuses it).
    fn ends_the_list(&mut self) -> Result<bool> {
        if !self.list {
            return Ok(false);
        }
        let line = self.lines.line()?;
        Ok(line.indent == 0 && !line.text.starts_with('@') && !line.text.starts_with('\t'))
    }

    /// Reads the sub-header `column=value [n]` that opens the next group (the held line):
    /// `false`, consuming nothing, when the line is not one and the table may end there.
    fn group_header(&mut self) -> Result<bool> {
        let short = matches!(self.count, Count::Known(n) if self.found < n);
        let line = self.lines.line()?;
        let Some(g) = &mut self.group else {
            return Ok(true);
        };
        if line.indent != 0 || line.text.starts_with("##") {
            return Ok(false);
        }
        let parsed = (|| {
            let text = line.text;
            if !text.ends_with(']') {
                return None;
            }
            let (name, rest) = lex::key(&line, text, b"=").ok()?;
            let rest = rest.strip_prefix('=')?;
            let open = rest.rfind(" [")?;
            Some((name, lex::trim(&rest[..open]), &rest[open + 1..]))
        })();
        let Some((name, token, bracket)) = parsed else {
            if short {
                return Err(line.error(
                    ErrorKind::InvalidGroupHeader,
                    "expected a group sub-header `column=value [n]` here",
                ));
            }
            return Ok(false);
        };
        let (count, tail) = lex::count(&line, bracket)?;
        if !tail.is_empty() {
            if short {
                return Err(line.error(
                    ErrorKind::InvalidGroupHeader,
                    "expected a group sub-header `column=value [n]` here",
                ));
            }
            return Ok(false);
        }
        let n = match count {
            Count::Known(0) | Count::Deferred => {
                return Err(line.error_at(
                    ErrorKind::InvalidCount,
                    bracket,
                    "a group's sub-header counts its rows, at least one",
                ))
            }
            Count::Known(n) => n,
        };
        if name != g.column {
            if !short {
                return Ok(false);
            }
            return Err(line.error(
                ErrorKind::InvalidGroupHeader,
                format!(
                    "the sub-header names {name:?}, the table is grouped by {:?}",
                    g.column
                ),
            ));
        }
        if !g.seen.insert(canonical(token)) {
            return Err(line.error_at(
                ErrorKind::DuplicateGroup,
                token,
                format!("a second group for {name}={token}"),
            ));
        }
        let bracket_at = line.text.len() - bracket.len();
        g.header = format!("{}[1]", &line.text[..bracket_at]);
        g.line = line.number;
        g.token_column = line.column_of(token) as u64;
        g.left = n;
        self.held = false;
        Ok(true)
    }

    /// Takes the held line and the lines that belong to its row into `mini`.
    fn take_row(&mut self) -> Result<()> {
        self.held = false;
        self.mini.clear();
        self.mini_lines.clear();
        self.shifts.clear();
        self.line_shifts.clear();
        self.mini.push_str(&self.header);
        self.mini.push('\n');
        self.mini.push_str(&self.table);
        self.mini.push('\n');
        self.row_mini_line = 3;
        if let Some(g) = &self.group {
            self.mini.push_str(&g.header);
            self.mini.push('\n');
            self.mini_lines.push(g.line);
            self.row_mini_line = 4;
        }
        // The row line: `@N` renumbered, the cells with an inline schema noted.
        let mut eligible: Vec<(usize, bool)> = Vec::new();
        let (row_text_start, row_line_end);
        {
            let line = self.lines.line()?;
            self.mini_lines.push(line.number);
            let mut text = line.text;
            self.mini.push_str(&" ".repeat(line.indent));
            self.last_had_id = false;
            // An indented row line is the decoders' `invalid_indent` before its id is read.
            if let Some(rest) = text.strip_prefix('@').filter(|_| line.indent == 0) {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                // A row's id is `@N ` (else the text is a cell); an item's is any `@N`.
                let spaced = rest.as_bytes().get(digits) == Some(&b' ');
                if digits > 0 && (spaced || self.list) {
                    let id = rest[..digits].parse::<u64>().unwrap_or(u64::MAX);
                    if id != self.found {
                        return Err(line.error(
                            ErrorKind::InvalidItemId,
                            format!("item @{} is at index {}", &rest[..digits], self.found),
                        ));
                    }
                    self.last_had_id = !self.list;
                    self.mini.push_str("@0");
                    self.shifts
                        .push((line.indent as u64 + 3, 1 - digits as i64));
                    text = &rest[digits..];
                }
            }
            // Only an `@N` row carries markers (spec §7.4.4); a cell is one when it is `^`
            // or a whole `^{fields}` declaration.
            let cells = lex::split(text, b'|')
                .enumerate()
                .filter(|_| self.last_had_id);
            for (k, cell) in cells {
                if cell.starts_with("^{") && is_schema(&line, &cell[1..], &self.opts) {
                    if let (Some(slot), Some(end)) = (self.schemas.get_mut(k), cell.rfind('}')) {
                        *slot = Some(cell[1..=end].to_owned());
                    }
                    eligible.push((k, false));
                } else if cell == "^" && self.schemas.get(k).is_some_and(Option::is_some) {
                    eligible.push((k, true));
                }
            }
            self.pending_id = self.identity.and_then(|i| {
                let cell = lex::split(text, b'|').nth(i)?;
                Some((
                    canonical(cell),
                    line.number as u64,
                    line.column_of(cell) as u64,
                ))
            });
            row_text_start = self.mini.len();
            row_line_end = row_text_start + text.len();
            push_line(&mut self.mini, text);
        }
        // The lines the row owns.
        let mut positional: Vec<usize> = Vec::new();
        let mut unmatched = eligible;
        let mut pending_schema: Option<(usize, String, u64, u64)> = None;
        while self.peek()? {
            let line = self.lines.line()?;
            // A tab in a line's indentation is the whole decoder's error where it reads the
            // line, which may come before a later error of the row's own lines: the row's
            // payload takes the line, to fail there in reading order.
            let owned = if line.text.starts_with('\t') {
                true
            } else if self.list || self.group.is_some() {
                line.indent > 0
            } else if line.indent > 0 {
                if line.indent == 2 && !line.text.starts_with('.') && !unmatched.is_empty() {
                    let (k, bare) = unmatched.remove(0);
                    if bare {
                        positional.push(k);
                    }
                }
                true
            } else if let Some(rest) = line.text.strip_prefix('.') {
                if let Ok((name, _)) = lex::key(&line, rest, b" [{=") {
                    if let Some(i) = unmatched
                        .iter()
                        .position(|&(k, _)| self.cells.get(k).is_some_and(|c| *c == name))
                    {
                        unmatched.remove(i);
                    }
                }
                true
            } else if line.text.starts_with("##") {
                false
            } else if !unmatched.is_empty() {
                let (k, bare) = unmatched.remove(0);
                if bare {
                    positional.push(k);
                }
                true
            } else {
                false
            };
            if !owned {
                break;
            }
            self.held = false;
            // `.field [N]` takes the shared schema unless its body is `@N` items (an expanded
            // array has no other spelling), as the in-memory decoder decides.
            if let Some((at, schema, mini_line, col)) = pending_schema.take() {
                if !line.text.starts_with('@') {
                    self.mini.insert_str(at, &schema);
                    self.line_shifts
                        .push((mini_line, col, schema.chars().count() as i64));
                }
            }
            self.mini_lines.push(line.number);
            self.mini.push_str(&" ".repeat(line.indent));
            let mini_line = self.mini_lines.len() as u64 + 2;
            let shared = if self.list {
                None
            } else {
                shared_array(&mut self.array_schemas, &self.opts, &line)
            };
            if let Some((at, schema)) = shared {
                let col = line.column_at(at) as u64;
                pending_schema = Some((self.mini.len() + at, schema, mini_line, col));
            }
            push_line(&mut self.mini, line.text);
        }
        if !positional.is_empty() {
            self.rewrite_markers(row_text_start, row_line_end, &positional);
        }
        Ok(())
    }

    /// Rewrites the bare `^` cells `positional` of the row line (`mini[start..end]`) as the
    /// `^{fields}` their schema is, recording the column shifts.
    fn rewrite_markers(&mut self, start: usize, end: usize, positional: &[usize]) {
        let text = self.mini[start..end].to_owned();
        let base_col = self.mini[..start]
            .rsplit('\n')
            .next()
            .map_or(0, |s| s.chars().count()) as u64;
        let mut out = String::with_capacity(text.len() + 64);
        let mut last = 0;
        let mut added = self.shifts.last().map_or(0, |s| s.1);
        for (k, cell) in lex::split(&text, b'|').enumerate() {
            if !positional.contains(&k) {
                continue;
            }
            let Some(schema) = self.schemas.get(k).and_then(Option::as_ref) else {
                continue;
            };
            let at = lex::offset_in(&text, cell) + 1;
            out.push_str(&text[last..at]);
            out.push_str(schema);
            last = at;
            let col = base_col + text[..at].chars().count() as u64 + 1;
            added += schema.chars().count() as i64;
            self.shifts.push((col, added));
        }
        out.push_str(&text[last..]);
        self.mini.replace_range(start..end, &out);
    }

    /// Records the deferred sections a row's one-row payload held (`deferred`, at their
    /// positions in it), at their input lines.
    fn count_nested(&mut self, deferred: &[(Position, u64)]) {
        // A trailer entry takes at least two characters (`1,`).
        let keep = self.opts.limits.max_line_length / 2;
        for &(at, found) in deferred {
            self.nested_deferred += 1;
            if self.nested.len() < keep {
                let line = self
                    .mini_lines
                    .get(at.line.saturating_sub(3) as usize)
                    .copied()
                    .unwrap_or(self.table_line);
                self.nested.push((line as u64, found));
            }
        }
    }

    /// The checks when the rows end: the declared count, the trailer and what may follow.
    fn finish(&mut self) -> Result<()> {
        if let Some(g) = self.group.as_ref().filter(|g| g.left > 0) {
            return Err(Error::at(
                ErrorKind::CountMismatch,
                g.line as u64,
                g.token_column,
                format!(
                    "the group declares {} more rows than follow its sub-header",
                    g.left
                ),
            ));
        }
        // A table short of its declared count is refused at its bracket before anything after
        // it is read (the whole decoder checks the count where the rows end).
        if let Count::Known(n) = self.count {
            if self.found < n {
                return Err(self.short(n));
            }
        }
        // The trailer's line and counts (read only when there are deferred sections, as the
        // whole decoder reads them: a bad `counts=` is its error then alone).
        let mut summary_counts: Option<(usize, Result<TrailerCounts>)> = None;
        while self.peek()? {
            self.held = false;
            let line = self.lines.line()?;
            if line.text.starts_with('\t') {
                return Err(lex::tab_indentation(&line));
            }
            if summary_counts.is_none() && line.indent == 0 && header::is_metadata(&line) {
                let summary = header::parse_summary(line)?;
                let counts = summary.counts().map(|counts| {
                    counts
                        .map(|c| {
                            c.iter()
                                .map(|(n, text)| (*n, summary.line.column_of(text) as u64))
                                .collect()
                        })
                        .unwrap_or_default()
                });
                summary_counts = Some((line.number, counts));
                continue;
            }
            if summary_counts.is_some() {
                return Err(line.error(
                    ErrorKind::InvalidLine,
                    "content after the `##! summary` trailer",
                ));
            }
            if self.key.is_some() && self.inline.is_some() {
                // An inline member is one line: the whole decoder reads what follows as the
                // root's next member, and says what it says of it.
                return Err(self.whole_error(&line));
            }
            if self.found == 0 && line.indent > 0 {
                // No row to hold an indented line (a `[0]` table): the whole decoder reads it
                // where the root's next member goes, and refuses its indentation there.
                return Err(self.whole_error(&line));
            }
            if self.key.is_some() && line.indent == 0 {
                if line.text.starts_with("##") && !line.text.starts_with("## ") {
                    return Err(line.error(
                        ErrorKind::InvalidLine,
                        "a section line is `## name`, with one space",
                    ));
                }
                if looks_like_member(&line) {
                    return Err(not_a_table(Some(&line), MORE_THAN_THE_TABLE));
                }
                // A list's items are `@N` lines: after the declared items, the whole decoder
                // reads any other line at the root's level as the next member, and what it
                // says of that member (a bad key, a line that is no member) is the error.
                if self.list && !line.text.starts_with('@') {
                    return Err(self.whole_error(&line));
                }
            }
            let (kind, message) = match self.count {
                // After a row with attachments, a line that is not a row or a section (a
                // `##` line ends the table for the whole decoder) is a body without a marker.
                Count::Known(_)
                    if self.last_had_id
                        && !line.text.starts_with('@')
                        && !looks_like_member(&line) =>
                {
                    (
                        ErrorKind::OrphanInlineAttachment,
                        "a positional attachment body without an inline-schema marker to fill"
                            .to_owned(),
                    )
                }
                Count::Known(n) => (
                    ErrorKind::CountMismatch,
                    format!("more rows than the declared [{n}]"),
                ),
                Count::Deferred => (
                    ErrorKind::InvalidLine,
                    "a root array cannot be followed by other content".to_owned(),
                ),
            };
            return Err(line.error(kind, message));
        }
        match self.count {
            Count::Known(n) if n != self.found => Err(self.short(n)),
            Count::Known(_) => Ok(()),
            Count::Deferred => Ok(()),
        }?;
        // Deferred sections: the table's own (its bracket comes first) and those inside rows.
        let own = u64::from(matches!(self.count, Count::Deferred));
        let deferred = own + self.nested_deferred;
        if deferred == 0 {
            return Ok(());
        }
        let Some((line, counts)) = summary_counts else {
            if !self.require_trailer {
                return Ok(());
            }
            return Err(Error::at_line(
                ErrorKind::TruncatedInput,
                self.lines.number().max(1),
                1,
                format!(
                    "the input ends without the `##! summary` trailer that the deferred [?] \
                     section at line {} requires: it may be truncated",
                    self.table_line
                ),
            ));
        };
        let counts = counts?;
        if counts.len() as u64 != deferred {
            return Err(Error::at_line(
                ErrorKind::CountMismatch,
                line,
                1,
                format!(
                    "the trailer lists {} counts but the payload has {deferred} deferred sections",
                    counts.len()
                ),
            ));
        }
        // The entries in document order: the table's own (its bracket comes first), then
        // the rows' sections.
        let own = (own == 1).then_some((self.table_line as u64, self.found));
        for ((at, found), &(declared, column)) in own
            .into_iter()
            .chain(self.nested.iter().copied())
            .zip(&counts)
        {
            if declared != found {
                return Err(Error::at(
                    ErrorKind::CountMismatch,
                    line as u64,
                    column,
                    format!(
                        "the trailer declares {declared} items for the [?] section at line {at}, \
                         which has {found}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A payload of the header line and `line` alone (its indentation kept), for the whole
    /// decoder to read; [`moved_to`] puts its errors back on `line`.
    fn alone(&self, line: &Line<'_>) -> String {
        format!(
            "{}\n{:indent$}{}\n",
            self.header,
            "",
            line.text,
            indent = line.indent
        )
    }

    /// The whole decoder's error for `line` read as the root's first member (its second,
    /// after an inline member's line), else (a good member) `not_a_table`.
    #[cold]
    fn whole_error(&self, line: &Line<'_>) -> Error {
        let mut text = self.alone(line);
        if let Some(first) = &self.inline_member {
            text.insert_str(self.header.len() + 1, &format!("{first}\n"));
        }
        let at = if self.inline_member.is_some() { 3 } else { 2 };
        match self.opts.from_str::<serde::de::IgnoredAny>(&text) {
            // A count short or a trailer missing is the payload made here ending after the
            // line: the line opens a member of more lines, which the whole decoder reads on
            // (`not_a_table`, as for a good member).
            Err(e)
                if e.line() == Some(at)
                    && !matches!(
                        e.kind(),
                        ErrorKind::CountMismatch | ErrorKind::TruncatedInput
                    ) =>
            {
                moved_from(e, at, line)
            }
            _ => not_a_table(Some(line), MORE_THAN_THE_TABLE),
        }
    }

    /// The table ended before its declared count.
    #[cold]
    fn short(&self, n: u64) -> Error {
        Error::at(
            ErrorKind::CountMismatch,
            self.table_line as u64,
            self.count_column as u64,
            format!("declared [{n}] but found {} items", self.found),
        )
    }

    /// An error of the one-row table moved to the input's lines and columns.
    fn row_error(&self, e: Error) -> Error {
        let Some(line) = e.line() else {
            let at = self.mini_lines.first().copied().unwrap_or(self.table_line);
            return e.with_line(at as u64);
        };
        match line {
            1 => e,
            2 => self.header_error(e),
            n => {
                let real = self
                    .mini_lines
                    .get((n - 3) as usize)
                    .copied()
                    .unwrap_or(self.lines.number()) as u64;
                match e.column() {
                    Some(col) if n == self.row_mini_line => {
                        let shift = self
                            .shifts
                            .iter()
                            .rev()
                            .find(|&&(from, _)| col >= from)
                            .map_or(0, |s| s.1);
                        let col = (col as i64 - shift).max(1) as u64;
                        e.with_position(Position {
                            line: real,
                            column: col,
                        })
                    }
                    Some(col) => e.with_position(Position {
                        line: real,
                        column: self
                            .line_shifts
                            .iter()
                            .find(|&&(l, from, _)| l == n && col >= from)
                            .map_or(col, |&(_, _, added)| (col as i64 - added).max(1) as u64),
                    }),
                    None => e.with_line(real),
                }
            }
        }
    }

    /// The one-row table's prefix: `## [1]`, or a keyed map's `## [1:]`.
    fn one_row(&self) -> &'static str {
        if self.keyed {
            ONE_ENTRY
        } else {
            ONE_ROW
        }
    }

    /// An error on the one-row table's header line moved to the table's header line.
    fn header_error(&self, e: Error) -> Error {
        match (e.line(), e.column()) {
            (Some(2), Some(col)) => {
                // Column 1 is the line's start in both; past the prefix, the rest of the
                // line moved; inside it, the count.
                let col = if col == 1 {
                    1
                } else if col as usize > self.one_row().len() {
                    (col as i64 + self.table_shift).max(1) as u64
                } else {
                    self.count_column as u64
                };
                e.with_position(Position {
                    line: self.table_line as u64,
                    column: col,
                })
            }
            (Some(2), None) => e.with_line(self.table_line as u64),
            _ => e,
        }
    }
}

/// For a row's `.field [N]{fields}` attachment, records the shared array schema (the
/// first declaration of the field holds); for a `.field [N]` without fields when one is
/// established, gives where to insert it and the schema.
fn shared_array(
    schemas: &mut Vec<(String, String)>,
    opts: &DecoderOptions,
    line: &Line<'_>,
) -> Option<(usize, String)> {
    if line.indent > 2 {
        return None;
    }
    let rest = line.text.strip_prefix('.')?;
    let (name, after) = lex::key(line, rest, b" [{=").ok()?;
    let bracket = after.trim_start_matches(' ');
    if !bracket.starts_with('[') {
        return None;
    }
    let current = opts.spec.current();
    let (_, keyed, tail) = lex::table_count(line, bracket, current).ok()?;
    if keyed {
        return None;
    }
    let known = schemas.iter().find(|(n, _)| *n == name);
    if tail.starts_with('{') {
        if known.is_none() {
            let mut fields = Vec::new();
            let mut extras = Vec::new();
            let end = lex::field_decl_ext(
                line,
                tail,
                opts.limits.max_fields,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine,
                &mut fields,
                current.then_some(&mut extras),
            )
            .ok()?;
            let decl = tail[..tail.len() - end.len()].to_owned();
            schemas.push((name.into_owned(), decl));
        }
        return None;
    }
    if !tail.trim_matches(' ').is_empty() {
        return None;
    }
    let (_, schema) = known?;
    Some((line.text.len() - tail.len(), schema.clone()))
}

/// Whether `decl` is exactly one field declaration `{a,b,...}`.
fn is_schema(line: &Line<'_>, decl: &str, opts: &DecoderOptions) -> bool {
    let mut fields = Vec::new();
    matches!(
        lex::field_decl_ext(
            line,
            decl,
            opts.limits.max_fields,
            ErrorKind::InvalidKey,
            ErrorKind::InvalidLine,
            &mut fields,
            None,
        ),
        Ok(rest) if rest.trim_matches([' ', '\t']).is_empty()
    )
}

/// A trailer's counts, each with its column.
type TrailerCounts = Vec<(u64, u64)>;

/// A value-grouped table as it is read.
#[derive(Debug, Default)]
struct Grouping {
    column: String,
    /// Rows the current sub-header still declares.
    left: u64,
    /// The current sub-header as the one-row table repeats it (`k=v [1]`), its line, and
    /// the column of its value.
    header: String,
    line: usize,
    token_column: u64,
    /// The group values seen (each once: `duplicate_group`).
    seen: HashSet<String>,
}

/// A scalar token as a value to compare: a quoted string by its text, `-` null, a JSON
/// number or literal by its JSON form, anything else a string.
fn canonical(token: &str) -> String {
    if token.starts_with('"') {
        return match serde_json::from_str::<String>(token) {
            Ok(s) => Value::String(s).to_string(),
            Err(_) => token.to_owned(),
        };
    }
    if token == "-" {
        return "null".to_owned();
    }
    match serde_json::from_str::<Value>(token) {
        Ok(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
        _ => Value::String(token.to_owned()).to_string(),
    }
}

/// Whether a root-level line starts an object member.
fn looks_like_member(line: &Line<'_>) -> bool {
    if line.text.starts_with("##") {
        return true;
    }
    match lex::key(line, line.text, b"=[") {
        Ok((_, rest)) => rest.starts_with('=') || rest.starts_with('['),
        Err(_) => false,
    }
}

/// Whether a row's error `e` is one the decoders find before they check the row's member key
/// or identity value (the cell at `line`, `column`) against the rows before: the row line's
/// width, its markers (`check_shaped_row`), and the key cell itself.
fn before_identity(e: &Error, line: u64, column: u64) -> bool {
    e.line() == Some(line)
        && (matches!(
            e.kind(),
            ErrorKind::RowWidthMismatch
                | ErrorKind::InvalidGroupHeader
                | ErrorKind::InvalidAttachmentMarker
                | ErrorKind::InvalidKeyedMap
        ) || e.column() == Some(column))
}

/// An error of a payload made by [`RowReader::alone`] moved from its line 2 to `line`.
fn moved_to(e: Error, line: &Line<'_>) -> Error {
    moved_from(e, 2, line)
}

/// An error on line `at` of a payload made for one line moved to `line`.
fn moved_from(e: Error, at: u64, line: &Line<'_>) -> Error {
    match (e.line(), e.column()) {
        (Some(l), Some(column)) if l == at => e.with_position(Position {
            line: line.number as u64,
            column,
        }),
        (Some(l), None) if l == at => e.with_line(line.number as u64),
        _ => e,
    }
}

#[cold]
fn not_a_table(line: Option<&Line<'_>>, message: &str) -> Error {
    match line {
        Some(line) => line.error(ErrorKind::NotATable, message),
        None => Error::new(ErrorKind::NotATable, message),
    }
}

/// A keyed map's one entry, read from its one-entry map.
struct OneEntry<T> {
    key: String,
    value: T,
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for OneEntry<T> {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Visit<T>(PhantomData<T>);

        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = OneEntry<T>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a keyed map of one entry")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<OneEntry<T>, A::Error> {
                let Some((key, value)) = map.next_entry()? else {
                    return Err(serde::de::Error::invalid_length(0, &self));
                };
                if map.next_key::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(serde::de::Error::invalid_length(2, &self));
                }
                Ok(OneEntry { key, value })
            }
        }

        deserializer.deserialize_map(Visit(PhantomData))
    }
}

/// The entries of a keyed map as `(key, T)` pairs: from [`RowReader::entries`].
#[derive(Debug)]
pub struct Entries<'r, R, T> {
    reader: &'r mut RowReader<R>,
    marker: PhantomData<fn() -> T>,
}

impl<R: BufRead, T: DeserializeOwned> Iterator for Entries<'_, R, T> {
    type Item = Result<(String, T)>;

    fn next(&mut self) -> Option<Result<(String, T)>> {
        self.reader.read_entry().transpose()
    }
}

/// The rows of a [`RowReader`] as `T`s: from [`RowReader::deserialize`].
#[derive(Debug)]
pub struct DeserializeRows<'r, R, T> {
    reader: &'r mut RowReader<R>,
    marker: PhantomData<fn() -> T>,
}

impl<R: BufRead, T: DeserializeOwned> Iterator for DeserializeRows<'_, R, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        self.reader.read_row().transpose()
    }
}

impl DecoderOptions {
    /// A [`RowReader`] over `reader` with these options.
    pub fn row_reader<R: BufRead>(&self, reader: R) -> Result<RowReader<R>> {
        RowReader::with_options(reader, self)
    }
}
