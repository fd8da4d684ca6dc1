//! The generic encoder's output: bytes written into room zeroed ahead of them.
//!
//! A `String` checks its capacity at every push and copies every piece with a `memcpy`
//! call; most pieces the encoder writes are a few bytes (a key, `=`, a number, `|`). Here
//! the buffer is kept zero-extended past what is written (`buf.len()` is the room, `len`
//! what is written), so a short piece is copied with a few fixed-size stores into room
//! checked once, and indentation is one store of a run of spaces. Every piece is a whole
//! `&str` or an ASCII byte, and the output is cut only at a length it had, so the bytes are
//! UTF-8; [`Out::into_string`] checks them once at the end (on ASCII, a word at a time).
//! The streaming encoder keeps one `Out` for its whole stream, its room included, and
//! writes each call's bytes to its writer directly.
//!
//! The writing methods are inlined always in optimized builds only: unoptimized, every
//! inlined copy keeps its own stack slots, and the encoder's recursive frames would outgrow
//! the 2 MiB stack the depth limit is tested on.

use crate::lex::Sink;

/// How much room is zeroed at a time (below the size from which glibc's `memset` turns to
/// `rep stosb`).
const ROOM: usize = 2000;

/// A run of spaces for indentation.
const SPACES: &[u8; 64] = b"                                                                ";

/// The encoder's output buffer (see the module docs).
#[derive(Default)]
pub(crate) struct Out {
    /// The written bytes, then zeroed room.
    buf: Vec<u8>,
    /// How many bytes are written.
    len: usize,
}

impl Out {
    /// An output that continues `text`.
    pub(crate) fn from_string(text: String) -> Out {
        let len = text.len();
        Out {
            buf: text.into_bytes(),
            len,
        }
    }

    /// The written text.
    pub(crate) fn into_string(self) -> String {
        let mut buf = self.buf;
        buf.truncate(self.len);
        String::from_utf8(buf).expect("the output is written from whole strings")
    }

    /// The written text, borrowed.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("the output is written from whole strings")
    }

    /// The written bytes.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// How many bytes are written.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Cuts the output back to `len` bytes (a length it had).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn truncate(&mut self, len: usize) {
        if len < self.len {
            // (Zeroed again is not needed: room is only ever overwritten.)
            self.len = len;
        }
    }

    /// Forgets everything written, keeping the room.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Room for `n` more bytes at least: the slice from the end of the output, at least `n`
    /// bytes long.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn room(&mut self, n: usize) -> &mut [u8] {
        if self.buf.len() - self.len < n {
            self.grow(n);
        }
        &mut self.buf[self.len..]
    }

    /// The `K` bytes of room at `len`, if they are zeroed room already.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn room_at<const K: usize>(&mut self, len: usize) -> Option<&mut [u8; K]> {
        self.buf.get_mut(len..len + K)?.try_into().ok()
    }

    /// Zeroes room for `n` more bytes, and for as many as are written (at least 128, at most
    /// [`ROOM`]): a little at a time, so that the zeroed room stays in cache until it is
    /// written (the buffer's capacity still grows by doubling), and a buffer kept for a
    /// whole stream stays the size of its rows.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        let step = ROOM.min(self.len.max(128));
        self.buf.resize(self.len + n.max(step), 0);
    }

    /// Appends `bytes` (whole UTF-8 pieces).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) {
        let n = bytes.len();
        let len = self.len;
        if n <= 32 {
            if let Some(room) = self.room_at::<32>(len) {
                copy_short(room, bytes);
                self.len = len + n;
                return;
            }
        }
        self.push_slow(bytes);
    }

    #[inline(never)]
    fn push_slow(&mut self, bytes: &[u8]) {
        let n = bytes.len();
        self.room(n.max(32))[..n].copy_from_slice(bytes);
        self.len += n;
    }

    /// Appends one ASCII byte.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn push_byte(&mut self, byte: u8) {
        debug_assert!(byte.is_ascii());
        let len = self.len;
        match self.buf.get_mut(len) {
            Some(room) => {
                *room = byte;
                self.len = len + 1;
            }
            None => self.push_slow(&[byte]),
        }
    }

    /// Appends `depth` levels of indentation (two spaces each).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn indent(&mut self, depth: usize) {
        let n = depth * 2;
        let len = self.len;
        if n <= 32 {
            if let Some(room) = self.buf.get_mut(len..len + 32) {
                // One fixed-size store; the excess is room, overwritten next.
                room.copy_from_slice(&SPACES[..32]);
                self.len = len + n;
                return;
            }
        }
        self.indent_long(n);
    }

    /// Appends the start of a line: `depth` levels of indentation, `lead` (a few constant
    /// bytes: `## `, `.`, or none), `key` and `sep` (`  key=`, `  ## key` and its newline,
    /// `  key[`), with one check for room; `false`, with nothing written, for a key of more
    /// than 32 bytes or more than 16 levels (the caller then writes the pieces).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn line_start(&mut self, depth: usize, lead: &[u8], key: &[u8], sep: u8) -> bool {
        let (n, k) = (depth * 2, key.len());
        let len = self.len;
        if n > 32 || k > 32 || lead.len() > 4 {
            return false;
        }
        let Some(room) = self.room_at::<72>(len) else {
            return false;
        };
        room[..32].copy_from_slice(&SPACES[..32]);
        room[n..n + lead.len()].copy_from_slice(lead);
        let n = n + lead.len();
        let Ok(at) = <&mut [u8; 32]>::try_from(&mut room[n..n + 32]) else {
            return false;
        };
        copy_short(at, key);
        room[n + k] = sep;
        self.len = len + n + k + 1;
        true
    }

    #[inline(never)]
    fn indent_long(&mut self, mut n: usize) {
        while n > 0 {
            let step = n.min(SPACES.len());
            self.push_slow(&SPACES[..step]);
            n -= step;
        }
    }

    /// Removes the bytes in `from..to`.
    pub(crate) fn remove(&mut self, from: usize, to: usize) {
        self.buf.copy_within(to..self.len, from);
        self.len -= to - from;
    }

    /// Inserts `text` at `at` (a boundary of written pieces).
    pub(crate) fn insert_str(&mut self, at: usize, text: &[u8]) {
        let n = text.len();
        self.room(n);
        self.buf.copy_within(at..self.len, at + n);
        self.buf[at..at + n].copy_from_slice(text);
        self.len += n;
    }

    /// Reserves capacity for `additional` more bytes (zeroed as it is reached).
    pub(crate) fn reserve(&mut self, additional: usize) {
        let want = self.len.saturating_add(additional);
        self.buf.reserve(want.saturating_sub(self.buf.len()));
    }

    /// The written bytes from `from` on.
    pub(crate) fn tail(&self, from: usize) -> &[u8] {
        &self.as_bytes()[from..]
    }
}

/// Copies `src` (at most 32 bytes) to the start of `dst` with fixed-size, possibly
/// overlapping, loads and stores.
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
fn copy_short(dst: &mut [u8; 32], src: &[u8]) {
    let n = src.len();
    if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..n].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// The two-digit numbers `00` to `99`, for [`Out::push_u64`].
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// The powers of ten a `u64` holds.
const POW10: [u64; 20] = {
    let mut table = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

impl Out {
    /// Appends the decimal digits of `value`, stored in place two at a time (no formatting
    /// into a buffer of its own and copy after).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn push_u64(&mut self, value: u64) {
        if value < 10 {
            // Counts, indexes, small quantities: one byte.
            self.push_byte(b'0' + value as u8);
            return;
        }
        let len = self.len;
        let Some(room) = self.room_at::<20>(len) else {
            self.push_slow(itoa::Buffer::new().format(value).as_bytes());
            return;
        };
        self.len = len + digits(room, value);
    }

    /// Appends the number of `hundredths` (below 1e11), negated if `negative`, without
    /// trailing zeros in its fraction (prices, amounts): one check for room, one store per
    /// byte or pair.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn push_hundredths(&mut self, negative: bool, hundredths: u64) {
        let len = self.len;
        let Some(room) = self.room_at::<32>(len) else {
            let mut text = String::new();
            crate::number::write_hundredths_parts(&mut text, negative, hundredths);
            self.push_slow(text.as_bytes());
            return;
        };
        let mut at = usize::from(negative);
        room[0] = b'-';
        if let Ok(whole) = <&mut [u8; 20]>::try_from(&mut room[at..at + 20]) {
            at += digits(whole, hundredths / 100);
        }
        let fraction = (hundredths % 100) as usize;
        if fraction != 0 {
            room[at] = b'.';
            room[at + 1] = PAIRS[fraction * 2];
            room[at + 2] = PAIRS[fraction * 2 + 1];
            at += if fraction.is_multiple_of(10) { 2 } else { 3 };
        }
        self.len = len + at;
    }
}

/// Stores the decimal digits of `value` at the start of `room`, two at a time; returns how
/// many.
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
fn digits(room: &mut [u8; 20], value: u64) -> usize {
    // The count: by comparisons up to five digits (branches a column of numbers predicts,
    // where the output's length would otherwise wait for a computed count), from the bit
    // length above: `floor(log10(2) * bits)` (1233 / 4096 a little above `log10(2)`), one
    // less when below that power of ten.
    let n = if value < 10 {
        1
    } else if value < 100 {
        2
    } else if value < 1000 {
        3
    } else if value < 10_000 {
        4
    } else if value < 100_000 {
        5
    } else {
        let bits = 64 - value.leading_zeros();
        let t = ((bits * 1233) >> 12) as usize;
        t + 1 - usize::from(value < POW10[t])
    };
    let mut v = value;
    let mut at = n;
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        room[at] = PAIRS[pair];
        room[at + 1] = PAIRS[pair + 1];
    }
    if v >= 10 {
        let pair = v as usize * 2;
        room[0] = PAIRS[pair];
        room[1] = PAIRS[pair + 1];
    } else {
        room[0] = b'0' + v as u8;
    }
    n
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The written text, not the room after it.
        f.debug_struct("Out")
            .field("text", &String::from_utf8_lossy(self.as_bytes()))
            .finish()
    }
}

impl Sink for Out {
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn push_str(&mut self, s: &str) {
        self.push_bytes(s.as_bytes());
    }

    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn push(&mut self, c: char) {
        if c.is_ascii() {
            self.push_byte(c as u8);
        } else {
            self.push_bytes(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }

    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn reserve(&mut self, additional: usize) {
        Out::reserve(self, additional);
    }

    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn indent(&mut self, depth: usize) {
        Out::indent(self, depth);
    }

    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn push_u64(&mut self, value: u64) {
        Out::push_u64(self, value);
    }

    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn push_hundredths(&mut self, negative: bool, hundredths: u64) {
        Out::push_hundredths(self, negative, hundredths);
    }
}

#[cfg(test)]
mod tests {
    use super::Out;
    use crate::lex::Sink;

    #[test]
    fn pieces_of_every_length_and_cuts() {
        let mut out = Out::from_string("GCF".to_owned());
        let mut expected = String::from("GCF");
        for n in 0..80 {
            let piece: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            out.push_str(&piece);
            expected.push_str(&piece);
            out.push('é');
            expected.push('é');
            out.indent(n % 40);
            expected.push_str(&" ".repeat(2 * (n % 40)));
            out.push_byte(b'|');
            expected.push('|');
        }
        assert_eq!(out.as_str(), expected);
        out.insert_str(3, b"@12 ");
        expected.insert_str(3, "@12 ");
        out.remove(5, 7);
        expected.replace_range(5..7, "");
        for v in [
            0,
            7,
            10,
            99,
            100,
            12_345,
            40_000,
            u64::MAX,
            1 << 63,
            999_999_999_999,
        ] {
            out.push_u64(v);
            expected.push_str(&v.to_string());
            out.push_byte(b',');
            expected.push(',');
        }
        for (negative, h) in [
            (false, 1),
            (true, 10),
            (false, 100),
            (false, 2999),
            (true, 24900),
            (false, 99_999_999_999),
        ] {
            out.push_hundredths(negative, h);
            crate::number::write_hundredths_parts(&mut expected, negative, h);
            out.push_byte(b',');
            expected.push(',');
        }
        assert_eq!(out.as_str(), expected);
        let cut = (0..=40)
            .rev()
            .find(|&i| expected.is_char_boundary(i))
            .unwrap();
        out.truncate(cut);
        expected.truncate(cut);
        out.push_str("tail");
        expected.push_str("tail");
        assert_eq!(out.into_string(), expected);
    }
}
