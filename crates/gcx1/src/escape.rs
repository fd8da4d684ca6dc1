//! The escape alphabet of GCX1 cells and header values.
//!
//! Encoding: `\` → `\\`, TAB → `\t`, LF → `\n`; CRs directly before an LF are dropped (the
//! spec's "CR is stripped on encode, so CRLF becomes LF"); any other CR is kept as `\` + CR,
//! which every decoder reads back as CR under the rule "any other `\x` decodes to `x`".
//!
//! Decoding: `\\`, `\t` and `\n` are recognised; any other `\x` decodes to `x`; a lone `\` at
//! the very end stays `\` (as the reference decoders do).

use std::borrow::Cow;

/// Bytes that the escape loop has to look at.
const SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'\\' as usize] = true;
    table[b'\t' as usize] = true;
    table[b'\n' as usize] = true;
    table[b'\r' as usize] = true;
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Non-zero when one of the eight bytes of `word` is below 0x0E or a backslash: TAB, LF, CR
/// and `\\` are among them, and the other control bytes below 0x0E are false positives that
/// only cost the exact scan.
#[inline]
fn marks(word: u64) -> u64 {
    let low = word.wrapping_sub(ONES * 0x0E) & !word;
    let x = word ^ (ONES * u64::from(b'\\'));
    let backslash = x.wrapping_sub(ONES) & !x;
    (low | backslash) & HIGHS
}

/// The first eight bytes of `bytes`, little-endian.
#[inline]
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// The first `N` bytes of `bytes`.
#[inline]
fn chunk<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut chunk = [0u8; N];
    chunk.copy_from_slice(&bytes[..N]);
    chunk
}

/// Appends the `N` bytes of `head` and then the `N` bytes of `tail` so that they overlap
/// into `len` bytes in all: `head` and `tail` are the first and last `N` bytes of a
/// `len`-byte string, `N <= len <= 2 * N`.
#[inline]
fn push_overlapping<const N: usize>(out: &mut Vec<u8>, head: [u8; N], tail: [u8; N], len: usize) {
    let at = out.len();
    out.extend_from_slice(&head);
    out.truncate(at + len - N);
    out.extend_from_slice(&tail);
}

/// Appends `bytes` to `out` and returns non-zero when one of them may need escaping.
///
/// Text in cells is mostly short (names, identifiers, numbers): up to 32 bytes are copied as
/// two overlapping fixed-size chunks, which compile to a few register moves where a
/// `memcpy` call would cost more than the copy, and the escape check reads the same chunks.
/// Longer text is copied in one call and checked eight bytes at a time; in both cases the
/// check branches once, at the end.
#[inline(always)]
fn push_checked(out: &mut Vec<u8>, bytes: &[u8]) -> u64 {
    push_marked(out, bytes, marks)
}

/// [`push_checked`] with another test: `marks` flags (in the high bit of each byte of a
/// little-endian word) the bytes that may need a look; it must not flag spaces, which pad
/// words of short text.
#[inline(always)]
pub(crate) fn push_marked<M: Fn(u64) -> u64 + Copy>(
    out: &mut Vec<u8>,
    bytes: &[u8],
    marks: M,
) -> u64 {
    let len = bytes.len();
    if len > 32 {
        out.extend_from_slice(bytes);
        let mut found = marks(word(&bytes[len - 8..]));
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            found |= marks(word(w));
        }
        found
    } else if len >= 16 {
        let (head, tail) = (chunk::<16>(bytes), chunk::<16>(&bytes[len - 16..]));
        push_overlapping(out, head, tail, len);
        let (h, t) = (head.split_at(8), tail.split_at(8));
        marks(word(h.0)) | marks(word(h.1)) | marks(word(t.0)) | marks(word(t.1))
    } else if len >= 8 {
        let (head, tail) = (chunk::<8>(bytes), chunk::<8>(&bytes[len - 8..]));
        push_overlapping(out, head, tail, len);
        marks(u64::from_le_bytes(head)) | marks(u64::from_le_bytes(tail))
    } else if len >= 4 {
        let (head, tail) = (chunk::<4>(bytes), chunk::<4>(&bytes[len - 4..]));
        push_overlapping(out, head, tail, len);
        marks(u64::from(u32::from_le_bytes(head)) | u64::from(u32::from_le_bytes(tail)) << 32)
    } else if len > 0 {
        // The first, middle and last byte are all of the bytes, some of them twice.
        let three = [bytes[0], bytes[len / 2], bytes[len - 1]];
        let at = out.len();
        out.extend_from_slice(&three);
        out.truncate(at + len);
        // The other five bytes of the word are spaces, which need no escaping.
        marks(u64::from_le_bytes([
            three[0], three[1], three[2], b' ', b' ', b' ', b' ', b' ',
        ]))
    } else {
        0
    }
}

/// Appends bytes that need no escaping, such as a formatted number: like
/// `extend_from_slice`, without a `memcpy` call for short slices.
#[inline]
pub(crate) fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // The escape check is dead code here and compiled away.
    let _ = push_checked(out, bytes);
}

/// The index of the first byte that needs escaping.
#[inline]
pub(crate) fn find_special(bytes: &[u8]) -> Option<usize> {
    // Eight bytes at a time past the words `marks` leaves unflagged (it flags every byte
    // that needs a look, and a few more), then byte by byte.
    let special = |b: &u8| SPECIAL[*b as usize];
    let mut at = 0;
    while at + 8 <= bytes.len() {
        if marks(word(&bytes[at..])) != 0 {
            if let Some(i) = bytes[at..at + 8].iter().position(special) {
                return Some(at + i);
            }
        }
        at += 8;
    }
    bytes[at..].iter().position(special).map(|i| at + i)
}

/// Appends `text` to `out`, escaped.
///
/// Inlined: almost no cell needs escaping, so the text is copied first and checked as it is
/// copied; only when the check finds a byte that may need an escape is the copy taken back
/// and the text escaped, out of line.
#[inline(always)]
pub(crate) fn escape_into(out: &mut Vec<u8>, text: &str) {
    escape_marked(out, text);
}

/// [`escape_into`], telling whether `text` holds a byte that may need an escape (`\\`, TAB,
/// LF or CR; `false` means it holds none of them).
#[inline(always)]
pub(crate) fn escape_marked(out: &mut Vec<u8>, text: &str) -> bool {
    let at = out.len();
    if push_checked(out, text.as_bytes()) != 0 {
        out.truncate(at);
        escape_slow(out, text.as_bytes());
        return true;
    }
    false
}

/// [`escape_into`] for text that may need escapes.
#[inline(never)]
fn escape_slow(out: &mut Vec<u8>, bytes: &[u8]) {
    let Some(mut next) = find_special(bytes) else {
        out.extend_from_slice(bytes);
        return;
    };
    let mut start = 0;
    loop {
        out.extend_from_slice(&bytes[start..next]);
        start = next + 1;
        match bytes[next] {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            _ => {
                // A run of CRs: dropped when an LF follows (CRLF becomes LF, and so does
                // CR CR LF, so that a second round changes nothing), otherwise each kept
                // behind a backslash.
                let run_end = bytes[next..]
                    .iter()
                    .position(|&b| b != b'\r')
                    .map_or(bytes.len(), |i| next + i);
                if bytes.get(run_end) != Some(&b'\n') {
                    for _ in next..run_end {
                        out.extend_from_slice(b"\\\r");
                    }
                }
                start = run_end;
            }
        }
        match find_special(&bytes[start..]) {
            Some(i) => next = start + i,
            None => break,
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Appends the first cell of a row: like [`escape_into`], but a cell starting with `#` (a
/// comment to decoders) or `GCX` (a header to decoders) gets a leading backslash, which
/// decodes away.
#[inline]
pub(crate) fn escape_first_into(out: &mut Vec<u8>, text: &str) {
    escape_first_marked(out, text);
}

/// [`escape_first_into`], telling what [`escape_marked`] tells.
#[inline]
pub(crate) fn escape_first_marked(out: &mut Vec<u8>, text: &str) -> bool {
    if text.starts_with('#') || text.starts_with("GCX") {
        out.push(b'\\');
    }
    escape_marked(out, text)
}

/// The escaped form of `text`, as a `String`.
#[cfg(test)]
pub(crate) fn escape(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 2);
    escape_into(&mut out, text);
    // Escaping only inserts ASCII bytes between whole characters.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Decodes the escapes in `raw`, borrowing when there are none.
#[inline]
pub(crate) fn unescape(raw: &str) -> Cow<'_, str> {
    match memchr::memchr(b'\\', raw.as_bytes()) {
        None => Cow::Borrowed(raw),
        Some(first) => Cow::Owned(unescape_from(raw, first)),
    }
}

fn unescape_from(raw: &str, first: usize) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut start = 0;
    let mut next = first;
    loop {
        out.push_str(&raw[start..next]);
        let rest = &raw[next + 1..];
        match rest.chars().next() {
            None => {
                // A lone backslash at the very end stays.
                out.push('\\');
                return out;
            }
            Some(c) => {
                out.push(match c {
                    't' => '\t',
                    'n' => '\n',
                    other => other,
                });
                start = next + 1 + c.len_utf8();
            }
        }
        match memchr::memchr(b'\\', &raw.as_bytes()[start..]) {
            Some(i) => next = start + i,
            None => break,
        }
    }
    out.push_str(&raw[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        escape(s)
    }

    fn first(s: &str) -> String {
        let mut out = Vec::new();
        escape_first_into(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_the_alphabet() {
        assert_eq!(esc("plain text, with commas"), "plain text, with commas");
        assert_eq!(esc("a\tb\nc\\d"), "a\\tb\\nc\\\\d");
        assert_eq!(esc("\\"), "\\\\");
        assert_eq!(esc("x\r\ny"), "x\\ny");
        assert_eq!(esc("x\ry"), "x\\\ry");
        assert_eq!(esc("x\r"), "x\\\r");
        assert_eq!(esc("x\r\r\n"), "x\\n");
        assert_eq!(esc("x\r\ry\r"), "x\\\r\\\ry\\\r");
        assert_eq!(esc("héllo\twörld"), "héllo\\twörld");
        // The scan works in eight-byte words; put specials at every offset.
        for pad in 0..20 {
            let text = format!("{}\t{}", "a".repeat(pad), "b".repeat(pad));
            assert_eq!(
                esc(&text),
                format!("{}\\t{}", "a".repeat(pad), "b".repeat(pad))
            );
        }
        for len in 0..80 {
            let plain: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            for at in 0..len {
                for special in ['\\', '\t', '\n', '\r'] {
                    let mut text = plain.clone();
                    text.replace_range(at..=at, &special.to_string());
                    let mut out = b"prefix".to_vec();
                    assert_ne!(push_checked(&mut out, text.as_bytes()), 0, "{text:?}");
                    assert_eq!(out, format!("prefix{text}").as_bytes());
                }
            }
            // Copies are exact at every length, whatever the buffer's spare capacity.
            for spare in [0, 1, 7, 64] {
                let mut out = Vec::with_capacity(3 + spare);
                out.extend_from_slice(b"pre");
                assert_eq!(push_checked(&mut out, plain.as_bytes()), 0, "{plain:?}");
                assert_eq!(out, format!("pre{plain}").as_bytes());
                let mut out = Vec::new();
                push_bytes(&mut out, "é".repeat(len).as_bytes());
                assert_eq!(out, "é".repeat(len).as_bytes());
            }
            let mut out = Vec::new();
            assert_eq!(push_checked(&mut out, "é".repeat(len).as_bytes()), 0);
            assert_eq!(push_checked(&mut out, "z~".repeat(len).as_bytes()), 0);
        }
        // Control bytes below 0x0E other than TAB/LF/CR pass through.
        assert_eq!(
            esc("a\u{1}\u{b}\u{c}bcdefghij"),
            "a\u{1}\u{b}\u{c}bcdefghij"
        );
    }

    #[test]
    fn finds_each_special_byte_at_every_offset() {
        // Words of eight bytes are skipped only when `marks` flags none of their bytes:
        // every special byte, at every offset of texts of up to 40 bytes, amid bytes
        // `marks` flags and does not flag.
        for fill in [b'a', 0x01, 0x0E, b']', 0xC3] {
            for len in 1..=40 {
                for at in 0..len {
                    for special in [b'\\', b'\t', b'\n', b'\r'] {
                        let mut bytes = vec![fill; len];
                        bytes[at] = special;
                        assert_eq!(find_special(&bytes), Some(at), "{fill} {len} {at}");
                    }
                }
                assert_eq!(find_special(&vec![fill; len]), None, "{fill} {len}");
            }
        }
    }

    #[test]
    fn protects_the_first_cell() {
        assert_eq!(first("#tag"), "\\#tag");
        assert_eq!(first("GCX1 tool=x"), "\\GCX1 tool=x");
        assert_eq!(first("GCX2"), "\\GCX2");
        assert_eq!(first("a#b"), "a#b");
        assert_eq!(unescape("\\#tag"), "#tag");
        assert_eq!(unescape("\\GCX1 tool=x"), "GCX1 tool=x");
    }

    #[test]
    fn unescapes() {
        assert_eq!(unescape("abc"), Cow::Borrowed("abc"));
        assert_eq!(unescape("a\\tb\\nc\\\\d"), "a\tb\nc\\d");
        assert_eq!(unescape("\\r"), "r");
        assert_eq!(unescape("\\x\\y"), "xy");
        assert_eq!(unescape("end\\"), "end\\");
        assert_eq!(unescape("\\"), "\\");
        assert_eq!(unescape("\\é"), "é");
        assert_eq!(unescape("\\\\\\"), "\\\\");
        assert_eq!(unescape("\\\r"), "\r");
    }

    #[test]
    fn round_trips() {
        for text in [
            "",
            "a",
            "\\",
            "\\\\t",
            "tab\there",
            "nl\nthere",
            "cr\rthere",
            "trailing\\",
            "ünïcödé\t✓",
        ] {
            assert_eq!(unescape(&esc(text)), text, "{text:?}");
        }
        assert_eq!(unescape(&esc("a\r\nb")), "a\nb");
    }
}
