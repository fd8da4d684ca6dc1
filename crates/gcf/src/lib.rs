//! GCF v3.1, the Graph Compact Format: graph and generic profiles, sessions, deltas and streaming.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace.
//!
//! The shared layer is in place: [`Error`] and [`ErrorKind`] (one kind per spec error code,
//! with positions), [`Limits`], [`EncoderOptions`], [`DecoderOptions`] and header
//! validation ([`profile`]). The codecs build on it.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod error;
// The lexical layer, numbers and the header are shared by both profiles; not every item is
// used by each yet.
#[allow(dead_code)]
mod header;
#[allow(dead_code)]
mod lex;
#[allow(dead_code)]
mod number;
mod options;

pub use error::{Error, ErrorKind, Limit, Position, Result};
pub use header::{profile, Profile};
pub use options::{DecoderOptions, EncoderOptions, Limits};
