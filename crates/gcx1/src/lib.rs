//! GCX1: a tab-delimited, line-oriented wire format for agent tool responses.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace. The codec is under construction; this version only reserves the crate.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]
