//! Limits (spec §12): past each one a typed `limit_exceeded` error, never a crash, a stack
//! overflow or an allocation sized by an untrusted count; at the defaults, deep values decode
//! and encode on a 2 MiB thread stack.

use agentwire_gcf::{from_str, DecoderOptions, EncoderOptions, ErrorKind, Limit, Limits};
use serde_json::{json, Value};

fn limit(text: &str, options: &DecoderOptions) -> (Limit, u64) {
    match options.from_str::<Value>(text) {
        Ok(v) => panic!("decoded {v}"),
        Err(e) => match e.kind() {
            ErrorKind::LimitExceeded(which) => (which, e.line().unwrap_or(0)),
            _ => panic!("expected limit_exceeded, got {e}"),
        },
    }
}

/// `depth` nested `## a` sections.
fn nested_objects(depth: usize) -> String {
    let mut s = String::from("GCF profile=generic\n");
    for i in 0..depth {
        s.push_str(&"  ".repeat(i));
        s.push_str("## a\n");
    }
    s.push_str(&"  ".repeat(depth));
    s.push_str("x=1\n");
    s
}

/// A root array of `depth` nested one-item arrays, the innermost `[1]: x`.
fn nested_items(depth: usize) -> String {
    let mut s = String::from("GCF profile=generic\n## [1]\n");
    for i in 0..depth {
        s.push_str(&"  ".repeat(i));
        s.push_str("@0 [1]\n");
    }
    s.push_str(&"  ".repeat(depth));
    s.push_str("@0 [1]: x\n");
    s
}

/// Tabular rows whose attachment holds a table, `depth` times.
fn nested_attachments(depth: usize) -> String {
    let mut s = String::from("GCF profile=generic\n## [1]{a}\n");
    for i in 0..depth {
        let indent = "    ".repeat(i);
        s.push_str(&format!("{indent}@0 ^\n{indent}.a [1]{{a}}\n"));
    }
    s.push_str(&"    ".repeat(depth));
    s.push_str("1\n");
    s
}

fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn depth_is_limited_and_the_defaults_fit_a_small_stack() {
    let opts = DecoderOptions::new();
    // 128 levels decode (the root object is level 1).
    assert!(opts.from_str::<Value>(&nested_objects(127)).is_ok());
    assert_eq!(limit(&nested_objects(128), &opts), (Limit::Depth, 129));
    assert_eq!(limit(&nested_items(130), &opts).0, Limit::Depth);
    assert_eq!(limit(&nested_attachments(70), &opts).0, Limit::Depth);
    // Far deeper input fails just as fast, without recursing further.
    assert_eq!(limit(&nested_objects(2_000), &opts).0, Limit::Depth);
    // Configurable both ways.
    let shallow = DecoderOptions::new().max_depth(3);
    assert_eq!(limit(&nested_objects(3), &shallow), (Limit::Depth, 4));
    assert!(shallow.from_str::<Value>(&nested_objects(2)).is_ok());
    assert!(DecoderOptions::new()
        .max_depth(400)
        .from_str::<Value>(&nested_objects(200))
        .is_ok());
    // At the default limit, every recursive shape fits a 2 MiB stack, even unoptimized.
    on_small_stack(|| {
        for text in [
            nested_objects(127),
            nested_items(126),
            nested_attachments(63),
        ] {
            let value: Value = from_str(&text).unwrap();
            // The value is as deep as the text, and re-encodes at the encoder's default.
            let again = agentwire_gcf::to_string(&value).unwrap();
            assert_eq!(again, text);
        }
    });
}

#[test]
fn the_encoder_limits_depth_too() {
    let mut v = json!(1);
    for _ in 0..200 {
        v = json!([v]);
    }
    let e = agentwire_gcf::to_string(&v).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded(Limit::Depth));
    assert!(EncoderOptions::new().max_depth(250).to_string(&v).is_ok());
    let mut v = json!({});
    for _ in 0..127 {
        v = json!({ "a": v });
    }
    assert!(agentwire_gcf::to_string(&v).is_ok());
    v = json!({ "a": v });
    assert!(agentwire_gcf::to_string(&v).is_err());
}

#[test]
fn hostile_counts_are_rejected_before_anything_is_allocated() {
    let opts = DecoderOptions::new();
    for text in [
        "GCF profile=generic\n## rows [18446744073709551615]{a}\n1\n",
        "GCF profile=generic\n## rows [99999999999999999999999999]{a}\n1\n",
        "GCF profile=generic\ntags[1000001]: a\n",
        "GCF profile=generic\n## [4000000000]\n@0 =x\n",
        "GCF profile=generic\n## r [1]{a}\n@0 ^\n.a [1000000000]\n",
    ] {
        let (which, _) = limit(text, &opts);
        assert_eq!(which, Limit::Elements, "{text}");
    }
    // Under the limit, a huge declared count with few items is a count mismatch.
    let e = from_str::<Value>("GCF profile=generic\n## rows [999999]{a}\n1\n").unwrap_err();
    assert_eq!(e.code(), "count_mismatch");
    // Actual items are counted too.
    let few = DecoderOptions::new().max_elements(3);
    assert_eq!(
        limit("GCF profile=generic\nt[?]: 1,2,3,4\n", &few).0,
        Limit::Elements
    );
    assert_eq!(
        limit("GCF profile=generic\n## r [?]{a}\n1\n2\n3\n4\n", &few).0,
        Limit::Elements
    );
    assert_eq!(
        limit("GCF profile=generic\na=1\nb=2\nc=3\nd=4\n", &few).0,
        Limit::Elements
    );
    assert!(few
        .from_str::<Value>("GCF profile=generic\na=1\nb=2\nc=3\n")
        .is_ok());
}

#[test]
fn lines_fields_and_input_size_are_limited() {
    let opts = DecoderOptions::new().max_line_length(20);
    assert_eq!(
        limit("GCF profile=generic\nname=a long value here\n", &opts),
        (Limit::LineLength, 2)
    );
    assert!(opts
        .from_str::<Value>("GCF profile=generic\nname=short\n")
        .is_ok());
    let fields = DecoderOptions::new().max_fields(2);
    assert_eq!(
        limit("GCF profile=generic\n## r [1]{a,b,c}\n1|2|3\n", &fields).0,
        Limit::Fields
    );
    assert_eq!(
        limit(
            "GCF profile=generic\n## r [1]{a}\n@0 ^{x,y,z}\n1|2|3\n",
            &fields
        )
        .0,
        Limit::Fields
    );
    let size = DecoderOptions::new().max_input_size(Some(20));
    assert_eq!(
        limit("GCF profile=generic\na=1\n", &size).0,
        Limit::InputSize
    );
    assert_eq!(
        size.from_slice::<Value>(b"GCF profile=generic\na=1\n")
            .unwrap_err()
            .kind(),
        ErrorKind::LimitExceeded(Limit::InputSize)
    );
}

#[test]
fn the_spec_minimums_are_supported() {
    let opts = DecoderOptions::new().limits(Limits::SPEC_MINIMUM);
    assert_eq!(opts.get_limits(), &Limits::SPEC_MINIMUM);
    // 32 levels, 10 000 elements, 1 000 fields, 64 KiB lines.
    assert!(opts.from_str::<Value>(&nested_objects(31)).is_ok());
    let rows: Vec<Value> = (0..10_000).map(|i| json!({ "i": i })).collect();
    let text = agentwire_gcf::to_string(&rows).unwrap();
    assert!(opts.from_str::<Value>(&text).is_ok());
    let wide: serde_json::Map<String, Value> =
        (0..1_000).map(|i| (format!("f{i}"), json!(i))).collect();
    let text = agentwire_gcf::to_string(&[Value::Object(wide)]).unwrap();
    assert!(opts.from_str::<Value>(&text).is_ok());
    let long = "x".repeat(65_536 - 2);
    let text = agentwire_gcf::to_string(&json!({ "v": long })).unwrap();
    assert!(opts.from_str::<Value>(&text).is_ok());
    // And one past each is rejected.
    assert_eq!(limit(&nested_objects(32), &opts).0, Limit::Depth);
    let text = agentwire_gcf::to_string(&json!({ "v": "x".repeat(65_536) })).unwrap();
    assert_eq!(limit(&text, &opts).0, Limit::LineLength);
}

thread_local! {
    /// The size hint the last [`Hint`] visitor was given.
    static HINT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Records the size hint a sequence gives its visitor (in [`HINT`]), then reads the sequence.
struct Hint;

impl<'de> serde::Deserialize<'de> for Hint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Hint;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Hint, A::Error> {
                HINT.set(seq.size_hint());
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Hint)
            }
        }
        deserializer.deserialize_seq(Visitor)
    }
}

/// A declared count is a size hint only as far as the input can hold that many elements, so
/// that what a visitor reserves follows the input, not the count (the count itself is checked
/// once the elements are read).
#[test]
fn size_hints_follow_the_input_not_the_declared_count() {
    for text in [
        "GCF profile=generic\n## [9999]{a}\n1\n2\n",
        "GCF profile=generic\n## [9999]\n@0 =1\n",
        "GCF profile=generic\n## [9999]: 1,2\n",
    ] {
        HINT.set(None);
        let error = from_str::<Hint>(text).err().map(|e| e.code());
        assert_eq!(error, Some("count_mismatch"), "{text}");
        let hint = HINT.get().expect("a size hint");
        assert!(hint <= text.len() / 2 + 1, "hint {hint} for {text:?}");
    }
    // A true count is the hint.
    from_str::<Hint>("GCF profile=generic\n## [2]{a}\n1\n2\n").unwrap();
    assert_eq!(HINT.get(), Some(2));
}
