//! `cargo xtask mcp-servers`: installs what the `agentwire mcp` integration tests drive into
//! `target/mcp-servers/`: the npm reference servers `@modelcontextprotocol/server-memory`,
//! `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem` (`node/`, `npm ci` from the committed lock file),
//! and the official MCP Python SDK (`venv/`, `pip install` of the committed frozen list).
//!
//! Each half is skipped when its installed copy of the pins matches the committed one, so a
//! second run costs nothing. The versions live in `xtask/mcp-servers/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{root, run_checked, TaskError};

/// Where the installs go: `<target dir>/mcp-servers`, the directory the tests look in (they
/// find it next to their `CARGO_TARGET_TMPDIR`).
pub(crate) fn dir() -> PathBuf {
    crate::target_dir().join("mcp-servers")
}

fn pins() -> PathBuf {
    root().join("xtask/mcp-servers")
}

pub(crate) fn run(args: &[String]) -> Result<(), TaskError> {
    if !args.is_empty() {
        return Err(format!("usage: cargo xtask mcp-servers, not {args:?}").into());
    }
    install()
}

/// Installs both halves (or finds them installed).
pub(crate) fn install() -> Result<(), TaskError> {
    let dir = dir();
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    install_node(&dir.join("node"))?;
    install_python(&dir.join("venv"))
}

/// The first line a command prints, or `None` when it cannot be run or fails.
fn version(program: &str) -> Option<String> {
    let output = Command::new(program).arg("--version").output().ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned()
    })
}

/// Whether `installed` holds the same bytes as `committed`.
fn same_file(committed: &Path, installed: &Path) -> bool {
    matches!((fs::read(committed), fs::read(installed)), (Ok(a), Ok(b)) if a == b)
}

fn copy(from: &Path, to: &Path) -> Result<(), TaskError> {
    fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()).into())
}

fn install_node(dir: &Path) -> Result<(), TaskError> {
    let lock = pins().join("package-lock.json");
    let stamp = dir.join("installed-package-lock.json");
    if same_file(&lock, &stamp) {
        eprintln!(
            "mcp-servers: npm servers already installed in {}",
            dir.display()
        );
        return Ok(());
    }
    let Some(node) = version("node") else {
        return Err(
            "the MCP integration tests need Node.js 20 or later (`node` and `npm` on \
                    PATH) for the reference servers; node was not found"
                .into(),
        );
    };
    let Some(npm) = version("npm") else {
        return Err(
            "the MCP integration tests need npm (with Node.js 20 or later) for the \
                    reference servers; npm was not found"
                .into(),
        );
    };
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        return Err(
            format!("the MCP reference servers need Node.js 20 or later, found {node}").into(),
        );
    }
    let started = Instant::now();
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let _ = fs::remove_file(&stamp);
    copy(&pins().join("package.json"), &dir.join("package.json"))?;
    copy(&lock, &dir.join("package-lock.json"))?;
    eprintln!("mcp-servers: installing the npm servers with node {node}, npm {npm}");
    run_checked(
        Command::new("npm")
            .args([
                "ci",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--loglevel=error",
            ])
            .current_dir(dir),
    )?;
    copy(&lock, &stamp)?;
    eprintln!(
        "mcp-servers: npm servers installed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn install_python(venv: &Path) -> Result<(), TaskError> {
    let requirements = pins().join("requirements.txt");
    let stamp = venv.join("installed-requirements.txt");
    let python = venv.join("bin/python");
    if same_file(&requirements, &stamp) && python.exists() {
        eprintln!(
            "mcp-servers: MCP Python SDK already installed in {}",
            venv.display()
        );
        return Ok(());
    }
    let Some(system) = version("python3") else {
        return Err(
            "the MCP integration tests need Python 3.10 or later (`python3` on PATH, \
                    with the venv module) for the official MCP Python SDK; python3 was not \
                    found"
                .into(),
        );
    };
    let started = Instant::now();
    let _ = fs::remove_dir_all(venv);
    eprintln!("mcp-servers: installing the MCP Python SDK with {system}");
    run_checked(Command::new("python3").arg("-m").arg("venv").arg(venv))?;
    run_checked(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--quiet",
                "--only-binary",
                ":all:",
                "-r",
            ])
            .arg(&requirements),
    )?;
    copy(&requirements, &stamp)?;
    eprintln!(
        "mcp-servers: MCP Python SDK installed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
