//! The section header: `GCX1 tool=<tool> fields=<f1>,<f2>,... [k=v]...`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, HeaderPart, Position, Result};
use crate::escape::{escape_into, unescape};
use crate::Limits;

/// The tag that opens every GCX1 header line.
pub const TAG: &str = "GCX1";

/// The protocol version this crate reads and writes.
pub const VERSION: u32 = 1;

/// The first line of a section: the tool that produced it, the column order of its rows, and
/// free-form metadata.
///
/// ```text
/// GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=7 truncated=false
/// ```
///
/// Meta keys are written in byte-wise sorted order (a `BTreeMap` keeps them so). Decoding
/// keeps the last of duplicate meta keys, as the reference decoders do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The tool name, or a dotted sub-section name such as `get_callers.edges`.
    pub tool: String,
    /// The declared column order of the rows.
    pub fields: Vec<String>,
    /// Extra `key=value` pairs (`total`, `truncated`, `rows`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, String>,
}

impl Header {
    /// A header for `tool` with the given fields and no meta.
    pub fn new<I>(tool: impl Into<String>, fields: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Header {
            tool: tool.into(),
            fields: fields.into_iter().map(Into::into).collect(),
            meta: BTreeMap::new(),
        }
    }

    /// A header for `tool` without fields yet: [`Encoder::serialize_row`] takes them from
    /// the first row's field names.
    ///
    /// [`Encoder::serialize_row`]: crate::Encoder::serialize_row
    pub fn named(tool: impl Into<String>) -> Self {
        Header {
            tool: tool.into(),
            fields: Vec::new(),
            meta: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) a meta pair.
    #[must_use]
    #[allow(clippy::needless_pass_by_value)]
    pub fn with_meta(mut self, key: impl Into<String>, value: impl ToString) -> Self {
        self.meta.insert(key.into(), value.to_string());
        self
    }

    /// The value of meta key `key`.
    pub fn meta_value(&self, key: &str) -> Option<&str> {
        self.meta.get(key).map(String::as_str)
    }

    /// The position of field `name` in the row order (the first, if declared twice).
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f == name)
    }

    /// Checks that the encoder can write this header so that decoders read it back
    /// unchanged; see [`Encoder::begin_section`](crate::Encoder::begin_section) for the rules.
    pub fn validate(&self) -> Result<()> {
        let mut scratch = Vec::new();
        write_header(&mut scratch, self, 1)
    }
}

/// Characters no header name or value may contain: every decoder trims the header line and
/// splits it on spaces, so whitespace would be cut or split, and U+FEFF is trimmed by the
/// TypeScript decoder.
fn is_forbidden(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// Whether `text` is printable ASCII without `\\`, `,` or `=`: a name every header part
/// carries as is (nothing to check further, nothing to escape). Most names are.
#[inline]
fn plain_name(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'\\' | b',' | b'='))
}

fn check(part: HeaderPart, text: &str) -> std::result::Result<(), (&'static str, usize)> {
    if !text.is_empty() && plain_name(text) {
        return Ok(());
    }
    for (i, c) in text.char_indices() {
        let allowed_escape = part == HeaderPart::MetaValue && (c == '\t' || c == '\n');
        if is_forbidden(c) && !allowed_escape {
            return Err(("whitespace cannot be written in a GCX1 header", i));
        }
        if c == ',' && part == HeaderPart::Field {
            return Err(("`,` separates field names", i));
        }
        if c == '=' && part == HeaderPart::MetaKey {
            return Err(("`=` separates a meta key from its value", i));
        }
    }
    if part == HeaderPart::Tool && text.is_empty() {
        return Err(("the tool name is empty", 0));
    }
    Ok(())
}

/// Appends the header line (with its LF) to `out`, validating every part; `line` is the
/// output line number, for error positions. On error `out` is left as it was.
pub(crate) fn write_header(out: &mut Vec<u8>, header: &Header, line: u64) -> Result<()> {
    write_header_parts(out, &header.tool, &header.fields, &header.meta, line)
}

/// [`write_header`] of a header's parts, the field names borrowed.
pub(crate) fn write_header_parts<F: AsRef<str>>(
    out: &mut Vec<u8>,
    tool: &str,
    fields: &[F],
    meta: &BTreeMap<String, String>,
    line: u64,
) -> Result<()> {
    let start = out.len();
    let fail = |out: &mut Vec<u8>, kind: ErrorKind, offset: usize| {
        let written = String::from_utf8_lossy(&out[start..]).chars().count() as u64;
        out.truncate(start);
        Err(Error::at(kind, line, written + 1 + offset as u64))
    };
    let invalid = |part, value: &str, reason| ErrorKind::InvalidHeader {
        part,
        value: value.to_owned(),
        reason,
    };
    out.extend_from_slice(b"GCX1 tool=");
    if let Err((reason, at)) = check(HeaderPart::Tool, tool) {
        let at = tool[..at].chars().count();
        return fail(out, invalid(HeaderPart::Tool, tool, reason), at);
    }
    escape_into(out, tool);
    out.extend_from_slice(b" fields=");
    if fields.is_empty() {
        return fail(out, ErrorKind::EmptyFieldList, 0);
    }
    let mut twice = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let field = field.as_ref();
        if i > 0 {
            out.push(b',');
        }
        if !field.is_empty()
            && plain_name(field)
            && !fields[..i].iter().any(|f| {
                let f = f.as_ref().as_bytes();
                // Lengths and first bytes tell most names apart without a call.
                f.len() == field.len() && f[0] == field.as_bytes()[0] && f == field.as_bytes()
            })
        {
            out.extend_from_slice(field.as_bytes());
            continue;
        }
        if let Err((reason, at)) = check(HeaderPart::Field, field) {
            let at = field[..at].chars().count();
            return fail(out, invalid(HeaderPart::Field, field, reason), at);
        }
        if fields[..i].iter().any(|f| f.as_ref() == field) {
            return fail(
                out,
                ErrorKind::DuplicateField {
                    name: field.to_owned(),
                },
                0,
            );
        }
        // The reference decoders unescape the whole `fields=` value and then each name
        // again, so names are escaped twice (this only matters for `\`).
        twice.clear();
        escape_into(&mut twice, field);
        // Escaping keeps UTF-8 valid: borrowed, no copy.
        let once = String::from_utf8_lossy(&twice);
        escape_into(out, &once);
    }
    for (key, value) in meta {
        out.push(b' ');
        if key == "tool" || key == "fields" {
            return fail(out, ErrorKind::ReservedMetaKey { key: key.clone() }, 0);
        }
        if let Err((reason, at)) = check(HeaderPart::MetaKey, key) {
            let at = key[..at].chars().count();
            return fail(out, invalid(HeaderPart::MetaKey, key, reason), at);
        }
        escape_into(out, key);
        out.push(b'=');
        if let Err((reason, at)) = check(HeaderPart::MetaValue, value) {
            let at = value[..at].chars().count();
            return fail(out, invalid(HeaderPart::MetaValue, value, reason), at);
        }
        escape_into(out, value);
    }
    out.push(b'\n');
    Ok(())
}

/// Whether `line` is a GCX1 header line: the tag followed by a space, or the tag alone.
#[inline]
pub(crate) fn is_header_line(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.starts_with(b"GCX1") && (bytes.len() == 4 || bytes[4] == b' ')
}

/// Parses a header line (one for which [`is_header_line`] holds), as the reference decoders
/// do: the text after the tag is trimmed and split on spaces; each token splits at its first
/// `=`; keys and values are unescaped; `fields` is split on `,` and each name unescaped
/// again; the last duplicate wins.
pub(crate) fn parse_header(line: &str, line_no: u64, limits: &Limits) -> Result<Header> {
    let rest = &line[TAG.len()..];
    let trimmed = rest.trim();
    let base = TAG.len() + (rest.len() - rest.trim_start().len());
    let mut tool: Option<String> = None;
    let mut fields: Option<(&str, usize, usize)> = None;
    let mut meta = BTreeMap::new();
    let mut meta_tokens = 0usize;
    let mut offset = base;
    for token in trimmed.split(' ') {
        let token_offset = offset;
        offset += token.len() + 1;
        if token.is_empty() {
            continue;
        }
        let Some(eq) = token.find('=') else {
            return Err(Error::new(
                ErrorKind::MalformedHeader {
                    token: token.to_owned(),
                },
                Some(Position::in_line(line_no, line, token_offset)),
            ));
        };
        let key = unescape(&token[..eq]);
        let value = &token[eq + 1..];
        match key.as_ref() {
            "tool" => tool = Some(unescape(value).into_owned()),
            "fields" => fields = Some((value, token_offset, token_offset + eq + 1)),
            _ => {
                meta_tokens += 1;
                if meta_tokens > limits.max_meta {
                    return Err(Error::new(
                        ErrorKind::TooManyMeta {
                            count: meta_tokens,
                            limit: limits.max_meta,
                        },
                        Some(Position::in_line(line_no, line, token_offset)),
                    ));
                }
                meta.insert(key.into_owned(), unescape(value).into_owned());
            }
        }
    }
    let tool = match tool {
        Some(tool) if !tool.is_empty() => tool,
        _ => return Err(Error::at(ErrorKind::MissingTool, line_no, 1)),
    };
    let Some((raw_fields, fields_offset, value_offset)) = fields else {
        return Err(Error::at(ErrorKind::MissingFields, line_no, 1));
    };
    let once = unescape(raw_fields);
    let count = memchr::memchr_iter(b',', once.as_bytes()).count() + 1;
    if count > limits.max_fields {
        return Err(Error::new(
            ErrorKind::TooManyFields {
                count,
                limit: limits.max_fields,
            },
            Some(Position::in_line(line_no, line, fields_offset)),
        ));
    }
    let fields: Vec<String> = once.split(',').map(|f| unescape(f).into_owned()).collect();
    // Every comma of the raw text separates two names (an escaped comma unescapes to one).
    let mut seen = std::collections::HashSet::with_capacity(fields.len());
    let mut offset = value_offset;
    for (field, raw) in fields.iter().zip(raw_fields.split(',')) {
        if !seen.insert(field.as_str()) {
            return Err(Error::new(
                ErrorKind::DuplicateField {
                    name: field.clone(),
                },
                Some(Position::in_line(line_no, line, offset)),
            ));
        }
        offset += raw.len() + 1;
    }
    Ok(Header { tool, fields, meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(header: &Header) -> Result<String> {
        let mut out = Vec::new();
        write_header(&mut out, header, 1)?;
        Ok(String::from_utf8(out).unwrap())
    }

    fn parsed(line: &str) -> Result<Header> {
        parse_header(line, 1, &Limits::default())
    }

    #[test]
    fn writes_fields_then_sorted_meta() {
        let header = Header::new("x", ["a"])
            .with_meta("z", 1)
            .with_meta("a", 2)
            .with_meta("rows", 3)
            .with_meta("_x", 5)
            .with_meta("Total", 4);
        assert_eq!(
            written(&header).unwrap(),
            "GCX1 tool=x fields=a Total=4 _x=5 a=2 rows=3 z=1\n"
        );
    }

    #[test]
    fn rejects_what_decoders_cannot_read_back() {
        let code = |h: Header| written(&h).unwrap_err().code();
        assert_eq!(code(Header::new("", ["a"])), "invalid_header");
        assert_eq!(code(Header::new("my tool", ["a"])), "invalid_header");
        assert_eq!(
            code(Header::new("t", Vec::<String>::new())),
            "empty_field_list"
        );
        assert_eq!(code(Header::new("t", ["a,b"])), "invalid_header");
        assert_eq!(code(Header::new("t", ["a b"])), "invalid_header");
        assert_eq!(code(Header::new("t", ["a", "a"])), "duplicate_field");
        assert_eq!(
            code(Header::new("t", ["a"]).with_meta("tool", "y")),
            "reserved_meta_key"
        );
        assert_eq!(
            code(Header::new("t", ["a"]).with_meta("fields", "y")),
            "reserved_meta_key"
        );
        assert_eq!(
            code(Header::new("t", ["a"]).with_meta("k=v", "y")),
            "invalid_header"
        );
        assert_eq!(
            code(Header::new("t", ["a"]).with_meta("k", "two words")),
            "invalid_header"
        );
        assert_eq!(
            code(Header::new("t", ["a"]).with_meta("k", "nbsp\u{a0}")),
            "invalid_header"
        );
        assert_eq!(
            code(Header::new("t", ["a"]).with_meta("k", "cr\r")),
            "invalid_header"
        );
        let e = written(&Header::new("t", ["ok", "b c"])).unwrap_err();
        assert_eq!(e.position(), Some(Position::new(1, 24)));
    }

    #[test]
    fn escapes_and_round_trips() {
        let header = Header::new("a=b", ["x\\y", "", "é"])
            .with_meta("msg", "tab\there\nnl")
            .with_meta("eq", "a=b,c");
        let line = written(&header).unwrap();
        assert_eq!(
            line,
            "GCX1 tool=a=b fields=x\\\\\\\\y,,é eq=a=b,c msg=tab\\there\\nnl\n"
        );
        assert_eq!(parsed(line.trim_end_matches('\n')).unwrap(), header);
    }

    #[test]
    fn parses_like_the_reference() {
        let h = parsed("GCX1   tool=t  z=1 fields=b,a z=2 w=x=y  ").unwrap();
        assert_eq!(h.tool, "t");
        assert_eq!(h.fields, ["b", "a"]);
        assert_eq!(h.meta_value("z"), Some("2"));
        assert_eq!(h.meta_value("w"), Some("x=y"));
        assert_eq!(parsed("GCX1 tool=t fields=").unwrap().fields, [""]);
        // The double unescape of field names.
        assert_eq!(parsed("GCX1 tool=t fields=a\\\\b").unwrap().fields, ["ab"]);
        assert_eq!(parsed("GCX1 fields=a").unwrap_err().code(), "missing_tool");
        assert_eq!(
            parsed("GCX1 tool= fields=a").unwrap_err().code(),
            "missing_tool"
        );
        assert_eq!(parsed("GCX1 tool=t").unwrap_err().code(), "missing_fields");
        let e = parsed("GCX1 tool=t fields=a oops").unwrap_err();
        assert_eq!(e.code(), "malformed_header");
        assert_eq!(e.position(), Some(Position::new(1, 22)));
    }

    #[test]
    fn enforces_limits() {
        let limits = Limits {
            max_fields: 2,
            max_meta: 1,
            ..Limits::default()
        };
        let e = parse_header("GCX1 tool=t fields=a,b,c", 1, &limits).unwrap_err();
        assert_eq!(e.code(), "too_many_fields");
        let e = parse_header("GCX1 tool=t fields=a x=1 y=2", 1, &limits).unwrap_err();
        assert_eq!(e.code(), "too_many_meta");
    }

    #[test]
    fn header_lines() {
        assert!(is_header_line("GCX1 tool=x"));
        assert!(is_header_line("GCX1"));
        assert!(!is_header_line("GCX1tool=x"));
        assert!(!is_header_line("GCX12 tool=x"));
        assert!(!is_header_line("GCX2 tool=x"));
        assert!(!is_header_line("gcx1 tool=x"));
    }
}
