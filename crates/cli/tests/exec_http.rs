//! `agentwire exec` against a local HTTP server on 127.0.0.1 that replays Responses-API
//! server-sent-event bodies: the real transport path, retries, failures and framing.

mod exec_support;

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use exec_support::{exec, fixture, lines, run, types, End, Reply, Server};
use serde_json::{json, Value};

fn input_file(dir: &Path, request: &Value) -> String {
    let path = dir.join("input.json");
    std::fs::write(&path, request["input"].to_string()).unwrap();
    path.display().to_string()
}

/// Serves a relay fixture's upstream body over HTTP and checks that the command prints the
/// fixture's events. `created_at` is only compared where the upstream sent one (elsewhere the
/// command stamps the current time).
fn replay_relay_fixture(name: &str, extra_args: &[&str]) {
    let fixture = fixture(&format!("relay/{name}.json"));
    let request = &fixture["request"];
    let mut server = Server::start(vec![Reply::sse(fixture["sse"].as_str().unwrap())]);
    let dir = tempfile::tempdir().unwrap();
    let mut command = exec(&server);
    command
        .arg("--json")
        .args(["--input-json", &input_file(dir.path(), request)]);
    if let Some(instructions) = request["instructions"].as_str() {
        command.args(["--instructions", instructions]);
    }
    for tool in request["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, tool["parameters"].to_string()).unwrap();
        command.args(["--tool", &format!("{name}:json={}", path.display())]);
    }
    command.args(extra_args);
    let output = command.output().unwrap();
    let expected_status = if fixture["outcome"] == "completed" {
        0
    } else {
        1
    };
    assert_eq!(
        output.status.code(),
        Some(expected_status),
        "{name}: {output:?}"
    );
    let mut actual = lines(&output.stdout);
    let expected = fixture["expected"].as_array().unwrap();
    for (a, e) in actual.iter_mut().zip(expected) {
        if let (Some(a), Some(e)) = (a.get_mut("response"), e.get("response")) {
            if e["created_at"] == 0 {
                a["created_at"] = json!(0);
            }
        }
    }
    assert_eq!(&actual, expected, "{name}");
    let received = server.received();
    assert_eq!(received.len(), 1, "{name}");
    let body: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(&body, request, "{name}: the request body");
}

#[test]
fn text_stream() {
    replay_relay_fixture("001_text", &[]);
}

#[test]
fn function_call_stream() {
    replay_relay_fixture("002_function_call", &[]);
}

#[test]
fn parallel_calls() {
    replay_relay_fixture("003_parallel_calls", &[]);
}

#[test]
fn v0_spec_example_upstream() {
    replay_relay_fixture("005_v0_spec_example", &[]);
}

#[test]
fn upstream_error_event() {
    replay_relay_fixture("007_error_event", &[]);
}

#[test]
fn upstream_response_failed() {
    replay_relay_fixture("009_response_failed", &[]);
}

#[test]
fn upstream_response_incomplete() {
    replay_relay_fixture("010_response_incomplete", &[]);
}

#[test]
fn cut_stream() {
    replay_relay_fixture("011_truncated", &[]);
    replay_relay_fixture("012_truncated_inside_event", &[]);
}

#[test]
fn unknown_events_and_crlf_framing() {
    replay_relay_fixture("015_unknown_events_pass_through", &[]);
    replay_relay_fixture("024_crlf_framing", &[]);
}

#[test]
fn oversized_event() {
    replay_relay_fixture("017_event_too_large", &["--max-event-bytes", "2500"]);
}

#[test]
fn a_large_event_under_the_default_limit_passes() {
    // godex died on SSE lines over 1 MiB; the default limit is 32 MiB.
    let text = "y".repeat(3 << 20);
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        json!({"type": "response.output_text.delta", "delta": text}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "usage": {"input_tokens": 1, "output_tokens": 2}}}),
    );
    let mut server = Server::start(vec![Reply::sse(body)]);
    let output = exec(&server).args(["--prompt", "long"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(output.stdout.len(), text.len() + 1);
    server.received();
}

#[test]
fn the_request_carries_the_key_headers_and_body() {
    let fixture = fixture("relay/001_text.json");
    let mut server = Server::start(vec![Reply::sse(fixture["sse"].as_str().unwrap())]);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("request.json");
    let output = exec(&server)
        .env("OPENAI_ORG_ID", "org-1")
        .args(["--prompt", "hi", "--session-id", "s-9", "--log-requests"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Hi there!\n");
    let received = server.received();
    let request = &received[0];
    assert_eq!(request.request_line, "POST /v1/responses HTTP/1.1");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("openai-organization"), Some("org-1"));
    assert!(request
        .header("user-agent")
        .unwrap()
        .starts_with("agentwire/"));
    let sent: Value = serde_json::from_slice(&request.body).unwrap();
    let logged: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(sent, logged);
    assert_eq!(sent["prompt_cache_key"], "s-9");
    assert_eq!(sent["stream"], true);
}

#[test]
fn the_base_url_comes_from_the_environment_too() {
    let fixture = fixture("relay/001_text.json");
    let mut server = Server::start(vec![Reply::sse(fixture["sse"].as_str().unwrap())]);
    let mut command = Command::cargo_bin("agentwire").unwrap();
    let output = command
        .env("OPENAI_API_KEY", "k")
        .env("OPENAI_BASE_URL", format!("{}/", server.base_url))
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .args(["exec", "--prompt", "hi"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        server.received()[0].request_line,
        "POST /v1/responses HTTP/1.1"
    );
}

#[test]
fn a_429_then_success_is_retried() {
    let fixture = fixture("relay/001_text.json");
    let limited = Reply::json(
        429,
        &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded", "param": null}}),
    )
    .header("Retry-After", "0");
    let mut server = Server::start(vec![limited, Reply::sse(fixture["sse"].as_str().unwrap())]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    assert!(!types(&events).contains(&"error"));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("HTTP 429: Rate limit reached; retrying in 0.0s (attempt 2 of 3)"),
        "{stderr}"
    );
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body);
}

#[test]
fn server_errors_are_retried_then_reported() {
    let error = json!({"error": {"message": "The server had an error.", "type": "server_error", "param": null, "code": null}});
    let mut server = Server::start(vec![Reply::json(500, &error); 3]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(
        types(&events),
        ["response.created", "error", "response.failed"]
    );
    assert_eq!(events[1]["code"], "server_error");
    assert_eq!(events[1]["http_status"], 500);
    assert_eq!(events[1]["message"], "HTTP 500: The server had an error.");
    assert_eq!(
        events[1]["error"], error["error"],
        "the provider's error object, whole"
    );
    assert_eq!(events[2]["response"]["status"], "failed");
    assert_eq!(events[2]["response"]["error"]["code"], "server_error");
    assert_eq!(events[2]["response"]["error"]["type"], "server_error");
    assert_eq!(events[2]["response"]["model"], "gpt-5.2-codex");
    assert_eq!(server.received().len(), 3, "two retries, then give up");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.matches("retrying").count(), 2, "{stderr}");
    assert!(
        stderr.ends_with("agentwire: the response failed: HTTP 500: The server had an error.\n"),
        "{stderr}"
    );
}

#[test]
fn client_errors_are_not_retried() {
    let error = json!({"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
    let mut server = Server::start(vec![Reply::json(401, &error)]);
    let output = run(&server, &["--prompt", "hi", "--json", "--max-retries", "5"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert_eq!(events[1]["code"], "invalid_api_key");
    assert_eq!(events[1]["http_status"], 401);
    assert_eq!(server.received().len(), 1);
    // An exhausted quota is a 429 that waiting does not fix.
    let quota = json!({"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}});
    let mut server = Server::start(vec![Reply::json(429, &quota)]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(lines(&output.stdout)[1]["code"], "insufficient_quota");
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_stream_broken_mid_chunk_is_a_transport_failure() {
    let fixture = fixture("relay/011_truncated.json");
    let mut reply = Reply::sse(fixture["sse"].as_str().unwrap());
    reply.end = End::ChunkedCut;
    let mut server = Server::start(vec![reply]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(
        types(&events),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "error",
            "response.failed"
        ]
    );
    assert_eq!(events[5]["code"], "transport_error", "{}", events[5]);
    server.received();
}

#[test]
fn json_instead_of_an_event_stream_is_reported() {
    let mut server = Server::start(vec![Reply::json(
        200,
        &json!({"id": "resp_1", "object": "response"}),
    )]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert_eq!(events[1]["code"], "unexpected_content_type");
    server.received();
}

#[test]
fn an_unreachable_provider_is_a_transport_failure() {
    // Bind then drop: nothing listens on the port any more.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = Command::cargo_bin("agentwire")
        .unwrap()
        .env("OPENAI_API_KEY", "k")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .args([
            "exec",
            "--prompt",
            "hi",
            "--json",
            "--retry-backoff-ms",
            "1",
            "--base-url",
        ])
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert_eq!(
        types(&events),
        ["response.created", "error", "response.failed"]
    );
    assert_eq!(events[1]["code"], "transport_error");
    assert_eq!(events[2]["response"]["error"]["code"], "transport_error");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.matches("retrying").count(), 2, "{stderr}");
}

#[test]
fn text_mode_reports_failures_on_standard_error() {
    let fixture = fixture("relay/007_error_event.json");
    let mut server = Server::start(vec![Reply::sse(fixture["sse"].as_str().unwrap())]);
    let output = exec(&server).args(["--prompt", "hi"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Hel\n");
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "agentwire: the response failed: The server had an error while processing your request.\n"
    );
    server.received();
}

#[test]
fn trace_copies_the_raw_upstream_events_to_standard_error() {
    let fixture = fixture("relay/001_text.json");
    let sse = fixture["sse"].as_str().unwrap();
    let mut server = Server::start(vec![Reply::sse(sse)]);
    let output = run(&server, &["--prompt", "hi", "--json", "--trace"]);
    assert!(output.status.success());
    let raw: Vec<&str> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().collect::<Vec<_>>(), raw);
    // stdout is only the emitted events.
    assert_eq!(lines(&output.stdout).len(), raw.len());
    server.received();
}

#[test]
fn a_stalled_stream_times_out() {
    let fixture = fixture("relay/011_truncated.json");
    let mut reply = Reply::sse(fixture["sse"].as_str().unwrap());
    reply.end = End::Stall(Duration::from_secs(3));
    let mut server = Server::start(vec![reply]);
    let started = std::time::Instant::now();
    let output = run(&server, &["--prompt", "hi", "--json", "--timeout", "1"]);
    assert!(started.elapsed() < Duration::from_millis(2900));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(
        types(&events)[4..],
        ["response.output_text.delta", "error", "response.failed"]
    );
    assert_eq!(events[5]["code"], "timeout", "{}", events[5]);
    server.received();
}
