//! Deterministic offline upstreams: what `agentwire exec --mock` streams instead of a provider.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};

use crate::event::{
    ContentPart, ContentPartEvent, ErrorEvent, Event, FunctionCallArgumentsDelta, FunctionCallItem,
    MessageItem, OtherEvent, OutputItem, OutputItemEvent, OutputTextDelta, OutputTextPart,
    OutputTokensDetails, Response, ResponseEvent, Usage,
};
use crate::{Error, ErrorKind, Request, INCLUDE_ENCRYPTED_REASONING};

/// The text of the `text` mock.
pub const MOCK_TEXT: &str = "mock response text";

/// The longest text delta of the `echo` mock, in bytes.
pub const ECHO_DELTA_BYTES: usize = 64;

/// The longest argument delta of the tool-calling mocks, in bytes.
const ARGUMENT_DELTA_BYTES: usize = 8;

/// The reasoning summary of the mocks, when the request asks for one.
const MOCK_SUMMARY: &str = "mock reasoning summary";

/// The text of the tool-calling mocks when `tool_choice` is `none`.
const NO_TOOL_TEXT: &str = "mock response text (tool_choice none: no tool called)";

/// An offline upstream.
///
/// Every mode is deterministic (fixed ids, `created_at` 0) and its stream, once normalized, is
/// a complete valid stream ending in `response.completed` with usage. Usage is an estimate, one
/// token per four bytes of input items and instructions, and of output.
///
/// | mode | stream |
/// |---|---|
/// | `echo` | the request body's JSON as text, in deltas of at most [`ECHO_DELTA_BYTES`] bytes cut at character boundaries |
/// | `text` | [`MOCK_TEXT`] in three deltas |
/// | `tool-call` | a call of the `tool_choice` function, else the first function tool, with arguments valid for its schema |
/// | `tool-loop` | a call of the first function tool that has no `function_call_output` in the input yet; once every tool has one, a final text quoting the outputs |
///
/// With `tool_choice` `none`, `tool-call` answers with a text instead, and `tool-loop` with its
/// final text. When the request sets `reasoning`, every mode first streams a reasoning item
/// (`rs_mock_<n>`), with a summary when `reasoning.summary` is set and an `encrypted_content`
/// when `include` asks for it. Like the API, a request with `store: false` whose input holds a
/// reasoning item without the `encrypted_content` the mock gave it fails with an `error` event
/// (`Item with id '…' not found`), so a tool loop that drops it is caught offline.
///
/// ```
/// use agentwire_exec::{MockMode, Normalizer, RequestOptions};
///
/// let mut options = RequestOptions::new();
/// options.prompt = Some("hi".to_owned());
/// let request = options.build()?;
/// let mode: MockMode = "text".parse()?;
/// let mut normalizer = Normalizer::new(&request);
/// let mut text = String::new();
/// for upstream in mode.events(&request)? {
///     for event in normalizer.push(upstream) {
///         if let agentwire_exec::Event::OutputTextDelta(d) = &event {
///             text.push_str(&d.delta);
///         }
///     }
/// }
/// assert_eq!(text, "mock response text");
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MockMode {
    /// The request body as text.
    Echo,
    /// A fixed text.
    Text,
    /// One call of a declared tool.
    ToolCall,
    /// A call per tool, one turn each, then a final text.
    ToolLoop,
}

impl MockMode {
    /// Every mode.
    pub const ALL: [MockMode; 4] = [
        MockMode::Echo,
        MockMode::Text,
        MockMode::ToolCall,
        MockMode::ToolLoop,
    ];

    /// The mode's name: `echo`, `text`, `tool-call`, `tool-loop`.
    pub fn name(self) -> &'static str {
        match self {
            MockMode::Echo => "echo",
            MockMode::Text => "text",
            MockMode::ToolCall => "tool-call",
            MockMode::ToolLoop => "tool-loop",
        }
    }

    /// The upstream events answering `request`, before normalization (feed them to a
    /// [`Normalizer`](crate::Normalizer) for the stream `agentwire exec` prints), all at once.
    /// [`stream`](MockMode::stream) gives them one at a time.
    ///
    /// Fails with `mock_needs_tool` when `tool-call` has no function tool to call, and with
    /// `output_too_large` when the answer would exceed
    /// [`DEFAULT_MAX_OUTPUT_BYTES`](crate::DEFAULT_MAX_OUTPUT_BYTES).
    pub fn events(self, request: &Request) -> Result<Vec<Event>, Error> {
        Ok(self
            .stream(request, crate::DEFAULT_MAX_OUTPUT_BYTES)?
            .collect())
    }

    /// The upstream events answering `request`, made one at a time as the iterator is
    /// advanced: a consumer that stops early (a normalizer past its output limit, a cancelled
    /// turn) never pays for the rest.
    ///
    /// The answer's text, arguments and reasoning are planned first, within
    /// `max_output_bytes` (their bytes plus a small allowance per generated JSON value): an
    /// answer that would be larger fails with `output_too_large` before any event is made,
    /// whatever the request holds (an echo of a huge input, a schema asking for a string of
    /// `minLength` 10^12). `mock_needs_tool` when `tool-call` has no function tool to call.
    pub fn stream(self, request: &Request, max_output_bytes: usize) -> Result<MockEvents, Error> {
        let mut plan = Plan::new(request, max_output_bytes);
        if let Some(error) = reasoning_input_error(request) {
            plan.event(Event::Error(error));
            return Ok(plan.finish(false));
        }
        plan.reasoning(request)?;
        let no_tools = request.tool_choice_is_none();
        match self {
            MockMode::Echo => {
                // Measure the echo before making it: a huge input costs no second copy.
                plan.fits(json_len(request))?;
                plan.message(request.to_json())?;
            }
            MockMode::Text => {
                plan.spend(MOCK_TEXT.len())?;
                plan.message_in(&["mock", " response", " text"]);
            }
            MockMode::ToolCall if no_tools => plan.message(NO_TOOL_TEXT.to_owned())?,
            MockMode::ToolCall => {
                let name = request
                    .tool_choice_function()
                    .or_else(|| request.function_tools().next().map(|(name, _)| name))
                    .ok_or(Error::new(ErrorKind::MockNeedsTool))?;
                let schema = request
                    .function_tools()
                    .find(|(n, _)| *n == name)
                    .map_or(Value::Null, |(_, schema)| schema.clone());
                let number = count_items(request, "function_call") + 1;
                plan.call(number, name, &schema)?;
            }
            MockMode::ToolLoop => tool_loop(request, &mut plan, no_tools)?,
        }
        Ok(plan.finish(true))
    }
}

impl FromStr for MockMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        MockMode::ALL
            .into_iter()
            .find(|mode| mode.name() == s)
            .ok_or_else(|| Error::new(ErrorKind::UnknownMockMode { mode: s.to_owned() }))
    }
}

impl fmt::Display for MockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The length of the request's compact JSON, without making it.
fn json_len(request: &Request) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, request);
    count.0
}

fn count_items(request: &Request, item_type: &str) -> usize {
    request
        .input
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some(item_type))
        .count()
}

/// The `encrypted_content` the mocks give reasoning item `id`.
fn mock_encrypted(id: &str) -> String {
    format!("mock-encrypted:{id}")
}

/// What the API answers a stateless request (`store: false`) whose input holds a reasoning item
/// it cannot restore: one without its encrypted content, or with content the mock did not give.
fn reasoning_input_error(request: &Request) -> Option<ErrorEvent> {
    if request.store == Some(true) {
        return None;
    }
    request.input.iter().find_map(|item| {
        if item.get("type").and_then(Value::as_str) != Some("reasoning") {
            return None;
        }
        let id = item.get("id").and_then(Value::as_str).unwrap_or("");
        let message = match item.get("encrypted_content").and_then(Value::as_str) {
            None => format!(
                "Item with id '{id}' not found. Items are not persisted when `store` is set to \
                 false. Try again with `store` set to true, or remove this item from your input."
            ),
            Some(content) if content != mock_encrypted(id) => {
                format!("The encrypted content for item {id} could not be verified.")
            }
            Some(_) => return None,
        };
        let mut error = ErrorEvent::new(None, message.clone());
        error.param = Some("input".to_owned());
        error.extra.insert(
            "error".to_owned(),
            json!({"type": "invalid_request_error", "code": null, "message": message, "param": "input"}),
        );
        Some(error)
    })
}

fn tool_loop(request: &Request, plan: &mut Plan, no_tools: bool) -> Result<(), Error> {
    // call_id -> tool name, and the tools whose calls have an output.
    let mut calls = HashMap::new();
    let mut answered = HashSet::new();
    let mut outputs = Vec::new();
    for item in &request.input {
        let field = |key: &str| item.get(key).and_then(Value::as_str);
        match field("type") {
            Some("function_call") => {
                if let (Some(call_id), Some(name)) = (field("call_id"), field("name")) {
                    calls.insert(call_id, name);
                }
            }
            Some("function_call_output") => {
                if let Some(name) = field("call_id").and_then(|id| calls.get(id)) {
                    answered.insert(*name);
                    let output = match item.get("output") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    outputs.push(format!("{name}: {output}"));
                }
            }
            _ => {}
        }
    }
    let pending = request
        .function_tools()
        .find(|(name, _)| !answered.contains(name))
        .filter(|_| !no_tools);
    match pending {
        Some((name, schema)) => {
            let schema = schema.clone();
            plan.call(calls.len() + 1, name, &schema)
        }
        None => {
            let text = if outputs.is_empty() {
                "mock tool-loop result: no tool outputs".to_owned()
            } else {
                format!("mock tool-loop result: {}", outputs.join("; "))
            };
            plan.message(text)
        }
    }
}

/// The end of the next piece of `text` from `at`: at most `max` bytes, cut at a character
/// boundary (a character longer than `max` bytes is taken whole).
fn piece_end(text: &str, at: usize, max: usize) -> usize {
    let mut end = (at + max).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == at {
        end = at + text[at..].chars().next().map_or(0, char::len_utf8);
    }
    end
}

/// Cuts `text` into pieces of at most `max` bytes, at character boundaries.
#[cfg(test)]
fn chunks(text: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let end = piece_end(text, at, max);
        pieces.push(&text[at..end]);
        at = end;
    }
    pieces
}

/// What the deltas of a [`Step::Pieces`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PieceKind {
    Text,
    Arguments,
    Summary,
}

#[derive(Debug)]
enum Step {
    Event(Box<Event>),
    /// `text` cut into deltas of at most `max` bytes for item `item_id`, from byte `at` on.
    Pieces {
        kind: PieceKind,
        item_id: String,
        text: String,
        at: usize,
        max: usize,
    },
}

/// The events of a mock answer, made as they are taken (see [`MockMode::stream`]).
#[derive(Debug)]
pub struct MockEvents {
    steps: VecDeque<Step>,
}

impl Iterator for MockEvents {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            match self.steps.front_mut()? {
                Step::Event(_) => {
                    let Some(Step::Event(event)) = self.steps.pop_front() else {
                        unreachable!("the front step is an event")
                    };
                    return Some(*event);
                }
                Step::Pieces {
                    kind,
                    item_id,
                    text,
                    at,
                    max,
                } => {
                    if *at >= text.len() {
                        self.steps.pop_front();
                        continue;
                    }
                    let end = piece_end(text, *at, *max);
                    let piece = text[*at..end].to_owned();
                    *at = end;
                    let item_id = item_id.clone();
                    return Some(match kind {
                        PieceKind::Text => {
                            let mut delta = OutputTextDelta::new(piece);
                            delta.item_id = Some(item_id);
                            Event::OutputTextDelta(delta)
                        }
                        PieceKind::Arguments => Event::FunctionCallArgumentsDelta(
                            FunctionCallArgumentsDelta::new(item_id, piece),
                        ),
                        PieceKind::Summary => other_event(
                            "response.reasoning_summary_text.delta",
                            json!({"item_id": item_id, "summary_index": 0, "delta": piece}),
                        ),
                    });
                }
            }
        }
    }
}

fn other_event(event_type: &str, fields: Value) -> Event {
    let Value::Object(fields) = fields else {
        unreachable!("callers pass objects")
    };
    Event::Other(OtherEvent::new(event_type, fields))
}

/// Plans a mock answer within an output budget.
struct Plan {
    steps: VecDeque<Step>,
    input_bytes: usize,
    output_bytes: usize,
    reasoning_bytes: usize,
    limit: usize,
}

impl Plan {
    fn new(request: &Request, limit: usize) -> Self {
        let input_bytes = request
            .input
            .iter()
            .map(|i| i.to_string().len())
            .sum::<usize>()
            + request.instructions.as_ref().map_or(0, String::len);
        let response = Response {
            id: Some("resp_mock".to_owned()),
            status: Some("in_progress".to_owned()),
            ..Response::default()
        };
        let steps = VecDeque::from([
            Step::Event(Box::new(Event::ResponseCreated(ResponseEvent::new(
                response.clone(),
            )))),
            Step::Event(Box::new(Event::ResponseInProgress(ResponseEvent::new(
                response,
            )))),
        ]);
        Plan {
            steps,
            input_bytes,
            output_bytes: 0,
            reasoning_bytes: 0,
            limit,
        }
    }

    /// Fails unless `bytes` more output fit.
    fn fits(&self, bytes: usize) -> Result<(), Error> {
        if self.output_bytes.saturating_add(bytes) > self.limit {
            return Err(Error::new(ErrorKind::OutputTooLarge { limit: self.limit }));
        }
        Ok(())
    }

    fn spend(&mut self, bytes: usize) -> Result<(), Error> {
        self.fits(bytes)?;
        self.output_bytes += bytes;
        Ok(())
    }

    fn event(&mut self, event: Event) {
        self.steps.push_back(Step::Event(Box::new(event)));
    }

    /// A reasoning item first, when the request asks a reasoning model.
    fn reasoning(&mut self, request: &Request) -> Result<(), Error> {
        let Some(reasoning) = &request.reasoning else {
            return Ok(());
        };
        let id = format!("rs_mock_{}", count_items(request, "reasoning") + 1);
        self.event(Event::OutputItemAdded(OutputItemEvent::new(
            OutputItem::Other(object(
                json!({"type": "reasoning", "id": id, "summary": []}),
            )),
        )));
        let mut summary = Vec::new();
        if reasoning.get("summary").is_some_and(|s| !s.is_null()) {
            self.spend(MOCK_SUMMARY.len())?;
            self.reasoning_bytes += MOCK_SUMMARY.len();
            let part = json!({"type": "summary_text", "text": ""});
            self.event(other_event(
                "response.reasoning_summary_part.added",
                json!({"item_id": id, "summary_index": 0, "part": part}),
            ));
            self.steps.push_back(Step::Pieces {
                kind: PieceKind::Summary,
                item_id: id.clone(),
                text: MOCK_SUMMARY.to_owned(),
                at: 0,
                max: 8,
            });
            self.event(other_event(
                "response.reasoning_summary_text.done",
                json!({"item_id": id, "summary_index": 0, "text": MOCK_SUMMARY}),
            ));
            let part = json!({"type": "summary_text", "text": MOCK_SUMMARY});
            self.event(other_event(
                "response.reasoning_summary_part.done",
                json!({"item_id": id, "summary_index": 0, "part": part}),
            ));
            summary.push(part);
        }
        let mut done = object(json!({"type": "reasoning", "id": id, "summary": summary}));
        if request.includes(INCLUDE_ENCRYPTED_REASONING) {
            done.insert(
                "encrypted_content".to_owned(),
                Value::from(mock_encrypted(&id)),
            );
        }
        self.event(Event::OutputItemDone(OutputItemEvent::new(
            OutputItem::Other(done),
        )));
        Ok(())
    }

    fn message(&mut self, text: String) -> Result<(), Error> {
        self.spend(text.len())?;
        self.message_steps(Step::Pieces {
            kind: PieceKind::Text,
            item_id: "msg_mock".to_owned(),
            text,
            at: 0,
            max: ECHO_DELTA_BYTES,
        });
        Ok(())
    }

    /// A message streamed in exactly these deltas.
    fn message_in(&mut self, pieces: &[&str]) {
        let mut first = true;
        for piece in pieces {
            let step = Step::Pieces {
                kind: PieceKind::Text,
                item_id: "msg_mock".to_owned(),
                text: (*piece).to_owned(),
                at: 0,
                max: usize::MAX,
            };
            if first {
                self.message_steps(step);
                first = false;
            } else {
                // Before the done event the message's steps end with.
                let at = self.steps.len() - 1;
                self.steps.insert(at, step);
            }
        }
    }

    fn message_steps(&mut self, pieces: Step) {
        let id = "msg_mock".to_owned();
        let mut message = MessageItem::new();
        message.id = Some(id.clone());
        message.status = Some("in_progress".to_owned());
        message.content = Some(Vec::new());
        self.event(Event::OutputItemAdded(OutputItemEvent::new(
            OutputItem::Message(message.clone()),
        )));
        let mut part = ContentPartEvent::new(ContentPart::OutputText(OutputTextPart::new("")));
        part.item_id = Some(id);
        self.event(Event::ContentPartAdded(part));
        self.steps.push_back(pieces);
        message.status = Some("completed".to_owned());
        message.content = None;
        self.event(Event::OutputItemDone(OutputItemEvent::new(
            OutputItem::Message(message),
        )));
    }

    fn call(&mut self, number: usize, name: &str, schema: &Value) -> Result<(), Error> {
        let id = format!("fc_mock_{number}");
        let mut call = FunctionCallItem::new(format!("call_mock_{number}"), name);
        call.id = Some(id.clone());
        call.arguments = Some(String::new());
        call.status = Some("in_progress".to_owned());
        self.event(Event::OutputItemAdded(OutputItemEvent::new(
            OutputItem::FunctionCall(call.clone()),
        )));
        let budget = self.limit.saturating_sub(self.output_bytes);
        let arguments = instance(schema, budget)?.to_string();
        self.spend(arguments.len() + name.len())?;
        self.steps.push_back(Step::Pieces {
            kind: PieceKind::Arguments,
            item_id: id,
            text: arguments,
            at: 0,
            max: ARGUMENT_DELTA_BYTES,
        });
        call.arguments = None;
        call.status = Some("completed".to_owned());
        self.event(Event::OutputItemDone(OutputItemEvent::new(
            OutputItem::FunctionCall(call),
        )));
        Ok(())
    }

    /// Ends the answer: `response.completed` with usage (`completed`), or nothing more (a
    /// failed request, whose `error` event the normalizer follows with `response.failed`).
    fn finish(mut self, completed: bool) -> MockEvents {
        if completed {
            let tokens = |bytes: usize| bytes.div_ceil(4) as u64;
            let mut usage = Usage::new(tokens(self.input_bytes), tokens(self.output_bytes), 0);
            usage.output_tokens_details = Some(OutputTokensDetails {
                reasoning_tokens: Some(tokens(self.reasoning_bytes)),
                extra: Map::new(),
            });
            let response = Response {
                id: Some("resp_mock".to_owned()),
                status: Some("completed".to_owned()),
                usage: Some(usage),
                ..Response::default()
            };
            self.event(Event::ResponseCompleted(ResponseEvent::new(response)));
        }
        MockEvents { steps: self.steps }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The deepest schema nesting the instance generator follows.
const MAX_DEPTH: usize = 16;

/// What one generated JSON value counts against the budget, besides its strings' bytes: about
/// what it costs in memory, so that the budget bounds memory too.
const NODE_COST: usize = 64;

/// The bytes an instance may still take.
struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    fn spend(&mut self, bytes: usize) -> Result<(), Error> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(Error::new(ErrorKind::OutputTooLarge { limit: self.limit })),
        }
    }

    /// A copy of a value taken from the schema (`const`, `enum`, ...), paid for.
    fn copy(&mut self, value: &Value) -> Result<Value, Error> {
        self.spend(NODE_COST.saturating_add(value.to_string().len()))?;
        Ok(value.clone())
    }
}

/// A value valid for the JSON Schema `schema`, as small and predictable as possible: `const`,
/// `enum`, `default` and `examples` first, then by type (objects with their declared
/// properties, strings honouring `format` and length bounds, numbers inside their bounds and
/// multiples, arrays of `minItems` items). Local `$ref`s are followed; `pattern` is not
/// honoured.
///
/// Generating takes time and memory linear in the instance, which may cost at most `budget`
/// bytes (its strings plus [`NODE_COST`] per value): past it, `output_too_large`.
pub(crate) fn instance(schema: &Value, budget: usize) -> Result<Value, Error> {
    let mut budget = Budget {
        left: budget,
        limit: budget,
    };
    let value = generate(schema, schema, 0, &mut budget)?;
    // A function's arguments are an object.
    Ok(if value.is_object() {
        value
    } else {
        Value::Object(Map::new())
    })
}

fn generate(
    schema: &Value,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> Result<Value, Error> {
    budget.spend(NODE_COST)?;
    let Value::Object(s) = schema else {
        return Ok(match schema {
            Value::Bool(true) => Value::from("mock"),
            _ => Value::Null,
        });
    };
    if depth > MAX_DEPTH {
        return Ok(Value::Null);
    }
    if let Some(Value::String(reference)) = s.get("$ref") {
        if let Some(target) = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
        {
            return generate(target, root, depth + 1, budget);
        }
    }
    if let Some(value) = s.get("const") {
        return budget.copy(value);
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        if let Some(first) = values.first() {
            return budget.copy(first);
        }
    }
    if let Some(value) = s.get("default") {
        return budget.copy(value);
    }
    if let Some(Value::Array(examples)) = s.get("examples") {
        if let Some(first) = examples.first() {
            return budget.copy(first);
        }
    }
    if let Some(Value::Array(all)) = s.get("allOf") {
        let mut merged = Map::new();
        let mut other = None;
        for sub in all {
            match generate(sub, root, depth + 1, budget)? {
                Value::Object(map) => merged.extend(map),
                value => other = other.or(Some(value)),
            }
        }
        let own = own_type(s);
        if own.as_deref() == Some("object") || (own.is_none() && other.is_none()) {
            if let Value::Object(map) = generate_typed(s, "object", root, depth, budget)? {
                for (k, v) in map {
                    merged.entry(k).or_insert(v);
                }
            }
            return Ok(Value::Object(merged));
        }
        if let Some(value) = other {
            return Ok(value);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = s.get(key) {
            let pick = options
                .iter()
                .find(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                .or(options.first());
            if let Some(option) = pick {
                return generate(option, root, depth + 1, budget);
            }
        }
    }
    let ty = own_type(s).unwrap_or_else(|| infer_type(s).to_owned());
    generate_typed(s, &ty, root, depth, budget)
}

/// The schema's `type`: the first non-null one of a list.
fn own_type(s: &Map<String, Value>) -> Option<String> {
    match s.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or_else(|| types.first().and_then(Value::as_str))
            .map(str::to_owned),
        _ => None,
    }
}

fn infer_type(s: &Map<String, Value>) -> &'static str {
    let has = |keys: &[&str]| keys.iter().any(|k| s.contains_key(*k));
    if has(&[
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
    ]) {
        "array"
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        "string"
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        "number"
    } else {
        "object"
    }
}

fn generate_typed(
    s: &Map<String, Value>,
    ty: &str,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> Result<Value, Error> {
    Ok(match ty {
        "object" => {
            let mut out = Map::new();
            let properties = s.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(properties) = properties {
                for (name, sub) in properties {
                    // Every declared property near the top, only required ones deeper down,
                    // so recursive schemas stay small.
                    if depth < 3 || required.contains(&name.as_str()) {
                        out.insert(name.clone(), generate(sub, root, depth + 1, budget)?);
                    }
                }
            }
            for name in required {
                if !out.contains_key(name) {
                    let value = match s.get("additionalProperties") {
                        Some(sub @ Value::Object(_)) => generate(sub, root, depth + 1, budget)?,
                        _ => Value::from("mock"),
                    };
                    out.insert(name.to_owned(), value);
                }
            }
            Value::Object(out)
        }
        "array" => {
            let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let max = s
                .get("maxItems")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            let mut out = Vec::new();
            if let Some(Value::Array(prefix)) = s.get("prefixItems") {
                for sub in prefix {
                    out.push(generate(sub, root, depth + 1, budget)?);
                }
            }
            let want = min.max(1).min(max).min(16) as usize;
            let unique = s.get("uniqueItems") == Some(&Value::Bool(true));
            if let Some(items @ Value::Object(_)) = s.get("items") {
                while out.len() < want {
                    let mut value = generate(items, root, depth + 1, budget)?;
                    if unique {
                        vary(&mut value, out.len());
                    }
                    out.push(value);
                }
            } else if s.get("items").is_none() && s.get("prefixItems").is_none() {
                while out.len() < want {
                    budget.spend(NODE_COST)?;
                    out.push(Value::from(format!("mock{}", out.len())));
                }
            }
            Value::Array(out)
        }
        "string" => {
            let format = s.get("format").and_then(Value::as_str).unwrap_or("");
            let mut text = match format {
                "date-time" => "1970-01-01T00:00:00Z",
                "date" => "1970-01-01",
                "time" => "00:00:00Z",
                "email" | "idn-email" => "mock@example.com",
                "uri" | "url" | "iri" | "uri-reference" | "iri-reference" => "https://example.com",
                "uuid" => "00000000-0000-4000-8000-000000000000",
                "hostname" | "idn-hostname" => "example.com",
                "ipv4" => "127.0.0.1",
                "ipv6" => "::1",
                "duration" => "PT1S",
                _ => "mock",
            }
            .to_owned();
            let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            let min = usize::try_from(min).unwrap_or(usize::MAX);
            let max = s
                .get("maxLength")
                .and_then(Value::as_u64)
                .map(|m| m as usize);
            // Pad to `minLength` (in characters) in one step: linear, and paid for first, so a
            // `minLength` of 10^12 is an error, not an endless loop.
            let count = text.chars().count();
            let pad = min.saturating_sub(count);
            budget.spend(text.len().saturating_add(pad))?;
            text.extend(std::iter::repeat_n('x', pad));
            if let Some(max) = max {
                if count.max(min) > max {
                    text = text.chars().take(max).collect();
                }
            }
            Value::from(text)
        }
        "integer" | "number" => number(s, ty == "integer"),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => Value::Null,
    })
}

/// Makes the `i`th copy of an array item differ from the others, for `uniqueItems`.
fn vary(value: &mut Value, i: usize) {
    match value {
        Value::String(s) if i > 0 => s.push_str(&i.to_string()),
        Value::Number(n) if i > 0 => {
            if let Some(v) = n.as_i64() {
                *value = Value::from(v + i as i64);
            }
        }
        _ => {}
    }
}

fn number(s: &Map<String, Value>, integer: bool) -> Value {
    let get = |key: &str| s.get(key).and_then(Value::as_f64);
    let mut low = get("minimum");
    let mut high = get("maximum");
    let mut exclusive_low = false;
    let mut exclusive_high = false;
    match s.get("exclusiveMinimum") {
        Some(Value::Bool(true)) => exclusive_low = true,
        Some(v) => {
            if let Some(v) = v.as_f64() {
                if low.is_none_or(|l| v >= l) {
                    low = Some(v);
                    exclusive_low = true;
                }
            }
        }
        None => {}
    }
    match s.get("exclusiveMaximum") {
        Some(Value::Bool(true)) => exclusive_high = true,
        Some(v) => {
            if let Some(v) = v.as_f64() {
                if high.is_none_or(|h| v <= h) {
                    high = Some(v);
                    exclusive_high = true;
                }
            }
        }
        None => {}
    }
    let step = get("multipleOf").filter(|m| *m > 0.0);
    // Start from 42 and move into the bounds.
    let mut value: f64 = 42.0;
    if let Some(low) = low {
        if value < low || (exclusive_low && value <= low) {
            value = low;
            if exclusive_low {
                value += if integer || step.is_some() { 0.0 } else { 0.5 };
            }
        }
    }
    if let Some(high) = high {
        if value > high || (exclusive_high && value >= high) {
            value = high;
            if exclusive_high {
                value -= if integer || step.is_some() { 0.0 } else { 0.5 };
            }
        }
    }
    let step = match (step, integer) {
        (Some(m), true) => Some(if m.fract() == 0.0 {
            m
        } else {
            m * m.recip().ceil()
        }),
        (Some(m), false) => Some(m),
        (None, true) => Some(1.0),
        (None, false) => None,
    };
    if let Some(m) = step {
        let above = |v: f64| match low {
            Some(l) if exclusive_low => v > l,
            Some(l) => v >= l,
            None => true,
        };
        let below = |v: f64| match high {
            Some(h) if exclusive_high => v < h,
            Some(h) => v <= h,
            None => true,
        };
        let mut candidate = (value / m).ceil() * m;
        if !above(candidate) {
            candidate += m;
        }
        if !below(candidate) {
            candidate = (value / m).floor() * m;
            if !above(candidate) || !below(candidate) {
                candidate = value;
            }
        }
        value = candidate;
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).map_or(Value::from(0), Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn instances_are_bounded() {
        // Padding is linear and paid for first: a huge minLength is an error at once.
        let huge = json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1_000_000_000_000u64}}, "required": ["s"]});
        assert_eq!(
            instance(&huge, 1 << 20).unwrap_err().code(),
            "output_too_large"
        );
        let big = json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 300_000}}});
        assert_eq!(
            instance(&big, 1 << 20).unwrap()["s"]
                .as_str()
                .unwrap()
                .len(),
            300_000
        );
        // Nesting that multiplies values (16 items, 16 levels deep) runs out of budget, not
        // of memory.
        let mut nested = json!({"type": "string"});
        for _ in 0..16 {
            nested = json!({"type": "array", "items": nested, "minItems": 16});
        }
        let wide = json!({"type": "object", "properties": {"a": nested}});
        assert_eq!(
            instance(&wide, 1 << 20).unwrap_err().code(),
            "output_too_large"
        );
    }

    fn request_with(tools: &[(&str, Value)], choice: &str, input: Option<Vec<Value>>) -> Request {
        let mut options = crate::RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        options.input = input;
        for (name, schema) in tools {
            options
                .tools
                .push(crate::FunctionTool::new(*name, schema.clone()).unwrap());
        }
        options.tool_choice = choice.parse().unwrap();
        options.build().unwrap()
    }

    #[test]
    fn the_output_limit_is_checked_before_events_are_made() {
        let mut options = crate::RequestOptions::new();
        options.prompt = Some("x".repeat(5000));
        let request = options.build().unwrap();
        assert_eq!(
            MockMode::Echo.stream(&request, 4000).unwrap_err().code(),
            "output_too_large"
        );
        let tool = json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 4000}}, "required": ["s"]});
        let request = request_with(&[("f", tool)], "auto", None);
        assert_eq!(
            MockMode::ToolCall
                .stream(&request, 4000)
                .unwrap_err()
                .code(),
            "output_too_large"
        );
        // Under the limit, events are made as they are taken.
        let mut events = MockMode::Echo.stream(&request, 1 << 20).unwrap();
        let first: Vec<Event> = events.by_ref().take(5).collect();
        assert_eq!(first[4].event_type(), "response.output_text.delta");
        assert!(events.count() > 3);
    }

    #[test]
    fn tool_choice_none_is_respected() {
        let schema = json!({"type": "object"});
        for mode in [MockMode::ToolCall, MockMode::ToolLoop] {
            let request = request_with(&[("f", schema.clone())], "none", None);
            let events = mode.events(&request).unwrap();
            assert!(
                events.iter().all(|e| !matches!(
                    e,
                    Event::OutputItemAdded(OutputItemEvent {
                        item: OutputItem::FunctionCall(_),
                        ..
                    })
                )),
                "{mode}: {events:?}"
            );
            assert!(events
                .iter()
                .any(|e| e.event_type() == "response.output_text.delta"));
        }
        // `none` needs no tool at all.
        let request = request_with(&[], "none", None);
        assert!(MockMode::ToolCall.events(&request).is_ok());
    }

    #[test]
    fn reasoning_items_must_come_back_with_their_encrypted_content() {
        let mut options = crate::RequestOptions::new();
        options.prompt = Some("hi".to_owned());
        options.reasoning_summary = Some(crate::ReasoningSummary::Auto);
        let request = options.build().unwrap();
        let events = MockMode::Text.events(&request).unwrap();
        let done = events
            .iter()
            .find_map(|e| match e {
                Event::OutputItemDone(OutputItemEvent {
                    item: OutputItem::Other(item),
                    ..
                }) => Some(item.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(done["encrypted_content"], "mock-encrypted:rs_mock_1");
        assert_eq!(done["summary"][0]["text"], MOCK_SUMMARY);
        let user = json!({"role": "user", "content": "hi"});
        for (item, ok) in [
            (Value::Object(done.clone()), true),
            (
                json!({"type": "reasoning", "id": "rs_mock_1", "summary": []}),
                false,
            ),
            (
                json!({"type": "reasoning", "id": "rs_mock_1", "summary": [], "encrypted_content": "forged"}),
                false,
            ),
        ] {
            options.input = Some(vec![user.clone(), item, user.clone()]);
            let events = MockMode::Text.events(&options.build().unwrap()).unwrap();
            let error = events.iter().any(|e| matches!(e, Event::Error(_)));
            assert_eq!(error, !ok, "{events:?}");
        }
        // Stored responses keep their reasoning: no encrypted content needed.
        options.store = true;
        options.input = Some(vec![
            user.clone(),
            json!({"type": "reasoning", "id": "rs_1", "summary": []}),
            user,
        ]);
        let events = MockMode::Text.events(&options.build().unwrap()).unwrap();
        assert!(!events.iter().any(|e| matches!(e, Event::Error(_))));
    }

    #[test]
    fn chunks_respect_character_boundaries() {
        let text = format!("x{}", "é".repeat(40));
        let pieces = chunks(&text, 8);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| p.len() <= 8));
        assert_eq!(pieces[0], "xééé");
        assert_eq!(chunks("😀a", 2), ["😀", "a"]);
        assert!(chunks("", 4).is_empty());
    }

    fn assert_valid(schema: &Value) {
        let value = instance(schema, 1 << 20).unwrap();
        let validator = jsonschema::validator_for(schema).expect("a valid schema");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{value} is not valid for {schema}: {errors:?}"
        );
    }

    #[test]
    fn instances_are_valid_for_their_schemas() {
        for schema in [
            json!({}),
            json!({"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]}),
            json!({"type": "object", "properties": {
                "n": {"type": "integer", "minimum": 100, "multipleOf": 7},
                "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "k": {"type": "integer", "maximum": 3},
                "f": {"type": "number", "multipleOf": 0.25, "minimum": 42.1},
                "s": {"type": "string", "minLength": 10, "maxLength": 12},
                "e": {"enum": ["red", "green"]},
                "c": {"const": {"a": 1}},
                "b": {"type": "boolean"},
                "z": {"type": ["null", "string"]},
                "d": {"type": "string", "format": "date-time"},
                "u": {"type": "string", "format": "uuid"},
                "list": {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": true},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
                "any": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 5}]},
                "one": {"oneOf": [{"type": "string", "maxLength": 2}]},
                "all": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                                  {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]}
            }, "required": ["n", "x", "k", "f", "s", "e", "c", "b", "z", "d", "u", "list", "tuple", "any", "one", "all"],
               "additionalProperties": false}),
            json!({"$defs": {"node": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                      "required": ["name"]}},
                   "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}, "required": ["root"]}),
            json!({"type": "object", "required": ["extra"], "additionalProperties": {"type": "integer"}}),
            json!({"type": "object", "properties": {"q": {"type": "string", "default": "rust"}}}),
        ] {
            assert_valid(&schema);
        }
    }
}
