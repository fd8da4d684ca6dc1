//! `agentwire mcp` against real MCP servers: the npm reference servers (memory, everything)
//! and a deliberately faulty one, driven through the proxy by raw JSON-RPC lines, by an rmcp
//! client, and by the official MCP Python SDK. `cargo xtask mcp-servers` installs the servers
//! and the SDK into `target/mcp-servers` (`cargo xtask ci` runs it first).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use agentwire_tokens::Tokenizer;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

#[path = "mcp/support.rs"]
mod support;
use support::installed;

/// The command line of a reference server (`memory` or `everything`, over stdio).
fn reference(name: &str) -> Vec<String> {
    let script = installed().join(format!(
        "node/node_modules/@modelcontextprotocol/server-{name}/dist/index.js"
    ));
    let mut command = vec!["node".to_owned(), script.display().to_string()];
    if name == "everything" {
        command.push("stdio".to_owned());
    }
    command
}

/// The faulty server of `tests/mcp/fake_server.js` in `mode`.
fn fake(mode: &str, pidfile: Option<&Path>) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fake_server.js");
    let mut command = vec![
        "node".to_owned(),
        script.display().to_string(),
        mode.to_owned(),
    ];
    if let Some(pidfile) = pidfile {
        command.push(pidfile.display().to_string());
    }
    command
}

/// `agentwire mcp OPTIONS -- UPSTREAM`.
fn proxied(options: &[&str], upstream: &[String]) -> Vec<String> {
    let mut command = vec![env!("CARGO_BIN_EXE_agentwire").to_owned(), "mcp".to_owned()];
    command.extend(options.iter().map(|s| (*s).to_owned()));
    command.push("--".to_owned());
    command.extend(upstream.iter().cloned());
    command
}

/// A client speaking raw JSON-RPC lines to a child process.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    /// Answers to requests from the server, by method.
    answers: Vec<(&'static str, Value)>,
    /// Everything received that was not a response asked for.
    seen: Vec<Value>,
}

impl Raw {
    fn spawn(command: &[String], env: &[(&str, &str)]) -> Raw {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON from the proxy ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            messages,
            stderr,
            answers: Vec::new(),
            seen: Vec::new(),
        }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        self.send(&message);
        self.response(&json!(id))
    }

    /// The response with `id`, answering the server's requests meanwhile.
    fn response(&mut self, id: &Value) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.messages.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no response {id} within {WAIT:?}; stderr: {}",
                    self.stderr.lock().unwrap()
                )
            });
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
            if let (Some(method), Some(request_id)) = (
                message.get("method").and_then(Value::as_str),
                message.get("id"),
            ) {
                let answer = self
                    .answers
                    .iter()
                    .find(|(m, _)| *m == method)
                    .map(|(_, a)| a.clone());
                let reply = match answer {
                    Some(result) => json!({"jsonrpc": "2.0", "id": request_id, "result": result}),
                    None => json!({"jsonrpc": "2.0", "id": request_id,
                                   "error": {"code": -32601, "message": "Method not found"}}),
                };
                self.send(&reply);
            }
            self.seen.push(message);
        }
    }

    fn initialize(&mut self, capabilities: Value) -> Value {
        let mut params = json!({"protocolVersion": "2025-06-18",
                                "clientInfo": {"name": "agentwire-tests", "version": "1"}});
        params["capabilities"] = capabilities;
        let response = self.request(1, "initialize", params);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }

    /// Closes stdin (unless already closed) and waits for the exit.
    fn finish(mut self) -> (ExitStatus, String) {
        self.stdin = None;
        let status = wait(&mut self.child, WAIT).expect("the process exits");
        std::thread::sleep(Duration::from_millis(50));
        let stderr = self.stderr.lock().unwrap().clone();
        (status, stderr)
    }
}

fn wait(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

fn result(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("not a result: {response}"))
}

fn text_items(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "text")
        .map(|item| item["text"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the server lists `tool` (the everything server registers the tools that need
/// client capabilities after `initialized`).
fn wait_for_tool(raw: &mut Raw, tool: &str, next_id: &mut i64) {
    let deadline = Instant::now() + WAIT;
    loop {
        *next_id += 1;
        let list = raw.request(*next_id, "tools/list", json!({}));
        if result(&list)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == tool)
        {
            return;
        }
        assert!(Instant::now() < deadline, "{tool} never listed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn initialize_and_lists_pass_through_unchanged() {
    let mut direct = Raw::spawn(&reference("everything"), &[]);
    let mut proxy = Raw::spawn(&proxied(&[], &reference("everything")), &[]);
    let caps = json!({});
    // The whole initialize result: capabilities (`tasks` included, which rmcp's model lacks),
    // server info and instructions.
    assert_eq!(
        result(&direct.initialize(caps.clone())),
        result(&proxy.initialize(caps))
    );
    for (id, method) in [
        (2, "tools/list"),
        (3, "prompts/list"),
        (4, "resources/list"),
        (5, "resources/templates/list"),
    ] {
        let a = direct.request(id, method, json!({}));
        let b = proxy.request(id, method, json!({}));
        // Every member, `execution` and `outputSchema` of tools included.
        assert_eq!(a, b, "{method}");
    }
    let tools = result(&proxy.request(6, "tools/list", json!({})))["tools"].clone();
    assert!(tools[0].get("execution").is_some(), "{tools}");
    direct.finish();
    let (status, _) = proxy.finish();
    assert!(status.success());
}

#[test]
fn a_knowledge_graph_reads_back_to_the_same_json_in_fewer_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.jsonl");
    let direct_file = dir.path().join("direct.jsonl");
    let proxy_file = dir.path().join("proxy.jsonl");
    let mut direct = Raw::spawn(
        &reference("memory"),
        &[("MEMORY_FILE_PATH", direct_file.to_str().unwrap())],
    );
    let stats_arg = stats.to_str().unwrap();
    let mut proxy = Raw::spawn(
        &proxied(&["--stats", stats_arg], &reference("memory")),
        &[("MEMORY_FILE_PATH", proxy_file.to_str().unwrap())],
    );
    let entities: Vec<Value> = (0..30)
        .map(|i| {
            json!({"name": format!("person-{i}"), "entityType": "person",
                   "observations": [format!("works on project {}", i % 5), "speaks English"]})
        })
        .collect();
    let relations: Vec<Value> = (0..29)
        .map(|i| json!({"from": format!("person-{i}"), "to": format!("person-{}", i + 1), "relationType": "knows"}))
        .collect();
    let mut texts = Vec::new();
    for raw in [&mut direct, &mut proxy] {
        raw.initialize(json!({}));
        raw.request(
            2,
            "tools/call",
            json!({"name": "create_entities", "arguments": {"entities": entities}}),
        );
        raw.request(
            3,
            "tools/call",
            json!({"name": "create_relations", "arguments": {"relations": relations}}),
        );
        let graph = raw.request(
            4,
            "tools/call",
            json!({"name": "read_graph", "arguments": {}}),
        );
        let graph = result(&graph);
        assert_eq!(graph.get("isError"), None, "{graph}");
        texts.push(text_items(graph).remove(0));
    }
    let (direct_text, proxy_text) = (&texts[0], &texts[1]);
    let direct_json: Value = serde_json::from_str(direct_text).unwrap();
    assert_eq!(direct_json["entities"].as_array().unwrap().len(), 30);
    // The library's reading and the command's agree with the server's JSON.
    let (encoding, decoded) = agentwire_mcp::decode(proxy_text).unwrap();
    assert_ne!(encoding, agentwire_mcp::Encoding::Json, "{proxy_text}");
    assert_eq!(decoded, direct_json);
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("decode")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(proxy_text.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        serde_json::from_slice::<Value>(&output.stdout).unwrap(),
        direct_json
    );
    let (before, after) = (
        Tokenizer::O200kBase.count(direct_text),
        Tokenizer::O200kBase.count(proxy_text),
    );
    assert!(
        after < before,
        "{after} tokens through the proxy, {before} direct"
    );
    direct.finish();
    let (status, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
    // Statistics: a line per call, and the summary.
    let lines: Vec<Value> = std::fs::read_to_string(&stats)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let read = lines.iter().find(|l| l["tool"] == "read_graph").unwrap();
    assert_eq!(read["format"], encoding.name());
    assert_eq!(read["tokens_before"], before);
    assert_eq!(read["tokens_after"], after);
    assert_eq!(read["status"], "ok");
    assert!(read["total_ms"].as_f64().unwrap() > 0.0);
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("agentwire mcp: 3 tool calls"))
        .unwrap_or_else(|| panic!("no summary: {stderr}"));
    let total = |key: &str| lines.iter().map(|l| l[key].as_u64().unwrap()).sum::<u64>();
    assert!(
        summary.contains(&format!(
            "JSON results {} -> {} tokens",
            total("tokens_before"),
            total("tokens_after")
        )),
        "{summary}"
    );
}

#[test]
fn text_image_and_structured_content_pass_through() {
    let calls = [
        (
            "echo",
            json!({"message": "{\"looks\": \"like JSON but is a message\"}"}),
        ),
        ("echo", json!({"message": "plain text"})),
        ("get-tiny-image", json!({})),
        ("get-structured-content", json!({"location": "Chicago"})),
        (
            "get-annotated-message",
            json!({"messageType": "success", "includeImage": true}),
        ),
        (
            "get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 2}),
        ),
    ];
    let mut direct = Raw::spawn(&reference("everything"), &[]);
    let mut proxy = Raw::spawn(
        &proxied(&["--min-tokens", "1"], &reference("everything")),
        &[],
    );
    direct.initialize(json!({}));
    proxy.initialize(json!({}));
    for (i, (tool, arguments)) in calls.iter().enumerate() {
        let id = 10 + i as i64;
        let params = json!({"name": tool, "arguments": arguments});
        let mut a = direct.request(id, "tools/call", params.clone());
        let mut b = proxy.request(id, "tools/call", params);
        if *tool == "get-resource-reference" {
            // The embedded resource's text says when the server made it.
            for response in [&mut a, &mut b] {
                let resource = &mut response["result"]["content"][1]["resource"];
                assert!(resource["text"].as_str().unwrap().contains("created at"));
                resource["text"] = json!("(made at a time of its own)");
            }
        }
        assert_eq!(a, b, "{tool}");
    }
    direct.finish();
    proxy.finish();
}

#[test]
fn progress_notifications_arrive_in_order_before_the_result() {
    let mut proxy = Raw::spawn(&proxied(&[], &reference("everything")), &[]);
    proxy.initialize(json!({}));
    proxy.seen.clear();
    let response = proxy.request(
        2,
        "tools/call",
        json!({"name": "trigger-long-running-operation",
               "arguments": {"duration": 0.4, "steps": 4},
               "_meta": {"progressToken": "progress-1"}}),
    );
    assert!(text_items(result(&response))[0].contains("completed"));
    let progress: Vec<&Value> = proxy
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 4, "{:?}", proxy.seen);
    for (i, message) in progress.iter().enumerate() {
        assert_eq!(message["params"]["progressToken"], "progress-1");
        assert_eq!(message["params"]["progress"], i as u64 + 1);
        assert_eq!(message["params"]["total"], 4);
    }
    proxy.finish();
}

#[test]
fn the_servers_requests_reach_the_client_and_its_answers_the_server() {
    let mut proxy = Raw::spawn(&proxied(&[], &reference("everything")), &[]);
    proxy.answers = vec![
        (
            "roots/list",
            json!({"roots": [{"uri": "file:///tmp/agentwire-root", "name": "test root"}]}),
        ),
        (
            "sampling/createMessage",
            json!({"model": "test-model", "role": "assistant", "stopReason": "endTurn",
                   "content": {"type": "text", "text": "sampled by the test"}}),
        ),
        ("elicitation/create", json!({"action": "decline"})),
    ];
    proxy.initialize(json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}}));
    let mut id = 1;
    wait_for_tool(&mut proxy, "trigger-sampling-request", &mut id);
    let sampled = proxy.request(
        100,
        "tools/call",
        json!({"name": "trigger-sampling-request", "arguments": {"prompt": "hello", "maxTokens": 20}}),
    );
    assert!(
        text_items(result(&sampled))
            .join(" ")
            .contains("sampled by the test"),
        "{sampled}"
    );
    wait_for_tool(&mut proxy, "get-roots-list", &mut id);
    let roots = proxy.request(
        101,
        "tools/call",
        json!({"name": "get-roots-list", "arguments": {}}),
    );
    assert!(
        text_items(result(&roots))
            .join(" ")
            .contains("file:///tmp/agentwire-root"),
        "{roots}"
    );
    wait_for_tool(&mut proxy, "trigger-elicitation-request", &mut id);
    let elicited = proxy.request(
        102,
        "tools/call",
        json!({"name": "trigger-elicitation-request", "arguments": {}}),
    );
    assert!(
        text_items(result(&elicited))
            .join(" ")
            .to_lowercase()
            .contains("decline"),
        "{elicited}"
    );
    // The server's requests went through with their methods.
    let methods: BTreeSet<&str> = proxy
        .seen
        .iter()
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str())
        .collect();
    for method in ["roots/list", "sampling/createMessage", "elicitation/create"] {
        assert!(methods.contains(method), "{methods:?}");
    }
    proxy.finish();
}

#[test]
fn an_unknown_tool_gets_the_servers_own_answer() {
    let mut direct = Raw::spawn(&reference("everything"), &[]);
    let mut proxy = Raw::spawn(&proxied(&[], &reference("everything")), &[]);
    direct.initialize(json!({}));
    proxy.initialize(json!({}));
    let params = json!({"name": "no-such-tool", "arguments": {}});
    let a = direct.request(2, "tools/call", params.clone());
    let b = proxy.request(2, "tools/call", params);
    assert_eq!(a, b);
    let unknown_method = proxy.request(3, "no/such/method", json!({}));
    assert_eq!(
        unknown_method,
        direct.request(3, "no/such/method", json!({}))
    );
    assert!(unknown_method.get("error").is_some(), "{unknown_method}");
    direct.finish();
    proxy.finish();
}

#[test]
fn an_upstream_that_cannot_start_answers_initialize_with_the_reason() {
    let mut proxy = Raw::spawn(
        &proxied(
            &[],
            &["/nonexistent/mcp-server".to_owned(), "--flag".to_owned()],
        ),
        &[],
    );
    let response = proxy.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("could not be started"), "{message}");
    let status = wait(&mut proxy.child, WAIT).expect("exits on its own");
    assert_eq!(status.code(), Some(1));
    let (_, stderr) = proxy.finish();
    assert!(
        stderr.contains(
            "upstream_spawn: cannot start the upstream server `/nonexistent/mcp-server --flag`"
        ),
        "{stderr}"
    );
}

#[test]
fn an_upstream_that_crashes_fails_the_pending_call_and_the_proxy() {
    let mut proxy = Raw::spawn(&proxied(&[], &fake("crash", None)), &[]);
    proxy.initialize(json!({}));
    let response = proxy.request(2, "tools/call", json!({"name": "act", "arguments": {}}));
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("exited with status 3"), "{message}");
    // The proxy ends without the client closing anything.
    let status = wait(&mut proxy.child, WAIT).expect("exits on its own");
    assert_eq!(status.code(), Some(1));
    let (_, stderr) = proxy.finish();
    assert!(
        stderr.contains("upstream_exited: upstream `node` exited with status 3"),
        "{stderr}"
    );
}

#[test]
fn an_upstream_that_hangs_fails_the_pending_call_and_the_proxy() {
    let mut proxy = Raw::spawn(&proxied(&["--timeout", "0.5"], &fake("hang", None)), &[]);
    proxy.initialize(json!({}));
    let started = Instant::now();
    let response = proxy.request(2, "tools/call", json!({"name": "act", "arguments": {}}));
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("stopped answering"), "{message}");
    assert!(started.elapsed() < WAIT);
    let status = wait(&mut proxy.child, WAIT).expect("exits on its own");
    assert_eq!(status.code(), Some(1));
    let (_, stderr) = proxy.finish();
    assert!(stderr.contains("upstream_timeout"), "{stderr}");
}

#[test]
fn malformed_messages_from_either_side_are_answered() {
    let mut proxy = Raw::spawn(&proxied(&[], &fake("garbage", None)), &[]);
    proxy.initialize(json!({}));
    proxy.send_line("this is not JSON");
    assert_eq!(
        proxy.response(&Value::Null)["error"]["code"],
        -32700,
        "a parse error answers with id null"
    );
    proxy.send_line(r#"{"jsonrpc":"2.0","id":7}"#);
    assert_eq!(proxy.response(&json!(7))["error"]["code"], -32600);
    proxy.send_line("[1, 2]");
    assert_eq!(proxy.response(&Value::Null)["error"]["code"], -32600);
    proxy.send_line(r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#);
    assert_eq!(proxy.response(&json!(8))["error"]["code"], -32600);
    // The server writes a line that is not JSON, then a malformed answer to the call.
    let call = proxy.request(9, "tools/call", json!({"name": "act", "arguments": {}}));
    let message = call["error"]["message"].as_str().unwrap();
    assert!(message.contains("malformed response"), "{message}");
    // Both sides are still there.
    assert_eq!(result(&proxy.request(10, "ping", json!({}))), &json!({}));
    let (status, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn a_client_that_disconnects_ends_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let mut proxy = Raw::spawn(&proxied(&[], &fake("echo", Some(&pidfile))), &[]);
    proxy.initialize(json!({}));
    let echoed = proxy.request(
        2,
        "tools/call",
        json!({"name": "act", "arguments": {"rows": [1, 2, 3]}}),
    );
    assert_eq!(text_items(result(&echoed)), ["{\"rows\":[1,2,3]}"]);
    let pid: u32 = std::fs::read_to_string(&pidfile).unwrap().parse().unwrap();
    let proc = PathBuf::from(format!("/proc/{pid}"));
    assert!(proc.exists());
    let (status, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while proc.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!proc.exists(), "the upstream {pid} outlived the proxy");
}

#[test]
fn the_upstream_can_come_from_a_configuration_file() {
    let dir = tempfile::tempdir().unwrap();
    let memory = reference("memory");
    let config = dir.path().join("servers.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.memory]\ncommand = {:?}\nargs = [{:?}]\nenv = {{ MEMORY_FILE_PATH = {:?} }}\n",
            memory[0],
            memory[1],
            dir.path().join("memory.jsonl").display().to_string()
        ),
    )
    .unwrap();
    let command = vec![
        env!("CARGO_BIN_EXE_agentwire").to_owned(),
        "mcp".to_owned(),
        "--config".to_owned(),
        config.display().to_string(),
    ];
    let mut proxy = Raw::spawn(&command, &[]);
    proxy.initialize(json!({}));
    let tools = proxy.request(2, "tools/list", json!({}));
    assert!(result(&tools)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "read_graph"));
    let (status, _) = proxy.finish();
    assert!(status.success());
    // Several servers are for the gateway modes; passthrough serves one.
    std::fs::write(
        &config,
        "[servers.a]\ncommand = \"x\"\n[servers.b]\nurl = \"http://x/mcp\"\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["mcp", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("names 2 servers (a, b)"));
    // A file that is not a configuration: the line and column of the problem.
    std::fs::write(&config, "[servers.a]\ncommand = \"x\"\nport = 1\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["mcp", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("agentwire: config_invalid at line 3, column 1: unknown field `port`"),
        "{stderr}"
    );
    // No upstream at all, or a timeout that is not one: usage errors.
    for args in [&["mcp"][..], &["mcp", "--timeout", "0", "--", "x"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn the_official_python_sdk_drives_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let python = installed().join("venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_client.py");
    let output = Command::new(python)
        .arg(script)
        .args(proxied(&[], &reference("memory")))
        .env("MEMORY_FILE_PATH", dir.path().join("memory.jsonl"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["server"], "memory-server");
    // The same tools as the server lists to a client of its own.
    let mut direct = Raw::spawn(&reference("memory"), &[("MEMORY_FILE_PATH", "/dev/null")]);
    direct.initialize(json!({}));
    let mut names: Vec<String> = result(&direct.request(2, "tools/list", json!({})))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    direct.finish();
    assert_eq!(report["tools"], json!(names));
    assert_eq!(report["created_error"], false);
    assert_eq!(report["graph_error"], false);
    let text = report["graph_text"][0].as_str().unwrap();
    let (_, graph) = agentwire_mcp::decode(text).unwrap();
    assert_eq!(graph["entities"].as_array().unwrap().len(), 12);
    assert_eq!(graph["entities"][3]["name"], "person-3");
    let missing = &report["missing"];
    assert!(
        missing["is_error"] == true || missing.get("raised").is_some(),
        "{missing}"
    );
    assert_eq!(report["ping"], true);
}

mod rmcp_client {
    //! The same through rmcp's own client, over stdio and over streamable HTTP both ways.

    use std::process::Stdio;

    use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
    use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
    use rmcp::ServiceExt;
    use serde_json::json;

    use super::{proxied, reference};

    fn command(line: &[String]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&line[0]);
        command.args(&line[1..]);
        command
    }

    async fn tools_and_calls<S>(
        client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
    ) -> (Vec<Tool>, Vec<CallToolResult>)
    where
        S: rmcp::service::Service<rmcp::RoleClient>,
    {
        let tools = client.list_all_tools().await.expect("tools/list");
        let mut results = Vec::new();
        for (name, arguments) in [
            ("echo", json!({"message": "hello"})),
            ("get-tiny-image", json!({})),
            ("get-sum", json!({"a": 2, "b": 3})),
        ] {
            let params = CallToolRequestParams::new(name)
                .with_arguments(arguments.as_object().unwrap().clone());
            results.push(client.call_tool(params).await.expect(name));
        }
        (tools, results)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_rmcp_client_sees_what_it_sees_directly() {
        let direct =
            ().serve(TokioChildProcess::new(command(&reference("everything"))).unwrap())
                .await
                .unwrap();
        let proxy = ()
            .serve(
                TokioChildProcess::new(command(&proxied(&[], &reference("everything")))).unwrap(),
            )
            .await
            .unwrap();
        let (direct_tools, direct_results) = tools_and_calls(&direct).await;
        let (proxy_tools, proxy_results) = tools_and_calls(&proxy).await;
        assert_eq!(direct_tools, proxy_tools);
        assert_eq!(direct_results, proxy_results);
        direct.cancel().await.unwrap();
        proxy.cancel().await.unwrap();
    }

    /// A client that records the progress it is told about.
    #[derive(Clone, Default)]
    struct Progress(std::sync::Arc<std::sync::Mutex<Vec<f64>>>);

    impl rmcp::ClientHandler for Progress {
        async fn on_progress(
            &self,
            params: rmcp::model::ProgressNotificationParam,
            _: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            self.0.lock().unwrap().push(params.progress);
        }
    }

    fn call(name: &str, arguments: serde_json::Value) -> CallToolRequestParams {
        let serde_json::Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_rmcp_client_reads_a_graph_back_and_gets_errors_and_progress() {
        let dir = tempfile::tempdir().unwrap();
        let mut line = proxied(&["--format", "gcf"], &reference("memory"));
        let mut memory = command(&line);
        memory.env("MEMORY_FILE_PATH", dir.path().join("memory.jsonl"));
        let client = ().serve(TokioChildProcess::new(memory).unwrap()).await.unwrap();
        let entities: Vec<_> = (0..20)
            .map(|i| json!({"name": format!("city-{i}"), "entityType": "city", "observations": ["has a river"]}))
            .collect();
        client
            .call_tool(call("create_entities", json!({"entities": entities})))
            .await
            .unwrap();
        let graph = client
            .call_tool(call("read_graph", json!({})))
            .await
            .unwrap();
        let text = graph.content[0]
            .as_text()
            .expect("a text item")
            .text
            .clone();
        let (encoding, value) = agentwire_mcp::decode(&text).unwrap();
        assert_eq!(encoding, agentwire_mcp::Encoding::Gcf, "{text}");
        assert_eq!(value["entities"], json!(entities));
        // An unknown tool: the server's own answer, through.
        let missing = client.call_tool(call("no_such_tool", json!({}))).await;
        match missing {
            Ok(result) => assert_eq!(result.is_error, Some(true)),
            Err(error) => assert!(error.to_string().contains("no_such_tool"), "{error}"),
        }
        client.cancel().await.unwrap();

        // Progress through rmcp's own client.
        line = proxied(&[], &reference("everything"));
        let progress = Progress::default();
        let client = progress
            .clone()
            .serve(TokioChildProcess::new(command(&line)).unwrap())
            .await
            .unwrap();
        let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(call(
            "trigger-long-running-operation",
            json!({"duration": 0.3, "steps": 3}),
        )));
        client
            .send_request_with_option(request, rmcp::service::PeerRequestOptions::no_options())
            .await
            .unwrap()
            .await_response()
            .await
            .unwrap();
        let deadline = std::time::Instant::now() + super::WAIT;
        while progress.0.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let mut seen = progress.0.lock().unwrap().clone();
        seen.sort_by(f64::total_cmp);
        assert_eq!(seen, [1.0, 2.0, 3.0]);
        client.cancel().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_rmcp_client_gets_an_error_from_a_dead_upstream() {
        let client = ()
            .serve(
                TokioChildProcess::new(command(&proxied(&[], &super::fake("crash", None))))
                    .unwrap(),
            )
            .await
            .unwrap();
        let error = client
            .call_tool(call("act", json!({})))
            .await
            .expect_err("the upstream crashed");
        assert!(
            error.to_string().contains("exited with status 3"),
            "{error}"
        );
        let _ = client.cancel().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streamable_http_upstream_and_client() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        // The everything server over streamable HTTP on a free port.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut server_line = reference("everything");
        server_line.pop();
        server_line.push("streamableHttp".to_owned());
        let mut server = command(&server_line);
        server
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let _server = server.spawn().unwrap();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let deadline = std::time::Instant::now() + super::WAIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the HTTP server never listened"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        // The proxy: that server upstream (--url), its client over HTTP (--listen).
        let (mut proxy, served) = super::support::spawn_listening(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire")).args([
                "mcp",
                "--url",
                &url,
                "--listen",
                "127.0.0.1:0",
            ]),
        )
        .await;
        let direct = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
        let through =
            ().serve(StreamableHttpClientTransport::from_uri(served.as_str()))
                .await
                .unwrap();
        let (direct_tools, direct_results) = tools_and_calls(&direct).await;
        let (proxy_tools, proxy_results) = tools_and_calls(&through).await;
        assert_eq!(direct_tools, proxy_tools);
        assert_eq!(direct_results, proxy_results);
        direct.cancel().await.unwrap();
        through.cancel().await.unwrap();
        proxy.start_kill().unwrap();
        let _ = proxy.wait().await;
    }
}
