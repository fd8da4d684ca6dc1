//! `cargo xtask release-check`: what must hold before any crate is published.
//!
//! 1. Every published crate carries the files a user reads first: a `README.md`, a
//!    `CHANGELOG.md` with an `## [Unreleased]` section, both licence files, and keywords of its
//!    own (at most five, no two crates with the same set).
//! 2. Every README shows its examples whole: no hidden doctest lines (`# …` inside a Rust code
//!    block), which crates.io and GitHub would print as they are.
//! 3. Every library crate compiles its README's examples as doctests
//!    (`#[doc = include_str!("../README.md")] #[cfg(doctest)]` in `src/lib.rs`), and they pass.
//! 4. `cargo publish --workspace --dry-run` packages and builds every published crate the way
//!    crates.io will, in dependency order.
//!
//! Steps 1 and 2 are quick and also run as part of `cargo xtask ci` ([`check_metadata`]); 3 and 4
//! build every crate again and run only here.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::{cargo, root, run_checked, TaskError};

/// A workspace member as its manifest describes it.
#[derive(Debug)]
struct Member {
    name: String,
    dir: PathBuf,
    publish: bool,
    lib: bool,
    keywords: Vec<String>,
}

/// Runs the whole release check; `allow_dirty` passes `--allow-dirty` to `cargo publish`.
pub(crate) fn run(args: &[String]) -> Result<(), TaskError> {
    let mut allow_dirty = false;
    for arg in args {
        match arg.as_str() {
            "--allow-dirty" => allow_dirty = true,
            other => return Err(format!("release-check: unknown argument `{other}`").into()),
        }
    }
    check_metadata()?;
    let members = members()?;
    let mut doctests = cargo();
    doctests.args(["test", "--doc"]);
    for member in members.iter().filter(|m| m.publish && m.lib) {
        doctests.args(["-p", &member.name]);
    }
    run_checked(&mut doctests)?;
    let mut publish = cargo();
    publish.args(["publish", "--workspace", "--dry-run"]);
    if allow_dirty {
        publish.arg("--allow-dirty");
    }
    run_checked(&mut publish)?;
    eprintln!("release-check: ok");
    Ok(())
}

/// The quick checks: files, keywords, README examples without hidden lines, README doctests
/// wired in. Fails with every problem found, one per line.
pub(crate) fn check_metadata() -> Result<(), TaskError> {
    let members = members()?;
    let mut problems = Vec::new();
    let mut keyword_sets: BTreeMap<Vec<String>, &str> = BTreeMap::new();
    for member in members.iter().filter(|m| m.publish) {
        let name = member.name.as_str();
        for file in ["README.md", "CHANGELOG.md", "LICENSE-MIT", "LICENSE-APACHE"] {
            if !member.dir.join(file).is_file() {
                problems.push(format!("{name}: no {file}"));
            }
        }
        if let Ok(changelog) = fs::read_to_string(member.dir.join("CHANGELOG.md")) {
            if !changelog.contains("## [Unreleased]") {
                problems.push(format!(
                    "{name}: CHANGELOG.md has no `## [Unreleased]` section"
                ));
            }
        }
        if let Ok(readme) = fs::read_to_string(member.dir.join("README.md")) {
            for line in hidden_doctest_lines(&readme) {
                problems.push(format!(
                    "{name}: README.md line {line} is a hidden doctest line (`# …`), which \
                     crates.io shows as it is; make the example complete instead"
                ));
            }
        }
        if member.lib {
            let lib = fs::read_to_string(member.dir.join("src/lib.rs")).unwrap_or_default();
            if !lib.contains("include_str!(\"../README.md\")") {
                problems.push(format!(
                    "{name}: src/lib.rs does not compile README.md's examples as doctests"
                ));
            }
        }
        let mut keywords = member.keywords.clone();
        if keywords.is_empty() || keywords.len() > 5 {
            problems.push(format!(
                "{name}: {} keywords (crates.io takes one to five)",
                keywords.len()
            ));
        }
        keywords.sort();
        if let Some(other) = keyword_sets.insert(keywords, name) {
            problems.push(format!("{name}: the same keywords as {other}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("release metadata:\n  {}", problems.join("\n  ")).into())
    }
}

/// The 1-based lines of `markdown` that are hidden doctest lines: `#` alone or followed by a
/// space, inside a fenced code block rustdoc treats as Rust (no language, `rust`, or `rust,…`).
fn hidden_doctest_lines(markdown: &str) -> Vec<usize> {
    let mut hidden = Vec::new();
    let mut fence: Option<(&str, bool)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match fence {
            None => {
                if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
                    let info = trimmed.trim_start_matches(marker).trim();
                    let language = info.split([',', ' ']).next().unwrap_or("");
                    fence = Some((marker, matches!(language, "" | "rust")));
                }
            }
            Some((marker, rust)) => {
                if trimmed.starts_with(marker) {
                    fence = None;
                } else if rust && (trimmed == "#" || trimmed.starts_with("# ")) {
                    hidden.push(i + 1);
                }
            }
        }
    }
    hidden
}

/// The workspace members, from `cargo metadata`.
fn members() -> Result<Vec<Member>, TaskError> {
    let output = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let root = root();
    Ok(packages
        .iter()
        .map(|p| {
            let manifest = Path::new(p["manifest_path"].as_str().unwrap_or(""));
            let dir = manifest.parent().unwrap_or(&root).to_owned();
            // `publish: []` means never; `null` means crates.io.
            let publish = !matches!(p["publish"].as_array(), Some(r) if r.is_empty());
            let lib = p["targets"].as_array().is_some_and(|targets| {
                targets.iter().any(|t| {
                    t["kind"]
                        .as_array()
                        .is_some_and(|k| k.iter().any(|k| k == "lib"))
                })
            });
            let keywords = p["keywords"]
                .as_array()
                .map(|k| {
                    k.iter()
                        .filter_map(|k| k.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Member {
                name: p["name"].as_str().unwrap_or("").to_owned(),
                dir,
                publish,
                lib,
                keywords,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::hidden_doctest_lines;

    #[test]
    fn hidden_lines_only_inside_rust_blocks() {
        let readme = "# Title\n\n```rust\nlet a = 1;\n# Ok::<(), E>(())\n```\n\n```sh\n# a comment\n```\n\n```\n#\n```\n\n```toml\n# x\n```\n\n```rust,no_run\n    # fn main() {}\n```\n";
        assert_eq!(hidden_doctest_lines(readme), vec![5, 13, 21]);
    }

    #[test]
    fn attributes_are_not_hidden_lines() {
        assert!(hidden_doctest_lines("```rust\n#[derive(Debug)]\nstruct A;\n```\n").is_empty());
    }
}
