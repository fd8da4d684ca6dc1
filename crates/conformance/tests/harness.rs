//! The runner's own guarantees: an unlisted failure, a stale expected failure, an unparsable
//! fixture, a missing required suite and an expected-failures entry naming no fixture each make
//! the run fail; expected failures and missing optional suites do not.

use std::fs;
use std::path::Path;

use agentwire_conformance::{Case, Failure, Harness, Outcome, Report, Suite};
use serde::Deserialize;

/// A toy family: `reverse` checks that reversing `input` gives `expected`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
enum ReverseCase {
    #[serde(rename = "reverse")]
    Reverse { input: String, expected: String },
}

impl Case for ReverseCase {
    fn operation(&self) -> &'static str {
        "reverse"
    }
}

fn harness() -> Harness<ReverseCase> {
    Harness::new(|fixture, _suite| {
        let ReverseCase::Reverse { input, expected } = &fixture.case;
        let actual: String = input.chars().rev().collect();
        if actual == *expected {
            Ok(())
        } else {
            Err(Failure::text_mismatch("reverse", expected, &actual))
        }
    })
}

fn fixture(dir: &Path, id: &str, input: &str, expected: &str) {
    let path = dir.join(format!("{id}.json"));
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let body = serde_json::json!({
        "name": id, "description": "test", "operation": "reverse",
        "input": input, "expected": expected,
    });
    fs::write(path, body.to_string()).unwrap();
}

/// A suite with two passing fixtures and one failing fixture (`b/003_bad`).
fn suite_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "a/001_ok", "abc", "cba");
    fixture(dir.path(), "a/002_ok", "", "");
    fixture(dir.path(), "b/003_bad", "abc", "abc");
    dir
}

fn run(dir: &Path, expected_failures: Option<&str>) -> Report {
    let mut suite = Suite::new("toy", dir);
    if let Some(list) = expected_failures {
        let path = dir.join("toy.expected-failures");
        fs::write(&path, list).unwrap();
        suite = suite.expected_failures(path);
    }
    harness().suite(suite).evaluate()
}

#[test]
fn an_unlisted_failure_fails_the_run() {
    let dir = suite_dir();
    let report = run(dir.path(), None);
    assert!(!report.is_success());
    let suite = &report.suites[0];
    assert_eq!(
        (suite.fixtures(), suite.passed(), suite.failed()),
        (3, 2, 1)
    );
    let Outcome::Failed(message) = &suite.outcomes["b/003_bad"] else {
        panic!("expected a failure: {:?}", suite.outcomes["b/003_bad"]);
    };
    // Path, operation, and expected against actual with a diff.
    assert!(message.contains("003_bad.json"), "{message}");
    assert!(message.contains("operation: reverse"), "{message}");
    assert!(
        message.contains("-abc") && message.contains("+cba"),
        "{message}"
    );
}

#[test]
fn a_listed_failure_lets_the_run_pass() {
    let dir = suite_dir();
    let report = run(dir.path(), Some("# known\nb/003_bad # not yet\n"));
    assert!(report.is_success(), "{report:?}");
    let suite = &report.suites[0];
    assert_eq!(suite.expected_failures(), 1);
    assert!(matches!(
        suite.outcomes["b/003_bad"],
        Outcome::ExpectedFailure(_)
    ));
}

#[test]
fn a_stale_expected_failure_fails_the_run() {
    let dir = suite_dir();
    let report = run(dir.path(), Some("b/003_bad\na/001_ok\n"));
    assert!(!report.is_success());
    let Outcome::StaleExpectedFailure(message) = &report.suites[0].outcomes["a/001_ok"] else {
        panic!("expected a stale entry");
    };
    assert!(message.contains("remove the entry"), "{message}");
    assert!(message.contains("toy.expected-failures:2"), "{message}");
}

#[test]
fn an_entry_naming_no_fixture_fails_the_run() {
    let dir = suite_dir();
    let report = run(dir.path(), Some("b/003_bad\nc/404_gone\n"));
    assert!(!report.is_success());
    let problems = report.suites[0].problems.join("\n");
    assert!(problems.contains("c/404_gone"), "{problems}");
}

#[test]
fn a_duplicate_entry_fails_the_run() {
    let dir = suite_dir();
    let report = run(dir.path(), Some("b/003_bad\nb/003_bad\n"));
    assert!(!report.is_success());
    assert!(report.suites[0].problems[0].contains("already listed"));
}

#[test]
fn an_unparsable_fixture_fails_the_run_even_when_listed() {
    let dir = suite_dir();
    fs::write(dir.path().join("a/004_broken.json"), "{ not json").unwrap();
    fs::write(
        dir.path().join("a/005_unknown_field.json"),
        r#"{"name": "x", "description": "d", "operation": "reverse",
            "input": "a", "expected": "a", "surprise": 1}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("a/006_unknown_operation.json"),
        r#"{"name": "x", "description": "d", "operation": "rotate", "input": "a"}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("a/007_no_description.json"),
        r#"{"name": "x", "operation": "reverse", "input": "a", "expected": "a"}"#,
    )
    .unwrap();
    let report = run(
        dir.path(),
        Some("b/003_bad\na/004_broken\na/005_unknown_field\n"),
    );
    assert!(!report.is_success());
    let outcomes = &report.suites[0].outcomes;
    for (id, needle) in [
        ("a/004_broken", "not a JSON object"),
        ("a/005_unknown_field", "unknown field `surprise`"),
        ("a/006_unknown_operation", "unknown variant `rotate`"),
        ("a/007_no_description", "missing field `description`"),
    ] {
        let Outcome::Unparsable(message) = &outcomes[id] else {
            panic!("{id}: expected unparsable, got {:?}", outcomes[id]);
        };
        assert!(message.contains(needle), "{id}: {message}");
    }
}

#[test]
fn a_missing_required_suite_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let report = harness().suite(Suite::new("toy", &missing)).evaluate();
    assert!(!report.is_success());
    assert!(!report.suites[0].found);
    assert!(report.suites[0].problems[0].contains("not found"));
}

#[test]
fn a_missing_optional_suite_is_reported_but_passes() {
    let dir = tempfile::tempdir().unwrap();
    let report = harness()
        .suite(Suite::new("toy", dir.path().join("nope")).optional(true))
        .evaluate();
    assert!(report.is_success());
    assert!(!report.suites[0].found);
    assert_eq!(report.suites[0].fixtures(), 0);
}

#[test]
fn an_empty_suite_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let report = harness().suite(Suite::new("toy", dir.path())).evaluate();
    assert!(!report.is_success());
    assert!(report.suites[0].problems[0].contains("no fixture files"));
}

#[test]
fn a_panicking_codec_is_a_failure_not_a_crash() {
    let dir = suite_dir();
    let report = Harness::<ReverseCase>::new(|_, _| panic!("boom"))
        .suite(Suite::new("toy", dir.path()))
        .evaluate();
    let Outcome::Failed(message) = &report.suites[0].outcomes["a/001_ok"] else {
        panic!("expected a failure");
    };
    assert!(message.contains("the codec panicked: boom"), "{message}");
}

#[test]
fn non_json_files_are_not_fixtures() {
    let dir = suite_dir();
    fs::write(dir.path().join("LICENSE"), "MIT").unwrap();
    fs::write(dir.path().join("SOURCE.md"), "# provenance").unwrap();
    let report = run(dir.path(), Some("b/003_bad\n"));
    assert!(report.is_success(), "{report:?}");
    assert_eq!(report.suites[0].fixtures(), 3);
}

#[test]
fn gcf_fixtures_keep_number_lexemes_and_member_order() {
    use agentwire_conformance::gcf::GcfCase;
    use agentwire_conformance::load_fixture;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    fs::write(
        &path,
        r#"{"name": "n", "description": "d", "operation": "encode",
            "input": {"z": 100000000000000000000, "a": -0, "m": 6.022E+23},
            "expected": "GCF profile=generic\n"}"#,
    )
    .unwrap();
    let fixture = load_fixture::<GcfCase>(&path, "big").unwrap();
    let GcfCase::Encode { input, .. } = &fixture.case else {
        panic!("expected an encode case");
    };
    // Exact values, signs and member order survive; serde_json writes the exponent marker in
    // lower case.
    assert_eq!(
        input.to_string(),
        r#"{"z":100000000000000000000,"a":-0,"m":6.022e+23}"#
    );
}

#[test]
fn gcf_delta_fixtures_need_one_complete_form() {
    use agentwire_conformance::gcf::GcfCase;
    use agentwire_conformance::load_fixture;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("delta.json");
    fs::write(
        &path,
        r#"{"name": "n", "description": "d", "operation": "delta",
            "input": "GCF profile=graph delta=true\n", "base_root": "sha256:00"}"#,
    )
    .unwrap();
    let error = load_fixture::<GcfCase>(&path, "delta").unwrap_err();
    assert!(error.message.contains("either"), "{error}");
}
