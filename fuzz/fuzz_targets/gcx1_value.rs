//! GCX1's shape-aware encoding: bytes that parse as JSON must survive `encode_any` →
//! `decode_any` under plain, dotted and Gortex tool names (wrappers, type letters, meta);
//! bytes that parse as GCX1 must decode the same through the value codec, the streaming
//! reader and validate. See `agentwire_testkit::gcx1`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = agentwire_testkit::gcx1::json_roundtrip(data) {
        panic!("{bug}");
    }
    if let Err(bug) = agentwire_testkit::gcx1::decode_roundtrip(data) {
        panic!("{bug}");
    }
});
