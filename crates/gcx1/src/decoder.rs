//! Decoding: a line state machine shared by the streaming [`Decoder`] (over `io::BufRead`)
//! and the borrowed [`StrDecoder`] (over `&str`), and the [`Row`] view both hand out.

use std::borrow::Cow;
use std::io::{self, BufRead};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Position, Result};
use crate::escape::unescape;
use crate::header::{is_header_line, parse_header, Header};

/// Resource limits every decoder enforces; past them decoding stops with a typed error.
///
/// ```
/// use agentwire_gcx1::{Limits, StrDecoder};
///
/// let limits = Limits::default().with_max_line_length(16);
/// let mut decoder = StrDecoder::with_limits("GCX1 tool=t fields=a\nthis row is far too long\n", limits);
/// let err = decoder.next_row().unwrap_err();
/// assert_eq!(err.code(), "line_too_long");
/// assert_eq!(err.line(), Some(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest line, in bytes without its LF. Default 4 MiB, as the Go reference decoder.
    pub max_line_length: usize,
    /// The most fields one header may declare. Default 4096.
    pub max_fields: usize,
    /// The most meta pairs one header may carry. Default 1024.
    pub max_meta: usize,
    /// The most trailing cells rows may omit in total (each omitted cell reads as `""`, so a
    /// wide header over short rows would otherwise multiply memory). Default 1,048,576.
    pub max_padding: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line_length: 4 * 1024 * 1024,
            max_fields: 4096,
            max_meta: 1024,
            max_padding: 1 << 20,
        }
    }
}

impl Limits {
    /// Sets [`Limits::max_line_length`].
    #[must_use]
    pub fn with_max_line_length(mut self, bytes: usize) -> Self {
        self.max_line_length = bytes;
        self
    }

    /// Sets [`Limits::max_fields`].
    #[must_use]
    pub fn with_max_fields(mut self, fields: usize) -> Self {
        self.max_fields = fields;
        self
    }

    /// Sets [`Limits::max_meta`].
    #[must_use]
    pub fn with_max_meta(mut self, pairs: usize) -> Self {
        self.max_meta = pairs;
        self
    }

    /// Sets [`Limits::max_padding`].
    #[must_use]
    pub fn with_max_padding(mut self, cells: u64) -> Self {
        self.max_padding = cells;
        self
    }
}

/// One data row, borrowed from the input (for [`StrDecoder`]) or from the decoder's line
/// buffer (for [`Decoder`]).
///
/// The row always has as many cells as its header has fields: cells the line omits read as
/// `""`. Cells are split and unescaped on access, without allocating unless a cell holds an
/// escape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    line: &'a str,
    width: usize,
    present: usize,
    line_no: u64,
}

impl<'a> Row<'a> {
    /// The number of cells: the header's field count.
    pub fn len(&self) -> usize {
        self.width
    }

    /// Whether the row has no cells (never true for rows of a valid header).
    pub fn is_empty(&self) -> bool {
        self.width == 0
    }

    /// The 1-based line number of the row in the input.
    pub fn line(&self) -> u64 {
        self.line_no
    }

    /// The row's text as it appears in the input, escapes included.
    pub fn as_raw_str(&self) -> &'a str {
        self.line
    }

    /// Cell `index`, unescaped; `None` past the last field.
    pub fn get(&self, index: usize) -> Option<Cow<'a, str>> {
        self.raw(index).map(unescape)
    }

    /// Cell `index` as it appears in the input (escapes included); `None` past the last field.
    pub fn raw(&self, index: usize) -> Option<&'a str> {
        if index >= self.width {
            return None;
        }
        if index >= self.present {
            return Some("");
        }
        Some(self.raw_cells().nth(index).map_or("", |(cell, _)| cell))
    }

    /// The unescaped cells in field order, padded with `""` to the header's width.
    pub fn iter(&self) -> Cells<'a> {
        Cells {
            raw: self.raw_cells(),
            remaining: self.width,
        }
    }

    /// The cells as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(Cow::into_owned).collect()
    }

    /// The raw cells actually present on the line, with their byte offsets.
    pub(crate) fn raw_cells(&self) -> RawCells<'a> {
        RawCells {
            rest: Some(self.line),
            offset: 0,
        }
    }

    /// The position of the byte at `offset` of the line.
    pub(crate) fn position(&self, offset: usize) -> Position {
        Position::in_line(self.line_no, self.line, offset)
    }
}

impl<'a> IntoIterator for Row<'a> {
    type Item = Cow<'a, str>;
    type IntoIter = Cells<'a>;

    fn into_iter(self) -> Cells<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Row<'a> {
    type Item = Cow<'a, str>;
    type IntoIter = Cells<'a>;

    fn into_iter(self) -> Cells<'a> {
        self.iter()
    }
}

/// The raw cells of a line and their byte offsets.
#[derive(Debug, Clone)]
pub(crate) struct RawCells<'a> {
    rest: Option<&'a str>,
    offset: usize,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The index of the first TAB or backslash: eight bytes at a time over the first 32 (most
/// cells are short, and there this beats a general-purpose search), then by `memchr2`'s
/// vector search (a JSON cell of kilobytes is scanned several times faster so).
#[inline]
fn find_tab_or_backslash(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        if i == 32 {
            return memchr::memchr2(b'\t', b'\\', &bytes[i..]).map(|p| i + p);
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let tabs = word ^ (ONES * u64::from(b'\t'));
        let backslashes = word ^ (ONES * u64::from(b'\\'));
        // The lowest set bit marks the first matching byte exactly (borrows only run upward).
        let hits = ((tabs.wrapping_sub(ONES) & !tabs)
            | (backslashes.wrapping_sub(ONES) & !backslashes))
            & HIGHS;
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| b == b'\t' || b == b'\\')
        .map(|p| i + p)
}

impl<'a> RawCells<'a> {
    /// The row from the next cell on (that cell and every later one), and the next cell's
    /// byte offset; `None` past the last cell.
    #[inline(always)]
    pub(crate) fn rest(&self) -> Option<(&'a str, usize)> {
        self.rest.map(|rest| (rest, self.offset))
    }

    /// Moves past the next cell, `len` bytes long (its TAB, if any, is at `len`), read by
    /// the caller from [`RawCells::rest`].
    #[inline(always)]
    pub(crate) fn skip_cell(&mut self, len: usize) {
        if let Some(rest) = self.rest {
            if len < rest.len() {
                self.rest = Some(&rest[len + 1..]);
                self.offset += len + 1;
            } else {
                self.rest = None;
            }
        }
    }

    /// The next raw cell, its byte offset, and whether it holds a backslash (so whether it
    /// needs unescaping), found in one scan.
    #[inline(always)]
    pub(crate) fn next_cell(&mut self) -> Option<(&'a str, usize, bool)> {
        let text = self.rest?;
        let at = self.offset;
        let bytes = text.as_bytes();
        let mut escaped = false;
        let mut from = 0;
        loop {
            match find_tab_or_backslash(&bytes[from..]) {
                Some(i) if bytes[from + i] == b'\\' => {
                    escaped = true;
                    from += i + 1;
                }
                Some(i) => {
                    let end = from + i;
                    self.rest = Some(&text[end + 1..]);
                    self.offset += end + 1;
                    return Some((&text[..end], at, escaped));
                }
                None => {
                    self.rest = None;
                    return Some((text, at, escaped));
                }
            }
        }
    }
}

impl<'a> Iterator for RawCells<'a> {
    type Item = (&'a str, usize);

    #[inline]
    fn next(&mut self) -> Option<(&'a str, usize)> {
        let text = self.rest?;
        let at = self.offset;
        match memchr::memchr(b'\t', text.as_bytes()) {
            Some(i) => {
                self.rest = Some(&text[i + 1..]);
                self.offset += i + 1;
                Some((&text[..i], at))
            }
            None => {
                self.rest = None;
                Some((text, at))
            }
        }
    }
}

/// An iterator over a row's unescaped cells; see [`Row::iter`].
#[derive(Debug, Clone)]
pub struct Cells<'a> {
    raw: RawCells<'a>,
    remaining: usize,
}

impl<'a> Iterator for Cells<'a> {
    type Item = Cow<'a, str>;

    #[inline]
    fn next(&mut self) -> Option<Cow<'a, str>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        Some(match self.raw.next_cell() {
            Some((cell, _, false)) => Cow::Borrowed(cell),
            Some((cell, _, true)) => unescape(cell),
            None => Cow::Borrowed(""),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Cells<'_> {}

/// A decoded section with owned cells: the header and every row, padded to the header's
/// width.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// The section's header.
    pub header: Header,
    /// The rows, one `String` per field.
    pub rows: Vec<Vec<String>>,
}

/// A decoded section whose rows borrow the input; see [`StrDecoder::sections`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionRef<'a> {
    /// The section's header.
    pub header: Header,
    /// The rows.
    pub rows: Vec<Row<'a>>,
}

impl SectionRef<'_> {
    /// The section with owned cells.
    pub fn to_owned_section(&self) -> Section {
        Section {
            header: self.header.clone(),
            rows: self.rows.iter().map(Row::to_vec).collect(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing read yet.
    Start,
    /// Reading the rows of the current section.
    Rows,
    /// The current section ended at the header now held in `pending`.
    SectionEnd,
    /// End of input, or an error happened.
    Done,
}

/// What one line means.
enum Step {
    Skip,
    Header(Header),
    Row { present: usize },
}

/// The state machine both decoders drive, one line at a time.
#[derive(Debug)]
struct Core {
    limits: Limits,
    line_no: u64,
    state: State,
    header: Option<Header>,
    pending: Option<Header>,
    padding: u64,
}

impl Core {
    fn new(limits: Limits) -> Self {
        Core {
            limits,
            line_no: 0,
            state: State::Start,
            header: None,
            pending: None,
            padding: 0,
        }
    }

    /// Classifies a line (already stripped of its line ending).
    fn step(&mut self, line: &str) -> Result<Step> {
        if line.is_empty() || line.starts_with('#') {
            return Ok(Step::Skip);
        }
        if is_header_line(line) {
            return parse_header(line, self.line_no, &self.limits).map(Step::Header);
        }
        if self.state == State::Start {
            return Err(self.not_a_header(line));
        }
        let width = self.header.as_ref().map_or(0, |h| h.fields.len());
        let present = 1 + count_tabs(line.as_bytes());
        if present > width {
            let offset = memchr::memchr_iter(b'\t', line.as_bytes())
                .nth(width.saturating_sub(1))
                .map_or(0, |i| i + 1);
            return Err(Error::new(
                ErrorKind::TooManyValues {
                    expected: width,
                    found: present,
                },
                Some(Position::in_line(self.line_no, line, offset)),
            ));
        }
        let missing = (width - present) as u64;
        if missing > 0 {
            self.padding += missing;
            if self.padding > self.limits.max_padding {
                return Err(Error::at(
                    ErrorKind::PaddingLimit {
                        limit: self.limits.max_padding,
                    },
                    self.line_no,
                    1,
                ));
            }
        }
        Ok(Step::Row { present })
    }

    /// The error for a first significant line that is not a GCX1 header.
    fn not_a_header(&self, line: &str) -> Error {
        let kind = if line.starts_with("GCX") {
            let tag = line
                .split(|c: char| c.is_ascii_whitespace())
                .next()
                .unwrap_or(line);
            if tag == "GCX1" {
                ErrorKind::MalformedHeader {
                    token: line.to_owned(),
                }
            } else {
                ErrorKind::UnsupportedVersion {
                    tag: tag.to_owned(),
                }
            }
        } else {
            ErrorKind::MissingHeader
        };
        Error::at(kind, self.line_no, 1)
    }

    fn width(&self) -> usize {
        self.header.as_ref().map_or(0, |h| h.fields.len())
    }

    fn line_too_long(&self, line: &[u8]) -> Error {
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or(""),
        };
        Error::new(
            ErrorKind::LineTooLong {
                limit: self.limits.max_line_length,
            },
            Some(Position::in_line(
                self.line_no,
                text,
                self.limits.max_line_length,
            )),
        )
    }
}

/// Counts TAB bytes. Byte-wide counters over blocks of at most 255 bytes let the compiler
/// compare and add sixteen bytes per instruction; a long line goes to `memchr`'s vector
/// count (32 bytes at a time where the CPU has AVX2).
#[inline]
fn count_tabs(bytes: &[u8]) -> usize {
    if bytes.len() > 256 {
        return memchr::memchr_iter(b'\t', bytes).count();
    }
    bytes
        .chunks(255)
        .map(|block| {
            let mut count = 0u8;
            for &b in block {
                count += u8::from(b == b'\t');
            }
            usize::from(count)
        })
        .sum()
}

/// Drops a line's trailing CR (a CRLF line ending), unless the CR is escaped data.
#[inline]
fn strip_cr(line: &str) -> &str {
    match line.strip_suffix('\r') {
        Some(body) => {
            let backslashes = body.bytes().rev().take_while(|&b| b == b'\\').count();
            if backslashes % 2 == 0 {
                body
            } else {
                line
            }
        }
        None => line,
    }
}

/// A source of classified lines; both decoders implement it, and the section logic below is
/// written once over it.
trait Steps {
    fn core(&mut self) -> &mut Core;
    /// The next header or row (comments and blank lines skipped); `None` at the end.
    fn next_step(&mut self) -> Result<Option<Step>>;
}

/// Advances to the next section; `false` at the end of the input.
fn advance_section<S: Steps>(source: &mut S) -> Result<bool> {
    loop {
        let core = source.core();
        match core.state {
            State::Done => return Ok(false),
            State::SectionEnd => {
                core.header = core.pending.take();
                core.state = State::Rows;
                return Ok(true);
            }
            State::Start | State::Rows => {
                let start = core.state == State::Start;
                match source.next_step()? {
                    Some(Step::Header(header)) => {
                        let core = source.core();
                        core.header = Some(header);
                        core.state = State::Rows;
                        return Ok(true);
                    }
                    Some(_) => continue,
                    None => {
                        let core = source.core();
                        core.state = State::Done;
                        if start {
                            return Err(Error::at(ErrorKind::EmptyPayload, core.line_no.max(1), 1));
                        }
                        return Ok(false);
                    }
                }
            }
        }
    }
}

/// Advances to the next row of the current section and returns how many cells its line
/// holds; `None` when the section ends.
fn advance_row<S: Steps>(source: &mut S) -> Result<Option<usize>> {
    if source.core().state == State::Start && !advance_section(source)? {
        return Ok(None);
    }
    if source.core().state != State::Rows {
        return Ok(None);
    }
    match source.next_step()? {
        Some(Step::Header(header)) => {
            let core = source.core();
            core.pending = Some(header);
            core.state = State::SectionEnd;
            Ok(None)
        }
        Some(Step::Row { present }) => Ok(Some(present)),
        Some(Step::Skip) | None => {
            source.core().state = State::Done;
            Ok(None)
        }
    }
}

fn run_step(core: &mut Core, line: &str) -> Result<Option<Step>> {
    match core.step(line) {
        Ok(Step::Skip) => Ok(Some(Step::Skip)),
        Ok(step) => Ok(Some(step)),
        Err(e) => {
            core.state = State::Done;
            Err(e)
        }
    }
}

/// A borrowed decoder over a `&str`: rows and cells borrow the input.
///
/// ```
/// use agentwire_gcx1::StrDecoder;
///
/// let text = "GCX1 tool=search fields=id,name total=2\n# 2 result(s)\n1\tAda\n2\tGrace\n";
/// let mut decoder = StrDecoder::new(text);
/// let header = decoder.next_section()?.expect("one section");
/// assert_eq!(header.fields, ["id", "name"]);
/// assert_eq!(header.meta_value("total"), Some("2"));
///
/// let mut names = Vec::new();
/// while let Some(row) = decoder.next_row()? {
///     names.push(row.get(1).unwrap());
/// }
/// assert_eq!(names, ["Ada", "Grace"]);
/// assert!(decoder.next_section()?.is_none());
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug)]
pub struct StrDecoder<'a> {
    input: &'a str,
    pos: usize,
    last: &'a str,
    core: Core,
}

impl Steps for StrDecoder<'_> {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn next_step(&mut self) -> Result<Option<Step>> {
        loop {
            let Some(line) = self.read_line()? else {
                return Ok(None);
            };
            self.last = line;
            match run_step(&mut self.core, line)? {
                Some(Step::Skip) => continue,
                step => return Ok(step),
            }
        }
    }
}

impl<'a> StrDecoder<'a> {
    /// A decoder over `input` with the default [`Limits`].
    pub fn new(input: &'a str) -> Self {
        Self::with_limits(input, Limits::default())
    }

    /// A decoder over `input` with the given limits.
    pub fn with_limits(input: &'a str, limits: Limits) -> Self {
        let input = input.strip_prefix('\u{feff}').unwrap_or(input);
        StrDecoder {
            input,
            pos: 0,
            last: "",
            core: Core::new(limits),
        }
    }

    /// The current section's header, once one has been read.
    pub fn header(&self) -> Option<&Header> {
        self.core.header.as_ref()
    }

    /// The number of lines read so far.
    pub fn line(&self) -> u64 {
        self.core.line_no
    }

    fn read_line(&mut self) -> Result<Option<&'a str>> {
        if self.pos >= self.input.len() {
            return Ok(None);
        }
        let rest = &self.input[self.pos..];
        let (line, advance) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.core.line_no += 1;
        self.pos += advance;
        if line.len() > self.core.limits.max_line_length {
            self.core.state = State::Done;
            return Err(self.core.line_too_long(line.as_bytes()));
        }
        Ok(Some(strip_cr(line)))
    }

    /// Advances to the next section and returns its header, skipping any unread rows of the
    /// current one; `None` at the end of the input.
    ///
    /// An input without any header is an `empty_payload` error, and one that starts with
    /// another version's tag (`GCX2 ...`) an `unsupported_version` error.
    pub fn next_section(&mut self) -> Result<Option<&Header>> {
        if advance_section(self)? {
            Ok(self.core.header.as_ref())
        } else {
            Ok(None)
        }
    }

    /// The next row of the current section; `None` when the section ends (at the next header
    /// or the end of the input). Reads the first header if none has been read yet.
    pub fn next_row(&mut self) -> Result<Option<Row<'a>>> {
        Ok(advance_row(self)?.map(|present| Row {
            line: self.last,
            width: self.core.width(),
            present,
            line_no: self.core.line_no,
        }))
    }

    /// An iterator over the current section's remaining rows.
    pub fn rows(&mut self) -> Rows<'_, 'a> {
        Rows { decoder: self }
    }

    /// An iterator over the remaining sections, each with its rows.
    pub fn sections(self) -> Sections<'a> {
        Sections { decoder: self }
    }
}

/// The rows of the current section; see [`StrDecoder::rows`].
#[derive(Debug)]
pub struct Rows<'d, 'a> {
    decoder: &'d mut StrDecoder<'a>,
}

impl<'a> Iterator for Rows<'_, 'a> {
    type Item = Result<Row<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.decoder.next_row().transpose()
    }
}

/// The sections of the input; see [`StrDecoder::sections`].
#[derive(Debug)]
pub struct Sections<'a> {
    decoder: StrDecoder<'a>,
}

impl<'a> Iterator for Sections<'a> {
    type Item = Result<SectionRef<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let header = match self.decoder.next_section() {
            Ok(Some(header)) => header.clone(),
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let mut rows = Vec::new();
        loop {
            match self.decoder.next_row() {
                Ok(Some(row)) => rows.push(row),
                Ok(None) => return Some(Ok(SectionRef { header, rows })),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// A streaming decoder over any `io::BufRead`: one line in memory at a time.
///
/// ```
/// use agentwire_gcx1::Decoder;
///
/// let input = "GCX1 tool=get_callers.nodes fields=id,kind\nf\tfunction\n\
///              GCX1 tool=get_callers.edges fields=from,to\nf\tg\n";
/// let mut decoder = Decoder::new(input.as_bytes());
/// let mut seen = Vec::new();
/// while let Some(header) = decoder.next_section()? {
///     let tool = header.tool.clone();
///     while let Some(row) = decoder.next_row()? {
///         seen.push(format!("{tool}: {}", row.to_vec().join(" ")));
///     }
/// }
/// assert_eq!(seen, ["get_callers.nodes: f function", "get_callers.edges: f g"]);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug)]
pub struct Decoder<R> {
    reader: R,
    line: String,
    core: Core,
}

impl<R: BufRead> Steps for Decoder<R> {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn next_step(&mut self) -> Result<Option<Step>> {
        loop {
            if !self.fill_line()? {
                return Ok(None);
            }
            match run_step(&mut self.core, &self.line)? {
                Some(Step::Skip) => continue,
                step => return Ok(step),
            }
        }
    }
}

impl<R: BufRead> Decoder<R> {
    /// A decoder over `reader` with the default [`Limits`].
    pub fn new(reader: R) -> Self {
        Self::with_limits(reader, Limits::default())
    }

    /// A decoder over `reader` with the given limits.
    pub fn with_limits(reader: R, limits: Limits) -> Self {
        Decoder {
            reader,
            line: String::new(),
            core: Core::new(limits),
        }
    }

    /// The current section's header, once one has been read.
    pub fn header(&self) -> Option<&Header> {
        self.core.header.as_ref()
    }

    /// The number of lines read so far.
    pub fn line(&self) -> u64 {
        self.core.line_no
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// Consumes the decoder, returning the reader.
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// Reads one line into `self.line`; `false` at the end of the input.
    fn fill_line(&mut self) -> Result<bool> {
        let limit = self.core.limits.max_line_length;
        let mut bytes = std::mem::take(&mut self.line).into_bytes();
        bytes.clear();
        let mut any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.core.state = State::Done;
                    return Err(Error::at(ErrorKind::Io(e), self.core.line_no + 1, 1));
                }
            };
            if available.is_empty() {
                if !any {
                    return Ok(false);
                }
                break;
            }
            any = true;
            let (take, newline) = match memchr::memchr(b'\n', available) {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            if bytes.len() + take > limit {
                let keep = limit + 1 - bytes.len().min(limit + 1);
                bytes.reserve_exact(keep.min(take));
                bytes.extend_from_slice(&available[..keep.min(take)]);
                self.core.line_no += 1;
                self.core.state = State::Done;
                return Err(self.core.line_too_long(&bytes));
            }
            if bytes.len() + take > bytes.capacity() {
                // Grow by doubling, but never past the line limit: a line at the limit costs
                // the limit, not the next power of two.
                let wanted = (bytes.capacity() * 2)
                    .max(bytes.len() + take)
                    .min(limit + 1);
                bytes.reserve_exact(wanted.max(bytes.len() + take) - bytes.len());
            }
            bytes.extend_from_slice(&available[..take]);
            self.reader.consume(take + usize::from(newline));
            if newline {
                break;
            }
        }
        self.core.line_no += 1;
        if self.core.line_no == 1 && bytes.starts_with("\u{feff}".as_bytes()) {
            bytes.drain(..3);
        }
        match String::from_utf8(bytes) {
            Ok(mut line) => {
                let len = strip_cr(&line).len();
                line.truncate(len);
                self.line = line;
                Ok(true)
            }
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or("");
                self.core.state = State::Done;
                Err(Error::new(
                    ErrorKind::InvalidUtf8,
                    Some(Position::in_line(self.core.line_no, prefix, valid)),
                ))
            }
        }
    }

    /// Advances to the next section and returns its header, skipping any unread rows of the
    /// current one; `None` at the end of the input. See [`StrDecoder::next_section`].
    pub fn next_section(&mut self) -> Result<Option<&Header>> {
        if advance_section(self)? {
            Ok(self.core.header.as_ref())
        } else {
            Ok(None)
        }
    }

    /// The next row of the current section, borrowing the decoder's line buffer; `None` when
    /// the section ends. Reads the first header if none has been read yet.
    pub fn next_row(&mut self) -> Result<Option<Row<'_>>> {
        Ok(advance_row(self)?.map(|present| Row {
            line: &self.line,
            width: self.core.width(),
            present,
            line_no: self.core.line_no,
        }))
    }

    /// The next row and its header's field names.
    pub(crate) fn next_row_and_fields(&mut self) -> Result<Option<(Row<'_>, &[String])>> {
        Ok(advance_row(self)?.map(|present| {
            let row = Row {
                line: &self.line,
                width: self.core.width(),
                present,
                line_no: self.core.line_no,
            };
            let fields = self.core.header.as_ref().map_or(&[][..], |h| &h.fields[..]);
            (row, fields)
        }))
    }

    /// An iterator over the remaining sections, each read into memory in turn (the input as
    /// a whole never is).
    pub fn sections(self) -> ReadSections<R> {
        ReadSections { decoder: self }
    }

    /// Reads the rest of the current section, or the next section if the current one is
    /// exhausted, into memory; `None` at the end of the input.
    pub fn read_section(&mut self) -> Result<Option<Section>> {
        if self.core.state != State::Rows && self.next_section()?.is_none() {
            return Ok(None);
        }
        let header = self.core.header.clone().unwrap_or_default();
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            rows.push(row.to_vec());
        }
        Ok(Some(Section { header, rows }))
    }
}

/// The sections of a streaming decoder, each read into memory in turn; see
/// [`Decoder::sections`].
#[derive(Debug)]
pub struct ReadSections<R> {
    decoder: Decoder<R>,
}

impl<R: BufRead> Iterator for ReadSections<R> {
    type Item = Result<Section>;

    fn next(&mut self) -> Option<Result<Section>> {
        self.decoder.read_section().transpose()
    }
}

/// What the typed layers need from either decoder: headers, and rows with their header's
/// field names.
pub(crate) trait SectionSource {
    /// Advances to the next section and returns a copy of its header; `None` at the end.
    fn next_header(&mut self) -> Result<Option<Header>>;
    /// Applies `f` to the next row of the current section and its header's field names.
    fn with_next_row<T>(
        &mut self,
        f: impl FnOnce(Row<'_>, &[String]) -> Result<T>,
    ) -> Result<Option<T>>;
    /// The tool of the next section, without advancing to it (the rest of the current
    /// section is skipped); `None` at the end of the input.
    fn peek_tool(&mut self) -> Result<Option<String>>;
    /// The number of lines read so far (after [`SectionSource::next_header`], the header's
    /// line).
    fn line_no(&self) -> u64;
}

/// See [`SectionSource::peek_tool`].
fn peek_tool<S: Steps>(source: &mut S) -> Result<Option<String>> {
    loop {
        match source.core().state {
            State::Start => match source.next_step()? {
                Some(Step::Header(header)) => {
                    let core = source.core();
                    core.pending = Some(header);
                    core.state = State::SectionEnd;
                }
                Some(_) => continue,
                None => {
                    let core = source.core();
                    core.state = State::Done;
                    return Err(Error::at(ErrorKind::EmptyPayload, core.line_no.max(1), 1));
                }
            },
            State::Rows => while advance_row(source)?.is_some() {},
            State::SectionEnd => {
                return Ok(source.core().pending.as_ref().map(|h| h.tool.clone()));
            }
            State::Done => return Ok(None),
        }
    }
}

impl SectionSource for StrDecoder<'_> {
    fn next_header(&mut self) -> Result<Option<Header>> {
        Ok(self.next_section()?.cloned())
    }

    fn with_next_row<T>(
        &mut self,
        f: impl FnOnce(Row<'_>, &[String]) -> Result<T>,
    ) -> Result<Option<T>> {
        match self.next_row()? {
            Some(row) => {
                let fields = self.core.header.as_ref().map_or(&[][..], |h| &h.fields[..]);
                f(row, fields).map(Some)
            }
            None => Ok(None),
        }
    }

    fn peek_tool(&mut self) -> Result<Option<String>> {
        peek_tool(self)
    }

    fn line_no(&self) -> u64 {
        self.core.line_no
    }
}

impl<R: BufRead> SectionSource for Decoder<R> {
    fn next_header(&mut self) -> Result<Option<Header>> {
        Ok(self.next_section()?.cloned())
    }

    fn with_next_row<T>(
        &mut self,
        f: impl FnOnce(Row<'_>, &[String]) -> Result<T>,
    ) -> Result<Option<T>> {
        match self.next_row_and_fields()? {
            Some((row, fields)) => f(row, fields).map(Some),
            None => Ok(None),
        }
    }

    fn peek_tool(&mut self) -> Result<Option<String>> {
        peek_tool(self)
    }

    fn line_no(&self) -> u64 {
        self.core.line_no
    }
}

/// Decodes every section of `input` into memory.
///
/// ```
/// let sections = agentwire_gcx1::decode("GCX1 tool=t fields=a,b\nx\n")?;
/// assert_eq!(sections[0].rows, [["x", ""]]);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn decode(input: &str) -> Result<Vec<Section>> {
    decode_with_limits(input, Limits::default())
}

/// [`decode`] with the given limits.
pub(crate) fn decode_with_limits(input: &str, limits: Limits) -> Result<Vec<Section>> {
    StrDecoder::with_limits(input, limits)
        .sections()
        .map(|s| s.map(|s| s.to_owned_section()))
        .collect()
}

/// Decodes every section read from `reader` into memory.
pub fn decode_reader<R: BufRead>(reader: R) -> Result<Vec<Section>> {
    Decoder::new(reader).sections().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(input: &str) -> Result<Vec<Section>> {
        let borrowed = decode(input);
        let streamed = decode_reader(io::BufReader::with_capacity(3, input.as_bytes()));
        match (&borrowed, &streamed) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => {
                assert_eq!(a.code(), b.code());
                assert_eq!(a.position(), b.position(), "{a} vs {b}");
            }
            _ => panic!("decoders disagree: {borrowed:?} vs {streamed:?}"),
        }
        borrowed
    }

    #[test]
    fn rows_comments_blank_lines_and_sections() {
        let s = both(
            "\n# leading comment\nGCX1 tool=a fields=x,y n=1\n# c\n\n1\t2\n3\n\nGCX1 tool=b fields=z\nq\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].header.tool, "a");
        assert_eq!(s[0].rows, [vec!["1", "2"], vec!["3", ""]]);
        assert_eq!(s[1].rows, [vec!["q"]]);
    }

    #[test]
    fn crlf_and_escaped_cr() {
        let s = both("GCX1 tool=a fields=x,y\r\n1\t2\r\n3\\\r\n").unwrap();
        assert_eq!(s[0].rows, [vec!["1", "2"], vec!["3\r", ""]]);
        let s = both("GCX1 tool=a fields=x\nno final newline").unwrap();
        assert_eq!(s[0].rows, [vec!["no final newline"]]);
    }

    #[test]
    fn errors_carry_positions() {
        let e = both("").unwrap_err();
        assert_eq!((e.code(), e.line()), ("empty_payload", Some(1)));
        let e = both("\n\n").unwrap_err();
        assert_eq!((e.code(), e.line()), ("empty_payload", Some(2)));
        let e = both("GCX2 tool=a fields=x\n").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedVersion { tag } if tag == "GCX2"));
        let e = both("hello\n").unwrap_err();
        assert_eq!(e.code(), "missing_header");
        let e = both("GCX1 tool=a fields=x,y\nok\n1\t2\t3\n").unwrap_err();
        assert_eq!(e.code(), "too_many_values");
        assert_eq!(e.position(), Some(Position::new(3, 5)));
    }

    #[test]
    fn a_gcx2_line_inside_a_payload_is_a_row() {
        let s = both("GCX1 tool=a fields=x\nGCX2 tool=b\nGCX1x\n").unwrap();
        assert_eq!(s[0].rows, [vec!["GCX2 tool=b"], vec!["GCX1x"]]);
    }

    #[test]
    fn invalid_utf8_is_an_error_with_a_column() {
        let input = b"GCX1 tool=a fields=x\nab\xffc\n";
        let e = decode_reader(&input[..]).unwrap_err();
        assert_eq!(e.code(), "invalid_utf8");
        assert_eq!(e.position(), Some(Position::new(2, 3)));
    }

    #[test]
    fn streaming_line_limit_is_bounded() {
        let long = format!("GCX1 tool=a fields=x\n{}\n", "y".repeat(100));
        let mut decoder = Decoder::with_limits(
            io::BufReader::with_capacity(7, long.as_bytes()),
            Limits::default().with_max_line_length(50),
        );
        let e = decoder.next_row().unwrap_err();
        assert_eq!(e.code(), "line_too_long");
        assert_eq!(e.position(), Some(Position::new(2, 51)));
        assert!(decoder.line.capacity() < 100);
        assert!(decoder.next_row().unwrap().is_none());
    }

    #[test]
    fn padding_limit() {
        let limits = Limits::default().with_max_padding(3);
        let e = decode_with_limits("GCX1 tool=a fields=a,b,c\nx\ny\n", limits).unwrap_err();
        assert_eq!((e.code(), e.line()), ("padding_limit", Some(3)));
    }

    #[test]
    fn counts_tabs_in_long_lines() {
        let line = "a\t".repeat(1000);
        assert_eq!(count_tabs(line.as_bytes()), 1000);
        assert_eq!(count_tabs(&[b'\t'; 600]), 600);
        assert_eq!(count_tabs(b""), 0);
        // Both sides of the switch to the vector count, a TAB at every place.
        for len in 250..300 {
            for at in 0..len {
                let mut bytes = vec![b'x'; len];
                bytes[at] = b'\t';
                bytes[len - 1 - at] = b'\t';
                let expected = if at == len - 1 - at { 1 } else { 2 };
                assert_eq!(count_tabs(&bytes), expected, "{len} {at}");
            }
        }
    }

    #[test]
    fn tab_or_backslash_scan() {
        // Below, at and past the switch to the vector search (32 bytes in).
        for len in (0..80).chain([200, 1000]) {
            for at in 0..len {
                for special in [b'\t', b'\\'] {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = special;
                    if at + 1 < len {
                        bytes[at + 1] = b'\t';
                    }
                    assert_eq!(find_tab_or_backslash(&bytes), Some(at), "{len} {at}");
                }
            }
            assert_eq!(find_tab_or_backslash(&vec![b'\x08'; len]), None);
            assert_eq!(find_tab_or_backslash(&vec![0xdc; len]), None);
        }
    }

    #[test]
    fn row_access() {
        let mut d = StrDecoder::new("GCX1 tool=a fields=x,y,z\na\\tb\tc\n");
        let row = d.next_row().unwrap().unwrap();
        assert_eq!(row.len(), 3);
        assert_eq!(row.raw(0), Some("a\\tb"));
        assert_eq!(row.get(0).unwrap(), "a\tb");
        assert!(matches!(row.get(1), Some(Cow::Borrowed("c"))));
        assert_eq!(row.get(2).unwrap(), "");
        assert_eq!(row.get(3), None);
        assert_eq!(row.iter().len(), 3);
        assert_eq!(row.line(), 2);
    }
}
