//! The GCF graph profile against serde_json on the same code graphs
//! (`agentwire_benchmarks::graph`): 500 symbols / 200 edges and 50 000 symbols / 20 000 edges.
//!
//! Every throughput figure is compact-JSON bytes per second: the graph's compact JSON size
//! divided by the time, so GCF (about a third of the bytes) and JSON compare fairly.
//!
//! - `encode/*`: `encode_graph(&Graph)` vs `serde_json::to_string(&Graph)`, and one session
//!   payload (`Session::encode`, first call) and the stream encoder (`GraphStreamEncoder`
//!   into a `Vec`).
//! - `decode/*`: `decode_graph` vs `serde_json::from_str::<Graph>`.
//! - `pack_root/*`: the `gcf-pack-root-v1` hash.
//!
//! Before the timed benches, the stream encoder writes 10 000 and then 1 000 000 symbols (and
//! 40% as many edges) into `io::sink()`, and a counting global allocator reports the peak heap
//! in use during each: flat memory means the two peaks are about equal.
//!
//! Run with `cargo xtask bench gcf_graph`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use agentwire_benchmarks::{compact_json_len, graph};
use agentwire_gcf::{
    decode_graph, encode_graph, pack_root, Graph, GraphStreamEncoder, Session, StreamHeader, Symbol,
};
use divan::counter::BytesCount;
use divan::Bencher;

/// Counts the heap in use and its peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
            let now = IN_USE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

struct Data {
    graph: Graph,
    gcf: String,
    json: String,
    json_len: usize,
}

fn data(symbols: usize, edges: usize) -> Data {
    let value = graph(symbols, edges);
    let graph: Graph = serde_json::from_value(value.clone()).expect("a graph object");
    let gcf = encode_graph(&graph).expect("the data set encodes");
    let json = serde_json::to_string(&graph).expect("JSON");
    // The payloads measured must be correct ones.
    let mut back = decode_graph(&gcf).expect("decodes");
    back.sort_canonical();
    let mut sorted = graph.clone();
    sorted.sort_canonical();
    assert_eq!(back, sorted);
    Data {
        graph,
        gcf,
        json,
        json_len: compact_json_len(&value),
    }
}

static SMALL: LazyLock<Data> = LazyLock::new(|| data(500, 200));
static LARGE: LazyLock<Data> = LazyLock::new(|| data(50_000, 20_000));

fn sized(size: &str) -> &'static Data {
    match size {
        "500x200" => &SMALL,
        _ => &LARGE,
    }
}

const SIZES: &[&str] = &["500x200", "50000x20000"];

#[divan::bench_group]
mod encode {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn gcf(bencher: Bencher<'_, '_>, size: &str) {
        let d = sized(size);
        bencher
            .counter(BytesCount::new(d.json_len))
            .bench(|| encode_graph(&d.graph).expect("encodes"));
    }

    #[divan::bench(args = SIZES)]
    fn serde_json(bencher: Bencher<'_, '_>, size: &str) {
        let d = sized(size);
        bencher
            .counter(BytesCount::new(d.json_len))
            .bench(|| ::serde_json::to_string(&d.graph).expect("JSON"));
    }

    #[divan::bench(args = SIZES)]
    fn gcf_session_first_call(bencher: Bencher<'_, '_>, size: &str) {
        let d = sized(size);
        bencher
            .counter(BytesCount::new(d.json_len))
            .bench(|| Session::new().encode(&d.graph).expect("encodes"));
    }

    #[divan::bench(args = SIZES)]
    fn gcf_stream(bencher: Bencher<'_, '_>, size: &str) {
        let d = sized(size);
        bencher.counter(BytesCount::new(d.json_len)).bench(|| {
            let mut out = Vec::with_capacity(d.gcf.len());
            let mut stream =
                GraphStreamEncoder::with_name_index(&mut out, &StreamHeader::new("ctx"))
                    .expect("header");
            for s in &d.graph.symbols {
                stream.symbol(s).expect("symbol");
            }
            for e in &d.graph.edges {
                stream.edge_named(e).expect("edge");
            }
            stream.finish().expect("trailer");
            out
        });
    }
}

#[divan::bench_group]
mod decode {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn gcf(bencher: Bencher<'_, '_>, size: &str) {
        let d = sized(size);
        bencher
            .counter(BytesCount::new(d.json_len))
            .bench(|| decode_graph(&d.gcf).expect("decodes"));
    }

    #[divan::bench(args = SIZES)]
    fn serde_json(bencher: Bencher<'_, '_>, size: &str) {
        let d = sized(size);
        bencher
            .counter(BytesCount::new(d.json_len))
            .bench(|| ::serde_json::from_str::<Graph>(&d.json).expect("JSON"));
    }
}

#[divan::bench(args = SIZES)]
fn pack_root_hash(bencher: Bencher<'_, '_>, size: &str) {
    let d = sized(size);
    bencher
        .counter(BytesCount::new(d.json_len))
        .bench(|| pack_root(&d.graph).expect("root"));
}

/// Streams `symbols` generated symbols and 40% as many edges into `io::sink()`; returns the
/// peak heap in use above the level before the stream, and the bytes written.
fn stream_peak(symbols: u64) -> (usize, u64) {
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let mut written = CountingSink(0);
    let mut stream =
        GraphStreamEncoder::new(&mut written, &StreamHeader::new("ctx")).expect("header");
    let mut symbol = Symbol::new(
        String::with_capacity(64),
        "function",
        0.0,
        "lsp_resolved",
        0,
    );
    for i in 0..symbols {
        symbol.qualified_name.clear();
        let _ = write!(
            symbol.qualified_name,
            "github.com/acme/platform/pkg.Handle{i}"
        );
        symbol.score = (i % 100) as f64 / 100.0;
        symbol.distance = (i * 4 / symbols) as u32;
        stream.symbol(&symbol).expect("symbol");
    }
    for i in 0..symbols * 2 / 5 {
        stream
            .edge((i * 7919) % symbols, (i * 104_729) % symbols, "calls", None)
            .expect("edge");
    }
    stream.finish().expect("trailer");
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    (peak, written.0)
}

struct CountingSink(u64);

impl io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        io::sink().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn main() {
    let (small_peak, small_bytes) = stream_peak(10_000);
    let (large_peak, large_bytes) = stream_peak(1_000_000);
    println!(
        "stream memory: 10 000 symbols ({small_bytes} bytes written): peak heap {small_peak} B; \
         1 000 000 symbols ({large_bytes} bytes written): peak heap {large_peak} B"
    );
    assert!(
        large_peak <= small_peak + 4096,
        "streaming memory grew with the payload: {small_peak} B for 10k symbols, {large_peak} B for 1M"
    );
    for (name, d) in [("500x200", &*SMALL), ("50000x20000", &*LARGE)] {
        println!(
            "{name}: compact JSON {} B, GCF {} B ({:.0}%)",
            d.json_len,
            d.gcf.len(),
            100.0 * d.gcf.len() as f64 / d.json_len as f64
        );
    }
    divan::main();
}
