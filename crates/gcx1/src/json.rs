//! JSON as the Go reference writes it inside cells: compact, `<`, `>`, `&`, U+2028 and U+2029
//! escaped (`encoding/json`'s HTML-safe defaults), object keys in the map's order (sorted
//! byte-wise, as Go's, with serde_json's default maps).
//!
//! Numbers keep their lexeme when serde_json's `arbitrary_precision` feature is on (as Go's
//! `json.Number` does); otherwise integers are written in decimal and floats in Go's
//! `encoding/json` layout, with `.0` added where the text would read back as an integer.

use std::sync::OnceLock;

use serde_json::{Number, Value};

use crate::encoder::CellWriter;
use crate::error::{ErrorKind, Result};
use crate::escape::{push_bytes, push_marked};
use crate::float::write_go_json_f64;

/// The deepest nesting a cell's JSON may have: serde_json refuses to parse deeper text, so
/// deeper values could not be read back.
pub(crate) const MAX_DEPTH: usize = 127;

/// Whether serde_json was built with `arbitrary_precision` (Cargo may unify it in from
/// another crate of the build): then numbers keep their lexeme, `0.50` included. Detected
/// once, at run time.
#[inline]
pub(crate) fn arbitrary_precision() -> bool {
    static DETECTED: OnceLock<bool> = OnceLock::new();
    *DETECTED.get_or_init(|| {
        serde_json::from_str::<Number>("0.50").is_ok_and(|n| n.to_string() == "0.50")
    })
}

/// Appends a JSON number; fails on a float lexeme beyond a float's range, which only
/// serde_json's `arbitrary_precision` keeps (the decoders refuse it: it would read back as
/// infinity or zero).
pub(crate) fn write_number(out: &mut Vec<u8>, n: &Number) -> Result<()> {
    if arbitrary_precision() {
        // The lexeme, verbatim (`-0`, `1E+2` and `0.50` included); written through `Display`
        // without a `String` in between.
        use std::io::Write as _;
        let start = out.len();
        let _ = write!(out, "{n}");
        let text = std::str::from_utf8(&out[start..]).unwrap_or_default();
        if crate::value::exact_number(text).is_err() {
            let number = text.to_owned();
            out.truncate(start);
            return Err(ErrorKind::NumberOutOfRange { number }.into());
        }
    } else if let Some(u) = n.as_u64() {
        push_bytes(out, itoa::Buffer::new().format(u).as_bytes());
    } else if let Some(i) = n.as_i64() {
        push_bytes(out, itoa::Buffer::new().format(i).as_bytes());
    } else {
        match n.as_f64() {
            Some(f) if f.is_finite() => write_go_json_f64(out, f),
            _ => out.extend_from_slice(n.to_string().as_bytes()),
        }
    }
    Ok(())
}

/// The bytes a JSON string has to look at: `"`, `\`, control bytes, `<`, `>`, `&` (Go's
/// HTML-safe escapes) and 0xE2, the first byte of U+2028 and U+2029.
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[b'<' as usize] = true;
    table[b'>' as usize] = true;
    table[b'&' as usize] = true;
    table[0xe2] = true;
    table
};

/// The index of the first byte at or after `from` that a JSON string has to look at
/// ([`SPECIAL`]), or the length: eight bytes at a time, then byte by byte in the word that
/// has one.
#[inline(always)]
fn next_special(bytes: &[u8], mut from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    #[inline(always)]
    fn has(word: u64, byte: u8) -> u64 {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x
    }
    if bytes.len() - from < 16 {
        // Short strings (most keys) cost less byte by byte.
        while from < bytes.len() && !SPECIAL[bytes[from] as usize] {
            from += 1;
        }
        return from;
    }
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // Bytes below 0x20, and the seven others (false positives only cost the byte loop).
        let below = word.wrapping_sub(ONES * 0x20) & !word;
        let hits = (below
            | has(word, b'"')
            | has(word, b'\\')
            | has(word, b'<')
            | has(word, b'>')
            | has(word, b'&')
            | has(word, 0xe2))
            & HIGHS;
        if hits != 0 {
            if let Some(at) = chunk.iter().position(|&b| SPECIAL[b as usize]) {
                return from + at;
            }
        }
        from += 8;
    }
    while from < bytes.len() && !SPECIAL[bytes[from] as usize] {
        from += 1;
    }
    from
}

/// Appends a JSON string literal with Go's escapes.
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    write_string_as(out, s, false);
}

/// Non-zero (in the high bit of a byte) when one of the eight bytes of `word` is
/// [`SPECIAL`]: a control byte, `"`, `\\`, `<`, `>`, `&` or 0xE2. `<` and `>` (0x3C, 0x3E)
/// differ in one bit, as `"` and `&` (0x22, 0x26) do: each pair is one test, exact.
#[inline(always)]
fn json_marks(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    #[inline(always)]
    fn has(word: u64, byte: u8) -> u64 {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x
    }
    let below = word.wrapping_sub(ONES * 0x20) & !word;
    let angles = has(word | (ONES * 0x02), b'>');
    let quotes = has(word & !(ONES * 0x04), b'"');
    (below | angles | quotes | has(word, b'\\') | has(word, 0xe2)) & HIGHS
}

/// Appends `bytes` after an opening quote and returns whether they need escapes; when they
/// do, nothing is appended (the quote included).
#[inline(always)]
fn push_plain_string(out: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let at = out.len();
    out.push(b'"');
    if push_marked(out, bytes, json_marks) != 0 && next_special(bytes, 0) < bytes.len() {
        out.truncate(at);
        return false;
    }
    out.push(b'"');
    true
}

/// Appends a short string (at most 12 bytes: most keys and many values) as a JSON string
/// literal, after a comma with `comma` and before a colon with `colon`, and returns `true`;
/// `false` (nothing appended) when it is longer or needs escapes. The literal is put
/// together in a 16-byte array (the text as two overlapping words) and appended at once.
#[inline(always)]
fn push_short_string(out: &mut Vec<u8>, bytes: &[u8], comma: bool, colon: bool) -> bool {
    let len = bytes.len();
    if len > 12 {
        return false;
    }
    let mut literal = [b','; 16];
    let c = usize::from(comma);
    literal[c] = b'"';
    let marks = if len >= 8 {
        let (head, tail) = (word_at(bytes, 0), word_at(bytes, len - 8));
        literal[c + 1..c + 9].copy_from_slice(&head.to_le_bytes());
        literal[c + len - 7..c + len + 1].copy_from_slice(&tail.to_le_bytes());
        json_marks(head) | json_marks(tail)
    } else if len >= 4 {
        let (head, tail) = (half_at(bytes, 0), half_at(bytes, len - 4));
        literal[c + 1..c + 5].copy_from_slice(&head.to_le_bytes());
        literal[c + len - 3..c + len + 1].copy_from_slice(&tail.to_le_bytes());
        json_marks(u64::from(head) | u64::from(tail) << 32)
    } else if len > 0 {
        // The first, middle and last byte are all of the bytes, some of them twice.
        let (first, middle, last) = (bytes[0], bytes[len / 2], bytes[len - 1]);
        literal[c + 1] = first;
        literal[c + 1 + len / 2] = middle;
        literal[c + len] = last;
        json_marks(u64::from_le_bytes([
            first, middle, last, b' ', b' ', b' ', b' ', b' ',
        ]))
    } else {
        0
    };
    if marks != 0 {
        return false;
    }
    literal[c + 1 + len] = b'"';
    literal[c + 2 + len] = b':';
    let at = out.len();
    out.extend_from_slice(&literal);
    out.truncate(at + c + 2 + len + usize::from(colon));
    true
}

/// The eight bytes of `bytes` from `at`, little-endian.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// The four bytes of `bytes` from `at`, little-endian.
#[inline(always)]
fn half_at(bytes: &[u8], at: usize) -> u32 {
    let mut half = [0u8; 4];
    half.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(half)
}

/// Appends a JSON string literal with Go's escapes; with `cell`, every backslash of it
/// doubled (the row escape, applied as it is written: JSON text has no raw TAB or LF).
#[inline(always)]
fn write_string_as(out: &mut Vec<u8>, s: &str, cell: bool) {
    let bytes = s.as_bytes();
    // Most strings: short, nothing to escape.
    if !push_short_string(out, bytes, false, false) {
        write_long_string(out, bytes, cell);
    }
}

/// [`write_string_as`] for text that is longer than 12 bytes or needs escapes.
#[inline(never)]
fn write_long_string(out: &mut Vec<u8>, bytes: &[u8], cell: bool) {
    if !push_plain_string(out, bytes) {
        write_escaped(out, bytes, next_special(bytes, 0), cell);
    }
}

/// Appends an object's key and its colon, after a comma if `comma`.
#[inline]
fn write_key(out: &mut Vec<u8>, key: &str, comma: bool, cell: bool) {
    let bytes = key.as_bytes();
    if push_short_string(out, bytes, comma, true) {
        return;
    }
    if comma {
        out.push(b',');
    }
    write_long_string(out, bytes, cell);
    out.push(b':');
}

/// [`write_string_as`] for a string with a byte to look at, the first at `i`.
#[inline(never)]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8], mut i: usize, cell: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let backslash: &[u8] = if cell { b"\\\\" } else { b"\\" };
    out.push(b'"');
    let mut start = 0;
    while let Some(&b) = bytes.get(i) {
        let escape: &[u8] = match b {
            b'"' => b"\"",
            b'\\' => b"\\",
            b'\n' => b"n",
            b'\r' => b"r",
            b'\t' => b"t",
            0x08 => b"b",
            0x0c => b"f",
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9; other E2 sequences are text.
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                if bytes[i + 2] == 0xa8 {
                    b"u2028"
                } else {
                    b"u2029"
                }
            }
            0xe2 => {
                i = next_special(bytes, i + 1);
                continue;
            }
            _ => b"",
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(backslash);
        if escape.is_empty() {
            out.extend_from_slice(b"u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
            i += 1;
        } else if escape[0] == b'\\' && cell {
            // The escaped backslash itself, doubled as well.
            out.extend_from_slice(backslash);
            i += 1;
        } else {
            out.extend_from_slice(escape);
            i += if escape[0] == b'u' { 3 } else { 1 };
        }
        start = i;
        i = next_special(bytes, i);
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends `value` as compact JSON; fails past [`MAX_DEPTH`] levels.
pub(crate) fn write_json(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    write_at(out, value, 0, false)
}

/// Appends `value` as compact JSON escaped for a cell (every backslash doubled: JSON text
/// holds no raw TAB, LF or CR, so that is the whole row escape).
pub(crate) fn write_json_cell_text(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    write_at(out, value, 0, true)
}

fn write_at(out: &mut Vec<u8>, value: &Value, depth: usize, cell: bool) -> Result<()> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n)?,
        Value::String(s) => write_string_as(out, s, cell),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(ErrorKind::DepthLimit { limit: MAX_DEPTH }.into());
            }
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_at(out, item, depth + 1, cell)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(ErrorKind::DepthLimit { limit: MAX_DEPTH }.into());
            }
            // Keys in the map's order: sorted, as Go writes them, with serde_json's default
            // maps; the input's order with `preserve_order`.
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                write_key(out, key, i > 0, cell);
                write_at(out, item, depth + 1, cell)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Compact JSON text of `value`.
pub(crate) fn to_json_string(value: &Value) -> Result<String> {
    let mut out = Vec::new();
    write_json(&mut out, value)?;
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// Writes a `serde_json::Value` as one cell: null empty, strings as text, numbers and
/// booleans as JSON, arrays and objects as compact JSON (escaped for the row).
pub(crate) fn write_value_cell(out: &mut CellWriter<'_>, value: &Value) -> Result<()> {
    match value {
        Value::Null => {}
        Value::String(s) => out.write_str(s),
        Value::Bool(b) => out.write_bool(*b),
        Value::Number(n) => {
            write_number(out.buffer(), n)?;
            out.raw(b"");
        }
        Value::Array(_) | Value::Object(_) => {
            // JSON text starts with `[` or `{`, never `#` or `GCX`.
            write_json_cell_text(out.buffer(), value)?;
            out.raw(b"");
        }
    }
    Ok(())
}

/// Parses JSON text into a `Value`, reading floats exactly (serde_json's default float
/// parser can be off by one unit in the last place; a lossless codec cannot be) and keeping
/// number lexemes under `arbitrary_precision`. Nesting deeper than 128 levels is an error,
/// as in serde_json.
pub(crate) fn parse_json(text: &str) -> std::result::Result<Value, String> {
    let mut parser = Parser::<false> {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    parser.skip_ws();
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("trailing characters"));
    }
    Ok(value)
}

/// Parses the JSON value a row's cell holds straight from the row: `rest` is the row from
/// the cell's first byte on, and the cell ends at the first TAB or at the end of `rest`.
/// Returns the value and the cell's length (where its TAB is), without first scanning the
/// cell for its end.
///
/// `None` when the cell is not one whole JSON value with no backslash in it: a TAB inside a
/// string or between tokens, a backslash anywhere (the cell needs the row's unescaping
/// first), or any JSON error. The caller then reads the cell the general way
/// ([`parse_json`] on the unescaped cell), which gives the same value where this one gives
/// one, and the errors. So `Some` here is exactly `parse_json` of the cell's text.
pub(crate) fn parse_json_cell(rest: &str) -> Option<(Value, usize)> {
    let mut parser = Parser::<true> {
        bytes: rest.as_bytes(),
        text: rest,
        pos: 0,
    };
    parser.skip_ws();
    let value = parser.value(0).ok()?;
    parser.skip_ws();
    match parser.bytes.get(parser.pos) {
        None | Some(b'\t') => Some((value, parser.pos)),
        Some(_) => None,
    }
}

/// `text` as a `String` of exactly its length. Text of 1 to 32 bytes (most keys and short
/// values) is copied as two overlapping blocks of 16, 8 or 4 bytes, or (below 4) as its
/// first, middle and last byte, rather than by a call to `memcpy`.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn owned(text: &str) -> String {
    let bytes = text.as_bytes();
    let len = bytes.len();
    if !(1..=32).contains(&len) {
        return text.to_owned();
    }
    let layout = std::alloc::Layout::array::<u8>(len).unwrap_or(std::alloc::Layout::new::<u8>());
    // SAFETY: `layout` has a non-zero size (1 to 32 bytes). The block it returns is checked
    // for null; each write below lies within its `len` bytes (the two blocks, or the three
    // bytes, overlap when `len` is not twice their size) and together they cover all of
    // them, copied from `text`: `len` initialized bytes of valid UTF-8, in a block of the
    // global allocator with the layout of `len` bytes, as `String::from_raw_parts` requires.
    unsafe {
        let to = std::alloc::alloc(layout);
        if to.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if len < 4 {
            *to = bytes[0];
            *to.add(len / 2) = bytes[len / 2];
            *to.add(len - 1) = bytes[len - 1];
        } else if len >= 16 {
            let (head, tail): ([u8; 16], [u8; 16]) = (first_n(bytes), first_n(&bytes[len - 16..]));
            std::ptr::write_unaligned(to.cast::<[u8; 16]>(), head);
            std::ptr::write_unaligned(to.add(len - 16).cast::<[u8; 16]>(), tail);
        } else if len >= 8 {
            let (head, tail): ([u8; 8], [u8; 8]) = (first_n(bytes), first_n(&bytes[len - 8..]));
            std::ptr::write_unaligned(to.cast::<[u8; 8]>(), head);
            std::ptr::write_unaligned(to.add(len - 8).cast::<[u8; 8]>(), tail);
        } else {
            let (head, tail): ([u8; 4], [u8; 4]) = (first_n(bytes), first_n(&bytes[len - 4..]));
            std::ptr::write_unaligned(to.cast::<[u8; 4]>(), head);
            std::ptr::write_unaligned(to.add(len - 4).cast::<[u8; 4]>(), tail);
        }
        String::from_raw_parts(to, len, len)
    }
}

/// The first `N` bytes of `bytes` (which has at least `N`).
#[inline(always)]
fn first_n<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

/// The bytes that end a plain run inside a JSON string.
static STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// A JSON parser over `bytes`; with `CELL`, over a row from a cell on (see
/// [`parse_json_cell`]): a TAB is the cell's end, not white space, a backslash stops the
/// parse, and errors carry no message (the caller reads the cell again to report them).
struct Parser<'t, const CELL: bool> {
    bytes: &'t [u8],
    text: &'t str,
    pos: usize,
}

impl<const CELL: bool> Parser<'_, CELL> {
    #[cold]
    #[inline(never)]
    fn error(&self, what: &str) -> String {
        if CELL {
            return String::new();
        }
        // `pos` may sit inside a character (after a backslash, say): count the characters
        // that start before it.
        let end = self.pos.min(self.text.len());
        let before = self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| (b as i8) >= -0x40)
            .count();
        format!("{what} at character {}", before + 1)
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            // One test for the usual byte, which is no white space (all of it is <= 0x20).
            if b > b' ' || !(b == b' ' || b == b'\n' || b == b'\r' || (b == b'\t' && !CELL)) {
                break;
            }
            self.pos += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> std::result::Result<(), String> {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> std::result::Result<Value, String> {
        match self.bytes.get(self.pos) {
            None => Err(self.error("unexpected end")),
            Some(b'n') => self.eat("null").map(|()| Value::Null),
            Some(b't') => self.eat("true").map(|()| Value::Bool(true)),
            Some(b'f') => self.eat("false").map(|()| Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                if depth > MAX_DEPTH {
                    return Err(self.error("nesting too deep"));
                }
                self.pos += 1;
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                    return Ok(Value::Array(Vec::new()));
                }
                // The capacity the first push would give, without the growth path's calls.
                let mut items = Vec::with_capacity(4);
                loop {
                    self.skip_ws();
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.bytes.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Value::Array(items));
                        }
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(b'{') => {
                if depth > MAX_DEPTH {
                    return Err(self.error("nesting too deep"));
                }
                self.pos += 1;
                let mut map = serde_json::Map::new();
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                loop {
                    self.skip_ws();
                    if self.bytes.get(self.pos) != Some(&b'"') {
                        return Err(self.error("expected a key"));
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if self.bytes.get(self.pos) != Some(&b':') {
                        return Err(self.error("expected `:`"));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let value = self.value(depth + 1)?;
                    map.insert(key, value);
                    self.skip_ws();
                    match self.bytes.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Value::Object(map));
                        }
                        _ => return Err(self.error("expected `,` or `}`")),
                    }
                }
            }
            Some(_) => Err(self.error("expected a value")),
        }
    }

    fn hex4(&mut self) -> std::result::Result<u32, String> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("invalid \\u escape"))?;
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))
    }

    /// The end of the plain run at `pos`: the first `"`, `\\` or control byte.
    #[inline]
    fn plain_run(&self) -> usize {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = 0x8080_8080_8080_8080;
        let mut at = self.pos;
        let bytes = self.bytes;
        // Eight bytes at a time: the lowest byte each test flags is a true one, so the first
        // stop is found without a byte loop (whose exit mispredicts once a string).
        while let Some(chunk) = bytes.get(at..at + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let word = u64::from_le_bytes(word);
            let quote = word ^ (ONES * u64::from(b'"'));
            let backslash = word ^ (ONES * u64::from(b'\\'));
            let stops = (word.wrapping_sub(ONES * 0x20) & !word
                | quote.wrapping_sub(ONES) & !quote
                | backslash.wrapping_sub(ONES) & !backslash)
                & HIGHS;
            if stops != 0 {
                return at + (stops.trailing_zeros() / 8) as usize;
            }
            at += 8;
        }
        while at < bytes.len() && !STRING_STOP[bytes[at] as usize] {
            at += 1;
        }
        at
    }

    /// The string literal at `pos` (its opening quote).
    #[inline(always)]
    fn string(&mut self) -> std::result::Result<String, String> {
        self.pos += 1;
        // Most strings have no escape: one allocation of the exact size.
        let end = self.plain_run();
        if self.bytes.get(end) == Some(&b'"') {
            let text = owned(&self.text[self.pos..end]);
            self.pos = end + 1;
            return Ok(text);
        }
        self.escaped_string(end)
    }

    /// [`Parser::string`] for a string with an escape (or an error) at `end`.
    #[inline(never)]
    fn escaped_string(&mut self, end: usize) -> std::result::Result<String, String> {
        let mut out = String::with_capacity(end - self.pos + 16);
        loop {
            let start = self.pos;
            self.pos = self.plain_run();
            out.push_str(&self.text[start..self.pos]);
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let backslash = self.pos;
                    self.pos += 1;
                    if CELL {
                        // The row doubles every backslash of the JSON text: a JSON escape
                        // is `\\` and its letter, JSON's own `\\` four backslashes. Any
                        // other backslash (a row escape of a TAB or a line feed, or one
                        // not doubled) sends the cell to the general path.
                        if self.bytes.get(self.pos) != Some(&b'\\') {
                            return Err(self.error("a backslash in a cell"));
                        }
                        self.pos += 1;
                        if self.bytes.get(self.pos) == Some(&b'\\') {
                            if self.bytes.get(self.pos + 1) != Some(&b'\\') {
                                return Err(self.error("a backslash in a cell"));
                            }
                            self.pos += 2;
                            out.push('\\');
                            continue;
                        }
                    }
                    let escape = self.bytes.get(self.pos).copied();
                    self.pos += 1;
                    match escape {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let high = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                let next: &[u8] = if CELL { b"\\\\u" } else { b"\\u" };
                                if !self.bytes[self.pos..].starts_with(next) {
                                    return Err(self.error("unpaired surrogate"));
                                }
                                self.pos += next.len();
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return Err(self.error("unpaired surrogate"));
                                }
                                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                high
                            };
                            out.push(
                                char::from_u32(code)
                                    .ok_or_else(|| self.error("unpaired surrogate"))?,
                            );
                        }
                        _ => {
                            self.pos = backslash;
                            return Err(self.error("invalid escape"));
                        }
                    }
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn number(&mut self) -> std::result::Result<Value, String> {
        let start = self.pos;
        if let Some((len, number)) = crate::value::short_number(&self.bytes[start..]) {
            self.pos += len;
            return Ok(Value::Number(number));
        }
        let Some((len, integer)) = crate::value::number_syntax(&self.bytes[start..]) else {
            return Err(self.error("invalid number"));
        };
        self.pos += len;
        let lexeme = &self.text[start..self.pos];
        crate::value::number_of_lexeme(lexeme, integer)
            .map(Value::Number)
            .map_err(|e| format!("{} at character {}", e.message(lexeme), start + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Value) -> String {
        to_json_string(v).unwrap()
    }

    #[test]
    fn go_escapes_and_map_order() {
        // Keys in the map's order: sorted by default, as written with `preserve_order`.
        assert_eq!(
            text(&json!({"a": "<x>&\u{2028}\u{2029}", "b": 1, "c": [true, null]})),
            r#"{"a":"\u003cx\u003e\u0026\u2028\u2029","b":1,"c":[true,null]}"#
        );
        assert_eq!(
            text(&json!("q\"\\\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é")),
            "\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é\""
        );
        assert_eq!(
            text(&json!({"Z": 3, "z": 2, "é": 1})),
            r#"{"Z":3,"z":2,"é":1}"#
        );
    }

    #[test]
    fn the_word_scan_finds_every_special_byte() {
        // Every length to 24, every special byte at every position (and after a first one):
        // the scan agrees with a look at each byte.
        let specials = [0u8, 0x1f, b'"', b'\\', b'<', b'>', b'&', 0xe2];
        for len in 0..24 {
            for at in 0..len {
                for &special in &specials {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    for from in 0..=len {
                        let expected = (from..len)
                            .find(|&i| SPECIAL[bytes[i] as usize])
                            .unwrap_or(len);
                        assert_eq!(
                            next_special(&bytes, from),
                            expected,
                            "{bytes:?} from {from}"
                        );
                    }
                }
            }
            assert_eq!(next_special(&vec![b'z'; len], 0), len);
        }
    }

    #[test]
    fn strings_parse_with_a_stop_at_every_position() {
        // An escape (or a raw control byte, refused) at every position of every length to
        // 24, with non-ASCII text around it: as serde_json reads it.
        for len in 0..24 {
            for at in 0..len {
                for stop in ["\\\"", "\\\\", "\\n", "\\u00e9", "\u{1}", "é"] {
                    let mut text = String::from("\"");
                    text.push_str(&"a".repeat(at));
                    text.push_str(stop);
                    text.push_str(&"b".repeat(len - at));
                    text.push('"');
                    let ours = parse_json(&text).ok();
                    let theirs = serde_json::from_str::<Value>(&text).ok();
                    assert_eq!(ours, theirs, "{text:?}");
                }
            }
        }
    }

    #[test]
    fn a_cell_parses_from_the_row_as_its_text_parses() {
        // Where the cell parses from the row, it is to the value its text (up to its TAB,
        // unescaped) parses to, and it stops at the TAB; `None` (the general path then reads
        // the cell) for text that does not parse, and for backslashes the encoder does not
        // write, whatever follows the TAB.
        let cells = [
            r#"{"a":1,"b":[true,null,"x"]}"#,
            r#"[1, 2 ,{"k" : "v"} ]"#,
            " [1]\r",
            "[1,\t2]",
            "[\"a\tb\"]",
            r#"["a\\nb"]"#,
            r#"["a\\\\nb", "\\"", "\\\\\\\\", "\\u00e9\\ud83d\\ude00", "\\/"]"#,
            r#"["\\ud83d\ude00"]"#,
            r#"["a\"b"]"#,
            r#"["a\\\tb"]"#,
            r#"["a\\\\\\"]"#,
            r#"[1,\t2]"#,
            r#"["x\\q"]"#,
            r#"{"a":1}x"#,
            r#"{"a":1} \"#,
            "[1e400]",
            "[-0, 0.5, 12345678901234567890]",
            "{",
            "[",
            "[]",
            "{}",
            r#"{"a":1,"a":2}"#,
            "",
        ];
        for cell in cells {
            for after in ["", "\t", "\tnext\t[1]", "\t\\"] {
                let row = format!("{cell}{after}");
                let text = row.split('\t').next().unwrap();
                let expected = parse_json(&crate::escape::unescape(text))
                    .ok()
                    .map(|v| (v, text.len()));
                match parse_json_cell(&row) {
                    Some(found) => assert_eq!(Some(found), expected, "{row:?}"),
                    // Only a backslash the parser does not read itself sends a cell that
                    // reads to the general path.
                    None => assert!(expected.is_none() || text.contains('\\'), "{row:?}"),
                }
            }
        }
    }

    #[test]
    fn cells_the_encoder_writes_parse_from_the_row() {
        let value = json!({
            "quote": "27\" Monitor",
            "path": "C:\\dir\\",
            "lines": "a\nb\tc\r\u{1}",
            "html": "<a href=\"x\">&</a>\u{2028}",
            "text": "é😀",
            "list": [1, -0.0, 0.5, true, null, {"k\\": ["\\\\"]}],
        });
        let mut cell = Vec::new();
        write_json_cell_text(&mut cell, &value).unwrap();
        let cell = String::from_utf8(cell).unwrap();
        for after in ["", "\tnext"] {
            let row = format!("{cell}{after}");
            assert_eq!(parse_json_cell(&row), Some((value.clone(), cell.len())));
        }
    }

    #[test]
    fn owned_copies_every_length() {
        let text = "aé😀bcdefghijklmnopqrstuvwxyz0123456789ABCDEF";
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let copy = owned(&text[..end]);
            assert_eq!(copy, &text[..end]);
            assert_eq!(copy.capacity(), end);
        }
    }

    #[test]
    fn floats_stay_floats() {
        assert_eq!(text(&json!([1.0, 0.5, -0.0])), "[1.0,0.5,-0.0]");
        if !arbitrary_precision() {
            assert_eq!(text(&json!([1e21, 1e-7])), "[1e+21,1e-7]");
            assert_eq!(text(&json!(1e16)), "10000000000000000.0");
        }
        assert_eq!(
            text(&json!([u64::MAX, i64::MIN])),
            "[18446744073709551615,-9223372036854775808]"
        );
    }

    #[test]
    fn parses_json_exactly() {
        let text = r#"{"a": [1, -2, 0.5, 1e-7, -2.0353366338057799e-171, true, null], "b\u00e9\ud83d\ude00": "x\n\"y\"\/"}"#;
        let value = parse_json(text).unwrap();
        assert_eq!(value["b\u{e9}\u{1f600}"], json!("x\n\"y\"/"));
        if !arbitrary_precision() {
            assert_eq!(value["a"][4].as_f64().unwrap(), -2.0353366338057799e-171);
        }
        for bad in [
            "",
            "01",
            "1.",
            "-",
            "[1,]",
            "{\"a\"1}",
            "\"\\x\"",
            "\"\u{1}\"",
            "tru",
            "[1] x",
            "\"\\ud800\"",
            "\"\\é\"",
            "\"\\\u{10348}x\"",
        ] {
            assert!(parse_json(bad).is_err(), "{bad:?}");
        }
        assert!(parse_json("[1e400]").is_err());
        assert!(parse_json("[1e-400]").is_err());
        assert!(parse_json("[0e-400]").is_ok());
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(parse_json(&deep).is_ok());
        let deeper = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(parse_json(&deeper).is_err());
    }

    #[test]
    fn depth_is_limited() {
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(to_json_string(&deep).is_ok());
        let deeper = json!([deep]);
        assert_eq!(to_json_string(&deeper).unwrap_err().code(), "depth_limit");
    }
}
