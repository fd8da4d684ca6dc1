//! `cargo xtask conformance`: run each codec family's conformance test target with reports
//! enabled, then print one table per suite.

use std::path::PathBuf;

use crate::{cargo, root, TaskError};

/// A codec family: its name on the command line and its test target in
/// `agentwire-conformance`.
struct Codec {
    name: &'static str,
    test_target: &'static str,
}

const CODECS: &[Codec] = &[
    Codec {
        name: "exec",
        test_target: "exec",
    },
    Codec {
        name: "gcf",
        test_target: "gcf",
    },
    Codec {
        name: "gcx1",
        test_target: "gcx1",
    },
    Codec {
        name: "toolcard",
        test_target: "toolcard",
    },
];

#[derive(Debug, Default)]
pub(crate) struct Options {
    /// External suites read from another directory: the environment variable the runner
    /// reads for each, and the directory.
    suites: Vec<(&'static str, PathBuf)>,
    allow_missing: bool,
    codec: Option<String>,
}

/// The external suites `--suite NAME=DIR` can point elsewhere, and the environment variable
/// the runner reads for each (`agentwire_conformance::gcf::UPSTREAM_SUITES`, repeated here to
/// keep xtask free of the workspace's crates).
const EXTERNAL_SUITES: &[(&str, &str)] = &[
    ("gcf-v3.1.0", "AGENTWIRE_GCF_SUITE_V3_1_0"),
    ("gcf-v3.5.3", "AGENTWIRE_GCF_SUITE_V3_5_3"),
];

/// The variable that lets a missing suite be skipped (`agentwire_conformance::ALLOW_MISSING_ENV`).
const ALLOW_MISSING_ENV: &str = "AGENTWIRE_CONFORMANCE_ALLOW_MISSING";

impl Options {
    pub(crate) fn parse(args: &[String]) -> Result<Self, String> {
        let mut options = Options::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |flag: &str| {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            match arg.as_str() {
                "--suite" => {
                    let spec = value("--suite")?;
                    let (name, dir) = match spec.split_once('=') {
                        Some((name, dir)) => (name.to_owned(), dir.to_owned()),
                        // A bare directory: the v3.1.0 suite, as before.
                        None => ("gcf-v3.1.0".to_owned(), spec),
                    };
                    let Some(&(_, env)) = EXTERNAL_SUITES.iter().find(|(n, _)| *n == name) else {
                        let known: Vec<_> = EXTERNAL_SUITES.iter().map(|(n, _)| *n).collect();
                        return Err(format!(
                            "unknown suite `{name}` for --suite (external suites: {})",
                            known.join(", ")
                        ));
                    };
                    options.suites.push((env, PathBuf::from(dir)));
                }
                "--allow-missing" => options.allow_missing = true,
                "--codec" => {
                    let name = value("--codec")?;
                    if !CODECS.iter().any(|c| c.name == name) {
                        let known: Vec<_> = CODECS.iter().map(|c| c.name).collect();
                        return Err(format!(
                            "unknown codec `{name}` (known: {})",
                            known.join(", ")
                        ));
                    }
                    options.codec = Some(name);
                }
                other => return Err(format!("unexpected argument `{other}`")),
            }
        }
        Ok(options)
    }
}

pub(crate) fn run(options: &Options) -> Result<(), TaskError> {
    let reports_root = root().join("target/conformance-reports");
    let mut failures = Vec::new();
    let mut tables = Vec::new();
    for codec in CODECS
        .iter()
        .filter(|c| options.codec.as_deref().is_none_or(|n| n == c.name))
    {
        let dir = reports_root.join(codec.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        let mut command = cargo();
        command
            .args(["test", "--package", "agentwire-conformance", "--test"])
            .arg(codec.test_target)
            .args(["--", "--quiet"])
            .env(agentwire_report_env(), &dir);
        for (env, dir) in &options.suites {
            let dir = std::path::absolute(dir)
                .map_err(|e| format!("bad --suite path {}: {e}", dir.display()))?;
            command.env(env, dir);
        }
        if options.allow_missing {
            command.env(ALLOW_MISSING_ENV, "1");
        }
        eprintln!("== conformance: {}", codec.name);
        let status = command
            .status()
            .map_err(|e| format!("cannot run cargo test: {e}"))?;
        if !status.success() {
            failures.push(format!("{} ({status})", codec.name));
        }
        tables.push(table(codec.name, &dir)?);
    }
    println!();
    for table in &tables {
        println!("{table}");
    }
    if failures.is_empty() {
        println!("conformance: ok");
        Ok(())
    } else {
        Err(format!("conformance failed: {}", failures.join(", ")).into())
    }
}

/// The variable the harness reads (`agentwire_conformance::REPORT_DIR_ENV`); repeated here to
/// keep xtask free of the workspace's crates.
fn agentwire_report_env() -> &'static str {
    "AGENTWIRE_CONFORMANCE_REPORT"
}

/// A markdown table with one row per suite report found in `dir`.
fn table(codec: &str, dir: &std::path::Path) -> Result<String, TaskError> {
    let mut rows = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(format!(
            "codec {codec}: no reports written (the test target did not run to completion)\n"
        ));
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let report: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("bad report {}: {e}", path.display()))?;
        rows.push(row(&report));
    }
    let mut out = format!(
        "codec {codec}\n\n| suite | fixtures | passed | failed | expected failures | note |\n|---|---:|---:|---:|---:|---|\n"
    );
    for row in rows {
        out.push_str(&row);
        out.push('\n');
    }
    Ok(out)
}

fn row(report: &serde_json::Value) -> String {
    let suite = report["suite"].as_str().unwrap_or("?");
    let outcomes = report["outcomes"].as_object();
    let count = |label: &str| {
        outcomes.map_or(0, |o| {
            o.values().filter(|v| v.as_str() == Some(label)).count()
        })
    };
    let fixtures = outcomes.map_or(0, serde_json::Map::len);
    let passed = count("passed");
    let expected = count("expected-failure");
    let failed = fixtures - passed - expected;
    let found = report["found"].as_bool().unwrap_or(false);
    let problems = report["problems"].as_array().map_or(0, Vec::len);
    let note = if !found {
        format!(
            "not found at {}{}",
            report["dir"].as_str().unwrap_or("?"),
            if report["optional"].as_bool() == Some(true) {
                " (optional, skipped)"
            } else {
                ""
            }
        )
    } else if problems > 0 {
        format!("{problems} suite problem(s), see the test output")
    } else {
        String::new()
    };
    format!("| {suite} | {fixtures} | {passed} | {failed} | {expected} | {note} |")
}
