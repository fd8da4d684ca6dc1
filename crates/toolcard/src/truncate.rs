//! Description truncation, spec §2.4.

use std::borrow::Cow;

use agentwire_tokens::Tokenizer;

/// The longest cl100k_base token, in bytes: a text longer than `128 × budget` bytes cannot fit
/// in `budget` tokens, so it is rejected without being encoded.
pub(crate) const MAX_TOKEN_BYTES: usize = 128;

/// The ellipsis appended after a hard cut: U+2026, one cl100k_base token.
pub const ELLIPSIS: char = '\u{2026}';

pub(crate) fn count(text: &str) -> usize {
    Tokenizer::Cl100kBase.count(text)
}

/// Truncates `text` to at most `max_tokens` cl100k_base tokens, exactly as spec §2.4 says:
///
/// 1. A budget of 0 gives the empty string.
/// 2. Text within the budget is returned verbatim.
/// 3. Otherwise the longest prefix that ends at a sentence boundary and fits is returned,
///    without trailing whitespace. A sentence boundary is `.`, `!` or `?` followed by a
///    whitespace character or the end of the text (so `v1.2` and `e.g.x` are not boundaries).
/// 4. When no boundary fits, the text is cut at the character offset found by a binary search
///    for a prefix of at most `max_tokens − 1` tokens; trailing whitespace is removed and `…`
///    (U+2026) appended.
///
/// The search in step 4 runs over character offsets (`lo = 0`, `hi = chars`, keep the last
/// `mid` that fits), like the Python reference implementation, so both cut at the same
/// character even where prefix token counts are not monotonic. Every step is deterministic
/// and cuts only on character boundaries.
///
/// ```
/// use agentwire_toolcard::truncate_description;
///
/// let text = "Hello world. This is e.g. a test. And then it goes on for much longer than that.";
/// assert_eq!(truncate_description(text, 8), "Hello world. This is e.g.");
/// assert_eq!(truncate_description("v1.2.3 is the version of this package today", 4), "v1.…");
/// assert_eq!(truncate_description("short", 10), "short");
/// ```
pub fn truncate_description(text: &str, max_tokens: usize) -> Cow<'_, str> {
    if max_tokens == 0 {
        return Cow::Borrowed("");
    }
    // A text longer than `128 × budget` bytes has more than `budget` tokens: such texts and
    // prefixes are judged without encoding them, which bounds the work on huge descriptions
    // without changing any result.
    let limit = max_tokens.saturating_mul(MAX_TOKEN_BYTES);
    if text.len() <= limit && count(text) <= max_tokens {
        return Cow::Borrowed(text);
    }
    let boundaries = sentence_boundaries(text);
    for &end in boundaries.iter().rev() {
        let candidate = text[..end].trim_end();
        if candidate.len() <= limit && count(candidate) <= max_tokens {
            return Cow::Borrowed(candidate);
        }
    }
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    // `offsets[k]` is the byte offset of character `k`; `offsets[chars]` is the end.
    let chars = offsets.len() as isize - 1;
    let (mut lo, mut hi, mut best) = (0isize, chars, 0usize);
    while lo <= hi {
        let mid = (lo + hi) / 2;
        let end = offsets[mid as usize];
        let fits = end <= (max_tokens - 1).saturating_mul(MAX_TOKEN_BYTES)
            && count(&text[..end]) < max_tokens;
        if fits {
            best = end;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    let mut cut = text[..best].trim_end().to_owned();
    cut.push(ELLIPSIS);
    Cow::Owned(cut)
}

/// End offsets (just past the terminator and its following whitespace character) of every
/// sentence boundary, in increasing order.
fn sentence_boundaries(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') {
            match chars.peek() {
                None => ends.push(i + 1),
                Some(&(j, next)) if next.is_whitespace() => ends.push(j + next.len_utf8()),
                Some(_) => {}
            }
        }
    }
    ends
}

/// Collapses every run of whitespace (newlines included) into one space and trims the ends,
/// making a description a single line (§2.1).
pub(crate) fn single_line(text: &str) -> Cow<'_, str> {
    let clean = !text.starts_with(char::is_whitespace)
        && !text.ends_with(char::is_whitespace)
        && !text
            .as_bytes()
            .windows(2)
            .any(|w| w[0] == b' ' && w[1] == b' ')
        && !text.chars().any(|c| c.is_whitespace() && c != ' ');
    if clean {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_need_whitespace_or_the_end() {
        assert_eq!(sentence_boundaries("a. b! c?"), vec![3, 6, 8]);
        assert_eq!(
            sentence_boundaries("v1.2 e.g.x dot.No"),
            Vec::<usize>::new()
        );
        assert_eq!(sentence_boundaries("end.\nnext"), vec![5]);
        assert_eq!(sentence_boundaries("wait…"), Vec::<usize>::new());
    }

    #[test]
    fn huge_descriptions_are_cheap() {
        let text = "A".repeat(2_000_000);
        let cut = truncate_description(&text, 20);
        assert!(cut.ends_with('…'));
        assert!(count(&cut) <= 20);
        let sentences = "Short sentence here. ".repeat(100_000);
        assert_eq!(truncate_description(&sentences, 5), "Short sentence here.");
    }

    #[test]
    fn budget_edges() {
        assert_eq!(truncate_description("anything at all here", 0), "");
        assert_eq!(truncate_description("many words in a row here", 1), "…");
        assert_eq!(truncate_description("", 3), "");
    }

    #[test]
    fn results_fit_their_budget() {
        let text = "Reads a file from disk and returns its contents. Supports text and binary \
                    files, with optional offsets! Are ranges inclusive? Yes they are, always. \
                    日本語のテキストも読めます。😀😀😀 emoji too";
        for budget in 1..40 {
            let cut = truncate_description(text, budget);
            assert!(count(&cut) <= budget, "{budget}: {cut:?}");
        }
    }

    #[test]
    fn single_line_collapses_whitespace() {
        assert_eq!(single_line("a\n\n b\tc  "), "a b c");
        assert!(matches!(single_line("a b"), Cow::Borrowed("a b")));
    }
}
