//! Property tests: JSONL round trips, SSE framing under any chunking, and the normalizer's
//! promises for upstream streams in any dialect.

use agentwire_exec::{assemble, Event, Normalizer, Outcome, RequestOptions, SseDecoder, SseEvent};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// 128 cases per property (fast in debug builds); `PROPTEST_CASES` asks for more.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// Text with the characters that matter: quotes, backslashes, controls, line breaks,
/// multi-byte and astral characters.
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-zé😀\"\\\\ \n\r\t:{}\u{0}\u{2028}]{0,12}").unwrap()
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e12f64..1.0e12).prop_map(Value::from),
        text().prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Members no event type models, so any value is allowed.
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("x_[a-z]{1,5}", json_value(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

/// An event of a modelled type with valid members, or of an unknown type.
fn event_value() -> impl Strategy<Value = Value> {
    let seq = prop::option::of(0u64..1000);
    (0usize..8, seq, text(), text(), extras()).prop_map(|(kind, seq, a, b, extra)| {
        let mut event = match kind {
            0 => json!({"type": "response.output_text.delta", "item_id": a, "delta": b}),
            1 => json!({"type": "response.function_call_arguments.delta", "item_id": a, "delta": b, "output_index": 3}),
            2 => json!({"type": "response.output_item.added", "output_index": 0,
                        "item": {"type": "function_call", "id": a, "call_id": b, "name": "f", "arguments": ""}}),
            3 => json!({"type": "response.output_item.done",
                        "item": {"type": "message", "id": a, "role": "assistant", "status": "completed",
                                 "content": [{"type": "output_text", "text": b, "annotations": []},
                                             {"type": "refusal", "refusal": "no"}]}}),
            4 => json!({"type": "response.completed",
                        "response": {"id": a, "usage": {"input_tokens": 1, "output_tokens": 2, "cached_tokens": 0},
                                     "error": null, "output": []}}),
            5 => json!({"type": "error", "message": a, "code": null}),
            6 => json!({"type": "response.content_part.added", "item_id": a, "part": {"type": "output_text", "text": b}}),
            _ => json!({"type": format!("response.future.{}", a.len()), "payload": b}),
        };
        let map = event.as_object_mut().unwrap();
        if let Some(n) = seq {
            map.insert("sequence_number".to_owned(), Value::from(n));
        }
        map.extend(extra);
        event
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn reading_and_writing_keeps_the_value(value in event_value()) {
        let event = Event::from_value(value.clone()).unwrap();
        prop_assert_eq!(event.to_value(), value.clone());
        let line = agentwire_exec::to_string(&event);
        prop_assert!(!line.contains('\n'));
        let again = agentwire_exec::from_str(&line).unwrap();
        prop_assert_eq!(again.to_value(), value);
    }

    #[test]
    fn the_reader_never_panics_and_counts_lines(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let reader = agentwire_exec::EventReader::new(&bytes[..]).max_line_bytes(40);
        let lines = bytes.split(|b| *b == b'\n').count() as u64;
        for result in reader {
            if let Err(e) = result {
                prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= lines));
            }
        }
    }
}

/// One SSE event to encode: comments, an event name, data lines.
#[derive(Debug, Clone)]
struct Framed {
    comment: bool,
    name: Option<String>,
    data: Vec<String>,
}

fn framed() -> impl Strategy<Value = Framed> {
    let line = proptest::string::string_regex("[a-z {}\":,é😀]{0,10}").unwrap();
    (
        any::<bool>(),
        prop::option::of("[a-z.]{1,12}"),
        prop::collection::vec(line, 1..4),
    )
        .prop_map(|(comment, name, data)| Framed {
            comment,
            name,
            data,
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sse_framing_survives_any_chunking_and_line_ending(
        events in prop::collection::vec(framed(), 0..6),
        endings in prop::collection::vec(0usize..3, 64),
        chunk in 1usize..9,
    ) {
        let mut body = String::new();
        let mut i = 0;
        let mut end = |body: &mut String| {
            let mut ending = ["\n", "\r\n", "\r"][endings[i % endings.len()]];
            // `\r` then `\n` would read as one `\r\n`: an empty line would vanish.
            if ending == "\n" && body.ends_with('\r') {
                ending = "\r\n";
            }
            body.push_str(ending);
            i += 1;
        };
        for event in &events {
            if event.comment {
                body.push_str(": note");
                end(&mut body);
            }
            if let Some(name) = &event.name {
                body.push_str("event: ");
                body.push_str(name);
                end(&mut body);
            }
            for line in &event.data {
                body.push_str("data: ");
                body.push_str(line);
                end(&mut body);
            }
            end(&mut body);
        }
        let mut decoder = SseDecoder::new();
        let mut out: Vec<SseEvent> = Vec::new();
        for piece in body.as_bytes().chunks(chunk) {
            decoder.feed(piece, &mut out).unwrap();
        }
        prop_assert_eq!(decoder.finish(), None);
        prop_assert_eq!(out.len(), events.len());
        for (decoded, event) in out.iter().zip(&events) {
            prop_assert_eq!(&decoded.data, &event.data.join("\n"));
            prop_assert_eq!(&decoded.event, &event.name);
        }
    }
}

/// An output item of a generated upstream stream.
#[derive(Debug, Clone)]
enum Spec {
    /// A message: its parts, each given as its deltas.
    Message(Vec<Vec<String>>),
    /// A function call: its argument deltas.
    Call(Vec<String>),
}

/// How the upstream speaks: which optional events and members it sends.
#[derive(Debug, Clone)]
struct Dialect {
    sequence_numbers: bool,
    created: bool,
    announce_items: bool,
    announce_parts: bool,
    text_done: bool,
    arguments_done: bool,
    item_done: bool,
    message_ids: bool,
}

#[derive(Debug, Clone, Copy)]
enum Ending {
    Completed,
    Incomplete,
    Failed,
    Error,
    Cut,
}

fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        prop::collection::vec(prop::collection::vec(text(), 0..4), 1..3).prop_map(Spec::Message),
        prop::collection::vec(text(), 0..5).prop_map(Spec::Call),
    ]
}

fn dialect() -> impl Strategy<Value = Dialect> {
    prop::collection::vec(any::<bool>(), 8).prop_map(|b| Dialect {
        sequence_numbers: b[0],
        created: b[1],
        announce_items: b[2],
        announce_parts: b[3],
        text_done: b[4],
        arguments_done: b[5],
        item_done: b[6],
        message_ids: b[7],
    })
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![
        4 => Just(Ending::Completed),
        1 => Just(Ending::Incomplete),
        1 => Just(Ending::Failed),
        1 => Just(Ending::Error),
        1 => Just(Ending::Cut),
    ]
}

/// The upstream events for `specs` in `dialect`.
fn upstream(specs: &[Spec], d: &Dialect, ending: Ending) -> Vec<Value> {
    let mut events = Vec::new();
    if d.created {
        events.push(json!({"type": "response.created", "response": {"id": "resp_p", "status": "in_progress"}}));
    }
    for (index, spec) in specs.iter().enumerate() {
        match spec {
            Spec::Message(parts) => {
                let id = format!("msg_{index}");
                let id_member = |e: &mut Value| {
                    if d.message_ids {
                        e["item_id"] = Value::from(id.clone());
                    }
                };
                // Without announcements and ids, consecutive messages would merge: announce
                // every message after the first one.
                let announce = d.announce_items || index > 0;
                if announce {
                    let mut item = json!({"type": "message", "role": "assistant", "content": []});
                    if d.message_ids || index > 0 {
                        item["id"] = Value::from(id.clone());
                    }
                    events.push(json!({"type": "response.output_item.added", "item": item}));
                }
                for (p, deltas) in parts.iter().enumerate() {
                    // Later parts need an announcement, or their deltas join the first part.
                    if d.announce_parts || p > 0 {
                        let mut e = json!({"type": "response.content_part.added", "content_index": p,
                                           "part": {"type": "output_text", "text": ""}});
                        id_member(&mut e);
                        if index > 0 && !d.message_ids {
                            e["item_id"] = Value::from(id.clone());
                        }
                        events.push(e);
                    }
                    // A message must show up somehow: without any announcement, its first part
                    // gets at least an empty delta.
                    let empty = [String::new()];
                    let deltas: &[String] =
                        if deltas.is_empty() && !announce && !d.announce_parts && p == 0 {
                            &empty
                        } else {
                            deltas
                        };
                    for delta in deltas {
                        let mut e = json!({"type": "response.output_text.delta", "delta": delta, "content_index": p});
                        id_member(&mut e);
                        if index > 0 && !d.message_ids {
                            e["item_id"] = Value::from(id.clone());
                        }
                        events.push(e);
                    }
                    if d.text_done {
                        let mut e = json!({"type": "response.output_text.done", "text": deltas.concat(), "content_index": p});
                        id_member(&mut e);
                        if index > 0 && !d.message_ids {
                            e["item_id"] = Value::from(id.clone());
                        }
                        events.push(e);
                    }
                }
                if d.item_done && (d.message_ids || index > 0) {
                    let content: Vec<Value> = parts
                        .iter()
                        .map(|deltas| json!({"type": "output_text", "text": deltas.concat(), "annotations": []}))
                        .collect();
                    events.push(json!({"type": "response.output_item.done",
                                       "item": {"type": "message", "id": id, "role": "assistant", "content": content}}));
                }
            }
            Spec::Call(deltas) => {
                let id = format!("fc_{index}");
                let call_id = format!("call_{index}");
                let arguments = deltas.concat();
                let announce = d.announce_items || !deltas.is_empty() || d.arguments_done;
                if announce {
                    events.push(json!({"type": "response.output_item.added",
                                       "item": {"type": "function_call", "id": id, "call_id": call_id, "name": "tool"}}));
                    for delta in deltas {
                        events.push(json!({"type": "response.function_call_arguments.delta", "item_id": id, "delta": delta}));
                    }
                    if d.arguments_done {
                        events.push(json!({"type": "response.function_call_arguments.done", "item_id": id, "arguments": arguments}));
                    }
                }
                if d.item_done || !announce {
                    let mut item = json!({"type": "function_call", "call_id": call_id, "name": "tool", "arguments": arguments});
                    if announce {
                        item["id"] = Value::from(id.clone());
                    }
                    events.push(json!({"type": "response.output_item.done", "item": item}));
                }
            }
        }
    }
    match ending {
        Ending::Completed => events.push(json!({"type": "response.completed",
            "response": {"usage": {"input_tokens": 5, "output_tokens": 7}}})),
        Ending::Incomplete => events.push(json!({"type": "response.incomplete",
            "response": {"incomplete_details": {"reason": "max_output_tokens"}}})),
        Ending::Failed => events.push(json!({"type": "response.failed",
            "response": {"error": {"code": "server_error", "message": "failed"}}})),
        Ending::Error => {
            events.push(json!({"type": "error", "code": "server_error", "message": "boom"}));
        }
        Ending::Cut => {}
    }
    if d.sequence_numbers {
        for (n, event) in events.iter_mut().enumerate() {
            event["sequence_number"] = Value::from(n as u64 * 3 + 7);
        }
    }
    events
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_normalizer_keeps_its_promises(
        specs in prop::collection::vec(spec(), 0..4),
        dialect in dialect(),
        ending in ending(),
    ) {
        let mut options = RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        let request = options.build().unwrap();
        let mut normalizer = Normalizer::new(&request);
        let mut out = Vec::new();
        for event in upstream(&specs, &dialect, ending) {
            out.extend(normalizer.push_json(&event.to_string()));
        }
        out.extend(normalizer.finish());
        let expected_outcome = match ending {
            Ending::Completed => Outcome::Completed,
            Ending::Incomplete => Outcome::Incomplete,
            _ => Outcome::Failed,
        };
        prop_assert_eq!(normalizer.outcome(), Some(expected_outcome));

        // Sequence numbers count from 0; exactly one terminal event, last; failures say why.
        for (n, event) in out.iter().enumerate() {
            prop_assert_eq!(event.sequence_number(), Some(n as u64));
        }
        prop_assert_eq!(out.iter().filter(|e| e.is_terminal()).count(), 1);
        prop_assert!(out.last().unwrap().is_terminal());
        if expected_outcome == Outcome::Failed {
            prop_assert_eq!(out.iter().filter(|e| matches!(e, Event::Error(_))).count(), 1);
        }

        // The output folds cleanly, and a completed turn gives back exactly what was sent.
        let jsonl: String = out.iter().map(|e| agentwire_exec::to_string(e) + "\n").collect();
        let transcript = assemble(jsonl.as_bytes()).unwrap();
        if expected_outcome == Outcome::Completed {
            let texts: Vec<String> = specs.iter().filter_map(|s| match s {
                Spec::Message(parts) => Some(parts.iter().map(|d| d.concat()).collect()),
                Spec::Call(_) => None,
            }).collect();
            let got: Vec<String> = transcript.messages.iter().map(|m| m.text.clone()).collect();
            prop_assert_eq!(got, texts);
            let calls: Vec<String> = specs.iter().filter_map(|s| match s {
                Spec::Call(deltas) => Some(deltas.concat()),
                Spec::Message(_) => None,
            }).collect();
            let got: Vec<String> = transcript.tool_calls.iter().map(|c| c.arguments.clone()).collect();
            prop_assert_eq!(got, calls);
            prop_assert!(transcript.unfinished.is_empty());
            let usage = transcript.usage.unwrap();
            prop_assert_eq!((usage.input_tokens, usage.cached(), usage.total_tokens), (5, Some(0), Some(12)));
        }
    }
}

/// Events of every modelled type with ids from a small pool, so that random sequences hit
/// announced and unannounced items alike.
fn chaotic_event() -> impl Strategy<Value = Value> {
    let id = prop_oneof![Just("a"), Just("b"), Just("c")];
    (0usize..14, id, text(), prop::option::of(0u64..3)).prop_map(|(kind, id, s, index)| {
        let mut event = match kind {
            0 => json!({"type": "response.created", "response": {"id": id}}),
            1 => json!({"type": "response.output_item.added", "item": {"type": "message", "id": id}}),
            2 => json!({"type": "response.output_item.added",
                        "item": {"type": "function_call", "id": id, "call_id": id, "name": "f", "arguments": s}}),
            3 => json!({"type": "response.content_part.added", "item_id": id, "part": {"type": "output_text", "text": s}}),
            4 => json!({"type": "response.output_text.delta", "item_id": id, "delta": s}),
            5 => json!({"type": "response.output_text.delta", "delta": s}),
            6 => json!({"type": "response.output_text.done", "item_id": id, "text": s}),
            7 => json!({"type": "response.content_part.done", "item_id": id, "part": {"type": "refusal", "refusal": s}}),
            8 => json!({"type": "response.function_call_arguments.delta", "item_id": id, "delta": s}),
            9 => json!({"type": "response.function_call_arguments.done", "item_id": id, "arguments": s}),
            10 => json!({"type": "response.output_item.done",
                         "item": {"type": "function_call", "call_id": id, "name": "f", "arguments": s}}),
            11 => json!({"type": "response.output_item.done",
                         "item": {"type": "message", "id": id, "content": [{"type": "output_text", "text": s}]}}),
            12 => json!({"type": "error", "message": s}),
            _ => json!({"type": "response.completed", "response": {}}),
        };
        if let Some(index) = index {
            let map = event.as_object_mut().unwrap();
            map.insert("content_index".to_owned(), Value::from(index));
            map.insert("output_index".to_owned(), Value::from(index));
        }
        event
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_event_sequence_gives_a_well_formed_stream(
        events in prop::collection::vec(chaotic_event(), 0..24),
    ) {
        let mut options = RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        let mut normalizer = Normalizer::new(&options.build().unwrap());
        let mut out = Vec::new();
        for event in &events {
            out.extend(normalizer.push_json(&event.to_string()));
        }
        out.extend(normalizer.finish());
        prop_assert!(normalizer.outcome().is_some());
        prop_assert_eq!(out.iter().filter(|e| e.is_terminal()).count(), 1);
        prop_assert!(out.last().unwrap().is_terminal());
        for (n, event) in out.iter().enumerate() {
            prop_assert_eq!(event.sequence_number(), Some(n as u64));
        }
        let jsonl: String = out.iter().map(|e| agentwire_exec::to_string(e) + "\n").collect();
        let transcript = assemble(jsonl.as_bytes());
        prop_assert!(transcript.is_ok(), "{:?}\n{}", transcript.err(), jsonl);
    }

    #[test]
    fn the_sse_decoder_stays_within_its_limit(
        bytes in prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(b'd'), Just(b'a'), Just(b't'), any::<u8>()], 0..300),
        chunk in 1usize..16,
    ) {
        let mut decoder = SseDecoder::new().max_event_bytes(64);
        let mut out = Vec::new();
        for piece in bytes.chunks(chunk) {
            if decoder.feed(piece, &mut out).is_err() {
                break;
            }
        }
        decoder.finish();
        for event in &out {
            prop_assert!(event.data.len() <= 64);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_assembler_takes_any_event_sequence(
        events in prop::collection::vec(chaotic_event(), 0..24),
    ) {
        // Errors are fine; panics and unbounded growth are not.
        let jsonl: String = events.iter().map(|e| e.to_string() + "\n").collect();
        let _ = assemble(jsonl.as_bytes());
        let mut assembler = agentwire_exec::Assembler::new().max_output_bytes(2000);
        for event in &events {
            let event = agentwire_exec::from_str(&event.to_string()).unwrap();
            if assembler.push(&event).is_err() {
                break;
            }
        }
        let transcript = assembler.finish();
        prop_assert!(transcript.messages.len() + transcript.tool_calls.len() <= 24);
    }
}

proptest! {
    #![proptest_config(config())]

    /// Issue 23: every stream the normalizer makes of a generated upstream turn (any dialect,
    /// calls left open at `response.completed`, final values that contradict their deltas,
    /// items only the completed response shows, any ending) is well formed and assembles to the
    /// turn the upstream meant. The cargo-fuzz target `exec_turn` runs the same oracle.
    #[test]
    fn every_stream_assembles_to_the_turn_the_upstream_meant(
        bytes in prop::collection::vec(any::<u8>(), 0..160),
    ) {
        let turn = agentwire_testkit::exec::turn(&bytes);
        if let Err(bug) = agentwire_testkit::exec::check_turn(&turn) {
            prop_assert!(false, "{}\nupstream: {:#?}", bug, turn.upstream);
        }
    }

    /// The same for Chat Completions answers, translated by `ChatStream`.
    #[test]
    fn every_chat_answer_assembles_to_the_turn_it_meant(
        bytes in prop::collection::vec(any::<u8>(), 0..120),
    ) {
        let turn = agentwire_testkit::exec::chat_turn(&bytes);
        if let Err(bug) = agentwire_testkit::exec::check_chat_turn(&turn) {
            prop_assert!(false, "{}\nchunks: {:#?}", bug, turn.chunks);
        }
    }

    /// Arbitrary chunk data never breaks the stream.
    #[test]
    fn any_chunk_data_gives_a_well_formed_stream(
        lines in prop::collection::vec(chunk_line(), 0..12),
    ) {
        let input = lines.join("\n");
        prop_assert!(agentwire_testkit::exec::chat_bytes(input.as_bytes()).is_ok());
    }
}

/// A chunk line: mostly plausible chunks, some noise.
fn chunk_line() -> impl Strategy<Value = String> {
    let delta = prop_oneof![
        text().prop_map(|t| json!({"content": t})),
        text().prop_map(|t| json!({"reasoning_content": t})),
        (0u64..3, prop::option::of("[a-z_]{1,4}"), text()).prop_map(|(i, name, args)| {
            let mut call = json!({"index": i, "function": {"arguments": args}});
            if let Some(name) = name {
                call["id"] = json!(format!("c{i}"));
                call["function"]["name"] = json!(name);
            }
            json!({"tool_calls": [call]})
        }),
        Just(json!({"tool_calls": "x"})),
        Just(json!({"content": 7})),
    ];
    prop_oneof![
        6 => (delta, prop::option::of(prop_oneof![Just("stop"), Just("length"), Just("tool_calls")]))
            .prop_map(|(d, f)| json!({"id": "x", "choices": [{"index": 0, "delta": d, "finish_reason": f}]}).to_string()),
        1 => Just("[DONE]".to_owned()),
        1 => Just(r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#.to_owned()),
        1 => Just(r#"{"error":{"message":"boom","code":500}}"#.to_owned()),
        1 => text(),
    ]
}
