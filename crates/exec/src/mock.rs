//! Deterministic offline upstreams: what `agentwire exec --mock` streams instead of a provider.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::event::{
    ContentPart, ContentPartEvent, Event, FunctionCallArgumentsDelta, FunctionCallItem,
    MessageItem, OutputItem, OutputItemEvent, OutputTextDelta, OutputTextPart, Response,
    ResponseEvent, Usage,
};
use crate::{Error, ErrorKind, Request};

/// The text of the `text` mock.
pub const MOCK_TEXT: &str = "mock response text";

/// The longest text delta of the `echo` mock, in bytes.
pub const ECHO_DELTA_BYTES: usize = 64;

/// The longest argument delta of the tool-calling mocks, in bytes.
const ARGUMENT_DELTA_BYTES: usize = 8;

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
    /// [`Normalizer`](crate::Normalizer) for the stream `agentwire exec` prints).
    ///
    /// Fails with `mock_needs_tool` when `tool-call` has no function tool to call.
    pub fn events(self, request: &Request) -> Result<Vec<Event>, Error> {
        let mut stream = MockStream::new(request);
        match self {
            MockMode::Echo => stream.message(&chunks(&request.to_json(), ECHO_DELTA_BYTES)),
            MockMode::Text => stream.message(&["mock", " response", " text"]),
            MockMode::ToolCall => {
                let name = request
                    .tool_choice_function()
                    .or_else(|| request.function_tools().next().map(|(name, _)| name))
                    .ok_or(Error::new(ErrorKind::MockNeedsTool))?;
                let schema = request
                    .function_tools()
                    .find(|(n, _)| *n == name)
                    .map_or(Value::Null, |(_, schema)| schema.clone());
                let number = count_calls(request) + 1;
                stream.call(number, name, &schema);
            }
            MockMode::ToolLoop => tool_loop(request, &mut stream),
        }
        Ok(stream.finish())
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

fn count_calls(request: &Request) -> usize {
    request
        .input
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .count()
}

fn tool_loop(request: &Request, stream: &mut MockStream) {
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
        .find(|(name, _)| !answered.contains(name));
    match pending {
        Some((name, schema)) => {
            let schema = schema.clone();
            stream.call(calls.len() + 1, name, &schema);
        }
        None => {
            let text = if outputs.is_empty() {
                "mock tool-loop result: no tool outputs".to_owned()
            } else {
                format!("mock tool-loop result: {}", outputs.join("; "))
            };
            stream.message(&chunks(&text, ECHO_DELTA_BYTES));
        }
    }
}

/// Cuts `text` into pieces of at most `max` bytes, at character boundaries.
fn chunks(text: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = max.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end == 0 {
            // A character longer than `max` bytes: take it whole.
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        pieces.push(&rest[..end]);
        rest = &rest[end..];
    }
    pieces
}

/// Builds a mock upstream stream.
struct MockStream {
    events: Vec<Event>,
    input_bytes: usize,
    output_bytes: usize,
}

impl MockStream {
    fn new(request: &Request) -> Self {
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
        let events = vec![
            Event::ResponseCreated(ResponseEvent::new(response.clone())),
            Event::ResponseInProgress(ResponseEvent::new(response)),
        ];
        MockStream {
            events,
            input_bytes,
            output_bytes: 0,
        }
    }

    fn message(&mut self, pieces: &[&str]) {
        let id = "msg_mock".to_owned();
        let mut message = MessageItem::new();
        message.id = Some(id.clone());
        message.status = Some("in_progress".to_owned());
        message.content = Some(Vec::new());
        self.events
            .push(Event::OutputItemAdded(OutputItemEvent::new(
                OutputItem::Message(message.clone()),
            )));
        let mut part = ContentPartEvent::new(ContentPart::OutputText(OutputTextPart::new("")));
        part.item_id = Some(id.clone());
        self.events.push(Event::ContentPartAdded(part));
        for piece in pieces {
            let mut delta = OutputTextDelta::new(*piece);
            delta.item_id = Some(id.clone());
            self.output_bytes += piece.len();
            self.events.push(Event::OutputTextDelta(delta));
        }
        message.status = Some("completed".to_owned());
        message.content = None;
        self.events.push(Event::OutputItemDone(OutputItemEvent::new(
            OutputItem::Message(message),
        )));
    }

    fn call(&mut self, number: usize, name: &str, schema: &Value) {
        let id = format!("fc_mock_{number}");
        let mut call = FunctionCallItem::new(format!("call_mock_{number}"), name);
        call.id = Some(id.clone());
        call.arguments = Some(String::new());
        call.status = Some("in_progress".to_owned());
        self.events
            .push(Event::OutputItemAdded(OutputItemEvent::new(
                OutputItem::FunctionCall(call.clone()),
            )));
        let arguments = instance(schema).to_string();
        for piece in chunks(&arguments, ARGUMENT_DELTA_BYTES) {
            self.events.push(Event::FunctionCallArgumentsDelta(
                FunctionCallArgumentsDelta::new(id.clone(), piece),
            ));
        }
        self.output_bytes += arguments.len() + name.len();
        call.arguments = None;
        call.status = Some("completed".to_owned());
        self.events.push(Event::OutputItemDone(OutputItemEvent::new(
            OutputItem::FunctionCall(call),
        )));
    }

    fn finish(mut self) -> Vec<Event> {
        let tokens = |bytes: usize| bytes.div_ceil(4) as u64;
        let response = Response {
            id: Some("resp_mock".to_owned()),
            status: Some("completed".to_owned()),
            usage: Some(Usage::new(
                tokens(self.input_bytes),
                tokens(self.output_bytes),
                0,
            )),
            ..Response::default()
        };
        self.events
            .push(Event::ResponseCompleted(ResponseEvent::new(response)));
        self.events
    }
}

/// The deepest schema nesting the instance generator follows.
const MAX_DEPTH: usize = 16;

/// A value valid for the JSON Schema `schema`, as small and predictable as possible: `const`,
/// `enum`, `default` and `examples` first, then by type (objects with their declared
/// properties, strings honouring `format` and length bounds, numbers inside their bounds and
/// multiples, arrays of `minItems` items). Local `$ref`s are followed; `pattern` is not
/// honoured.
pub(crate) fn instance(schema: &Value) -> Value {
    let value = generate(schema, schema, 0);
    // A function's arguments are an object.
    if value.is_object() {
        value
    } else {
        Value::Object(Map::new())
    }
}

fn generate(schema: &Value, root: &Value, depth: usize) -> Value {
    let Value::Object(s) = schema else {
        return match schema {
            Value::Bool(true) => Value::from("mock"),
            _ => Value::Null,
        };
    };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(Value::String(reference)) = s.get("$ref") {
        if let Some(target) = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
        {
            return generate(target, root, depth + 1);
        }
    }
    if let Some(value) = s.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        if let Some(first) = values.first() {
            return first.clone();
        }
    }
    if let Some(value) = s.get("default") {
        return value.clone();
    }
    if let Some(Value::Array(examples)) = s.get("examples") {
        if let Some(first) = examples.first() {
            return first.clone();
        }
    }
    if let Some(Value::Array(all)) = s.get("allOf") {
        let mut merged = Map::new();
        let mut other = None;
        for sub in all {
            match generate(sub, root, depth + 1) {
                Value::Object(map) => merged.extend(map),
                value => other = other.or(Some(value)),
            }
        }
        let own = own_type(s);
        if own.as_deref() == Some("object") || (own.is_none() && other.is_none()) {
            if let Value::Object(map) = generate_typed(s, "object", root, depth) {
                for (k, v) in map {
                    merged.entry(k).or_insert(v);
                }
            }
            return Value::Object(merged);
        }
        if let Some(value) = other {
            return value;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = s.get(key) {
            let pick = options
                .iter()
                .find(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                .or(options.first());
            if let Some(option) = pick {
                return generate(option, root, depth + 1);
            }
        }
    }
    let ty = own_type(s).unwrap_or_else(|| infer_type(s).to_owned());
    generate_typed(s, &ty, root, depth)
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

fn generate_typed(s: &Map<String, Value>, ty: &str, root: &Value, depth: usize) -> Value {
    match ty {
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
                        out.insert(name.clone(), generate(sub, root, depth + 1));
                    }
                }
            }
            for name in required {
                if !out.contains_key(name) {
                    let value = match s.get("additionalProperties") {
                        Some(sub @ Value::Object(_)) => generate(sub, root, depth + 1),
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
                    out.push(generate(sub, root, depth + 1));
                }
            }
            let want = min.max(1).min(max).min(16) as usize;
            let unique = s.get("uniqueItems") == Some(&Value::Bool(true));
            if let Some(items @ Value::Object(_)) = s.get("items") {
                while out.len() < want {
                    let mut value = generate(items, root, depth + 1);
                    if unique {
                        vary(&mut value, out.len());
                    }
                    out.push(value);
                }
            } else if s.get("items").is_none() && s.get("prefixItems").is_none() {
                while out.len() < want {
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
            let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = s
                .get("maxLength")
                .and_then(Value::as_u64)
                .map(|m| m as usize);
            while text.chars().count() < min {
                text.push('x');
            }
            if let Some(max) = max {
                text = text.chars().take(max).collect();
            }
            Value::from(text)
        }
        "integer" | "number" => number(s, ty == "integer"),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => Value::Null,
    }
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
        let value = instance(schema);
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
