//! `agentwire exec`: flags, offline mocks, output modes, logs and usage errors.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};

fn agentwire() -> Command {
    let mut command = Command::cargo_bin("agentwire").unwrap();
    // No test may reach a real provider.
    command
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    command
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect()
}

fn write_json(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(value).unwrap()).unwrap();
    path
}

/// The flags that make `exec` build exactly `request` (a body of the conformance suite).
fn flags_for(request: &Value, dir: &Path) -> Vec<String> {
    let mut args = vec![
        "--model".to_owned(),
        request["model"].as_str().unwrap().to_owned(),
    ];
    if let Some(instructions) = request["instructions"].as_str() {
        args.extend(["--instructions".to_owned(), instructions.to_owned()]);
    }
    let input = write_json(dir, "input.json", &request["input"]);
    args.extend(["--input-json".to_owned(), input.display().to_string()]);
    for tool in request["tools"].as_array().unwrap() {
        match tool["type"].as_str().unwrap() {
            "function" => {
                let name = tool["name"].as_str().unwrap();
                let schema = write_json(dir, &format!("{name}.schema.json"), &tool["parameters"]);
                let mut spec = format!("{name}:json={}", schema.display());
                if let Some(description) = tool["description"].as_str() {
                    spec.push_str(":description=");
                    spec.push_str(description);
                }
                args.extend(["--tool".to_owned(), spec]);
            }
            "web_search" => args.push("--web-search".to_owned()),
            other => panic!("no flag for a {other} tool"),
        }
    }
    let choice = match &request["tool_choice"] {
        Value::String(s) => s.clone(),
        object => format!("function:{}", object["name"].as_str().unwrap()),
    };
    args.extend(["--tool-choice".to_owned(), choice]);
    if request["parallel_tool_calls"] == false {
        args.push("--no-parallel-tool-calls".to_owned());
    }
    if let Some(key) = request["prompt_cache_key"].as_str() {
        args.extend(["--session-id".to_owned(), key.to_owned()]);
    }
    for (key, flag) in [
        ("effort", "--reasoning-effort"),
        ("summary", "--reasoning-summary"),
    ] {
        if let Some(value) = request["reasoning"][key].as_str() {
            args.extend([flag.to_owned(), value.to_owned()]);
        }
    }
    if request["store"] == true {
        args.push("--store".to_owned());
    }
    if let Some(max) = request["max_output_tokens"].as_u64() {
        args.extend(["--max-output-tokens".to_owned(), max.to_string()]);
    }
    args
}

#[test]
fn every_mock_fixture_replays_through_the_command() {
    let dir = workspace().join("conformance/exec/mock");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("request.json");
        let mut command = agentwire();
        command
            .args(["exec", "--mock", "--json", "--mock-mode"])
            .arg(fixture["mode"].as_str().unwrap())
            .args(flags_for(&fixture["request"], tmp.path()))
            .arg("--log-requests")
            .arg(&log);
        let output = command.output().unwrap();
        let name = path.display();
        match fixture.get("expected") {
            Some(expected) => {
                assert_eq!(output.status.code(), Some(0), "{name}: {output:?}");
                assert_eq!(&Value::Array(lines(&output.stdout)), expected, "{name}");
                let sent: Value =
                    serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
                assert_eq!(sent, fixture["request"], "{name}: the request body");
            }
            None => {
                // Mock errors are usage errors: status 2, nothing on stdout.
                assert_eq!(output.status.code(), Some(2), "{name}: {output:?}");
                assert!(output.stdout.is_empty(), "{name}");
            }
        }
        replayed += 1;
    }
    assert!(replayed >= 10);
}

#[test]
fn mocks_are_deterministic_and_need_no_credentials() {
    let run = || {
        agentwire()
            .env("HOME", "/nonexistent")
            .args(["exec", "--prompt", "hi", "--mock", "--json"])
            .output()
            .unwrap()
    };
    let (a, b) = (run(), run());
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    // The default mode is echo: the text is the request body.
    let text: String = lines(&a.stdout)
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap().to_owned())
        .collect();
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["input"][0]["content"][0]["text"], "hi");
    assert_eq!(body["stream"], true);
}

#[test]
fn echo_cuts_deltas_at_character_boundaries() {
    let prompt = format!("x{}", "é😀".repeat(50));
    let output = agentwire()
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "echo",
            "--json",
            "--prompt",
        ])
        .arg(&prompt)
        .output()
        .unwrap();
    assert!(output.status.success());
    let deltas: Vec<String> = lines(&output.stdout)
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap().to_owned())
        .collect();
    assert!(deltas.len() > 3);
    assert!(deltas
        .iter()
        .all(|d| d.len() <= 64 && !d.contains('\u{fffd}')));
    let body: Value = serde_json::from_str(&deltas.concat()).unwrap();
    assert_eq!(body["input"][0]["content"][0]["text"], prompt.as_str());
}

#[test]
fn the_prompt_can_come_from_standard_input() {
    let output = agentwire()
        .args(["exec", "--mock", "--json", "--prompt", "-"])
        .write_stdin("from stdin\n")
        .output()
        .unwrap();
    assert!(output.status.success());
    let done = lines(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "response.output_text.done")
        .unwrap();
    let body: Value = serde_json::from_str(done["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["input"][0]["content"][0]["text"], "from stdin\n");
}

#[test]
fn text_mode_prints_the_text_and_a_line_per_tool_call() {
    agentwire()
        .args(["exec", "--mock", "--mock-mode", "text", "--prompt", "hi"])
        .assert()
        .success()
        .stdout("mock response text\n")
        .stderr("");
    let dir = tempfile::tempdir().unwrap();
    let schema = write_json(
        dir.path(),
        "s.json",
        &json!({"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]}),
    );
    agentwire()
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "tool-call",
            "--prompt",
            "go",
            "--tool",
        ])
        .arg(format!("web_fetch:json={}", schema.display()))
        .assert()
        .success()
        .stdout("tool call: web_fetch {\"url\":\"https://example.com\"} (call_id call_mock_1)\n");
}

#[test]
fn the_response_log_holds_exactly_the_emitted_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("responses.jsonl");
    let json_run = agentwire()
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "text",
            "--json",
            "--prompt",
            "hi",
        ])
        .arg("--log-responses")
        .arg(&log)
        .output()
        .unwrap();
    assert!(json_run.status.success());
    assert_eq!(std::fs::read(&log).unwrap(), json_run.stdout);
    // Without --json the log still receives the JSONL lines, and it is appended to.
    agentwire()
        .args(["exec", "--mock", "--mock-mode", "text", "--prompt", "hi"])
        .arg("--log-responses")
        .arg(&log)
        .assert()
        .success()
        .stdout("mock response text\n");
    let twice = [json_run.stdout.clone(), json_run.stdout].concat();
    assert_eq!(std::fs::read(&log).unwrap(), twice);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&log).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the log holds conversations: owner only");
    }
}

#[test]
fn the_request_log_is_the_body_and_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("request.json");
    std::fs::write(
        &log,
        "old content that is longer than the new one ".repeat(100),
    )
    .unwrap();
    agentwire()
        .args(["exec", "--mock", "--mock-mode", "text", "--prompt", "hi"])
        .args([
            "--system",
            "Be brief.",
            "--append-system-prompt",
            "In French.",
        ])
        .args(["--session-id", "s-1", "--model", "gpt-4.1"])
        .arg("--log-requests")
        .arg(&log)
        .assert()
        .success();
    let body: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "gpt-4.1",
            "instructions": "Be brief.\n\nIn French.",
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "include": ["reasoning.encrypted_content"],
            "store": false,
            "stream": true,
            "prompt_cache_key": "s-1"
        })
    );
}

#[test]
fn tool_schemas_keep_their_member_order() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta","alpha"]}"#,
    )
    .unwrap();
    let log = dir.path().join("request.json");
    agentwire()
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "text",
            "--prompt",
            "hi",
            "--tool",
        ])
        .arg(format!("f:json={}", schema.display()))
        .arg("--log-requests")
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.find("zeta").unwrap() < text.find("alpha").unwrap(),
        "{text}"
    );
}

#[test]
fn trace_goes_to_standard_error_and_never_to_standard_output() {
    let output = agentwire()
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "text",
            "--json",
            "--trace",
            "--prompt",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = lines(&output.stdout);
    assert_eq!(stdout.len(), 11);
    let stderr = String::from_utf8(output.stderr).unwrap();
    let traced: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The raw mock upstream: fewer events than emitted (the normalizer adds the done events).
    assert_eq!(traced.first().unwrap()["type"], "response.created");
    assert_eq!(traced.last().unwrap()["type"], "response.completed");
    assert!(traced.len() < stdout.len());
}

#[test]
fn input_json_replaces_the_prompt_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let items = json!([{"role": "user", "content": "from the items"}]);
    let input = write_json(dir.path(), "input.json", &items);
    let log = dir.path().join("request.json");
    let output = agentwire()
        .args([
            "exec",
            "--mock",
            "--mock-mode",
            "text",
            "--prompt",
            "ignored",
            "--input-json",
        ])
        .arg(&input)
        .arg("--log-requests")
        .arg(&log)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--prompt is ignored"));
    let body: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(body["input"], items);
}

/// Runs `exec` with `args` and expects a usage error: status 2, nothing on stdout, one line
/// on stderr mentioning `needle`.
fn usage_error(args: &[&str], needle: &str) {
    let output = agentwire().arg("exec").args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
    assert!(output.stdout.is_empty(), "{args:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

#[test]
fn usage_errors_exit_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str, content: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.display().to_string()
    };
    let object = d("object.json", r#"{"type":"object"}"#);
    let array = d("array.json", "[1,2]");
    let broken = d("broken.json", "{");
    let orphan = d(
        "orphan.json",
        r#"[{"type":"function_call_output","call_id":"c1","output":"x"}]"#,
    );
    let not_list = d("not_list.json", r#"{"role":"user","content":"x"}"#);
    let tool = |name: &str, path: &str| format!("{name}:json={path}");
    usage_error(
        &["--mock", "--mock-mode", "bogus", "--prompt", "x"],
        "unknown mock mode `bogus`",
    );
    usage_error(&["--mock-mode", "text", "--prompt", "x"], "--mock");
    usage_error(
        &["--mock", "--prompt", "x", "--tool", &tool("a.b", &object)],
        "invalid tool name `a.b`",
    );
    usage_error(
        &["--mock", "--prompt", "x", "--tool", "web_search"],
        "--web-search",
    );
    usage_error(
        &[
            "--mock",
            "--prompt",
            "x",
            "--tool",
            &tool("a", &object),
            "--tool",
            &tool("a", &object),
        ],
        "declared twice",
    );
    usage_error(
        &["--mock", "--prompt", "x", "--tool", &tool("a", &array)],
        "must be a JSON object, found an array",
    );
    usage_error(
        &["--mock", "--prompt", "x", "--tool", &tool("a", &broken)],
        "is not JSON",
    );
    usage_error(
        &[
            "--mock",
            "--prompt",
            "x",
            "--tool",
            &tool("a", "/nonexistent/s.json"),
        ],
        "cannot read",
    );
    usage_error(
        &[
            "--mock",
            "--prompt",
            "x",
            "--tool",
            &tool("a", &object),
            "--tool-choice",
            "function:b",
        ],
        "names no declared function tool",
    );
    usage_error(
        &["--mock", "--prompt", "x", "--tool-choice", "sometimes"],
        "invalid tool choice",
    );
    usage_error(
        &["--mock", "--prompt", "x", "--tool-choice", "required"],
        "needs at least one tool",
    );
    usage_error(
        &[
            "--mock",
            "--prompt",
            "x",
            "--instructions",
            "a",
            "--system",
            "b",
        ],
        "cannot be used with",
    );
    usage_error(&["--mock"], "no input");
    usage_error(&["--mock", "--prompt", "  "], "the prompt is empty");
    usage_error(
        &["--mock", "--input-json", &orphan],
        "no earlier function_call",
    );
    usage_error(
        &["--mock", "--input-json", &not_list],
        "expected a JSON array",
    );
    usage_error(&["--mock", "--input-json", &broken], "not JSON");
    usage_error(
        &["--mock", "--mock-mode", "tool-call", "--prompt", "x"],
        "needs a function tool",
    );
    usage_error(
        &["--mock", "--prompt", "-", "--input-json", "-"],
        "cannot both read standard input",
    );
    usage_error(&["--prompt", "x"], "OPENAI_API_KEY is not set");
    let output = agentwire()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["exec", "--prompt", "x", "--base-url", "ftp://example.com"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn tool_choice_none_is_respected_by_the_tool_call_mocks() {
    let dir = tempfile::tempdir().unwrap();
    let schema = write_json(dir.path(), "f.json", &json!({"type": "object"}));
    for mode in ["tool-call", "tool-loop"] {
        let output = agentwire()
            .args([
                "exec",
                "--mock",
                "--json",
                "--prompt",
                "hi",
                "--mock-mode",
                mode,
            ])
            .arg("--tool")
            .arg(format!("f:json={}", schema.display()))
            .args(["--tool-choice", "none"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{mode}: {output:?}");
        let transcript = agentwire_exec::assemble(&output.stdout[..]).unwrap();
        assert!(transcript.tool_calls.is_empty(), "{mode}");
        assert!(!transcript.text().is_empty(), "{mode}");
    }
}

#[test]
fn mock_output_is_bounded_before_it_is_made() {
    // Issue 22: a minLength of 10^12 padded forever; now it is refused at once.
    let dir = tempfile::tempdir().unwrap();
    let schema = write_json(
        dir.path(),
        "f.json",
        &json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1_000_000_000_000u64}}, "required": ["s"]}),
    );
    let output = agentwire()
        .args([
            "exec",
            "--mock",
            "--json",
            "--prompt",
            "hi",
            "--mock-mode",
            "tool-call",
        ])
        .arg("--tool")
        .arg(format!("f:json={}", schema.display()))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let events = lines(&output.stdout);
    assert_eq!(events[1]["code"], "output_too_large");
    assert_eq!(events[2]["response"]["error"]["code"], "output_too_large");
    // A large but acceptable padding is made, linearly.
    let schema = write_json(
        dir.path(),
        "g.json",
        &json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 200_000}}, "required": ["s"]}),
    );
    let output = agentwire()
        .args([
            "exec",
            "--mock",
            "--json",
            "--prompt",
            "hi",
            "--mock-mode",
            "tool-call",
        ])
        .arg("--tool")
        .arg(format!("g:json={}", schema.display()))
        .output()
        .unwrap();
    assert!(output.status.success());
    let transcript = agentwire_exec::assemble(&output.stdout[..]).unwrap();
    assert_eq!(transcript.tool_calls[0].arguments.len(), 200_000 + 8);
}

#[test]
fn help_lists_the_exit_codes() {
    agentwire()
        .args(["exec", "--help"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Exit status: 0 when the response completed",
        ))
        .stdout(predicates::str::contains(
            "--tool <NAME:json=PATH[:description=TEXT]>",
        ))
        .stdout(predicates::str::contains("130 or 143 when SIGINT or"))
        .stdout(predicates::str::contains("--idle-timeout <SECONDS>"))
        .stdout(predicates::str::contains("[default: 300]"));
}
