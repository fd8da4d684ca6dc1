//! Memory of the streaming readers is bounded by the longest line and the value being built,
//! never by the input: large payloads are generated while they are read (never stored), and a
//! counting allocator records the most bytes allocated at once. No timing is measured.

use std::io::{self, Read};

use agentwire_gcf::{DecoderOptions, RowReader};
use agentwire_testkit::alloc::{peak_during, Counting};
use serde_json::Value;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A payload written while it is read: `head`, then lines made by `line(i)` for `i` in
/// `0..lines`, then `tail`; it counts the bytes it hands out.
struct Generated<F> {
    pending: Vec<u8>,
    at: usize,
    next: u64,
    lines: u64,
    line: F,
    tail: Option<Vec<u8>>,
    total: u64,
}

impl<F: FnMut(u64, &mut Vec<u8>)> Generated<F> {
    fn new(head: &str, lines: u64, line: F, tail: &str) -> Self {
        Generated {
            pending: head.as_bytes().to_vec(),
            at: 0,
            next: 0,
            lines,
            line,
            tail: Some(tail.as_bytes().to_vec()),
            total: 0,
        }
    }
}

impl<F: FnMut(u64, &mut Vec<u8>)> Read for Generated<F> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.pending.len() {
            self.pending.clear();
            self.at = 0;
            if self.next < self.lines {
                (self.line)(self.next, &mut self.pending);
                self.next += 1;
            } else if let Some(tail) = self.tail.take() {
                self.pending = tail;
            } else {
                return Ok(0);
            }
        }
        let n = out.len().min(self.pending.len() - self.at);
        out[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        self.total += n as u64;
        Ok(n)
    }
}

const MB: u64 = 1 << 20;

/// Runs the tests of this file one at a time: the allocation counters are global, and what
/// one test allocates outside `peak_during` (its generated input, say) would count in
/// another's peak.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn a_100_mb_table_is_read_one_row_at_a_time() {
    let _serial = one_at_a_time();
    let filler = "x".repeat(900);
    let rows = 120_000u64; // ~110 MiB of rows
    let mut input = Generated::new(
        "GCF profile=generic\n## [?]{id,name,note}\n",
        rows,
        |i, out| {
            use std::io::Write;
            let _ = writeln!(out, "{i}|name {i}|{filler}");
        },
        &format!("##! summary counts={rows}\n"),
    );
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let ((seen, sum), peak) = peak_during(|| {
        let mut reader = RowReader::with_options(io::BufReader::new(&mut input), &opts).unwrap();
        let mut seen = 0u64;
        let mut sum = 0u64;
        for row in reader.values() {
            let row = row.unwrap();
            sum += row["id"].as_u64().unwrap();
            seen += 1;
        }
        (seen, sum)
    });
    assert!(input.total >= 100 * MB, "generated {} bytes", input.total);
    assert_eq!(seen, rows);
    assert_eq!(sum, rows * (rows - 1) / 2);
    eprintln!("row reader: {} bytes read, peak {peak} bytes", input.total);
    assert!(peak < 256 * 1024, "peak {peak} bytes");
}

#[test]
fn a_200_mb_line_fails_before_it_is_kept() {
    let _serial = one_at_a_time();
    let mut input = Generated::new(
        "GCF profile=generic\nx=",
        200,
        |_, out| out.resize(MB as usize, b'y'),
        "\n",
    );
    let (result, peak) = peak_during(|| agentwire_gcf::from_reader::<_, Value>(&mut input));
    let e = result.unwrap_err();
    assert_eq!((e.code(), e.line()), ("limit_exceeded", Some(2)));
    eprintln!("long line: {} bytes read, peak {peak} bytes", input.total);
    assert!(peak < 3 * MB as usize, "peak {peak} bytes");
    assert!(input.total < 4 * MB, "read {} bytes", input.total);
}

#[test]
fn comment_lines_are_never_kept() {
    let _serial = one_at_a_time();
    let comment = format!("# {}\n", "c".repeat(1000));
    let mut input = Generated::new(
        "GCF profile=generic\n",
        110_000, // ~100 MiB of comments
        |_, out| out.extend_from_slice(comment.as_bytes()),
        "x=1\n",
    );
    let (value, peak) = peak_during(|| agentwire_gcf::from_reader::<_, Value>(&mut input));
    assert_eq!(value.unwrap(), serde_json::json!({"x": 1}));
    eprintln!("comments: {} bytes read, peak {peak} bytes", input.total);
    assert!(input.total >= 100 * MB);
    assert!(peak < 256 * 1024, "peak {peak} bytes");
}

#[test]
fn graph_comment_lines_are_never_kept() {
    let _serial = one_at_a_time();
    let comment = format!("# {}\n", "c".repeat(1000));
    let mut input = Generated::new(
        "GCF profile=graph tool=t symbols=1 edges=0\n",
        20_000,
        |_, out| out.extend_from_slice(comment.as_bytes()),
        "## targets\n@0 fn pkg.Auth 0.78 lsp_resolved\n",
    );
    let (graph, peak) = peak_during(|| agentwire_gcf::decode_graph_reader(&mut input));
    assert_eq!(graph.unwrap().symbols.len(), 1);
    assert!(peak < 256 * 1024, "peak {peak} bytes");
}

/// The bytes a value holds on the heap (what cloning it allocates). The value is dropped
/// while the counters are held: the tests of this file run at once, and a large value freed
/// while another test measures would skew its count.
fn value_bytes(value: Value) -> usize {
    peak_during(move || {
        drop(value.clone());
        drop(value);
    })
    .1
}

/// A root object of several large tables (deferred and declared counts), a section and
/// scalar members, written while it is read.
fn object_payload(rows: u64, filler: &str) -> Generated<impl FnMut(u64, &mut Vec<u8>) + '_> {
    use std::io::Write;
    // Three tables of `rows` rows each, with members between them.
    Generated::new(
        "GCF profile=generic\nname=big\nlimits[3]: 1,2,3\n",
        3 * rows,
        move |i, out| {
            let (table, row) = (i / rows, i % rows);
            if row == 0 {
                match table {
                    0 => out.extend_from_slice(b"## first [?]{id,name,note}\n"),
                    1 => {
                        let _ = write!(
                            out,
                            "## config\n  depth=3\n  ## inner\n    on=true\n\
                             ## second [{rows}]{{id,name,note}}\n"
                        );
                    }
                    _ => {
                        let _ = write!(out, "count={rows}\n## third [{rows}]{{id,name,note}}\n");
                    }
                }
            }
            let _ = writeln!(out, "{row}|name {row}|{filler}");
        },
        &format!("after=1\n##! summary counts={rows}\n"),
    )
}

/// A streamed graph payload: `symbols` node lines in a `[?]` group, an edge from each to the
/// next, and the trailer.
fn graph_stream(symbols: u64) -> Generated<impl FnMut(u64, &mut Vec<u8>)> {
    use std::io::Write;
    Generated::new(
        "GCF profile=graph tool=t\n## targets [?]\n",
        2 * symbols + 1,
        move |i, out| {
            let _ = if i < symbols {
                // A long provenance that the graph keeps, and a comment it never keeps.
                writeln!(out, "# symbol {i}\n@{i} fn pkg.module.Function{i} 0.50 lsp")
            } else if i == symbols {
                writeln!(out, "## edges [?]")
            } else {
                let s = i - symbols - 1;
                writeln!(out, "@{}<@{s} calls", (s + 1) % symbols)
            };
        },
        &format!("##! summary symbols={symbols} edges={symbols}\n"),
    )
}

#[test]
fn from_reader_holds_the_value_and_one_unit_not_the_input() {
    let _serial = one_at_a_time();
    let filler = "x".repeat(400);
    let rows = 36_000u64; // ~45 MiB in all
    let mut input = object_payload(rows, &filler);
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (value, peak) = peak_during(|| opts.from_reader::<_, Value>(&mut input).unwrap());
    assert!(input.total >= 40 * MB, "generated {} bytes", input.total);
    for table in ["first", "second", "third"] {
        let rows_read = value[table].as_array().unwrap();
        assert_eq!(rows_read.len() as u64, rows);
        assert_eq!(rows_read[rows as usize - 1]["id"], rows - 1);
    }
    assert_eq!(value["config"]["inner"]["on"], true);
    assert_eq!(
        (value["count"].as_u64(), value["after"].as_u64()),
        (Some(rows), Some(1))
    );
    let held = value_bytes(value);
    eprintln!(
        "from_reader: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    // The value, the growth of its arrays, and a unit: never the input beside the value.
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

#[test]
fn a_graph_stream_costs_the_graph_not_the_input() {
    let _serial = one_at_a_time();
    let symbols = 200_000u64;
    // The in-memory decoder's own cost for this graph (the text allocated beforehand). Every
    // allocation and release happens inside `peak_during`, which serializes the tests' counts.
    let (text, _) = peak_during(|| {
        let mut text = String::new();
        graph_stream(symbols).read_to_string(&mut text).unwrap();
        text
    });
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (graph, in_memory) = peak_during(|| opts.decode_graph(&text).unwrap());
    assert_eq!((graph.symbols.len(), graph.edges.len()), (200_000, 200_000));
    let (len, _) = peak_during(move || {
        drop(graph);
        text.len()
    });
    // Read a line at a time: the graph and a line, never the input.
    let mut input = graph_stream(symbols);
    let (graph, peak) = peak_during(|| opts.decode_graph_reader(&mut input).unwrap());
    assert_eq!(input.total, len as u64);
    assert_eq!(graph.edges[7].source, "pkg.module.Function7");
    peak_during(move || drop(graph));
    eprintln!(
        "graph stream: {} bytes read, peak {peak} bytes (in memory: {in_memory} bytes beside \
         the text)",
        input.total
    );
    assert!(
        peak <= in_memory + 256 * 1024,
        "peak {peak} bytes, the in-memory decoder {in_memory}"
    );
}

#[test]
fn from_reader_reads_a_root_table_in_pieces() {
    let _serial = one_at_a_time();
    use std::io::Write;
    let filler = "y".repeat(900);
    let rows = 50_000u64; // ~45 MiB of rows
    let mut input = Generated::new(
        "GCF profile=generic\n## [?]{id,name,note}\n",
        rows,
        |i, out| {
            let _ = writeln!(out, "{i}|~|{filler}");
        },
        &format!("##! summary counts={rows}\n"),
    );
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (value, peak) = peak_during(|| opts.from_reader::<_, Value>(&mut input).unwrap());
    let items = value.as_array().unwrap();
    assert_eq!(items.len() as u64, rows);
    assert_eq!(items[7], serde_json::json!({"id": 7, "note": filler}));
    let held = value_bytes(value);
    eprintln!(
        "root table: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

#[test]
fn a_graph_payload_s_comments_and_long_lines_cost_nothing() {
    let _serial = one_at_a_time();
    // 100 MiB of a delta's comments, then one line past the limit: the reader fails there,
    // holding at most the line limit.
    let comment = format!("# {}\n", "c".repeat(1000));
    let mut input = Generated::new(
        "GCF profile=graph delta=true base_root=a new_root=b\n## removed\n",
        105_000,
        |_, out| out.extend_from_slice(comment.as_bytes()),
        &format!("fn {}\n", "x".repeat(2 << 20)),
    );
    let (result, peak) = peak_during(|| DecoderOptions::new().decode_payload_reader(&mut input));
    let e = result.unwrap_err();
    assert_eq!((e.code(), e.line()), ("limit_exceeded", Some(105_003)));
    eprintln!(
        "graph comments: {} bytes read, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 100 * MB);
    assert!(peak < 3 * MB as usize, "peak {peak} bytes");
}

#[test]
fn a_100_mb_keyed_map_is_read_one_entry_at_a_time() {
    let _serial = one_at_a_time();
    let filler = "x".repeat(900);
    let entries = 120_000u64; // ~110 MiB of entries
    let mut input = Generated::new(
        "GCF profile=generic\n## servers [?:]{key,id,note}\n",
        entries,
        |i, out| {
            use std::io::Write;
            let _ = writeln!(out, "host-{i}|{i}|{filler}");
        },
        &format!("##! summary counts={entries}\n"),
    );
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let ((seen, sum), peak) = peak_during(|| {
        let mut reader = RowReader::with_options(io::BufReader::new(&mut input), &opts).unwrap();
        assert!(reader.is_keyed());
        let mut seen = 0u64;
        let mut sum = 0u64;
        for entry in reader.entries::<Value>() {
            let (key, value) = entry.unwrap();
            assert_eq!(key, format!("host-{}", value["id"]));
            sum += value["id"].as_u64().unwrap();
            seen += 1;
        }
        (seen, sum)
    });
    assert!(input.total >= 100 * MB, "generated {} bytes", input.total);
    assert_eq!(seen, entries);
    assert_eq!(sum, entries * (entries - 1) / 2);
    eprintln!("keyed map: {} bytes read, peak {peak} bytes", input.total);
    // The keys are kept (a repeated one is `duplicate_key`): 1.3 MB of key text here, in a
    // hash set (about 11.7 MB at its last growth, both tables alive; measured). The entries'
    // other 108 MB are never held.
    assert!(peak < 16 * MB as usize, "peak {peak} bytes");
}

/// [`object_payload`] as a typed struct.
#[derive(Debug, Clone, serde::Deserialize)]
struct Big {
    name: String,
    limits: Vec<u32>,
    first: Vec<BigRow>,
    config: BigConfig,
    second: Vec<BigRow>,
    count: u64,
    third: Vec<BigRow>,
    after: u64,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct BigRow {
    id: u64,
    name: Option<String>,
    note: String,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct BigConfig {
    depth: u32,
    inner: BigInner,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct BigInner {
    on: bool,
}

/// The bytes a typed value holds on the heap (what cloning it allocates), dropped while the
/// counters are held (see [`value_bytes`]).
fn typed_bytes<T: Clone + Send + 'static>(value: T) -> usize {
    peak_during(move || {
        drop(value.clone());
        drop(value);
    })
    .1
}

#[test]
fn from_reader_into_a_struct_holds_the_value_and_one_unit_not_the_input() {
    let _serial = one_at_a_time();
    let filler = "x".repeat(400);
    let rows = 36_000u64; // ~45 MiB in all
    let mut input = object_payload(rows, &filler);
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (value, peak) = peak_during(|| opts.from_reader::<_, Big>(&mut input).unwrap());
    assert!(input.total >= 40 * MB, "generated {} bytes", input.total);
    for table in [&value.first, &value.second, &value.third] {
        assert_eq!(table.len() as u64, rows);
        assert_eq!(table[rows as usize - 1].id, rows - 1);
        assert_eq!(table[7].note, filler);
    }
    assert!(value.config.inner.on && value.config.depth == 3);
    assert_eq!((value.count, value.after), (rows, 1));
    assert_eq!((value.name.as_str(), value.limits.len()), ("big", 3));
    assert_eq!(value.first[3].name.as_deref(), Some("name 3"));
    let held = typed_bytes(value);
    eprintln!(
        "from_reader into a struct: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    // The value, the growth of its vectors, and a unit: never the input beside the value.
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

#[test]
fn from_reader_into_a_vec_reads_a_root_table_in_pieces() {
    let _serial = one_at_a_time();
    use std::io::Write;
    let filler = "y".repeat(900);
    let rows = 50_000u64; // ~45 MiB of rows
    let mut input = Generated::new(
        "GCF profile=generic\n## [?]{id,name,note}\n",
        rows,
        |i, out| {
            let _ = writeln!(out, "{i}|~|{filler}");
        },
        &format!("##! summary counts={rows}\n"),
    );
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (value, peak) = peak_during(|| opts.from_reader::<_, Vec<BigRow>>(&mut input).unwrap());
    assert_eq!(value.len() as u64, rows);
    assert_eq!((value[7].id, value[7].name.is_none()), (7, true));
    let held = typed_bytes(value);
    eprintln!(
        "root table into a Vec: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

#[test]
fn from_reader_reads_a_root_list_an_item_at_a_time() {
    let _serial = one_at_a_time();
    use std::io::Write;
    let filler = "z".repeat(900);
    let items = 50_000u64; // ~47 MiB of items
    let payload = || {
        Generated::new(
            "GCF profile=generic\n## [?]\n",
            items,
            |i, out| {
                // An object item, then (every tenth) a nested table: items of every form.
                let _ = if i % 10 == 0 {
                    writeln!(out, "@{i} [1]{{id,note}}\n  {i}|{filler}")
                } else {
                    writeln!(out, "@{i} {{}}\n  id={i}\n  note={filler}")
                };
            },
            &format!("##! summary counts={items}\n"),
        )
    };
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let mut input = payload();
    let (value, peak) = peak_during(|| opts.from_reader::<_, Value>(&mut input).unwrap());
    let list = value.as_array().unwrap();
    assert_eq!(list.len() as u64, items);
    assert_eq!(list[3]["id"], 3);
    assert_eq!(list[10][0]["id"], 10);
    let held = value_bytes(value);
    eprintln!(
        "root list: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
    // Into a typed list.
    #[derive(Clone, serde::Deserialize)]
    #[serde(untagged)]
    enum Item {
        One(BigItem),
        Table(Vec<BigItem>),
    }
    #[derive(Clone, serde::Deserialize)]
    struct BigItem {
        id: u64,
        #[allow(dead_code)]
        note: String,
    }
    let mut input = payload();
    let (value, peak) = peak_during(|| opts.from_reader::<_, Vec<Item>>(&mut input).unwrap());
    assert_eq!(value.len() as u64, items);
    assert!(matches!(&value[10], Item::Table(t) if t[0].id == 10));
    assert!(matches!(&value[11], Item::One(o) if o.id == 11));
    let held = typed_bytes(value);
    eprintln!(
        "root list into a Vec: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

#[test]
fn from_reader_reads_a_member_list_an_item_at_a_time() {
    let _serial = one_at_a_time();
    use std::io::Write;
    let filler = "w".repeat(900);
    let items = 50_000u64; // ~47 MiB of items
    let payload = || {
        Generated::new(
            "GCF profile=generic\nname=list\n## items [?]\n",
            items,
            |i, out| {
                let _ = writeln!(out, "@{i} {{}}\n  id={i}\n  note={filler}");
            },
            &format!("after=1\n##! summary counts={items}\n"),
        )
    };
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let mut input = payload();
    let (value, peak) = peak_during(|| opts.from_reader::<_, Value>(&mut input).unwrap());
    assert_eq!(value["items"].as_array().unwrap().len() as u64, items);
    assert_eq!(
        (value["items"][9]["id"].as_u64(), value["after"].as_u64()),
        (Some(9), Some(1))
    );
    let held = value_bytes(value);
    eprintln!(
        "member list: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
    #[derive(Clone, serde::Deserialize)]
    struct Listed {
        name: String,
        items: Vec<BigRow>,
        after: u64,
    }
    let mut input = payload();
    let (value, peak) = peak_during(|| opts.from_reader::<_, Listed>(&mut input).unwrap());
    assert_eq!((value.items.len() as u64, value.items[9].id), (items, 9));
    assert_eq!((value.name.as_str(), value.after), ("list", 1));
    let held = typed_bytes(value);
    eprintln!(
        "member list into a struct: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

/// A member table in the current spec's canonical form for nested objects (flattened
/// `customer>…` columns and a constant column): read in pieces like a plain one, into a
/// `Value` and into a typed struct.
#[test]
fn a_table_with_flattened_and_constant_columns_is_read_in_pieces() {
    let _serial = one_at_a_time();
    use std::io::Write;
    #[derive(serde::Deserialize, Clone)]
    #[allow(dead_code)]
    struct Customer {
        name: String,
        tier: u8,
    }
    #[derive(serde::Deserialize, Clone)]
    #[allow(dead_code)]
    struct Order {
        id: u64,
        customer: Customer,
        unit: String,
        note: String,
    }
    #[derive(serde::Deserialize, Clone)]
    struct Doc {
        total: u64,
        orders: Vec<Order>,
    }
    let filler = "z".repeat(900);
    let rows = 50_000u64; // ~45 MiB of rows
    let input = || {
        Generated::new(
            "GCF profile=generic\ntotal=50000\n## orders [?]{id,\"customer>name\",\"customer>tier\",unit=kg,note}\n",
            rows,
            |i, out| {
                let _ = writeln!(out, "{i}|c{i}|{}|{filler}", i % 3);
            },
            &format!("##! summary counts={rows}\n"),
        )
    };
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let mut reader = input();
    let (value, peak) = peak_during(|| opts.from_reader::<_, Value>(&mut reader).unwrap());
    let orders = value["orders"].as_array().unwrap();
    assert_eq!(orders.len() as u64, rows);
    assert_eq!(
        orders[7],
        serde_json::json!({"id": 7, "customer": {"name": "c7", "tier": 1}, "unit": "kg", "note": filler})
    );
    let held = value_bytes(value);
    eprintln!("flattened table into a Value: value {held} bytes, peak {peak} bytes");
    assert!(reader.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );

    let mut reader = input();
    let (doc, peak) = peak_during(|| opts.from_reader::<_, Doc>(&mut reader).unwrap());
    assert_eq!((doc.total, doc.orders.len() as u64), (rows, rows));
    let held = typed_bytes(doc);
    eprintln!("flattened table into a struct: value {held} bytes, peak {peak} bytes");
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

/// `{"data": {"total": N, "items": [...45 MiB...], "meta": {...}}, "ok": true}`: a large table
/// nested in a section (its `[?]` count checked against the trailer), and a list nested one
/// level deeper.
fn nested_payload(rows: u64, filler: &str) -> Generated<impl FnMut(u64, &mut Vec<u8>) + '_> {
    use std::io::Write;
    Generated::new(
        "GCF profile=generic\nname=big\n## data\n  total=2\n  ## items [?]{id,name,note}\n",
        rows + 2,
        move |i, out| {
            let _ = match i.cmp(&rows) {
                std::cmp::Ordering::Less => writeln!(out, "  {i}|~|{filler}"),
                std::cmp::Ordering::Equal => {
                    writeln!(out, "  ## meta\n    x=1\n    ## list [{}]", rows / 10)
                }
                std::cmp::Ordering::Greater => (0..rows / 10).try_for_each(|j| {
                    writeln!(out, "    @{j} {{}}\n      id={j}\n      note={filler}")
                }),
            };
        },
        &format!("ok=true\n##! summary counts={rows}\n"),
    )
}

#[test]
fn from_reader_reads_a_table_nested_in_a_section_in_pieces() {
    let _serial = one_at_a_time();
    let filler = "n".repeat(900);
    let rows = 45_000u64; // ~45 MiB of rows, and ~4.5 MiB of list items
    let mut input = nested_payload(rows, &filler);
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (value, peak) = peak_during(|| opts.from_reader::<_, Value>(&mut input).unwrap());
    let items = value["data"]["items"].as_array().unwrap();
    assert_eq!(items.len() as u64, rows);
    assert_eq!(items[7], serde_json::json!({"id": 7, "note": filler}));
    let list = value["data"]["meta"]["list"].as_array().unwrap();
    assert_eq!(list.len() as u64, rows / 10);
    assert_eq!(
        (value["ok"].as_bool(), value["data"]["total"].as_u64()),
        (Some(true), Some(2))
    );
    let held = value_bytes(value);
    eprintln!(
        "nested table: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}

/// [`nested_payload`] as structs.
#[derive(Debug, Clone, serde::Deserialize)]
struct NestedBig {
    name: String,
    data: NestedData,
    ok: bool,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct NestedData {
    total: u32,
    items: Vec<BigRow>,
    meta: NestedMeta,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct NestedMeta {
    x: u32,
    list: Vec<BigItem>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct BigItem {
    id: u64,
    note: String,
}

#[test]
fn from_reader_into_a_struct_reads_a_table_nested_in_a_section_in_pieces() {
    let _serial = one_at_a_time();
    let filler = "n".repeat(900);
    let rows = 45_000u64;
    let mut input = nested_payload(rows, &filler);
    let opts = DecoderOptions::new().max_elements(usize::MAX);
    let (value, peak) = peak_during(|| opts.from_reader::<_, NestedBig>(&mut input).unwrap());
    assert_eq!(value.data.items.len() as u64, rows);
    assert_eq!(
        (value.data.items[7].id, value.data.items[7].name.is_none()),
        (7, true)
    );
    assert_eq!(value.data.meta.list.len() as u64, rows / 10);
    assert_eq!(
        (value.data.meta.list[3].id, &value.data.meta.list[3].note),
        (3, &filler)
    );
    assert!(value.ok && value.data.total == 2 && value.data.meta.x == 1 && value.name == "big");
    let held = typed_bytes(value);
    eprintln!(
        "nested table into a struct: {} bytes read, value {held} bytes, peak {peak} bytes",
        input.total
    );
    assert!(input.total >= 40 * MB);
    assert!(
        peak < held + held / 8 + 8 * MB as usize,
        "peak {peak} bytes for a value of {held}"
    );
}
