//! The Chat Completions chunk reader (`ChatStream`) on arbitrary bytes, one chunk per line:
//! bad chunks are typed failures, and what the normalizer emits is a well-formed stream that
//! assembles.
#![no_main]

use agentwire_testkit::exec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = exec::chat_bytes(data) {
        panic!("{bug}");
    }
});
