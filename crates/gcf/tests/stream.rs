//! The streaming encoder: rows go out as they arrive, `[?]` counts, the trailer, and what the
//! decoder makes of the result; misuse and I/O errors are typed errors.

use std::collections::BTreeMap;
use std::io::{self, Write};

use agentwire_gcf::{
    from_str, DecoderOptions, EncoderOptions, ErrorKind, GenericStreamEncoder, Spec,
};
use serde::Serialize;
use serde_json::{json, Value};

#[derive(Serialize)]
struct Employee {
    id: u32,
    name: &'static str,
    department: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    manager: Option<u32>,
    tags: Vec<&'static str>,
}

fn utf8(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap()
}

#[test]
fn the_spec_example_and_its_round_trip() {
    let mut out = Vec::new();
    let mut enc = GenericStreamEncoder::new(&mut out).unwrap();
    {
        let mut t = enc
            .table("employees", &["id", "name", "department", "salary"])
            .unwrap();
        for (id, name, department, salary) in [
            (1, "Alice Smith", "Engineering", 95000),
            (2, "Bob Jones", "Sales", 72000),
            (3, "Carol Wu", "Marketing", 85000),
        ] {
            t.row(&json!({"id": id, "name": name, "department": department, "salary": salary}))
                .unwrap();
        }
        assert_eq!(t.finish(), 3);
    }
    enc.finish().unwrap();
    let text = utf8(out);
    // Spec §8.8, byte for byte (with serde_json's member order irrelevant: rows are
    // written in the declared field order).
    assert_eq!(
        text,
        "GCF profile=generic\n## employees [?]{id,name,department,salary}\n\
         1|Alice Smith|Engineering|95000\n2|Bob Jones|Sales|72000\n3|Carol Wu|Marketing|85000\n\
         ##! summary counts=3\n"
    );
    let v: Value = from_str(&text).unwrap();
    assert_eq!(v["employees"][2]["salary"], 85000);
}

#[test]
fn rows_with_attachments_lists_and_nested_objects() {
    let mut out = Vec::new();
    let mut enc = GenericStreamEncoder::new(&mut out).unwrap();
    enc.member("version", &3).unwrap();
    enc.member("flags", &["a", "b"]).unwrap();
    enc.begin_object("data").unwrap();
    enc.member("source", &"db").unwrap();
    {
        let mut t = enc
            .table("staff", &["id", "name", "department", "manager", "tags"])
            .unwrap();
        t.row(&Employee {
            id: 1,
            name: "Ann",
            department: "R&D",
            manager: None,
            tags: vec!["x"],
        })
        .unwrap();
        t.row(&Employee {
            id: 2,
            name: "Bo",
            department: "-",
            manager: Some(1),
            tags: vec![],
        })
        .unwrap();
        assert_eq!(t.len(), 2);
    }
    {
        let mut l = enc.list("events").unwrap();
        l.item(&"started").unwrap();
        l.item(&json!({"at": 1, "who": {"id": 2}})).unwrap();
        l.item(&[1, 2]).unwrap();
        l.item(&Vec::<u8>::new()).unwrap();
    }
    enc.end_object().unwrap();
    enc.member("after", &json!({"ok": true})).unwrap();
    assert_eq!(enc.deferred_sections(), 2);
    enc.finish().unwrap();
    let text = utf8(out);
    assert_eq!(
        text,
        concat!(
            "GCF profile=generic\n",
            "version=3\n",
            "flags[2]: a,b\n",
            "## data\n",
            "  source=db\n",
            "  ## staff [?]{id,name,department,manager,tags}\n",
            "  @0 1|Ann|R&D|~|^\n",
            "  .tags [1]: x\n",
            "  @1 2|Bo|\"-\"|1|^\n",
            "  .tags [0]\n",
            "  ## events [?]\n",
            "  @0 =started\n",
            "  @1 {}\n",
            "    at=1\n",
            "    ## who\n",
            "      id=2\n",
            "  @2 [2]: 1,2\n",
            "  @3 [0]\n",
            "## after\n",
            "  ok=true\n",
            "##! summary counts=2,4\n",
        )
    );
    let v: Value = from_str(&text).unwrap();
    assert_eq!(
        v,
        json!({
            "version": 3,
            "flags": ["a", "b"],
            "data": {
                "source": "db",
                "staff": [
                    {"id": 1, "name": "Ann", "department": "R&D", "tags": ["x"]},
                    {"id": 2, "name": "Bo", "department": "-", "manager": 1, "tags": []},
                ],
                "events": ["started", {"at": 1, "who": {"id": 2}}, [1, 2], []],
            },
            "after": {"ok": true},
        })
    );
}

#[test]
fn root_arrays_and_empty_streams() {
    let mut out = Vec::new();
    let mut enc = GenericStreamEncoder::new(&mut out).unwrap();
    {
        let mut t = enc.root_table(&["k", "v"]).unwrap();
        let mut row = BTreeMap::new();
        row.insert("v", "1");
        t.row(&row).unwrap();
    }
    assert!(enc.member("x", &1).is_err());
    enc.finish().unwrap();
    let text = utf8(out);
    assert_eq!(
        text,
        "GCF profile=generic\n## [?]{k,v}\n~|\"1\"\n##! summary counts=1\n"
    );
    assert_eq!(from_str::<Value>(&text).unwrap(), json!([{"v": "1"}]));

    let mut out = Vec::new();
    let mut enc = GenericStreamEncoder::new(&mut out).unwrap();
    enc.root_list().unwrap().finish();
    enc.finish().unwrap();
    let text = utf8(out);
    assert_eq!(text, "GCF profile=generic\n## [?]\n##! summary counts=0\n");
    assert_eq!(from_str::<Value>(&text).unwrap(), json!([]));

    let out = GenericStreamEncoder::new(Vec::new())
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(text_of(&out), "GCF profile=generic\n##! summary\n");
    assert_eq!(from_str::<Value>(&text_of(&out)).unwrap(), json!({}));
}

fn text_of(out: &[u8]) -> String {
    String::from_utf8(out.to_vec()).unwrap()
}

#[test]
fn a_stream_cut_short_is_truncated_input() {
    let mut out = Vec::new();
    let mut enc = GenericStreamEncoder::new(&mut out).unwrap();
    let mut t = enc.table("rows", &["id"]).unwrap();
    for id in 0..3 {
        t.row(&json!({ "id": id })).unwrap();
    }
    drop(enc);
    let cut = utf8(out);
    let e = from_str::<Value>(&cut).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TruncatedInput);
    let lenient: Value = DecoderOptions::new()
        .require_trailer(false)
        .from_str(&cut)
        .unwrap();
    assert_eq!(lenient["rows"].as_array().map(Vec::len), Some(3));
}

#[test]
fn misuse_is_a_typed_error() {
    let mut enc = GenericStreamEncoder::new(Vec::new()).unwrap();
    enc.member("a", &1).unwrap();
    assert_eq!(
        enc.member("a", &2).unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
    assert_eq!(
        enc.table("t", &[]).unwrap_err().kind(),
        ErrorKind::UnsupportedValue
    );
    assert_eq!(
        enc.table("t", &["x", "x"]).unwrap_err().kind(),
        ErrorKind::DuplicateFieldName
    );
    {
        let mut t = enc.table("rows", &["id"]).unwrap();
        let e = t.row(&json!({"id": 1, "other": 2})).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsupportedValue);
        assert!(e.message().contains("\"other\""));
        assert_eq!(
            t.row(&json!([1])).unwrap_err().kind(),
            ErrorKind::UnsupportedValue
        );
        assert_eq!(
            t.row(&f64::NAN).unwrap_err().kind(),
            ErrorKind::InvalidNumber
        );
        t.row(&json!({"id": 7})).unwrap();
    }
    // A key=value line right after a deferred table would read as another row.
    assert_eq!(
        enc.member("late", &1).unwrap_err().kind(),
        ErrorKind::UnsupportedValue
    );
    enc.member("section", &json!({"ok": 1})).unwrap();
    enc.member("late", &1).unwrap();
    assert_eq!(
        enc.end_object().unwrap_err().kind(),
        ErrorKind::UnsupportedValue
    );
    assert!(enc.root_table(&["x"]).is_err());
    let out = enc.finish().unwrap();
    let v: Value = from_str(&text_of(&out)).unwrap();
    assert_eq!(v["rows"], json!([{"id": 7}]), "failed rows leave no trace");
}

#[test]
fn v3_1_streams_read_by_v3_1_and_refuse_keyed_maps() {
    let rows = [
        json!({"id": 1, "a>b": "x", "nested": {"k": 1, "l": [1, 2]}, "tags": ["p", "q"]}),
        json!({"id": 2, "a>b": "y|z", "nested": {"k": 2}, "tags": []}),
    ];
    let v3_1 = || EncoderOptions::new().spec(Spec::V3_1);
    let mut enc = GenericStreamEncoder::with_options(Vec::new(), v3_1()).unwrap();
    {
        // `>` is a plain key character in v3.1: a column may hold it.
        let mut table = enc.root_table(&["id", "a>b", "nested", "tags"]).unwrap();
        for row in &rows {
            table.row(row).unwrap();
        }
    }
    let text = utf8(enc.finish().unwrap());
    assert_eq!(
        text,
        "GCF profile=generic\n## [?]{id,\"a>b\",nested,tags}\n\
         @0 1|x|^|^\n.nested {}\n    k=1\n    l[2]: 1,2\n.tags [2]: p,q\n\
         @1 2|\"y|z\"|^|^\n.nested {}\n    k=2\n.tags [0]\n\
         ##! summary counts=2\n"
    );
    let back: Value = DecoderOptions::new()
        .spec(Spec::V3_1)
        .from_str(&text)
        .unwrap();
    assert_eq!(back, Value::Array(rows.to_vec()));

    // A keyed map `[?:]` is current-spec syntax: a v3.1 stream refuses it, nested or root.
    let mut enc = GenericStreamEncoder::with_options(Vec::new(), v3_1()).unwrap();
    let e = enc.keyed_table("servers", &["cpu"]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedValue);
    assert!(e.message().contains("v3.1"), "{e}");
    assert_eq!(
        enc.root_keyed_table(&["cpu"]).unwrap_err().kind(),
        ErrorKind::UnsupportedValue
    );
    // Nothing was claimed by the refusals: the stream goes on.
    enc.member("servers", &json!({"web": {"cpu": 1}})).unwrap();
    let text = utf8(enc.finish().unwrap());
    let back: Value = DecoderOptions::new()
        .spec(Spec::V3_1)
        .from_str(&text)
        .unwrap();
    assert_eq!(back, json!({"servers": {"web": {"cpu": 1}}}));
}

/// Accepts `budget` bytes, then fails.
#[derive(Debug)]
struct Failing {
    budget: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget < buf.len() {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        }
        self.budget -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn io_errors_stop_the_stream() {
    assert!(GenericStreamEncoder::new(Failing { budget: 3 })
        .unwrap_err()
        .is_io());
    let mut enc = GenericStreamEncoder::new(Failing { budget: 40 }).unwrap();
    let mut t = enc.table("r", &["a"]).unwrap();
    t.row(&json!({"a": 1})).unwrap();
    let e = t
        .row(&json!({"a": "a long value that does not fit"}))
        .unwrap_err();
    assert!(e.is_io());
    assert_eq!(
        t.row(&json!({"a": 2})).unwrap_err().kind(),
        ErrorKind::UnsupportedValue
    );
    assert!(enc.finish().is_err());
}

#[test]
fn memory_per_row_is_constant() {
    // A million rows through a sink that discards them: the encoder keeps one row's worth.
    struct Sink(u64);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut enc = GenericStreamEncoder::new(Sink(0)).unwrap();
    let mut t = enc.table("r", &["i", "s"]).unwrap();
    for i in 0..20_000u32 {
        t.row(&(Row { i, s: "x" })).unwrap();
    }
    assert_eq!(t.finish(), 20_000);
    let sink = enc.finish().unwrap();
    assert!(sink.0 > 20_000 * 4);

    #[derive(Serialize)]
    struct Row {
        i: u32,
        s: &'static str,
    }
}
