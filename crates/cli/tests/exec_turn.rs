//! `agentwire exec` against loopback Responses-API stand-ins, for what an orchestrator needs of
//! one turn: no data lost, streams every consumer accepts, errors that say why, an idle timeout,
//! clean cancellation, redirects, headers and every request parameter.

mod exec_support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use exec_support::{assemble, exec, exec_at, lines, run, types, write_json, End, Reply, Server};
use serde_json::{json, Value};

fn created() -> String {
    json!({"type": "response.created", "sequence_number": 0,
           "response": {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "m", "output": []}})
    .to_string()
}

fn call_added() -> String {
    json!({"type": "response.output_item.added", "output_index": 0,
           "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "", "status": "in_progress"}})
    .to_string()
}

fn completed_with(output: Value) -> String {
    let mut completed = json!({"type": "response.completed",
           "response": {"id": "resp_1", "status": "completed",
                        "usage": {"input_tokens": 3, "output_tokens": 4}}});
    completed["response"]["output"] = output;
    completed.to_string()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_open_call_is_closed_from_the_completed_responses_copy() {
    // The call never gets its done events; its arguments are only in the completed response.
    let args = r#"{"location":"Paris"}"#;
    let mut server = Server::start(vec![Reply::events(&[
        created(),
        call_added(),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{\"loc"}).to_string(),
        completed_with(json!([{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": args, "status": "completed"}])),
    ])]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let events = lines(&output.stdout);
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(done["item"]["arguments"], args);
    let transcript = assemble(&output.stdout);
    assert_eq!(transcript.tool_calls[0].arguments, args);
    // The rest went out as one more delta, and stderr says the deltas were short.
    assert!(
        stderr(&output)
            .contains("agentwire: note: the final arguments of call `fc_1` go on past its deltas"),
        "{}",
        stderr(&output)
    );
    server.received();
}

#[test]
fn the_completed_response_wins_over_contradicting_deltas() {
    let mut server = Server::start(vec![Reply::events(&[
        created(),
        call_added(),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{\"location\":\"Lyon\"}"}).to_string(),
        completed_with(json!([{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}])),
    ])]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let transcript = assemble(&output.stdout);
    assert_eq!(
        transcript.tool_calls[0].arguments,
        r#"{"location":"Paris"}"#
    );
    assert!(
        stderr(&output).contains(
            "the final arguments of call `fc_1` differ from its deltas; the final arguments win"
        ),
        "{}",
        stderr(&output)
    );
    server.received();
}

#[test]
fn a_final_text_that_differs_from_its_deltas_wins() {
    // Issue 23: off by one character, which used to fail the turn (text_mismatch, exit 1).
    let mut server = Server::start(vec![Reply::events(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}).to_string(),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hello, wrld"}).to_string(),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Hello, world"}).to_string(),
        completed_with(json!([{"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Hello, world", "annotations": []}]}])),
    ])]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = lines(&output.stdout);
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_text.done")
        .unwrap();
    assert_eq!(done["text"], "Hello, world");
    assert_eq!(assemble(&output.stdout).text(), "Hello, world");
    assert!(
        stderr(&output).contains(
            "the final text of item `msg_1` differs from its deltas; the final text wins"
        ),
        "{}",
        stderr(&output)
    );
    server.received();
}

#[test]
fn an_item_that_changes_kind_is_an_error_event() {
    for second in [
        // output_item.done of another kind under the call's id
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "fc_1", "role": "assistant", "content": []}}),
        // a second item announced with the call's id (issue 22's exec_read finding)
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "reasoning", "id": "fc_1", "summary": []}}),
        // the completed response lists the id as another kind
        json!({"type": "response.completed", "response": {"output": [{"type": "message", "id": "fc_1", "role": "assistant", "content": []}]}}),
    ] {
        let mut server = Server::start(vec![Reply::events(&[
            created(),
            call_added(),
            second.to_string(),
            completed_with(json!([])),
        ])]);
        let output = run(&server, &["--prompt", "hi", "--json"]);
        assert_eq!(output.status.code(), Some(1), "{second}: {output:?}");
        let events = lines(&output.stdout);
        let error = events.iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["code"], "item_kind_mismatch", "{second}");
        assert_eq!(events.last().unwrap()["type"], "response.failed");
        assert_eq!(
            events.last().unwrap()["response"]["error"]["code"],
            "item_kind_mismatch"
        );
        // Never passed through: what was printed still folds.
        assemble(&output.stdout);
        server.received();
    }
}

#[test]
fn a_stream_without_response_created_gets_one() {
    // v0 and compatible servers start with deltas.
    let mut server = Server::start(vec![Reply::events(&[
        json!({"type": "response.output_text.delta", "delta": "Hi"}).to_string(),
        json!({"type": "response.completed", "response": {"usage": {"input_tokens": 1, "output_tokens": 1}}}).to_string(),
    ])]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(
        types(&events),
        [
            "response.created",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[0]["response"]["id"], events[7]["response"]["id"]);
    server.received();
}

#[test]
fn error_events_keep_param_and_type() {
    let mut server = Server::start(vec![Reply::events(&[
        created(),
        json!({"type": "error", "sequence_number": 1,
               "error": {"type": "invalid_request_error", "code": "invalid_value", "message": "Invalid value for 'input'.", "param": "input"}})
        .to_string(),
    ])]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    let error = &events[1];
    assert_eq!(
        (&error["code"], &error["param"], &error["message"]),
        (
            &json!("invalid_value"),
            &json!("input"),
            &json!("Invalid value for 'input'.")
        )
    );
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let failed = &events[2]["response"]["error"];
    assert_eq!(
        (&failed["code"], &failed["param"], &failed["type"]),
        (
            &json!("invalid_value"),
            &json!("input"),
            &json!("invalid_request_error")
        )
    );
    server.received();
}

#[test]
fn http_errors_keep_their_real_codes() {
    // 400, 401 and 404 used to all report server_error in response.failed.
    for (status, error) in [
        (
            400,
            json!({"message": "Invalid type for 'max_output_tokens'.", "type": "invalid_request_error", "param": "max_output_tokens", "code": "invalid_type"}),
        ),
        (
            401,
            json!({"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}),
        ),
        (
            404,
            json!({"message": "The model `gpt-9` does not exist.", "type": "invalid_request_error", "param": "model", "code": "model_not_found"}),
        ),
    ] {
        let mut server = Server::start(vec![Reply::json(status, &json!({"error": error}))]);
        let output = run(&server, &["--prompt", "hi", "--json"]);
        assert_eq!(output.status.code(), Some(1));
        let events = lines(&output.stdout);
        assert_eq!(
            types(&events),
            ["response.created", "error", "response.failed"]
        );
        assert_eq!(events[1]["http_status"], status);
        assert_eq!(events[1]["code"], error["code"]);
        assert_eq!(
            events[1]["error"], error,
            "the provider's error object, whole"
        );
        let failed = &events[2]["response"]["error"];
        assert_eq!(failed["code"], error["code"], "{status}");
        assert_eq!(failed["type"], "invalid_request_error");
        assert_eq!(
            failed.get("param"),
            error.get("param").filter(|p| !p.is_null())
        );
        server.received();
    }
}

#[test]
fn a_stalled_stream_ends_at_the_idle_timeout() {
    let reply = Reply::events(&[
        created(),
        json!({"type": "response.output_text.delta", "delta": "Hel"}).to_string(),
    ])
    .end(End::Stall(Duration::from_secs(20)));
    let server = Server::start(vec![reply]);
    let started = Instant::now();
    let output = run(
        &server,
        &["--prompt", "hi", "--json", "--idle-timeout", "1"],
    );
    // Generous: one idle second, far from the twenty the server would stall.
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let events = lines(&output.stdout);
    let n = events.len();
    assert_eq!(types(&events)[n - 2..], ["error", "response.failed"]);
    assert_eq!(events[n - 2]["code"], "idle_timeout");
    assert_eq!(events[n - 1]["response"]["error"]["code"], "idle_timeout");
    assert!(
        stderr(&output).contains("sent nothing for 1s"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_slow_steady_stream_is_not_idle() {
    // Bytes keep coming, each well within the idle timeout, for longer than it.
    let reply = Reply::events(&[
        created(),
        json!({"type": "response.output_text.delta", "delta": "slow"}).to_string(),
        json!({"type": "response.completed", "response": {}}).to_string(),
    ])
    .trickle(60, Duration::from_millis(250));
    let mut server = Server::start(vec![reply]);
    let output = run(
        &server,
        &["--prompt", "hi", "--json", "--idle-timeout", "2"],
    );
    assert!(output.status.success(), "{output:?}");
    server.received();
}

#[test]
fn waits_between_retries_are_not_idle() {
    let limited = Reply::json(
        429,
        &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded", "param": null}}),
    )
    .header("Retry-After", "2");
    let mut server = Server::start(vec![
        limited,
        Reply::events(&[created(), completed_with(json!([]))]),
    ]);
    let output = run(
        &server,
        &["--prompt", "hi", "--json", "--idle-timeout", "1"],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(server.received().len(), 2);
}

/// Runs a turn whose stream stalls after a delta, sends `signal` once the delta is out, and
/// returns the exit code and the lines.
fn cancel_with(signal: &str) -> (Option<i32>, Vec<Value>) {
    let reply = Reply::events(&[
        created(),
        json!({"type": "response.output_text.delta", "delta": "Hel"}).to_string(),
    ])
    .end(End::Stall(Duration::from_secs(20)));
    let server = Server::start(vec![reply]);
    let mut command = exec_support::std_exec_at(&server.base_url);
    let mut child = command
        .args(["--prompt", "hi", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the stream ended early"
        );
        let event: Value = serde_json::from_str(&line).unwrap();
        let delta = event["type"] == "response.output_text.delta";
        printed.push(event);
        if delta {
            break;
        }
    }
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let code = child.wait().unwrap().code();
    printed.extend(lines(rest.as_bytes()));
    (code, printed)
}

#[test]
fn sigterm_and_sigint_mid_stream_end_with_a_terminal_event() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let (exit, events) = cancel_with(signal);
        assert_eq!(exit, Some(code), "SIG{signal}: {events:?}");
        let n = events.len();
        assert_eq!(
            types(&events)[n - 2..],
            ["error", "response.failed"],
            "SIG{signal}"
        );
        assert_eq!(events[n - 2]["code"], "cancelled");
        assert_eq!(events[n - 1]["response"]["error"]["code"], "cancelled");
        let jsonl: String = events.iter().map(|e| format!("{e}\n")).collect();
        assemble(jsonl.as_bytes());
    }
}

#[test]
fn redirects_307_and_308_are_followed() {
    let mut other = Server::start(vec![Reply::events(&[created(), completed_with(json!([]))])]);
    let other_origin = other.base_url.trim_end_matches("/v1").to_owned();
    let mut server = Server::start(vec![
        Reply::json(307, &json!({})).header("Location", "/v2/responses"),
        Reply::json(308, &json!({})).header("Location", &format!("{other_origin}/v3/responses")),
    ]);
    // The first hop stays on the origin and keeps the key; the second leaves it.
    let output = run(
        &server,
        &["--prompt", "hi", "--json", "--header", "X-Trace:abc"],
    );
    assert!(output.status.success(), "{output:?}");
    let first = server.received();
    assert_eq!(first[0].request_line, "POST /v1/responses HTTP/1.1");
    assert_eq!(first[1].request_line, "POST /v2/responses HTTP/1.1");
    assert_eq!(first[1].header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(first[1].header("x-trace"), Some("abc"));
    assert_eq!(first[1].body, first[0].body, "the body is sent again");
    let second = other.received();
    assert_eq!(second[0].request_line, "POST /v3/responses HTTP/1.1");
    assert_eq!(second[0].body, first[0].body);
    assert_eq!(
        second[0].header("authorization"),
        None,
        "no key for another origin"
    );
    assert_eq!(second[0].header("x-trace"), None);

    // 301/302/303 would turn the POST into a GET: reported, not followed.
    let mut server = Server::start(vec![
        Reply::json(302, &json!({})).header("Location", "/elsewhere")
    ]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert!(
        events[1]["message"]
            .as_str()
            .unwrap()
            .contains("302 redirect to `/elsewhere` is not followed"),
        "{}",
        events[1]
    );
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_followed_redirect_streams_the_turn() {
    let mut server = Server::start(vec![
        Reply::json(308, &json!({})).header("Location", "/v1/moved/responses"),
        Reply::events(&[created(), completed_with(json!([]))]),
    ]);
    let output = run(&server, &["--prompt", "hi", "--json"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        server.received()[1].request_line,
        "POST /v1/moved/responses HTTP/1.1"
    );
}

#[test]
fn headers_are_sent_and_replace_built_in_ones() {
    let mut server = Server::start(vec![Reply::events(&[created(), completed_with(json!([]))])]);
    let output = exec(&server)
        .args(["--prompt", "hi"])
        .args(["--header", "X-Title: agentwire tests"])
        .args(["--header", "Authorization:Bearer other-key"])
        .args(["--header", "api-key: azure-style"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let request = &server.received()[0];
    assert_eq!(request.header("x-title"), Some("agentwire tests"));
    assert_eq!(request.header("authorization"), Some("Bearer other-key"));
    assert_eq!(request.header("api-key"), Some("azure-style"));
    let authorizations = request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        .count();
    assert_eq!(authorizations, 1);
    // Bad headers are usage errors.
    for bad in ["no-colon", "bad name:x", ":x"] {
        let output = exec_at("http://127.0.0.1:9/v1")
            .args(["--prompt", "hi", "--header", bad])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{bad}");
    }
}

#[test]
fn a_server_of_ones_own_needs_no_key() {
    let mut server = Server::start(vec![Reply::events(&[created(), completed_with(json!([]))])]);
    let output = exec(&server)
        .env_remove("OPENAI_API_KEY")
        .args(["--prompt", "hi"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(server.received()[0].header("authorization"), None);
}

#[test]
fn every_request_parameter_reaches_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let schema =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let weather = write_json(dir.path(), "weather.json", &schema);
    let wrapped = write_json(
        dir.path(),
        "search.json",
        &json!({"type": "function", "description": "Search the web", "parameters": {"type": "object"}}),
    );
    let answer = write_json(
        dir.path(),
        "city answer.json",
        &json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    );
    let mut server = Server::start(vec![Reply::events(&[created(), completed_with(json!([]))])]);
    let output = exec(&server)
        .args(["--prompt", "hi"])
        .args([
            "--tool",
            &format!("get_weather:json={weather}:description=Current weather: by city"),
        ])
        .args(["--tool", &format!("search:json={wrapped}")])
        .args(["--max-output-tokens", "2048"])
        .args(["--text-format", &format!("json_schema={answer}")])
        .args(["--reasoning-effort", "high", "--reasoning-summary", "auto"])
        .args(["--include", "message.output_text.logprobs"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let body = server.received()[0].json();
    assert_eq!(body["tools"][0]["description"], "Current weather: by city");
    assert_eq!(body["tools"][0]["parameters"], schema);
    assert_eq!(body["tools"][1]["description"], "Search the web");
    assert_eq!(body["tools"][1]["parameters"], json!({"type": "object"}));
    assert_eq!(body["max_output_tokens"], 2048);
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "city_answer",
                          "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                          "strict": false}})
    );
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(
        body["include"],
        json!([
            "reasoning.encrypted_content",
            "message.output_text.logprobs"
        ])
    );
    assert_eq!(body["store"], false);
    assert!(body.get("previous_response_id").is_none());

    // Server-side state: --store and --previous-response-id; the new input may answer the
    // stored response's calls.
    let input = write_json(
        dir.path(),
        "input.json",
        &json!([{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]),
    );
    let mut server = Server::start(vec![Reply::events(&[created(), completed_with(json!([]))])]);
    let output = run(
        &server,
        &[
            "--input-json",
            &input,
            "--store",
            "--previous-response-id",
            "resp_1",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let body = server.received()[0].json();
    assert_eq!(body["store"], true);
    assert_eq!(body["previous_response_id"], "resp_1");
    assert!(
        body.get("include").is_none(),
        "stored responses keep their reasoning"
    );

    // Bad values are usage errors.
    for args in [
        &["--reasoning-effort", "extreme"][..],
        &["--reasoning-summary", "long"],
        &["--text-format", "yaml"],
        &["--text-format", "json_schema=/nonexistent.json"],
        &["--max-output-tokens", "-1"],
    ] {
        let output = exec_at("http://127.0.0.1:9/v1")
            .args(["--prompt", "hi"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
    }
}
