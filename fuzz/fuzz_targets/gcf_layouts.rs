//! GCF generic decoding of the current spec's table layouts: the bytes choose a document
//! among flattened `a>b` columns, keyed maps, constant columns, identity columns,
//! value-grouping and attachments (`agentwire_testkit::gcf_layouts`), which then goes through
//! the generic round-trip oracle (`agentwire_testkit::gcf::check_bytes`).
#![no_main]

use agentwire_testkit::{gcf, gcf_layouts};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = gcf_layouts::document(data);
    if let Err(bug) = gcf::check_bytes(text.as_bytes()) {
        panic!("{bug}\ninput:\n{text}");
    }
});
