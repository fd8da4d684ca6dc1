//! The header line (spec §3) and the `##! summary` trailer (spec §8.4), shared by both
//! profiles: `GCF profile=<generic|graph>` then space-separated `key=value` pairs with bare
//! keys and printable, non-space ASCII values (no quoting exists in the header).

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::lex::{self, Line, Lines};

/// The encoding profile a payload declares in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// `profile=generic`: any JSON value (spec §7).
    Generic,
    /// `profile=graph`: code-graph payloads (spec §4–§6).
    Graph,
}

impl Profile {
    /// The header value, `generic` or `graph`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Generic => "generic",
            Profile::Graph => "graph",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads and validates the header line of `input`, returning the declared profile. Only the
/// first line is examined: use it to dispatch a payload to the right decoder.
///
/// ```
/// use agentwire_gcf::{profile, Profile};
///
/// assert_eq!(profile("GCF profile=graph tool=search\n## targets\n")?, Profile::Graph);
/// assert_eq!(profile("GCF tool=x\n").unwrap_err().code(), "missing_profile");
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
pub fn profile(input: &str) -> Result<Profile> {
    let mut lines = Lines::new(input, usize::MAX);
    Ok(read_header(&mut lines)?.profile)
}

/// One `key=value` pair of a header or trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    pub(crate) key: &'a str,
    pub(crate) value: &'a str,
}

/// A validated header line.
#[derive(Debug, Clone)]
pub(crate) struct Header<'a> {
    /// The declared profile.
    pub(crate) profile: Profile,
    /// The pairs after `profile=`, in order.
    pub(crate) fields: Vec<Field<'a>>,
    /// The header line, for positions.
    pub(crate) line: Line<'a>,
}

impl<'a> Header<'a> {
    /// The value of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        get(&self.fields, key)
    }

    /// An error located at the value of `key` (or at the line start).
    #[cold]
    pub(crate) fn error_at(&self, key: &str, kind: ErrorKind, message: impl Into<String>) -> Error {
        match self.get(key) {
            Some(value) => self.line.error_at(kind, value, message),
            None => self.line.error(kind, message),
        }
    }
}

fn get<'a>(fields: &[Field<'a>], key: &str) -> Option<&'a str> {
    fields.iter().find(|f| f.key == key).map(|f| f.value)
}

/// The validated header line of `text` (the first line only).
pub(crate) fn first_header(text: &str) -> Result<Header<'_>> {
    read_header(&mut Lines::new(text, usize::MAX))
}

/// Reads the first line of `lines` and validates it as a header.
pub(crate) fn read_header<'a>(lines: &mut Lines<'a>) -> Result<Header<'a>> {
    let Some(line) = lines.next_raw()? else {
        return Err(empty_input());
    };
    parse_header(line)
}

/// The error for an input without a header line.
#[cold]
pub(crate) fn empty_input() -> Error {
    Error::at_line(
        ErrorKind::MissingHeader,
        1,
        1,
        "empty input (expected a `GCF profile=...` header line)",
    )
}

/// Validates a header line.
pub(crate) fn parse_header(line: Line<'_>) -> Result<Header<'_>> {
    if line.indent != 0 || !line.text.starts_with("GCF") {
        return Err(Error::at_line(
            ErrorKind::MissingHeader,
            line.number,
            1,
            "the first line must be a `GCF profile=...` header",
        ));
    }
    let mut tokens = line.text.split(' ').filter(|t| !t.is_empty());
    let magic = tokens.next().unwrap_or("");
    if magic != "GCF" {
        return Err(line.error_at(
            ErrorKind::MissingHeader,
            magic,
            format!("unknown format prefix {magic:?} (this decoder reads `GCF`)"),
        ));
    }
    let fields = pairs(&line, tokens)?;
    let Some(first) = fields.first().filter(|f| f.key == "profile") else {
        let message = if get(&fields, "profile").is_some() {
            "`profile=` must be the first header field"
        } else {
            "the header has no `profile=` field"
        };
        return Err(line.error(ErrorKind::MissingProfile, message));
    };
    let profile = match first.value {
        "generic" => Profile::Generic,
        "graph" => Profile::Graph,
        other => {
            return Err(line.error_at(
                ErrorKind::UnknownProfile,
                first.value,
                format!("unknown profile {other:?} (expected generic or graph)"),
            ))
        }
    };
    Ok(Header {
        profile,
        fields: fields[1..].to_vec(),
        line,
    })
}

/// Validates space-separated `key=value` tokens: bare keys, printable non-space ASCII values,
/// no duplicates.
fn pairs<'a>(line: &Line<'a>, tokens: impl Iterator<Item = &'a str>) -> Result<Vec<Field<'a>>> {
    let mut fields: Vec<Field<'a>> = Vec::new();
    for token in tokens {
        let Some((key, value)) = token.split_once('=') else {
            return Err(line.error_at(
                ErrorKind::MalformedHeaderField,
                token,
                format!("header field {token:?} is not key=value"),
            ));
        };
        if !lex::is_bare_key(key) {
            return Err(line.error_at(
                ErrorKind::MalformedHeaderField,
                token,
                format!("header key {key:?} is not a bare key"),
            ));
        }
        if !is_header_value(value) {
            return Err(line.error_at(
                ErrorKind::MalformedHeaderField,
                value,
                format!("header value {value:?} must be printable ASCII without spaces"),
            ));
        }
        if get(&fields, key).is_some() {
            return Err(line.error_at(
                ErrorKind::DuplicateHeaderField,
                token,
                format!("header field {key:?} appears twice"),
            ));
        }
        fields.push(Field { key, value });
    }
    Ok(fields)
}

/// Whether `value` is a valid header value: one or more of `%x21-7E`.
pub(crate) fn is_header_value(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Appends ` key=value` for an encoder, rejecting values the header grammar cannot carry
/// (empty, spaces, non-ASCII) with `unsupported_value`.
pub(crate) fn write_field(out: &mut String, key: &str, value: &str) -> Result<()> {
    if !lex::is_bare_key(key) || !is_header_value(value) {
        return Err(Error::new(
            ErrorKind::UnsupportedValue,
            format!(
                "header field {key}={value:?} cannot be written: header values are printable \
                 ASCII without spaces"
            ),
        ));
    }
    out.push(' ');
    out.push_str(key);
    out.push('=');
    out.push_str(value);
    Ok(())
}

/// A validated `##! summary` trailer.
#[derive(Debug, Clone)]
pub(crate) struct Summary<'a> {
    /// The pairs after `summary`, in order.
    pub(crate) fields: Vec<Field<'a>>,
    /// The trailer line, for positions.
    pub(crate) line: Line<'a>,
}

impl<'a> Summary<'a> {
    /// The value of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        get(&self.fields, key)
    }

    /// The plain `counts=c1,c2,...` list (each `0` or a decimal without leading zeros), with
    /// each entry's text for positions; `None` when the trailer has no `counts`.
    pub(crate) fn counts(&self) -> Result<Option<Vec<(u64, &'a str)>>> {
        let Some(value) = self.get("counts") else {
            return Ok(None);
        };
        value
            .split(',')
            .map(|entry| {
                let b = entry.as_bytes();
                let valid = match b.first() {
                    Some(b'0') => b.len() == 1,
                    Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit),
                    _ => false,
                };
                if valid {
                    Ok((entry.parse().unwrap_or(u64::MAX), entry))
                } else {
                    Err(self.line.error_at(
                        ErrorKind::InvalidCount,
                        entry,
                        format!("invalid trailer count {entry:?}"),
                    ))
                }
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}

/// Whether a line is a metadata line (`##!`).
#[inline]
pub(crate) fn is_metadata(line: &Line<'_>) -> bool {
    line.text.starts_with("##!")
}

/// Validates a `##! summary ...` line. Other `##!` metadata is `invalid_line`: v3.1 defines
/// only the summary.
pub(crate) fn parse_summary(line: Line<'_>) -> Result<Summary<'_>> {
    let rest = line.text.strip_prefix("##!").unwrap_or(line.text);
    let mut tokens = rest.split(' ').filter(|t| !t.is_empty());
    if !rest.starts_with(' ') || tokens.next() != Some("summary") {
        return Err(line.error(
            ErrorKind::InvalidLine,
            "unknown metadata line (v3.1 defines only `##! summary ...`)",
        ));
    }
    let fields = pairs(&line, tokens)?;
    Ok(Summary { fields, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<Header<'_>> {
        read_header(&mut Lines::new(text, 1 << 16))
    }

    fn code<T: fmt::Debug>(r: Result<T>) -> &'static str {
        r.unwrap_err().code()
    }

    #[test]
    fn valid_headers() {
        let h = header("GCF profile=generic\nx=1\n").unwrap();
        assert_eq!(h.profile, Profile::Generic);
        assert!(h.fields.is_empty());
        let h = header("GCF profile=graph tool=ctx budget=5000  tokens=12\r\n").unwrap();
        assert_eq!(h.profile, Profile::Graph);
        assert_eq!(h.get("tool"), Some("ctx"));
        assert_eq!(h.get("tokens"), Some("12"));
        assert_eq!(h.get("nope"), None);
        assert_eq!(profile("GCF profile=generic").unwrap(), Profile::Generic);
    }

    #[test]
    fn header_errors() {
        assert_eq!(code(header("")), "missing_header");
        assert_eq!(code(header("value=1\n")), "missing_header");
        assert_eq!(code(header("\nGCF profile=generic\n")), "missing_header");
        assert_eq!(code(header(" GCF profile=generic\n")), "missing_header");
        assert_eq!(code(header("GCF2 profile=generic\n")), "missing_header");
        assert_eq!(code(header("GCF\n")), "missing_profile");
        assert_eq!(code(header("GCF tool=test\n")), "missing_profile");
        assert_eq!(
            code(header("GCF tool=x profile=generic\n")),
            "missing_profile"
        );
        assert_eq!(code(header("GCF profile=custom\n")), "unknown_profile");
        assert_eq!(
            code(header("GCF profile=generic broken\n")),
            "malformed_header_field"
        );
        assert_eq!(
            code(header("GCF profile=generic a-b=1\n")),
            "malformed_header_field"
        );
        assert_eq!(
            code(header("GCF profile=generic tool=\n")),
            "malformed_header_field"
        );
        assert_eq!(
            code(header("GCF profile=generic tool=é\n")),
            "malformed_header_field"
        );
        assert_eq!(
            code(header("GCF profile=generic\ttool=x\n")),
            "malformed_header_field"
        );
        assert_eq!(
            code(header("GCF profile=graph tool=test tool=other\n")),
            "duplicate_header_field"
        );
        assert_eq!(
            code(header("GCF profile=generic profile=generic\n")),
            "duplicate_header_field"
        );
        // A CR inside the line is not whitespace: the Rust crate's CR-only bug.
        assert_eq!(
            code(header("GCF profile=generic\ra=1\r")),
            "malformed_header_field"
        );
        let e = header("GCF profile=generic broken\n").unwrap_err();
        assert_eq!((e.line(), e.column()), (Some(1), Some(21)));
    }

    #[test]
    fn summaries() {
        let line = |t| Line {
            text: t,
            indent: 0,
            number: 9,
        };
        let s = parse_summary(line("##! summary symbols=3 counts=3,0,12")).unwrap();
        assert_eq!(s.get("symbols"), Some("3"));
        let counts: Vec<u64> = s.counts().unwrap().unwrap().iter().map(|c| c.0).collect();
        assert_eq!(counts, [3, 0, 12]);
        let s = parse_summary(line("##! summary")).unwrap();
        assert_eq!(s.counts().unwrap(), None);
        assert_eq!(code(parse_summary(line("##! other"))), "invalid_line");
        assert_eq!(code(parse_summary(line("##!summary"))), "invalid_line");
        assert_eq!(
            code(parse_summary(line("##! summary x"))),
            "malformed_header_field"
        );
        let s = parse_summary(line("##! summary counts=1,02")).unwrap();
        assert_eq!(code(s.counts()), "invalid_count");
        let s = parse_summary(line("##! summary counts=1,,2")).unwrap();
        assert_eq!(code(s.counts()), "invalid_count");
    }

    #[test]
    fn writing_fields() {
        let mut out = String::from("GCF profile=graph");
        write_field(&mut out, "tool", "search").unwrap();
        assert_eq!(out, "GCF profile=graph tool=search");
        assert_eq!(
            write_field(&mut out, "tool", "has space")
                .unwrap_err()
                .code(),
            "unsupported_value"
        );
        assert!(write_field(&mut out, "tool", "").is_err());
    }
}
