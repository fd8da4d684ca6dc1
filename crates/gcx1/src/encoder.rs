//! Encoding: [`Encoder`] writes sections (a header, then rows and comments) to any
//! `io::Write`, and [`Cell`] is what a row is made of.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;

use crate::decoder::{Limits, Section};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::escape::{escape_first_into, escape_into, push_bytes};
use crate::float::{write_go_g32, write_go_g64};
use crate::header::{write_header, write_header_parts, Header};

/// Buffered output is handed to the writer once it exceeds this many bytes.
const FLUSH_AT: usize = 64 * 1024;

/// The first capacity of an in-memory encoder's buffer, which grows as it fills.
const IN_MEMORY_START: usize = 1024;

/// The first capacity of a typed layout's in-memory encoder ([`Encoder::in_memory_sized`]):
/// room for a typical tool response (the corpus's code-intelligence payloads are 0.5 to
/// 3 kB), so that most are written without a `realloc`, which past 1 KiB takes `malloc`'s
/// large-chunk path (measured: 1 KiB 4.17 M, 2 KiB 4.12 M, 4 KiB 4.10 M, 8 KiB 4.09 M
/// instructions for ten rounds of the layouts' encode over those files; `encode_any`, whose
/// `Value`s leave more small blocks to the allocator, did worse from 4 KiB and keeps 1 KiB).
pub(crate) const RESPONSE_START: usize = 4096;

/// Where a [`Cell`] writes itself: one cell of the row being written.
///
/// Text is escaped as it is written; numbers are written as the Go reference writes them.
#[derive(Debug)]
pub struct CellWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> CellWriter<'a> {
    #[inline]
    pub(crate) fn new(out: &'a mut Vec<u8>, first: bool) -> Self {
        CellWriter { out, first }
    }

    /// Appends text, escaped. In the first cell of a row, text starting with `#` or `GCX`
    /// gets a leading backslash so that decoders do not take the row for a comment or a
    /// header; the backslash decodes away.
    #[inline(always)]
    pub fn write_str(&mut self, text: &str) {
        if self.first && !text.is_empty() {
            escape_first_into(self.out, text);
            self.first = false;
        } else {
            escape_into(self.out, text);
        }
    }

    /// Appends a signed integer in decimal.
    #[inline]
    pub fn write_i64(&mut self, value: i64) {
        self.raw(itoa::Buffer::new().format(value).as_bytes());
    }

    /// Appends an unsigned integer in decimal.
    #[inline]
    pub fn write_u64(&mut self, value: u64) {
        self.raw(itoa::Buffer::new().format(value).as_bytes());
    }

    /// Appends a float as Go's `strconv.FormatFloat(value, 'g', -1, 64)` does (`0.5`,
    /// `1e+06`, `1e-05`, `-0`). NaN and infinities are a `non_finite_float` error.
    #[inline]
    pub fn write_f64(&mut self, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(ErrorKind::NonFiniteFloat { value }.into());
        }
        self.first = false;
        write_go_g64(self.out, value);
        Ok(())
    }

    /// Appends a float as Go's `strconv.FormatFloat(float64(value), 'g', -1, 32)` does.
    #[inline]
    pub fn write_f32(&mut self, value: f32) -> Result<()> {
        if !value.is_finite() {
            return Err(ErrorKind::NonFiniteFloat {
                value: f64::from(value),
            }
            .into());
        }
        self.first = false;
        write_go_g32(self.out, value);
        Ok(())
    }

    /// Appends `true` or `false`.
    #[inline]
    pub fn write_bool(&mut self, value: bool) {
        self.first = false;
        if value {
            self.out.extend_from_slice(b"true");
        } else {
            self.out.extend_from_slice(b"false");
        }
    }

    /// Appends bytes that need no escaping and cannot start a comment or header.
    #[inline]
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.first = false;
        push_bytes(self.out, bytes);
    }

    pub(crate) fn buffer(&mut self) -> &mut Vec<u8> {
        self.out
    }
}

/// A value that can be one cell of a row: text, numbers, booleans, `Option`s of those
/// (`None` is an empty cell), and `serde_json::Value`.
///
/// | value | cell |
/// |---|---|
/// | `&str`, `String`, `char` | the text, escaped |
/// | `bool` | `true` / `false` |
/// | integers | decimal, the full 128-bit range |
/// | `f64`, `f32` | Go's shortest `%g` (`0.5`, `1e+06`, `-0`); NaN and infinities are an error |
/// | `None`, `()` | empty |
/// | `serde_json::Value` | null empty, strings as text, numbers as their JSON text, arrays and objects as compact JSON |
///
/// Rows with cells of different types can be written as `&[&dyn Cell]`:
///
/// ```
/// use agentwire_gcx1::{Cell, Encoder, Header};
///
/// let mut encoder = Encoder::new(Vec::new());
/// encoder.begin_section(&Header::new("find_usages", ["from", "confidence", "line"]))?;
/// encoder.write_row([&"main.go::run" as &dyn Cell, &0.95, &42])?;
/// let text = String::from_utf8(encoder.finish()?).unwrap();
/// assert_eq!(text, "GCX1 tool=find_usages fields=from,confidence,line\nmain.go::run\t0.95\t42\n");
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub trait Cell {
    /// Writes the cell.
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()>;
}

impl Cell for str {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_str(self);
        Ok(())
    }
}

impl Cell for String {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_str(self);
        Ok(())
    }
}

impl Cell for Cow<'_, str> {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_str(self);
        Ok(())
    }
}

impl Cell for char {
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_str(self.encode_utf8(&mut [0; 4]));
        Ok(())
    }
}

impl Cell for bool {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_bool(*self);
        Ok(())
    }
}

impl Cell for f64 {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_f64(*self)
    }
}

impl Cell for f32 {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        out.write_f32(*self)
    }
}

macro_rules! integer_cells {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            #[inline]
            fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
                out.raw(itoa::Buffer::new().format(*self).as_bytes());
                Ok(())
            }
        }
    )*};
}

integer_cells!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

impl Cell for () {
    fn write_cell(&self, _out: &mut CellWriter<'_>) -> Result<()> {
        Ok(())
    }
}

impl<T: Cell> Cell for Option<T> {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        match self {
            Some(value) => value.write_cell(out),
            None => Ok(()),
        }
    }
}

impl<T: Cell + ?Sized> Cell for &T {
    #[inline]
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        (**self).write_cell(out)
    }
}

impl<T: Cell + ?Sized> Cell for Box<T> {
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        (**self).write_cell(out)
    }
}

impl Cell for serde_json::Value {
    fn write_cell(&self, out: &mut CellWriter<'_>) -> Result<()> {
        crate::json::write_value_cell(out, self)
    }
}

/// Where a section begun by [`Encoder::begin_raw_section`] sits in the buffer.
#[derive(Debug)]
pub(crate) struct RawSection {
    start: usize,
    header_end: usize,
}

/// The header of the section being written.
#[derive(Debug)]
enum OpenHeader {
    Header(Header),
    /// A header written from borrowed names ([`Encoder::begin_named_section`]): its line,
    /// read back into a [`Header`] only when one is asked for.
    Line {
        text: Vec<u8>,
        line: u64,
        header: std::sync::OnceLock<Header>,
    },
}

impl OpenHeader {
    fn get(&self, limits: &Limits) -> &Header {
        match self {
            OpenHeader::Header(header) => header,
            OpenHeader::Line { text, line, header } => header.get_or_init(|| {
                // The encoder wrote the line only after checking it reads back.
                std::str::from_utf8(text)
                    .ok()
                    .and_then(|text| crate::header::parse_header(text, *line, limits).ok())
                    .unwrap_or_else(|| Header::named(""))
            }),
        }
    }
}

/// Where a section begun by [`Encoder::begin_rows`] sits in the buffer.
#[derive(Debug)]
pub(crate) struct RowsSection {
    start: usize,
    header_end: usize,
    /// The header's line number.
    line: u64,
    /// Its header and comment lines.
    lines: u64,
}

/// The state of the section being written.
#[derive(Debug)]
struct OpenSection {
    header: OpenHeader,
    width: usize,
    /// The header waits for the first serialized row's field names.
    deferred: bool,
    /// Comments written before a deferred header could be written.
    comments: Vec<String>,
    /// Field names seen in serialized rows, for a pointer comparison on later rows.
    names: Vec<Option<&'static str>>,
}

impl OpenSection {
    /// A section opened with `header`, written now or (`deferred`) at its first row.
    fn new(header: Header, deferred: bool) -> Self {
        let width = header.fields.len();
        OpenSection::of(OpenHeader::Header(header), width, deferred)
    }

    fn of(header: OpenHeader, width: usize, deferred: bool) -> Self {
        OpenSection {
            header,
            width,
            deferred,
            comments: Vec::new(),
            // Sized by the first serialized row.
            names: Vec::new(),
        }
    }
}

/// Writes a GCX1 payload: one or more sections, each a header followed by rows and comments.
///
/// Output is buffered internally and handed to the writer in large chunks; call
/// [`Encoder::finish`] to flush and get the writer back (dropping the encoder flushes too,
/// ignoring errors).
///
/// ```
/// use agentwire_gcx1::{Encoder, Header};
///
/// let header = Header::new("search_symbols", ["id", "kind", "line"])
///     .with_meta("total", 7)
///     .with_meta("truncated", false);
/// let mut encoder = Encoder::new(Vec::new());
/// encoder.begin_section(&header)?;
/// encoder.write_comment("2 result(s)")?;
/// encoder.serialize_row(&("a.go::F", "function", 10))?;
/// encoder.serialize_row(&("#tag", "type", 12))?;
/// let text = String::from_utf8(encoder.finish()?).unwrap();
/// assert_eq!(
///     text,
///     "GCX1 tool=search_symbols fields=id,kind,line total=7 truncated=false\n\
///      ## 2 result(s)\n\
///      a.go::F\tfunction\t10\n\
///      \\#tag\ttype\t12\n"
/// );
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug)]
pub struct Encoder<W: Write> {
    writer: Option<W>,
    buf: Vec<u8>,
    /// Lines written so far, buffered ones included.
    lines: u64,
    section: Option<OpenSection>,
    /// A write to the underlying writer failed; the output is incomplete.
    failed: bool,
    /// What a decoder with these limits reads: the encoder refuses to write more.
    limits: Limits,
    /// The buffer is handed to the writer once it holds this many bytes.
    flush_at: usize,
}

impl<W: Write> Encoder<W> {
    /// An encoder writing to `writer`. Begin a section with [`Encoder::begin_section`].
    ///
    /// It writes only what a decoder with the default [`Limits`] reads: a line longer than
    /// the line limit (`line_too_long`), a header with more fields or meta pairs than the
    /// limits (`too_many_fields`, `too_many_meta`) are errors here rather than at the reader.
    pub fn new(writer: W) -> Self {
        Self::with_limits(writer, Limits::default())
    }

    /// An encoder that writes only what a decoder with `limits` reads.
    pub fn with_limits(writer: W, limits: Limits) -> Self {
        Self::with_buffer(writer, limits, 8 * 1024)
    }

    fn with_buffer(writer: W, limits: Limits, capacity: usize) -> Self {
        Encoder {
            writer: Some(writer),
            buf: Vec::with_capacity(capacity),
            lines: 0,
            section: None,
            failed: false,
            limits,
            flush_at: FLUSH_AT,
        }
    }

    /// An encoder writing to `writer` that has already begun a section with `header`, as
    /// the Go reference's `NewEncoder(w, h)` does.
    pub fn with_header(writer: W, header: &Header) -> Result<Self> {
        let mut encoder = Encoder::new(writer);
        encoder.begin_section(header)?;
        Ok(encoder)
    }

    /// The number of lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The header of the section being written (while its fields are deferred, without
    /// fields).
    pub fn header(&self) -> Option<&Header> {
        let limits = &self.limits;
        self.section.as_ref().map(|s| s.header.get(limits))
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> Option<&W> {
        self.writer.as_ref()
    }

    /// Begins a new section by writing its header.
    ///
    /// The header is checked so that every decoder reads it back unchanged; it is an error
    /// (`invalid_header`, `empty_field_list`, `duplicate_field`, `reserved_meta_key`) when:
    ///
    /// - the tool name is empty;
    /// - a tool name, field name or meta key contains whitespace (the header is split on
    ///   spaces and trimmed) or U+FEFF; meta values may contain TAB and LF, which are escaped;
    /// - a field name contains `,`, or a meta key `=`;
    /// - two fields have the same name, or a meta key is `tool` or `fields`.
    ///
    /// A header without fields ([`Header::named`]) is written when the first row is
    /// serialized, with that row's field names.
    pub fn begin_section(&mut self, header: &Header) -> Result<()> {
        self.begin(Cow::Borrowed(header))
    }

    /// [`Encoder::begin_section`] with a header the encoder keeps (no copy of it).
    pub(crate) fn begin_owned_section(&mut self, header: Header) -> Result<()> {
        self.begin(Cow::Owned(header))
    }

    fn begin(&mut self, header: Cow<'_, Header>) -> Result<()> {
        self.close_section()?;
        let line = self.lines + 1;
        if header.fields.is_empty() {
            let mut probe = Header::clone(&header);
            probe.fields = vec![String::new()];
            write_header(&mut Vec::new(), &probe, line)?;
            // No fields yet: the header waits for the first row's names.
            self.section = Some(OpenSection::new(header.into_owned(), true));
            return Ok(());
        }
        self.write_checked_header(&header, line)?;
        self.lines += 1;
        self.section = Some(OpenSection::new(header.into_owned(), false));
        self.maybe_flush()
    }

    /// [`Encoder::begin_owned_section`] of a header without fields and the field names, not
    /// copied into the header (which is read back from its line if it is asked for).
    pub(crate) fn begin_named_section(&mut self, header: &Header, fields: &[&str]) -> Result<()> {
        self.close_section()?;
        let line = self.lines + 1;
        let start = self.buf.len();
        self.write_checked(&header.tool, fields, &header.meta, line)?;
        let end = self.buf.len() - 1;
        let text = self.buf[start..end].to_vec();
        self.lines += 1;
        let header = OpenHeader::Line {
            text,
            line,
            header: std::sync::OnceLock::new(),
        };
        self.section = Some(OpenSection::of(header, fields.len(), false));
        self.maybe_flush()
    }

    /// Begins a section whose rows the caller appends (each ended by LF) to
    /// [`Encoder::raw_rows`] before it knows the header they need: writes `header` (its
    /// tool and meta, and `fields`) and `comment`, then [`Encoder::finish_rows`] ends the
    /// section, with another header if need be, or [`Encoder::undo_rows`] takes it back.
    /// `None` (nothing written) where this header or comment cannot be written, and for
    /// an encoder that is not in memory (which flushes as it goes).
    pub(crate) fn begin_rows(
        &mut self,
        header: &Header,
        fields: &[&str],
        comment: Option<&str>,
    ) -> Result<Option<RowsSection>> {
        self.close_section()?;
        if self.flush_at != usize::MAX {
            return Ok(None);
        }
        let start = self.buf.len();
        let line = self.lines + 1;
        if self
            .write_checked(&header.tool, fields, &header.meta, line)
            .is_err()
        {
            // Nothing of it stays in the buffer.
            return Ok(None);
        }
        let header_end = self.buf.len();
        let mut lines = 1;
        if let Some(comment) = comment {
            if comment.len() + 2 > self.limits.max_line_length {
                self.buf.truncate(start);
                return Ok(None);
            }
            self.push_comment(comment);
            self.lines -= 1;
            lines += 1;
        }
        Ok(Some(RowsSection {
            start,
            header_end,
            line,
            lines,
        }))
    }

    /// The longest line the encoder writes.
    pub(crate) fn max_line_length(&self) -> usize {
        self.limits.max_line_length
    }

    /// Ends a row its caller appended to [`Encoder::raw_rows`] in the open section, checked
    /// as [`Encoder::write_row`] checks a row (its width and length).
    pub(crate) fn end_raw_row(&mut self) -> Result<()> {
        self.buf.push(b'\n');
        self.lines += 1;
        self.maybe_flush()
    }

    /// Takes back a section begun by [`Encoder::begin_rows`] and its rows.
    pub(crate) fn undo_rows(&mut self, section: &RowsSection) {
        self.buf.truncate(section.start);
    }

    /// Ends a section begun by [`Encoder::begin_rows`], of `rows` rows, under `header`
    /// (with `fields`) instead of the one it began with, if given. The bytes and errors are
    /// those of [`Encoder::begin_named_section`] with the final header, the comment and the
    /// rows written in turn; on error the section is gone.
    pub(crate) fn finish_rows(
        &mut self,
        section: &RowsSection,
        header: Option<&Header>,
        fields: &[&str],
        rows: u64,
    ) -> Result<()> {
        let text = match header {
            Some(header) => {
                let end = self.buf.len();
                if let Err(e) = self.write_checked(&header.tool, fields, &header.meta, section.line)
                {
                    self.buf.truncate(section.start);
                    return Err(e);
                }
                let line = self.buf.split_off(end);
                let text = line[..line.len() - 1].to_vec();
                self.buf.splice(section.start..section.header_end, line);
                text
            }
            None => self.buf[section.start..section.header_end - 1].to_vec(),
        };
        self.lines += section.lines + rows;
        let header = OpenHeader::Line {
            text,
            line: section.line,
            header: std::sync::OnceLock::new(),
        };
        self.section = Some(OpenSection::of(header, fields.len(), false));
        Ok(())
    }

    /// Writes a header line, refusing what a decoder with the encoder's limits would refuse.
    fn write_checked_header(&mut self, header: &Header, line: u64) -> Result<()> {
        self.write_checked(&header.tool, &header.fields, &header.meta, line)
    }

    fn write_checked<F: AsRef<str>>(
        &mut self,
        tool: &str,
        fields: &[F],
        meta: &std::collections::BTreeMap<String, String>,
        line: u64,
    ) -> Result<()> {
        if fields.len() > self.limits.max_fields {
            return Err(Error::at(
                ErrorKind::TooManyFields {
                    count: fields.len(),
                    limit: self.limits.max_fields,
                },
                line,
                1,
            ));
        }
        if meta.len() > self.limits.max_meta {
            return Err(Error::at(
                ErrorKind::TooManyMeta {
                    count: meta.len(),
                    limit: self.limits.max_meta,
                },
                line,
                1,
            ));
        }
        let start = self.buf.len();
        write_header_parts(&mut self.buf, tool, fields, meta, line)?;
        if self.buf.len() - start - 1 > self.limits.max_line_length {
            self.buf.truncate(start);
            return Err(self.line_too_long(line));
        }
        Ok(())
    }

    fn line_too_long(&self, line: u64) -> Error {
        Error::at(
            ErrorKind::LineTooLong {
                limit: self.limits.max_line_length,
            },
            line,
            1,
        )
    }

    /// Begins a section whose rows the caller writes straight into [`Encoder::raw_rows`],
    /// under a header it may still change: nothing is flushed until
    /// [`Encoder::finish_raw_section`], and [`Encoder::undo_raw_section`] takes it all back.
    pub(crate) fn begin_raw_section(&mut self, header: &Header) -> Result<RawSection> {
        self.close_section()?;
        let start = self.buf.len();
        self.write_checked_header(header, self.lines + 1)?;
        Ok(RawSection {
            start,
            header_end: self.buf.len(),
        })
    }

    /// The buffer rows of a raw section are appended to, each ended by LF, checked by the
    /// caller as [`Encoder::write_row`] would check them.
    pub(crate) fn raw_rows(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Removes a raw section's header and rows.
    pub(crate) fn undo_raw_section(&mut self, section: &RawSection) {
        self.buf.truncate(section.start);
    }

    /// Ends a raw section of `rows` rows, whose header is `header`: when `rewrite`, it
    /// replaces the header the section began with. On error nothing has changed.
    pub(crate) fn finish_raw_section(
        &mut self,
        section: &RawSection,
        header: &Header,
        rewrite: bool,
        rows: u64,
    ) -> Result<()> {
        if rewrite {
            let end = self.buf.len();
            self.write_checked_header(header, self.lines + 1)?;
            let new_len = self.buf.len() - end;
            let old_len = section.header_end - section.start;
            self.buf[section.start..].rotate_right(new_len);
            let old = section.start + new_len;
            self.buf.drain(old..old + old_len);
        }
        self.lines += 1 + rows;
        self.section = Some(OpenSection::new(header.clone(), false));
        self.maybe_flush()
    }

    /// Writes an empty row line: the reference's row for `{}`, one empty field.
    pub(crate) fn write_blank_row(&mut self) -> Result<()> {
        if self.section.is_none() {
            return Err(Error::at(ErrorKind::NoSection, self.lines + 1, 1));
        }
        self.buf.push(b'\n');
        self.lines += 1;
        self.maybe_flush()
    }

    /// Fails if the open section is still waiting for its fields.
    fn close_section(&mut self) -> Result<()> {
        if let Some(section) = &self.section {
            if section.deferred {
                return Err(Error::at(ErrorKind::EmptyFieldList, self.lines + 1, 1));
            }
        }
        Ok(())
    }

    /// Writes one row. Fewer values than fields are padded with empty cells; more values are
    /// a `too_many_values` error. A one-column row with an empty value is an `empty_row`
    /// error: it would be a blank line, which decoders skip.
    ///
    /// On error nothing of the row is written and the encoder stays usable.
    pub fn write_row<I>(&mut self, cells: I) -> Result<()>
    where
        I: IntoIterator,
        I::Item: Cell,
    {
        let line = self.lines + 1;
        let width = match &self.section {
            None => return Err(Error::at(ErrorKind::NoSection, line, 1)),
            Some(s) if s.deferred => return Err(Error::at(ErrorKind::EmptyFieldList, line, 1)),
            Some(s) => s.width,
        };
        let start = self.buf.len();
        let mut count = 0;
        let mut cells = cells.into_iter();
        for cell in cells.by_ref() {
            if count == width {
                let found = width + 1 + cells.count();
                return Err(self.row_error(
                    start,
                    ErrorKind::TooManyValues {
                        expected: width,
                        found,
                    },
                ));
            }
            if count > 0 {
                self.buf.push(b'\t');
            }
            let cell_start = self.buf.len();
            if let Err(e) = cell.write_cell(&mut CellWriter::new(&mut self.buf, count == 0)) {
                self.buf.truncate(cell_start);
                return Err(self.row_error(start, e.into_kind()));
            }
            count += 1;
        }
        self.end_row(start, count, width)
    }

    /// Pads the row being written to `width` cells and ends it.
    fn end_row(&mut self, start: usize, count: usize, width: usize) -> Result<()> {
        for _ in count.max(1)..width {
            self.buf.push(b'\t');
        }
        if width == 1 && self.buf.len() == start {
            return Err(self.row_error(start, ErrorKind::EmptyRow));
        }
        if self.buf.len() - start > self.limits.max_line_length {
            self.buf.truncate(start);
            return Err(self.line_too_long(self.lines + 1));
        }
        self.buf.push(b'\n');
        self.lines += 1;
        self.maybe_flush()
    }

    /// An error for the row that started at `start`, positioned where the buffer ends; the
    /// row is removed from the buffer.
    fn row_error(&mut self, start: usize, kind: ErrorKind) -> Error {
        let written = String::from_utf8_lossy(&self.buf[start..]).chars().count() as u64;
        self.buf.truncate(start);
        Error::new(kind, Some(Position::new(self.lines + 1, written + 1)))
    }

    /// Writes one row from a `Serialize` value, like the csv crate:
    ///
    /// - a struct or map gives its fields in order; their names must match the header's
    ///   fields (`field_mismatch` otherwise), or become the header's fields when the section
    ///   was begun with [`Header::named`];
    /// - a tuple, array or sequence gives positional cells;
    /// - a field skipped by `skip_serializing_if` is an empty cell;
    /// - each value is a cell as in [`Cell`]: `Option::None` and `()` are empty, unit enum
    ///   variants are their names, and nested sequences, maps and structs are compact JSON
    ///   (object keys sorted, as Go's `encoding/json` writes them).
    ///
    /// ```
    /// use agentwire_gcx1::{Encoder, Header};
    /// use serde::Serialize;
    ///
    /// #[derive(Serialize)]
    /// struct Hit<'a> { id: &'a str, line: u32, tags: Vec<&'a str> }
    ///
    /// let mut encoder = Encoder::new(Vec::new());
    /// encoder.begin_section(&Header::named("hits"))?;
    /// encoder.serialize_row(&Hit { id: "a", line: 3, tags: vec!["x", "y"] })?;
    /// let text = String::from_utf8(encoder.finish()?).unwrap();
    /// assert_eq!(text, "GCX1 tool=hits fields=id,line,tags\na\t3\t[\"x\",\"y\"]\n");
    /// # Ok::<(), agentwire_gcx1::Error>(())
    /// ```
    pub fn serialize_row<T: Serialize + ?Sized>(&mut self, row: &T) -> Result<()> {
        let line = self.lines + 1;
        let (deferred, width) = match &self.section {
            None => return Err(Error::at(ErrorKind::NoSection, line, 1)),
            Some(section) => (section.deferred, section.width),
        };
        let start = self.buf.len();
        if deferred {
            return self.serialize_first_row(row, start, line);
        }
        let result = match self.section.as_mut() {
            Some(section) => {
                if section.names.len() != width {
                    section.names = vec![None; width];
                }
                crate::ser::serialize_row(
                    row,
                    &mut self.buf,
                    crate::ser::Fields::Check {
                        fields: &section.header.get(&self.limits).fields,
                        seen: &mut section.names,
                    },
                )
            }
            None => Err(ErrorKind::NoSection.into()),
        };
        match result {
            Ok(count) => self.end_row(start, count, width),
            Err(e) => {
                let kind = e.into_kind();
                Err(self.row_error(start, kind))
            }
        }
    }

    /// Serializes the first row of a section begun without fields, then writes the header
    /// with the row's field names, any comments waiting for it, and the row.
    fn serialize_first_row<T: Serialize + ?Sized>(
        &mut self,
        row: &T,
        start: usize,
        line: u64,
    ) -> Result<()> {
        let mut names = Vec::new();
        let result =
            crate::ser::serialize_row(row, &mut self.buf, crate::ser::Fields::Collect(&mut names));
        let count = match result {
            Ok(count) => count,
            Err(e) => {
                let kind = e.into_kind();
                return Err(self.row_error(start, kind));
            }
        };
        let row_bytes = self.buf.split_off(start);
        let Some(mut section) = self.section.take() else {
            return Err(Error::at(ErrorKind::NoSection, line, 1));
        };
        let mut header = section.header.get(&self.limits).clone();
        header.fields = names;
        if let Err(e) = self.write_checked_header(&header, line) {
            self.section = Some(section);
            return Err(e);
        }
        self.lines += 1;
        for comment in std::mem::take(&mut section.comments) {
            self.push_comment(&comment);
        }
        let width = header.fields.len();
        section.width = width;
        section.names = vec![None; width];
        section.header = OpenHeader::Header(header);
        section.deferred = false;
        self.section = Some(section);
        let start = self.buf.len();
        self.buf.extend_from_slice(&row_bytes);
        self.end_row(start, count, width)
    }

    /// Writes a comment line, `# ` followed by `text` with each LF replaced by a space (as the
    /// reference encoder does). Comments carry no data; decoders skip them.
    ///
    /// A comment needs an open section: the reference decoders reject a payload that does
    /// not start with a header.
    pub fn write_comment(&mut self, text: &str) -> Result<()> {
        let line = self.lines + 1;
        if text.len() + 2 > self.limits.max_line_length {
            return Err(self.line_too_long(line));
        }
        match &mut self.section {
            None => Err(Error::at(ErrorKind::NoSection, line, 1)),
            Some(section) if section.deferred => {
                section.comments.push(text.to_owned());
                Ok(())
            }
            Some(_) => {
                self.push_comment(text);
                self.maybe_flush()
            }
        }
    }

    fn push_comment(&mut self, text: &str) {
        self.buf.extend_from_slice(b"# ");
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 {
                self.buf.push(b' ');
            }
            self.buf.extend_from_slice(part.as_bytes());
        }
        self.buf.push(b'\n');
        self.lines += 1;
    }

    /// Writes a whole section: its header and rows.
    pub fn write_section(&mut self, section: &Section) -> Result<()> {
        self.begin_section(&section.header)?;
        for row in &section.rows {
            self.write_row(row)?;
        }
        Ok(())
    }

    #[inline]
    fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= self.flush_at {
            self.write_buffer()?;
        }
        Ok(())
    }

    fn write_buffer(&mut self) -> Result<()> {
        if self.failed {
            let e = io::Error::other("an earlier write failed; the output is incomplete");
            return Err(Error::at(ErrorKind::Io(e), self.lines.max(1), 1));
        }
        if let Some(writer) = self.writer.as_mut() {
            if let Err(e) = writer.write_all(&self.buf) {
                self.failed = true;
                return Err(Error::at(ErrorKind::Io(e), self.lines.max(1), 1));
            }
        }
        self.buf.clear();
        Ok(())
    }

    /// Hands buffered output to the writer and flushes it.
    pub fn flush(&mut self) -> Result<()> {
        self.write_buffer()?;
        if let Some(writer) = self.writer.as_mut() {
            if let Err(e) = writer.flush() {
                return Err(Error::at(ErrorKind::Io(e), self.lines.max(1), 1));
            }
        }
        Ok(())
    }

    /// Flushes and returns the writer. Fails if the open section never received the row
    /// that was to give it its fields (`empty_field_list`).
    pub fn finish(mut self) -> Result<W> {
        self.close_section()?;
        self.flush()?;
        self.writer
            .take()
            .ok_or_else(|| io::Error::other("the encoder has no writer").into())
    }
}

impl Encoder<io::Sink> {
    /// An encoder whose output stays in its buffer ([`Encoder::into_text`]): no copy to a
    /// writer, for callers that want the payload as a `String`.
    pub(crate) fn in_memory(limits: Limits) -> Self {
        Self::in_memory_sized(limits, IN_MEMORY_START)
    }

    /// [`Encoder::in_memory`] with a buffer of `capacity` bytes to start with.
    pub(crate) fn in_memory_sized(limits: Limits, capacity: usize) -> Self {
        let mut encoder = Encoder::with_buffer(io::sink(), limits, capacity);
        encoder.flush_at = usize::MAX;
        encoder
    }

    /// The payload written so far, as text.
    pub(crate) fn into_text(mut self) -> Result<String> {
        self.close_section()?;
        let buf = std::mem::take(&mut self.buf);
        self.writer = None;
        into_string(buf)
    }
}

impl<W: Write> Drop for Encoder<W> {
    fn drop(&mut self) {
        if self.writer.is_some() && !self.failed && !self.buf.is_empty() {
            let _ = self.write_buffer();
        }
    }
}

/// Encodes sections into a string.
///
/// ```
/// use agentwire_gcx1::{Header, Section};
///
/// let section = Section {
///     header: Header::new("t", ["a", "b"]),
///     rows: vec![vec!["x".into(), "tab\there".into()]],
/// };
/// assert_eq!(agentwire_gcx1::encode(&[section])?, "GCX1 tool=t fields=a,b\nx\ttab\\there\n");
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn encode(sections: &[Section]) -> Result<String> {
    let mut encoder = Encoder::new(Vec::new());
    for section in sections {
        encoder.write_section(section)?;
    }
    into_string(encoder.finish()?)
}

/// Encodes sections to a writer.
pub fn encode_to_writer<W: Write>(writer: W, sections: &[Section]) -> Result<W> {
    let mut encoder = Encoder::new(writer);
    for section in sections {
        encoder.write_section(section)?;
    }
    encoder.finish()
}

/// The encoder's output as a `String`.
///
/// The encoder only ever writes UTF-8: cells and header parts come from `&str` (their bytes
/// copied whole, escapes inserted between characters as ASCII), numbers and punctuation are
/// ASCII, and no public API hands a caller the byte buffer.
#[allow(unsafe_code)]
pub(crate) fn into_string(bytes: Vec<u8>) -> Result<String> {
    debug_assert!(
        std::str::from_utf8(&bytes).is_ok(),
        "the encoder wrote invalid UTF-8"
    );
    // SAFETY: see above; a debug build checks it on every call.
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode_rows(fields: &[&str], rows: &[&[&dyn Cell]]) -> Result<String> {
        let mut encoder = Encoder::new(Vec::new());
        encoder.begin_section(&Header::new("t", fields.iter().copied()))?;
        for row in rows {
            encoder.write_row(row.iter())?;
        }
        into_string(encoder.finish()?)
    }

    #[test]
    fn rows_pad_and_format() {
        let text = encode_rows(
            &["a", "b", "c"],
            &[
                &[&"x"],
                &[&1u64, &-2i64, &0.5f64],
                &[&true, &None::<&str>, &1e6],
            ],
        )
        .unwrap();
        assert_eq!(
            text,
            "GCX1 tool=t fields=a,b,c\nx\t\t\n1\t-2\t0.5\ntrue\t\t1e+06\n"
        );
    }

    #[test]
    fn row_errors_leave_the_encoder_usable() {
        let mut encoder = Encoder::new(Vec::new());
        encoder.begin_section(&Header::new("t", ["a"])).unwrap();
        let e = encoder.write_row(["x", "y", "z"]).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::TooManyValues {
                expected: 1,
                found: 3
            }
        ));
        assert_eq!(e.position(), Some(Position::new(2, 2)));
        assert_eq!(encoder.write_row([""]).unwrap_err().code(), "empty_row");
        assert_eq!(
            encoder.write_row([f64::NAN]).unwrap_err().code(),
            "non_finite_float"
        );
        encoder.write_row(["ok"]).unwrap();
        assert_eq!(
            into_string(encoder.finish().unwrap()).unwrap(),
            "GCX1 tool=t fields=a\nok\n"
        );
    }

    #[test]
    fn needs_a_section() {
        let mut encoder = Encoder::new(Vec::new());
        assert_eq!(encoder.write_row(["x"]).unwrap_err().code(), "no_section");
        assert_eq!(encoder.write_comment("x").unwrap_err().code(), "no_section");
    }

    #[test]
    fn comments_flatten_line_breaks() {
        let mut encoder = Encoder::new(Vec::new());
        encoder.begin_section(&Header::new("t", ["a"])).unwrap();
        encoder.write_comment("two\nlines\twith tab").unwrap();
        assert_eq!(
            into_string(encoder.finish().unwrap()).unwrap(),
            "GCX1 tool=t fields=a\n# two lines\twith tab\n"
        );
    }

    #[test]
    fn write_errors_are_typed_and_sticky() {
        #[derive(Debug)]
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut encoder = Encoder::new(Broken);
        encoder.begin_section(&Header::new("t", ["a"])).unwrap();
        encoder.write_row(["x"]).unwrap();
        let e = encoder.flush().unwrap_err();
        assert!(e.is_io());
        assert_eq!(e.position(), Some(Position::new(2, 1)));
        assert!(encoder.finish().unwrap_err().is_io());
    }

    #[test]
    fn large_outputs_flush_in_chunks() {
        let mut encoder = Encoder::new(Vec::new());
        encoder.begin_section(&Header::new("t", ["a"])).unwrap();
        for i in 0..20_000u32 {
            encoder.write_row([i]).unwrap();
        }
        assert!(encoder.get_ref().unwrap().len() >= FLUSH_AT);
        let out = encoder.finish().unwrap();
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 20_001);
    }
}
