//! agentwire-mcp's re-encoding of tool results from arbitrary text: whatever `auto` (or one
//! format) puts in place of a JSON text decodes back to the same JSON, in fewer tokens.
//! The first line of the input is the tool's name, the rest the result's text.
#![no_main]

use agentwire_testkit::mcp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (tool, text) = input.split_once('\n').unwrap_or(("fuzz", input));
    if let Err(bug) = mcp::reencode(text, tool) {
        panic!("{bug}");
    }
});
