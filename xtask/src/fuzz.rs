//! `cargo xtask fuzz`: run a cargo-fuzz target for a while, or list the targets.
//!
//! A target whose corpus directory is empty starts from seeds: the payloads of the
//! conformance suites it reads (ours, and the upstream GCF suites at `../shared/conformance`
//! when they are there). On the first long runs, seeded targets found in seconds what empty
//! corpora had not found in minutes.

use std::collections::BTreeSet;
use std::path::Path;

use crate::{root, run_checked, TaskError};

/// The largest seed kept (libFuzzer's default `-max_len` grows from the seeds' sizes).
const MAX_SEED: usize = 64 * 1024;

/// The fuzz targets declared in `fuzz/Cargo.toml`.
pub(crate) fn targets() -> Result<Vec<String>, TaskError> {
    let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml"))
        .map_err(|e| format!("cannot read fuzz/Cargo.toml: {e}"))?;
    let mut targets = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin {
            if let Some(name) = line
                .strip_prefix("name")
                .and_then(|rest| rest.trim_start().strip_prefix('='))
            {
                targets.push(name.trim().trim_matches('"').to_owned());
            }
        }
    }
    Ok(targets)
}

pub(crate) fn run(args: &[String]) -> Result<(), TaskError> {
    let targets = targets()?;
    let (target, seconds) = match args {
        [flag] if flag == "--list" => {
            for target in &targets {
                println!("{target}");
            }
            return Ok(());
        }
        [target] => (target, "60"),
        [target, flag, seconds] if flag == "--time" => (target, seconds.as_str()),
        _ => return Err("usage: cargo xtask fuzz (--list | <target> [--time SECONDS])".into()),
    };
    if !targets.contains(target) {
        return Err(format!(
            "unknown fuzz target `{target}` (known: {})",
            targets.join(", ")
        )
        .into());
    }
    let seconds: u64 = seconds
        .parse()
        .map_err(|_| format!("--time wants whole seconds, got `{seconds}`"))?;
    let seeded = seed(target)?;
    if seeded > 0 {
        println!("fuzz: {target} starts from {seeded} seeds taken from the conformance suites");
    }
    let mut command = std::process::Command::new("cargo");
    command
        .current_dir(root().join("fuzz"))
        // cargo-fuzz passes unstable flags; this lets a stable toolchain accept them.
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["fuzz", "run", target, "--"])
        .arg(format!("-max_total_time={seconds}"))
        .arg("-rss_limit_mb=1024");
    run_checked(&mut command).map_err(|e| {
        TaskError(format!(
            "{}\n(is cargo-fuzz installed? `cargo install cargo-fuzz`)",
            e.0
        ))
    })
}

/// What a target's seeds are: conformance payloads starting with one of these prefixes, or
/// (for `exec_read`) the `input` of the exec reader's fixtures.
fn seed_kind(target: &str) -> Option<&'static str> {
    match target {
        "gcf_decode" | "gcf_stream" | "gcf_graph_decode" => Some("GCF"),
        "gcx1_decode" | "gcx1_stream" => Some("GCX1"),
        "exec_read" => Some("exec"),
        _ => None,
    }
}

/// Fills `fuzz/corpus/<target>` with seeds when it is empty: returns how many were written.
fn seed(target: &str) -> Result<usize, TaskError> {
    let Some(kind) = seed_kind(target) else {
        return Ok(0);
    };
    let dir = root().join("fuzz/corpus").join(target);
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Ok(0);
    }
    let mut seeds = BTreeSet::new();
    let workspace = root();
    let mut dirs = vec![workspace.join("conformance")];
    for suite in ["gcf-v3.1.0", "gcf-v3.5.3"] {
        dirs.push(workspace.join("../shared/conformance").join(suite));
    }
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                collect(&path, kind, &mut seeds);
            }
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (i, seed) in seeds.iter().enumerate() {
        let path = dir.join(format!("seed-{i:04}"));
        std::fs::write(&path, seed).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(seeds.len())
}

/// The seeds of `kind` in the fixture file at `path`.
fn collect(path: &Path, kind: &str, seeds: &mut BTreeSet<String>) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(fixture) = serde_json::from_str::<serde_json::Value>(&text) else {
        return;
    };
    if kind == "exec" {
        if let Some(input) = fixture.get("input").and_then(|v| v.as_str()) {
            if !input.trim().is_empty() && input.len() <= MAX_SEED {
                seeds.insert(input.to_owned());
            }
        }
        return;
    }
    let mut stack = vec![&fixture];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::String(s) if s.starts_with(kind) && s.len() <= MAX_SEED => {
                seeds.insert(s.clone());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            serde_json::Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_the_payloads_of_their_kind() {
        let path = std::env::temp_dir().join(format!("xtask-seed-{}.json", std::process::id()));
        std::fs::write(
            &path,
            r#"{"input": "{\"type\":\"x\"}\n", "cases": [{"gcf": "GCF profile=generic\na=1\n"},
               {"gcx1": "GCX1 tool=t fields=a\n1\n"}, "GCFX is not a header but starts so"]}"#,
        )
        .unwrap();
        let mut gcf = BTreeSet::new();
        collect(&path, "GCF", &mut gcf);
        let mut gcx1 = BTreeSet::new();
        collect(&path, "GCX1", &mut gcx1);
        let mut exec = BTreeSet::new();
        collect(&path, "exec", &mut exec);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(gcf.len(), 2, "{gcf:?}");
        assert!(gcf.contains("GCF profile=generic\na=1\n"));
        assert_eq!(
            gcx1.into_iter().collect::<Vec<_>>(),
            ["GCX1 tool=t fields=a\n1\n"]
        );
        assert_eq!(exec.into_iter().collect::<Vec<_>>(), ["{\"type\":\"x\"}\n"]);
        assert_eq!(seed_kind("toolcard_parse"), None);
    }
}
