//! Replays JSON conformance suites against agentwire codecs.
//!
//! A fixture is one JSON file: an envelope of `name`, `description` and `operation`, plus the
//! fields that operation needs. Each codec family defines its operations as an enum
//! implementing [`Case`] (tagged by `operation`, with unknown fields rejected), a trait its
//! codec implements, and a check function. A [`Harness`] then turns every fixture of every
//! [`Suite`] into one named libtest trial:
//!
//! - trials are named `<suite>/<path without .json>` and filter like any test
//!   (`cargo test -p agentwire-conformance --test gcf -- numbers/`);
//! - a failure prints the fixture's path, its operation, and expected against actual with a
//!   readable diff;
//! - each suite may have an expected-failures file that can only shrink: an unlisted failure
//!   fails the run, and so does a listed fixture that now passes (a stale entry);
//! - a fixture that does not parse fails the run, listed or not; a missing suite directory
//!   fails the run unless the suite is declared optional.
//!
//! Numbers in fixtures are read losslessly (`-0`, integers beyond 64 bits) and compared by
//! exact decimal value ([`json_eq`]); this crate enables serde_json's `arbitrary_precision`
//! and `preserve_order` for itself, which Cargo unifies into whatever it is tested with.
//!
//! # Example
//!
//! A family with one operation, evaluated in-process:
//!
//! ```
//! use agentwire_conformance::{Case, Failure, Harness, Suite};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! enum UpperCase {
//!     #[serde(rename = "upper")]
//!     Upper { input: String, expected: String },
//! }
//!
//! impl Case for UpperCase {
//!     fn operation(&self) -> &'static str {
//!         "upper"
//!     }
//! }
//!
//! let dir = std::env::temp_dir().join(format!("agentwire-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(
//!     dir.join("001_hello.json"),
//!     r#"{"name": "hello", "description": "d", "operation": "upper",
//!         "input": "hi", "expected": "HI"}"#,
//! )?;
//!
//! let report = Harness::<UpperCase>::new(|fixture, _suite| match &fixture.case {
//!     UpperCase::Upper { input, expected } if input.to_uppercase() == *expected => Ok(()),
//!     UpperCase::Upper { .. } => Err(Failure::new("wrong case")),
//! })
//! .suite(Suite::new("upper", &dir))
//! .evaluate();
//!
//! assert!(report.is_success());
//! assert_eq!(report.suites[0].passed(), 1);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! In a test target with `harness = false`, call [`Harness::run`] instead: it parses libtest's
//! arguments, runs the trials and exits with libtest's status.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod codec;
mod compare;
mod diff;
pub mod exec;
mod fixture;
pub mod gcf;
pub mod gcx1;
mod harness;
pub mod toolcard;

use std::path::{Path, PathBuf};

pub use codec::CodecError;
pub use compare::{json_difference, json_difference_unsigned_zero, json_eq};
pub use diff::{json_diff, text_diff};
pub use fixture::{
    load_fixture, Case, ExpectedFailures, ExpectedFailuresError, Fixture, LoadError,
};
pub use harness::{
    allow_missing, same_json, same_text, Failure, Harness, Outcome, Report, Suite, SuiteReport,
    ALLOW_MISSING_ENV, REPORT_DIR_ENV, SUITE_TRIAL,
};

/// The nearest directory at or above `start` whose `Cargo.toml` declares a `[workspace]`.
pub fn find_workspace_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        manifest
            .lines()
            .any(|line| line.trim() == "[workspace]")
            .then(|| dir.to_owned())
    })
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
