//! Property tests of `agentwire-gcf` against the `gcf` crate 3.1.0 (which implements spec
//! v3.6) as an oracle: see `tests/oracle.rs`. Not published: `gcf` forces serde_json's
//! `preserve_order` on every crate built with it.
