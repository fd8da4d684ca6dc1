//! The exec JSONL event protocol: Responses-API streaming events, one per line, for agent tool loops.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace. The library is under construction; this version only reserves the crate.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]
