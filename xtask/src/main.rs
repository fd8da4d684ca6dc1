//! Project automation, run as `cargo xtask <task>` (see `.cargo/config.toml`).
//!
//! Tasks shell out to `$CARGO` from the workspace root, so they work from any directory.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod bench;
mod conformance;
mod corpus;
mod fuzz;
mod mcp_servers;
mod release;
mod scorecard;

const USAGE: &str = "\
usage: cargo xtask <task> [options]

tasks:
  conformance [--suite [NAME=]DIR]... [--allow-missing] [--codec NAME]
      Replay every conformance suite and print one table per suite. The
      upstream GCF suites gcf-v3.1.0 and gcf-v3.5.3 live outside the
      repository, at ../shared/conformance/NAME beside the checkout; a
      declared suite that is missing fails the run.
      --suite NAME=DIR  read suite NAME from DIR (also AGENTWIRE_GCF_SUITE_V3_1_0
                        and AGENTWIRE_GCF_SUITE_V3_5_3); a bare DIR is gcf-v3.1.0
      --allow-missing   skip a missing external suite (reported as not found)
      --codec NAME      only this codec family (exec, gcf, gcx1, toolcard)
  ci
      Everything CI runs: cargo fmt --check, cargo clippy -D warnings,
      mcp-servers, cargo test --workspace, cargo doc of the libraries with
      -D warnings, the library tests once more without the conformance
      runner's serde_json features, a compile check of the fuzz targets,
      and the conformance task.
  bench [FILTER | mcp]
      Without FILTER: run the cross-format benchmark, print its table
      (compact-JSON MB/s of each benchmark's fastest sample and the ratio to
      serde_json) and write docs/benchmarks.md. With FILTER: run the
      matching benchmarks of crates/benchmarks (serde_json's default Value)
      and print divan's output. `mcp`: the latency `agentwire mcp` adds to a
      tools/call with a 100 KB JSON result (release builds; p50 and p99,
      with and without re-encoding, against a direct connection), printed
      and written to its own section of docs/benchmarks.md.
  corpus [--check]
      Write the scorecard corpus (fixtures/*.json and the copy embedded in
      the agentwire command) from its seeded generator; --check fails when
      a committed file differs from what the generator writes.
  scorecard
      Regenerate docs/scorecard.{md,json,svg} with the release build of
      `agentwire scorecard`, and the README's headline numbers and chart.
  release-check [--allow-dirty]
      Before publishing: every published crate has its README, CHANGELOG,
      licence files and keywords of its own; README examples show no
      hidden doctest lines and compile as doctests; then
      `cargo publish --workspace --dry-run` packages and builds every
      published crate as crates.io will. (The quick metadata part also runs
      in `ci`.)
  fuzz (--list | TARGET [--time SECONDS])
      Run a cargo-fuzz target (default 60 s); needs `cargo install cargo-fuzz`.
  mcp-servers
      Install what the `agentwire mcp` integration tests drive into
      target/mcp-servers: the npm reference servers (server-memory,
      server-everything, server-filesystem; needs node 20+ and npm) and the official MCP Python
      SDK in a venv (needs python3), at the versions pinned in
      xtask/mcp-servers. Skipped when already installed; `ci` runs it.
";

/// A task failed; the message has been printed or is printed by `main`.
#[derive(Debug)]
pub(crate) struct TaskError(pub(crate) String);

impl<T: Into<String>> From<T> for TaskError {
    fn from(message: T) -> Self {
        TaskError(message.into())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((task, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match task.as_str() {
        "conformance" => match conformance::Options::parse(rest) {
            Ok(options) => conformance::run(&options),
            Err(message) => return usage_error(&message),
        },
        "ci" if rest.is_empty() => ci(),
        "bench" => bench::run(rest),
        "corpus" => corpus::run(rest),
        "scorecard" => scorecard::run(rest),
        "fuzz" => fuzz::run(rest),
        "release-check" => release::run(rest),
        "mcp-servers" => mcp_servers::run(rest),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => return usage_error(&format!("unknown task or arguments: {}", args.join(" "))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(TaskError(message)) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("xtask: {message}\n\n{USAGE}");
    ExitCode::from(2)
}

/// The workspace root: the parent of this crate's directory.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_owned()
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, or `target/` in the workspace root.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root().join(dir)
            }
        })
        .unwrap_or_else(|| root().join("target"))
}

/// A `cargo` command run from the workspace root.
pub(crate) fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root());
    command
}

/// Runs `command`, echoing it first; fails unless it exits successfully.
pub(crate) fn run_checked(command: &mut Command) -> Result<(), TaskError> {
    let shown = format!(
        "{} {}",
        command.get_program().to_string_lossy(),
        command
            .get_args()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    eprintln!("$ {shown}");
    let status = command
        .status()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})").into())
    }
}

/// The crates whose tests run a second time on their own, so that they are also tested without
/// the serde_json features (`arbitrary_precision`, `preserve_order`) that the conformance
/// runner enables and that Cargo unifies into every crate of a `--workspace` build.
const LIBRARIES: &[&str] = &[
    "agentwire-tokens",
    "agentwire-gcx1",
    "agentwire-gcf",
    "agentwire-toolcard",
    "agentwire-exec",
    "agentwire-mcp",
];

fn ci() -> Result<(), TaskError> {
    run_checked(cargo().args(["fmt", "--all", "--check"]))?;
    // README, CHANGELOG, licences, keywords and README examples without hidden lines.
    release::check_metadata()?;
    run_checked(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The cross-format bench needs its anchors, a feature no workspace build turns on.
    run_checked(cargo().args([
        "clippy",
        "-p",
        "agentwire-benchmarks",
        "--all-targets",
        "--features",
        "anchors",
        "--",
        "-D",
        "warnings",
    ]))?;
    // agentwire-gcf without its default features (no graph profile, no generic deltas, no
    // sha2): the plain generic codec must build and lint on its own.
    run_checked(cargo().args([
        "clippy",
        "-p",
        "agentwire-gcf",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The `agentwire mcp` integration tests drive real servers and a real client.
    mcp_servers::install()?;
    run_checked(cargo().args(["test", "--workspace"]))?;
    // The library crates' API docs, as docs.rs will build them: broken links, bare URLs and
    // bad HTML fail the run.
    run_checked(
        cargo()
            .args(["doc", "--workspace", "--no-deps", "--lib"])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    let mut isolated = cargo();
    isolated.arg("test");
    for library in LIBRARIES {
        isolated.args(["-p", library]);
    }
    run_checked(&mut isolated)?;
    // agentwire-toolcard without its default `schema` feature (no jsonschema in the tree).
    run_checked(cargo().args([
        "test",
        "-p",
        "agentwire-toolcard",
        "--no-default-features",
        "--lib",
        "--tests",
    ]))?;
    if !fuzz::targets()?.is_empty() {
        // The fuzz crate is its own workspace; checking it keeps every target compiling.
        run_checked(cargo().args(["check", "--manifest-path", "fuzz/Cargo.toml", "--bins"]))?;
    }
    conformance::run(&conformance::Options::default())
}
