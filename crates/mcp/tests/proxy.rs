//! The proxy in process, over in-memory pipes, in front of small `sh` servers. (The tests of
//! the `agentwire` command drive it against the npm reference servers and the Python SDK.)

use std::time::Duration;

use agentwire_mcp::{EncodeOptions, Format, Proxy, ProxyOptions, ServerSpec};
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}"#;

/// A server that runs `script` in `sh` (lines read with `read l`, answers written with
/// `printf`).
fn sh(script: &str) -> ServerSpec {
    ServerSpec::command("sh", "sh", ["-c", script])
}

fn answer(id: u64, result: &Value) -> String {
    format!(
        "printf '%s\\n' '{}'",
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    )
}

/// `work`, or a panic after two minutes.
async fn within<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), work)
        .await
        .expect("done within two minutes")
}

struct Client {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: Option<WriteHalf<DuplexStream>>,
}

impl Client {
    async fn send(&mut self, line: &str) {
        let writer = self.writer.as_mut().unwrap();
        writer.write_all(line.as_bytes()).await.unwrap();
        writer.write_all(b"\n").await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }
}

fn pipes() -> (Client, ReadHalf<DuplexStream>, WriteHalf<DuplexStream>) {
    let (client, proxy) = tokio::io::duplex(1 << 20);
    let (reader, writer) = tokio::io::split(client);
    let (proxy_in, proxy_out) = tokio::io::split(proxy);
    (
        Client {
            lines: BufReader::new(reader).lines(),
            writer: Some(writer),
        },
        proxy_in,
        proxy_out,
    )
}

#[tokio::test]
async fn results_are_re_encoded_and_recorded() {
    let rows: Vec<Value> = (0..25)
        .map(|i| json!({"id": i, "title": format!("issue {i}"), "open": i % 2 == 0}))
        .collect();
    let text = serde_json::to_string_pretty(&rows).unwrap();
    let script =
        format!(
        "read l; printf '%s\\n' '{INITIALIZED}'; read l; read l; {}; read l; {}; cat >/dev/null",
        answer(2, &json!({"content": [{"type": "text", "text": text}]})),
        answer(3, &json!({"content": [{"type": "text", "text": text}], "isError": true})),
    );
    let dir = std::env::temp_dir().join(format!("agentwire-mcp-proxy-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let options = ProxyOptions::new()
        .encode(EncodeOptions::new().format(Format::Gcf))
        .stats(&dir);
    let proxy = Proxy::new(sh(&script), options).unwrap();
    let (mut client, proxy_in, proxy_out) = pipes();
    let talk = async {
        client.send(INITIALIZE).await;
        assert_eq!(client.next().await["result"]["serverInfo"]["name"], "sh");
        client
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        client
            .send(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"issues"}}"#)
            .await;
        let ok = client.next().await;
        client
            .send(r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"issues"}}"#)
            .await;
        let error = client.next().await;
        // The client leaves (dropping one half of a split pipe would not close it).
        client.writer.take().unwrap().shutdown().await.unwrap();
        (ok, error)
    };
    let (served, (ok, error)) = within(async {
        tokio::join!(
            proxy.serve(proxy_in, proxy_out, std::future::pending()),
            talk
        )
    })
    .await;
    served.unwrap();
    let gcf = ok["result"]["content"][0]["text"].as_str().unwrap();
    assert!(gcf.starts_with("GCF "), "{gcf}");
    assert_eq!(agentwire_mcp::decode(gcf).unwrap().1, json!(rows));
    // An error result passes unchanged.
    assert_eq!(error["result"]["content"][0]["text"], text);
    let summary = proxy.summary();
    assert_eq!((summary.calls, summary.reencoded), (2, 1));
    let lines = std::fs::read_to_string(&dir).unwrap();
    let records: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0]["format"], "gcf");
    assert_eq!(records[1]["status"], "tool_error");
    let _ = std::fs::remove_file(&dir);
}

#[tokio::test]
async fn an_upstream_that_exits_fails_the_session() {
    let proxy = Proxy::new(sh("read l; exit 7"), ProxyOptions::new()).unwrap();
    let (mut client, proxy_in, proxy_out) = pipes();
    let talk = async {
        client.send(INITIALIZE).await;
        client.next().await
    };
    let (served, answer) = within(async {
        tokio::join!(
            proxy.serve(proxy_in, proxy_out, std::future::pending()),
            talk
        )
    })
    .await;
    let error = served.unwrap_err();
    assert_eq!(error.code(), "upstream_exited");
    assert_eq!(
        error.to_string(),
        "upstream_exited: upstream `sh` exited with status 7"
    );
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(
        answer["error"]["message"],
        "upstream MCP server `sh` exited with status 7"
    );
}

#[tokio::test]
async fn shutdown_ends_the_session_and_the_server() {
    let script = format!("read l; printf '%s\\n' '{INITIALIZED}'; sleep 600");
    let proxy = Proxy::new(sh(&script), ProxyOptions::new()).unwrap();
    let (mut client, proxy_in, proxy_out) = pipes();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let talk = async {
        client.send(INITIALIZE).await;
        let answer = client.next().await;
        stop.send(()).unwrap();
        answer
    };
    let started = std::time::Instant::now();
    let (served, answer) = within(async {
        tokio::join!(
            proxy.serve(proxy_in, proxy_out, async {
                let _ = stopped.await;
            }),
            talk
        )
    })
    .await;
    served.unwrap();
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
    // `sleep 600` ignores its closed stdin: SIGTERM to its process group ends it.
    assert!(started.elapsed() < Duration::from_secs(60));
}
