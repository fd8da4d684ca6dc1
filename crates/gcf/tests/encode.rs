//! Encoding with `Spec::V3_1`: exact bytes for the constructs the upstream v3.1.0 fixtures
//! cover only in part, typed values (structs keep their field order; no detour through
//! `serde_json::Value`), options, and encode errors. The current spec's bytes are in
//! `encode_current.rs`.

use std::collections::BTreeMap;

use agentwire_gcf::{to_string, to_writer, EncoderOptions, ErrorKind, Spec};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::json;

fn gcf(body: &str) -> String {
    format!("GCF profile=generic\n{body}")
}

/// Encodes with the v3.1 options.
fn v31<T: ?Sized + Serialize>(value: &T) -> agentwire_gcf::Result<String> {
    EncoderOptions::new().spec(Spec::V3_1).to_string(value)
}

#[test]
fn structs_keep_field_order_and_nest() {
    #[derive(Serialize)]
    struct Customer<'a> {
        name: &'a str,
        email: &'a str,
        tier: &'a str,
    }
    #[derive(Serialize)]
    struct Item {
        sku: &'static str,
        qty: u32,
    }
    #[derive(Serialize)]
    struct Order<'a> {
        zeta: u64,
        customer: Customer<'a>,
        items: Vec<Item>,
        alpha: Option<&'a str>,
    }
    let orders = [
        Order {
            zeta: 1,
            customer: Customer {
                name: "Ann",
                email: "a@x",
                tier: "gold",
            },
            items: vec![Item { sku: "A", qty: 2 }],
            alpha: None,
        },
        Order {
            zeta: 2,
            customer: Customer {
                name: "Bo",
                email: "b@x",
                tier: "free",
            },
            items: vec![Item { sku: "B", qty: 1 }, Item { sku: "C", qty: 5 }],
            alpha: Some("x"),
        },
    ];
    assert_eq!(
        v31(&orders).unwrap(),
        gcf(concat!(
            "## [2]{zeta,customer,items,alpha}\n",
            "@0 1|^{name,email,tier}|^|-\n",
            "Ann|a@x|gold\n",
            ".items [1]{sku,qty}\n",
            "    A|2\n",
            "@1 2|^|^|x\n",
            "Bo|b@x|free\n",
            ".items [2]\n",
            "    B|1\n",
            "    C|5\n",
        ))
    );
    assert_eq!(
        EncoderOptions::new()
            .spec(Spec::V3_1)
            .inline_schemas(false)
            .shared_schemas(false)
            .to_string(&orders)
            .unwrap(),
        gcf(concat!(
            "## [2]{zeta,customer,items,alpha}\n",
            "@0 1|^|^|-\n",
            ".customer {}\n",
            "    name=Ann\n",
            "    email=a@x\n",
            "    tier=gold\n",
            ".items [1]{sku,qty}\n",
            "    A|2\n",
            "@1 2|^|^|x\n",
            ".customer {}\n",
            "    name=Bo\n",
            "    email=b@x\n",
            "    tier=free\n",
            ".items [2]{sku,qty}\n",
            "    B|1\n",
            "    C|5\n",
        ))
    );
}

#[test]
fn schema_rules_follow_the_reference() {
    // Null rows keep the inline schema; absent rows are `~`; a scalar row disqualifies it.
    let v = json!({"r": [
        {"c": {"a": 1, "b": 2, "c": 3}},
        {"c": null},
        {},
        {"c": {"a": 4, "b": 5, "c": 6}},
    ]});
    assert_eq!(
        v31(&v).unwrap(),
        gcf("## r [4]{c}\n@0 ^{a,b,c}\n1|2|3\n-\n~\n@3 ^\n4|5|6\n")
    );
    let v = json!({"r": [{"c": {"a": 1, "b": 2, "c": 3}}, {"c": "flat"}]});
    assert_eq!(
        v31(&v).unwrap(),
        gcf("## r [2]{c}\n@0 ^\n.c {}\n    a=1\n    b=2\n    c=3\nflat\n")
    );
    // Key order matters for inline schemas.
    let v = json!([{"c": {"a": 1, "b": 2, "c": 3}}, {"c": {"b": 1, "a": 2, "c": 3}}]);
    let text = v31(&v).unwrap();
    if text.contains("^{") {
        // serde_json without preserve_order sorts keys, so the two objects agree.
        assert!(text.contains("2|1|3"));
    } else {
        assert!(text.contains(".c {}"));
    }
    // An array attachment that is not tabular in some row disables the shared schema, and an
    // expanded array keeps its `@N` items.
    let v = json!([{"i": [{"p": 1}]}, {"i": [{}]}, {"i": [1, 2]}]);
    assert_eq!(
        v31(&v).unwrap(),
        gcf("## [3]{i}\n@0 ^\n.i [1]{p}\n    1\n@1 ^\n.i [1]\n    @0 {}\n@2 ^\n.i [2]: 1,2\n")
    );
}

#[test]
fn expanded_arrays_nest() {
    let v = json!({"m": [[], [1, "a"], [[2]], [{"k": 1}], {"o": [{"x": {"y": 1}}]}, null]});
    assert_eq!(
        v31(&v).unwrap(),
        gcf(concat!(
            "## m [6]\n",
            "@0 [0]\n",
            "@1 [2]: 1,a\n",
            "@2 [1]\n",
            "  @0 [1]: 2\n",
            "@3 [1]{k}\n",
            "  1\n",
            "@4 {}\n",
            "  ## o [1]{x}\n",
            "  @0 ^\n",
            "  .x {}\n",
            "      y=1\n",
            "@5 =-\n",
        ))
    );
}

#[test]
fn keys_and_strings_are_quoted_where_needed() {
    let v = json!({"a b": {"c,d": ["x|y", "^{q}", "^{", " "]}, "": [{"": ""}]});
    let mut expected = String::new();
    // serde_json sorts keys without preserve_order; accept either member order.
    let a = "## \"a b\"\n  \"c,d\"[4]: \"x|y\",\"^{q}\",\"^{\",\" \"\n";
    let b = "## \"\" [1]{\"\"}\n\"\"\n";
    let text = v31(&v).unwrap();
    expected.push_str(&gcf(""));
    assert!(
        text == format!("{expected}{a}{b}") || text == format!("{expected}{b}{a}"),
        "{text}"
    );
}

#[test]
fn numbers() {
    #[derive(Serialize)]
    struct N {
        a: u64,
        b: i64,
        c: u128,
        d: i128,
        e: f32,
        f: f64,
        g: f64,
        h: i128,
    }
    let n = N {
        a: u64::MAX,
        b: i64::MIN,
        c: u128::MAX,
        d: -(10i128.pow(20)),
        e: 0.1,
        f: -0.0,
        g: 1e21,
        h: 10i128.pow(21) + 1,
    };
    assert_eq!(
        v31(&n).unwrap(),
        gcf(concat!(
            "a=18446744073709551615\n",
            "b=-9223372036854775808\n",
            "c=3.40282366920938463463374607431768211455e+38\n",
            "d=-100000000000000000000\n",
            "e=0.1\n",
            "f=-0\n",
            "g=1e+21\n",
            "h=1.000000000000000000001e+21\n",
        ))
    );
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = v31(&vec![bad]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidNumber);
    }
    assert_eq!(v31(&f32::NAN).unwrap_err().code(), "invalid_number");
}

#[test]
fn enums_bytes_units_and_maps() {
    #[derive(Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, u8),
        Struct { x: u8 },
    }
    assert_eq!(v31(&E::Unit).unwrap(), gcf("=Unit\n"));
    assert_eq!(v31(&E::New(1)).unwrap(), gcf("New=1\n"));
    assert_eq!(v31(&E::Tuple(1, 2)).unwrap(), gcf("Tuple[2]: 1,2\n"));
    assert_eq!(v31(&E::Struct { x: 3 }).unwrap(), gcf("## Struct\n  x=3\n"));
    assert_eq!(v31(&()).unwrap(), gcf("=-\n"));
    assert_eq!(v31(&serde_bytes_like()).unwrap(), gcf("## [3]: 0,1,255\n"));
    let mut m = BTreeMap::new();
    m.insert(10u32, 'x');
    m.insert(2u32, 'y');
    assert_eq!(v31(&m).unwrap(), gcf("\"2\"=y\n\"10\"=x\n"));
    let mut bad = BTreeMap::new();
    bad.insert((1, 2), 3);
    assert_eq!(v31(&bad).unwrap_err().kind(), ErrorKind::InvalidKey);
}

fn serde_bytes_like() -> Vec<u8> {
    vec![0, 1, 255]
}

/// A map that repeats a key (possible with hand-written `Serialize` or `flatten`).
struct Repeats;

impl Serialize for Repeats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("a", &1)?;
        map.serialize_entry("a", &2)?;
        map.end()
    }
}

#[test]
fn duplicate_keys_are_an_encode_error() {
    assert_eq!(
        to_string(&Repeats).unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
    assert_eq!(
        to_string(&[Repeats]).unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
    assert_eq!(
        to_string(&json!({"w": [{"nested": [Repeats]}]}))
            .err()
            .map(|e| e.kind()),
        None,
        "serde_json's map keeps one entry per key"
    );
    assert_eq!(
        to_string(&vec![vec![Repeats]]).unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
}

#[test]
fn to_writer_writes_the_same_bytes() {
    let v = json!({"a": [1, 2], "b": {"c": "d"}});
    let mut out = Vec::new();
    to_writer(&mut out, &v).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), to_string(&v).unwrap());

    struct Broken;
    impl std::io::Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let e = to_writer(Broken, &v).unwrap_err();
    assert!(e.is_io());
    assert!(std::error::Error::source(&e).is_some());
}
