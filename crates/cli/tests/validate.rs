//! `agentwire validate`.

use assert_cmd::Command;
use predicates::prelude::*;

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

fn ok(input: &str) {
    agentwire()
        .arg("validate")
        .write_stdin(input)
        .assert()
        .append_context("input", input.to_owned())
        .success()
        .stdout("ok\n")
        .stderr("");
}

fn invalid(args: &[&str], input: &str, report: &str) {
    agentwire()
        .arg("validate")
        .args(args)
        .write_stdin(input)
        .assert()
        .append_context("input", input.to_owned())
        .code(1)
        .stdout("")
        .stderr(format!("{report}\n"));
}

#[test]
fn valid_payloads_of_every_format() {
    ok("GCF profile=generic\n## [2]{id,name}\n1|Ada\n2|Bob\n");
    ok("GCF profile=graph symbols=1\n## targets\n@0 fn pkg.Foo 0.90 lsp\n");
    ok("GCX1 tool=t fields=a,b\nx\ty\n");
    ok("GCX1 tool=t fields=n rows=2 types=n\n1\n2\n");
    ok(
        "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=1 truncated=false\n\
        a.go::F\tfunction\tF\ta.go\t3\tfunc F()\n",
    );
    ok("items[2]: a,b\n");
    ok("{\"a\": [1, 2]}\n");
    ok("[1, 2]");
}

#[test]
fn errors_show_the_line_and_a_caret_under_the_offending_text() {
    invalid(
        &[],
        "GCF profile=graph symbols=1\n## targets\n@0 fn pkg.Foo nope lsp\n",
        "agentwire: standard input:3:15: not valid GCF: invalid_score: score \"nope\" is not a \
         decimal with exactly two fraction digits\n 3 | @0 fn pkg.Foo nope lsp\n   |               ^^^^",
    );
    invalid(
        &[],
        "{\"a\": [1, 2,, 3]}",
        "agentwire: standard input:1:13: not valid JSON: expected value\n 1 | {\"a\": [1, 2,, 3]}\n   |             ^",
    );
    invalid(
        &[],
        "GCX1 tool=t fields=a,b\nx\ty\tz\n",
        "agentwire: standard input:2:5: not valid GCX1: the row has 3 values but the header \
         declares 2 fields\n 2 | x\ty\tz\n   |  \t \t^",
    );
    invalid(
        &[],
        "a:\n  b: 1\n c: 2\n",
        "agentwire: standard input:3:1: not valid TOON: Indentation must be exact multiple of 2, \
         but found 1 spaces\n 3 |  c: 2\n   | ^",
    );
}

#[test]
fn layouts_and_type_meta_are_checked_too() {
    // Structurally fine, but `line` is an integer column of search_symbols.
    agentwire()
        .arg("validate")
        .write_stdin(
            "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=1 truncated=false\n\
             a\tfunction\tA\ta.go\tten\t\n",
        )
        .assert()
        .code(1)
        .stderr(
            "agentwire: standard input:2:19: not valid GCX1: field `line`: expected a JSON number, \
             found \"ten\"\n 2 | a\tfunction\tA\ta.go\tten\t\n   |  \t        \t \t    \t^^^\n",
        );
    // The type meta says numbers; `x` is not one.
    agentwire()
        .arg("validate")
        .write_stdin("GCX1 tool=t fields=n rows=1 types=n\nx\n")
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("agentwire: standard input:2:"));
}

#[test]
fn validate_accepts_exactly_what_decode_accepts() {
    for input in [
        "GCX1 tool=t fields=a rows=2\n1\n",
        "GCX1 tool=t fields=a,a\n1\t2\n",
        "GCX1 tool=t fields=a types=n\n1e400\n",
        "GCX1 tool=t fields=a\n1\nGCX1 tool=u fields=b\n2\n",
        "GCX1 tool=t.a fields=x\n1\nGCX1 tool=t.b fields=y\n2\n",
        "GCX1 tool=find_usages fields=from rows=1 total_edges=1\na\n",
        "GCX1 tool=t fields=a shape=record\n1\n2\n",
        "GCX1 tool=t fields=a\n\"\\\\é\"\n",
    ] {
        let decoded = agentwire()
            .arg("decode")
            .write_stdin(input)
            .output()
            .unwrap();
        let validated = agentwire()
            .arg("validate")
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(
            decoded.status.success(),
            validated.status.success(),
            "{input:?}: decode {decoded:?}, validate {validated:?}"
        );
    }
}

#[test]
fn the_format_can_be_forced_and_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("payload.txt");
    std::fs::write(&path, "id: 7\n").unwrap();
    agentwire()
        .arg("validate")
        .arg(&path)
        .assert()
        .success()
        .stdout("ok\n");
    agentwire()
        .args(["validate", "--from", "json"])
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(format!(
            "agentwire: {}:1:1: not valid JSON: expected value\n",
            path.display()
        )));
    agentwire()
        .args(["validate", "--from", "gcf"])
        .write_stdin("GCX1 tool=t fields=a\nx\n")
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "agentwire: standard input:1:1: not valid GCF: ",
        ));
}

#[test]
fn unreadable_input_and_usage_errors() {
    agentwire()
        .args(["validate", "/nonexistent/payload.gcf"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "agentwire: cannot read /nonexistent/payload.gcf",
        ));
    agentwire()
        .arg("validate")
        .write_stdin(&b"GCF profile=generic\na=\xff\n"[..])
        .assert()
        .code(1)
        // The decoder itself reads the bytes: its code, with the line and column.
        .stderr(predicate::str::contains(
            "standard input:2:3: not valid GCF: invalid_utf8",
        ));
    agentwire()
        .arg("validate")
        .write_stdin("")
        .assert()
        .code(1)
        .stderr("agentwire: standard input is empty: there is no payload to detect the format of (use --from)\n");
    agentwire()
        .args(["validate", "--from", "yaml"])
        .assert()
        .code(2)
        .stdout("");
    agentwire()
        .args(["validate", "a", "b"])
        .assert()
        .code(2)
        .stdout("");
}

#[test]
fn graph_payloads_are_read_a_line_at_a_time_and_still_show_the_line() {
    // Deltas and `unchanged` replies are graph payloads too.
    ok("GCF profile=graph delta=true base_root=a new_root=b\n## removed\nfn pkg.Gone\n");
    ok("GCF profile=graph unchanged=true pack_root=sha256:01 symbols=3\n");
    // The bad line comes after more than the decoder's read buffer (8 KiB): the report still
    // shows it.
    let mut input = String::from("GCF profile=graph tool=t\n## targets [?]\n");
    for i in 0..500 {
        input.push_str(&format!("@{i} fn pkg.Function{i} 0.50 lsp\n"));
    }
    input.push_str("@500 fn pkg.Last 0.5 lsp\n");
    for i in 0..500 {
        input.push_str(&format!("# comment {i}\n"));
    }
    invalid(
        &[],
        &input,
        "agentwire: standard input:503:18: not valid GCF: invalid_score: score \"0.5\" is not a \
         decimal with exactly two fraction digits\n 503 | @500 fn pkg.Last 0.5 lsp\n     |                  ^^^",
    );
}
