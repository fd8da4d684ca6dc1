//! Generic delta sessions: a producer sending successive sets as deltas with re-anchors
//! (spec §10a.8), and the consumer rebuilding them.

use super::{GenericDelta, GenericPayload, KeyedSet};
use crate::error::{Error, ErrorKind, Result};
use crate::options::DecoderOptions;

/// When a [`GenericSession`] sends a full payload instead of a delta (spec §10a.8, the
/// producer's choice; any policy is valid on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reanchor {
    /// Every `n`-th turn (turns counted from 1 after the initial full payload). `Every(0)`
    /// is the default, 15.
    Every(usize),
    /// When the deltas sent since the last full payload, with this one, reach the size of a
    /// full payload of the new set (adaptive: more anchors under heavy churn).
    SizeGuard,
}

impl Reanchor {
    /// The spec's default cadence, every 15 turns.
    pub const DEFAULT_TURNS: usize = 15;
}

impl Default for Reanchor {
    fn default() -> Self {
        Reanchor::Every(Reanchor::DEFAULT_TURNS)
    }
}

/// One payload a [`GenericSession`] emits.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Emission {
    /// The payload's text.
    pub text: String,
    /// Whether it is a full payload (a re-anchor) rather than a delta.
    pub full: bool,
}

/// A producer's side of a generic delta session (spec §10a): the first payload is the full
/// set; each next set is sent as a delta against the previous one, or in full when the
/// schema changed (§10a.7) or the [`Reanchor`] policy says so. The wire is exactly
/// [`KeyedSet::encode`] and [`GenericDelta::encode`]; deltas carry no `tool=`.
///
/// ```
/// use agentwire_gcf::{GenericSession, GenericSessionDecoder, KeyedSet, Reanchor};
/// use serde_json::json;
///
/// let turn = |status: &str| KeyedSet::from_value(&json!({"orders": [
///     {"id": 1, "status": "open"}, {"id": 2, "status": status}
/// ]}), "id");
/// let mut session = GenericSession::new(turn("open")?, Some("orders".into()), Reanchor::Every(2))?;
/// let mut consumer = GenericSessionDecoder::new();
/// consumer.decode(&session.full()?)?;
/// for (status, full) in [("paid", false), ("sent", true), ("done", false)] {
///     let emission = session.next(turn(status)?)?;
///     assert_eq!(emission.full, full);
///     assert_eq!(consumer.decode(&emission.text)?, &turn(status)?);
/// }
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct GenericSession {
    base: KeyedSet,
    tool: Option<String>,
    policy: Reanchor,
    turn: usize,
    /// Bytes of deltas sent since the last full payload.
    since: usize,
}

impl GenericSession {
    /// A session anchored on `base`; send [`GenericSession::full`] first.
    pub fn new(base: KeyedSet, tool: Option<String>, policy: Reanchor) -> Result<Self> {
        base.validate()?;
        let policy = match policy {
            Reanchor::Every(0) => Reanchor::default(),
            p => p,
        };
        Ok(GenericSession {
            base,
            tool,
            policy,
            turn: 0,
            since: 0,
        })
    }

    /// The full payload of the current set.
    pub fn full(&self) -> Result<String> {
        self.base.encode(self.tool.as_deref())
    }

    /// The number of [`GenericSession::next`] calls so far.
    pub fn turn(&self) -> usize {
        self.turn
    }

    /// The set the consumer holds after the last emission.
    pub fn current(&self) -> &KeyedSet {
        &self.base
    }

    /// Moves the session to `next`, returning what to send: a delta, or a full payload on a
    /// schema change or when the policy re-anchors. The session holds `next` either way.
    pub fn next(&mut self, next: KeyedSet) -> Result<Emission> {
        next.validate()?;
        self.turn += 1;
        if next.key != self.base.key || next.fields != self.base.fields {
            return self.reanchor(next);
        }
        let delta = GenericDelta::between(&self.base, &next)?.encode()?;
        let reanchor = match self.policy {
            Reanchor::Every(n) => self.turn.is_multiple_of(n.max(1)),
            Reanchor::SizeGuard => {
                self.since + delta.len() >= next.encode(self.tool.as_deref())?.len()
            }
        };
        if reanchor {
            return self.reanchor(next);
        }
        self.base = next;
        self.since += delta.len();
        Ok(Emission {
            text: delta,
            full: false,
        })
    }

    fn reanchor(&mut self, next: KeyedSet) -> Result<Emission> {
        let text = next.encode(self.tool.as_deref())?;
        self.base = next;
        self.since = 0;
        Ok(Emission { text, full: true })
    }
}

/// A consumer's side of a generic delta session: it reads each payload in turn, a full set
/// (its `pack_root` checked), a delta (applied atomically to the set it holds, both roots
/// checked), or an `unchanged=true` reply (checked against the set it holds), and gives the
/// current set. A payload that fails leaves the held set as it was (ask for a full payload).
#[derive(Debug, Clone, Default)]
pub struct GenericSessionDecoder {
    current: Option<KeyedSet>,
    options: DecoderOptions,
}

impl GenericSessionDecoder {
    /// A decoder holding no set yet.
    pub fn new() -> Self {
        GenericSessionDecoder::default()
    }

    /// A decoder with these options (limits).
    pub fn with_options(options: DecoderOptions) -> Self {
        GenericSessionDecoder {
            current: None,
            options,
        }
    }

    /// The set held, if any.
    pub fn current(&self) -> Option<&KeyedSet> {
        self.current.as_ref()
    }

    /// Forgets the held set (a session reset).
    pub fn reset(&mut self) {
        self.current = None;
    }

    /// Reads the next payload and gives the set it stands for. A delta or an
    /// `unchanged=true` reply before any full payload is `root_mismatch` (the consumer holds
    /// no base).
    pub fn decode(&mut self, text: &str) -> Result<&KeyedSet> {
        let next = match self.options.decode_generic_payload(text)? {
            GenericPayload::Full { set, .. } => set,
            GenericPayload::Delta(delta) => {
                let base = self.current.as_ref().ok_or_else(no_base)?;
                delta.apply(base)?
            }
            GenericPayload::Unchanged { pack_root, .. } => {
                let base = self.current.as_ref().ok_or_else(no_base)?;
                let root = base.pack_root()?;
                if root != pack_root {
                    return Err(Error::new(
                        ErrorKind::RootMismatch,
                        format!("the reply confirms {pack_root}, the set held is {root}"),
                    ));
                }
                base.clone()
            }
        };
        Ok(self.current.insert(next))
    }
}

#[cold]
fn no_base() -> Error {
    Error::new(
        ErrorKind::RootMismatch,
        "a delta or unchanged reply before any full payload: no set is held to apply it to",
    )
}
