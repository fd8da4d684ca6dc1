//! `agentwire mcp --mode proxy|gateway` in front of the npm reference servers (memory,
//! everything, filesystem) and a small test server of our own (`tests/mcp/catalog_server.js`:
//! a tool list that changes, a large result, a call counter, a way to die), driven by rmcp's
//! client and by the official MCP Python SDK. `cargo xtask mcp-servers` installs the servers
//! and the SDK into `target/mcp-servers`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

#[path = "mcp/support.rs"]
mod support;
use support::installed;

/// A configuration with memory, everything, filesystem (over `files`) and the test server,
/// written into `dir`.
fn config(dir: &Path) -> PathBuf {
    let node = installed().join("node/node_modules/@modelcontextprotocol");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("hello.txt"), "hello from the filesystem\n").unwrap();
    let test = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/catalog_server.js");
    let toml = format!(
        "[servers.memory]\ncommand = \"node\"\nargs = [{memory:?}]\nenv = {{ MEMORY_FILE_PATH = {memfile:?} }}\n\n\
         [servers.everything]\ncommand = \"node\"\nargs = [{everything:?}, \"stdio\"]\n\n\
         [servers.fs]\ncommand = \"node\"\nargs = [{fs:?}, {files:?}]\n\n\
         [servers.test]\ncommand = \"node\"\nargs = [{test:?}]\n",
        memory = node.join("server-memory/dist/index.js").display().to_string(),
        memfile = dir.join("memory.jsonl").display().to_string(),
        everything = node.join("server-everything/dist/index.js").display().to_string(),
        fs = node.join("server-filesystem/dist/index.js").display().to_string(),
        files = files.display().to_string(),
        test = test.display().to_string(),
    );
    let path = dir.join("servers.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// `agentwire mcp --mode MODE --config CONFIG`.
fn command(mode: &str, config: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command
        .args(["mcp", "--mode", mode, "--config"])
        .arg(config);
    command
}

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Client(Arc<AtomicUsize>);

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

type Session = RunningService<RoleClient, Client>;

async fn call(client: &Session, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The text of a result's one text item.
fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {value}"))
        .to_owned()
}

/// The JSON of a result's one text item (an envelope, a §3.4 error, a page).
fn json_text(result: &CallToolResult) -> Value {
    let text = text(result);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The tool ids of a tool_browse answer (lines after the first whose first word is an id).
fn ids(browse: &str) -> Vec<String> {
    browse
        .lines()
        .skip(1)
        .filter_map(|line| line.split(' ').next())
        .filter(|id| id.contains(':'))
        .map(str::to_owned)
        .collect()
}

async fn browse_path(client: &Session, path: &str) -> String {
    let result = call(client, "tool_browse", json!({"path": path})).await;
    assert!(!is_error(&result), "{}", text(&result));
    text(&result)
}

/// The id in `namespace` whose name is `name`, found by browsing.
async fn id_of(client: &Session, namespace: &str, name: &str) -> String {
    let prefix = format!("{namespace}:{name}");
    ids(&browse_path(client, &format!("/{namespace}")).await)
        .into_iter()
        .find(|id| {
            id.strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with(['#', '@']))
        })
        .unwrap_or_else(|| panic!("no {prefix} under /{namespace}"))
}

/// Polls `check` for up to a minute.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn calls_seen(client: &Session, count: &str) -> u64 {
    let envelope = json_text(&call(client, "tool_execute", json!({"tool_id": count})).await);
    let summary = envelope["summary"].as_str().unwrap();
    let (_, value) = agentwire_mcp::decode(summary).unwrap();
    value["calls"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_client_drives_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let notified = Client::default();
    let client = notified
        .clone()
        .serve(TokioChildProcess::new(command("gateway", &config)).unwrap())
        .await
        .unwrap();

    // Exactly three tools.
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["tool_browse", "tool_execute", "tool_view"]);

    // Browse by path: the four namespaces, then one of them.
    let root = browse_path(&client, "/").await;
    for namespace in ["/everything", "/fs", "/memory", "/test"] {
        assert!(
            root.lines().any(|l| l.starts_with(namespace)),
            "{namespace} in {root}"
        );
    }
    let memory = browse_path(&client, "/memory").await;
    assert!(ids(&memory)
        .iter()
        .any(|id| id.starts_with("memory:read_graph#")));
    // Browse by query.
    let found = call(&client, "tool_browse", json!({"query": "read a text file"})).await;
    assert!(
        ids(&text(&found))[..3]
            .iter()
            .any(|id| id.starts_with("fs:read")),
        "{}",
        text(&found)
    );

    // Execute: a file read through the filesystem server, inline.
    let read = id_of(&client, "fs", "read_text_file").await;
    let path = dir.path().join("files/hello.txt");
    let envelope = json_text(
        &call(
            &client,
            "tool_execute",
            json!({"tool_id": read, "args": {"path": path}}),
        )
        .await,
    );
    assert_eq!(envelope["status"], "ok", "{envelope}");
    assert_eq!(envelope["summary"], "hello from the filesystem\n");
    assert_eq!(envelope["provenance"]["server"], "fs");
    assert_eq!(envelope["firewall"]["triggered"], false);

    // A knowledge graph: created, then read back re-encoded inside the envelope.
    let create = id_of(&client, "memory", "create_entities").await;
    let entities: Vec<Value> = (0..12)
        .map(|i| json!({"name": format!("person-{i}"), "entityType": "person", "observations": ["likes tea"]}))
        .collect();
    let created = call(
        &client,
        "tool_execute",
        json!({"tool_id": create, "args": {"entities": entities}}),
    )
    .await;
    assert!(!is_error(&created), "{}", text(&created));
    let graph = id_of(&client, "memory", "read_graph").await;
    let envelope = json_text(&call(&client, "tool_execute", json!({"tool_id": graph})).await);
    let summary = envelope["summary"].as_str().unwrap();
    assert!(!summary.starts_with('{'), "re-encoded: {summary}");
    let (_, value) = agentwire_mcp::decode(summary).unwrap();
    assert_eq!(value["entities"].as_array().unwrap().len(), 12);
    assert_eq!(value["entities"][3]["name"], "person-3");

    // A validation error never reaches upstream.
    let count = id_of(&client, "test", "count").await;
    let strict = id_of(&client, "test", "strict").await;
    let before = calls_seen(&client, &count).await;
    let invalid = call(
        &client,
        "tool_execute",
        json!({"tool_id": strict, "args": {"n": 12}}),
    )
    .await;
    assert!(is_error(&invalid));
    let envelope = json_text(&invalid);
    assert_eq!(envelope["status"], "error");
    assert_eq!(envelope["error"]["error"], "ARGS_INVALID", "{envelope}");
    assert_eq!(
        calls_seen(&client, &count).await,
        before + 1,
        "only the count itself"
    );
    let valid = call(
        &client,
        "tool_execute",
        json!({"tool_id": strict, "args": {"n": 3}}),
    )
    .await;
    assert_eq!(json_text(&valid)["summary"], "n is 3");

    // Other errors in the §3.4 shape.
    let unknown = json_text(
        &call(
            &client,
            "tool_execute",
            json!({"tool_id": "test:nothing#00000000"}),
        )
        .await,
    );
    assert_eq!(unknown["error"]["error"], "HYDRATE_FAILED", "{unknown}");
    let bad_path = call(&client, "tool_browse", json!({"path": "no slash"})).await;
    assert!(is_error(&bad_path));
    assert_eq!(json_text(&bad_path)["error"]["error"], "PATH_INVALID");
    let no_path = call(&client, "tool_browse", json!({"path": "/nowhere"})).await;
    assert_eq!(json_text(&no_path)["error"]["error"], "PATH_NOT_FOUND");
    let no_view = call(&client, "tool_view", json!({"handle": "a999"})).await;
    assert_eq!(json_text(&no_view)["error"]["error"], "VIEW_FAILED");
    let fail = id_of(&client, "test", "fail").await;
    let failed = json_text(&call(&client, "tool_execute", json!({"tool_id": fail})).await);
    assert_eq!(failed["error"]["error"], "UPSTREAM_ERROR", "{failed}");
    assert!(
        failed.to_string().contains("this tool always fails"),
        "{failed}"
    );
    assert!(failed.to_string().contains("-32000"), "{failed}");

    // A large result is stored, and paged with tool_view.
    let rows = id_of(&client, "test", "rows").await;
    let envelope = json_text(
        &call(
            &client,
            "tool_execute",
            json!({"tool_id": rows, "args": {"n": 400}}),
        )
        .await,
    );
    assert_eq!(envelope["firewall"]["triggered"], true, "{envelope}");
    let handle = envelope["artifacts"][0]["handle"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        envelope["facts"].to_string().contains("400"),
        "{}",
        envelope["facts"]
    );
    let page = json_text(
        &call(
            &client,
            "tool_view",
            json!({"handle": handle, "selector": {"pointer": "/rows", "offset": 100, "limit": 5}}),
        )
        .await,
    );
    assert_eq!(page["total"], 400);
    assert_eq!(page["count"], 5);
    assert_eq!(page["next_offset"], 105);
    assert_eq!(
        page["content"][0],
        json!({"id": 100, "name": "row 100", "group": "g2", "ok": false})
    );
    let first = json_text(
        &call(
            &client,
            "tool_view",
            json!({"handle": handle, "selector": {}}),
        )
        .await,
    );
    assert_eq!(first["offset"], 0);

    // A tool list that changes: the catalog follows (the gateway's own three tools do not
    // change, so the client is not notified).
    let grow = id_of(&client, "test", "grow").await;
    call(&client, "tool_execute", json!({"tool_id": grow})).await;
    let mut tries = 0;
    eventually("extra_1 in the catalog", || {
        tries += 1;
        let client = &client;
        async move { browse_path(client, "/test").await.contains("test:extra_1#") }
    })
    .await;
    assert!(tries >= 1);
    let extra = id_of(&client, "test", "extra_1").await;
    let called = call(&client, "tool_execute", json!({"tool_id": extra})).await;
    assert_eq!(json_text(&called)["summary"], "extra_1 called");
    assert_eq!(notified.0.load(Ordering::SeqCst), 0);

    // An upstream that dies: its pending call gets UPSTREAM_UNAVAILABLE, its tools leave the
    // catalog, the others go on.
    let die = id_of(&client, "test", "die").await;
    let died = json_text(&call(&client, "tool_execute", json!({"tool_id": die})).await);
    assert_eq!(died["error"]["error"], "UPSTREAM_UNAVAILABLE", "{died}");
    assert_eq!(died["error"]["details"]["retryable"], true, "{died}");
    eventually("the test namespace gone", || {
        let client = &client;
        async move { !browse_path(client, "/").await.contains("/test") }
    })
    .await;
    let gone = json_text(&call(&client, "tool_execute", json!({"tool_id": count})).await);
    assert_eq!(gone["status"], "error");
    let echo = id_of(&client, "everything", "echo").await;
    let echoed = json_text(
        &call(
            &client,
            "tool_execute",
            json!({"tool_id": echo, "args": {"message": "still here"}}),
        )
        .await,
    );
    assert_eq!(echoed["summary"], "Echo: still here");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_client_drives_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let notified = Client::default();
    let client = notified
        .clone()
        .serve(TokioChildProcess::new(command("proxy", &config)).unwrap())
        .await
        .unwrap();

    // One stripped entry per upstream tool, names in MCP's characters, then the two tools.
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(&names[names.len() - 2..], ["tool_hydrate", "tool_execute"]);
    for tool in &tools[..tools.len() - 2] {
        assert!(
            tool.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
            "{}",
            tool.name
        );
        assert_eq!(
            serde_json::to_value(&tool.input_schema).unwrap(),
            json!({"type": "object"})
        );
    }
    let named = |prefix: &str| {
        names
            .iter()
            .find(|n| n.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {names:?}"))
            .clone()
    };
    for prefix in [
        "memory.read_graph.",
        "everything.echo.",
        "fs.read_text_file.",
        "test.rows.",
    ] {
        named(prefix);
    }
    // The duplicate was skipped, not the catalog.
    assert_eq!(
        names.iter().filter(|n| n.starts_with("test.dup.")).count(),
        1
    );

    // Hydrate: the full schema.
    let strict = named("test.strict.");
    let hydrated = json_text(&call(&client, "tool_hydrate", json!({"tool_id": strict})).await);
    assert_eq!(hydrated["server"], "test");
    assert_eq!(hydrated["upstream_name"], "strict");
    assert_eq!(hydrated["input_schema"]["required"], json!(["n"]));

    // Execute: results pass through, JSON re-encoded as in passthrough.
    let rows = named("test.rows.");
    let result = call(
        &client,
        "tool_execute",
        json!({"tool_id": rows, "args": {"n": 40}}),
    )
    .await;
    assert!(!is_error(&result));
    let (encoding, value) = agentwire_mcp::decode(&text(&result)).unwrap();
    assert_ne!(encoding, agentwire_mcp::Encoding::Json);
    assert_eq!(value["total"], 40);
    assert_eq!(value["rows"][39]["name"], "row 39");

    // A validation error never reaches upstream: the bare §3.4 object.
    let count = named("test.count.");
    let counted = |result: CallToolResult| {
        let (_, value) = agentwire_mcp::decode(&text(&result)).unwrap();
        value["calls"].as_u64().unwrap()
    };
    let before = counted(call(&client, "tool_execute", json!({"tool_id": count})).await);
    let invalid = call(
        &client,
        "tool_execute",
        json!({"tool_id": strict, "args": {"n": "x"}}),
    )
    .await;
    assert!(is_error(&invalid));
    assert_eq!(json_text(&invalid)["error"], "ARGS_INVALID");
    let after = counted(call(&client, "tool_execute", json!({"tool_id": count})).await);
    assert_eq!(after, before + 1);
    // A stripped entry called by its name: UNKNOWN_TOOL naming the tool_execute call.
    let direct = call(&client, &strict, json!({"n": 1})).await;
    assert_eq!(json_text(&direct)["error"], "UNKNOWN_TOOL");
    assert!(text(&direct).contains("tool_execute"));

    // A tool list that changes: the client is told, and lists the new tool.
    let grow = named("test.grow.");
    call(&client, "tool_execute", json!({"tool_id": grow})).await;
    eventually("tools/list_changed", || {
        let notified = notified.clone();
        async move { notified.0.load(Ordering::SeqCst) >= 1 }
    })
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name.starts_with("test.extra_1.")));

    // An upstream that dies: UPSTREAM_UNAVAILABLE, its tools leave tools/list.
    let die = named("test.die.");
    let died = call(&client, "tool_execute", json!({"tool_id": die})).await;
    assert!(is_error(&died));
    assert_eq!(json_text(&died)["error"], "UPSTREAM_UNAVAILABLE");
    eventually("the test tools gone", || {
        let client = &client;
        async move {
            let tools = client.list_all_tools().await.unwrap();
            !tools.iter().any(|t| t.name.starts_with("test."))
        }
    })
    .await;
    // The list changed again: the client is told (the notification may come just after the
    // list it describes can be read).
    eventually("a second tools/list_changed", || {
        let notified = notified.clone();
        async move { notified.0.load(Ordering::SeqCst) >= 2 }
    })
    .await;
    let echo = named("everything.echo.");
    let echoed = call(
        &client,
        "tool_execute",
        json!({"tool_id": echo, "args": {"message": "hi"}}),
    )
    .await;
    assert_eq!(text(&echoed), "Echo: hi");
    client.cancel().await.unwrap();
}

#[test]
fn the_official_python_sdk_drives_the_gateway_and_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let python = installed().join("venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_catalog.py");
    for mode in ["gateway", "proxy"] {
        let output = Command::new(&python)
            .arg(&script)
            .arg(mode)
            .arg(dir.path().join("files/hello.txt"))
            .arg(env!("CARGO_BIN_EXE_agentwire"))
            .args(["mcp", "--mode", mode, "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let warnings = String::from_utf8_lossy(&output.stderr);
        assert!(
            !warnings.contains("Tool name") && !warnings.contains("tool name"),
            "{mode}: the SDK warned about a tool name: {warnings}"
        );
        match mode {
            "gateway" => {
                assert_eq!(
                    report["tools"],
                    json!(["tool_browse", "tool_execute", "tool_view"])
                );
                assert!(report["browse_query"].as_str().unwrap().contains("fs:read"));
                assert!(report["browse_path"].as_str().unwrap().contains("/memory"));
                assert_eq!(report["read"]["status"], "ok");
                assert_eq!(report["read"]["summary"], "hello from the filesystem\n");
                assert_eq!(report["invalid"]["error"]["error"], "ARGS_INVALID");
                assert_eq!(report["invalid_is_error"], true);
                assert_eq!(report["page"]["total"], 400);
                assert_eq!(report["page"]["content"][0]["id"], 10);
                assert_eq!(report["died"]["error"]["error"], "UPSTREAM_UNAVAILABLE");
            }
            _ => {
                let tools = report["tools"].as_array().unwrap();
                assert!(tools.len() > 30, "{tools:?}");
                assert_eq!(report["hydrated"]["upstream_name"], "read_text_file");
                assert_eq!(report["read_text"], "hello from the filesystem\n");
                assert_eq!(report["invalid"]["error"], "ARGS_INVALID");
                assert_eq!(report["list_changed"], true, "{report}");
                assert!(report["tools_after"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t.as_str().unwrap().starts_with("test.extra_1.")));
                assert_eq!(report["died"]["error"], "UPSTREAM_UNAVAILABLE");
            }
        }
        // The stderr report of the skipped duplicate.
        assert!(warnings.contains("skipped test/\"dup\""), "{warnings}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_hangs_gives_upstream_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp");
    let config = dir.path().join("servers.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.hang]\ncommand = \"node\"\nargs = [{fake:?}, \"hang\"]\n\n\
             [servers.test]\ncommand = \"node\"\nargs = [{test:?}]\n",
            fake = tests.join("fake_server.js").display().to_string(),
            test = tests.join("catalog_server.js").display().to_string(),
        ),
    )
    .unwrap();
    let mut line = command("gateway", &config);
    line.args(["--timeout", "1"]);
    let client = Client::default()
        .serve(TokioChildProcess::new(line).unwrap())
        .await
        .unwrap();
    let act = id_of(&client, "hang", "act").await;
    let hung = json_text(&call(&client, "tool_execute", json!({"tool_id": act})).await);
    assert_eq!(hung["error"]["error"], "UPSTREAM_TIMEOUT", "{hung}");
    assert_eq!(hung["error"]["details"]["retryable"], true, "{hung}");
    // The other upstream goes on.
    let count = id_of(&client, "test", "count").await;
    assert_eq!(calls_seen(&client, &count).await, 1);
    client.cancel().await.unwrap();
}

#[test]
fn the_gateway_ends_with_its_last_upstream() {
    use std::io::{BufRead, BufReader, Write};

    let test = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/catalog_server.js");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["mcp", "--mode", "gateway", "--name", "test", "--", "node"])
        .arg(test)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let initialized: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(initialized["result"]["serverInfo"]["name"], "agentwire-mcp");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "tool_browse", "arguments": {"path": "/test"}}}));
    let browsed: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let die = ids(browsed["result"]["content"][0]["text"].as_str().unwrap())
        .into_iter()
        .find(|id| id.starts_with("test:die#"))
        .unwrap();
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "tool_execute", "arguments": {"tool_id": die}}}));
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    // The pending call was answered first.
    let answer: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(answer["id"], 3);
    let envelope: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope["error"]["error"], "UPSTREAM_UNAVAILABLE");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("exited with status 3"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_mode_over_streamable_http() {
    use rmcp::transport::StreamableHttpClientTransport;

    let _ = rustls::crypto::ring::default_provider().install_default();
    let test = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/catalog_server.js");
    let mut proxy = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire"));
    proxy
        .args([
            "mcp",
            "--mode",
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--name",
            "test",
            "--",
            "node",
        ])
        .arg(test);
    let (mut child, served) = support::spawn_listening(&mut proxy).await;
    let notified = Client::default();
    let client = notified
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(served.as_str()))
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let grow = tools
        .iter()
        .find(|t| t.name.starts_with("test.grow."))
        .expect("test.grow")
        .name
        .to_string();
    let rows = tools
        .iter()
        .find(|t| t.name.starts_with("test.rows."))
        .unwrap()
        .name
        .to_string();
    let result = call(
        &client,
        "tool_execute",
        json!({"tool_id": rows, "args": {"n": 30}}),
    )
    .await;
    let (_, value) = agentwire_mcp::decode(&text(&result)).unwrap();
    assert_eq!(value["total"], 30);
    call(&client, "tool_execute", json!({"tool_id": grow})).await;
    eventually("tools/list_changed over HTTP", || {
        let notified = notified.clone();
        async move { notified.0.load(Ordering::SeqCst) >= 1 }
    })
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name.starts_with("test.extra_1.")));
    client.cancel().await.unwrap();
    child.start_kill().unwrap();
    let _ = child.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_stable_browsing_puts_seen_cards_first() {
    let test = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/catalog_server.js");
    let browse = |stable: bool| {
        let test = test.clone();
        async move {
            let mut line = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire"));
            line.args(["mcp", "--mode", "gateway", "--name", "test"]);
            if stable {
                line.arg("--cache-stable");
            }
            line.args(["--", "node"]).arg(test);
            let client = Client::default()
                .serve(TokioChildProcess::new(line).unwrap())
                .await
                .unwrap();
            let first = call(
                &client,
                "tool_browse",
                json!({"query": "tool calls on this server", "top_k": 1}),
            )
            .await;
            let second = call(
                &client,
                "tool_browse",
                json!({"query": "tool calls on this server", "top_k": 3}),
            )
            .await;
            client.cancel().await.unwrap();
            (text(&first), text(&second))
        }
    };
    let (first, second) = browse(true).await;
    // The second answer starts with the cards of the first that it holds, then the marker.
    let seen: Vec<String> = ids(&first);
    let again = ids(&second);
    let marker = second
        .lines()
        .position(|l| l.starts_with("__cache_breakpoint__"))
        .unwrap_or_else(|| panic!("no marker in {second}"));
    let before: Vec<&str> = second.lines().skip(1).take(marker - 1).collect();
    assert!(!before.is_empty(), "{second}");
    for line in &before {
        let id = line.split(' ').next().unwrap();
        assert!(
            seen.iter().any(|s| s == id),
            "{id} was not seen: {first} / {second}"
        );
        assert!(first.contains(line), "re-emitted exactly: {line}");
    }
    assert!(again.len() <= 3);
    // Without --cache-stable: no marker.
    let (_, plain) = browse(false).await;
    assert!(!plain.contains("__cache_breakpoint__"), "{plain}");
}
