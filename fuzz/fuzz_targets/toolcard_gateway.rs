//! The gateway's argument and result handling from arbitrary JSON: `tool_browse`,
//! `tool_execute`, `tool_hydrate` and `tool_view` arguments, upstream results through the
//! context firewall, and every stored artifact paged to its end with `tool_view`.
#![no_main]

use agentwire_testkit::toolcard;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(bug) = toolcard::gateway(text) {
        panic!("{bug}");
    }
});
