//! GCF generic keyed sets, deltas, replies and sessions (spec §10a), through the oracle in
//! `agentwire_testkit::gcf_keyed`. The first byte chooses:
//!
//! - sets from the bytes, with every full payload, delta, reply and session between them;
//! - a session's payloads over such sets, mutated by the rest of the bytes, each decoded on
//!   its own and all of them by one session decoder;
//! - raw payloads (the bytes split at NUL), the same way.
#![no_main]

use agentwire_testkit::gcf_keyed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let payloads: Vec<Vec<u8>> = match mode % 3 {
        0 => {
            if let Err(bug) = gcf_keyed::check_sets(&gcf_keyed::sets(rest)) {
                panic!("{bug}");
            }
            return;
        }
        1 => {
            // The first half chooses the sets, the second the edits.
            let (choices, edits) = rest.split_at(rest.len() / 2);
            gcf_keyed::session_payloads(&gcf_keyed::sets(choices))
                .iter()
                .map(|p| gcf_keyed::mutate(p, edits))
                .collect()
        }
        _ => rest.split(|&b| b == 0).map(<[u8]>::to_vec).collect(),
    };
    for payload in &payloads {
        if let Err(bug) = gcf_keyed::check_payload_bytes(payload) {
            panic!("{bug}\ninput:\n{}", String::from_utf8_lossy(payload));
        }
    }
    let views: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
    if let Err(bug) = gcf_keyed::check_session_bytes(&views) {
        panic!("{bug}");
    }
});
