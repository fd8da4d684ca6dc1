//! Reasoning across turns: `agentwire exec` against a loopback stand-in that treats reasoning
//! items as the Responses API does. Stateless (`store: false`): a turn asks for
//! `reasoning.encrypted_content`, and the next turn must pass the reasoning items back whole, or
//! the API answers `Item with id 'rs_…' not found`. Stateful: `--store`, then
//! `--previous-response-id` with only the new items.

mod exec_support;

use exec_support::{assemble, exec, lines, write_json, Received, Reply, Server};
use serde_json::{json, Value};

fn event(value: &Value) -> String {
    value.to_string()
}

/// The events of a reasoning item with a streamed summary, as the API sends them.
fn reasoning_events(id: &str, index: u64, summary: &str, encrypted: Option<&str>) -> Vec<String> {
    let (a, b) = summary.split_at(summary.len() / 2);
    let mut done = json!({"type": "reasoning", "id": id, "summary": [{"type": "summary_text", "text": summary}]});
    if let Some(encrypted) = encrypted {
        done["encrypted_content"] = json!(encrypted);
    }
    vec![
        event(
            &json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
        ),
        event(
            &json!({"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        ),
        event(
            &json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index, "summary_index": 0, "delta": a}),
        ),
        event(
            &json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index, "summary_index": 0, "delta": b}),
        ),
        event(
            &json!({"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": index, "summary_index": 0, "text": summary}),
        ),
        event(
            &json!({"type": "response.reasoning_summary_part.done", "item_id": id, "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": summary}}),
        ),
        event(&json!({"type": "response.output_item.done", "output_index": index, "item": done})),
    ]
}

fn not_found(id: &str) -> Reply {
    Reply::json(
        400,
        &json!({"error": {
            "message": format!("Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."),
            "type": "invalid_request_error", "param": "input", "code": null}}),
    )
}

/// The stand-in: turn 1 reasons and calls get_weather; turn 2 needs the reasoning item back
/// (whole, when stateless) and answers.
fn stand_in(request: &Received) -> Reply {
    let body = request.json();
    let stateless = body["store"] == false;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    if stateless {
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    } else {
        assert!(body.get("include").is_none());
    }
    let input = body["input"].as_array().unwrap();
    let answered = input
        .iter()
        .any(|item| item["type"] == "function_call_output");
    let response_id = if answered { "resp_2" } else { "resp_1" };
    let mut events = vec![event(&json!({"type": "response.created", "response": {
        "id": response_id, "object": "response", "created_at": 1, "status": "in_progress", "model": "o4-mini", "output": []}}))];
    if !answered {
        let encrypted = stateless.then_some("gAAAA-encrypted-1");
        events.extend(reasoning_events(
            "rs_1",
            0,
            "Need the weather first.",
            encrypted,
        ));
        let args = r#"{"city":"Paris"}"#;
        events.push(event(&json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "", "status": "in_progress"}})));
        events.push(event(&json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": args})));
        events.push(event(&json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "arguments": args})));
        events.push(event(&json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": args, "status": "completed"}})));
    } else {
        if stateless {
            // The reasoning of turn 1 must come back with its encrypted content.
            let reasoning = input.iter().find(|item| item["type"] == "reasoning");
            match reasoning {
                Some(item) if item["encrypted_content"] == "gAAAA-encrypted-1" => {}
                Some(item) => return not_found(item["id"].as_str().unwrap_or("?")),
                None => panic!("the reasoning item was not passed back: {body}"),
            }
            assert!(body.get("previous_response_id").is_none());
        } else {
            assert_eq!(body["previous_response_id"], "resp_1");
            assert_eq!(input.len(), 1, "only the new items: {body}");
        }
        events.extend(reasoning_events(
            "rs_2",
            0,
            "The tool answered.",
            stateless.then_some("gAAAA-encrypted-2"),
        ));
        events.push(event(&json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_2", "role": "assistant", "status": "in_progress", "content": []}})));
        events.push(event(&json!({"type": "response.content_part.added", "item_id": "msg_2", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})));
        events.push(event(&json!({"type": "response.output_text.delta", "item_id": "msg_2", "output_index": 1, "content_index": 0, "delta": "Sunny, 21 C."})));
    }
    events.push(event(&json!({"type": "response.completed", "response": {"id": response_id, "status": "completed",
        "usage": {"input_tokens": 50, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}}}})));
    Reply::events(&events)
}

fn tool(dir: &std::path::Path) -> String {
    let path = write_json(
        dir,
        "weather.json",
        &json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    );
    format!("get_weather:json={path}")
}

/// Runs one turn on `history`; returns the exit code, the stdout and the stderr.
fn turn(
    server: &Server,
    dir: &std::path::Path,
    history: &[Value],
    extra: &[&str],
) -> std::process::Output {
    let input = write_json(dir, "history.json", &Value::Array(history.to_vec()));
    exec(server)
        .args([
            "--model",
            "o4-mini",
            "--reasoning-effort",
            "medium",
            "--reasoning-summary",
            "auto",
        ])
        .args(["--tool", &tool(dir), "--input-json", &input, "--json"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn stateless_reasoning_is_passed_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::with(2, stand_in);
    let mut history = vec![json!({"role": "user", "content": "What is the weather in Paris?"})];

    // Turn 1: reasoning, then a call.
    let output = turn(&server, dir.path(), &history, &[]);
    assert!(output.status.success(), "{output:?}");
    let events = lines(&output.stdout);
    // The reasoning summary streams under the Responses API's own event names.
    let summary: String = events
        .iter()
        .filter(|e| e["type"] == "response.reasoning_summary_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(summary, "Need the weather first.");
    for name in [
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
    ] {
        assert!(events.iter().any(|e| e["type"] == name), "{name}");
    }
    let transcript = assemble(&output.stdout);
    let reasoning = serde_json::to_value(&transcript.items[0]).unwrap();
    assert_eq!(reasoning["type"], "reasoning");
    assert_eq!(reasoning["encrypted_content"], "gAAAA-encrypted-1");

    // The orchestrator appends every output item, then the tool's output.
    for item in &transcript.items {
        history.push(serde_json::to_value(item).unwrap());
    }
    let call = &transcript.tool_calls[0];
    history.push(
        json!({"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21 C"}),
    );

    // Turn 2: the answer.
    let output = turn(&server, dir.path(), &history, &[]);
    assert!(output.status.success(), "{output:?}");
    let transcript = assemble(&output.stdout);
    assert_eq!(transcript.text(), "Sunny, 21 C.");
    assert_eq!(transcript.usage.unwrap().output_tokens, 20);
    assert_eq!(server.received().len(), 2);
}

#[test]
fn a_reasoning_item_without_its_encrypted_content_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::with(1, stand_in);
    let history = vec![
        json!({"role": "user", "content": "What is the weather in Paris?"}),
        json!({"type": "reasoning", "id": "rs_1", "summary": []}),
        json!({"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}),
        json!({"type": "function_call_output", "call_id": "call_1", "output": "sunny"}),
    ];
    let output = turn(&server, dir.path(), &history, &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("have no encrypted_content"), "{stderr}");
    let events = lines(&output.stdout);
    assert_eq!(events[1]["http_status"], 400);
    assert_eq!(events[1]["param"], "input");
    assert!(events[1]["message"]
        .as_str()
        .unwrap()
        .contains("Item with id 'rs_1' not found"));
    server.received();
}

#[test]
fn stored_responses_continue_with_previous_response_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::with(2, stand_in);
    let first = vec![json!({"role": "user", "content": "What is the weather in Paris?"})];
    let output = turn(&server, dir.path(), &first, &["--store"]);
    assert!(output.status.success(), "{output:?}");
    let transcript = assemble(&output.stdout);
    assert_eq!(transcript.response_id.as_deref(), Some("resp_1"));
    let call = &transcript.tool_calls[0];
    // Only the new item: the provider holds the rest.
    let next =
        vec![json!({"type": "function_call_output", "call_id": call.call_id, "output": "sunny"})];
    let output = turn(
        &server,
        dir.path(),
        &next,
        &["--store", "--previous-response-id", "resp_1"],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(assemble(&output.stdout).text(), "Sunny, 21 C.");
    let received = server.received();
    assert_eq!(received[0].json()["store"], true);
}

#[test]
fn the_mock_loop_runs_offline_with_reasoning() {
    // The same loop against `--mock --mock-mode tool-loop`, which emulates the API's rule.
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let mut history = vec![json!({"role": "user", "content": "weather?"})];
    let mut turns = 0;
    loop {
        turns += 1;
        let input = write_json(dir.path(), "history.json", &Value::Array(history.clone()));
        let output = assert_cmd::Command::cargo_bin("agentwire")
            .unwrap()
            .env_remove("OPENAI_API_KEY")
            .args(["exec", "--mock", "--mock-mode", "tool-loop", "--json"])
            .args(["--reasoning-effort", "low", "--reasoning-summary", "auto"])
            .args(["--tool", &tool, "--input-json", &input])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let transcript = assemble(&output.stdout);
        for item in &transcript.items {
            history.push(serde_json::to_value(item).unwrap());
        }
        if transcript.tool_calls.is_empty() {
            assert!(transcript
                .text()
                .starts_with("mock tool-loop result: get_weather: "));
            break;
        }
        for call in &transcript.tool_calls {
            history.push(
                json!({"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}),
            );
        }
    }
    assert_eq!(turns, 2);
    // Dropping the encrypted content fails the next turn, as the API would.
    for item in &mut history {
        if item["type"] == "reasoning" {
            item.as_object_mut().unwrap().remove("encrypted_content");
        }
    }
    let input = write_json(dir.path(), "history.json", &Value::Array(history));
    let output = assert_cmd::Command::cargo_bin("agentwire")
        .unwrap()
        .args(["exec", "--mock", "--mock-mode", "tool-loop", "--json"])
        .args([
            "--reasoning-effort",
            "low",
            "--tool",
            &tool,
            "--input-json",
            &input,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert!(
        error["message"].as_str().unwrap().contains("not found"),
        "{error}"
    );
    assert_eq!(error["param"], "input");
}
