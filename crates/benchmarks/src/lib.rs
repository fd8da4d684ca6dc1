//! Deterministic data sets shared by every benchmark, so that formats are measured on the
//! same values in the same run.
//!
//! Throughput is reported as compact-JSON bytes per second ([`compact_json_len`]): the time a
//! codec takes to encode or decode a value, measured against the size that value has as compact
//! JSON, so that formats with different output sizes compare fairly.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

mod toon;

pub use toon::{
    analytics, contacts, ecommerce_orders, employees, event_logs, feature_flags, nested_config,
    repositories, toon_datasets,
};

/// A small, seeded xorshift64* generator: the same seed gives the same data on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed (zero is replaced by a fixed constant).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One element of `items` (non-empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A float in `[0, 1)` with two decimals.
    pub fn cents(&mut self) -> f64 {
        self.below(100) as f64 / 100.0
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// `k` distinct elements of `items`, in their original order.
    pub fn sample<'a, T>(&mut self, items: &'a [T], k: usize) -> Vec<&'a T> {
        let mut chosen: Vec<usize> = Vec::new();
        while chosen.len() < k.min(items.len()) {
            let i = self.below(items.len() as u64) as usize;
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        chosen.sort_unstable();
        chosen.into_iter().map(|i| &items[i]).collect()
    }

    /// Between `lo` and `hi` distinct elements of `items`, in their original order.
    pub fn sample_between<'a, T>(&mut self, items: &'a [T], lo: u64, hi: u64) -> Vec<&'a T> {
        let k = self.range(lo, hi) as usize;
        self.sample(items, k)
    }

    /// A value with `decimals` decimals in `lo..=hi`, as a float.
    pub fn decimal(&mut self, lo: f64, hi: f64, decimals: i32) -> f64 {
        let scale = 10f64.powi(decimals);
        let steps = ((hi - lo) * scale).round() as u64;
        let n = self.below(steps + 1);
        ((lo * scale).round() + n as f64) / scale
    }

    /// A lower-case hexadecimal string of `len` digits.
    pub fn hex(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize]))
            .collect()
    }
}

const FIRST: &[&str] = &[
    "Alice", "Bob", "Carol", "Dmitri", "Eun-ji", "Farah", "Gustavo", "Hana", "Ivan", "Jamal",
    "Kiri", "Lena", "Mateo", "Nia", "Oskar", "Priya",
];
const LAST: &[&str] = &[
    "Chen", "Martinez", "Okafor", "Novak", "Kim", "Haddad", "Silva", "Tanaka", "Petrov", "Johnson",
    "Walker", "Schmidt", "Rossi", "Singh", "Larsen", "Dubois",
];
const DEPARTMENTS: &[&str] = &[
    "Engineering",
    "Sales",
    "Marketing",
    "Support",
    "Finance",
    "Legal",
];

/// `n` flat rows of six fields (`id`, `name`, `email`, `department`, `salary`, `active`), as
/// a JSON array: the shape of most list endpoints.
pub fn rows(n: usize) -> Value {
    let mut rng = Rng::new(0x5EED_0001);
    let rows = (0..n)
        .map(|i| {
            let first = rng.pick(FIRST);
            let last = rng.pick(LAST);
            json!({
                "id": i + 1,
                "name": format!("{first} {last}"),
                "email": format!("{}.{}{}@example.com", first.to_lowercase(), last.to_lowercase(), i),
                "department": rng.pick(DEPARTMENTS),
                "salary": 40_000 + rng.below(120_000),
                "active": rng.below(5) != 0,
            })
        })
        .collect();
    Value::Array(rows)
}

/// One element of [`rows`] as a typed struct, for benchmarks of serde-derived types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Person {
    /// Row number, from 1.
    pub id: u64,
    /// First and last name.
    pub name: String,
    /// An address at example.com.
    pub email: String,
    /// One of six departments.
    pub department: String,
    /// Yearly salary.
    pub salary: u64,
    /// Whether the person is active.
    pub active: bool,
}

/// [`Person`] borrowing its strings from the input, for zero-copy decoding benchmarks.
#[derive(Debug, PartialEq, Deserialize)]
pub struct PersonRef<'a> {
    /// Row number, from 1.
    pub id: u64,
    /// First and last name.
    pub name: &'a str,
    /// An address at example.com.
    pub email: &'a str,
    /// One of six departments.
    pub department: &'a str,
    /// Yearly salary.
    pub salary: u64,
    /// Whether the person is active.
    pub active: bool,
}

/// `{"orders": [...]}` with `n` orders, each with a nested customer object and one to four
/// line items.
pub fn orders(n: usize) -> Value {
    const TIERS: &[&str] = &["standard", "premium", "enterprise"];
    const STATUS: &[&str] = &["pending", "paid", "shipped", "delivered", "refunded"];
    const PRODUCTS: &[(&str, &str, f64)] = &[
        ("SKU-WM01", "Wireless Mouse", 29.99),
        ("SKU-UC02", "USB-C Cable", 14.99),
        ("SKU-MK04", "Mechanical Keyboard", 89.99),
        ("SKU-HD07", "27\" Monitor", 249.0),
        ("SKU-LS11", "Laptop Stand", 39.5),
        ("SKU-WC13", "Webcam, 1080p", 59.99),
    ];
    let mut rng = Rng::new(0x5EED_0002);
    let orders = (0..n)
        .map(|i| {
            let first = rng.pick(FIRST);
            let last = rng.pick(LAST);
            let items: Vec<Value> = (0..1 + rng.below(4))
                .map(|_| {
                    let (sku, name, price) = *rng.pick(PRODUCTS);
                    json!({"sku": sku, "name": name, "quantity": 1 + rng.below(3), "price": price})
                })
                .collect();
            let subtotal: f64 = items
                .iter()
                .map(|it| {
                    it["price"].as_f64().unwrap_or(0.0) * it["quantity"].as_f64().unwrap_or(0.0)
                })
                .sum();
            let subtotal = (subtotal * 100.0).round() / 100.0;
            let tax = (subtotal * 8.0).round() / 100.0;
            json!({
                "orderId": format!("ORD-{:05}", i + 1),
                "customer": {
                    "id": 1 + rng.below(500),
                    "name": format!("{first} {last}"),
                    "email": format!("{}@example.com", first.to_lowercase()),
                    "tier": rng.pick(TIERS),
                },
                "items": items,
                "subtotal": subtotal,
                "tax": tax,
                "total": ((subtotal + tax) * 100.0).round() / 100.0,
                "status": rng.pick(STATUS),
            })
        })
        .collect();
    json!({ "orders": Value::Array(orders) })
}

/// A deep configuration object: 60 services whose settings nest up to 14 levels, with
/// arrays of scalars and of objects along the way.
pub fn deep_config() -> Value {
    let mut rng = Rng::new(0x5EED_0003);
    let mut services = Map::new();
    for s in 0..60 {
        services.insert(format!("service-{s:02}"), nested(&mut rng, 1, 2 + s % 13));
    }
    json!({
        "version": 3,
        "cluster": {"name": "prod-eu-west-1", "region": "eu-west-1", "zones": ["a", "b", "c"]},
        "services": Value::Object(services),
    })
}

fn nested(rng: &mut Rng, depth: usize, max_depth: usize) -> Value {
    let mut object = Map::new();
    object.insert("enabled".into(), Value::Bool(rng.below(4) != 0));
    object.insert("replicas".into(), json!(1 + rng.below(8)));
    object.insert("timeout_ms".into(), json!(250 * (1 + rng.below(40))));
    object.insert(
        "labels".into(),
        json!(["web", "api", "batch", "edge"][..1 + rng.below(4) as usize]),
    );
    if depth < max_depth {
        object.insert("child".into(), nested(rng, depth + 1, max_depth));
        if depth.is_multiple_of(3) {
            let limits: Vec<Value> = (0..2)
                .map(|i| json!({"name": format!("limit-{i}"), "value": rng.cents(), "unit": "cpu"}))
                .collect();
            object.insert("limits".into(), Value::Array(limits));
        }
    }
    Value::Object(object)
}

/// A code-intelligence graph in the GCF fixtures' camelCase shape: `symbols` symbols spread
/// over distances 0 to 3 and `edges` edges between them.
pub fn graph(symbols: usize, edges: usize) -> Value {
    const KINDS: &[&str] = &[
        "function",
        "method",
        "type",
        "interface",
        "field",
        "constant",
    ];
    const PROVENANCE: &[&str] = &["lsp_resolved", "ast", "rwr", "grep"];
    const PACKAGES: &[&str] = &[
        "auth", "server", "store", "cache", "api", "config", "metrics",
    ];
    const EDGE_TYPES: &[&str] = &["calls", "references", "implements", "contains"];
    let mut rng = Rng::new(0x5EED_0004);
    let names: Vec<String> = (0..symbols)
        .map(|i| {
            format!(
                "github.com/acme/platform/{}.{}{}",
                rng.pick(PACKAGES),
                ["Handle", "New", "Validate", "Load", "Serve", "Flush"][i % 6],
                i
            )
        })
        .collect();
    let symbol_values: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({
                "qualifiedName": name,
                "kind": rng.pick(KINDS),
                "score": rng.cents(),
                "provenance": rng.pick(PROVENANCE),
                "distance": (i * 4 / symbols.max(1)) as u64,
            })
        })
        .collect();
    let edge_values: Vec<Value> = if symbols == 0 {
        Vec::new()
    } else {
        (0..edges)
            .map(|_| {
                json!({
                    "source": names[rng.below(symbols as u64) as usize],
                    "target": names[rng.below(symbols as u64) as usize],
                    "edgeType": rng.pick(EDGE_TYPES),
                })
            })
            .collect()
    };
    json!({
        "tool": "context_for_task",
        "tokenBudget": 8000,
        "tokensUsed": 40 * symbols,
        "symbols": symbol_values,
        "edges": edge_values,
    })
}

/// One response of the scorecard corpus and the formats that apply to it.
#[derive(Debug, Clone)]
pub struct CorpusFile {
    /// The file name.
    pub name: String,
    /// The tool response.
    pub response: Value,
    /// Whether it is a graph in the GCF graph model.
    pub graph: bool,
    /// The GCX1 per-tool layout whose shape it has.
    pub gcx1_layout: Option<String>,
}

/// The responses of the scorecard corpus (`fixtures/*.json` at the workspace root), in file
/// name order.
///
/// Panics when the fixtures cannot be read: benchmarks run from a checkout.
pub fn corpus() -> Vec<CorpusFile> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let mut file: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
            CorpusFile {
                name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                graph: file["fixture"]["graph"].as_bool().unwrap_or(false),
                gcx1_layout: file["fixture"]["gcx1_layout"].as_str().map(str::to_owned),
                response: file["response"].take(),
            }
        })
        .collect()
}

/// The size of `value` as compact JSON, the denominator of every throughput figure.
pub fn compact_json_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_sets_are_deterministic_and_sized() {
        assert_eq!(rows(10), rows(10));
        assert_eq!(rows(10_000).as_array().unwrap().len(), 10_000);
        assert_eq!(orders(2_000)["orders"].as_array().unwrap().len(), 2_000);
        assert_eq!(graph(500, 200)["symbols"].as_array().unwrap().len(), 500);
        assert_eq!(graph(500, 200)["edges"].as_array().unwrap().len(), 200);
        assert_eq!(graph(0, 5)["edges"].as_array().unwrap().len(), 0);
        assert_eq!(deep_config()["services"].as_object().unwrap().len(), 60);
        assert!(compact_json_len(&rows(10_000)) > 1_000_000);
    }

    #[test]
    fn the_corpus_is_read_from_the_fixtures() {
        let corpus = corpus();
        assert!(corpus.len() >= 24);
        assert!(corpus.iter().any(|f| f.name == "graph_500.json" && f.graph));
        assert!(corpus
            .iter()
            .any(|f| f.gcx1_layout.as_deref() == Some("search_symbols")));
        assert!(corpus.iter().all(|f| !f.response.is_null()));
    }

    #[test]
    fn deep_config_nests_fourteen_levels() {
        fn depth(v: &Value) -> usize {
            match v {
                Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
                Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        let config = deep_config();
        let deepest = config["services"]
            .as_object()
            .unwrap()
            .values()
            .map(depth)
            .max()
            .unwrap();
        assert_eq!(deepest, 15); // 14 nested objects plus the labels array at the bottom
    }
}

/// What [`alternate`] measured: each side's fastest time per call (seconds) and the median of
/// the per-round ratios `a / b`.
#[derive(Debug, Clone, Copy)]
pub struct Paired {
    /// Side `a`'s fastest time per call.
    pub a: f64,
    /// Side `b`'s fastest time per call.
    pub b: f64,
    /// The median of the rounds' ratios `a / b`.
    pub median_ratio: f64,
}

/// Times `a` and `b` call by call in alternation (which side goes first alternates too), so
/// that a shared machine's slow phases hit both alike: `rounds` rounds, each timing spanning
/// `reps` calls whose outputs are held until the clock stops and dropped after, as divan's
/// samples hold them.
pub fn alternate<T>(rounds: usize, reps: usize, a: &dyn Fn() -> T, b: &dyn Fn() -> T) -> Paired {
    let reps = reps.max(1);
    let time = |f: &dyn Fn() -> T| {
        let mut outputs = Vec::with_capacity(reps);
        let start = std::time::Instant::now();
        for _ in 0..reps {
            outputs.push(f());
        }
        let elapsed = start.elapsed().as_secs_f64();
        drop(std::hint::black_box(outputs));
        elapsed / reps as f64
    };
    let (mut fastest_a, mut fastest_b, mut ratios) = (f64::INFINITY, f64::INFINITY, Vec::new());
    for round in 0..rounds.max(1) {
        let (ta, tb) = if round % 2 == 0 {
            let ta = time(a);
            (ta, time(b))
        } else {
            let tb = time(b);
            (time(a), tb)
        };
        fastest_a = fastest_a.min(ta);
        fastest_b = fastest_b.min(tb);
        ratios.push(ta / tb);
    }
    ratios.sort_by(f64::total_cmp);
    Paired {
        a: fastest_a,
        b: fastest_b,
        median_ratio: ratios[ratios.len() / 2],
    }
}
