//! Every stream `agentwire exec` prints, checked with the official OpenAI Python SDK: each line
//! validates against the SDK's event type for it, and the SDK's stream helper,
//! `client.responses.stream()`, accepts every successful turn and ends with the same messages and
//! calls as `agentwire_exec::assemble`.
//!
//! The SDK is installed from PyPI (pinned) into a virtual environment under Cargo's target
//! directory the first time; CI installs it the same way. Only a machine without `python3` skips
//! the check, loudly.

mod exec_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use agentwire_exec::{
    http_failure, EventWriter, MockMode, Normalizer, Request, RequestOptions, SseReader,
    UpstreamFailure,
};
use exec_support::{workspace, write_json};
use serde_json::{json, Value};

/// The SDK release the streams are checked against.
const SDK_VERSION: &str = "3.57.0";

/// The virtual environment's python with the pinned SDK, installing it when needed; `None`
/// when the machine has no `python3`.
fn sdk_python() -> Option<PathBuf> {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!(
            "\n\n*** exec_sdk: SKIPPED: this machine has no python3, so the streams are NOT \
             checked against the OpenAI SDK ***\n\n"
        );
        return None;
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-sdk-venv");
    let python = venv.join("bin").join("python");
    let ready = |python: &Path| {
        Command::new(python)
            .args([
                "-c",
                &format!("import openai, sys; sys.exit(openai.__version__ != '{SDK_VERSION}')"),
            ])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready(&python) {
        let status = Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv)
            .status()
            .unwrap();
        assert!(status.success(), "python3 -m venv failed");
        let output = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("openai=={SDK_VERSION}"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "installing openai=={SDK_VERSION} from PyPI failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(ready(&python));
    }
    Some(python)
}

/// Collects streams in a directory, each with what `agentwire_exec::assemble` makes of it.
struct Streams {
    dir: tempfile::TempDir,
    count: usize,
    completed: usize,
}

impl Streams {
    fn add(&mut self, name: &str, jsonl: &[u8]) {
        let transcript = exec_support::assemble(jsonl);
        std::fs::write(self.dir.path().join(format!("{name}.jsonl")), jsonl).unwrap();
        if transcript.is_completed() {
            let expect = json!({
                "messages": transcript.messages.iter().map(|m| m.text.clone()).collect::<Vec<_>>(),
                "calls": transcript.tool_calls.iter()
                    .map(|c| json!([c.call_id, c.name, c.arguments])).collect::<Vec<_>>(),
            });
            write_json(self.dir.path(), &format!("{name}.expect.json"), &expect);
            self.completed += 1;
        }
        self.count += 1;
    }
}

fn prompt_request() -> Request {
    let mut options = RequestOptions::new();
    options.prompt = Some("hi".to_owned());
    options.build().unwrap()
}

fn normalized(
    request: &Request,
    run: impl FnOnce(&mut Normalizer) -> Vec<agentwire_exec::Event>,
) -> Vec<u8> {
    let mut normalizer = Normalizer::new(request);
    let events = run(&mut normalizer);
    let mut writer = EventWriter::new(Vec::new());
    for event in &events {
        writer.write_event(event).unwrap();
    }
    writer.into_inner()
}

/// The bytes of generated turn number `seed`.
fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn every_stream_passes_the_official_sdk() {
    let Some(python) = sdk_python() else {
        return;
    };
    let mut streams = Streams {
        dir: tempfile::tempdir().unwrap(),
        count: 0,
        completed: 0,
    };
    let tools = tempfile::tempdir().unwrap();
    let schema = write_json(
        tools.path(),
        "weather.json",
        &json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 3}}, "required": ["city"]}),
    );
    let tool = format!("get_weather:json={schema}:description=Weather");
    let huge = write_json(
        tools.path(),
        "huge.json",
        &json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1_000_000_000_000u64}}, "required": ["s"]}),
    );

    // 1. The command's own output: every mock mode, with reasoning, tool choices and failures.
    let runs: Vec<(&str, Vec<String>)> = vec![
        ("mock_echo", vec!["--mock-mode", "echo"]),
        ("mock_text", vec!["--mock-mode", "text"]),
        (
            "mock_tool_call",
            vec!["--mock-mode", "tool-call", "--tool", &tool],
        ),
        (
            "mock_tool_loop",
            vec!["--mock-mode", "tool-loop", "--tool", &tool],
        ),
        (
            "mock_tool_choice_none",
            vec![
                "--mock-mode",
                "tool-call",
                "--tool",
                &tool,
                "--tool-choice",
                "none",
            ],
        ),
        (
            "mock_reasoning",
            vec![
                "--mock-mode",
                "tool-call",
                "--tool",
                &tool,
                "--reasoning-effort",
                "high",
                "--reasoning-summary",
                "auto",
            ],
        ),
        (
            "mock_reasoning_text",
            vec!["--mock-mode", "text", "--reasoning-effort", "low"],
        ),
        (
            "mock_too_large",
            vec![
                "--mock-mode",
                "tool-call",
                "--tool",
                &format!("s:json={huge}"),
            ],
        ),
    ]
    .into_iter()
    .map(|(name, args)| (name, args.into_iter().map(str::to_owned).collect()))
    .collect();
    for (name, args) in runs {
        let output = assert_cmd::Command::cargo_bin("agentwire")
            .unwrap()
            .args(["exec", "--mock", "--json", "--prompt", "hi"])
            .args(&args)
            .output()
            .unwrap();
        assert!(!output.stdout.is_empty(), "{name}: {output:?}");
        streams.add(name, &output.stdout);
    }

    // 2. Every relay fixture: upstreams of every dialect and failure.
    let relay = workspace().join("conformance/exec/relay");
    let mut paths: Vec<_> = std::fs::read_dir(&relay)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let request = Request::from_value(fixture["request"].clone()).unwrap();
        let sse = fixture["sse"].as_str().unwrap().to_owned();
        let jsonl = normalized(&request, |normalizer| {
            let mut reader = SseReader::new(sse.as_bytes());
            let mut out = Vec::new();
            while normalizer.outcome().is_none() {
                match reader.next_event() {
                    Ok(Some(event)) => out.extend(normalizer.push_sse(&event)),
                    Ok(None) => out.extend(normalizer.finish()),
                    Err(e) => out.extend(normalizer.fail(UpstreamFailure::from_read_error(&e))),
                }
            }
            out
        });
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        streams.add(&format!("relay_{name}"), &jsonl);
    }

    // 3. Failures outside the stream: HTTP errors, cancellation, stalls.
    let request = prompt_request();
    for (name, failure) in [
        (
            "http_401",
            http_failure(
                401,
                r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            ),
        ),
        (
            "http_404",
            http_failure(
                404,
                r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}"#,
            ),
        ),
        (
            "cancelled",
            UpstreamFailure::new("cancelled", "the turn was cancelled by SIGTERM"),
        ),
        (
            "idle",
            UpstreamFailure::new("idle_timeout", "the upstream sent nothing for 300s"),
        ),
    ] {
        let jsonl = normalized(&request, |normalizer| normalizer.fail(failure));
        streams.add(&format!("failure_{name}"), &jsonl);
    }
    // A mock stream cut short by a cancellation.
    let jsonl = normalized(&request, |normalizer| {
        let mut out = Vec::new();
        for event in MockMode::Text.events(&request).unwrap().into_iter().take(5) {
            out.extend(normalizer.push(event));
        }
        out.extend(normalizer.fail(UpstreamFailure::new("cancelled", "cancelled by SIGINT")));
        out
    });
    streams.add("failure_cancelled_mid_stream", &jsonl);

    // 4. Generated upstream turns, Responses and Chat Completions, in every dialect.
    for seed in 0..300 {
        let turn = agentwire_testkit::exec::turn(&seed_bytes(seed, 64));
        let jsonl = agentwire_testkit::exec::check_turn(&turn).unwrap();
        streams.add(&format!("generated_{seed}"), jsonl.as_bytes());
    }
    for seed in 0..150 {
        let turn = agentwire_testkit::exec::chat_turn(&seed_bytes(seed + 1000, 48));
        let jsonl = agentwire_testkit::exec::check_chat_turn(&turn).unwrap();
        streams.add(&format!("chat_{seed}"), jsonl.as_bytes());
    }

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/exec_support/sdk_check.py");
    let output = Command::new(&python)
        .arg(&script)
        .arg(streams.dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the SDK check did not run: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    eprintln!("exec_sdk: {report}");
    assert_eq!(report["sdk"], SDK_VERSION);
    assert_eq!(report["files"], streams.count);
    assert_eq!(
        report["failures"],
        json!([]),
        "lines or streams the SDK rejects (streams kept in {})",
        streams.dir.keep().display()
    );
    assert_eq!(
        report["streamed"], streams.completed,
        "every successful turn went through responses.stream()"
    );
    assert_eq!(report["compared"], streams.completed);
    assert!(streams.completed > 200, "{}", streams.completed);
    assert!(report["validated"].as_u64().unwrap() > 3000, "{report}");
}
