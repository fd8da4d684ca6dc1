//! `decode --stream` and `encode --stream` on ~110 MiB generated while the command reads it
//! (never stored): the peak resident memory of the command (its `ru_maxrss`, from `wait4`)
//! stays under 64 MB. No timing is measured.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const MIB: u64 = 1 << 20;

/// The command with `args`, `stdin` fed to it, run to its end.
fn agentwire(args: &[&str], stdin: impl Into<Vec<u8>>) -> assert_cmd::assert::Assert {
    assert_cmd::Command::cargo_bin("agentwire")
        .unwrap()
        .args(args)
        .write_stdin(stdin)
        .assert()
}

/// Runs the CLI with `args`, feeding it `lines` lines made by `line`, and returns (lines of
/// output, bytes fed, peak resident set in bytes, exit status).
#[allow(clippy::zombie_processes)] // waited for with wait4 below, for its rusage
fn run_streaming(
    args: &[&str],
    head: &str,
    lines: u64,
    line: impl Fn(u64) -> String + Send + 'static,
    tail: String,
) -> (u64, u64, u64, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let head = head.to_owned();
    let feeder = std::thread::spawn(move || {
        let mut fed = 0u64;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut stdin);
        let mut put = |s: &str| {
            fed += s.len() as u64;
            out.write_all(s.as_bytes()).is_ok()
        };
        if put(&head) {
            for i in 0..lines {
                if !put(&line(i)) {
                    break;
                }
            }
            put(&tail);
        }
        drop(out);
        fed
    });
    let stdout = child.stdout.take().unwrap();
    let mut count = 0u64;
    for l in BufReader::new(stdout).lines() {
        l.unwrap();
        count += 1;
    }
    let fed = feeder.join().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    #[allow(unsafe_code)]
    // SAFETY: an all-zero `rusage` is valid; `wait4` fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    #[allow(unsafe_code)]
    // SAFETY: `pid` is our child, not yet waited for; the pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (count, fed, usage.ru_maxrss as u64 * 1024, code)
}

#[test]
fn stream_commands_stay_under_64_mb_on_110_mib() {
    let filler = "x".repeat(900);
    let rows = 120_000u64;
    let f = filler.clone();
    let (out, fed, peak, code) = run_streaming(
        &["decode", "--stream", "--from", "gcf"],
        "GCF profile=generic\n## [?]{id,name,note}\n",
        rows,
        move |i| format!("{i}|name {i}|{f}\n"),
        format!("##! summary counts={rows}\n"),
    );
    eprintln!("decode --stream: {fed} bytes in, {out} rows out, peak RSS {peak} bytes");
    assert_eq!(code, 0);
    assert!(fed >= 100 * MIB);
    assert_eq!(out, rows);
    assert!(peak < 64_000_000, "peak {peak}");

    let f = filler.clone();
    let (out, fed, peak, code) = run_streaming(
        &["encode", "--to", "gcf", "--stream"],
        "",
        rows,
        move |i| format!("{{\"id\":{i},\"name\":\"name {i}\",\"note\":\"{f}\"}}\n"),
        String::new(),
    );
    eprintln!("encode --stream --to gcf: {fed} bytes in, {out} lines out, peak RSS {peak} bytes");
    assert_eq!(code, 0);
    assert!(fed >= 100 * MIB);
    assert_eq!(out, rows + 3);
    assert!(peak < 64_000_000, "peak {peak}");

    let f = filler.clone();
    let (out, fed, peak, code) = run_streaming(
        &["encode", "--to", "gcx1", "--stream"],
        "",
        rows,
        move |i| format!("{{\"id\":{i},\"name\":\"name {i}\",\"note\":\"{f}\"}}\n"),
        String::new(),
    );
    eprintln!("encode --stream --to gcx1: {fed} bytes in, {out} lines out, peak RSS {peak} bytes");
    assert_eq!(code, 0);
    assert!(fed >= 100 * MIB);
    assert!(out > rows);
    assert!(peak < 64_000_000, "peak {peak}");

    let f = filler.clone();
    let (out, fed, peak, code) = run_streaming(
        &["decode", "--stream", "--from", "gcf"],
        "GCF profile=generic\n## servers [?:]{key,id,note}\n",
        rows,
        move |i| format!("host-{i}|{i}|{f}\n"),
        format!("##! summary counts={rows}\n"),
    );
    eprintln!(
        "decode --stream (keyed map): {fed} bytes in, {out} entries out, peak RSS {peak} bytes"
    );
    assert_eq!(code, 0);
    assert!(fed >= 100 * MIB);
    assert_eq!(out, rows);
    assert!(peak < 64_000_000, "peak {peak}");

    let (out, fed, peak, code) = run_streaming(
        &["decode", "--stream", "--from", "gcx1"],
        "GCX1 tool=t fields=id,note\n",
        rows,
        move |i| format!("{i}\t{}\n", "y".repeat(900)),
        String::new(),
    );
    eprintln!("decode --stream --from gcx1: {fed} bytes in, {out} rows out, peak RSS {peak} bytes");
    assert_eq!(code, 0);
    assert_eq!(out, rows);
    assert!(peak < 64_000_000, "peak {peak}");
}

#[test]
fn stream_round_trip_and_errors() {
    let input = "{\"id\":1,\"tags\":[\"a\"]}\n\n{\"id\":2,\"tags\":[]}\n";
    let gcf = agentwire(&["encode", "--to", "gcf", "--stream"], input)
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(gcf).unwrap();
    assert!(
        text.contains("## [?]{id,tags}") && text.ends_with("##! summary counts=2\n"),
        "{text}"
    );
    agentwire(&["decode", "--stream"], text)
        .success()
        .stdout("{\"id\":1,\"tags\":[\"a\"]}\n{\"id\":2,\"tags\":[]}\n");
    // Not a table: a clear error.
    agentwire(&["decode", "--stream"], "GCF profile=generic\na=1\n")
        .failure()
        .stderr(predicates::str::contains("not_a_table"));
    // A keyed map: one `{"key", "value"}` line per entry; a repeated key stops it.
    agentwire(
        &["decode", "--stream"],
        "GCF profile=generic\n## hosts [?:]{key,cpu}\nweb|1\n\"db 2\"|2\n##! summary counts=2\n",
    )
    .success()
    .stdout("{\"key\":\"web\",\"value\":{\"cpu\":1}}\n{\"key\":\"db 2\",\"value\":{\"cpu\":2}}\n");
    agentwire(
        &["decode", "--stream"],
        "GCF profile=generic\n## [3:]{key,cpu}\nweb|1\ndb|2\nweb|3\n",
    )
    .failure()
    .stdout("{\"key\":\"web\",\"value\":{\"cpu\":1}}\n{\"key\":\"db\",\"value\":{\"cpu\":2}}\n")
    .stderr(predicates::str::contains(
        "duplicate_key at line 5, column 1",
    ));
    // A truncated stream: rows written, then the error.
    agentwire(
        &["decode", "--stream"],
        "GCF profile=generic\n## [?]{a}\n1\n",
    )
    .failure()
    .stdout("{\"a\":1}\n")
    .stderr(predicates::str::contains("truncated_input"));
}

#[test]
fn limits_agree_between_encode_and_decode() {
    let big = format!("{{\"s\":\"{}\"}}", "x".repeat(2 << 20));
    agentwire(&["encode", "--to", "gcf"], big.clone())
        .failure()
        .stderr(predicates::str::contains("--max-line-length"));
    let text = agentwire(
        &["encode", "--to", "gcf", "--max-line-length", "3000000"],
        big,
    )
    .success()
    .get_output()
    .stdout
    .clone();
    agentwire(&["decode"], text.clone())
        .failure()
        .stderr(predicates::str::contains("limit_exceeded"));
    agentwire(&["decode", "--max-line-length", "3000000"], text.clone()).success();
    agentwire(&["validate", "--max-line-length", "3000000"], text)
        .success()
        .stdout("ok\n");
    // Depth: a flag for each limit.
    agentwire(
        &["decode", "--max-depth", "1"],
        "GCF profile=generic\n## a\n  b=1\n",
    )
    .failure()
    .stderr(predicates::str::contains("limit_exceeded"));
}

#[test]
fn keyed_maps_stream_both_ways() {
    let entries = "{\"key\":\"web\",\"value\":{\"cpu\":1,\"tags\":[\"a\"]}}\n\
                   {\"key\":\"db 2\",\"value\":{\"cpu\":2,\"tags\":[]}}\n";
    let gcf = agentwire(&["encode", "--to", "gcf", "--stream", "--keyed"], entries)
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(gcf).unwrap();
    assert!(
        text.starts_with("GCF profile=generic\n## [?:]{key,cpu,tags}\n")
            && text.ends_with("##! summary counts=2\n"),
        "{text}"
    );
    // Back, entry by entry: the same lines.
    agentwire(&["decode", "--stream"], text.clone())
        .success()
        .stdout(entries);
    // And whole: the map.
    agentwire(&["decode"], text)
        .success()
        .stdout(predicates::str::contains(
            "\"db 2\":{\"cpu\":2,\"tags\":[]}",
        ));
    // A repeated key, or a line that is no entry: errors.
    agentwire(
        &["encode", "--to", "gcf", "--stream", "--keyed"],
        "{\"key\":\"a\",\"value\":{\"x\":1}}\n{\"key\":\"a\",\"value\":{\"x\":2}}\n",
    )
    .failure()
    .stderr(predicates::str::contains("line 2: duplicate_key"));
    agentwire(
        &["encode", "--to", "gcf", "--stream", "--keyed"],
        "{\"id\":1}\n",
    )
    .failure()
    .stderr(predicates::str::contains(
        "line 1 of standard input is not an entry",
    ));
}

#[test]
fn v3_1_streams() {
    // A field named `a>b` is a plain column in v3.1 (the current spec would read a path).
    let input = "{\"id\":1,\"a>b\":\"x\",\"sub\":{\"k\":1}}\n{\"id\":2,\"a>b\":\"y\",\"sub\":{}}\n";
    let gcf = agentwire(
        &["encode", "--to", "gcf", "--stream", "--spec", "3.1"],
        input,
    )
    .success()
    .get_output()
    .stdout
    .clone();
    let text = String::from_utf8(gcf).unwrap();
    assert_eq!(
        text,
        "GCF profile=generic\n## [?]{id,\"a>b\",sub}\n@0 1|x|^\n.sub {}\n    k=1\n\
         @1 2|y|^\n.sub {}\n##! summary counts=2\n"
    );
    agentwire(&["decode", "--stream", "--spec", "3.1"], text.clone())
        .success()
        .stdout(input);
    agentwire(&["decode", "--spec", "3.1"], text)
        .success()
        .stdout(
            "[{\"id\":1,\"a>b\":\"x\",\"sub\":{\"k\":1}},{\"id\":2,\"a>b\":\"y\",\"sub\":{}}]\n",
        );
    // The current spec refuses that column when streaming (it cannot check the later rows).
    agentwire(&["encode", "--to", "gcf", "--stream"], input)
        .failure()
        .stderr(predicates::str::contains("flattened path"));
    // What v3.1 or a stream cannot do: usage errors (exit 2).
    for (flags, says) in [
        (&["--keyed", "--spec", "3.1"][..], "not with --spec 3.1"),
        (&["--fewest-tokens"][..], "not with --stream"),
        (&["--graph"][..], "not with --graph"),
    ] {
        let args = [&["encode", "--to", "gcf", "--stream"][..], flags].concat();
        agentwire(&args, "{\"key\":\"a\",\"value\":{\"x\":1}}\n")
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}
