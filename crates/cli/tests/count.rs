//! `agentwire count`.

use assert_cmd::Command;
use predicates::prelude::*;

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

#[test]
fn counts_stdin_with_each_tokenizer() {
    agentwire()
        .arg("count")
        .write_stdin("tiktoken is great!")
        .assert()
        .success()
        .stdout("6\n");
    agentwire()
        .args(["count", "--tokenizer", "o200k_base", "-"])
        .write_stdin(r#"{"id":1,"name":"Alice","tags":["a","b"]}"#)
        .assert()
        .success()
        .stdout("16\n");
}

#[test]
fn counts_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.txt");
    std::fs::write(&path, "hello world").unwrap();
    agentwire()
        .arg("count")
        .arg(&path)
        .assert()
        .success()
        .stdout("2\n");
}

#[test]
fn a_missing_file_is_a_one_line_error_with_status_1() {
    agentwire()
        .args(["count", "/nonexistent/agentwire.txt"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "agentwire: cannot read /nonexistent/agentwire.txt",
        ))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
}

#[test]
fn invalid_utf8_is_rejected_with_its_offset() {
    agentwire()
        .arg("count")
        .write_stdin(&b"ok\xff"[..])
        .assert()
        .code(1)
        .stderr("agentwire: standard input is not valid UTF-8 (invalid byte at offset 2)\n");
}

#[test]
fn usage_errors_exit_with_2() {
    agentwire()
        .args(["count", "--tokenizer", "gpt2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown tokenizer `gpt2`"));
    agentwire().arg("frobnicate").assert().code(2);
    agentwire().assert().code(2);
}

#[test]
fn help_and_version_succeed() {
    agentwire()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("count"));
    agentwire()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("agentwire "));
}
