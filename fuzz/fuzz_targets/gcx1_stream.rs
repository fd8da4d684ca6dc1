//! GCX1 row by row: arbitrary bytes through the streaming row reader (at two buffer sizes,
//! against `decode_any`), and the rows it reads back through the streaming row writer. See
//! `agentwire_testkit::gcx1::stream_roundtrip`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = agentwire_testkit::gcx1::stream_roundtrip(data) {
        panic!("{bug}");
    }
});
