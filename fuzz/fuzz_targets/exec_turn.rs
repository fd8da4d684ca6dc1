//! Generated upstream turns, Responses and Chat Completions alike: every stream the normalizer
//! makes of them is well formed and assembles to the turn the upstream meant (the oracle the
//! property tests of agentwire-exec run too).
#![no_main]

use agentwire_testkit::exec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (&first, rest) = data.split_first().unwrap_or((&0, &[]));
    if first & 1 == 0 {
        let turn = exec::turn(rest);
        if let Err(bug) = exec::check_turn(&turn) {
            panic!("{bug}\nupstream: {:?}", turn.upstream);
        }
    } else {
        let turn = exec::chat_turn(rest);
        if let Err(bug) = exec::check_chat_turn(&turn) {
            panic!("{bug}\nchunks: {:?}", turn.chunks);
        }
    }
});
