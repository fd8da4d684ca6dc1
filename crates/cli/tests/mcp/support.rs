//! What the `agentwire mcp` integration tests (mcp.rs, mcp_catalog.rs) share.

use std::path::{Path, PathBuf};

use tokio::io::AsyncBufReadExt;

/// `target/mcp-servers`, installed by `cargo xtask mcp-servers` (the npm reference servers,
/// filesystem included, and the MCP Python SDK's venv).
pub(crate) fn installed() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("mcp-servers");
    assert!(
        dir.join("node/installed-package-lock.json").exists()
            && dir
                .join("node/node_modules/@modelcontextprotocol/server-filesystem")
                .exists()
            && dir.join("venv/installed-requirements.txt").exists(),
        "the MCP test servers are not installed in {}: run `cargo xtask mcp-servers` (needs \
         node 20+, npm and python3; `cargo xtask ci` runs it)",
        dir.display()
    );
    dir
}

/// Spawns `proxy` (an `agentwire mcp ... --listen 127.0.0.1:0`) with its stderr piped and
/// returns it with the URL it says it serves on. The rest of its stderr is drained in the
/// background: a closed pipe would fail the proxy's next report.
pub(crate) async fn spawn_listening(
    proxy: &mut tokio::process::Command,
) -> (tokio::process::Child, String) {
    proxy
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = proxy.spawn().unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let served = loop {
        let line = stderr
            .next_line()
            .await
            .unwrap()
            .expect("the proxy's address");
        if let Some(url) = line.strip_prefix("agentwire mcp: serving ") {
            break url.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (child, served)
}
