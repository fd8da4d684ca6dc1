//! Tool ids, MCP tool names, browse paths and `tools/list` catalogs from arbitrary text.
#![no_main]

use agentwire_testkit::toolcard;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for check in [
        toolcard::tool_id,
        toolcard::mcp_name,
        toolcard::path,
        toolcard::catalog,
    ] {
        if let Err(bug) = check(text) {
            panic!("{bug}");
        }
    }
});
