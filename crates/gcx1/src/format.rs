//! The response format an MCP caller asks for.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// The encoding of an MCP tool response, as selected by a tool call's `format` argument.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON, the default.
    #[default]
    Json,
    /// GCX1, the compact, lossless wire format.
    Gcx,
    /// Plain text, one line per result (lossy; the legacy `compact: true` output).
    Text,
}

impl Format {
    /// The canonical name: `json`, `gcx` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Gcx => "gcx",
            Format::Text => "text",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = Infallible;

    /// Never fails; see [`parse_format`].
    fn from_str(s: &str) -> Result<Self, Infallible> {
        Ok(parse_format(s))
    }
}

/// Maps a tool call's `format` argument to a [`Format`] as the Go reference does: the value
/// is trimmed and compared case-insensitively; `gcx` and `gcx1` select GCX, `text` and
/// `compact` select text, and anything else (the empty string included) is JSON, the safe
/// default.
///
/// ```
/// use agentwire_gcx1::{parse_format, Format};
///
/// assert_eq!(parse_format(" GCX1 "), Format::Gcx);
/// assert_eq!(parse_format("compact"), Format::Text);
/// assert_eq!(parse_format("yaml"), Format::Json);
/// ```
pub fn parse_format(s: &str) -> Format {
    let s = s.trim();
    if s.eq_ignore_ascii_case("gcx") || s.eq_ignore_ascii_case("gcx1") {
        Format::Gcx
    } else if s.eq_ignore_ascii_case("text") || s.eq_ignore_ascii_case("compact") {
        Format::Text
    } else {
        Format::Json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_the_reference() {
        for (input, expected) in [
            ("gcx", Format::Gcx),
            ("GCX", Format::Gcx),
            ("gcx1", Format::Gcx),
            ("  Gcx1\t", Format::Gcx),
            ("text", Format::Text),
            ("TEXT", Format::Text),
            ("compact", Format::Text),
            ("json", Format::Json),
            ("", Format::Json),
            ("gcx2", Format::Json),
            ("toon", Format::Json),
        ] {
            assert_eq!(parse_format(input), expected, "{input:?}");
        }
        assert_eq!("gcx".parse::<Format>(), Ok(Format::Gcx));
        assert_eq!(Format::Gcx.to_string(), "gcx");
        assert_eq!(Format::default(), Format::Json);
    }
}
