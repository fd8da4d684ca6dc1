//! GCF v3.1, the Graph Compact Format: graph and generic profiles, sessions, deltas and streaming.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace. The codec is under construction; this version only reserves the crate.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]
