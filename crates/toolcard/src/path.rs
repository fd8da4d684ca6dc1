//! The browse path grammar of spec §3.2.

use std::fmt;

use crate::error::{clip, Error, ErrorKind};

const MAX_SEGMENT: usize = 64;

/// A parsed browse path: `/` followed by segments.
///
/// ```text
/// path    = "/" [ segment ( "/" segment )* ]
/// segment = ( [a-z0-9] [a-z0-9_-]{0,63} ) | "*"
/// ```
///
/// The first segment addresses a namespace, so it also follows the namespace grammar and
/// starts with a letter. `*` ("all children at this level") may only be the last segment:
/// it is defined as equivalent to omitting a trailing segment, and is reserved for future
/// filtered forms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrowsePath {
    text: String,
    /// The segments, without a trailing `*`.
    segments: Vec<String>,
    wildcard: bool,
}

impl BrowsePath {
    /// The path as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The segments that name nodes (a trailing `*` is not among them).
    pub fn segments(&self) -> impl ExactSizeIterator<Item = &str> {
        self.segments.iter().map(String::as_str)
    }

    /// Whether the path ends in `*`.
    pub fn has_wildcard(&self) -> bool {
        self.wildcard
    }
}

impl fmt::Display for BrowsePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Parses a browse path (§3.2). Violations are `PATH_INVALID` with the byte offset of the
/// offending character.
///
/// ```
/// use agentwire_toolcard::{parse_path, ErrorCode};
///
/// let path = parse_path("/github/issues/*")?;
/// assert_eq!(path.segments().collect::<Vec<_>>(), ["github", "issues"]);
/// assert!(path.has_wildcard());
///
/// for bad in ["", "github", "/github/", "//github", "/GitHub", "/1password", "/a/b.c", "/*/x"] {
///     assert_eq!(parse_path(bad).unwrap_err().code(), ErrorCode::PathInvalid, "{bad}");
/// }
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
pub fn parse_path(path: &str) -> Result<BrowsePath, Error> {
    let fail = |offset: usize, reason: &'static str| {
        Error::new(ErrorKind::PathInvalid {
            path: clip(path),
            offset,
            reason,
        })
    };
    if path.is_empty() {
        return Err(fail(0, "the path is empty"));
    }
    if !path.starts_with('/') {
        return Err(fail(0, "the path must start with `/`"));
    }
    let mut parsed = BrowsePath {
        text: path.to_owned(),
        segments: Vec::new(),
        wildcard: false,
    };
    if path == "/" {
        return Ok(parsed);
    }
    if path.ends_with('/') {
        return Err(fail(path.len() - 1, "a trailing `/` is not allowed"));
    }
    let mut start = 1;
    for (index, segment) in path[1..].split('/').enumerate() {
        let bytes = segment.as_bytes();
        if bytes.is_empty() {
            return Err(fail(start, "empty segment"));
        }
        if parsed.wildcard {
            return Err(fail(start - 1, "`*` may only be the last segment"));
        }
        if segment == "*" {
            parsed.wildcard = true;
        } else {
            let first_ok = if index == 0 {
                bytes[0].is_ascii_lowercase()
            } else {
                bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit()
            };
            if !first_ok {
                return Err(fail(
                    start,
                    if index == 0 {
                        "the first segment must start with a lower-case letter"
                    } else {
                        "a segment must start with a lower-case letter or a digit"
                    },
                ));
            }
            if let Some(i) = bytes.iter().position(|&b| {
                !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
            }) {
                return Err(fail(
                    start + i,
                    "a segment may only contain a-z, 0-9, `_` and `-`",
                ));
            }
            if bytes.len() > MAX_SEGMENT {
                return Err(fail(
                    start + MAX_SEGMENT,
                    "a segment is at most 64 characters",
                ));
            }
            parsed.segments.push(segment.to_owned());
        }
        start += bytes.len() + 1;
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(path: &str) -> usize {
        match parse_path(path).unwrap_err().into_kind() {
            ErrorKind::PathInvalid { offset, .. } => offset,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn valid_paths() {
        for p in [
            "/",
            "/*",
            "/github",
            "/github/issues",
            "/github/issues/*",
            "/a/b-c/0_d",
        ] {
            parse_path(p).unwrap();
        }
        let deep = format!("/a/{}", "x".repeat(64));
        parse_path(&deep).unwrap();
        assert_eq!(parse_path("/*").unwrap().segments().len(), 0);
    }

    #[test]
    fn invalid_paths_with_offsets() {
        assert_eq!(offset(""), 0);
        assert_eq!(offset("github"), 0);
        assert_eq!(offset("/github/"), 7);
        assert_eq!(offset("//foo"), 1);
        assert_eq!(offset("/a//b"), 3);
        assert_eq!(offset("/a/B"), 3);
        assert_eq!(offset("/a/b.c"), 4);
        assert_eq!(offset("/0a"), 1);
        assert_eq!(offset("/_a"), 1);
        assert_eq!(offset("/a/*/b"), 4);
        assert_eq!(offset("/a/**"), 3);
        assert_eq!(offset(&format!("/a/{}", "x".repeat(65))), 67);
        assert_eq!(offset("/a/é"), 3);
    }
}
