//! The lexical layer shared by both profiles (spec §2, §2a, §4.1, §4.2, §11): UTF-8 input
//! validation, the line reader (LF or CRLF, blank lines, `# ` comments, indentation, line
//! length limit), quoted strings, scalar tokens with their precedence rules, keys and field
//! declarations, splitting on a delimiter outside quotes, count brackets, and on the encoding
//! side the quoting obligation and canonical escaping.
//!
//! Everything here borrows from the input; strings are copied only when they contain escapes.

use std::borrow::Cow;

use crate::error::{Error, ErrorKind, Position, Result};
use crate::number;

// ---------------------------------------------------------------------------------------------
// Input

/// Validates that `input` is UTF-8 (spec §2.2, §20). Literal surrogates (the CESU-8 bytes
/// `ED A0..BF ..`) are reported as `invalid_surrogate`, other malformed bytes as
/// `invalid_utf8`, both with their position.
pub(crate) fn utf8(input: &[u8]) -> Result<&str> {
    match std::str::from_utf8(input) {
        Ok(text) => Ok(text),
        Err(e) => {
            let at = e.valid_up_to();
            let valid = &input[..at];
            let line = 1 + memchr::memchr_iter(b'\n', valid).count();
            let line_start = memchr::memrchr(b'\n', valid).map_or(0, |i| i + 1);
            // The prefix is valid UTF-8, so counting chars there cannot fail.
            let column =
                1 + std::str::from_utf8(&valid[line_start..]).map_or(0, |s| s.chars().count());
            let surrogate =
                input.get(at) == Some(&0xED) && matches!(input.get(at + 1), Some(0xA0..=0xBF));
            let (kind, message) = if surrogate {
                (
                    ErrorKind::InvalidSurrogate,
                    "a literal UTF-16 surrogate (U+D800..U+DFFF) is not a Unicode scalar value",
                )
            } else {
                (ErrorKind::InvalidUtf8, "malformed UTF-8 byte sequence")
            };
            Err(Error::at_line(kind, line, column, message))
        }
    }
}

/// The byte offset of `inner` within `outer`; `inner` must be a subslice of `outer`.
pub(crate) fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

// ---------------------------------------------------------------------------------------------
// Lines

/// One line of input: its content after the indentation, without the terminator (and without
/// one trailing `\r`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// The content after the leading spaces.
    pub(crate) text: &'a str,
    /// The number of leading spaces.
    pub(crate) indent: usize,
    /// The 1-based line number.
    pub(crate) number: usize,
}

impl<'a> Line<'a> {
    /// The column (from 1, in characters) of byte `offset` of [`Line::text`].
    pub(crate) fn column_at(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        let prefix = self.text.get(..offset).unwrap_or(self.text);
        self.indent + prefix.chars().count() + 1
    }

    /// The column of `part`, a subslice of [`Line::text`].
    pub(crate) fn column_of(&self, part: &str) -> usize {
        self.column_at(offset_in(self.text, part))
    }

    /// The position of `part`, a subslice of [`Line::text`].
    pub(crate) fn position_of(&self, part: &str) -> Position {
        Position::new(self.number, self.column_of(part))
    }

    /// An error located at `part` (a subslice of [`Line::text`]).
    #[cold]
    pub(crate) fn error_at(
        &self,
        kind: ErrorKind,
        part: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(kind, message).with_position(self.position_of(part))
    }

    /// An error located at the start of the line's content.
    #[cold]
    pub(crate) fn error(&self, kind: ErrorKind, message: impl Into<String>) -> Error {
        Error::at_line(kind, self.number, self.indent + 1, message)
    }

    /// The indentation in levels of two spaces; an odd number of spaces is `invalid_indent`.
    #[inline]
    pub(crate) fn level(&self) -> Result<usize> {
        if self.indent.is_multiple_of(2) {
            Ok(self.indent / 2)
        } else {
            Err(self.odd_indent())
        }
    }

    #[cold]
    fn odd_indent(&self) -> Error {
        Error::at_line(
            ErrorKind::InvalidIndent,
            self.number,
            1,
            format!(
                "indentation of {} spaces is not a multiple of two",
                self.indent
            ),
        )
    }
}

/// Where a [`Lines`] reader stands: the byte offset and number of the next line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Cursor {
    pub(crate) offset: usize,
    pub(crate) number: usize,
}

/// What [`Lines::next_here`] found.
pub(crate) enum Next<'a> {
    /// A line at the indentation asked for, consumed.
    Here(Line<'a>),
    /// A significant line at another indentation, peeked.
    Other(Line<'a>),
    /// Anything else (a blank or comment line at another indentation, the end of input, an
    /// error): nothing consumed, [`Lines::has_next`] tells.
    Unknown,
}

/// Reads lines, LF or CRLF terminated (the last may be unterminated), enforcing the line
/// length limit and rejecting tabs in indentation. [`Lines::peek`] and [`Lines::next`] skip
/// blank lines and `# ` comment lines, as decoders must (spec §4.2, §11);
/// [`Lines::next_raw`] returns every line.
#[derive(Debug, Clone)]
pub(crate) struct Lines<'a> {
    src: &'a str,
    cursor: Cursor,
    max_line_length: usize,
    /// The next significant line and the cursor after it.
    peeked: Option<(Line<'a>, Cursor)>,
}

impl<'a> Lines<'a> {
    /// A reader over `src`, from its first line.
    pub(crate) fn new(src: &'a str, max_line_length: usize) -> Self {
        Lines {
            src,
            cursor: Cursor {
                offset: 0,
                number: 1,
            },
            max_line_length,
            peeked: None,
        }
    }

    /// The whole input.
    pub(crate) fn source(&self) -> &'a str {
        self.src
    }

    /// Where the reader stands (before any peeked line).
    #[inline]
    pub(crate) fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// The bytes from the reader's position to the end of the input.
    pub(crate) fn remaining_bytes(&self) -> usize {
        self.src.len().saturating_sub(self.cursor.offset)
    }

    /// Moves the reader to `cursor` (from [`Lines::cursor`]).
    #[inline]
    pub(crate) fn seek(&mut self, cursor: Cursor) {
        self.cursor = cursor;
        self.peeked = None;
    }

    /// Gives back `line`, the line [`Lines::next_at`] just returned, taken when the reader
    /// stood at `before`: the reader is as [`Lines::has_next`] would leave it at `before`
    /// (the line peeked when it is significant), without reading the line again.
    #[inline]
    pub(crate) fn unread(&mut self, before: Cursor, line: Line<'a>) {
        self.peeked = is_significant(line.text).then_some((line, self.cursor));
        self.cursor = before;
    }

    /// The number of the line after the last one: where "end of input" errors point.
    pub(crate) fn end_line(&self) -> usize {
        let newlines = memchr::memchr_iter(b'\n', self.src.as_bytes()).count();
        if self.src.ends_with('\n') || self.src.is_empty() {
            newlines.max(1)
        } else {
            newlines + 1
        }
    }

    /// The next line, blank or not; `None` at the end of input.
    pub(crate) fn next_raw(&mut self) -> Result<Option<Line<'a>>> {
        self.peeked = None;
        let Some((line, next)) = self.read_at(self.cursor)? else {
            return Ok(None);
        };
        self.cursor = next;
        Ok(Some(line))
    }

    #[inline(always)]
    fn read_at(&self, at: Cursor) -> Result<Option<(Line<'a>, Cursor)>> {
        let rest = match self.src.get(at.offset..) {
            Some(rest) if !rest.is_empty() => rest,
            _ => return Ok(None),
        };
        let b = rest.as_bytes();
        // The indentation first, then the newline from past it: the spaces are read once.
        let indent = leading_spaces(b);
        let (mut end, consumed) = match find_newline(&b[indent..]) {
            Some(i) => (indent + i, indent + i + 1),
            None => (b.len(), b.len()),
        };
        if end > indent && b[end - 1] == b'\r' {
            end -= 1;
        }
        if end > self.max_line_length {
            return Err(self.too_long(at, end));
        }
        let text = &rest[indent..end];
        let next = Cursor {
            offset: at.offset + consumed,
            number: at.number + 1,
        };
        Ok(Some((
            Line {
                text,
                indent,
                number: at.number,
            },
            next,
        )))
    }

    #[cold]
    fn too_long(&self, at: Cursor, len: usize) -> Error {
        Error::at_line(
            ErrorKind::LimitExceeded(crate::Limit::LineLength),
            at.number,
            1,
            format!(
                "line of {len} bytes exceeds the limit of {}",
                self.max_line_length
            ),
        )
    }

    /// The next significant line (not blank, not a comment), without consuming it.
    // `peek` is inlined into the decoders' loops so that the line stays in registers: returned
    // through memory, it costs a store-forwarding stall per line.
    #[inline(always)]
    pub(crate) fn peek(&mut self) -> Result<Option<Line<'a>>> {
        Ok(if self.has_next()? {
            Some(self.peeked())
        } else {
            None
        })
    }

    /// [`Lines::peek`] for the hot loops: whether there is a next significant line, which
    /// [`Lines::peeked`] then gives. Building `Result<Option<Line>>` goes through memory and
    /// stalls on reading it back; a flag and a field read stay in registers.
    #[inline(always)]
    pub(crate) fn has_next(&mut self) -> Result<bool> {
        if self.peeked.is_some() {
            return Ok(true);
        }
        self.read_next()
    }

    /// [`Lines::has_next`] when nothing is peeked: reads the next significant line. One copy
    /// for every caller (a line's scan, inlined into each loop, crowded the instruction cache).
    #[inline(never)]
    fn read_next(&mut self) -> Result<bool> {
        let Some((line, next)) = self.read_at(self.cursor)? else {
            return Ok(false);
        };
        if !is_significant(line.text) {
            return Ok(self.peek_past(self.cursor)?.is_some());
        }
        self.peeked = Some((line, next));
        Ok(true)
    }

    /// The next line, consumed, when it is indented by exactly `indent` spaces (blank and
    /// comment lines included: the caller recognizes what it reads here and otherwise gives
    /// it back with [`Lines::unread`]). `None`, consuming nothing, for any other line, for the end
    /// of input and for a line [`Lines::has_next`] reports an error on.
    ///
    /// The decoders' loops read their common lines through this: the line comes back in
    /// registers, where [`Lines::has_next`] and [`Lines::peeked`] pass it (and the position of
    /// the line after it, on which every later line depends) through memory.
    #[inline(always)]
    pub(crate) fn next_at(&mut self, indent: usize) -> Option<Line<'a>> {
        match self.next_here(indent) {
            Next::Here(line) => Some(line),
            _ => None,
        }
    }

    /// [`Lines::next_at`], telling as well a significant line at another indentation (peeked,
    /// as [`Lines::has_next`] leaves it, and given in registers: read back from the peeked
    /// field just after it is stored, it is loaded before its piecewise stores land).
    #[inline(always)]
    pub(crate) fn next_here(&mut self, indent: usize) -> Next<'a> {
        let (line, next) = match self.peeked {
            Some(peeked) => peeked,
            None => match self.read_at(self.cursor) {
                Ok(Some(read)) => read,
                _ => return Next::Unknown,
            },
        };
        if line.indent != indent {
            if is_significant(line.text) {
                self.peeked = Some((line, next));
                return Next::Other(line);
            }
            return Next::Unknown;
        }
        self.peeked = None;
        self.cursor = next;
        Next::Here(line)
    }

    /// The line found by the last successful [`Lines::has_next`] or [`Lines::peek`].
    #[inline(always)]
    pub(crate) fn peeked(&self) -> Line<'a> {
        match self.peeked {
            Some((line, _)) => line,
            None => Line {
                text: "",
                indent: 0,
                number: 0,
            },
        }
    }

    /// [`Lines::peek`] from `at`, past blank and comment lines (the uncommon case).
    #[inline(never)]
    fn peek_past(&mut self, mut at: Cursor) -> Result<Option<Line<'a>>> {
        loop {
            let Some((line, next)) = self.read_at(at)? else {
                return Ok(None);
            };
            if line.text.starts_with('\t') {
                if line.text.bytes().all(|b| b == b'\t' || b == b' ') {
                    // Completely blank: ignored.
                    at = next;
                    continue;
                }
                return Err(tab_indentation(&line));
            }
            if line.text.is_empty() || line.text.starts_with("# ") {
                at = next;
                continue;
            }
            self.peeked = Some((line, next));
            return Ok(Some(line));
        }
    }

    /// The next significant line, consumed.
    #[inline]
    pub(crate) fn next(&mut self) -> Result<Option<Line<'a>>> {
        let line = self.peek()?;
        if let Some((_, next)) = self.peeked.take() {
            self.cursor = next;
        }
        Ok(line)
    }

    /// Consumes the line returned by the last [`Lines::peek`].
    #[inline]
    pub(crate) fn advance(&mut self) {
        if let Some((_, next)) = self.peeked.take() {
            self.cursor = next;
        }
    }
}

/// Whether a line's text (after its indentation) is a line decoders read: not blank, not a
/// comment, and not indented with a tab (which [`Lines::peek_past`] reports or skips).
#[inline(always)]
fn is_significant(text: &str) -> bool {
    !(text.is_empty() || text.starts_with('\t') || text.starts_with("# "))
}

/// The first `\n` in `b`: eight bytes at a time over the first 64 (lines are short, and
/// `memchr`'s setup costs more than such a line), `memchr` past them.
#[inline(always)]
fn find_newline(b: &[u8]) -> Option<usize> {
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut at = 0;
    while let Some(chunk) = b.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let zero = zero_bytes(u64::from_le_bytes(word) ^ NEWLINES);
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
        if at == 64 {
            return memchr::memchr(b'\n', &b[at..]).map(|i| at + i);
        }
    }
    b[at..].iter().position(|&c| c == b'\n').map(|i| at + i)
}

/// The number of leading spaces, eight at a time (deep documents indent a lot).
#[inline]
fn leading_spaces(b: &[u8]) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    let mut n = 0;
    while let Some(chunk) = b.get(n..n + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let diff = u64::from_le_bytes(word) ^ SPACES;
        if diff != 0 {
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + b[n..].iter().take_while(|&&c| c == b' ').count()
}

// ---------------------------------------------------------------------------------------------
// Quoted strings

/// Finds the end of the quoted string that starts `s` (which begins with `"`): the byte
/// offset just past the closing quote, or `None` if it is unterminated. Escapes are skipped,
/// not validated.
pub(crate) fn quoted_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    loop {
        let j = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        i = j + 2;
    }
}

/// Decodes the quoted string at the start of `s` (which begins with `"`), returning it and
/// the bytes consumed. Borrowed when it has no escapes.
pub(crate) fn quoted<'a>(line: &Line<'a>, s: &'a str) -> Result<(Cow<'a, str>, usize)> {
    let b = s.as_bytes();
    // Fast path: no escapes and no control characters before the closing quote.
    let i = match memchr::memchr2(b'"', b'\\', &b[1..]) {
        None => {
            if let Some(c) = b[1..].iter().position(|&c| c < 0x20) {
                return Err(raw_control(line, s, 1 + c));
            }
            return Err(line.error_at(
                ErrorKind::UnterminatedQuote,
                s,
                "quoted string has no closing quote",
            ));
        }
        Some(j) if b[1 + j] == b'"' => {
            let body = &s[1..1 + j];
            if let Some(c) = body.bytes().position(|c| c < 0x20) {
                return Err(raw_control(line, s, 1 + c));
            }
            return Ok((Cow::Borrowed(body), j + 2));
        }
        Some(j) => 1 + j,
    };
    // Slow path: unescape from the first backslash.
    let mut i = i;
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[1..i]);
    if let Some(c) = out.bytes().position(|c| c < 0x20) {
        return Err(raw_control(line, s, 1 + c));
    }
    loop {
        let Some(&c) = b.get(i) else {
            return Err(line.error_at(
                ErrorKind::UnterminatedQuote,
                s,
                "quoted string has no closing quote",
            ));
        };
        match c {
            b'"' => return Ok((Cow::Owned(out), i + 1)),
            b'\\' => {
                let Some(&e) = b.get(i + 1) else {
                    return Err(line.error_at(
                        ErrorKind::UnterminatedQuote,
                        s,
                        "quoted string ends inside an escape",
                    ));
                };
                let simple = match e {
                    b'"' => Some('"'),
                    b'\\' => Some('\\'),
                    b'/' => Some('/'),
                    b'b' => Some('\u{8}'),
                    b'f' => Some('\u{c}'),
                    b'n' => Some('\n'),
                    b'r' => Some('\r'),
                    b't' => Some('\t'),
                    _ => None,
                };
                if let Some(ch) = simple {
                    out.push(ch);
                    i += 2;
                    continue;
                }
                if e != b'u' {
                    let esc = s.get(i..).unwrap_or(s);
                    let shown: String = esc.chars().take(2).collect();
                    return Err(line.error_at(
                        ErrorKind::InvalidEscape,
                        esc,
                        format!("invalid escape {shown:?} (allowed: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"),
                    ));
                }
                let esc = &s[i..];
                let unit = hex4(b.get(i + 2..i + 6)).ok_or_else(|| {
                    line.error_at(
                        ErrorKind::InvalidEscape,
                        esc,
                        "\\u must be followed by four hexadecimal digits",
                    )
                })?;
                i += 6;
                let ch = match unit {
                    0xD800..=0xDBFF => {
                        let low = if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
                            hex4(b.get(i + 2..i + 6))
                        } else {
                            None
                        };
                        match low {
                            Some(low @ 0xDC00..=0xDFFF) => {
                                i += 6;
                                let cp = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER)
                            }
                            _ => {
                                return Err(line.error_at(
                                    ErrorKind::InvalidSurrogate,
                                    esc,
                                    format!(
                                        "high surrogate \\u{unit:04X} is not followed by a low surrogate escape"
                                    ),
                                ))
                            }
                        }
                    }
                    0xDC00..=0xDFFF => {
                        return Err(line.error_at(
                            ErrorKind::InvalidSurrogate,
                            esc,
                            format!("isolated low surrogate \\u{unit:04X}"),
                        ))
                    }
                    // Not a surrogate, so a scalar value.
                    _ => char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER),
                };
                out.push(ch);
            }
            c if c < 0x20 => return Err(raw_control(line, s, i)),
            _ => {
                // Copy the run up to the next quote, backslash or control character.
                let run_end = b[i..]
                    .iter()
                    .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                    .map_or(b.len(), |p| i + p);
                out.push_str(&s[i..run_end]);
                i = run_end;
            }
        }
    }
}

fn hex4(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    if digits.len() != 4 {
        return None;
    }
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = char::from(d).to_digit(16)?;
        Some(acc * 16 + v)
    })
}

#[cold]
fn raw_control(line: &Line<'_>, s: &str, at: usize) -> Error {
    let part = s.get(at..).unwrap_or(s);
    let code = s.as_bytes().get(at).copied().unwrap_or(0);
    line.error_at(
        ErrorKind::InvalidEscape,
        part,
        format!("raw control character U+{code:04X} inside quotes (escape it)"),
    )
}

// ---------------------------------------------------------------------------------------------
// Scalars

/// A scalar token classified by the precedence rules of spec §2.1.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar<'a> {
    /// `-`.
    Null,
    /// `~`: the field is absent (tabular cells only).
    Missing,
    /// `^`: an attachment marker (tabular cells only).
    Marker,
    /// `^{...}`: an inline-schema marker; the field declaration including its braces.
    InlineMarker(&'a str),
    /// `true` / `false`.
    Bool(bool),
    /// An integer lexeme of at most 18 digits without a leading zero (the common case, parsed
    /// on the way; `-0` is not one).
    Int(i64),
    /// Any other lexeme matching the JSON number grammar.
    Number(&'a str),
    /// A quoted or bare string.
    Str(Cow<'a, str>),
}

/// Trims the structural whitespace (ASCII space and tab) around an unquoted token (spec §4.2).
#[inline]
pub(crate) fn trim(token: &str) -> &str {
    let b = token.as_bytes();
    // Encoders write no such whitespace: check the ends first.
    match (b.first(), b.last()) {
        (Some(first), Some(last))
            if !matches!(first, b' ' | b'\t') && !matches!(last, b' ' | b'\t') =>
        {
            return token
        }
        (None, _) => return token,
        _ => {}
    }
    trim_slow(token)
}

#[inline(never)]
fn trim_slow(token: &str) -> &str {
    let b = token.as_bytes();
    let mut start = 0;
    let mut end = b.len();
    while start < end && matches!(b[start], b' ' | b'\t') {
        start += 1;
    }
    while end > start && matches!(b[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    // ASCII boundaries are char boundaries.
    token.get(start..end).unwrap_or(token)
}

/// `-?[1-9][0-9]{0,17}` or `0`, parsed.
#[inline]
pub(crate) fn small_int(b: &[u8]) -> Option<i64> {
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    match digits {
        [b'0'] if !negative => return Some(0),
        [b'1'..=b'9', ..] if digits.len() <= 18 => {}
        _ => return None,
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(d - b'0');
    }
    Some(if negative { -v } else { v })
}

/// Classifies a token (already trimmed) by the precedence rules of spec §2.1. Context rules
/// (where `~` and markers are allowed) are the caller's.
// Inlined into the decoder's visitors: a returned `Scalar` goes through memory and stalls.
#[inline(always)]
pub(crate) fn scalar<'a>(line: &Line<'a>, token: &'a str) -> Result<Scalar<'a>> {
    let b = token.as_bytes();
    match b.first() {
        None => return Ok(Scalar::Str(Cow::Borrowed(""))),
        Some(b'"') => {
            let (s, used) = quoted(line, token)?;
            if used != token.len() {
                return Err(line.error_at(
                    ErrorKind::TrailingCharacters,
                    &token[used..],
                    "characters after the closing quote",
                ));
            }
            return Ok(Scalar::Str(s));
        }
        Some(b'-') if b.len() == 1 => return Ok(Scalar::Null),
        Some(b'~') if b.len() == 1 => return Ok(Scalar::Missing),
        Some(b'^') => {
            if b.len() == 1 {
                return Ok(Scalar::Marker);
            }
            if b[1] == b'{' && b[b.len() - 1] == b'}' {
                return Ok(Scalar::InlineMarker(&token[1..]));
            }
        }
        Some(b't') if token == "true" => return Ok(Scalar::Bool(true)),
        Some(b'f') if token == "false" => return Ok(Scalar::Bool(false)),
        Some(b'-' | b'0'..=b'9') => {
            if let Some(v) = small_int(b) {
                return Ok(Scalar::Int(v));
            }
            if number::is_json_number(token) {
                return Ok(Scalar::Number(token));
            }
        }
        _ => {}
    }
    Ok(Scalar::Str(Cow::Borrowed(token)))
}

/// Splits `text` on `delim` outside quoted tokens: a token is quoted when it starts (after
/// spaces and tabs) with `"`, and then runs to its closing quote; a token starting `^{` runs to
/// its closing brace, outside quoted names. Yields the tokens trimmed of spaces and tabs; an
/// empty `text` yields one empty token.
pub(crate) fn split(text: &str, delim: u8) -> Split<'_> {
    Split {
        text,
        pos: 0,
        done: false,
        delim,
    }
}

/// [`split`], faster for the common line without quotes: then every delimiter separates
/// tokens, and a word-at-a-time scan finds them (cells are short: a vectorized search per
/// cell costs more in calls than it saves).
#[inline(always)]
pub(crate) fn cells(text: &str, delim: u8) -> Cells<'_> {
    if !has_byte(text.as_bytes(), b'"') {
        Cells::Plain {
            text,
            start: 0,
            delims: Delims::new(text.as_bytes(), delim),
            done: false,
        }
    } else {
        Cells::Quoted(split(text, delim))
    }
}

/// [`cells`] of a text known to hold no `"`.
#[inline(always)]
pub(crate) fn plain_cells(text: &str, delim: u8) -> Cells<'_> {
    debug_assert!(!text.contains('"'));
    Cells::Plain {
        text,
        start: 0,
        delims: Delims::new(text.as_bytes(), delim),
        done: false,
    }
}

/// The number of tokens [`split`] yields, counted without splitting on a line without quotes.
#[inline]
pub(crate) fn count_cells(text: &str, delim: u8) -> usize {
    let b = text.as_bytes();
    if has_byte(b, b'"') {
        return split(text, delim).count();
    }
    let mut n = 1;
    let mut at = 0;
    while at < b.len() {
        n += bytes_eq(word_at(b, at), delim).count_ones() as usize;
        at += 8;
    }
    n
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` below `n` (at most 0x80), and possibly of bytes above
/// such a byte (a borrow): nonzero exactly when some byte is below `n`, and its lowest set
/// bit marks the first such byte.
#[inline(always)]
fn bytes_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS
}

/// [`bytes_below`] 1: the zero bytes of `x`.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    bytes_below(x, 1)
}

/// The high bit of each byte of `word` equal to `byte`, exactly (no false positives from
/// borrows, unlike the classic has-zero test).
#[inline(always)]
fn bytes_eq(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// The eight bytes of `b` from `at` as a little-endian word, zero-padded past the end.
#[inline(always)]
fn word_at(b: &[u8], at: usize) -> u64 {
    if let Some(chunk) = b.get(at..at + 8) {
        return load_word(chunk);
    }
    let n = b.len().saturating_sub(at);
    if n == 0 {
        return 0;
    }
    match b.len().checked_sub(8) {
        // The last eight bytes, shifted so that the `n` wanted ones come first (a load and a
        // shift: short and branch-free, where a byte loop is inlined at every call).
        Some(last) => load_word(&b[last..]) >> (8 * (8 - n)),
        None => short_word(&b[at..]),
    }
}

#[inline(always)]
fn load_word(chunk: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    u64::from_le_bytes(w)
}

/// [`word_at`] of the fewer than eight bytes of a short slice.
#[inline(never)]
fn short_word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(w)
}

/// Whether `byte` (not NUL) occurs in `b`.
#[inline]
pub(crate) fn has_byte(b: &[u8], byte: u8) -> bool {
    any_word(b, |word| bytes_eq(word, byte) != 0)
}

/// Whether `b` holds a `"` or a `^` (a quoted token or an attachment marker may start there).
#[inline]
pub(crate) fn has_quote_or_marker(b: &[u8]) -> bool {
    any_word(b, |word| bytes_eq(word, b'"') | bytes_eq(word, b'^') != 0)
}

/// The positions of a delimiter byte (not NUL) in a line, word at a time.
#[derive(Debug, Clone)]
pub(crate) struct Delims<'a> {
    b: &'a [u8],
    /// The offset of the current word.
    base: usize,
    /// The delimiters of the current word not yet returned (a high bit per byte).
    mask: u64,
    delim: u8,
}

impl<'a> Delims<'a> {
    #[inline]
    fn new(b: &'a [u8], delim: u8) -> Self {
        Delims {
            b,
            base: 0,
            mask: bytes_eq(word_at(b, 0), delim),
            delim,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            if self.base + 8 >= self.b.len() {
                return None;
            }
            self.base += 8;
            self.mask = bytes_eq(word_at(self.b, self.base), self.delim);
        }
        let i = self.base + (self.mask.trailing_zeros() / 8) as usize;
        self.mask &= self.mask - 1;
        Some(i)
    }
}

/// The iterator of [`cells`].
pub(crate) enum Cells<'a> {
    /// No quotes on the line.
    Plain {
        text: &'a str,
        start: usize,
        delims: Delims<'a>,
        done: bool,
    },
    /// Quotes somewhere on the line: the general splitter.
    Quoted(Split<'a>),
}

impl<'a> Iterator for Cells<'a> {
    type Item = &'a str;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a str> {
        match self {
            Cells::Quoted(split) => split.next(),
            Cells::Plain {
                text,
                start,
                delims,
                done,
            } => {
                if *done {
                    return None;
                }
                let end = match delims.next() {
                    Some(end) => end,
                    None => {
                        *done = true;
                        text.len()
                    }
                };
                // Delimiters are ASCII, so these are char boundaries.
                let token = text.get(*start..end).unwrap_or("");
                *start = end + 1;
                Some(trim(token))
            }
        }
    }
}

/// The iterator of [`split`].
#[derive(Debug, Clone)]
pub(crate) struct Split<'a> {
    text: &'a str,
    pos: usize,
    done: bool,
    delim: u8,
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a str;

    /// The next token, trimmed of structural spaces and tabs.
    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let b = self.text.as_bytes();
        let mut i = self.pos;
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        let start = i;
        if b.get(i) == Some(&b'"') {
            // A quoted token: skip to its closing quote (or the end if unterminated).
            i = match quoted_end(&self.text[i..]) {
                Some(end) => i + end,
                None => b.len(),
            };
        } else if b.get(i) == Some(&b'^') && b.get(i + 1) == Some(&b'{') {
            // An inline-schema marker: its quoted field names may hold the delimiter (an
            // unquoted one still splits, as everywhere).
            i += 2;
            loop {
                match memchr::memchr3(b'"', b'}', self.delim, &b[i..]) {
                    Some(j) if b[i + j] == b'"' => match quoted_end(&self.text[i + j..]) {
                        Some(end) => i += j + end,
                        None => {
                            i = b.len();
                            break;
                        }
                    },
                    Some(j) if b[i + j] == b'}' => {
                        i += j + 1;
                        break;
                    }
                    Some(j) => {
                        i += j;
                        break;
                    }
                    None => {
                        i = b.len();
                        break;
                    }
                }
            }
        }
        while i < b.len() && b[i] != self.delim {
            i += 1;
        }
        let mut end = i;
        while end > start && matches!(b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if i < b.len() {
            self.pos = i + 1;
        } else {
            self.done = true;
        }
        // ASCII positions are char boundaries.
        self.text.get(start..end)
    }
}

// ---------------------------------------------------------------------------------------------
// Keys, field declarations, counts

/// Whether `s` is a bare key: `[A-Za-z_][A-Za-z0-9_]*` (spec §2a.1).
#[inline]
pub(crate) fn is_bare_key(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    // A table lookup per byte: keys are short, and this costs fewer instructions than the
    // word-at-a-time test `bare_key_len` uses on longer input.
    b[1..].iter().all(|&c| KEY_BYTE[usize::from(c)])
}

/// Whether `test` holds for some eight-byte word of a set that covers every byte of `b`
/// (words overlap; short inputs repeat bytes), so that a bytewise test needs no loop over
/// bytes and no branch per byte.
#[inline(always)]
fn any_word(b: &[u8], test: impl Fn(u64) -> bool) -> bool {
    #[inline(always)]
    fn word(b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    }
    #[inline(always)]
    fn half(b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&b[at..at + 4]);
        u64::from(u32::from_le_bytes(w))
    }
    let n = b.len();
    match n {
        0 => false,
        1..=3 => {
            let (x, y, z) = (u64::from(b[0]), u64::from(b[n / 2]), u64::from(b[n - 1]));
            test(((x * ONES) & 0x0000_00ff_ffff_ffff) | y << 40 | z << 48 | x << 56)
        }
        4..=7 => test(half(b, 0) | half(b, n - 4) << 32),
        8..=16 => test(word(b, 0)) || test(word(b, n - 8)),
        _ => {
            let mut at = 0;
            while at + 8 <= n {
                if test(word(b, at)) {
                    return true;
                }
                at += 8;
            }
            at < n && test(word(b, n - 8))
        }
    }
}

/// Whether `$bits` (a bytewise test as the high bits of the bytes that fail it, an
/// `#[inline(always)]` function) finds a byte of `$b` in one of the words [`any_word`] reads:
/// for strings of up to 16 bytes, one expression per length class with the test written in
/// place, where [`any_word`]'s calls of its test (and a generic function's calls of a
/// function it is given) are left out of line in large callers.
macro_rules! any_bits {
    ($b:expr, $bits:ident) => {{
        let b: &[u8] = $b;
        let n = b.len();
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let half = |at: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&b[at..at + 4]);
            u64::from(u32::from_le_bytes(w))
        };
        match n {
            0 => false,
            1..=3 => {
                let (x, y, z) = (u64::from(b[0]), u64::from(b[n / 2]), u64::from(b[n - 1]));
                $bits(((x * ONES) & 0x0000_00ff_ffff_ffff) | y << 40 | z << 48 | x << 56) != 0
            }
            4..=7 => $bits(half(0) | half(n - 4) << 32) != 0,
            8..=16 => $bits(word(0)) | $bits(word(n - 8)) != 0,
            // (An e-mail address, a name with its title: four words, overlapping.)
            17..=32 => {
                $bits(word(0)) | $bits(word(8)) | $bits(word(n - 16)) | $bits(word(n - 8)) != 0
            }
            _ => any_word(b, |x| $bits(x) != 0),
        }
    }};
}

/// [`is_bare_key`] for writers: the bytes after the first tested a word at a time
/// ([`non_key_bytes`] through `any_bits!`), with no loop or branch per byte for keys of up
/// to 16 bytes.
#[inline(always)]
pub(crate) fn writes_bare(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => !any_bits!(b, non_key_bytes),
        _ => false,
    }
}

/// Bytes that may continue a bare key: `[A-Za-z0-9_]`.
const KEY_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b.is_ascii_alphanumeric() || b == b'_';
        c += 1;
    }
    table
};

/// The length of the bare key at the start of `s` (0 if none).
#[inline]
pub(crate) fn bare_key_len(s: &str) -> usize {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return 0,
    }
    let mut n = 1;
    // Eight bytes at a time while there are eight.
    while let Some(chunk) = b.get(n..n + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let other = non_key_bytes(u64::from_le_bytes(word));
        if other != 0 {
            return n + (other.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    while n < b.len() && KEY_BYTE[usize::from(b[n])] {
        n += 1;
    }
    n
}

/// The high bit of each byte of `x` that is not `[A-Za-z0-9_]` (bytewise comparisons that
/// cannot borrow across bytes, since every minuend byte has its high bit set).
#[inline]
fn non_key_bytes(x: u64) -> u64 {
    let low = x & !HIGHS;
    // The high bit of each byte of `low` that is >= `c`.
    let at_least = |v: u64, c: u8| (v | HIGHS).wrapping_sub(ONES * u64::from(c)) & HIGHS;
    let folded = low | (ONES * 0x20);
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    let digit = at_least(low, b'0') & !at_least(low, b'9' + 1);
    let underscore = at_least(low, b'_') & !at_least(low, b'_' + 1);
    // Non-ASCII bytes are never key bytes.
    !(letter | digit | underscore) & HIGHS | (x & HIGHS)
}

/// Reads the key (bare or quoted) at the start of `s`, returning it and the rest of `s`.
/// `terminators` are the bytes that may follow a bare key; anything else after one makes the
/// whole word an `invalid_key` (so `a-b=1` is reported as the key `a-b`, not as `a`).
pub(crate) fn key<'a>(
    line: &Line<'a>,
    s: &'a str,
    terminators: &[u8],
) -> Result<(Cow<'a, str>, &'a str)> {
    if s.starts_with('"') {
        let (k, used) = quoted(line, s)?;
        return Ok((k, &s[used..]));
    }
    let n = bare_key_len(s);
    let next = s.as_bytes().get(n);
    if n == 0 || next.is_some_and(|c| !terminators.contains(c)) {
        return Err(not_a_key(line, s, terminators));
    }
    Ok((Cow::Borrowed(&s[..n]), &s[n..]))
}

#[cold]
#[inline(never)]
fn not_a_key(line: &Line<'_>, s: &str, terminators: &[u8]) -> Error {
    let word_end = s
        .bytes()
        .position(|c| terminators.contains(&c))
        .unwrap_or(s.len());
    let word = &s[..word_end];
    line.error_at(
        ErrorKind::InvalidKey,
        s,
        format!("{word:?} is not a bare key ([A-Za-z_][A-Za-z0-9_]*); quote it as a JSON string"),
    )
}

/// Parses the field declaration at the start of `s` (which begins with `{`): comma-separated
/// keys up to the matching `}`, outside quotes. Returns the names and the rest after `}`.
/// Duplicate names are `duplicate_field_name`; more than `max_fields` names is
/// `limit_exceeded`; a name that is neither bare nor quoted is `name_kind`; other
/// malformations are `invalid_kind`.
pub(crate) fn field_decl<'a>(
    line: &Line<'a>,
    s: &'a str,
    max_fields: usize,
    name_kind: ErrorKind,
    invalid_kind: ErrorKind,
) -> Result<(Vec<Cow<'a, str>>, &'a str)> {
    let mut fields = Vec::new();
    let rest = field_decl_into(line, s, max_fields, name_kind, invalid_kind, &mut fields)?;
    Ok((fields, rest))
}

/// What a table's field declaration says of one field beyond its name (spec v3.3 §10a.1 and
/// v3.6): an identity marker `@name`, or a constant column `name=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeclExtra<'a> {
    /// The field's index in the declaration.
    pub(crate) index: usize,
    /// `@name`: the identity (key) column.
    pub(crate) identity: bool,
    /// `name=value`: the constant's value token (trimmed), and the entry for positions.
    pub(crate) value: Option<&'a str>,
}

/// [`field_decl`] into `fields` (which must be empty), returning the rest after `}`: a table
/// header reuses the vector of a finished table.
pub(crate) fn field_decl_into<'a>(
    line: &Line<'a>,
    s: &'a str,
    max_fields: usize,
    name_kind: ErrorKind,
    invalid_kind: ErrorKind,
    fields: &mut Vec<Cow<'a, str>>,
) -> Result<&'a str> {
    field_decl_ext(line, s, max_fields, name_kind, invalid_kind, fields, None)
}

/// [`field_decl_into`], and with `extras` the entries of the current spec's table headers:
/// `@name` (identity) and `name=value` (constant) are recorded there (at most one of each per
/// field), where without it they are errors.
pub(crate) fn field_decl_ext<'a>(
    line: &Line<'a>,
    s: &'a str,
    max_fields: usize,
    name_kind: ErrorKind,
    invalid_kind: ErrorKind,
    fields: &mut Vec<Cow<'a, str>>,
    mut extras: Option<&mut Vec<DeclExtra<'a>>>,
) -> Result<&'a str> {
    debug_assert!(s.starts_with('{') && fields.is_empty());
    let b = s.as_bytes();
    let mut i = 1;
    loop {
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let mut identity = false;
        if extras.is_some() && b.get(i) == Some(&b'@') {
            identity = true;
            i += 1;
        }
        let item = &s[i..];
        let (name, rest) = if item.starts_with('"') {
            let (name, used) = quoted(line, item)?;
            (name, &item[used..])
        } else {
            let n = bare_key_len(item);
            if n == 0 {
                let shown: String = item.chars().take(16).collect();
                return Err(line.error_at(
                    invalid_kind,
                    item,
                    if item.starts_with('}') {
                        "empty field name in field declaration".to_owned()
                    } else {
                        format!("expected a field name (bare or quoted key), found {shown:?}")
                    },
                ));
            }
            let next = item.as_bytes().get(n);
            let constant = extras.is_some() && next == Some(&b'=');
            if !constant && next.is_some_and(|c| !matches!(c, b',' | b'}' | b' ' | b'\t')) {
                let word_end = item.find([',', '}']).unwrap_or(item.len());
                let word = &item[..word_end];
                return Err(line.error_at(
                    name_kind,
                    item,
                    format!("field name {word:?} is not a bare key; quote it"),
                ));
            }
            (Cow::Borrowed(&item[..n]), &item[n..])
        };
        let mut rest_trimmed = rest.trim_start_matches([' ', '\t']);
        if fields.contains(&name) {
            return Err(line.error_at(
                ErrorKind::DuplicateFieldName,
                item,
                format!("field {name:?} is declared twice"),
            ));
        }
        if let Some(extras) = extras.as_deref_mut() {
            let mut value = None;
            if let Some(after) = rest.strip_prefix('=') {
                let (token, tail) = constant_token(line, after)?;
                if identity {
                    return Err(line.error_at(
                        ErrorKind::InvalidKey,
                        item,
                        format!("the identity column @{name:?} cannot be a constant column"),
                    ));
                }
                value = Some(token);
                rest_trimmed = tail.trim_start_matches([' ', '\t']);
            }
            if identity || value.is_some() {
                extras.push(DeclExtra {
                    index: fields.len(),
                    identity,
                    value,
                });
            }
        }
        fields.push(name);
        if fields.len() > max_fields {
            return Err(line.error_at(
                ErrorKind::LimitExceeded(crate::Limit::Fields),
                s,
                format!("field declaration exceeds the limit of {max_fields} fields"),
            ));
        }
        i = offset_in(s, rest_trimmed);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Ok(&s[i + 1..]),
            _ => {
                return Err(line.error_at(
                    invalid_kind,
                    rest_trimmed,
                    "expected `,` or `}` in field declaration",
                ))
            }
        }
    }
}

/// The value token of a constant column (`name=value`, spec v3.6), `s` starting after the `=`:
/// a quoted string to its closing quote, otherwise everything up to the next `,` or `}`; and
/// the rest after it. The token is trimmed of spaces and tabs; whether it is a valid constant
/// is the caller's to check.
fn constant_token<'a>(line: &Line<'a>, s: &'a str) -> Result<(&'a str, &'a str)> {
    let start = s.len() - s.trim_start_matches([' ', '\t']).len();
    let body = &s[start..];
    let end = if body.starts_with('"') {
        match quoted_end(body) {
            Some(end) => start + end,
            None => {
                return Err(line.error_at(
                    ErrorKind::UnterminatedQuote,
                    body,
                    "unterminated quoted constant in a field declaration",
                ))
            }
        }
    } else {
        s.find([',', '}']).unwrap_or(s.len())
    };
    Ok((trim(&s[..end]), &s[end..]))
}

/// A `[N]` count at the start of `b` (a decimal without leading zeros that fits `u64`) and
/// the offset of its `]`; `None` for anything else, `[?]` included, which [`count`] reads.
#[inline]
pub(crate) fn known_count(b: &[u8]) -> Option<(u64, usize)> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut i = 2;
    let mut n = match b.get(1)? {
        b'0' => 0,
        d @ b'1'..=b'9' => u64::from(d - b'0'),
        _ => return None,
    };
    if n > 0 {
        while let Some(d @ b'0'..=b'9') = b.get(i) {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            i += 1;
        }
    }
    (b.get(i) == Some(&b']')).then_some((n, i))
}

#[cold]
#[inline(never)]
fn invalid_count(line: &Line<'_>, s: &str, inner: &str) -> Error {
    line.error_at(
        ErrorKind::InvalidCount,
        s,
        format!("invalid count [{inner}] (expected 0, a decimal without leading zeros, or ?)"),
    )
}

/// A declared count: `[N]` or the deferred `[?]` (spec §8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// `[N]`. Saturates at `u64::MAX` (any limit rejects it first).
    Known(u64),
    /// `[?]`.
    Deferred,
}

/// Parses the count bracket at the start of `s` (which begins with `[`), returning the count
/// and the rest after `]`. Anything but `0`, a decimal without leading zeros, or `?` is
/// `invalid_count`.
pub(crate) fn count<'a>(line: &Line<'a>, s: &'a str) -> Result<(Count, &'a str)> {
    debug_assert!(s.starts_with('['));
    if let Some((n, close)) = known_count(s.as_bytes()) {
        return Ok((Count::Known(n), &s[close + 1..]));
    }
    let Some(close) = memchr::memchr(b']', s.as_bytes()) else {
        return Err(line.error_at(ErrorKind::InvalidCount, s, "count bracket has no `]`"));
    };
    Ok((count_inner(line, s, &s[1..close])?, &s[close + 1..]))
}

/// [`count`] with the keyed-map forms of spec v3.5 (`[N:]`, `[?:]`, §7.2a): the count,
/// whether it is keyed, and the rest after `]`. Without `keyed_maps` a colon is
/// `invalid_count`, as in v3.1.
pub(crate) fn table_count<'a>(
    line: &Line<'a>,
    s: &'a str,
    keyed_maps: bool,
) -> Result<(Count, bool, &'a str)> {
    debug_assert!(s.starts_with('['));
    if let Some((n, close)) = known_count(s.as_bytes()) {
        return Ok((Count::Known(n), false, &s[close + 1..]));
    }
    let Some(close) = memchr::memchr(b']', s.as_bytes()) else {
        return Err(line.error_at(ErrorKind::InvalidCount, s, "count bracket has no `]`"));
    };
    let inner = &s[1..close];
    let (inner, keyed) = match inner.strip_suffix(':') {
        Some(inner) if keyed_maps => (inner, true),
        _ => (inner, false),
    };
    Ok((count_inner(line, s, inner)?, keyed, &s[close + 1..]))
}

/// The count inside a bracket (`?`, `0` or a decimal without leading zeros); `s` is the
/// bracket, for the error's position.
fn count_inner(line: &Line<'_>, s: &str, inner: &str) -> Result<Count> {
    if inner == "?" {
        return Ok(Count::Deferred);
    }
    let b = inner.as_bytes();
    let valid = match b.first() {
        Some(b'0') => b.len() == 1,
        Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !valid {
        return Err(invalid_count(line, s, inner));
    }
    Ok(Count::Known(inner.parse().unwrap_or(u64::MAX)))
}

// ---------------------------------------------------------------------------------------------
// Encoding: quoting obligation and canonical escaping

/// Bytes that force quoting anywhere in a string: `"`, `\`, `|`, `,` and C0 controls.
const QUOTE_BYTE: [bool; 128] = {
    let mut table = [false; 128];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[b'|' as usize] = true;
    table[b',' as usize] = true;
    table
};

/// First bytes after which only the last byte and the bytes that force quoting anywhere
/// decide ([`needs_quote`]'s quick answer): letters other than `t` and `f` (which may start
/// `true` and `false`).
const PLAIN_FIRST: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 26 {
        table[b'A' as usize + c] = true;
        table[b'a' as usize + c] = true;
        c += 1;
    }
    table[b't' as usize] = false;
    table[b'f' as usize] = false;
    table
};

/// Whether a string value must be quoted: the rule of the v3.1 reference encoder, applied in
/// every context (spec §2.4; `|` and `,` are quoted everywhere, as the reference does), plus
/// the spec's `^{...}` rule, which the reference omits but without which such a string would
/// not decode back (see docs/gcf.md).
///
/// Small enough to inline: a string that starts with a letter other than `t` and `f`, does
/// not end with a space and is plain ASCII without `"`, `\`, `|`, `,` and controls (most
/// strings) is answered here, in a few word operations; anything else takes the whole rule.
#[inline(always)]
pub(crate) fn needs_quote(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last))
            if PLAIN_FIRST[usize::from(first)] && last != b' ' && !has_special(b) =>
        {
            false
        }
        _ => needs_quote_slow(s),
    }
}

/// Whether some byte of `x` is not plain ASCII: >= 0x80, < 0x20, or one of `"`, `\`, `|`,
/// `,`. The byte classes are combined and tested once, so that the common answer takes no
/// branch per class; `\` (0x5c) and `|` (0x7c) differ only in bit 5, so one comparison of
/// `x | 0x20` finds both.
#[inline(always)]
fn special(x: u64) -> bool {
    special_bits(x) != 0
}

/// [`special`] as the high bits of the bytes (and possibly of bytes after them).
#[inline(always)]
fn special_bits(x: u64) -> u64 {
    let bar = (x | (ONES * 0x20)) ^ (ONES * u64::from(b'|'));
    x & HIGHS
        | bytes_below(x, 0x20)
        | zero_bytes(x ^ (ONES * u64::from(b'"')))
        | zero_bytes(x ^ (ONES * u64::from(b',')))
        | zero_bytes(bar)
}

/// Whether some byte of `b` is [`special`].
#[inline(always)]
fn has_special(b: &[u8]) -> bool {
    any_bits!(b, special_bits)
}

/// Whether some byte of `b` is [`special_current`].
#[inline(always)]
fn has_special_current(b: &[u8]) -> bool {
    any_bits!(b, special_current_bits)
}

/// Whether a string value must be quoted under the current spec (v3.1.1 and later, as
/// gcf-python 2.8.0 and the `gcf` crate 3.1.0 apply it): the v3.1 rule, with the `^{...}`
/// rule of the spec (a string that starts with `^{`, ends with `}` and has at least three
/// bytes) in place of quoting every `^{` start, and the inline-array pattern of v3.1.1: a
/// `[`, anything but `]`, a `]`, optional whitespace and a `:` (`ERR[404]: Not Found`).
#[inline(always)]
pub(crate) fn needs_quote_current(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last))
            if PLAIN_FIRST[usize::from(first)] && last != b' ' && !has_special_current(b) =>
        {
            false
        }
        _ => needs_quote_current_slow(s),
    }
}

/// [`special`], and `[` or `{` (0x5b and 0x7b differ only in bit 5, as `\\` and `|` do).
#[inline(always)]
fn special_current(x: u64) -> bool {
    special_current_bits(x) != 0
}

/// [`special_current`] as the high bits of the bytes (and possibly of bytes after them).
#[inline(always)]
fn special_current_bits(x: u64) -> u64 {
    let lower = x | (ONES * 0x20);
    x & HIGHS
        | bytes_below(x, 0x20)
        | zero_bytes(x ^ (ONES * u64::from(b'"')))
        | zero_bytes(x ^ (ONES * u64::from(b',')))
        | zero_bytes(lower ^ (ONES * u64::from(b'|')))
        | zero_bytes(lower ^ (ONES * u64::from(b'{')))
}

/// [`needs_quote_current`] in full.
#[inline(never)]
fn needs_quote_current_slow(s: &str) -> bool {
    any_word(s.as_bytes(), forces_quote) || quote_rule(s, true)
}

/// Whether some byte of `x` forces quoting wherever it is in a string: a C0 control, `"`,
/// `\`, `|` or `,` (the ASCII bytes of [`QUOTE_BYTE`]). A string with one is quoted whatever
/// the rest of [`quote_rule`] says, so the slow paths answer it first, word by word, before
/// the rule's byte loop.
#[inline(always)]
fn forces_quote(x: u64) -> bool {
    let bar = (x | (ONES * 0x20)) ^ (ONES * u64::from(b'|'));
    (bytes_below(x, 0x20)
        | zero_bytes(x ^ (ONES * u64::from(b'"')))
        | zero_bytes(x ^ (ONES * u64::from(b',')))
        | zero_bytes(bar))
        != 0
}

/// Whether `b` contains the inline-array pattern `\[[^\]]*\]\s*:`. (Every other
/// whitespace than the ASCII space before the `:` forces quoting on its own.)
fn inline_array_pattern(b: &[u8]) -> bool {
    if memchr::memchr(b']', b).is_none() {
        return false;
    }
    let mut open = false;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'[' => open = true,
            b']' => {
                if open {
                    let rest = &b[i + 1..];
                    let spaces = rest
                        .iter()
                        .position(|&c| !c.is_ascii_whitespace() && !(0x1c..=0x1f).contains(&c))
                        .unwrap_or(rest.len());
                    if rest.get(spaces) == Some(&b':') {
                        return true;
                    }
                }
                open = false;
            }
            _ => {}
        }
    }
    false
}

/// [`needs_quote`] in full.
#[inline(never)]
fn needs_quote_slow(s: &str) -> bool {
    any_word(s.as_bytes(), forces_quote) || quote_rule(s, false)
}

/// The quoting rule of v3.1 (`current` false) or of the current spec.
#[inline(always)]
fn quote_rule(s: &str, current: bool) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    let last = b[b.len() - 1];
    if first == b' ' || last == b' ' || matches!(first, b'#' | b'@' | b'.') {
        return true;
    }
    match first {
        b'-' | b'+' => {
            // `-`, numbers, and the numeric-like `[+-]\.?\d`.
            if b.len() == 1 && first == b'-' {
                return true;
            }
            let mut i = 1;
            if b.get(i) == Some(&b'.') {
                i += 1;
            }
            if b.get(i).is_some_and(u8::is_ascii_digit) {
                return true;
            }
        }
        b'0'..=b'9'
            if number::is_json_number(s)
                || (first == b'0' && b.get(1).is_some_and(u8::is_ascii_digit)) =>
        {
            return true;
        }
        b'~' if b.len() == 1 => return true,
        b'^' if b.len() == 1 => return true,
        // v3.1: anything a splitter would take for a `^{fields}` marker (the spec quotes
        // only complete markers; quoting every `^{` start keeps cells unambiguous). The
        // current spec: complete markers, as gcf-python and the `gcf` crate.
        b'^' if !current && b[1] == b'{' => return true,
        b'^' if current && b.len() >= 3 && b[1] == b'{' && last == b'}' => return true,
        b't' if s == "true" => return true,
        b'f' if s == "false" => return true,
        _ => {}
    }
    // (`.` followed by a digit is covered by the `.` prefix rule.)
    contains_quote_char(s) || (current && inline_array_pattern(b))
}

fn contains_quote_char(s: &str) -> bool {
    let b = s.as_bytes();
    if !any_word(b, special) {
        // Plain ASCII throughout (the common case, without a loop for short strings).
        return false;
    }
    let mut i = 0;
    // Eight bytes at a time while they are plain ASCII: no byte >= 0x80, none < 0x20, and
    // none of `"`, `\`, `|`, `,`.
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if special(u64::from_le_bytes(word)) {
            break;
        }
        i += 8;
    }
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if QUOTE_BYTE[c as usize] {
                return true;
            }
            i += 1;
        } else {
            // Non-ASCII: decode the char (the input is a &str, so this is valid UTF-8).
            let ch = s[i..].chars().next().unwrap_or('\0');
            if ('\u{80}'..='\u{9f}').contains(&ch) || ch.is_whitespace() || ch == '\u{feff}' {
                return true;
            }
            i += ch.len_utf8();
        }
    }
    false
}

/// Where the writers append text: a `String`, or the generic encoder's output buffer
/// (`generic/out.rs`).
pub(crate) trait Sink: Sized {
    /// Appends `s`.
    fn push_str(&mut self, s: &str);
    /// Appends `c`.
    fn push(&mut self, c: char);
    /// Makes room for `additional` more bytes.
    fn reserve(&mut self, additional: usize);
    /// Appends `depth` levels of indentation (two spaces each).
    fn indent(&mut self, depth: usize);
    /// Appends the decimal digits of `value`.
    fn push_u64(&mut self, value: u64);
    /// Appends the number of `hundredths` (below 1e11), negated if `negative`, without
    /// trailing zeros in its fraction.
    fn push_hundredths(&mut self, negative: bool, hundredths: u64) {
        number::write_hundredths_parts(self, negative, hundredths);
    }
}

impl Sink for String {
    #[inline(always)]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }

    #[inline(always)]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }

    #[inline(always)]
    fn reserve(&mut self, additional: usize) {
        String::reserve(self, additional);
    }

    #[inline]
    fn push_u64(&mut self, value: u64) {
        String::push_str(self, itoa::Buffer::new().format(value));
    }

    #[inline]
    fn indent(&mut self, depth: usize) {
        let out = self;
        const SPACES: &str = "                                                                ";
        let mut n = depth * 2;
        if n <= 32 {
            // A fixed-size copy (inlined stores, no `memset` call), then the excess cut off.
            let len = out.len();
            out.push_str(&SPACES[..32]);
            out.truncate(len + n);
            return;
        }
        while n > SPACES.len() {
            out.push_str(SPACES);
            n -= SPACES.len();
        }
        out.push_str(&SPACES[..n]);
    }
}

/// Appends `s` as a quoted JSON string with the canonical escapes: `\"`, `\\`, the short
/// escapes `\b \f \n \r \t`, `\u00xx` (lowercase hex) for other C0 controls, everything else
/// literal (spec §2.2).
pub(crate) fn write_quoted(out: &mut impl Sink, s: &str) {
    /// Whether some byte of `x` is `"`, `\` or a C0 control.
    #[inline(always)]
    fn escapable(x: u64) -> bool {
        zero_bytes(x ^ (ONES * u64::from(b'"')))
            | zero_bytes(x ^ (ONES * u64::from(b'\\')))
            | bytes_below(x, 0x20)
            != 0
    }
    out.reserve(s.len() + 2);
    out.push('"');
    let b = s.as_bytes();
    if !any_word(b, escapable) {
        // Quoted for a delimiter or its form, with nothing to escape.
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let escape: &str = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 0xf)]));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends a string value: bare when safe, quoted otherwise (the v3.1 rule).
pub(crate) fn write_str(out: &mut impl Sink, s: &str) {
    if needs_quote(s) {
        write_quoted(out, s);
    } else {
        out.push_str(s);
    }
}

/// Appends a string value under the current spec's rule ([`needs_quote_current`]).
#[inline(always)]
pub(crate) fn write_str_current(out: &mut impl Sink, s: &str) {
    if needs_quote_current(s) {
        write_quoted(out, s);
    } else {
        out.push_str(s);
    }
}

/// Where a string value is written, for the quoting of fewest-tokens encodings, which quotes
/// only what the context needs (spec §2.4 names the active delimiter; every current decoder
/// splits only on it): `|` in cells, `,` in inline arrays, and `#`, `@`, `.` only at the start
/// of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A tabular cell or a positional value (`|` splits); `first` when it begins the line.
    Cell { first: bool },
    /// An inline array element (`,` splits).
    Element,
    /// A `key=value`, `@i =value`, `.key =value` or root `=value` (nothing splits).
    Value,
}

/// Whether a string value must be quoted at `place` (see [`Place`]): the current rule
/// ([`needs_quote_current`]) without the delimiter the place does not split on and without
/// the line-start prefixes where the value does not start a line.
pub(crate) fn needs_quote_at(s: &str, place: Place) -> bool {
    if !needs_quote_current(s) {
        return false;
    }
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return true;
    };
    if matches!(s, "-" | "~" | "^" | "true" | "false")
        || (b.len() >= 3 && first == b'^' && b[1] == b'{' && last == b'}')
        || number::is_json_number(s)
        || first == b' '
        || last == b' '
        || inline_array_pattern(b)
    {
        return true;
    }
    let second = b.get(1).copied();
    let third = b.get(2).copied();
    let digit = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_digit());
    // Numeric-like: `[+-].?digit`, `.digit`, `0digit`.
    if (matches!(first, b'+' | b'-') && (digit(second) || (second == Some(b'.') && digit(third))))
        || (first == b'.' && digit(second))
        || (first == b'0' && digit(second))
    {
        return true;
    }
    if matches!(first, b'#' | b'@' | b'.') && place == (Place::Cell { first: true }) {
        return true;
    }
    for ch in s.chars() {
        let quote = match ch {
            '"' | '\\' => true,
            '|' => matches!(place, Place::Cell { .. }),
            ',' => place == Place::Element,
            c if (c as u32) < 0x20 => true,
            c if ('\u{80}'..='\u{9f}').contains(&c) => true,
            c if (c as u32) > 0x7f && (c.is_whitespace() || c == '\u{feff}') => true,
            _ => false,
        };
        if quote {
            return true;
        }
    }
    false
}

/// Appends a string value at `place` with the quoting of [`needs_quote_at`].
pub(crate) fn write_str_at(out: &mut impl Sink, s: &str, place: Place) {
    if needs_quote_at(s, place) {
        write_quoted(out, s);
    } else {
        out.push_str(s);
    }
}

/// Appends the value of a constant column in a field declaration (`{env=prod}`, spec v3.6
/// §7.4.7.2): the current rule, and quoted also when it holds a `}`, which would end the
/// declaration (a `,` is quoted by the rule already).
pub(crate) fn write_const_str(out: &mut impl Sink, s: &str) {
    if needs_quote_current(s) || has_byte(s.as_bytes(), b'}') {
        write_quoted(out, s);
    } else {
        out.push_str(s);
    }
}

/// Appends `depth` levels of indentation (two spaces each).
#[inline(always)]
pub(crate) fn indent(out: &mut impl Sink, depth: usize) {
    out.indent(depth);
}

/// Appends a key: bare when it is a bare key, quoted otherwise (spec §2a.1).
#[inline]
pub(crate) fn write_key(out: &mut impl Sink, key: &str) {
    if writes_bare(key) {
        out.push_str(key);
    } else {
        write_quoted(out, key);
    }
}

/// The decoders' error for a line whose indentation holds a tab (and is not blank): at the
/// tab, where a decoder peeks the line, before it reads anything of it.
#[cold]
pub(crate) fn tab_indentation(line: &Line<'_>) -> Error {
    Error::at_line(
        ErrorKind::TabIndentation,
        line.number,
        line.indent + 1,
        "tab character in indentation (indent with two spaces per level)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line<'_> {
        Line {
            text,
            indent: 0,
            number: 2,
        }
    }

    fn scalar_of(token: &str) -> Result<Scalar<'_>> {
        let l = line(token);
        scalar(&l, l.text)
    }

    fn code<T: std::fmt::Debug>(r: Result<T>) -> &'static str {
        r.unwrap_err().code()
    }

    #[test]
    fn utf8_errors_have_positions() {
        assert_eq!(utf8(b"GCF\nab").unwrap(), "GCF\nab");
        let e = utf8(b"GCF profile=generic\nvalue=\xff\n").unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            ("invalid_utf8", Some(2), Some(7))
        );
        let e = utf8(b"GCF profile=generic\nv=\xed\xa0\x80\n").unwrap_err();
        assert_eq!(e.code(), "invalid_surrogate");
        let e = utf8(b"\xc3\xa9\n\xc3\xa9x\xff").unwrap_err();
        assert_eq!((e.line(), e.column()), (Some(2), Some(3)));
    }

    #[test]
    fn lines_skip_blanks_and_comments_and_strip_cr() {
        let src = "GCF profile=generic\r\n\r\n# a comment\n  # indented comment\n\t\nname=x\r\n  ## y\n#x\n";
        let mut lines = Lines::new(src, 1 << 16);
        assert_eq!(
            lines.next_raw().unwrap().unwrap().text,
            "GCF profile=generic"
        );
        let l = lines.next().unwrap().unwrap();
        assert_eq!((l.text, l.indent, l.number), ("name=x", 0, 6));
        let l = lines.peek().unwrap().unwrap();
        assert_eq!((l.text, l.indent, l.number), ("## y", 2, 7));
        assert_eq!(lines.next().unwrap().unwrap().text, "## y");
        // `#x` is not a comment: the parsers reject it.
        assert_eq!(lines.next().unwrap().unwrap().text, "#x");
        assert_eq!(lines.next().unwrap(), None);
        assert_eq!(lines.end_line(), 8);
    }

    #[test]
    fn newlines_are_found_at_every_offset() {
        for n in 0..150 {
            for at in (0..n).chain([n]) {
                let mut b = vec![b'x'; n];
                if at < n {
                    b[at] = b'\n';
                    // A second newline later never wins.
                    if at + 3 < n {
                        b[at + 3] = b'\n';
                    }
                }
                assert_eq!(find_newline(&b), (at < n).then_some(at), "n {n} at {at}");
            }
        }
    }

    #[test]
    fn indentation_is_two_spaces_a_level() {
        for depth in [0, 1, 15, 16, 17, 40, 70] {
            let mut out = String::from("x");
            indent(&mut out, depth);
            assert_eq!(out, format!("x{}", " ".repeat(depth * 2)));
        }
    }

    #[test]
    fn word_tests_cover_every_byte() {
        // A bad byte at every position of every length up to 40 is seen, and no other.
        for n in 0..40 {
            for at in 0..n {
                for bad in [b'-', b'|', b'"', 0x1f, 0xc3] {
                    let mut b = vec![b'k'; n];
                    b[at] = bad;
                    let text = String::from_utf8_lossy(&b).into_owned();
                    assert!(!is_bare_key(&text), "{text:?}");
                    if bad != b'-' && bad < 0x80 {
                        assert!(needs_quote(&text), "{text:?}");
                    }
                }
            }
            let plain = "k".repeat(n);
            assert_eq!(is_bare_key(&plain), n > 0, "{plain:?}");
            assert_eq!(writes_bare(&plain), n > 0, "{plain:?}");
            assert_eq!(needs_quote(&plain), n == 0, "{plain:?}");
        }
    }

    #[test]
    fn the_quick_quoting_answer_agrees_with_the_whole_rule() {
        // Every ASCII byte, and a two-byte character, at every position of strings up to 24
        // bytes, after first bytes the quick answer takes and some it leaves.
        for first in ["k", "Z", "t", "f", "-", "0", "^", " ", "é"] {
            for n in 0..24 {
                for at in 0..=n {
                    for c in (0..0x80u8).map(char::from).chain(['\u{85}', 'é', '\u{a0}']) {
                        let mut text = String::from(first);
                        text.extend(std::iter::repeat_n('k', n));
                        text.insert(first.len() + at, c);
                        assert_eq!(needs_quote(&text), needs_quote_slow(&text), "{text:?}");
                        // The slow paths' word test answers as the whole rule does.
                        assert_eq!(needs_quote_slow(&text), quote_rule(&text, false));
                        let current = needs_quote_current(&text);
                        assert_eq!(current, needs_quote_current_slow(&text), "{text:?}");
                        assert_eq!(current, quote_rule(&text, true), "{text:?}");
                    }
                }
            }
        }
        for text in ["", "k", "t", "true", "false", "k ", "k,", "k|x", "ok\\"] {
            assert_eq!(needs_quote(text), needs_quote_slow(text), "{text:?}");
        }
    }

    #[test]
    fn the_writers_bare_key_test_agrees_with_the_readers() {
        // Every byte at every position of keys up to 40 bytes, after first bytes of each
        // kind, and two-byte characters.
        for n in 0..40 {
            for at in 0..n.max(1) {
                for c in (0..=0x7fu8).map(char::from).chain(['é', '\u{a0}']) {
                    let mut key: String = std::iter::repeat_n('k', n).collect();
                    if n > 0 {
                        key.replace_range(at..at + 1, c.encode_utf8(&mut [0; 4]));
                    }
                    assert_eq!(writes_bare(&key), is_bare_key(&key), "{key:?}");
                }
            }
        }
    }

    #[test]
    fn bare_key_lengths_agree_with_the_byte_test() {
        for c in 0..=255u8 {
            for at in 1..10 {
                let mut b = vec![b'k'; 12];
                b[at] = c;
                let text = String::from_utf8_lossy(&b).into_owned();
                let expected = text
                    .bytes()
                    .position(|c| !(c.is_ascii_alphanumeric() || c == b'_'))
                    .unwrap_or(text.len());
                assert_eq!(bare_key_len(&text), expected, "byte {c:#x} at {at}");
            }
        }
    }

    #[test]
    fn leading_spaces_are_counted() {
        for text in [
            "",
            "x",
            " x",
            "        x",
            "         ",
            "                 y",
            "    \t",
        ] {
            let expected = text.bytes().take_while(|&b| b == b' ').count();
            assert_eq!(leading_spaces(text.as_bytes()), expected, "{text:?}");
        }
    }

    #[test]
    fn tab_indentation_and_long_lines_are_rejected() {
        let mut lines = Lines::new("a\n\tb=1\n", 100);
        lines.next_raw().unwrap();
        assert_eq!(code(lines.peek()), "tab_indentation");
        let mut lines = Lines::new("a\n  \tb=1\n", 100);
        lines.next_raw().unwrap();
        assert_eq!(code(lines.peek()), "tab_indentation");
        let mut lines = Lines::new("abcdef\n", 5);
        assert_eq!(
            lines.next_raw().unwrap_err().kind(),
            ErrorKind::LimitExceeded(crate::Limit::LineLength)
        );
        let l = Lines::new("a\n   b\n", 100)
            .clone()
            .next_raw()
            .unwrap()
            .unwrap();
        assert_eq!(l.level().unwrap(), 0);
        let odd = Line {
            text: "b",
            indent: 3,
            number: 2,
        };
        assert_eq!(code(odd.level()), "invalid_indent");
    }

    #[test]
    fn seek_and_cursor() {
        let mut lines = Lines::new("a\nb\nc\n", 100);
        lines.next().unwrap();
        let at = lines.cursor();
        assert_eq!(lines.next().unwrap().unwrap().text, "b");
        lines.seek(at);
        assert_eq!(lines.peek().unwrap().unwrap().text, "b");
        lines.advance();
        assert_eq!(lines.next().unwrap().unwrap().text, "c");
    }

    #[test]
    fn scalar_precedence() {
        assert_eq!(scalar_of("-").unwrap(), Scalar::Null);
        assert_eq!(scalar_of("~").unwrap(), Scalar::Missing);
        assert_eq!(scalar_of("^").unwrap(), Scalar::Marker);
        assert_eq!(scalar_of("^{a,b}").unwrap(), Scalar::InlineMarker("{a,b}"));
        assert_eq!(scalar_of("^{a").unwrap(), Scalar::Str("^{a".into()));
        assert_eq!(scalar_of("true").unwrap(), Scalar::Bool(true));
        assert_eq!(scalar_of("false").unwrap(), Scalar::Bool(false));
        assert_eq!(scalar_of("-12.5e3").unwrap(), Scalar::Number("-12.5e3"));
        assert_eq!(scalar_of("42").unwrap(), Scalar::Int(42));
        assert_eq!(scalar_of("-7").unwrap(), Scalar::Int(-7));
        assert_eq!(scalar_of("0").unwrap(), Scalar::Int(0));
        assert_eq!(scalar_of("-0").unwrap(), Scalar::Number("-0"));
        assert_eq!(
            scalar_of("999999999999999999").unwrap(),
            Scalar::Int(999_999_999_999_999_999)
        );
        assert_eq!(
            scalar_of("9999999999999999999").unwrap(),
            Scalar::Number("9999999999999999999")
        );
        assert_eq!(scalar_of("1-2").unwrap(), Scalar::Str("1-2".into()));
        assert_eq!(scalar_of("01").unwrap(), Scalar::Str("01".into()));
        assert_eq!(scalar_of("+1").unwrap(), Scalar::Str("+1".into()));
        assert_eq!(scalar_of("NaN").unwrap(), Scalar::Str("NaN".into()));
        assert_eq!(scalar_of("").unwrap(), Scalar::Str("".into()));
        assert_eq!(scalar_of("\"true\"").unwrap(), Scalar::Str("true".into()));
        assert_eq!(scalar_of("\"\"").unwrap(), Scalar::Str("".into()));
        assert_eq!(scalar_of("a\"b").unwrap(), Scalar::Str("a\"b".into()));
    }

    #[test]
    fn quoted_strings() {
        let ok = |s: &str| {
            scalar_of(s).map(|v| match v {
                Scalar::Str(s) => s.into_owned(),
                other => panic!("{other:?}"),
            })
        };
        assert_eq!(
            ok(r#""a\"b\\c\/d\b\f\n\r\t""#).unwrap(),
            "a\"b\\c/d\u{8}\u{c}\n\r\t"
        );
        assert_eq!(ok(r#""\u0041\u00e9\uD83D\uDE00""#).unwrap(), "Aé😀");
        assert_eq!(ok(r#""x\u0000y""#).unwrap(), "x\0y");
        assert!(matches!(
            scalar_of(r#""plain""#).unwrap(),
            Scalar::Str(Cow::Borrowed("plain"))
        ));
        assert_eq!(code(scalar_of("\"hello")), "unterminated_quote");
        assert_eq!(code(scalar_of("\"hello\\")), "unterminated_quote");
        assert_eq!(code(scalar_of(r#""hello\x""#)), "invalid_escape");
        assert_eq!(code(scalar_of(r#""\u12""#)), "invalid_escape");
        assert_eq!(code(scalar_of(r#""\u12G4""#)), "invalid_escape");
        assert_eq!(code(scalar_of("\"a\tb\"")), "invalid_escape");
        assert_eq!(code(scalar_of("\"a\\n\tb\"")), "invalid_escape");
        assert_eq!(code(scalar_of(r#""hello"world"#)), "trailing_characters");
        assert_eq!(code(scalar_of(r#""\uD800""#)), "invalid_surrogate");
        assert_eq!(code(scalar_of(r#""\uDC00""#)), "invalid_surrogate");
        assert_eq!(code(scalar_of(r#""\uD83D\u0041""#)), "invalid_surrogate");
        assert_eq!(code(scalar_of(r#""\uD83Dx""#)), "invalid_surrogate");
        // A multibyte character right after a broken escape must not panic.
        assert_eq!(code(scalar_of("\"\\uD83D\\uDéé\"")), "invalid_surrogate");
        assert_eq!(code(scalar_of("\"\\ué\"")), "invalid_escape");
        assert_eq!(code(scalar_of("\"\\é\"")), "invalid_escape");
        let e = scalar_of(r#""ab\q""#).unwrap_err();
        assert_eq!((e.line(), e.column()), (Some(2), Some(4)));
    }

    #[test]
    fn the_fast_splitter_agrees_with_the_general_one() {
        for text in [
            "",
            "a",
            "a|b",
            " a | b |",
            "|",
            "||",
            "1|^{a,b}|x",
            "1|\"a|b\"|c",
            "^{\"x|y\"}|z",
            "é|ü |日本",
            " \t ",
            "1|^{a|b}|c",
            "abcdefg|",
            "abcdefgh|",
            "|abcdefgh|abcdefghijklmnop|q",
            "a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r",
            "12345678",
            "1234567|9",
            "\u{7f}|\u{80}|\u{ff}|x\u{7c}y",
        ] {
            let fast: Vec<_> = cells(text, b'|').collect();
            let general: Vec<_> = split(text, b'|').collect();
            assert_eq!(fast, general, "{text:?}");
        }
    }

    #[test]
    fn the_word_scanners_agree_with_plain_scans() {
        // Pseudo-random lines over the characters that matter, every length up to 40.
        let alphabet = [
            'a', '|', ',', ' ', '\t', '^', '{', '}', '"', '\\', 'é', '\u{7c}',
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..4000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 41) as usize;
            let text: String = (0..len)
                .map(|i| alphabet[((seed >> (i % 60)) as usize + i * 7) % alphabet.len()])
                .collect();
            assert_eq!(
                has_byte(text.as_bytes(), b'"'),
                text.contains('"'),
                "{text:?}"
            );
            for delim in [b'|', b','] {
                let fast: Vec<_> = cells(&text, delim).collect();
                let general: Vec<_> = split(&text, delim).collect();
                assert_eq!(fast, general, "{text:?}");
                assert_eq!(count_cells(&text, delim), general.len(), "{text:?}");
                let mut delims = Delims::new(text.as_bytes(), delim);
                let found: Vec<usize> = std::iter::from_fn(|| delims.next()).collect();
                let plain: Vec<usize> = text
                    .bytes()
                    .enumerate()
                    .filter(|&(_, c)| c == delim)
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(found, plain, "{text:?}");
            }
        }
    }

    #[test]
    fn splitting_respects_quotes() {
        let parts: Vec<_> = split(r#"1|"a|b"|"x\"|y" |  c |"#, b'|').collect();
        assert_eq!(parts, ["1", r#""a|b""#, r#""x\"|y""#, "c", ""]);
        let parts: Vec<_> = split(" \t", b'|').collect();
        assert_eq!(parts, [""]);
        let parts: Vec<_> = split("", b',').collect();
        assert_eq!(parts, [""]);
        let parts: Vec<_> = split(r#""unterminated|x"#, b'|').collect();
        assert_eq!(parts, [r#""unterminated|x"#]);
        let parts: Vec<_> = split(r#""a"x|y"#, b'|').collect();
        assert_eq!(parts, [r#""a"x"#, "y"]);
        let parts: Vec<_> = split(r#"1|^{"a|b",c}|x"#, b'|').collect();
        assert_eq!(parts, ["1", r#"^{"a|b",c}"#, "x"]);
        // An unterminated marker: the unquoted delimiter still splits.
        let parts: Vec<_> = split(r#"^{"a|b"|x"#, b'|').collect();
        assert_eq!(parts, [r#"^{"a|b""#, "x"]);
        let parts: Vec<_> = split("1|^{a|b}|c", b'|').collect();
        assert_eq!(parts, ["1", "^{a", "b}", "c"]);
    }

    #[test]
    fn keys() {
        let l = line(r#"name=1"#);
        let (k, rest) = key(&l, l.text, b"=[").unwrap();
        assert_eq!((k.as_ref(), rest), ("name", "=1"));
        let l = line(r#""a b"=1"#);
        let (k, rest) = key(&l, l.text, b"=[").unwrap();
        assert_eq!((k.as_ref(), rest), ("a b", "=1"));
        let l = line("a-b=1");
        let e = key(&l, l.text, b"=[").unwrap_err();
        assert_eq!(e.code(), "invalid_key");
        assert!(e.message().contains("\"a-b\""));
        let l = line("1a=1");
        assert_eq!(code(key(&l, l.text, b"=[")), "invalid_key");
        assert!(is_bare_key("_a9"));
        assert!(!is_bare_key("9a"));
        assert!(!is_bare_key(""));
        assert!(!is_bare_key("é"));
    }

    #[test]
    fn field_declarations() {
        let l = line(r#"{id,"display name", "a,b" ,score}rest"#);
        let (fields, rest) = field_decl(
            &l,
            l.text,
            10,
            ErrorKind::InvalidKey,
            ErrorKind::InvalidLine,
        )
        .unwrap();
        assert_eq!(fields, ["id", "display name", "a,b", "score"]);
        assert_eq!(rest, "rest");
        let l = line("{id,name,id}");
        assert_eq!(
            code(field_decl(
                &l,
                l.text,
                10,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine
            )),
            "duplicate_field_name"
        );
        let l = line("{}");
        assert_eq!(
            code(field_decl(
                &l,
                l.text,
                10,
                ErrorKind::InvalidAttachmentMarker,
                ErrorKind::InvalidAttachmentMarker
            )),
            "invalid_attachment_marker"
        );
        let l = line("{a-b}");
        assert_eq!(
            code(field_decl(
                &l,
                l.text,
                10,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine
            )),
            "invalid_key"
        );
        let l = line("{a,}");
        assert_eq!(
            code(field_decl(
                &l,
                l.text,
                10,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine
            )),
            "invalid_line"
        );
        let l = line("{a b}");
        assert_eq!(
            code(field_decl(
                &l,
                l.text,
                10,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine
            )),
            "invalid_line"
        );
        let l = line("{a,b");
        assert_eq!(
            code(field_decl(
                &l,
                l.text,
                10,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine
            )),
            "invalid_line"
        );
        let l = line("{a,b,c}");
        assert_eq!(
            field_decl(&l, l.text, 2, ErrorKind::InvalidKey, ErrorKind::InvalidLine)
                .unwrap_err()
                .kind(),
            ErrorKind::LimitExceeded(crate::Limit::Fields)
        );
    }

    #[test]
    fn counts() {
        let c = |s: &'static str| {
            let l = line(s);
            count(&l, l.text)
        };
        assert_eq!(c("[0]").unwrap(), (Count::Known(0), ""));
        assert_eq!(c("[12]{a}").unwrap(), (Count::Known(12), "{a}"));
        assert_eq!(c("[?]").unwrap(), (Count::Deferred, ""));
        assert_eq!(
            c("[99999999999999999999999]").unwrap().0,
            Count::Known(u64::MAX)
        );
        for bad in ["[03]", "[+2]", "[]", "[-1]", "[a]", "[1", "[ 1]"] {
            assert_eq!(code(c(bad)), "invalid_count", "{bad}");
        }
    }

    #[test]
    fn quoting_obligation() {
        for quoted in [
            "", "-", "~", "^", "true", "false", "123", "1e10", "-0", "01", "007", "+1", "-.5",
            "+.5", ".5", "# x", "@h", ".x", " a", "a ", "   ", "a|b", "a,b", "a\"b", "a\\b",
            "a\nb", "\r", "a\tb", "\u{0}", "\u{1f}", "\u{85}", "\u{9f}", "a\u{a0}b", "\u{2028}",
            "\u{2029}", "\u{feff}", "\u{3000}", "^{a}", "^{}", "^{a,b}", "^{a", "^{a}x",
        ] {
            assert!(needs_quote(quoted), "{quoted:?} must be quoted");
        }
        for bare in [
            "hello world",
            "123abc",
            "-abc",
            "0x1f",
            "a-b",
            "a=b",
            "^a",
            "x^{a}",
            "~x",
            "x~",
            "é",
            "日本語",
            "😀",
            "\u{200b}",
            "\u{7f}",
            "ERR[404]: Not Found",
            "k=v",
            "a#b",
            "TRUE",
            "null",
            "NaN",
            "1.",
            "Infinity",
            "a.b",
            "=x",
        ] {
            assert!(!needs_quote(bare), "{bare:?} must stay bare");
        }
    }

    #[test]
    fn the_word_at_a_time_scan_agrees_with_a_plain_one() {
        fn plain(s: &str) -> bool {
            s.chars().any(|c| {
                matches!(c, '"' | '\\' | '|' | ',')
                    || c < ' '
                    || ('\u{80}'..='\u{9f}').contains(&c)
                    || (c > '\u{7f}' && c.is_whitespace())
                    || c == '\u{feff}'
            })
        }
        let specials = [
            '"', '\\', '|', ',', '\u{0}', '\u{1f}', ' ', '\u{7f}', '\u{85}', '\u{a0}', 'é',
            '\u{feff}', '😀', 'a',
        ];
        for len in 0..24 {
            for at in 0..len.max(1) {
                for special in specials {
                    let s: String = (0..len)
                        .map(|i| if i == at { special } else { 'x' })
                        .collect();
                    assert_eq!(contains_quote_char(&s), plain(&s), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn canonical_escaping() {
        let mut out = String::new();
        write_quoted(
            &mut out,
            "quote:\" backslash:\\ slash:/ \u{8}\u{c}\n\r\t \u{0}\u{1f}\u{7f}é",
        );
        assert_eq!(
            out,
            r#""quote:\" backslash:\\ slash:/ \b\f\n\r\t \u0000\u001f"#.to_owned() + "\u{7f}é\""
        );
        out.clear();
        write_key(&mut out, "content-type");
        write_key(&mut out, "ok_1");
        write_key(&mut out, "");
        assert_eq!(out, r#""content-type"ok_1"""#);
    }
}
