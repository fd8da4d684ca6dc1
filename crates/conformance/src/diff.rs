//! Readable diffs for failure messages.

use std::fmt::Write as _;

use similar::{ChangeTag, TextDiff};

/// A unified line diff of `expected` against `actual`, with invisible characters made visible:
/// tabs print as `\t`, carriage returns as `\r`, other control characters as `\u{..}`, a
/// backslash as `\\`, and a final line without a newline is marked.
pub fn text_diff(expected: &str, actual: &str) -> String {
    let diff = TextDiff::from_lines(expected, actual);
    let mut out = String::from("--- expected\n+++ actual\n");
    for group in diff.grouped_ops(3) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                let line = change.value();
                let (body, newline) = match line.strip_suffix('\n') {
                    Some(body) => (body, true),
                    None => (line, false),
                };
                let _ = write!(out, "{sign}{}", visible(body));
                if !newline {
                    out.push_str("⟨no newline at end⟩");
                }
                out.push('\n');
            }
        }
    }
    out
}

/// Pretty JSON of both values and a line diff between them.
pub fn json_diff(expected: &serde_json::Value, actual: &serde_json::Value) -> String {
    let pretty = |v: &serde_json::Value| {
        let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|e| e.to_string());
        s.push('\n');
        s
    };
    text_diff(&pretty(expected), &pretty(actual))
}

/// `text` with backslashes, tabs, carriage returns and other control characters escaped.
pub(crate) fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_invisible_characters() {
        let diff = text_diff("a\tb\nsame\n", "a b\nsame");
        assert_eq!(
            diff,
            "--- expected\n+++ actual\n-a\\tb\n-same\n+a b\n+same⟨no newline at end⟩\n"
        );
    }

    #[test]
    fn equal_texts_have_an_empty_body() {
        assert_eq!(text_diff("x\n", "x\n"), "--- expected\n+++ actual\n");
    }
}
