//! GCF generic decoding: arbitrary bytes into `serde_json::Value` (and, accepted or not,
//! without building a value). Bad input must be a typed error; accepted input must survive
//! encode → decode unchanged and re-encode to the same bytes; nothing may panic, overflow the
//! stack or allocate by a declared count. See `agentwire_testkit::gcf`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = agentwire_testkit::gcf::check_bytes(data) {
        panic!("{bug}");
    }
});
