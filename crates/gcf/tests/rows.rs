//! The row reader and the streaming readers against the in-memory decoder.

use agentwire_gcf::{DecoderOptions, RowReader};
use serde_json::{json, Value};

fn rows(text: &str) -> agentwire_gcf::Result<Vec<Value>> {
    let mut r = RowReader::new(text.as_bytes())?;
    r.values().collect()
}

/// The row reader refuses `text` with `code` at `line`, and the streaming oracle holds (the
/// whole decoder refuses it alike); the error, for more checks.
fn refused_alike(text: &str, code: &str, line: u64) -> agentwire_gcf::Error {
    let error = rows(text).unwrap_err();
    assert_eq!(
        (error.code(), error.line()),
        (code, Some(line)),
        "{text:?}: {error}"
    );
    streams_alike(text);
    error
}

/// The rows must be what the whole payload decodes to (a root table, or the one member).
fn same(text: &str) {
    let whole: Value = agentwire_gcf::from_str(text).unwrap();
    let table = match whole {
        Value::Array(a) => a,
        Value::Object(m) => m.into_iter().next().unwrap().1.as_array().unwrap().clone(),
        other => panic!("{other}"),
    };
    assert_eq!(rows(text).unwrap(), table, "{text}");
    let again: Value = agentwire_gcf::from_reader(text.as_bytes()).unwrap();
    assert_eq!(again, agentwire_gcf::from_str::<Value>(text).unwrap());
}

#[test]
fn rows_of_every_form_read_as_the_whole_payload() {
    same("GCF profile=generic\n## [2]{id,name}\n1|a\n2|b\n");
    same("GCF profile=generic\n## [?]{id,name}\n1|a\n2|b\n##! summary counts=2\n");
    same("GCF profile=generic\n## orders [?]{id,name}\n1|a\n# comment\n\n2|b\n##! summary counts=2\n");
    same(concat!(
        "GCF profile=generic\n",
        "## orders [2]{id,total,status,customer,tags}\n",
        "@0 1001|249.99|shipped|^|^\n",
        ".customer {}\n",
        "    name=Alice Smith\n",
        "    tier=premium\n",
        ".tags [2]: express,gift\n",
        "@1 1002|89.50|pending|^|~\n",
        ".customer {}\n",
        "    name=Bob Jones\n",
        "    tier=standard\n",
    ));
    same(concat!(
        "GCF profile=generic\n",
        "## orders [3]{id,customer,total,status}\n",
        "@0 ORD-001|^{id,name,email,phone}|109.97|shipped\n",
        "1|Alice|alice@test.com|\"555-0101\"\n",
        "@1 ORD-002|^|49.99|pending\n",
        "2|Bob|bob@test.com|\"555-0202\"\n",
        "@2 ORD-003|~|1|x\n",
    ));
    same("GCF profile=generic\n## [2]{id,\"customer>name\",env=prod}\n1|Ann\n2|Bo\n");
    let orders = json!([{"id": 1, "tags": ["a"], "n": null}, {"id": 2, "tags": [], "n": {"x": 1}}]);
    same(&agentwire_gcf::to_string(&orders).unwrap());
}

#[test]
fn deferred_sections_inside_rows_have_their_trailer_entries() {
    let text = concat!(
        "GCF profile=generic\n",
        "## [?]{id,tags}\n",
        "@0 1|^\n",
        ".tags [?]: a,b\n",
        "@1 2|^\n",
        ".tags [?]{x}\n",
        "    1\n",
        "##! summary counts=2,2,1\n",
    );
    same(text);
    let short = text.replace("counts=2,2,1", "counts=2,2");
    assert_eq!(rows(&short).unwrap_err().code(), "count_mismatch");
    assert_eq!(
        agentwire_gcf::from_str::<Value>(&short).unwrap_err().code(),
        "count_mismatch"
    );
    let cut = text.replace("##! summary counts=2,2,1\n", "");
    assert_eq!(rows(&cut).unwrap_err().code(), "truncated_input");
    // Each nested entry is checked against its section (found by the `gcf_stream` target:
    // the row reader counted the entries, not what each said), at the entry's column.
    let wrong = text.replace("counts=2,2,1", "counts=2,2,2");
    assert_eq!(
        refused_alike(&wrong, "count_mismatch", 8).column(),
        agentwire_gcf::from_str::<Value>(&wrong)
            .unwrap_err()
            .column()
    );
    let wrong = text.replace("counts=2,2,1", "counts=2,1,1");
    refused_alike(&wrong, "count_mismatch", 8);
    // The fuzz input: a `[?]` table whose row fills two inline schemas with `[?]` bodies.
    let text = concat!(
        "GCF profile=generic\n",
        "## r [?]{a,b}\n",
        "@0 ^|^\n",
        ".b [?]: 1\n",
        ".a [?]: 1,DDDD,DDDD2\n",
        "##! summary counts=1,1,2\n",
    );
    refused_alike(text, "count_mismatch", 6);
    same(&text.replace("counts=1,1,2", "counts=1,1,3"));
}

#[test]
fn counts_and_trailers_are_checked_at_the_end() {
    let e = rows("GCF profile=generic\n## [3]{id}\n1\n2\n").unwrap_err();
    assert_eq!(e.code(), "count_mismatch");
    assert_eq!((e.line(), e.column()), (Some(2), Some(4)));
    let e = rows("GCF profile=generic\n## [1]{id}\n1\n2\n").unwrap_err();
    assert_eq!((e.code(), e.line()), ("count_mismatch", Some(4)));
    let e = rows("GCF profile=generic\n## [?]{id}\n1\n2\n").unwrap_err();
    assert_eq!(e.code(), "truncated_input");
    let e = rows("GCF profile=generic\n## [?]{id}\n1\n2\n##! summary counts=3\n").unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        ("count_mismatch", Some(5), Some(20))
    );
    let lenient = DecoderOptions::new().require_trailer(false);
    let mut r = lenient
        .row_reader("GCF profile=generic\n## [?]{id}\n1\n".as_bytes())
        .unwrap();
    assert_eq!(r.values().count(), 1);
}

#[test]
fn row_errors_carry_the_input_position() {
    let text = "GCF profile=generic\n## [?]{id,name}\n1|a\n# c\n@1 2|\"b\n##! summary counts=2\n";
    let mut r = RowReader::new(text.as_bytes()).unwrap();
    assert!(r.read_row::<Value>().unwrap().is_some());
    let e = r.read_row::<Value>().unwrap_err();
    let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        (whole.code(), whole.line(), whole.column())
    );
    // Width mismatch in a later row.
    let text = "GCF profile=generic\n## [2]{id,name}\n1|a\n@1 2|b|c\n";
    let e = rows(text).unwrap_err();
    let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        (whole.code(), whole.line(), whole.column())
    );
}

#[test]
fn what_is_not_a_table_says_so() {
    for text in [
        "GCF profile=generic\na=1\n",
        "GCF profile=generic\n",
        "GCF profile=generic\n## a\n  b=1\n",
        "GCF profile=generic\n## t [1]{id}\n1\n## u [1]{id}\n2\n",
        "GCF profile=generic\n## hosts [1:]{key,cpu}\nweb|1\n## more [1:]{key,cpu}\ndb|2\n",
    ] {
        let e = rows(text).unwrap_err();
        assert_eq!(e.code(), "not_a_table", "{text}");
    }
}

#[test]
fn lists_and_inline_arrays_read_an_item_at_a_time() {
    same("GCF profile=generic\n## [3]\n@0 =hello\n@1 =42\n@2 {}\n  key=val\n");
    same("GCF profile=generic\n## [?]\n@0 [2]: 1,2\n@1 {}\n##! summary counts=2\n");
    same("GCF profile=generic\n## [3]: a,b,c\n");
    same("GCF profile=generic\ntags[3]: alpha,\"a,b\",c\n");
    same("GCF profile=generic\n## [0]\n");
}

#[test]
fn value_grouped_tables_and_identity_columns() {
    let grouped = concat!(
        "GCF profile=generic\n",
        "## symbols [4]{@id,kind,line,file=a.go} group=kind\n",
        "kind=function [2]\nf1|10\nf2|20\nkind=\"method\" [1]\nm1|30\nkind=- [1]\nx|~\n",
    );
    same(grouped);
    same("GCF profile=generic\n## r [?]{@id,k} group=k\nk=1 [1]\na\n##! summary counts=1\n");
    let agree = |body: &str| {
        let text = format!("GCF profile=generic\n## [2]{{@id,k}} group=k\n{body}");
        let e = rows(&text).unwrap_err();
        let w = agentwire_gcf::from_str::<Value>(&text).unwrap_err();
        assert_eq!(
            (e.code(), e.line(), e.column()),
            (w.code(), w.line(), w.column()),
            "{text}"
        );
    };
    agree("k=a [1]\nx\nk=a [1]\ny\n");
    agree("k=a [1]\nx\nk=b [1]\nx\n");
    agree("k=a [3]\nx\ny\n");
    agree("k=a [1]\nx\ny\n");
    agree("j=a [2]\nx\ny\n");
    agree("k=a [0]\n");
    agree("k=~ [2]\nx\ny\n");
    agree("k=a [2]\n@0 x\ny\n");
    // Identity columns of a delta-participating payload.
    let text = "GCF profile=generic key=id\n## [2]{@id,v}\na|1\na|2\n";
    let e = rows(text).unwrap_err();
    let w = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!((e.code(), e.line()), (w.code(), w.line()));
}

#[test]
fn typed_rows() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Row {
        id: u32,
        name: String,
    }
    let text = "GCF profile=generic\n## [2]{id,name}\n1|a\nx|b\n";
    let mut r = RowReader::new(text.as_bytes()).unwrap();
    let mut it = r.deserialize::<Row>();
    assert_eq!(
        it.next().unwrap().unwrap(),
        Row {
            id: 1,
            name: "a".into()
        }
    );
    let e = it.next().unwrap().unwrap_err();
    assert_eq!((e.code(), e.line()), ("type_mismatch", Some(4)));
    assert!(it.next().is_none());
}

#[test]
fn from_reader_fails_a_long_line_before_keeping_it() {
    let opts = DecoderOptions::new().max_line_length(64);
    let mut text = String::from("GCF profile=generic\n# a\n# b\nx=");
    text.push_str(&"y".repeat(1000));
    let e = opts.from_reader::<_, Value>(text.as_bytes()).unwrap_err();
    assert_eq!((e.code(), e.line()), ("limit_exceeded", Some(4)));
    // Positions after left-out comment lines are the input's.
    let text = "GCF profile=generic\n# a\n\n# b\nx=1\ny=\"\n";
    let e = agentwire_gcf::from_reader::<_, Value>(text.as_bytes()).unwrap_err();
    let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        (whole.code(), whole.line(), whole.column())
    );
}

#[test]
fn the_streaming_oracle_holds_on_the_corpus_of_forms() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/gcf");
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut paths = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(dir)];
    // The upstream suites too, where they are provided beside the project (never copied in).
    for suite in ["gcf-v3.5.3", "gcf-v3.1.0"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance")
            .join(suite);
        if path.is_dir() {
            dirs.push(path);
        }
    }
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                paths.push(path);
            }
        }
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(fixtures) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let mut inputs = Vec::new();
        collect_inputs(&fixtures, &mut inputs);
        for input in inputs {
            if let Err(bug) = agentwire_testkit::gcf::check_streaming(input.as_bytes()) {
                failures.push(format!("{}: {bug}\ninput:\n{input}", path.display()));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("{checked} inputs checked");
    assert!(checked > 50, "only {checked} inputs");
}

fn collect_inputs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.starts_with("GCF") => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| collect_inputs(v, out)),
        Value::Object(m) => m.values().for_each(|v| collect_inputs(v, out)),
        _ => {}
    }
}

/// Found by the `gcf_stream` fuzz target: a generic delta's header (`delta=true`) was refused
/// by the whole decoder at line 1 (`profile_mismatch`) but read on by the row reader, which
/// then failed on the table's declaration. Both run the same header checks now.
#[test]
fn a_delta_or_unchanged_header_is_refused_first() {
    for text in [
        "GCF profile=generic delta=true base_root=sha256:00 new_root=sha256:11 key=id\n\
         ## added [1]{rue base_root\n1|2\n",
        "GCF profile=generic unchanged=true pack_root=sha256:00\n## [1]{a}\n1\n",
        "GCF profile=generic tokens=x\n## [1]{a}\n1\n",
    ] {
        let error = rows(text).unwrap_err();
        assert_eq!(error.line(), Some(1), "{text}");
        streams_alike(text);
    }
}

/// Found by the `gcf_stream` fuzz target: after a table's rows, a root line that starts `##`
/// without being a section line (`##x`) was taken as one more row by the row reader
/// (`count_mismatch` at the table's bracket) while the whole decoder ends the rows there and
/// refuses the line (`invalid_line`). Any `##` line ends the rows now.
#[test]
fn a_malformed_section_line_ends_the_rows() {
    for (text, code) in [
        (
            "GCF profile=generic\n## rows [?]{id}\n1\n##\0\0\0[! summary\n",
            "invalid_line",
        ),
        (
            "GCF profile=generic\n## rows [1]{id}\n1\n##x\n",
            "invalid_line",
        ),
        ("GCF profile=generic\n## [?]{id}\n1\n##x\n", "invalid_line"),
        // A root table's declared count is overrun first, by either decoder.
        (
            "GCF profile=generic\n## [1]{id}\n1\n##x\n",
            "count_mismatch",
        ),
    ] {
        refused_alike(text, code, 4);
        let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
        assert_eq!(
            (whole.code(), whole.line()),
            (code, Some(4)),
            "{text:?}: {whole}"
        );
    }
}

/// Found by the `gcf_stream` fuzz target: after an inline member `t[1]: x` the row reader
/// called any next line "more rows than the declared [1]"; the whole decoder reads it as the
/// root's next member and refuses it as that (`invalid_key`, `invalid_line`, ...). The row
/// reader says the same now, or `not_a_table` for a good member.
#[test]
fn a_line_after_an_inline_member_is_read_as_the_next_member() {
    for (text, code) in [
        (
            "GCF profile=generic\nt[1]: ^GCF prof{ile=generic\n: 1,2\na}\n",
            "invalid_key",
        ),
        ("GCF profile=generic\nt[1]: x\n: 1,2\n", "invalid_key"),
        ("GCF profile=generic\nt[1]: x\nfoo\n", "invalid_line"),
        ("GCF profile=generic\nt[1]: x\n  y=1\n", "invalid_indent"),
        ("GCF profile=generic\nt[1]: x\nu=1\n", "not_a_table"),
        // The member's key again (found by the `gcf_stream` target: the row reader read the
        // line alone and said `invalid_attachment_marker`).
        (
            "GCF profile=generic\nt[1]: ^generic\nt[1]: ^{{a}\n",
            "duplicate_key",
        ),
        ("GCF profile=generic\n\"t\"[1]: x\nt=1\n", "duplicate_key"),
    ] {
        refused_alike(text, code, 3);
    }
}

/// Found by the `gcf_stream` fuzz target: a table short of its declared rows and ended by a
/// malformed `##!` line: the row reader refused the line (`invalid_line`), the whole decoder
/// the count first (`count_mismatch` at the bracket), as the row reader does now.
#[test]
fn a_short_table_is_refused_before_what_follows_it() {
    for text in [
        "GCF profile=generic\n## r [6]{v}\n1\n-\n@2 ^\n.v {}\n    a=1\n@@0 fn a 0.50 p\n##!\"^\"\n",
        "GCF profile=generic\n## r [3]{v}\n1\n##! nonsense\n",
        "GCF profile=generic\n## [3]{v}\n1\n##! summary counts=1\n",
    ] {
        refused_alike(text, "count_mismatch", 2);
    }
}

/// Found by the `gcf_stream` fuzz target: a keyed map `[0:]` with a bad field name: the row
/// reader refused the field name, the whole decoder the zero count first (`invalid_count` at
/// the bracket), as the row reader does now.
#[test]
fn a_keyed_map_count_is_checked_before_its_fields() {
    let text = "GCF profile=generic\n## \"\" [0:]{krr\u{4}\0rey,a}\nu1|1\nu2|0\n";
    assert_eq!(refused_alike(text, "invalid_count", 2).column(), Some(7));
}

/// Found by the `gcf_stream` fuzz target: `## ""[2:]{key,a}` (no space before the bracket)
/// was read by the row reader as a section, refused by the whole decoder
/// (`trailing_characters` after the quoted name); the row reader refuses it alike now.
#[test]
fn a_section_name_is_followed_by_a_space() {
    let text = "GCF profile=generic\n## \"\"[2:]{key,a}\nu1|1\nu\u{11}2|2 [2:]{key,a}\nu1|1\n";
    assert_eq!(
        refused_alike(text, "trailing_characters", 2).column(),
        Some(6)
    );
    // Two spaces (found by the same target on the next run): `invalid_key` to both.
    let text = "GCF profile=generic\n## rows  []{id,name}\n0|Alice\n2|Bo|A";
    assert_eq!(refused_alike(text, "invalid_key", 2).column(), Some(4));
}

#[test]
fn from_reader_reads_the_corpus_as_from_str() {
    // Every response of the corpus, as each encoder writes it, and with one of its lines
    // dropped: `from_reader` (cut at every place it may cut) reads it as the in-memory decoder.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let response = &fixture["response"];
        for options in [
            agentwire_gcf::EncoderOptions::new(),
            agentwire_gcf::EncoderOptions::new().spec(agentwire_gcf::Spec::V3_1),
            agentwire_gcf::EncoderOptions::new()
                .inline_schemas(false)
                .shared_schemas(false),
        ] {
            let Ok(text) = options.to_string(response) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            // A dozen lines spread over the payload (every line makes the test quadratic).
            let step = (lines.len() / 12).max(1);
            let dropped = (1..lines.len()).step_by(step).map(|i| {
                let mut l = lines.clone();
                l.remove(i);
                l.join("\n") + "\n"
            });
            for input in std::iter::once(text.clone()).chain(dropped) {
                if let Err(bug) = agentwire_testkit::gcf::check_from_reader(input.as_bytes()) {
                    panic!("{}: {bug}\ninput:\n{input}", path.display());
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} inputs checked");
    assert!(checked > 100, "only {checked} inputs");
}

/// A keyed map's entries, read one at a time, are the members of the object the whole payload
/// decodes to, in order.
fn same_entries(text: &str) {
    let whole: Value = agentwire_gcf::from_str(text).unwrap();
    let mut r = RowReader::new(text.as_bytes()).unwrap();
    assert!(r.is_keyed(), "{text}");
    let map = match (whole, r.key().map(str::to_owned)) {
        (Value::Object(m), None) => m,
        (Value::Object(mut m), Some(key)) => match m.remove(&key) {
            Some(Value::Object(m)) => m,
            other => panic!("{other:?}"),
        },
        (other, _) => panic!("{other}"),
    };
    let entries: Vec<(String, Value)> = r.entries().collect::<agentwire_gcf::Result<_>>().unwrap();
    let mut expected: Vec<(String, Value)> = map.into_iter().collect();
    let mut got = entries.clone();
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, expected, "{text}");
    // Input order.
    let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
    let mut in_order = keys.clone();
    in_order.sort_unstable();
    in_order.dedup();
    assert_eq!(in_order.len(), keys.len());
}

/// The error the row reader gives (reading entries) is the whole decoder's.
fn same_error(text: &str) -> &'static str {
    let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    let e = RowReader::new(text.as_bytes())
        .and_then(|mut r| {
            r.entries::<Value>()
                .collect::<agentwire_gcf::Result<Vec<_>>>()
        })
        .unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        (whole.code(), whole.line(), whole.column()),
        "{text}"
    );
    e.code()
}

#[test]
fn keyed_maps_read_an_entry_at_a_time() {
    same_entries(
        "GCF profile=generic\n## [3:]{key,cpu,status}\nweb-01|23|ok\ndb-01|41|ok\ncache|67|warn\n",
    );
    same_entries("GCF profile=generic\n## hosts [2:]{key,cpu}\nweb|1\n# between\n\ndb|2\n");
    same_entries(
        "GCF profile=generic\n## servers [?:]{key,cpu,mem}\nweb|1|2\n\"db\"|3|4\n##! summary counts=2\n",
    );
    // Attachments (`@N` rows), flattened columns, nulls and absent values, quoted keys.
    same_entries("GCF profile=generic\n## [2:]{key,id,tags}\n@0 u1|1|^\n.tags [2]: a,b\n@1 u2|2|^\n.tags [1]: c\n");
    same_entries("GCF profile=generic\n## [3:]{key,a,b}\n\"1\"|-|x\n\"\"|~|y\n\"a|b\"|2|~\n");
    same_entries("GCF profile=generic\n## [1:]{key,a}\nonly|1\n");

    // Typed entries, and rows as `(String, T)` pairs.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Host {
        cpu: u32,
    }
    let text = "GCF profile=generic\n## [2:]{key,cpu}\nweb|1\ndb|2\n";
    let mut r = RowReader::new(text.as_bytes()).unwrap();
    assert_eq!(r.fields(), ["key", "cpu"]);
    assert_eq!(r.declared_count(), Some(2));
    assert_eq!(
        r.read_entry::<Host>().unwrap(),
        Some(("web".to_owned(), Host { cpu: 1 }))
    );
    assert_eq!(
        r.read_row::<(String, Host)>().unwrap(),
        Some(("db".to_owned(), Host { cpu: 2 }))
    );
    assert_eq!(r.read_entry::<Host>().unwrap(), None);
    assert_eq!(r.rows_read(), 2);
    assert_eq!(
        rows(text).unwrap(),
        [json!(["web", {"cpu": 1}]), json!(["db", {"cpu": 2}])]
    );
    // A type mismatch names the row's line.
    let mut r =
        RowReader::new("GCF profile=generic\n## [1:]{key,cpu}\nweb|x\n".as_bytes()).unwrap();
    let e = r.read_entry::<Host>().unwrap_err();
    assert_eq!((e.code(), e.line()), ("type_mismatch", Some(3)));
    // Entries of a table that is not a keyed map: not_a_table.
    let mut r = RowReader::new("GCF profile=generic\n## [1]{a}\n1\n".as_bytes()).unwrap();
    assert!(!r.is_keyed());
    assert_eq!(r.read_entry::<Value>().unwrap_err().code(), "not_a_table");

    // The guarantees of table rows: the same errors, lines and columns as the whole decoder.
    for (text, code) in [
        ("GCF profile=generic\n## [2:]{key,a}\nx|1\n\"x\"|2\n", "duplicate_key"),
        ("GCF profile=generic\n## [?:]{key,a}\nx|1\ny|2\nx|3\n##! summary counts=3\n", "duplicate_key"),
        ("GCF profile=generic\n## [3:]{key,a}\n@0 x|^\n.a [1]: 1\n@1 y|^\n.a [0]\n@2 x|^\n.a [0]\n", "duplicate_key"),
        ("GCF profile=generic\n## [?:]{key}\n", "invalid_keyed_map"),
        ("GCF profile=generic\n## m [2:]\n", "invalid_keyed_map"),
        ("GCF profile=generic\n## [0:]{key,a}\n", "invalid_count"),
        ("GCF profile=generic\n## [3:]{key,a}\nx|1\ny|2\n", "count_mismatch"),
        ("GCF profile=generic\n## [1:]{key,a}\nx|1\ny|2\n", "count_mismatch"),
        ("GCF profile=generic\n## [2:]{key,a}\nx|1\ny|2|3\n", "row_width_mismatch"),
        ("GCF profile=generic\n## [?:]{key,a}\nx|1\ny|2\n##! summary counts=3\n", "count_mismatch"),
        ("GCF profile=generic\n## [?:]{key,a}\nx|1\ny|2\n", "truncated_input"),
    ] {
        let got = same_error(text);
        assert!(got == code || code == "row_width_mismatch", "{text}: {got}, expected {code}");
    }
    // The elements limit counts entries as they arrive.
    let text = "GCF profile=generic\n## [?:]{key,a}\nx|1\ny|2\nz|3\n##! summary counts=3\n";
    let e = DecoderOptions::new()
        .max_elements(2)
        .row_reader(text.as_bytes())
        .and_then(|mut r| {
            r.entries::<Value>()
                .collect::<agentwire_gcf::Result<Vec<_>>>()
        })
        .unwrap_err();
    assert_eq!((e.code(), e.line()), ("limit_exceeded", Some(5)));
}

#[test]
fn keyed_maps_stream_out_and_back_an_entry_at_a_time() {
    let entries = [
        ("web-01", json!({"cpu": 23, "tags": ["a", "b"], "key": "k"})),
        ("", json!({"cpu": null, "tags": []})),
        ("1", json!({"cpu": 7, "key": {"nested": true}})),
        ("a|b", json!({"tags": ["c"]})),
    ];
    // A member of the root object.
    let mut out = Vec::new();
    let mut enc = agentwire_gcf::GenericStreamEncoder::new(&mut out).unwrap();
    let mut map = enc.keyed_table("servers", &["cpu", "tags", "key"]).unwrap();
    for (k, v) in &entries {
        map.entry(k, v).unwrap();
    }
    let e = map.entry("web-01", &json!({"cpu": 1})).unwrap_err();
    assert_eq!(e.code(), "duplicate_key");
    assert_eq!(map.finish(), 4);
    enc.finish().unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("## servers [?:]{_key,cpu,tags,key}\n"),
        "{text}"
    );
    assert!(text.ends_with("##! summary counts=4\n"), "{text}");
    same_entries(&text);
    let whole: Value = agentwire_gcf::from_str(&text).unwrap();
    for (k, v) in &entries {
        let mut expected = v.clone();
        // Fields the entry lacks are absent, not null.
        assert_eq!(whole["servers"][*k], expected.take(), "{text}");
    }
    // At the root.
    let mut out = Vec::new();
    let mut enc = agentwire_gcf::GenericStreamEncoder::new(&mut out).unwrap();
    let mut map = enc.root_keyed_table(&["cpu"]).unwrap();
    map.entry("a", &json!({"cpu": 1})).unwrap();
    map.entry("b", &json!({"cpu": 2})).unwrap();
    drop(map);
    enc.finish().unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "GCF profile=generic\n## [?:]{key,cpu}\na|1\nb|2\n##! summary counts=2\n"
    );
    same_entries(&text);
}

/// Found by the `from_reader` property test: a second header line after an empty table.
#[test]
fn a_second_header_after_an_empty_table() {
    let text = "GCF profile=generic\n## \"\" [0]\nGCF profile=generic\n";
    streams_alike(text);
}

/// Found by the `gcf_stream` fuzz target: after a declared table's last row, which had an
/// attachment, a `##` line is the table's end to the whole decoder (`count_mismatch`: more
/// items than declared), where the row reader said `orphan_inline_attachment`; a plain line
/// there is an orphan body to both.
#[test]
fn a_section_line_after_a_last_row_with_attachments_is_one_item_too_many() {
    let text = "GCF profile=generic\n## [2]{id,name}\n@0 1|Alice\n.\"a>b\" =hello\n@1 2|eric\n## [2]{id,name}Bob\n.\"a>b\" =world\n";
    refused_alike(text, "count_mismatch", 6);
    refused_alike(
        "GCF profile=generic\n## [1]{id,name}\n@0 1|2\n##x\n",
        "count_mismatch",
        4,
    );
    refused_alike(
        "GCF profile=generic\n## [2]{id,name}\n@0 1|Alice\n.\"a>b\" =hello\n@1 2|eric\nfoo\n",
        "orphan_inline_attachment",
        6,
    );
}

/// Found by the `gcf_stream` fuzz target: a trailer whose `counts=` does not parse after a
/// payload without deferred sections is not read for counts by the whole decoder (the value
/// decodes), where the row reader refused it (`invalid_count`); with a deferred section both
/// refuse it.
#[test]
fn a_trailer_is_read_for_counts_only_when_there_are_deferred_sections() {
    let text = "GCF profile=generic\nt[2]: a,b\n##! summary counts=/ tool=x\n";
    assert_eq!(rows(text).unwrap(), vec![json!("a"), json!("b")]);
    same("GCF profile=generic\n## [1]{a}\n1\n##! summary counts=/\n");
    streams_alike(text);
    refused_alike(
        "GCF profile=generic\n## [?]{a}\n1\n##! summary counts=/\n",
        "invalid_count",
        4,
    );
}

/// Found by the `gcf_stream` fuzz target: after an inline member, a table member whose third
/// row is bad: the row reader read the table's line alone and said `count_mismatch` (no rows
/// followed it there), the whole decoder reads the rows and reports the bad one. A line that
/// opens a member of more lines is `not_a_table` to the row reader.
#[test]
fn a_member_of_more_lines_after_an_inline_member_is_not_a_table() {
    for text in [
        "GCF profile=generic\ninline[1]: a\n## rows [2]{s,n}\n\"x\"y|0\na|1\n",
        "GCF profile=generic\ninline[1]: a\n## rows [?]{s,n}\na|1\n##! summary counts=1\n",
    ] {
        assert_eq!(rows(text).unwrap_err().code(), "not_a_table", "{text}");
        streams_alike(text);
    }
}

/// Found by the `gcf_stream` fuzz target: a row's bad `.a {` body followed by a line indented
/// with a tab: the whole decoder reads the tab line while it gathers the row's attachments
/// (`tab_indentation`, line 5) before it reads the body, the row reader read the body alone
/// (`invalid_line`, line 4). A line of tabs and spaces alone is blank to both.
#[test]
fn a_tab_indented_line_after_a_row_is_read_where_the_whole_decoder_reads_it() {
    refused_alike(
        "GCF profile=generic\n## r [1]{a}\n@0 ^\n.a {   k\n\t} =x\n",
        "tab_indentation",
        5,
    );
    refused_alike(
        "GCF profile=generic\n## r [2]{a}\n1\n\tx\n2\n",
        "tab_indentation",
        4,
    );
    same("GCF profile=generic\n## r [2]{a}\n1\n\t \n2\n");
}

/// Found by the `gcf_stream` fuzz target: a line ending `\r\r\n` keeps one `\r` (a reader takes
/// one `\r` before `\n` as the line end), so `.b {}\r` is a bad attachment to the whole
/// decoder; the streaming readers wrote such a line back with `\n` alone, which read it as
/// `.b {}`, and `from_reader` read on to a later error. Lines are written back with `\r\n`
/// when they still end with `\r` now.
#[test]
fn a_line_ending_in_two_carriage_returns_keeps_one() {
    let text = "GCF profile=generic\r\n## s\r\n  ## r [?]{a,b}\r\n  @0 1|^\r\n  .b {}\r\r\n  @1 2|x\r\n##! summary counts=2\r\n";
    let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    assert_eq!((whole.code(), whole.line()), ("invalid_line", Some(5)));
    let streamed = agentwire_gcf::from_reader::<_, Value>(text.as_bytes()).unwrap_err();
    assert_eq!(
        (streamed.code(), streamed.line(), streamed.column()),
        (whole.code(), whole.line(), whole.column())
    );
    streams_alike(text);
    for text in [
        "GCF profile=generic\n## [2]{a}\n@0 ^\n.a {}\r\r\n@1 1\n",
        "GCF profile=generic\n## [2]{a}\nx\r\r\ny\n",
    ] {
        streams_alike(text);
    }
}

/// Found by the `gcf_stream` fuzz target: after a member list's declared items, a root line
/// that is no member (`header`, a key without `=`) is the whole decoder's `invalid_line` at
/// its end; the row reader said `count_mismatch` at its start (it checked the line's key
/// alone). It reads the line as the whole decoder does now.
#[test]
fn a_root_line_after_a_lists_items_is_read_as_the_next_member() {
    for (text, line) in [
        ("GCF profile=generic\n## items [1]\n@0 =1\nheader\n", 4),
        (
            "GCF profile=generic\n## items [1]\n@0 {}\n  a=1\nheader\n",
            5,
        ),
    ] {
        let e = refused_alike(text, "invalid_line", line);
        assert_eq!(e.column(), Some(7), "{text}");
    }
    for text in [
        "GCF profile=generic\n## items [1]\n@0 =1\nheader = 1\n",
        "GCF profile=generic\n## items [1]\n@0 =1\n\"a\n",
        "GCF profile=generic\n## items [1]\n@0 =1\nx [2]{a}\n1\n",
    ] {
        same_error_as_whole(text);
    }
    for text in [
        "GCF profile=generic\n## items [1]\n@0 =1\nheader=1\n",
        "GCF profile=generic\n## items [1]\n@0 =1\nx[1]: a\n",
    ] {
        assert_eq!(rows(text).unwrap_err().code(), "not_a_table", "{text}");
        streams_alike(text);
    }
}

/// The streaming oracle holds on `text`: the row reader and `from_reader` read what the
/// whole decoder reads, or fail with its error.
fn streams_alike(text: &str) {
    if let Err(bug) = agentwire_testkit::gcf::check_streaming(text.as_bytes()) {
        panic!("{bug}");
    }
}

/// The row reader's error for `text` is the whole decoder's (code, line, column).
fn same_error_as_whole(text: &str) {
    let whole = agentwire_gcf::from_str::<Value>(text).unwrap_err();
    let e = rows(text).unwrap_err();
    assert_eq!(
        (e.code(), e.line(), e.column()),
        (whole.code(), whole.line(), whole.column()),
        "{text}"
    );
    streams_alike(text);
}

/// Found by the `gcf_stream` fuzz target: an indented line after a table of no rows (`[0]`,
/// comments between) has no row to belong to: the whole decoder reads it where the root's next
/// member goes and refuses its indentation (`invalid_indent`, `tab_indentation`); the row
/// reader said `count_mismatch` (more rows than declared).
#[test]
fn an_indented_line_after_a_table_of_no_rows_is_refused_for_its_indentation() {
    for text in [
        "GCF profile=generic\n## r [0]{a,b}\n# beforb [2]{x\n    W# iter\nz=1\n",
        "GCF profile=generic\n## [0]{a,b}\n  W=1\n",
        "GCF profile=generic\n## r [0]\n  @0 =1\n",
        "GCF profile=generic\n## r [?]{a,b}\n  @0 1|2\n##! summary counts=0\n",
    ] {
        assert_eq!(rows(text).unwrap_err().code(), "invalid_indent", "{text}");
        same_error_as_whole(text);
    }
    same_error_as_whole("GCF profile=generic\n## r [0]{a,b}\n\t@0 1|2\n");
}

/// Found by a search over payloads of a table header and three lines from a vocabulary
/// (`gcf_stream`'s oracle on each): a tab-indented line is refused for its tab wherever the
/// whole decoder peeks it (after the trailer too, and not cut from the row before it by
/// `from_reader`); a list ends at a line that is no `@N` item; after a row with an `@N` id, a
/// root table's next line that reads as a member is one item too many, not an orphan body.
#[test]
fn rows_and_units_agree_with_the_whole_decoder_at_a_tables_end() {
    for text in [
        "GCF profile=generic\n## [0]{a,b}\n# c\n##! summary counts=1\n\tW\n",
        "GCF profile=generic\n## [1]{a,b}\n@0 1|2\nx=1\n1|2\n",
        "GCF profile=generic\n## r [?]{a,b}\n@0 1|^\n\tW\n1|2\n",
        "GCF profile=generic\n## [?]{a,b}\n1|2\n\tW\n1|2\n",
        "GCF profile=generic\n## [?]\n1|2\n1|2\n1|2\n",
        "GCF profile=generic\n## r [?]\n@0 =1\n1|2\n##! summary counts=1\n",
        "GCF profile=generic\n## [2]\n@0 =1\n1|2\n",
    ] {
        same_error_as_whole(text);
    }
    assert_eq!(
        rows("GCF profile=generic\n## [?]\n1|2\n")
            .unwrap_err()
            .code(),
        "invalid_line"
    );
}

/// Found by a random search over payloads of vocabulary lines (`gcf_stream`'s oracle): the
/// decoders check a keyed map's member key (an identity value) against the rows before right
/// after the row line's shape, before its cells and attachments, so a repeated key is the
/// error before a bad attachment of its row; the row reader checked it after decoding the row.
/// And an indented first row is `invalid_indent` before its `@N` id is read.
#[test]
fn a_repeated_member_key_comes_before_its_rows_attachments() {
    for text in [
        "GCF profile=generic\n## r [?:]{a,b}\n@x 1|2\n@x 1|2\n  a=1\n  # c\n",
        "GCF profile=generic\n## r [?:]{a,b}\nx|y\nx|y\n      1|^\n  .b =1\n",
        "GCF profile=generic\n## r [?:]{a,b}\nx|y\nx|y\n.a =1\n",
        "GCF profile=generic\n## r [?:]{a,b}\nx|y\nx|y\n\tW\n  @\n",
    ] {
        assert_eq!(rows(text).unwrap_err().code(), "duplicate_key", "{text}");
        same_error_as_whole(text);
    }
    for text in [
        "GCF profile=generic\n## r [?:]{a,b}\nx|y\nx|y|z\n",
        "GCF profile=generic\n## r [?:]{a,b}\nx|y\n1|y\n",
        "GCF profile=generic\n## [1]{a,b}\n  @1 {}\n    ##! summary counts=2\n",
    ] {
        same_error_as_whole(text);
    }
}

/// Found by the `gcf_stream` fuzz target: `## nete\t` is a section of the root object to the
/// whole decoder (the tab ends the line's key); the row reader refused the key (`invalid_key`)
/// where the payload decodes. It reads such a line as the whole decoder does now.
#[test]
fn a_section_line_with_a_trailing_tab_is_an_object_section() {
    let text = "GCF profile=generic\n## nete\t\nsdkey=value\n";
    assert!(agentwire_gcf::from_str::<Value>(text).is_ok());
    assert_eq!(rows(text).unwrap_err().code(), "not_a_table");
    streams_alike(text);
}

/// Payloads generated from a vocabulary of lines (a table header, then up to seven lines at
/// random indentations), each through the streaming oracle: the search that found finding 31
/// (fuzz/README.md), kept small and seeded here so that CI replays it.
#[test]
fn generated_payloads_stream_alike() {
    const HEADS: &[&str] = &[
        "## [0]{a,b}",
        "## r [0]{a,b}",
        "## r [1]{a,b}",
        "## [1]{a,b}",
        "## r [?]{a,b}",
        "## [?]{a,b}",
        "## items [1]",
        "## items [0]",
        "## [1]",
        "## [?]",
        "## items [?]",
        "## r [2]{a,b}",
        "## r [1]{a,b=k}",
        "## r [1]{id,a>b}",
        "## r [2:]{a,b}",
        "## r [?:]{a,b}",
        "t[1]: x",
        "x=1",
        "## s",
        "## s\n  ## r [?]{a,b}",
        "## s\n  ## items [?]",
        "## r [2]{a>b,a>c}",
        "## [2]{a,b}\nk=1 [1]",
        "inline[1]: a",
        "## r [1]{a,b}\n@0 1|^{x,y}",
        "## nete\t",
        "## r [1]{a,b}\t",
        "## r  [1]{a,b}",
    ];
    const LINES: &[&str] = &[
        "1|2",
        "@0 1|2",
        "@1 1|2",
        "@0 1|^",
        "@0 =1",
        "@1 =2",
        "@0 {}",
        "a=1",
        "x=1",
        "header",
        "W",
        "\tW",
        ".b {}",
        ".b [1]: x",
        ".a =1",
        "## s",
        "##x",
        "## t [1]{a}",
        "# c",
        "",
        "##! summary counts=1",
        "##! summary counts=0",
        "##! summary counts=/",
        "~|~",
        "\"a|b",
        "k|1|2",
        "a[1]: x",
        "@0 1|2|3",
        "=",
        "@",
        "@x 1|2",
        "k=1 [1]",
        "x|y",
        "^|^",
        "1|^",
        "{x,y}",
        "@0 [1]: a",
        "## items [1]",
        "t[2]: a,b",
        "a>b=1",
        "1|2\t",
        "\t",
    ];
    const INDENTS: &[&str] = &["", "", "", "  ", "  ", "    "];
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let mut text = format!("GCF profile=generic\n{}\n", HEADS[next(HEADS.len())]);
        for _ in 0..=next(7) {
            text.push_str(INDENTS[next(INDENTS.len())]);
            text.push_str(LINES[next(LINES.len())]);
            text.push('\n');
        }
        if let Err(bug) = agentwire_testkit::gcf::check_streaming(text.as_bytes()) {
            panic!("{text:?}\n{bug}");
        }
    }
}

/// A seeded xorshift generator: each call gives a number below its argument.
fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

/// `text` through the `Value`-against-visitor oracle and the streaming oracle.
fn decodes_alike(text: &str) {
    if let Err(bug) = agentwire_testkit::gcf::check_bytes(text.as_bytes()) {
        panic!("{text:?}\n{bug}");
    }
    if let Err(bug) = agentwire_testkit::gcf::check_streaming(text.as_bytes()) {
        panic!("{text:?}\n{bug}");
    }
}

/// Keyed-map rows with string keys and `^` markers filled by `.field {}` bodies and inline
/// arrays (the in-memory decoder reads the plain ones on a path of their own), generated from a
/// vocabulary of lines: each payload through the `Value`-against-visitor oracle and the
/// streaming oracle.
#[test]
fn generated_keyed_rows_decode_alike() {
    const HEADS: &[&str] = &[
        "## m [2:]{key,a,b}",
        "## m [3:]{key,a,b}",
        "## m [?:]{key,a,b}",
        "## m [2:]{key,a,b=k}",
        "## m [2:]{key,a>x,b}",
        "## m [1:]{key,a}",
        "## [2:]{key,a,b}",
        "## s\n  ## m [2:]{key,a,b}",
    ];
    const LINES: &[&str] = &[
        "@0 k|^|1",
        "@0 k|^|^",
        "@1 j|^|2",
        "@1 k|^|2",
        "@1 j|1|^",
        "@2 i|^|~",
        "@0 -|^|1",
        "@0 |^|1",
        "@0 k|~|^",
        "@0 k|^",
        "@0 k|^|1|2",
        "@1 \"j\"|^|2",
        "@0 k|^{x}|1",
        "@0  k|^|1",
        ".a {}",
        ".b {}",
        ".a [2]: x,y",
        ".b [1]: 3",
        ".a [2]: x",
        ".a [1]: \"q\"",
        ".a  {}",
        ".a {} ",
        ".a\t{}",
        ".c {}",
        ".a [1]{p,q}",
        "x=1",
        "y[2]: a,b",
        "## c",
        "z=true",
        "1|2",
        "# c",
        "",
        "\t",
        "w",
    ];
    const INDENTS: &[&str] = &["", "", "", "", "  ", "  ", "    ", "   "];
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let head = HEADS[next(HEADS.len())];
        let mut text = format!("GCF profile=generic\n{head}\n");
        let inner = if head.starts_with("## s") { "  " } else { "" };
        for _ in 0..=next(9) {
            text.push_str(inner);
            text.push_str(INDENTS[next(INDENTS.len())]);
            text.push_str(LINES[next(LINES.len())]);
            text.push('\n');
        }
        decodes_alike(&text);
    }
}

/// Well-formed keyed maps of rows with attachments, each with one line perturbed at random
/// (or none): the rows the in-memory decoder reads on a path of their own and the near misses
/// it gives back to the general reading, through the same oracles.
#[test]
fn generated_keyed_maps_near_well_formed_decode_alike() {
    const NOISE: &[&str] = &[
        "",
        "# c",
        "x=1",
        ".a {}",
        ".b [1]: 3",
        ".a [1]{p,q}",
        "    y=2",
        "      z=3",
        "   w=1",
        "\t",
        "@9 q|^|1",
        "  .a {}",
        "## t",
        "1|2",
    ];
    const KEYS: &[&str] = &["k", "j", "i", "k", "-", "\"q\"", "7"];
    const BODIES: &[&str] = &["x=1", "y[2]: a,b", "## c\n      n=1", "t=true", "s=\"q\""];
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let rows = 1 + next(3);
        let count = if next(4) == 0 {
            "?".to_owned()
        } else {
            rows.to_string()
        };
        let mut lines = vec![format!("## m [{count}:]{{key,a,b}}")];
        for i in 0..rows {
            let key = KEYS[next(KEYS.len())];
            let (a, b) = match next(4) {
                0 => ("^", "^"),
                1 => ("^", "1"),
                2 => ("2", "^"),
                _ => ("^", "~"),
            };
            lines.push(format!("@{i} {key}|{a}|{b}"));
            for (name, cell) in [("a", a), ("b", b)] {
                if cell != "^" {
                    continue;
                }
                if next(2) == 0 {
                    lines.push(format!(".{name} {{}}"));
                    for _ in 0..next(3) {
                        lines.push(format!("    {}", BODIES[next(BODIES.len())]));
                    }
                } else {
                    lines.push(format!(".{name} [2]: x,{}", next(9)));
                }
            }
        }
        if next(3) > 0 {
            let at = 1 + next(lines.len());
            let noise = NOISE[next(NOISE.len())].to_owned();
            match next(3) {
                0 if at < lines.len() => lines[at] = noise,
                1 if at < lines.len() => {
                    lines.remove(at);
                }
                _ => lines.insert(at, noise),
            }
        }
        let text = format!("GCF profile=generic\n{}\n", lines.join("\n"));
        decodes_alike(&text);
    }
}
