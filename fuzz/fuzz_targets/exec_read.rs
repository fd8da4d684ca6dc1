//! The exec JSONL reader and the SSE decoder + normalizer on arbitrary bytes.
#![no_main]

use agentwire_testkit::exec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = exec::jsonl(data) {
        panic!("{bug}");
    }
    let split = data.first().map_or(0, |&b| usize::from(b));
    if let Err(bug) = exec::sse(data, split) {
        panic!("{bug}");
    }
});
