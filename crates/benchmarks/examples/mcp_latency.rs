//! The latency `agentwire mcp` adds to a `tools/call` whose result is 100 KB of JSON.
//!
//! ```text
//! mcp_latency --agentwire PATH [--calls N]   measure; print the markdown section
//! mcp_latency serve                          the upstream: answers every tools/call with the
//!                                            same 100 KB JSON text, at once
//! ```
//!
//! Three connections are open at once: the upstream directly, through `agentwire mcp
//! --format json` (forwarding only) and through `agentwire mcp` (`auto`: re-encoding). Their
//! calls are interleaved round by round, so that load on the machine falls on all three alike;
//! each call is timed from the request written to the response read. The encoding's own cost
//! is what the proxy records per call in its `--stats` file (`encode_ms`: parsing the text,
//! encoding every candidate, counting their tokens, reading the winner back). `cargo xtask
//! bench mcp` runs this and writes the section of docs/benchmarks.md.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The result's text: `rows(n)` as compact JSON, `n` the first to reach 100 KB.
fn payload() -> String {
    let mut n = 100;
    loop {
        let text = serde_json::to_string(&agentwire_benchmarks::rows(n)).unwrap();
        if text.len() >= 100_000 {
            return text;
        }
        n += 50;
    }
}

fn serve() {
    let text = payload();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id") else {
            continue;
        };
        let result = match message["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "latency-upstream", "version": "1"},
            }),
            Some("tools/call") => json!({"content": [{"type": "text", "text": text}]}),
            _ => json!({}),
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        let mut bytes = serde_json::to_vec(&answer).unwrap();
        bytes.push(b'\n');
        if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}

struct Connection {
    name: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    times: Vec<Duration>,
}

impl Connection {
    fn open(name: &'static str, program: &str, args: &[String]) -> Connection {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        let mut connection = Connection {
            name,
            child,
            stdin,
            stdout,
            next_id: 1,
            times: Vec::new(),
        };
        connection.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mcp_latency", "version": "1"}}),
        );
        connection.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        connection
    }

    fn write(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).unwrap();
        bytes.push(b'\n');
        self.stdin.write_all(&bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// One request; its answer's text length and the round-trip time.
    fn call(&mut self, method: &str, params: Value) -> (usize, Duration) {
        let id = self.next_id;
        self.next_id += 1;
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        request["params"] = params;
        let mut bytes = serde_json::to_vec(&request).unwrap();
        bytes.push(b'\n');
        let mut line = String::new();
        let started = Instant::now();
        self.stdin.write_all(&bytes).unwrap();
        self.stdin.flush().unwrap();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "{} closed its output", self.name);
            // Skip notifications; the answer is the line with our id.
            if line.contains("\"id\"") {
                break;
            }
        }
        let elapsed = started.elapsed();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id, "{}: {line}", self.name);
        assert!(answer.get("result").is_some(), "{}: {line}", self.name);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .map_or(0, str::len);
        (text, elapsed)
    }

    fn tool_call(&mut self) -> usize {
        let (len, elapsed) = self.call("tools/call", json!({"name": "rows", "arguments": {}}));
        self.times.push(elapsed);
        len
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn millis(times: &[Duration]) -> Vec<f64> {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    ms
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve();
        return;
    }
    let mut agentwire = None;
    let mut calls = 200usize;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--agentwire" => agentwire = rest.next().cloned(),
            "--calls" => calls = rest.next().and_then(|n| n.parse().ok()).expect("--calls N"),
            other => panic!("unknown argument {other}"),
        }
    }
    let agentwire = agentwire.expect("--agentwire PATH");
    let me = std::env::current_exe().unwrap().display().to_string();
    let stats = std::env::temp_dir().join(format!("mcp_latency-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&stats);
    let upstream = [me.clone(), "serve".to_owned()];
    let proxy = |options: &[&str]| -> Vec<String> {
        let mut args = vec!["mcp".to_owned()];
        args.extend(options.iter().map(|s| (*s).to_owned()));
        args.push("--".to_owned());
        args.extend(upstream.iter().cloned());
        args
    };
    let mut connections = [
        Connection::open("direct", &me, &["serve".to_owned()]),
        Connection::open("json", &agentwire, &proxy(&["--format", "json"])),
        Connection::open(
            "auto",
            &agentwire,
            &proxy(&["--stats", stats.to_str().unwrap()]),
        ),
    ];
    // Warm up: tokenizer tables, allocator, caches.
    let mut lengths = Vec::new();
    for connection in &mut connections {
        for _ in 0..5 {
            lengths.push(connection.tool_call());
        }
        connection.times.clear();
    }
    for _ in 0..calls {
        for connection in &mut connections {
            connection.tool_call();
        }
    }
    let encode: Vec<f64> = {
        let text = std::fs::read_to_string(&stats).unwrap();
        let mut ms: Vec<f64> = text
            .lines()
            .skip(5)
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["encode_ms"]
                    .as_f64()
                    .unwrap()
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        ms
    };
    let formats: std::collections::BTreeSet<String> = std::fs::read_to_string(&stats)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["format"]
                .as_str()
                .unwrap_or("none")
                .to_owned()
        })
        .collect();
    let _ = std::fs::remove_file(&stats);
    let [direct, json, auto] = connections.map(|mut c| {
        let times = millis(&c.times);
        drop(c.stdin);
        let _ = c.child.wait();
        times
    });
    let both = |t: &[f64]| (percentile(t, 50.0), percentile(t, 99.0));
    let (d50, d99) = both(&direct);
    let (j50, j99) = both(&json);
    let (a50, a99) = both(&auto);
    let (e50, e99) = both(&encode);
    let payload_len = lengths[0];
    let encoded_len = lengths[lengths.len() - 1];
    println!("| connection | p50 | p99 | added at p50 |");
    println!("|---|--:|--:|--:|");
    println!("| direct | {d50:.2} ms | {d99:.2} ms | — |");
    println!(
        "| `agentwire mcp --format json` (forwarding only) | {j50:.2} ms | {j99:.2} ms | {:+.2} ms |",
        j50 - d50
    );
    println!(
        "| `agentwire mcp` (auto: re-encoding) | {a50:.2} ms | {a99:.2} ms | {:+.2} ms |",
        a50 - d50
    );
    println!("| the encoding itself (the proxy's `encode_ms`) | {e50:.2} ms | {e99:.2} ms | — |");
    println!();
    println!(
        "- Added beyond the encoding at p50: **{:+.2} ms** with re-encoding (auto p50 − direct \
         p50 − encoding p50), **{:+.2} ms** forwarding only; target ≤ 2 ms.",
        a50 - d50 - e50,
        j50 - d50
    );
    println!(
        "- {calls} calls per connection, interleaved; result text {payload_len} bytes of compact \
         JSON ({} rows of `agentwire_benchmarks::rows`), sent by auto as {} ({encoded_len} bytes).",
        rows_in(payload_len),
        formats.into_iter().collect::<Vec<_>>().join(", ")
    );
}

/// How many rows the payload has (the generator's step), for the notes.
fn rows_in(len: usize) -> usize {
    let mut n = 100;
    loop {
        let text = serde_json::to_string(&agentwire_benchmarks::rows(n)).unwrap();
        if text.len() >= len {
            return n;
        }
        n += 50;
    }
}
