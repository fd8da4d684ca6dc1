//! An orchestrator's tool loop, offline: `agentwire exec --mock --mock-mode tool-loop`, driven
//! turn by turn the way the protocol recommends (run, read the JSONL, run the tools, call again
//! with the conversation so far).

use std::path::Path;

use agentwire_exec::{assemble, Transcript};
use assert_cmd::Command;
use serde_json::{json, Value};

/// Runs one turn on `history` and folds its JSONL output.
fn turn(dir: &Path, history: &[Value], tools: &[(&str, Value)], session: &str) -> Transcript {
    let input = dir.join("history.json");
    std::fs::write(&input, serde_json::to_string(history).unwrap()).unwrap();
    let mut command = Command::cargo_bin("agentwire").unwrap();
    command
        .env_remove("OPENAI_API_KEY")
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "tool-loop",
            "--json",
            "--session-id",
            session,
        ])
        .arg("--input-json")
        .arg(&input)
        .arg("--log-requests")
        .arg(dir.join("request.json"));
    for (name, schema) in tools {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, schema.to_string()).unwrap();
        command
            .arg("--tool")
            .arg(format!("{name}:json={}", path.display()));
    }
    let output = command.output().unwrap();
    // A turn that asks for a tool call is a success.
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let transcript = assemble(&output.stdout[..]).unwrap();
    // Every turn keeps the prompt cache key.
    let sent: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("request.json")).unwrap()).unwrap();
    assert_eq!(sent["prompt_cache_key"], session);
    assert_eq!(sent["input"], Value::Array(history.to_vec()));
    transcript
}

/// The tools of this loop: what the orchestrator runs for a call.
fn run_tool(name: &str, arguments: &Value) -> String {
    match name {
        "web_fetch" => format!("<html>{}</html>", arguments["url"].as_str().unwrap()),
        "word_count" => format!(
            "{} words",
            arguments["text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .count()
        ),
        other => panic!("no tool {other}"),
    }
}

/// Drives the loop to its final text, returning it and the number of turns.
fn drive(tools: &[(&str, Value)], prompt: &str) -> (String, usize, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
    ];
    for turns in 1..=5 {
        let transcript = turn(dir.path(), &history, tools, "loop-session");
        assert!(transcript.is_completed());
        if transcript.tool_calls.is_empty() {
            return (transcript.text(), turns, history);
        }
        assert!(transcript.text().is_empty(), "a tool turn has no text");
        for call in &transcript.tool_calls {
            let arguments: Value = serde_json::from_str(&call.arguments).unwrap();
            history.push(json!({
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            }));
            history.push(json!({
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": run_tool(&call.name, &arguments),
            }));
        }
    }
    panic!("the loop did not end in 5 turns");
}

#[test]
fn a_two_turn_tool_loop_runs_offline() {
    let fetch = json!({
        "type": "object",
        "properties": {"url": {"type": "string", "format": "uri"}},
        "required": ["url"],
        "additionalProperties": false
    });
    let (text, turns, history) = drive(&[("web_fetch", fetch)], "What is on example.com?");
    assert_eq!(turns, 2);
    assert_eq!(
        text,
        "mock tool-loop result: web_fetch: <html>https://example.com</html>"
    );
    // Turn 1 asked for the call that turn 2 answered.
    assert_eq!(history[1]["call_id"], "call_mock_1");
    assert_eq!(history[1]["arguments"], r#"{"url":"https://example.com"}"#);
}

#[test]
fn each_tool_gets_its_turn() {
    let fetch =
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]});
    let count = json!({"type": "object", "properties": {"text": {"type": "string", "minLength": 12}}, "required": ["text"]});
    let (text, turns, history) = drive(
        &[("web_fetch", fetch), ("word_count", count)],
        "fetch and count",
    );
    assert_eq!(turns, 3);
    assert_eq!(
        text,
        "mock tool-loop result: web_fetch: <html>mock</html>; word_count: 1 words"
    );
    let call_ids: Vec<&str> = history
        .iter()
        .filter(|item| item["type"] == "function_call")
        .map(|item| item["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(call_ids, ["call_mock_1", "call_mock_2"]);
}
