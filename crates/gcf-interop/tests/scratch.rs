#[test]
fn scratch() {
    for s in [
        r#"{"id":{"key":{"id":{},"name":{"id":null}}},"name":{"key":[]}}"#,
        r#"{"id":{"key":{"id":{},"name":{"id":null}}},"name":{"key":[{"id":1},{"id":2}]}}"#,
        r#"[{"key":{"x":{"id":1},"y":{"id":2}}},{"key":[{"key":1,"id":1},{"key":2,"id":2}]}]"#,
    ] {
        let v: serde_json::Value = serde_json::from_str(s).unwrap();
        let t = gcf::encode_generic(&v).unwrap();
        println!("{t}");
        println!("{:?}", gcf::decode_generic(&t));
        println!("{:?}", agentwire_gcf::from_str::<serde_json::Value>(&t));
    }
}
