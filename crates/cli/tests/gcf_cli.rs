//! `agentwire gcf` (pack roots, deltas, sessions) and `agentwire decode` across GCF versions.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{json, Value};

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

/// Writes `text` to `name` in `dir`, returning the path.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stdout(assert: assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.success().get_output().stdout.clone()).unwrap()
}

/// The keyed set of the v3.5.3 suite's `generic-pack-root/001_basic` and its root.
fn orders(rows: &[(u64, f64, &str, &str)]) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|(id, total, status, customer)| {
            json!({"id": id, "total": total, "status": status, "customer": customer})
        })
        .collect();
    json!({ "orders": rows })
}

const BASE_ROOT: &str = "sha256:457e7c31e62e070a039b5cde9ea3edff6330e5913874e1165afddbcf6798eb7c";
const NEW_ROOT: &str = "sha256:ebe554601676e61cd522a5dc13d78499fd20e730353eb3e0b18c7fdc088f0f05";

fn base_orders() -> Value {
    orders(&[
        (1001, 59.98, "shipped", "Alice"),
        (1002, 29.99, "pending", "Bob"),
        (1003, 129.5, "shipped", "Carol"),
    ])
}

fn new_orders() -> Value {
    orders(&[
        (1002, 29.99, "shipped", "Bob"),
        (1003, 129.5, "shipped", "Carol"),
        (1004, 75.0, "pending", "Dave"),
    ])
}

#[test]
fn decode_reads_every_version() {
    let text = "GCF profile=generic\n## [1:]{key,id,\"a>b\"}\nk|1|x\n";
    let current: Value = serde_json::from_str(&stdout(
        agentwire().arg("decode").write_stdin(text).assert(),
    ))
    .unwrap();
    assert_eq!(current, json!({"k": {"id": 1, "a": {"b": "x"}}}));
    // v3.1 reads `"a>b"` as a key, and has no keyed maps.
    let v31 = "GCF profile=generic\n## [1]{id,\"a>b\"}\n1|x\n";
    let value: Value = serde_json::from_str(&stdout(
        agentwire()
            .args(["decode", "--spec", "3.1"])
            .write_stdin(v31)
            .assert(),
    ))
    .unwrap();
    assert_eq!(value, json!([{"id": 1, "a>b": "x"}]));
    agentwire()
        .args(["decode", "--spec", "3.1"])
        .write_stdin(text)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "not valid GCF: invalid_count at line 2, column 4",
        ));
    // Constant columns and value-grouping (v3.6).
    let grouped = "GCF profile=generic\n## [3]{@id,kind,line,file=a.go} group=kind\nkind=fn [2]\n1|10\n2|20\nkind=method [1]\n3|30\n";
    let value: Value = serde_json::from_str(&stdout(
        agentwire().arg("decode").write_stdin(grouped).assert(),
    ))
    .unwrap();
    assert_eq!(
        value,
        json!([
            {"id": 1, "kind": "fn", "line": 10, "file": "a.go"},
            {"id": 2, "kind": "fn", "line": 20, "file": "a.go"},
            {"id": 3, "kind": "method", "line": 30, "file": "a.go"},
        ])
    );
}

#[test]
fn pack_roots_of_both_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(dir.path(), "base.json", &base_orders().to_string());
    let root = stdout(agentwire().args(["gcf", "pack-root"]).arg(&base).assert());
    assert_eq!(root, format!("{BASE_ROOT}\n"));
    // The same set as a GCF full payload, and as a keyed map.
    let full = stdout(
        agentwire()
            .args(["gcf", "apply"])
            .arg(&base)
            .arg(file(
                dir.path(),
                "empty.gcf",
                &format!(
            "GCF profile=generic delta=true base_root={BASE_ROOT} new_root={BASE_ROOT} key=id\n"
        ),
            ))
            .assert(),
    );
    assert!(full.starts_with(&format!(
        "GCF profile=generic pack_root={BASE_ROOT} key=id\n"
    )));
    let gcf = file(dir.path(), "base.gcf", &full);
    assert_eq!(
        stdout(agentwire().args(["gcf", "pack-root"]).arg(&gcf).assert()),
        format!("{BASE_ROOT}\n")
    );
    // The v3.1.0 suite's graph-pack-root/001.
    let graph = json!({
        "symbols": [
            {"qualifiedName": "pkg.Auth", "kind": "function", "score": 0.78, "provenance": "lsp_resolved", "distance": 0},
            {"qualifiedName": "pkg.Server", "kind": "function", "score": 0.54, "provenance": "lsp_resolved", "distance": 1}
        ],
        "edges": [{"source": "pkg.Server", "target": "pkg.Auth", "edgeType": "calls"}]
    });
    let graph = file(dir.path(), "graph.json", &graph.to_string());
    assert_eq!(
        stdout(agentwire().args(["gcf", "pack-root"]).arg(&graph).assert()),
        "sha256:8e6d32973b4005c604399a14faa32799d54f427800008312a3357c349d41e572\n"
    );
}

#[test]
fn generic_delta_and_apply() {
    let dir = tempfile::tempdir().unwrap();
    let base = file(dir.path(), "base.json", &base_orders().to_string());
    let new = file(dir.path(), "new.json", &new_orders().to_string());
    let delta = stdout(
        agentwire()
            .args(["gcf", "delta"])
            .arg(&base)
            .arg(&new)
            .args(["--tool", "orders_query"])
            .assert(),
    );
    // A delta where a snapshot belongs: the command that reads it, with its code and place.
    let given = file(dir.path(), "delta.gcf", &delta);
    agentwire()
        .args(["gcf", "delta"])
        .arg(&base)
        .arg(&given)
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("profile_mismatch at line 1, column ")
                .and(predicate::str::contains("agentwire gcf apply BASE DELTA")),
        );
    // The v3.5.3 suite's generic-delta/001 (without the token counts).
    assert_eq!(
        delta,
        format!(
            "GCF profile=generic tool=orders_query delta=true base_root={BASE_ROOT} \
             new_root={NEW_ROOT} key=id\n## added [1]{{@id,total,status,customer}}\n\
             1004|75|pending|Dave\n## changed [1]{{@id,total,status,customer}}\n\
             1002|29.99|shipped|Bob\n## removed [1]{{@id}}\n1001\n"
        )
    );
    let delta = file(dir.path(), "delta.gcf", &delta);
    let applied = stdout(
        agentwire()
            .args(["gcf", "apply", "--json"])
            .arg(&base)
            .arg(&delta)
            .assert(),
    );
    let applied: Value = serde_json::from_str(&applied).unwrap();
    assert_eq!(applied["orders"].as_array().unwrap().len(), 3);
    // Applied to another base: the roots do not verify.
    agentwire()
        .args(["gcf", "apply"])
        .arg(&new)
        .arg(&delta)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("delta.gcf: root_mismatch"));
    // A malformed delta: code, line and column.
    let bad = file(
        dir.path(),
        "bad.gcf",
        &format!("GCF profile=generic delta=true base_root={BASE_ROOT} new_root={NEW_ROOT} key=id\n## added [2]{{@id,total,status,customer}}\n1004|75|pending|Dave\n"),
    );
    agentwire()
        .args(["gcf", "apply"])
        .arg(&base)
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.gcf is not valid GCF: count_mismatch at line 2, column 10",
        ));
}

#[test]
fn graph_delta_and_apply() {
    let dir = tempfile::tempdir().unwrap();
    let symbol = |name: &str, score: f64, distance: u32| json!({"qualifiedName": name, "kind": "function", "score": score, "provenance": "lsp_resolved", "distance": distance});
    let base = json!({
        "symbols": [symbol("pkg.Auth", 0.78, 0), symbol("pkg.Server", 0.54, 1)],
        "edges": [{"source": "pkg.Server", "target": "pkg.Auth", "edgeType": "calls"}]
    });
    let new = json!({
        "symbols": [symbol("pkg.Auth", 0.78, 0), symbol("pkg.Handler", 0.85, 1)],
        "edges": [{"source": "pkg.Handler", "target": "pkg.Auth", "edgeType": "calls"}]
    });
    let base = file(dir.path(), "base.json", &base.to_string());
    let new_path = file(dir.path(), "new.json", &new.to_string());
    let delta = stdout(
        agentwire()
            .args(["gcf", "delta"])
            .arg(&base)
            .arg(&new_path)
            .assert(),
    );
    assert!(
        delta.contains("## added\n@0 fn pkg.Handler 0.85 lsp_resolved 1\n"),
        "{delta}"
    );
    let v31 = stdout(
        agentwire()
            .args(["gcf", "delta", "--spec", "3.1"])
            .arg(&base)
            .arg(&new_path)
            .assert(),
    );
    assert!(
        v31.contains("## added\n@0 fn pkg.Handler 0.85 lsp_resolved\n"),
        "{v31}"
    );
    let delta = file(dir.path(), "delta.gcf", &delta);
    let applied = stdout(
        agentwire()
            .args(["gcf", "apply"])
            .arg(&base)
            .arg(&delta)
            .assert(),
    );
    assert!(
        applied.starts_with("GCF profile=graph symbols=2 edges=1 pack_root=sha256:"),
        "{applied}"
    );
    assert_eq!(
        stdout(
            agentwire()
                .args(["gcf", "pack-root"])
                .arg(file(dir.path(), "applied.gcf", &applied))
                .assert()
        ),
        stdout(
            agentwire()
                .args(["gcf", "pack-root"])
                .arg(&new_path)
                .assert()
        )
    );
}

#[test]
fn sessions_of_both_profiles() {
    let dir = tempfile::tempdir().unwrap();
    // Keyed sets: full, delta, then a re-anchor every second turn.
    let calls: Vec<PathBuf> = [
        base_orders(),
        new_orders(),
        orders(&[(1002, 29.99, "shipped", "Bob")]),
    ]
    .iter()
    .enumerate()
    .map(|(i, v)| file(dir.path(), &format!("call{i}.json"), &v.to_string()))
    .collect();
    let out = stdout(
        agentwire()
            .args(["gcf", "session", "--reanchor", "2"])
            .args(&calls)
            .assert(),
    );
    let payloads: Vec<&str> = out
        .split_inclusive('\n')
        .filter(|l| l.starts_with("GCF "))
        .collect();
    assert_eq!(payloads.len(), 3, "{out}");
    assert!(payloads[0].starts_with(&format!("GCF profile=generic pack_root={BASE_ROOT} key=id")));
    assert!(payloads[1].starts_with("GCF profile=generic delta=true"));
    assert!(payloads[2].starts_with("GCF profile=generic pack_root="));
    // Graphs: the second call refers to the symbol the first sent.
    let graph = json!({"tool": "ctx", "symbols": [
        {"qualifiedName": "pkg.Auth", "kind": "function", "score": 0.78, "provenance": "lsp", "distance": 0}
    ], "edges": []});
    let g = file(dir.path(), "g.json", &graph.to_string());
    let out = stdout(
        agentwire()
            .args(["gcf", "session"])
            .arg(&g)
            .arg(&g)
            .assert(),
    );
    assert_eq!(
        out,
        "GCF profile=graph tool=ctx symbols=1 session=true\n## targets\n@0 fn pkg.Auth 0.78 lsp\n\
         GCF profile=graph tool=ctx symbols=1 session=true\n## targets\n@0  # previously transmitted\n"
    );
    // Profiles do not mix.
    agentwire()
        .args(["gcf", "session"])
        .arg(&g)
        .arg(&calls[0])
        .assert()
        .code(2);
}

/// `agentwire decode` of a delta or an `unchanged` reply (a change, not a value) says which
/// command reads it, with the code and position of the header field.
#[test]
fn decode_points_a_delta_to_gcf_apply() {
    for text in [
        format!(
            "GCF profile=generic delta=true base_root={BASE_ROOT} new_root={NEW_ROOT} key=id\n\
             ## removed [1]{{@id}}\n1001\n"
        ),
        format!("GCF profile=generic unchanged=true base_root={BASE_ROOT} key=id\n"),
        format!(
            "GCF profile=graph tool=t delta=true base_root={BASE_ROOT} new_root={NEW_ROOT}\n\
             ## removed\nfn a.f0\n"
        ),
    ] {
        agentwire()
            .arg("decode")
            .write_stdin(text.clone())
            .assert()
            .failure()
            .stderr(
                predicate::str::contains("profile_mismatch at line 1, column ")
                    .and(predicate::str::contains("agentwire gcf apply BASE DELTA")),
            );
    }
}
