//! `agentwire exec --api chat` against a loopback stand-in that speaks Chat Completions the way
//! common compatible servers do (llama.cpp's llama-server, vLLM, Ollama's OpenAI endpoint):
//! `data:` chunks with `choices[].delta`, tool-call deltas by index, a final usage chunk when
//! `stream_options.include_usage` is set, `[DONE]`. The command must print the same
//! Responses-API JSONL it prints for a Responses upstream.

mod exec_support;

use exec_support::{assemble, exec, lines, run, types, write_json, Received, Reply, Server};
use serde_json::{json, Value};

/// A chunk as the servers send it: id, object, created, model, and one choice.
fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let mut chunk = json!({
        "id": "chatcmpl-42", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": "qwen3-8b", "system_fingerprint": "b5000",
        "choices": [{"index": 0, "logprobs": null, "finish_reason": finish_reason}]
    });
    chunk["choices"][0]["delta"] = delta;
    chunk.to_string()
}

/// The usage chunk `stream_options.include_usage` asks for: no choices.
fn usage_chunk(prompt: u64, completion: u64) -> String {
    json!({
        "id": "chatcmpl-42", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": "qwen3-8b", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": 2},
                  "completion_tokens_details": {"reasoning_tokens": 3}}
    })
    .to_string()
}

/// What every compatible server requires of a streaming request.
fn check_request(request: &Received) -> Value {
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    let body = request.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert!(body["messages"].is_array());
    body
}

fn weather_tool(dir: &std::path::Path) -> String {
    let path = write_json(
        dir,
        "weather.json",
        &json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    );
    format!("get_weather:json={path}:description=Current weather")
}

#[test]
fn text_streams_as_responses_events() {
    // llama.cpp: a first chunk with the role and null content, then content, then finish,
    // then the usage chunk and [DONE].
    let mut server = Server::with(1, |request| {
        let body = check_request(request);
        assert_eq!(
            body["messages"],
            json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
        );
        assert!(
            body.get("tools").is_none(),
            "no tools, no tool_choice: {body}"
        );
        assert!(body.get("tool_choice").is_none());
        Reply::events(&[
            chunk(json!({"role": "assistant", "content": null}), None),
            chunk(json!({"content": "Hel"}), None),
            chunk(json!({"content": "lo!"}), None),
            chunk(json!({}), Some("stop")),
            usage_chunk(9, 2),
            "[DONE]".to_owned(),
        ])
    });
    let output = exec(&server)
        .args([
            "--api",
            "chat",
            "--model",
            "qwen3-8b",
            "--instructions",
            "Be brief.",
        ])
        .args(["--prompt", "hi", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(
        types(&events),
        [
            "response.created",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[0]["response"]["id"], "chatcmpl-42");
    assert_eq!(events[0]["response"]["created_at"], 1_700_000_000);
    assert_eq!(events[0]["response"]["model"], "qwen3-8b");
    let usage = &events[8]["response"]["usage"];
    assert_eq!(
        (
            &usage["input_tokens"],
            &usage["output_tokens"],
            &usage["total_tokens"]
        ),
        (&json!(9), &json!(2), &json!(11))
    );
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 2);
    assert_eq!(usage["output_tokens_details"]["reasoning_tokens"], 3);
    let transcript = assemble(&output.stdout);
    assert_eq!(transcript.text(), "Hello!");
    assert!(transcript.is_completed());
    server.received();
}

#[test]
fn parallel_tool_call_deltas_by_index() {
    // vLLM and OpenAI: each call named in its first delta, arguments streamed, calls interleaved
    // by index.
    let dir = tempfile::tempdir().unwrap();
    let tool = weather_tool(dir.path());
    let mut server = Server::with(1, |request| {
        let body = check_request(request);
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])
        );
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "get_weather"}})
        );
        assert_eq!(body["parallel_tool_calls"], true);
        assert_eq!(body["max_tokens"], 256);
        let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
            let mut c = json!({"index": index, "function": {"arguments": args}});
            if let Some(id) = id {
                c["id"] = json!(id);
                c["type"] = json!("function");
            }
            if let Some(name) = name {
                c["function"]["name"] = json!(name);
            }
            chunk(json!({"tool_calls": [c]}), None)
        };
        Reply::events(&[
            chunk(json!({"role": "assistant", "content": ""}), None),
            call(0, Some("call_a"), Some("get_weather"), ""),
            call(1, Some("call_b"), Some("get_weather"), ""),
            call(0, None, None, "{\"city\":"),
            call(1, None, None, "{\"city\":\"Lyon\"}"),
            call(0, None, None, "\"Paris\"}"),
            chunk(json!({}), Some("tool_calls")),
            usage_chunk(20, 30),
            "[DONE]".to_owned(),
        ])
    });
    let output = exec(&server)
        .args([
            "--api",
            "chat",
            "--tool",
            &tool,
            "--tool-choice",
            "function:get_weather",
        ])
        .args([
            "--max-output-tokens",
            "256",
            "--prompt",
            "weather?",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let transcript = assemble(&output.stdout);
    let calls: Vec<(&str, &str, &str)> = transcript
        .tool_calls
        .iter()
        .map(|c| (c.call_id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "get_weather", r#"{"city":"Paris"}"#),
            ("call_b", "get_weather", r#"{"city":"Lyon"}"#)
        ]
    );
    // The argument deltas went out as they came, interleaved.
    let events = lines(&output.stdout);
    let deltas: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "response.function_call_arguments.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, ["{\"city\":", "{\"city\":\"Lyon\"}", "\"Paris\"}"]);
    assert_eq!(transcript.usage.unwrap().output_tokens, 30);
    server.received();
}

#[test]
fn whole_tool_calls_and_reasoning_as_ollama_sends_them() {
    // Ollama: `reasoning` deltas, a whole tool call in one chunk (id, name and arguments), and
    // `finish_reason: "stop"`.
    let dir = tempfile::tempdir().unwrap();
    let tool = weather_tool(dir.path());
    let mut server = Server::with(1, |request| {
        let body = check_request(request);
        assert_eq!(body["reasoning_effort"], "low");
        Reply::events(&[
            chunk(
                json!({"role": "assistant", "content": "", "reasoning": "The user wants "}),
                None,
            ),
            chunk(
                json!({"role": "assistant", "content": "", "reasoning": "the weather."}),
                None,
            ),
            chunk(
                json!({"role": "assistant", "content": "",
                         "tool_calls": [{"id": "call_x1", "index": 0, "type": "function",
                                         "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
                None,
            ),
            chunk(json!({"role": "assistant", "content": ""}), Some("stop")),
            usage_chunk(5, 7),
            "[DONE]".to_owned(),
        ])
    });
    let output = exec(&server)
        .args([
            "--api",
            "chat",
            "--tool",
            &tool,
            "--reasoning-effort",
            "low",
        ])
        .args(["--prompt", "weather in Paris?", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let events = lines(&output.stdout);
    // The reasoning streams as the Responses API streams raw reasoning.
    let reasoning: String = events
        .iter()
        .filter(|e| e["type"] == "response.reasoning_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(reasoning, "The user wants the weather.");
    assert!(events
        .iter()
        .filter(|e| e["type"] == "response.reasoning_text.delta")
        .all(|e| e["output_index"] == 0 && e["item_id"].is_string()));
    let transcript = assemble(&output.stdout);
    assert_eq!(transcript.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
    let reasoning_item = transcript
        .items
        .iter()
        .find(|i| i.item_type() == "reasoning")
        .unwrap();
    assert_eq!(
        serde_json::to_value(reasoning_item).unwrap()["content"][0]["text"],
        "The user wants the weather."
    );
    server.received();
}

#[test]
fn a_two_turn_tool_loop_over_chat_completions() {
    // The orchestrator passes back what the first turn gave: the call, then its output; the
    // second request carries them as an assistant message with tool_calls and a tool message.
    let dir = tempfile::tempdir().unwrap();
    let tool = weather_tool(dir.path());
    let mut server = Server::with(2, |request| {
        let body = check_request(request);
        let messages = body["messages"].as_array().unwrap();
        if messages.len() == 1 {
            Reply::events(&[
                chunk(
                    json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
                    None,
                ),
                chunk(json!({}), Some("tool_calls")),
                "[DONE]".to_owned(),
            ])
        } else {
            assert_eq!(
                messages[1..],
                [
                    json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                           "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
                    json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"})
                ]
            );
            Reply::events(&[
                chunk(
                    json!({"role": "assistant", "content": "Sunny in Paris."}),
                    Some("stop"),
                ),
                "[DONE]".to_owned(),
            ])
        }
    });
    let mut history = vec![json!({"role": "user", "content": "weather in Paris?"})];
    let mut answer = String::new();
    for _ in 0..2 {
        let input = write_json(dir.path(), "history.json", &Value::Array(history.clone()));
        let output = run(
            &server,
            &[
                "--api",
                "chat",
                "--tool",
                &tool,
                "--input-json",
                &input,
                "--json",
            ],
        );
        assert!(output.status.success(), "{output:?}");
        let transcript = assemble(&output.stdout);
        if transcript.tool_calls.is_empty() {
            answer = transcript.text();
            break;
        }
        for item in &transcript.items {
            history.push(serde_json::to_value(item).unwrap());
        }
        for call in &transcript.tool_calls {
            history.push(json!({"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21 C"}));
        }
    }
    assert_eq!(answer, "Sunny in Paris.");
    assert_eq!(server.received().len(), 2);
}

#[test]
fn length_errors_and_cut_streams() {
    // finish_reason length: response.incomplete (max_output_tokens), exit 1.
    let mut server = Server::start(vec![Reply::events(&[
        chunk(json!({"role": "assistant", "content": "Once upon"}), None),
        chunk(json!({}), Some("length")),
        "[DONE]".to_owned(),
    ])]);
    let output = run(&server, &["--api", "chat", "--prompt", "story", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    server.received();

    // A mid-stream error chunk (vLLM, llama.cpp): error, response.failed.
    let mut server = Server::start(vec![Reply::events(&[
        chunk(json!({"role": "assistant", "content": "Hi"}), None),
        json!({"error": {"object": "error", "message": "CUDA out of memory", "type": "InternalServerError", "param": null, "code": 500}}).to_string(),
    ])]);
    let output = run(&server, &["--api", "chat", "--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["message"], "CUDA out of memory");
    assert_eq!(error["code"], "InternalServerError");
    assert_eq!(error["error"]["code"], 500);
    assert_eq!(events.last().unwrap()["type"], "response.failed");
    assemble(&output.stdout);
    server.received();

    // A body that ends before any finish_reason was cut.
    let mut server = Server::start(vec![Reply::events(&[chunk(
        json!({"role": "assistant", "content": "Hi"}),
        None,
    )])]);
    let output = run(&server, &["--api", "chat", "--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert_eq!(events[events.len() - 2]["code"], "stream_truncated");
    server.received();

    // One that ends after its finish_reason without [DONE] is complete.
    let mut server = Server::start(vec![Reply::events(&[chunk(
        json!({"role": "assistant", "content": "Hi"}),
        Some("stop"),
    )])]);
    let output = run(&server, &["--api", "chat", "--prompt", "hi", "--json"]);
    assert!(output.status.success(), "{output:?}");
    server.received();
}

#[test]
fn llama_cpp_http_errors_are_reported() {
    // llama.cpp's error body has a number as code: the type speaks.
    let mut server = Server::start(vec![Reply::json(
        400,
        &json!({"error": {"code": 400, "message": "the request exceeds the available context size", "type": "exceed_context_size_error"}}),
    )]);
    let output = run(&server, &["--api", "chat", "--prompt", "hi", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert_eq!(events[1]["code"], "exceed_context_size_error");
    assert_eq!(events[1]["http_status"], 400);
    assert_eq!(
        events[2]["response"]["error"]["code"],
        "exceed_context_size_error"
    );
    server.received();
}

#[test]
fn what_chat_completions_cannot_take_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file_input = write_json(
        dir.path(),
        "input.json",
        &json!([{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]),
    );
    for args in [
        &["--prompt", "hi", "--web-search"][..],
        &["--prompt", "hi", "--store"],
        &["--prompt", "hi", "--previous-response-id", "resp_1"],
        &["--input-json", &file_input],
    ] {
        let output = exec_support::exec_at("http://127.0.0.1:9/v1")
            .args(["--api", "chat"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("unsupported_for_chat"),
            "{args:?}: {output:?}"
        );
    }
    // Reasoning items have no Chat Completions form: left out, with a note.
    let input = write_json(
        dir.path(),
        "reasoning.json",
        &json!([{"role": "user", "content": "hi"},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
                {"role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
                {"role": "user", "content": "bye"}]),
    );
    let mut server = Server::with(1, |request| {
        let body = check_request(request);
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "bye"}])
        );
        Reply::events(&[
            chunk(json!({"content": "Bye"}), Some("stop")),
            "[DONE]".to_owned(),
        ])
    });
    let output = run(&server, &["--api", "chat", "--input-json", &input]);
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("1 reasoning item(s) of the input left out"));
    server.received();
}
