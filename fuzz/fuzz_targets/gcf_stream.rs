//! GCF streaming readers: arbitrary bytes through `from_reader` (a line at a time) and the
//! `RowReader`, compared with the in-memory decoder: the same value (or rows) or the same
//! error code. See `agentwire_testkit::gcf::check_streaming`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = agentwire_testkit::gcf::check_streaming(data) {
        panic!("{bug}");
    }
});
