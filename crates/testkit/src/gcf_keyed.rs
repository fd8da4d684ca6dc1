//! The oracle of the generic profile's keyed sets (spec §10a): full payloads with their pack
//! roots, deltas, the three-outcome reply and sessions. Shared by the `gcf_generic_delta` fuzz
//! target and the tests.
//!
//! Invariants checked:
//!
//! - **full**: `KeyedSet::decode(set.encode())` is the set (an absent member reads as null,
//!   which hashes alike), and `GenericPayload::decode` reads it as the same full payload;
//! - **delta**: `GenericDelta::between(a, b)` encodes, decodes to itself, re-encodes to the
//!   same bytes, and applied to `a` gives `b` (its rows, and its pack root, which `apply`
//!   verifies); applied to any set with another root it fails with `root_mismatch`; sets with
//!   different columns give `unsupported_value`, nothing else;
//! - **reply**: `GenericPayload::respond(a, b)` read by a consumer holding `a` gives `b`;
//! - **session**: a `GenericSession` over the sets, read by a `GenericSessionDecoder`, gives
//!   each set in turn, under either re-anchoring policy;
//! - **typed errors**: arbitrary payload text is rejected with an error code or decodes to a
//!   payload that re-encodes to itself, and a session decoder that rejects a payload keeps the
//!   set it held.

use std::collections::BTreeMap;

use agentwire_gcf::{
    ErrorKind, GenericDelta, GenericPayload, GenericSession, GenericSessionDecoder, KeyedSet,
    Reanchor,
};
use serde_json::{Map, Value};

use crate::{Bug, Roundtrip};

/// Scalars a keyed set's cells hold: the spec's awkward cases among ordinary ones.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-7",
    "2.5",
    "-0.5",
    "1e-7",
    "1e21",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "null",
    "true",
    "false",
    "\"\"",
    "\"a\"",
    "\"a|b\"",
    "\"-\"",
    "\"~\"",
    "\"1\"",
    "\"é\"",
    "\" x\"",
    "\"a\\nb\"",
];

/// Identities: numbers and strings that must never collide (`1` and `"1"`).
const IDS: &[&str] = &[
    "1", "2", "3", "\"1\"", "\"a\"", "\"b\"", "-4", "2.5", "\"x y\"",
];

/// Field names besides the identity.
const FIELDS: &[&str] = &["status", "total", "a>b", "", "x y", "n"];

/// Two to four sets from arbitrary bytes (each byte one choice, zero past the end): one name,
/// one identity column `id` and mostly one field list (so that most pairs have a delta), rows
/// with distinct identities and scalar values, now and then a member left out.
pub fn sets(data: &[u8]) -> Vec<KeyedSet> {
    let mut bytes = data.iter().copied().chain(std::iter::repeat(0));
    let mut next = move |n: usize| usize::from(bytes.next().unwrap_or(0)) % n;
    let width = 1 + next(3);
    let mut fields: Vec<String> = vec!["id".into()];
    for i in 0..width {
        fields.push(FIELDS[(i + next(FIELDS.len())) % FIELDS.len()].to_owned());
    }
    fields.dedup();
    let mut seen = std::collections::HashSet::new();
    fields.retain(|f| seen.insert(f.clone()));
    let count = 2 + next(3);
    let mut sets = Vec::with_capacity(count);
    for s in 0..count {
        let mut columns = fields.clone();
        if s > 0 && next(8) == 7 {
            // A schema change: a full payload in a session, no delta.
            columns.push("extra".into());
        }
        let mut set = KeyedSet::new("t", "id", columns.clone());
        let rows = next(6);
        let mut ids = std::collections::HashSet::new();
        for _ in 0..rows {
            let id = IDS[next(IDS.len())];
            if !ids.insert(id) {
                continue;
            }
            let mut row = Map::new();
            row.insert("id".into(), parse(id));
            for f in &columns[1..] {
                match next(16) {
                    15 => {} // absent
                    _ => {
                        row.insert(f.clone(), parse(VALUES[next(VALUES.len())]));
                    }
                }
            }
            set.rows.push(row);
        }
        sets.push(set);
    }
    sets
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// The set with every member present (an absent one as null, which the wire writes as `-`)
/// and its rows by identity, so that row order does not count.
fn normal(set: &KeyedSet) -> (Vec<String>, String, BTreeMap<String, Map<String, Value>>) {
    let rows = set
        .rows
        .iter()
        .map(|row| {
            let full: Map<String, Value> = set
                .fields
                .iter()
                .map(|f| (f.clone(), row.get(f).map_or(Value::Null, numeric)))
                .collect();
            (
                row.get(&set.key)
                    .map(|v| numeric(v).to_string())
                    .unwrap_or_default(),
                full,
            )
        })
        .collect();
    (set.fields.clone(), set.key.clone(), rows)
}

/// `value` with a whole double in the signed 64-bit range as that integer: a keyed set is
/// written in the spec's canonical form (v3.5.3 §2.3.1: the double `1e+2` is written `100`),
/// which reads back as the integer. Both are the same JSON number.
fn numeric(value: &Value) -> Value {
    match value.as_f64() {
        Some(v) if value.is_f64() && v.fract() == 0.0 && v.abs() < 9.2e18 => Value::from(v as i64),
        _ => value.clone(),
    }
}

/// `delta` with its values' numbers as [`numeric`] reads them.
fn numeric_delta(delta: &GenericDelta) -> GenericDelta {
    let rows = |rows: &[Map<String, Value>]| -> Vec<Map<String, Value>> {
        rows.iter()
            .map(|row| row.iter().map(|(k, v)| (k.clone(), numeric(v))).collect())
            .collect()
    };
    let mut out = delta.clone();
    out.added = rows(&delta.added);
    out.changed = rows(&delta.changed);
    out.removed = delta.removed.iter().map(numeric).collect();
    out
}

fn same_set(a: &KeyedSet, b: &KeyedSet) -> bool {
    a.name == b.name && normal(a) == normal(b)
}

fn bug(what: &str, detail: impl std::fmt::Display) -> Bug {
    Bug(format!("{what}: {detail}"))
}

/// Checks every invariant of the module docs on `sets` (as [`sets`] makes them).
pub fn check_sets(sets: &[KeyedSet]) -> Result<(), Bug> {
    for set in sets {
        check_full(set)?;
    }
    for pair in sets.windows(2) {
        check_pair(&pair[0], &pair[1])?;
    }
    for policy in [Reanchor::Every(2), Reanchor::SizeGuard] {
        check_session(sets, policy)?;
    }
    Ok(())
}

fn check_full(set: &KeyedSet) -> Result<(), Bug> {
    let text = set
        .encode(Some("t"))
        .map_err(|e| bug("encoding a keyed set failed", format!("{e}\n{set:?}")))?;
    let back = KeyedSet::decode(&text).map_err(|e| {
        bug(
            "decoding a keyed set's payload failed",
            format!("{e}\n{text}"),
        )
    })?;
    if !same_set(set, &back) {
        return Err(bug(
            "a keyed set read back differently",
            format!("{set:?}\n{back:?}\n{text}"),
        ));
    }
    match GenericPayload::decode(&text) {
        Ok(GenericPayload::Full { set: read, tool })
            if read == back && tool.as_deref() == Some("t") =>
        {
            Ok(())
        }
        other => Err(bug(
            "GenericPayload::decode read a full payload differently",
            format!("{other:?}\n{text}"),
        )),
    }
}

fn check_pair(a: &KeyedSet, b: &KeyedSet) -> Result<(), Bug> {
    let delta = match GenericDelta::between(a, b) {
        Ok(delta) => delta,
        Err(e) if e.kind() == ErrorKind::UnsupportedValue && a.fields != b.fields => {
            return check_reply(a, b)
        }
        Err(e) => {
            return Err(bug(
                "GenericDelta::between failed",
                format!("{e}\n{a:?}\n{b:?}"),
            ))
        }
    };
    let text = delta
        .encode()
        .map_err(|e| bug("encoding a delta failed", format!("{e}\n{delta:?}")))?;
    let decoded = GenericDelta::decode(&text)
        .map_err(|e| bug("decoding a delta failed", format!("{e}\n{text}")))?;
    let again = decoded
        .encode()
        .map_err(|e| bug("re-encoding a decoded delta failed", e))?;
    if again != text {
        return Err(bug(
            "a delta re-encodes differently",
            format!("{text}\n{again}"),
        ));
    }
    let applied = decoded.apply(a).map_err(|e| {
        bug(
            "applying a delta to its base failed",
            format!("{e}\n{text}"),
        )
    })?;
    if !same_set(&applied, b) {
        return Err(bug(
            "a delta applied to its base is not the new set",
            format!("{applied:?}\n{b:?}\n{text}"),
        ));
    }
    let (a_root, b_root) = (a.pack_root(), b.pack_root());
    if let (Ok(a_root), Ok(b_root)) = (a_root, b_root) {
        if a_root != b_root {
            match decoded.apply(b) {
                Err(e) if e.kind() == ErrorKind::RootMismatch => {}
                other => {
                    return Err(bug(
                        "a delta applied to a set with another root",
                        format!("{other:?}\n{text}"),
                    ))
                }
            }
        }
    }
    check_reply(a, b)
}

fn check_reply(a: &KeyedSet, b: &KeyedSet) -> Result<(), Bug> {
    let reply =
        GenericPayload::respond(Some(a), b, Some("t")).map_err(|e| bug("respond failed", e))?;
    let text = reply
        .encode()
        .map_err(|e| bug("encoding a reply failed", e))?;
    let mut consumer = GenericSessionDecoder::new();
    consumer
        .decode(
            &a.encode(None)
                .map_err(|e| bug("encoding a set failed", e))?,
        )
        .map_err(|e| bug("a consumer cannot read a full payload", e))?;
    let held = consumer
        .decode(&text)
        .map_err(|e| bug("a consumer cannot read the reply", format!("{e}\n{text}")))?;
    if !same_set(held, b) {
        return Err(bug(
            "a reply read back to another set",
            format!("{held:?}\n{b:?}\n{text}"),
        ));
    }
    Ok(())
}

fn check_session(sets: &[KeyedSet], policy: Reanchor) -> Result<(), Bug> {
    let Some((first, rest)) = sets.split_first() else {
        return Ok(());
    };
    let mut session = GenericSession::new(first.clone(), Some("t".into()), policy)
        .map_err(|e| bug("a session cannot start", e))?;
    let mut consumer = GenericSessionDecoder::new();
    let full = session
        .full()
        .map_err(|e| bug("a session's full payload", e))?;
    consumer
        .decode(&full)
        .map_err(|e| bug("a consumer cannot read a session's first payload", e))?;
    for set in rest {
        let emission = session
            .next(set.clone())
            .map_err(|e| bug("a session cannot move on", e))?;
        let held = consumer.decode(&emission.text).map_err(|e| {
            bug(
                "a consumer cannot read a session's payload",
                format!("{e}\n{}", emission.text),
            )
        })?;
        if !same_set(held, set) {
            return Err(bug(
                "a session's payload read back to another set",
                format!("{held:?}\n{set:?}\n{}", emission.text),
            ));
        }
    }
    Ok(())
}

/// Decodes arbitrary payload text (any of the three generic payloads): a rejection must carry
/// an error code; an accepted payload must re-encode to text that decodes to the same payload
/// and re-encodes to the same bytes. Input that is not UTF-8 is `Rejected("invalid_utf8")`
/// without reaching the decoder (its API takes `&str`).
pub fn check_payload_bytes(input: &[u8]) -> Result<Roundtrip, Bug> {
    let Ok(text) = std::str::from_utf8(input) else {
        return Ok(Roundtrip::Rejected("invalid_utf8".into()));
    };
    let payload = match GenericPayload::decode(text) {
        Ok(payload) => payload,
        Err(e) if e.code().is_empty() => return Err(bug("an error without a code", e)),
        Err(e) => return Ok(Roundtrip::Rejected(e.code().to_owned())),
    };
    let encoded = payload.encode().map_err(|e| {
        bug(
            "a decoded payload does not re-encode",
            format!("{e}\n{text}"),
        )
    })?;
    let back = GenericPayload::decode(&encoded).map_err(|e| {
        bug(
            "a re-encoded payload does not decode",
            format!("{e}\n{encoded}"),
        )
    })?;
    let again = back
        .encode()
        .map_err(|e| bug("a payload does not re-encode twice", e))?;
    if again != encoded {
        return Err(bug(
            "a payload's encoding is not idempotent",
            format!("{encoded}\n{again}"),
        ));
    }
    let same = match (&payload, &back) {
        (GenericPayload::Full { set: a, tool: t }, GenericPayload::Full { set: b, tool: u }) => {
            same_set(a, b) && t == u
        }
        (GenericPayload::Delta(a), GenericPayload::Delta(b)) => {
            numeric_delta(a) == numeric_delta(b)
        }
        (a, b) => a == b,
    };
    if !same {
        return Err(bug(
            "a payload reads back differently",
            format!("{payload:?}\n{back:?}\n{text}\n{encoded}"),
        ));
    }
    Ok(Roundtrip::Ok)
}

/// Feeds `payloads` to one session decoder: each is rejected with a code (and the decoder
/// keeps the set it held) or gives a set that survives its own full payload.
pub fn check_session_bytes(payloads: &[&[u8]]) -> Result<(), Bug> {
    let mut consumer = GenericSessionDecoder::new();
    for payload in payloads {
        let Ok(text) = std::str::from_utf8(payload) else {
            continue;
        };
        let before = consumer.current().cloned();
        match consumer.decode(text) {
            Ok(set) => {
                let set = set.clone();
                let full = set
                    .encode(None)
                    .map_err(|e| bug("a session's set does not encode", format!("{e}\n{text}")))?;
                let back = KeyedSet::decode(&full)
                    .map_err(|e| bug("a session's set does not decode", format!("{e}\n{full}")))?;
                if !same_set(&set, &back) {
                    return Err(bug("a session's set reads back differently", full));
                }
            }
            Err(e) if e.code().is_empty() => return Err(bug("an error without a code", e)),
            Err(_) => {
                if consumer.current() != before.as_ref() {
                    return Err(bug("a rejected payload changed the session's set", text));
                }
            }
        }
    }
    Ok(())
}

/// The payloads a session over `sets` sends (the first full, then deltas or full payloads),
/// for mutation by a fuzzer.
pub fn session_payloads(sets: &[KeyedSet]) -> Vec<String> {
    let Some((first, rest)) = sets.split_first() else {
        return Vec::new();
    };
    let Ok(mut session) = GenericSession::new(first.clone(), None, Reanchor::Every(3)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = session.full().into_iter().collect();
    for set in rest {
        if let Ok(emission) = session.next(set.clone()) {
            out.push(emission.text);
        }
    }
    out
}

/// `text` with the edits `edits` describes, three bytes each: a position (two bytes, modulo
/// the length) and a byte to put there, or, for a byte below 4, a deletion.
pub fn mutate(text: &str, edits: &[u8]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for edit in edits.chunks_exact(3) {
        if bytes.is_empty() {
            break;
        }
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % bytes.len();
        match edit[2] {
            0..=3 => {
                bytes.remove(at);
            }
            b => bytes[at] = b,
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(state: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (*state >> 33) as u8
            })
            .collect()
    }

    /// A fixed sequence of pseudo-random sets, payloads and their mutations passes the oracle.
    #[test]
    fn sets_sessions_and_mutations_pass_the_oracle() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut deltas = 0;
        let mut rejected = std::collections::BTreeSet::new();
        for _ in 0..300 {
            let data = pseudo_random(&mut state, 48);
            let sets = sets(&data);
            check_sets(&sets).unwrap_or_else(|bug| panic!("{bug}"));
            let payloads = session_payloads(&sets);
            deltas += payloads.iter().filter(|p| p.contains("delta=true")).count();
            let edits = pseudo_random(&mut state, 6);
            let mutated: Vec<Vec<u8>> = payloads.iter().map(|p| mutate(p, &edits)).collect();
            for m in &mutated {
                if let Roundtrip::Rejected(code) =
                    check_payload_bytes(m).unwrap_or_else(|bug| panic!("{bug}"))
                {
                    rejected.insert(code);
                }
            }
            let views: Vec<&[u8]> = mutated.iter().map(Vec::as_slice).collect();
            check_session_bytes(&views).unwrap_or_else(|bug| panic!("{bug}"));
        }
        assert!(deltas >= 100, "only {deltas} deltas");
        assert!(rejected.len() >= 4, "rejections: {rejected:?}");
    }
}
