//! Chat Completions upstreams: the request body a `/chat/completions` server takes, and the
//! translation of its streamed chunks into Responses-API events.
//!
//! Local and compatible servers (llama.cpp's `llama-server`, vLLM, Ollama's OpenAI endpoint,
//! most hosted gateways) speak Chat Completions only. [`Request::to_chat_completions`] turns a
//! turn's request into their body, and [`ChatStream`] turns their answer, `data:` chunks with
//! `choices[].delta`, tool-call deltas by index, a final usage chunk and `[DONE]`, into the same
//! Responses-API events a `/responses` server streams, to be pushed through a
//! [`Normalizer`](crate::Normalizer). An orchestrator reads one protocol whatever the server.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::event::{
    ErrorEvent, Event, FunctionCallArgumentsDelta, FunctionCallItem, MessageItem, OtherEvent,
    OutputItem, OutputItemEvent, OutputTextDelta, OutputTokensDetails, Response, ResponseEvent,
    Usage,
};
use crate::{Error, ErrorKind, Request, UpstreamFailure};

/// A Chat Completions request body, and what the translation left out.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ChatRequest {
    /// The body to POST to `{base_url}/chat/completions`.
    pub body: Value,
    /// What the Responses request held that a Chat Completions server cannot take and that was
    /// left out without changing the conversation (reasoning items, a reasoning summary, ...),
    /// one sentence each.
    pub notes: Vec<String>,
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::UnsupportedForChat { what: what.into() })
}

impl Request {
    /// The Chat Completions body for this turn.
    ///
    /// - `instructions` become a first `system` message; input messages keep their role
    ///   (`developer` becomes `system`, which every server knows), text parts are joined into
    ///   one string and images become `image_url` parts;
    /// - `function_call` items become an assistant message's `tool_calls` (consecutive calls,
    ///   and the assistant text before them, share one message), `function_call_output` items
    ///   `tool` messages;
    /// - function tools become `{"type": "function", "function": {...}}`; `tool_choice` and
    ///   `parallel_tool_calls` are sent only with tools (servers reject them otherwise);
    /// - `max_output_tokens` is sent as `max_tokens`, `reasoning.effort` as `reasoning_effort`,
    ///   a `json_schema` or `json_object` text format as `response_format`;
    /// - `stream: true` with `stream_options: {"include_usage": true}`, so that the last chunk
    ///   carries the usage.
    ///
    /// Reasoning items in the input and `reasoning.summary` have no Chat Completions form and are
    /// left out with a note. What would change the conversation fails with
    /// `unsupported_for_chat`: hosted tools (`web_search`), `store`, `previous_response_id`,
    /// input items or parts of other types (files, item references, ...).
    ///
    /// ```
    /// use agentwire_exec::{FunctionTool, RequestOptions};
    /// use serde_json::json;
    ///
    /// let mut options = RequestOptions::new();
    /// options.model = "qwen3".to_owned();
    /// options.instructions = Some("Be brief.".to_owned());
    /// options.prompt = Some("Weather in Paris?".to_owned());
    /// options.tools.push(FunctionTool::new("get_weather", json!({"type": "object"}))?);
    /// let chat = options.build()?.to_chat_completions()?;
    /// assert_eq!(chat.body, json!({
    ///     "model": "qwen3",
    ///     "messages": [
    ///         {"role": "system", "content": "Be brief."},
    ///         {"role": "user", "content": "Weather in Paris?"}
    ///     ],
    ///     "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
    ///     "tool_choice": "auto",
    ///     "parallel_tool_calls": true,
    ///     "stream": true,
    ///     "stream_options": {"include_usage": true}
    /// }));
    /// # Ok::<(), agentwire_exec::Error>(())
    /// ```
    pub fn to_chat_completions(&self) -> Result<ChatRequest, Error> {
        if self.store == Some(true) {
            return Err(unsupported(
                "`store` (a Chat Completions server keeps no responses)",
            ));
        }
        if self.previous_response_id.is_some() {
            return Err(unsupported(
                "`previous_response_id` (send the whole conversation instead)",
            ));
        }
        let mut notes = Vec::new();
        let mut messages: Vec<Value> = Vec::new();
        if let Some(instructions) = &self.instructions {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        let mut dropped_reasoning = 0;
        for (index, item) in self.input.iter().enumerate() {
            let field = |key: &str| item.get(key).and_then(Value::as_str);
            let item_type = field("type").unwrap_or("message");
            match item_type {
                "message" => messages.push(chat_message(item, index)?),
                "function_call" => {
                    let call = json!({
                        "id": field("call_id").unwrap_or(""),
                        "type": "function",
                        "function": {
                            "name": field("name").unwrap_or(""),
                            "arguments": field("arguments").unwrap_or(""),
                        }
                    });
                    // Calls join the assistant message just before them.
                    match messages.last_mut() {
                        Some(Value::Object(last))
                            if last.get("role").and_then(Value::as_str) == Some("assistant") =>
                        {
                            let calls = last
                                .entry("tool_calls")
                                .or_insert_with(|| Value::Array(Vec::new()));
                            if let Value::Array(calls) = calls {
                                calls.push(call);
                            }
                        }
                        _ => messages.push(json!({
                            "role": "assistant",
                            "content": null,
                            "tool_calls": [call],
                        })),
                    }
                }
                "function_call_output" => {
                    let content = match item.get("output") {
                        Some(Value::String(text)) => text.clone(),
                        Some(Value::Array(parts)) => text_of(parts, index)?,
                        _ => String::new(),
                    };
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": field("call_id").unwrap_or(""),
                        "content": content,
                    }));
                }
                "reasoning" => dropped_reasoning += 1,
                other => return Err(unsupported(format!("input item {index} of type `{other}`"))),
            }
        }
        if dropped_reasoning > 0 {
            notes.push(format!(
                "{dropped_reasoning} reasoning item(s) of the input left out: Chat Completions \
                 has no reasoning items"
            ));
        }
        let mut body = Map::new();
        body.insert("model".to_owned(), Value::from(self.model.as_str()));
        body.insert("messages".to_owned(), Value::Array(messages));
        let mut tools = Vec::new();
        for tool in self.tools.iter().flatten() {
            match tool.get("type").and_then(Value::as_str) {
                Some("function") => {
                    let mut function = Map::new();
                    for key in ["name", "description", "parameters"] {
                        if let Some(value) = tool.get(key) {
                            function.insert(key.to_owned(), value.clone());
                        }
                    }
                    tools.push(json!({"type": "function", "function": function}));
                }
                other => {
                    return Err(unsupported(format!(
                        "the hosted tool `{}`",
                        other.unwrap_or("?")
                    )))
                }
            }
        }
        if !tools.is_empty() {
            body.insert("tools".to_owned(), Value::Array(tools));
            if let Some(choice) = &self.tool_choice {
                let choice = match choice.get("name") {
                    Some(name) => json!({"type": "function", "function": {"name": name}}),
                    None => choice.clone(),
                };
                body.insert("tool_choice".to_owned(), choice);
            }
            if let Some(parallel) = self.parallel_tool_calls {
                body.insert("parallel_tool_calls".to_owned(), Value::Bool(parallel));
            }
        }
        if let Some(max) = self.max_output_tokens {
            body.insert("max_tokens".to_owned(), Value::from(max));
        }
        if let Some(reasoning) = &self.reasoning {
            if let Some(effort) = reasoning.get("effort").filter(|e| !e.is_null()) {
                body.insert("reasoning_effort".to_owned(), effort.clone());
            }
            if reasoning.get("summary").is_some_and(|s| !s.is_null()) {
                notes.push(
                    "the reasoning summary is left out: Chat Completions servers do not \
                     summarize reasoning"
                        .to_owned(),
                );
            }
        }
        if let Some(format) = self.text.as_ref().and_then(|t| t.get("format")) {
            match format.get("type").and_then(Value::as_str) {
                Some("json_schema") => {
                    let mut schema = format.as_object().cloned().unwrap_or_default();
                    schema.remove("type");
                    body.insert(
                        "response_format".to_owned(),
                        json!({"type": "json_schema", "json_schema": schema}),
                    );
                }
                Some("json_object") => {
                    body.insert("response_format".to_owned(), json!({"type": "json_object"}));
                }
                _ => {}
            }
        }
        body.insert("stream".to_owned(), Value::Bool(true));
        body.insert("stream_options".to_owned(), json!({"include_usage": true}));
        Ok(ChatRequest {
            body: Value::Object(body),
            notes,
        })
    }
}

/// A Responses input message as a chat message.
fn chat_message(item: &Value, index: usize) -> Result<Value, Error> {
    let role = match item.get("role").and_then(Value::as_str) {
        Some("developer") => "system",
        Some(role) => role,
        None => "user",
    };
    let content = match item.get("content") {
        Some(Value::String(text)) => Value::from(text.as_str()),
        Some(Value::Array(parts)) => {
            let images = parts
                .iter()
                .any(|p| p.get("type").and_then(Value::as_str) == Some("input_image"));
            if images {
                let mut out = Vec::new();
                for part in parts {
                    match part.get("type").and_then(Value::as_str) {
                        Some("input_text" | "output_text") => out.push(json!({
                            "type": "text",
                            "text": part.get("text").cloned().unwrap_or(Value::from("")),
                        })),
                        Some("input_image") => {
                            let url =
                                part.get("image_url")
                                    .and_then(Value::as_str)
                                    .ok_or_else(|| {
                                        unsupported(format!(
                                            "input item {index}: an image given by file id"
                                        ))
                                    })?;
                            let mut image = json!({"url": url});
                            if let Some(detail) = part.get("detail") {
                                image["detail"] = detail.clone();
                            }
                            out.push(json!({"type": "image_url", "image_url": image}));
                        }
                        other => {
                            return Err(unsupported(format!(
                                "input item {index}: a content part of type `{}`",
                                other.unwrap_or("?")
                            )))
                        }
                    }
                }
                Value::Array(out)
            } else {
                Value::from(text_of(parts, index)?)
            }
        }
        _ => Value::from(""),
    };
    Ok(json!({"role": role, "content": content}))
}

/// The text of content parts, joined; other parts are unsupported. Refusals of assistant
/// history are text too.
fn text_of(parts: &[Value], index: usize) -> Result<String, Error> {
    let mut text = String::new();
    for part in parts {
        match part.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text") => {
                text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            Some("refusal") => {
                text.push_str(part.get("refusal").and_then(Value::as_str).unwrap_or(""));
            }
            other => {
                return Err(unsupported(format!(
                    "input item {index}: a content part of type `{}`",
                    other.unwrap_or("?")
                )))
            }
        }
    }
    Ok(text)
}

/// One output item being built from chunks.
#[derive(Debug)]
struct Open {
    id: String,
    /// The text (message), reasoning text (reasoning) or arguments (call) so far.
    text: String,
    /// A message's refusal.
    refusal: String,
}

#[derive(Debug)]
struct Call {
    item: Open,
    call_id: String,
    name: String,
    /// Announced with `output_item.added` (needs the name); arguments wait until then.
    announced: bool,
}

/// Translates a streamed Chat Completions answer into Responses-API upstream events.
///
/// Push each chunk's `data` ([`push_json`](ChatStream::push_json)); at the end of the body
/// call [`finish`](ChatStream::finish). Feed what they return to a
/// [`Normalizer`](crate::Normalizer), which makes the stream complete.
///
/// - the first chunk gives `response.created` (its `id`, `created`, `model`);
/// - `delta.reasoning_content` (DeepSeek, llama.cpp, vLLM) or `delta.reasoning` (Ollama,
///   OpenRouter) streams a `reasoning` item as `response.reasoning_text.delta` events, as the
///   Responses API streams raw reasoning;
/// - `delta.content` streams a message, `delta.refusal` its refusal part;
/// - `delta.tool_calls` stream function calls, by `index`: the first delta of an index names the
///   call (`id`, `function.name`), later ones carry `function.arguments`; calls may interleave;
/// - `finish_reason` and `[DONE]` end the turn: every item gets its done event, then
///   `response.completed` with the usage chunk's counts (`prompt_tokens`, `completion_tokens`,
///   cached and reasoning details), or `response.incomplete` for `length`
///   (`max_output_tokens`) and `content_filter`. A body that ends after a `finish_reason` but
///   without `[DONE]` ends the same way; one that ends before is cut (the normalizer reports
///   it);
/// - an `{"error": ...}` chunk, as llama.cpp and vLLM send mid-stream, becomes an `error`
///   event.
///
/// ```
/// use agentwire_exec::{ChatStream, Normalizer, RequestOptions};
///
/// let mut options = RequestOptions::new();
/// options.prompt = Some("hi".to_owned());
/// let request = options.build()?;
/// let mut chat = ChatStream::new();
/// let mut normalizer = Normalizer::new(&request);
/// let mut out = Vec::new();
/// for data in [
///     r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
///     r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"qwen3","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
///     r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"qwen3","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
///     "[DONE]",
/// ] {
///     for event in chat.push_json(data).map_err(|f| f.message).unwrap() {
///         out.extend(normalizer.push(event));
///     }
/// }
/// let jsonl: String = out.iter().map(|e| agentwire_exec::to_string(e) + "\n").collect();
/// let transcript = agentwire_exec::assemble(jsonl.as_bytes())?;
/// assert!(transcript.is_completed());
/// assert_eq!(transcript.text(), "Hello");
/// assert_eq!(transcript.response_id.as_deref(), Some("chatcmpl-1"));
/// assert_eq!(transcript.usage.unwrap().input_tokens, 5);
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct ChatStream {
    started: bool,
    ended: bool,
    failed: bool,
    /// Items in output order, for closing: `r` reasoning, `m` message, `c` call (by index).
    order: Vec<Slot>,
    reasoning: Option<Open>,
    message: Option<Open>,
    calls: BTreeMap<u64, Call>,
    next_item: u64,
    finish_reason: Option<String>,
    usage: Option<Value>,
    /// Choices other than the first were seen (a server that ignored `n: 1`).
    other_choices: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Reasoning,
    Message,
    Call(u64),
}

fn invalid(message: impl Into<String>) -> UpstreamFailure {
    UpstreamFailure::new("invalid_event", message)
}

fn other_event(event_type: &str, fields: Value) -> Event {
    let Value::Object(fields) = fields else {
        unreachable!("callers pass objects")
    };
    Event::Other(OtherEvent::new(event_type, fields))
}

impl ChatStream {
    /// A translator for one answer.
    pub fn new() -> Self {
        ChatStream::default()
    }

    /// Whether the answer has ended (`[DONE]`, or the body ended after a `finish_reason`).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Whether the server sent choices other than the first (they are ignored).
    pub fn saw_other_choices(&self) -> bool {
        self.other_choices
    }

    /// Takes one chunk's `data`. Fails (`invalid_event`) on data that is not a JSON object or a
    /// chunk whose members have the wrong types; nothing is taken after the end.
    pub fn push_json(&mut self, data: &str) -> Result<Vec<Event>, UpstreamFailure> {
        let data = data.trim();
        let mut out = Vec::new();
        if self.ended || self.failed || data.is_empty() {
            return Ok(out);
        }
        if data == "[DONE]" {
            self.end(&mut out);
            return Ok(out);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            invalid(format!(
                "the upstream sent a chunk that is not JSON: {}",
                crate::read::strip_position(&e)
            ))
        })?;
        let Value::Object(chunk) = chunk else {
            return Err(invalid(
                "the upstream sent a chunk that is not a JSON object",
            ));
        };
        if let Some(error) = chunk.get("error") {
            self.failed = true;
            out.push(Event::Error(chat_error(error)));
            return Ok(out);
        }
        if !self.started {
            self.started = true;
            let mut response = Response {
                id: chunk.get("id").and_then(Value::as_str).map(str::to_owned),
                status: Some("in_progress".to_owned()),
                model: chunk
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                ..Response::default()
            };
            if let Some(Value::Number(created)) = chunk.get("created") {
                response.created_at = Some(created.clone());
            }
            out.push(Event::ResponseCreated(ResponseEvent::new(response)));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        let choices = match chunk.get("choices") {
            None | Some(Value::Null) => return Ok(out),
            Some(Value::Array(choices)) => choices,
            Some(_) => return Err(invalid("the upstream sent `choices` that is not a list")),
        };
        for choice in choices {
            let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
            if index != 0 {
                self.other_choices = true;
                continue;
            }
            if let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) {
                self.delta(delta, &mut out)?;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(out)
    }

    /// Takes the end of the body. After a `finish_reason` the answer ends as with `[DONE]`;
    /// before one, nothing is returned and the stream is cut (the normalizer's
    /// [`finish`](crate::Normalizer::finish) reports it).
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        if !self.ended && !self.failed && self.finish_reason.is_some() {
            self.end(&mut out);
        }
        out
    }

    fn new_id(&mut self, prefix: &str) -> String {
        let id = format!("{prefix}_{}", self.next_item);
        self.next_item += 1;
        id
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<Event>) -> Result<(), UpstreamFailure> {
        let text = |key: &str| -> Result<Option<&str>, UpstreamFailure> {
            match delta.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.is_empty())),
                Some(_) => Err(invalid(format!(
                    "the upstream sent a delta whose `{key}` is not a string"
                ))),
            }
        };
        let reasoning = match text("reasoning_content")? {
            Some(r) => Some(r),
            None => text("reasoning")?,
        };
        if let Some(piece) = reasoning {
            if self.reasoning.is_none() {
                let id = self.new_id("rs");
                let item = json!({"type": "reasoning", "id": id, "summary": [], "content": []});
                out.push(Event::OutputItemAdded(OutputItemEvent::new(
                    OutputItem::Other(object(item)),
                )));
                self.order.push(Slot::Reasoning);
                self.reasoning = Some(Open {
                    id,
                    text: String::new(),
                    refusal: String::new(),
                });
            }
            let Some(open) = self.reasoning.as_mut() else {
                unreachable!("opened above")
            };
            open.text.push_str(piece);
            out.push(other_event(
                "response.reasoning_text.delta",
                json!({"item_id": open.id, "content_index": 0, "delta": piece}),
            ));
        }
        let content = text("content")?;
        let refusal = text("refusal")?;
        if content.is_some() || refusal.is_some() {
            if self.message.is_none() {
                let id = self.new_id("msg");
                let mut message = MessageItem::new();
                message.id = Some(id.clone());
                out.push(Event::OutputItemAdded(OutputItemEvent::new(
                    OutputItem::Message(message),
                )));
                self.order.push(Slot::Message);
                self.message = Some(Open {
                    id,
                    text: String::new(),
                    refusal: String::new(),
                });
            }
            let Some(open) = self.message.as_mut() else {
                unreachable!("opened above")
            };
            if let Some(piece) = content {
                open.text.push_str(piece);
                let mut delta = OutputTextDelta::new(piece);
                delta.item_id = Some(open.id.clone());
                delta.content_index = Some(0);
                out.push(Event::OutputTextDelta(delta));
            }
            if let Some(piece) = refusal {
                // The refusal part goes with the message's final form.
                open.refusal.push_str(piece);
            }
        }
        match delta.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(calls)) => {
                for (position, call) in calls.iter().enumerate() {
                    self.tool_call(call, position, out)?;
                }
            }
            Some(_) => return Err(invalid("the upstream sent `tool_calls` that is not a list")),
        }
        Ok(())
    }

    fn tool_call(
        &mut self,
        call: &Value,
        position: usize,
        out: &mut Vec<Event>,
    ) -> Result<(), UpstreamFailure> {
        let string =
            |value: Option<&Value>, what: &str| -> Result<Option<String>, UpstreamFailure> {
                match value {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(invalid(format!(
                        "the upstream sent a tool call whose `{what}` is not a string"
                    ))),
                }
            };
        let call_id = string(call.get("id"), "id")?.filter(|id| !id.is_empty());
        let function = call.get("function");
        let name = string(function.and_then(|f| f.get("name")), "function.name")?
            .filter(|n| !n.is_empty());
        let arguments = string(
            function.and_then(|f| f.get("arguments")),
            "function.arguments",
        )?
        .unwrap_or_default();
        // By `index`; servers that leave it out send whole calls, one per list position, or
        // name a known call by its id.
        let index = match call.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            None => match &call_id {
                Some(id) => self
                    .calls
                    .iter()
                    .find(|(_, c)| c.call_id == *id)
                    .map(|(i, _)| *i)
                    .unwrap_or_else(|| {
                        self.calls
                            .keys()
                            .next_back()
                            .map_or(position as u64, |i| i + 1)
                    }),
                None => self
                    .calls
                    .keys()
                    .next_back()
                    .copied()
                    .unwrap_or(position as u64),
            },
        };
        if !self.calls.contains_key(&index) {
            let id = self.new_id("fc");
            self.order.push(Slot::Call(index));
            self.calls.insert(
                index,
                Call {
                    item: Open {
                        id,
                        text: String::new(),
                        refusal: String::new(),
                    },
                    call_id: String::new(),
                    name: String::new(),
                    announced: false,
                },
            );
        }
        let Some(state) = self.calls.get_mut(&index) else {
            unreachable!("inserted above")
        };
        if let Some(call_id) = call_id {
            if state.call_id.is_empty() {
                state.call_id = call_id;
            }
        }
        if let Some(name) = name {
            if state.name.is_empty() {
                state.name = name;
            }
        }
        state.item.text.push_str(&arguments);
        if !state.announced && !state.name.is_empty() {
            announce(state, index, out);
            if !state.item.text.is_empty() {
                out.push(Event::FunctionCallArgumentsDelta(
                    FunctionCallArgumentsDelta::new(state.item.id.clone(), state.item.text.clone()),
                ));
            }
        } else if state.announced && !arguments.is_empty() {
            out.push(Event::FunctionCallArgumentsDelta(
                FunctionCallArgumentsDelta::new(state.item.id.clone(), arguments),
            ));
        }
        Ok(())
    }

    /// Closes every item, then the terminal event.
    fn end(&mut self, out: &mut Vec<Event>) {
        self.ended = true;
        for slot in std::mem::take(&mut self.order) {
            match slot {
                Slot::Reasoning => {
                    if let Some(open) = self.reasoning.take() {
                        out.push(other_event(
                            "response.reasoning_text.done",
                            json!({"item_id": open.id, "content_index": 0, "text": open.text}),
                        ));
                        let item = json!({
                            "type": "reasoning",
                            "id": open.id,
                            "summary": [],
                            "content": [{"type": "reasoning_text", "text": open.text}],
                        });
                        out.push(Event::OutputItemDone(OutputItemEvent::new(
                            OutputItem::Other(object(item)),
                        )));
                    }
                }
                Slot::Message => {
                    if let Some(open) = self.message.take() {
                        // A refusal-only message has no text part.
                        let mut content = Vec::new();
                        if !open.text.is_empty() || open.refusal.is_empty() {
                            content.push(
                                json!({"type": "output_text", "text": open.text, "annotations": []}),
                            );
                        }
                        if !open.refusal.is_empty() {
                            content.push(json!({"type": "refusal", "refusal": open.refusal}));
                        }
                        let item = json!({"type": "message", "id": open.id, "role": "assistant", "status": "completed", "content": content});
                        if let Ok(item) = serde_json::from_value::<OutputItem>(item) {
                            out.push(Event::OutputItemDone(OutputItemEvent::new(item)));
                        }
                    }
                }
                Slot::Call(index) => {
                    if let Some(mut state) = self.calls.remove(&index) {
                        if !state.announced {
                            // A call that never said its name: keep it, nameless.
                            announce(&mut state, index, out);
                            if !state.item.text.is_empty() {
                                out.push(Event::FunctionCallArgumentsDelta(
                                    FunctionCallArgumentsDelta::new(
                                        state.item.id.clone(),
                                        state.item.text.clone(),
                                    ),
                                ));
                            }
                        }
                        let mut call = FunctionCallItem::new(state.call_id, state.name);
                        call.id = Some(state.item.id);
                        call.arguments = Some(state.item.text);
                        call.status = Some("completed".to_owned());
                        out.push(Event::OutputItemDone(OutputItemEvent::new(
                            OutputItem::FunctionCall(call),
                        )));
                    }
                }
            }
        }
        let usage = self.usage.take().map(|u| chat_usage(&u));
        let mut response = Response {
            usage,
            ..Response::default()
        };
        let incomplete = match self.finish_reason.as_deref() {
            Some("length") => Some("max_output_tokens"),
            Some("content_filter") => Some("content_filter"),
            _ => None,
        };
        match incomplete {
            Some(reason) => {
                response.incomplete_details = Some(json!({"reason": reason}));
                out.push(Event::ResponseIncomplete(ResponseEvent::new(response)));
            }
            None => out.push(Event::ResponseCompleted(ResponseEvent::new(response))),
        }
    }
}

fn announce(state: &mut Call, index: u64, out: &mut Vec<Event>) {
    state.announced = true;
    if state.call_id.is_empty() {
        state.call_id = format!("call_{index}");
    }
    let mut item = FunctionCallItem::new(state.call_id.clone(), state.name.clone());
    item.id = Some(state.item.id.clone());
    out.push(Event::OutputItemAdded(OutputItemEvent::new(
        OutputItem::FunctionCall(item),
    )));
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// An `{"error": ...}` chunk as an `error` event: the message, a string `code` (else the
/// `type`), `param`, and the whole error object.
fn chat_error(error: &Value) -> ErrorEvent {
    let field = |key: &str| error.get(key).and_then(Value::as_str);
    let message = field("message")
        .or_else(|| error.as_str())
        .unwrap_or("the upstream reported an error");
    let code = field("code").or_else(|| field("type")).map(str::to_owned);
    let mut event = ErrorEvent::new(code, message);
    event.param = field("param").map(str::to_owned);
    if error.is_object() {
        event.extra.insert("error".to_owned(), error.clone());
    }
    event
}

/// Chat Completions usage as Responses usage.
fn chat_usage(usage: &Value) -> Usage {
    let count = |value: Option<&Value>| value.and_then(Value::as_u64).unwrap_or(0);
    let input = count(usage.get("prompt_tokens"));
    let output = count(usage.get("completion_tokens"));
    let cached = count(usage.pointer("/prompt_tokens_details/cached_tokens"));
    let mut converted = Usage::new(input, output, cached);
    converted.output_tokens_details = Some(OutputTokensDetails {
        reasoning_tokens: Some(count(
            usage.pointer("/completion_tokens_details/reasoning_tokens"),
        )),
        extra: Map::new(),
    });
    if let Some(total) = usage.get("total_tokens").and_then(Value::as_u64) {
        converted.total_tokens = Some(total);
    }
    converted
}
