//! The gateway surface for MCP tool catalogs: stable tool ids, ChoiceCards, path browsing and cache-stable ordering.
//!
//! Part of the [agentwire](https://github.com/agentwire/agentwire) workspace. The library is under construction; this version only reserves the crate.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]
