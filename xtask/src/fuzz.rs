//! `cargo xtask fuzz`: run a cargo-fuzz target for a while, or list the targets.

use crate::{root, run_checked, TaskError};

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
