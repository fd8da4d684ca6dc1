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

/// Whether one of the eight bytes of `word` is below 0x0E or a backslash.
#[inline]
fn special_in_word(word: u64) -> bool {
    let low = word.wrapping_sub(ONES * 0x0E) & !word;
    let x = word ^ (ONES * u64::from(b'\\'));
    let backslash = x.wrapping_sub(ONES) & !x;
    (low | backslash) & HIGHS != 0
}

#[inline]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Whether `bytes` may hold a byte that needs escaping: a backslash or a byte below 0x0E
/// (TAB, LF and CR among them), eight bytes at a time; false positives (other control
/// bytes) only cost the exact scan.
#[inline]
fn may_need_escape(bytes: &[u8]) -> bool {
    let len = bytes.len();
    if len < 8 {
        return bytes.iter().any(|&b| b == b'\\' || b < 0x0E);
    }
    let mut at = 0;
    while at + 8 <= len {
        if special_in_word(word_at(bytes, at)) {
            return true;
        }
        at += 8;
    }
    // The last, partial word: re-read the final eight bytes.
    at < len && special_in_word(word_at(bytes, len - 8))
}

/// The index of the first byte that needs escaping.
#[inline]
pub(crate) fn find_special(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| SPECIAL[b as usize])
}

/// Appends `text` to `out`, escaped.
#[inline]
pub(crate) fn escape_into(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    if !may_need_escape(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
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
    if text.starts_with('#') || text.starts_with("GCX") {
        out.push(b'\\');
    }
    escape_into(out, text);
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
        for len in 0..24 {
            for at in 0..len {
                for special in ['\\', '\t', '\n', '\r'] {
                    let mut text = "a".repeat(len);
                    text.replace_range(at..=at, &special.to_string());
                    assert!(may_need_escape(text.as_bytes()), "{text:?}");
                }
            }
            assert!(!may_need_escape("é".repeat(len).as_bytes()));
            assert!(!may_need_escape("z".repeat(len).as_bytes()));
        }
        // Control bytes below 0x0E other than TAB/LF/CR pass through.
        assert_eq!(
            esc("a\u{1}\u{b}\u{c}bcdefghij"),
            "a\u{1}\u{b}\u{c}bcdefghij"
        );
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
