//! The round-trip oracle for `agentwire-exec`'s decoders: the JSONL event reader, the SSE
//! decoder and the normalizer that turns any upstream stream into the promised protocol; and
//! generated upstream turns (Responses and Chat Completions) with what they mean, for checking
//! that every stream `agentwire exec` prints assembles to the turn the upstream meant.

use agentwire_exec::{
    assemble, from_str, to_string, Assembler, Event, EventReader, Normalizer, RequestOptions,
    SseDecoder,
};
use serde_json::{json, Value};

use crate::{Bug, Roundtrip};

/// The SSE event-size limit used by [`sse`], small so that fuzzing reaches it.
pub const SSE_LIMIT: usize = 4096;

/// Reads `input` as JSONL events. Every event that reads writes back to a line that reads
/// as the same event; bad lines are typed errors and reading continues after them; the
/// assembler takes whatever the reader produced without panicking.
pub fn jsonl(input: &[u8]) -> Result<Roundtrip, Bug> {
    let mut reader = EventReader::new(input).max_line_bytes(64 * 1024);
    let mut assembler = Assembler::new().max_output_bytes(1 << 20);
    let mut rejected = None;
    let mut lines_seen = 0;
    loop {
        match reader.read_event() {
            Ok(None) => break,
            Ok(Some(event)) => {
                let line = to_string(&event);
                let back = from_str(&line)
                    .map_err(|e| Bug(format!("written event does not read back: {e}\n{line}")))?;
                if to_string(&back) != line {
                    return Err(Bug(format!(
                        "event changes on a second round trip:\n{line}\n{}",
                        to_string(&back)
                    )));
                }
                let _ = assembler.push(&event);
            }
            Err(e) => {
                if e.line().is_none() {
                    return Err(Bug(format!("reader error without a line number: {e}")));
                }
                rejected.get_or_insert_with(|| e.to_string());
            }
        }
        lines_seen += 1;
        if lines_seen > input.len() + 1 {
            return Err(Bug("the reader does not advance".to_owned()));
        }
    }
    let _ = assembler.finish();
    Ok(rejected.map_or(Roundtrip::Ok, Roundtrip::Rejected))
}

/// Decodes `input` as an SSE body, whole and split at `split`: both give the same events (or
/// both fail), no event's data exceeds [`SSE_LIMIT`], and the normalizer turns the events into
/// a well-formed stream (consecutive sequence numbers, exactly one terminal event, last) that
/// the assembler accepts.
pub fn sse(input: &[u8], split: usize) -> Result<Roundtrip, Bug> {
    let decode = |chunks: &[&[u8]]| {
        let mut decoder = SseDecoder::new().max_event_bytes(SSE_LIMIT);
        let mut events = Vec::new();
        for chunk in chunks {
            decoder
                .feed(chunk, &mut events)
                .map_err(|e| e.to_string())?;
        }
        decoder.finish();
        Ok::<_, String>(events)
    };
    let split = split.min(input.len());
    let whole = decode(&[input]);
    let parts = decode(&[&input[..split], &input[split..]]);
    let events = match (whole, parts) {
        (Ok(a), Ok(b)) if a == b => a,
        (Err(_), Err(_)) => return Ok(Roundtrip::Rejected("sse".to_owned())),
        (a, b) => {
            return Err(Bug(format!(
                "chunking changes the SSE result (split at {split}):\n{a:?}\n{b:?}"
            )))
        }
    };
    if let Some(big) = events.iter().find(|e| e.data.len() > SSE_LIMIT) {
        return Err(Bug(format!(
            "an event of {} bytes passed the {SSE_LIMIT}-byte limit",
            big.data.len()
        )));
    }
    let mut options = RequestOptions::new();
    options.prompt = Some("hi".to_owned());
    let request = options
        .build()
        .map_err(|e| Bug(format!("a prompt-only request does not build: {e}")))?;
    let mut normalizer = Normalizer::new(&request);
    let mut out = Vec::new();
    for event in &events {
        out.extend(normalizer.push_sse(event));
    }
    out.extend(normalizer.finish());
    check_wellformed(&out)?;
    let jsonl: String = out.iter().map(|e| to_string(e) + "\n").collect();
    assemble(jsonl.as_bytes()).map_err(|e| {
        Bug(format!(
            "the normalized stream does not assemble: {e}\n{jsonl}"
        ))
    })?;
    Ok(Roundtrip::Ok)
}

/// Reads choices out of fuzzer (or proptest) bytes: each call takes the next byte, 0 once they
/// run out, so any input is a valid description and a short one a small turn.
#[derive(Debug)]
pub struct Choices<'a> {
    bytes: &'a [u8],
}

impl<'a> Choices<'a> {
    /// Choices read from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Choices { bytes }
    }

    fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (`n` ≥ 1).
    pub fn below(&mut self, n: u8) -> u8 {
        self.byte() % n.max(1)
    }

    /// A coin toss.
    pub fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// A short text with the characters that matter in JSON and UTF-8.
    pub fn text(&mut self) -> String {
        const ALPHABET: [&str; 12] = [
            "a", "b", "é", "😀", "\"", "\\", " ", "\n", "{", "}", ":", "\u{2028}",
        ];
        let len = self.below(6);
        (0..len)
            .map(|_| ALPHABET[usize::from(self.below(ALPHABET.len() as u8))])
            .collect()
    }

    fn pieces(&mut self, max: u8) -> Vec<String> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.text()).collect()
    }
}

/// How a generated upstream turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `response.completed`, with or without its `output`.
    Completed,
    /// `response.incomplete`.
    Incomplete,
    /// `response.failed`.
    Failed,
    /// An `error` event and no terminal event.
    Error,
    /// The body just stops.
    Cut,
}

/// What a generated turn means: what a consumer of the protocol must end up with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meant {
    /// How it ends: `completed`, `failed` or `incomplete`.
    pub outcome: &'static str,
    /// The text of each message, in output order (for completed turns).
    pub messages: Vec<String>,
    /// `(call_id, name, arguments)` of each call, in output order (for completed turns).
    pub calls: Vec<(String, String, String)>,
    /// `(id, encrypted_content)` of each reasoning item (for completed turns).
    pub reasoning: Vec<(String, String)>,
}

/// A generated upstream turn: the events a Responses server sends, and what they mean.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The upstream events, in order.
    pub upstream: Vec<Value>,
    /// What they mean.
    pub meant: Meant,
}

#[derive(Debug)]
enum Spec {
    Message(Vec<Vec<String>>),
    Call(Vec<String>),
    Reasoning(Vec<String>),
}

/// A Responses-API upstream turn, from bytes: any mix of messages (several parts), calls and
/// reasoning items, in any dialect (with or without `response.created`, item and part
/// announcements, done events, ids, sequence numbers), with the ways upstreams differ from
/// their deltas (a call left open at `response.completed` with its arguments only in the
/// completed response, final text or arguments that contradict the deltas, items that only the
/// completed response shows), and any ending.
pub fn turn(bytes: &[u8]) -> Turn {
    let mut c = Choices::new(bytes);
    let sequence_numbers = c.flag();
    let created = c.flag();
    let announce_items = c.flag();
    let announce_parts = c.flag();
    let text_done = c.flag();
    let arguments_done = c.flag();
    let item_done = c.flag();
    let final_output = c.flag();
    let ending = match c.below(8) {
        0 => Ending::Incomplete,
        1 => Ending::Failed,
        2 => Ending::Error,
        3 => Ending::Cut,
        _ => Ending::Completed,
    };
    let count = c.below(4);
    let mut specs = Vec::new();
    for _ in 0..count {
        specs.push(match c.below(3) {
            0 => Spec::Message((0..1 + c.below(2)).map(|_| c.pieces(3)).collect()),
            1 => Spec::Call(c.pieces(4)),
            _ => Spec::Reasoning(c.pieces(3)),
        });
    }
    let mut events = Vec::new();
    if created {
        events.push(json!({"type": "response.created", "response": {"id": "resp_g", "status": "in_progress"}}));
    }
    let mut meant = Meant {
        outcome: match ending {
            Ending::Completed => "completed",
            Ending::Incomplete => "incomplete",
            _ => "failed",
        },
        messages: Vec::new(),
        calls: Vec::new(),
        reasoning: Vec::new(),
    };
    let mut output = Vec::new();
    let completed = ending == Ending::Completed;
    for (index, spec) in specs.iter().enumerate() {
        // The last item may exist only in the completed response's output.
        let hidden = completed && final_output && index + 1 == specs.len() && c.below(4) == 0;
        match spec {
            Spec::Message(parts) => {
                let id = format!("msg_{index}");
                let finals: Vec<String> = parts.iter().map(|p| p.concat()).collect();
                // Sometimes the final text contradicts (or extends) the deltas.
                let twist = c.below(4);
                let finals: Vec<String> = match twist {
                    0 if text_done || item_done || final_output => {
                        finals.iter().map(|t| format!("{t}!")).collect()
                    }
                    1 if text_done || item_done || final_output => {
                        finals.iter().map(|t| format!("x{t}")).collect()
                    }
                    _ => finals,
                };
                let shows_final = text_done || item_done || (completed && final_output);
                let finals = if shows_final
                    || finals == parts.iter().map(|p| p.concat()).collect::<Vec<_>>()
                {
                    finals
                } else {
                    parts.iter().map(|p| p.concat()).collect()
                };
                meant.messages.push(finals.concat());
                let item = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
                    "content": finals.iter().map(|t| json!({"type": "output_text", "text": t, "annotations": []})).collect::<Vec<_>>()});
                if !hidden {
                    events.push(json!({"type": "response.output_item.added", "item": {"type": "message", "id": id, "role": "assistant", "content": []}}));
                    for (p, deltas) in parts.iter().enumerate() {
                        if announce_parts || p > 0 {
                            events.push(json!({"type": "response.content_part.added", "item_id": id, "content_index": p, "part": {"type": "output_text", "text": ""}}));
                        }
                        for delta in deltas {
                            events.push(json!({"type": "response.output_text.delta", "item_id": id, "content_index": p, "delta": delta}));
                        }
                        if text_done {
                            events.push(json!({"type": "response.output_text.done", "item_id": id, "content_index": p, "text": finals[p]}));
                        }
                    }
                    if item_done {
                        events.push(
                            json!({"type": "response.output_item.done", "item": item.clone()}),
                        );
                    }
                }
                output.push(item);
            }
            Spec::Call(deltas) => {
                let id = format!("fc_{index}");
                let call_id = format!("call_{index}");
                let arguments = deltas.concat();
                let twist = c.below(4);
                // Left open: only part of the deltas, the rest only in the completed output.
                let sent: Vec<String> =
                    if twist == 0 && completed && final_output && !arguments_done && !item_done {
                        deltas[..deltas.len() / 2].to_vec()
                    } else if twist == 1 && (arguments_done || item_done) && !arguments.is_empty() {
                        // (Empty final arguments mean "not given": only a non-empty one can
                        // contradict the deltas.)
                        vec![format!("garbled{}", deltas.concat())]
                    } else {
                        deltas.clone()
                    };
                meant
                    .calls
                    .push((call_id.clone(), "tool".to_owned(), arguments.clone()));
                let item = json!({"type": "function_call", "id": id, "call_id": call_id, "name": "tool", "arguments": arguments, "status": "completed"});
                if !hidden {
                    let announce =
                        announce_items || !sent.is_empty() || arguments_done || !item_done;
                    if announce {
                        events.push(json!({"type": "response.output_item.added",
                            "item": {"type": "function_call", "id": id, "call_id": call_id, "name": "tool", "arguments": ""}}));
                        for delta in &sent {
                            events.push(json!({"type": "response.function_call_arguments.delta", "item_id": id, "delta": delta}));
                        }
                        if arguments_done {
                            events.push(json!({"type": "response.function_call_arguments.done", "item_id": id, "arguments": arguments}));
                        }
                    }
                    // (Whenever `sent` differs from the deltas, a final value says the
                    // arguments: `arguments.done`, the item, or the completed output.)
                    if item_done {
                        events.push(
                            json!({"type": "response.output_item.done", "item": item.clone()}),
                        );
                    }
                }
                output.push(item);
            }
            Spec::Reasoning(summary) => {
                let id = format!("rs_{index}");
                let encrypted = format!("enc-{index}");
                meant.reasoning.push((id.clone(), encrypted.clone()));
                let text = summary.concat();
                let item = json!({"type": "reasoning", "id": id, "summary": [{"type": "summary_text", "text": text}], "encrypted_content": encrypted});
                if !hidden {
                    events.push(json!({"type": "response.output_item.added", "item": {"type": "reasoning", "id": id, "summary": []}}));
                    for delta in summary {
                        events.push(json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "summary_index": 0, "delta": delta}));
                    }
                    if item_done || !(completed && final_output) {
                        events.push(
                            json!({"type": "response.output_item.done", "item": item.clone()}),
                        );
                    }
                }
                output.push(item);
            }
        }
    }
    match ending {
        Ending::Completed => {
            let mut response = json!({"id": "resp_g", "usage": {"input_tokens": 5, "output_tokens": 7}});
            if final_output {
                response["output"] = Value::Array(output);
            }
            events.push(json!({"type": "response.completed", "response": response}));
        }
        Ending::Incomplete => events.push(json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"}}})),
        Ending::Failed => events.push(json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "failed"}}})),
        Ending::Error => events.push(json!({"type": "error", "code": "server_error", "message": "boom"})),
        Ending::Cut => {}
    }
    if sequence_numbers {
        for (n, event) in events.iter_mut().enumerate() {
            event["sequence_number"] = Value::from(n as u64 * 3 + 7);
        }
    }
    // A message without text deltas, announcements or final text says nothing: it is an
    // empty message all the same (announced above), so the meaning holds.
    Turn {
        upstream: events,
        meant,
    }
}

/// The checks every normalized stream passes, whatever went in: numbered from 0, first
/// `response.created`, one response id, exactly one terminal event and it last.
pub fn check_wellformed(out: &[Event]) -> Result<(), Bug> {
    if out.first().map(Event::event_type) != Some("response.created") {
        return Err(Bug("the stream does not start with response.created".into()));
    }
    if out.iter().filter(|e| e.is_terminal()).count() != 1
        || !out.last().is_some_and(Event::is_terminal)
    {
        return Err(Bug(
            "the normalized stream has no single, final terminal event".into(),
        ));
    }
    let mut ids = out.iter().filter_map(|e| match e {
        Event::ResponseCreated(r)
        | Event::ResponseInProgress(r)
        | Event::ResponseCompleted(r)
        | Event::ResponseFailed(r)
        | Event::ResponseIncomplete(r) => Some(r.response.id.clone()),
        _ => None,
    });
    let first = ids.next();
    if ids.any(|id| id != first.clone().flatten()) {
        return Err(Bug("the response objects do not share one id".into()));
    }
    for (n, event) in out.iter().enumerate() {
        if event.sequence_number() != Some(n as u64) {
            return Err(Bug(format!(
                "event {n} has sequence number {:?}",
                event.sequence_number()
            )));
        }
    }
    Ok(())
}

/// Normalizes `events` for a prompt-only request and returns the JSONL.
fn normalize(
    events: impl IntoIterator<Item = Event>,
    end: Vec<Event>,
) -> Result<(Vec<Event>, String), Bug> {
    let mut options = RequestOptions::new();
    options.prompt = Some("hi".to_owned());
    let request = options
        .build()
        .map_err(|e| Bug(format!("a prompt-only request does not build: {e}")))?;
    let mut normalizer = Normalizer::new(&request);
    let mut out = Vec::new();
    for event in events {
        out.extend(normalizer.push(event));
    }
    for event in end {
        out.extend(normalizer.push(event));
    }
    out.extend(normalizer.finish());
    check_wellformed(&out)?;
    let jsonl: String = out.iter().map(|e| to_string(e) + "\n").collect();
    Ok((out, jsonl))
}

/// Compares what a normalized stream assembles to with what the turn meant.
fn compare(jsonl: &str, meant: &Meant) -> Result<(), Bug> {
    let transcript = assemble(jsonl.as_bytes()).map_err(|e| {
        Bug(format!(
            "the normalized stream does not assemble: {e}\n{jsonl}"
        ))
    })?;
    let outcome = transcript
        .outcome
        .map_or("truncated", agentwire_exec::Outcome::status);
    if outcome != meant.outcome {
        return Err(Bug(format!(
            "the turn meant `{}`, the stream says `{outcome}`\n{jsonl}",
            meant.outcome
        )));
    }
    if meant.outcome != "completed" {
        return Ok(());
    }
    let messages: Vec<String> = transcript.messages.iter().map(|m| m.text.clone()).collect();
    let calls: Vec<(String, String, String)> = transcript
        .tool_calls
        .iter()
        .map(|c| (c.call_id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    let reasoning: Vec<(String, String)> = transcript
        .items
        .iter()
        .filter(|i| i.item_type() == "reasoning")
        .map(|i| {
            let v = serde_json::to_value(i).unwrap_or_default();
            (
                v["id"].as_str().unwrap_or("").to_owned(),
                v["encrypted_content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    if (messages.as_slice(), calls.as_slice(), reasoning.as_slice())
        != (
            meant.messages.as_slice(),
            meant.calls.as_slice(),
            meant.reasoning.as_slice(),
        )
    {
        return Err(Bug(format!(
            "the stream assembles to another turn than the upstream meant:\n\
             messages {messages:?}\n   meant {:?}\ncalls {calls:?}\nmeant {:?}\nreasoning {reasoning:?}\n    meant {:?}\n{jsonl}",
            meant.messages, meant.calls, meant.reasoning
        )));
    }
    if !transcript.unfinished.is_empty() {
        return Err(Bug(format!(
            "a completed turn left items unfinished: {:?}\n{jsonl}",
            transcript.unfinished
        )));
    }
    Ok(())
}

/// Normalizes a generated turn ([`turn`]) and checks that the stream is well formed and
/// assembles, with [`agentwire_exec::assemble`], to the turn the upstream meant. Returns the
/// JSONL.
pub fn check_turn(turn: &Turn) -> Result<String, Bug> {
    let events: Vec<Event> = turn
        .upstream
        .iter()
        .map(|v| {
            from_str(&v.to_string())
                .map_err(|e| Bug(format!("a generated event does not read: {e}: {v}")))
        })
        .collect::<Result<_, _>>()?;
    let (_, jsonl) = normalize(events, Vec::new())?;
    compare(&jsonl, &turn.meant)?;
    Ok(jsonl)
}

/// A generated Chat Completions answer: its chunks' `data`, and what it means.
#[derive(Debug, Clone)]
pub struct ChatTurn {
    /// Each chunk's `data` (`[DONE]` included).
    pub chunks: Vec<String>,
    /// What they mean.
    pub meant: Meant,
}

/// A Chat Completions answer, from bytes: optional reasoning (`reasoning_content` or
/// `reasoning`), text, calls whose deltas interleave by index (or whole calls without index, as
/// Ollama sends them), a usage chunk or not, `[DONE]` or not, and `stop`, `tool_calls`, `length`,
/// an error chunk, or a cut.
pub fn chat_turn(bytes: &[u8]) -> ChatTurn {
    let mut c = Choices::new(bytes);
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": "chatcmpl-g", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut chunks = Vec::new();
    let reasoning = c.pieces(3);
    let reasoning_key = if c.flag() {
        "reasoning"
    } else {
        "reasoning_content"
    };
    for piece in &reasoning {
        chunks.push(chunk(json!({reasoning_key: piece}), None));
    }
    let text = c.pieces(3);
    for piece in &text {
        chunks.push(chunk(json!({"content": piece}), None));
    }
    let count = c.below(4);
    let whole = c.flag();
    let calls: Vec<Vec<String>> = (0..count).map(|_| c.pieces(3)).collect();
    if whole {
        for (i, args) in calls.iter().enumerate() {
            chunks.push(chunk(
                json!({"tool_calls": [{"id": format!("call_{i}"), "type": "function",
                                       "function": {"name": "tool", "arguments": args.concat()}}]}),
                None,
            ));
        }
    } else {
        for i in 0..calls.len() {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
                                       "function": {"name": "tool", "arguments": ""}}]}),
                None,
            ));
        }
        // Argument deltas, interleaved across calls.
        let longest = calls.iter().map(Vec::len).max().unwrap_or(0);
        for step in 0..longest {
            for (i, args) in calls.iter().enumerate() {
                if let Some(piece) = args.get(step) {
                    chunks.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                        None,
                    ));
                }
            }
        }
    }
    let (finish, outcome) = match c.below(6) {
        0 => (Some("length"), "incomplete"),
        1 => (None, "failed"),
        2 => (Some("error"), "failed"),
        _ => (
            Some(if calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }),
            "completed",
        ),
    };
    match finish {
        Some("error") => chunks.push(
            json!({"error": {"message": "boom", "type": "server_error", "code": 500}}).to_string(),
        ),
        Some(reason) => {
            chunks.push(chunk(json!({}), Some(reason)));
            if c.flag() {
                chunks.push(
                    json!({"id": "chatcmpl-g", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}})
                        .to_string(),
                );
            }
            if c.flag() {
                chunks.push("[DONE]".to_owned());
            }
        }
        None => {}
    }
    // Empty content (servers send `""` with the role) makes no message.
    let any_text = !text.concat().is_empty();
    ChatTurn {
        chunks,
        meant: Meant {
            outcome,
            messages: if any_text {
                vec![text.concat()]
            } else {
                Vec::new()
            },
            calls: calls
                .iter()
                .enumerate()
                .map(|(i, args)| (format!("call_{i}"), "tool".to_owned(), args.concat()))
                .collect(),
            // Raw reasoning has no encrypted form: the item is kept, with its text.
            reasoning: if reasoning.concat().is_empty() {
                Vec::new()
            } else {
                vec![("rs_0".to_owned(), String::new())]
            },
        },
    }
}

/// Translates a generated Chat Completions answer ([`chat_turn`]) with
/// [`ChatStream`](agentwire_exec::ChatStream), normalizes it, and checks that the stream is well
/// formed and assembles to what the answer meant. Returns the JSONL.
pub fn check_chat_turn(turn: &ChatTurn) -> Result<String, Bug> {
    let mut chat = agentwire_exec::ChatStream::new();
    let mut upstream = Vec::new();
    let mut failed = None;
    for data in &turn.chunks {
        match chat.push_json(data) {
            Ok(events) => upstream.extend(events),
            Err(failure) => {
                failed = Some(failure);
                break;
            }
        }
    }
    if let Some(failure) = failed {
        return Err(Bug(format!(
            "a generated chunk was refused: {}",
            failure.message
        )));
    }
    let end = chat.finish();
    let (_, jsonl) = normalize(upstream, end)?;
    compare(&jsonl, &turn.meant)?;
    Ok(jsonl)
}

/// Arbitrary bytes as Chat Completions chunk data: lines of the input, one chunk each. Bad
/// chunks are typed failures; what is emitted is a well-formed stream that assembles.
pub fn chat_bytes(input: &[u8]) -> Result<Roundtrip, Bug> {
    let text = String::from_utf8_lossy(input);
    let mut chat = agentwire_exec::ChatStream::new();
    let mut options = RequestOptions::new();
    options.prompt = Some("hi".to_owned());
    let request = options
        .build()
        .map_err(|e| Bug(format!("a prompt-only request does not build: {e}")))?;
    let mut normalizer = Normalizer::new(&request);
    let mut out = Vec::new();
    let mut rejected = None;
    for line in text.lines() {
        if normalizer.outcome().is_some() {
            break;
        }
        match chat.push_json(line) {
            Ok(events) => {
                for event in events {
                    out.extend(normalizer.push(event));
                }
            }
            Err(failure) => {
                rejected.get_or_insert_with(|| failure.message.clone());
                out.extend(normalizer.fail(failure));
            }
        }
    }
    for event in chat.finish() {
        out.extend(normalizer.push(event));
    }
    out.extend(normalizer.finish());
    check_wellformed(&out)?;
    let jsonl: String = out.iter().map(|e| to_string(e) + "\n").collect();
    assemble(jsonl.as_bytes()).map_err(|e| {
        Bug(format!(
            "the normalized chat stream does not assemble: {e}\n{jsonl}"
        ))
    })?;
    Ok(rejected.map_or(Roundtrip::Ok, Roundtrip::Rejected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_normalizes() {
        let jsonl = b"{\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\nnot json\n";
        assert!(matches!(jsonl_check(jsonl), Roundtrip::Rejected(_)));
        let body = b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"Hi\"}\n\n";
        for split in 0..body.len() {
            assert_eq!(sse(body, split), Ok(Roundtrip::Ok), "split at {split}");
        }
    }

    fn jsonl_check(input: &[u8]) -> Roundtrip {
        jsonl(input).unwrap()
    }
}
