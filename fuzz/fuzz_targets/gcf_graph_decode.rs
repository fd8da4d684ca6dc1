//! GCF graph-profile payloads (full, streamed, session, delta) from arbitrary bytes: every
//! rejection is a typed error, and everything accepted re-encodes and decodes to itself.
#![no_main]

use agentwire_testkit::gcf_graph;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gcf_graph::check_bytes(data) {
        panic!("{bug}");
    }
});
