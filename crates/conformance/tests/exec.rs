//! Replays the exec suite (`conformance/exec`) against `agentwire-exec`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test exec -- relay/`.

use agentwire_conformance::exec::{
    self, ExecCodec, FailureSpec, LocatedError, RelayOutput, SseOutput,
};
use agentwire_conformance::{find_workspace_root, CodecError};
use agentwire_exec::{
    Assembler, ChatStream, Event, EventReader, EventWriter, FunctionTool, MockMode, Normalizer,
    Request, RequestOptions, SseDecoder, SseEvent, SseReader, TextFormat, ToolChoice, ToolSpec,
    UpstreamFailure,
};
use serde_json::{json, Map, Value};

/// The adapter from the runner's JSON world to `agentwire-exec`.
struct AgentwireExec;

fn codec_error(e: &agentwire_exec::Error) -> CodecError {
    CodecError::new(e.code(), e.to_string())
}

fn located(e: &agentwire_exec::Error) -> LocatedError {
    LocatedError {
        code: e.code().to_owned(),
        line: e.line(),
        message: e.to_string(),
    }
}

fn request(value: &Value) -> Result<Request, CodecError> {
    Request::from_value(value.clone()).map_err(|e| codec_error(&e))
}

fn write_all(events: &[Event], writer: &mut EventWriter<Vec<u8>>) -> Result<(), CodecError> {
    for event in events {
        writer.write_event(event).map_err(|e| codec_error(&e))?;
    }
    Ok(())
}

fn into_text(writer: EventWriter<Vec<u8>>) -> Result<String, CodecError> {
    String::from_utf8(writer.into_inner()).map_err(|e| CodecError::message(e.to_string()))
}

/// Reads an upstream body through a normalizer until its terminal event: `step` turns one
/// server-sent event (`None` at the end of the body) into emitted events.
fn relay_through(
    request: &Request,
    sse: &[u8],
    decoder: SseDecoder,
    mut step: impl FnMut(&mut Normalizer, Option<&SseEvent>) -> Vec<Event>,
) -> Result<RelayOutput, CodecError> {
    let mut normalizer = Normalizer::new(request);
    let mut reader = SseReader::with_decoder(sse, decoder);
    let mut writer = EventWriter::new(Vec::new());
    while normalizer.outcome().is_none() {
        let events = match reader.next_event() {
            Ok(event) => step(&mut normalizer, event.as_ref()),
            Err(e) => normalizer.fail(UpstreamFailure::from_read_error(&e)),
        };
        write_all(&events, &mut writer)?;
    }
    let outcome = normalizer
        .outcome()
        .map_or("none", |o| o.status())
        .to_owned();
    Ok(RelayOutput {
        jsonl: into_text(writer)?,
        outcome,
    })
}

impl ExecCodec for AgentwireExec {
    fn build_request(&self, options: &Value) -> Result<Value, CodecError> {
        let Value::Object(map) = options else {
            return Err(CodecError::message("fixture: options must be an object"));
        };
        let mut o = RequestOptions::new();
        for (key, value) in map {
            let text = || {
                value.as_str().map(str::to_owned).ok_or_else(|| {
                    CodecError::message(format!("fixture: `{key}` must be a string"))
                })
            };
            let flag = || {
                value.as_bool().ok_or_else(|| {
                    CodecError::message(format!("fixture: `{key}` must be a boolean"))
                })
            };
            match key.as_str() {
                "prompt" => o.prompt = Some(text()?),
                "model" => o.model = text()?,
                "instructions" => o.instructions = Some(text()?),
                "append_system_prompt" => o.append_system_prompt = Some(text()?),
                "session_id" => o.session_id = Some(text()?),
                "web_search" => o.web_search = flag()?,
                "parallel_tool_calls" => o.parallel_tool_calls = flag()?,
                "tool_choice" => {
                    o.tool_choice = text()?.parse::<ToolChoice>().map_err(|e| codec_error(&e))?;
                }
                "reasoning_effort" => {
                    o.reasoning_effort = Some(text()?.parse().map_err(|e| codec_error(&e))?);
                }
                "reasoning_summary" => {
                    o.reasoning_summary = Some(text()?.parse().map_err(|e| codec_error(&e))?);
                }
                "store" => o.store = flag()?,
                "previous_response_id" => o.previous_response_id = Some(text()?),
                "max_output_tokens" => {
                    o.max_output_tokens = Some(value.as_u64().ok_or_else(|| {
                        CodecError::message("fixture: `max_output_tokens` must be a number")
                    })?);
                }
                "include" => {
                    o.include = Some(
                        value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                    );
                }
                "text_format" => {
                    // "text", "json_object", or {"name": file stem, "value": file JSON}.
                    o.text_format = Some(match value {
                        Value::String(s) if s == "text" => TextFormat::Text,
                        Value::String(s) if s == "json_object" => TextFormat::JsonObject,
                        _ => TextFormat::json_schema(
                            value["name"].as_str().unwrap_or_default(),
                            value["value"].clone(),
                        )
                        .map_err(|e| codec_error(&e))?,
                    });
                }
                "input" => {
                    o.input =
                        Some(value.as_array().cloned().ok_or_else(|| {
                            CodecError::message("fixture: `input` must be an array")
                        })?);
                }
                "tools" => {
                    for tool in value.as_array().into_iter().flatten() {
                        let name = tool["name"].as_str().unwrap_or_default();
                        let mut function =
                            FunctionTool::from_json(name, tool["parameters"].clone())
                                .map_err(|e| codec_error(&e))?;
                        if let Some(description) = tool.get("description").and_then(Value::as_str) {
                            function = function.with_description(description);
                        }
                        o.tools.push(function);
                    }
                }
                other => {
                    return Err(CodecError::message(format!(
                        "fixture: unknown option `{other}`"
                    )))
                }
            }
        }
        o.build().map(|r| r.to_value()).map_err(|e| codec_error(&e))
    }

    fn tool_spec(&self, spec: &str) -> Result<Value, CodecError> {
        let spec: ToolSpec = spec.parse().map_err(|e| codec_error(&e))?;
        Ok(json!({"name": spec.name, "path": spec.path}))
    }

    fn mock(&self, mode: &str, body: &Value) -> Result<String, CodecError> {
        let mode: MockMode = mode.parse().map_err(|e| codec_error(&e))?;
        let request = request(body)?;
        let upstream = mode.events(&request).map_err(|e| codec_error(&e))?;
        let mut normalizer = Normalizer::new(&request);
        let mut writer = EventWriter::new(Vec::new());
        for event in upstream {
            write_all(&normalizer.push(event), &mut writer)?;
        }
        write_all(&normalizer.finish(), &mut writer)?;
        into_text(writer)
    }

    fn relay(
        &self,
        body: &Value,
        sse: &[u8],
        max_event_bytes: Option<usize>,
        failure: Option<&FailureSpec>,
    ) -> Result<RelayOutput, CodecError> {
        let mut decoder = SseDecoder::new();
        if let Some(limit) = max_event_bytes {
            decoder = decoder.max_event_bytes(limit);
        }
        relay_through(
            &request(body)?,
            sse,
            decoder,
            |normalizer, event| match event {
                Some(event) => normalizer.push_sse(event),
                None => match failure {
                    Some(f) => {
                        let mut failure = UpstreamFailure::new(&f.code, &f.message);
                        if let Some(status) = f.http_status {
                            failure = failure.with_http_status(status);
                        }
                        if let Some(details) = &f.details {
                            failure = failure.with_details(details.clone());
                        }
                        normalizer.fail(failure)
                    }
                    None => normalizer.finish(),
                },
            },
        )
    }

    fn assemble(&self, jsonl: &str, strict_deltas: bool) -> Result<Value, LocatedError> {
        let mut reader = EventReader::new(jsonl.as_bytes());
        let mut assembler = Assembler::new().strict_deltas(strict_deltas);
        while let Some(event) = reader.read_event().map_err(|e| located(&e))? {
            assembler.push(&event).map_err(|e| LocatedError {
                code: e.code().to_owned(),
                line: Some(reader.line()),
                message: e.to_string(),
            })?;
        }
        let transcript = assembler.finish();
        serde_json::to_value(transcript).map_err(|e| LocatedError {
            code: "serialize".to_owned(),
            line: None,
            message: e.to_string(),
        })
    }

    fn read(
        &self,
        jsonl: &str,
        max_line_bytes: Option<usize>,
    ) -> Vec<Result<(u64, Value), LocatedError>> {
        let mut reader = EventReader::new(jsonl.as_bytes());
        if let Some(limit) = max_line_bytes {
            reader = reader.max_line_bytes(limit);
        }
        let mut out = Vec::new();
        loop {
            match reader.read_event() {
                Ok(Some(event)) => out.push(Ok((reader.line(), event.to_value()))),
                Ok(None) => break,
                Err(e) => out.push(Err(located(&e))),
            }
        }
        out
    }

    fn chat_request(&self, body: &Value) -> Result<(Value, Vec<String>), CodecError> {
        let chat = request(body)?
            .to_chat_completions()
            .map_err(|e| codec_error(&e))?;
        Ok((chat.body, chat.notes))
    }

    fn chat_relay(&self, body: &Value, sse: &[u8]) -> Result<RelayOutput, CodecError> {
        let mut chat = ChatStream::new();
        relay_through(
            &request(body)?,
            sse,
            SseDecoder::new(),
            |normalizer, event| {
                let upstream = match event {
                    Some(event) => match chat.push_json(&event.data) {
                        Ok(upstream) => upstream,
                        Err(failure) => return normalizer.fail(failure),
                    },
                    None => chat.finish(),
                };
                let mut out: Vec<Event> = upstream
                    .into_iter()
                    .flat_map(|e| normalizer.push(e))
                    .collect();
                if event.is_none() {
                    out.extend(normalizer.finish());
                }
                out
            },
        )
    }

    fn sse(&self, input: &[u8], chunk: usize, max_event_bytes: Option<usize>) -> SseOutput {
        let mut decoder = SseDecoder::new();
        if let Some(limit) = max_event_bytes {
            decoder = decoder.max_event_bytes(limit);
        }
        let mut events = Vec::new();
        let mut error = None;
        for piece in input.chunks(chunk.max(1)) {
            if let Err(e) = decoder.feed(piece, &mut events) {
                error = Some(located(&e));
                break;
            }
        }
        let open_at_end = if error.is_none() {
            decoder.finish()
        } else {
            None
        };
        let events = events
            .into_iter()
            .map(|e| {
                let mut map = Map::new();
                map.insert("line".to_owned(), Value::from(e.line));
                if let Some(name) = e.event {
                    map.insert("event".to_owned(), Value::from(name));
                }
                map.insert("data".to_owned(), Value::from(e.data));
                if let Some(id) = e.id {
                    map.insert("id".to_owned(), Value::from(id));
                }
                if let Some(retry) = e.retry {
                    map.insert("retry".to_owned(), Value::from(retry));
                }
                Value::Object(map)
            })
            .collect();
        SseOutput {
            events,
            error,
            open_at_end,
        }
    }
}

/// `AGENTWIRE_EXEC_BLESS=1`: rewrites the `expected` events (and `outcome`) of the mock and
/// relay fixtures with what the crate emits now, for reviewing a deliberate change of output
/// with `git diff`. The run that follows checks the rewritten fixtures as usual.
fn bless(root: &std::path::Path) {
    // New assemble fixtures written with `"expected": {}` get the transcript.
    let dir = root.join("conformance/exec/assemble");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("\n  \"expected\": {}\n") {
            continue;
        }
        let fixture: Value = serde_json::from_str(&text).unwrap();
        let strict = fixture["strict_deltas"] == true;
        let transcript = AgentwireExec
            .assemble(fixture["input"].as_str().unwrap(), strict)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
        let pretty = serde_json::to_string_pretty(&transcript)
            .unwrap()
            .replace('\n', "\n  ");
        let updated = text.replace(
            "\n  \"expected\": {}\n",
            &format!("\n  \"expected\": {pretty}\n"),
        );
        std::fs::write(&path, updated).unwrap();
        eprintln!("blessed {}", path.display());
    }
    for area in ["mock", "relay", "chat-relay"] {
        let dir = root.join("conformance/exec").join(area);
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap();
            let fixture: Value = serde_json::from_str(&text).unwrap();
            if fixture.get("expected").is_none() {
                continue;
            }
            let (jsonl, outcome) = if area == "chat-relay" {
                let output = AgentwireExec
                    .chat_relay(
                        &fixture["request"],
                        fixture["sse"].as_str().unwrap().as_bytes(),
                    )
                    .unwrap();
                (output.jsonl, Some(output.outcome))
            } else if area == "mock" {
                match AgentwireExec.mock(fixture["mode"].as_str().unwrap(), &fixture["request"]) {
                    Ok(jsonl) => (jsonl, None),
                    Err(e) => panic!("{}: {e}", path.display()),
                }
            } else {
                let failure: Option<FailureSpec> = fixture
                    .get("failure")
                    .map(|f| serde_json::from_value(f.clone()).unwrap());
                let output = AgentwireExec
                    .relay(
                        &fixture["request"],
                        fixture["sse"].as_str().unwrap().as_bytes(),
                        fixture
                            .get("max_event_bytes")
                            .and_then(Value::as_u64)
                            .map(|n| n as usize),
                        failure.as_ref(),
                    )
                    .unwrap();
                (output.jsonl, Some(output.outcome))
            };
            let start = text.find("\n  \"expected\": [\n").unwrap() + "\n  \"expected\": [\n".len();
            let end = start + text[start..].find("\n  ]").unwrap();
            let lines: Vec<String> = jsonl.lines().map(|l| format!("    {l}")).collect();
            let mut updated = format!("{}{}{}", &text[..start], lines.join(",\n"), &text[end..]);
            if let Some(outcome) = outcome {
                let old = format!("\"outcome\": {}", fixture["outcome"]);
                updated = updated.replace(&old, &format!("\"outcome\": \"{outcome}\""));
            }
            if updated != text {
                std::fs::write(&path, updated).unwrap();
                eprintln!("blessed {}", path.display());
            }
        }
    }
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    if std::env::var_os("AGENTWIRE_EXEC_BLESS").is_some() {
        bless(&root);
    }
    exec::harness(AgentwireExec).suite(exec::suite(&root)).run()
}
