//! MCP-safe tool names: a reversible mapping between canonical tool_ids and names made only
//! of MCP's tool-name characters `[A-Za-z0-9_.-]`, at most 128 long (SEP-986).
//!
//! ```text
//! mcp_name = namespace "." escaped_name [ ".h" hash8 ] [ ".v" version ]
//! ```
//!
//! - The namespace never contains `.`, so the first `.` ends it.
//! - Every `.` of the name is doubled; a single `.` after the name starts a tag: `h` (the
//!   eight hex digits of the hash follow) or `v` (the version follows, verbatim, to the end).
//!   The hash comes before the version, so the version needs no escaping.
//! - An encoding longer than 128 characters is cut to 118 and ended with `.z` and the first
//!   eight hex digits of `sha256(tool_id)`; so is an encoding of exactly 128 that already
//!   ends that way (possible only inside a version), so that every 128-character name of
//!   that form is a shortened one. Such a name cannot be decoded by itself; a
//!   [`Catalog`](crate::Catalog) resolves it (and refuses, as a name collision, a second
//!   tool that would get the same name).
//!
//! `github:create_issue@1.4.0` → `github.create_issue.v1.4.0`,
//! `mcp:read_file#85b56782` → `mcp.read_file.h85b56782`, `fs:a.b@2` → `fs.a..b.v2`.

use sha2::{Digest, Sha256};

use crate::error::{clip, Error, ErrorKind, IdProblem};
use crate::tool_id::ToolId;

/// The longest MCP tool name (SEP-986: 1 to 128 characters of `[A-Za-z0-9_.-]`).
pub const MAX_MCP_NAME_LEN: usize = 128;

/// The length a too-long encoding is cut to before `.z` and eight hex digits are added.
const SHORTENED_PREFIX: usize = MAX_MCP_NAME_LEN - 10;

/// Whether `name` is made only of MCP's tool-name characters and is 1 to 128 long.
pub fn is_mcp_tool_name(name: &str) -> bool {
    (1..=MAX_MCP_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The full (uncut) encoding of an id.
fn encode(id: &ToolId) -> String {
    let name = id.name();
    let mut out = String::with_capacity(id.as_str().len() + 8);
    out.push_str(id.namespace());
    out.push('.');
    for c in name.chars() {
        if c == '.' {
            out.push('.');
        }
        out.push(c);
    }
    if let Some(hash) = id.hash8() {
        out.push_str(".h");
        out.push_str(hash);
    }
    if let Some(version) = id.version() {
        out.push_str(".v");
        out.push_str(version);
    }
    out
}

/// The decoded tool_id text of an uncut encoding, or the byte offset where `name` stops
/// being one.
fn decode(name: &str) -> Result<String, usize> {
    let bytes = name.as_bytes();
    let dot = name.find('.').ok_or(name.len())?;
    let mut id = String::with_capacity(name.len());
    id.push_str(&name[..dot]);
    id.push(':');
    let mut i = dot + 1;
    loop {
        match bytes.get(i) {
            None => return Err(i),
            Some(b'.') if bytes.get(i + 1) == Some(&b'.') => {
                id.push('.');
                i += 2;
            }
            Some(b'.') => break,
            Some(&b) => {
                id.push(char::from(b));
                i += 1;
            }
        }
    }
    // `bytes[i]` is the `.` before a tag.
    if bytes.get(i + 1) == Some(&b'h') {
        let hash = name.get(i + 2..i + 10).ok_or(i + 2)?;
        id.push('#');
        id.push_str(hash);
        i += 10;
        if i == bytes.len() {
            return Ok(id);
        }
        if bytes[i] != b'.' || bytes.get(i + 1) != Some(&b'v') {
            return Err(i);
        }
    }
    if bytes.get(i + 1) == Some(&b'v') {
        // The version goes before the hash in a tool_id.
        let version = &name[i + 2..];
        match id.find('#') {
            Some(h) => id.insert_str(h, &format!("@{version}")),
            None => {
                id.push('@');
                id.push_str(version);
            }
        }
        return Ok(id);
    }
    Err(i)
}

impl ToolId {
    /// The MCP-safe name of this id: only `[A-Za-z0-9_.-]`, at most 128 characters, for
    /// clients that enforce MCP's tool-name characters (the canonical id's `:`, `@` and `#`,
    /// and the `%` of its percent-encoded form, are outside them).
    ///
    /// The mapping is injective: two ids never get the same name, except that ids whose
    /// encoding is longer than 128 characters are shortened with a digest (a
    /// [`Catalog`](crate::Catalog) refuses the second of two such tools whose names would
    /// collide). [`ToolId::from_mcp_name`] inverts it for every name that was not shortened.
    ///
    /// ```
    /// use agentwire_toolcard::ToolId;
    ///
    /// let id: ToolId = "github:create_issue@1.4.0".parse()?;
    /// assert_eq!(id.to_mcp_name(), "github.create_issue.v1.4.0");
    /// let id: ToolId = "mcp:read_file#85b56782".parse()?;
    /// assert_eq!(id.to_mcp_name(), "mcp.read_file.h85b56782");
    /// let id: ToolId = "fs:tree.list@2#0123abcd".parse()?;
    /// assert_eq!(id.to_mcp_name(), "fs.tree..list.h0123abcd.v2");
    /// assert_eq!(ToolId::from_mcp_name("fs.tree..list.h0123abcd.v2")?, id);
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn to_mcp_name(&self) -> String {
        let full = encode(self);
        if full.len() <= MAX_MCP_NAME_LEN && !looks_shortened(&full) {
            return full;
        }
        let digest = Sha256::digest(self.as_str().as_bytes());
        let mut out = String::with_capacity(MAX_MCP_NAME_LEN);
        out.push_str(&full[..SHORTENED_PREFIX]);
        out.push_str(".z");
        for byte in &digest[..4] {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 15)]));
        }
        out
    }

    /// Decodes a name made by [`ToolId::to_mcp_name`]. Only the exact output of
    /// `to_mcp_name` is accepted (so one id has one name), and a shortened name (ending in
    /// `.z` and eight hex digits, 128 characters) cannot be decoded without its catalog:
    /// use [`Catalog::resolve`](crate::Catalog::resolve).
    pub fn from_mcp_name(name: &str) -> Result<ToolId, Error> {
        let fail = |offset: usize| {
            Error::new(ErrorKind::InvalidToolId {
                input: clip(name),
                offset,
                problem: IdProblem::McpName,
            })
        };
        if !is_mcp_tool_name(name) {
            let offset = name
                .bytes()
                .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')))
                .unwrap_or(name.len().min(MAX_MCP_NAME_LEN));
            return Err(fail(offset));
        }
        let text = decode(name).map_err(fail)?;
        let id = ToolId::parse(&text).map_err(|_| fail(0))?;
        if id.to_mcp_name() != name {
            return Err(fail(0));
        }
        Ok(id)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether `name` has the form of a shortened name: 128 characters ending in `.z` and eight
/// lowercase hex digits. An id whose full encoding has that form (a version ending in
/// `.z` and eight hex digits, at exactly that length) is shortened too, so that no full
/// encoding can be mistaken for the shortened name of another id.
fn looks_shortened(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == MAX_MCP_NAME_LEN
        && &b[SHORTENED_PREFIX..SHORTENED_PREFIX + 2] == b".z"
        && b[SHORTENED_PREFIX + 2..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(id: &str, name: &str) {
        let id = ToolId::parse(id).unwrap();
        assert_eq!(id.to_mcp_name(), name);
        assert!(is_mcp_tool_name(name));
        assert_eq!(ToolId::from_mcp_name(name).unwrap(), id);
    }

    #[test]
    fn spec_examples() {
        round_trip("github:create_issue@1.4.0", "github.create_issue.v1.4.0");
        round_trip(
            "slack:slack_send_message#3a91c7d2",
            "slack.slack_send_message.h3a91c7d2",
        );
        round_trip("mcp:read_file#7b2f0e14", "mcp.read_file.h7b2f0e14");
        round_trip("weather:get@2024-05", "weather.get.v2024-05");
        round_trip("a:b@1#0123abcd", "a.b.h0123abcd.v1");
    }

    #[test]
    fn dots_in_names_and_versions() {
        round_trip("ns:a.b@1", "ns.a..b.v1");
        round_trip("ns:trailing.@1", "ns.trailing...v1");
        round_trip("ns:a..b#0123abcd", "ns.a....b.h0123abcd");
        round_trip("ns:x.v@1.h0123abcd", "ns.x..v.v1.h0123abcd");
        round_trip("ns:x.h@.v.#0123abcd", "ns.x..h.h0123abcd.v.v.");
        round_trip("my-ns_2:Get-It_@v-1_._", "my-ns_2.Get-It_.vv-1_._");
    }

    /// Found by the `toolcard_parse` fuzz target: a long id cut inside its version looked
    /// like the full encoding of another id (its version ending `.z` and the digest).
    #[test]
    fn a_shortened_name_is_never_another_ids_full_name() {
        let long = format!("p:{}@ll{}", "l".repeat(110), "6".repeat(18));
        let id = ToolId::parse(&long).unwrap();
        let name = id.to_mcp_name();
        assert_eq!(name.len(), MAX_MCP_NAME_LEN);
        assert!(looks_shortened(&name), "{name}");
        assert!(ToolId::from_mcp_name(&name).is_err());
        // The id that name would spell if read as a full encoding gets a name of its own.
        // `p.` and 110 `l`s and `.v` are 114 characters: the rest would be the version.
        let spelled = format!("p:{}@{}", "l".repeat(110), &name[114..]);
        let other = ToolId::parse(&spelled).unwrap();
        assert_ne!(other, id);
        assert_ne!(other.to_mcp_name(), name);
    }

    #[test]
    fn rejects_what_it_never_writes() {
        for bad in [
            "",
            "github",
            "github.",
            "github.create_issue",
            "github.create_issue.",
            "github.create_issue.x1",
            "github.create_issue.h0123abc",
            "github.create_issue.h0123ABCD",
            "github.create_issue.h0123abcdv1",
            "github.create_issue.h0123abcd.x1",
            "github.create_issue.v",
            "github:create_issue@1",
            "github%3Acreate_issue%401",
            "GitHub.create_issue.v1",
            "github.1x.v1",
        ] {
            assert!(ToolId::from_mcp_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn long_ids_are_shortened_with_a_digest() {
        let long = format!("{}:{}@{}", "n".repeat(64), "a.b".repeat(40), "1".repeat(32));
        let id = ToolId::parse(&long).unwrap();
        let name = id.to_mcp_name();
        assert_eq!(name.len(), MAX_MCP_NAME_LEN);
        assert!(is_mcp_tool_name(&name));
        assert!(name[118..].starts_with(".z"), "{name}");
        assert!(ToolId::from_mcp_name(&name).is_err());
        let other = ToolId::parse(&long.replace("@1", "@2")).unwrap();
        assert_ne!(other.to_mcp_name(), name);
    }

    #[test]
    fn the_longest_id_fits_after_shortening() {
        let s = format!(
            "{}:b{}@{}#0123abcd",
            "a".repeat(64),
            ".b".repeat(63),
            "c".repeat(32)
        );
        let id = ToolId::parse(&s).unwrap();
        assert!(is_mcp_tool_name(&id.to_mcp_name()));
    }
}
