//! Test support shared by the workspace's tests, fuzz targets and benchmarks. Not published.
//!
//! Each codec has one round-trip oracle here, in its own module, used by its property tests,
//! its conformance adapter where useful, and its cargo-fuzz targets, so every consumer checks
//! the same invariants. An oracle separates "bad input" (a typed error: fine) from "bug"
//! (a panic, or data that does not survive a round trip), in the manner of prost's
//! `tests::roundtrip`.
#![deny(missing_docs)]

pub mod alloc;
pub mod exec;
pub mod gcf;
pub mod gcf_graph;
pub mod gcf_keyed;
pub mod gcf_layouts;
pub mod gcx1;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod toolcard;

/// The verdict of a round-trip oracle on one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roundtrip {
    /// The input decoded, re-encoded and decoded again to the same value.
    Ok,
    /// The input was rejected with a typed error (not a bug).
    Rejected(String),
}

/// A violated invariant: a bug in the codec under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bug(pub String);

impl std::fmt::Display for Bug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Bug {}
