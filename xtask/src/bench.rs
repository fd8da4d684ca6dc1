//! `cargo xtask bench [FILTER]`.
//!
//! Without a filter: runs the cross-format bench (crates/benchmarks/benches/formats.rs),
//! prints a table of throughputs (each benchmark's fastest sample) with each codec's ratio to
//! serde_json on the same data and operation, and writes docs/benchmarks.md with the numbers, the machine and the
//! date. With a filter: runs the benchmarks of crates/benchmarks whose names match (all but
//! the cross-format one, which needs the `anchors` feature), with serde_json's default `Value`
//! (BTreeMap-backed), and prints divan's own output.

use std::fmt::Write as _;
use std::fs;
use std::process::{Command, Stdio};

use crate::{cargo, root, run_checked, TaskError};

/// Samples per benchmark: enough for a stable fastest sample on a shared 2-core machine
/// without running for long (the slowest codecs take tens of milliseconds per sample on the
/// large sets).
const SAMPLES: &str = "50";

/// The codecs of the table, in column order: (bench name, column title).
const CODECS: &[(&str, &str)] = &[
    ("serde_json", "serde_json"),
    ("gcf_generic", "GCF generic"),
    ("gcf_graph", "GCF graph"),
    ("gcx1", "GCX1"),
    ("gcx1_layout", "GCX1 layouts"),
    ("gcf_3_1_0", "gcf 3.1.0"),
    ("gcf_3_1_0_graph", "gcf 3.1.0 graph"),
    ("toon_format", "toon-format"),
];

const SETS: &[(&str, &str)] = &[
    ("corpus", "corpus (26 files)"),
    ("code_intel", "code intelligence (9 files)"),
    ("rows_10k", "rows(10 000)"),
    ("orders_2k", "orders(2 000)"),
    ("graph_500", "graph(500, 200)"),
];

/// The first line of docs/benchmarks.md's MCP section: `cargo xtask bench mcp` writes the
/// file's tail from this line on, and `cargo xtask bench` keeps it when it writes the rest.
const MCP_SECTION: &str = "<!-- The agentwire-mcp section: written by `cargo xtask bench mcp`, \
                           kept by `cargo xtask bench`. -->";

pub(crate) fn run(args: &[String]) -> Result<(), TaskError> {
    match args {
        [] => table(),
        [mcp] if mcp == "mcp" => mcp_latency(),
        [filter] => {
            let mut command = cargo();
            command.args(["bench", "--package", "agentwire-benchmarks", "--", filter]);
            run_checked(&mut command)
        }
        _ => Err(format!("usage: cargo xtask bench [FILTER], not {args:?}").into()),
    }
}

/// One measured benchmark: operation, codec, data set and bytes per second of its fastest
/// sample.
///
/// The fastest sample, not the median: on a machine shared with other work, interference only
/// ever adds time, so the fastest sample is the stable estimate of what the code costs (the
/// medians are in divan's output, which docs/benchmarks.md keeps).
#[derive(Debug, Clone, PartialEq)]
struct Figure {
    op: String,
    codec: String,
    set: String,
    fastest: f64,
}

fn table() -> Result<(), TaskError> {
    let mut command = cargo();
    command
        .args([
            "bench",
            "--package",
            "agentwire-benchmarks",
            "--bench",
            "formats",
            "--features",
            "anchors",
            "--",
            "--sample-count",
            SAMPLES,
            "--color",
            "never",
        ])
        .stderr(Stdio::inherit());
    eprintln!(
        "$ cargo bench -p agentwire-benchmarks --bench formats --features anchors -- --sample-count {SAMPLES}"
    );
    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo bench: {e}"))?;
    let raw = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        print!("{raw}");
        return Err(format!("cargo bench failed ({})", output.status).into());
    }
    let figures = parse(&raw);
    if figures.is_empty() {
        print!("{raw}");
        return Err("no benchmark figures in divan's output".into());
    }
    let markdown = render(&figures);
    print!("{markdown}");
    let mut doc = document(&markdown, &raw);
    let path = root().join("docs/benchmarks.md");
    // The GCF section (by hand) and the MCP section (by `cargo xtask bench mcp`): keep them.
    let existing = fs::read_to_string(&path).unwrap_or_default();
    if let Some(at) = existing
        .find(GCF_SECTION)
        .or_else(|| existing.find(MCP_SECTION))
    {
        doc.push('\n');
        doc.push_str(&existing[at..]);
    }
    fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote docs/benchmarks.md");
    Ok(())
}

/// The first line of docs/benchmarks.md's section on GCF against serde_json (written by hand
/// from `gcf_vs_json` and `gcf_profile` runs, before the MCP section): `cargo xtask bench` keeps
/// it, and `cargo xtask bench mcp` keeps everything before the MCP section.
const GCF_SECTION: &str =
    "<!-- The GCF section: measured with crates/benchmarks/examples/gcf_vs_json.rs \
                           and gcf_profile.rs, kept by `cargo xtask bench`. -->";

/// `cargo xtask bench mcp`: builds the command and the latency client in release, runs the
/// client (crates/benchmarks/examples/mcp_latency.rs) and writes its table as the MCP section
/// of docs/benchmarks.md.
fn mcp_latency() -> Result<(), TaskError> {
    run_checked(cargo().args(["build", "--release", "--package", "agentwire"]))?;
    run_checked(cargo().args([
        "build",
        "--release",
        "--package",
        "agentwire-benchmarks",
        "--example",
        "mcp_latency",
    ]))?;
    let release = crate::target_dir().join("release");
    let client = release.join("examples/mcp_latency");
    let load = fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    let agentwire = release.join("agentwire");
    eprintln!(
        "$ {} --agentwire {} --calls 200",
        client.display(),
        agentwire.display()
    );
    let output = Command::new(&client)
        .arg("--agentwire")
        .arg(&agentwire)
        .args(["--calls", "200"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", client.display()))?;
    if !output.status.success() {
        return Err(format!("{} failed ({})", client.display(), output.status).into());
    }
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{table}");
    let section = format!(
        "{MCP_SECTION}\n\
         ## agentwire mcp: latency a tools/call gains through the proxy\n\
         \n\
         Measured {date} on {machine} (load average {load} when it started), release \
         builds, by `cargo xtask bench mcp` \
         (crates/benchmarks/examples/mcp_latency.rs). An upstream answers every `tools/call` at \
         once with the same 100 KB JSON text; a client times each call (request written to \
         response read) on three connections open at once, their calls interleaved so that load \
         on the machine falls on all three alike: the upstream directly, through \
         `agentwire mcp --format json` (forwarding only, results untouched) and through \
         `agentwire mcp` (`auto`: the text parsed, encoded in every candidate format, each \
         counted in o200k tokens, the cheapest read back and sent). The encoding's own cost is \
         what the proxy records per call in its `--stats` file (`encode_ms`).\n\
         \n\
         {table}",
        date = today(),
        machine = machine(),
    );
    let path = root().join("docs/benchmarks.md");
    let existing = fs::read_to_string(&path).unwrap_or_default();
    let head = existing
        .find(MCP_SECTION)
        .map_or(existing.as_str(), |at| &existing[..at]);
    let mut doc = head.trim_end().to_owned();
    if !doc.is_empty() {
        doc.push_str("\n\n");
    }
    doc.push_str(&section);
    fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote the MCP section of docs/benchmarks.md");
    Ok(())
}

/// Divan's tree output: `├─ encode`, `│  ├─ gcf_generic`, `│  │  ├─ corpus  <times>` and,
/// on the next line, the throughputs (fastest │ slowest │ median │ mean).
fn parse(output: &str) -> Vec<Figure> {
    let mut path: Vec<String> = Vec::new();
    let mut pending: Option<(String, String, String)> = None;
    let mut figures = Vec::new();
    for line in output.lines() {
        let rest = line.trim_start_matches(['│', '├', '╰', '─', ' ']);
        let prefix = line.chars().count() - rest.chars().count();
        if rest.is_empty() {
            continue;
        }
        let columns: Vec<&str> = rest.split(" │ ").map(str::trim).collect();
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            // A throughput line belongs to the benchmark line before it.
            if let (Some((op, codec, set)), Some(fastest)) = (pending.take(), columns.first()) {
                if let Some(fastest) = bytes_per_second(fastest) {
                    figures.push(Figure {
                        op,
                        codec,
                        set,
                        fastest,
                    });
                }
            }
            continue;
        }
        let name = columns[0]
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        let depth = prefix / 3;
        if depth == 0 {
            continue;
        }
        path.truncate(depth - 1);
        path.push(name);
        pending = match path.as_slice() {
            [op, codec, set] => Some((op.clone(), codec.clone(), set.clone())),
            _ => None,
        };
    }
    figures
}

/// `280.5 MB/s` as bytes per second (divan writes decimal units by default).
fn bytes_per_second(text: &str) -> Option<f64> {
    let (number, unit) = text.split_once(' ')?;
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "B/s" => 1.0,
        "KB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        "TB/s" => 1e12,
        _ => return None,
    };
    Some(number * scale)
}

fn mb(bytes_per_second: f64) -> String {
    let mb = bytes_per_second / 1e6;
    if mb >= 100.0 {
        format!("{mb:.0}")
    } else {
        format!("{mb:.1}")
    }
}

/// The table: one row per operation and data set, one column per codec, each cell the
/// fastest sample's MB/s (compact-JSON bytes) and its ratio to serde_json.
fn render(figures: &[Figure]) -> String {
    let mut out = String::from("| operation | data | ");
    out.push_str(
        &CODECS
            .iter()
            .map(|(_, title)| *title)
            .collect::<Vec<_>>()
            .join(" | "),
    );
    out.push_str(" |\n|---|---|");
    out.push_str(&"--:|".repeat(CODECS.len()));
    out.push('\n');
    for op in ["encode", "decode"] {
        for (set, set_title) in SETS {
            let find = |codec: &str| {
                figures
                    .iter()
                    .find(|f| f.op == op && f.codec == codec && f.set == *set)
                    .map(|f| f.fastest)
            };
            let Some(baseline) = find("serde_json") else {
                continue;
            };
            let _ = write!(out, "| {op} | {set_title} |");
            for (codec, _) in CODECS {
                let cell = match find(codec) {
                    Some(speed) if *codec == "serde_json" => format!("{} MB/s", mb(speed)),
                    Some(speed) => format!("{} MB/s ({:.2}×)", mb(speed), speed / baseline),
                    None => "—".to_owned(),
                };
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
    }
    out
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The machine: CPU model, cores, memory and the compiler.
fn machine() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU".to_owned(), |(_, v)| v.trim().to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let memory = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        })
        .map_or(String::new(), |kb| {
            format!(", {} GiB memory", kb / (1024 * 1024))
        });
    let rustc = command_output("rustc", &["--version"]).unwrap_or_else(|| "rustc".to_owned());
    format!(
        "{cpu}, {cores} logical core{}{memory}, {} {}; {rustc}",
        if cores == 1 { "" } else { "s" },
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    crate::corpus::gen::date(seconds.div_euclid(86_400))
}

fn document(table: &str, raw: &str) -> String {
    format!(
        "# Benchmarks\n\
         \n\
         Encode and decode throughput of every format on the same values in the same run, \
         written by `cargo xtask bench` (crates/benchmarks/benches/formats.rs, divan, \
         {SAMPLES} samples per benchmark).\n\
         \n\
         - Measured {date} on {machine}. Single-threaded. This is a 2-core virtual machine \
           shared with other work, where interference only ever adds time: each figure is the \
           benchmark's **fastest sample**, the stable estimate of what the code costs (the \
           medians, noisier, are in divan's output below). Take ±15 % as the noise between \
           runs all the same.\n\
         - Every figure is **compact-JSON bytes per second**: the data's compact JSON size \
           divided by the time, so that formats with different output sizes compare fairly. \
           The ratio in parentheses is to serde_json on the same data and operation (above 1 \
           is faster than serde_json).\n\
         - Encoders start from a `serde_json::Value` and produce a `String`; decoders read a \
           `&str` and produce a `serde_json::Value`. The graph columns and the GCX1 layouts \
           encode from and decode to typed values instead (each crate's graph, each tool's \
           response type; built beforehand). The graph columns count only the graph payloads' \
           bytes (on the corpus, its 3 graph files); the layouts run on the 9 \
           code-intelligence responses.\n\
         - Columns: serde_json (`to_string`, `from_str::<Value>`); GCF generic \
           (`agentwire_gcf::to_string` / `from_str`); GCF graph (`encode_graph` / \
           `decode_graph`); GCX1 (the generic fallback: `encode_any` / `decode_any`); GCX1 \
           layouts (`Layout::to_gcx` / `from_gcx` of the typed responses); \
           gcf 3.1.0 (the `gcf` crate's `encode_generic` / `decode_generic`, and `encode` / \
           `decode` for graphs); toon-format (`encode_default` / `decode_default`, TOON's \
           reference Rust crate, 0.7).\n\
         - Data: the scorecard corpus (`fixtures/`, each file in turn), its code-intelligence \
           responses alone, `rows(10_000)` (10 000 rows × 6 fields), `orders(2_000)` (nested customers and line items) and \
           `graph(500, 200)` (500 symbols, 200 edges) from `agentwire_benchmarks`.\n\
         - `gcf` 3.1.0 and `toon-format` turn on serde_json's `preserve_order` for the whole \
           bench build, so every codec here, serde_json included, works with \
           insertion-ordered maps (as in the `agentwire` command; a plain serde_json build \
           parses into `Value` somewhat faster).\n\
         \n\
         {table}\n\
         <details><summary>divan's output</summary>\n\
         \n\
         ```text\n\
         {raw}```\n\
         \n\
         </details>\n",
        date = today(),
        machine = machine(),
        raw = if raw.ends_with('\n') {
            raw.to_owned()
        } else {
            format!("{raw}\n")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_divans_tree() {
        let output = "\
formats               fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ decode                           │               │               │               │         │
│  ├─ gcf_generic                   │               │               │               │         │
│  │  ├─ corpus       1.2 ms        │ 2 ms          │ 1.3 ms        │ 1.4 ms        │ 30      │ 30
│  │  │               280.5 MB/s    │ 170 MB/s      │ 260 MB/s      │ 240 MB/s      │         │
│  │  ╰─ rows_10k     10 ms         │ 12 ms         │ 11 ms         │ 11 ms         │ 30      │ 30
│  │                  1.1 GB/s      │ 100 MB/s      │ 110.2 MB/s    │ 105 MB/s      │         │
│  ╰─ serde_json                    │               │               │               │         │
│     ╰─ corpus       1 ms          │ 1 ms          │ 1 ms          │ 1 ms          │ 30      │ 30
│                     520 MB/s      │ 520 MB/s      │ 520 MB/s      │ 520 MB/s      │         │
╰─ encode                           │               │               │               │         │
   ╰─ gcx1                          │               │               │               │         │
      ╰─ graph_500    1 ms          │ 1 ms          │ 1 ms          │ 1 ms          │ 30      │ 30
                      900 KB/s      │ 1 MB/s        │ 950 KB/s      │ 1 MB/s        │         │
";
        let figures = parse(output);
        let f = |op: &str, codec: &str, set: &str, fastest: f64| Figure {
            op: op.into(),
            codec: codec.into(),
            set: set.into(),
            fastest,
        };
        assert_eq!(
            figures,
            [
                f("decode", "gcf_generic", "corpus", 280.5e6),
                f("decode", "gcf_generic", "rows_10k", 1.1e9),
                f("decode", "serde_json", "corpus", 520e6),
                f("encode", "gcx1", "graph_500", 900e3),
            ]
        );
        let table = render(&figures);
        assert!(table.contains("| decode | corpus (26 files) | 520 MB/s | 280 MB/s (0.54×) | — |"));
    }
}
