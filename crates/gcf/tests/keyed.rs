//! Keyed sets, generic deltas and sessions (spec §10a): the v3.5.3 suite's roots and bytes,
//! every error, and property tests: any two sets with the same columns, delta'd, encoded,
//! decoded and applied, give the second set; a session's consumer holds every set in turn.

use agentwire_gcf::{
    GenericDelta, GenericPayload, GenericSession, GenericSessionDecoder, KeyedSet, Reanchor,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

#[allow(clippy::needless_pass_by_value)] // called with json!(...)
fn set(value: Value) -> KeyedSet {
    KeyedSet::from_value(&value, "id").unwrap()
}

/// The orders of the suite's `generic-pack-root/001_basic`, in its column order.
fn orders(rows: &[(i64, f64, &str, &str)]) -> KeyedSet {
    let mut set = KeyedSet::new(
        "orders",
        "id",
        ["id", "total", "status", "customer"]
            .map(String::from)
            .to_vec(),
    );
    set.rows = rows
        .iter()
        .map(|(id, total, status, customer)| {
            let mut row = Map::new();
            row.insert("id".into(), json!(id));
            row.insert("total".into(), json!(total));
            row.insert("status".into(), json!(status));
            row.insert("customer".into(), json!(customer));
            row
        })
        .collect();
    set
}

const BASE_ROOT: &str = "sha256:457e7c31e62e070a039b5cde9ea3edff6330e5913874e1165afddbcf6798eb7c";
const NEW_ROOT: &str = "sha256:ebe554601676e61cd522a5dc13d78499fd20e730353eb3e0b18c7fdc088f0f05";

fn base() -> KeyedSet {
    orders(&[
        (1001, 59.98, "shipped", "Alice"),
        (1002, 29.99, "pending", "Bob"),
        (1003, 129.5, "shipped", "Carol"),
    ])
}

fn new() -> KeyedSet {
    orders(&[
        (1002, 29.99, "shipped", "Bob"),
        (1003, 129.5, "shipped", "Carol"),
        (1004, 75.0, "pending", "Dave"),
    ])
}

#[test]
fn pack_roots_are_the_suites() {
    assert_eq!(base().pack_root().unwrap(), BASE_ROOT);
    // Row order and field order do not count.
    let mut shuffled = base();
    shuffled.rows.reverse();
    shuffled.fields.reverse();
    assert_eq!(shuffled.pack_root().unwrap(), BASE_ROOT);
    // generic-pack-root/002 and 003: nulls, and string identities never colliding with numbers.
    let nulls = set(json!([
        {"id": 2001, "total": 10.0, "status": null, "customer": "Amy"},
        {"id": 2002, "total": null, "status": "open", "customer": null}
    ]));
    assert_eq!(
        nulls.pack_root().unwrap(),
        "sha256:84b2a9ac218ff633f64e5fc390e5c05bb102c7dd54a6b53b2702fc97989c83d4"
    );
    let skus = KeyedSet::from_value(
        &json!([{"sku": "1001", "name": "Widget", "qty": 5}, {"sku": "A-200", "name": "Gadget", "qty": 3}]),
        "sku",
    )
    .unwrap();
    assert_eq!(
        skus.pack_root().unwrap(),
        "sha256:7ba93e0db386567b1ef2b53913238152b77def17f984a794f24bad3a26e097c1"
    );
    // 005: canonical numbers.
    let numbers = set(json!([
        {"id": 1, "x": 129.5}, {"id": 2, "x": 75.0}, {"id": 3, "x": 1000000}, {"id": 4, "x": 0.001},
        {"id": 5, "x": -0.5}, {"id": 6, "x": std::f64::consts::PI}, {"id": 7, "x": -42}, {"id": 8, "x": 0}
    ]));
    assert_eq!(
        numbers.pack_root().unwrap(),
        "sha256:ebf382c9209eaf77542cd120c239b94d068f96025eeceb32c11a0adf5532af81"
    );
}

#[test]
fn sets_refuse_what_they_cannot_hold() {
    for (value, key) in [
        (json!([{"id": 1}, {"id": 1}]), "id"),
        (json!([{"id": 1}, {"x": 2}]), "id"),
        (json!([{"id": 1, "x": [1]}]), "id"),
        (json!([1, 2]), "id"),
        (json!("x"), "id"),
        (json!([{"x": 1}]), "id"),
    ] {
        let e = KeyedSet::from_value(&value, key).unwrap_err();
        assert_eq!(e.code(), "unsupported_value", "{value}");
    }
    // A keyed map: the member key in the identity column.
    let map = set(json!({"web": {"cpu": 1}, "db": {"cpu": 2}}));
    assert_eq!(map.rows.len(), 2);
    assert!(map.rows.iter().all(|row| row["id"].is_string()));
    let e = KeyedSet::from_value(&json!({"a": {"id": 1}, "b": {"x": 2}}), "id").unwrap_err();
    assert_eq!(e.code(), "unsupported_value");
    // An integer outside i64 has no canonical form.
    let e = set(json!([{"id": 1, "x": u64::MAX}]))
        .pack_root()
        .unwrap_err();
    assert_eq!(e.code(), "out_of_range");
}

#[test]
fn full_payloads_and_deltas_are_the_suites_bytes() {
    let full = base().encode(Some("orders_query")).unwrap();
    assert_eq!(
        full,
        format!(
            "GCF profile=generic tool=orders_query pack_root={BASE_ROOT} key=id\n\
             ## orders [3]{{@id,total,status,customer}}\n1001|59.98|shipped|Alice\n\
             1002|29.99|pending|Bob\n1003|129.5|shipped|Carol\n"
        )
    );
    assert_eq!(KeyedSet::decode(&full).unwrap(), base());
    let mut delta = GenericDelta::between(&base(), &new()).unwrap();
    delta.tool = Some("orders_query".into());
    delta.set_token_counts(30, 160);
    let text = delta.encode().unwrap();
    assert_eq!(
        text,
        format!(
            "GCF profile=generic tool=orders_query delta=true base_root={BASE_ROOT} \
             new_root={NEW_ROOT} key=id savings=81%\n\
             ## added [1]{{@id,total,status,customer}}\n1004|75|pending|Dave\n\
             ## changed [1]{{@id,total,status,customer}}\n1002|29.99|shipped|Bob\n\
             ## removed [1]{{@id}}\n1001\n"
        )
    );
    let decoded = GenericDelta::decode(&text).unwrap();
    assert_eq!(decoded.encode().unwrap(), text);
    let applied = decoded.apply(&base()).unwrap();
    assert_eq!(applied.pack_root().unwrap(), NEW_ROOT);
    // Rows keep the base's order, changed ones in place, added ones last.
    let ids: Vec<&Value> = applied.rows.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!(1002), &json!(1003), &json!(1004)]);
    // An empty delta: the header alone.
    let empty = GenericDelta::between(&base(), &base()).unwrap();
    assert!(empty.is_empty());
    assert_eq!(
        empty.encode().unwrap(),
        format!(
            "GCF profile=generic delta=true base_root={BASE_ROOT} new_root={BASE_ROOT} key=id\n"
        )
    );
}

#[test]
fn applying_checks_everything_first() {
    let delta = GenericDelta::between(&base(), &new()).unwrap();
    let code = |result: agentwire_gcf::Result<KeyedSet>| result.unwrap_err().code();
    // Another base; a wrong new root.
    assert_eq!(code(delta.apply(&new())), "root_mismatch");
    let mut wrong = delta.clone();
    wrong.new_root = "sha256:00".into();
    assert_eq!(code(wrong.apply(&base())), "root_mismatch");
    // Contradictions (generic-delta/004: "already exists").
    let mut add_existing = delta.clone();
    add_existing.added.push(base().rows[2].clone());
    let e = add_existing.apply(&base()).unwrap_err();
    assert_eq!(e.code(), "malformed_delta");
    assert!(e.message().contains("already exists"), "{e}");
    let mut remove_missing = delta.clone();
    remove_missing.removed.push(json!(9999));
    assert_eq!(code(remove_missing.apply(&base())), "malformed_delta");
    let mut twice = delta.clone();
    twice.removed.push(json!(1002));
    assert_eq!(code(twice.apply(&base())), "malformed_delta");
    let mut columns = delta.clone();
    columns.fields.pop();
    assert_eq!(code(columns.apply(&base())), "malformed_delta");
    // A schema change is not a delta.
    let mut other = new();
    other.fields.pop();
    for row in &mut other.rows {
        row.remove("customer");
    }
    assert_eq!(
        GenericDelta::between(&base(), &other).unwrap_err().code(),
        "unsupported_value"
    );
}

#[test]
fn decoding_deltas_reports_positions() {
    let header = format!(
        "GCF profile=generic delta=true base_root={BASE_ROOT} new_root={NEW_ROOT} key=id\n"
    );
    let error = |body: &str| {
        let e = GenericDelta::decode(&format!("{header}{body}")).unwrap_err();
        (e.code(), e.line().unwrap_or(0), e.column().unwrap_or(0))
    };
    assert_eq!(error("## moved [1]{@id}\n1\n"), ("malformed_delta", 2, 4));
    assert_eq!(
        error("## removed [1]{@id}\n1\n## removed [1]{@id}\n2\n"),
        ("malformed_delta", 4, 4)
    );
    assert_eq!(
        error("## added [2]{@id,x}\n1|2\n"),
        ("count_mismatch", 2, 10)
    );
    assert_eq!(
        error("## added [1]{@id,x}\n1|2\n3|4\n"),
        ("count_mismatch", 4, 1)
    );
    assert_eq!(
        error("## added [1]{@id,x}\n1|~\n"),
        ("malformed_delta", 3, 3)
    );
    assert_eq!(
        error("## added [1]{@id,x}\n1|2|3\n"),
        ("row_width_mismatch", 3, 1)
    );
    // Declarations point at their `{`.
    assert_eq!(
        error("## added [1]{id,x}\n1|2\n"),
        ("malformed_delta", 2, 13)
    );
    assert_eq!(
        error("## added [1]{@x,id}\n1|2\n"),
        ("malformed_delta", 2, 13)
    );
    assert_eq!(
        error("## removed [1]{@id,x}\n1|2\n"),
        ("malformed_delta", 2, 15)
    );
    assert_eq!(
        error("## added [1]{@id,x}\n1|2\n## changed [1]{@id,y}\n1|2\n"),
        ("malformed_delta", 4, 15)
    );
    assert_eq!(error("1|2\n"), ("malformed_delta", 2, 1));
    assert_eq!(
        error("## added [1]{@id,x}\n@0 1|2\n"),
        ("malformed_delta", 3, 1)
    );
    assert_eq!(
        error("## added [1]{@id,x}\n99999999999999999999|2\n"),
        ("out_of_range", 3, 1)
    );
    let e = GenericDelta::decode("GCF profile=generic key=id\n").unwrap_err();
    assert_eq!(e.code(), "malformed_delta");
    let e = GenericDelta::decode("GCF profile=generic delta=true key=id\n").unwrap_err();
    assert_eq!(e.code(), "malformed_delta");
    let e =
        GenericDelta::decode("GCF profile=graph delta=true base_root=a new_root=b\n").unwrap_err();
    assert_eq!(e.code(), "profile_mismatch");
}

#[test]
fn the_suites_sessions() {
    // generic-delta-session/001: fixed N = 3 gives delta, delta, full, delta, delta.
    let steps = [
        orders(&[
            (1001, 59.98, "shipped", "Alice"),
            (1002, 29.99, "shipped", "Bob"),
            (1003, 129.5, "shipped", "Carol"),
        ]),
        orders(&[
            (1001, 59.98, "shipped", "Alice"),
            (1002, 29.99, "shipped", "Bob"),
            (1003, 129.5, "shipped", "Carol"),
            (1004, 75.0, "pending", "Dave"),
        ]),
        orders(&[
            (1002, 29.99, "shipped", "Bob"),
            (1003, 129.5, "shipped", "Carol"),
            (1004, 75.0, "pending", "Dave"),
        ]),
        orders(&[
            (1002, 29.99, "shipped", "Bob"),
            (1003, 140.0, "delivered", "Carol"),
            (1004, 75.0, "pending", "Dave"),
        ]),
        orders(&[
            (1002, 29.99, "shipped", "Bob"),
            (1003, 140.0, "delivered", "Carol"),
            (1004, 75.0, "pending", "Dave"),
            (1005, 12.0, "pending", "Eve"),
        ]),
    ];
    let mut session =
        GenericSession::new(base(), Some("orders_query".into()), Reanchor::Every(3)).unwrap();
    let mut consumer = GenericSessionDecoder::new();
    consumer.decode(&session.full().unwrap()).unwrap();
    let mut fulls = Vec::new();
    for step in &steps {
        let emission = session.next(step.clone()).unwrap();
        fulls.push(emission.full);
        let held = consumer.decode(&emission.text).unwrap();
        assert_eq!(held.pack_root().unwrap(), step.pack_root().unwrap());
        if !emission.full {
            assert!(!emission.text.contains("tool="), "{}", emission.text);
        }
    }
    assert_eq!(fulls, [false, false, true, false, false]);
    // A schema change is sent in full (003).
    let mut other = orders(&[(1001, 59.98, "shipped", "Alice")]);
    other.fields.pop();
    for row in &mut other.rows {
        row.remove("customer");
    }
    let emission = session.next(other.clone()).unwrap();
    assert!(emission.full);
    assert_eq!(consumer.decode(&emission.text).unwrap(), &other);
    // The consumer keeps its set when a payload fails, and refuses a delta without a base.
    let held = consumer.current().cloned();
    assert!(consumer
        .decode("GCF profile=generic delta=true base_root=x new_root=y key=id\n")
        .is_err());
    assert_eq!(consumer.current().cloned(), held);
    let mut fresh = GenericSessionDecoder::new();
    let delta = GenericDelta::between(&base(), &new())
        .unwrap()
        .encode()
        .unwrap();
    assert_eq!(fresh.decode(&delta).unwrap_err().code(), "root_mismatch");
    // The unchanged reply.
    let reply = GenericPayload::respond(Some(&other), &other, Some("t")).unwrap();
    assert_eq!(consumer.decode(&reply.encode().unwrap()).unwrap(), &other);
}

#[test]
fn the_size_guard_reanchors_on_bytes() {
    // generic-delta-session/002's shape: 20 rows, one or two changed per turn.
    let turn = |shipped: &[usize]| {
        let rows: Vec<Value> = (0..20)
            .map(|i| {
                let status = if shipped.contains(&i) { "shipped" } else { "pending" };
                json!({"id": 2000 + i, "total": 10 + i, "status": status, "customer": format!("c{i}")})
            })
            .collect();
        set(json!({ "rows": rows }))
    };
    let mut session = GenericSession::new(turn(&[]), None, Reanchor::SizeGuard).unwrap();
    let full = session.full().unwrap().len();
    let mut since = 0;
    for step in [&[0][..], &[1], &[2], &[3], &[4], &[5], &[6]] {
        let emission = session.next(turn(step)).unwrap();
        if emission.full {
            since = 0;
        } else {
            since += emission.text.len();
            assert!(since < full, "a delta past the size of a full payload");
        }
    }
}

/// A set of up to 12 rows from ids 0..20 with two columns of small values.
fn arb_set() -> impl Strategy<Value = KeyedSet> {
    prop::collection::btree_map(
        0u8..20,
        (
            prop_oneof![
                Just(json!(null)),
                (0i64..5).prop_map(|n| json!(n)),
                "[a-c|~\\- ]{0,3}".prop_map(|s| json!(s))
            ],
            prop_oneof![Just(json!(true)), (0.0f64..3.0).prop_map(|x| json!(x))],
        ),
        0..12,
    )
    .prop_map(|rows| {
        let mut set = KeyedSet::new("t", "id", vec!["id".into(), "a".into(), "b".into()]);
        set.rows = rows
            .into_iter()
            .map(|(id, (a, b))| {
                let mut row = Map::new();
                row.insert("id".into(), json!(id));
                row.insert("a".into(), a);
                row.insert("b".into(), b);
                row
            })
            .collect();
        set
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn deltas_turn_any_set_into_any_other(base in arb_set(), new in arb_set()) {
        let delta = GenericDelta::between(&base, &new).unwrap();
        let text = delta.encode().unwrap();
        let decoded = GenericDelta::decode(&text).unwrap();
        prop_assert_eq!(decoded.encode().unwrap(), text.clone());
        let applied = decoded.apply(&base).unwrap();
        prop_assert_eq!(applied.pack_root().unwrap(), new.pack_root().unwrap());
        // The full payload reads back to the set.
        let full = new.encode(None).unwrap();
        prop_assert_eq!(KeyedSet::decode(&full).unwrap(), new);
    }
}

/// Found by the `gcf_layouts` fuzz target: a keyed set's repeated identity (line 5) was
/// reported after a bad line under it (line 6) by the `Value` decoder, before it by the serde
/// decoder. Both report the first error in reading order now.
#[test]
fn a_repeated_identity_is_reported_where_it_is_read() {
    let text =
        "GCF profile=generic pack_root=sha256:x key=id\n## [3]{@id,name=2.5}\n0\nk0\nk0\n :\n";
    let error = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!((error.code(), error.line()), ("duplicate_key", Some(5)));
    if let Err(bug) = agentwire_testkit::gcf::check_bytes(text.as_bytes()) {
        panic!("{bug}");
    }
    // The same with a keyed map's member key (`gcf_decode`), a comment line between.
    let text =
        "GCF profile=generic\n## m [?:]{key,\"a,b\"}\nk2|99\nk2|#\n# [2]{id}\n \x0c[3]{id}\n";
    let error = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!((error.code(), error.line()), ("duplicate_key", Some(4)));
    if let Err(bug) = agentwire_testkit::gcf::check_bytes(text.as_bytes()) {
        panic!("{bug}");
    }
}

/// Found by the `gcf_generic_delta` fuzz target: a keyed set's double `1e+2` is written in the
/// spec's canonical form, `100` (v3.5.3 §2.3.1), which reads back as the integer: the same
/// JSON number, which the oracle now compares as such.
#[test]
fn a_whole_double_in_a_keyed_set_is_written_canonically() {
    for text in [
        "GCF profile=generic key=id\n## t [3]{@id,status}\n2|-\n-4|é\n\"1\"|1e+2\n",
        // The same in a delta's rows.
        "GCF profile=generic delta=true base_root=sha256:00 new_root=sha256:11 key=id\n\
         ## added [1]{@id,\"a>b\",\"\"}\nx y|2.5|1e+1\n",
    ] {
        if let Err(bug) = agentwire_testkit::gcf_keyed::check_payload_bytes(text.as_bytes()) {
            panic!("{bug}");
        }
    }
}
