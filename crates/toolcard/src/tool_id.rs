//! The stable tool_id of spec §1: grammar, parsing, formatting and percent-encoded wire names.
//!
//! ```text
//! tool_id   = namespace ":" name [ "@" version ] [ "#" hash8 ]
//! namespace = [a-z] [a-z0-9_-]{0,63}
//! name      = [A-Za-z_] [A-Za-z0-9_.-]{0,127}
//! version   = [A-Za-z0-9._-]{1,32}
//! hash8     = [0-9a-f]{8}
//! ```
//!
//! At least one of `version` and `hash8` is required (§1.2: the hash is required when the
//! version is absent). The longest id the grammar allows is 235 characters, so the 240-character
//! limit never binds a well-formed id; it is still checked first, which bounds the work spent on
//! untrusted input.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{clip, Error, ErrorKind, IdProblem};

/// The longest tool_id accepted, in bytes (§1.1).
pub const MAX_TOOL_ID_LEN: usize = 240;
const MAX_NAMESPACE: usize = 64;
const MAX_NAME: usize = 128;
const MAX_VERSION: usize = 32;
const HASH_LEN: usize = 8;

/// The four fields of a tool_id, as [`parse_tool_id`] splits it and [`format_tool_id`] joins it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolIdParts {
    /// The namespace: lower-case, such as `github`.
    pub namespace: String,
    /// The tool name, such as `create_issue`.
    pub name: String,
    /// The upstream-declared version, without the `@`.
    pub version: Option<String>,
    /// The eight hex digits of the schema-shape hash, without the `#`.
    pub hash8: Option<String>,
}

/// Splits a tool_id into its fields, checking the whole grammar of §1.1.
///
/// The exact inverse of [`format_tool_id`]: for every `s` this accepts,
/// `format_tool_id(&parse_tool_id(s)?)? == s`.
///
/// ```
/// use agentwire_toolcard::{format_tool_id, parse_tool_id};
///
/// let parts = parse_tool_id("github:create_issue@1.4.0")?;
/// assert_eq!(parts.namespace, "github");
/// assert_eq!(parts.name, "create_issue");
/// assert_eq!(parts.version.as_deref(), Some("1.4.0"));
/// assert_eq!(parts.hash8, None);
/// assert_eq!(format_tool_id(&parts)?, "github:create_issue@1.4.0");
///
/// let error = parse_tool_id("GitHub:create_issue@1").unwrap_err();
/// assert_eq!(error.to_string(), "CATALOG_ERROR: invalid tool_id \"GitHub:create_issue@1\": the namespace must match [a-z][a-z0-9_-]{0,63} (at byte 0)");
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
pub fn parse_tool_id(s: &str) -> Result<ToolIdParts, Error> {
    ToolId::parse(s).map(|id| id.parts())
}

/// Joins the fields of a tool_id, checking each against the grammar of §1.1.
///
/// The exact inverse of [`parse_tool_id`]. Errors carry the byte offset the offending
/// character would have in the joined id.
///
/// ```
/// use agentwire_toolcard::{format_tool_id, ToolIdParts};
///
/// let parts = ToolIdParts {
///     namespace: "slack".into(),
///     name: "slack_send_message".into(),
///     version: None,
///     hash8: Some("283a5dcf".into()),
/// };
/// assert_eq!(format_tool_id(&parts)?, "slack:slack_send_message#283a5dcf");
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
pub fn format_tool_id(parts: &ToolIdParts) -> Result<String, Error> {
    ToolId::from_parts(parts).map(ToolId::into_string)
}

/// A well-formed tool_id: the sole correlation key between browse, hydrate and execute (§1.6).
///
/// Compares, orders and hashes as its text (byte order, which is code-point order and so the
/// order of spec §2.5's tie-break). Serializes as a string.
#[derive(Clone)]
pub struct ToolId {
    text: String,
    /// Byte offset of the `:`.
    colon: u8,
    /// Byte offset of the `@`, if any.
    at: Option<u8>,
    /// Byte offset of the `#`, if any.
    hash: Option<u8>,
}

impl ToolId {
    /// Parses and validates a tool_id.
    ///
    /// ```
    /// use agentwire_toolcard::ToolId;
    ///
    /// let id: ToolId = "mcp:read_file#85b56782".parse()?;
    /// assert_eq!((id.namespace(), id.name(), id.version(), id.hash8()),
    ///            ("mcp", "read_file", None, Some("85b56782")));
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn parse(s: &str) -> Result<ToolId, Error> {
        let fail = |offset: usize, problem: IdProblem| {
            Error::new(ErrorKind::InvalidToolId {
                input: clip(s),
                offset,
                problem,
            })
        };
        if s.len() > MAX_TOOL_ID_LEN {
            return Err(fail(MAX_TOOL_ID_LEN, IdProblem::TooLong));
        }
        let bytes = s.as_bytes();
        // namespace
        let colon = scan_part(
            bytes,
            0,
            MAX_NAMESPACE,
            is_namespace_start,
            is_namespace_byte,
        )
        .map_err(|offset| fail(offset, IdProblem::Namespace))?;
        if colon == bytes.len() {
            return Err(fail(colon, IdProblem::MissingColon));
        }
        if bytes[colon] != b':' {
            return Err(fail(colon, IdProblem::Namespace));
        }
        // name
        let name_start = colon + 1;
        let mut end = scan_part(bytes, name_start, MAX_NAME, is_name_start, is_name_byte)
            .map_err(|offset| fail(offset, IdProblem::Name))?;
        let mut at = None;
        let mut hash = None;
        if end < bytes.len() && bytes[end] == b'@' {
            at = Some(end);
            end = scan_part(
                bytes,
                end + 1,
                MAX_VERSION,
                is_version_byte,
                is_version_byte,
            )
            .map_err(|offset| fail(offset, IdProblem::Version))?;
        }
        if end < bytes.len() && bytes[end] == b'#' {
            hash = Some(end);
            let start = end + 1;
            let mut i = start;
            while i < bytes.len() && i - start < HASH_LEN && is_hash_byte(bytes[i]) {
                i += 1;
            }
            if i - start != HASH_LEN {
                return Err(fail(i, IdProblem::Hash8));
            }
            end = i;
        }
        if end < bytes.len() {
            let problem = match bytes[end] {
                b'@' | b'#' => IdProblem::Trailing,
                _ if hash.is_some() => IdProblem::Trailing,
                _ if at.is_some() => IdProblem::Version,
                _ => IdProblem::Name,
            };
            return Err(fail(end, problem));
        }
        if at.is_none() && hash.is_none() {
            return Err(fail(end, IdProblem::Unversioned));
        }
        // Every offset is at most 235, so these casts are lossless.
        Ok(ToolId {
            text: s.to_owned(),
            colon: colon as u8,
            at: at.map(|i| i as u8),
            hash: hash.map(|i| i as u8),
        })
    }

    /// Validates the fields and joins them into an id.
    pub fn from_parts(parts: &ToolIdParts) -> Result<ToolId, Error> {
        let mut text = String::with_capacity(
            parts.namespace.len()
                + 1
                + parts.name.len()
                + parts.version.as_ref().map_or(0, |v| v.len() + 1)
                + parts.hash8.as_ref().map_or(0, |h| h.len() + 1),
        );
        let fail = |text: &str, offset: usize, problem: IdProblem| {
            Error::new(ErrorKind::InvalidToolId {
                input: clip(text),
                offset,
                problem,
            })
        };
        let joined = join(parts);
        let check = |value: &str,
                     start: usize,
                     max: usize,
                     first: fn(u8) -> bool,
                     rest: fn(u8) -> bool,
                     problem| {
            let bytes = value.as_bytes();
            match scan_part(bytes, 0, max, first, rest) {
                Ok(end) if end == bytes.len() => Ok(()),
                Ok(end) | Err(end) => Err(fail(&joined, start + end, problem)),
            }
        };
        check(
            &parts.namespace,
            0,
            MAX_NAMESPACE,
            is_namespace_start,
            is_namespace_byte,
            IdProblem::Namespace,
        )?;
        text.push_str(&parts.namespace);
        text.push(':');
        check(
            &parts.name,
            text.len(),
            MAX_NAME,
            is_name_start,
            is_name_byte,
            IdProblem::Name,
        )?;
        text.push_str(&parts.name);
        if let Some(version) = &parts.version {
            text.push('@');
            check(
                version,
                text.len(),
                MAX_VERSION,
                is_version_byte,
                is_version_byte,
                IdProblem::Version,
            )?;
            text.push_str(version);
        }
        if let Some(hash8) = &parts.hash8 {
            text.push('#');
            let bytes = hash8.as_bytes();
            if let Some(i) = bytes.iter().position(|&b| !is_hash_byte(b)) {
                return Err(fail(&joined, text.len() + i, IdProblem::Hash8));
            }
            if bytes.len() != HASH_LEN {
                return Err(fail(
                    &joined,
                    text.len() + bytes.len().min(HASH_LEN),
                    IdProblem::Hash8,
                ));
            }
            text.push_str(hash8);
        }
        if parts.version.is_none() && parts.hash8.is_none() {
            return Err(fail(&joined, text.len(), IdProblem::Unversioned));
        }
        ToolId::parse(&text)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The id as an owned string.
    pub fn into_string(self) -> String {
        self.text
    }

    /// The namespace (before the `:`).
    pub fn namespace(&self) -> &str {
        &self.text[..self.colon as usize]
    }

    /// The name (between the `:` and the `@` or `#`).
    pub fn name(&self) -> &str {
        let end = self
            .at
            .or(self.hash)
            .map_or(self.text.len(), |i| i as usize);
        &self.text[self.colon as usize + 1..end]
    }

    /// The version, without the `@`.
    pub fn version(&self) -> Option<&str> {
        let at = self.at? as usize;
        let end = self.hash.map_or(self.text.len(), |i| i as usize);
        Some(&self.text[at + 1..end])
    }

    /// The schema-shape hash, without the `#`.
    pub fn hash8(&self) -> Option<&str> {
        self.hash.map(|i| &self.text[i as usize + 1..])
    }

    /// The fields, owned.
    pub fn parts(&self) -> ToolIdParts {
        ToolIdParts {
            namespace: self.namespace().to_owned(),
            name: self.name().to_owned(),
            version: self.version().map(str::to_owned),
            hash8: self.hash8().map(str::to_owned),
        }
    }

    /// The id percent-encoded for MCP clients that reject `:`, `@` and `#` in tool names
    /// (spec §4.1): every byte outside `[A-Za-z0-9_.-]` becomes `%XX` with upper-case hex.
    ///
    /// ```
    /// use agentwire_toolcard::ToolId;
    ///
    /// let id: ToolId = "github:create_issue@1.4.0".parse()?;
    /// assert_eq!(id.to_percent_encoded(), "github%3Acreate_issue%401.4.0");
    /// assert_eq!(ToolId::from_percent_encoded("github%3Acreate_issue%401.4.0")?, id);
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn to_percent_encoded(&self) -> String {
        percent_encode(&self.text)
    }

    /// Decodes a percent-encoded wire name and parses the result. Text without `%` escapes is
    /// parsed as it is, so canonical ids are accepted too. Escapes may use either case of hex.
    pub fn from_percent_encoded(name: &str) -> Result<ToolId, Error> {
        match percent_decode(name) {
            Some(decoded) => ToolId::parse(&decoded),
            None => Err(Error::new(ErrorKind::InvalidToolId {
                input: clip(name),
                offset: bad_escape_offset(name),
                problem: IdProblem::Name,
            })),
        }
    }
}

fn join(parts: &ToolIdParts) -> String {
    let mut s = format!("{}:{}", parts.namespace, parts.name);
    if let Some(v) = &parts.version {
        s.push('@');
        s.push_str(v);
    }
    if let Some(h) = &parts.hash8 {
        s.push('#');
        s.push_str(h);
    }
    s
}

/// Scans one part starting at `start`: a first byte, then more bytes, at most `max` in all.
/// Returns the end offset, or the offset of the first offending byte (an empty part, a bad
/// first byte, or a part longer than `max`).
fn scan_part(
    bytes: &[u8],
    start: usize,
    max: usize,
    first: fn(u8) -> bool,
    rest: fn(u8) -> bool,
) -> Result<usize, usize> {
    if start >= bytes.len() || !first(bytes[start]) {
        return Err(start);
    }
    let mut i = start + 1;
    while i < bytes.len() && rest(bytes[i]) {
        if i - start == max {
            return Err(i);
        }
        i += 1;
    }
    Ok(i)
}

fn is_namespace_start(b: u8) -> bool {
    b.is_ascii_lowercase()
}

fn is_namespace_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn is_version_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn is_hash_byte(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

/// Whether `s` matches the namespace grammar.
pub(crate) fn is_valid_namespace(s: &str) -> bool {
    matches!(scan_part(s.as_bytes(), 0, MAX_NAMESPACE, is_namespace_start, is_namespace_byte), Ok(end) if end == s.len())
}

/// Whether `s` matches the name grammar.
pub(crate) fn is_valid_name(s: &str) -> bool {
    matches!(scan_part(s.as_bytes(), 0, MAX_NAME, is_name_start, is_name_byte), Ok(end) if end == s.len())
}

/// Whether `s` matches the version grammar.
pub(crate) fn is_valid_version(s: &str) -> bool {
    matches!(scan_part(s.as_bytes(), 0, MAX_VERSION, is_version_byte, is_version_byte), Ok(end) if end == s.len())
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-') {
            out.push(b as char);
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
    out
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex_value(*bytes.get(i + 1)?)?;
            let lo = hex_value(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn bad_escape_offset(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let ok = bytes.get(i + 1).and_then(|&b| hex_value(b)).is_some()
                && bytes.get(i + 2).and_then(|&b| hex_value(b)).is_some();
            if !ok {
                return i;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    0
}

impl fmt::Debug for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolId").field(&self.text).finish()
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for ToolId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        ToolId::parse(s)
    }
}

impl TryFrom<&ToolIdParts> for ToolId {
    type Error = Error;

    fn try_from(parts: &ToolIdParts) -> Result<Self, Error> {
        ToolId::from_parts(parts)
    }
}

impl AsRef<str> for ToolId {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl PartialEq for ToolId {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for ToolId {}

impl PartialEq<str> for ToolId {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for ToolId {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl Hash for ToolId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl PartialOrd for ToolId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ToolId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text.cmp(&other.text)
    }
}

impl Serialize for ToolId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for ToolId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ToolId::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(s: &str) -> (usize, IdProblem) {
        match parse_tool_id(s).unwrap_err().into_kind() {
            ErrorKind::InvalidToolId {
                offset, problem, ..
            } => (offset, problem),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn spec_examples_round_trip() {
        for s in [
            "github:create_issue@1.4.0",
            "slack:slack_send_message#3a91c7d2",
            "mcp:read_file#7b2f0e14",
            "weather:get@2024-05",
            "a:b@1#0123abcd",
        ] {
            let parts = parse_tool_id(s).unwrap();
            assert_eq!(format_tool_id(&parts).unwrap(), s);
        }
    }

    #[test]
    fn errors_point_at_the_offending_byte() {
        assert_eq!(problem(""), (0, IdProblem::Namespace));
        assert_eq!(problem("github"), (6, IdProblem::MissingColon));
        assert_eq!(problem("Git:x@1"), (0, IdProblem::Namespace));
        assert_eq!(problem("gi.t:x@1"), (2, IdProblem::Namespace));
        assert_eq!(problem("ns:"), (3, IdProblem::Name));
        assert_eq!(problem("ns:1x@1"), (3, IdProblem::Name));
        assert_eq!(problem("ns:a b@1"), (4, IdProblem::Name));
        assert_eq!(problem("ns:a:b#0123abcd"), (4, IdProblem::Name));
        assert_eq!(problem("ns:name"), (7, IdProblem::Unversioned));
        assert_eq!(problem("ns:name@"), (8, IdProblem::Version));
        assert_eq!(problem("ns:name@#0123abcd"), (8, IdProblem::Version));
        assert_eq!(problem("ns:name@v1@v2"), (10, IdProblem::Trailing));
        assert_eq!(problem("ns:name#0123ABCD"), (12, IdProblem::Hash8));
        assert_eq!(problem("ns:name#0123abc"), (15, IdProblem::Hash8));
        assert_eq!(problem("ns:name#0123abcde"), (16, IdProblem::Trailing));
        assert_eq!(
            problem("ns:name#0123abcd#0123abcd"),
            (16, IdProblem::Trailing)
        );
        assert_eq!(problem("ns:name#0123abcd@1"), (16, IdProblem::Trailing));
        assert_eq!(problem("ns:café@1"), (6, IdProblem::Name));
        let long_ns = format!("{}:x@1", "a".repeat(65));
        assert_eq!(problem(&long_ns), (64, IdProblem::Namespace));
        let long_name = format!("ns:{}@1", "a".repeat(129));
        assert_eq!(problem(&long_name), (131, IdProblem::Name));
        let long_version = format!("ns:x@{}", "1".repeat(33));
        assert_eq!(problem(&long_version), (37, IdProblem::Version));
        assert_eq!(problem(&"a".repeat(241)), (240, IdProblem::TooLong));
    }

    #[test]
    fn longest_valid_id_fits() {
        let s = format!(
            "{}:{}@{}#0123abcd",
            "a".repeat(64),
            "b".repeat(128),
            "c".repeat(32)
        );
        assert_eq!(s.len(), 235);
        assert_eq!(ToolId::parse(&s).unwrap().as_str(), s);
    }

    #[test]
    fn format_reports_offsets_in_the_joined_id() {
        let parts = ToolIdParts {
            namespace: "ns".into(),
            name: "bad name".into(),
            version: Some("1".into()),
            hash8: None,
        };
        let err = format_tool_id(&parts).unwrap_err();
        assert!(matches!(
            err.kind(),
            ErrorKind::InvalidToolId {
                offset: 6,
                problem: IdProblem::Name,
                ..
            }
        ));
        let parts = ToolIdParts {
            namespace: "ns".into(),
            name: "a".into(),
            version: None,
            hash8: None,
        };
        assert!(matches!(
            format_tool_id(&parts).unwrap_err().kind(),
            ErrorKind::InvalidToolId {
                offset: 4,
                problem: IdProblem::Unversioned,
                ..
            }
        ));
        let parts = ToolIdParts {
            namespace: "ns".into(),
            name: "a".into(),
            version: Some(String::new()),
            hash8: None,
        };
        assert!(matches!(
            format_tool_id(&parts).unwrap_err().kind(),
            ErrorKind::InvalidToolId {
                offset: 5,
                problem: IdProblem::Version,
                ..
            }
        ));
    }

    #[test]
    fn accessors_and_percent_encoding() {
        let id = ToolId::parse("a-b:X.y_z@v1.0#00ff00ff").unwrap();
        assert_eq!(id.namespace(), "a-b");
        assert_eq!(id.name(), "X.y_z");
        assert_eq!(id.version(), Some("v1.0"));
        assert_eq!(id.hash8(), Some("00ff00ff"));
        let wire = id.to_percent_encoded();
        assert_eq!(wire, "a-b%3AX.y_z%40v1.0%2300ff00ff");
        assert_eq!(ToolId::from_percent_encoded(&wire).unwrap(), id);
        assert_eq!(
            ToolId::from_percent_encoded("a-b%3ax.y%40v1")
                .unwrap()
                .as_str(),
            "a-b:x.y@v1"
        );
        assert_eq!(ToolId::from_percent_encoded(id.as_str()).unwrap(), id);
        assert!(ToolId::from_percent_encoded("a%3").is_err());
        assert!(ToolId::from_percent_encoded("a%ZZb").is_err());
    }
}
