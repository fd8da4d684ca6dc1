//! Suites, the harness that turns fixtures into named trials, and run reports.

use std::collections::BTreeMap;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Serialize;

use crate::fixture::{discover, load_fixture, Case, ExpectedFailures, Fixture, LoadError};

/// The environment variable naming a directory where [`Harness::run`] writes one
/// `<suite>.json` [`SuiteReport`] per suite; `cargo xtask conformance` reads them.
pub const REPORT_DIR_ENV: &str = "AGENTWIRE_CONFORMANCE_REPORT";

/// The environment variable that lets a declared suite whose directory is missing be skipped
/// (reported as not found) instead of failing the run: `cargo xtask conformance
/// --allow-missing` sets it to `1`.
pub const ALLOW_MISSING_ENV: &str = "AGENTWIRE_CONFORMANCE_ALLOW_MISSING";

/// Whether [`ALLOW_MISSING_ENV`] is set (to anything but empty or `0`).
pub fn allow_missing() -> bool {
    std::env::var_os(ALLOW_MISSING_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The name of the trial, beside each suite's fixtures, that checks the suite itself: the
/// directory exists and holds fixtures, the expected-failures file reads and names only
/// fixtures that exist.
pub const SUITE_TRIAL: &str = "(suite)";

/// A directory of fixture files and the list of its fixtures that are known to fail.
#[derive(Debug, Clone)]
pub struct Suite {
    name: String,
    dir: PathBuf,
    optional: bool,
    expected_failures: Option<PathBuf>,
    version: Option<String>,
    missing_hint: Option<String>,
}

impl Suite {
    /// A required suite: if `dir` does not exist the run fails.
    pub fn new(name: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        Self {
            name: name.into(),
            dir: dir.into(),
            optional: false,
            expected_failures: None,
            version: None,
            missing_hint: None,
        }
    }

    /// The version of the specification the suite's fixtures pin, for a codec family that
    /// reads fixtures by version (the check function gets the suite).
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The version the suite pins, if declared.
    pub fn spec_version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// How to provide the suite when its directory is missing: added to the failure that a
    /// missing required suite causes.
    #[must_use]
    pub fn when_missing(mut self, hint: impl Into<String>) -> Self {
        self.missing_hint = Some(hint.into());
        self
    }

    /// Declares the suite optional: a missing directory is reported as an ignored trial
    /// instead of a failure. Use it for suites that live outside the repository.
    #[must_use]
    pub fn optional(mut self, optional: bool) -> Self {
        self.optional = optional;
        self
    }

    /// The expected-failures file of this suite (see [`ExpectedFailures`]). Without one, or
    /// when the file does not exist, every fixture must pass.
    #[must_use]
    pub fn expected_failures(mut self, path: impl Into<PathBuf>) -> Self {
        self.expected_failures = Some(path.into());
        self
    }

    /// The suite's name, the first component of its trial names.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The suite's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Why a fixture did not pass its operation: a readable message, usually with a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    message: String,
}

impl Failure {
    /// A failure with a free-form message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// Text output that differs from the expected bytes, with a line diff.
    pub fn text_mismatch(what: &str, expected: &str, actual: &str) -> Self {
        Self::new(format!(
            "{what} differs from the expected text\n{}",
            crate::diff::text_diff(expected, actual)
        ))
    }

    /// A JSON value that differs from the expected one: the first difference, then a diff.
    pub fn json_mismatch(
        what: &str,
        expected: &serde_json::Value,
        actual: &serde_json::Value,
    ) -> Self {
        let first = crate::compare::json_difference(expected, actual).unwrap_or_default();
        Self::new(format!(
            "{what} differs from the expected value\nfirst difference: {first}\n{}",
            crate::diff::json_diff(expected, actual)
        ))
    }

    /// The codec failed where it should have succeeded.
    pub fn codec(what: &str, error: &crate::CodecError) -> Self {
        Self::new(format!("{what} failed: {error}"))
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// `Ok` when `actual` is exactly `expected`, otherwise a [`Failure::text_mismatch`] naming
/// `what` was compared.
pub fn same_text(what: &str, expected: &str, actual: &str) -> Result<(), Failure> {
    if expected == actual {
        Ok(())
    } else {
        Err(Failure::text_mismatch(what, expected, actual))
    }
}

/// `Ok` when `actual` equals `expected` under [`json_eq`](crate::json_eq), otherwise a
/// [`Failure::json_mismatch`] naming what was compared.
pub fn same_json(
    what: &str,
    expected: &serde_json::Value,
    actual: &serde_json::Value,
) -> Result<(), Failure> {
    if crate::compare::json_eq(expected, actual) {
        Ok(())
    } else {
        Err(Failure::json_mismatch(what, expected, actual))
    }
}

/// The result of one fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The fixture passed.
    Passed,
    /// The fixture failed and is not listed as an expected failure.
    Failed(String),
    /// The fixture failed and is listed as an expected failure.
    ExpectedFailure(String),
    /// The fixture is listed as an expected failure but passed: the entry is stale.
    StaleExpectedFailure(String),
    /// The file is not a valid fixture. This always fails, listed or not.
    Unparsable(String),
}

impl Outcome {
    /// Whether this outcome lets the run succeed.
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Passed | Outcome::ExpectedFailure(_))
    }
}

/// What happened to one suite.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SuiteReport {
    /// The suite's name.
    pub suite: String,
    /// The suite's directory.
    pub dir: PathBuf,
    /// Whether the directory exists.
    pub found: bool,
    /// Whether the suite was declared optional.
    pub optional: bool,
    /// Problems with the suite itself: a missing required directory, an unreadable or invalid
    /// expected-failures file, entries that name no fixture.
    pub problems: Vec<String>,
    /// Outcome per fixture id, for the fixtures that ran.
    #[serde(serialize_with = "serialize_outcomes")]
    pub outcomes: BTreeMap<String, Outcome>,
}

impl SuiteReport {
    /// Fixtures that ran.
    pub fn fixtures(&self) -> usize {
        self.outcomes.len()
    }

    /// Fixtures that passed.
    pub fn passed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Passed))
    }

    /// Fixtures that failed the run: unlisted failures, stale entries and unparsable files.
    pub fn failed(&self) -> usize {
        self.count(|o| !o.is_ok())
    }

    /// Listed fixtures that failed as expected.
    pub fn expected_failures(&self) -> usize {
        self.count(|o| matches!(o, Outcome::ExpectedFailure(_)))
    }

    /// Whether the suite lets the run succeed.
    pub fn is_success(&self) -> bool {
        self.problems.is_empty() && self.outcomes.values().all(Outcome::is_ok)
    }

    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.values().filter(|o| f(o)).count()
    }
}

fn serialize_outcomes<S: serde::Serializer>(
    outcomes: &BTreeMap<String, Outcome>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(outcomes.len()))?;
    for (id, outcome) in outcomes {
        let label = match outcome {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "failed",
            Outcome::ExpectedFailure(_) => "expected-failure",
            Outcome::StaleExpectedFailure(_) => "stale-expected-failure",
            Outcome::Unparsable(_) => "unparsable",
        };
        map.serialize_entry(id, label)?;
    }
    map.end()
}

/// The result of [`Harness::evaluate`]: one report per suite.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Reports in the order the suites were added.
    pub suites: Vec<SuiteReport>,
}

impl Report {
    /// Whether every suite succeeded.
    pub fn is_success(&self) -> bool {
        self.suites.iter().all(SuiteReport::is_success)
    }
}

type Check<C> = dyn Fn(&Fixture<C>, &[Fixture<C>], &Suite) -> Result<(), Failure> + Send + Sync;

/// Replays fixture suites of one codec family through a check function.
///
/// The check function receives a fixture and every parsed fixture of the same suite (for
/// operations that refer to data in sibling fixtures) and returns `Ok(())` when the codec
/// behaves as the fixture demands.
///
/// [`Harness::run`] turns every fixture into a libtest trial named `<suite>/<id>`, so
/// `cargo test --test gcf -- scalar/` filters as usual; [`Harness::evaluate`] runs everything
/// in-process and returns a [`Report`].
pub struct Harness<C: Case> {
    suites: Vec<Suite>,
    check: Arc<Check<C>>,
}

impl<C: Case> fmt::Debug for Harness<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("suites", &self.suites)
            .finish_non_exhaustive()
    }
}

/// A discovered fixture file: its id, and the index of its parsed fixture or its load error.
struct Entry {
    id: String,
    parsed: Result<usize, LoadError>,
}

struct Prepared<C> {
    suite: Suite,
    entries: Vec<Entry>,
    fixtures: Arc<Vec<Fixture<C>>>,
    expected: ExpectedFailures,
    report: SuiteReport,
}

impl<C: Case> Harness<C> {
    /// A harness with no suites yet and the family's check function.
    pub fn new(
        check: impl Fn(&Fixture<C>, &[Fixture<C>]) -> Result<(), Failure> + Send + Sync + 'static,
    ) -> Self {
        Self::with_suite_check(move |fixture, fixtures, _| check(fixture, fixtures))
    }

    /// A harness whose check function also gets the fixture's [`Suite`] (to read fixtures by
    /// the suite's [`Suite::version`]).
    pub fn with_suite_check(
        check: impl Fn(&Fixture<C>, &[Fixture<C>], &Suite) -> Result<(), Failure>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Self {
            suites: Vec::new(),
            check: Arc::new(check),
        }
    }

    /// Adds a suite.
    #[must_use]
    pub fn suite(mut self, suite: Suite) -> Self {
        self.suites.push(suite);
        self
    }

    /// Runs every fixture in this process, without libtest, and reports the outcomes.
    pub fn evaluate(&self) -> Report {
        let suites = self
            .suites
            .iter()
            .map(|suite| {
                let mut prepared = prepare::<C>(suite);
                for entry in &prepared.entries {
                    let outcome = evaluate_entry(
                        &*self.check,
                        entry,
                        &prepared.fixtures,
                        &prepared.expected,
                        &prepared.suite,
                    );
                    prepared.report.outcomes.insert(entry.id.clone(), outcome);
                }
                prepared.report
            })
            .collect();
        Report { suites }
    }

    /// Runs the suites as libtest trials with the process's command-line arguments, writes
    /// reports when [`REPORT_DIR_ENV`] is set, and exits with libtest's status.
    pub fn run(self) -> ! {
        let args = Arguments::from_args();
        let (trials, reports) = self.trials();
        let conclusion = libtest_mimic::run(&args, trials);
        if let Some(dir) = std::env::var_os(REPORT_DIR_ENV) {
            if let Err(e) = write_reports(Path::new(&dir), &reports) {
                eprintln!("error: cannot write conformance reports to {dir:?}: {e}");
                std::process::exit(101);
            }
        }
        conclusion.exit()
    }

    fn trials(&self) -> (Vec<Trial>, Vec<Arc<Mutex<SuiteReport>>>) {
        let mut trials = Vec::new();
        let mut reports = Vec::new();
        for suite in &self.suites {
            let prepared = prepare::<C>(suite);
            let report = Arc::new(Mutex::new(prepared.report.clone()));
            reports.push(Arc::clone(&report));
            let name = prepared.suite.name.clone();
            if !prepared.report.found {
                let problems = prepared.report.problems.clone();
                let trial = Trial::test(name, move || {
                    if problems.is_empty() {
                        Ok(())
                    } else {
                        Err(Failed::from(problems.join("\n")))
                    }
                });
                trials.push(if suite.optional {
                    trial.with_kind("suite not found").with_ignored_flag(true)
                } else {
                    trial
                });
                continue;
            }
            let problems = prepared.report.problems.clone();
            trials.push(Trial::test(format!("{name}/{SUITE_TRIAL}"), move || {
                if problems.is_empty() {
                    Ok(())
                } else {
                    Err(Failed::from(problems.join("\n")))
                }
            }));
            let expected = Arc::new(prepared.expected);
            let suite_arc = Arc::new(prepared.suite);
            for entry in prepared.entries {
                let listed = expected.contains(&entry.id);
                let trial_name = format!("{name}/{}", entry.id);
                let check = Arc::clone(&self.check);
                let fixtures = Arc::clone(&prepared.fixtures);
                let expected = Arc::clone(&expected);
                let suite = Arc::clone(&suite_arc);
                let report = Arc::clone(&report);
                let trial = Trial::test(trial_name, move || {
                    let outcome = evaluate_entry(&*check, &entry, &fixtures, &expected, &suite);
                    let result = match &outcome {
                        Outcome::Passed | Outcome::ExpectedFailure(_) => Ok(()),
                        Outcome::Failed(m)
                        | Outcome::StaleExpectedFailure(m)
                        | Outcome::Unparsable(m) => Err(Failed::from(m)),
                    };
                    report
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .outcomes
                        .insert(entry.id.clone(), outcome);
                    result
                });
                trials.push(if listed {
                    trial.with_kind("xfail")
                } else {
                    trial
                });
            }
        }
        (trials, reports)
    }
}

fn prepare<C: Case>(suite: &Suite) -> Prepared<C> {
    let mut report = SuiteReport {
        suite: suite.name.clone(),
        dir: suite.dir.clone(),
        found: suite.dir.is_dir(),
        optional: suite.optional,
        ..SuiteReport::default()
    };
    let mut prepared = Prepared {
        suite: suite.clone(),
        entries: Vec::new(),
        fixtures: Arc::new(Vec::new()),
        expected: ExpectedFailures::default(),
        report: SuiteReport::default(),
    };
    if !report.found {
        if !suite.optional {
            report.problems.push(format!(
                "suite `{}`: directory {} not found{}",
                suite.name,
                suite.dir.display(),
                suite
                    .missing_hint
                    .as_deref()
                    .map(|hint| format!(": {hint}"))
                    .unwrap_or_default()
            ));
        }
        prepared.report = report;
        return prepared;
    }
    let files = match discover(&suite.dir) {
        Ok(files) => files,
        Err(e) => {
            report.problems.push(format!(
                "suite `{}`: cannot list {}: {e}",
                suite.name,
                suite.dir.display()
            ));
            prepared.report = report;
            return prepared;
        }
    };
    if files.is_empty() {
        report.problems.push(format!(
            "suite `{}`: no fixture files in {}",
            suite.name,
            suite.dir.display()
        ));
    }
    let mut fixtures = Vec::new();
    for (id, path) in files {
        let parsed = load_fixture::<C>(&path, &id).map(|fixture| {
            fixtures.push(fixture);
            fixtures.len() - 1
        });
        prepared.entries.push(Entry { id, parsed });
    }
    prepared.fixtures = Arc::new(fixtures);
    if let Some(path) = &suite.expected_failures {
        match ExpectedFailures::load(path) {
            Ok(list) => {
                let unknown: Vec<_> = list
                    .entries
                    .iter()
                    .filter(|(id, _)| !prepared.entries.iter().any(|e| &e.id == *id))
                    .map(|(id, line)| format!("{}:{line}: `{id}`", path.display()))
                    .collect();
                if !unknown.is_empty() {
                    report.problems.push(format!(
                        "expected-failures entries that name no fixture of suite `{}`:\n  {}",
                        suite.name,
                        unknown.join("\n  ")
                    ));
                }
                prepared.expected = list;
            }
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    prepared.report = report;
    prepared
}

fn evaluate_entry<C: Case>(
    check: &Check<C>,
    entry: &Entry,
    fixtures: &[Fixture<C>],
    expected: &ExpectedFailures,
    suite: &Suite,
) -> Outcome {
    let fixture = match &entry.parsed {
        Ok(index) => &fixtures[*index],
        Err(error) => return Outcome::Unparsable(format!("fixture does not parse: {error}")),
    };
    let result = panic::catch_unwind(AssertUnwindSafe(|| check(fixture, fixtures, suite)))
        .unwrap_or_else(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            Err(Failure::new(format!("the codec panicked: {message}")))
        });
    let header = format!(
        "fixture: {}\noperation: {}\n",
        fixture.path.display(),
        fixture.case.operation()
    );
    match (result, expected.entries.get(&fixture.id)) {
        (Ok(()), None) => Outcome::Passed,
        (Ok(()), Some(line)) => Outcome::StaleExpectedFailure(format!(
            "{header}the fixture now passes but is listed as an expected failure at {}:{line}; \
             remove the entry",
            suite
                .expected_failures
                .as_deref()
                .unwrap_or(Path::new("?"))
                .display()
        )),
        (Err(failure), None) => Outcome::Failed(format!("{header}{failure}")),
        (Err(failure), Some(_)) => Outcome::ExpectedFailure(format!("{header}{failure}")),
    }
}

fn write_reports(dir: &Path, reports: &[Arc<Mutex<SuiteReport>>]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for report in reports {
        let report = report.lock().unwrap_or_else(PoisonError::into_inner);
        let json = serde_json::to_string_pretty(&*report).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(format!("{}.json", report.suite)), json)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    enum Echo {
        #[serde(rename = "echo")]
        Echo { ok: bool },
    }

    impl Case for Echo {
        fn operation(&self) -> &'static str {
            "echo"
        }
    }

    fn write(dir: &Path, id: &str, ok: bool) {
        let body = format!(r#"{{"name":"{id}","description":"d","operation":"echo","ok":{ok}}}"#);
        std::fs::write(dir.join(format!("{id}.json")), body).unwrap();
    }

    /// The libtest path maps outcomes to trial results the same way `evaluate` does, names
    /// trials `<suite>/<id>`, and records what ran for the xtask report.
    #[test]
    fn trials_follow_outcomes_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "pass", true);
        write(dir.path(), "fail", false);
        write(dir.path(), "xfail", false);
        let list = dir.path().join("list");
        std::fs::write(&list, "xfail\n").unwrap();
        let harness = Harness::<Echo>::new(|fixture, _| match fixture.case {
            Echo::Echo { ok: true } => Ok(()),
            Echo::Echo { ok: false } => Err(Failure::new("not ok")),
        })
        .suite(Suite::new("s", dir.path()).expected_failures(&list))
        .suite(Suite::new("gone", dir.path().join("nope")).optional(true));

        // Keep the inner runs' output out of this test's own output.
        let log = dir
            .path()
            .join("libtest.log")
            .to_string_lossy()
            .into_owned();
        let (trials, reports) = harness.trials();
        let names: Vec<_> = trials.iter().map(|t| t.name().to_owned()).collect();
        assert_eq!(names, ["s/(suite)", "s/fail", "s/pass", "s/xfail", "gone"]);
        let args = Arguments {
            test_threads: Some(1),
            logfile: Some(log.clone()),
            ..Arguments::default()
        };
        let conclusion = libtest_mimic::run(&args, trials);
        assert_eq!(conclusion.num_passed, 3);
        assert_eq!(conclusion.num_failed, 1);
        assert_eq!(conclusion.num_ignored, 1);
        let report = reports[0].lock().unwrap();
        assert_eq!((report.passed(), report.failed()), (1, 1));
        assert_eq!(report.expected_failures(), 1);

        let (trials, reports) = harness.trials();
        let filtered = Arguments {
            filter: Some("s/pass".to_owned()),
            exact: true,
            logfile: Some(log),
            ..Arguments::default()
        };
        let conclusion = libtest_mimic::run(&filtered, trials);
        assert_eq!(conclusion.num_passed, 1);
        assert_eq!(conclusion.num_filtered_out, 4);
        assert_eq!(reports[0].lock().unwrap().fixtures(), 1);
    }
}
