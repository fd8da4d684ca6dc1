//! GCX1 decoding: arbitrary bytes through both decoders (streaming and borrowed), the
//! generic fallback and a re-encode. Bad input must be a typed error; accepted input must
//! survive the round trip; nothing may panic. See `agentwire_testkit::gcx1`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = agentwire_testkit::gcx1::decode_roundtrip(data) {
        panic!("{bug}");
    }
});
